//! Webhook receivers and their event-id dedup.
//!
//! A receiver is protected when it records the provider's event id atomically: a create that a
//! unique constraint stops, or an upsert, on the model where it keeps processed events
//! (`processed_events`, `webhook_events`, … from `rules/webhooks.toml`). Recording it without a
//! unique key is a check-then-insert race and does not count.

use crate::catalog::Catalog;
use crate::facts::{EffectKind, Endpoint, Mechanism, MechanismKind};

pub fn apply(endpoints: &mut [Endpoint], catalog: &Catalog) {
    for ep in endpoints
        .iter_mut()
        .filter(|e| e.is_mutation() && e.is_webhook_receiver())
    {
        for e in ep.side_effects.iter_mut() {
            e.event_record = e.kind == EffectKind::DbCreate
                && e.target
                    .as_deref()
                    .is_some_and(|t| catalog.is_event_record(t));
        }
        let record = ep
            .side_effects
            .iter()
            .find(|e| e.event_record && (e.upsert || e.constraint.is_some()));
        let mechanism = match (record, ep.derived_ids.first()) {
            (Some(r), _) => Mechanism {
                kind: MechanismKind::WebhookEventDedup,
                detail: format!("event ids recorded atomically by `{}`", r.callee),
                location: r.location.clone(),
            },
            // The receiver names what it writes by an id derived from the provider's event: a
            // redelivery writes the same id, which the store can keep once.
            (None, Some(at)) => Mechanism {
                kind: MechanismKind::WebhookEventDedup,
                detail: "what it writes is named by an id derived deterministically from the \
                         event (uuid v5): a redelivery writes the same id, so a store keyed on it \
                         keeps one (check that the store dedups on that id)"
                    .into(),
                location: at.clone(),
            },
            (None, None) => continue,
        };
        ep.mechanisms.push(mechanism);
        ep.mechanisms.sort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Effect, Location};

    #[test]
    fn an_atomic_event_record_is_dedup_and_a_plain_one_is_not() {
        let catalog = Catalog::builtin().unwrap();
        let check = Effect {
            kind: EffectKind::WebhookReceiver,
            ..Effect::default()
        };
        let record = |constraint: Option<&str>| Effect {
            kind: EffectKind::DbCreate,
            target: Some("processedEvent".into()),
            constraint: constraint.map(String::from),
            location: Location::new("w.ts", 9),
            ..Effect::default()
        };
        let mut eps = vec![
            Endpoint {
                method: "POST".into(),
                path: "/hooks".into(),
                side_effects: vec![check.clone(), record(Some("ProcessedEvent(id)"))],
                ..Endpoint::default()
            },
            Endpoint {
                method: "POST".into(),
                path: "/hooks".into(),
                side_effects: vec![check, record(None)],
                ..Endpoint::default()
            },
        ];
        apply(&mut eps, &catalog);
        assert!(eps[0].has_mechanism(MechanismKind::WebhookEventDedup));
        assert!(!eps[1].has_mechanism(MechanismKind::WebhookEventDedup));
        assert!(
            eps[1].side_effects[1].event_record,
            "recorded, not atomically"
        );
    }
}
