#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_retrysafe"))
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

pub fn run(args: &[&str]) -> Output {
    bin()
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run retrysafe")
}

/// `retrysafe check PATH --format json --fail-on none`, ready to run.
pub fn json_check(path: &Path) -> Command {
    let mut c = bin();
    c.args([
        "check",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on",
        "none",
    ]);
    c
}

/// The sorted, unique `kind`s of a JSON array of effects or mechanisms.
pub fn kinds(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["kind"].as_str().unwrap().to_string())
        .collect();
    k.sort();
    k.dedup();
    k
}

/// Whether one of a JSON report's diagnostics mentions `needle`.
pub fn mentions_diagnostic(report: &serde_json::Value, needle: &str) -> bool {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["message"].as_str().unwrap().contains(needle))
}

pub fn json_report(path: &Path) -> serde_json::Value {
    let out = json_check(path).output().expect("run retrysafe");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// A copy of a fixture in a temporary directory, to edit freely.
pub fn fixture_copy(name: &str) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(&fixture(name), dir.path());
    dir
}

/// `retrysafe ARGS…` with `NO_COLOR`, returning (exit code, stdout, stderr).
pub fn run_in(args: &[&str]) -> (i32, String, String) {
    let out = run(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `retrysafe ARGS…` run from `dir`, with `NO_COLOR`: (exit code, stdout, stderr).
pub fn run_at(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = bin()
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run retrysafe");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `check --format json` with one worker thread and with two: both complete (exit 0) and give the
/// same bytes. The report, parsed.
pub fn json_report_any_threads(path: &Path, extra: &[&str]) -> serde_json::Value {
    let mut outs = Vec::new();
    for threads in ["1", "2"] {
        let out = json_check(path)
            .args(extra)
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .expect("run retrysafe");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{threads} thread(s): stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        outs.push(out.stdout);
    }
    assert!(
        outs[0] == outs[1],
        "1 and 2 threads differ:\n{}\n---\n{}",
        String::from_utf8_lossy(&outs[0]),
        String::from_utf8_lossy(&outs[1])
    );
    serde_json::from_slice(&outs[0]).expect("valid JSON")
}

/// The diagnostics of a report as `file:line message`.
pub fn diagnostics(report: &serde_json::Value) -> Vec<String> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}:{} {}",
                d["file"].as_str().unwrap(),
                d["line"],
                d["message"].as_str().unwrap()
            )
        })
        .collect()
}
