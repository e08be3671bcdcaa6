//! `--format github`: GitHub Actions workflow commands, one annotation per cause at its file and
//! line (criticals and highs as errors, mediums and lows as warnings, over-built as notices), then
//! a notice with the summary. GitHub shows them on the pull request's diff without code scanning.

use super::{Report, cause_endpoints, listed};
use crate::rules::Severity;
use std::fmt::Write;

/// Escapes a workflow command's message.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value (`file`, `title`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn command(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium | Severity::Low => "warning",
        Severity::Inverse | Severity::None => "notice",
    }
}

/// `prefix` makes the report's root-relative paths relative to the repository root.
pub fn render(report: &Report, prefix: &str) -> String {
    let mut out = String::new();
    for group in report.causes() {
        let f = group[0];
        let endpoints = cause_endpoints(&group);
        let title = format!("{} {} ({})", f.rule, f.name, f.severity.as_str());
        let (file, line) = super::cause_location(&group);
        let mut message = format!("{}\n{}", super::cause_message(&group), f.change);
        if endpoints.len() > 1 {
            let _ = write!(
                message,
                "\nAffects {} endpoints: {}",
                endpoints.len(),
                listed(&endpoints, Some(20))
            );
        } else {
            let _ = write!(message, "\nEndpoint: {}", f.endpoint);
        }
        let _ = writeln!(
            out,
            "::{} file={},line={},title={}::{}",
            command(f.severity),
            escape_property(&format!("{prefix}{file}")),
            line,
            escape_property(&title),
            escape_data(&message)
        );
    }
    let line = super::table::summary_line(report);
    let _ = writeln!(
        out,
        "::notice title=retrysafe::{}",
        escape_data(line.trim_end())
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_workflow_command_rules() {
        assert_eq!(escape_data("100% a\r\nb"), "100%25 a%0D%0Ab");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
