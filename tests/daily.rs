//! Daily use at scale: never falsely green, what was excluded and why, one entry per cause,
//! scoping (rule selection, per-path settings, suppressions on shared code), the CI formats and
//! paths that resolve from where the user stands.

mod common;

use common::{fixture, fixture_copy, run_at, run_in};
use std::path::Path;

fn write(root: &Path, file: &str, text: &str) {
    let path = root.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const NOTES_APP: &str = "import express from 'express';\nimport { PrismaClient } from '@prisma/client';\nconst prisma = new PrismaClient();\nconst app = express();\n\napp.post('/notes', createNote);\napp.post('/tags', createTag);\n\nasync function createNote(req, res) {\n  res.json(await prisma.note.create({ data: req.body }));\n}\n\nasync function createTag(req, res) {\n  res.json(await prisma.tag.create({ data: req.body }));\n}\napp.listen(3000);\n";

fn json(dir: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["check", ".", "--format", "json", "--fail-on", "none"];
    args.extend_from_slice(extra);
    let (code, out, err) = run_at(dir, &args);
    assert!(code != 2 || !out.is_empty(), "{err}");
    (
        code,
        serde_json::from_str(&out).unwrap_or(serde_json::Value::Null),
    )
}

fn rules_of(report: &serde_json::Value) -> Vec<String> {
    let mut r: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["suppressed"] == false)
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect();
    r.sort();
    r.dedup();
    r
}

#[test]
fn nothing_audited_is_exit_2_unless_allowed() {
    // An empty directory.
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run_at(dir.path(), &["check", "."]);
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains(
            "nothing was audited in .: no TypeScript, JavaScript or Rust source was found"
        ),
        "{err}"
    );
    assert!(err.contains("--allow-empty"), "{err}");
    let (code, _, err) = run_at(dir.path(), &["check", ".", "--allow-empty"]);
    assert_eq!((code, err.as_str()), (0, ""));
    // No supported source: a README and a Python file.
    write(dir.path(), "README.md", "# docs\n");
    write(dir.path(), "app.py", "print('hi')\n");
    assert_eq!(run_at(dir.path(), &["check", "."]).0, 2);
    // Manifests naming a server framework, and no route found.
    write(
        dir.path(),
        "package.json",
        r#"{"dependencies": {"express": "^4"}}"#,
    );
    write(dir.path(), "src/util.ts", "export const x = 1;\n");
    let (code, out, err) = run_at(dir.path(), &["check", ".", "--format", "json"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("the manifests name express but no route was found in 1 source files"),
        "{err}"
    );
    // The report is still written, and says so.
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        report["summary"]["nothing_audited"]
            .as_str()
            .unwrap()
            .contains("express")
    );
    assert_eq!(
        report["summary"]["frameworks_declared"],
        serde_json::json!(["express"])
    );
    // Once a route is there, the audit counts.
    write(dir.path(), "src/app.ts", NOTES_APP);
    let (code, report) = json(dir.path(), &[]);
    assert_eq!(code, 0);
    assert!(report["summary"].get("nothing_audited").is_none());
    assert_eq!(
        report["summary"]["files_by_language"],
        serde_json::json!({"typescript": 2})
    );
    assert_eq!(
        report["summary"]["endpoints_by_framework"],
        serde_json::json!({"express": 2})
    );
    assert_eq!(report["summary"]["routes_found"], 2);
    // A missing path (a typo in the Action's `path:`) was already exit 2.
    assert_eq!(run_at(dir.path(), &["check", "nope"]).0, 2);
}

#[test]
fn build_folders_are_skipped_only_where_they_hold_build_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // `build/` as a source folder (nothing beside it says it is output): read.
    write(root, "src/build/app.ts", NOTES_APP);
    // `dist/` beside a package.json: build output, skipped.
    write(root, "web/package.json", "{}");
    write(root, "web/dist/app.js", NOTES_APP);
    // A folder listed in a .gitignore: skipped.
    write(root, ".gitignore", "generated/\n");
    write(root, "generated/app.ts", NOTES_APP);
    // `target/` beside a Cargo.toml: skipped.
    write(root, "svc/Cargo.toml", "[package]\nname = \"svc\"\n");
    write(root, "svc/target/debug/app.ts", NOTES_APP);
    let (_, report) = json(root, &[]);
    let files: Vec<&str> = report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, vec!["src/build/app.ts", "src/build/app.ts"]);
    // The scanned root itself may be called `build`.
    let (code, report) = json(&root.join("src/build"), &[]);
    assert_eq!(
        (code, report["summary"]["mutation_endpoints"].as_u64()),
        (0, Some(2))
    );
    // exclude/include in retrysafe.toml: `!` re-includes, `include` wins over a built-in skip.
    write(
        root,
        "retrysafe.toml",
        "exclude = [\"src/*\", \"!src/build/\"]\ninclude = [\"web/dist/\"]\n",
    );
    let (_, report) = json(root, &[]);
    let mut files: Vec<&str> = report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap())
        .collect();
    files.sort();
    files.dedup();
    assert_eq!(files, vec!["src/build/app.ts", "web/dist/app.js"]);
}

#[test]
fn a_shared_flaw_is_one_cause_listing_its_endpoints() {
    let (code, report) = json(&fixture("actix-key-tests"), &[]);
    assert_eq!(code, 0);
    let memory: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "RS014")
        .collect();
    assert_eq!(memory.len(), 4, "the JSON keeps one finding per endpoint");
    assert!(memory.iter().all(|f| f["cause"] == memory[0]["cause"]));
    assert_eq!(report["summary"]["causes"], 6);
    let (_, out, _) = run_at(&fixture("actix-key-tests"), &["check", "--fail-on", "none"]);
    assert_eq!(out.matches("RS014 in-memory-key-store").count(), 1, "{out}");
    assert!(
        out.contains("RS014 in-memory-key-store (medium, confirmed): 4 endpoints\n  --> src/idempotency.rs:89\n"),
        "{out}"
    );
    assert!(out.contains("(10 findings from 6 causes)"), "{out}");
}

#[test]
fn suppressions_on_the_store_the_handler_or_the_file() {
    // On the shared store: every endpoint it serves.
    let dir = fixture_copy("actix-key-tests");
    let store = dir.path().join("src/idempotency.rs");
    let text = std::fs::read_to_string(&store).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(
        88,
        "    // retrysafe-ignore in-memory-key-store: one instance, by design",
    );
    std::fs::write(&store, lines.join("\n")).unwrap();
    // File-wide, by name.
    let transfers = dir.path().join("src/transfers.rs");
    let text = std::fs::read_to_string(&transfers).unwrap();
    std::fs::write(
        &transfers,
        format!("// retrysafe-ignore-file no-idempotency-tests: covered by the e2e suite\n{text}"),
    )
    .unwrap();
    let (_, report) = json(dir.path(), &[]);
    let suppressed: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["suppressed"] == true)
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["endpoint"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        suppressed.iter().filter(|(r, _)| r == "RS014").count(),
        4,
        "{suppressed:?}"
    );
    assert!(
        suppressed.contains(&("RS020".into(), "POST /api/transfers".into())),
        "{suppressed:?}"
    );
    assert!(
        !report["diagnostics"].to_string().contains("matches no"),
        "{}",
        report["diagnostics"]
    );

    // On the handler.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "src/app.ts",
        &NOTES_APP.replace(
            "async function createNote",
            "// retrysafe-ignore side-effect-without-idempotency: drafts, a duplicate is harmless\nasync function createNote",
        ),
    );
    let (_, report) = json(dir.path(), &[]);
    let f: Vec<(&str, bool)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["endpoint"].as_str().unwrap(),
                f["suppressed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(f.len(), 2);
    assert!(
        f.contains(&("POST /notes", true)) && f.contains(&("POST /tags", false)),
        "{f:?}"
    );
}

#[test]
fn rules_are_selected_by_id_name_or_prefix_and_by_confidence() {
    let shop = fixture("express-shop");
    let (_, all) = json(&shop, &[]);
    assert_eq!(rules_of(&all), vec!["RS001", "RS003"]);
    let (_, r) = json(&shop, &["--select", "RS001"]);
    assert_eq!(rules_of(&r), vec!["RS001"]);
    let (_, r) = json(&shop, &["--select", "side-effect-without-idempotency"]);
    assert_eq!(rules_of(&r), vec!["RS003"]);
    let (_, r) = json(&shop, &["--ignore", "RS00"]);
    assert!(rules_of(&r).is_empty());
    let (_, r) = json(&shop, &["--select", "RS001", "--extend-select", "RS003"]);
    assert_eq!(rules_of(&r), vec!["RS001", "RS003"]);
    let (_, r) = json(
        &shop,
        &["--select", "ALL", "--ignore", "payment-without-idempotency"],
    );
    assert_eq!(rules_of(&r), vec!["RS003"]);
    let (_, r) = json(&shop, &["--min-confidence", "confirmed"]);
    assert!(rules_of(&r).is_empty());
    // The gate follows the selection.
    assert_eq!(run_at(&shop, &["check", "--ignore", "RS001"]).0, 0);
    let (code, _, err) = run_at(&shop, &["check", "--select", "RS999"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown rule `RS999`"), "{err}");
}

#[test]
fn per_path_settings_turn_rules_off_under_paths() {
    let dir = fixture_copy("express-shop");
    write(
        dir.path(),
        "retrysafe.toml",
        "[[per-path]]\npaths = [\"src/routes/v1/refunds.ts\", \"src/services/notifications.ts\"]\nignore = [\"RS001\", \"side-effect-without-idempotency\"]\n",
    );
    let (_, report) = json(dir.path(), &[]);
    let endpoints: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["endpoint"].as_str().unwrap())
        .collect();
    assert!(
        !endpoints.contains(&"POST /api/v1/refunds"),
        "{endpoints:?}"
    );
    assert!(
        endpoints.contains(&"POST /api/v1/orders/{id}/pay"),
        "{endpoints:?}"
    );
    write(
        dir.path(),
        "retrysafe.toml",
        "[[per-path]]\npaths = [\"src/**\"]\nignore = [\"RS404\"]\n",
    );
    let (code, _, err) = run_at(dir.path(), &["check"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown rule `RS404`"), "{err}");
}

#[test]
fn with_a_baseline_only_new_findings_are_printed() {
    let dir = fixture_copy("express-shop");
    let (code, _, _) = run_at(dir.path(), &["check", "--write-baseline", "base.json"]);
    assert_eq!(code, 0);
    let (code, out, _) = run_at(dir.path(), &["check", "--baseline", "base.json"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("No new findings.\n"), "{out}");
    assert!(out.contains("; 0 new, 5 known"), "{out}");
    assert!(out.lines().count() < 5, "{out}");
}

#[test]
fn diagnostics_are_summarised_by_kind_and_never_hold_a_whole_statement() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/app.ts", NOTES_APP);
    for i in 0..3 {
        write(
            dir.path(),
            &format!("src/broken{i}.ts"),
            "export function f( {\n",
        );
    }
    let body = "CREATE FUNCTION f() RETURNS trigger AS $a$\nBEGIN\n".to_string()
        + &"  UPDATE t SET n = n + 1;\n".repeat(200)
        + "END\n$a$ LANGUAGE plpgsql;\n";
    write(
        dir.path(),
        "migrations/1.sql",
        &format!("CREATE TABLE t (n int);\nDO {body}"),
    );
    let (_, out, _) = run_at(dir.path(), &["check", "--fail-on", "none"]);
    assert!(
        out.contains("note: 3 × parse error (first: src/broken0.ts:1)"),
        "{out}"
    );
    assert!(out.lines().all(|l| l.chars().count() < 600), "{out}");
    let (_, verbose, _) = run_at(dir.path(), &["check", "--fail-on", "none", "--verbose"]);
    assert_eq!(verbose.matches("parse error").count(), 3, "{verbose}");
    let (_, report) = json(dir.path(), &[]);
    for d in report["diagnostics"].as_array().unwrap() {
        let m = d["message"].as_str().unwrap();
        assert!(!m.contains('\n') && m.chars().count() <= 500, "{m}");
    }
}

/// A small well-formedness check: tags balance, attributes are quoted, entities are known.
fn well_formed(xml: &str) -> Result<(), String> {
    let body = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .ok_or("no declaration")?;
    let mut stack: Vec<String> = Vec::new();
    let mut rest = body;
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        for (i, _) in text.match_indices('&') {
            let ent = &text[i..text[i..].find(';').map(|j| i + j + 1).ok_or("bad entity")?];
            if !["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].contains(&ent) {
                return Err(format!("unknown entity {ent}"));
            }
        }
        let close = rest[open..].find('>').ok_or("unclosed tag")? + open;
        let tag = &rest[open + 1..close];
        if tag.contains('<') {
            return Err(format!("`<` inside a tag: {tag}"));
        }
        if tag.matches('"').count() % 2 != 0 {
            return Err(format!("unbalanced quotes: {tag}"));
        }
        if let Some(name) = tag.strip_prefix('/') {
            if stack.pop().as_deref() != Some(name) {
                return Err(format!("mismatched </{name}>"));
            }
        } else if !tag.ends_with('/') {
            stack.push(tag.split_whitespace().next().unwrap_or("").to_string());
        }
        rest = &rest[close + 1..];
    }
    if stack.is_empty() && rest.trim().is_empty() {
        Ok(())
    } else {
        Err(format!("unclosed {stack:?}"))
    }
}

#[test]
fn ci_formats_github_gitlab_junit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // GitHub: one workflow command per cause, paths relative to the repository root.
    let (code, out, _) = run_at(
        root,
        &["check", "fixtures/express-shop", "--format", "github"],
    );
    assert_eq!(code, 1, "the gate is the same");
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("::error file=fixtures/express-shop/src/routes/v1/orders.ts,line=20,title=RS001 payment-without-idempotency (critical)::Payment reached"),
        "{first}"
    );
    assert!(first.contains("%0ARequire an `Idempotency-Key`"), "{first}");
    assert!(
        out.contains("::warning file=fixtures/express-shop/src/routes/v1/orders.ts,line=22,"),
        "{out}"
    );
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("::notice title=retrysafe::8 mutation endpoints"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 6);
    // Shared causes are one annotation at the shared place.
    let (_, out, _) = run_at(
        &fixture("actix-key-tests"),
        &["check", "--format", "github", "--path-base", "."],
    );
    let memory: Vec<&str> = out.lines().filter(|l| l.contains("RS014")).collect();
    assert_eq!(memory.len(), 1, "{out}");
    assert!(
        memory[0].starts_with(
            "::warning file=src/idempotency.rs,line=89,title=RS014 in-memory-key-store (medium)::"
        ),
        "{}",
        memory[0]
    );
    assert!(
        memory[0].contains("Affects 4 endpoints: POST /api/payments%2C")
            || memory[0].contains("Affects 4 endpoints: POST /api/payments, "),
        "{}",
        memory[0]
    );

    // GitLab Code Quality.
    let (_, out, _) = run_at(
        &fixture("express-shop"),
        &["check", "--format", "gitlab", "--path-base", "."],
    );
    let issues: serde_json::Value = serde_json::from_str(&out).unwrap();
    let issues = issues.as_array().unwrap();
    assert_eq!(issues.len(), 5);
    let pay = &issues[0];
    assert!(
        pay["description"]
            .as_str()
            .unwrap()
            .starts_with("RS001 POST /api/v1/orders/{id}/pay: Payment reached")
    );
    assert_eq!(pay["check_name"], "payment-without-idempotency");
    assert_eq!(pay["severity"], "critical");
    assert_eq!(pay["location"]["path"], "src/routes/v1/orders.ts");
    assert_eq!(pay["location"]["lines"]["begin"], 20);
    assert_eq!(pay["fingerprint"].as_str().unwrap().len(), 16);
    let fps: std::collections::BTreeSet<&str> = issues
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(fps.len(), issues.len(), "fingerprints are unique");

    // JUnit.
    let (_, out, _) = run_at(&fixture("express-shop"), &["check", "--format", "junit"]);
    well_formed(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert!(
        out.contains("<testsuites name=\"retrysafe\" tests=\"8\" failures=\"5\">"),
        "{out}"
    );
    // Paths relative to the repository root (this one holds the fixture).
    assert!(out.contains("<testcase name=\"POST /api/v1/orders/{id}/pay\" classname=\"fixtures/express-shop/src/routes/v1/orders.ts\">"), "{out}");
    assert!(out.contains("<failure message=\"RS001\" type=\"retrysafe\">RS001 payment-without-idempotency (critical): Payment reached"), "{out}");
    assert!(well_formed("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a><b></a>").is_err());
}

#[test]
fn sarif_links_the_side_effect_and_takes_a_path_base() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (_, out, _) = run_at(
        root,
        &[
            "check",
            "fixtures/express-shop",
            "--format",
            "sarif",
            "--path-base",
            ".",
        ],
    );
    let sarif: serde_json::Value = serde_json::from_str(&out).unwrap();
    let first = &sarif["runs"][0]["results"][0];
    assert!(
        first["message"]["text"].as_str().unwrap().starts_with(
            "Payment reached with no idempotency key: [`stripe.paymentIntents.create` (src/services/payments.ts:19)](1) via"
        ),
        "{}",
        first["message"]["text"]
    );
    assert_eq!(first["relatedLocations"][0]["id"], 1);
    assert_eq!(
        first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "fixtures/express-shop/src/routes/v1/orders.ts"
    );
}

#[test]
fn paths_are_never_wrapped_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let deep = "services/payments-and-subscriptions-gateway/src/modules/recurring-billing-adjustments/http/routes/v2";
    write(dir.path(), &format!("{deep}/app.ts"), NOTES_APP);
    let (_, out, _) = run_at(
        dir.path(),
        &["check", "--format", "table", "--fail-on", "none"],
    );
    assert!(out.contains(&format!("{deep}/app.ts:6")), "{out}");
    let (_, out, _) = run_at(dir.path(), &["inventory"]);
    assert!(out.contains(&format!("{deep}/app.ts:6")), "{out}");
    // --path-base: from elsewhere, paths lead back to the files.
    let (_, out, _) = run_at(
        &dir.path().join("services"),
        &["check", "..", "--path-base", ".", "--fail-on", "none"],
    );
    assert!(
        out.contains("  --> ../services/payments-and-subscriptions-gateway/"),
        "{out}"
    );
    let _ = run_in(&["rules"]);
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn diff_reports_the_endpoints_a_change_makes_or_touches() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "package.json",
        r#"{"dependencies": {"express": "^4", "stripe": "^14"}}"#,
    );
    write(
        root,
        "src/app.ts",
        "import express from 'express';\nimport { PrismaClient } from '@prisma/client';\nimport { createNote } from './notes';\nconst prisma = new PrismaClient();\nconst app = express();\n\napp.post('/notes', createNote);\n\napp.post('/tags', async (req, res) => {\n  res.json(await prisma.tag.create({ data: req.body }));\n});\n\napp.listen(3000);\n",
    );
    write(
        root,
        "src/notes.ts",
        "import { PrismaClient } from '@prisma/client';\nconst prisma = new PrismaClient();\nexport async function createNote(req, res) {\n  res.json(await prisma.note.create({ data: req.body }));\n}\n",
    );
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "base"]);
    git(root, &["checkout", "-qb", "feature"]);
    // A new endpoint that charges, in a new file; the notes handler's file edited.
    write(
        root,
        "src/orders.ts",
        "import Stripe from 'stripe';\nconst stripe = new Stripe(process.env.STRIPE_KEY);\nexport async function payOrder(req, res) {\n  res.json(await stripe.charges.create({ amount: req.body.amount, currency: 'usd' }));\n}\n",
    );
    let app = std::fs::read_to_string(root.join("src/app.ts")).unwrap();
    write(
        root,
        "src/app.ts",
        &app.replace(
            "app.listen(3000);",
            "import { payOrder } from './orders';\napp.post('/orders/:id/pay', payOrder);\n\napp.listen(3000);",
        ),
    );
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "pay"]);
    let notes = std::fs::read_to_string(root.join("src/notes.ts")).unwrap();
    write(
        root,
        "src/notes.ts",
        &format!("{notes}// uncommitted edits count too\n"),
    );

    let (code, out, err) = run_at(root, &["check", "--diff", "main"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("diff: new `POST /orders/{id}/pay` reaches payment `stripe.charges.create` (src/orders.ts:4) with no idempotency mechanism; severity critical"),
        "{out}"
    );
    assert!(out.contains("diff: changed `POST /notes`"), "{out}");
    assert!(!out.contains("`POST /tags`"), "untouched: {out}");
    let (_, report) = json(root, &["--diff", "main"]);
    let d = &report["summary"]["diff"];
    assert_eq!(d["base"], "main");
    assert_eq!(
        d["new_endpoints"],
        serde_json::json!(["POST /orders/{id}/pay"])
    );
    assert_eq!(d["changed_endpoints"], serde_json::json!(["POST /notes"]));
    assert_eq!(d["changed_files"], 3);
    assert_eq!(
        report["endpoints"].as_array().unwrap().len(),
        3,
        "every endpoint is listed"
    );
    let endpoints: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["endpoint"].as_str().unwrap())
        .collect();
    assert_eq!(endpoints, vec!["POST /orders/{id}/pay", "POST /notes"]);
    // Nothing changed since HEAD but the notes file: a critical elsewhere does not gate.
    let (code, out, _) = run_at(root, &["check", "--diff", "HEAD"]);
    assert_eq!(code, 0, "{out}");

    // Clear errors.
    let (code, _, err) = run_at(root, &["check", "--diff", "no-such-branch"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--diff no-such-branch: no such revision"),
        "{err}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    write(elsewhere.path(), "src/app.ts", NOTES_APP);
    let (code, _, err) = run_at(elsewhere.path(), &["check", "--diff", "main"]);
    assert_eq!(code, 2);
    assert!(err.contains("--diff needs a git repository"), "{err}");
}

#[test]
fn the_default_markdown_fits_a_pull_request_comment_at_scale() {
    // 400 endpoints, each creating a record of its own: 400 causes.
    let dir = tempfile::tempdir().unwrap();
    let mut app = String::from(
        "import express from 'express';\nimport { PrismaClient } from '@prisma/client';\nconst prisma = new PrismaClient();\nconst app = express();\n",
    );
    for i in 0..400 {
        app.push_str(&format!(
            "app.post('/api/v1/organisations/{{org}}/projects/{{project}}/resources-{i}', async (req, res) => {{\n  res.json(await prisma.resourceNumber{i}.create({{ data: req.body }}));\n}});\n"
        ));
    }
    app.push_str("app.listen(3000);\n");
    write(dir.path(), "src/app.ts", &app);
    let (_, md, _) = run_at(
        dir.path(),
        &["check", "--format", "markdown", "--fail-on", "none"],
    );
    assert!(
        md.chars().count() < 65_536,
        "{} characters",
        md.chars().count()
    );
    assert!(
        md.contains("**400 with no mechanism**"),
        "the summary still counts them all"
    );
    assert!(
        md.contains("more causes in this section, left out to fit a pull-request comment"),
        "and says what it left out"
    );
    let (_, full, _) = run_at(
        dir.path(),
        &[
            "check",
            "--format",
            "markdown",
            "--fail-on",
            "none",
            "--full",
        ],
    );
    assert!(full.chars().count() > 65_536);
    assert_eq!(full.matches("### RS003").count(), 400);
    // The JSON keeps everything.
    let (_, report) = json(dir.path(), &[]);
    assert_eq!(report["findings"].as_array().unwrap().len(), 400);
}
