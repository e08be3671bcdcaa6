//! retrysafe: finds the HTTP mutation endpoints of a repository, what each does that would hurt if
//! a retry ran it twice, and what protects it; then grades that against the methodology.
//!
//! Pipeline: discover → parse (per file, in parallel) → facts → link → rules → report.

pub mod catalog;
pub mod cli;
pub mod discover;
pub mod facts;
pub mod frontend;
pub mod link;
pub mod report;
pub mod rules;

use catalog::Catalog;
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
            AuditError::Catalog(e) => write!(f, "the built-in catalogue is invalid: {e}"),
            AuditError::Threads(e) => write!(f, "could not start worker threads: {e}"),
        }
    }
}

impl std::error::Error for AuditError {}

/// Discovers, parses and links everything under `root`.
pub fn collect_facts(root: &Path, catalog: &Catalog) -> Facts {
    let found = discover::discover(root);
    let mut diagnostics = found.diagnostics;
    let ((mut endpoints, more), (rust_endpoints, rust_diagnostics)) = rayon::join(
        || {
            let parsed: Vec<_> = found
                .files
                .par_iter()
                .map(|f| frontend::ts::analyze_file(f, catalog))
                .collect();
            let mut modules = Vec::with_capacity(parsed.len());
            let mut diagnostics = Vec::new();
            for (m, d) in parsed {
                modules.push(m);
                diagnostics.extend(d);
            }
            let (endpoints, more) = link::link_ts(&modules, root, catalog);
            diagnostics.extend(more);
            (endpoints, diagnostics)
        },
        || frontend::rust::analyze(&found.rust_files, root, catalog),
    );
    diagnostics.extend(more);
    endpoints.extend(rust_endpoints);
    diagnostics.extend(rust_diagnostics);
    Facts {
        files_scanned: found.files.len() + found.rust_files.len(),
        endpoints,
        diagnostics,
    }
}

/// The public entry: audits the tree at `root`. `display_root` is how the report names it.
pub fn audit(root: &Path, display_root: &str) -> Result<Report, AuditError> {
    if !root.is_dir() {
        return Err(AuditError::NotFound(root.display().to_string()));
    }
    let catalog = Catalog::builtin().map_err(AuditError::Catalog)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .stack_size(STACK_BYTES)
        .build()
        .map_err(|e| AuditError::Threads(e.to_string()))?;
    let facts = pool.install(|| collect_facts(root, &catalog));
    let findings = rules::evaluate(&facts.endpoints);
    Ok(Report::build(
        display_root.to_string(),
        facts.files_scanned,
        facts.endpoints,
        findings,
        facts.diagnostics,
    ))
}
