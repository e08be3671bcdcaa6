//! The report: one value every output format renders. No rule prints.

pub mod diagnostics;
pub mod github;
pub mod gitlab;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod progress;
pub mod sarif;
pub mod table;

use crate::facts::{
    ClientRequest, Diagnostic, Effect, Endpoint, KeyTest, Mechanism, UniqueConstraint,
};
use crate::rules::{Classification, Finding, Severity, classify, fingerprint};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
    /// The commit the binary was built from (`unknown` when that was not known at build time).
    pub commit: &'static str,
}

#[derive(Debug, Serialize, Default, schemars::JsonSchema)]
pub struct BySeverity {
    pub critical: usize,
    pub high: usize,
    pub medium: usize,
    pub low: usize,
    pub inverse: usize,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub files_scanned: usize,
    pub mutation_endpoints: usize,
    pub with_idempotency: usize,
    /// Findings that are not suppressed, by severity (baselined findings included).
    pub by_severity: BySeverity,
    pub highest_risk: Option<String>,
    /// Findings silenced by a `retrysafe-ignore` comment (not in `by_severity`).
    pub suppressed: usize,
    /// Findings known in the `--baseline` file (in `by_severity`, not gating `--fail-on`).
    pub baselined: usize,
    /// Distinct causes among the findings that are not suppressed: a flaw in a shared place (a
    /// key store, a middleware, a helper) is one cause however many endpoints it affects.
    pub causes: usize,
    /// With `--baseline`: the findings that are not in it (neither suppressed nor baselined).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<usize>,
    /// Mutation endpoints by framework.
    pub endpoints_by_framework: BTreeMap<String, usize>,
    /// Mutation endpoints by classification (`not_idempotent`, `unknown`, …).
    pub by_classification: BTreeMap<String, usize>,
    /// What was read: files per language, routes found, frameworks the manifests name.
    #[serde(flatten)]
    pub coverage: crate::facts::Coverage,
    /// With `check --diff BASE`: the base, the files changed since, and the endpoints in the diff
    /// (only their findings are in the report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<crate::diff::DiffSummary>,
    /// Set when the audit audited nothing (no supported source, or a server framework in the
    /// manifests and no route found): why. `check` then exits 2 unless `--allow-empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nothing_audited: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct EndpointReport {
    pub id: String,
    pub method: String,
    pub path: String,
    /// False when part of the path could not be read (a router nothing mounts, a prefix that is
    /// not statically known, a guessed GraphQL or tRPC path): `path` is the part that is known, and
    /// a diagnostic says what is missing.
    pub path_complete: bool,
    pub framework: String,
    /// How a client reaches it: `rest`, `graphql`, `trpc`, `server_action` or `form_action`.
    pub protocol: crate::facts::Protocol,
    pub file: String,
    pub line: u32,
    pub handler: String,
    pub side_effects: Vec<Effect>,
    pub mechanisms: Vec<Mechanism>,
    pub classification: Classification,
    pub severity: Severity,
    /// The key store behind the endpoint's key mechanism, judged property by property, when it
    /// is visible (in the code, or as a catalogued library).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_store: Option<crate::facts::KeyStore>,
    /// What the key mechanism gets right, each with the line that shows it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub positives: Vec<crate::facts::key::Positive>,
    /// Tests in the repository that send this endpoint one idempotency key twice or concurrently.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub idempotency_tests: Vec<KeyTest>,
    /// With `check --diff`: `new` (not at the base revision) or `changed` (its route, handler or
    /// something it reaches changed since then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The handler's file, when it is not the route's.
    #[serde(skip)]
    #[schemars(skip)]
    pub handler_file: Option<String>,
    /// The operation of the repository's API documentation that describes this endpoint, and the
    /// key header it documents (`header`), when a document or code-first documentation does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_doc: Option<crate::facts::doc::KeyDoc>,
}

impl EndpointReport {
    pub fn label(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
    /// The label with ` (path incomplete)` when part of the path could not be read.
    pub fn shown(&self) -> String {
        if self.path_complete {
            self.label()
        } else {
            format!("{} (path incomplete)", self.label())
        }
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    pub root: String,
    pub summary: Summary,
    pub endpoints: Vec<EndpointReport>,
    pub findings: Vec<Finding>,
    pub diagnostics: Vec<Diagnostic>,
    /// Unique constraints found in schemas, migrations and ORM models, with the endpoints whose
    /// creates they protect.
    pub constraints: Vec<ConstraintReport>,
    /// Requests that client code (code no endpoint reaches) sends with an idempotency key, with
    /// where the key comes from (`key_origin`) and the endpoint of this repository each calls.
    pub clients: Vec<ClientRequest>,
    /// The API documents (OpenAPI, Swagger) and files of code-first documentation
    /// (`@nestjs/swagger`, utoipa) found, with how many mutation operations each documents.
    pub api_docs: Vec<crate::facts::doc::ApiDocFile>,
}

/// A unique constraint and the mutation endpoints whose creates it protects.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ConstraintReport {
    #[serde(flatten)]
    pub constraint: UniqueConstraint,
    pub protects: Vec<String>,
}

impl Report {
    /// Assembles the report: mutation endpoints only in the inventory, findings of every route.
    pub fn build(
        root: String,
        files_scanned: usize,
        all: Vec<Endpoint>,
        mut findings: Vec<Finding>,
        mut diagnostics: Vec<Diagnostic>,
        constraints: Vec<UniqueConstraint>,
    ) -> Report {
        sort_findings(&mut findings);
        let mut worst: BTreeMap<(String, String, u32), Severity> = BTreeMap::new();
        for f in &findings {
            let routes = std::iter::once((&f.endpoint, &f.route))
                .chain(f.also_endpoints.iter().zip(&f.also_routes));
            for (label, route) in routes {
                let e = worst
                    .entry((label.clone(), route.file.clone(), route.line))
                    .or_insert(Severity::None);
                *e = (*e).max(f.severity);
            }
        }
        let mut endpoints: Vec<EndpointReport> = all
            .into_iter()
            .filter(Endpoint::is_mutation)
            .map(|ep| {
                let label = ep.label();
                let severity = worst
                    .get(&(label.clone(), ep.location.file.clone(), ep.location.line))
                    .copied()
                    .unwrap_or(Severity::None);
                let positives = ep
                    .key_store
                    .as_ref()
                    .map(|k| k.positives())
                    .unwrap_or_default();
                EndpointReport {
                    diff: None,
                    handler_file: ep.handler_location.as_ref().map(|l| l.file.clone()),
                    api_doc: ep.key_doc.clone(),
                    positives,
                    key_store: ep.key_store.clone(),
                    id: fingerprint(&[&ep.method, &ep.path, &ep.location.file]),
                    classification: classify(&ep),
                    idempotency_tests: ep.confirming_tests().cloned().collect(),
                    method: ep.method,
                    path: ep.path,
                    path_complete: ep.path_complete,
                    framework: ep.framework,
                    protocol: ep.protocol,
                    file: ep.location.file,
                    line: ep.location.line,
                    handler: ep.handler,
                    side_effects: ep.side_effects,
                    mechanisms: ep.mechanisms,
                    severity,
                }
            })
            .collect();
        endpoints.sort_by(|a, b| {
            (&a.path, &a.method, &a.file, a.line).cmp(&(&b.path, &b.method, &b.file, b.line))
        });
        diagnostics.sort();
        diagnostics.dedup();
        let (by, highest_risk) = tally(&findings);
        // which endpoints each constraint protects: one pass over the effects, not one per
        // constraint
        let mut protecting: HashMap<&str, Vec<String>> = HashMap::new();
        for e in &endpoints {
            let mut named: Vec<&str> = e
                .side_effects
                .iter()
                .filter_map(|fx| fx.constraint.as_deref())
                .collect();
            named.sort_unstable();
            named.dedup();
            for c in named {
                protecting.entry(c).or_default().push(e.label());
            }
        }
        let constraints = constraints
            .into_iter()
            .map(|c| {
                let mut protects = protecting
                    .get(c.describe().as_str())
                    .cloned()
                    .unwrap_or_default();
                protects.dedup();
                ConstraintReport {
                    constraint: c,
                    protects,
                }
            })
            .collect();
        Report {
            constraints,
            clients: Vec::new(),
            api_docs: Vec::new(),
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "retrysafe",
                version: env!("CARGO_PKG_VERSION"),
                commit: env!("RETRYSAFE_COMMIT"),
            },
            root,
            summary: Summary {
                files_scanned,
                mutation_endpoints: endpoints.len(),
                with_idempotency: endpoints
                    .iter()
                    .filter(|e| {
                        !matches!(
                            e.classification,
                            Classification::NotIdempotent | Classification::Unknown
                        )
                    })
                    .count(),
                by_severity: by,
                highest_risk,
                suppressed: findings.iter().filter(|f| f.suppressed).count(),
                baselined: findings.iter().filter(|f| f.baselined).count(),
                causes: count_causes(&findings),
                new: None,
                endpoints_by_framework: count_by(endpoints.iter().map(|e| e.framework.as_str())),
                by_classification: count_by(endpoints.iter().map(|e| e.classification.as_str())),
                coverage: crate::facts::Coverage::default(),
                nothing_audited: None,
                diff: None,
            },
            endpoints,
            findings,
            diagnostics,
        }
    }

    /// Adds what the audit read, and whether that was nothing.
    pub fn with_coverage(mut self, coverage: crate::facts::Coverage) -> Report {
        self.summary.nothing_audited = coverage.nothing_audited();
        self.summary.coverage = coverage;
        self
    }

    /// Adds the client requests that send a key.
    pub fn with_clients(mut self, clients: Vec<ClientRequest>) -> Report {
        self.clients = clients;
        self
    }

    /// Recomputes what depends on the findings (their order, the counts, the highest risk, each
    /// endpoint's severity) after findings were added or changed (`check --probe-results`).
    pub fn refresh(&mut self) {
        sort_findings(&mut self.findings);
        let (by, highest_risk) = tally(&self.findings);
        self.summary.by_severity = by;
        self.summary.highest_risk = highest_risk;
        self.summary.causes = count_causes(&self.findings);
        for e in &mut self.endpoints {
            let label = e.label();
            for f in &self.findings {
                let on_it =
                    (f.endpoint == label && f.route.file == e.file && f.route.line == e.line)
                        || f.also_endpoints.contains(&label);
                if on_it {
                    e.severity = e.severity.max(f.severity);
                }
            }
        }
    }

    /// Adds the API documentation found.
    pub fn with_api_docs(mut self, docs: Vec<crate::facts::doc::ApiDocFile>) -> Report {
        self.api_docs = docs;
        self
    }

    /// The highest severity among the findings.
    pub fn max_severity(&self) -> Severity {
        self.findings
            .iter()
            .map(|f| f.severity)
            .max()
            .unwrap_or(Severity::None)
    }

    /// The highest severity among the findings that gate `--fail-on`: neither suppressed nor
    /// in the baseline.
    pub fn gating_severity(&self) -> Severity {
        self.findings
            .iter()
            .filter(|f| !f.suppressed && !f.baselined)
            .map(|f| f.severity)
            .max()
            .unwrap_or(Severity::None)
    }

    /// Marks the findings whose fingerprint is in `known` as baselined.
    pub fn mark_baselined(&mut self, known: &std::collections::HashSet<String>) {
        for f in &mut self.findings {
            f.baselined = known.contains(&f.fingerprint);
        }
        self.summary.baselined = self.findings.iter().filter(|f| f.baselined).count();
        self.summary.new = Some(
            self.findings
                .iter()
                .filter(|f| !f.suppressed && !f.baselined)
                .count(),
        );
    }

    /// Keeps the findings `keep` accepts and counts again (`check --diff`).
    pub fn retain_findings(&mut self, keep: impl Fn(&Finding) -> bool) {
        self.findings.retain(|f| keep(f));
        let (by, highest_risk) = tally(&self.findings);
        self.summary.by_severity = by;
        self.summary.highest_risk = highest_risk;
        self.summary.causes = count_causes(&self.findings);
        self.summary.suppressed = self.findings.iter().filter(|f| f.suppressed).count();
        self.summary.baselined = self.findings.iter().filter(|f| f.baselined).count();
        if self.summary.new.is_some() {
            self.summary.new = Some(
                self.findings
                    .iter()
                    .filter(|f| !f.suppressed && !f.baselined)
                    .count(),
            );
        }
    }

    /// The findings the human and CI formats list: not suppressed, and with `--baseline` only the
    /// new ones (the known ones are counted in the summary).
    pub fn shown_findings(&self) -> impl Iterator<Item = &Finding> {
        let only_new = self.summary.new.is_some();
        self.visible_findings()
            .filter(move |f| !(only_new && f.baselined))
    }

    /// The shown findings grouped by cause, each group in report order (worst first) and the
    /// groups in the order of their first finding.
    pub fn causes(&self) -> Vec<Vec<&Finding>> {
        let mut order: Vec<&str> = Vec::new();
        let mut groups: HashMap<&str, Vec<&Finding>> = HashMap::new();
        for f in self.shown_findings() {
            let g = groups.entry(f.cause.as_str()).or_default();
            if g.is_empty() {
                order.push(f.cause.as_str());
            }
            g.push(f);
        }
        order.into_iter().filter_map(|c| groups.remove(c)).collect()
    }

    /// The findings a person reads in the table, Markdown and terminal outputs: not suppressed.
    pub fn visible_findings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| !f.suppressed)
    }
}

/// The report's order of findings: the most severe first, then by endpoint, place and rule.
fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.endpoint.cmp(&b.endpoint))
            .then_with(|| a.file.cmp(&b.file))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.rule.cmp(&b.rule))
    });
}

/// Findings by severity (suppressed ones left out) and the highest-risk gap.
fn tally(findings: &[Finding]) -> (BySeverity, Option<String>) {
    let mut by = BySeverity::default();
    for f in findings.iter().filter(|f| !f.suppressed) {
        match f.severity {
            Severity::Critical => by.critical += 1,
            Severity::High => by.high += 1,
            Severity::Medium => by.medium += 1,
            Severity::Low => by.low += 1,
            Severity::Inverse => by.inverse += 1,
            Severity::None => {}
        }
    }
    let highest_risk = findings
        .iter()
        .find(|f| f.severity > Severity::Inverse && !f.suppressed)
        .map(|f| format!("{}: {}", f.endpoint, f.name.replace('-', " ")));
    (by, highest_risk)
}

fn count_causes(findings: &[Finding]) -> usize {
    findings
        .iter()
        .filter(|f| !f.suppressed)
        .map(|f| f.cause.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

fn count_by<'a>(items: impl Iterator<Item = &'a str>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for i in items {
        *out.entry(i.to_string()).or_default() += 1;
    }
    out
}

/// Every endpoint a group of findings (one cause) affects, in order, without repeats.
pub fn cause_endpoints(group: &[&Finding]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in group {
        for e in std::iter::once(&f.endpoint).chain(&f.also_endpoints) {
            if !out.contains(e) {
                out.push(e.clone());
            }
        }
    }
    out
}

/// Where a group of findings (one cause) is shown: the shared place when there is one, else the
/// finding's own file and line.
pub fn cause_location(group: &[&Finding]) -> (String, u32) {
    let f = group[0];
    match &f.cause_at {
        Some(at) => (at.file.clone(), at.line),
        None => (f.file.clone(), f.line),
    }
}

/// A cause's message for formats that list its endpoints themselves: without the "The same code
/// serves N other endpoints: …" tail the JSON message carries.
pub fn cause_message<'a>(group: &[&'a Finding]) -> &'a str {
    let m = group[0].message.as_str();
    if cause_endpoints(group).len() > 1 {
        m.split(" The same code serves ").next().unwrap_or(m)
    } else {
        m
    }
}

/// With `--diff`: one line per endpoint in the diff, new ones first — what it now reaches and
/// what protects it ("new `POST /orders` reaches payment `stripe.charges.create`
/// (src/pay.ts:9) with no idempotency mechanism").
pub fn diff_lines(report: &Report, limit: Option<usize>) -> Vec<String> {
    let Some(diff) = &report.summary.diff else {
        return Vec::new();
    };
    let mut out = vec![format!(
        "since {} (merge base {}): {} files changed, {} new endpoints, {} changed",
        diff.base,
        &diff.merge_base[..diff.merge_base.len().min(12)],
        diff.changed_files,
        diff.new_endpoints.len(),
        diff.changed_endpoints.len()
    )];
    let mut shown: Vec<&EndpointReport> = report
        .endpoints
        .iter()
        .filter(|e| e.diff.as_deref() == Some("new"))
        .chain(
            report
                .endpoints
                .iter()
                .filter(|e| e.diff.as_deref() == Some("changed")),
        )
        .collect();
    let total = shown.len();
    if let Some(n) = limit {
        shown.truncate(n);
    }
    for e in shown {
        let reaches: Vec<String> = e
            .side_effects
            .iter()
            .filter(|x| x.repeats_on_retry())
            .map(|x| format!("{} `{}` ({})", x.kind.as_str(), x.callee, x.location))
            .collect();
        let protection = match e.classification {
            crate::rules::Classification::NotIdempotent => "with no idempotency mechanism".into(),
            crate::rules::Classification::Unknown => {
                "through a call that could not be followed".into()
            }
            _ => format!("protected by {}", mechanism_kinds(&e.mechanisms)),
        };
        let what = if reaches.is_empty() {
            "repeats nothing on a retry".to_string()
        } else {
            format!("reaches {} {protection}", reaches.join(", "))
        };
        out.push(format!(
            "{} `{}` {what}; severity {}",
            e.diff.as_deref().unwrap_or(""),
            e.label(),
            e.severity.as_str()
        ));
    }
    if out.len() - 1 < total {
        out.push(format!(
            "and {} more (--verbose lists them)",
            total - (out.len() - 1)
        ));
    }
    out
}

/// `a, b, c and 4 more` (all of them when `limit` is `None`).
pub fn listed(items: &[String], limit: Option<usize>) -> String {
    let n = limit.unwrap_or(items.len()).min(items.len());
    let mut s = items[..n].join(", ");
    if items.len() > n {
        s.push_str(&format!(" and {} more", items.len() - n));
    }
    s
}

/// The kind of a diagnostic, for summaries: its message up to the first `:` (or its first words),
/// quoted names and numbers folded, so "router `a` (2 routes) is not mounted" and "router `b`
/// (5 routes) is not mounted" are one kind.
pub fn diagnostic_kind(message: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    let mut last_digit = false;
    for c in message.chars() {
        if c == '`' {
            if !in_code {
                out.push('…');
            }
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        if c.is_ascii_digit() {
            if !last_digit {
                out.push('N');
            }
            last_digit = true;
            continue;
        }
        last_digit = false;
        if c == ':' || c == ';' {
            break;
        }
        out.push(c);
    }
    let words: Vec<&str> = out.split_whitespace().take(10).collect();
    words.join(" ")
}

/// Diagnostics by kind, most frequent first: (kind, count, first diagnostic).
pub fn diagnostics_by_kind(report: &Report) -> Vec<(String, usize, &Diagnostic)> {
    let mut kinds: Vec<(String, usize, &Diagnostic)> = Vec::new();
    for d in &report.diagnostics {
        let k = diagnostic_kind(&d.message);
        match kinds.iter_mut().find(|(kind, _, _)| *kind == k) {
            Some(entry) => entry.1 += 1,
            None => kinds.push((k, 1, d)),
        }
    }
    kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    kinds
}

/// "db_create, payment" for a table cell.
pub fn effect_kinds(effects: &[Effect]) -> String {
    let mut kinds: Vec<&str> = effects.iter().map(|e| e.kind.as_str()).collect();
    kinds.sort();
    kinds.dedup();
    if kinds.is_empty() {
        "none found".into()
    } else {
        kinds.join(", ")
    }
}

pub fn mechanism_kinds(mechanisms: &[Mechanism]) -> String {
    let mut kinds: Vec<&str> = mechanisms.iter().map(|m| m.kind.as_str()).collect();
    kinds.sort();
    kinds.dedup();
    if kinds.is_empty() {
        "none".into()
    } else {
        kinds.join(", ")
    }
}

/// CSV of the inventory. Columns are only ever appended (`path_complete` came last), so a script
/// reading them by position keeps working.
pub fn inventory_csv(report: &Report) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "method",
        "path",
        "framework",
        "file",
        "line",
        "handler",
        "side_effects",
        "mechanisms",
        "classification",
        "severity",
        "protocol",
        "path_complete",
    ]);
    for e in &report.endpoints {
        let _ = w.write_record([
            e.method.as_str(),
            &e.path,
            &e.framework,
            &e.file,
            &e.line.to_string(),
            &e.handler,
            &effect_kinds(&e.side_effects),
            &mechanism_kinds(&e.mechanisms),
            e.classification.as_str(),
            e.severity.as_str(),
            e.protocol.as_str(),
            if e.path_complete { "true" } else { "false" },
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
