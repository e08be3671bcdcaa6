//! RS003 side-effect-without-idempotency.

use super::{Confidence, Hit, Rule, RuleMeta, Section, Severity, describe};
use crate::facts::{Effect, EffectKind, Endpoint, Impact, MechanismKind};

const DOC: &str = r#"## What it does
Flags a mutation endpoint that reaches a record creation, an email, an SMS, a queue publish, an
external write or a relative update (`increment`, `$inc`, `SET n = n + 1`) that nothing protects:
no idempotency key on the endpoint, and for a create no upsert and no caller-keyed unique
constraint. An upsert or a constraint protects its own write only, so an email sent beside a
protected create is still flagged. A payment that moves money again is RS001's, which takes
precedence on the same endpoint.

Its severity is what the worst repeated effect would do (`rules/harm.toml`): high for a message
to a person or a record a user sees twice; at most medium for a checkout session that charges only
if someone completes it; at most low for bookkeeping (audit rows, sessions, analytics, writes made through a logging or
tracking function), for an effect only a failure reaches (a `catch`, an `Err` arm) or for the
repeat the endpoint is named for (resend, test, a sign-in email). The finding cites that effect
first.

## Why is this bad?
A retried request runs again: a second order row, a second welcome email, a second job on the
queue, a counter bumped twice. Each duplicate is small; together they are the support tickets and
data clean-ups that follow every network blip.

## Example
```ts
router.post('/articles/:slug/comments', async (req, res) => {
  const comment = await prisma.comment.create({ data: req.body });
  res.status(201).json(comment);
});
```

Use instead:
```ts
router.post('/articles/:slug/comments', idempotency(), async (req, res) => {
  const comment = await prisma.comment.create({ data: req.body });
  res.status(201).json(comment);
});
```
or give the row a natural unique key the client supplies (`@@unique([authorId, clientId])`) and
return the existing row when the insert conflicts."#;

fn what(e: &Effect) -> &'static str {
    match e.kind {
        EffectKind::DbCreate => "creates a record",
        EffectKind::DbUpdate => "applies a relative update",
        EffectKind::Email => "sends an email",
        EffectKind::Sms => "sends an SMS or a chat message",
        EffectKind::QueuePublish => "publishes a message",
        EffectKind::ExternalCall => "calls an external service",
        EffectKind::FileWrite => "writes a file",
        EffectKind::Payment => "calls a payment provider",
        _ => "has a side effect",
    }
}

fn check(ep: &Endpoint) -> Option<Hit> {
    // A key covers everything the endpoint does; an upsert or a unique constraint covers only
    // its own write, which `repeats_on_retry` already leaves out.
    // A content hash stops a retry too; RS017 speaks for the intents it collapses.
    if !ep.is_mutation()
        || ep.has_mechanism(MechanismKind::HeaderKey)
        || ep.has_mechanism(MechanismKind::ContentHash)
    {
        return None;
    }
    // A webhook receiver's protection is event-id dedup, which covers all it does; without it,
    // RS002 speaks for the receiver.
    if ep.is_webhook_receiver() || ep.has_mechanism(MechanismKind::WebhookEventDedup) {
        return None;
    }
    let mut repeated = ep.repeated_effects();
    if repeated.iter().any(|e| e.impact == Impact::Money) {
        return None; // RS001
    }
    if repeated.is_empty() {
        return racy(ep);
    }
    // The effect that decides the severity comes first: the worst harm a repeat does.
    repeated.sort_by_key(|e| e.impact);
    let first = repeated.first()?;
    let list = repeated
        .iter()
        .map(|e| format!("{} {}", what(e), describe(e)))
        .collect::<Vec<_>>()
        .join("; ");
    let impact = match first.impact {
        Impact::Bookkeeping => {
            "A client retry leaves a duplicate that harms nobody (bookkeeping); at most a low finding."
        }
        Impact::Pending => {
            "A client retry opens a second payment session; money moves only if someone completes it too."
        }
        Impact::Unknown => {
            "A client retry repeats a call whose effect is not known: a second write at the service if it creates something there, nothing if it only reads; at most a medium finding."
        }
        Impact::Failure => {
            "A client retry repeats it only when the request fails again, to report that failure; at most a low finding."
        }
        Impact::Requested => {
            "A client retry repeats what the endpoint is named for; at most a low finding."
        }
        _ => match first.kind {
            EffectKind::Email | EffectKind::Sms => "A client retry sends the message again.",
            EffectKind::QueuePublish => {
                "A client retry enqueues the job again, and its consumers run twice."
            }
            EffectKind::ExternalCall => "A client retry repeats the call to the external service.",
            EffectKind::DbUpdate => "A client retry applies the change a second time.",
            _ => "A client retry creates a duplicate record.",
        },
    };
    Some(Hit {
        confidence: Confidence::of(&repeated),
        message: format!(
            "No idempotency mechanism: the endpoint {list}.{}",
            first
                .impact_detail
                .as_deref()
                .map(|d| format!(" The first: {d}."))
                .unwrap_or_default()
        ),
        change: if first.impact == Impact::Unknown {
            format!(
                "Find out what the call at {} does: if it creates something at the service, accept an `Idempotency-Key` header on `{}` and pass a key derived from it to the service; if it only reads, nothing is needed.",
                first.location,
                ep.label()
            )
        } else {
            format!(
                "Accept an `Idempotency-Key` header on `{}` and claim it before {} (or key the write on a caller-supplied unique value and return the existing record on conflict).",
                ep.label(),
                first.location
            )
        },
        impact: impact.into(),
        at: None,
        cause: None,
    })
}

/// Nothing repeats on a sequential retry, but only because a lookup finds the row the first run
/// made, and nothing atomic (a unique constraint, a lock, a conditional write) backs it: two
/// concurrent retries both pass the lookup. Medium (high when money moves: `capped`).
fn racy(ep: &Endpoint) -> Option<Hit> {
    // A race that only duplicates bookkeeping, or what a failure or the request's intent
    // repeats, harms nobody.
    let mut racy: Vec<&Effect> = ep
        .racy_effects()
        .into_iter()
        .filter(|e| {
            matches!(
                e.impact,
                Impact::Money
                    | Impact::Message
                    | Impact::Record
                    | Impact::Pending
                    | Impact::Unknown
            )
        })
        .collect();
    racy.sort_by_key(|e| e.impact);
    let first = racy.first()?;
    if first.impact == Impact::Money {
        return None; // RS001
    }
    let list = racy
        .iter()
        .map(|e| format!("{} {}", what(e), describe(e)))
        .collect::<Vec<_>>()
        .join("; ");
    // A state test the request's own update defeats on a sequential retry.
    let Some(create) = racy.iter().find(|e| e.racy_guard()) else {
        if let Some(guard) = racy.iter().find_map(|e| e.lookup_guarded.as_deref()) {
            return Some(Hit {
                confidence: Confidence::of(&racy),
                message: format!(
                    "Guarded but racy: the effects run only when a lookup finds nothing and the same path creates the row it looks for ({guard}), so a sequential retry skips them; the lookup is not atomic, so two concurrent retries both pass it: the endpoint {list}."
                ),
                change: "Create the row first, on a unique constraint over the values it is looked up by, and run the effects only when that create succeeded (or take a lock around the lookup and the create).".into(),
                impact: "A sequential retry repeats nothing; two concurrent retries (a double click, a client and a proxy both retrying) both run the effects.".into(),
                at: None,
                cause: None,
            });
        }
        let state = first
            .state_guarded
            .as_deref()
            .unwrap_or("a state of the row");
        return Some(Hit {
            confidence: Confidence::of(&racy),
            message: format!(
                "Guarded but racy: the effects run only in a state the request changes ({state}), so a sequential retry takes the other branch; the test and the update are not atomic, so two concurrent retries both pass it: the endpoint {list}."
            ),
            change: "Make the update conditional on the state it tests (`UPDATE .. WHERE status = 'pending'`, `updateMany({ where: { id, status: 'pending' } })`) and go on only when it changed a row.".into(),
            impact: "A sequential retry repeats nothing; two concurrent retries (a double click, a client and a proxy both retrying) both run the effects.".into(),
            at: None,
            cause: None,
        });
    };
    let target = create.target.as_deref().unwrap_or("the row");
    // An update-or-insert by hand finds the row on a retry and writes it again, absolutely.
    let again = if create.upsert {
        "updates it instead"
    } else {
        "does nothing again"
    };
    Some(Hit {
        confidence: Confidence::of(&racy),
        message: format!(
            "Guarded but racy: a sequential retry finds the `{target}` the first run created and {again}, but nothing atomic backs the lookup, so two concurrent retries both pass it: the endpoint {list}."
        ),
        change: if create.upsert {
            format!(
                "Add a unique constraint on the values `{target}` is looked up by and write the update-or-insert as one upsert (`ON CONFLICT .. DO UPDATE`), or take a lock around the lookup and the write at {}.",
                create.location
            )
        } else {
            format!(
                "Add a unique constraint on the values `{target}` is looked up by (and return the existing record on conflict), or take a lock around the lookup and the create at {}.",
                create.location
            )
        },
        impact: "A sequential retry repeats nothing; two concurrent retries (a double click, a client and a proxy both retrying) both create.".into(),
        at: None,
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS003",
            name: "side-effect-without-idempotency",
            section: Section::IdempotencyMechanism,
            severity: Severity::High,
            summary: "a create, email, SMS, queue publish, external call or relative update that no key, upsert or constraint protects",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{effect, endpoint, mechanism};

    fn post(effects: Vec<Effect>) -> Endpoint {
        endpoint("POST", effects, vec![])
    }

    #[test]
    fn fires_on_create_email_and_relative_update() {
        assert!(check(&post(vec![effect(EffectKind::DbCreate)])).is_some());
        assert!(check(&post(vec![effect(EffectKind::Email)])).is_some());
        assert!(
            check(&post(vec![Effect {
                relative: true,
                ..effect(EffectKind::DbUpdate)
            }]))
            .is_some()
        );
    }

    #[test]
    fn silent_on_absolute_update_upsert_payment_or_key() {
        assert!(check(&post(vec![effect(EffectKind::DbUpdate)])).is_none());
        assert!(
            check(&post(vec![Effect {
                upsert: true,
                ..effect(EffectKind::DbCreate)
            }]))
            .is_none()
        );
        assert!(
            check(&post(vec![
                effect(EffectKind::Payment),
                effect(EffectKind::Email)
            ]))
            .is_none()
        );
        let keyed = endpoint(
            "POST",
            vec![effect(EffectKind::DbCreate)],
            vec![mechanism(MechanismKind::HeaderKey)],
        );
        assert!(check(&keyed).is_none());
    }

    #[test]
    fn a_protected_create_does_not_cover_an_email() {
        let protected = Effect {
            constraint: Some("User(email)".into()),
            ..effect(EffectKind::DbCreate)
        };
        assert!(check(&post(vec![protected.clone()])).is_none());
        assert!(check(&post(vec![protected, effect(EffectKind::Email)])).is_some());
    }
}
