//! Rust input that `syn` cannot or should not parse becomes a diagnostic, never a panic or a
//! stack overflow, and the rest of the crate is still audited.

mod common;

use std::fs;

fn write(root: &std::path::Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

#[test]
fn hostile_rust_files_become_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"hostile\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\naxum = \"0.7\"\nsqlx = \"0.8\"\n",
    );
    write(
        root,
        "src/main.rs",
        "mod deep;\nmod deep_ops;\nmod deep_chain;\nmod unstable;\nmod broken;\n\nuse axum::{routing::post, Router};\n\nasync fn add_note(pool: sqlx::PgPool) {\n    sqlx::query!(\"insert into notes (body) values ($1)\", \"x\").execute(&pool).await.unwrap();\n}\n\nfn app() -> Router {\n    Router::new().route(\"/notes\", post(add_note))\n}\n",
    );
    let depth = 100_000;
    // 100,000-deep nested parentheses, one level a line.
    write(
        root,
        "src/deep.rs",
        &format!(
            "pub fn f() -> i32 {{\n{}1{}\n}}\n",
            "(\n".repeat(depth),
            ")\n".repeat(depth)
        ),
    );
    // 100,000 prefix operators in a row.
    write(
        root,
        "src/deep_ops.rs",
        &format!("pub fn g() -> bool {{\n{}true\n}}\n", "!\n".repeat(depth)),
    );
    // A 100,000-long method chain and operator chain (flat for the parser, deep as a tree).
    write(
        root,
        "src/deep_chain.rs",
        &format!(
            "pub fn h(x: Vec<i32>) -> usize {{\n    let a = 1{};\n    x.iter(){}.count()\n}}\n",
            "\n + 1".repeat(depth),
            "\n.rev()".repeat(depth)
        ),
    );
    // Unstable syntax syn does not know.
    write(
        root,
        "src/unstable.rs",
        "pub fn k() -> i32 {\n    let x = yeet 3;\n    x\n}\n",
    );
    write(root, "src/broken.rs", "pub fn broken( {\n");
    let report = common::json_report(root);
    let diags: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}: {}",
                d["file"].as_str().unwrap(),
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    for file in [
        "src/deep.rs",
        "src/deep_ops.rs",
        "src/unstable.rs",
        "src/broken.rs",
    ] {
        assert!(
            diags.iter().any(|d| d.starts_with(file)),
            "no diagnostic for {file}: {diags:?}"
        );
    }
    assert!(diags.iter().any(|d| d.contains("too deep")), "{diags:?}");
    let endpoints = report["endpoints"].as_array().unwrap();
    assert!(
        endpoints
            .iter()
            .any(|e| e["method"] == "POST" && e["path"] == "/notes" && e["severity"] == "high"),
        "the healthy route was lost: {endpoints:?}"
    );
}

fn axum_crate(root: &std::path::Path, name: &str) {
    write(
        root,
        "Cargo.toml",
        &format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\naxum = \"0.7\"\n"
        ),
    );
}

fn routes_of(report: &serde_json::Value) -> Vec<String> {
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

/// A closure runs in the scope it was written in: `build` inside `cached`'s closure is `cached`'s
/// argument, not the closure itself (which recursed without end), and a closure rebinding a name
/// calls the earlier binding.
#[test]
fn closures_capture_their_defining_scope() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    axum_crate(root, "closures");
    write(
        root,
        "src/main.rs",
        r#"use axum::{routing::post, Router};

fn build_once<F: Fn(&str) -> Router>(path: &str, f: F) -> Router {
    f(path)
}

fn cached<F: Fn(&str) -> Router>(path: &str, build: F) -> Router {
    build_once(path, |p| build(p))
}

async fn create() {}

fn app() -> Router {
    let wrap = |r: Router| r;
    let wrap = |r: Router| wrap(r);
    let built = cached("/built", |p| Router::new().route(p, post(create)));
    wrap(built).route("/direct", post(create))
}

fn main() {
    let _ = app();
}
"#,
    );
    let report = common::json_report(root);
    assert_eq!(routes_of(&report), ["POST /built", "POST /direct"]);
}

/// A crate root that `use self::mN::*`s its modules, each of which `use super::*`s, and two
/// modules re-exporting each other's globs: every name is looked up once, not once per path
/// through the globs (exponential in the fan-out), and the cycle ends.
#[test]
fn glob_imports_in_cycles_resolve_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    axum_crate(root, "globs");
    let n = 12;
    let mut main = String::from("use axum::{routing::post, Router};\nmod ring_a;\nmod ring_b;\n");
    for i in 0..n {
        main.push_str(&format!("mod m{i};\npub use self::m{i}::*;\n"));
    }
    main.push_str("async fn create() {}\n\nfn app() -> Router {\n    Router::new()\n");
    for i in 0..n {
        main.push_str(&format!("        .merge(m{i}::part())\n"));
    }
    main.push_str("        .merge(ring_a::ring())\n}\n\nfn main() {\n    let _ = app();\n}\n");
    write(root, "src/main.rs", &main);
    for i in 0..n {
        write(
            root,
            &format!("src/m{i}.rs"),
            &format!(
                "use super::*;\n\npub fn part() -> Router {{\n    Router::new().route(\"/m{i}\", post(create)).merge(not_defined_anywhere())\n}}\n"
            ),
        );
    }
    write(
        root,
        "src/ring_a.rs",
        "pub use super::ring_b::*;\nuse axum::{routing::post, Router};\n\npub fn ring() -> Router {\n    Router::new().route(\"/ring\", post(crate::create)).merge(missing_in_ring())\n}\n",
    );
    write(
        root,
        "src/ring_b.rs",
        "pub use super::ring_a::*;\n\npub fn other() {\n    also_missing()\n}\n",
    );
    let report = common::json_report(root);
    let mut want: Vec<String> = (0..n).map(|i| format!("POST /m{i}")).collect();
    want.push("POST /ring".into());
    want.sort();
    assert_eq!(routes_of(&report), want);
}

/// A router built by one long chain of `.route(..)` calls keeps every route: the chain is walked
/// link by link, not cut at a depth limit (which dropped the `Router::new()` at its root).
#[test]
fn long_route_chains_keep_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    axum_crate(root, "chain");
    let n = 1000;
    let routes: String = (0..n)
        .map(|i| format!("\n        .route(\"/r{i}\", post(create))"))
        .collect();
    write(
        root,
        "src/main.rs",
        &format!(
            "use axum::{{routing::post, Router}};\n\nasync fn create() {{}}\n\nfn app() -> Router {{\n    Router::new(){routes}\n}}\n\nfn main() {{\n    let _ = app();\n}}\n"
        ),
    );
    let report = common::json_report(root);
    assert_eq!(report["endpoints"].as_array().unwrap().len(), n);
    assert!(report["diagnostics"].as_array().unwrap().is_empty());
}

/// Constants that refer to each other, and a const fn that calls itself, end: the prefix is
/// unknown and said so, and the routes are kept.
#[test]
fn constant_cycles_end_in_a_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"cycles\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nactix-web = \"4\"\n",
    );
    write(
        root,
        "src/main.rs",
        r#"use actix_web::{web, App, HttpResponse};

const A: &str = B;
const B: &str = A;

const fn looped(n: &str) -> &str {
    looped(n)
}

async fn create() -> HttpResponse {
    HttpResponse::Ok().finish()
}

fn app() {
    let _ = App::new()
        .service(web::scope(A).route("/a", web::post().to(create)))
        .service(web::scope(&format!("/{}", looped("x"))).route("/b", web::post().to(create)));
}

fn main() {
    app();
}
"#,
    );
    let report = common::json_report(root);
    assert_eq!(routes_of(&report), ["POST /a", "POST /b"]);
    let diags = report["diagnostics"].as_array().unwrap();
    assert!(
        diags.iter().any(|d| d["message"]
            .as_str()
            .unwrap()
            .contains("not statically known")),
        "{diags:?}"
    );
}

/// Manifests and the configuration are read only as regular files inside the root: a FIFO in
/// place of `Cargo.toml` or a symlink to `/dev/zero` in place of `package.json` does not hang,
/// a `retrysafe.toml` linking out of the root is refused without quoting its target, and a
/// broken `Cargo.toml` is a diagnostic.
#[cfg(unix)]
#[test]
fn manifests_are_regular_files_inside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("app");
    axum_crate(&root, "manifests");
    write(
        &root,
        "src/main.rs",
        "use axum::{routing::post, Router};\nmod jobs;\nasync fn create() {}\nfn main() {\n    let _: Router = Router::new().route(\"/x\", post(create));\n}\n",
    );
    write(&root, "src/jobs.rs", "pub fn run() {}\n");
    // a member crate whose manifest is a FIFO, and one whose manifest is broken
    write(&root, "fifo/src/lib.rs", "pub fn f() {}\n");
    let fifo = root.join("fifo/Cargo.toml");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    write(&root, "broken/src/lib.rs", "pub fn g() {}\n");
    write(&root, "broken/Cargo.toml", "[package\nname = \"broken\"\n");
    std::os::unix::fs::symlink("/dev/zero", root.join("package.json")).unwrap();
    write(dir.path(), "secret.txt", "password = \"hunter2\"\n");
    let report = common::json_report(&root);
    assert_eq!(routes_of(&report), ["POST /x"]);
    let diags: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}: {}",
                d["file"].as_str().unwrap(),
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        diags
            .iter()
            .any(|d| d.starts_with("fifo/Cargo.toml: Cargo.toml is not a regular file")),
        "{diags:?}"
    );
    assert!(
        diags
            .iter()
            .any(|d| d.starts_with("broken/Cargo.toml: Cargo.toml is not valid TOML")),
        "{diags:?}"
    );
    // the configuration: a symlink out of the root is an error that does not quote the target
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("retrysafe.toml")).unwrap();
    let out = common::bin()
        .args(["check", root.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("symlink out of the scanned folder"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

/// A crate with a healthy route in `src/main.rs` and `text` in `src/deep.rs`: the audit completes
/// with 1 and 2 threads alike, `src/deep.rs` is a diagnostic that says it nests too deep, and the
/// healthy route is kept.
fn nests_too_deep(text: &str) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    axum_crate(root, "deep");
    write(
        root,
        "src/main.rs",
        "mod deep;\nuse axum::{routing::post, Router};\nasync fn create() {}\nfn main() {\n    let _: Router = Router::new().route(\"/x\", post(create));\n}\n",
    );
    write(root, "src/deep.rs", text);
    let report = common::json_report_any_threads(root, &[]);
    assert_eq!(routes_of(&report), ["POST /x"]);
    let diags = common::diagnostics(&report);
    assert!(
        diags
            .iter()
            .any(|d| d.starts_with("src/deep.rs:") && d.contains("too deep")),
        "{diags:?}"
    );
}

/// Levels of nesting in the hostile files below: one a line, so none looks minified.
const LEVELS: usize = 20_000;

#[test]
fn nested_closures_with_parameters_are_a_diagnostic() {
    nests_too_deep(&format!(
        "pub fn f() {{\n    let c = {}1;\n}}\n",
        "|a: u8|\n".repeat(LEVELS)
    ));
}

#[test]
fn nested_move_closures_are_a_diagnostic() {
    nests_too_deep(&format!(
        "pub fn f() {{\n    let c = {}1;\n}}\n",
        "move ||\n".repeat(LEVELS)
    ));
}

#[test]
fn nested_generic_arguments_are_a_diagnostic() {
    nests_too_deep(&format!(
        "pub struct S {{\n    x: {}u8{},\n}}\n",
        "Option<\n".repeat(LEVELS),
        ">\n".repeat(LEVELS)
    ));
}

#[test]
fn nested_function_types_are_a_diagnostic() {
    nests_too_deep(&format!("pub type F = {}u8;\n", "fn() ->\n".repeat(LEVELS)));
    nests_too_deep(&format!(
        "pub fn f() -> {}u8 {{\n    todo!()\n}}\n",
        "impl Fn() ->\n".repeat(LEVELS)
    ));
}

#[test]
fn nested_references_and_pointers_are_a_diagnostic() {
    nests_too_deep(&format!(
        "pub fn f(x: {}u8) {{}}\n",
        "&mut\n".repeat(LEVELS)
    ));
    nests_too_deep(&format!("pub type P = {}u8;\n", "*const\n".repeat(LEVELS)));
}

#[test]
fn nested_returns_and_assignments_are_a_diagnostic() {
    nests_too_deep(&format!(
        "pub fn f() -> u8 {{\n    {}1\n}}\n",
        "return\n".repeat(LEVELS)
    ));
    nests_too_deep(&format!(
        "pub fn f() {{\n    let mut a = 0;\n    {}1;\n}}\n",
        "a =\n".repeat(LEVELS)
    ));
}
