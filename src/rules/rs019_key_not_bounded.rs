//! RS019 key-not-bounded.

use super::{Hit, Rule, RuleMeta, Section, Severity, depended_store, store_confidence};
use crate::facts::Endpoint;

const DOC: &str = r#"## What it does
Flags a key that goes into the store as sent: no check of its length or its characters (a UUID
or `^[A-Za-z0-9_-]{16,64}$` pattern, a maximum length).

## Why is this bad?
The key is client input used as a storage key. A multi-megabyte key bloats the store and its
index, odd characters break key prefixes and logs, and a one-character key collides across
clients. Bounding it is cheap.

## Example
```ts
const key = req.get('Idempotency-Key');
await claim(userId, key);
```

Use instead:
```ts
if (!key || key.length > 255 || !/^[A-Za-z0-9_-]+$/.test(key)) {
  return res.status(400).json({ error: 'Idempotency-Key must be 1-255 URL-safe characters' });
}
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    let store = depended_store(ep)?;
    if !store.visible() {
        return None;
    }
    let (at, why) = store.bounded.missing()?;
    Some(Hit {
        confidence: store_confidence(store),
        message: format!("The idempotency key is not bounded: {why}."),
        change: "Before using the key, check it is present, at most 255 characters, and of a known charset (a UUID, or `^[A-Za-z0-9_-]+$`); answer 400 otherwise.".into(),
        impact: "Oversized or malformed keys bloat the store and its index, and very short ones collide between clients.".into(),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS019",
            name: "key-not-bounded",
            section: Section::HeaderPattern,
            severity: Severity::Low,
            summary: "the key header is used without a length/charset check",
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
    fn fires_on_an_unchecked_key() {
        let mut s = store();
        assert!(check(&keyed(s.clone())).is_none());
        s.bounded = Prop::no(Location::new("m.ts", 2), "as sent");
        assert_eq!(
            check(&keyed(s.clone())).unwrap().at,
            Some(Location::new("m.ts", 2))
        );
        s.kind = "unknown".into();
        assert!(check(&keyed(s)).is_none(), "no store in view");
    }
}
