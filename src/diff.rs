//! `check --diff BASE`: the pull-request view. The endpoints whose route, handler, or anything
//! they reach (a side effect, a mechanism, the key store) sits in a file changed since BASE, and
//! the endpoints that did not exist at BASE; only their findings are reported.
//!
//! Uses the `git` binary (on every CI runner): the merge base of BASE and `HEAD`, the files changed
//! since then (committed, staged, unstaged and untracked), and BASE's tree, exported with
//! `git archive` into a temporary folder and audited to know which endpoints are new.

use crate::config::Config;
use crate::report::Report;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `--diff` found, for the summary.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DiffSummary {
    /// The revision given.
    pub base: String,
    /// The merge base of it and `HEAD`, what the changes are counted from.
    pub merge_base: String,
    /// Files changed since the merge base under the audited folder.
    pub changed_files: usize,
    /// Endpoints that did not exist at the merge base (`METHOD path`).
    pub new_endpoints: Vec<String>,
    /// Endpoints whose route, handler or something they reach changed.
    pub changed_endpoints: Vec<String>,
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("--diff needs the `git` program: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The repository state `--diff` compares against.
pub struct Base {
    pub base: String,
    pub merge_base: String,
    /// Changed files, relative to the audited root, `/`-separated, with their changed lines
    /// (`None`: the whole file, a new or untracked one).
    pub changed: BTreeMap<String, Option<BTreeSet<u32>>>,
    /// The audited root's path inside the repository (`""` at its top).
    pub subdir: String,
    pub toplevel: PathBuf,
}

/// Resolves BASE for the repository holding `root`, and lists what changed since.
pub fn resolve(root: &Path, base: &str) -> Result<Base, String> {
    let toplevel = git(root, &["rev-parse", "--show-toplevel"]).map_err(|_| {
        format!(
            "--diff needs a git repository, and {} is not in one",
            root.display()
        )
    })?;
    let toplevel = PathBuf::from(toplevel.trim());
    let commit = git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{base}^{{commit}}"),
        ],
    )
    .map_err(|_| format!("--diff {base}: no such revision in this repository"))?;
    let merge_base = git(root, &["merge-base", commit.trim(), "HEAD"])
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| commit.trim().to_string());
    let subdir = crate::paths::relative_to(root, &toplevel)
        .filter(|r| !r.starts_with(".."))
        .unwrap_or_default();
    let under = |file: &str| -> Option<String> {
        if subdir.is_empty() {
            Some(file.to_string())
        } else {
            file.strip_prefix(&format!("{subdir}/")).map(String::from)
        }
    };
    let mut changed: BTreeMap<String, Option<BTreeSet<u32>>> = BTreeMap::new();
    let diff = git(
        &toplevel,
        &[
            "diff",
            "-U0",
            "--no-renames",
            "--no-color",
            "--no-ext-diff",
            &merge_base,
        ],
    )?;
    let mut current: Option<String> = None;
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            current = path.strip_prefix("b/").and_then(under);
            if let Some(f) = &current {
                changed
                    .entry(f.clone())
                    .or_insert_with(|| Some(BTreeSet::new()));
            }
        } else if line.starts_with("--- ") {
            // A deleted file: `+++ /dev/null` follows and names nothing.
        } else if let (Some(hunk), Some(f)) = (line.strip_prefix("@@ "), &current) {
            // `@@ -a,b +c,d @@`: lines c..c+d of the new file (an insertion or a deletion at c
            // when d is 0: the line it sits at).
            let new = hunk
                .split(' ')
                .find_map(|p| p.strip_prefix('+'))
                .unwrap_or("0");
            let mut parts = new.split(',');
            let start: u32 = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            let count: u32 = parts.next().and_then(|n| n.parse().ok()).unwrap_or(1);
            if let Some(Some(lines)) = changed.get_mut(f) {
                lines.extend(start.max(1)..start.max(1) + count.max(1));
            }
        }
    }
    let untracked = git(&toplevel, &["ls-files", "--others", "--exclude-standard"])?;
    for file in untracked.lines().filter_map(under) {
        changed.insert(file, None);
    }
    Ok(Base {
        base: base.to_string(),
        merge_base,
        changed,
        subdir,
        toplevel,
    })
}

/// The endpoints (`METHOD path`) of the audited folder as it was at the merge base.
pub fn endpoints_at_base(base: &Base, config: &Config) -> Result<BTreeSet<String>, String> {
    let tmp = std::env::temp_dir().join(format!(
        "retrysafe-diff-{}-{}",
        std::process::id(),
        &base.merge_base[..base.merge_base.len().min(12)]
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let result = (|| {
        let mut args = vec![
            "archive".to_string(),
            "--format=tar".into(),
            base.merge_base.clone(),
        ];
        if !base.subdir.is_empty() {
            args.push("--".into());
            args.push(base.subdir.clone());
        }
        let archive = Command::new("git")
            .arg("-C")
            .arg(&base.toplevel)
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("git archive: {e}"))?;
        let status = Command::new("tar")
            .arg("-x")
            .arg("-C")
            .arg(&tmp)
            .stdin(archive.stdout.ok_or("git archive: no output")?)
            .status()
            .map_err(|e| format!("--diff needs the `tar` program: {e}"))?;
        if !status.success() {
            return Err(format!("could not export {}", base.merge_base));
        }
        let old_root = tmp.join(&base.subdir);
        if !old_root.is_dir() {
            // The audited folder did not exist at the base: everything in it is new.
            return Ok(BTreeSet::new());
        }
        let report =
            crate::audit_with(&old_root, ".", config, &crate::Silent).map_err(|e| e.to_string())?;
        Ok(report.endpoints.iter().map(|e| e.label()).collect())
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// Whether any of `lines` of `file` changed.
fn lines_changed(base: &Base, file: &str, mut lines: impl Iterator<Item = u32>) -> bool {
    match base.changed.get(file) {
        None => false,
        Some(None) => true,
        Some(Some(set)) => lines.any(|l| set.contains(&l)),
    }
}

/// Marks the endpoints in the diff, keeps only their findings, and says what it did. An endpoint
/// is changed when its registration changed (the route line to the next route or blank line: its
/// middleware, an inline handler), its handler's file changed (a handler defined elsewhere), or a
/// line it reaches changed (a side effect, a mechanism, the key store).
pub fn apply(report: &mut Report, base: &Base, at_base: &BTreeSet<String>) {
    let file_changed = |f: &str| base.changed.contains_key(f);
    // Route lines per file, to bound each registration.
    let mut routes: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for e in &report.endpoints {
        routes.entry(e.file.as_str()).or_default().push(e.line);
    }
    let mut extent: BTreeMap<(String, u32), u32> = BTreeMap::new();
    for (file, lines) in &mut routes {
        lines.sort_unstable();
        lines.dedup();
        let text = std::fs::read_to_string(base.toplevel.join(&base.subdir).join(file))
            .unwrap_or_default();
        let blank: Vec<u32> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim().is_empty())
            .map(|(i, _)| i as u32 + 1)
            .collect();
        for (i, &start) in lines.iter().enumerate() {
            let next_route = lines.get(i + 1).copied().unwrap_or(u32::MAX);
            let next_blank = blank
                .iter()
                .copied()
                .find(|&b| b > start)
                .unwrap_or(u32::MAX);
            extent.insert((file.to_string(), start), next_route.min(next_blank));
        }
    }
    let mut in_diff: BTreeSet<String> = BTreeSet::new();
    let mut new_endpoints = Vec::new();
    let mut changed_endpoints = Vec::new();
    for e in &mut report.endpoints {
        let label = e.label();
        let end = extent
            .get(&(e.file.clone(), e.line))
            .copied()
            .unwrap_or(e.line + 1);
        let touched = lines_changed(base, &e.file, e.line..end)
            || e.handler_file
                .as_deref()
                .is_some_and(|h| h != e.file && file_changed(h))
            || e.side_effects
                .iter()
                .any(|x| lines_changed(base, &x.location.file, std::iter::once(x.location.line)))
            || e.mechanisms
                .iter()
                .any(|m| lines_changed(base, &m.location.file, std::iter::once(m.location.line)))
            || e.key_store
                .as_ref()
                .is_some_and(|k| file_changed(&k.location.file));
        if !at_base.contains(&label) {
            e.diff = Some("new".into());
            new_endpoints.push(label.clone());
            in_diff.insert(label);
        } else if touched {
            e.diff = Some("changed".into());
            changed_endpoints.push(label.clone());
            in_diff.insert(label);
        }
    }
    report.retain_findings(|f| {
        std::iter::once(&f.endpoint)
            .chain(&f.also_endpoints)
            .any(|e| in_diff.contains(e))
            || lines_changed(base, &f.file, std::iter::once(f.line))
    });
    report.summary.diff = Some(DiffSummary {
        base: base.base.clone(),
        merge_base: base.merge_base.clone(),
        changed_files: base.changed.len(),
        new_endpoints,
        changed_endpoints,
    });
}
