//! RS022 stored-response-logged.

use super::{Hit, Rule, RuleMeta, Section, Severity, depended_store, store_confidence};
use crate::facts::Endpoint;

const DOC: &str = r#"## What it does
Flags key-handling code that writes the stored (or captured) response body to the log next to
its key.

## Why is this bad?
Stored responses hold what the endpoint returned: payment details, tokens, personal data. Logs
are kept longer, copied wider and protected less than the store. Log the key, the status and the
outcome, not the body.

## Example
```ts
logger.info({ key, body }, 'replaying stored response');
```

Use instead:
```ts
logger.info({ key, status: stored.status }, 'replaying stored response');
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    let store = depended_store(ep)?;
    let (at, _) = store.logs_response.present()?;
    Some(Hit {
        confidence: store_confidence(store),
        message: format!("The stored response body is written to the log ({at})."),
        change: "Log the key, the status and whether the response was replayed, never the body.".into(),
        impact: "Response bodies (payment details, personal data, tokens) end up in logs, which are kept longer and read more widely than the key store.".into(),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS022",
            name: "stored-response-logged",
            section: Section::Storage,
            severity: Severity::Low,
            summary: "the stored response body logged alongside its key",
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
    fn fires_when_the_body_is_logged() {
        let mut s = store();
        assert!(check(&keyed(s.clone())).is_none());
        s.logs_response = Prop::yes(Location::new("m.ts", 9), "logged");
        assert_eq!(check(&keyed(s)).unwrap().at, Some(Location::new("m.ts", 9)));
    }
}
