//! Webhook receivers and their event-id dedup.
//!
//! A receiver is protected when it records the provider's event id atomically: a create that a
//! unique constraint stops, or an upsert, on the model where it keeps processed events
//! (`processed_events`, `webhook_events`, … from `rules/webhooks.toml`). Recording it without a
//! unique key is a check-then-insert race and does not count.

use crate::catalog::Catalog;
use crate::facts::key::words;
use crate::facts::{Effect, EffectKind, Endpoint, Location, Mechanism, MechanismKind};

/// A path meant for a provider's callbacks: a segment naming a webhook or hooks (`/webhooks/ses`,
/// `/api/stripe-webhook`, `/hooks/github`).
pub fn is_webhook_path(path: &str) -> bool {
    path.split('/').any(|segment| {
        words::split(segment)
            .iter()
            .any(|w| w.contains("webhook") || w == "hook" || w == "hooks")
    })
}

/// A receiver known by convention: on a webhook path, a check the project writes itself (a
/// header named like a signature or a shared secret, a function named like a signature check)
/// is the provider's signature check. Off webhook paths such names prove nothing (`x-signature`
/// also signs requests between a project's own services).
/// Adds the receiver [`by_convention`] finds to an endpoint's effects, unless a catalogued check
/// already made it one (both languages' endpoint assembly).
pub fn add_by_convention(effects: &mut Vec<Effect>, path: &str, checks: &[(String, Location)]) {
    if !effects
        .iter()
        .any(|e| e.kind == EffectKind::WebhookReceiver)
        && let Some(check) = by_convention(path, checks)
    {
        effects.push(check);
    }
}

fn by_convention(path: &str, checks: &[(String, Location)]) -> Option<Effect> {
    if !is_webhook_path(path) {
        return None;
    }
    let (what, at) = checks.iter().min_by(|a, b| a.1.cmp(&b.1))?;
    Some(Effect {
        kind: EffectKind::WebhookReceiver,
        // the check as code (`x-acme-signature header`), quoted where a message cites it
        callee: what.replace('`', ""),
        label: "signature check on a webhook path".into(),
        location: at.clone(),
        ..Effect::default()
    })
}

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
            // It publishes under the event's own id (the provider's id from the payload):
            // consumers keep one message per event.
            (None, None) => match ep
                .side_effects
                .iter()
                .find(|e| e.kind == EffectKind::QueuePublish && e.deduplicated)
            {
                Some(p) => Mechanism {
                    kind: MechanismKind::WebhookEventDedup,
                    detail: format!(
                        "`{}` publishes under the event's own id: a redelivery publishes the \
                         same id, which consumers keep once (check that they dedup on it)",
                        p.callee
                    ),
                    location: p.location.clone(),
                },
                None => continue,
            },
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
