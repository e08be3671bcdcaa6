//! Command-line definitions.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "retrysafe",
    version,
    about = "Audit HTTP mutation endpoints for idempotency: what a client retry would run twice, and what protects it."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Audit a repository and report findings.
    Check {
        /// The repository to audit.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// pretty: each finding as a compiler-style diagnostic with the source lines.
        #[arg(long, value_enum, default_value_t = CheckFormat::Pretty)]
        format: CheckFormat,
        /// Write the report to FILE instead of stdout.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        /// Exit 1 when a finding is at or above this severity (suppressed and baselined findings
        /// never count).
        #[arg(long, value_enum, default_value_t = FailOn::Critical)]
        fail_on: FailOn,
        /// The configuration file (default: PATH/retrysafe.toml if present).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Fail only on findings that are not in this baseline file.
        #[arg(long, value_name = "FILE")]
        baseline: Option<PathBuf>,
        /// Record today's findings in FILE as the baseline (and exit 0).
        #[arg(long, value_name = "FILE")]
        write_baseline: Option<PathBuf>,
        /// Print the findings only: no summary line, no progress bar, no notes on stderr.
        #[arg(long, short = 'q')]
        quiet: bool,
        /// Also obey `.gitignore` files in the folders above PATH and the global git excludes
        /// (by default only the ignore files inside PATH count).
        #[arg(long)]
        respect_parent_ignores: bool,
    },
    /// Print the mutation inventory only.
    Inventory {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long, value_enum, default_value_t = InventoryFormat::Table)]
        format: InventoryFormat,
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        /// The configuration file (default: PATH/retrysafe.toml if present).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Also obey `.gitignore` files in the folders above PATH and the global git excludes
        /// (by default only the ignore files inside PATH count).
        #[arg(long)]
        respect_parent_ignores: bool,
    },
    /// List the rules: id, name, default severity.
    Rules,
    /// Print one rule's documentation.
    Explain {
        /// A rule id (RS001) or name (payment-without-idempotency).
        rule: String,
    },
    /// Print the JSON Schema of `check --format json` (shipped as docs/report.schema.json).
    Schema,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFormat {
    /// Compiler-style diagnostics with source excerpts (the default).
    Pretty,
    Table,
    Markdown,
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum InventoryFormat {
    Table,
    Markdown,
    Json,
    Csv,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    Critical,
    High,
    Medium,
    Low,
    None,
}

impl FailOn {
    pub fn threshold(self) -> Option<crate::rules::Severity> {
        use crate::rules::Severity;
        match self {
            FailOn::Critical => Some(Severity::Critical),
            FailOn::High => Some(Severity::High),
            FailOn::Medium => Some(Severity::Medium),
            FailOn::Low => Some(Severity::Low),
            FailOn::None => None,
        }
    }
}
