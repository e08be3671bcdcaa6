//! The TypeScript/JavaScript front end: tree-sitter parsing and per-file evaluation.

pub mod claims;
pub mod elysia;
pub mod eval;
pub mod express;
pub mod fastify;
pub mod h3;
pub mod hono;
pub mod keys;
pub mod keyscan;
pub mod koa;
pub mod nest;
pub mod next;
pub mod routers;
pub mod trpc;

use crate::catalog::Catalog;
use crate::discover::{Lang, SourceFile};
use crate::facts::Diagnostic;
use crate::program::Module;
use tree_sitter::{Node, Parser};

/// A child by field name, with the field's id looked up once per grammar and thread rather than
/// by comparing names on every call (`child_by_field_name` scans the grammar's field names).
pub(crate) trait FieldExt<'t> {
    fn field(&self, name: &'static str) -> Option<Node<'t>>;
}

impl<'t> FieldExt<'t> for Node<'t> {
    #[inline]
    fn field(&self, name: &'static str) -> Option<Node<'t>> {
        use std::hash::{Hash, Hasher};
        thread_local! {
            /// (grammar, name's address and length) → field id (0: the grammar has no such field).
            static IDS: std::cell::RefCell<rustc_hash::FxHashMap<(u64, usize, usize), u16>> =
                Default::default();
        }
        let lang = self.language();
        // The grammar's identity is its address: FxHash of one word is a bijection.
        let mut h = rustc_hash::FxHasher::default();
        (*lang).hash(&mut h);
        let key = (h.finish(), name.as_ptr() as usize, name.len());
        let id = IDS.with(|ids| {
            *ids.borrow_mut()
                .entry(key)
                .or_insert_with(|| lang.field_id_for_name(name).map_or(0, |id| id.get()))
        });
        // id 0 is no field: `child_by_field_name` asks for the same id and gets no node.
        if id == 0 {
            None
        } else {
            self.child_by_field_id(id)
        }
    }
}

pub(crate) fn language(lang: Lang) -> Option<tree_sitter::Language> {
    match lang {
        Lang::TypeScript => Some(tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()),
        Lang::Tsx => Some(tree_sitter_typescript::LANGUAGE_TSX.into()),
        Lang::JavaScript => Some(tree_sitter_javascript::LANGUAGE.into()),
        _ => None,
    }
}

/// Test code: its apps and routers are fixtures of the tests, not the service's routes. In a file
/// route (Next.js `pages/api/**` and `app/**/route.ts`, SvelteKit `+server.ts`, Nuxt
/// `server/api/**`), a folder named `test` or `tests` under the routing root is a URL segment
/// (`app/api/tests/[id]/route.ts` serves `/api/tests/{id}`).
pub fn is_test_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let dirs: Vec<&str> = rel.split('/').collect();
    let dirs = &dirs[..dirs.len() - 1];
    let route_root = next_route_root(dirs, name);
    dirs.iter().enumerate().any(|(i, d)| match *d {
        "__tests__" | "__mocks__" => true,
        "test" | "tests" | "e2e" | "spec" => route_root.is_none_or(|root| i <= root),
        _ => false,
    }) || [".test.", ".spec.", ".e2e-spec.", ".e2e."]
        .iter()
        .any(|m| name.contains(m))
}

/// The index of the folder a file route's URL segments start after: `api` in Next.js
/// `pages/api/..`, `app` for an `app/**/route.*` file, the last `routes` (else `src`) folder for a
/// SvelteKit `+server`/`+page.server` module, `api` or `routes` in a Nuxt `server/` folder; None for
/// any other file.
fn next_route_root(dirs: &[&str], name: &str) -> Option<usize> {
    if name.starts_with("+server.") || name.starts_with("+page.server.") {
        return dirs
            .iter()
            .rposition(|d| *d == "routes")
            .or_else(|| dirs.iter().position(|d| *d == "src"));
    }
    if let Some(i) = dirs
        .windows(2)
        .position(|w| w[0] == "server" && matches!(w[1], "api" | "routes"))
    {
        return Some(i + 1);
    }
    let pages = dirs
        .windows(2)
        .position(|w| w == ["pages", "api"])
        .map(|i| i + 1);
    let stem = name.split('.').next().unwrap_or(name);
    let app = (stem == "route")
        .then(|| dirs.iter().position(|d| *d == "app"))
        .flatten();
    match (pages, app) {
        (Some(p), Some(a)) => Some(p.min(a)),
        (p, a) => p.or(a),
    }
}

/// Parses one file and evaluates it into a [`Module`]. Never panics on bad input: syntax errors
/// become diagnostics and the rest of the file is still read.
pub fn analyze_file(file: &SourceFile, catalog: &Catalog) -> (Module, Vec<Diagnostic>) {
    crate::isolate::guarded(
        &file.rel,
        || analyze_file_inner(file, catalog),
        || Module {
            file: file.rel.clone(),
            ..Default::default()
        },
    )
}

/// Parses a file and drops the tree (the walk-and-parse-only floor of `bench/bench.py`): true if
/// it parsed without error.
pub fn parse_only(file: &SourceFile) -> bool {
    let mut parser = Parser::new();
    if language(file.lang).is_none_or(|l| parser.set_language(&l).is_err()) {
        return false;
    }
    parser
        .parse(&file.text, None)
        .is_some_and(|t| !t.root_node().has_error())
}

fn analyze_file_inner(file: &SourceFile, catalog: &Catalog) -> (Module, Vec<Diagnostic>) {
    let mut parser = Parser::new();
    let mut diagnostics = Vec::new();
    // The file contributes nothing but this diagnostic.
    let nothing = |why: &str| {
        let d = Diagnostic::new(file.rel.clone(), 0, why);
        (
            Module {
                file: file.rel.clone(),
                ..Default::default()
            },
            vec![d],
        )
    };
    if language(file.lang).is_none_or(|l| parser.set_language(&l).is_err()) {
        return nothing("internal: grammar version mismatch");
    }
    let Some(tree) = parser.parse(&file.text, None) else {
        return nothing("parse error: the parser gave up on this file");
    };
    let root = tree.root_node();
    if root.has_error()
        && let Some(err) = first_error(root)
    {
        let what = if err.is_missing() {
            format!("missing `{}`", err.kind())
        } else {
            let t = err.utf8_text(file.text.as_bytes()).unwrap_or("");
            let t: String = t
                .chars()
                .take(40)
                .collect::<String>()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            format!("unexpected `{t}`")
        };
        diagnostics.push(Diagnostic::new(
            file.rel.clone(),
            err.start_position().row as u32 + 1,
            format!("parse error: {what}; the rest of the file is read as far as possible"),
        ));
    }
    let evaluator = eval::Evaluator::new(&file.rel, &file.text, catalog);
    let (mut module, more) = evaluator.run(root);
    module.is_test = is_test_file(&file.rel);
    module.shrink_to_fit();
    diagnostics.extend(more);
    (module, diagnostics)
}

/// The first ERROR or MISSING node, found without recursion.
fn first_error(root: Node) -> Option<Node> {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            return Some(node);
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_test_file;

    #[test]
    fn test_folders_under_a_file_route_root_are_segments() {
        for rel in [
            "app/api/tests/[id]/route.ts",
            "pages/api/test/feedback.ts",
            "src/routes/api/tests/[id]/+server.ts",
            "src/routes/test/+page.server.ts",
            "server/api/tests/[id].post.ts",
            "server/routes/test/index.ts",
        ] {
            assert!(!is_test_file(rel), "{rel}");
        }
        for rel in [
            "tests/e2e/quiz.spec.ts",
            "test/app/src/routes/+server.ts",
            "src/routes/api/__tests__/x.ts",
            "src/routes/api/orders/orders.test.ts",
            "tests/server/api/orders.post.ts",
            "src/test/helpers.ts",
        ] {
            assert!(is_test_file(rel), "{rel}");
        }
    }
}
