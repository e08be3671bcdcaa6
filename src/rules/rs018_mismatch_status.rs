//! RS018 mismatch-status.

use super::{Hit, Rule, RuleMeta, Section, Severity, depended_store, store_confidence};
use crate::facts::Endpoint;

const DOC: &str = r#"## What it does
Checks the statuses a key mechanism answers: the same key with a different request should get
**422** naming the mismatch, and a duplicate that arrives while the first request is still
running should get **409** (with `Retry-After`). Flags another status in either place.

## Why is this bad?
Clients and SDKs decide what to do from the status: a 409 means "wait and retry with the same
key", a 422 means "you reused a key for a different request, fix the client". A 400 or a 500
there makes a correct client give up, and a 422 for an in-progress duplicate tells it its key
was misused when it was not.

## Example
```ts
if (existing.requestHash !== hash) return res.status(400).json({ error: 'bad key' });
```

Use instead:
```ts
if (existing.requestHash !== hash) return res.status(422).json({ error: 'Idempotency-Key reused with a different request' });
if (existing.state === 'in_progress') return res.set('Retry-After', '1').status(409).end();
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    let store = depended_store(ep)?;
    let confidence = store_confidence(store);
    if let Some(a) = store.mismatch.as_ref().filter(|a| a.code != 422) {
        return Some(Hit {
            confidence,
            message: format!(
                "A key reused with a different request is answered {} instead of 422.",
                a.code
            ),
            change: format!(
                "Answer {} with 422 Unprocessable Content, naming the mismatch (`Idempotency-Key was used with a different request`).",
                a.at
            ),
            impact: "Clients cannot tell a reused key (a client bug to fix) from an ordinary error, and retry or give up wrongly.".into(),
            at: Some(a.at.clone()),
            cause: None,
        });
    }
    let a = store.in_progress.as_ref().filter(|a| a.code != 409)?;
    store.claims_in_progress.present()?;
    Some(Hit {
        confidence,
        message: format!(
            "A duplicate that arrives while the first request is still running is answered {} instead of 409.",
            a.code
        ),
        change: format!(
            "At {}, answer an in-progress duplicate 409 Conflict with `Retry-After`, and a completed one with the stored response.",
            a.at
        ),
        impact: "A client retrying a slow request is told its request failed (or that its key was misused) and gives up, although the first attempt may still succeed.".into(),
        at: Some(a.at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS018",
            name: "mismatch-status",
            section: Section::ErrorResponse,
            severity: Severity::Low,
            summary: "same key with a different body not answered 422, or an in-progress duplicate not answered 409",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Location;
    use crate::facts::key::{Answer, Prop};
    use crate::rules::testing::{keyed, store};

    fn answer(code: u16, line: u32) -> Option<Answer> {
        Some(Answer {
            code,
            at: Location::new("m.ts", line),
        })
    }

    #[test]
    fn fires_on_the_wrong_status() {
        let mut s = store();
        s.mismatch = answer(422, 5);
        s.in_progress = answer(409, 8);
        s.claims_in_progress = Prop::yes(Location::new("s.ts", 1), "claimed");
        assert!(check(&keyed(s.clone())).is_none());
        s.in_progress = answer(422, 8);
        assert_eq!(
            check(&keyed(s.clone())).unwrap().at,
            Some(Location::new("m.ts", 8))
        );
        s.mismatch = answer(400, 5);
        assert!(check(&keyed(s.clone())).unwrap().message.contains("400"));
        // Without an in-progress state, the duplicate answer is not about one in progress.
        s.mismatch = answer(422, 5);
        s.claims_in_progress = Prop::no(Location::new("s.ts", 1), "none");
        assert!(check(&keyed(s)).is_none());
    }
}
