//! `--format gitlab`: a GitLab Code Quality report (the `codequality` artifact), one issue per
//! finding shown, at the flaw's file and line.

use super::Report;
use crate::rules::Severity;
use serde::Serialize;

#[derive(Serialize)]
struct Issue<'a> {
    description: String,
    check_name: &'a str,
    fingerprint: &'a str,
    severity: &'static str,
    location: Location,
    categories: [&'static str; 1],
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: u32,
}

/// Code Quality's levels: info, minor, major, critical, blocker.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "critical",
        Severity::High => "major",
        Severity::Medium => "minor",
        Severity::Low | Severity::Inverse | Severity::None => "info",
    }
}

/// `prefix` makes the report's root-relative paths relative to the repository root.
pub fn render(report: &Report, prefix: &str) -> String {
    let issues: Vec<Issue> = report
        .shown_findings()
        .map(|f| Issue {
            description: format!("{} {}: {} {}", f.rule, f.endpoint, f.message, f.change),
            check_name: &f.name,
            fingerprint: &f.fingerprint,
            severity: severity(f.severity),
            location: Location {
                path: format!("{prefix}{}", f.file),
                lines: Lines { begin: f.line },
            },
            categories: ["Bug Risk"],
            kind: "issue",
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&issues).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}
