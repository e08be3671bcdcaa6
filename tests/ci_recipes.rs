//! The CI recipes stay runnable: the GitHub Action's check step, the pre-commit hook's command and
//! the GitLab job's commands are run as written against a fixture, with the built binary on PATH.

mod common;

use common::fixture_copy;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(file: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap()
}

/// PATH with the built `retrysafe` first.
fn path_with_binary() -> String {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_retrysafe"));
    let dir = bin.parent().unwrap().to_str().unwrap().to_string();
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

/// The `run: |` block of the step with `id`, unindented.
fn action_step(id: &str) -> String {
    let action = repo("action.yml");
    let at = action
        .find(&format!("- id: {id}\n"))
        .unwrap_or_else(|| panic!("no step {id}"));
    let rest = &action[at..];
    let run = rest.find("run: |\n").unwrap() + "run: |\n".len();
    let mut out = String::new();
    for line in rest[run..].lines() {
        if !line.is_empty() && !line.starts_with("        ") {
            break;
        }
        out.push_str(line.get(8..).unwrap_or(""));
        out.push('\n');
    }
    out
}

/// Runs the action's `target` step with a runner's OS and architecture and the ref in `uses:`;
/// returns what it wrote to `GITHUB_OUTPUT`.
fn install_target(os: &str, arch: &str, action_ref: &str, version: &str) -> String {
    let work = tempfile::tempdir().unwrap();
    let script = work.path().join("target.sh");
    std::fs::write(&script, action_step("target")).unwrap();
    let outputs = work.path().join("github_output");
    let out = Command::new("bash")
        .arg("-e")
        .arg(&script)
        .env("RUNNER_OS", os)
        .env("RUNNER_ARCH", arch)
        .env("RS_ACTION_REF", action_ref)
        .env("RS_ACTION_REPO", "acme/retrysafe")
        .env("RS_VERSION", version)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
        .env("GITHUB_OUTPUT", &outputs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(outputs).unwrap()
}

#[test]
fn the_github_action_downloads_the_release_for_the_runner_and_caches_it_by_architecture() {
    let action = repo("action.yml");
    // At a release tag: that release's asset for the runner, cached by version and target.
    assert_eq!(
        install_target("Linux", "ARM64", "v0.2.0", ""),
        "target=aarch64-unknown-linux-musl\nurl=https://github.com/acme/retrysafe/releases/download/v0.2.0/retrysafe-aarch64-unknown-linux-musl.tar.gz\nkey=retrysafe-v0.2.0-aarch64-unknown-linux-musl\n"
    );
    assert!(install_target("macOS", "X64", "main", "v1.0.0").contains(
        "url=https://github.com/acme/retrysafe/releases/download/v1.0.0/retrysafe-x86_64-apple-darwin.tar.gz"
    ));
    // At a branch: built from source, the key naming OS and architecture.
    let branch = install_target("Linux", "X64", "main", "");
    assert!(!branch.contains("url="), "{branch}");
    assert!(branch.contains("key=retrysafe-src-Linux-X64-"), "{branch}");
    assert_ne!(
        branch.lines().last(),
        install_target("Linux", "ARM64", "main", "").lines().last(),
        "the architecture is in the key"
    );
    // The download is checked, falls back to cargo, and the cache is saved before the gate.
    assert!(action.contains("test \"$expected\" = \"$actual\""));
    assert!(action.contains(
        "if: steps.cache.outputs.cache-hit != 'true' && steps.download.outputs.ok != 'true'"
    ));
    let save = action
        .find("uses: actions/cache/save@")
        .expect("an explicit save");
    assert!(
        save < action.find("- id: check").unwrap(),
        "saved before the check can fail"
    );
    assert!(
        !action.contains("uses: actions/cache@"),
        "no post-job save that a failure skips"
    );
}

#[test]
fn the_github_action_runs_check_uploads_sarif_and_fails_on_the_threshold() {
    let action = repo("action.yml");
    assert!(action.contains("using: composite"));
    assert!(action.contains("uses: github/codeql-action/upload-sarif@"));
    assert!(action.contains("cargo install --locked --path \"$GITHUB_ACTION_PATH\""));
    assert!(action.contains("if: ${{ steps.check.outputs.exit-code == '1' }}"));

    // Run the check step as GitHub would, on a sub-directory of the workspace.
    let work = tempfile::tempdir().unwrap();
    let shop = fixture_copy("express-shop");
    let svc = work.path().join("services/shop");
    std::fs::create_dir_all(svc.parent().unwrap()).unwrap();
    std::fs::rename(shop.path(), &svc)
        .or_else(|_| {
            // Different filesystems: copy instead.
            Command::new("cp")
                .args(["-r", shop.path().to_str().unwrap(), svc.to_str().unwrap()])
                .status()
                .map(|_| ())
        })
        .unwrap();
    let script = work.path().join("check.sh");
    std::fs::write(&script, action_step("check")).unwrap();
    let outputs = work.path().join("github_output");
    let summary = work.path().join("summary.md");
    let run = |fail_on: &str| {
        Command::new("bash")
            .arg("-e")
            .arg(&script)
            .current_dir(work.path())
            .env("PATH", path_with_binary())
            .env("NO_COLOR", "1")
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RS_PATH", "./services/shop/")
            .env("RS_FAIL_ON", fail_on)
            .env("RS_CONFIG", "")
            .env("RS_BASELINE", "")
            .env("RS_SARIF", "retrysafe.sarif")
            .output()
            .unwrap()
    };
    let out = run("critical");
    assert!(
        out.status.success(),
        "the step itself succeeds; a later step fails the job: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&outputs).unwrap(), "exit-code=1\n");
    let sarif: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(work.path().join("retrysafe.sarif")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "services/shop/src/routes/v1/orders.ts",
        "locations are made relative to the repository"
    );
    assert!(
        std::fs::read_to_string(&summary)
            .unwrap()
            .starts_with("# Idempotency audit")
    );
    std::fs::remove_file(&outputs).unwrap();
    assert!(run("none").status.success());
    assert_eq!(std::fs::read_to_string(&outputs).unwrap(), "exit-code=0\n");
}

#[test]
fn the_pre_commit_hook_blocks_a_critical() {
    let hooks = repo(".pre-commit-hooks.yaml");
    let entry = hooks
        .lines()
        .find_map(|l| l.trim().strip_prefix("entry: "))
        .expect("an entry");
    assert!(hooks.contains("language: rust") && hooks.contains("pass_filenames: false"));
    // A hook that uses an installed release binary: nothing to build.
    assert!(hooks.contains("- id: retrysafe-system\n"));
    assert!(hooks.contains("language: system"));
    let mut words = entry.split_whitespace();
    assert_eq!(words.next(), Some("retrysafe"));
    let args: Vec<&str> = words.collect();
    let run = |fixture: &str, extra: &[&str]| {
        let dir = fixture_copy(fixture);
        Command::new(env!("CARGO_BIN_EXE_retrysafe"))
            .args(&args)
            .args(extra)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let blocked = run("express-shop", &[]);
    assert_eq!(blocked.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&blocked.stdout).contains("RS001"));
    // The edge-forms app has highs but no critical; `args:` from a user's
    // .pre-commit-config.yaml are appended.
    assert_eq!(run("express-edge-forms", &[]).status.code(), Some(0));
    assert_eq!(
        run("express-edge-forms", &["--fail-on", "high"])
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn the_gitlab_job_commands_run_as_written() {
    let doc = repo("docs/ci.md");
    let start = doc.find("# .gitlab-ci.yml").expect("the GitLab snippet");
    let block = &doc[start..start + doc[start..].find("```").unwrap()];
    let commands: Vec<&str> = block
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- retrysafe "))
        .collect();
    assert_eq!(commands.len(), 4, "{block}");
    assert!(
        block.contains("releases/download"),
        "the release binary, not a build"
    );
    let dir = fixture_copy("express-shop");
    let mut codes = Vec::new();
    for c in &commands {
        let out = Command::new(env!("CARGO_BIN_EXE_retrysafe"))
            .args(c.split_whitespace())
            .current_dir(dir.path())
            .output()
            .unwrap();
        codes.push(out.status.code().unwrap());
    }
    assert_eq!(
        codes,
        vec![0, 0, 0, 1],
        "the last command gates on the critical"
    );
    let quality: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("gl-code-quality-report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(quality[0]["location"]["path"], "src/routes/v1/orders.ts");
    assert!(block.contains("codequality: gl-code-quality-report.json"));
    assert!(block.contains("junit: retrysafe-junit.xml"));
    for artifact in [
        "retrysafe.md",
        "retrysafe.json",
        "gl-code-quality-report.json",
        "retrysafe-junit.xml",
    ] {
        assert!(dir.path().join(artifact).is_file(), "{artifact}");
        assert!(block.contains(artifact));
    }
}

#[test]
fn it_is_released_software() {
    // Licensed, both ways.
    assert!(repo("LICENSE-MIT").starts_with("MIT License"));
    assert!(repo("LICENSE-APACHE").contains("Apache License"));
    assert!(repo("Cargo.toml").contains("license = \"MIT OR Apache-2.0\""));
    // A release on semver tags, for Linux and macOS on both architectures, with checksums, under
    // the names the action downloads.
    let release = repo(".github/workflows/release.yml");
    assert!(release.contains("tags: [\"v[0-9]+.[0-9]+.[0-9]+*\"]"));
    for target in [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(release.contains(&format!("target: {target},")), "{target}");
    }
    assert!(release.contains("name=retrysafe-${{ matrix.target }}"));
    assert!(release.contains("\"$name.tar.gz.sha256\""));
    assert!(release.contains("cargo build --locked"));
    assert!(release.contains("RETRYSAFE_COMMIT: ${{ github.sha }}"));
    // A small image: a multi-stage build, the static binary on distroless.
    let docker = repo("Dockerfile");
    assert!(docker.contains("FROM rust:1-alpine AS build"));
    assert!(docker.contains("cargo build --locked"));
    assert!(docker.contains("FROM gcr.io/distroless/static"));
    // The lock file is honoured everywhere retrysafe is installed from source.
    let readme = repo("README.md");
    assert!(readme.contains("cargo install --locked"));
    assert!(
        !readme.contains("cargo install --path ."),
        "without --locked"
    );
}

#[test]
fn version_names_the_commit() {
    let out = Command::new(env!("CARGO_BIN_EXE_retrysafe"))
        .arg("--version")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let want = format!("retrysafe {} (", env!("CARGO_PKG_VERSION"));
    assert!(text.starts_with(&want), "{text}");
    let commit = text
        .trim_end()
        .strip_prefix(&want)
        .unwrap()
        .strip_suffix(')')
        .unwrap();
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{commit}"
    );
}
