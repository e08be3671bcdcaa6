//! RS004 non-atomic-key-claim.

use super::{
    Hit, Rule, RuleMeta, Section, Severity, depended_store, repeated_summary, store_confidence,
};
use crate::facts::Endpoint;
use crate::facts::key::StoreBackend;

const DOC: &str = r#"## What it does
Flags a key mechanism that does not claim the key in one atomic step before the handler runs:
it looks the key up and then writes it (two statements a concurrent request can slip between),
overwrites it, inserts it into a table with no unique constraint on it, or records it only after
the handler has answered. (A container in the process checked and set before the handler is left
to RS014: its flaw is that it is not shared, and the store that replaces it must claim
atomically.)

## Why is this bad?
A client that times out retries while its first request is still running. Both requests read
"no such key", both run the handler, and the customer is charged twice: exactly the case the key
was meant to stop.

## Example
```ts
const existing = await prisma.idempotencyKey.findUnique({ where: { key } });
if (existing) return res.status(existing.status).json(existing.body);
await prisma.idempotencyKey.upsert({ where: { key }, create: { key }, update: {} });
next();
```

Use instead:
```ts
const { rowCount } = await pool.query(
  `INSERT INTO idempotency_keys (user_id, key, request_hash, state)
   VALUES ($1, $2, $3, 'in_progress') ON CONFLICT (user_id, key) DO NOTHING`,
  [userId, key, hash],
);
if (rowCount === 0) return replayOrConflict(res, userId, key, hash); // 409 while in progress
next();
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    let store = depended_store(ep)?;
    let (at, why) = store.atomic_claim.missing()?;
    Some(Hit {
        confidence: store_confidence(store),
        message: format!("The idempotency key is not claimed atomically: {why}."),
        change: if store.kind == StoreBackend::Dynamodb.as_str() {
            "Claim the key before the handler with one conditional write: a put whose `ConditionExpression` is `attribute_not_exists(pk)` on the key's partition key, with `ConditionalCheckFailedException` read as \"already claimed\"; answer the loser 409 with `Retry-After`."
        } else {
            "Claim the key before the handler with one write that only one caller can win: `INSERT … ON CONFLICT (user_id, key) DO NOTHING` and check the row count, Redis `SET key value NX EX 86400`, or a create on a model with a unique key whose violation you catch; answer the loser 409 with `Retry-After`."
        }
        .into(),
        impact: format!(
            "A retry racing its own timed-out original passes the check too, and both run {}.",
            repeated_summary(ep)
        ),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS004",
            name: "non-atomic-key-claim",
            section: Section::AtomicCheckInsert,
            severity: Severity::High,
            summary: "the key store is read then written, or written after the handler, instead of claimed by unique insert, `ON CONFLICT` or `SET NX`",
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
    fn fires_where_the_claim_is_not_atomic() {
        let mut s = store();
        assert!(check(&keyed(s.clone())).is_none(), "unknown is not judged");
        s.atomic_claim = Prop::yes(Location::new("store.ts", 12), "ON CONFLICT DO NOTHING");
        assert!(check(&keyed(s.clone())).is_none());
        s.atomic_claim = Prop::no(Location::new("store.ts", 20), "read, then written");
        let hit = check(&keyed(s)).unwrap();
        assert_eq!(hit.at, Some(Location::new("store.ts", 20)));
        assert!(hit.message.contains("read, then written"));
    }
}
