//! RS020 no-idempotency-tests.

use super::{Confidence, Hit, Rule, RuleMeta, Section, Severity, describe};
use crate::facts::{Endpoint, KeyTest, MechanismKind};

const DOC: &str = r#"## What it does
Flags a mutation endpoint protected by an idempotency key when no test in the repository sends it
the same key twice, or twice at once. Tests are read from TS/JS test files (supertest, `fetch`,
axios, Playwright, Fastify `inject`, Hono `app.request`), Rust tests (axum `oneshot`,
`axum_test`, actix `TestRequest`, reqwest) and `.http`/`.rest` files. Only endpoints whose side
effects would repeat on a retry are flagged: there the key is what stands between a retry and a
second charge.

## Why is this bad?
A key mechanism that no test exercises breaks silently: a refactor drops the middleware from one
route, a store change stops matching keys, a handler starts reading the key after the charge.
Nothing fails until a client's retry charges twice in production. One test with the same key
sent twice, and one with two concurrent requests, catch each of these.

## Example
```ts
it('creates an order', async () => {
  await request(app).post('/orders').set('Idempotency-Key', randomUUID()).send(order).expect(201);
});
```

Use instead:
```ts
it('replays an order sent twice with one key', async () => {
  const key = randomUUID();
  const first = await request(app).post('/orders').set('Idempotency-Key', key).send(order);
  const second = await request(app).post('/orders').set('Idempotency-Key', key).send(order);
  expect(second.status).toBe(first.status);
  expect(second.body).toEqual(first.body);
  expect(await db.order.count()).toBe(1);
});

it('lets one of two concurrent requests through', async () => {
  const key = randomUUID();
  const rs = await Promise.all([1, 2].map(() => request(app).post('/orders').set('Idempotency-Key', key).send(order)));
  expect(rs.map((r) => r.status).sort()).toEqual([201, 409]);
});
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() || !ep.has_mechanism(MechanismKind::HeaderKey) {
        return None;
    }
    if ep.confirming_tests().next().is_some() {
        return None;
    }
    // What a repeat would do again, or what only a racy guard keeps from it (a concurrent
    // test is what would show that).
    let mut repeated = ep.repeated_effects();
    if repeated.is_empty() {
        repeated = ep.racy_effects();
    }
    let first = repeated.first()?;
    let label = ep.label();
    let mut message =
        format!("No test sends the same idempotency key twice, or concurrently, to `{label}`.");
    let once: Option<&KeyTest> = ep.key_tests.iter().find(|t| t.exact && !t.repeats());
    if let Some(t) = once {
        message.push_str(&format!(
            " The test at {} sends it a key, but never one key twice, which does not exercise the mechanism.",
            t.location
        ));
    }
    // A repeating test whose URL this audit could not tie to one route may be this one's.
    let maybe: Option<&KeyTest> = ep.key_tests.iter().find(|t| !t.exact && t.repeats());
    let confidence = match maybe {
        Some(t) => {
            message.push_str(&format!(
                " The test at {} {} to a URL that may be this endpoint's.",
                t.location,
                t.describe()
            ));
            Confidence::Speculative
        }
        None => Confidence::Likely,
    };
    // By the language the endpoint is written in, whatever its framework (poem, salvo, warp..).
    let at_once = if ep.location.file.ends_with(".rs") {
        "`tokio::join!`"
    } else {
        "`Promise.all`"
    };
    Some(Hit {
        confidence,
        message,
        change: format!(
            "Add a test that sends `{label}` twice with one `Idempotency-Key` and asserts the second response has the first one's status and body and that {} ran once; and one that sends two requests with one key at once ({at_once}) and expects one 2xx and one 409 or the replayed response.",
            describe(first)
        ),
        impact: format!(
            "A regression in the key mechanism (the middleware dropped from this route, a store that stops matching keys) ships unnoticed, and the next client retry repeats {}.",
            describe(first)
        ),
        at: None,
        // One untested mechanism behind many routes is one cause: its store, else its key read.
        cause: ep
            .key_store
            .as_ref()
            .map(|s| s.location.clone())
            .or_else(|| {
                ep.mechanisms
                    .iter()
                    .find(|m| m.kind == MechanismKind::HeaderKey)
                    .map(|m| m.location.clone())
            }),
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS020",
            name: "no-idempotency-tests",
            section: Section::TestCoverage,
            severity: Severity::Low,
            summary: "a keyed endpoint that no test calls twice with one key, or concurrently",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{EffectKind, Location};
    use crate::rules::testing::{effect, endpoint, mechanism};

    fn keyed() -> Endpoint {
        endpoint(
            "POST",
            vec![effect(EffectKind::Payment)],
            vec![mechanism(MechanismKind::HeaderKey)],
        )
    }

    fn test(exact: bool, twice: bool) -> KeyTest {
        KeyTest {
            method: "POST".into(),
            path: Some("/x".into()),
            base: false,
            same_key_twice: twice,
            concurrent: false,
            exact,
            location: Location::new("test/x.test.ts", 12),
        }
    }

    #[test]
    fn fires_on_an_untested_keyed_endpoint_and_not_on_a_tested_one() {
        let mut ep = keyed();
        let hit = check(&ep).unwrap();
        assert_eq!(hit.confidence, Confidence::Likely);
        assert!(hit.change.contains("`POST /x` twice"));
        ep.key_tests.push(test(true, false));
        let hit = check(&ep).unwrap();
        assert!(
            hit.message
                .contains("test/x.test.ts:12 sends it a key, but never one key twice")
        );
        ep.key_tests.push(test(true, true));
        assert!(check(&ep).is_none());
    }

    #[test]
    fn the_concurrent_test_is_written_in_the_endpoints_language() {
        let mut ep = keyed();
        assert!(check(&ep).unwrap().change.contains("`Promise.all`"));
        ep.framework = "salvo".into();
        ep.location.file = "src/routes.rs".into();
        assert!(check(&ep).unwrap().change.contains("`tokio::join!`"));
    }

    #[test]
    fn a_test_that_may_target_it_lowers_the_confidence() {
        let mut ep = keyed();
        ep.key_tests.push(test(false, true));
        assert_eq!(check(&ep).unwrap().confidence, Confidence::Speculative);
    }

    #[test]
    fn silent_without_a_key_or_without_a_repeated_effect() {
        assert!(check(&endpoint("POST", vec![effect(EffectKind::Payment)], vec![])).is_none());
        let natural = endpoint(
            "PUT",
            vec![effect(EffectKind::DbUpdate)],
            vec![mechanism(MechanismKind::HeaderKey)],
        );
        assert!(check(&natural).is_none());
        let mut get = keyed();
        get.method = "GET".into();
        assert!(check(&get).is_none());
    }
}
