//! `--format markdown`: the report the methodology prescribes. By default it fits a pull-request
//! comment: the sections without findings collapse into one line, findings are listed once per
//! cause, the per-mutation profile sits in a `<details>` block and diagnostics are summarised by
//! kind. `--full` writes every section and every diagnostic.

use super::{Report, effect_kinds, mechanism_kinds};
use crate::facts::{DownstreamKey, MechanismKind};
use crate::rules::{Classification, Section, Severity, registry};
use std::fmt::Write;

/// Every section of the report, in order, with the rules of the registry that report into it.
fn sections() -> Vec<(Section, Vec<&'static str>)> {
    let rules = registry();
    Section::ALL
        .iter()
        .map(|&section| {
            let ids = rules
                .iter()
                .filter(|r| r.meta.section == section)
                .map(|r| r.meta.id)
                .collect();
            (section, ids)
        })
        .collect()
}

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

/// How the Markdown report is written.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Every section (also the empty ones) and every diagnostic, the profile not folded.
    pub full: bool,
    /// Put before each root-relative path (`--path-base`).
    pub prefix: String,
}

/// The executive summary: the highest-risk gap first, then the endpoints by classification with
/// the gaps named, the findings and their causes, and what was read.
fn executive_summary(report: &Report, out: &mut String) {
    let s = &report.summary;
    let _ = writeln!(
        out,
        "- **Highest-risk gap:** {}.",
        s.highest_risk.as_deref().unwrap_or("none found")
    );
    let class = |k: &str| s.by_classification.get(k).copied().unwrap_or(0);
    let no_mechanism = class("not_idempotent");
    let unknown = class("unknown");
    let _ = writeln!(
        out,
        "- {} mutation endpoints: **{no_mechanism} with no mechanism**, **{unknown} unknown (a call on the way could not be followed)**, {} protected by a key, {} by a constraint or upsert, {} idempotent by nature.",
        s.mutation_endpoints,
        class("idempotent_with_key"),
        class("idempotent_by_constraint"),
        class("idempotent_by_nature"),
    );
    let flawed = report
        .endpoints
        .iter()
        .filter(|e| {
            !matches!(
                e.classification,
                Classification::NotIdempotent | Classification::Unknown
            ) && e.severity > Severity::Inverse
        })
        .count();
    let b = &s.by_severity;
    let _ = writeln!(
        out,
        "- Findings: {} critical, {} high, {} medium, {} low, {} inverse, from {} causes; {flawed} of the {} endpoints with a mechanism still have a finding.",
        b.critical, b.high, b.medium, b.low, b.inverse, s.causes, s.with_idempotency
    );
    let langs: Vec<String> = s
        .coverage
        .files_by_language
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let fws: Vec<String> = s
        .endpoints_by_framework
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(
        out,
        "- Read: {} files ({}); mutation endpoints by framework: {}.",
        s.files_scanned,
        if langs.is_empty() {
            "none".to_string()
        } else {
            langs.join(", ")
        },
        if fws.is_empty() {
            "none".to_string()
        } else {
            fws.join(", ")
        }
    );
    let diff = super::diff_lines(report, Some(30));
    if let Some((head, rest)) = diff.split_first() {
        let _ = writeln!(out, "- Diff {head}:");
        for l in rest {
            let _ = writeln!(out, "  - {}", l);
        }
    }
    if let Some(why) = &s.nothing_audited {
        let _ = writeln!(out, "- **Nothing was audited:** {why}.");
    }
    if let Some(new) = s.new {
        let _ = writeln!(
            out,
            "- Baseline: {new} new, {} known (the known ones are not listed).",
            s.baselined
        );
    }
    if s.suppressed > 0 {
        let _ = writeln!(
            out,
            "- Accepted: {} suppressed in the source (`retrysafe-ignore`, not listed below).",
            s.suppressed
        );
    }
}

/// GitHub's limit for a pull-request comment (and for a job summary's part): the default report
/// stays under it.
pub const COMMENT_LIMIT: usize = 65_536;
/// What the default report aims at, leaving room for a comment's own header.
const BUDGET: usize = 60_000;
/// At most this much of the budget goes to the inventory table.
const INVENTORY_BUDGET: usize = 20_000;

/// The inventory within `budget`: every endpoint, else the ones with a finding, else as many of
/// those as fit; a line says what was left out.
fn inventory_within(report: &Report, budget: usize) -> String {
    let all = inventory_table(report);
    if all.len() <= budget {
        return all;
    }
    let flagged = report
        .endpoints
        .iter()
        .filter(|e| e.severity > Severity::None)
        .count();
    let mut out = String::from(
        "| Endpoint | Side Effect | Idempotency Mechanism | Severity |\n|---|---|---|---|\n",
    );
    let mut shown = 0;
    for line in all.lines().skip(2) {
        if line.ends_with("| none |") {
            continue;
        }
        if out.len() + line.len() + 200 > budget {
            break;
        }
        out.push_str(line);
        out.push('\n');
        shown += 1;
    }
    let _ = writeln!(
        out,
        "\n{shown} of the {} endpoints with a finding are listed, of {} mutation endpoints in all: `retrysafe inventory` or `--full` lists every one.",
        flagged,
        report.endpoints.len()
    );
    out
}

pub fn render(report: &Report, opts: &Options) -> String {
    let built: Vec<&'static str> = registry().iter().map(|r| r.meta.id).collect();
    let mut out = String::from("# Idempotency audit\n\n## Executive summary\n\n");
    executive_summary(report, &mut out);
    out.push_str("\n## Mutation inventory\n\n");
    if opts.full {
        out.push_str(&inventory_table(report));
    } else {
        out.push_str(&inventory_within(report, INVENTORY_BUDGET));
    }
    let mut tail = String::new();
    let mut empty: Vec<String> = Vec::new();
    if !opts.full {
        // The diagnostics by kind and the "nothing found" line are short: reserve them first.
        diagnostics_section(report, opts, &mut tail);
    }
    // What is left for the sections; the findings come first, then what works, then the profile.
    let mut budget = if opts.full {
        usize::MAX
    } else {
        BUDGET.saturating_sub(out.len() + tail.len() + 1_500)
    };
    let mut bodies: Vec<(&str, String)> = Vec::new();
    for (kind, ids) in sections() {
        let section = kind.title();
        let ids = ids.as_slice();
        if matches!(
            kind,
            Section::PerMutationProfile | Section::PositiveFindings
        ) {
            bodies.push((section, String::new()));
            continue;
        }
        let mut body = String::new();
        let has_findings = report.shown_findings().any(|f| f.section == section);
        match kind {
            Section::ConstraintBased => {
                constraints_used(report, &mut body);
                section_findings(report, section, ids, &built, opts, &mut budget, &mut body);
            }
            Section::ClientGeneration => {
                if opts.full || !report.clients.is_empty() {
                    clients_checked(report, &mut body);
                }
                section_findings(report, section, ids, &built, opts, &mut budget, &mut body);
            }
            Section::Documentation => {
                if opts.full || !report.api_docs.is_empty() {
                    documentation(report, &mut body);
                }
                section_findings(report, section, ids, &built, opts, &mut budget, &mut body);
            }
            _ => section_findings(report, section, ids, &built, opts, &mut budget, &mut body),
        }
        let nothing = !has_findings
            && match kind {
                Section::ConstraintBased => {
                    report.constraints.iter().all(|c| c.protects.is_empty())
                }
                Section::ClientGeneration => report.clients.is_empty(),
                Section::Documentation => report.api_docs.is_empty(),
                _ => true,
            };
        if nothing && !opts.full {
            let checked: Vec<&str> = ids.iter().copied().filter(|i| built.contains(i)).collect();
            empty.push(if checked.is_empty() {
                section.to_string()
            } else {
                format!("{section} ({})", checked.join(", "))
            });
            continue;
        }
        if !opts.full {
            budget = budget.saturating_sub(body.len().min(budget));
        }
        bodies.push((section, body));
    }
    // What works: in full, or in short when the budget is tight.
    let mut good = String::new();
    positives(report, &mut good);
    if !opts.full && good.len() > budget / 2 {
        good.clear();
        positives_in_short(report, &mut good);
    }
    let good_empty = good.starts_with("None found.");
    if !opts.full {
        budget = budget.saturating_sub(good.len().min(budget));
    }
    // The per-mutation profile: folded by default, one line per endpoint, if it fits.
    let mut profile = String::new();
    if opts.full {
        per_mutation(report, &mut profile);
    } else if !report.endpoints.is_empty() {
        let mut lines = String::new();
        per_mutation_in_short(report, &mut lines);
        if lines.len() + 200 <= budget {
            let _ = writeln!(
                profile,
                "<details><summary>{} endpoints: side effects and mechanisms</summary>\n",
                report.endpoints.len()
            );
            profile.push_str(&lines);
            profile.push_str("\n</details>\n");
        } else {
            let _ = writeln!(
                profile,
                "Left out to fit a pull-request comment: `--full` writes the profile of each of the {} endpoints.",
                report.endpoints.len()
            );
        }
    }
    for (section, body) in bodies {
        let body = match section {
            "Per-Mutation Profile" if !opts.full && report.endpoints.is_empty() => {
                empty.push(section.to_string());
                continue;
            }
            "Per-Mutation Profile" => &profile,
            "Positive Findings" if !opts.full && good_empty => {
                empty.push(section.to_string());
                continue;
            }
            "Positive Findings" => &good,
            _ => &body,
        };
        let _ = writeln!(out, "\n## {section}\n");
        out.push_str(body);
    }
    if !empty.is_empty() {
        let _ = writeln!(
            out,
            "\n## Nothing found\n\nNo findings in: {}. (`--full` writes each section.)",
            empty.join(", ")
        );
    }
    if opts.full {
        diagnostics_section(report, opts, &mut out);
        return out;
    }
    out.push_str(&tail);
    // The budget above is an estimate; the limit is not.
    let note = "\n_Cut here to fit a pull-request comment: `--full` writes the whole report._\n";
    if out.chars().count() + note.len() > COMMENT_LIMIT {
        let keep: usize = out
            .char_indices()
            .nth(COMMENT_LIMIT - note.len() - 1)
            .map_or(out.len(), |(i, _)| i);
        let cut = out[..keep].rfind("\n").unwrap_or(0);
        out.truncate(cut + 1);
        out.push_str(note);
    }
    out
}

fn diagnostics_section(report: &Report, opts: &Options, out: &mut String) {
    if report.diagnostics.is_empty() {
        return;
    }
    out.push_str("\n## Diagnostics\n\n");
    if opts.full {
        for d in &report.diagnostics {
            let _ = writeln!(
                out,
                "- `{}{}:{}`: {}",
                opts.prefix,
                d.file,
                d.line,
                cell(&d.message)
            );
        }
    } else {
        for (kind, n, first) in super::diagnostics_by_kind(report) {
            let _ = writeln!(
                out,
                "- {n} × {} (first: `{}{}:{}`)",
                cell(&kind),
                opts.prefix,
                first.file,
                first.line
            );
        }
    }
}

/// One line per endpoint: what it is, what it reaches, what protects it.
fn per_mutation_in_short(report: &Report, out: &mut String) {
    for e in &report.endpoints {
        let _ = writeln!(
            out,
            "- `{}` ({}:{}): {}; {}; mechanisms: {}; severity {}.",
            cell(&e.label()),
            e.file,
            e.line,
            e.classification.as_str().replace('_', " "),
            effect_kinds(&e.side_effects),
            mechanism_kinds(&e.mechanisms),
            e.severity.as_str()
        );
    }
}

/// What works, counted: endpoints per mechanism, tested endpoints, derived provider keys.
fn positives_in_short(report: &Report, out: &mut String) {
    let mut by_kind: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for e in report
        .endpoints
        .iter()
        .filter(|e| e.severity <= Severity::Inverse)
    {
        let mut kinds: Vec<&str> = e.mechanisms.iter().map(|m| m.kind.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        for k in kinds {
            *by_kind.entry(k).or_default() += 1;
        }
    }
    if by_kind.is_empty() {
        out.push_str("None found.\n");
        return;
    }
    let list: Vec<String> = by_kind.iter().map(|(k, n)| format!("{n} by {k}")).collect();
    let _ = writeln!(
        out,
        "- Endpoints without findings protected or safe: {} (`--full` lists each).",
        list.join(", ")
    );
    let tested: Vec<String> = report
        .endpoints
        .iter()
        .filter(|e| !e.idempotency_tests.is_empty())
        .map(|e| format!("`{}`", cell(&e.label())))
        .collect();
    if !tested.is_empty() {
        let _ = writeln!(
            out,
            "- Tested with one key twice or concurrently: {}.",
            super::listed(&tested, Some(10))
        );
    }
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

/// One cause's entry: the rule, where, the endpoints it affects, the finding and the change.
fn cause_entry(group: &[&crate::rules::Finding], opts: &Options, out: &mut String) {
    let f = group[0];
    let endpoints = super::cause_endpoints(group);
    if endpoints.len() > 1 {
        let _ = writeln!(
            out,
            "### {} {} — {} endpoints\n",
            f.rule,
            f.name,
            endpoints.len()
        );
    } else {
        let _ = writeln!(out, "### {} {} — `{}`\n", f.rule, f.name, f.endpoint);
    }
    let _ = writeln!(
        out,
        "- Severity: {} (confidence: {})",
        f.severity.as_str(),
        f.confidence.as_str()
    );
    let (file, line) = super::cause_location(group);
    let _ = writeln!(out, "- Where: `{}{file}:{line}`", opts.prefix);
    if endpoints.len() > 1 {
        let shown: Vec<String> = endpoints.iter().map(|e| format!("`{}`", cell(e))).collect();
        let limit = if opts.full { None } else { Some(10) };
        let _ = writeln!(out, "- Endpoints: {}", super::listed(&shown, limit));
    }
    if f.baselined {
        let _ = writeln!(out, "- Baseline: known (in the `--baseline` file)");
    }
    let _ = writeln!(out, "- Finding: {}", super::cause_message(group));
    let _ = writeln!(out, "- Change: {}", f.change);
    let _ = writeln!(out, "- Impact: {}\n", f.impact);
}

/// A section's findings, one entry per cause, or what was checked when there are none.
fn section_findings(
    report: &Report,
    section: &str,
    ids: &[&str],
    built: &[&'static str],
    opts: &Options,
    budget: &mut usize,
    out: &mut String,
) {
    let groups: Vec<Vec<&crate::rules::Finding>> = report
        .causes()
        .into_iter()
        .filter(|g| g[0].section == *section)
        .collect();
    let mut used = 0;
    for (i, group) in groups.iter().enumerate() {
        let mut entry = String::new();
        cause_entry(group, opts, &mut entry);
        used += entry.chars().count();
        if used > *budget {
            let _ = writeln!(
                out,
                "- … and {} more causes in this section, left out to fit a pull-request comment (`--full`, or the JSON report, has them all).\n",
                groups.len() - i
            );
            break;
        }
        out.push_str(&entry);
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
    if groups.is_empty() {
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
    if !checked.is_empty() && !unbuilt.is_empty() {
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
                    .map(|r| crate::facts::doc::duration(r.seconds))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_reports_into_one_section() {
        let mut listed: Vec<&str> = sections().into_iter().flat_map(|(_, ids)| ids).collect();
        let mut all: Vec<&str> = registry().iter().map(|r| r.meta.id).collect();
        listed.sort();
        all.sort();
        assert_eq!(listed, all);
    }
}
