//! RS011 optional-key-on-critical.

use super::{Hit, Rule, RuleMeta, Section, Severity, describe, store_confidence};
use crate::facts::key::MissingKey;
use crate::facts::{EffectKind, Endpoint, MechanismKind};

const DOC: &str = r#"## What it does
Flags a payment endpoint whose key handling lets a request without the key through (`if (!key)
return next()`, `if let Some(key) = …` with no `else`, a library whose key is optional by
default) instead of refusing it.

## Why is this bad?
The endpoint looks protected, but every client that forgets the header (an old mobile build, a
script, a partner integration) charges twice on a retry. On money-moving routes the key should be
required.

## Example
```ts
const key = req.get('Idempotency-Key');
if (!key) return next(); // unprotected charge
```

Use instead:
```ts
if (!key) return res.status(400).json({ error: 'Idempotency-Key header is required' });
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() || !ep.has_mechanism(MechanismKind::HeaderKey) {
        return None;
    }
    let payment = ep
        .side_effects
        .iter()
        .find(|e| e.kind == EffectKind::Payment)?;
    let store = ep.key_store.as_ref()?;
    let MissingKey::Proceeds { at } = &store.missing_key else {
        return None;
    };
    Some(Hit {
        confidence: store_confidence(store),
        message: format!(
            "The key is optional on a payment endpoint: a request without it goes through unprotected ({at}) to {}.",
            describe(payment)
        ),
        change: "Require the key on this endpoint: answer 400 (`Idempotency-Key header is required`) when it is missing, before anything is charged.".into(),
        impact: "A client that omits the header and retries after a timeout charges the customer twice.".into(),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS011",
            name: "optional-key-on-critical",
            section: Section::HeaderPattern,
            severity: Severity::Medium,
            summary: "a payment endpoint that accepts a key but proceeds without one instead of answering 400",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Location;
    use crate::rules::testing::{effect, keyed, store};

    #[test]
    fn fires_on_a_payment_that_proceeds_without_a_key() {
        let mut s = store();
        s.missing_key = MissingKey::Proceeds {
            at: Location::new("m.ts", 5),
        };
        let create_only = keyed(s.clone());
        assert!(check(&create_only).is_none(), "not a payment");
        let mut pay = keyed(s.clone());
        pay.side_effects.push(effect(EffectKind::Payment));
        assert_eq!(check(&pay).unwrap().at, Some(Location::new("m.ts", 5)));
        let mut required = pay.clone();
        required.key_store.as_mut().unwrap().missing_key = MissingKey::Rejected {
            code: 400,
            at: Location::new("m.ts", 5),
        };
        assert!(check(&required).is_none());
    }
}
