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
