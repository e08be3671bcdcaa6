//! `retrysafe.toml` through the binary: the project's sinks, headers and middleware; ignores;
//! severity overrides and disabled rules; and mistakes reported with their line and column.

mod common;

use common::{fixture, fixture_copy, run_in};
use serde_json::Value;
use std::fs;
use std::path::Path;

const APP: &str = r#"const express = require('express');
const billing = require('@acme/billing');
const { keyed } = require('@acme/idempotency');

const app = express();

app.post('/charge', async (req, res) => {
  res.json(await billing.charge(req.body));
});

app.post('/charge-keyed', async (req, res) => {
  const key = req.get('X-Client-Key');
  res.json(await billing.charge(req.body, key));
});

app.post('/charge-mw', keyed(), async (req, res) => {
  res.json(await billing.charge(req.body));
});

module.exports = app;
"#;

const WRAPPERS: &str = r#"[headers]
names = ["X-Client-Key"]

[[sink]]
id = "acme-billing"
lang = "ts"
kind = "payment"
label = "ACME billing charge"
packages = ["@acme/billing"]
calls = ["charge"]

[[middleware]]
id = "acme-idempotency"
lang = "ts"
packages = ["@acme/idempotency"]
label = "ACME idempotency middleware"
"#;

fn json(args: &[&str]) -> Value {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json", "--fail-on", "none"]);
    let (code, out, err) = run_in(&all);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn endpoint<'a>(report: &'a Value, path: &str) -> &'a Value {
    report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == path)
        .unwrap_or_else(|| panic!("no {path}"))
}

fn rules_of(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["rule"].as_str().unwrap(),
                f["severity"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn the_projects_sinks_headers_and_middleware_extend_the_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/app.js"), APP).unwrap();
    let root = dir.path().to_str().unwrap();

    // Without configuration, `billing.charge` is unknown: nothing to report.
    let plain = json(&[root]);
    assert!(rules_of(&plain).is_empty(), "{plain:#}");

    // Found at the root.
    fs::write(dir.path().join("retrysafe.toml"), WRAPPERS).unwrap();
    let report = json(&[root]);
    // The two keyed routes have no test that repeats a key (RS020).
    assert_eq!(
        rules_of(&report),
        vec!["RS001 critical", "RS020 low", "RS020 low"]
    );
    assert_eq!(report["findings"][0]["endpoint"], "POST /charge");
    let payment = &endpoint(&report, "/charge")["side_effects"][0];
    assert_eq!(payment["kind"], "payment");
    assert_eq!(payment["label"], "ACME billing charge");
    assert_eq!(
        endpoint(&report, "/charge-keyed")["classification"],
        "idempotent_with_key"
    );
    let mw = &endpoint(&report, "/charge-mw")["mechanisms"][0];
    assert_eq!(mw["kind"], "header_key");
    assert!(
        mw["detail"]
            .as_str()
            .unwrap()
            .contains("ACME idempotency middleware")
    );
    let (code, _, _) = run_in(&["check", root]);
    assert_eq!(code, 1);

    // Given elsewhere with --config (and then the root's file is not read).
    let other = tempfile::tempdir().unwrap();
    let cfg = other.path().join("ci.toml");
    fs::write(&cfg, "[rules.RS001]\nenabled = false\n").unwrap();
    let report = json(&[root, "--config", cfg.to_str().unwrap()]);
    assert!(rules_of(&report).is_empty(), "{report:#}");
}

#[test]
fn severity_overrides_and_disabled_rules() {
    let dir = fixture_copy("express-shop");
    let root = dir.path().to_str().unwrap();
    fs::write(
        dir.path().join("retrysafe.toml"),
        "[rules.side-effect-without-idempotency]\nseverity = \"low\"\n\n[rules.RS001]\nseverity = \"high\"\n",
    )
    .unwrap();
    let report = json(&[root]);
    assert_eq!(
        rules_of(&report),
        vec![
            "RS001 high",
            "RS001 high",
            "RS003 low",
            "RS003 low",
            "RS003 low"
        ]
    );
    assert_eq!(report["summary"]["by_severity"]["critical"], 0);
    assert_eq!(report["summary"]["by_severity"]["low"], 3);
    assert_eq!(endpoint(&report, "/api/v1/refunds")["severity"], "high");
    assert_eq!(run_in(&["check", root]).0, 0, "no critical left");
    assert_eq!(run_in(&["check", root, "--fail-on", "high"]).0, 1);
    let (_, sarif, _) = run_in(&["check", root, "--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&sarif).unwrap();
    assert_eq!(sarif["runs"][0]["results"][0]["level"], "error");
    assert_eq!(
        sarif["runs"][0]["results"][0]["properties"]["security-severity"],
        "7.5"
    );

    fs::write(
        dir.path().join("retrysafe.toml"),
        "[rules.RS001]\nenabled = false\n[rules.RS003]\nenabled = false\n",
    )
    .unwrap();
    let report = json(&[root]);
    assert!(rules_of(&report).is_empty());
    assert_eq!(endpoint(&report, "/api/v1/refunds")["severity"], "none");
}

#[test]
fn ignore_patterns_leave_files_out_of_the_scan() {
    let dir = fixture_copy("express-shop");
    let root = dir.path();
    fs::create_dir_all(root.join("legacy")).unwrap();
    fs::write(root.join("legacy/broken.ts"), "export function f( {\n").unwrap();
    fs::write(root.join("src/orders.spec.ts"), "export function g( {\n").unwrap();
    let before = json(&[root.to_str().unwrap()]);
    assert_eq!(
        before["diagnostics"].as_array().unwrap().len(),
        2,
        "{before:#}"
    );

    fs::write(
        root.join("retrysafe.toml"),
        "ignore = [\"legacy/\", \"*.spec.ts\", \"/src/routes/v1/refunds.ts\"]\n",
    )
    .unwrap();
    let after = json(&[root.to_str().unwrap()]);
    assert!(
        after["diagnostics"].as_array().unwrap().is_empty(),
        "{after:#}"
    );
    assert_eq!(
        after["summary"]["files_scanned"].as_u64().unwrap(),
        before["summary"]["files_scanned"].as_u64().unwrap() - 3
    );
    let paths: Vec<&str> = after["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(!paths.contains(&"/api/v1/refunds"), "{paths:?}");
    assert!(paths.contains(&"/api/v1/orders/{id}/pay"), "{paths:?}");

    // The inventory reads the same configuration.
    let (code, inv, _) = run_in(&["inventory", root.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(code, 0);
    assert!(!inv.contains("/api/v1/refunds"), "{inv}");
}

fn bad_config(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("retrysafe.toml"), text).unwrap();
    let shop = fixture("express-shop");
    let (code, out, err) = run_in(&[
        "check",
        shop.to_str().unwrap(),
        "--config",
        dir.path().join("retrysafe.toml").to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(!err.contains('\u{1b}'), "NO_COLOR: {err}");
    err
}

fn located(err: &str, line: u32, col: u32) -> bool {
    err.contains(&format!("retrysafe.toml:{line}:{col}"))
}

#[test]
fn a_bad_configuration_is_exit_2_with_line_and_column() {
    let err = bad_config("ignore = [\"legacy\"]\ncall_depht = 3\n");
    assert!(located(&err, 2, 1), "{err}");
    assert!(err.contains("unknown field `call_depht`"), "{err}");
    assert!(
        err.contains("call_depth = 3") || err.contains("call_depht = 3"),
        "{err}"
    );

    let err = bad_config("[rules.RS003]\nseverity = \"severe\"\n");
    assert!(located(&err, 2, 12), "{err}");
    assert!(err.contains("unknown variant `severe`"), "{err}");

    let err = bad_config("# ok\n[rules.RS404]\nenabled = false\n");
    assert!(located(&err, 2, 8), "{err}");
    assert!(err.contains("unknown rule `RS404`"), "{err}");
    assert!(err.contains("retrysafe rules"), "{err}");

    let err = bad_config("call_depth = 0\n");
    assert!(located(&err, 1, 14), "{err}");

    let err = bad_config("ignore = [\"src/{a,b\"]\n");
    assert!(located(&err, 1, 11), "{err}");
    assert!(err.contains("not a valid pattern"), "{err}");

    let err =
        bad_config("[[sink]]\nid = \"x\"\nlang = \"ts\"\nkind = \"payment\"\npackages = [\"x\"]\n");
    assert!(err.contains("neither `calls` nor `constructs`"), "{err}");
    assert!(err.contains("retrysafe.toml:"), "{err}");

    let err =
        bad_config("[[sink]]\nid = \"x\"\nlang = \"ts\"\nkind = \"money\"\ncalls = [\"pay\"]\n");
    assert!(located(&err, 4, 8), "{err}");

    // A sink for a language retrysafe does not read is refused, not silently never matched.
    let err = bad_config(
        "[[sink]]\nid = \"x\"\nlang = \"python\"\nkind = \"payment\"\ncalls = [\"pay\"]\n",
    );
    assert!(located(&err, 3, 8), "{err}");
    assert!(err.contains("expected `ts` or `rust`"), "{err}");

    let err = bad_config("[[mount]]\nfile = \"src/app.ts\"\nprefix = \"/admin\"\n");
    assert!(err.contains("needs `line` or `expression`"), "{err}");

    let err = bad_config("ignore = \"legacy\"\n");
    assert!(located(&err, 1, 10), "{err}");

    let err = bad_config("[rules.RS001]\nseverity = \"none\"\n");
    assert!(err.contains("enabled = false"), "{err}");
}

#[test]
fn a_missing_explicit_config_is_exit_2() {
    let shop = fixture("express-shop");
    let (code, _, err) = run_in(&[
        "check",
        shop.to_str().unwrap(),
        "--config",
        "/nonexistent/retrysafe.toml",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read configuration"), "{err}");
    assert!(Path::new(&shop).join("src").is_dir());
}

#[test]
fn mount_prefixes_and_call_depth_are_accepted() {
    // Stored for the linker (see docs/configuration.md); a valid file must not be an error.
    let dir = fixture_copy("express-shop");
    fs::write(
        dir.path().join("retrysafe.toml"),
        "call_depth = 12\n\n[[mount]]\nfile = \"src/app.ts\"\nexpression = \"process.env.ADMIN_PREFIX\"\nprefix = \"/admin\"\n\n[[mount]]\nfile = \"src/routes/index.ts\"\nline = 9\nprefix = \"/v2\"\n",
    )
    .unwrap();
    let report = json(&[dir.path().to_str().unwrap()]);
    assert_eq!(report["summary"]["by_severity"]["critical"], 2);
}
