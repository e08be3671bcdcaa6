//! RS002 webhook-without-dedup.

use super::{Confidence, Hit, Placed, Project, Rule, RuleMeta, Section, Severity, describe};
use crate::facts::{Effect, EffectKind, Endpoint, MechanismKind};

const DOC: &str = r#"## What it does
Flags a webhook receiver (a provider signature check such as `stripe.webhooks.constructEvent`, or
a read of a provider signature header such as `stripe-signature`) that does something a repeat would
repeat (a create, an email, a charge, a relative update) without recording the provider's event id
atomically first.

## Why is this bad?
Providers deliver at least once: Stripe, GitHub, Shopify and the rest retry on any non-2xx and on
timeouts, and sometimes deliver twice anyway. A receiver that acts on every delivery fulfils the
order twice, sends the receipt twice, credits the account twice.

## Example
```ts
router.post('/webhooks/stripe', async (req, res) => {
  const event = stripe.webhooks.constructEvent(req.body, req.get('stripe-signature'), secret);
  await prisma.order.create({ data: { sessionId: event.data.object.id } });
  res.sendStatus(200);
});
```

Use instead:
```ts
router.post('/webhooks/stripe', async (req, res) => {
  const event = stripe.webhooks.constructEvent(req.body, req.get('stripe-signature'), secret);
  try {
    await prisma.processedEvent.create({ data: { id: event.id } }); // id is @id: a replay conflicts
  } catch (e) {
    if (e.code === 'P2002') return res.sendStatus(200); // already handled
    throw e;
  }
  await prisma.order.create({ data: { sessionId: event.data.object.id } });
  res.sendStatus(200);
});
```

## Severity
Critical when a redelivery repeats money: a charge, a refund, or the provider's payment booked
into a ledger or fulfilled as an order (a create of a `transaction`, `order`, `payment`,
`*ledger*` model). A redelivery that repeats a message or a record is high, as a client's retry
of the same message or record is; one that repeats only a job for the application's own workers
is medium.

## Variant: checked without an atomic record (medium)
A receiver that looks the event id up first (`findUnique`, `SELECT`) and records it with a plain
insert that no unique constraint stops is reported at medium severity: one delivery at a time is
deduplicated, but two concurrent deliveries (a provider retry racing a slow first attempt) both
pass the check. The fix is the same atomic record."#;

/// A receiver that reads its event record before writing it, with nothing making the write
/// atomic: the record it checks (check, then insert).
fn racy_record(ep: &Endpoint) -> Option<&Effect> {
    if !ep.is_mutation()
        || !ep.is_webhook_receiver()
        || ep.has_mechanism(MechanismKind::WebhookEventDedup)
        || ep.has_mechanism(MechanismKind::HeaderKey)
    {
        return None;
    }
    ep.side_effects
        .iter()
        .find(|e| e.event_record && e.prechecked && !e.upsert && e.constraint.is_none())
}

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() || !ep.is_webhook_receiver() {
        return None;
    }
    if ep.has_mechanism(MechanismKind::WebhookEventDedup)
        || ep.has_mechanism(MechanismKind::HeaderKey)
        || racy_record(ep).is_some()
    {
        return None;
    }
    let mut repeated = ep.repeated_effects();
    // The effect that decides the severity comes first.
    repeated.sort_by_key(|e| e.impact);
    let first = repeated.first()?;
    let signature = ep
        .side_effects
        .iter()
        .find(|e| e.kind == EffectKind::WebhookReceiver)?;
    let how = format!(
        "a webhook receiver (signature check {})",
        describe(signature)
    );
    Some(Hit {
        confidence: Confidence::of(&repeated),
        message: format!(
            "`{}` is {how} that acts on every delivery without recording the provider's event id: {}.",
            ep.label(),
            repeated.iter().map(|e| describe(e)).collect::<Vec<_>>().join(", ")
        ),
        change: format!(
            "Record the event id with a unique key (a `processed_events` row whose id is the event id, `ON CONFLICT DO NOTHING`, or Redis `SET NX`) before {}, and answer 200 without acting when it is already there.",
            first.location
        ),
        impact: "A provider's retry or duplicate delivery repeats the fulfilment, the email or the charge.".into(),
        at: None,
        cause: None,
    })
}

/// Receivers that check the event id without an atomic record: medium, not critical.
pub fn placed(p: &Project) -> Vec<Placed> {
    p.endpoints
        .iter()
        .filter_map(|ep| {
            let record = racy_record(ep)?;
            // What a second concurrent delivery repeats: what repeats anyway, and what runs
            // behind the check only (`Effect::lookup_guarded`).
            let mut others: Vec<&Effect> = ep
                .repeated_effects()
                .into_iter()
                .filter(|e| !e.event_record)
                .collect();
            for e in ep.racy_effects() {
                if !e.event_record && e.lookup_guarded.is_some() && !others.contains(&e) {
                    others.push(e);
                }
            }
            // Only the record itself would repeat: nothing to protect.
            if others.is_empty() {
                return None;
            }
            let acts = format!(
                " before {}",
                others
                    .iter()
                    .map(|e| describe(e))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            Some(Placed {
                severity: Severity::Medium,
                endpoint: ep.label(),
                location: ep.location.clone(),
                discriminator: String::new(),
                hit: Hit {
                    confidence: Confidence::of(&[record]),
                    message: format!(
                        "`{}` checks the provider's event id, then records it with {}{acts}: checked without an atomic record (no unique constraint on it, no upsert), two concurrent deliveries both pass.",
                        ep.label(),
                        describe(record)
                    ),
                    change: format!(
                        "Make the record at {} the check: a unique constraint (or primary key) on the event id, with the unique violation answered 200 as already processed, or an insert with `ON CONFLICT DO NOTHING` (Redis `SET NX`) that acts only when it inserted.",
                        record.location
                    ),
                    impact: "A provider retry that races a slow first delivery is processed twice.".into(),
                    at: None,
                    cause: None,
                },
            })
        })
        .collect()
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS002",
            name: "webhook-without-dedup",
            section: Section::WebhookIdempotency,
            severity: Severity::Critical,
            summary: "a webhook receiver that never records or checks the provider's event id",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Effect;
    use crate::rules::testing::{effect, endpoint, mechanism};

    fn receiver(effects: Vec<Effect>, path: &str) -> Endpoint {
        Endpoint {
            path: path.into(),
            ..endpoint("POST", effects, vec![])
        }
    }

    #[test]
    fn fires_on_a_receiver_that_repeats_work() {
        let sig = effect(EffectKind::WebhookReceiver);
        let hit = check(&receiver(
            vec![sig.clone(), effect(EffectKind::DbCreate)],
            "/billing/events",
        ))
        .unwrap();
        assert_eq!(hit.confidence, Confidence::Likely);
        // A path alone does not make a receiver (`/settings/webhooks` configures them).
        assert!(
            check(&receiver(
                vec![effect(EffectKind::Email)],
                "/webhooks/github"
            ))
            .is_none()
        );
    }

    #[test]
    fn silent_with_dedup_or_when_nothing_repeats() {
        let sig = effect(EffectKind::WebhookReceiver);
        let mut ep = receiver(vec![sig.clone(), effect(EffectKind::DbCreate)], "/hooks");
        ep.mechanisms
            .push(mechanism(MechanismKind::WebhookEventDedup));
        assert!(check(&ep).is_none());
        assert!(check(&receiver(vec![sig, effect(EffectKind::DbUpdate)], "/hooks")).is_none());
        assert!(check(&receiver(vec![effect(EffectKind::DbCreate)], "/orders")).is_none());
    }

    #[test]
    fn a_record_checked_first_but_not_atomic_is_a_medium_race() {
        let sig = effect(EffectKind::WebhookReceiver);
        let record = |prechecked, constraint: Option<&str>| Effect {
            event_record: true,
            prechecked,
            constraint: constraint.map(String::from),
            ..effect(EffectKind::DbCreate)
        };
        let racy = receiver(
            vec![sig.clone(), record(true, None), effect(EffectKind::Email)],
            "/hooks",
        );
        assert!(check(&racy).is_none(), "not critical");
        let found = placed(&Project {
            endpoints: std::slice::from_ref(&racy),
            clients: &[],
        });
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Medium);
        assert!(
            found[0]
                .hit
                .message
                .contains("two concurrent deliveries both pass")
        );
        // recorded without a check: nothing stops a duplicate, still critical
        let unchecked = receiver(
            vec![sig, record(false, None), effect(EffectKind::Email)],
            "/hooks",
        );
        assert!(check(&unchecked).is_some());
        assert!(
            placed(&Project {
                endpoints: &[unchecked],
                clients: &[],
            })
            .is_empty()
        );
    }
}
