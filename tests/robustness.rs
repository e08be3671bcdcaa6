//! Bad input never costs the rest of the audit: each problem file becomes a diagnostic.

mod common;

use std::fs;

#[test]
fn hostile_tree_audits_to_completion_with_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src/vendor")).unwrap();
    // A healthy app that must still be found, with a stray NUL byte in a comment (a text file
    // all the same: it is read with the NUL as a space).
    fs::write(
        root.join("src/app.js"),
        "const express = require('express');\nconst { PrismaClient } = require('@prisma/client');\nconst prisma = new PrismaClient();\nconst app = express();\n// strips \0 padding from bodies\napp.post('/notes', async (req, res) => {\n  res.json(await prisma.note.create({ data: req.body }));\n});\n",
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
    fs::write(
        root.join("src/blob.js"),
        [&[0u8, 1, 2, 0, 0, 0][..]; 16].concat(),
    )
    .unwrap();
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
    let diags = common::diagnostics(&report);
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
    assert!(!has("src/app.js", "binary"), "{diags:#?}");
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
    let dir = app_js(&app);
    let root = dir.path();

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

/// Constructors handing their parameter on to many `new`s of the class before (a tower of
/// classes, sixteen `new A{k-1}(x)` in each constructor): what the first class is given is read
/// one level deep, so the audit ends, with the route listed.
#[test]
fn constructors_handing_their_parameters_on_are_read_one_level_deep() {
    let mut src = String::from(
        "const express = require('express');\nconst app = express();\nclass A0 {\n  constructor(x) {\n    this.x = x;\n    app.post('/a', this.x.handle);\n  }\n}\n",
    );
    for k in 1..24 {
        src.push_str(&format!(
            "class A{k} {{\n  constructor(x) {{\n    this.x = x;\n"
        ));
        for _ in 0..16 {
            src.push_str(&format!("    new A{}(x);\n", k - 1));
        }
        src.push_str("  }\n}\n");
    }
    src.push_str("new A23({ handle: (req, res) => res.json({}) });\nmodule.exports = app;\n");
    let dir = app_js(&src);
    let report = common::json_report(dir.path());
    let paths = paths_of(&report);
    assert!(
        !paths.is_empty() && paths.iter().all(|p| p == "POST /a"),
        "{paths:?}"
    );
}

const EXPRESS_APP: &str = "const express = require('express');\nconst app = express();\napp.post('/notes', (req, res) => res.json({}));\nmodule.exports = app;\n";

/// A temporary project whose only source is `src/app.js`.
fn app_js(source: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/app.js"), source).unwrap();
    dir
}

fn paths_of(report: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = report["endpoints"]
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
        .collect();
    out.sort();
    out
}

/// A FIFO, symlinks to `/dev/zero` and a symlink out of the root, each in place of a source
/// file: none is read (nothing hangs), each is a diagnostic, the rest is audited.
#[cfg(unix)]
#[test]
fn special_files_in_place_of_sources_are_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("app");
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/app.js"), EXPRESS_APP).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(root.join("src/fifo.ts"))
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink("/dev/zero", root.join("src/zero.ts")).unwrap();
    fs::write(dir.path().join("outside.ts"), "export const secret = 1;\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside.ts"), root.join("src/out.ts")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("src/zero.rs")).unwrap();
    let report = common::json_report_any_threads(&root, &[]);
    assert_eq!(paths_of(&report), ["POST /notes"]);
    let diags = common::diagnostics(&report);
    for (file, words) in [
        ("src/fifo.ts", "not a regular file"),
        ("src/zero.ts", "symlink out of the scanned folder"),
        ("src/zero.rs", "symlink out of the scanned folder"),
        ("src/out.ts", "out of the scanned folder"),
    ] {
        assert!(
            diags
                .iter()
                .any(|d| d.starts_with(&format!("{file}:")) && d.contains(words)),
            "{file}: {diags:#?}"
        );
    }
    assert_eq!(report["summary"]["files_scanned"], 1);
}

/// A `.gitignore` above the scanned folder does not hide its files (the audit depends on the
/// tree alone) unless `--respect-parent-ignores` asks for it.
#[test]
fn ignore_files_above_the_root_apply_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(".gitignore"), "*.js\n").unwrap();
    fs::create_dir(dir.path().join(".git")).unwrap();
    let root = dir.path().join("app");
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/app.js"), EXPRESS_APP).unwrap();
    let report = common::json_report_any_threads(&root, &[]);
    assert_eq!(report["summary"]["files_scanned"], 1);
    assert_eq!(paths_of(&report), ["POST /notes"]);
    // Nothing left to audit: said with exit 2, unless that is expected.
    let report =
        common::json_report_any_threads(&root, &["--respect-parent-ignores", "--allow-empty"]);
    assert_eq!(report["summary"]["files_scanned"], 0);
    // the tree's own .gitignore still counts
    fs::write(root.join(".gitignore"), "src/\n").unwrap();
    let report = common::json_report_any_threads(&root, &["--allow-empty"]);
    assert_eq!(report["summary"]["files_scanned"], 0);
}

/// The user's global git excludes do not hide files either, unless asked for.
#[test]
fn global_git_excludes_apply_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    fs::create_dir_all(home.join(".config/git")).unwrap();
    fs::write(home.join(".config/git/ignore"), "*.js\n").unwrap();
    let root = dir.path().join("app");
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/app.js"), EXPRESS_APP).unwrap();
    let scanned = |extra: &[&str]| {
        let out = common::json_check(&root)
            .args(extra)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env_remove("GIT_CONFIG_GLOBAL")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        r["summary"]["files_scanned"].as_u64().unwrap()
    };
    assert_eq!(scanned(&[]), 1);
    assert_eq!(scanned(&["--respect-parent-ignores", "--allow-empty"]), 0);
}

/// A broken `package.json`, `tsconfig.json` and `schema.prisma` are each a diagnostic with the
/// line where they break, and the audit goes on.
#[test]
fn broken_manifests_and_schemas_are_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::create_dir_all(root.join("prisma")).unwrap();
    fs::write(
        root.join("src/app.ts"),
        "import express from 'express';\nimport { x } from '@app/x';\nconst app = express();\napp.post('/notes', (req, res) => res.json({ x }));\nexport default app;\n",
    )
    .unwrap();
    fs::write(
        root.join("package.json"),
        "{\n  \"name\": \"app\",\n  broken\n}\n",
    )
    .unwrap();
    fs::write(
        root.join("tsconfig.json"),
        "{\n  // comments are fine\n  \"compilerOptions\": {\n    \"paths\": { \"@app/*\": [\"src/*\"] \n}\n",
    )
    .unwrap();
    fs::write(
        root.join("prisma/schema.prisma"),
        "model Note {\n  id   Int    @id\n  slug String @unique\n  @@unique([slug\n}\n",
    )
    .unwrap();
    let report = common::json_report_any_threads(root, &[]);
    assert_eq!(paths_of(&report), ["POST /notes"]);
    let diags = common::diagnostics(&report);
    for (file, words) in [
        ("package.json:3", "not valid JSON"),
        ("tsconfig.json:", "not valid JSON"),
        ("prisma/schema.prisma:", "schema error"),
    ] {
        assert!(
            diags
                .iter()
                .any(|d| d.starts_with(file) && d.contains(words)),
            "{file}: {diags:#?}"
        );
    }
}

/// Routers mounted more than the mount limit deep, in one file and across files: the cut is a
/// diagnostic (never silent), the routes above it are kept, and 1 and 2 threads agree.
#[test]
fn mounts_nested_past_the_limit_are_a_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src/chain")).unwrap();
    let n = 40;
    let mut app = String::from("const express = require('express');\nconst app = express();\n");
    for i in 0..n {
        app.push_str(&format!("const r{i} = express.Router();\n"));
    }
    app.push_str("app.use('/m', r0);\n");
    for i in 0..n - 1 {
        app.push_str(&format!("r{i}.use('/m{}', r{});\n", i + 1, i + 1));
    }
    app.push_str(&format!(
        "r{}.post('/leaf', (req, res) => res.json({{}}));\nr0.post('/top', (req, res) => res.json({{}}));\nmodule.exports = app;\n",
        n - 1
    ));
    fs::write(root.join("src/app.js"), app).unwrap();
    for i in 0..n {
        let next = if i < n - 1 {
            format!("r.use('/c{}', require('./f{}'));\n", i + 1, i + 1)
        } else {
            "r.post('/deep', (req, res) => res.json({}));\n".to_string()
        };
        fs::write(
            root.join(format!("src/chain/f{i}.js")),
            format!("const express = require('express');\nconst r = express.Router();\n{next}module.exports = r;\n"),
        )
        .unwrap();
    }
    fs::write(
        root.join("src/main.js"),
        "const express = require('express');\nconst app = express();\napp.use('/c0', require('./chain/f0'));\nmodule.exports = app;\n",
    )
    .unwrap();
    let report = common::json_report_any_threads(root, &[]);
    assert!(paths_of(&report).contains(&"POST /m/top".to_string()));
    let diags = common::diagnostics(&report);
    for file in ["src/app.js:", "src/chain/"] {
        assert!(
            diags
                .iter()
                .any(|d| d.starts_with(file) && d.contains("levels deep")),
            "{file}: {diags:#?}"
        );
    }
}

/// An Express app with 100 `.post(..)` chained on the app itself keeps all 100 routes.
#[test]
fn a_hundred_chained_posts_on_the_app_are_all_kept() {
    let mut app = String::from(
        "const express = require('express');\nconst app = express();\nconst save = (req, res) => res.json({});\napp\n",
    );
    for i in 0..100 {
        app.push_str(&format!("  .post('/items/{i}', save)\n"));
    }
    app.push_str(";\nmodule.exports = app;\n");
    let dir = app_js(&app);
    let root = dir.path();
    let report = common::json_report_any_threads(root, &[]);
    assert_eq!(paths_of(&report).len(), 100);
}

/// Functions that call the same functions many times: each summary keeps one copy of what its
/// callees look up and read, not one per path (sixteen calls at each of eight levels are 16^7 paths).
#[test]
fn a_call_graph_whose_functions_share_callees_is_linked_in_linear_time() {
    let mut app = String::from(
        "const express = require('express');\nconst { PrismaClient } = require('@prisma/client');\nconst prisma = new PrismaClient();\nconst app = express();\n\
         async function f8(email) {\n  const found = await prisma.member.findFirst({ where: { email } });\n  if (!found) await prisma.member.create({ data: { email } });\n}\n",
    );
    for i in (1..8).rev() {
        app.push_str(&format!("async function f{i}(email) {{\n"));
        for _ in 0..16 {
            app.push_str(&format!("  await f{}(email);\n", i + 1));
        }
        app.push_str("}\n");
    }
    app.push_str(
        "app.post('/members', async (req, res) => {\n  await f1(req.body.email);\n  res.json({});\n});\nmodule.exports = app;\n",
    );
    let dir = app_js(&app);
    let root = dir.path();
    let report = common::json_report(root);
    let endpoints = report["endpoints"].as_array().unwrap();
    let members = endpoints.iter().find(|e| e["path"] == "/members").unwrap();
    assert_eq!(common::kinds(&members["side_effects"]), ["db_create"]);
}

/// Values built from values that were built the same way (a chain of builders each given the
/// last result twice, object literals nesting the last literal twice) are kept within a bound:
/// forty steps are 2^40 nodes written out. The routes of the file are still read.
#[test]
fn values_that_nest_their_own_copies_stay_bounded() {
    let mut app = String::from(
        "const express = require('express');\nconst app = express();\nconst pair = (x, y) => ({ x, y });\nconst b0 = { seed: 'a' };\nconst c0 = { seed: 'a' };\n",
    );
    for i in 1..=40 {
        app.push_str(&format!(
            "const b{i} = pair(b{p}, b{p});\nconst c{i} = {{ x: c{p}, y: [c{p}, c{p}] }};\n",
            p = i - 1
        ));
    }
    app.push_str(
        "app.post('/built', (req, res) => res.json({ b: b40, c: c40 }));\nmodule.exports = app;\n",
    );
    let dir = app_js(&app);
    let root = dir.path();
    let report = common::json_report(root);
    assert_eq!(paths_of(&report), ["POST /built"]);
}

/// Every hostile shape of this file together in one tree: 1 and 2 threads give the same bytes.
#[cfg(unix)]
#[test]
fn the_hostile_tree_is_the_same_with_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::create_dir_all(root.join("crate/src")).unwrap();
    fs::write(root.join("src/app.js"), EXPRESS_APP).unwrap();
    let depth = 20_000;
    fs::write(
        root.join("src/deep.js"),
        format!(
            "const x = {}1{};\n",
            "(\n".repeat(depth),
            ")\n".repeat(depth)
        ),
    )
    .unwrap();
    fs::write(root.join("src/broken.ts"), "export function f( {\n").unwrap();
    fs::write(root.join("package.json"), "{ broken").unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("src/zero.ts")).unwrap();
    fs::write(
        root.join("crate/Cargo.toml"),
        "[package]\nname = \"c\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    fs::write(
        root.join("crate/src/lib.rs"),
        format!(
            "pub fn f() {{\n    let c = {}1;\n}}\n",
            "move ||\n".repeat(depth)
        ),
    )
    .unwrap();
    let report = common::json_report_any_threads(root, &[]);
    assert!(common::diagnostics(&report).len() >= 5, "{report:#}");
}

/// Deep nesting in every syntactic position tree-sitter builds into a deep tree (arrow
/// functions, ternaries, JSX, templates, objects, class expressions, `await`, `typeof`, blocks,
/// `else if`): each file is cut with a diagnostic, never a stack overflow, and 1 and 2 threads
/// agree.
#[test]
fn deep_nesting_in_every_position_is_a_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/app.js"), EXPRESS_APP).unwrap();
    let d = 20_000;
    let shapes = [
        (
            "arrows.ts",
            format!("export const f = {}1;\n", "(a) =>\n".repeat(d)),
        ),
        (
            "ternary.ts",
            format!("export const f = {}c;\n", "a ? b :\n".repeat(d)),
        ),
        (
            "jsx.tsx",
            format!(
                "export const f = () => ({}x{});\n",
                "<div>\n".repeat(d),
                "</div>\n".repeat(d)
            ),
        ),
        (
            "template.ts",
            format!(
                "export const f = {}a{};\n",
                "`${\n".repeat(d),
                "}`\n".repeat(d)
            ),
        ),
        (
            "obj.ts",
            format!(
                "export const f = {}1{};\n",
                "{a:\n".repeat(d),
                "}\n".repeat(d)
            ),
        ),
        (
            "classes.ts",
            format!(
                "export const f = {}Object{};\n",
                "class extends (\n".repeat(d),
                ") {}\n".repeat(d)
            ),
        ),
        (
            "await.ts",
            format!(
                "export async function f() {{ return {}a; }}\n",
                "await\n".repeat(d)
            ),
        ),
        (
            "typeof.ts",
            format!("export const f = {}a;\n", "typeof\n".repeat(d)),
        ),
        (
            "blocks.ts",
            format!("export function f() {}{}", "{\n".repeat(d), "}\n".repeat(d)),
        ),
        (
            "ifelse.ts",
            format!(
                "export function f(a) {{ if (a) {{}}\n{}}}\n",
                "else if (a) {}\n".repeat(d)
            ),
        ),
    ];
    for (name, text) in &shapes {
        fs::write(root.join("src").join(name), text).unwrap();
    }
    let report = common::json_report_any_threads(root, &[]);
    assert_eq!(paths_of(&report), ["POST /notes"]);
    let diags = common::diagnostics(&report);
    for (name, _) in &shapes {
        assert!(
            diags
                .iter()
                .any(|x| x.starts_with(&format!("src/{name}:")) && x.contains("nested deeper")),
            "{name}: {diags:#?}"
        );
    }
}

/// A call graph deeper than the call depth, where every function is reached by many paths (two
/// functions per level, each calling both of the next: 2^n paths to level n), in TypeScript as
/// `rust_frontend`'s twin test has it in Rust. Followed once per function and depth left, it is
/// audited at once; followed once per path, it would not finish. The cut is reported, and the
/// insert above it is found.
#[test]
fn a_deep_typescript_call_graph_of_many_paths_is_followed_once_per_function() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(
        root.join("package.json"),
        r#"{"name":"deep","dependencies":{"express":"^4.19.2","pg":"^8.12.0"}}"#,
    )
    .unwrap();
    let mut code = String::from(
        "import express from 'express';\nimport { Pool } from 'pg';\n\nconst pool = new Pool();\nconst app = express();\n\napp.post('/notes', async (req, res) => {\n  await a1();\n  await b1();\n  res.status(201).end();\n});\n\n",
    );
    let levels = 64;
    for i in 1..=levels {
        for f in ["a", "b"] {
            code.push_str(&format!("async function {f}{i}() {{\n"));
            if i == 1 && f == "a" {
                code.push_str("  await pool.query(\"INSERT INTO notes (body) VALUES ('x')\");\n");
            }
            if i < levels {
                code.push_str(&format!("  await a{}();\n  await b{}();\n", i + 1, i + 1));
            }
            code.push_str("}\n\n");
        }
    }
    fs::write(root.join("src/app.ts"), code).unwrap();
    let report = common::json_report(root);
    let endpoint = &report["endpoints"].as_array().unwrap()[0];
    assert_eq!(common::kinds(&endpoint["side_effects"]), vec!["db_create"]);
    assert!(
        common::mentions_diagnostic(&report, "calls were followed 48 deep"),
        "{:#?}",
        report["diagnostics"]
    );
}

/// Effect layers that ask for their own tag (`Layer.effect(Repo, Effect.gen(function* () {
/// return yield* Repo }))`) or name their tag by a `yield*` (`Layer.succeed(yield* Repo, ..)`):
/// reading what `yield* Repo` gives ends, with the route listed.
#[test]
fn effect_layers_that_ask_for_their_own_tag_end() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(
        dir.path().join("package.json"),
        r#"{ "dependencies": { "effect": "^3.10.0", "express": "^4.19.2" } }"#,
    )
    .unwrap();
    fs::write(
        dir.path().join("src/app.js"),
        "const express = require('express');\nconst { Context, Effect, Layer } = require('effect');\nconst app = express();\nclass Repo extends Context.Tag('Repo')() {}\nexport const RepoLive = Layer.effect(Repo, Effect.gen(function* () { const again = yield* Repo; return again; }));\nexport function* odd() { return Layer.succeed(yield* Repo, { insert: () => Effect.void }); }\napp.post('/a', async (req, res) => {\n  await Effect.runPromise(Effect.gen(function* () { const repo = yield* Repo; yield* repo.insert(req.body); }));\n  res.json({});\n});\nmodule.exports = app;\n",
    )
    .unwrap();
    let report = common::json_report(dir.path());
    assert_eq!(paths_of(&report), vec!["POST /a".to_string()]);
}
