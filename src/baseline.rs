//! Baselines: the findings a team has accepted today, by fingerprint, so that `--fail-on` gates
//! only on new ones. A fingerprint is the rule, the endpoint (`METHOD path`) and its file, never
//! the line, so inserting code above a route does not make its finding new.

use crate::report::Report;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;

pub const BASELINE_VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub rule: String,
    pub endpoint: String,
    pub file: String,
    pub fingerprint: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Baseline {
    pub schema_version: u32,
    pub tool: String,
    pub findings: Vec<Entry>,
}

impl Baseline {
    /// Today's findings, suppressed ones excepted (their comment already accepts them), sorted so
    /// the file diffs well.
    pub fn from_report(report: &Report) -> Baseline {
        let mut findings: Vec<Entry> = report
            .findings
            .iter()
            .filter(|f| !f.suppressed)
            .map(|f| Entry {
                rule: f.rule.clone(),
                endpoint: f.endpoint.clone(),
                file: f.file.clone(),
                fingerprint: f.fingerprint.clone(),
            })
            .collect();
        findings.sort();
        findings.dedup();
        Baseline {
            schema_version: BASELINE_VERSION,
            tool: "retrysafe".into(),
            findings,
        }
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read baseline {}: {e}", path.display()))?;
        let b: Baseline = serde_json::from_str(&text).map_err(|e| {
            format!(
                "baseline {} is not a retrysafe baseline: {e} (write one with `--write-baseline`)",
                path.display()
            )
        })?;
        if b.schema_version != BASELINE_VERSION {
            return Err(format!(
                "baseline {} has schema_version {}; this retrysafe reads {BASELINE_VERSION}",
                path.display(),
                b.schema_version
            ));
        }
        Ok(b)
    }

    pub fn fingerprints(&self) -> HashSet<String> {
        self.findings
            .iter()
            .map(|e| e.fingerprint.clone())
            .collect()
    }
}
