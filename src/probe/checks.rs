//! The draft standard's checks (draft-ietf-httpapi-idempotency-key-header), one function each,
//! judged from the responses alone.

use super::http::{Client, Request, fresh_key};
use super::output::{CheckKind, CheckResult, Outcome, ProbeResponse};
use super::plan::Plan;

fn success(r: &ProbeResponse) -> bool {
    r.error.is_none() && (200..300).contains(&r.status)
}

fn same(a: &ProbeResponse, b: &ProbeResponse) -> bool {
    a.status == b.status && a.body == b.body
}

fn result(
    check: CheckKind,
    outcome: Outcome,
    detail: String,
    responses: Vec<ProbeResponse>,
) -> CheckResult {
    CheckResult {
        check,
        outcome,
        detail,
        non_standard: false,
        responses,
    }
}

pub fn skipped(check: CheckKind, why: impl Into<String>) -> CheckResult {
    result(check, Outcome::Skipped, why.into(), Vec::new())
}

/// The first request of a check was not accepted: nothing can be judged from the rest.
fn not_accepted(check: CheckKind, r: &ProbeResponse, responses: Vec<ProbeResponse>) -> CheckResult {
    let why = match &r.error {
        Some(e) => format!("the {} request got no answer: {e}", r.request),
        None => format!(
            "the {} request was answered {} (not 2xx), so there is nothing to repeat; give the request the server needs with --header/--body-file",
            r.request, r.status
        ),
    };
    result(check, Outcome::Skipped, why, responses)
}

/// Runs every check on one planned endpoint.
pub fn run(plan: &Plan, client: &Client, concurrency: usize, nonce: &str) -> Vec<CheckResult> {
    let unique = |n: usize| format!("{nonce}{n}");
    let keyed = |c: CheckKind, f: &dyn Fn() -> CheckResult| {
        if plan.keyed {
            f()
        } else {
            skipped(
                c,
                "the audit found no idempotency-key mechanism on this endpoint",
            )
        }
    };
    vec![
        keyed(CheckKind::Concurrent, &|| {
            concurrent(plan, client, concurrency, &unique(1))
        }),
        keyed(CheckKind::Replay, &|| replay(plan, client, &unique(2))),
        keyed(CheckKind::Mismatch, &|| mismatch(plan, client, &unique(3))),
        match &plan.requires_key {
            Some(_) if plan.keyed => missing_key(plan, client, &unique(4)),
            _ if !plan.keyed => skipped(
                CheckKind::MissingKey,
                "the audit found no idempotency-key mechanism on this endpoint",
            ),
            _ => skipped(
                CheckKind::MissingKey,
                "neither the audit nor the API documentation shows that this endpoint requires a key",
            ),
        },
        match &plan.constraint {
            Some(_) => duplicate_create(plan, client, &unique(5)),
            None => skipped(
                CheckKind::DuplicateCreate,
                "the audit found no unique constraint protecting this endpoint's create",
            ),
        },
    ]
}

fn request(plan: &Plan, label: &str, key: Option<&str>, body: &str) -> Request {
    Request {
        label: label.to_string(),
        method: plan.method.clone(),
        url: plan.url.clone(),
        key: key.map(str::to_string),
        key_header: plan.key_header.clone(),
        body: body.to_string(),
    }
}

/// (a) Concurrent requests with one fresh key and the same body: one is processed, the others
/// get its status and body, or 409 while it is in flight.
pub fn concurrent(plan: &Plan, client: &Client, n: usize, unique: &str) -> CheckResult {
    let check = CheckKind::Concurrent;
    let key = fresh_key();
    let body = plan.body.text(unique);
    let requests: Vec<Request> = (1..=n)
        .map(|i| request(plan, &format!("concurrent {i} of {n}"), Some(&key), &body))
        .collect();
    let responses = client.send_together(&requests);
    let ok: Vec<&ProbeResponse> = responses.iter().filter(|r| success(r)).collect();
    let Some(first) = ok.first() else {
        return not_accepted(check, &responses[0], responses.clone());
    };
    if let Some(other) = ok.iter().find(|r| !same(first, r)) {
        let detail = format!(
            "{} of {n} concurrent requests with one key were processed: `{}` answered {} and `{}` answered {} with a different body, so the key was not claimed atomically",
            ok.len(),
            first.request,
            first.status,
            other.request,
            other.status
        );
        return result(check, Outcome::Failed, detail, responses);
    }
    let bad: Vec<&ProbeResponse> = responses
        .iter()
        .filter(|r| !success(r) && r.status != 409)
        .collect();
    if let Some(b) = bad.first() {
        let detail = format!(
            "a concurrent duplicate was answered {} instead of the first response or 409",
            match &b.error {
                Some(e) => format!("with an error ({e})"),
                None => b.status.to_string(),
            }
        );
        return result(check, Outcome::Failed, detail, responses);
    }
    let conflicts = responses.iter().filter(|r| r.status == 409).count();
    let detail = if conflicts > 0 {
        format!("one request was processed; {conflicts} duplicate(s) in flight got 409")
    } else {
        format!(
            "all {n} requests got the same {} and body: the duplicates got the first response (a second run would show in a different body, such as a new id)",
            first.status
        )
    };
    result(check, Outcome::Passed, detail, responses)
}

/// (b) A sequential retry with the same key: the stored status and body, verbatim.
pub fn replay(plan: &Plan, client: &Client, unique: &str) -> CheckResult {
    let check = CheckKind::Replay;
    let key = fresh_key();
    let body = plan.body.text(unique);
    let first = client.send(&request(plan, "first", Some(&key), &body));
    if !success(&first) {
        return not_accepted(check, &first, vec![first.clone()]);
    }
    let second = client.send(&request(plan, "retry", Some(&key), &body));
    let responses = vec![first.clone(), second.clone()];
    if same(&first, &second) {
        return result(
            check,
            Outcome::Passed,
            format!(
                "the retry got the stored {} and body, verbatim",
                first.status
            ),
            responses,
        );
    }
    let detail = if second.status == 409 {
        "the retry of a completed request was answered 409: the response is not stored, so a client whose first answer was lost never gets it".to_string()
    } else if success(&second) {
        format!(
            "the retry was answered {} with a different body than the first {}: the request ran again or the stored response is not replayed verbatim",
            second.status, first.status
        )
    } else {
        format!(
            "the retry was answered {} instead of the stored {}",
            second.status, first.status
        )
    };
    result(check, Outcome::Failed, detail, responses)
}

/// (c) The same key with a different body: 422 (409/417/400 reject it, but not as the draft
/// standard says).
pub fn mismatch(plan: &Plan, client: &Client, unique: &str) -> CheckResult {
    let check = CheckKind::Mismatch;
    let key = fresh_key();
    let body = plan.body.text(unique);
    let first = client.send(&request(plan, "first", Some(&key), &body));
    if !success(&first) {
        return not_accepted(check, &first, vec![first.clone()]);
    }
    let other = plan.body.different(unique);
    let second = client.send(&request(plan, "different body", Some(&key), &other));
    let responses = vec![first.clone(), second.clone()];
    match second.status {
        422 => result(
            check,
            Outcome::Passed,
            "the same key with a different body was answered 422".into(),
            responses,
        ),
        409 | 417 | 400 => {
            let mut r = result(
                check,
                Outcome::Passed,
                format!(
                    "rejected, non-standard: the same key with a different body was answered {} (the draft standard says 422)",
                    second.status
                ),
                responses,
            );
            r.non_standard = true;
            r
        }
        s if success(&second) && same(&first, &second) => result(
            check,
            Outcome::Failed,
            format!(
                "the same key with a different body got the first request's {s} and body back: no request fingerprint is compared, so a client's reused key silently gets the wrong answer"
            ),
            responses,
        ),
        s if success(&second) => result(
            check,
            Outcome::Failed,
            format!(
                "the same key with a different body was processed ({s}) instead of refused with 422"
            ),
            responses,
        ),
        s => result(
            check,
            Outcome::Failed,
            format!("the same key with a different body was answered {s} instead of 422"),
            responses,
        ),
    }
}

/// (d) No key on an endpoint that requires one: 400.
pub fn missing_key(plan: &Plan, client: &Client, unique: &str) -> CheckResult {
    let check = CheckKind::MissingKey;
    let body = plan.body.text(unique);
    let r = client.send(&request(plan, "no key", None, &body));
    let responses = vec![r.clone()];
    if let Some(e) = &r.error {
        return result(
            check,
            Outcome::Skipped,
            format!("no answer: {e}"),
            responses,
        );
    }
    match r.status {
        400 => result(
            check,
            Outcome::Passed,
            "a request without a key was answered 400".into(),
            responses,
        ),
        s @ 401..=499 => {
            let mut out = result(
                check,
                Outcome::Passed,
                format!(
                    "rejected, non-standard: a request without a key was answered {s} (the draft standard says 400)"
                ),
                responses,
            );
            out.non_standard = true;
            out
        }
        s => result(
            check,
            Outcome::Failed,
            format!(
                "a request without a key was answered {s}: the endpoint {} without the key it requires",
                if (200..300).contains(&s) {
                    "runs"
                } else {
                    "fails"
                }
            ),
            responses,
        ),
    }
}

/// `"id"` of a JSON object body, for telling "the existing record" from a new one.
fn record_id(body: &str) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    v.get("id").or_else(|| v.get("_id")).cloned()
}

/// (e) The same body twice on an endpoint a unique constraint protects: the second answers with
/// the existing record or 409, never a 500. Each request has its own key, so only the
/// constraint can stop the duplicate.
pub fn duplicate_create(plan: &Plan, client: &Client, unique: &str) -> CheckResult {
    let check = CheckKind::DuplicateCreate;
    let body = plan.body.text(unique);
    let key = |k: &mut Option<String>| {
        if plan.keyed {
            *k = Some(fresh_key());
        }
        k.clone()
    };
    let mut k = None;
    let first = client.send(&request(plan, "first", key(&mut k).as_deref(), &body));
    if !success(&first) {
        return not_accepted(check, &first, vec![first.clone()]);
    }
    let second = client.send(&request(
        plan,
        "same body again",
        key(&mut k).as_deref(),
        &body,
    ));
    let responses = vec![first.clone(), second.clone()];
    let constraint = plan
        .constraint
        .as_deref()
        .unwrap_or("the unique constraint");
    match second.status {
        409 => result(
            check,
            Outcome::Passed,
            format!("the duplicate was answered 409 ({constraint})"),
            responses,
        ),
        s if success(&second) => {
            let (a, b) = (record_id(&first.body), record_id(&second.body));
            if same(&first, &second) || (a.is_some() && a == b) {
                result(
                    check,
                    Outcome::Passed,
                    format!("the duplicate got the existing record back ({s})"),
                    responses,
                )
            } else {
                result(
                    check,
                    Outcome::Failed,
                    format!(
                        "the duplicate created a second record ({s}, a different body): {constraint} did not stop it"
                    ),
                    responses,
                )
            }
        }
        s if s >= 500 || second.error.is_some() => result(
            check,
            Outcome::Failed,
            format!(
                "the duplicate was answered {}: the unique violation ({constraint}) is not caught, so a retry gets a server error instead of the existing record or 409",
                if second.error.is_some() {
                    "with an error".to_string()
                } else {
                    s.to_string()
                }
            ),
            responses,
        ),
        s => {
            let mut out = result(
                check,
                Outcome::Passed,
                format!(
                    "rejected, non-standard: the duplicate was answered {s} (409 or the existing record is expected)"
                ),
                responses,
            );
            out.non_standard = true;
            out
        }
    }
}
