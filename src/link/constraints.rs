//! Unique constraints linked to the creates they protect, and the constraints that ORM models
//! written in TypeScript declare (Mongoose, TypeORM, Sequelize, Drizzle, knex).
//!
//! A create is protected when a unique constraint on its model covers columns the caller
//! supplies: the retry's insert conflicts instead of adding a row. A constraint on a generated
//! column (a sequence, a fresh UUID) protects nothing; a partial index protects some rows only.

use super::resolve::{ModId, Resolved, Resolver};
use crate::facts::{
    EffectKind, Endpoint, Location, Mechanism, MechanismKind, SchemaSql, UniqueConstraint,
    model_key,
};
use crate::program::{CallSite, DecoratorFacts, FnId, Module, Val};
use std::collections::BTreeMap;

/// Does the create's data supply column `c`? Relations count (`author: { connect }` for `authorId`).
fn supplies(keys: &[String], c: &str) -> bool {
    let base = c
        .strip_suffix("Id")
        .or_else(|| c.strip_suffix("_id"))
        .unwrap_or(c);
    // a column as the ORM spells it (`userId`) and as the SQL does (`user_id`)
    let norm = |s: &str| s.replace('_', "").to_ascii_lowercase();
    let (c, base) = (norm(c), norm(base));
    keys.iter().map(|k| norm(k)).any(|k| k == c || k == base)
}

/// Links every unprotected create to the best caller-keyed constraint on its model, and adds the
/// `unique_constraint` mechanism to the endpoints where one was found.
pub fn apply(endpoints: &mut [Endpoint], constraints: &[UniqueConstraint]) {
    // A key one source says is generated is generated: Prisma's `@default(uuid())` fills `id` in
    // the client, so the migration's `PRIMARY KEY ("id")` shows no default.
    let columns = |c: &UniqueConstraint| {
        let mut cols: Vec<String> = c.columns.iter().map(|c| model_key(c)).collect();
        cols.sort();
        (model_key(&c.model), cols)
    };
    let generated: std::collections::BTreeSet<_> = constraints
        .iter()
        .filter(|c| c.generated && !c.defaulted)
        .map(columns)
        .collect();
    // A key filled by a column default (`@Default(DataType.UUIDV4)`) unless the insert gives one:
    // it stops a duplicate only when the request supplies the value (a client-chosen id).
    let defaulted: std::collections::BTreeSet<_> = constraints
        .iter()
        .filter(|c| c.generated && c.defaulted)
        .map(columns)
        .collect();
    let mut by_model: BTreeMap<String, Vec<&UniqueConstraint>> = BTreeMap::new();
    for c in constraints
        .iter()
        .filter(|c| (!c.generated || c.defaulted) && !generated.contains(&columns(c)))
    {
        for name in std::iter::once(&c.model).chain(c.aliases.iter()) {
            by_model.entry(model_key(name)).or_default().push(c);
        }
    }
    for ep in endpoints.iter_mut() {
        let mut used: Vec<(&UniqueConstraint, String, bool)> = Vec::new();
        let mut stoppers: Vec<(Location, String)> = Vec::new();
        // The columns a relative update of each model shifts (`UPDATE blocks SET index = index +
        // 1 WHERE realm = $1 AND index >= $2` before the insert at `index`): the row in the way
        // of a unique key on them moves, so a repeat does not conflict.
        let mut shifted: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in ep
            .side_effects
            .iter()
            .filter(|e| e.kind == EffectKind::DbUpdate && e.relative)
        {
            let Some(t) = &e.target else { continue };
            let cols = shifted.entry(model_key(t)).or_default();
            cols.extend(e.update_keys.iter().map(|(k, _)| k.to_ascii_lowercase()));
            cols.extend(e.relative_fields.iter().map(|k| k.to_ascii_lowercase()));
        }
        // Creates of a find-or-create that returns what it found: their constraint stops only
        // what runs after them behind the same missed lookup (see `Effect::lookup_guarded`);
        // a caller's effects after a found row run again.
        let mut guarded_stoppers: Vec<(Location, String)> = Vec::new();
        for e in ep.side_effects.iter_mut() {
            // A lookup that throws when it finds the row refuses a repeat before this create.
            if let Some(guard) = e.refused_by.as_ref().filter(|_| e.ends_a_duplicate()) {
                stoppers.push((
                    e.location.clone(),
                    format!("the lookup tested at {guard}, which throws when it finds the row"),
                ));
            }
            if e.kind != EffectKind::DbCreate || e.replaces {
                continue;
            }
            let Some(target) = &e.target else { continue };
            let Some(candidates) = by_model.get(&model_key(target)) else {
                continue;
            };
            let moved = shifted.get(&model_key(target));
            let keyed = candidates
                .iter()
                .filter(|c| {
                    !moved.is_some_and(|cols| {
                        c.columns
                            .iter()
                            .any(|col| cols.contains(&col.to_ascii_lowercase()))
                    })
                })
                .filter(|c| {
                    if c.defaulted || defaulted.contains(&columns(c)) {
                        return c.columns.iter().all(|col| supplies(&e.request_keys, col));
                    }
                    match &e.data_keys {
                        // (a column the schema gives as an expression, `(flags ->> 'providerId')`, is not
                        // compared with the record's keys: in an index over every row it is
                        // taken as written, as when the record is not in view)
                        Some(keys) => c.columns.iter().all(|col| {
                            supplies(keys, col) || (!c.partial && col.contains(['(', '>']))
                        }),
                        // What the insert writes is not in view: a constraint on the row's
                        // own id (or an API key, a token) stops a repeat only when the request
                        // is seen to send it (ids are made per call: `Uuid::new_v4()` in the
                        // caller); a natural key (`(org, name)`) is taken as written.
                        None => {
                            !made_by_nature(c)
                                || c.columns.iter().all(|col| supplies(&e.request_keys, col))
                        }
                    }
                })
                .min_by_key(|c| (c.partial, c.columns.len(), c.location.clone()));
            if let Some(c) = keyed {
                // An upsert already stops its duplicate; the constraint it conflicts on is what
                // makes it work, so it is named too.
                // (An update-or-insert by hand, `find_or_create` with `upsert`, is not atomic:
                // the constraint is what closes its race.)
                if !e.upsert || e.find_or_create {
                    e.constraint = Some(c.describe());
                }
                if !e.upsert {
                    // The request itself supplies every column: a repeat conflicts for sure.
                    // A find-or-create that returns the row it found never reaches its create
                    // on a repeat: nothing fails there, and what follows runs again.
                    if c.columns.iter().all(|col| supplies(&e.request_keys, col)) {
                        let stopper = (e.location.clone(), format!("unique {}", c.describe()));
                        if !e.find_or_create || e.refused_by.is_some() {
                            stoppers.push(stopper);
                        } else {
                            guarded_stoppers.push(stopper);
                        }
                    }
                }
                used.push((c, e.callee.clone(), e.upsert));
            }
        }
        // A duplicate that the constraint refuses fails its create, and the error leaves the
        // function that runs the effects after it (the front ends record such creates in
        // `after_creates` only when nothing there swallows the error): those effects do not run
        // again.
        // Only a constraint on values the request supplies: a generated column, or keys not in
        // view, would not conflict.
        if !stoppers.is_empty() || !guarded_stoppers.is_empty() {
            for e in ep.side_effects.iter_mut() {
                let guarded = guarded_stoppers
                    .iter()
                    .filter(|_| e.lookup_guarded.is_some());
                if let Some((at, c)) = stoppers
                    .iter()
                    .chain(guarded)
                    .find(|(at, _)| e.after_creates.contains(at))
                {
                    e.stopped_by = Some(format!("{c}, on the create at {at}"));
                }
            }
        }
        // A constraint that stops a create is the endpoint's mechanism for that create. One an
        // upsert conflicts on is named only when nothing else the endpoint does would repeat
        // (an upsert in shared plumbing does not make the endpoint safe).
        let repeats = ep.side_effects.iter().any(|e| e.repeats_on_retry());
        for (c, callee, upsert) in used {
            if upsert && repeats {
                continue;
            }
            let unique = format!("unique {}", c.describe());
            let stops_more = ep.side_effects.iter().any(|e| {
                e.stopped_by
                    .as_deref()
                    .is_some_and(|s| s.starts_with(&unique))
            });
            ep.mechanisms.push(Mechanism {
                kind: MechanismKind::UniqueConstraint,
                detail: format!(
                    "{unique} ({}) stops a duplicate `{callee}`{}",
                    c.source,
                    if stops_more {
                        ": the repeat fails there, before the effects after it"
                    } else {
                        ""
                    }
                ),
                location: c.location.clone(),
            });
        }
        ep.mechanisms.sort();
        ep.mechanisms
            .dedup_by(|a, b| a.kind == b.kind && a.location == b.location);
    }
}

/// A constraint on a row's own id (`id`, `uuid`, `_id`): the primary key of most tables; or on a
/// value a create makes up for the row by its nature (a share link's `token`, an API key's
/// `key_hash`, a `secret`, a `nonce`), alone or beside the caller's (`UNIQUE (team_id,
/// api_key)`): a new one each call unless the request is seen to send it.
/// So is a key that is only a column named for the table's own id (`applications.application_sid`,
/// `users.user_id`, Twilio's style of string ids); beside another column (`(environmentId,
/// subscriberId)`) such a name is a caller's id in a scope.
fn made_by_nature(c: &UniqueConstraint) -> bool {
    let own_id = |col: &str| {
        let col = col.replace(['_', '-'], "").to_ascii_lowercase();
        // (the table as written or reduced: `user_permissions_sid`, `application_sid`)
        [c.model.to_ascii_lowercase(), model_key(&c.model)]
            .iter()
            .any(|own| {
                col.strip_prefix(own.replace(['_', '-'], "").as_str())
                    .is_some_and(|rest| matches!(rest, "id" | "sid" | "uuid" | "guid"))
            })
    };
    c.columns
        .iter()
        .any(|col| crate::text::names_a_made_value(col))
        || matches!(c.columns.as_slice(), [col] if own_id(col))
}

fn truthy(v: Option<&Val>) -> bool {
    matches!(v, Some(Val::Bool(true)))
}

fn field<'v>(v: &'v Val, name: &str) -> Option<&'v Val> {
    match v {
        Val::Obj(fields) => fields.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v),
        _ => None,
    }
}

fn strings(v: &Val) -> Vec<String> {
    match v {
        Val::Str(s) => vec![s.clone()],
        Val::Arr(items) => items.iter().flat_map(strings).collect(),
        Val::Obj(fields) => fields.iter().map(|(k, _)| k.clone()).collect(),
        _ => vec![],
    }
}

/// The member names along a builder chain (`text('email').notNull().unique()`), innermost first,
/// with the first string argument seen.
fn builder_chain(v: &Val) -> (Vec<String>, Option<String>) {
    let mut names = Vec::new();
    let mut first = None;
    let mut cur = v;
    loop {
        match cur {
            Val::Call(callee, args) => {
                if let Some(Val::Str(s)) = args.first() {
                    first = Some(s.clone());
                }
                cur = callee;
            }
            Val::Member(inner, p) => {
                names.push(p.clone());
                cur = inner;
            }
            Val::Import { name: Some(n), .. } => {
                names.push(n.clone());
                break;
            }
            _ => break,
        }
    }
    names.reverse();
    (names, first)
}

/// A knex schema operation in order: (adds, columns, (generated, partial), line).
type KnexOp = (bool, Vec<String>, (bool, bool), u32);

struct Collector<'a> {
    /// The class whose method the calls being read are in (`super.init` names it).
    class_name: String,
    res: &'a Resolver<'a>,
    out: Vec<UniqueConstraint>,
    /// Schema statements written as strings (`queryRunner.query(`CREATE UNIQUE INDEX ..`)`).
    sql: Vec<SchemaSql>,
}

impl Collector<'_> {
    /// Records a constraint; `flags` are (generated, partial).
    fn push(
        &mut self,
        model: &str,
        aliases: Vec<String>,
        columns: Vec<String>,
        flags: (bool, bool),
        source: &'static str,
        at: Location,
    ) -> bool {
        let (generated, partial) = flags;
        if columns.is_empty() || model.is_empty() {
            return false;
        }
        self.out.push(UniqueConstraint {
            defaulted: false,
            model: model.to_string(),
            aliases,
            columns,
            partial,
            generated,
            source,
            location: at,
        });
        true
    }

    /// The constraint just recorded is generated by a column default the insert may override.
    fn defaulted(&mut self, defaulted: bool) {
        if let Some(c) = self.out.last_mut()
            && c.generated
        {
            c.defaulted = defaulted;
        }
    }

    fn origin_is(&self, m: ModId, v: &Val, packages: &[&str]) -> bool {
        self.res.origin(m, v).is_some_and(|(spec, _, _)| {
            packages
                .iter()
                .any(|p| crate::catalog::package_matches(p, &spec))
        })
    }

    /// The arguments of the `new` call on `line` of module `m`.
    fn new_args(&self, m: ModId, line: u32) -> Option<&[Val]> {
        self.res.modules[m]
            .new_call(line)
            .map(|c| c.args.as_slice())
    }

    /// A unique index made by a call `(keys, { unique: true, partialFilterExpression? })` on the
    /// model or collection `name`.
    fn push_index(&mut self, name: &str, cs: &CallSite, source: &'static str, at: Location) {
        let partial = cs
            .args
            .get(1)
            .and_then(|o| field(o, "partialFilterExpression"))
            .is_some();
        self.push(
            name,
            vec![],
            strings(&cs.args[0]),
            (false, partial),
            source,
            at,
        );
    }

    fn site(&self, m: ModId, line: u32) -> Location {
        Location::new(self.res.modules[m].file.clone(), line)
    }

    /// A Sequelize model as a value names it: a string, a class, or a member of
    /// `sequelize.models` (`models.book`, `const { book } = sequelize.models`).
    fn model_name(&self, m: ModId, v: &Val) -> Option<String> {
        match v {
            Val::Str(s) => Some(s.clone()),
            Val::Member(_, name) => Some(name.clone()),
            other => match self.res.resolve(m, other) {
                Resolved::Class(cm, c) => Some(self.res.modules[cm].classes[c].name.clone()),
                _ => None,
            },
        }
    }

    fn call(&mut self, m: ModId, cs: &CallSite) {
        // A migration's `queryRunner.query(`CREATE UNIQUE INDEX ..`)`, `knex.raw(..)`, Drizzle's
        // `sql`ALTER TABLE ..``: read as a migration's statements are.
        if let Some(text) = cs
            .literal
            .as_ref()
            .filter(|t| crate::sql::has_schema_statement(t))
        {
            self.sql.push(SchemaSql {
                location: self.site(m, cs.line),
                text: text.clone(),
            });
        }
        // `pgTable(...)` called bare has no member path: its name is the root.
        let last = cs
            .path
            .last()
            .map(String::as_str)
            .unwrap_or(cs.root_name.as_str());
        let at = self.site(m, cs.line);
        match last {
            // mongoose.model('User', userSchema)
            "model" if self.origin_is(m, &cs.root, &["mongoose"]) => {
                let (Some(Val::Str(name)), Some(schema)) = (cs.args.first(), cs.args.get(1)) else {
                    return;
                };
                // `new Schema({...})` or `Schema({...})`
                let (fields, line) = match schema {
                    Val::New(_, l) => (self.new_args(m, *l).and_then(|a| a.first()).cloned(), *l),
                    Val::Call(_, args) => (args.first().cloned(), cs.line),
                    _ => return,
                };
                let Some(fields) = fields else { return };
                if let Val::Obj(defs) = &fields {
                    for (col, def) in defs {
                        let def = match def {
                            Val::Arr(items) => items.first().cloned().unwrap_or(Val::Unknown),
                            d => d.clone(),
                        };
                        if truthy(field(&def, "unique")) {
                            self.push(
                                name,
                                vec![],
                                vec![col.clone()],
                                (false, false),
                                "mongoose",
                                self.site(m, line),
                            );
                        }
                    }
                }
                // userSchema.index({ a: 1, b: 1 }, { unique: true })
                let indexes: Vec<(Vec<String>, bool, u32)> = self.res.modules[m]
                    .functions
                    .iter()
                    .flat_map(|g| g.calls.iter())
                    .filter(|c| c.path == ["index"] && &c.root == schema)
                    .filter(|c| truthy(c.args.get(1).and_then(|o| field(o, "unique"))))
                    .map(|c| {
                        (
                            strings(&c.args[0]),
                            c.args
                                .get(1)
                                .and_then(|o| field(o, "partialFilterExpression"))
                                .is_some(),
                            c.line,
                        )
                    })
                    .collect();
                for (cols, partial, line) in indexes {
                    self.push(
                        name,
                        vec![],
                        cols,
                        (false, partial),
                        "mongoose",
                        self.site(m, line),
                    );
                }
            }
            // @nestjs/mongoose: `IntegrationSchema.index({ formId: 1, appId: 1 }, { unique: true
            // })` on `SchemaFactory.createForClass(IntegrationModel)`.
            "index"
                if truthy(cs.args.get(1).and_then(|o| field(o, "unique")))
                    && matches!(cs.args.first(), Some(Val::Obj(_))) =>
            {
                let Val::Call(callee, args) = &cs.root else {
                    return;
                };
                if !matches!(callee.as_ref(), Val::Member(_, n) if n == "createForClass") {
                    return;
                }
                if let Some(name) = args.first().and_then(|a| self.model_name(m, a)) {
                    self.push_index(&name, cs, "mongoose", at);
                }
            }
            // The MongoDB driver: `db.collection('connections').createIndex({ key: 1 }, { unique:
            // true })`, on a local or a helper's collection too.
            "createIndex"
                if truthy(cs.args.get(1).and_then(|o| field(o, "unique")))
                    && matches!(cs.args.first(), Some(Val::Obj(_))) =>
            {
                let module = &self.res.modules[m];
                let named = module
                    .functions
                    .iter()
                    .flat_map(|g| g.calls.iter())
                    .find(|c| {
                        c.group == cs.group && c.path.last().is_some_and(|p| p == "collection")
                    })
                    .and_then(|c| c.args.first()?.as_str().map(str::to_string));
                if let Some(name) = named.or_else(|| self.res.collection_name(m, &cs.root, 0)) {
                    self.push_index(&name, cs, "mongodb", at);
                }
            }
            // sequelize.define('User', attrs, { indexes }) / queryInterface.createTable('users', attrs)
            "define" | "createTable"
                if matches!(cs.args.first(), Some(Val::Str(_)))
                    && matches!(cs.args.get(1), Some(Val::Obj(_))) =>
            {
                let Some(Val::Str(name)) = cs.args.first() else {
                    return;
                };
                let source = if last == "define" {
                    "sequelize"
                } else {
                    "sequelize-migration"
                };
                self.sequelize_attrs(name, vec![], &cs.args[1], cs.args.get(2), source, at);
            }
            // User.init(attrs, { sequelize, tableName, modelName, indexes }); `super.init(..)`
            // in the model class's own `static init(sequelize)`.
            "init"
                if cs.path.len() == 1
                    && matches!(cs.args.first(), Some(Val::Obj(_)))
                    && cs.args.get(1).and_then(|o| field(o, "sequelize")).is_some() =>
            {
                let aliases: Vec<String> = ["tableName", "modelName"]
                    .iter()
                    .filter_map(|k| cs.args.get(1).and_then(|o| field(o, k)))
                    .flat_map(strings)
                    .collect();
                let name = if cs.root_name == "super" && !self.class_name.is_empty() {
                    self.class_name.clone()
                } else {
                    cs.root_name.clone()
                };
                let aliases: Vec<String> = aliases.into_iter().filter(|a| *a != name).collect();
                self.sequelize_attrs(&name, aliases, &cs.args[0], cs.args.get(1), "sequelize", at);
            }
            // book.belongsToMany(collection, { through: CollectionBook }): Sequelize gives the
            // through table a unique key on its two foreign keys (`bookId`, `collectionId`, or
            // the `foreignKey` / `otherKey` given) unless `through: { unique: false }`.
            "belongsToMany" if cs.args.len() >= 2 => {
                let opts = &cs.args[1];
                let through = field(opts, "through");
                let (through, unique) = match through {
                    Some(t @ Val::Obj(_)) => (field(t, "model").cloned(), field(t, "unique")),
                    Some(t) => (Some(t.clone()), None),
                    None => return,
                };
                if matches!(unique, Some(Val::Bool(false))) {
                    return;
                }
                let Some(through) = through.and_then(|t| self.model_name(m, &t)) else {
                    return;
                };
                let source = match cs.path.len() {
                    0 | 1 => cs.root_name.clone(),
                    n => cs.path[n - 2].clone(),
                };
                let Some(target) = self.model_name(m, &cs.args[0]) else {
                    return;
                };
                let key = |option: &str, model: &str| -> String {
                    match field(opts, option) {
                        Some(Val::Str(k)) => k.clone(),
                        Some(o @ Val::Obj(_)) => match field(o, "name") {
                            Some(Val::Str(k)) => k.clone(),
                            _ => format!("{model}Id"),
                        },
                        _ => format!("{model}Id"),
                    }
                };
                let cols = vec![key("foreignKey", &source), key("otherKey", &target)];
                if !source.is_empty() {
                    self.push(&through, vec![], cols, (false, false), "sequelize", at);
                }
            }
            // queryInterface.addIndex('t', ['a'], { unique: true }) / addConstraint('t', { fields, type: 'unique' })
            "addIndex" | "addConstraint" if matches!(cs.args.first(), Some(Val::Str(_))) => {
                let Some(Val::Str(table)) = cs.args.first() else {
                    return;
                };
                let (cols, opts) = match cs.args.get(1) {
                    Some(a @ Val::Arr(_)) => {
                        (strings(a), cs.args.get(2).cloned().unwrap_or(Val::Unknown))
                    }
                    Some(o @ Val::Obj(_)) => (
                        field(o, "fields").map(strings).unwrap_or_default(),
                        o.clone(),
                    ),
                    _ => return,
                };
                let unique = truthy(field(&opts, "unique"))
                    || matches!(field(&opts, "type"), Some(Val::Str(t)) if t.eq_ignore_ascii_case("unique") || t.eq_ignore_ascii_case("primary key"));
                if unique {
                    let partial = field(&opts, "where").is_some();
                    self.push(
                        table,
                        vec![],
                        cols,
                        (false, partial),
                        "sequelize-migration",
                        at,
                    );
                }
            }
            // pgTable('users', { email: text('email').unique() }, (t) => [uniqueIndex('x').on(t.a)])
            "pgTable" | "mysqlTable" | "sqliteTable"
                if self.origin_is(m, &cs.root, &["drizzle-orm"]) || cs.path.len() == 1 =>
            {
                let (Some(Val::Str(table)), Some(Val::Obj(cols))) =
                    (cs.args.first(), cs.args.get(1))
                else {
                    return;
                };
                for (key, col) in cols {
                    let (names, name) = builder_chain(col);
                    if names.iter().any(|n| n == "unique" || n == "primaryKey") {
                        let generated = names.iter().any(|n| {
                            matches!(
                                n.as_str(),
                                "serial"
                                    | "bigserial"
                                    | "smallserial"
                                    | "defaultRandom"
                                    | "$defaultFn"
                                    | "generatedAlwaysAsIdentity"
                                    | "generatedByDefaultAsIdentity"
                                    | "autoincrement"
                            )
                        }) || (names.iter().any(|n| n == "integer")
                            && names.iter().any(|n| n == "primaryKey"));
                        let column = name.unwrap_or_else(|| key.clone());
                        self.push(
                            table,
                            vec![key.clone()],
                            vec![column],
                            (generated, false),
                            "drizzle",
                            at.clone(),
                        );
                    }
                }
                if let Some(Val::Func(cb)) = cs.args.get(2) {
                    let returns = self.res.modules[m].functions[*cb].returns.clone();
                    for r in returns {
                        let items: Vec<Val> = match r {
                            Val::Arr(items) => items,
                            Val::Obj(fields) => fields.into_iter().map(|(_, v)| v).collect(),
                            _ => vec![],
                        };
                        for item in items {
                            let (names, _) = builder_chain(&item);
                            if !names.iter().any(|n| {
                                matches!(n.as_str(), "uniqueIndex" | "unique" | "primaryKey")
                            }) {
                                continue;
                            }
                            let cols = on_columns(&item);
                            let partial = names.iter().any(|n| n == "where");
                            self.push(table, vec![], cols, (false, partial), "drizzle", at.clone());
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn sequelize_attrs(
        &mut self,
        model: &str,
        aliases: Vec<String>,
        attrs: &Val,
        opts: Option<&Val>,
        source: &'static str,
        at: Location,
    ) {
        if let Val::Obj(defs) = attrs {
            for (col, def) in defs {
                let defaulted = field(def, "defaultValue")
                    .is_some_and(|d| matches!(d, Val::Member(_, n) if n.starts_with("UUIDV")));
                let generated = truthy(field(def, "autoIncrement")) || defaulted;
                let unique = truthy(field(def, "unique"))
                    || truthy(field(def, "primaryKey"))
                    || matches!(field(def, "unique"), Some(Val::Str(_)));
                if unique
                    && self.push(
                        model,
                        aliases.clone(),
                        vec![col.clone()],
                        (generated, false),
                        source,
                        at.clone(),
                    )
                {
                    self.defaulted(defaulted && !truthy(field(def, "autoIncrement")));
                }
            }
        }
        if let Some(Val::Arr(indexes)) = opts.and_then(|o| field(o, "indexes")) {
            for idx in indexes {
                if truthy(field(idx, "unique")) {
                    let cols = field(idx, "fields").map(strings).unwrap_or_default();
                    self.push(
                        model,
                        aliases.clone(),
                        cols,
                        (false, field(idx, "where").is_some()),
                        source,
                        at.clone(),
                    );
                }
            }
        }
    }

    /// knex: `knex.schema.createTable('users', (t) => { t.string('email').unique(); t.unique(['a', 'b']) })`.
    fn knex_table(&mut self, m: ModId, cs: &CallSite) {
        if !matches!(
            cs.path.last().map(String::as_str),
            Some("createTable" | "table" | "alterTable")
        ) || !cs.path.iter().any(|p| p == "schema")
        {
            return;
        }
        let (Some(Val::Str(table)), Some(Val::Func(cb))) = (cs.args.first(), cs.args.get(1)) else {
            return;
        };
        let facts = &self.res.modules[m].functions[*cb];
        // In order: additions, and drops of earlier migrations' constraints.
        let mut ops: Vec<KnexOp> = Vec::new();
        for c in &facts.calls {
            let last = c.path.last().map(String::as_str);
            if !matches!(c.root, Val::Param(f, 0) if f == *cb)
                || !matches!(
                    last,
                    Some("unique" | "primary" | "dropUnique" | "dropPrimary")
                )
            {
                continue;
            }
            let cols = match c.args.first() {
                Some(a @ (Val::Arr(_) | Val::Str(_))) => strings(a),
                _ => facts
                    .calls
                    .iter()
                    .find(|inner| inner.group == c.group && inner.path.len() == 1)
                    .and_then(|inner| inner.args.first())
                    .map(strings)
                    .unwrap_or_default(),
            };
            let generated = c
                .path
                .first()
                .is_some_and(|p| p == "increments" || p == "bigIncrements");
            let partial = c.args.get(1).and_then(|o| field(o, "predicate")).is_some();
            let add = matches!(last, Some("unique" | "primary"));
            ops.push((add, cols, (generated, partial), c.line));
        }
        for (add, cols, flags, line) in ops {
            if add {
                self.push(table, vec![], cols, flags, "knex", self.site(m, line));
            } else {
                let key = model_key(table);
                self.out.retain(|u| {
                    !(u.source == "knex" && model_key(&u.model) == key && u.columns == cols)
                });
            }
        }
    }

    /// Kysely's schema builder, one chain a statement:
    /// `db.schema.createTable('users').addColumn('email', 'varchar', (col) => col.unique())
    /// .addUniqueConstraint('users_ws_email', ['workspace_id', 'email'])`,
    /// `.addPrimaryKeyConstraint('members_pkey', ['space_id', 'user_id'])` (or `alterTable`), and
    /// `db.schema.createIndex('i').on('users').columns(['a', 'b']).unique()`. Read at the chain's
    /// last call, which sees every link of its group.
    fn kysely_chain(&mut self, m: ModId, calls: &[CallSite], cs: &CallSite) {
        let Some(i) = cs.path.iter().position(|p| p == "schema") else {
            return;
        };
        let links = &cs.path[i + 1..];
        let Some(first) = links.first().map(String::as_str) else {
            return;
        };
        // only the whole chain: no longer call of the same group
        if calls
            .iter()
            .any(|c| c.group == cs.group && c.path.len() > cs.path.len())
        {
            return;
        }
        // each link's own call: (its name, its arguments, its line)
        let link = |name: &str| -> Vec<&CallSite> {
            calls
                .iter()
                .filter(|c| {
                    c.group == cs.group
                        && c.path.len() > i + 1
                        && c.path.last().is_some_and(|l| l == name)
                        && c.path[..c.path.len() - 1]
                            .iter()
                            .zip(cs.path.iter())
                            .all(|(a, b)| a == b)
                })
                .collect()
        };
        let str_arg = |c: &CallSite, k: usize| match c.args.get(k) {
            Some(Val::Str(s)) => Some(s.clone()),
            _ => None,
        };
        match first {
            "createTable" | "alterTable" => {
                let Some(table) = link(first).first().and_then(|c| str_arg(c, 0)) else {
                    return;
                };
                for c in link("addUniqueConstraint")
                    .into_iter()
                    .chain(link("addPrimaryKeyConstraint"))
                {
                    let cols = c.args.get(1).map(strings).unwrap_or_default();
                    self.push(
                        &table,
                        vec![],
                        cols,
                        (false, false),
                        "kysely",
                        self.site(m, c.line),
                    );
                }
                for c in link("addColumn") {
                    let (Some(col), Some(Val::Func(cb))) = (str_arg(c, 0), c.args.get(2)) else {
                        continue;
                    };
                    let facts = &self.res.modules[m].functions[*cb];
                    let on_col: Vec<&str> = facts
                        .calls
                        .iter()
                        .filter(|x| matches!(x.root, Val::Param(f, 0) if f == *cb))
                        .filter_map(|x| x.path.last().map(String::as_str))
                        .collect();
                    let primary = on_col.contains(&"primaryKey");
                    if !primary && !on_col.contains(&"unique") {
                        continue;
                    }
                    // a key the database makes per row is never met by a repeat
                    let generated = primary
                        && (on_col.iter().any(|l| {
                            matches!(
                                *l,
                                "defaultTo"
                                    | "autoIncrement"
                                    | "generatedAlwaysAsIdentity"
                                    | "generatedByDefaultAsIdentity"
                            )
                        }) || str_arg(c, 1).is_some_and(|t| t.ends_with("serial")));
                    self.push(
                        &table,
                        vec![],
                        vec![col],
                        (generated, false),
                        "kysely",
                        self.site(m, c.line),
                    );
                }
            }
            "createIndex" if !link("unique").is_empty() => {
                let Some(table) = link("on").first().and_then(|c| str_arg(c, 0)) else {
                    return;
                };
                let mut cols = Vec::new();
                for c in link("column").into_iter().chain(link("columns")) {
                    cols.extend(c.args.first().map(strings).unwrap_or_default());
                }
                let partial = !link("where").is_empty();
                self.push(
                    &table,
                    vec![],
                    cols,
                    (false, partial),
                    "kysely",
                    self.site(m, cs.line),
                );
            }
            _ => {}
        }
    }

    /// TypeORM entities and sequelize-typescript models, from their decorators.
    fn class(
        &mut self,
        m: ModId,
        name: &str,
        decorators: &[DecoratorFacts],
        fields: &[(String, DecoratorFacts, ModId)],
    ) {
        let entity = decorators
            .iter()
            .find(|d| matches!(d.name.as_str(), "Entity" | "Table" | "Schema"));
        let Some(entity) = entity else { return };
        let source = match entity.name.as_str() {
            "Entity"
                if matches!(&entity.callee, Val::Import { spec, .. }
                    if spec.starts_with("@mikro-orm/")) =>
            {
                "mikro-orm"
            }
            "Entity" => "typeorm",
            // @nestjs/mongoose: `@Schema() class User { @Prop({ unique: true }) email }`
            "Schema" => "mongoose",
            _ => "sequelize",
        };
        let aliases: Vec<String> = match entity.args.first() {
            Some(Val::Str(s)) => vec![s.clone()],
            Some(o @ Val::Obj(_)) => field(o, "name")
                .or_else(|| field(o, "tableName"))
                .map(strings)
                .unwrap_or_default(),
            _ => vec![],
        };
        for d in decorators {
            let unique = match d.name.as_str() {
                "Unique" => true,
                "Index" => truthy(
                    d.args
                        .iter()
                        .find(|a| matches!(a, Val::Obj(_)))
                        .and_then(|o| field(o, "unique")),
                ),
                _ => false,
            };
            if unique {
                // (MikroORM names them in its options: `@Unique({ properties: ['orgId', 'key']
                // })`, https://mikro-orm.io/docs/defining-entities#indexes)
                let cols = d
                    .args
                    .iter()
                    .find(|a| matches!(a, Val::Arr(_)))
                    .or_else(|| {
                        d.args
                            .iter()
                            .find(|a| matches!(a, Val::Obj(_)))
                            .and_then(|o| field(o, "properties"))
                    })
                    .map(strings)
                    .unwrap_or_default();
                self.push(
                    name,
                    aliases.clone(),
                    cols,
                    (false, false),
                    source,
                    self.site(m, d.line),
                );
            }
        }
        // Each decorator with the module declaring it (a base class's, for an inherited column).
        let mut by_field: BTreeMap<&str, Vec<&DecoratorFacts>> = BTreeMap::new();
        let mut declared_in: BTreeMap<&str, ModId> = BTreeMap::new();
        for (f, d, fm) in fields {
            by_field.entry(f.as_str()).or_default().push(d);
            declared_in.insert(f.as_str(), *fm);
        }
        for (f, ds) in by_field {
            let opts = |d: &DecoratorFacts| {
                d.args
                    .iter()
                    .find(|a| matches!(a, Val::Obj(_)))
                    .cloned()
                    .unwrap_or(Val::Unknown)
            };
            // TypeORM's `@PrimaryGeneratedColumn('uuid')` makes a uuid when the entity has none
            // and keeps the one it is given: a default, as Sequelize's `UUIDV4` is.
            let uuid_key = |d: &DecoratorFacts| {
                d.name == "PrimaryGeneratedColumn"
                    && matches!(d.args.first(), Some(Val::Str(s)) if s == "uuid")
            };
            let sequenced = ds.iter().any(|d| {
                !uuid_key(d)
                    && matches!(
                        d.name.as_str(),
                        "PrimaryGeneratedColumn"
                            | "AutoIncrement"
                            | "CreateDateColumn"
                            | "Generated"
                    )
            });
            let defaulted = ds.iter().any(|d| {
                uuid_key(d)
                    || d.name == "Default"
                        && matches!(d.args.first(), Some(Val::Member(_, n)) if n.starts_with("UUIDV"))
            });
            let generated = sequenced || defaulted;
            // TypeORM's owning side of a one-to-one (`@OneToOne(() => Project) @JoinColumn()
            // project`) keeps its foreign key unique: one row per project
            // (https://typeorm.io/docs/relations/one-to-one-relations).
            let one_to_one = source == "typeorm"
                && ["OneToOne", "JoinColumn"]
                    .iter()
                    .all(|n| ds.iter().any(|d| d.name == *n));
            for d in &ds {
                let unique = match d.name.as_str() {
                    "PrimaryColumn" | "PrimaryGeneratedColumn" | "PrimaryKey" | "Unique" => true,
                    "JoinColumn" => one_to_one,
                    // (MikroORM's `@Property({ unique: true })`)
                    "Column" | "Index" | "Prop" | "Property" => {
                        truthy(field(&opts(d), "unique")) || truthy(field(&opts(d), "primary"))
                    }
                    _ => false,
                };
                if unique {
                    if self.push(
                        name,
                        aliases.clone(),
                        vec![f.to_string()],
                        (generated, false),
                        source,
                        self.site(declared_in.get(f).copied().unwrap_or(m), d.line),
                    ) {
                        self.defaulted(defaulted && !sequenced);
                    }
                    break;
                }
            }
        }
    }
}

/// A model class's property decorators with those of the project classes it extends (an
/// `IdModel` base declaring `@PrimaryKey @Default(DataType.UUIDV4) id` for every model).
fn inherited_fields(
    res: &Resolver,
    m: ModId,
    class: &crate::program::ClassFacts,
) -> Vec<(String, DecoratorFacts, ModId)> {
    let mut out: Vec<_> = class
        .field_decorators
        .iter()
        .map(|(f, d)| (f.clone(), d.clone(), m))
        .collect();
    let mut cur = (m, class.extends.clone());
    for _ in 0..8 {
        let Some(ext) = cur.1 else { break };
        let crate::link::resolve::Resolved::Class(m2, c2) = res.resolve(cur.0, &ext) else {
            break;
        };
        let base = &res.modules[m2].classes[c2];
        for (f, d) in &base.field_decorators {
            // A subclass redeclaring the property decides.
            if !class.field_decorators.iter().any(|(g, _)| g == f) {
                out.push((f.clone(), d.clone(), m2));
            }
        }
        cur = (m2, base.extends.clone());
    }
    out
}

/// The columns of `.on(t.a, t.b)`.
fn on_columns(v: &Val) -> Vec<String> {
    // `t.name`, or `t.name.asc().nullsLast().op("text_ops")` in a `.using("btree", ..)` list.
    fn column(a: &Val) -> Option<String> {
        match a {
            Val::Member(inner, c) => match inner.as_ref() {
                Val::Member(..) => column(inner),
                _ => Some(c.clone()),
            },
            Val::Call(callee, _) => match callee.as_ref() {
                Val::Member(inner, _) => column(inner),
                _ => None,
            },
            _ => None,
        }
    }
    let mut cur = v;
    while let Val::Call(callee, args) = cur {
        if let Val::Member(inner, p) = callee.as_ref() {
            if p == "on" || p == "using" {
                return args.iter().filter_map(column).collect();
            }
            cur = inner;
        } else {
            break;
        }
    }
    vec![]
}

/// Every unique constraint the TypeScript/JavaScript models and migrations declare.
/// The constraints the ORM models of the modules declare, and the schema statements their code
/// runs as strings (read with the SQL migrations, see `frontend::schema`).
pub fn from_modules(res: &Resolver) -> (Vec<UniqueConstraint>, Vec<SchemaSql>) {
    let mut c = Collector {
        class_name: String::new(),
        res,
        out: Vec::new(),
        sql: Vec::new(),
    };
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        collect_module(&mut c, m, module);
    }
    (c.out, c.sql)
}

fn collect_module(c: &mut Collector, m: ModId, module: &Module) {
    // A migration's `down` undoes its `up`: only `up` says what the schema becomes.
    // (a class's method is named `Class.method`: `CreateUsers1700000000000.down`), and the
    // functions nested in it (`queryRunner.manager.transaction(async (m) => ..)`)
    let mut undoing: Vec<FnId> = (0..module.functions.len())
        .filter(|&f| crate::sql::undoes_migration(&module.functions[f].name))
        .collect();
    let mut seen = std::collections::HashSet::new();
    while let Some(f) = undoing.pop() {
        if seen.insert(f) {
            undoing.extend(module.functions[f].children.iter().copied());
        }
    }
    for (_, facts) in module
        .functions
        .iter()
        .enumerate()
        .filter(|(f, _)| !seen.contains(f))
    {
        // `super.init(attrs, { sequelize })` in a model class's `static init`: that class's.
        c.class_name = facts
            .class
            .map(|k| module.classes[k].name.clone())
            .unwrap_or_default();
        for cs in &facts.calls {
            c.call(m, cs);
            c.knex_table(m, cs);
            c.kysely_chain(m, &facts.calls, cs);
        }
    }
    for class in &module.classes {
        let fields = inherited_fields(c.res, m, class);
        c.class(m, &class.name, &class.decorators, &fields);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Effect, Location};

    fn constraint(model: &str, columns: &[&str]) -> UniqueConstraint {
        UniqueConstraint {
            defaulted: false,
            model: model.into(),
            aliases: vec![],
            columns: columns.iter().map(|c| c.to_string()).collect(),
            partial: false,
            generated: false,
            source: "prisma",
            location: Location::new("schema.prisma", 4),
        }
    }

    fn create(target: &str, keys: Option<&[&str]>, upsert: bool) -> Effect {
        Effect {
            kind: EffectKind::DbCreate,
            target: Some(target.into()),
            data_keys: keys.map(|k| k.iter().map(|s| s.to_string()).collect()),
            upsert,
            ..Effect::default()
        }
    }

    fn linked(effects: Vec<Effect>, constraints: &[UniqueConstraint]) -> Endpoint {
        let mut eps = vec![Endpoint {
            method: "POST".into(),
            side_effects: effects,
            ..Endpoint::default()
        }];
        apply(&mut eps, constraints);
        eps.remove(0)
    }

    #[test]
    fn a_caller_keyed_constraint_protects_the_create() {
        let c = [constraint("User", &["email"])];
        let ep = linked(vec![create("user", Some(&["email", "name"]), false)], &c);
        assert!(ep.side_effects[0].constraint.is_some());
        assert!(ep.has_mechanism(MechanismKind::UniqueConstraint));
        // The column is not among the written keys (generated, or not written): no protection.
        let ep = linked(vec![create("user", Some(&["name"]), false)], &c);
        assert!(ep.side_effects[0].constraint.is_none());
        // Relation keys supply their `…Id` column.
        let ep = linked(
            vec![create("follow", Some(&["follower", "followingId"]), false)],
            &[constraint("Follow", &["followerId", "followingId"])],
        );
        assert!(ep.side_effects[0].constraint.is_some());
    }

    #[test]
    fn a_defaulted_key_protects_only_when_the_request_supplies_it() {
        // `@PrimaryKey @Default(DataType.UUIDV4) id` on the model, `PRIMARY KEY (id)` in a migration.
        let mut model = constraint("Pin", &["id"]);
        model.generated = true;
        model.defaulted = true;
        let migration = constraint("pins", &["id"]);
        let c = [model, migration];
        let mut from_request = create("pin", Some(&["id", "title"]), false);
        from_request.request_keys = vec!["id".into()];
        let ep = linked(vec![from_request], &c);
        assert!(ep.has_mechanism(MechanismKind::UniqueConstraint));
        // The same key made inside the server (or left to the default): no protection.
        let ep = linked(vec![create("pin", Some(&["id", "title"]), false)], &c);
        assert!(ep.side_effects[0].constraint.is_none());
        // A key generated by a sequence stays unusable whatever the request says.
        let mut serial = constraint("Pin", &["id"]);
        serial.generated = true;
        let mut from_request = create("pin", Some(&["id"]), false);
        from_request.request_keys = vec!["id".into()];
        let ep = linked(vec![from_request], &[serial, constraint("pins", &["id"])]);
        assert!(ep.side_effects[0].constraint.is_none());
    }

    #[test]
    fn an_upsert_names_its_constraint_only_when_the_endpoint_is_safe() {
        let c = [constraint("Subscription", &["userId"])];
        let ep = linked(vec![create("subscription", None, true)], &c);
        assert!(ep.has_mechanism(MechanismKind::UniqueConstraint));
        let ep = linked(
            vec![
                create("subscription", None, true),
                create("link", None, false),
            ],
            &c,
        );
        assert!(!ep.has_mechanism(MechanismKind::UniqueConstraint));
    }
}
