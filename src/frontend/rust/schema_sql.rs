//! Schema statements written as string literals in Rust code: a start-up routine's
//! `conn.execute_batch("CREATE TABLE IF NOT EXISTS users (.. email TEXT NOT NULL UNIQUE ..)")`, a
//! migration's `execute_unprepared("CREATE UNIQUE INDEX ..")`, a `const SCHEMA: &str = "..";`,
//! also inside macros (`sqlx::query!("ALTER TABLE ..")`). They are read as migrations are (see
//! `frontend::schema::sql::code_constraints`). Test code and the bodies of functions that undo a
//! migration (`down`, `revert`, `rollback`) are not read.

use crate::facts::{Location, SchemaSql};
use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// How deep macro token groups are searched for string literals.
const MAX_MACRO_DEPTH: usize = 6;

/// The most statements one file contributes.
const MAX_PER_FILE: usize = 512;

/// The schema statements the string literals of a parsed file hold.
pub fn collect(rel: &str, file: &syn::File) -> Vec<SchemaSql> {
    let mut v = Strings {
        rel,
        undoing: 0,
        out: Vec::new(),
    };
    v.visit_file(file);
    v.out
}

struct Strings<'a> {
    rel: &'a str,
    /// Inside a function that undoes a migration: its statements drop what `up` made.
    undoing: usize,
    out: Vec<SchemaSql>,
}

fn undoes(name: &str) -> bool {
    matches!(name, "down" | "revert" | "rollback" | "undo")
}

impl Strings<'_> {
    fn string(&mut self, value: String, line: usize) {
        if self.undoing == 0
            && self.out.len() < MAX_PER_FILE
            && crate::sql::has_schema_statement(&value)
        {
            self.out.push(SchemaSql {
                location: Location::new(self.rel, line as u32),
                text: value,
            });
        }
    }

    fn tokens(&mut self, tokens: TokenStream, depth: usize) {
        for t in tokens {
            match t {
                TokenTree::Group(g) if depth < MAX_MACRO_DEPTH => {
                    self.tokens(g.stream(), depth + 1)
                }
                TokenTree::Literal(l) => {
                    let line = l.span().start().line;
                    if let Ok(s) = syn::parse2::<syn::LitStr>(TokenTree::Literal(l).into()) {
                        self.string(s.value(), line);
                    }
                }
                _ => {}
            }
        }
    }

    fn function<F: FnOnce(&mut Self)>(
        &mut self,
        attrs: &[syn::Attribute],
        name: &syn::Ident,
        walk: F,
    ) {
        if super::parse::is_test_attr(attrs) {
            return;
        }
        let undo = undoes(&name.to_string());
        self.undoing += usize::from(undo);
        walk(self);
        self.undoing -= usize::from(undo);
    }
}

impl<'ast> Visit<'ast> for Strings<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !super::parse::is_test_attr(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(&f.attrs, &f.sig.ident, |s| syn::visit::visit_item_fn(s, f));
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.function(&f.attrs, &f.sig.ident, |s| {
            syn::visit::visit_impl_item_fn(s, f)
        });
    }

    fn visit_lit_str(&mut self, l: &'ast syn::LitStr) {
        self.string(l.value(), l.span().start().line);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone(), 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statements(src: &str) -> Vec<(u32, String)> {
        let file = syn::parse_file(src).unwrap();
        collect("src/db.rs", &file)
            .into_iter()
            .map(|s| (s.location.line, s.text.trim().to_string()))
            .collect()
    }

    #[test]
    fn schema_strings_in_code_macros_and_constants_but_not_in_tests_or_down() {
        let src = r##"
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, email TEXT UNIQUE)";
pub fn init(conn: &Connection) {
    conn.execute_batch(r#"
        CREATE UNIQUE INDEX IF NOT EXISTS keys_name ON api_keys (user_id, name);
    "#).unwrap();
    sqlx::query!("ALTER TABLE teams ADD CONSTRAINT teams_slug UNIQUE (slug)");
    conn.execute("INSERT INTO users (id) VALUES (?1)", []).unwrap();
}
impl MigrationTrait for Migration {
    async fn down(&self, m: &SchemaManager) { m.execute_unprepared("DROP INDEX keys_name").await; }
}
#[cfg(test)]
mod tests { fn t() { let _ = "CREATE TABLE scratch (a INT UNIQUE)"; } }
"##;
        let got = statements(src);
        let lines: Vec<u32> = got.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, vec![2, 4, 7], "{got:?}");
        assert!(got[1].1.starts_with("CREATE UNIQUE INDEX"));
        assert!(got[2].1.starts_with("ALTER TABLE teams"));
    }
}
