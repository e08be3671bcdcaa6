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
    assert_eq!(commands.len(), 3, "{block}");
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
        vec![0, 0, 1],
        "the last command gates on the critical"
    );
    for artifact in ["retrysafe.md", "retrysafe.sarif", "retrysafe.json"] {
        assert!(dir.path().join(artifact).is_file(), "{artifact}");
        assert!(block.contains(artifact));
    }
}
