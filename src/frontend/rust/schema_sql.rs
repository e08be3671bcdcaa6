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

/// How deep expressions and types are walked: a 100,000-long method chain is flat for the parser
/// but deep as a tree, and a schema string sits near the top of its statement.
const MAX_WALK_DEPTH: usize = 96;

/// The schema statements the string literals of a parsed file hold; none in test files
/// (`tests/`, `benches/`).
pub fn collect(rel: &str, file: &syn::File) -> Vec<SchemaSql> {
    if super::model::is_test_path(rel) {
        return Vec::new();
    }
    let mut v = Strings {
        rel,
        undoing: 0,
        depth: 0,
        out: Vec::new(),
    };
    v.visit_file(file);
    v.out
}

struct Strings<'a> {
    rel: &'a str,
    /// Inside a function that undoes a migration: its statements drop what `up` made.
    undoing: usize,
    /// Expressions and types being walked, nested (see [`MAX_WALK_DEPTH`]).
    depth: usize,
    out: Vec<SchemaSql>,
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
        // (what follows an undoing name, `.down(..)` or `down: ..`, is not read)
        let mut skip_next = false;
        let mut after_undo = false;
        for t in tokens {
            if skip_next {
                skip_next = false;
                after_undo = false;
                continue;
            }
            match t {
                TokenTree::Ident(i) => {
                    after_undo = crate::sql::undoes_migration(&i.to_string());
                    continue;
                }
                TokenTree::Punct(p) if after_undo && p.as_char() == ':' => {
                    skip_next = true;
                    continue;
                }
                TokenTree::Group(_) if after_undo => {}
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
            after_undo = false;
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
        let undo = crate::sql::undoes_migration(&name.to_string());
        self.undoing += usize::from(undo);
        walk(self);
        self.undoing -= usize::from(undo);
    }
}

impl<'ast> Visit<'ast> for Strings<'_> {
    fn visit_expr(&mut self, e: &'ast syn::Expr) {
        if self.depth < MAX_WALK_DEPTH {
            self.depth += 1;
            syn::visit::visit_expr(self, e);
            self.depth -= 1;
        }
    }

    fn visit_type(&mut self, t: &'ast syn::Type) {
        if self.depth < MAX_WALK_DEPTH {
            self.depth += 1;
            syn::visit::visit_type(self, t);
            self.depth -= 1;
        }
    }

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

    // Doc comments are string attributes: prose, not statements run.
    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    // `M::up("..").down("CREATE UNIQUE INDEX ..")` (rusqlite_migration): the receiver is read,
    // the undoing call's arguments are not.
    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        if crate::sql::undoes_migration(&c.method.to_string()) {
            self.visit_expr(&c.receiver);
        } else {
            syn::visit::visit_expr_method_call(self, c);
        }
    }

    // `Migration { up: "..", down: "DROP INDEX .." }`
    fn visit_field_value(&mut self, f: &'ast syn::FieldValue) {
        let undo = matches!(&f.member, syn::Member::Named(n) if crate::sql::undoes_migration(&n.to_string()));
        if !undo {
            syn::visit::visit_field_value(self, f);
        }
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
    fn nothing_from_test_files() {
        let file =
            syn::parse_file(r#"fn setup() { let _ = "CREATE UNIQUE INDEX i ON t (a)"; }"#).unwrap();
        assert!(collect("tests/common/mod.rs", &file).is_empty());
        assert_eq!(collect("src/db.rs", &file).len(), 1);
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
/// CREATE UNIQUE INDEX docs_only ON notes (body);
fn migrations() -> Vec<M> {
    vec![M::up("CREATE INDEX a ON t (x)").down("CREATE UNIQUE INDEX b ON t (y)")]
}
const STEPS: &[Step] = &[Step { up: "CREATE TABLE s (k TEXT)", down: "CREATE UNIQUE INDEX c ON s (k)" }];
#[cfg(test)]
mod tests { fn t() { let _ = "CREATE TABLE scratch (a INT UNIQUE)"; } }
"##;
        let got = statements(src);
        let lines: Vec<u32> = got.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, vec![2, 4, 7, 15, 17], "{got:?}");
        assert!(got[3].1.starts_with("CREATE INDEX a"), "{got:?}");
        assert!(got[4].1.starts_with("CREATE TABLE s"), "{got:?}");
        assert!(got[1].1.starts_with("CREATE UNIQUE INDEX"));
        assert!(got[2].1.starts_with("ALTER TABLE teams"));
    }
}
