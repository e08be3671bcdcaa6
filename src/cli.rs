//! Command-line definitions.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `retrysafe --version`: the version and the commit it was built from (see build.rs).
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("RETRYSAFE_COMMIT"),
    ")"
);

#[derive(Parser, Debug)]
#[command(
    name = "retrysafe",
    version = LONG_VERSION,
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
        #[command(flatten)]
        daily: DailyArgs,
        /// Results of `retrysafe probe --format json`: endpoints the probe exercised get their
        /// findings confirmed; a failed check raises the finding of the rule it tests.
        #[arg(long, value_name = "FILE")]
        probe_results: Option<PathBuf>,
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
    /// Print the JSON Schema of `check --format json` (shipped as docs/report.schema.json), or
    /// with `--probe` the one of `probe --format json` (docs/probe.schema.json).
    Schema {
        #[arg(long)]
        probe: bool,
    },
    /// Confirm keyed endpoints against a running local server: concurrent retries, replay, a
    /// different body, a missing key, a duplicate create (draft-ietf-httpapi-idempotency-key-header).
    /// Mutations are real: point it at a local or staging server.
    Probe {
        /// The repository whose audit says which endpoints to probe and what they take.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// The server to probe (http://127.0.0.1:3000). Only loopback, private and link-local
        /// addresses, unless --allow-remote.
        #[arg(long, value_name = "URL")]
        base_url: String,
        /// Probe only this endpoint: 'POST /api/orders' (give values for path parameters:
        /// 'POST /orders/42/pay'). Repeatable.
        #[arg(long = "endpoint", value_name = "METHOD PATH")]
        endpoints: Vec<String>,
        /// A header every request carries ('Authorization: Bearer …'). Repeatable. The probe
        /// reads credentials from nowhere else.
        #[arg(long = "header", value_name = "NAME: VALUE")]
        headers: Vec<String>,
        /// The JSON request body to send (else: an example of the API document, or a minimal body
        /// built from the endpoint's validation schema).
        #[arg(long, value_name = "FILE")]
        body_file: Option<PathBuf>,
        /// How many requests the concurrent check sends at once.
        #[arg(long, default_value_t = 2)]
        concurrency: usize,
        /// Send without asking.
        #[arg(long)]
        yes: bool,
        /// Allow a base URL that resolves to a public address.
        #[arg(long)]
        allow_remote: bool,
        /// The idempotency-key header's name (default: the one the API documentation names, else
        /// Idempotency-Key).
        #[arg(long, value_name = "NAME")]
        key_header: Option<String>,
        /// Seconds before a request is given up.
        #[arg(long, default_value_t = 15, value_name = "SECONDS")]
        timeout: u64,
        #[arg(long, value_enum, default_value_t = ProbeFormat::Table)]
        format: ProbeFormat,
        /// Write the results to FILE instead of stdout.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        /// The configuration file (default: PATH/retrysafe.toml if present).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeFormat {
    Table,
    Json,
    Markdown,
}

/// `check`'s options for scoping and reading the report.
#[derive(clap::Args, Debug, Default)]
pub struct DailyArgs {
    /// Exit 0 even when nothing was audited (no TypeScript, JavaScript or Rust source, or manifests
    /// naming a server framework and no route found); by default that is exit 2.
    #[arg(long)]
    pub allow_empty: bool,
    /// Print everything in full: each finding with its source lines and related locations, every
    /// endpoint of a shared cause, every diagnostic.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Report only these rules: ids (RS001), names (payment-without-idempotency), id prefixes
    /// (RS01) or ALL; comma-separated or repeated.
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    pub select: Vec<String>,
    /// Add rules to the selection (to `--select`, or to all rules).
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    pub extend_select: Vec<String>,
    /// Leave these rules out (wins over `--select`).
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    pub ignore: Vec<String>,
    /// Leave out findings below this confidence.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub min_confidence: Option<MinConfidence>,
    /// Show paths relative to DIR (default: the terminal formats show them as reachable from the
    /// current directory, the CI formats relative to the repository root; SARIF and JSON relative
    /// to PATH).
    #[arg(long, value_name = "DIR")]
    pub path_base: Option<PathBuf>,
    /// Markdown: every section and the per-mutation profile in full (the default fits a pull
    /// request comment).
    #[arg(long)]
    pub full: bool,
    /// Report only the endpoints new since the git revision BASE, or whose route, handler, or
    /// anything they reach changed since (from BASE's merge base with HEAD).
    #[arg(long, value_name = "BASE")]
    pub diff: Option<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinConfidence {
    Speculative,
    Likely,
    Confirmed,
}

impl MinConfidence {
    pub fn confidence(self) -> crate::rules::Confidence {
        use crate::rules::Confidence;
        match self {
            MinConfidence::Speculative => Confidence::Speculative,
            MinConfidence::Likely => Confidence::Likely,
            MinConfidence::Confirmed => Confidence::Confirmed,
        }
    }
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
    /// GitHub Actions workflow commands: one annotation per cause at its file and line.
    Github,
    /// GitLab Code Quality JSON.
    Gitlab,
    /// JUnit XML: one test case per mutation endpoint, failed by its findings.
    Junit,
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
