//! RS001 payment-without-idempotency.

use super::{Confidence, Hit, Rule, RuleMeta, Section, Severity, describe};
use crate::facts::{Endpoint, Impact, MechanismKind};

const DOC: &str = r#"## What it does
Flags a mutation endpoint that reaches a payment sink (a charge, a payment intent create, confirm or
capture, a refund, a transfer, a payout), directly or through the services it calls, with no inbound
idempotency key and no constraint that stops a duplicate.

## Why is this bad?
Clients retry: a mobile app on a flaky network, a load balancer after a timeout, a user pressing
"Pay" twice. Without a key the server cannot tell the retry from a new intent, so the customer is
charged twice, and the refund, the support ticket and the chargeback fee follow.

## Example
```ts
router.post('/orders/:id/pay', async (req, res) => {
  const intent = await stripe.paymentIntents.create({ amount, currency: 'eur' });
  res.json(intent);
});
```

Use instead:
```ts
router.post('/orders/:id/pay', idempotency(), async (req, res) => {
  const key = req.get('Idempotency-Key');              // required: 400 when missing
  const intent = await stripe.paymentIntents.create(
    { amount, currency: 'eur' },
    { idempotencyKey: sha256(`${key}:charge`) },        // derived downstream key
  );
  res.json(intent);
});
```
The middleware claims the key atomically before the charge and replays the stored response on a
retry with the same key."#;

fn message(payments: &str) -> String {
    format!("Payment reached with no idempotency key: {payments}.")
}

fn impact(callee: &str) -> &'static str {
    let c = callee.to_ascii_lowercase();
    if c.contains("refund") {
        "A client retry after a timeout refunds the payment a second time."
    } else if c.contains("transfer") || c.contains("payout") {
        "A client retry after a timeout sends the money a second time."
    } else {
        "A client retry after a timeout charges the customer a second time."
    }
}

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() {
        return None;
    }
    // A webhook receiver's protection is event-id dedup, which covers all it does; without it,
    // RS002 speaks for the receiver.
    if ep.is_webhook_receiver() || ep.has_mechanism(MechanismKind::WebhookEventDedup) {
        return None;
    }
    // A content hash stops a retry too; RS017 speaks for the intents it collapses. A unique
    // constraint covers only its own write and what runs after it on a duplicate, which
    // `repeats_on_retry` already leaves out: a constraint on another row (a find-or-create of a
    // wallet before the charge) does not stop the charge.
    let protected = [
        MechanismKind::HeaderKey,
        MechanismKind::WebhookEventDedup,
        MechanismKind::ContentHash,
    ];
    if protected.iter().any(|k| ep.has_mechanism(*k)) {
        return None;
    }
    // Money that a retry moves again: not a setup-mode checkout, not a full refund the provider
    // refuses twice, not a charge the provider dedups on a stable key (see `rules/harm.toml`).
    let mut payments: Vec<_> = ep
        .repeated_effects()
        .into_iter()
        .filter(|e| e.impact == Impact::Money)
        .collect();
    // Behind a guard with nothing atomic about it (a status test before the update that marks
    // the order paid): a sequential retry is refused, one that arrives while the first request
    // is still charging passes it. High, not critical (`capped`).
    let racy = payments.is_empty();
    if racy {
        payments = ep
            .racy_effects()
            .into_iter()
            .filter(|e| e.impact == Impact::Money)
            .collect();
    }
    let first = payments.first()?;
    let list = payments
        .iter()
        .map(|e| describe(e))
        .collect::<Vec<_>>()
        .join(", ");
    Some(Hit {
        confidence: Confidence::of(&payments),
        message: if racy {
            let guard = first
                .state_guarded
                .clone()
                .or_else(|| first.lookup_guarded.clone())
                .unwrap_or_else(|| "a lookup of the row it creates".into());
            format!(
                "Payment reached behind a guard that is not atomic: {list}. A sequential retry is refused ({guard}), but a retry sent while the first request is still charging (a client timeout, a double click) passes the same test and charges again."
            )
        } else {
            message(&list)
        },
        change: format!(
            "Require an `Idempotency-Key` header on `{}` (400 when missing), claim it atomically before the charge, replay the stored response on a retry, and pass a key derived from it (`sha256(key + \":charge\")`) to the provider call at {}.",
            ep.label(),
            first.location
        ),
        impact: impact(&first.callee).into(),
        at: None,
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS001",
            name: "payment-without-idempotency",
            section: Section::IdempotencyMechanism,
            severity: Severity::Critical,
            summary: "a mutation endpoint reaches a payment sink with no inbound key and no constraint that stops the duplicate",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::EffectKind;
    use crate::rules::testing::{effect, endpoint, mechanism};

    fn payment() -> crate::facts::Effect {
        crate::facts::Effect {
            callee: "stripe.paymentIntents.create".into(),
            ..effect(EffectKind::Payment)
        }
    }

    #[test]
    fn fires_on_unprotected_payment() {
        let hit = check(&endpoint("POST", vec![payment()], vec![])).expect("finding");
        assert!(hit.message.contains("s.ts:7"));
        assert_eq!(hit.confidence, Confidence::Likely);
    }

    #[test]
    fn a_unique_constraint_on_another_row_does_not_stop_the_charge() {
        // A wallet found or created (its constraint named as the endpoint's mechanism), then a
        // charge: the retry finds the wallet and charges again.
        let wallet = crate::facts::Effect {
            find_or_create: true,
            constraint: Some("Wallet(accountId)".into()),
            ..effect(EffectKind::DbCreate)
        };
        let ep = endpoint(
            "POST",
            vec![wallet, payment()],
            vec![mechanism(MechanismKind::UniqueConstraint)],
        );
        assert!(check(&ep).is_some());
        // One it stops (the charge runs after a create the constraint refuses) is not repeated.
        let stopped = crate::facts::Effect {
            stopped_by: Some("unique Wallet(accountId)".into()),
            ..payment()
        };
        let ep = endpoint(
            "POST",
            vec![stopped],
            vec![mechanism(MechanismKind::UniqueConstraint)],
        );
        assert!(check(&ep).is_none());
    }

    #[test]
    fn silent_with_key_or_on_get() {
        assert!(
            check(&endpoint(
                "POST",
                vec![payment()],
                vec![mechanism(MechanismKind::HeaderKey)]
            ))
            .is_none()
        );
        assert!(check(&endpoint("GET", vec![payment()], vec![])).is_none());
        assert!(check(&endpoint("POST", vec![], vec![])).is_none());
    }

    #[test]
    fn speculative_when_only_reached_by_name() {
        let p = crate::facts::Effect {
            speculative: true,
            ..payment()
        };
        assert_eq!(
            check(&endpoint("POST", vec![p], vec![]))
                .unwrap()
                .confidence,
            Confidence::Speculative
        );
    }
}
