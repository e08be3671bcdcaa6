//! The report: one value every output format renders. No rule prints.

pub mod diagnostics;
pub mod json;
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
        findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.endpoint.cmp(&b.endpoint))
                .then_with(|| a.file.cmp(&b.file))
                .then_with(|| a.line.cmp(&b.line))
                .then_with(|| a.rule.cmp(&b.rule))
        });
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
            },
            endpoints,
            findings,
            diagnostics,
        }
    }

    /// Adds the client requests that send a key.
    pub fn with_clients(mut self, clients: Vec<ClientRequest>) -> Report {
        self.clients = clients;
        self
    }

    /// Recomputes what depends on the findings (their order, the counts, the highest risk, each
    /// endpoint's severity) after findings were added or changed (`check --probe-results`).
    pub fn refresh(&mut self) {
        self.findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.endpoint.cmp(&b.endpoint))
                .then_with(|| a.file.cmp(&b.file))
                .then_with(|| a.line.cmp(&b.line))
                .then_with(|| a.rule.cmp(&b.rule))
        });
        let mut by = BySeverity::default();
        for f in self.findings.iter().filter(|f| !f.suppressed) {
            match f.severity {
                Severity::Critical => by.critical += 1,
                Severity::High => by.high += 1,
                Severity::Medium => by.medium += 1,
                Severity::Low => by.low += 1,
                Severity::Inverse => by.inverse += 1,
                Severity::None => {}
            }
        }
        self.summary.by_severity = by;
        self.summary.highest_risk = self
            .findings
            .iter()
            .find(|f| f.severity > Severity::Inverse && !f.suppressed)
            .map(|f| format!("{}: {}", f.endpoint, f.name.replace('-', " ")));
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
    }

    /// The findings a person reads in the table, Markdown and terminal outputs: not suppressed.
    pub fn visible_findings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| !f.suppressed)
    }
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
