//! RS017 content-hash-as-key.

use super::{Confidence, Hit, Placed, Project, Rule, RuleMeta, Section, Severity, code};
use crate::facts::{ClientRequest, EffectKind, Endpoint, KeyOrigin, MechanismKind};

const DOC: &str = r#"## What it does
Flags a hash of the request body used as the dedup key on an endpoint that charges or creates:
a server that hashes the body and looks the hash up (or stores it) instead of taking an
idempotency key (mechanism `content_hash`), or client code that sends
`sha256(JSON.stringify(body))` as its `Idempotency-Key`.

## Why is this bad?
A hash of the content cannot tell a retry from a second real intent with the same content: two
orders of the same basket, two top-ups of the same amount, two identical transfers a minute apart.
The second one is swallowed as a duplicate (and often answered as if it had succeeded). Only the
client knows whether it is retrying, so the key must come from the intent; the body's hash belongs
next to the key, as the fingerprint that catches a key reused with a different body.

## Example
```ts
const hash = createHash('sha256').update(JSON.stringify(req.body)).digest('hex');
if (await redis.set(`pay:${hash}`, '1', 'EX', 86400, 'NX') === null) return res.status(200).end();
await stripe.paymentIntents.create({ amount: req.body.amount, currency: 'eur' });
```

Use instead:
```ts
const key = req.get('Idempotency-Key');
if (!key) return res.status(400).json({ error: 'Idempotency-Key required' });
const fingerprint = createHash('sha256').update(JSON.stringify(req.body)).digest('hex');
// claim (key, fingerprint) atomically; a reused key with another fingerprint is a 422
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() {
        return None;
    }
    let hash = ep
        .mechanisms
        .iter()
        .find(|m| m.kind == MechanismKind::ContentHash)?;
    let creates: Vec<_> = ep
        .side_effects
        .iter()
        .filter(|e| matches!(e.kind, EffectKind::Payment | EffectKind::DbCreate))
        .collect();
    let first = creates.first()?;
    let what = if first.kind == EffectKind::Payment {
        "charges"
    } else {
        "creates"
    };
    Some(Hit {
        confidence: Confidence::of(&creates),
        message: format!(
            "`{}` {what} (`{}` at {}) and dedups on a hash of the request body ({}): two real requests with the same body count as one.",
            ep.label(),
            first.callee,
            first.location,
            hash.location
        ),
        change: format!(
            "Require an `Idempotency-Key` header on `{}` and dedup on it; keep the body hash at {} as the key's request fingerprint (same key with a different body: 422).",
            ep.label(),
            hash.location
        ),
        impact: "A second real order or payment with the same content is dropped as a duplicate."
            .into(),
        at: None,
        cause: None,
    })
}

/// Client requests whose key hashes the body, on a payment or create endpoint (certain when it
/// calls one of this repository's; a POST elsewhere is likely a create).
pub fn placed(p: &Project) -> Vec<Placed> {
    p.clients
        .iter()
        .filter(|c| c.key_origin == KeyOrigin::ContentHash)
        .filter_map(|c| {
            let confidence = match &c.endpoint_location {
                Some(at) => {
                    let ep = p.endpoints.iter().find(|e| {
                        e.location == *at && c.endpoint.as_deref() == Some(e.label().as_str())
                    })?;
                    ep.side_effects
                        .iter()
                        .any(|e| matches!(e.kind, EffectKind::Payment | EffectKind::DbCreate))
                        .then_some(Confidence::Likely)?
                }
                None if c.method == "POST" => Confidence::Speculative,
                None => return None,
            };
            Some(Placed {
                severity: Severity::Medium,
                endpoint: c.label(),
                location: c.key_location.clone(),
                discriminator: c.function.clone(),
                hit: client_hit(c, confidence),
            })
        })
        .collect()
}

fn client_hit(c: &ClientRequest, confidence: Confidence) -> Hit {
    Hit {
        confidence,
        message: format!(
            "`{} {}` is sent from `{}` ({}) with an idempotency key {}.",
            c.method, c.path, c.function, c.location, c.detail
        ),
        change: format!(
            "Make the key once per intent (a random UUID when the user confirms, reused by every retry) instead of {} at {}.",
            code(&c.key_expression), c.key_location
        ),
        impact: "A second real order or payment with the same content is answered as a replay of the first: it never happens.".into(),
        at: None,
        cause: None,
    }
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS017",
            name: "content-hash-as-key",
            section: Section::IdempotencyMechanism,
            severity: Severity::Medium,
            summary: "a body hash used as the dedup key on a payment or create: two real intents collapse into one",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Location;
    use crate::rules::testing::{client, effect, endpoint, mechanism};

    #[test]
    fn fires_on_a_body_hash_dedup_of_a_create_or_payment() {
        let ep = endpoint(
            "POST",
            vec![effect(EffectKind::Payment)],
            vec![mechanism(MechanismKind::ContentHash)],
        );
        assert!(check(&ep).unwrap().message.contains("charges"));
        let update_only = endpoint(
            "PUT",
            vec![effect(EffectKind::DbUpdate)],
            vec![mechanism(MechanismKind::ContentHash)],
        );
        assert!(check(&update_only).is_none());
        assert!(check(&endpoint("POST", vec![effect(EffectKind::Payment)], vec![])).is_none());
    }

    #[test]
    fn client_hashes_are_likely_on_a_known_create_and_speculative_elsewhere() {
        let ep = endpoint("POST", vec![effect(EffectKind::DbCreate)], vec![]);
        let mut linked = client(KeyOrigin::ContentHash);
        linked.endpoint = Some(ep.label());
        linked.endpoint_location = Some(ep.location.clone());
        let mut to_update = linked.clone();
        to_update.endpoint_location = Some(Location::new("other.ts", 1));
        let elsewhere = client(KeyOrigin::ContentHash);
        let found = placed(&Project {
            endpoints: &[ep],
            clients: &[linked, to_update, elsewhere],
        });
        let confidences: Vec<Confidence> = found.iter().map(|p| p.hit.confidence).collect();
        assert_eq!(
            confidences,
            vec![Confidence::Likely, Confidence::Speculative]
        );
    }
}
