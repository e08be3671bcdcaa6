//! The Markdown report of a handful of fixtures, as insta snapshots
//! (`tests/snapshots/markdown__<fixture>.snap`): the short form a pull-request comment gets, and
//! one `--full` report. Every section of the methodology shows in them, in order.

mod common;

use common::{bin, fixture};

fn markdown(name: &str, full: bool) -> String {
    let root = fixture(name);
    let mut args = vec![
        "check",
        root.to_str().unwrap(),
        "--format",
        "markdown",
        "--fail-on",
        "none",
    ];
    if full {
        args.push("--full");
    }
    let out = bin().args(&args).output().expect("run retrysafe");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn snapshot(name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

#[test]
fn express_shop() {
    snapshot("express-shop", &markdown("express-shop", false));
}

#[test]
fn express_shop_full() {
    snapshot("express-shop-full", &markdown("express-shop", true));
}

#[test]
fn axum_linker_parity() {
    snapshot("axum-linker-parity", &markdown("axum-linker-parity", false));
}

#[test]
fn express_keys_header_pattern() {
    snapshot(
        "express-keys-header-pattern",
        &markdown("express-keys-header-pattern", false),
    );
}
