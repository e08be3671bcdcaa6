//! Names the commit a binary was built from, for `retrysafe --version`: `RETRYSAFE_COMMIT` when set
//! (release builds, container builds without `.git`), else `git rev-parse --short HEAD` when git
//! and a repository are there, else `unknown`. Never touches the network.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-env-changed=RETRYSAFE_COMMIT");
    let commit = std::env::var("RETRYSAFE_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| {
            // Rebuild when HEAD moves: the HEAD file, and the branch it points to.
            for file in ["HEAD", "packed-refs"] {
                if let Some(path) = git(&["rev-parse", "--git-path", file]) {
                    println!("cargo:rerun-if-changed={path}");
                }
            }
            if let Some(path) = git(&["symbolic-ref", "-q", "HEAD"])
                .and_then(|branch| git(&["rev-parse", "--git-path", &branch]))
            {
                println!("cargo:rerun-if-changed={path}");
            }
            git(&["rev-parse", "--short=12", "HEAD"])
        })
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=RETRYSAFE_COMMIT={}", commit.trim());
}
