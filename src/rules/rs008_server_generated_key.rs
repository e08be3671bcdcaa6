//! RS008 server-generated-key.

use super::{Confidence, Hit, Rule, RuleMeta, Section, Severity, repeated_summary};
use crate::facts::key::MissingKey;
use crate::facts::{Endpoint, MechanismKind};

const DOC: &str = r#"## What it does
Flags key handling that replaces a missing `Idempotency-Key` with one the server makes up
(`req.get('Idempotency-Key') ?? randomUUID()`, `if (!key) key = uuid()`).

## Why is this bad?
A generated key is new on every attempt, so a retry never matches the first request: the
mechanism looks present in the code and in reviews, but protects nothing. Only the client knows
that two requests are the same intent.

## Example
```ts
const key = req.get('Idempotency-Key') ?? randomUUID();
```

Use instead:
```ts
const key = req.get('Idempotency-Key');
if (!key) return res.status(400).json({ error: 'Idempotency-Key header is required' });
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() || !ep.has_mechanism(MechanismKind::HeaderKey) {
        return None;
    }
    let store = ep.key_store.as_ref()?;
    let MissingKey::Generated { at } = &store.missing_key else {
        return None;
    };
    Some(Hit {
        confidence: Confidence::Likely,
        message: format!("A missing idempotency key is replaced by a key the server generates ({at})."),
        change: "Never make up the key on the server: answer 400 when a required key is missing (or let the request through explicitly unprotected on an endpoint that does not need one), and let the client generate one key per intent and resend it on every retry.".into(),
        impact: format!(
            "Every retry of a request sent without a key gets a fresh key and runs {} again.",
            repeated_summary(ep)
        ),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS008",
            name: "server-generated-key",
            section: Section::HeaderPattern,
            severity: Severity::High,
            summary: "a missing key replaced by a server-generated one, which silently disables the mechanism",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Location;
    use crate::rules::testing::{keyed, store};

    #[test]
    fn fires_on_a_generated_key() {
        let mut s = store();
        assert!(check(&keyed(s.clone())).is_none());
        s.missing_key = MissingKey::Proceeds {
            at: Location::new("m.ts", 3),
        };
        assert!(check(&keyed(s.clone())).is_none());
        s.missing_key = MissingKey::Generated {
            at: Location::new("m.ts", 4),
        };
        assert_eq!(check(&keyed(s)).unwrap().at, Some(Location::new("m.ts", 4)));
    }
}
