use clap::Parser;
use retrysafe::cli::{CheckFormat, Cli, Command, InventoryFormat};
use retrysafe::report::{self, Report};
use retrysafe::rules;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn colour(output: &Option<PathBuf>) -> bool {
    output.is_none()
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
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

fn run_audit(path: &Path) -> Result<Report, String> {
    retrysafe::audit(path, &path.display().to_string()).map_err(|e| e.to_string())
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Command::Check {
            path,
            format,
            output,
            fail_on,
        } => {
            let report = run_audit(&path)?;
            let text = match format {
                CheckFormat::Table => report::table::render(&report, colour(&output)),
                CheckFormat::Markdown => report::markdown::render(&report),
                CheckFormat::Json => report::json::render(&report),
            };
            emit(&text, &output)?;
            let failed = fail_on
                .threshold()
                .is_some_and(|t| report.max_severity() >= t);
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
        } => {
            let report = run_audit(&path)?;
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
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("retrysafe: error: {msg}");
            ExitCode::from(2)
        }
    }
}
