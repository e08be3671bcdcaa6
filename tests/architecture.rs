//! The module boundaries ARCHITECTURE.md writes down, checked on the source: every `crate::` path
//! in `src/` (in `use` lines and inline, brace groups included; comments left out) is an edge from
//! the file's area to another, and a forbidden edge fails here with the file and line that makes
//! it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The area a source file belongs to: its first directory under `src/` (its file stem for a file
/// at the top), with the front ends split by language.
fn area(rel: &str) -> String {
    let parts: Vec<&str> = rel.split('/').collect();
    match parts.as_slice() {
        ["frontend", lang, _, ..] => format!("frontend::{lang}"),
        [dir, _, ..] => (*dir).to_string(),
        [file] => file.trim_end_matches(".rs").to_string(),
        [] => String::new(),
    }
}

/// The area a `crate::` path names: its first segment, or `frontend::<language>` for a front end.
fn target(segments: &[&str]) -> String {
    match segments {
        ["frontend", second, ..] if !second.is_empty() => format!("frontend::{second}"),
        [first, ..] => (*first).to_string(),
        [] => String::new(),
    }
}

/// Every area the line names through `crate::` (`crate::a::b`, `crate::{a::b, c}`).
fn named(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `other_crate::`
        }
        if let Some(group) = rest.strip_prefix('{') {
            // each item's first two segments, up to the brace that closes the group
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        let segs: Vec<&str> = item.trim().split("::").collect();
                        if !segs[0].is_empty() {
                            out.push(target(&segs));
                        }
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 && c != '}' {
                    item.push(c);
                }
            }
            let segs: Vec<&str> = item.trim().split("::").collect();
            if !segs[0].is_empty() {
                out.push(target(&segs));
            }
            continue;
        }
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        out.push(target(&segs));
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// (area, what it may not name, why)
const FORBIDDEN: &[(&str, &[&str], &str)] = &[
    (
        "facts",
        &["*"],
        "facts is what every layer reads; it depends on nothing in the crate",
    ),
    (
        "program",
        &["*facts"],
        "the program model depends on facts only",
    ),
    (
        "text",
        &["*"],
        "text helpers depend on nothing in the crate",
    ),
    (
        "sql",
        &["*"],
        "the SQL text reader depends on nothing in the crate",
    ),
    (
        "link",
        &["frontend"],
        "the linker reads the program model, never a front end",
    ),
    (
        "frontend::rust",
        &["frontend::ts"],
        "the front ends share code through neutral modules only",
    ),
    (
        "frontend::ts",
        &["frontend::rust"],
        "the front ends share code through neutral modules only",
    ),
    (
        "rules",
        &["frontend", "link", "program", "probe"],
        "rules read facts (a probe's evidence included) and know no syntax",
    ),
    (
        "catalog",
        &["frontend", "link", "program", "rules", "report"],
        "the catalogue is data the analysis reads, not a client of it",
    ),
    (
        "report",
        &["frontend", "link", "program"],
        "reports render findings and facts, not the analysis",
    ),
];

/// Is `to` forbidden from `from`? `*` forbids every other area; `*x` every other area but `x`;
/// a name forbids that area and the areas below it (`frontend` forbids `frontend::ts`).
fn forbidden(from: &str, to: &str) -> Option<&'static str> {
    let (_, banned, why) = FORBIDDEN.iter().find(|(a, _, _)| *a == from)?;
    let hit = banned.iter().any(|b| match b.strip_prefix('*') {
        Some("") => to != from,
        Some(allowed) => to != from && to != allowed,
        None => to == *b || to.starts_with(&format!("{b}::")),
    });
    hit.then_some(*why)
}

#[test]
fn no_forbidden_edge() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    assert!(
        files.len() > 50,
        "sources not found under {}",
        src.display()
    );
    let mut bad = BTreeSet::new();
    for file in &files {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let from = area(&rel);
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if line.trim_start().starts_with("//") {
                continue;
            }
            for to in named(code) {
                if let Some(why) = forbidden(&from, &to) {
                    bad.insert(format!("src/{rel}:{}: {from} → {to} ({why})", i + 1));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "forbidden edges:\n{}",
        bad.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn edges_are_read() {
    assert_eq!(area("facts/mod.rs"), "facts");
    assert_eq!(area("frontend/rust/effects.rs"), "frontend::rust");
    assert_eq!(area("frontend/mod.rs"), "frontend");
    assert_eq!(area("text.rs"), "text");
    assert_eq!(named("use crate::frontend::ts::eval::x;"), ["frontend::ts"]);
    assert_eq!(
        named("use crate::{facts::Diagnostic, link::calls::{A, B}, text};"),
        ["facts", "link", "text"]
    );
    assert_eq!(
        named("x(crate::program::field(v), other_crate::y)"),
        ["program"]
    );
    assert_eq!(forbidden("facts", "rules"), Some(FORBIDDEN[0].2));
    assert_eq!(forbidden("facts", "facts"), None);
    assert_eq!(forbidden("program", "facts"), None);
    assert!(forbidden("program", "link").is_some());
    assert!(forbidden("link", "frontend::ts").is_some());
    assert_eq!(forbidden("link", "program"), None);
    assert_eq!(forbidden("frontend::rust", "sql"), None);
    assert!(forbidden("link", "frontend::guarded").is_some());
    assert!(forbidden("rules", "frontend").is_some());
}
