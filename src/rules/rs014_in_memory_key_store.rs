//! RS014 in-memory-key-store.

use super::{Confidence, Hit, Rule, RuleMeta, Section, Severity};
use crate::facts::{Endpoint, MechanismKind};

const DOC: &str = r#"## What it does
Flags an idempotency-key mechanism that keeps its keys in the process's memory (a `Map` or `Set`,
an LRU cache, a `HashMap`/`HashSet` behind a lock) on an endpoint that depends on it: one whose
side effects would repeat on a retry.

## Why is this bad?
A deploy, a crash or an autoscaling event empties the store, and a client's retry that arrives
after it runs the charge again. With more than one instance behind a load balancer, the retry may
land on an instance that never saw the key at all.

## Example
```ts
const seen = new Map<string, StoredResponse>();
export function idempotency(req, res, next) {
  const key = req.get('Idempotency-Key');
  if (seen.has(key)) return res.status(200).json(seen.get(key));
  next();
}
```

Use instead:
```ts
// claim the key in a shared store that outlives the process
const claimed = await redis.set(`idem:${userId}:${key}`, 'in_progress', { NX: true, EX: 86400 });
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() || !ep.has_mechanism(MechanismKind::HeaderKey) {
        return None;
    }
    // Only where the key is what protects the endpoint: something it does would repeat.
    if !ep.side_effects.iter().any(|e| e.repeats_on_retry()) {
        return None;
    }
    let store = ep.key_store.as_ref().filter(|s| s.kind == "memory")?;
    Some(Hit {
        confidence: Confidence::Likely,
        message: format!("The idempotency keys live in process memory: {} ({}).", store.detail, store.location),
        change: "Keep the keys in a store shared by every instance and surviving restarts (a database table with a unique key, or Redis `SET NX EX`).".into(),
        impact: "A retry after a restart, or on another instance, repeats the side effect.".into(),
        at: None,
        cause: Some(store.location.clone()),
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS014",
            name: "in-memory-key-store",
            section: Section::Storage,
            severity: Severity::Medium,
            summary: "keys kept in process memory (Map, HashMap, LRU) that a restart or a second instance loses",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{KeyStore, Location};
    use crate::rules::testing::{endpoint, mechanism};

    #[test]
    fn fires_on_a_keyed_endpoint_whose_store_is_memory() {
        let create = crate::rules::testing::effect(crate::facts::EffectKind::DbCreate);
        let mut ep = endpoint(
            "POST",
            vec![create],
            vec![mechanism(MechanismKind::HeaderKey)],
        );
        assert!(check(&ep).is_none());
        ep.key_store = Some(KeyStore::of_kind(
            "memory",
            "`seen.has` keeps the keys in the process".into(),
            Location::new("m.ts", 3),
        ));
        assert!(check(&ep).is_some());
        ep.mechanisms.clear();
        assert!(check(&ep).is_none());
        // An endpoint idempotent by nature does not depend on the store.
        let mut natural = endpoint("PUT", vec![], vec![mechanism(MechanismKind::HeaderKey)]);
        natural.key_store = ep.key_store.clone();
        assert!(check(&natural).is_none());
    }
}
