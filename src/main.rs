/// The analysis allocates many small values (syntax nodes, abstract values): mimalloc is markedly
/// faster at that than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use retrysafe::baseline::Baseline;
use retrysafe::cli::{CheckFormat, Cli, Command, DailyArgs, InventoryFormat, ProbeFormat};
use retrysafe::config::{Config, ConfigError, Selection};
use retrysafe::report::{self, Report};
use retrysafe::rules;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Why a run could not complete (exit 2).
enum Failure {
    Message(String),
    Config(ConfigError),
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Message(s)
    }
}

fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

fn colour(output: &Option<PathBuf>) -> bool {
    output.is_none() && std::io::stdout().is_terminal() && !no_color()
}

fn emit(text: &str, output: &Option<PathBuf>) -> Result<(), String> {
    match output {
        Some(path) => {
            std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
        }
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes()).or_else(|e| {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    Ok(())
                } else {
                    Err(e.to_string())
                }
            })
        }
    }
}

fn run_audit(
    path: &Path,
    config: Option<&Path>,
    quiet: bool,
    selection: Selection,
    respect_parent_ignores: bool,
) -> Result<(Report, Config), Failure> {
    let mut config = Config::discover(path, config).map_err(Failure::Config)?;
    config.selection = selection;
    config.respect_parent_ignores = respect_parent_ignores;
    let bar = if quiet {
        None
    } else {
        report::progress::Bar::start()
    };
    let observer: &dyn retrysafe::Progress = match &bar {
        Some(b) => b,
        None => &retrysafe::Silent,
    };
    let result = retrysafe::audit_with(path, &path.display().to_string(), &config, observer);
    if let Some(b) = bar {
        b.finish();
    }
    result
        .map(|r| (r, config))
        .map_err(|e| Failure::Message(e.to_string()))
}

/// The prefix that makes the report's root-relative paths resolve: from `--path-base`, else for
/// the terminal formats from where the user stands (the path as typed), for the CI formats from
/// the repository root.
fn path_prefix(path: &Path, daily: &DailyArgs, ci: bool) -> String {
    use retrysafe::paths::{prefix_from, repository_root, typed_prefix};
    match &daily.path_base {
        Some(base) => prefix_from(path, base),
        None if ci => match repository_root(path) {
            Some(repo) => prefix_from(path, &repo),
            None => typed_prefix(path),
        },
        None => typed_prefix(path),
    }
}

fn render_check(
    report: &Report,
    path: &Path,
    format: CheckFormat,
    output: &Option<PathBuf>,
    quiet: bool,
    daily: &DailyArgs,
) -> String {
    let human = path_prefix(path, daily, false);
    let ci = || path_prefix(path, daily, true);
    match format {
        CheckFormat::Pretty => report::diagnostics::render(
            report,
            path,
            &report::diagnostics::Human {
                colour: colour(output),
                quiet,
                verbose: daily.verbose,
                prefix: human,
            },
        ),
        CheckFormat::Table if quiet => report::table::findings(report, colour(output), &human),
        CheckFormat::Table => report::table::render(report, colour(output), &human),
        CheckFormat::Markdown => report::markdown::render(
            report,
            &report::markdown::Options {
                full: daily.full,
                prefix: match &daily.path_base {
                    Some(_) => ci(),
                    None => String::new(),
                },
            },
        ),
        CheckFormat::Json => report::json::render(report),
        CheckFormat::Sarif => report::sarif::render(
            report,
            &match &daily.path_base {
                Some(base) => retrysafe::paths::prefix_from(path, base),
                None => String::new(),
            },
        ),
        CheckFormat::Github => report::github::render(report, &ci()),
        CheckFormat::Gitlab => report::gitlab::render(report, &ci()),
        CheckFormat::Junit => report::junit::render(report, &ci()),
    }
}

fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Command::Check {
            path,
            format,
            output,
            fail_on,
            config,
            baseline,
            write_baseline,
            quiet,
            daily,
            probe_results,
            respect_parent_ignores,
        } => {
            let selection = Selection::new(
                &daily.select,
                &daily.extend_select,
                &daily.ignore,
                daily.min_confidence.map(|c| c.confidence()),
            )?;
            // Outside a repository, or at an unknown revision, fail before the audit.
            let base = match &daily.diff {
                Some(rev) => Some(retrysafe::diff::resolve(&path, rev)?),
                None => None,
            };
            let (mut report, config) = run_audit(
                &path,
                config.as_deref(),
                quiet,
                selection,
                respect_parent_ignores,
            )?;
            if let Some(file) = &probe_results {
                let results = retrysafe::probe::apply::load(file)?;
                for note in retrysafe::probe::apply::apply(&mut report, &results) {
                    if !quiet {
                        eprintln!("retrysafe: {note}");
                    }
                }
            }
            if let Some(file) = &baseline {
                report.mark_baselined(&Baseline::load(file)?.fingerprints());
            }
            if let Some(base) = &base {
                let at_base = retrysafe::diff::endpoints_at_base(base, &config)?;
                retrysafe::diff::apply(&mut report, base, &at_base);
            }
            retrysafe::trace_phase("report");
            let text = render_check(&report, &path, format, &output, quiet, &daily);
            emit(&text, &output)?;
            retrysafe::trace_phase("written");
            if let Some(why) = &report.summary.nothing_audited
                && !daily.allow_empty
            {
                return Err(Failure::Message(format!(
                    "nothing was audited in {}: {why}; pass --allow-empty if that is expected",
                    path.display()
                )));
            }
            if let Some(file) = &write_baseline {
                let b = Baseline::from_report(&report);
                std::fs::write(file, b.to_json())
                    .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
                if !quiet {
                    eprintln!(
                        "retrysafe: wrote a baseline of {} findings to {}",
                        b.findings.len(),
                        file.display()
                    );
                }
                return Ok(ExitCode::SUCCESS);
            }
            let failed = fail_on
                .threshold()
                .is_some_and(|t| report.gating_severity() >= t);
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Inventory {
            path,
            format,
            output,
            config,
            respect_parent_ignores,
        } => {
            let (report, _) = run_audit(
                &path,
                config.as_deref(),
                false,
                Selection::default(),
                respect_parent_ignores,
            )?;
            let text = match format {
                InventoryFormat::Table => report::table::render_inventory(
                    &report,
                    colour(&output),
                    &retrysafe::paths::typed_prefix(&path),
                ),
                InventoryFormat::Markdown => report::markdown::inventory_table(&report),
                InventoryFormat::Json => report::json::render_inventory(&report),
                InventoryFormat::Csv => report::inventory_csv(&report),
            };
            emit(&text, &output)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Rules => {
            let mut text = String::new();
            for r in rules::registry() {
                text.push_str(&format!(
                    "{}  {:<36} {:<9} {}\n",
                    r.meta.id,
                    r.meta.name,
                    r.meta.severity.as_str(),
                    r.meta.summary
                ));
            }
            emit(&text, &None)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Explain { rule } => {
            let r = rules::find(&rule)
                .ok_or_else(|| format!("unknown rule `{rule}`; `retrysafe rules` lists them"))?;
            let text = format!(
                "# {} {}\n\nSeverity: {} · Section: {}\n\n{}\n",
                r.meta.id,
                r.meta.name,
                r.meta.severity.as_str(),
                r.meta.section.title(),
                r.meta.doc
            );
            emit(&text, &None)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Schema { probe } => {
            let schema = if probe {
                retrysafe::probe::output::schema()
            } else {
                report::json::schema()
            };
            emit(&schema, &None)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Probe {
            path,
            base_url,
            endpoints,
            headers,
            body_file,
            concurrency,
            yes,
            allow_remote,
            key_header,
            timeout,
            format,
            output,
            config,
        } => {
            let results = retrysafe::probe::run(&retrysafe::probe::ProbeArgs {
                base_url: &base_url,
                path: &path,
                config: config.as_deref(),
                endpoints: &endpoints,
                headers: &headers,
                body_file: body_file.as_deref(),
                concurrency,
                yes,
                allow_remote,
                key_header: key_header.as_deref(),
                timeout: std::time::Duration::from_secs(timeout),
            })?;
            let text = match format {
                ProbeFormat::Table => retrysafe::probe::output::table(&results),
                ProbeFormat::Json => retrysafe::probe::output::json(&results),
                ProbeFormat::Markdown => retrysafe::probe::output::markdown(&results),
            };
            emit(&text, &output)?;
            Ok(if results.failed() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// Transparent huge pages off for this process: the audit's heap is millions of small values
/// that mimalloc spreads over its arenas, and with THP the kernel backs each touched region with
/// 2 MiB pages it must zero first; that cost a fifth of the peak memory on large trees (and time).
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_THP_DISABLE) takes plain integers and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

fn main() -> ExitCode {
    no_huge_pages();
    retrysafe::trace_phase("start");
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(Failure::Message(msg)) => {
            eprintln!("retrysafe: error: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Config(e)) => {
            let colour = std::io::stderr().is_terminal() && !no_color();
            eprint!("{}", report::diagnostics::render_error(&e, colour));
            ExitCode::from(2)
        }
    }
}
