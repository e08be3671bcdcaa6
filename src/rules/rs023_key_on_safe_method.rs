//! RS023 key-on-safe-method.

use super::{Confidence, Hit, Rule, RuleMeta, Section, Severity};
use crate::facts::{Endpoint, MechanismKind};

const DOC: &str = r#"## What it does
Flags a GET or HEAD route that handles idempotency keys: a key middleware applied to it, or a
handler that reads the `Idempotency-Key` header.

## Why is this bad?
Safe methods are idempotent by definition: a retry of a read changes nothing. Storing keys and
responses for reads costs a write per request, fills the key store, and can serve a stale response
to a later read that reuses a key. It usually means the middleware was applied to a whole router
instead of to the routes that mutate.

## Example
```ts
router.get('/transfers/:id', idempotency(), getTransfer);
```

Use instead:
```ts
router.get('/transfers/:id', getTransfer);
router.post('/transfers', idempotency(), createTransfer);
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    if !matches!(ep.method.as_str(), "GET" | "HEAD") {
        return None;
    }
    let key = ep
        .mechanisms
        .iter()
        .find(|m| m.kind == MechanismKind::HeaderKey)?;
    Some(Hit {
        confidence: Confidence::Likely,
        message: format!("Idempotency keys are handled on a safe method: {}.", key.detail),
        change: format!("Remove the idempotency-key handling from `{}`; apply it only to the routes that mutate.", ep.label()),
        impact: "Saves a key-store write per read and avoids replaying a stale response to a later read.".into(),
        at: None,
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS023",
            name: "key-on-safe-method",
            section: Section::OverBuilt,
            severity: Severity::Inverse,
            summary: "idempotency keys handled on GET/HEAD",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{endpoint, mechanism};

    fn route(method: &str, keyed: bool) -> Endpoint {
        let mechanisms = if keyed {
            vec![mechanism(MechanismKind::HeaderKey)]
        } else {
            vec![]
        };
        endpoint(method, vec![], mechanisms)
    }

    #[test]
    fn fires_only_on_keyed_safe_methods() {
        assert!(check(&route("GET", true)).is_some());
        assert!(check(&route("HEAD", true)).is_some());
        assert!(check(&route("GET", false)).is_none());
        assert!(check(&route("POST", true)).is_none());
    }
}
