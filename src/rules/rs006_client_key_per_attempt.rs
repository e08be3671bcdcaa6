//! RS006 client-key-per-attempt.

use super::{Confidence, Hit, Placed, Project, Rule, RuleMeta, Section, Severity, code};
use crate::facts::{ClientRequest, Endpoint, KeyOrigin};

const DOC: &str = r#"## What it does
In client code (a React component, an API client, a Rust CLI using `reqwest`: code that no endpoint
of the repository reaches), finds requests that send an `Idempotency-Key` header and flags a key
made inside the retry loop or a retry callback (`p-retry`, `async-retry`, a `retry` option), made
by the HTTP helper itself on every call (or by a request interceptor), or made from `Date.now()` or
`Math.random()`. A key that is a parameter is judged at its callers in view. The finding points at
the line that makes the key; its endpoint is the endpoint of this repository the request calls,
when its method and path match one, or the request as written (`POST /api/orders`, `ANY *` for a
header set on every request).

## Why is this bad?
The server can only recognise a retry by its key. A key made per attempt is new on every retry,
so the retry after a timeout is a new request to the server: the order is placed twice, the card
charged twice, whatever the server does with keys. A helper that makes the key per call has the
same effect for every caller that retries it, and a request interceptor runs again on each retry.
`Date.now()` changes on every attempt too, and two clients in the same millisecond collide.

## Example
```ts
for (let attempt = 0; attempt < 3; attempt++) {
  try {
    return await fetch('/api/orders', {
      method: 'POST',
      headers: { 'Idempotency-Key': crypto.randomUUID() },
      body: JSON.stringify(order),
    });
  } catch { await sleep(2 ** attempt * 100); }
}
```

Use instead:
```ts
const key = crypto.randomUUID(); // once, when the user confirms
for (let attempt = 0; attempt < 3; attempt++) {
  try {
    return await fetch('/api/orders', {
      method: 'POST',
      headers: { 'Idempotency-Key': key },
      body: JSON.stringify(order),
    });
  } catch { await sleep(2 ** attempt * 100); }
}
```"#;

/// RS006 reads client requests, which are not endpoints: its findings come from [`placed`].
fn check(_: &Endpoint) -> Option<Hit> {
    None
}

fn called(c: &ClientRequest) -> String {
    match (&c.endpoint, &c.endpoint_location) {
        (Some(e), Some(at)) => format!(" (the endpoint `{e}` at {at})"),
        _ => String::new(),
    }
}

fn hit(c: &ClientRequest) -> Option<Hit> {
    let change = match c.key_origin {
        KeyOrigin::PerAttempt => format!(
            "Make the key once per intent, before the retry (when the user confirms), and send the same key on every attempt: move {} at {} out of the retry.",
            code(&c.key_expression),
            c.key_location
        ),
        KeyOrigin::PerCall if c.path == "*" => format!(
            "Do not make keys in a request interceptor: make the key once per intent where the request is made (when the user confirms) and pass it with that request, instead of {} at {}.",
            code(&c.key_expression),
            c.key_location
        ),
        KeyOrigin::PerCall => format!(
            "Make the key once per intent in the caller (when the user confirms, kept with the pending action) and pass it to `{}`, instead of {} at {}.",
            c.key_function,
            code(&c.key_expression),
            c.key_location
        ),
        KeyOrigin::Clock => format!(
            "Use a random UUID (`crypto.randomUUID()`) made once per intent and reused by every retry, instead of {} at {}.",
            code(&c.key_expression),
            c.key_location
        ),
        _ => return None,
    };
    Some(Hit {
        confidence: Confidence::Likely,
        message: format!(
            "`{} {}`{} is sent from `{}` ({}) with an idempotency key {}.",
            c.method,
            c.path,
            called(c),
            c.function,
            c.location,
            c.detail
        ),
        change,
        impact: "A retry after a timeout carries a new key, so the server takes it for a new request and does the work again (a second order, a second charge).".into(),
        at: None,
        cause: None,
    })
}

/// One finding per client request whose key is not made once per intent.
pub fn placed(p: &Project) -> Vec<Placed> {
    p.clients
        .iter()
        .filter_map(|c| {
            Some(Placed {
                severity: Severity::High,
                endpoint: c.label(),
                location: c.key_location.clone(),
                discriminator: c.function.clone(),
                hit: hit(c)?,
            })
        })
        .collect()
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS006",
            name: "client-key-per-attempt",
            section: Section::ClientGeneration,
            severity: Severity::High,
            summary: "client code that makes the key inside the retry loop, per request call, or from `Date.now()`/`Math.random()`",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::client;

    fn findings(origin: KeyOrigin) -> Vec<Placed> {
        let clients = [client(origin)];
        placed(&Project {
            endpoints: &[],
            clients: &clients,
        })
    }

    #[test]
    fn fires_on_keys_made_per_attempt_per_call_or_from_the_clock() {
        for o in [KeyOrigin::PerAttempt, KeyOrigin::PerCall, KeyOrigin::Clock] {
            let f = findings(o);
            assert_eq!(f.len(), 1, "{o:?}");
            assert_eq!(f[0].endpoint, "POST /api/orders");
            assert_eq!(
                f[0].location.line, 8,
                "points at the line that makes the key"
            );
        }
        assert!(
            findings(KeyOrigin::PerCall)[0]
                .hit
                .change
                .contains("`createOrder`")
        );
    }

    #[test]
    fn silent_on_keys_made_once_per_intent_or_not_visible() {
        for o in [
            KeyOrigin::OncePerIntent,
            KeyOrigin::PassedIn,
            KeyOrigin::Held,
            KeyOrigin::Persisted,
            KeyOrigin::Unknown,
            KeyOrigin::DomainId,
            KeyOrigin::ContentHash,
        ] {
            assert!(findings(o).is_empty(), "{o:?}");
        }
    }

    #[test]
    fn names_the_endpoint_it_calls() {
        let mut c = client(KeyOrigin::PerAttempt);
        c.endpoint = Some("POST /api/v1/orders".into());
        c.endpoint_location = Some(crate::facts::Location::new("src/routes/orders.ts", 4));
        let f = placed(&Project {
            endpoints: &[],
            clients: &[c],
        });
        assert_eq!(f[0].endpoint, "POST /api/v1/orders");
        assert!(f[0].hit.message.contains("src/routes/orders.ts:4"));
    }
}
