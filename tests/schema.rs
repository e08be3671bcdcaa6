//! The JSON report's schema: generated from the Rust types, shipped as docs/report.schema.json,
//! and every report validates against it.

mod common;

use common::run_in;
use serde_json::Value;

const SHIPPED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/report.schema.json");

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(SHIPPED).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("the report schema compiles")
}

fn errors(v: &jsonschema::Validator, report: &Value) -> Vec<String> {
    v.iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn the_shipped_schema_is_the_generated_one() {
    let (code, generated, _) = run_in(&["schema"]);
    assert_eq!(code, 0);
    let shipped = std::fs::read_to_string(SHIPPED).unwrap();
    assert!(
        generated == shipped,
        "docs/report.schema.json is stale: regenerate it with `cargo run -- schema > docs/report.schema.json`"
    );
}

#[test]
fn every_fixture_report_validates() {
    let v = validator();
    let mut seen = 0;
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures")).unwrap() {
        let path = entry.unwrap().path();
        let report = common::json_report(&path);
        let errs = errors(&v, &report);
        assert!(errs.is_empty(), "{}: {errs:#?}", path.display());
        seen += 1;
    }
    assert!(seen >= 3);
}

#[test]
fn suppressed_and_baselined_reports_validate_and_a_dropped_field_does_not() {
    let dir = common::fixture_copy("express-shop");
    let root = dir.path();
    let orders = root.join("src/routes/v1/orders.ts");
    let text = std::fs::read_to_string(&orders).unwrap();
    std::fs::write(
        &orders,
        text.replace(
            "router.post('/:id/pay'",
            "// retrysafe-ignore RS001: demo\nrouter.post('/:id/pay'",
        ),
    )
    .unwrap();
    let base = root.join("base.json");
    run_in(&[
        "check",
        root.to_str().unwrap(),
        "-q",
        "--write-baseline",
        base.to_str().unwrap(),
    ]);
    let (_, out, _) = run_in(&[
        "check",
        root.to_str().unwrap(),
        "--format",
        "json",
        "--baseline",
        base.to_str().unwrap(),
    ]);
    let mut report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["summary"]["suppressed"], 1);
    assert_eq!(report["summary"]["baselined"], 4);
    let v = validator();
    assert_eq!(errors(&v, &report), Vec::<String>::new());
    report["findings"][0]
        .as_object_mut()
        .unwrap()
        .remove("fingerprint");
    report["endpoints"][0]["severity"] = "catastrophic".into();
    assert_eq!(errors(&v, &report).len(), 2);
}
