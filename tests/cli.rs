//! The command line as a user runs it: formats, outputs, exit codes, rules and explain.

mod common;

use common::{fixture, run};

fn shop() -> String {
    fixture("express-shop").to_str().unwrap().to_string()
}

#[test]
fn check_exits_1_on_critical_and_0_below_the_threshold() {
    assert_eq!(run(&["check", &shop()]).status.code(), Some(1));
    assert_eq!(
        run(&["check", &shop(), "--fail-on", "none"]).status.code(),
        Some(0)
    );
    // The edge-forms app has highs but no critical.
    let edge = fixture("express-edge-forms");
    assert_eq!(
        run(&["check", edge.to_str().unwrap()]).status.code(),
        Some(0)
    );
    assert_eq!(
        run(&[
            "check",
            edge.to_str().unwrap(),
            "--format",
            "json",
            "--fail-on",
            "high"
        ])
        .status
        .code(),
        Some(1)
    );
}

#[test]
fn table_output_names_rule_location_and_summary() {
    let out = run(&["check", &shop()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("RS001"), "{text}");
    assert!(text.contains("src/routes/v1/orders.ts:20"), "{text}");
    assert!(text.contains("8 mutation endpoints"), "{text}");
    assert!(!text.contains('\u{1b}'), "no colour when not a TTY");
}

#[test]
fn markdown_report_has_every_section_and_says_what_is_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.md");
    let out = run(&[
        "check",
        &shop(),
        "--format",
        "markdown",
        "-o",
        path.to_str().unwrap(),
        "--fail-on",
        "none",
        "--full",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "--output writes nothing to stdout");
    let md = std::fs::read_to_string(path).unwrap();
    for section in [
        "Executive summary",
        "Mutation inventory",
        "Idempotency Mechanism",
        "Header Pattern",
        "Storage",
        "Client Generation",
        "Atomic Check-Insert",
        "Response Storage",
        "Request Hash",
        "Expiration",
        "Webhook Idempotency",
        "Constraint-Based",
        "Error Response",
        "Test Coverage",
        "Documentation",
        "Per-Mutation Profile",
        "Cancellation + Idempotency",
        "Over-Built",
        "Positive Findings",
    ] {
        assert!(
            md.contains(&format!("## {section}\n")),
            "missing section {section}"
        );
    }
    assert!(md.contains("| `POST /api/v1/orders/{id}/pay` (src/routes/v1/orders.ts:20) | db_update, payment | none | critical |"), "{md}");
    assert!(
        md.contains("## Documentation\n\nNo API documentation in the repository"),
        "{md}"
    );
    assert!(
        md.contains("No client code in the repository sends an idempotency key.\n\nNone found (checked: RS006)."),
        "{md}"
    );
    assert!(md.contains("- Where: `src/routes/v1/orders.ts:20`"), "{md}");
}

#[test]
fn markdown_by_default_fits_a_pull_request_comment() {
    let out = run(&[
        "check",
        &shop(),
        "--format",
        "markdown",
        "--fail-on",
        "none",
    ]);
    let md = String::from_utf8(out.stdout).unwrap();
    // The gaps first, named.
    let summary =
        &md[md.find("## Executive summary").unwrap()..md.find("## Mutation inventory").unwrap()];
    assert!(
        summary.contains(
            "- **Highest-risk gap:** POST /api/v1/orders/{id}/pay: payment without idempotency."
        ),
        "{summary}"
    );
    assert!(summary.contains("**5 with no mechanism**"), "{summary}");
    assert!(
        summary.contains("unknown (a call on the way could not be followed)**"),
        "{summary}"
    );
    assert!(summary.contains("from 5 causes"), "{summary}");
    // Sections with findings are there; the empty ones are one line.
    assert!(md.contains("## Idempotency Mechanism\n"), "{md}");
    assert!(!md.contains("## Header Pattern\n"), "{md}");
    assert!(
        md.contains(
            "## Nothing found\n\nNo findings in: Header Pattern (RS008, RS011, RS016, RS019), "
        ),
        "{md}"
    );
    // The per-mutation profile is folded.
    assert!(md.contains("## Per-Mutation Profile\n\n<details><summary>8 endpoints: side effects and mechanisms</summary>"), "{md}");
    assert!(md.len() < 65_536);
}

#[test]
fn json_report_follows_the_contract() {
    let report = common::json_report(&fixture("express-shop"));
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["tool"]["name"], "retrysafe");
    assert_eq!(report["summary"]["mutation_endpoints"], 8);
    assert_eq!(report["summary"]["by_severity"]["critical"], 2);
    assert_eq!(
        report["summary"]["highest_risk"],
        "POST /api/v1/orders/{id}/pay: payment without idempotency"
    );
    let pay = report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "/api/v1/orders/{id}/pay")
        .unwrap();
    assert_eq!(pay["framework"], "express");
    assert_eq!(pay["handler"], "payOrder");
    assert_eq!(pay["classification"], "not_idempotent");
    let payment = pay["side_effects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "payment")
        .unwrap();
    assert_eq!(payment["file"], "src/services/payments.ts");
    assert!(
        payment["callee"]
            .as_str()
            .unwrap()
            .contains("paymentIntents.create")
    );
    let f = &report["findings"][0];
    assert_eq!(f["rule"], "RS001");
    assert_eq!(f["name"], "payment-without-idempotency");
    assert_eq!(f["section"], "Idempotency Mechanism");
    assert_eq!(f["endpoint"], "POST /api/v1/orders/{id}/pay");
    assert_eq!(f["confidence"], "likely");
}

#[test]
fn inventory_formats() {
    let md =
        String::from_utf8(run(&["inventory", &shop(), "--format", "markdown"]).stdout).unwrap();
    assert!(
        md.starts_with("| Endpoint | Side Effect | Idempotency Mechanism | Severity |"),
        "{md}"
    );
    assert_eq!(md.lines().count(), 2 + 8);
    let csv = String::from_utf8(run(&["inventory", &shop(), "--format", "csv"]).stdout).unwrap();
    assert_eq!(
        csv.lines().next(),
        Some(
            "method,path,framework,file,line,handler,side_effects,mechanisms,classification,severity,protocol,path_complete"
        )
    );
    assert!(
        csv.lines().any(|l| l
            .starts_with("POST,/api/v1/refunds,express,src/routes/v1/refunds.ts,")
            && l.ends_with(",rest,true")),
        "{csv}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&run(&["inventory", &shop(), "--format", "json"]).stdout).unwrap();
    assert_eq!(json["endpoints"].as_array().unwrap().len(), 8);
    assert!(json.get("findings").is_none());
    let table = run(&["inventory", &shop()]);
    assert_eq!(table.status.code(), Some(0));
    assert!(
        String::from_utf8(table.stdout)
            .unwrap()
            .contains("POST /api/v1/customers")
    );
}

/// A route whose path is partly unknown says so in every inventory format.
#[test]
fn inventory_marks_incomplete_paths() {
    let root = fixture("express-incomplete-paths");
    let root = root.to_str().unwrap();
    let csv = String::from_utf8(run(&["inventory", root, "--format", "csv"]).stdout).unwrap();
    assert!(
        csv.lines().any(
            |l| l.starts_with("POST,/exports,express,src/routes/legacy.ts,")
                && l.ends_with(",rest,false")
        ),
        "{csv}"
    );
    assert!(
        csv.lines()
            .any(|l| l.starts_with("DELETE,/api/invoices/{id},") && l.ends_with(",rest,true")),
        "{csv}"
    );
    let md = String::from_utf8(run(&["inventory", root, "--format", "markdown"]).stdout).unwrap();
    assert!(
        md.contains("| `POST /exports` (path incomplete) (src/routes/legacy.ts:7) |"),
        "{md}"
    );
    assert!(
        md.contains("| `DELETE /api/invoices/{id}` (src/routes/invoices.ts:12) |"),
        "{md}"
    );
    let table = String::from_utf8(run(&["inventory", root]).stdout).unwrap();
    assert!(
        table.contains("POST trpc:invoice.issue (path incomplete)"),
        "{table}"
    );
}

/// An audit of one package of a workspace, whose mount prefix is a constant of another package,
/// cannot read the prefix: the routes say so (`path_complete: false`) and a diagnostic names the
/// import; from the root the same routes are whole.
#[test]
fn a_prefix_from_outside_the_scanned_package_is_said() {
    let root = fixture("express-workspace-prefix");
    let server = root.join("packages/server");
    let report = common::json_report(&server);
    let endpoints = report["endpoints"].as_array().unwrap();
    let post = endpoints
        .iter()
        .find(|e| e["method"] == "POST")
        .expect("the POST route is listed");
    assert_eq!(post["path"], "/orders", "{report}");
    assert_eq!(post["path_complete"], false, "{report}");
    let diagnostics = common::diagnostics(&report);
    assert!(
        diagnostics
            .iter()
            .any(|d| d.contains("`../../shared/src/constants`")
                && d.contains("not in the scanned tree")),
        "{diagnostics:?}"
    );
    let whole = common::json_report(&root);
    assert!(
        whole["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["path"].as_str().unwrap().starts_with("/api/v1/")
                && e["path_complete"] != false),
        "{whole}"
    );
}

#[test]
fn rules_and_explain() {
    let rules = String::from_utf8(run(&["rules"]).stdout).unwrap();
    assert!(
        rules.contains("RS001  payment-without-idempotency"),
        "{rules}"
    );
    assert!(rules.contains("RS023"), "{rules}");
    let doc = String::from_utf8(run(&["explain", "RS001"]).stdout).unwrap();
    for part in [
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "Use instead:",
    ] {
        assert!(doc.contains(part), "{doc}");
    }
    let by_name = run(&["explain", "side-effect-without-idempotency"]);
    assert!(
        String::from_utf8(by_name.stdout)
            .unwrap()
            .starts_with("# RS003")
    );
    let unknown = run(&["explain", "RS999"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown rule"));
}

#[test]
fn bad_arguments_are_exit_2() {
    assert_eq!(
        run(&["check", ".", "--format", "yaml"]).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["check", ".", "--fail-on", "sometimes"]).status.code(),
        Some(2)
    );
}

#[test]
fn output_is_byte_identical_across_runs_and_thread_counts() {
    for name in ["express-shop", "express-keyed", "express-edge-forms"] {
        let path = fixture(name);
        let with_threads = |n: &str| {
            common::json_check(&path)
                .env("RAYON_NUM_THREADS", n)
                .output()
                .unwrap()
                .stdout
        };
        let one = with_threads("1");
        assert!(!one.is_empty());
        assert_eq!(one, with_threads("2"), "{name}: 1 vs 2 threads");
        assert_eq!(one, with_threads("2"), "{name}: two runs");
    }
}

#[test]
fn the_documentation_section_reads_the_api_documents() {
    let out = run(&[
        "check",
        fixture("express-openapi-docs").to_str().unwrap(),
        "--format",
        "markdown",
        "--fail-on",
        "none",
    ]);
    let md = String::from_utf8(out.stdout).unwrap();
    let section =
        &md[md.find("## Documentation\n").unwrap()..md.find("## Per-Mutation Profile").unwrap()];
    assert!(
        section.contains("- `openapi.yaml` (OpenAPI 3.0.3): 2 mutation operations."),
        "{section}"
    );
    assert!(
        section.contains("| `POST /api/v1/transfers` | `openapi.yaml:9` (OpenAPI) | `Idempotency-Key` (required) | 24 h | expires (`src/jobs/purgeIdempotencyKeys.ts:5`) |"),
        "{section}"
    );
    assert!(
        section.contains("| `POST /api/v1/payouts` | `openapi.yaml:31` (OpenAPI) | **missing** |"),
        "{section}"
    );
    assert!(
        section.contains("### RS021 idempotency-undocumented — `POST /api/v1/payouts`"),
        "{section}"
    );

    let doc = String::from_utf8(run(&["explain", "RS021"]).stdout).unwrap();
    assert!(doc.starts_with("# RS021 idempotency-undocumented"), "{doc}");
    assert!(
        doc.contains("Severity: low · Section: Documentation"),
        "{doc}"
    );
    assert!(
        doc.contains("@nestjs/swagger") && doc.contains("utoipa"),
        "{doc}"
    );
}
