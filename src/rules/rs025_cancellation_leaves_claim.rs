//! RS025 cancellation-leaves-claim.

use super::{Hit, Rule, RuleMeta, Section, Severity, depended_store, store_confidence};
use crate::facts::Endpoint;

const DOC: &str = r#"## What it does
Flags an in-progress claim that nothing bounds in time: the key is claimed before the handler,
but the claim has no TTL or expiry, no cleanup removes it, and no `finally` or close handler gives
it back.

## Why is this bad?
Requests die mid-way: the process is killed in a deploy, the pod runs out of memory, a timeout
aborts the handler. The claim stays "in progress" for ever, and every retry with that key gets 409
(or is refused) although nothing is running. The user can never complete the operation.

## Example
```ts
await redis.set(`idem:${userId}:${key}`, 'in_progress', 'NX'); // no EX
next();
```

Use instead:
```ts
await redis.set(`idem:${userId}:${key}`, 'in_progress', 'EX', 60, 'NX'); // a lock timeout
// or: a locked_until column that a new attempt may take over once passed
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    let store = depended_store(ep)?;
    let (at, why) = store.claim_bounded_in_time.missing()?;
    Some(Hit {
        confidence: store_confidence(store),
        message: format!("An abandoned in-progress claim is never cleared: {why}."),
        change: "Bound the claim in time: give the in-progress entry a TTL or a `locked_until` that a later attempt may take over, and release it in a `finally` (or on the request's close event) when the handler does not finish.".into(),
        impact: "After a crash or a timeout mid-request, every retry with that key is refused as in progress, for ever: the operation can never be completed.".into(),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS025",
            name: "cancellation-leaves-claim",
            section: Section::Cancellation,
            severity: Severity::Medium,
            summary: "a claimed key left in progress for ever when the request is aborted or times out",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Location;
    use crate::facts::key::Prop;
    use crate::rules::testing::{keyed, store};

    #[test]
    fn fires_on_an_unbounded_claim() {
        let mut s = store();
        assert!(check(&keyed(s.clone())).is_none());
        s.claim_bounded_in_time = Prop::yes(Location::new("s.ts", 4), "TTL");
        assert!(check(&keyed(s.clone())).is_none());
        s.claim_bounded_in_time = Prop::no(Location::new("s.ts", 5), "no TTL");
        assert_eq!(check(&keyed(s)).unwrap().at, Some(Location::new("s.ts", 5)));
    }
}
