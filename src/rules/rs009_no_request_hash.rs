//! RS009 no-request-hash.

use super::{Hit, Rule, RuleMeta, Section, Severity, depended_store, store_confidence};
use crate::facts::Endpoint;

const DOC: &str = r#"## What it does
Flags a key store that keeps no fingerprint of the request with the key, or keeps one and never
compares it when the key comes back.

## Why is this bad?
A client bug or a reused key sends a *different* request under a known key: a larger amount, a
different recipient. Without a fingerprint the server replays the first response (or refuses) and
the client believes its new request succeeded. The methodology stores the SHA-256 of the canonical
request and answers 422 on a mismatch.

## Example
```ts
await pool.query('INSERT INTO idempotency_keys (user_id, key) VALUES ($1, $2) ON CONFLICT DO NOTHING', [userId, key]);
```

Use instead:
```ts
const hash = createHash('sha256').update(JSON.stringify(req.body)).digest('hex');
// store request_hash with the key; on a retry:
if (existing.request_hash !== hash) return res.status(422).json({ error: 'key reused with a different request' });
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    let store = depended_store(ep)?;
    let (at, why) = store
        .hash_stored
        .missing()
        .or_else(|| store.hash_compared.missing())?;
    Some(Hit {
        confidence: store_confidence(store),
        message: format!("Reused keys are not checked against the request: {why}."),
        change: "Store a fingerprint of the request with the key (SHA-256 of the method, path and canonical body) and compare it on every retry; answer 422 naming the mismatch when it differs.".into(),
        impact: "A key reused with a different body gets the first request's response: the client believes a request ran that never did.".into(),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS009",
            name: "no-request-hash",
            section: Section::RequestHash,
            severity: Severity::Medium,
            summary: "keys stored without a request fingerprint, or one never compared, so a reused key with a different body replays the wrong response",
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
    fn fires_when_no_hash_is_stored_or_none_compared() {
        let mut s = store();
        assert!(check(&keyed(s.clone())).is_none());
        s.hash_stored = Prop::yes(Location::new("s.ts", 3), "request_hash");
        s.hash_compared = Prop::yes(Location::new("m.ts", 9), "compared");
        assert!(check(&keyed(s.clone())).is_none());
        s.hash_compared = Prop::no(Location::new("s.ts", 3), "never compared");
        assert!(
            check(&keyed(s.clone()))
                .unwrap()
                .message
                .contains("never compared")
        );
        s.hash_stored = Prop::no(Location::new("s.ts", 5), "no fingerprint");
        assert_eq!(check(&keyed(s)).unwrap().at, Some(Location::new("s.ts", 5)));
    }
}
