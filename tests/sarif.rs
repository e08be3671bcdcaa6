//! `--format sarif` through the binary: valid against the official SARIF 2.1.0 schema (vendored
//! in tests/data), with what GitHub code scanning reads.

mod common;

use common::{fixture, run_in};
use serde_json::Value;

fn sarif_schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/sarif-schema-2.1.0.json"
    ))
    .unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft4::new(&schema).expect("the SARIF schema compiles")
}

fn assert_valid(validator: &jsonschema::Validator, log: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

fn sarif(args: &[&str]) -> Value {
    let (code, out, err) = run_in(args);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn every_fixture_validates_against_the_sarif_schema() {
    let validator = sarif_schema();
    let dir = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures")).unwrap();
    let mut seen = 0;
    for entry in dir {
        let path = entry.unwrap().path();
        let log = sarif(&["check", path.to_str().unwrap(), "--format", "sarif"]);
        assert_valid(&validator, &log, &path.display().to_string());
        seen += 1;
    }
    assert!(seen >= 3);
    // The validator does reject what is not SARIF.
    let mut wrong = sarif(&[
        "check",
        fixture("express-shop").to_str().unwrap(),
        "--format",
        "sarif",
    ]);
    wrong["runs"][0]["results"][0]["level"] = "fatal".into();
    wrong["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    assert_eq!(validator.iter_errors(&wrong).count(), 2);
    // A tree with parse errors (tool notifications) validates too.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("broken.ts"), "export function f( {\n").unwrap();
    let log = sarif(&["check", tmp.path().to_str().unwrap(), "--format", "sarif"]);
    assert_valid(&validator, &log, "broken tree");
    let notes = &log["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    assert_eq!(
        notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "broken.ts"
    );
}

#[test]
fn results_carry_what_code_scanning_reads() {
    let shop = fixture("express-shop");
    let log = sarif(&["check", shop.to_str().unwrap(), "--format", "sarif"]);
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "retrysafe");
    let rules = driver["rules"].as_array().unwrap();
    let rs001 = rules.iter().find(|r| r["id"] == "RS001").unwrap();
    assert_eq!(rs001["name"], "payment-without-idempotency");
    assert_eq!(rs001["defaultConfiguration"]["level"], "error");
    assert_eq!(rs001["properties"]["security-severity"], "9.5");
    assert!(
        rs001["help"]["markdown"]
            .as_str()
            .unwrap()
            .contains("## Why is this bad?")
    );
    assert!(
        rs001["fullDescription"]["text"]
            .as_str()
            .unwrap()
            .starts_with("Flags a mutation endpoint that reaches a payment sink")
    );
    let rs023 = rules.iter().find(|r| r["id"] == "RS023").unwrap();
    assert_eq!(rs023["defaultConfiguration"]["level"], "note");
    assert!(rs023["properties"].get("security-severity").is_none());

    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    let pay = &results[0];
    assert_eq!(pay["ruleId"], "RS001");
    assert_eq!(
        rules[pay["ruleIndex"].as_u64().unwrap() as usize]["id"],
        "RS001"
    );
    assert_eq!(pay["level"], "error");
    assert_eq!(pay["properties"]["security-severity"], "9.5");
    assert_eq!(
        pay["properties"]["endpoint"],
        "POST /api/v1/orders/{id}/pay"
    );
    let loc = &pay["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "src/routes/v1/orders.ts");
    assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    assert_eq!(loc["region"]["startLine"], 20);
    let related = &pay["relatedLocations"][0]["physicalLocation"];
    assert_eq!(
        related["artifactLocation"]["uri"],
        "src/services/payments.ts"
    );
    assert_eq!(related["region"]["startLine"], 19);
    assert!(
        pay["message"]["text"]
            .as_str()
            .unwrap()
            .contains("Change: ")
    );

    // The partial fingerprint is the JSON report's fingerprint.
    let report = common::json_report(&shop);
    assert_eq!(
        pay["partialFingerprints"]["retrysafe/v1"],
        report["findings"][0]["fingerprint"]
    );
    // Highs rank below criticals.
    let high = results.iter().find(|r| r["ruleId"] == "RS003").unwrap();
    assert_eq!(high["properties"]["security-severity"], "7.5");
    assert!(pay.get("baselineState").is_none());
}

#[test]
fn sarif_is_written_to_the_output_file_and_fails_on_the_threshold() {
    let shop = fixture("express-shop");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("retrysafe.sarif");
    let (code, stdout, _) = run_in(&[
        "check",
        shop.to_str().unwrap(),
        "--format",
        "sarif",
        "--output",
        out.to_str().unwrap(),
        "--fail-on",
        "critical",
    ]);
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_valid(&sarif_schema(), &log, "written file");
}

#[test]
fn baselined_results_are_unchanged_and_new_ones_new() {
    let dir = common::fixture_copy("express-shop");
    let root = dir.path().to_str().unwrap();
    let base = dir.path().join("base.json");
    let (code, _, _) = run_in(&[
        "check",
        root,
        "--quiet",
        "--write-baseline",
        base.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&base).unwrap();
    // Forget one finding so it comes back as new.
    let mut b: Value = serde_json::from_str(&text).unwrap();
    b["findings"].as_array_mut().unwrap().remove(0);
    std::fs::write(&base, b.to_string()).unwrap();
    let log = sarif(&[
        "check",
        root,
        "--format",
        "sarif",
        "--baseline",
        base.to_str().unwrap(),
    ]);
    assert_valid(&sarif_schema(), &log, "baselined");
    let states: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["baselineState"].as_str().unwrap())
        .collect();
    assert_eq!(states.iter().filter(|s| **s == "new").count(), 1);
    assert_eq!(states.iter().filter(|s| **s == "unchanged").count(), 4);
}
