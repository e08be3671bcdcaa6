//! The probe's results: a public JSON contract (`schema_version` 1, `docs/probe.schema.json`)
//! that `check --probe-results` reads back, and the table and Markdown renderings of it.

use serde::{Deserialize, Serialize};
use std::fmt::Write;

pub use crate::facts::probe::{CheckKind, Outcome, ProbeEvidence, ProbeResponse};

pub const SCHEMA_VERSION: u32 = 1;

/// The result of one check on one endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckResult {
    pub check: CheckKind,
    pub outcome: Outcome,
    /// Why it passed, failed or was skipped, in a sentence.
    pub detail: String,
    /// Passed, but not with the status the draft standard names (409/417/400 instead of 422 for a
    /// mismatch, another 4xx than 400 for a missing key).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub non_standard: bool,
    /// The requests and their answers, side by side.
    #[serde(default)]
    pub responses: Vec<ProbeResponse>,
}

/// What was sent to one endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointProbe {
    /// `METHOD path`, as the audit names it.
    pub endpoint: String,
    /// The URL the requests went to.
    pub url: String,
    /// Where the request body came from (`--body-file orders.json`, an OpenAPI example, a zod
    /// schema); empty when the endpoint was skipped.
    pub body_source: String,
    pub checks: Vec<CheckResult>,
}

impl EndpointProbe {
    pub fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.outcome == Outcome::Failed)
    }
    /// At least one check ran against the server.
    pub fn exercised(&self) -> bool {
        self.checks.iter().any(|c| c.outcome != Outcome::Skipped)
    }
}

/// `retrysafe probe --format json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeReport {
    pub schema_version: u32,
    pub base_url: String,
    pub endpoints: Vec<EndpointProbe>,
}

impl ProbeReport {
    pub fn count(&self, outcome: Outcome) -> usize {
        self.endpoints
            .iter()
            .flat_map(|e| &e.checks)
            .filter(|c| c.outcome == outcome)
            .count()
    }
    pub fn failed(&self) -> bool {
        self.endpoints.iter().any(EndpointProbe::failed)
    }
}

pub fn json(report: &ProbeReport) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("the probe report serializes");
    s.push('\n');
    s
}

/// The JSON Schema of `probe --format json` (shipped as docs/probe.schema.json).
pub fn schema() -> String {
    let schema = schemars::schema_for!(ProbeReport);
    let mut s = serde_json::to_string_pretty(&schema).expect("the schema serializes");
    s.push('\n');
    s
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

fn answers(c: &CheckResult) -> String {
    c.responses
        .iter()
        .map(|r| match &r.error {
            Some(e) => format!("{}: {}", r.request, one_line(e, 60)),
            None => format!("{}: {} {}", r.request, r.status, one_line(&r.body, 60)),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn table(report: &ProbeReport) -> String {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
        .force_no_tty();
    if t.width().is_none() {
        t.set_width(140);
    }
    t.set_header(vec!["Endpoint", "Check", "Outcome", "Detail", "Responses"]);
    for e in &report.endpoints {
        for c in &e.checks {
            let outcome = if c.non_standard {
                format!("{} (non-standard)", c.outcome.as_str())
            } else {
                c.outcome.as_str().to_string()
            };
            t.add_row(vec![
                e.endpoint.clone(),
                c.check.as_str().to_string(),
                outcome,
                c.detail.clone(),
                answers(c),
            ]);
        }
    }
    let mut out = format!("Probe of {}\n{t}\n", report.base_url);
    let _ = writeln!(
        out,
        "{} endpoints; checks: {} passed, {} failed, {} skipped",
        report.endpoints.len(),
        report.count(Outcome::Passed),
        report.count(Outcome::Failed),
        report.count(Outcome::Skipped)
    );
    out
}

pub fn markdown(report: &ProbeReport) -> String {
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = format!("# Idempotency probe of `{}`\n\n", report.base_url);
    let _ = writeln!(
        out,
        "{} endpoints; checks: {} passed, {} failed, {} skipped.\n",
        report.endpoints.len(),
        report.count(Outcome::Passed),
        report.count(Outcome::Failed),
        report.count(Outcome::Skipped)
    );
    for e in &report.endpoints {
        let _ = writeln!(out, "## `{}`\n", e.endpoint);
        if !e.body_source.is_empty() {
            let _ = writeln!(out, "URL `{}`; body from {}.\n", e.url, e.body_source);
        }
        out.push_str("| Check | Outcome | Detail |\n|---|---|---|\n");
        for c in &e.checks {
            let _ = writeln!(
                out,
                "| {} | {}{} | {} |",
                c.check.as_str(),
                c.outcome.as_str(),
                if c.non_standard {
                    " (non-standard)"
                } else {
                    ""
                },
                cell(&c.detail)
            );
        }
        for c in e.checks.iter().filter(|c| c.outcome == Outcome::Failed) {
            let _ = writeln!(out, "\n### {} failed: the responses\n", c.check.as_str());
            out.push_str("| Request | Key | Status | Body |\n|---|---|---|---|\n");
            for r in &c.responses {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | `{}` |",
                    r.request,
                    r.key
                        .as_deref()
                        .map(|k| format!("`{k}`"))
                        .unwrap_or_else(|| "none".into()),
                    r.status,
                    cell(&one_line(r.error.as_deref().unwrap_or(&r.body), 200))
                );
            }
        }
        out.push('\n');
    }
    out
}
