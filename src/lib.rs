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
pub mod isolate;
pub mod link;
pub mod paths;
pub mod probe;
pub mod program;
pub mod report;
pub mod rules;
pub mod sql;
pub mod suppress;
pub mod text;

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

/// `RETRYSAFE_TRACE=1`: one line on stderr per phase of the audit, with the time since the first
/// line and the resident memory (current and peak), for profiling large trees.
#[doc(hidden)]
pub fn trace_phase(name: &str) {
    if std::env::var_os("RETRYSAFE_TRACE").is_none() {
        return;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |k: &str| {
        status
            .lines()
            .find(|l| l.starts_with(k))
            .map(|l| l[k.len()..].trim().to_string())
            .unwrap_or_default()
    };
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let t = START.get_or_init(std::time::Instant::now).elapsed();
    eprintln!(
        "[trace] {:>8.3}s {name}: rss {} hwm {}",
        t.as_secs_f64(),
        field("VmRSS:"),
        field("VmHWM:")
    );
}

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
    let found = discover::discover_opts(
        root,
        config.ignore_matcher(root).as_ref(),
        discover::WalkOptions {
            respect_parent_ignores: config.respect_parent_ignores,
        },
    );
    if parse_only() {
        return parse_floor(found, progress);
    }
    progress.discovered(found.files.len());
    trace_phase("discovered");
    let discover::Discovered {
        files,
        rust_files,
        spec_files,
        mut diagnostics,
        manifests,
    } = found;
    let files_scanned = files.len() + rust_files.len();
    let mut coverage = facts::Coverage::default();
    for f in &files {
        *coverage
            .files_by_language
            .entry(coverage::language_name(f.lang).to_string())
            .or_default() += 1;
    }
    if !rust_files.is_empty() {
        coverage
            .files_by_language
            .insert("rust".into(), rust_files.len());
    }
    for (file, text) in &manifests {
        for fw in coverage::declared_frameworks(file, text) {
            coverage.frameworks_declared.push(fw.to_string());
        }
    }
    coverage.frameworks_declared.sort();
    coverage.frameworks_declared.dedup();
    let suppressions: Vec<_> = files
        .par_iter()
        .flat_map_iter(|f| suppress::scan(&f.rel, &f.text))
        .chain(
            rust_files
                .par_iter()
                .flat_map_iter(|f| suppress::scan(&f.rel, &f.text)),
        )
        .collect();
    // The tests' keyed requests are read first: the TS front end drops each file's text once it
    // has read it.
    let key_tests = frontend::key_tests::collect(&files, &rust_files, catalog);
    trace_phase("key tests");
    // The API documentation too: decorators and attributes are read from the sources' text.
    let (api_docs, doc_diagnostics) =
        frontend::apidoc::collect(&spec_files, &files, &rust_files, &catalog.key_headers);
    // The API documents are read: their text (often large JSON) is not held through parsing.
    drop(spec_files);
    trace_phase("api docs");
    diagnostics.extend(doc_diagnostics);
    let (ts_files, schema_files): (Vec<_>, Vec<_>) =
        files.into_iter().partition(|f| f.lang.is_ts());
    let prisma_clients =
        frontend::schema::prisma_client_dirs(&schema_files.iter().collect::<Vec<_>>());
    let generated_queries =
        frontend::rust::generated_sql::collect(&schema_files.iter().collect::<Vec<_>>());
    // The functions the project's SQL defines: what a call of one does (`supabase.rpc('f')`,
    // `SELECT f($1)`).
    let db_functions = sql::database_functions(
        schema_files
            .iter()
            .filter(|f| f.lang == discover::Lang::Sql)
            .map(|f| f.text.as_str()),
    );
    // The TypeScript/JavaScript pipeline and the Rust front end run side by side.
    let (
        (mut endpoints, ts_diagnostics, model_constraints, ts_sql, mut clients),
        (rust_endpoints, rust_diagnostics, rust_constraints, rust_sql, rust_clients),
    ) = rayon::join(
        || {
            let parsed: Vec<_> = ts_files
                .into_par_iter()
                .map(|f| {
                    let r = frontend::ts::analyze_file(&f, catalog);
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
            trace_phase("ts parsed");
            let linked = link::link_ts(
                &modules,
                root,
                catalog,
                config,
                &prisma_clients,
                &api_docs,
                &db_functions,
            );
            modules.into_par_iter().for_each(drop);
            diagnostics.extend(linked.diagnostics);
            trace_phase("ts linked");
            (
                linked.endpoints,
                diagnostics,
                linked.constraints,
                linked.schema_sql,
                linked.clients,
            )
        },
        || frontend::rust::analyze(rust_files, root, catalog, config, &generated_queries),
    );
    diagnostics.extend(ts_diagnostics);
    endpoints.extend(rust_endpoints);
    diagnostics.extend(rust_diagnostics);
    trace_phase("joined");
    let (mut constraints, more) = frontend::schema::analyze(&schema_files);
    diagnostics.extend(more);
    let (in_code, more) = frontend::schema::sql::code_constraints(&[ts_sql, rust_sql].concat());
    constraints.extend(in_code);
    diagnostics.extend(more);
    constraints.extend(model_constraints);
    constraints.extend(rust_constraints);
    constraints.sort();
    constraints.dedup();
    link::upserts_by_method(&mut endpoints);
    link::constraints::apply(&mut endpoints, &constraints);
    link::guards::apply(&mut endpoints);
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
        // What was reached repeats harmlessly, but a call on the way could not be followed: what
        // the endpoint does is not known, so no claim that a repeat changes nothing (where that
        // claim is the only mechanism: a key or a constraint says more).
        if ep.unfollowed.is_some()
            && ep
                .mechanisms
                .iter()
                .all(|m| m.kind == facts::MechanismKind::Natural)
        {
            ep.mechanisms
                .retain(|m| m.kind != facts::MechanismKind::Natural);
        }
    }
    diagnostics.extend(link::unfollowed_diagnostics(&endpoints));
    link::key_tests::apply(&mut endpoints, &key_tests);
    link::apidoc::apply(&mut endpoints, &api_docs, root);
    trace_phase("facts");
    clients.extend(rust_clients);
    link::clients::attach(&mut clients, &endpoints);
    clients.sort();
    coverage.routes_found = endpoints.len();
    Facts {
        coverage,
        files_scanned,
        constraints,
        endpoints,
        diagnostics,
        suppressions,
        key_tests,
        clients,
        api_docs,
    }
}

/// What an analysis of `root` needs: the root must be a folder, the catalogue must load, and
/// the analysis runs on threads with the analysis stack.
fn prepare(root: &Path, config: &Config) -> Result<(Catalog, rayon::ThreadPool), AuditError> {
    if !root.is_dir() {
        return Err(AuditError::NotFound(root.display().to_string()));
    }
    let catalog = config.catalog().map_err(AuditError::Catalog)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .stack_size(STACK_BYTES)
        .build()
        .map_err(|e| AuditError::Threads(e.to_string()))?;
    Ok((catalog, pool))
}

/// The linked facts of the tree at `root` (what `retrysafe probe` plans from), on threads with
/// the analysis stack.
pub fn facts_with(root: &Path, config: &Config) -> Result<Facts, AuditError> {
    let (catalog, pool) = prepare(root, config)?;
    Ok(pool.install(|| collect_facts_with(root, &catalog, config, &Silent)))
}

/// `RETRYSAFE_PARSE_ONLY=1` (for `bench/bench.py`): stop after walking, reading and parsing every
/// file, reporting nothing but the count of files and the diagnostics of the walk. The cost of
/// that pass is the floor the full audit is measured against.
fn parse_only() -> bool {
    std::env::var_os("RETRYSAFE_PARSE_ONLY").is_some_and(|v| v == "1")
}

/// The walk-and-parse-only pass: every TS/JS file through tree-sitter, every Rust file through
/// `syn`, in parallel, nothing extracted.
fn parse_floor(found: discover::Discovered, progress: &dyn Progress) -> Facts {
    progress.discovered(found.files.len());
    let parsed: usize = found
        .files
        .par_iter()
        .filter(|f| f.lang.is_ts())
        .map(|f| usize::from(frontend::ts::parse_only(f)))
        .sum::<usize>()
        + found
            .rust_files
            .par_iter()
            .map(|f| {
                let ok = frontend::rust::parse::too_deep(&f.text).is_none()
                    && syn::parse_file(&f.text).is_ok();
                proc_macro2::extra::invalidate_current_thread_spans();
                usize::from(ok)
            })
            .sum::<usize>();
    std::hint::black_box(parsed);
    Facts {
        files_scanned: found.files.len() + found.rust_files.len(),
        diagnostics: found.diagnostics,
        ..Facts::default()
    }
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
    let (catalog, pool) = prepare(root, config)?;
    let mut facts = pool.install(|| collect_facts_with(root, &catalog, config, progress));
    trace_phase("collected");
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
