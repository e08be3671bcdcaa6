//! The harm judgement: what a duplicate of each effect would do to a person or to money
//! ([`Impact`]), read from the catalogue (`rules/harm.toml`). It runs once over the endpoints of
//! both languages, after linking, so a TypeScript and a Rust endpoint that reach the same kind of
//! call with the same arguments get the same verdict.

use crate::catalog::harm::{Harm, call_path};
use crate::facts::{DownstreamKey, Effect, EffectKind, Endpoint, Impact, Location};

/// What the endpoint's name says the caller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Intent {
    /// An explicit repeat (`resend`, `test`): its messages and deliveries are asked for.
    Repeat,
    /// A sign-in, reset or verification request: its messages are asked for.
    Message,
}

/// The words of a name: split at case changes, digits and punctuation, lower-cased; each pair of
/// neighbours is also given joined (`signIn` → `sign`, `in`, `signin`).
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in text.chars() {
        if !ch.is_ascii_alphabetic() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if ch.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = ch.is_ascii_lowercase();
        cur.push(ch.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    let pairs: Vec<String> = out
        .windows(2)
        .map(|w| format!("{}{}", w[0], w[1]))
        .collect();
    out.extend(pairs);
    out
}

/// A path's static segments (`/invites/{id}/resend` → `invites`, `resend`).
fn statics(path: &str) -> Vec<&str> {
    path.split(['/', '#'])
        .filter(|s| !s.is_empty() && !s.starts_with('{') && !s.starts_with(':'))
        .collect()
}

/// The endpoint's intent and the word that shows it. An explicit repeat is what the endpoint is
/// named: its handler's name or its path's last static segment (`/invites/{id}/resend`, not
/// `/api/resend/summary`, a folder named for the Resend provider). A sign-in, reset or
/// verification flow may show in any static segment (`/auth/reset/step1/{token}`).
fn intent(ep: &Endpoint, harm: &Harm) -> Option<(Intent, String)> {
    let statics = statics(&ep.path);
    let mut named = words(&ep.handler);
    named.extend(statics.last().map(|s| words(s)).unwrap_or_default());
    let mut anywhere = named.clone();
    anywhere.extend(words(&statics.join("/")));
    for (intent, list, among) in [
        (Intent::Repeat, &harm.repeat_words, &named),
        (Intent::Message, &harm.message_words, &anywhere),
    ] {
        if let Some(w) = among.iter().find(|w| list.contains(w)) {
            return Some((intent, w.clone()));
        }
    }
    None
}

/// The word that names the endpoint a sign-in or a session's refresh, if one does: its handler's
/// name or its path's last two static segments (`/auth/refresh`, `/oauth/token`,
/// `/users/sign-in`).
fn signs_in(ep: &Endpoint, harm: &Harm) -> Option<String> {
    let statics = statics(&ep.path);
    let mut named = words(&ep.handler);
    named.extend(words(&statics[statics.len().saturating_sub(2)..].join("/")));
    named.into_iter().find(|w| harm.session_words.contains(w))
}

/// A downstream key the provider dedups a retry on: one made from a stable domain id
/// (`order.id`), or one computed from what the function re-reads with no fresh part and no path
/// that passes none (`` `invoice_${invoice.id}_${amount}` ``; not `key ? k : undefined`). A key
/// derived from the inbound key is as stable as the client's key: the endpoint's key mechanism
/// protects it and is judged as such.
fn stable_key(key: Option<DownstreamKey>, expression: Option<&str>) -> bool {
    match key {
        Some(DownstreamKey::DomainId) => true,
        Some(DownstreamKey::Derived) => expression.is_some_and(|x| {
            let literal = x.len() >= 2
                && (x.starts_with('"') || x.starts_with('\''))
                && (x.ends_with('"') || x.ends_with('\''));
            // A constant is no key of this request: it only stands in for one.
            !x.is_empty()
                && !literal
                && !["?", "||", "undefined", "null", "None"]
                    .iter()
                    .any(|w| x.contains(w))
        }),
        _ => false,
    }
}

/// Judges every effect of every endpoint.
pub fn apply(endpoints: &mut [Endpoint], harm: &Harm) {
    for ep in endpoints {
        let intent = intent(ep, harm);
        let sign_in = signs_in(ep, harm);
        let receiver = ep.is_webhook_receiver();
        let deletes = deletes_its_target(ep);
        let calls = request_calls(ep);
        for e in &mut ep.side_effects {
            let mut impact = e.sink_impact.unwrap_or_else(|| Impact::of_kind(e.kind));
            let mut detail: Option<String> = None;
            // A job for the application's own workers: what a duplicate does is what the job
            // does, which is not followed here, unless the job is named for a message.
            let mut queued: Option<String> = None;
            if e.kind == EffectKind::DbCreate
                && let Some(p) = e.target.as_deref().and_then(|t| harm.job_model(t))
            {
                impact = Impact::Unknown;
                queued = Some(format!(
                    "a job row in `{}`, the job table of a queue kept in the application's database (model pattern `{p}`): a duplicate repeats what the job does, which is not followed here",
                    e.target.as_deref().unwrap_or_default()
                ));
            } else if e.kind == EffectKind::QueuePublish && e.sink_impact.is_none() {
                let named = e
                    .via
                    .iter()
                    .rev()
                    .chain(e.target.iter())
                    .find_map(|f| harm.message_function(f).map(|p| (f, p)));
                match named {
                    Some((f, p)) => {
                        impact = Impact::Message;
                        queued = Some(format!(
                            "a job published through or to `{f}`, named for a message to a person (function pattern `{p}`)"
                        ));
                    }
                    None => {
                        impact = Impact::Unknown;
                        queued = Some(
                            "a job for the application's own workers: a duplicate repeats what the job does, which is not followed here".into(),
                        );
                    }
                }
            }
            // A call given an idempotency key is one its author knows to write: the service is
            // asked to dedup it.
            if impact == Impact::Unknown
                && e.downstream_key
                    .is_some_and(|k| k != crate::facts::DownstreamKey::Missing)
            {
                impact = Impact::Record;
            }
            if let Some(p) = harm
                .provider_for(&e.callee, &e.args, &e.made_args, &calls)
                .or_else(|| {
                    e.package_call
                        .as_deref()
                        .and_then(|c| harm.provider_for(c, &e.args, &e.made_args, &calls))
                })
            {
                impact = p.impact;
                detail = Some(format!("{} (provider semantics `{}`)", p.detail, p.id));
            } else if let Some(h) = matches!(e.kind, EffectKind::ExternalCall | EffectKind::Payment)
                .then(|| harm.http_for(e.url.as_deref(), &e.args))
                .flatten()
            {
                impact = h.impact;
                detail = Some(format!(
                    "{} ({} `{}`)",
                    h.detail,
                    if h.urls.is_empty() {
                        "request pattern"
                    } else {
                        "URL pattern"
                    },
                    h.id
                ));
            } else if let Some(m) = (e.kind == EffectKind::ExternalCall)
                .then(|| harm.idempotent_method(&e.callee, &e.args))
                .flatten()
            {
                impact = Impact::Read;
                detail = Some(format!(
                    "an HTTP `{m}`: idempotent by definition (RFC 9110, section 9.2.2), a repeat leaves the state the first call left"
                ));
            } else if let Some((fields, p)) = (e.kind == EffectKind::DbUpdate && e.relative)
                .then(|| {
                    // Raw SQL in either language (`SET attempts = attempts + 1`): the columns it
                    // sets to no constant.
                    let fields = moved_fields(e);
                    let p = harm.counter_fields(&fields)?;
                    let p: Vec<String> = p.into_iter().map(String::from).collect();
                    Some((fields, p))
                })
                .flatten()
            {
                impact = Impact::Bookkeeping;
                detail = Some(format!(
                    "it changes only counters (`{}`, field patterns `{}`): a repeat skews a count and harms nobody",
                    fields.join("`, `"),
                    p.join("`, `")
                ));
            } else if e.kind == EffectKind::DbUpdate
                && e.relative
                && e.window
                && harm.value_fields(&moved_fields(e)).is_none()
            {
                impact = Impact::Bookkeeping;
                detail = Some(
                    "a counter whose key the same code gives a time to live: a window (a rate limit, a throttle) that counts requests, which a repeat is one more of".into(),
                );
            } else if e.kind == EffectKind::DbUpdate
                && e.relative
                && e.shifts_range
                && let fields = moved_fields(e)
                && !fields.is_empty()
                && harm.value_fields(&fields).is_none()
            {
                impact = Impact::Bookkeeping;
                detail = Some(format!(
                    "it shifts the rows past a point by `{}` (its `WHERE` bounds that column by a range): their order holds, a repeat only widens the gap",
                    fields.join("`, `")
                ));
            } else if let Some(p) = (queued.is_none()
                && matches!(e.kind, EffectKind::DbCreate | EffectKind::DbUpdate))
            .then_some(e.target.as_deref())
            .flatten()
            .and_then(|t| harm.bookkeeping_model(t))
            {
                impact = Impact::Bookkeeping;
                detail = Some(format!(
                    "`{}` is bookkeeping (model pattern `{p}`): a duplicate row harms nobody",
                    e.target.as_deref().unwrap_or_default()
                ));
            }
            // A sign-in's tokens or challenge (`INSERT INTO token .. 'refresh'`): the caller's own
            // session; a repeat signs in again and harms nobody.
            if impact == Impact::Record
                && detail.is_none()
                && matches!(e.kind, EffectKind::DbCreate | EffectKind::DbUpdate)
                && !e.relative
                && let Some(word) = &sign_in
                && let Some(p) = e.target.as_deref().and_then(|t| harm.issued_model(t))
            {
                impact = Impact::Bookkeeping;
                detail = Some(format!(
                    "`{}` holds what a sign-in issues (model pattern `{p}`), written by a sign-in (`{word}`): the caller's own session, a repeat signs in again and harms nobody",
                    e.target.as_deref().unwrap_or_default()
                ));
            }
            // A write made for logging, auditing or tracking (`flushAuditEvents → fetch`), or a
            // job that re-derives state from rows already written (`index_pending_collab →
            // xadd`): a duplicate harms nobody.
            if matches!(impact, Impact::Record | Impact::Unknown)
                && detail.is_none()
                && let Some((f, p, what)) = e.via.iter().rev().find_map(|f| {
                    harm.bookkeeping_function(f)
                        .map(|p| (f, p, "a logging, audit or tracking function"))
                        .or_else(|| {
                            harm.derived_function(f).map(|p| {
                                (f, p, "a function that re-derives state (an index, embeddings) from what is already written")
                            })
                        })
                })
            {
                impact = Impact::Bookkeeping;
                detail = Some(format!(
                    "made through `{f}`, {what} (function pattern `{p}`): a duplicate harms nobody"
                ));
            }
            // A counter incremented through a usage-metering function (`saveUsage →
            // hincrby(key, 'tokensUsed', n)`): it counts what the request used.
            if matches!(impact, Impact::Record | Impact::Unknown)
                && detail.is_none()
                && e.kind == EffectKind::DbUpdate
                && e.relative
                && let Some((f, p)) = through(e, |f| harm.metering_function(f))
            {
                impact = Impact::Bookkeeping;
                detail = Some(format!(
                    "a counter incremented through `{f}`, a usage-metering function (function pattern `{p}`): it counts what the request used, and a repeat that runs the work again used it again"
                ));
            }
            // A webhook receiver that books the provider's payment into a ledger credits or
            // debits an account in the books: a redelivery books it twice.
            if receiver
                && e.kind == EffectKind::DbCreate
                && impact == Impact::Record
                && detail.is_none()
                && let Some(p) = e.target.as_deref().and_then(|t| harm.ledger_model(t))
            {
                impact = Impact::Money;
                detail = Some(format!(
                    "a webhook receiver books the provider's event into `{}`, a ledger (model pattern `{p}`): a redelivery books the payment twice",
                    e.target.as_deref().unwrap_or_default()
                ));
            }
            // A one-time link or code (a verification, a password reset, a sign-in code): a
            // second message gives the person a second way in, or replaces the first.
            // A job published, or an email API called, by such a function
            // (`sendPasswordResetEmail → queue.add`, `sendVerificationCodeEmail → fetch`) is that
            // message.
            if matches!(impact, Impact::Message | Impact::Record | Impact::Unknown)
                && matches!(
                    e.kind,
                    EffectKind::Email
                        | EffectKind::Sms
                        | EffectKind::QueuePublish
                        | EffectKind::ExternalCall
                )
                && detail.is_none()
                && let Some((f, p)) = through(e, |f| harm.credential_function(f))
            {
                impact = Impact::Requested;
                detail = Some(format!(
                    "sent through `{f}`, which sends a one-time link or code (function pattern `{p}`): a second message only gives the person a second link"
                ));
            }
            // Only a failed request reaches it: a retry of one that succeeded does not.
            if e.on_failure && matches!(impact, Impact::Message | Impact::Record | Impact::Unknown)
            {
                impact = Impact::Failure;
                detail = Some(
                    "it runs only when the request fails (reached from a `catch` or an `Err` arm): a retry repeats it only if the request fails again, to report that failure".into(),
                );
            }
            // A provider that dedups on the stable key it is given does not repeat the call (a
            // payment, or a message: Resend's `emails.send(.., { idempotencyKey })`).
            if matches!(
                e.kind,
                EffectKind::Payment
                    | EffectKind::ExternalCall
                    | EffectKind::Email
                    | EffectKind::Sms
            ) && stable_key(e.downstream_key, e.downstream_key_expression.as_deref())
                && impact != Impact::Read
            {
                e.deduplicated = true;
                detail = Some(format!(
                    "the provider dedups on the stable idempotency key it is given{}",
                    e.downstream_key_expression
                        .as_deref()
                        .map(|k| format!(" (`{k}`)"))
                        .unwrap_or_default()
                ));
            }
            if let Some((intent, word)) = &intent {
                let asked = match intent {
                    Intent::Repeat => matches!(
                        e.kind,
                        EffectKind::Email
                            | EffectKind::Sms
                            | EffectKind::ExternalCall
                            | EffectKind::QueuePublish
                    ),
                    Intent::Message => matches!(e.kind, EffectKind::Email | EffectKind::Sms),
                };
                if asked && matches!(impact, Impact::Message | Impact::Record | Impact::Unknown) {
                    impact = Impact::Requested;
                    detail = Some(format!(
                        "the endpoint is named for it (`{word}`): a second {} on a second request is what the caller asks for",
                        if matches!(e.kind, EffectKind::Email | EffectKind::Sms) {
                            "message"
                        } else {
                            "delivery"
                        }
                    ));
                }
            }
            // A DELETE that deletes its target: a retry finds the target gone (a lookup answers
            // 404, the delete itself fails or deletes nothing), so what it does alongside the
            // delete (a tombstone row, a job, a notice) runs once per target. Unless that target
            // is not what the handler looks up first: a repeat is possible, not shown.
            if let Some(target) = &deletes
                && e.kind != EffectKind::DbDelete
                && matches!(impact, Impact::Message | Impact::Record)
                && !e.on_failure
            {
                impact = Impact::Unknown;
                detail = Some(format!(
                    "made by a DELETE that deletes `{target}`: a retry finds its target gone (RFC 9110, section 9.3.5), so this runs again only if the handler does not look the target up first"
                ));
            }
            if detail.is_none() && matches!(impact, Impact::Unknown | Impact::Message) {
                detail = queued;
            }
            e.impact = impact;
            e.impact_detail = detail;
        }
        single_use_checks(ep, harm, &calls);
    }
}

/// Every call an endpoint's effects make, as a member path in either language (the call as
/// written and the package call it resolves to).
fn request_calls(ep: &Endpoint) -> Vec<String> {
    let mut calls: Vec<String> = ep
        .side_effects
        .iter()
        .flat_map(|e| std::iter::once(&e.callee).chain(e.package_call.as_ref()))
        .map(|c| call_path(c))
        .collect();
    calls.sort();
    calls.dedup();
    calls
}

/// A call to a service that accepts what the request sends once (a captcha token, an OAuth
/// authorization code), made before other effects on every path: a retry of the same request
/// is refused there, so those effects run once. The service refuses the second use itself, so
/// two concurrent retries do not both pass.
fn single_use_checks(ep: &mut Endpoint, harm: &Harm, calls: &[String]) {
    let checks: Vec<(Location, String)> = ep
        .side_effects
        .iter()
        .filter(|e| e.kind == EffectKind::ExternalCall && !e.on_failure)
        .filter_map(|e| {
            let (detail, id) = match harm.provider_for(&e.callee, &e.args, &e.made_args, calls) {
                Some(p) => (p.single_use.then_some(&p.detail)?, &p.id),
                None => {
                    let h = harm.http_for(e.url.as_deref(), &e.args)?;
                    (h.single_use.then_some(&h.detail)?, &h.id)
                }
            };
            Some((
                e.location.clone(),
                format!("{detail} (`{}`, `{id}`)", e.callee),
            ))
        })
        .collect();
    if checks.is_empty() {
        return;
    }
    for e in &mut ep.side_effects {
        if e.claimed.is_some() {
            continue;
        }
        if let Some((at, what)) = checks.iter().find(|(at, _)| e.after_creates.contains(at)) {
            e.claimed = Some((what.clone(), at.clone()));
        }
    }
}

/// The model a DELETE endpoint deletes on its success path, when it deletes one.
fn deletes_its_target(ep: &Endpoint) -> Option<String> {
    if ep.method != "DELETE" {
        return None;
    }
    ep.side_effects
        .iter()
        .find(|e| e.kind == EffectKind::DbDelete && !e.on_failure)
        .map(|e| e.target.clone().unwrap_or_else(|| e.callee.clone()))
}

/// The innermost function an effect is made through whose name `pattern` matches, with the
/// pattern (`saveUsage`, `*usage`).
fn through<'e, 'h>(
    e: &'e Effect,
    pattern: impl Fn(&str) -> Option<&'h str>,
) -> Option<(&'e String, &'h str)> {
    e.via.iter().rev().find_map(|f| pattern(f).map(|p| (f, p)))
}

/// The fields a relative update changes by their old value: those the call shows, or, for raw
/// SQL, the columns it sets to no constant.
fn moved_fields(e: &Effect) -> Vec<String> {
    if e.relative_fields.is_empty() {
        e.update_keys
            .iter()
            .filter(|(_, v)| v.as_deref().is_none_or(|v| v.starts_with("v:")))
            .map(|(k, _)| k.clone())
            .collect()
    } else {
        e.relative_fields.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Effect;

    fn endpoint(handler: &str, path: &str, effects: Vec<Effect>) -> Endpoint {
        Endpoint {
            method: "POST".into(),
            path: path.into(),
            handler: handler.into(),
            side_effects: effects,
            ..Endpoint::default()
        }
    }

    fn judged(ep: Endpoint) -> Vec<Effect> {
        let mut eps = vec![ep];
        apply(&mut eps, &Harm::builtin().unwrap());
        eps.remove(0).side_effects
    }

    #[test]
    fn stable_downstream_keys() {
        assert!(stable_key(Some(DownstreamKey::DomainId), None));
        assert!(stable_key(
            Some(DownstreamKey::Derived),
            Some("`invoice_${invoice.id}_${amount}`")
        ));
        assert!(!stable_key(
            Some(DownstreamKey::Derived),
            Some("inboundKey ? `${inboundKey}:donation` : undefined")
        ));
        assert!(!stable_key(Some(DownstreamKey::Derived), None));
        assert!(!stable_key(Some(DownstreamKey::Derived), Some("\"k\"")));
        assert!(!stable_key(Some(DownstreamKey::Random), Some("uuid()")));
        assert!(!stable_key(
            Some(DownstreamKey::FromInboundKey),
            Some("key")
        ));
    }

    #[test]
    fn words_split_at_case_and_punctuation_and_join_neighbours() {
        let w = words("sendTestEmail");
        assert!(w.contains(&"test".to_string()));
        assert!(words("signIn").contains(&"signin".to_string()));
        assert!(words("/auth/magic-link").contains(&"magic".to_string()));
        assert!(!words("contest").contains(&"test".to_string()));
    }

    #[test]
    fn intent_makes_messages_requested_but_not_records() {
        let email = Effect {
            kind: EffectKind::Email,
            ..Effect::default()
        };
        let create = Effect {
            kind: EffectKind::DbCreate,
            target: Some("invite".into()),
            ..Effect::default()
        };
        let out = judged(endpoint(
            "resendInvite",
            "/invites/{id}/resend",
            vec![email.clone(), create.clone()],
        ));
        assert_eq!(out[0].impact, Impact::Requested);
        assert_eq!(out[1].impact, Impact::Record);
        // A folder named for the Resend provider is no repeat.
        let out = judged(endpoint("POST", "/api/resend/summary", vec![email.clone()]));
        assert_eq!(out[0].impact, Impact::Message);
        let out = judged(endpoint(
            "POST",
            "/auth/reset/step1/{token}",
            vec![email.clone()],
        ));
        assert_eq!(out[0].impact, Impact::Requested);
        let out = judged(endpoint("createInvite", "/invites", vec![email]));
        assert_eq!(out[0].impact, Impact::Message);
        assert!(out[0].repeats_on_retry());
    }

    #[test]
    fn queued_jobs_deletes_and_receiver_ledgers() {
        let job = |via: &str| Effect {
            kind: EffectKind::QueuePublish,
            target: Some("jobs".into()),
            via: vec![via.into()],
            ..Effect::default()
        };
        let out = judged(endpoint(
            "create",
            "/exports",
            vec![job("enqueueExport"), job("sendInviteEmail")],
        ));
        assert_eq!(out[0].impact, Impact::Unknown);
        assert_eq!(out[1].impact, Impact::Message);
        // A row of a job table is a job.
        let row = Effect {
            kind: EffectKind::DbCreate,
            target: Some("background_jobs".into()),
            ..Effect::default()
        };
        assert_eq!(
            judged(endpoint("rebuild", "/rebuilds", vec![row]))[0].impact,
            Impact::Unknown
        );
        // A relative update of counters only is bookkeeping; of a balance, a record.
        let bump = |fields: &[&str]| Effect {
            kind: EffectKind::DbUpdate,
            relative: true,
            relative_fields: fields.iter().map(|f| f.to_string()).collect(),
            ..Effect::default()
        };
        let out = judged(endpoint(
            "bump",
            "/things",
            vec![
                bump(&["viewCount", "nameHistory"]),
                bump(&["credits"]),
                bump(&["accountCount", "balance"]),
                bump(&[]),
            ],
        ));
        assert_eq!(out[0].impact, Impact::Bookkeeping);
        assert_eq!(out[1].impact, Impact::Record);
        assert_eq!(out[2].impact, Impact::Record);
        assert_eq!(out[3].impact, Impact::Record);
        // A DELETE that deletes: what it does beside the delete follows one deletion.
        let mut ep = endpoint(
            "remove",
            "/projects/{id}",
            vec![
                Effect {
                    kind: EffectKind::DbDelete,
                    target: Some("project".into()),
                    ..Effect::default()
                },
                Effect {
                    kind: EffectKind::Email,
                    ..Effect::default()
                },
            ],
        );
        ep.method = "DELETE".into();
        let out = judged(ep);
        assert_eq!(out[0].impact, Impact::Record);
        assert_eq!(out[1].impact, Impact::Unknown);
        // A receiver's ledger row is money; the same row from a client is a record.
        let booked = Effect {
            kind: EffectKind::DbCreate,
            target: Some("Transaction".into()),
            ..Effect::default()
        };
        let signature = Effect {
            kind: EffectKind::WebhookReceiver,
            ..Effect::default()
        };
        let out = judged(endpoint("hook", "/hooks", vec![signature, booked.clone()]));
        assert_eq!(out[1].impact, Impact::Money);
        let out = judged(endpoint("create", "/transactions", vec![booked]));
        assert_eq!(out[0].impact, Impact::Record);
    }

    #[test]
    fn a_sign_in_issues_the_callers_session() {
        let token = |t: &str| Effect {
            kind: EffectKind::DbCreate,
            target: Some(t.into()),
            ..Effect::default()
        };
        for (handler, path) in [
            ("login", "/api/v1/auth/login"),
            ("refresh", "/api/v1/auth/refresh"),
            ("issue", "/oauth/token"),
            ("AuthController.signIn", "/users"),
            ("beginAuthentication", "/auth/passkey/options"),
        ] {
            let out = judged(endpoint(handler, path, vec![token("iam.token")]));
            assert_eq!(out[0].impact, Impact::Bookkeeping, "{handler} {path}");
        }
        // The same table written by another endpoint is a record (an API token); so is a
        // record a sign-in writes that is no session of the caller's.
        let out = judged(endpoint(
            "createServiceToken",
            "/service_token",
            vec![token("iam.token")],
        ));
        assert_eq!(out[0].impact, Impact::Record);
        let out = judged(endpoint(
            "refresh",
            "/feeds/{id}/refresh",
            vec![token("token")],
        ));
        assert_eq!(out[0].impact, Impact::Record);
        let out = judged(endpoint(
            "login",
            "/auth/login",
            vec![token("organization")],
        ));
        assert_eq!(out[0].impact, Impact::Record);
    }

    #[test]
    fn bookkeeping_models_urls_and_provider_keys() {
        let audit = Effect {
            kind: EffectKind::DbCreate,
            target: Some("auditLog".into()),
            ..Effect::default()
        };
        let verify = Effect {
            kind: EffectKind::ExternalCall,
            url: Some("https://hcaptcha.com/siteverify".into()),
            ..Effect::default()
        };
        let keyed = Effect {
            kind: EffectKind::Payment,
            downstream_key: Some(DownstreamKey::DomainId),
            ..Effect::default()
        };
        let out = judged(endpoint("update", "/things", vec![audit, verify, keyed]));
        assert_eq!(out[0].impact, Impact::Bookkeeping);
        assert_eq!(out[1].impact, Impact::Read);
        assert!(!out[1].repeats_on_retry());
        assert_eq!(out[2].impact, Impact::Money);
        assert!(!out[2].repeats_on_retry());
    }
}
