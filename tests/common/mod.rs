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

pub fn json_report(path: &Path) -> serde_json::Value {
    let out = bin()
        .args([
            "check",
            path.to_str().unwrap(),
            "--format",
            "json",
            "--fail-on",
            "none",
        ])
        .output()
        .expect("run retrysafe");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}
