//! `check --probe-results probe.json`: what a running server did, fed back into the audit. An
//! endpoint the probe exercised has its findings confirmed; a failed check raises (or confirms)
//! the finding of the rule it tests, with the responses as evidence.

use super::output::{CheckKind, CheckResult, Outcome, ProbeEvidence, ProbeReport};
use crate::facts::Endpoint;
use crate::facts::key::MissingKey;
use crate::report::{EndpointReport, Report};
use crate::rules::{self, Confidence, Finding};

/// The rule a check's failure is evidence for, with the change and the impact to report.
fn rule_of(
    check: &CheckResult,
    ep: &EndpointReport,
) -> Option<(&'static str, &'static str, &'static str)> {
    let last = check.responses.last();
    Some(match (check.check, check.outcome) {
        (CheckKind::Concurrent, Outcome::Failed) => (
            "RS004",
            "Claim the key atomically before the handler runs (a unique insert, `INSERT … ON CONFLICT DO NOTHING`, Redis `SET NX`), and answer a duplicate in flight 409 with `Retry-After`.",
            "Two concurrent retries with one key both run the operation.",
        ),
        (CheckKind::Replay, Outcome::Failed) => (
            "RS015",
            "Store the response status and body with the key when the request completes, and return them verbatim to a retry with the same key.",
            "A client whose first answer was lost never gets it: its retry is refused or runs again.",
        ),
        (CheckKind::Mismatch, Outcome::Failed) => (
            "RS009",
            "Store a request fingerprint (SHA-256 of the canonical body) with the key, compare it on every retry, and answer a different body 422.",
            "A key reused with a different request gets the first request's answer (or runs), so the client's mistake goes unnoticed.",
        ),
        (CheckKind::Mismatch, Outcome::Passed) if check.non_standard => (
            "RS018",
            "Answer a key reused with a different body 422 Unprocessable Content, naming the mismatch.",
            "Clients cannot tell a reused key (a client bug) from an ordinary error.",
        ),
        (CheckKind::MissingKey, Outcome::Failed) => {
            let generated = matches!(
                ep.key_store.as_ref().map(|k| &k.missing_key),
                Some(MissingKey::Generated { .. })
            );
            if generated {
                (
                    "RS008",
                    "Answer a request without the key 400 instead of making up a key for it.",
                    "A client that forgets the key is never protected, and nothing tells it.",
                )
            } else {
                (
                    "RS011",
                    "Answer a request without the key 400 on this endpoint instead of running it.",
                    "A client that forgets the key runs the operation unprotected on every retry.",
                )
            }
        }
        (CheckKind::DuplicateCreate, Outcome::Failed) => {
            let server_error = last.is_some_and(|r| r.status >= 500 || r.error.is_some());
            if server_error {
                (
                    "RS012",
                    "Catch the unique violation on this create and answer 409 or the existing record.",
                    "A retry of a create that succeeded gets a 500, and the client cannot tell it succeeded.",
                )
            } else {
                (
                    "RS003",
                    "The unique constraint the audit expected does not stop the duplicate: add it on the request's natural key, or make the create an upsert.",
                    "A retry creates the record a second time.",
                )
            }
        }
        _ => return None,
    })
}

/// Applies the probe's results to the report. Returns notes for stderr (results for endpoints
/// the audit does not have).
pub fn apply(report: &mut Report, probe: &ProbeReport) -> Vec<String> {
    let mut notes = Vec::new();
    for ep in &probe.endpoints {
        let Some(audited) = report.endpoints.iter().find(|e| e.label() == ep.endpoint) else {
            if ep.exercised() {
                notes.push(format!(
                    "probe results for `{}` match no endpoint of this audit; they are left out",
                    ep.endpoint
                ));
            }
            continue;
        };
        let route = crate::facts::Location::new(audited.file.clone(), audited.line);
        let facts = Endpoint {
            side_effects: audited.side_effects.clone(),
            ..Endpoint::default()
        };
        let mut raised = Vec::new();
        for c in &ep.checks {
            let Some((id, change, impact)) = rule_of(c, audited) else {
                continue;
            };
            raised.push((id, change, impact, c));
        }
        if ep.exercised() {
            for f in report
                .findings
                .iter_mut()
                .filter(|f| f.endpoint == ep.endpoint || f.also_endpoints.contains(&ep.endpoint))
            {
                f.confidence = Confidence::Confirmed;
            }
        }
        for (id, change, impact, c) in raised {
            let evidence = ProbeEvidence {
                base_url: probe.base_url.clone(),
                check: c.check,
                outcome: c.outcome,
                detail: c.detail.clone(),
                responses: c.responses.clone(),
            };
            let said = format!("A probe of {} shows it: {}.", probe.base_url, c.detail);
            if let Some(f) = report.findings.iter_mut().find(|f| {
                f.rule == id
                    && (f.endpoint == ep.endpoint || f.also_endpoints.contains(&ep.endpoint))
            }) {
                f.confidence = Confidence::Confirmed;
                f.message = format!("{} {said}", f.message);
                f.probe = Some(evidence);
                continue;
            }
            let Some(rule) = rules::find(id) else {
                continue;
            };
            let fingerprint = rules::fingerprint(&[id, &ep.endpoint, &route.file, "probe"]);
            report.findings.push(Finding {
                rule: id.into(),
                name: rule.meta.name.into(),
                section: rule.meta.section.title().into(),
                severity: rules::capped(&facts, id, rule.meta.severity, Confidence::Confirmed),
                confidence: Confidence::Confirmed,
                endpoint: ep.endpoint.clone(),
                file: route.file.clone(),
                line: route.line,
                message: format!("The `{}` probe check failed. {said}", c.check.as_str()),
                change: change.into(),
                impact: impact.into(),
                cause: fingerprint.clone(),
                cause_at: None,
                anchors: Vec::new(),
                fingerprint,
                suppressed: false,
                suppression_reason: None,
                baselined: false,
                also_endpoints: Vec::new(),
                also_routes: Vec::new(),
                route: route.clone(),
                probe: Some(evidence),
            });
        }
    }
    report.refresh();
    notes
}

/// Reads a probe's JSON results.
pub fn load(path: &std::path::Path) -> Result<ProbeReport, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let report: ProbeReport = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not the JSON of `retrysafe probe --format json`: {e}",
            path.display()
        )
    })?;
    if report.schema_version != super::output::SCHEMA_VERSION {
        return Err(format!(
            "{} has schema_version {}; this retrysafe reads {}",
            path.display(),
            report.schema_version,
            super::output::SCHEMA_VERSION
        ));
    }
    Ok(report)
}
