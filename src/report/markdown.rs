//! `--format markdown`: the report the methodology prescribes, every section always present.

use super::{Report, effect_kinds, mechanism_kinds};
use crate::facts::{DownstreamKey, MechanismKind};
use crate::rules::{Severity, registry};
use std::fmt::Write;

/// Every section of the report, in order, with the catalogue rules that report into it.
const SECTIONS: &[(&str, &[&str])] = &[
    (
        "Idempotency Mechanism",
        &["RS001", "RS003", "RS007", "RS017"],
    ),
    ("Header Pattern", &["RS008", "RS011", "RS016", "RS019"]),
    ("Storage", &["RS005", "RS014", "RS022"]),
    ("Client Generation", &["RS006"]),
    ("Atomic Check-Insert", &["RS004"]),
    ("Response Storage", &["RS013", "RS015"]),
    ("Request Hash", &["RS009"]),
    ("Expiration", &["RS010"]),
    ("Webhook Idempotency", &["RS002"]),
    ("Constraint-Based", &["RS012"]),
    ("Error Response", &["RS018"]),
    ("Test Coverage", &["RS020"]),
    ("Documentation", &["RS021"]),
    ("Per-Mutation Profile", &[]),
    ("Cancellation + Idempotency", &["RS025"]),
    ("Over-Built", &["RS023", "RS024"]),
    ("Positive Findings", &[]),
];

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Inline code that may itself hold backticks.
fn code(s: &str) -> String {
    let s = cell(s);
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

pub fn inventory_table(report: &Report) -> String {
    let mut out = String::from(
        "| Endpoint | Side Effect | Idempotency Mechanism | Severity |\n|---|---|---|---|\n",
    );
    for e in &report.endpoints {
        let _ = writeln!(
            out,
            "| `{}`{} ({}:{}) | {} | {} | {} |",
            cell(&e.label()),
            if e.path_complete {
                ""
            } else {
                " (path incomplete)"
            },
            e.file,
            e.line,
            effect_kinds(&e.side_effects),
            mechanism_kinds(&e.mechanisms),
            e.severity.as_str()
        );
    }
    if report.endpoints.is_empty() {
        out.push_str("| none found | | | |\n");
    }
    out
}

pub fn render(report: &Report) -> String {
    let built: Vec<&'static str> = registry().iter().map(|r| r.meta.id).collect();
    let s = &report.summary;
    let mut out = String::from("# Idempotency audit\n\n## Executive summary\n\n");
    let _ = writeln!(
        out,
        "- {} mutation endpoints in {} files scanned.",
        s.mutation_endpoints, s.files_scanned
    );
    let _ = writeln!(
        out,
        "- {} have an idempotency mechanism (key, constraint, upsert or idempotent by nature); {} do not.",
        s.with_idempotency,
        s.mutation_endpoints - s.with_idempotency
    );
    let b = &s.by_severity;
    let _ = writeln!(
        out,
        "- Findings: {} critical, {} high, {} medium, {} low, {} inverse.",
        b.critical, b.high, b.medium, b.low, b.inverse
    );
    let _ = writeln!(
        out,
        "- Highest-risk gap: {}.",
        s.highest_risk.as_deref().unwrap_or("none found")
    );
    if s.suppressed > 0 || s.baselined > 0 {
        let _ = writeln!(
            out,
            "- Accepted: {} suppressed in the source (`retrysafe-ignore`, not listed below), {} in the baseline.",
            s.suppressed, s.baselined
        );
    }
    out.push_str("\n## Mutation inventory\n\n");
    out.push_str(&inventory_table(report));
    for (section, ids) in SECTIONS {
        let _ = writeln!(out, "\n## {section}\n");
        match *section {
            "Per-Mutation Profile" => per_mutation(report, &mut out),
            "Constraint-Based" => {
                constraints_used(report, &mut out);
                section_findings(report, section, ids, &built, &mut out);
            }
            "Client Generation" => {
                clients_checked(report, &mut out);
                section_findings(report, section, ids, &built, &mut out);
            }
            "Documentation" => {
                documentation(report, &mut out);
                section_findings(report, section, ids, &built, &mut out);
            }
            "Positive Findings" => positives(report, &mut out),
            _ => section_findings(report, section, ids, &built, &mut out),
        }
    }
    if !report.diagnostics.is_empty() {
        out.push_str("\n## Diagnostics\n\n");
        for d in &report.diagnostics {
            let _ = writeln!(out, "- `{}:{}`: {}", d.file, d.line, d.message);
        }
    }
    out
}

fn per_mutation(report: &Report, out: &mut String) {
    if report.endpoints.is_empty() {
        out.push_str("None found.\n");
        return;
    }
    for e in &report.endpoints {
        let _ = writeln!(
            out,
            "- `{}` ({}:{}), handler `{}`: {}; severity {}.",
            e.label(),
            e.file,
            e.line,
            e.handler,
            e.classification.as_str().replace('_', " "),
            e.severity.as_str()
        );
        for fx in &e.side_effects {
            let via = if fx.via.is_empty() {
                String::new()
            } else {
                format!(" via {}", fx.via.join(" → "))
            };
            let mut flags = Vec::new();
            if fx.upsert {
                flags.push("upsert");
            }
            if fx.relative {
                flags.push("relative");
            }
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!(" [{}]", flags.join(", "))
            };
            let _ = writeln!(
                out,
                "  - {}: `{}` at {}:{}{via}{flags}",
                fx.kind.as_str(),
                cell(&fx.callee),
                fx.location.file,
                fx.location.line
            );
        }
        for m in &e.mechanisms {
            let _ = writeln!(
                out,
                "  - mechanism {}: {} ({}:{})",
                m.kind.as_str(),
                m.detail,
                m.location.file,
                m.location.line
            );
        }
    }
}

fn positives(report: &Report, out: &mut String) {
    let mut any = false;
    for e in report
        .endpoints
        .iter()
        .filter(|e| e.severity <= Severity::Inverse)
    {
        for m in e
            .mechanisms
            .iter()
            .filter(|m| m.kind != MechanismKind::Natural)
        {
            any = true;
            let _ = writeln!(
                out,
                "- `{}`: {} — {} (`{}:{}`).",
                e.label(),
                m.kind.as_str(),
                m.detail,
                m.location.file,
                m.location.line
            );
        }
    }
    // What each key mechanism gets right, once per place, with the endpoints it serves.
    let mut by_place: std::collections::BTreeMap<(String, u32, &str), (String, Vec<String>)> =
        std::collections::BTreeMap::new();
    for e in &report.endpoints {
        for p in &e.positives {
            by_place
                .entry((p.location.file.clone(), p.location.line, p.property))
                .or_insert_with(|| (p.detail.clone(), Vec::new()))
                .1
                .push(e.label());
        }
    }
    if !by_place.is_empty() {
        any = true;
        out.push_str("\nKey mechanisms:\n\n");
    }
    for ((file, line, property), (detail, endpoints)) in &by_place {
        let shown: Vec<String> = endpoints.iter().take(5).map(|l| format!("`{l}`")).collect();
        let more = if endpoints.len() > 5 {
            format!(" and {} more", endpoints.len() - 5)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "- {property}: {} (`{file}:{line}`) for {}{more}.",
            cell(detail),
            shown.join(", ")
        );
    }
    for e in &report.endpoints {
        for t in &e.idempotency_tests {
            any = true;
            let _ = writeln!(
                out,
                "- `{}`: tested — the test at `{}:{}` {}, so the key mechanism is exercised.",
                e.label(),
                t.location.file,
                t.location.line,
                t.describe()
            );
        }
        for fx in e
            .side_effects
            .iter()
            .filter(|fx| fx.downstream_key == Some(DownstreamKey::FromInboundKey))
        {
            any = true;
            let key = fx
                .downstream_key_expression
                .as_deref()
                .map(|k| format!(" ({})", code(k)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- `{}`: the provider call `{}` passes a downstream key derived from the inbound key and a purpose{key} (`{}:{}`).",
                e.label(),
                cell(&fx.callee),
                fx.location.file,
                fx.location.line
            );
        }
    }
    for c in report.clients.iter().filter(|c| c.key_origin.is_sound()) {
        any = true;
        let _ = writeln!(
            out,
            "- `{}` sent from `{}` (`{}`): its idempotency key is {} (`{}`).",
            cell(&c.label()),
            c.function,
            c.location,
            c.detail,
            c.key_location
        );
    }
    let natural = report
        .endpoints
        .iter()
        .filter(|e| {
            e.mechanisms
                .iter()
                .any(|m| m.kind == MechanismKind::Natural)
        })
        .count();
    if natural > 0 {
        any = true;
        let _ = writeln!(
            out,
            "- {natural} endpoints are idempotent by nature (no repeated side effect) and need no key."
        );
    }
    if !any {
        out.push_str("None found.\n");
    }
}

/// A section's findings, or what was checked when there are none.
fn section_findings(
    report: &Report,
    section: &str,
    ids: &[&str],
    built: &[&'static str],
    out: &mut String,
) {
    let findings: Vec<_> = report
        .visible_findings()
        .filter(|f| f.section == *section)
        .collect();
    for f in &findings {
        let _ = writeln!(out, "### {} {} — `{}`\n", f.rule, f.name, f.endpoint);
        let _ = writeln!(
            out,
            "- Severity: {} (confidence: {})",
            f.severity.as_str(),
            f.confidence.as_str()
        );
        let _ = writeln!(out, "- Where: `{}:{}`", f.file, f.line);
        if f.baselined {
            let _ = writeln!(out, "- Baseline: known (in the `--baseline` file)");
        }
        let _ = writeln!(out, "- Finding: {}", f.message);
        let _ = writeln!(out, "- Change: {}", f.change);
        let _ = writeln!(out, "- Impact: {}\n", f.impact);
    }
    let checked: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| built.contains(id))
        .collect();
    let unbuilt: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !built.contains(id))
        .collect();
    if findings.is_empty() {
        if checked.is_empty() {
            let _ = writeln!(
                out,
                "Not checked: this version does not build rules {} yet.",
                unbuilt.join(", ")
            );
        } else {
            let _ = writeln!(out, "None found (checked: {}).", checked.join(", "));
        }
    }
    if (!findings.is_empty() || !checked.is_empty()) && !unbuilt.is_empty() && !checked.is_empty() {
        let _ = writeln!(out, "\nNot checked yet: {}.", unbuilt.join(", "));
    }
}

/// The API documentation found, and what it says about each keyed endpoint's key.
fn documentation(report: &Report, out: &mut String) {
    if report.api_docs.is_empty() {
        out.push_str("No API documentation in the repository (OpenAPI or Swagger documents, `@nestjs/swagger` decorators, utoipa paths): keys are not checked against one.\n\n");
        return;
    }
    for d in &report.api_docs {
        let version = d
            .version
            .as_deref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "- `{}` ({}{version}): {} mutation operation{}.",
            d.file,
            d.source.as_str(),
            d.operations,
            if d.operations == 1 { "" } else { "s" }
        );
    }
    let keyed: Vec<_> = report
        .endpoints
        .iter()
        .filter(|e| {
            e.mechanisms
                .iter()
                .any(|m| m.kind == MechanismKind::HeaderKey)
        })
        .collect();
    if keyed.is_empty() {
        out.push_str("\nNo endpoint handles an idempotency key.\n\n");
        return;
    }
    out.push_str("\n| Keyed endpoint | Documented at | Key header | Retention | Store expiry |\n|---|---|---|---|---|\n");
    for e in keyed {
        let expiry = match e.key_store.as_ref().map(|k| &k.expiry) {
            Some(p) => match (p.present(), p.missing()) {
                (Some((at, _)), _) => format!("expires (`{at}`)"),
                (_, Some((at, _))) => format!("never (`{at}`)"),
                _ => "not visible".into(),
            },
            None => "not visible".into(),
        };
        let (at, header, retention) = match &e.api_doc {
            None => (
                "not documented".to_string(),
                "—".to_string(),
                "—".to_string(),
            ),
            Some(d) => (
                format!("`{}` ({})", d.location, d.source.as_str()),
                d.header
                    .as_ref()
                    .map(|h| {
                        format!(
                            "`{}`{}",
                            cell(&h.name),
                            if h.required {
                                " (required)"
                            } else {
                                " (optional)"
                            }
                        )
                    })
                    .unwrap_or_else(|| "**missing**".into()),
                d.header
                    .as_ref()
                    .and_then(|h| h.retention.as_ref())
                    .map(|r| crate::frontend::apidoc::duration(r.seconds))
                    .unwrap_or_else(|| "not stated".into()),
            ),
        };
        let _ = writeln!(
            out,
            "| `{}` | {at} | {header} | {retention} | {expiry} |",
            cell(&e.label())
        );
    }
    out.push('\n');
}

/// The client requests that send a key, and where each key comes from.
fn clients_checked(report: &Report, out: &mut String) {
    if report.clients.is_empty() {
        out.push_str("No client code in the repository sends an idempotency key.\n\n");
        return;
    }
    let linked = report
        .clients
        .iter()
        .filter(|c| c.endpoint.is_some())
        .count();
    let _ = writeln!(
        out,
        "{} client requests send an idempotency key ({linked} to endpoints of this repository).\n",
        report.clients.len()
    );
    out.push_str("| Request | Sent from | Key | Made at | Origin |\n|---|---|---|---|---|\n");
    for c in &report.clients {
        let _ = writeln!(
            out,
            "| {} | {} ({}) | {} | {} ({}) | {} |",
            code(&c.label()),
            code(&c.function),
            c.location,
            code(&c.key_expression),
            code(&c.key_function),
            c.key_location,
            c.key_origin.as_str().replace('_', " ")
        );
    }
    out.push('\n');
}

/// The constraints that protect a create, where each is declared, and which endpoints it covers.
fn constraints_used(report: &Report, out: &mut String) {
    let used: Vec<_> = report
        .constraints
        .iter()
        .filter(|c| !c.protects.is_empty())
        .collect();
    let _ = writeln!(
        out,
        "{} unique constraints found in schemas, migrations and models; {} protect an endpoint's create.\n",
        report.constraints.len(),
        used.len()
    );
    for c in used {
        let k = &c.constraint;
        let partial = if k.partial { ", partial" } else { "" };
        let _ = writeln!(
            out,
            "- `{}({})`{partial} ({}, `{}:{}`) protects {}",
            k.model,
            k.columns.join(", "),
            k.source,
            k.location.file,
            k.location.line,
            c.protects
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out.push('\n');
}
