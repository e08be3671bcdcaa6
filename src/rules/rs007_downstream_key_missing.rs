//! RS007 downstream-key-missing.

use super::{Confidence, Hit, Rule, RuleMeta, Section, Severity, describe};
use crate::facts::{DownstreamKey, Effect, EffectKind, Endpoint, Impact, MechanismKind};

const DOC: &str = r#"## What it does
On an endpoint that already takes an idempotency key, flags a provider call (a Stripe charge,
refund or transfer) that passes no idempotency key downstream, or one made up at call time
(`uuid()`, `randomUUID()`, `Uuid::new_v4()`) instead of derived from the inbound key. It reads
stripe-node's `{ idempotencyKey }`, async-stripe's request strategy
(`client.with_strategy(RequestStrategy::Idempotent(key))`; `Retry`/`ExponentialBackoff` and
`idempotent_with_uuid()` make a UUID per request) and an `Idempotency-Key` header on a raw
`fetch`/`axios`/`reqwest` call to a provider (flagged only when the key is made at call time: a
raw call without one may go to a provider that takes none).

## Why is this bad?
The inbound key protects our endpoint; the provider still sees every attempt of ours as new. When
our call times out after the provider charged, the replayed request (or the client's retry that
finds no stored response) charges again. A key generated at call time changes on every attempt,
so it protects nothing. Derive it from the inbound key and a purpose, so that every retry of one
intent sends the same key and two purposes never collide.

It is medium, not high: the inbound key already refuses the retry of a request that succeeded,
so what is left is the window of a request that failed after the provider acted (a mechanism
present but incomplete). A payment with no inbound key at all is RS001.

## Example
```ts
await stripe.paymentIntents.create({ amount, currency }, { idempotencyKey: randomUUID() });
```

Use instead:
```ts
const downstream = createHash('sha256').update(`${req.get('Idempotency-Key')}:charge`).digest('hex');
await stripe.paymentIntents.create({ amount, currency }, { idempotencyKey: downstream });
```"#;

/// The provider calls of an endpoint that a timeout of ours could repeat at the provider: no key
/// on a payment, or one made at call time; the ones whose repeat would move money first. A call
/// whose duplicate harms nobody (a setup-mode session, a read) needs no key.
pub(super) fn unprotected(ep: &Endpoint) -> Vec<&Effect> {
    let mut weak: Vec<&Effect> = ep
        .side_effects
        .iter()
        .filter(|e| match e.downstream_key {
            Some(DownstreamKey::Random) => true,
            Some(DownstreamKey::Missing) => e.kind == EffectKind::Payment,
            _ => false,
        })
        .filter(|e| {
            !matches!(
                e.impact,
                Impact::Bookkeeping | Impact::Failure | Impact::Requested | Impact::Read
            )
        })
        .collect();
    weak.sort_by_key(|e| e.impact != Impact::Money);
    weak
}

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() || !ep.has_mechanism(MechanismKind::HeaderKey) {
        return None;
    }
    let weak = unprotected(ep);
    let first = weak.first()?;
    let what = match first.downstream_key {
        Some(DownstreamKey::Random) => "passes a key generated at call time",
        _ => "passes no idempotency key",
    };
    Some(Hit {
        confidence: Confidence::of(&weak),
        message: format!(
            "The provider call {} {what}, so the provider cannot recognise our own retry.",
            describe(first)
        ),
        change: format!(
            "Pass a key derived from the inbound key and a purpose (`sha256(inboundKey + \":<purpose>\")`: stripe-node's `{{ idempotencyKey }}`, async-stripe's `RequestStrategy::Idempotent(..)`, an `Idempotency-Key` header) to the call at {}: the same key on every retry of this request, a different one for each purpose.",
            first.location
        ),
        impact: if first.impact == Impact::Pending {
            "A timeout between the provider's answer and ours can leave a second open session or order at the provider, which charges if someone completes it too."
        } else {
            "A timeout between the provider's charge and our response can still charge twice."
        }
        .into(),
        at: None,
        cause: Some(first.location.clone()),
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS007",
            name: "downstream-key-missing",
            section: Section::IdempotencyMechanism,
            severity: Severity::Medium,
            summary: "a provider call from a keyed endpoint without an idempotency key, or with a random one made at call time",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{effect, endpoint, mechanism};

    fn keyed(key: DownstreamKey) -> Endpoint {
        let charge = Effect {
            downstream_key: Some(key),
            ..effect(EffectKind::Payment)
        };
        endpoint(
            "POST",
            vec![charge],
            vec![mechanism(MechanismKind::HeaderKey)],
        )
    }

    #[test]
    fn fires_on_missing_or_random_keys_only_behind_an_inbound_key() {
        assert!(check(&keyed(DownstreamKey::Missing)).is_some());
        assert!(
            check(&keyed(DownstreamKey::Random))
                .unwrap()
                .message
                .contains("generated at call time")
        );
        assert!(check(&keyed(DownstreamKey::Derived)).is_none());
        assert!(check(&keyed(DownstreamKey::FromInboundKey)).is_none());
        assert!(
            check(&keyed(DownstreamKey::DomainId)).is_none(),
            "RS016 speaks for it"
        );
        let raw = |key| {
            endpoint(
                "POST",
                vec![Effect {
                    downstream_key: Some(key),
                    ..effect(EffectKind::ExternalCall)
                }],
                vec![mechanism(MechanismKind::HeaderKey)],
            )
        };
        assert!(check(&raw(DownstreamKey::Random)).is_some());
        assert!(
            check(&raw(DownstreamKey::Missing)).is_none(),
            "a raw call may go to a provider that takes no key"
        );
        let unkeyed = endpoint(
            "POST",
            vec![Effect {
                downstream_key: Some(DownstreamKey::Missing),
                ..effect(EffectKind::Payment)
            }],
            vec![],
        );
        assert!(
            check(&unkeyed).is_none(),
            "RS001 speaks for an endpoint with no key at all"
        );
    }

    #[test]
    fn cites_the_call_whose_harm_decides_and_is_graded_by_it() {
        let call = |callee: &str, impact| Effect {
            downstream_key: Some(DownstreamKey::Missing),
            callee: callee.into(),
            impact,
            ..effect(EffectKind::Payment)
        };
        let both = endpoint(
            "POST",
            vec![
                call("stripe.checkout.sessions.create", Impact::Pending),
                call("stripe.refunds.create", Impact::Money),
            ],
            vec![mechanism(MechanismKind::HeaderKey)],
        );
        let hit = check(&both).unwrap();
        assert!(hit.message.contains("refunds.create"), "{}", hit.message);
        // The inbound key refuses the retry of a request that succeeded: what is left is the
        // window of one that failed after the provider acted, a mechanism incomplete (medium),
        // even for a refund.
        let grade = |ep: &Endpoint| {
            crate::rules::capped(ep, "RS007", rule().meta.severity, Confidence::Likely)
        };
        assert_eq!(grade(&both), Severity::Medium);
        let pending = endpoint(
            "POST",
            vec![call("stripe.checkout.sessions.create", Impact::Pending)],
            vec![mechanism(MechanismKind::HeaderKey)],
        );
        assert_eq!(grade(&pending), Severity::Medium);
        assert!(check(&pending).unwrap().impact.contains("open session"));
        let setup = endpoint(
            "POST",
            vec![call("stripe.checkout.sessions.create", Impact::Bookkeeping)],
            vec![mechanism(MechanismKind::HeaderKey)],
        );
        assert!(check(&setup).is_none(), "a duplicate that harms nobody");
    }
}
