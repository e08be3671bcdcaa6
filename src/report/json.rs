//! `--format json`: the public contract of DESIGN.md (schema_version 1).

use super::Report;

pub fn render(report: &Report) -> String {
    let mut s =
        serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// The inventory alone: the same endpoint objects, without findings.
pub fn render_inventory(report: &Report) -> String {
    let v = serde_json::json!({
        "schema_version": report.schema_version,
        "tool": report.tool,
        "root": report.root,
        "endpoints": report.endpoints,
        "diagnostics": report.diagnostics,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}
