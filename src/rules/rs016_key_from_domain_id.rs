//! RS016 key-from-domain-id.

use super::{Confidence, Hit, Placed, Project, Rule, RuleMeta, Section, Severity, code, describe};
use crate::facts::{ClientRequest, KeyOrigin};
use crate::facts::{DownstreamKey, Effect, Endpoint};

const DOC: &str = r#"## What it does
Flags an idempotency key taken from a stable domain id (`order.id`, `userId`, `cartId`, a request
id) rather than made once per intent: a key a client sends (`'Idempotency-Key': order.id`), or the
key a service passes to a provider (`{ idempotencyKey: order.id }`, `RequestStrategy::Idempotent(order.id.to_string())`).

## Why is this bad?
A domain id outlives the intent. Two real operations on the same order (a second partial refund,
a new payment after a declined card, a second "add to cart") carry the same key, and the second is
answered with the first one's stored result for as long as the key lives (24 hours at Stripe):
the customer is told it worked, and nothing happened. A request id is the opposite mistake: it is
new on every client retry, so it protects nothing.

## Example
```ts
await stripe.refunds.create({ payment_intent: order.paymentIntentId, amount },
  { idempotencyKey: `refund-${order.id}` });
```

Use instead:
```ts
// the inbound key names this refund request; the purpose keeps two downstream calls apart
const key = createHash('sha256').update(`${req.get('Idempotency-Key')}:refund`).digest('hex');
await stripe.refunds.create({ payment_intent: order.paymentIntentId, amount }, { idempotencyKey: key });
```"#;

fn expression(e: &Effect) -> String {
    e.downstream_key_expression
        .as_deref()
        .map(code)
        .unwrap_or_else(|| "a domain id".into())
}

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() {
        return None;
    }
    let by_id: Vec<&Effect> = ep
        .side_effects
        .iter()
        .filter(|e| e.downstream_key == Some(DownstreamKey::DomainId))
        .collect();
    let first = by_id.first()?;
    Some(Hit {
        confidence: Confidence::of(&by_id),
        message: format!(
            "The provider call {} passes {} as its idempotency key: a stable id of a domain object, not of this request.",
            describe(first),
            expression(first)
        ),
        change: format!(
            "Derive the key passed at {} from the inbound idempotency key and a purpose (`sha256(key + \":<purpose>\")`), so that a retry of this request sends the same key and a second real operation on the same object a new one.",
            first.location
        ),
        impact: "A second real operation on the same object gets the first one's stored result from the provider: it silently does not happen.".into(),
        at: None,
        cause: None,
    })
}

fn client_hit(c: &ClientRequest) -> Hit {
    Hit {
        confidence: Confidence::Likely,
        message: format!(
            "`{} {}` is sent from `{}` ({}) with an idempotency key {}.",
            c.method, c.path, c.function, c.location, c.detail
        ),
        change: format!(
            "Make the key once per intent (a random UUID when the user confirms, kept until the request succeeds) instead of {} at {}.",
            code(&c.key_expression), c.key_location
        ),
        impact: "A second real request about the same object (a second payment, a re-order) carries the same key and is answered with the first one's result: it never happens.".into(),
        at: None,
        cause: None,
    }
}

/// Client requests whose key is a domain id.
pub fn placed(p: &Project) -> Vec<Placed> {
    p.clients
        .iter()
        .filter(|c| c.key_origin == KeyOrigin::DomainId)
        .map(|c| Placed {
            severity: Severity::Medium,
            endpoint: c.label(),
            location: c.key_location.clone(),
            discriminator: c.function.clone(),
            hit: client_hit(c),
        })
        .collect()
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS016",
            name: "key-from-domain-id",
            section: Section::HeaderPattern,
            severity: Severity::Medium,
            summary: "a key taken from a stable domain id (order id, user id, request id) rather than the intent",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::EffectKind;
    use crate::rules::testing::{client, effect, endpoint};

    #[test]
    fn fires_on_a_downstream_key_from_a_domain_id() {
        let call = |key| Effect {
            downstream_key: Some(key),
            downstream_key_expression: Some("order.id".into()),
            ..effect(EffectKind::Payment)
        };
        let hit = check(&endpoint(
            "POST",
            vec![call(DownstreamKey::DomainId)],
            vec![],
        ))
        .unwrap();
        assert!(hit.message.contains("`order.id`"));
        for ok in [
            DownstreamKey::FromInboundKey,
            DownstreamKey::Derived,
            DownstreamKey::Random,
        ] {
            assert!(check(&endpoint("POST", vec![call(ok)], vec![])).is_none());
        }
    }

    #[test]
    fn fires_on_a_client_key_from_a_domain_id_only() {
        let mut by_id = client(KeyOrigin::DomainId);
        by_id.key_expression = "order.id".into();
        let clients = [
            by_id,
            client(KeyOrigin::OncePerIntent),
            client(KeyOrigin::PerCall),
        ];
        let found = placed(&Project {
            endpoints: &[],
            clients: &clients,
        });
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Medium);
        assert!(found[0].hit.change.contains("`order.id`"));
    }
}
