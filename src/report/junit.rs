//! `--format junit`: JUnit XML for CI systems that show test reports (Jenkins, Azure DevOps,
//! GitLab's test report, CircleCI). One test case per mutation endpoint, failed by each finding
//! shown on it; findings on no endpoint of this repository (client code) get their own cases.

use super::Report;
use std::fmt::Write;

/// Escapes text and attribute values; drops characters XML 1.0 cannot hold.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

/// A test case: its name (the endpoint), class name (its file), failures as (rule, text).
type Case = (String, String, Vec<(String, String)>);

/// `prefix` makes the report's root-relative paths relative to the repository root.
pub fn render(report: &Report, prefix: &str) -> String {
    let mut cases: Vec<Case> = report
        .endpoints
        .iter()
        .map(|e| (e.label(), format!("{prefix}{}", e.file), Vec::new()))
        .collect();
    for f in report.shown_findings() {
        let text = format!(
            "{} {} ({}): {}\n{}\nat {prefix}{}:{}",
            f.rule,
            f.name,
            f.severity.as_str(),
            f.message,
            f.change,
            f.file,
            f.line
        );
        for label in std::iter::once(&f.endpoint).chain(&f.also_endpoints) {
            match cases.iter_mut().find(|(name, _, _)| name == label) {
                Some(case) => case.2.push((f.rule.clone(), text.clone())),
                None => cases.push((
                    label.clone(),
                    format!("{prefix}{}", f.route.file),
                    vec![(f.rule.clone(), text.clone())],
                )),
            }
        }
    }
    let failures = cases.iter().filter(|c| !c.2.is_empty()).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"retrysafe\" tests=\"{}\" failures=\"{failures}\">",
        cases.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"retrysafe idempotency audit\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">",
        cases.len()
    );
    for (name, class, fails) in &cases {
        if fails.is_empty() {
            let _ = writeln!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\"/>",
                escape(name),
                escape(class)
            );
        } else {
            let _ = writeln!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\">",
                escape(name),
                escape(class)
            );
            let rules: Vec<&str> = fails.iter().map(|(r, _)| r.as_str()).collect();
            let body: Vec<&str> = fails.iter().map(|(_, t)| t.as_str()).collect();
            let _ = writeln!(
                out,
                "      <failure message=\"{}\" type=\"retrysafe\">{}</failure>",
                escape(&rules.join(", ")),
                escape(&body.join("\n\n"))
            );
            out.push_str("    </testcase>\n");
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
