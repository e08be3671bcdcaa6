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

/// The JSON Schema of [`render`]'s output, generated from the Rust types (shipped as
/// `docs/report.schema.json`; a test keeps the two equal).
pub fn schema() -> String {
    let mut schema = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<Report>();
    schema.insert("title".into(), "retrysafe report".into());
    schema.insert(
        "description".into(),
        "The report of `retrysafe check --format json` (schema_version 1). Fields may be added; none is renamed or dropped without bumping schema_version.".into(),
    );
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}
