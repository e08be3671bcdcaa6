//! Every fixture carries its expectations: `expected.json` (the inventory) and `// expect: RSxxx`
//! markers on the registration lines (the findings; `# expect: RSxxx` in an API document). One harness checks them all through the binary.
//! A marker may name the confidence too (`// expect: RS007(confirmed)`), and an endpoint in
//! `expected.json` the tests that send it one key twice or concurrently (`"tests"`), and
//! `"path_complete": false` where part of its path could not be read. Findings on a file that
//! cannot carry a comment (a JSON route declaration) are listed in `expected.json` as
//! `"findings_outside_source": ["RS003 api/createOrder/route.json:2"]`. Beside these, each
//! fixture's whole JSON report is an insta snapshot (`tests/snapshots/<fixture>.snap`).

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::kinds;

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

type Marker = (String, String, u64);

/// (rule, file, line) for every `// expect:` marker: trailing on the line it names, or alone on the
/// line above the registration it names; with the confidence where the marker names one.
fn markers(root: &Path) -> (BTreeSet<Marker>, BTreeMap<Marker, String>) {
    let mut out = BTreeSet::new();
    let mut confidence = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if ![
                "ts", "tsx", "js", "jsx", "mjs", "cjs", "rs", "vue", "svelte", "yaml", "yml",
            ]
            .contains(&ext)
            {
                continue;
            }
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_str()
                .unwrap()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&p).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                // `# expect:` in YAML (API documents)
                let comment = if ext.starts_with("y") { "#" } else { "//" };
                let Some(pos) = l.find(&format!("{comment} expect:")) else {
                    continue;
                };
                let ids: Vec<String> = l[pos + comment.len() + 8..]
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| s.starts_with("RS"))
                    .collect();
                let mut line = i + 1;
                if l.trim_start().starts_with(comment) {
                    let mut j = i + 1;
                    while j < lines.len() && lines[j].trim_start().starts_with(comment) {
                        j += 1;
                    }
                    line = j + 1;
                }
                for id in ids {
                    let (id, conf) = match id.split_once('(') {
                        Some((id, c)) => {
                            (id.to_string(), Some(c.trim_end_matches(')').to_string()))
                        }
                        None => (id, None),
                    };
                    let marker = (id, rel.clone(), line as u64);
                    if let Some(c) = conf {
                        confidence.insert(marker.clone(), c);
                    }
                    out.insert(marker);
                }
            }
        }
    }
    (out, confidence)
}

/// `"twice test/x.test.ts:12"` for each test an endpoint lists.
fn tests_of(e: &Value) -> Option<Value> {
    let tests = e["idempotency_tests"].as_array()?;
    Some(
        tests
            .iter()
            .map(|t| {
                let kind = match (t["same_key_twice"].as_bool(), t["concurrent"].as_bool()) {
                    (Some(true), Some(true)) => "twice+concurrent",
                    (Some(true), _) => "twice",
                    _ => "concurrent",
                };
                Value::String(format!(
                    "{kind} {}:{}",
                    t["file"].as_str().unwrap(),
                    t["line"]
                ))
            })
            .collect(),
    )
}

fn check_fixture(name: &str) {
    let root = common::fixture(name);
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("expected.json")).unwrap())
            .unwrap();
    let report = common::json_report(&root);
    snapshot(name, &report);

    let got: Vec<Value> = report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let mut v = serde_json::json!({
                "method": e["method"], "path": e["path"], "protocol": e["protocol"],
                "file": e["file"], "line": e["line"],
                "side_effects": kinds(&e["side_effects"]), "mechanisms": kinds(&e["mechanisms"]),
                "classification": e["classification"], "severity": e["severity"],
            });
            if let Some(tests) = tests_of(e) {
                v["tests"] = tests;
            }
            // Written only where part of the path could not be read.
            if e["path_complete"] == Value::Bool(false) {
                v["path_complete"] = Value::Bool(false);
            }
            v
        })
        .collect();
    let mut want: Vec<Value> = expected["endpoints"].as_array().unwrap().clone();
    let key = |v: &Value| {
        (
            v["path"].as_str().unwrap().to_string(),
            v["method"].as_str().unwrap().to_string(),
        )
    };
    want.sort_by_key(key);
    let mut got_sorted = got.clone();
    got_sorted.sort_by_key(key);
    assert_eq!(
        serde_json::to_string_pretty(&got_sorted).unwrap(),
        serde_json::to_string_pretty(&want).unwrap(),
        "{name}: inventory differs from expected.json"
    );

    let findings: BTreeSet<(String, String, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().into(),
                f["file"].as_str().unwrap().into(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let (mut expected_findings, confidence) = markers(&root);
    // Findings on a file that cannot carry a comment (a JSON route declaration), listed in
    // expected.json as `"RS003 path/route.json:2"`.
    if let Some(list) = expected.get("findings_outside_source") {
        for f in strings(list) {
            let (rule, at) = f.split_once(' ').unwrap();
            let (file, line) = at.rsplit_once(':').unwrap();
            expected_findings.insert((rule.into(), file.into(), line.parse().unwrap()));
        }
    }
    assert_eq!(
        findings, expected_findings,
        "{name}: findings differ from the // expect: markers"
    );
    for f in report["findings"].as_array().unwrap() {
        let marker = (
            f["rule"].as_str().unwrap().to_string(),
            f["file"].as_str().unwrap().to_string(),
            f["line"].as_u64().unwrap(),
        );
        if let Some(want) = confidence.get(&marker) {
            assert_eq!(
                f["confidence"].as_str().unwrap(),
                want,
                "{name}: confidence of {marker:?}"
            );
        }
    }

    // Client requests that send a key (when the fixture lists them): every one, with where its
    // key comes from and the endpoint it calls.
    if let Some(want) = expected.get("clients") {
        let mut got: Vec<Value> = report["clients"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                serde_json::json!({
                    "method": c["method"], "path": c["path"], "file": c["file"], "line": c["line"],
                    "key_origin": c["key_origin"], "key_line": c["key_location"]["line"],
                    "endpoint": c.get("endpoint").cloned().unwrap_or(Value::Null),
                })
            })
            .collect();
        let mut want = want.as_array().unwrap().clone();
        let key = |v: &Value| v.to_string();
        got.sort_by_key(key);
        want.sort_by_key(key);
        assert_eq!(
            serde_json::to_string_pretty(&got).unwrap(),
            serde_json::to_string_pretty(&want).unwrap(),
            "{name}: client requests differ from expected.json"
        );
    }

    if let Some(needles) = expected.get("diagnostics_contain") {
        for needle in strings(needles) {
            assert!(
                report["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|d| d["message"].as_str().unwrap().contains(&needle)),
                "{name}: no diagnostic mentions {needle}"
            );
        }
    }
    for f in report["findings"].as_array().unwrap() {
        for field in ["message", "change", "impact", "fingerprint"] {
            assert!(
                !f[field].as_str().unwrap().is_empty(),
                "{name}: finding without {field}"
            );
        }
    }
}

/// The whole JSON report of a fixture, as `tests/snapshots/<fixture>.snap`: any change of an
/// endpoint, finding, mechanism, message or diagnostic shows as a reviewed diff
/// (`cargo insta review`). The tool's version and the root given on the command line are
/// redacted; everything else is the report as a user sees it.
fn snapshot(name: &str, report: &Value) {
    let mut report = report.clone();
    report["tool"] = Value::String("[tool]".into());
    report["root"] = Value::String("[root]".into());
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        insta::assert_snapshot!(name, serde_json::to_string_pretty(&report).unwrap());
    });
}

/// One test per fixture folder, named after it: `cargo test --test fixtures express-shop` runs
/// one alone.
fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("expected.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 3, "fixtures missing: {names:?}");
    let trials = names
        .into_iter()
        .map(|name| {
            libtest_mimic::Trial::test(name.clone(), move || {
                check_fixture(&name);
                Ok(())
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
