//! Baselines through the binary: accepted findings stop failing the build, new ones still do, and a
//! fingerprint survives lines inserted above its route.

mod common;

use common::{fixture_copy, run_in};
use serde_json::Value;
use std::fs;
use std::path::Path;

const ORDERS: &str = "src/routes/v1/orders.ts";

fn edit(root: &Path, file: &str, f: impl FnOnce(String) -> String) {
    let path = root.join(file);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, f(text)).unwrap();
}

fn json(root: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["check", root, "--format", "json"];
    args.extend_from_slice(extra);
    let (code, out, err) = run_in(&args);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    (code, serde_json::from_str(&out).unwrap())
}

fn gating(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["severity"] == "critical" && f["baselined"] == false && f["suppressed"] == false
        })
        .map(|f| f["endpoint"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_baseline_fails_only_on_the_new_critical_and_a_reasoned_ignore_clears_it() {
    let dir = fixture_copy("express-shop");
    let root = dir.path().to_str().unwrap();
    let baseline = dir.path().join("retrysafe-baseline.json");
    let baseline = baseline.to_str().unwrap();

    // Today: two criticals. Writing the baseline exits 0 and records them.
    let (code, _, err) = run_in(&["check", root, "--write-baseline", baseline]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("wrote a baseline of 5 findings"), "{err}");
    let written: Value = serde_json::from_str(&fs::read_to_string(baseline).unwrap()).unwrap();
    let entries = written["findings"].as_array().unwrap();
    assert_eq!(entries.len(), 5);
    assert!(entries.iter().any(|e| e["rule"] == "RS001"
        && e["endpoint"] == "POST /api/v1/orders/{id}/pay"
        && e["file"] == ORDERS
        && e["fingerprint"].as_str().unwrap().len() == 16));

    // With the baseline and nothing changed: exit 0, findings still shown, marked baselined.
    let (code, report) = json(root, &["--baseline", baseline]);
    assert_eq!(code, 0);
    assert_eq!(report["summary"]["by_severity"]["critical"], 2);
    assert_eq!(report["summary"]["baselined"], 5);
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["baselined"] == true)
    );

    // Lines inserted above the routes, and a new critical endpoint.
    edit(dir.path(), ORDERS, |t| {
        t.replace(
            "const router = Router();\n",
            "const router = Router();\n\n// Orders API.\nconst PAGE_SIZE = 50;\nexport { PAGE_SIZE };\n",
        )
        .replace(
            "// expect: RS003\nrouter.post('/:id/receipt'",
            "router.post('/:id/capture', validateParams(idParam), orders.payOrder);\n// expect: RS003\nrouter.post('/:id/receipt'",
        )
    });
    let (code, report) = json(root, &["--baseline", baseline]);
    assert_eq!(code, 1, "the new critical fails the build");
    assert_eq!(gating(&report), vec!["POST /api/v1/orders/{id}/capture"]);
    let pay = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["endpoint"] == "POST /api/v1/orders/{id}/pay")
        .unwrap();
    assert_eq!(pay["line"], 24, "the route moved down four lines");
    assert_eq!(pay["baselined"], true, "and its fingerprint did not change");

    // The terminal output lists the new one only, and counts the known ones.
    let (code, text, _) = run_in(&["check", root, "--baseline", baseline]);
    assert_eq!(code, 1);
    assert!(
        text.starts_with(
            "RS001 payment-without-idempotency (critical, likely): `POST /api/v1/orders/{id}/capture`\n"
        ),
        "{text}"
    );
    assert!(!text.contains("`POST /api/v1/orders/{id}/pay`"), "{text}");
    assert!(text.contains("; 1 new, 5 known"), "{text}");

    // Accepting it in the source, with a reason: exit 0.
    edit(dir.path(), ORDERS, |t| {
        t.replace(
            "router.post('/:id/capture'",
            "// retrysafe-ignore RS001: accepted for the demo\nrouter.post('/:id/capture'",
        )
    });
    let (code, report) = json(root, &["--baseline", baseline]);
    assert_eq!(code, 0, "{report:#}");
    assert!(gating(&report).is_empty());
    let capture = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["endpoint"] == "POST /api/v1/orders/{id}/capture")
        .unwrap();
    assert_eq!(capture["suppressed"], true);
    assert_eq!(capture["suppression_reason"], "accepted for the demo");
}

#[test]
fn a_missing_or_malformed_baseline_is_exit_2() {
    let shop = common::fixture("express-shop");
    let shop = shop.to_str().unwrap();
    let (code, _, err) = run_in(&["check", shop, "--baseline", "/nonexistent/baseline.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read baseline"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("b.json");
    fs::write(&bad, "{\"findings\": 3}").unwrap();
    let (code, _, err) = run_in(&["check", shop, "--baseline", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("is not a retrysafe baseline"), "{err}");
}

#[test]
fn the_baseline_file_is_deterministic() {
    let shop = common::fixture("express-shop");
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    for f in [&a, &b] {
        let (code, _, _) = run_in(&[
            "check",
            shop.to_str().unwrap(),
            "--quiet",
            "--format",
            "json",
            "--write-baseline",
            f.to_str().unwrap(),
        ]);
        assert_eq!(code, 0);
    }
    assert_eq!(fs::read(a).unwrap(), fs::read(b).unwrap());
}
