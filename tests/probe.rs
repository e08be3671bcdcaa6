//! `retrysafe probe` against two small servers of the test's own on 127.0.0.1 (no network): one
//! that implements keys as the draft standard says, one with a check-then-insert race, no
//! request fingerprint, and a unique violation that surfaces as a 500. The probe must pass the
//! first and fail the second on exactly the expected checks; its results then feed `check`.

mod common;
#[path = "common/probe_server.rs"]
mod probe_server;

use probe_server::{Server, start};
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::atomic::Ordering;

/// The app the probe audits: it describes the servers below.
fn app() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/probe-shop")
}

fn probe(server: &Server, extra: &[&str]) -> Output {
    let mut c = common::bin();
    c.args(["probe", app().to_str().unwrap(), "--base-url", &server.base]);
    c.args(extra);
    c.env("NO_COLOR", "1").stdin(Stdio::null());
    c.output().expect("run retrysafe probe")
}

fn json_probe(server: &Server) -> (i32, Value) {
    let out = probe(server, &["--yes", "--format", "json"]);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), v)
}

/// `endpoint` → `check` → `outcome`.
fn outcomes(v: &Value) -> HashMap<(String, String), String> {
    let mut out = HashMap::new();
    for e in v["endpoints"].as_array().unwrap() {
        for c in e["checks"].as_array().unwrap() {
            out.insert(
                (
                    e["endpoint"].as_str().unwrap().to_string(),
                    c["check"].as_str().unwrap().to_string(),
                ),
                c["outcome"].as_str().unwrap().to_string(),
            );
        }
    }
    out
}

fn expect(v: &Value, want: &[(&str, &str, &str)]) {
    let got = outcomes(v);
    for (endpoint, check, outcome) in want {
        assert_eq!(
            got.get(&(endpoint.to_string(), check.to_string()))
                .map(String::as_str),
            Some(*outcome),
            "{endpoint} {check}: {}",
            serde_json::to_string_pretty(v).unwrap()
        );
    }
    assert_eq!(got.len(), want.len(), "{got:?}");
}

fn validate(schema_file: &str, v: &Value) {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(schema_file)).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{schema_file}: {errors:?}");
}

#[test]
fn a_server_that_implements_keys_passes_every_check() {
    let server = start(true, 0);
    let (code, v) = json_probe(&server);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["base_url"], server.base);
    expect(
        &v,
        &[
            ("POST /api/orders", "concurrent", "passed"),
            ("POST /api/orders", "replay", "passed"),
            ("POST /api/orders", "mismatch", "passed"),
            ("POST /api/orders", "missing_key", "passed"),
            ("POST /api/orders", "duplicate_create", "skipped"),
            ("POST /api/users", "concurrent", "skipped"),
            ("POST /api/users", "replay", "skipped"),
            ("POST /api/users", "mismatch", "skipped"),
            ("POST /api/users", "missing_key", "skipped"),
            ("POST /api/users", "duplicate_create", "passed"),
        ],
    );
    let orders = &v["endpoints"][0];
    assert_eq!(orders["endpoint"], "POST /api/orders");
    assert!(
        orders["body_source"]
            .as_str()
            .unwrap()
            .starts_with("zod schema `createOrderSchema` (src/app.ts:10)"),
        "{orders}"
    );
    // The body built from the zod schema is one the server accepts; both concurrent requests
    // left together and one got 409 or the replay.
    let concurrent = &orders["checks"][0];
    assert_eq!(concurrent["responses"].as_array().unwrap().len(), 2);
    let sent: Value =
        serde_json::from_str(concurrent["responses"][0]["sent"].as_str().unwrap()).unwrap();
    assert_eq!(sent["quantity"], 1);
    assert!(sent.get("note").is_none(), "optional fields are left out");
    validate("docs/probe.schema.json", &v);
}

#[test]
fn a_racy_server_without_fingerprints_fails_exactly_the_checks_it_gets_wrong() {
    let server = start(false, 0);
    let (code, v) = json_probe(&server);
    assert_eq!(code, 1, "a failed check exits 1");
    expect(
        &v,
        &[
            ("POST /api/orders", "concurrent", "failed"),
            ("POST /api/orders", "replay", "passed"),
            ("POST /api/orders", "mismatch", "failed"),
            ("POST /api/orders", "missing_key", "passed"),
            ("POST /api/orders", "duplicate_create", "skipped"),
            ("POST /api/users", "concurrent", "skipped"),
            ("POST /api/users", "replay", "skipped"),
            ("POST /api/users", "mismatch", "skipped"),
            ("POST /api/users", "missing_key", "skipped"),
            ("POST /api/users", "duplicate_create", "failed"),
        ],
    );
    // A failed check carries both responses side by side.
    let concurrent = &v["endpoints"][0]["checks"][0];
    let statuses: Vec<u64> = concurrent["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, vec![201, 201], "{concurrent}");
    let duplicate = &v["endpoints"][1]["checks"][4];
    assert_eq!(duplicate["responses"][1]["status"], 500, "{duplicate}");
    validate("docs/probe.schema.json", &v);

    // The results feed the audit: failed checks raise (or confirm) their rule's finding with
    // the evidence; the exercised endpoints' other findings become confirmed.
    let results = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(results.path(), serde_json::to_string(&v).unwrap()).unwrap();
    let out = common::json_check(&app())
        .args(["--probe-results", results.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate("docs/report.schema.json", &report);
    let findings = report["findings"].as_array().unwrap();
    let find = |rule: &str, endpoint: &str| {
        findings
            .iter()
            .find(|f| f["rule"] == rule && f["endpoint"] == endpoint)
            .unwrap_or_else(|| panic!("{rule} on {endpoint}: {findings:?}"))
    };
    let rs004 = find("RS004", "POST /api/orders");
    assert_eq!(rs004["confidence"], "confirmed");
    assert_eq!(rs004["probe"]["check"], "concurrent");
    assert_eq!(rs004["probe"]["responses"].as_array().unwrap().len(), 2);
    assert_eq!(
        find("RS009", "POST /api/orders")["probe"]["check"],
        "mismatch"
    );
    let rs012 = find("RS012", "POST /api/users");
    assert_eq!(rs012["confidence"], "confirmed");
    assert!(rs012["message"].as_str().unwrap().contains("A probe of"));
    assert_eq!(find("RS010", "POST /api/orders")["confidence"], "confirmed");
    assert!(
        findings.iter().all(|f| f["confidence"] == "confirmed"),
        "every finding of an exercised endpoint is confirmed"
    );
}

#[test]
fn nothing_is_sent_without_consent_or_to_a_public_address() {
    let server = start(true, 0);
    // stdin is not a terminal and there is no --yes: refuse, exit 2, send nothing.
    let out = probe(&server, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pass --yes"), "{err}");
    assert!(
        err.contains("POST /api/orders") || err.contains("/api/orders"),
        "the plan is listed: {err}"
    );
    assert_eq!(server.state.requests.load(Ordering::SeqCst), 0);

    // A public address is refused before anything is resolved or sent.
    let out = common::run(&[
        "probe",
        app().to_str().unwrap(),
        "--base-url",
        "http://93.184.216.34",
        "--yes",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"));

    // Answering the prompt "n" sends nothing either (stdin piped: still not a terminal, so
    // the refusal comes first).
    let mut child = common::bin()
        .args(["probe", app().to_str().unwrap(), "--base-url", &server.base])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"y\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(server.state.requests.load(Ordering::SeqCst), 0);
}

#[test]
fn named_endpoints_take_a_body_file_and_unknown_bodies_are_skipped_with_a_reason() {
    let server = start(true, 0);
    let body = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        body.path(),
        r#"{"sku": "SKU-1", "quantity": 3, "email": "a@example.com"}"#,
    )
    .unwrap();
    let out = probe(
        &server,
        &[
            "--yes",
            "--format",
            "json",
            "--endpoint",
            "POST /api/orders",
            "--body-file",
            body.path().to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["endpoints"].as_array().unwrap().len(), 1);
    assert!(
        v["endpoints"][0]["body_source"]
            .as_str()
            .unwrap()
            .starts_with("--body-file")
    );
    let sent = v["endpoints"][0]["checks"][1]["responses"][0]["sent"]
        .as_str()
        .unwrap();
    assert!(sent.contains("SKU-1"), "{sent}");

    let out = probe(
        &server,
        &[
            "--yes",
            "--format",
            "json",
            "--endpoint",
            "POST /api/refunds",
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = &v["endpoints"][0]["checks"][0];
    assert_eq!(check["outcome"], "skipped");
    assert!(
        check["detail"].as_str().unwrap().contains("--body-file"),
        "{check}"
    );
}

#[test]
fn the_table_and_markdown_show_the_evidence() {
    let server = start(false, 0);
    let out = probe(&server, &["--yes"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("concurrent"), "{table}");
    assert!(
        table.contains("checks: 2 passed, 3 failed, 5 skipped"),
        "{table}"
    );
    let out = probe(&server, &["--yes", "--format", "markdown"]);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("### concurrent failed: the responses"), "{md}");
    assert!(md.contains("| concurrent 1 of 2 |"), "{md}");
}

#[test]
fn the_shipped_probe_schema_is_the_generated_one() {
    let out = common::run(&["schema", "--probe"]);
    assert_eq!(out.status.code(), Some(0));
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/probe.schema.json"),
    )
    .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout) == shipped,
        "docs/probe.schema.json is stale: regenerate it with `cargo run -- schema --probe > docs/probe.schema.json`"
    );
}

/// The body of each endpoint of `fixture`, as the probe plans it (the test server answers 404
/// to these paths, so every check is skipped after the first request).
fn body_of(server: &Server, fixture: &str, endpoint: &str) -> (String, String) {
    let out = common::bin()
        .args([
            "probe",
            common::fixture(fixture).to_str().unwrap(),
            "--base-url",
            &server.base,
            "--yes",
            "--format",
            "json",
            "--endpoint",
            endpoint,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &v["endpoints"][0];
    (
        e["body_source"].as_str().unwrap().to_string(),
        e["checks"][1]["responses"][0]["sent"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[test]
fn bodies_come_from_document_examples_then_validation_schemas() {
    let server = start(true, 0);
    let (source, sent) = body_of(&server, "express-openapi-docs", "POST /api/v1/transfers");
    assert_eq!(source, "the OpenAPI example at openapi.yaml:9");
    assert_eq!(
        serde_json::from_str::<Value>(&sent).unwrap(),
        serde_json::json!({"to_account": "DE89370400440532013000", "amount": 2500})
    );
    let (source, _) = body_of(&server, "axum-openapi-docs", "POST /api/v1/transfers");
    assert_eq!(source, "the utoipa example at src/routes/transfers.rs:24");
    let (source, sent) = body_of(&server, "axum-openapi-docs", "POST /api/v1/payouts");
    assert_eq!(
        source,
        "serde struct `NewPayout` (src/routes/payouts.rs:11)"
    );
    let sent: Value = serde_json::from_str(&sent).unwrap();
    assert_eq!(sent["amount"], 1);
    assert!(
        sent["bank_account"].as_str().unwrap().starts_with("x-"),
        "{sent}"
    );
}

#[test]
fn a_base_url_where_nothing_listens_is_an_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = common::run(&[
        "probe",
        app().to_str().unwrap(),
        "--base-url",
        &format!("http://127.0.0.1:{port}"),
        "--yes",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing answers"));
}
