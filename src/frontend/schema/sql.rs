//! SQL migrations, parsed with `sqlparser` and applied in path order (timestamped and `V1__`
//! names sort in the order they run): `UNIQUE` and `PRIMARY KEY` on columns and tables,
//! `CREATE UNIQUE INDEX` (partial too), `ALTER TABLE … ADD CONSTRAINT … UNIQUE`, and the drops
//! and renames of later migrations. A statement the parser cannot read is a diagnostic.

use crate::discover::SourceFile;
use crate::facts::{Diagnostic, Location, SchemaSql, UniqueConstraint};
use sqlparser::ast::{
    AlterTableOperation, ColumnDef, ColumnOption, CreateIndex, CreateTable, Expr, IndexColumn,
    ObjectName, ObjectType, Statement, TableConstraint,
};
use sqlparser::dialect::{Dialect, GenericDialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
struct Unique {
    name: Option<String>,
    columns: Vec<String>,
    partial: bool,
    location: Location,
}

#[derive(Debug, Default)]
struct Table {
    name: String,
    generated: Vec<String>,
    uniques: Vec<Unique>,
}

fn last_ident(name: &ObjectName) -> String {
    name.to_string()
        .rsplit('.')
        .next()
        .unwrap_or_default()
        .trim_matches(|c| c == '"' || c == '`' || c == '[' || c == ']')
        .to_string()
}

/// `orders` of `public.orders`.
fn last_part(table: &str) -> &str {
    table.rsplit('.').next().unwrap_or(table)
}

fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// The column an index entry keys on: a name, or the one column a case or space folding of it
/// reads (`lower("email")` keys on `email`, more strictly than the column itself). In an index
/// over every row (`partial` false), also the one column another expression of it reads
/// through functions and casts (`COALESCE(parent_id, '0'::uuid)`): a record that gives that
/// column gives the key. A partial index keeps its expression (it stops only some rows'
/// duplicates), and so does a JSON field (`(doc ->> 'slug')`: a document without it keys
/// nothing).
fn column_of(ic: &IndexColumn, partial: bool) -> String {
    match &ic.column.expr {
        Expr::Identifier(i) => i.value.clone(),
        e => {
            let text = e.to_string();
            let folded = text.split_once('(').and_then(|(f, rest)| {
                let inner = rest.strip_suffix(')')?.trim().trim_matches('"');
                (matches!(
                    f.trim().to_ascii_lowercase().as_str(),
                    "lower" | "upper" | "trim" | "btrim" | "unaccent"
                ) && !inner.is_empty()
                    && inner.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .then(|| inner.to_string())
            });
            let read = || {
                let mut cols = Vec::new();
                (reads_columns(e, &mut cols, 0) && cols.len() == 1).then(|| cols.remove(0))
            };
            folded
                .or_else(|| (!partial).then(read).flatten())
                .unwrap_or_else(|| text.trim_matches('"').to_string())
        }
    }
}

/// Adds the columns expression `e` reads to `cols` (each once): through functions, operators,
/// casts and parentheses; false for any other form (a subquery, a `CASE`), whose reads are not
/// known.
fn reads_columns(e: &Expr, cols: &mut Vec<String>, depth: usize) -> bool {
    use sqlparser::ast::{BinaryOperator, FunctionArg, FunctionArgExpr, FunctionArguments};
    if depth > 32 {
        return false;
    }
    let mut add = |c: &str| {
        if !cols.iter().any(|x| x == c) {
            cols.push(c.to_string());
        }
    };
    match e {
        Expr::Identifier(i) => {
            add(&i.value);
            true
        }
        Expr::CompoundIdentifier(parts) => parts.last().is_some_and(|i| {
            add(&i.value);
            true
        }),
        Expr::Value(_) => true,
        Expr::Nested(inner) | Expr::Cast { expr: inner, .. } => {
            reads_columns(inner, cols, depth + 1)
        }
        // (not a JSON field, `doc ->> 'slug'`: a document without it keys nothing)
        Expr::BinaryOp {
            op:
                BinaryOperator::Arrow
                | BinaryOperator::LongArrow
                | BinaryOperator::HashArrow
                | BinaryOperator::HashLongArrow
                | BinaryOperator::HashMinus,
            ..
        } => false,
        Expr::BinaryOp { left, right, .. } => {
            reads_columns(left, cols, depth + 1) && reads_columns(right, cols, depth + 1)
        }
        Expr::Function(f) => match &f.args {
            FunctionArguments::None => true,
            FunctionArguments::List(list) => list.args.iter().all(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => reads_columns(x, cols, depth + 1),
                _ => false,
            }),
            FunctionArguments::Subquery(_) => false,
        },
        _ => false,
    }
}

fn is_generated(col: &ColumnDef) -> bool {
    let ty = col.data_type.to_string().to_ascii_uppercase();
    if ty.contains("SERIAL") {
        return true;
    }
    col.options.iter().any(|o| {
        let text = o.option.to_string().to_ascii_lowercase();
        match &o.option {
            ColumnOption::Default(e) => {
                let e = e.to_string().to_ascii_lowercase();
                [
                    "gen_random_uuid",
                    "uuid_generate",
                    "nextval",
                    "newid",
                    "uuid()",
                    "gen_random_bytes",
                    "now()",
                    "current_timestamp",
                ]
                .iter()
                .any(|g| e.contains(g))
            }
            _ => {
                text.contains("auto_increment")
                    || text.contains("autoincrement")
                    || text.contains("identity")
                    || text.starts_with("generated")
            }
        }
    })
}

/// Splits a file into statements with the tokenizer (so `;` inside strings and dollar-quoted
/// bodies does not split), keeping each statement's first line.
fn statements(text: &str) -> Result<Vec<(String, u32)>, String> {
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, text)
        .tokenize_with_location()
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut current = String::new();
    let mut first_line: Option<u32> = None;
    for t in tokens {
        match &t.token {
            Token::SemiColon => {
                if let Some(l) = first_line.take() {
                    out.push((std::mem::take(&mut current), l));
                }
                current.clear();
            }
            Token::Whitespace(_) => {
                if first_line.is_some() {
                    current.push_str(&t.token.to_string());
                }
            }
            tok => {
                first_line.get_or_insert(t.span.start.line as u32);
                current.push_str(&tok.to_string());
            }
        }
    }
    if let Some(l) = first_line {
        out.push((current, l));
    }
    Ok(out)
}

/// The schema statements inside a PostgreSQL `DO $$ BEGIN IF NOT EXISTS (..) THEN CREATE UNIQUE
/// INDEX ..; END IF; END $$` block (as Drizzle and Prisma generate them): each `CREATE` / `ALTER
/// TABLE` up to its `;`, with its line. None when the statement is not a `DO` block.
fn do_block_statements(text: &str, line: u32) -> Option<Vec<(String, u32)>> {
    let trimmed = text.trim_start();
    if !trimmed.get(..2)?.eq_ignore_ascii_case("do")
        || !trimmed[2..].starts_with(|c: char| c.is_whitespace() || c == '$')
    {
        return None;
    }
    let upper = text.to_ascii_uppercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = ["CREATE ", "ALTER TABLE"]
        .iter()
        .filter_map(|k| upper[from..].find(k).map(|i| i + from))
        .min()
    {
        let end = upper[at..].find(';').map(|i| i + at).unwrap_or(upper.len());
        let body = &text[at..end];
        // The body ends at `END IF` / `END` when the statement has no `;` of its own.
        let body = match body.to_ascii_uppercase().find(" END IF") {
            Some(i) => &body[..i],
            None => body,
        };
        out.push((
            body.to_string(),
            line + text[..at].matches('\n').count() as u32,
        ));
        from = end;
    }
    Some(out)
}

fn parse_one(stmt: &str) -> Result<Vec<Statement>, String> {
    // SQLite's `AUTOINCREMENT` (the other dialects drop the word) is SQLite's.
    let sqlite_first = stmt.to_ascii_uppercase().contains("AUTOINCREMENT");
    let dialects: [&dyn Dialect; 4] = if sqlite_first {
        [
            &SQLiteDialect {},
            &PostgreSqlDialect {},
            &MySqlDialect {},
            &GenericDialect {},
        ]
    } else {
        [
            &PostgreSqlDialect {},
            &MySqlDialect {},
            &SQLiteDialect {},
            &GenericDialect {},
        ]
    };
    let mut first_err = None;
    for d in dialects {
        match Parser::parse_sql(d, stmt) {
            Ok(s) => return Ok(s),
            Err(e) => {
                first_err.get_or_insert(e.to_string());
            }
        }
    }
    // SQLite reads table constraints that no comma separates (`UNIQUE(a)\n CONSTRAINT b
    // UNIQUE(c)`, as its own `.schema` prints tables altered over time); the other dialects do
    // not. Read again with the commas in place.
    if let Some(fixed) = comma_separated_constraints(stmt)
        && let Ok(s) = Parser::parse_sql(&SQLiteDialect {}, &fixed)
    {
        return Ok(s);
    }
    Err(first_err.unwrap_or_default())
}

/// A `CREATE TABLE` whose table constraints follow one another without a comma, with the commas
/// put in: a `CONSTRAINT`, `UNIQUE`, `PRIMARY KEY` or `FOREIGN KEY` right after a `)` in the
/// table's own parentheses. `None` when there is nothing to put in.
fn comma_separated_constraints(stmt: &str) -> Option<String> {
    if !flat_upper(stmt).starts_with("CREATE TABLE") {
        return None;
    }
    let tokens = Tokenizer::new(&SQLiteDialect {}, stmt).tokenize().ok()?;
    let starts = |i: usize| {
        let words: Vec<String> = tokens[i..]
            .iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .take(2)
            .map(|t| match t {
                Token::Word(w) => w.value.to_ascii_uppercase(),
                _ => String::new(),
            })
            .collect();
        matches!(
            words.first().map(String::as_str),
            Some("CONSTRAINT" | "UNIQUE" | "CHECK")
        ) || (words.len() == 2
            && matches!(words[0].as_str(), "PRIMARY" | "FOREIGN")
            && words[1] == "KEY")
    };
    let (mut out, mut depth, mut last, mut added) = (String::new(), 0usize, None, false);
    for (i, t) in tokens.iter().enumerate() {
        if depth == 1
            && matches!(last, Some(Token::RParen))
            && !matches!(t, Token::Whitespace(_))
            && matches!(t, Token::Word(_))
            && starts(i)
        {
            out.push(',');
            added = true;
        }
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
        if !matches!(t, Token::Whitespace(_)) {
            last = Some(t.clone());
        }
        out.push_str(&t.to_string());
    }
    added.then_some(out)
}

fn flat_upper(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase()
}

#[derive(Default)]
struct Schema {
    tables: BTreeMap<String, Table>,
    /// Index name → table key.
    indexes: BTreeMap<String, String>,
}

impl Schema {
    fn table(&mut self, name: &str) -> &mut Table {
        self.tables.entry(key(name)).or_insert_with(|| Table {
            name: name.to_string(),
            ..Default::default()
        })
    }

    fn add_constraint(&mut self, table: &str, c: &TableConstraint, here: &Location) {
        let u = match c {
            TableConstraint::Unique(u) => {
                let columns: Vec<String> = u.columns.iter().map(|c| column_of(c, false)).collect();
                Unique {
                    name: u.name.as_ref().map(|n| n.value.clone()).or_else(|| {
                        Some(format!("{}_{}_key", last_part(table), columns.join("_")))
                    }),
                    columns,
                    partial: false,
                    location: here.clone(),
                }
            }
            TableConstraint::PrimaryKey(p) => Unique {
                name: p
                    .name
                    .as_ref()
                    .map(|n| n.value.clone())
                    .or_else(|| Some(format!("{}_pkey", last_part(table)))),
                columns: p.columns.iter().map(|c| column_of(c, false)).collect(),
                partial: false,
                location: here.clone(),
            },
            _ => return,
        };
        self.table(table).uniques.push(u);
    }

    fn add_column(&mut self, table: &str, col: &ColumnDef, here: &Location) {
        let name = col.name.value.clone();
        if is_generated(col) {
            self.table(table).generated.push(name.clone());
        }
        for o in &col.options {
            if matches!(
                o.option,
                ColumnOption::Unique(_) | ColumnOption::PrimaryKey(_)
            ) {
                // PostgreSQL's names for unnamed ones, so a later `DROP CONSTRAINT` finds them.
                let default = if matches!(o.option, ColumnOption::PrimaryKey(_)) {
                    format!("{}_pkey", last_part(table))
                } else {
                    format!("{}_{name}_key", last_part(table))
                };
                let u = Unique {
                    name: o.name.as_ref().map(|n| n.value.clone()).or(Some(default)),
                    columns: vec![name.clone()],
                    partial: false,
                    location: here.clone(),
                };
                self.table(table).uniques.push(u);
            }
        }
    }

    fn apply(&mut self, stmt: &Statement, here: &Location) {
        match stmt {
            Statement::CreateTable(CreateTable {
                name,
                columns,
                constraints,
                ..
            }) => {
                let t = last_ident(name);
                self.tables.remove(&key(&t));
                self.table(&t);
                for col in columns {
                    self.add_column(&t, col, here);
                }
                for c in constraints {
                    self.add_constraint(&t, c, here);
                }
            }
            Statement::CreateIndex(CreateIndex {
                name,
                table_name,
                columns,
                unique: true,
                predicate,
                ..
            }) => {
                let t = last_ident(table_name);
                let index = name.as_ref().map(last_ident);
                if let Some(i) = &index {
                    self.indexes.insert(key(i), key(&t));
                }
                let u = Unique {
                    name: index,
                    columns: columns
                        .iter()
                        .map(|c| column_of(c, predicate.is_some()))
                        .collect(),
                    partial: predicate.is_some(),
                    location: here.clone(),
                };
                self.table(&t).uniques.push(u);
            }
            Statement::AlterTable(alter) => {
                let mut t = last_ident(&alter.name);
                for op in &alter.operations {
                    match op {
                        AlterTableOperation::AddConstraint { constraint, .. } => {
                            self.add_constraint(&t, constraint, here)
                        }
                        AlterTableOperation::AddColumn { column_def, .. } => {
                            self.add_column(&t, column_def, here)
                        }
                        AlterTableOperation::DropConstraint { name, .. } => {
                            let n = key(&name.value);
                            self.table(&t)
                                .uniques
                                .retain(|u| u.name.as_deref().map(key) != Some(n.clone()));
                        }
                        AlterTableOperation::DropColumn { column_names, .. } => {
                            let dropped: Vec<String> =
                                column_names.iter().map(|c| key(&c.value)).collect();
                            self.table(&t)
                                .uniques
                                .retain(|u| !u.columns.iter().any(|c| dropped.contains(&key(c))));
                        }
                        AlterTableOperation::RenameColumn {
                            old_column_name,
                            new_column_name,
                        } => {
                            let (old, new) =
                                (key(&old_column_name.value), new_column_name.value.clone());
                            for u in &mut self.table(&t).uniques {
                                for c in &mut u.columns {
                                    if key(c) == old {
                                        *c = new.clone();
                                    }
                                }
                            }
                        }
                        AlterTableOperation::RenameTable { table_name } => {
                            let new = match table_name {
                                sqlparser::ast::RenameTableNameKind::As(n)
                                | sqlparser::ast::RenameTableNameKind::To(n) => last_ident(n),
                            };
                            if let Some(mut old) = self.tables.remove(&key(&t)) {
                                old.name = new.clone();
                                self.tables.insert(key(&new), old);
                            }
                            t = new;
                        }
                        _ => {}
                    }
                }
            }
            Statement::Drop {
                object_type, names, ..
            } => {
                for n in names {
                    let name = key(&last_ident(n));
                    match object_type {
                        ObjectType::Table => {
                            self.tables.remove(&name);
                        }
                        ObjectType::Index => {
                            if let Some(t) = self.indexes.remove(&name) {
                                if let Some(table) = self.tables.get_mut(&t) {
                                    table.uniques.retain(|u| {
                                        u.name.as_deref().map(key) != Some(name.clone())
                                    });
                                }
                            } else {
                                for table in self.tables.values_mut() {
                                    table.uniques.retain(|u| {
                                        u.name.as_deref().map(key) != Some(name.clone())
                                    });
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// A migration that undoes another (`down.sql`, `x.down.sql`, Flyway `U2__x.sql`): it is not
/// the schema's history.
fn is_down_migration(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_ascii_lowercase();
    let flyway_undo = name.starts_with('u')
        && name[1..].split("__").next().is_some_and(|v| {
            !v.is_empty()
                && v.chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == '_')
        });
    name == "down.sql"
        || name.ends_with(".down.sql")
        || name.ends_with("_down.sql")
        || name.ends_with("-down.sql")
        || flyway_undo
}

/// The part of a migration file that applies it: a file holding both directions (dbmate's
/// `-- migrate:up` .. `-- migrate:down`, goose's `-- +goose Up` .. `-- +goose Down`, sql-migrate's
/// `-- +migrate Down`) ends its schema's history where the part that undoes it begins.
fn up_section(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let marker = line.trim().to_ascii_lowercase();
        let marker: String = marker.split_whitespace().collect::<Vec<_>>().join(" ");
        if matches!(
            marker.as_str(),
            "-- migrate:down" | "--migrate:down" | "-- +goose down" | "-- +migrate down"
        ) {
            return &text[..at];
        }
        at += line.len();
    }
    text
}

/// A template's holes (`${table}`) as a name the parser reads, so the statement around them is
/// read; a constraint on a table whose name is a hole names no model anyone writes.
fn fill_holes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        match rest[at..].find('}') {
            Some(end) => {
                out.push_str("hole");
                rest = &rest[at + end + 1..];
            }
            None => {
                rest = &rest[at..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Schema statements written in code (a TypeORM migration's `queryRunner.query(`CREATE UNIQUE
/// INDEX ..`)`, `knex.raw(..)`, Drizzle's `sql`..``, rusqlite's `execute_batch("CREATE TABLE
/// ..")`), applied in path and line order as migrations are: the constraints that remain. Only
/// statements that change the schema are read; one that cannot be read is a diagnostic, once per
/// file.
pub fn code_constraints(
    statements_in_code: &[SchemaSql],
) -> (Vec<UniqueConstraint>, Vec<Diagnostic>) {
    let mut schema = Schema::default();
    let mut diagnostics = Vec::new();
    let mut sorted: Vec<&SchemaSql> = statements_in_code.iter().collect();
    sorted.sort_by(|a, b| (&a.location, &a.text).cmp(&(&b.location, &b.text)));
    sorted.dedup_by(|a, b| a.location == b.location && a.text == b.text);
    // (one file's strings together, for one diagnostic a file)
    for file in sorted.chunk_by(|a, b| a.location.file == b.location.file) {
        let rel = &file[0].location.file;
        let mut failed = Vec::new();
        for s in file {
            let Ok(stmts) = statements(&fill_holes(&s.text)) else {
                continue;
            };
            let stmts = stmts
                .into_iter()
                .filter(|(t, _)| crate::sql::starts_with_schema_change(t))
                .map(|(t, line)| (t, s.location.line + line - 1))
                .collect();
            failed.extend(schema.read(rel, stmts));
        }
        diagnostics.extend(unread(rel, &failed));
    }
    (schema.remaining(), diagnostics)
}

/// The diagnostic for the statements of a file that could not be read: the first, and how many
/// more.
fn unread(rel: &str, failed: &[(u32, String)]) -> Option<Diagnostic> {
    let (line, e) = failed.first()?;
    let more = if failed.len() > 1 {
        format!(" (and {} more statements)", failed.len() - 1)
    } else {
        String::new()
    };
    Some(Diagnostic::new(
        rel,
        *line,
        format!(
            "SQL statement not read: {}{more}; its constraints are not known",
            crate::facts::one_line(e, 120)
        ),
    ))
}

/// Applies every migration in path order and returns the constraints that remain.
pub fn constraints(files: &[&SourceFile]) -> (Vec<UniqueConstraint>, Vec<Diagnostic>) {
    let mut schema = Schema::default();
    let mut diagnostics = Vec::new();
    let mut files: Vec<&&SourceFile> = files
        .iter()
        .filter(|f| !is_down_migration(&f.rel))
        .collect();
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    for f in files {
        let stmts = match statements(up_section(&f.text)) {
            Ok(s) => s,
            Err(e) => {
                diagnostics.push(Diagnostic::new(
                    f.rel.clone(),
                    0,
                    format!("SQL not read: {e}"),
                ));
                continue;
            }
        };
        let mut expanded: Vec<(String, u32)> = Vec::new();
        for (text, line) in stmts {
            match do_block_statements(&text, line) {
                Some(inner) => expanded.extend(inner),
                None => expanded.push((text, line)),
            }
        }
        let failed = schema.read(&f.rel, expanded);
        diagnostics.extend(unread(&f.rel, &failed));
    }
    (schema.remaining(), diagnostics)
}

impl Schema {
    /// Applies statements of file `rel` (each with its line) in order: those that could not be
    /// parsed, with the parser's error.
    fn read(&mut self, rel: &str, statements: Vec<(String, u32)>) -> Vec<(u32, String)> {
        let mut failed = Vec::new();
        for (text, line) in statements {
            let here = Location::new(rel, line);
            match parse_one(&text) {
                Ok(parsed) => {
                    for s in &parsed {
                        self.apply(s, &here);
                    }
                }
                Err(e) => failed.push((line, e)),
            }
        }
        failed
    }

    /// The constraints of the tables as the statements applied so far left them.
    fn remaining(&self) -> Vec<UniqueConstraint> {
        let mut out = Vec::new();
        for table in self.tables.values() {
            for u in &table.uniques {
                let generated = !u.columns.is_empty()
                    && u.columns
                        .iter()
                        .all(|c| table.generated.iter().any(|g| key(g) == key(c)));
                out.push(UniqueConstraint {
                    // A serial, `AUTOINCREMENT` or defaulted key is the database's unless the insert
                    // names it (`INSERT INTO settings (id) VALUES (1)`): then it conflicts as any key.
                    defaulted: generated,
                    model: table.name.clone(),
                    aliases: vec![],
                    generated,
                    columns: u.columns.clone(),
                    partial: u.partial,
                    source: "sql",
                    location: u.location.clone(),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::Lang;

    fn file(rel: &str, text: &str) -> SourceFile {
        SourceFile {
            rel: rel.into(),
            lang: Lang::Sql,
            text: text.into(),
        }
    }

    #[test]
    fn sqlite_table_constraints_without_commas() {
        // As SQLite's `.schema` prints a table whose constraints were added one by one.
        let a = file(
            "schema/schema.sql",
            "CREATE TABLE repositories(\n  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,\n  name VARCHAR(255) NOT NULL,\n  \
             git_url VARCHAR(255) NOT NULL,\n  CONSTRAINT `idx_name` UNIQUE(`name`)\n  CONSTRAINT `idx_git_url` UNIQUE(`git_url`)\n);",
        );
        let (c, d) = constraints(&[&a]);
        let columns: Vec<Vec<String>> = c.iter().map(|c| c.columns.clone()).collect();
        assert!(columns.contains(&vec!["name".to_string()]), "{columns:?}");
        assert!(
            columns.contains(&vec!["git_url".to_string()]),
            "{columns:?}"
        );
        assert!(
            c.iter().any(|c| c.columns == ["id"] && c.generated),
            "the rowid is generated"
        );
        assert!(d.is_empty(), "{d:?}");
        // Nothing to put in: a statement that is wrong for another reason stays unread.
        assert_eq!(
            comma_separated_constraints("CREATE TABLE t(a INT, UNIQUE(a))"),
            None
        );
    }

    #[test]
    fn a_file_of_both_directions_is_read_up_to_the_part_that_undoes_it() {
        let dbmate = file(
            "db/migrations/20240101000000_categories.sql",
            "-- migrate:up\nCREATE TABLE categories (id SERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE);\n\n\
             -- migrate:down\nDROP TABLE categories;\n",
        );
        let goose = file(
            "db/migrations/20240201000000_tags.sql",
            "-- +goose Up\nCREATE TABLE tags (id SERIAL PRIMARY KEY, label TEXT NOT NULL UNIQUE);\n\
             -- +goose Down\nDROP TABLE tags;\n",
        );
        let (c, d) = constraints(&[&dbmate, &goose]);
        for (model, column) in [("categories", "name"), ("tags", "label")] {
            assert!(
                c.iter()
                    .any(|c| c.model == model && c.columns == [column] && !c.generated),
                "{model}: {c:?}"
            );
        }
        assert!(d.is_empty(), "{d:?}");
        // (a file without a marker is read whole)
        assert_eq!(
            up_section("CREATE TABLE t (a INT);"),
            "CREATE TABLE t (a INT);"
        );
    }

    #[test]
    fn migrations_apply_in_order() {
        let a = file(
            "migrations/001_init.sql",
            "CREATE TABLE users (id SERIAL PRIMARY KEY, email TEXT NOT NULL UNIQUE, handle TEXT);\n\
             CREATE TABLE posts (id UUID PRIMARY KEY DEFAULT gen_random_uuid(), user_id INT, slug TEXT, UNIQUE (user_id, slug));\n\
             CREATE UNIQUE INDEX users_handle_active ON users (handle) WHERE deleted_at IS NULL;\n\
             CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RETURN NEW; END; $$ LANGUAGE plpgsql;",
        );
        let b = file(
            "migrations/002_more.sql",
            "ALTER TABLE users DROP CONSTRAINT users_email_key;\nALTER TABLE users ADD CONSTRAINT users_email_uq UNIQUE (email);\n\
             ALTER TABLE posts RENAME COLUMN slug TO permalink;\nDROP INDEX users_handle_active;",
        );
        let (c, d) = constraints(&[&b, &a]);
        let summary: Vec<(String, Vec<String>, bool, bool)> = c
            .iter()
            .map(|c| (c.model.clone(), c.columns.clone(), c.generated, c.partial))
            .collect();
        assert!(
            summary.contains(&("users".into(), vec!["id".into()], true, false)),
            "{summary:?}"
        );
        assert!(
            summary.contains(&("users".into(), vec!["email".into()], false, false)),
            "{summary:?}"
        );
        assert!(
            summary.contains(&(
                "posts".into(),
                vec!["user_id".into(), "permalink".into()],
                false,
                false
            )),
            "{summary:?}"
        );
        assert!(
            !summary.iter().any(|s| s.1 == vec!["handle".to_string()]),
            "dropped index is gone: {summary:?}"
        );
        assert!(
            d.is_empty() || d.iter().all(|d| d.message.contains("not read")),
            "{d:?}"
        );
    }

    #[test]
    fn down_migrations_are_not_history() {
        let up = file(
            "migrations/2020-01-01_x/up.sql",
            "CREATE TABLE t (id INT, name TEXT UNIQUE);",
        );
        let down = file("migrations/2020-01-01_x/down.sql", "DROP TABLE t;");
        let (c, _) = constraints(&[&up, &down]);
        assert_eq!(c.len(), 1);
        assert!(is_down_migration("db/U3__undo.sql"));
        assert!(!is_down_migration("db/V3__users.sql"));
    }

    #[test]
    fn an_unnamed_primary_key_is_dropped_by_its_postgres_name() {
        let init = file(
            "migrations/1_init/migration.sql",
            "CREATE TABLE \"Access\" (\"id\" TEXT NOT NULL, \"userId\" TEXT NOT NULL, PRIMARY KEY (\"id\", \"userId\"));",
        );
        let later = file(
            "migrations/2_ids/migration.sql",
            "ALTER TABLE \"Access\" DROP CONSTRAINT \"Access_pkey\", ADD CONSTRAINT \"Access_pkey\" PRIMARY KEY (\"id\");",
        );
        let (found, diags) = constraints(&[&init, &later]);
        assert!(diags.is_empty(), "{diags:?}");
        let cols: Vec<_> = found.iter().map(|c| c.columns.clone()).collect();
        assert_eq!(cols, vec![vec!["id".to_string()]]);
    }

    #[test]
    fn a_case_folded_index_keys_on_its_column() {
        let f = file(
            "migrations/1_init/migration.sql",
            "CREATE TABLE users (id BIGINT, email TEXT, doc JSONB);\n\
             CREATE UNIQUE INDEX users_email_idx ON users USING btree (lower(\"email\"));\n\
             CREATE UNIQUE INDEX users_doc_idx ON users ((doc->>'slug'));",
        );
        let (found, _) = constraints(&[&f]);
        let cols: Vec<_> = found.iter().map(|c| c.columns.clone()).collect();
        assert!(cols.contains(&vec!["email".to_string()]), "{cols:?}");
        assert!(!cols.iter().flatten().any(|c| c == "doc"), "{cols:?}");
    }

    #[test]
    fn an_index_over_one_column_through_functions_keys_on_it() {
        let f = file(
            "migrations/1_init/migration.sql",
            "CREATE TABLE groups (id UUID, org_id UUID, parent_id UUID, name TEXT, kind TEXT);\n\
             CREATE UNIQUE INDEX groups_sibling ON groups (org_id, COALESCE(parent_id, \
             '00000000-0000-0000-0000-000000000000'::UUID), name);\n\
             CREATE UNIQUE INDEX groups_kind ON groups (COALESCE(parent_id, org_id)) WHERE kind = 'x';",
        );
        let (found, _) = constraints(&[&f]);
        let cols: Vec<_> = found.iter().map(|c| c.columns.clone()).collect();
        assert!(
            cols.contains(&vec![
                "org_id".to_string(),
                "parent_id".to_string(),
                "name".to_string()
            ]),
            "{cols:?}"
        );
        // (two columns, and a partial index: kept as written)
        assert!(
            !cols.iter().any(|c| c == &vec!["parent_id".to_string()]),
            "{cols:?}"
        );
    }

    #[test]
    fn do_blocks_are_read_inside() {
        let sql = "CREATE TABLE \"Key\" (\"id\" uuid PRIMARY KEY DEFAULT gen_random_uuid(), \"name\" text);\n\
                   DO $$\nBEGIN\n    IF NOT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = 'k') THEN\n        \
                   CREATE UNIQUE INDEX \"k\" ON \"Key\" USING btree (\"name\" text_ops);\n    END IF;\nEND $$;\n";
        let f = file("drizzle/0000_init.sql", sql);
        let (found, diags) = constraints(&[&f]);
        assert!(diags.is_empty(), "{diags:?}");
        let named: Vec<_> = found.iter().filter(|c| c.columns == ["name"]).collect();
        assert_eq!(named.len(), 1, "{found:?}");
        assert_eq!(named[0].location.line, 5);
    }

    #[test]
    fn unreadable_statement_is_a_diagnostic() {
        let f = file(
            "db/V1__x.sql",
            "CREATE TABLE t (id INT PRIMARY KEY);\nTHIS IS NOT SQL;\n",
        );
        let (c, d) = constraints(&[&f]);
        assert_eq!(c.len(), 1);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].line, 2);
    }
}
