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
        #[arg(long, value_enum, default_value_t = CheckFormat::Table)]
        format: CheckFormat,
        /// Write the report to FILE instead of stdout.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        /// Exit 1 when a finding is at or above this severity.
        #[arg(long, value_enum, default_value_t = FailOn::Critical)]
        fail_on: FailOn,
    },
    /// Print the mutation inventory only.
    Inventory {
        #[arg(default_value = ".")]
        path: PathBuf,
        #[arg(long, value_enum, default_value_t = InventoryFormat::Table)]
        format: InventoryFormat,
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// List the rules: id, name, default severity.
    Rules,
    /// Print one rule's documentation.
    Explain {
        /// A rule id (RS001) or name (payment-without-idempotency).
        rule: String,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFormat {
    Table,
    Markdown,
    Json,
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
