//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.
//!
//! Locations are relative to the scanned root under the `%SRCROOT%` base id. Each result carries
//! the finding's fingerprint as a partial fingerprint (so alerts survive line shifts) and a
//! `security-severity` (critical 9.5, high 7.5, medium 5.0, low 2.0) so GitHub ranks criticals
//! first. Suppressed findings are results with an in-source suppression; baselined ones have
//! `baselineState: unchanged`, the others `new`, when a baseline was given.

use super::Report;
use crate::facts::Diagnostic;
use crate::rules::{Finding, RuleMeta, Severity, registry};
use serde::Serialize;
use std::collections::BTreeMap;

pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
pub const SRCROOT: &str = "%SRCROOT%";
/// The key of the finding's fingerprint in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "retrysafe/v1";

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    invocations: Vec<Invocation>,
    results: Vec<SarifResult<'a>>,
    column_kind: &'static str,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    rules: Vec<ReportingDescriptor>,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct TextMarkdown {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportingDescriptor {
    id: &'static str,
    name: &'static str,
    short_description: Text,
    full_description: Text,
    help: TextMarkdown,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: Vec<&'static str>,
    precision: &'static str,
    #[serde(rename = "security-severity", skip_serializing_if = "Option::is_none")]
    security_severity: Option<String>,
    /// retrysafe's own severity (critical … inverse).
    severity: &'static str,
    section: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_execution_notifications: Vec<Notification>,
}

#[derive(Serialize)]
struct Notification {
    level: &'static str,
    message: Text,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<Location>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, &'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_state: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suppressions: Vec<Suppression>,
    properties: ResultProperties<'a>,
}

#[derive(Serialize)]
struct Suppression {
    kind: &'static str,
    justification: String,
}

#[derive(Serialize)]
struct ResultProperties<'a> {
    #[serde(rename = "security-severity", skip_serializing_if = "Option::is_none")]
    security_severity: Option<String>,
    severity: &'static str,
    confidence: &'static str,
    endpoint: &'a str,
    change: &'a str,
    impact: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    uri_base_id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
}

/// SARIF `level`: error for critical and high, warning for medium, note below.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Inverse => "note",
        Severity::None => "none",
    }
}

/// GitHub's `security-severity` (0.1–10): critical ≥ 9.0, high 7.0–8.9, medium 4.0–6.9, low
/// 0.1–3.9. Over-built (inverse) findings are not security issues and carry none.
pub fn security_severity(s: Severity) -> Option<String> {
    match s {
        Severity::Critical => Some("9.5".into()),
        Severity::High => Some("7.5".into()),
        Severity::Medium => Some("5.0".into()),
        Severity::Low => Some("2.0".into()),
        Severity::Inverse | Severity::None => None,
    }
}

/// The "What it does" paragraph of a rule's doc, on one line.
fn what_it_does(doc: &str) -> String {
    let body = doc
        .split("## What it does")
        .nth(1)
        .unwrap_or(doc)
        .split("\n## ")
        .next()
        .unwrap_or("");
    body.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn descriptor(m: &RuleMeta) -> ReportingDescriptor {
    ReportingDescriptor {
        id: m.id,
        name: m.name,
        short_description: Text {
            text: m.summary.to_string(),
        },
        full_description: Text {
            text: what_it_does(m.doc),
        },
        help: TextMarkdown {
            text: m.doc.to_string(),
            markdown: m.doc.to_string(),
        },
        default_configuration: Configuration {
            level: level(m.severity),
        },
        properties: RuleProperties {
            tags: vec!["security", "reliability", "idempotency"],
            precision: "medium",
            security_severity: security_severity(m.severity),
            severity: m.severity.as_str(),
            section: m.section.title(),
        },
    }
}

fn location(file: &str, line: u32, message: Option<String>, id: Option<usize>) -> Location {
    Location {
        id,
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation {
                uri: file.to_string(),
                uri_base_id: SRCROOT,
            },
            region: (line > 0).then_some(Region { start_line: line }),
        },
        message: message.map(|text| Text { text }),
    }
}

/// The message, with each side effect it names made a link to its related location
/// (`[`stripe.charges.create` (src/pay.ts:9)](1)`), SARIF's markup for "see there".
fn linked_message(report: &Report, f: &Finding) -> String {
    let mut text = format!("{} Change: {}", f.message, f.change)
        .replace('[', "\\[")
        .replace(']', "\\]");
    if let Some(ep) = endpoint_of(report, f) {
        for (i, e) in super::diagnostics::effects_named_in(ep, &f.message)
            .into_iter()
            .enumerate()
        {
            let named = format!("`{}` ({})", e.callee, e.location)
                .replace('[', "\\[")
                .replace(']', "\\]");
            if let Some(at) = text.find(&named) {
                text.replace_range(at..at + named.len(), &format!("[{named}]({})", i + 1));
            }
        }
    }
    text
}

fn endpoint_of<'a>(report: &'a Report, f: &Finding) -> Option<&'a super::EndpointReport> {
    report
        .endpoints
        .iter()
        .find(|e| e.label() == f.endpoint && e.file == f.route.file && e.line == f.route.line)
}

fn related(report: &Report, f: &Finding, prefix: &str) -> Vec<Location> {
    let Some(ep) = report
        .endpoints
        .iter()
        .find(|e| e.label() == f.endpoint && e.file == f.route.file && e.line == f.route.line)
    else {
        return Vec::new();
    };
    super::diagnostics::effects_named_in(ep, &f.message)
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            location(
                &format!("{prefix}{}", e.location.file),
                e.location.line,
                Some(format!("{}: `{}`", e.kind.as_str(), e.callee)),
                Some(i + 1),
            )
        })
        .collect()
}

fn notification(d: &Diagnostic, prefix: &str) -> Notification {
    Notification {
        level: "warning",
        message: Text {
            text: d.message.clone(),
        },
        locations: if d.file.is_empty() {
            Vec::new()
        } else {
            vec![location(&format!("{prefix}{}", d.file), d.line, None, None)]
        },
    }
}

/// `prefix` is put before every path (`--path-base`); without it paths are relative to the
/// scanned root (`%SRCROOT%`).
pub fn render(report: &Report, prefix: &str) -> String {
    let rules = registry();
    let index: BTreeMap<&str, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.meta.id, i))
        .collect();
    let any_baselined = report.summary.baselined > 0;
    let results = report
        .findings
        .iter()
        .filter(|f| index.contains_key(f.rule.as_str()))
        .map(|f| SarifResult {
            rule_id: &f.rule,
            rule_index: index[f.rule.as_str()],
            level: level(f.severity),
            message: Text {
                text: linked_message(report, f),
            },
            locations: vec![location(
                &format!("{prefix}{}", f.file),
                f.line,
                Some(format!("`{}` is registered here", f.endpoint)),
                None,
            )],
            related_locations: related(report, f, prefix),
            partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY, f.fingerprint.as_str())]),
            baseline_state: any_baselined.then_some(if f.baselined { "unchanged" } else { "new" }),
            suppressions: f
                .suppressed
                .then(|| Suppression {
                    kind: "inSource",
                    justification: f.suppression_reason.clone().unwrap_or_default(),
                })
                .into_iter()
                .collect(),
            properties: ResultProperties {
                security_severity: security_severity(f.severity),
                severity: f.severity.as_str(),
                confidence: f.confidence.as_str(),
                endpoint: &f.endpoint,
                change: &f.change,
                impact: &f.impact,
            },
        })
        .collect();
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "retrysafe",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    rules: rules.iter().map(|r| descriptor(&r.meta)).collect(),
                },
            },
            invocations: vec![Invocation {
                execution_successful: true,
                tool_execution_notifications: report
                    .diagnostics
                    .iter()
                    .map(|d| notification(d, prefix))
                    .collect(),
            }],
            results,
            column_kind: "utf16CodeUnits",
        }],
    };
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}
