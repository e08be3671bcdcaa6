//! RS002 webhook-without-dedup.

use super::{Confidence, Hit, Rule, RuleMeta, Severity, describe};
use crate::facts::{EffectKind, Endpoint, MechanismKind};

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
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() || !ep.is_webhook_receiver() {
        return None;
    }
    if ep.has_mechanism(MechanismKind::WebhookEventDedup)
        || ep.has_mechanism(MechanismKind::HeaderKey)
    {
        return None;
    }
    let repeated = ep.repeated_effects();
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
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS002",
            name: "webhook-without-dedup",
            section: "Webhook Idempotency",
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
}
