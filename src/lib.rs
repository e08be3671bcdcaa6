//! retrysafe: finds the HTTP mutation endpoints of a repository, what each does that would hurt if
//! a retry ran it twice, and what protects it; then grades that against the methodology.
//!
//! Pipeline: discover → parse (per file, in parallel) → facts → link → rules → report.

pub mod baseline;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod coverage;
pub mod diff;
pub mod discover;
pub mod facts;
pub mod frontend;
pub mod link;
pub mod paths;
pub mod probe;
pub mod report;
pub mod rules;
pub mod suppress;

use catalog::Catalog;
use config::Config;
use facts::Facts;
use rayon::prelude::*;
use report::Report;
use std::path::Path;

/// Stack for analysis threads: deep (but bounded) recursion over pathological files fits in it.
const STACK_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug)]
pub enum AuditError {
    NotFound(String),
    Catalog(String),
    Threads(String),
}

impl std::fmt::Display for AuditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuditError::NotFound(p) => write!(f, "no such directory: {p}"),
            AuditError::Catalog(e) => write!(f, "the catalogue is invalid: {e}"),
            AuditError::Threads(e) => write!(f, "could not start worker threads: {e}"),
        }
    }
}

impl std::error::Error for AuditError {}

/// Told how an audit advances (for a progress bar). Every method has a no-op default.
pub trait Progress: Sync {
    /// The files are found; `files` of them will be parsed.
    fn discovered(&self, _files: usize) {}
    /// One more file parsed.
    fn parsed(&self) {}
    /// A phase after parsing starts ("linking", "rules").
    fn phase(&self, _name: &str) {}
}

/// A [`Progress`] that ignores everything.
pub struct Silent;
impl Progress for Silent {}

/// Discovers, parses and links everything under `root`.
pub fn collect_facts(root: &Path, catalog: &Catalog) -> Facts {
    collect_facts_with(root, catalog, &Config::default(), &Silent)
}

/// As [`collect_facts`], with the project's ignore patterns and a progress observer.
pub fn collect_facts_with(
    root: &Path,
    catalog: &Catalog,
    config: &Config,
    progress: &dyn Progress,
) -> Facts {
    let found = discover::discover_with(root, config.ignore_matcher(root).as_ref());
    progress.discovered(found.files.len());
    let mut diagnostics = found.diagnostics;
    let suppressions: Vec<_> = found
        .files
        .par_iter()
        .flat_map_iter(|f| suppress::scan(&f.rel, &f.text))
        .chain(
            found
                .rust_files
                .par_iter()
                .flat_map_iter(|f| suppress::scan(&f.rel, &f.text)),
        )
        .collect();
    let (ts_files, schema_files): (Vec<_>, Vec<_>) =
        found.files.iter().partition(|f| f.lang.is_ts());
    let prisma_clients = frontend::schema::prisma_client_dirs(&schema_files);
    // The TypeScript/JavaScript pipeline and the Rust front end run side by side, and the tests'
    // keyed requests are read beside them.
    let (
        (
            (mut endpoints, ts_diagnostics, model_constraints, mut clients),
            (rust_endpoints, rust_diagnostics, rust_constraints, rust_clients),
        ),
        key_tests,
    ) = rayon::join(
        || {
            rayon::join(
                || {
                    let parsed: Vec<_> = ts_files
                        .par_iter()
                        .map(|f| {
                            let r = frontend::ts::analyze_file(f, catalog);
                            progress.parsed();
                            r
                        })
                        .collect();
                    let mut modules = Vec::with_capacity(parsed.len());
                    let mut diagnostics = Vec::new();
                    for (m, d) in parsed {
                        modules.push(m);
                        diagnostics.extend(d);
                    }
                    progress.phase("linking");
                    let linked = link::link_ts(&modules, root, catalog, config, &prisma_clients);
                    diagnostics.extend(linked.diagnostics);
                    (
                        linked.endpoints,
                        diagnostics,
                        linked.constraints,
                        linked.clients,
                    )
                },
                || frontend::rust::analyze(&found.rust_files, root, catalog),
            )
        },
        || frontend::key_tests::collect(&found.files, &found.rust_files, catalog),
    );
    diagnostics.extend(ts_diagnostics);
    endpoints.extend(rust_endpoints);
    diagnostics.extend(rust_diagnostics);
    let schema_files: Vec<discover::SourceFile> = schema_files.into_iter().cloned().collect();
    let (mut constraints, more) = frontend::schema::analyze(&schema_files);
    diagnostics.extend(more);
    constraints.extend(model_constraints);
    constraints.extend(rust_constraints);
    constraints.sort();
    constraints.dedup();
    link::constraints::apply(&mut endpoints, &constraints);
    link::webhooks::apply(&mut endpoints, catalog);
    link::keystore::apply(&mut endpoints, &constraints);
    link::harm::apply(&mut endpoints, &catalog.harm);
    for ep in &mut endpoints {
        let handler = ep
            .handler_location
            .clone()
            .unwrap_or_else(|| ep.location.clone());
        // Nothing reached, but a call on the way could not be followed: not "no side effect".
        if ep.side_effects.is_empty() && ep.unfollowed.is_some() {
            continue;
        }
        link::complete_mechanisms(&ep.side_effects, &mut ep.mechanisms, handler);
    }
    diagnostics.extend(link::unfollowed_diagnostics(&endpoints));
    link::key_tests::apply(&mut endpoints, &key_tests);
    let (api_docs, doc_diagnostics) = frontend::apidoc::collect(
        &found.spec_files,
        &found.files,
        &found.rust_files,
        &catalog.key_headers,
    );
    diagnostics.extend(doc_diagnostics);
    link::apidoc::apply(&mut endpoints, &api_docs, root);
    clients.extend(rust_clients);
    link::clients::attach(&mut clients, &endpoints);
    clients.sort();
    let mut coverage = coverage::Coverage {
        routes_found: endpoints.len(),
        ..Default::default()
    };
    for f in &found.files {
        *coverage
            .files_by_language
            .entry(coverage::language_name(f.lang).to_string())
            .or_default() += 1;
    }
    if !found.rust_files.is_empty() {
        coverage
            .files_by_language
            .insert("rust".into(), found.rust_files.len());
    }
    for (file, text) in &found.manifests {
        for fw in coverage::declared_frameworks(file, text) {
            coverage.frameworks_declared.push(fw.to_string());
        }
    }
    coverage.frameworks_declared.sort();
    coverage.frameworks_declared.dedup();
    Facts {
        coverage,
        files_scanned: found.files.len() + found.rust_files.len(),
        constraints,
        endpoints,
        diagnostics,
        suppressions,
        key_tests,
        clients,
        api_docs,
    }
}

/// The linked facts of the tree at `root` (what `retrysafe probe` plans from), on threads with
/// the analysis stack.
pub fn facts_with(root: &Path, config: &Config) -> Result<Facts, AuditError> {
    if !root.is_dir() {
        return Err(AuditError::NotFound(root.display().to_string()));
    }
    let catalog = config.catalog().map_err(AuditError::Catalog)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .stack_size(STACK_BYTES)
        .build()
        .map_err(|e| AuditError::Threads(e.to_string()))?;
    Ok(pool.install(|| collect_facts_with(root, &catalog, config, &Silent)))
}

/// The public entry: audits the tree at `root`. `display_root` is how the report names it.
pub fn audit(root: &Path, display_root: &str) -> Result<Report, AuditError> {
    audit_with(root, display_root, &Config::default(), &Silent)
}

/// As [`audit`], with a project configuration (`retrysafe.toml`) and a progress observer.
pub fn audit_with(
    root: &Path,
    display_root: &str,
    config: &Config,
    progress: &dyn Progress,
) -> Result<Report, AuditError> {
    if !root.is_dir() {
        return Err(AuditError::NotFound(root.display().to_string()));
    }
    let catalog = config.catalog().map_err(AuditError::Catalog)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .stack_size(STACK_BYTES)
        .build()
        .map_err(|e| AuditError::Threads(e.to_string()))?;
    let mut facts = pool.install(|| collect_facts_with(root, &catalog, config, progress));
    progress.phase("rules");
    let mut findings = rules::evaluate(&facts.endpoints);
    findings.extend(rules::evaluate_project(&rules::Project {
        endpoints: &facts.endpoints,
        clients: &facts.clients,
    }));
    config.apply_to_findings(&mut findings);
    suppress::apply(
        &mut findings,
        &facts.suppressions,
        &|rule| config.rule_enabled(rule),
        &mut facts.diagnostics,
    );
    let clients = std::mem::take(&mut facts.clients);
    let coverage = std::mem::take(&mut facts.coverage);
    let api_docs = std::mem::take(&mut facts.api_docs.files);
    Ok(Report::build(
        display_root.to_string(),
        facts.files_scanned,
        facts.endpoints,
        findings,
        facts.diagnostics,
        facts.constraints,
    )
    .with_clients(clients)
    .with_coverage(coverage)
    .with_api_docs(api_docs))
}
