//! RS010 no-key-expiry.

use super::{Hit, Rule, RuleMeta, Section, Severity, depended_store, store_confidence};
use crate::facts::Endpoint;

const DOC: &str = r#"## What it does
Flags a key store whose keys never expire: no TTL on the write, no `expires_at` that the lookup
honours, and no job that deletes old entries.

## Why is this bad?
The store grows without bound (a `Map` until the process runs out of memory, a table until it
slows every claim), and a key reused months later is refused or replays a stale answer. Keys are
meant to live for a documented window (24 hours is typical).

## Example
```ts
await redis.set(`idem:${userId}:${key}`, 'in_progress', 'NX');
```

Use instead:
```ts
await redis.set(`idem:${userId}:${key}`, 'in_progress', 'EX', 86_400, 'NX');
// SQL: expires_at column, `AND expires_at > now()` in the lookup, and a job running
// DELETE FROM idempotency_keys WHERE expires_at < now()
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    let store = depended_store(ep)?;
    let (at, why) = store.expiry.missing()?;
    Some(Hit {
        confidence: store_confidence(store),
        message: format!("Idempotency keys never expire: {why}."),
        change: "Give every key a lifetime: a TTL on the write (`EX 86400`), or an `expires_at` column that the lookup filters on plus a scheduled `DELETE … WHERE expires_at < now()`; document the window.".into(),
        impact: "The store grows without bound, and a key reused long after the original request is refused or answered with a stale response.".into(),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS010",
            name: "no-key-expiry",
            section: Section::Expiration,
            severity: Severity::Medium,
            summary: "a key store without expiry (no `expires_at`/TTL) or without cleanup of expired rows",
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
    fn fires_when_keys_live_forever() {
        let mut s = store();
        assert!(check(&keyed(s.clone())).is_none());
        s.expiry = Prop::yes(Location::new("job.ts", 2), "cleanup");
        assert!(check(&keyed(s.clone())).is_none());
        s.expiry = Prop::no(Location::new("s.ts", 7), "no TTL");
        assert_eq!(check(&keyed(s)).unwrap().at, Some(Location::new("s.ts", 7)));
    }
}
