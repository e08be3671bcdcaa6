//! Configuration that changes what the linker finds: known mount prefixes and call depth.

mod common;

use std::fs;

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn paths(report: &serde_json::Value) -> Vec<String> {
    report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["method"].as_str().unwrap(),
                e["path"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn a_configured_prefix_mounts_a_dynamic_router() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&common::fixture("express-edge-forms"), dir.path());
    let before = common::json_report(dir.path());
    assert!(
        !paths(&before).iter().any(|p| p.contains("/ops/")),
        "{:?}",
        paths(&before)
    );
    fs::write(
        dir.path().join("retrysafe.toml"),
        "[[mount]]\nfile = \"src/app.js\"\nexpression = \"process.env.ADMIN_PREFIX\"\nprefix = \"/ops\"\n",
    )
    .unwrap();
    let after = common::json_report(dir.path());
    let found: Vec<String> = paths(&after)
        .into_iter()
        .filter(|p| p.contains(" /ops/"))
        .collect();
    assert!(!found.is_empty(), "{:?}", paths(&after));
    assert!(
        !after["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["message"].as_str().unwrap().contains("ADMIN_PREFIX"))
    );
}

#[test]
fn a_configured_prefix_completes_a_controller_whose_decorator_builds_its_path() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&common::fixture("nestjs-wrapped-controller"), dir.path());
    let before = common::json_report(dir.path());
    assert!(
        paths(&before).contains(&"POST /says".to_string()),
        "{:?}",
        paths(&before)
    );
    fs::write(
        dir.path().join("retrysafe.toml"),
        "[[mount]]\nfile = \"src/says/say.controller.ts\"\nline = 5\nprefix = \"/api/v3\"\n",
    )
    .unwrap();
    let after = common::json_report(dir.path());
    assert_eq!(
        paths(&after),
        [
            "POST /api/v3/says",
            "DELETE /api/v3/says/{id}",
            "PUT /api/v3/says/{id}"
        ],
    );
    assert!(
        after["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["path_complete"] == true)
    );
    assert!(after["diagnostics"].as_array().unwrap().is_empty());
}

#[test]
fn call_depth_bounds_how_far_effects_are_followed() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&common::fixture("express-shop"), dir.path());
    let pay = |report: &serde_json::Value| {
        report["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["path"] == "/api/v1/orders/{id}/pay")
            .unwrap()["side_effects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "payment")
    };
    assert!(
        pay(&common::json_report(dir.path())),
        "the charge is three calls down"
    );
    fs::write(dir.path().join("retrysafe.toml"), "call_depth = 1\n").unwrap();
    let cut = common::json_report(dir.path());
    assert!(!pay(&cut), "with call_depth = 1 it is out of reach");
    // The cut is never silent.
    assert!(
        common::mentions_diagnostic(&cut, "calls were followed 1 deep"),
        "{:#?}",
        cut["diagnostics"]
    );
}

#[test]
fn a_configured_webhook_provider_makes_a_receiver() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(
        dir.path().join("src/app.js"),
        "const express = require('express');\nimport { verifySignature } from '@acme/webhooks';\nconst { PrismaClient } = require('@prisma/client');\nconst prisma = new PrismaClient();\nconst app = express();\napp.post('/acme/events', async (req, res) => {\n  verifySignature(req.body, req.get('x-acme-sig'));\n  await prisma.order.create({ data: { ref: req.body.ref } });\n  res.sendStatus(200);\n});\n",
    )
    .unwrap();
    let rules = |report: &serde_json::Value| -> Vec<String> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(rules(&common::json_report(dir.path())), vec!["RS003"]);
    fs::write(
        dir.path().join("retrysafe.toml"),
        "[[webhook]]\nid = \"acme\"\nlang = \"ts\"\nkind = \"webhook_receiver\"\npackages = [\"@acme/webhooks\"]\ncalls = [\"verifySignature\"]\n",
    )
    .unwrap();
    assert_eq!(rules(&common::json_report(dir.path())), vec!["RS002"]);
}
