//! In-source suppressions: `// retrysafe-ignore RS003: reason` (also `#` and `/* … */`) on a
//! line, or alone on the line above it (other comment lines may sit between), silences those
//! rules there. The line may be the route, the handler, the key middleware or extractor, or the
//! shared place a flaw lives in (the key store, the helper): on a shared place it covers every
//! endpoint the flaw affects. `// retrysafe-ignore-file RS020: reason` anywhere in a file silences
//! the rules for every finding located in it. Rules go by id or name.
//!
//! The reason is required: a suppression without one is reported and silences nothing. A
//! suppression that matches no finding is reported too, so stale ones do not pile up.

use crate::facts::{Diagnostic, Suppression};
use crate::rules::{self, Finding};
use std::collections::BTreeSet;

const MARKER: &str = "retrysafe-ignore";
/// The file-wide form: `retrysafe-ignore-file`.
const FILE_SUFFIX: &str = "-file";

fn is_comment_only(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("//") || t.starts_with('#') || t.starts_with("/*") || t.starts_with('*')
}

/// Parses the part after an opening comment token: `RS001, RS003: reason */`.
fn parse_body(rest: &str) -> Option<(Vec<String>, Option<String>)> {
    let rest = rest.trim_start();
    let (ids, reason) = match rest.find(':') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest.trim_end().trim_end_matches("*/"), None),
    };
    let rules: Vec<String> = ids
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| match rules::find(s) {
            Some(r) => r.meta.id.to_string(),
            None => s.to_ascii_uppercase(),
        })
        .collect();
    if rules.is_empty() {
        return None;
    }
    let reason = reason
        .map(|r| r.trim().trim_end_matches("*/").trim().to_string())
        .filter(|r| !r.is_empty());
    Some((rules, reason))
}

/// Every `retrysafe-ignore` comment in one file.
pub fn scan(file: &str, text: &str) -> Vec<Suppression> {
    if !text.contains(MARKER) {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(at) = l.find(MARKER) else {
            continue;
        };
        let before = l[..at].trim_end();
        let opener = ["//", "#", "/*", "/**", "*"]
            .iter()
            .any(|o| before.ends_with(o));
        if !opener {
            continue;
        }
        let mut body = &l[at + MARKER.len()..];
        let file_wide = body.starts_with(FILE_SUFFIX);
        if file_wide {
            body = &body[FILE_SUFFIX.len()..];
        }
        let Some((rules, reason)) = parse_body(body) else {
            out.push(Suppression {
                file: file.to_string(),
                line: i as u32 + 1,
                target: i as u32 + 1,
                rules: Vec::new(),
                reason: None,
                file_wide,
            });
            continue;
        };
        let target = if is_comment_only(l) {
            let mut j = i + 1;
            while j < lines.len() && is_comment_only(lines[j]) {
                j += 1;
            }
            j
        } else {
            i
        };
        out.push(Suppression {
            file: file.to_string(),
            line: i as u32 + 1,
            target: target as u32 + 1,
            rules,
            reason,
            file_wide,
        });
    }
    out
}

/// Marks the findings the suppressions silence; reports suppressions that are malformed, have no
/// reason, name an unknown rule or match nothing. A rule the configuration turned off (`enabled`
/// false) has no findings to match, and its suppressions are not reported as stale.
pub fn apply(
    findings: &mut [Finding],
    suppressions: &[Suppression],
    enabled: &dyn Fn(&str) -> bool,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let known: BTreeSet<&str> = rules::registry().iter().map(|r| r.meta.id).collect();
    for s in suppressions {
        let diag = |message: String| Diagnostic::new(s.file.clone(), s.line, message);
        if s.rules.is_empty() {
            diagnostics.push(diag(format!(
                "`{MARKER}` names no rule: write `{MARKER} RS001: why this is accepted`"
            )));
            continue;
        }
        let Some(reason) = &s.reason else {
            diagnostics.push(diag(format!(
                "`{MARKER} {}` has no reason, so it suppresses nothing: write `{MARKER} {}: why this is accepted`",
                s.rules.join(", "),
                s.rules.join(", ")
            )));
            continue;
        };
        for rule in &s.rules {
            if !known.contains(rule.as_str()) {
                diagnostics.push(diag(format!(
                    "`{MARKER}` names `{rule}`, which is not a rule (`retrysafe rules` lists them)"
                )));
                continue;
            }
            let mut matched = false;
            let here = |l: &crate::facts::Location| l.file == s.file && l.line == s.target;
            for f in findings.iter_mut() {
                let covered = if s.file_wide {
                    f.file == s.file || f.route.file == s.file
                } else {
                    (f.file == s.file && f.line == s.target)
                        || f.cause_at.as_ref().is_some_and(here)
                        || f.anchors.iter().any(here)
                };
                if covered && f.rule == *rule {
                    f.suppressed = true;
                    f.suppression_reason = Some(reason.clone());
                    matched = true;
                }
            }
            if !matched && enabled(rule) {
                diagnostics.push(diag(if s.file_wide {
                    format!(
                        "`{MARKER}{FILE_SUFFIX} {rule}` matches no {rule} finding in this file: remove it if it is stale"
                    )
                } else {
                    format!(
                        "`{MARKER} {rule}` matches no {rule} finding at line {}: remove it if it is stale",
                        s.target
                    )
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let text = "// retrysafe-ignore RS003: seeded once by ops\nrouter.post('/a', h);\nrouter.post('/b', h); // retrysafe-ignore RS001, RS003: demo\n# retrysafe-ignore RS001\n/* retrysafe-ignore RS001: legacy */\nx\nconst s = 'retrysafe-ignore RS001: not a comment';\n";
        let s = scan("a.ts", text);
        assert_eq!(s.len(), 4, "{s:#?}");
        assert_eq!((s[0].line, s[0].target), (1, 2));
        assert_eq!(s[0].reason.as_deref(), Some("seeded once by ops"));
        assert_eq!((s[1].line, s[1].target), (3, 3));
        assert_eq!(s[1].rules, vec!["RS001", "RS003"]);
        assert_eq!(s[2].reason, None);
        assert_eq!(s[2].target, 6, "skips the comment line below it");
        assert_eq!(s[3].reason.as_deref(), Some("legacy"));
    }

    #[test]
    fn names_and_the_file_wide_form() {
        let s = scan(
            "a.ts",
            "// retrysafe-ignore-file no-idempotency-tests, rs014: covered by e2e suite\nx\n",
        );
        assert_eq!(s.len(), 1);
        assert!(s[0].file_wide);
        assert_eq!(s[0].rules, vec!["RS020", "RS014"]);
    }
}
