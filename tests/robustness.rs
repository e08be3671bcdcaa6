//! Bad input never costs the rest of the audit: each problem file becomes a diagnostic.

mod common;

use std::fs;

#[test]
fn hostile_tree_audits_to_completion_with_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src/vendor")).unwrap();
    // A healthy app that must still be found.
    fs::write(
        root.join("src/app.js"),
        "const express = require('express');\nconst { PrismaClient } = require('@prisma/client');\nconst prisma = new PrismaClient();\nconst app = express();\napp.post('/notes', async (req, res) => {\n  res.json(await prisma.note.create({ data: req.body }));\n});\n",
    )
    .unwrap();
    // Registration look-alikes with missing arguments (once a panic in the front end).
    fs::write(
        root.join("src/odd.js"),
        "const app = require('express')();\nconst f = require('fastify')();\nf.register();\nf.route();\napp.use();\napp.post();\nf.withTypeProvider().post();\n",
    )
    .unwrap();
    // A syntax error.
    fs::write(
        root.join("src/broken.ts"),
        "export function f( {\n  return 1 +;\n}\n",
    )
    .unwrap();
    // A 5 MiB minified bundle (over the size cap).
    let mut bundle = String::with_capacity(5 * 1024 * 1024 + 64);
    while bundle.len() < 5 * 1024 * 1024 {
        bundle.push_str("var a=function(b){return b+1};");
    }
    fs::write(root.join("src/vendor/bundle.js"), &bundle).unwrap();
    // A smaller minified file, under the cap.
    fs::write(root.join("src/vendor/small.js"), &bundle[..100_000]).unwrap();
    // Not UTF-8.
    fs::write(root.join("src/latin1.js"), b"const s = '\xe9t\xe9';\n").unwrap();
    // Binary.
    fs::write(root.join("src/blob.js"), b"\x00\x01\x02binary").unwrap();
    // 50,000-deep nested expressions, one level a line so they are not taken for minified code.
    let depth = 50_000;
    fs::write(
        root.join("src/deep.js"),
        format!(
            "const x = {}1{};\n",
            "(\n".repeat(depth),
            ")\n".repeat(depth)
        ),
    )
    .unwrap();
    fs::write(
        root.join("src/deep_calls.js"),
        format!(
            "const y = {}0{};\n",
            "f(\n".repeat(depth),
            ")\n".repeat(depth)
        ),
    )
    .unwrap();
    fs::write(
        root.join("src/deep_arrays.ts"),
        format!(
            "export const z = {}{};\n",
            "[\n".repeat(depth),
            "]\n".repeat(depth)
        ),
    )
    .unwrap();
    // A symlink loop.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("..", root.join("src/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("src/self"), root.join("src/self")).ok();
    }

    let out = common::json_check(root).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let diags: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}:{} {}",
                d["file"].as_str().unwrap(),
                d["line"],
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    let has = |file: &str, words: &str| {
        diags
            .iter()
            .any(|d| d.starts_with(file) && d.contains(words))
    };
    assert!(has("src/broken.ts", "parse error"), "{diags:#?}");
    assert!(has("src/vendor/bundle.js", "size cap"), "{diags:#?}");
    assert!(has("src/vendor/small.js", "minified"), "{diags:#?}");
    assert!(has("src/latin1.js", "UTF-8"), "{diags:#?}");
    assert!(has("src/blob.js", "binary"), "{diags:#?}");
    for deep in ["src/deep.js", "src/deep_calls.js", "src/deep_arrays.ts"] {
        assert!(has(deep, "nested deeper"), "{diags:#?}");
    }
    let endpoints = report["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 1, "{endpoints:#?}");
    assert_eq!(endpoints[0]["path"], "/notes");
    assert_eq!(endpoints[0]["severity"], "high");
}

#[test]
fn missing_path_is_exit_2_with_a_message() {
    let out = common::run(&["check", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such directory"));
}

/// Test files are read for keyed requests only: hostile ones cost nothing else.
#[test]
fn hostile_test_files_cost_nothing_but_their_requests() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::create_dir_all(root.join("test")).unwrap();
    fs::create_dir_all(root.join("tests")).unwrap();
    fs::write(
        root.join("src/app.js"),
        "const express = require('express');\nconst app = express();\nconst key = (req, res, next) => { req.get('Idempotency-Key'); next(); };\napp.post('/orders', key, async (req, res) => {\n  res.json(await prisma.order.create({ data: req.body }));\n});\nmodule.exports = app;\n",
    )
    .unwrap();
    let depth = 20_000;
    fs::write(
        root.join("test/deep.test.js"),
        format!(
            "// Idempotency-Key\nit('x', () => {}0{});\n",
            "f(\n".repeat(depth),
            ")\n".repeat(depth)
        ),
    )
    .unwrap();
    fs::write(
        root.join("test/chain.test.ts"),
        format!(
            "it('x', async () => {{\n  await request(app).post('/orders').set('Idempotency-Key', k)\n{};\n}});\n",
            "    .set('a', 'b')\n".repeat(depth)
        ),
    )
    .unwrap();
    fs::write(
        root.join("test/odd.test.ts"),
        "it('x', async () => {\n  request().post().set();\n  fetch();\n  request(app).post('/orders').set('Idempotency-Key');\n  Promise.all();\n  for (;;) request(app).post(`${`${`${a}`}`}`).set({ ['Idempotency-Key']: k });\n});\nit(\n",
    )
    .unwrap();
    fs::write(
        root.join("api.http"),
        "@a = {{a}}{{a}}{{a}}{{a}}{{a}}{{a}}{{a}}{{a}}\nPOST\nIdempotency-Key\n###\nPOST {{a}}/orders\nIdempotency-Key: {{a}}\n###\n{{\n",
    )
    .unwrap();
    fs::write(
        root.join("tests/deep.rs"),
        format!(
            "// Idempotency-Key\n#[test]\nfn t() {{ let x = {}1{}; }}\n",
            "(".repeat(depth),
            ")".repeat(depth)
        ),
    )
    .unwrap();
    fs::write(
        root.join("tests/broken.rs"),
        "// Idempotency-Key\n#[tokio::test]\nasync fn t() { let = ; }\n",
    )
    .unwrap();
    fs::write(
        root.join("tests/odd.rs"),
        "#[tokio::test]\nasync fn t() { Request::builder().method().uri().header(\"Idempotency-Key\"); tokio::join!(); vec![; 3]; }\n#[tokio::test]\nasync fn u() { for _ in 0.. { server.post(\"/orders\").add_header(\"Idempotency-Key\", k).await; } }\n",
    )
    .unwrap();

    let report = common::json_report(root);
    let endpoints = report["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 1, "{endpoints:#?}");
    assert_eq!(endpoints[0]["path"], "/orders");
    // What still reads is still found: the loop in `tests/odd.rs` sends one key again and again.
    let tests = endpoints[0]["idempotency_tests"].as_array().unwrap();
    assert!(
        tests.iter().any(|t| t["file"] == "tests/odd.rs"),
        "{tests:#?}"
    );
}

/// A chain of registrations is walked link by link: its length costs no depth budget, so a
/// router with hundreds of chained routes loses none of them.
#[test]
fn long_registration_chains_keep_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    let links = 300;
    let mut app = String::from(
        "const express = require('express');\nconst router = express.Router();\nconst save = (req, res) => res.json({});\nrouter\n",
    );
    for i in 0..links {
        app.push_str(&format!("  .post('/items/{i}', save)\n"));
    }
    app.push_str(";\nconst app = express();\napp.use('/api', router);\napp.route('/bulk')");
    for _ in 0..links / 2 {
        app.push_str(".post(save).put(save)");
    }
    app.push_str(";\nmodule.exports = app;\n");
    fs::write(root.join("src/app.js"), app).unwrap();

    let report = common::json_report(root);
    let endpoints = report["endpoints"].as_array().unwrap();
    let paths: std::collections::BTreeSet<(String, String)> = endpoints
        .iter()
        .map(|e| {
            (
                e["method"].as_str().unwrap().to_string(),
                e["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for i in 0..links {
        assert!(
            paths.contains(&("POST".into(), format!("/api/items/{i}"))),
            "POST /api/items/{i} missing"
        );
    }
    assert!(paths.contains(&("POST".into(), "/bulk".into())));
    assert!(paths.contains(&("PUT".into(), "/bulk".into())));
    assert_eq!(paths.len(), links + 2, "{paths:?}");
    assert!(
        report["diagnostics"].as_array().unwrap().is_empty(),
        "{:#?}",
        report["diagnostics"]
    );
}

/// Where a depth limit does cut evaluation, a diagnostic says where: routes are never lost
/// silently.
#[test]
fn a_cut_in_evaluation_is_a_diagnostic_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    let depth = 400;
    fs::write(
        root.join("src/app.js"),
        format!(
            "const express = require('express');\nconst app = express();\napp.post('/kept', (req, res) => res.json({{}}));\nconst x = {}app.post('/lost', (req, res) => res.json({{}})){};\n",
            "[\n".repeat(depth),
            "]\n".repeat(depth)
        ),
    )
    .unwrap();
    let report = common::json_report(root);
    let diags = report["diagnostics"].as_array().unwrap();
    assert!(
        diags.iter().any(|d| d["file"] == "src/app.js"
            && d["line"].as_u64().is_some_and(|l| l > 4)
            && d["message"].as_str().unwrap().contains("nested deeper")),
        "{diags:#?}"
    );
    let endpoints = report["endpoints"].as_array().unwrap();
    assert!(endpoints.iter().any(|e| e["path"] == "/kept"));
}

/// Tables nested in tables are walked within a budget: a file whose loops would multiply into a
/// million walks audits quickly, keeps what it read, and says where it stopped.
#[test]
fn nested_literal_tables_are_walked_within_a_budget() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    let names: Vec<String> = (0..100).map(|i| format!("'n{i}'")).collect();
    fs::write(
        root.join("src/app.js"),
        format!(
            "const express = require('express');\nconst app = express();\nconst save = (req, res) => res.json({{}});\nconst names = [{}];\nnames.forEach((a) => names.forEach((b) => names.forEach((c) => app.post(`/${{a}}/${{b}}/${{c}}`, save))));\nmodule.exports = app;\n",
            names.join(", ")
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let report = common::json_report(root);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
    let diags = report["diagnostics"].as_array().unwrap();
    assert!(
        diags
            .iter()
            .any(|d| d["file"] == "src/app.js" && d["message"].as_str().unwrap().contains("walked")),
        "{diags:#?}"
    );
    let endpoints = report["endpoints"].as_array().unwrap();
    assert!(
        endpoints.iter().any(|e| e["path"] == "/n0/n0/n0"),
        "{} endpoints",
        endpoints.len()
    );
}

/// A prefix whose imports go round in a cycle is followed as far as the limit, and the cut is a
/// diagnostic.
#[test]
fn a_cycle_of_reexports_under_a_mount_is_a_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/a.ts"), "export { PREFIX } from './b';\n").unwrap();
    fs::write(root.join("src/b.ts"), "export { PREFIX } from './a';\n").unwrap();
    fs::write(
        root.join("src/app.ts"),
        "import express from 'express';\nimport { PREFIX } from './a';\nconst router = express.Router();\nrouter.post('/items', (req, res) => res.json({}));\nconst app = express();\napp.use(PREFIX, router);\nexport default app;\n",
    )
    .unwrap();
    let report = common::json_report(root);
    let diags = report["diagnostics"].as_array().unwrap();
    assert!(
        diags
            .iter()
            .any(|d| d["message"].as_str().unwrap().contains("more imports")),
        "{diags:#?}"
    );
}
