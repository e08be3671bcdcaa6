//! RS013 transient-failure-stored.

use super::{Hit, Rule, RuleMeta, Section, Severity, depended_store, store_confidence};
use crate::facts::Endpoint;

const DOC: &str = r#"## What it does
Flags a key mechanism that keeps a failure as the key's final answer: the response is stored
whatever its status (a 500 included), or the key is claimed before the handler and nothing gives
it back when the handler fails.

## Why is this bad?
Transient failures (a database failover, a provider timeout) are exactly when clients retry. If
the 500 is stored, every retry replays the 500 and the operation can never succeed under that key;
if the claim is never released, every retry is refused as a duplicate.

## Example
```ts
res.json = (body) => {
  store.set(key, { status: res.statusCode, body }); // a 500 too
  return send(body);
};
```

Use instead:
```ts
res.json = (body) => {
  if (res.statusCode >= 500) void releaseKey(userId, key);   // let the retry run again
  else void completeKey(userId, key, res.statusCode, body);
  return send(body);
};
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    let store = depended_store(ep)?;
    let (at, why) = store.failure_released.missing()?;
    Some(Hit {
        confidence: store_confidence(store),
        message: format!("A failed request is kept as the key's final answer: {why}."),
        change: "Store only final outcomes (2xx, and 4xx that a retry cannot fix); on a 5xx or an exception, delete the claim (in a `catch`/`finally`, or when `status >= 500`) so the client's retry runs again.".into(),
        impact: "After a transient failure, the client's retries get the stored failure (or are refused) and the operation can never complete under that key.".into(),
        at: Some(at.clone()),
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS013",
            name: "transient-failure-stored",
            section: Section::ResponseStorage,
            severity: Severity::Medium,
            summary: "a 5xx/exception stored as the final response of a key, or an in-progress claim never released on failure",
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
    fn fires_when_failures_are_final() {
        let mut s = store();
        assert!(check(&keyed(s.clone())).is_none());
        s.failure_released = Prop::yes(Location::new("m.ts", 40), "status checked");
        assert!(check(&keyed(s.clone())).is_none());
        s.failure_released = Prop::no(Location::new("m.ts", 41), "stored whatever its status");
        assert_eq!(
            check(&keyed(s)).unwrap().at,
            Some(Location::new("m.ts", 41))
        );
    }
}
