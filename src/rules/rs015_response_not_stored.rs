//! RS015 response-not-stored.

use super::{Hit, Rule, RuleMeta, Section, Severity, depended_store, store_confidence};
use crate::facts::Endpoint;

const DOC: &str = r#"## What it does
Flags a key store that records the key (and perhaps a state) but not the response status and
body.

## Why is this bad?
A client retries because it never saw the first answer. If the server only knows "this key was
used", the retry gets an error (409/422) or an empty success instead of the created order's id,
and the client cannot tell what happened. The methodology replays the stored response verbatim.

## Example
```rust
if seen.contains(&key) { return HttpResponse::UnprocessableEntity().finish(); }
seen.insert(key);
```

Use instead:
```rust
// store (status, body) when the handler finishes; on a retry with the same key and request,
// answer with exactly that status and body
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    let store = depended_store(ep)?;
    let (at, why) = store.response_stored.missing()?;
    Some(Hit {
        confidence: store_confidence(store),
        message: format!("The key store does not keep the response: {why}."),
        change: "Store the response status and body with the key when the handler finishes, and answer a completed retry with exactly that status and body.".into(),
        impact: "A client retrying after a lost response gets an error or an empty answer instead of the result of its request, and cannot tell whether it ran.".into(),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS015",
            name: "response-not-stored",
            section: Section::ResponseStorage,
            severity: Severity::Medium,
            summary: "keys recorded without the response, so a retry cannot return the original answer",
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
    fn fires_when_no_response_is_kept() {
        let mut s = store();
        assert!(check(&keyed(s.clone())).is_none());
        s.response_stored = Prop::yes(Location::new("s.ts", 30), "response_body");
        assert!(check(&keyed(s.clone())).is_none());
        s.response_stored = Prop::no(Location::new("s.ts", 12), "key alone");
        assert_eq!(
            check(&keyed(s)).unwrap().at,
            Some(Location::new("s.ts", 12))
        );
    }
}
