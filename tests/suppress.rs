//! `retrysafe-ignore` comments through the binary: which forms silence what, what is reported, and
//! how suppressed findings show in each output.

mod common;

use common::run_in;
use serde_json::Value;
use std::fs;

/// An Express app with four unprotected creates, each with a different suppression comment.
fn app() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(
        dir.path().join("src/app.ts"),
        r#"import express from 'express';
import { PrismaClient } from '@prisma/client';

const prisma = new PrismaClient();
const app = express();

const create = async (req, res) => res.json(await prisma.note.create({ data: req.body }));

// retrysafe-ignore RS003: notes are drafts, a duplicate is harmless
app.post('/notes', create);
app.post('/drafts', create); /* retrysafe-ignore RS003: merged nightly */
// retrysafe-ignore RS003
app.post('/tags', create);
// retrysafe-ignore RS001: nothing is charged here
// (the comment above names the wrong rule)
app.post('/labels', create);
// retrysafe-ignore RS777: no such rule
app.post('/folders', create);

export default app;
"#,
    )
    .unwrap();
    dir
}

fn finding<'a>(report: &'a Value, endpoint: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["endpoint"] == endpoint)
        .unwrap_or_else(|| panic!("no finding for {endpoint}: {report:#}"))
}

#[test]
fn reasoned_suppressions_silence_and_the_rest_are_reported() {
    let dir = app();
    let root = dir.path().to_str().unwrap();
    let (code, out, err) = run_in(&["check", root, "--format", "json", "--fail-on", "high"]);
    assert_eq!(code, 1, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();

    let notes = finding(&report, "POST /notes");
    assert_eq!(notes["suppressed"], true);
    assert_eq!(
        notes["suppression_reason"],
        "notes are drafts, a duplicate is harmless"
    );
    let drafts = finding(&report, "POST /drafts");
    assert_eq!(drafts["suppressed"], true, "trailing /* */ form");
    assert_eq!(drafts["suppression_reason"], "merged nightly");
    for unsilenced in ["POST /tags", "POST /labels", "POST /folders"] {
        let f = finding(&report, unsilenced);
        assert_eq!(f["suppressed"], false, "{unsilenced}");
        assert!(f.get("suppression_reason").is_none());
    }
    // Every finding says whether it is suppressed or baselined.
    for f in report["findings"].as_array().unwrap() {
        assert!(f["suppressed"].is_boolean() && f["baselined"].is_boolean());
    }
    assert_eq!(report["summary"]["by_severity"]["high"], 3);
    assert_eq!(report["summary"]["suppressed"], 2);

    let diags: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{}:{} {}", d["file"], d["line"], d["message"]))
        .collect();
    let has = |line: u32, words: &str| {
        diags
            .iter()
            .any(|d| d.starts_with(&format!("\"src/app.ts\":{line} ")) && d.contains(words))
    };
    assert!(
        has(12, "has no reason, so it suppresses nothing"),
        "{diags:#?}"
    );
    assert!(has(14, "matches no RS001 finding at line 16"), "{diags:#?}");
    assert!(has(17, "`RS777`, which is not a rule"), "{diags:#?}");
    assert_eq!(diags.len(), 3, "{diags:#?}");
}

#[test]
fn suppressed_findings_do_not_gate_and_are_left_out_of_human_outputs() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("app.js"),
        "const express = require('express');\nconst Stripe = require('stripe');\nconst stripe = new Stripe('sk');\nconst app = express();\napp.post('/pay', async (req, res) => { // retrysafe-ignore RS001: test-mode account only\n  res.json(await stripe.charges.create({ amount: 1 }));\n});\n",
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    let (code, out, _) = run_in(&["check", root]);
    assert_eq!(
        code, 0,
        "a suppressed critical does not fail the build: {out}"
    );
    assert!(out.contains("No findings."), "{out}");
    assert!(out.contains("0 critical"), "{out}");
    assert!(out.contains("; 1 suppressed"), "{out}");
    let (_, table, _) = run_in(&["check", root, "--format", "table"]);
    assert!(table.starts_with("No findings."), "{table}");
    let (_, md, _) = run_in(&["check", root, "--format", "markdown"]);
    assert!(
        md.contains("- Accepted: 1 suppressed in the source"),
        "{md}"
    );
    assert!(!md.contains("### RS001"), "{md}");
    let (_, sarif, _) = run_in(&["check", root, "--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&sarif).unwrap();
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "RS001");
    assert_eq!(result["suppressions"][0]["kind"], "inSource");
    assert_eq!(
        result["suppressions"][0]["justification"],
        "test-mode account only"
    );
}

#[test]
fn suppressions_of_a_rule_turned_off_are_not_stale() {
    let dir = app();
    fs::write(
        dir.path().join("retrysafe.toml"),
        "[rules.RS001]\nenabled = false\n",
    )
    .unwrap();
    let (_, out, _) = run_in(&["check", dir.path().to_str().unwrap(), "--format", "json"]);
    let report: Value = serde_json::from_str(&out).unwrap();
    let diags = report["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 2, "{diags:#?}");
    assert!(
        diags
            .iter()
            .all(|d| !d["message"].as_str().unwrap().contains("matches no RS001"))
    );
}
