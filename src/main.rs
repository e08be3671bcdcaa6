/// The analysis allocates many small values (syntax nodes, abstract values): mimalloc is markedly
/// faster at that than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use retrysafe::baseline::Baseline;
use retrysafe::cli::{CheckFormat, Cli, Command, InventoryFormat};
use retrysafe::config::{Config, ConfigError};
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
    respect_parent_ignores: bool,
) -> Result<Report, Failure> {
    let mut config = Config::discover(path, config).map_err(Failure::Config)?;
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
    result.map_err(|e| Failure::Message(e.to_string()))
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
            respect_parent_ignores,
        } => {
            let mut report = run_audit(&path, config.as_deref(), quiet, respect_parent_ignores)?;
            if let Some(file) = &baseline {
                report.mark_baselined(&Baseline::load(file)?.fingerprints());
            }
            let text = match format {
                CheckFormat::Pretty => {
                    report::diagnostics::render(&report, &path, colour(&output), quiet)
                }
                CheckFormat::Table if quiet => report::table::findings(&report, colour(&output)),
                CheckFormat::Table => report::table::render(&report, colour(&output)),
                CheckFormat::Markdown => report::markdown::render(&report),
                CheckFormat::Json => report::json::render(&report),
                CheckFormat::Sarif => report::sarif::render(&report),
            };
            emit(&text, &output)?;
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
            let report = run_audit(&path, config.as_deref(), false, respect_parent_ignores)?;
            let text = match format {
                InventoryFormat::Table => report::table::render_inventory(&report, colour(&output)),
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
                r.meta.section,
                r.meta.doc
            );
            emit(&text, &None)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Schema => {
            emit(&report::json::schema(), &None)?;
            Ok(ExitCode::SUCCESS)
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
