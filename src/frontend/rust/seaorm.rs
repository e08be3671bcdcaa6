//! SeaORM's unique constraints: entity models (`#[derive(DeriveEntityModel)]`) and
//! `sea-orm-migration` schema builders, read from the crate model.
//!
//! A model's constraints are named after the module that holds it (`user` in `user::Entity`,
//! what the creates in code name) with its `table_name` as an alias:
//! - `#[sea_orm(unique)]` on a field: that column alone;
//! - `#[sea_orm(unique_key = "pair")]` on several fields: one composite key per name (SeaORM's
//!   own test entities declare it this way, `sea-orm-codegen/src/tests_cfg/compact/indexes.rs`);
//! - `#[sea_orm(primary_key)]` fields: one key. SeaORM documents "By default, auto_increment is
//!   implied. Override by specifying false" (sea-ql.org, SeaORM docs, Generate Entity / Entity
//!   Structure, "Auto Increment"); its derive never makes a composite key auto-increment
//!   (`auto_increment && primary_keys.len() == 1` in `sea-orm-macros`), and newer releases take
//!   the default from the key's type (a `String` key is not auto-increment: the macros' test
//!   `test_auto_increment_default_by_type`). So a single integer key is generated unless
//!   `auto_increment = false`; a `Uuid` or `String` key is filled by the application, and
//!   whether that value is the caller's is the create's business (`Uuid::new_v4()` is not).
//!
//! Migrations: `Table::create().table(User::Table).col(ColumnDef::new(User::Email).unique_key())`,
//! `.primary_key(Index::create().col(..).col(..))`, the schema helpers (`pk_auto`, `pk_uuid`,
//! `string_uniq`, …), `Index::create().unique().table(..).col(..)`, and in later migrations
//! `Index::drop()`, `Table::drop()`, `Table::alter().drop_column(..)`, in file order. Only `up`
//! counts: `down` undoes it.

use super::ir::{EntityAttrs, Ex, Line, Ty};
use super::model::{ModId, Model};
use super::parse::{children, push_stmts};
use crate::facts::{Diagnostic, Location, UniqueConstraint};
use std::collections::BTreeMap;

const INTEGERS: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
];

fn is_integer(t: &Ty) -> bool {
    let inner = if t.last() == "Option" {
        t.args.first().unwrap_or(t)
    } else {
        t
    };
    INTEGERS.contains(&inner.last())
}

/// Every SeaORM constraint of the crate model, and what could not be read.
pub fn constraints(model: &Model) -> (Vec<UniqueConstraint>, Vec<Diagnostic>) {
    let mut out = Vec::new();
    let mut diagnostics = Vec::new();
    for &(m, e) in &model.entities {
        if model.modules[m].is_test {
            continue;
        }
        let file = model.file_of(m);
        for &line in &e.unreadable {
            diagnostics.push(Diagnostic::new(
                file,
                line,
                "a #[sea_orm] attribute that is not a list of `key` / `key = value` items was not read",
            ));
        }
        out.extend(entity_constraints(&model.modules[m].name, file, e));
    }
    out.extend(migrations(model));
    (out, diagnostics)
}

/// The constraints one model declares, named `module` (aliased by its `table_name`).
pub fn entity_constraints(module: &str, file: &str, e: &EntityAttrs) -> Vec<UniqueConstraint> {
    let table = e
        .args
        .iter()
        .rev()
        .find(|a| a.key == "table_name")
        .and_then(|a| a.value.clone());
    let aliases: Vec<String> = table.into_iter().filter(|t| t != module).collect();
    let fields: Vec<_> = e.fields.iter().filter(|f| !f.has("ignore")).collect();
    let make = |columns: Vec<String>, generated: bool, line: Line| UniqueConstraint {
        defaulted: false,
        model: module.to_string(),
        aliases: aliases.clone(),
        columns,
        partial: false,
        generated,
        source: "sea-orm",
        location: Location::new(file, line),
    };
    let mut out = Vec::new();
    let pk: Vec<_> = fields.iter().filter(|f| f.has("primary_key")).collect();
    if let Some(first) = pk.first() {
        let generated = pk.len() == 1
            && match first.value("auto_increment") {
                Some(v) => v != "false",
                None => is_integer(&first.ty),
            };
        out.push(make(
            pk.iter().map(|f| f.name.clone()).collect(),
            generated,
            first.line,
        ));
    }
    for f in fields.iter().filter(|f| f.has("unique")) {
        out.push(make(vec![f.name.clone()], false, f.line));
    }
    let mut groups: BTreeMap<&str, (Vec<String>, Line)> = BTreeMap::new();
    for f in &fields {
        if let Some(key) = f.value("unique_key") {
            let g = groups.entry(key).or_insert((vec![], f.line));
            g.0.push(f.name.clone());
        }
    }
    for (_, (cols, line)) in groups {
        out.push(make(cols, false, line));
    }
    out
}

/// `UserId` → `user_id`: how `DeriveIden` names a variant or an enum.
fn snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A table or column reference: `User::Table` → `user`, `User::Email` → `email`,
/// `Alias::new("users")` → `users`, `user::Entity` → `user`.
fn iden(e: &Ex) -> Option<String> {
    match e {
        Ex::Lit(s) => Some(s.clone()),
        Ex::Path(p, _) if p.len() >= 2 => {
            let last = &p[p.len() - 1];
            let before = &p[p.len() - 2];
            Some(match last.as_str() {
                "Table" => snake(before),
                "Entity" => before.clone(),
                _ => snake(last),
            })
        }
        Ex::Call(f, args, _) => match (&**f, args.first()) {
            (Ex::Path(p, _), Some(Ex::Lit(s))) if p.first().is_some_and(|a| a == "Alias") => {
                Some(s.clone())
            }
            _ => None,
        },
        Ex::Method(recv, name, _, _) if name == "into_iden" || name == "to_owned" => iden(recv),
        _ => None,
    }
}

/// One method call of a chain: its name, arguments and line.
type Link<'e> = (&'e str, &'e [Ex], Line);

/// A method chain: its root and each link, innermost first.
fn unwind(e: &Ex) -> (&Ex, Vec<Link<'_>>) {
    let mut links = Vec::new();
    let mut cur = e;
    while let Ex::Method(recv, name, args, line) = cur {
        links.push((name.as_str(), args.as_slice(), *line));
        cur = recv;
    }
    links.reverse();
    (cur, links)
}

/// `Table::create()` → ("Table", "create").
fn builder(root: &Ex) -> Option<(&str, &str, Line)> {
    let Ex::Call(f, _, line) = root else {
        return None;
    };
    let Ex::Path(p, _) = &**f else { return None };
    let n = p.len();
    if n < 2 {
        return None;
    }
    let (ty, op) = (p[n - 2].as_str(), p[n - 1].as_str());
    matches!(ty, "Table" | "Index").then_some((ty, op, *line))
}

/// A column definition: (column, unique, primary key, generated).
fn column_def(e: &Ex) -> Option<(String, bool, bool, bool)> {
    let (root, links) = unwind(e);
    let Ex::Call(f, args, _) = root else {
        return None;
    };
    let Ex::Path(p, _) = &**f else { return None };
    let func = p.last()?.as_str();
    let col = iden(args.first()?)?;
    let has = |n: &str| links.iter().any(|(l, _, _)| *l == n);
    let (mut unique, mut pk, mut auto) = (false, false, false);
    match func {
        "new" | "new_with_type" => {}
        "pk_auto" => (pk, auto) = (true, true),
        "pk_uuid" => pk = true,
        f if f.ends_with("_uniq") => unique = true,
        _ => {}
    }
    unique |= has("unique_key") || has("unique");
    pk |= has("primary_key");
    auto |= has("auto_increment");
    Some((col, unique, pk, auto))
}

struct Migrations {
    out: Vec<(UniqueConstraint, Option<String>)>,
}

impl Migrations {
    fn add(&mut self, table: &str, columns: Vec<String>, generated: bool, at: Location) {
        self.add_named(table, columns, generated, at, None);
    }

    fn add_named(
        &mut self,
        table: &str,
        columns: Vec<String>,
        generated: bool,
        at: Location,
        name: Option<String>,
    ) {
        if columns.is_empty() || table.is_empty() {
            return;
        }
        self.out.push((
            UniqueConstraint {
                defaulted: false,
                model: table.to_string(),
                aliases: vec![],
                columns,
                partial: false,
                generated,
                source: "sea-orm-migration",
                location: at,
            },
            name,
        ));
    }

    fn on_table(c: &UniqueConstraint, table: &str) -> bool {
        crate::facts::model_key(&c.model) == crate::facts::model_key(table)
    }

    /// One schema statement, in order.
    fn chain(&mut self, file: &str, e: &Ex) -> bool {
        let (root, links) = unwind(e);
        let Some((ty, op, root_line)) = builder(root) else {
            return false;
        };
        let arg = |name: &str| {
            links
                .iter()
                .find(|(l, _, _)| *l == name)
                .and_then(|(_, a, _)| a.first())
        };
        let table = arg("table").and_then(iden);
        match (ty, op) {
            ("Table", "create") | ("Table", "alter") => {
                let Some(table) = table else { return true };
                for (name, args, line) in &links {
                    let at = Location::new(file, *line);
                    match *name {
                        "col" | "add_column" | "modify_column" | "add_column_if_not_exists" => {
                            let Some((col, unique, pk, auto)) = args.first().and_then(column_def)
                            else {
                                continue;
                            };
                            if unique {
                                self.add(&table, vec![col.clone()], false, at.clone());
                            }
                            if pk {
                                self.add(&table, vec![col], auto, at);
                            }
                        }
                        "primary_key" | "index" => {
                            let Some(ix) = args.first() else { continue };
                            let (_, ix_links) = unwind(ix);
                            let unique = *name == "primary_key"
                                || ix_links.iter().any(|(l, _, _)| *l == "unique");
                            let cols: Vec<String> = ix_links
                                .iter()
                                .filter(|(l, _, _)| *l == "col")
                                .filter_map(|(_, a, _)| a.first().and_then(iden))
                                .collect();
                            let ix_name = ix_links.iter().find(|(l, _, _)| *l == "name").and_then(
                                |(_, a, _)| match a.first() {
                                    Some(Ex::Lit(s)) => Some(s.clone()),
                                    _ => None,
                                },
                            );
                            if unique {
                                self.add_named(&table, cols, false, at, ix_name);
                            }
                        }
                        "drop_column" => {
                            if let Some(col) = args.first().and_then(iden) {
                                self.out.retain(|(c, _)| {
                                    !(Self::on_table(c, &table) && c.columns.contains(&col))
                                });
                            }
                        }
                        _ => {}
                    }
                }
            }
            ("Table", "drop") => {
                // `Table::drop().table(A).table(B)`
                for (_, args, _) in links.iter().filter(|(l, _, _)| *l == "table") {
                    if let Some(t) = args.first().and_then(iden) {
                        self.out.retain(|(c, _)| !Self::on_table(c, &t));
                    }
                }
            }
            ("Index", "create") => {
                if !links.iter().any(|(l, _, _)| *l == "unique") {
                    return true;
                }
                let Some(table) = table else { return true };
                let cols: Vec<String> = links
                    .iter()
                    .filter(|(l, _, _)| *l == "col")
                    .filter_map(|(_, a, _)| a.first().and_then(iden))
                    .collect();
                let name = match arg("name") {
                    Some(Ex::Lit(s)) => Some(s.clone()),
                    _ => None,
                };
                let partial = links
                    .iter()
                    .any(|(l, _, _)| *l == "and_where" || *l == "cond_where");
                let at = Location::new(file, root_line);
                self.add_named(&table, cols, false, at, name);
                if partial && let Some((c, _)) = self.out.last_mut() {
                    c.partial = true;
                }
            }
            ("Index", "drop") => {
                let Some(Ex::Lit(name)) = arg("name") else {
                    return true;
                };
                self.out.retain(|(c, n)| {
                    !(n.as_deref() == Some(name.as_str())
                        && table.as_ref().is_none_or(|t| Self::on_table(c, t)))
                });
            }
            _ => {}
        }
        true
    }

    /// Walks a body in source order; a schema statement is read whole, not descended into.
    fn body(&mut self, file: &str, stmts: &[super::ir::Stmt]) {
        let mut stack: Vec<&Ex> = Vec::new();
        push_stmts(stmts, &mut stack);
        stack.reverse();
        let mut seen = 0usize;
        while let Some(e) = stack.pop() {
            seen += 1;
            if seen > 200_000 {
                break;
            }
            if self.chain(file, e) {
                continue;
            }
            let mut kids = Vec::new();
            children(e, &mut kids);
            kids.reverse();
            stack.extend(kids);
        }
    }
}

/// The `up` of every `MigrationTrait` implementation, in file order.
fn migrations(model: &Model) -> Vec<UniqueConstraint> {
    let mut ups: Vec<(&str, ModId, usize)> = model
        .fns
        .iter()
        .enumerate()
        .filter(|(_, f)| f.func.name == "up" && !f.func.is_test && !model.modules[f.module].is_test)
        .filter(|(_, f)| {
            f.imp.is_some_and(|i| {
                model.impls[i]
                    .imp
                    .trait_
                    .as_ref()
                    .and_then(|t| t.last())
                    .is_some_and(|t| t == "MigrationTrait")
            })
        })
        .map(|(id, f)| (model.file_of(f.module), f.module, id))
        .collect();
    ups.sort();
    ups.dedup_by(|a, b| a.0 == b.0 && a.2 == b.2);
    let mut m = Migrations { out: Vec::new() };
    for (file, _, f) in ups {
        m.body(file, &model.fns[f].func.body);
    }
    m.out.into_iter().map(|(c, _)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::rust::ir::{FileIr, Item};
    use crate::frontend::rust::parse::parse_file;

    fn entity(src: &str) -> (Vec<UniqueConstraint>, Vec<u32>) {
        let (ir, d) = parse_file("src/entity/user.rs", src);
        assert!(d.is_empty(), "{d:?}");
        let FileIr { items, .. } = ir;
        for item in &items {
            if let Item::Type {
                entity: Some(e), ..
            } = item
            {
                return (
                    entity_constraints("user", "src/entity/user.rs", e),
                    e.unreadable.clone(),
                );
            }
        }
        (vec![], vec![])
    }

    fn summary(c: &[UniqueConstraint]) -> Vec<(Vec<&str>, bool, u32)> {
        c.iter()
            .map(|c| {
                (
                    c.columns.iter().map(String::as_str).collect(),
                    c.generated,
                    c.location.line,
                )
            })
            .collect()
    }

    #[test]
    fn reads_entity_keys() {
        let (c, bad) = entity(
            r#"use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i32,
    #[sea_orm(unique, column_type = "Text")]
    pub email: String,
    #[sea_orm(unique_key = "handle")]
    pub workspace_id: Uuid,
    #[sea_orm(unique_key = "handle")]
    pub slug: String,
    #[sea_orm(ignore)]
    pub scratch: String,
}
"#,
        );
        assert!(bad.is_empty());
        assert_eq!(
            summary(&c),
            vec![
                (vec!["id"], true, 7),
                (vec!["email"], false, 9),
                (vec!["workspace_id", "slug"], false, 11),
            ]
        );
        assert_eq!(c[0].model, "user");
        assert_eq!(c[0].aliases, vec!["users".to_string()]);
        assert_eq!(c[0].source, "sea-orm");
    }

    #[test]
    fn primary_keys_generated_or_not() {
        // auto_increment = false: the caller's key
        let (c, _) = entity(
            "#[derive(DeriveEntityModel)]\n#[sea_orm(table_name = \"t\")]\npub struct Model {\n    #[sea_orm(primary_key, auto_increment = false)]\n    pub code: i32,\n}\n",
        );
        assert_eq!(summary(&c), vec![(vec!["code"], false, 5)]);
        // a composite key never auto-increments
        let (c, _) = entity(
            "#[derive(DeriveEntityModel)]\npub struct Model {\n    #[sea_orm(primary_key)]\n    pub user_id: i32,\n    #[sea_orm(primary_key)]\n    pub tag_id: i32,\n}\n",
        );
        assert_eq!(summary(&c), vec![(vec!["user_id", "tag_id"], false, 4)]);
        // a Uuid key is filled by the application
        let (c, _) = entity(
            "#[derive(DeriveEntityModel)]\npub struct Model {\n    #[sea_orm(primary_key)]\n    pub id: Uuid,\n}\n",
        );
        assert_eq!(summary(&c), vec![(vec!["id"], false, 4)]);
        // not a model: nothing
        let (c, _) = entity(
            "#[derive(Clone)]\npub struct Model {\n    #[sea_orm(unique)]\n    pub a: String,\n}\n",
        );
        assert!(c.is_empty());
    }

    fn migrated(files: &[(&str, &str)]) -> Vec<UniqueConstraint> {
        let irs: Vec<FileIr> = files
            .iter()
            .map(|(rel, text)| {
                let (ir, d) = parse_file(rel, text);
                assert!(d.is_empty(), "{d:?}");
                ir
            })
            .collect();
        let model = Model::build(&irs, std::path::Path::new("/nonexistent"));
        constraints(&model).0
    }

    const M1: &str = r#"use sea_orm_migration::{prelude::*, schema::*};
pub struct Migration;
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.create_table(Table::create().table(Accounts::Table)
            .col(pk_auto(Accounts::Id))
            .col(string_uniq(Accounts::Email))
            .col(ColumnDef::new(Accounts::Handle).string().not_null().unique_key())
            .col(ColumnDef::new(Accounts::Legacy).string().unique_key())
            .to_owned()).await?;
        manager.create_table(Table::create().table(Alias::new("memberships"))
            .col(integer(Alias::new("team_id")))
            .col(integer(Alias::new("account_id")))
            .primary_key(Index::create().col(Alias::new("team_id")).col(Alias::new("account_id")))
            .to_owned()).await?;
        manager.create_index(Index::create().name("idx_invites").table(Invites::Table)
            .col(Invites::TeamId).col(Invites::Email).unique().to_owned()).await?;
        manager.create_index(Index::create().name("idx_plain").table(Invites::Table)
            .col(Invites::Email).to_owned()).await
    }
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.create_index(Index::create().name("idx_down").table(Invites::Table)
            .col(Invites::Token).unique().to_owned()).await
    }
}
"#;

    const M2: &str = r#"use sea_orm_migration::prelude::*;
pub struct Migration;
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_index(Index::drop().name("idx_invites").table(Invites::Table).to_owned()).await?;
        manager.alter_table(Table::alter().table(Accounts::Table)
            .drop_column(Accounts::Legacy)
            .add_column(ColumnDef::new(Accounts::ExternalId).uuid().unique_key())
            .to_owned()).await
    }
}
"#;

    #[test]
    fn reads_migrations_in_order() {
        let c = migrated(&[
            ("migration/src/m20240102_000002_later.rs", M2),
            ("migration/src/m20240101_000001_init.rs", M1),
        ]);
        let got: Vec<(&str, Vec<&str>, bool, &str)> = c
            .iter()
            .map(|c| {
                (
                    c.model.as_str(),
                    c.columns.iter().map(String::as_str).collect(),
                    c.generated,
                    c.source,
                )
            })
            .collect();
        let m = "sea-orm-migration";
        assert_eq!(
            got,
            vec![
                ("accounts", vec!["id"], true, m),
                ("accounts", vec!["email"], false, m),
                ("accounts", vec!["handle"], false, m),
                ("memberships", vec!["team_id", "account_id"], false, m),
                ("accounts", vec!["external_id"], false, m),
            ]
        );
        // without the later migration the index and the column are still there
        let c = migrated(&[("migration/src/m20240101_000001_init.rs", M1)]);
        assert!(c.iter().any(|c| c.columns == ["team_id", "email"]));
        assert!(c.iter().any(|c| c.columns == ["legacy"]));
        assert!(!c.iter().any(|c| c.columns == ["token"]));
    }

    #[test]
    fn an_unreadable_attribute_is_a_diagnostic() {
        let (ir, _) = parse_file(
            "src/entity/tag.rs",
            "#[derive(DeriveEntityModel)]\n#[sea_orm(table_name = \"tags\")]\npub struct Model {\n    #[sea_orm(primary_key)]\n    pub id: i32,\n    #[sea_orm = \"unique\"]\n    pub name: String,\n}\n",
        );
        let irs = [ir];
        let model = Model::build(&irs, std::path::Path::new("/nonexistent"));
        let (c, d) = constraints(&model);
        assert_eq!(c.len(), 1);
        assert_eq!(
            (d.len(), d[0].file.as_str(), d[0].line),
            (1, "src/entity/tag.rs", 6)
        );
        assert!(d[0].message.contains("#[sea_orm]"));
    }

    #[test]
    fn odd_attributes_do_not_panic() {
        let (c, bad) = entity(
            r#"#[derive(DeriveEntityModel)]
#[sea_orm = "users"]
#[sea_orm]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = "false")]
    pub id: i64,
    #[sea_orm("unique")]
    pub email: String,
    #[sea_orm(unique_key = 3, default_expr = "Expr::current_timestamp()", belongs_to(x, y))]
    pub created: String,
    #[sea_orm(unique,,)]
    pub name: String,
    #[sea_orm(unique_key)]
    pub other: String,
}
"#,
        );
        assert_eq!(bad, vec![2, 3, 7]);
        assert_eq!(
            summary(&c),
            vec![
                (vec!["id"], false, 6),
                (vec!["name"], false, 12),
                (vec!["created"], false, 10),
            ]
        );
    }
}
