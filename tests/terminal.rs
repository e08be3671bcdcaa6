//! The terminal output: by default one short entry per cause, never wrapped, with paths that
//! resolve from where the user stands; with `--verbose` each finding as a compiler-style
//! diagnostic (miette) with the route's and the side effect's source lines.

mod common;

use common::{fixture, run_at, run_in};

fn shop() -> String {
    fixture("express-shop").to_str().unwrap().to_string()
}

#[test]
fn by_default_each_cause_is_a_short_entry_with_a_path_that_resolves_from_here() {
    let (code, out, err) = run_at(&fixture("express-shop"), &["check"]);
    assert_eq!(code, 1);
    assert!(err.is_empty(), "{err}");
    assert!(
        out.starts_with(
            "RS001 payment-without-idempotency (critical, likely): `POST /api/v1/orders/{id}/pay`\n  --> src/routes/v1/orders.ts:20\n  Payment reached with no idempotency key: `stripe.paymentIntents.create` (src/services/payments.ts:19) via payForOrder → createPaymentIntent.\n  help: Require an `Idempotency-Key` header"
        ),
        "{out}"
    );
    assert!(!out.contains('╭'), "no source excerpts by default: {out}");
    // From the repository's root, the path as typed leads to the file.
    let (_, out, _) = run_at(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        &["check", "fixtures/express-shop"],
    );
    assert!(
        out.contains("  --> fixtures/express-shop/src/routes/v1/orders.ts:20\n"),
        "{out}"
    );
    let last = out.lines().last().unwrap();
    assert!(
        last.contains("(5 findings from 5 causes); 24 files scanned (prisma 1, typescript 23); endpoints by framework: express 8"),
        "{last}"
    );
}

#[test]
fn verbose_renders_findings_as_diagnostics_with_source_lines() {
    let (code, out, err) = run_at(&fixture("express-shop"), &["check", "--verbose"]);
    assert_eq!(code, 1);
    assert!(
        err.is_empty(),
        "no progress bar or notes off a terminal: {err}"
    );
    assert!(!out.contains('\u{1b}'), "NO_COLOR");
    // The first finding: rule, name, severity, confidence.
    assert!(
        out.starts_with("RS001 payment-without-idempotency (critical, likely)\n"),
        "{out}"
    );
    // The route, with its source line and the endpoint as the label.
    assert!(out.contains("╭─[src/routes/v1/orders.ts:20:1]"), "{out}");
    assert!(
        out.contains(" 20 │ router.post('/:id/pay', validateParams(idParam)"),
        "{out}"
    );
    assert!(out.contains("╰── `POST /api/v1/orders/{id}/pay`"), "{out}");
    // The side effect in another file, with the calls that lead there.
    assert!(
        out.contains("the side effect is reached here via payForOrder → createPaymentIntent"),
        "{out}"
    );
    assert!(out.contains("╭─[src/services/payments.ts:19:3]"), "{out}");
    assert!(
        out.contains("╰── payment: `stripe.paymentIntents.create`"),
        "{out}"
    );
    // The change to make and its impact.
    assert!(
        out.contains("help: Require an `Idempotency-Key` header"),
        "{out}"
    );
    assert!(
        out.contains("Impact: A client retry after a timeout charges the customer a second time."),
        "{out}"
    );
    // Highs too (the receipt the endpoint is named to resend is low), and the summary line last.
    assert_eq!(
        out.matches("RS003 side-effect-without-idempotency (high, likely)")
            .count(),
        2
    );
    assert_eq!(
        out.matches("RS003 side-effect-without-idempotency (low, likely)")
            .count(),
        1
    );
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("8 mutation endpoints, 3 with idempotency; findings: 2 critical, 2 high, 0 medium, 1 low, 0 inverse (5 findings from 5 causes); "),
        "{last}"
    );
}

#[test]
fn quiet_prints_the_findings_only() {
    let (code, out, err) = run_in(&["check", &shop(), "--quiet"]);
    assert_eq!(code, 1);
    assert!(err.is_empty());
    assert!(out.contains("RS001 payment-without-idempotency"));
    assert!(!out.contains("mutation endpoints"), "{out}");
    let (code, out, _) = run_in(&["check", &shop(), "-q", "--format", "table"]);
    assert_eq!(code, 1);
    assert!(out.contains("RS001"));
    assert!(!out.contains("mutation endpoints"), "{out}");
    // Nothing at all when there is nothing to say.
    let empty = tempfile::tempdir().unwrap();
    let (code, out, err) = run_in(&[
        "check",
        empty.path().to_str().unwrap(),
        "-q",
        "--allow-empty",
    ]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
}

#[test]
fn diagnostics_are_listed_as_notes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.ts"), "export function f( {\n").unwrap();
    let (code, out, _) = run_at(dir.path(), &["check"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("No findings.\nnote: broken.ts:"), "{out}");
    assert!(out.contains("parse error"), "{out}");
    assert!(
        out.trim_end()
            .ends_with("1 diagnostics (notes above; --verbose for each)"),
        "{out}"
    );
}

#[test]
fn the_table_format_is_unchanged() {
    let (code, out, _) = run_at(&fixture("express-shop"), &["check", "--format", "table"]);
    assert_eq!(code, 1);
    assert!(out.starts_with('┌'), "{out}");
    assert!(out.contains("#1 RS001 POST /api/v1/orders/{id}/pay at src/routes/v1/orders.ts:20"));
}
