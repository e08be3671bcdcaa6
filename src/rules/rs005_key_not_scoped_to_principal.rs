//! RS005 key-not-scoped-to-principal.

use super::{Hit, Rule, RuleMeta, Section, Severity, depended_store, store_confidence};
use crate::facts::Endpoint;

const DOC: &str = r#"## What it does
Flags a key store whose lookup and claim use the key alone: no user, tenant or account id in the
key string, the row's columns or the `WHERE` clause.

## Why is this bad?
Keys are chosen by clients. When two callers send the same key (a fixed string, a reused UUID, a
guessed one), the second gets the first caller's stored response, which may hold another
customer's data, or is refused a request it never made. The methodology treats a key from another
principal as absent.

## Example
```ts
const cached = await redis.get(`idem:${key}`);
```

Use instead:
```ts
const cached = await redis.get(`idem:${req.user.id}:${key}`);
// or: PRIMARY KEY (user_id, key), and every query filters on user_id
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    let store = depended_store(ep)?;
    let (at, why) = store.scoped.missing()?;
    Some(Hit {
        confidence: store_confidence(store),
        message: format!("The idempotency key is not scoped to the caller: {why}."),
        change: "Store and look up keys per principal: add the user or tenant id to the key string (`idem:${userId}:${key}`) or to the table's unique key and every query (`PRIMARY KEY (user_id, key)`, `WHERE user_id = $1 AND key = $2`), and treat another caller's key as absent.".into(),
        impact: "A caller who sends a key another customer used gets that customer's stored response, or a refusal, instead of their own request being run.".into(),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS005",
            name: "key-not-scoped-to-principal",
            section: Section::Storage,
            severity: Severity::High,
            summary: "the key lookup ignores the caller (no user/tenant/account in the key or the query): cross-tenant replay",
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
    fn fires_only_on_a_lookup_seen_without_the_caller() {
        let mut s = store();
        assert!(check(&keyed(s.clone())).is_none());
        s.scoped = Prop::yes(Location::new("store.ts", 3), "user_id");
        assert!(check(&keyed(s.clone())).is_none());
        s.scoped = Prop::no(Location::new("store.ts", 4), "by the key alone");
        assert_eq!(
            check(&keyed(s)).unwrap().at,
            Some(Location::new("store.ts", 4))
        );
    }
}
