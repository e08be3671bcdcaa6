//! The program model the linker reads: per file, a summary of its functions (their calls with
//! arguments as abstract values), classes, routers and exports, with every reference to another
//! file left symbolic for the linker to resolve. The TypeScript/JavaScript front end lowers into
//! it; the Rust front end does not yet (it still follows its own calls, see ARCHITECTURE.md).
//! Depends on `facts` only.

mod values;

pub use values::*;

/// Index of a function in its module. 0 is the module's top level.
pub type FnId = usize;
pub type ClassId = usize;
pub type RouterId = usize;

/// An abstract value: what an expression evaluates to, as far as one file can tell.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Unknown,
    Str(String),
    Arr(Vec<Val>),
    Obj(Vec<(String, Val)>),
    Func(FnId),
    Class(ClassId),
    Instance(ClassId),
    Router(RouterId),
    /// `router.route(path)`: the paths of the chain and the router it belongs to.
    RouteChain(RouterId, std::sync::Arc<Val>),
    /// A binding imported from `spec`; `name` None is the whole module (require, `import * as`).
    Import {
        spec: String,
        name: Option<String>,
    },
    Member(std::sync::Arc<Val>, String),
    /// The result of calling something this file cannot see into.
    Call(std::sync::Arc<Val>, Vec<Val>),
    /// `new X(...)`; the line finds the call (and its arguments) among the module's calls.
    New(std::sync::Arc<Val>, u32),
    Bool(bool),
    /// A TypeScript type annotation naming a class: an instance of it.
    TypeRef(std::sync::Arc<Val>),
    /// An unbound identifier (`fetch`, `process`).
    Global(String),
    /// The `index`-th parameter of function `FnId`.
    Param(FnId, usize),
    This(Option<ClassId>),
    /// A string built from pieces not all known (a template literal, `a + b`): the pieces in
    /// order, literal text as [`Val::Str`].
    Template(Vec<Val>),
    /// `process.env.X || '/api'` (or `??`): a value the environment may set, with the code's own
    /// default. `var` is the read as written (`process.env.API_PREFIX`).
    EnvDefault {
        var: String,
        value: std::sync::Arc<Val>,
    },
    /// An element of an iterable this file cannot enumerate (`for (const r of routes)` with
    /// `routes` imported): the linker reads the iterable.
    Element(std::sync::Arc<Val>),
}

/// The most nodes a value built by the evaluator keeps (an object or array literal, a function's
/// return): past it, its deepest levels are cut (see [`Val::pruned`]). Values nest each other's
/// copies, so without a bound a file of builders that pass their results on (`buildPrice({
/// product, entitlement })`, then `buildCustomerPrice({ price, product })`, …) grows its values
/// exponentially in the length of the chain.
pub const MAX_VAL_NODES: usize = 16_384;

impl Val {
    /// Calls `f` on each value directly inside this one until `f` returns true; true if it did.
    fn any_child<'v>(&'v self, mut f: impl FnMut(&'v Val) -> bool) -> bool {
        match self {
            Val::Obj(fields) => fields.iter().any(|(_, v)| f(v)),
            Val::Arr(xs) | Val::Template(xs) => xs.iter().any(f),
            Val::Call(c, xs) => f(c) || xs.iter().any(f),
            Val::Member(b, _)
            | Val::Element(b)
            | Val::TypeRef(b)
            | Val::RouteChain(_, b)
            | Val::New(b, _)
            | Val::EnvDefault { value: b, .. } => f(b),
            _ => false,
        }
    }

    /// The values directly inside this one.
    fn children(&self) -> Vec<&Val> {
        let mut out = Vec::new();
        self.any_child(|v| {
            out.push(v);
            false
        });
        out
    }

    /// The value with at most `max` nodes: itself when it is that small, otherwise the levels
    /// nearest its root that fit, each value below them unknown. What a value says about routes
    /// and calls (its shape, its functions, its first levels) sits near the root; what grows
    /// without bound is data nested in data.
    pub fn pruned(&self, max: usize) -> Val {
        if !self.larger_than(max) {
            return self.clone();
        }
        // Nodes per depth, counted breadth first until `max` is passed.
        let mut total = 0;
        let mut level = vec![self];
        let mut depth: usize = 0;
        while !level.is_empty() {
            total += level.len();
            if total > max {
                return self.cut(depth.saturating_sub(1));
            }
            level = level.iter().flat_map(|v| v.children()).collect();
            depth += 1;
        }
        self.clone()
    }

    /// Has the value more than `max` nodes? Counts no further than that.
    fn larger_than(&self, max: usize) -> bool {
        fn count(v: &Val, left: &mut usize) -> bool {
            if *left == 0 {
                return true;
            }
            *left -= 1;
            v.any_child(|x| count(x, left))
        }
        let mut left = max;
        count(self, &mut left)
    }

    /// The value down to `depth` levels below its root; what is deeper is unknown.
    fn cut(&self, depth: usize) -> Val {
        if depth == 0 && !self.children().is_empty() {
            return match self {
                Val::Obj(fields) => Val::Obj(
                    fields
                        .iter()
                        .map(|(k, _)| (k.clone(), Val::Unknown))
                        .collect(),
                ),
                _ => Val::Unknown,
            };
        }
        let sub = |v: &Val| v.cut(depth.saturating_sub(1));
        let arc = |v: &std::sync::Arc<Val>| std::sync::Arc::new(sub(v));
        match self {
            Val::Obj(fields) => Val::Obj(fields.iter().map(|(k, v)| (k.clone(), sub(v))).collect()),
            Val::Arr(xs) => Val::Arr(xs.iter().map(sub).collect()),
            Val::Template(xs) => Val::Template(xs.iter().map(sub).collect()),
            Val::Call(c, xs) => Val::Call(arc(c), xs.iter().map(sub).collect()),
            Val::Member(b, n) => Val::Member(arc(b), n.clone()),
            Val::Element(b) => Val::Element(arc(b)),
            Val::TypeRef(b) => Val::TypeRef(arc(b)),
            Val::RouteChain(r, b) => Val::RouteChain(*r, arc(b)),
            Val::New(b, line) => Val::New(arc(b), *line),
            Val::EnvDefault { var, value } => Val::EnvDefault {
                var: var.clone(),
                value: arc(value),
            },
            v => v.clone(),
        }
    }

    pub fn is_function_like(&self) -> bool {
        matches!(self, Val::Func(_))
    }

    /// The value, or the default of an environment read: what the code itself says.
    pub fn plain(&self) -> &Val {
        match self {
            Val::EnvDefault { value, .. } => value,
            v => v,
        }
    }

    /// The name a value goes by: the last member (`user` in `prisma.user`), an import, a global.
    pub fn name_it_goes_by(&self) -> Option<String> {
        match self {
            Val::Member(_, n) | Val::Global(n) => Some(n.clone()),
            Val::Import { name: Some(n), .. } => Some(n.clone()),
            _ => None,
        }
    }

    /// The string this value stands for: a literal, or an environment read's literal default.
    pub fn as_str(&self) -> Option<&str> {
        match self.plain() {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Calls on a string that keep what it stands for: a method or path as it is for matching
/// (`r.method.toLowerCase()`), the value a request sent as it is for a key
/// (`email.toLowerCase()`).
pub const STRING_IDENTITY: &[&str] = &["toLowerCase", "toUpperCase", "trim", "toString"];

/// How a front end names a guard on what a project function returned (`if (await
/// emailTaken(email)) throw ..`, `const row = await selectByEmail(c, email); if (row) ..`):
/// this prefix and the function's name. The linker reads it as a lookup of the tables that
/// function looks up when it writes nothing, and as no lookup otherwise.
pub const HELPER_GUARD: &str = "fn:";

/// An import specifier that names a package, not a file of the project (a relative or absolute
/// path, or the `@/` and `~/` aliases projects map to their sources).
pub fn is_package_spec(spec: &str) -> bool {
    !(spec.starts_with('.')
        || spec.starts_with('/')
        || spec.starts_with("@/")
        || spec.starts_with("~/"))
}

/// A package that Deno code imports by a URL or a registry prefix, named as Node code imports it:
/// `npm:stripe@17` → `stripe`, `npm:@supabase/supabase-js@2/dist` →
/// `@supabase/supabase-js/dist`, `jsr:@supabase/supabase-js@2` → `@supabase/supabase-js`,
/// `https://deno.land/x/hono@v4.0.0/mod.ts` and `https://esm.sh/stripe@14?target=deno` → the
/// package. JSR names whose npm package is named otherwise (`jsr:@hono/hono` is `hono`) are
/// mapped. Anything else (paths, bare names) is returned as it is.
pub fn package_spec(raw: &str) -> String {
    /// JSR packages published under another name on npm.
    const JSR_AS_NPM: &[(&str, &str)] = &[("@hono/hono", "hono")];
    // name[@version][/subpath]: the name (one segment, or two for a scope) and the subpath.
    fn split(rest: &str) -> Option<(String, &str)> {
        let n = if rest.starts_with('@') { 2 } else { 1 };
        let (name_ver, sub) = match rest.match_indices('/').nth(n - 1) {
            Some((end, _)) => rest.split_at(end),
            None => (rest, ""),
        };
        if name_ver.len() < 2 {
            return None;
        }
        // The version follows the last `@` that is not the scope's.
        let name = match name_ver[1..].find('@') {
            Some(at) => &name_ver[..at + 1],
            None => name_ver,
        };
        (!name.is_empty() && (n == 1 || name.contains('/'))).then(|| (name.to_string(), sub))
    }
    let strip_query = |s: &str| s.split(['?', '#']).next().unwrap_or("").to_string();
    let (rest, jsr, url) = if let Some(r) = raw.strip_prefix("npm:") {
        (r.trim_start_matches('/'), false, false)
    } else if let Some(r) = raw.strip_prefix("jsr:") {
        (r.trim_start_matches('/'), true, false)
    } else if let Some(r) = raw
        .strip_prefix("https://deno.land/x/")
        .or_else(|| raw.strip_prefix("https://esm.sh/"))
    {
        (r, false, true)
    } else {
        return raw.to_string();
    };
    let rest = strip_query(rest);
    let Some((mut name, sub)) = split(&rest) else {
        return raw.to_string();
    };
    if jsr && let Some((_, npm)) = JSR_AS_NPM.iter().find(|(j, _)| *j == name) {
        name = npm.to_string();
    }
    // A URL's file (`/mod.ts`, `/dist/index.js`) is the package's entry, not a subpath export.
    if url || sub.is_empty() {
        return name;
    }
    format!("{name}{sub}")
}

/// The callee of `a || b()` when `b()` makes a value per call (`body.id || uuidv4()`): a
/// `Val::Call` of [`Val::Global`] `EITHER` with `[a, b()]`. The linker reads it as `a` wherever a
/// value is resolved, and as fresh where a key's freshness is asked (a client that leaves the id
/// out gets a new one on every retry).
pub const EITHER: &str = "||";

/// `Val::Call` of [`Val::Global`] `WHEN` with `[Param(f, i), a, b]`: a value that is `a` when
/// parameter `i` of `f` is truthy and `b` otherwise (`param ? (route += '/:id') : null` in a
/// path helper `routerPath(path, param = true)`). The linker reads it where the function is
/// applied to arguments it can see (or the parameter's literal default); anywhere else it is a
/// value not known.
pub const WHEN: &str = "?:";

/// `Val::Call` of [`Val::Global`] `YIELDED` with `[x]`: `yield* x` in a generator. In an Effect
/// generator (effect.website) `yield* Tag` is the service a layer provides for that tag; the
/// linker reads it so, and as a value not known otherwise.
pub const YIELDED: &str = "yield*";

/// `Val::Call` of [`Val::Global`] `ARITH` with `[a, b]`: `a + b` or `a - b` on a field of a row the
/// code read (`wallet.balance + amount`), which a write of the same field makes relative (a
/// read-modify-write: a repeat adds again). Also a row's list grown (`[...row.tags, tag]`,
/// `row.tags.concat(tag)`: the list and what is added) and a row's flag turned over
/// (`!row.enabled`: the flag alone).
pub const ARITH: &str = "+-";

/// The value [`ARITH`] marks: made from `parts`, one of them a row's field.
pub fn arith(parts: Vec<Val>) -> Val {
    Val::Call(std::sync::Arc::new(Val::Global(ARITH.into())), parts)
}

/// What [`arith`] made: the parts it was made from.
pub fn arith_parts(v: &Val) -> Option<&[Val]> {
    match v {
        Val::Call(f, parts) if matches!(f.as_ref(), Val::Global(g) if g == ARITH) => Some(parts),
        _ => None,
    }
}

/// A field of a row a lookup returned (`wallet.balance` with `wallet` the result of
/// `findUnique`, `findOne`, `findById`, `first`, `getOne`, ..), not of any call's result
/// (`schema.parse(body).content` is the client's).
pub fn row_field(v: &Val) -> Option<&str> {
    match v {
        Val::Member(base, name) if loads_row(base) => Some(name),
        _ => None,
    }
}

/// The result of a call that loads rows (`findUnique`, `findOne`, `findById`, `first`,
/// `getOne`, `executeTakeFirst`, ..), or the first row of a Drizzle select
/// (`(await db.select().from(t).where(..).limit(1))[0]`).
pub fn loads_row(v: &Val) -> bool {
    if let Val::Member(rows, i) = v
        && i == "0"
        && drizzle_select_from(rows).is_some()
    {
        return true;
    }
    matches!(v, Val::Call(callee, _) if matches!(callee.as_ref(), Val::Member(_, method)
    if method.starts_with("find")
        || matches!(
            method.as_str(),
            "first" | "getOne" | "getOneOrFail" | "executeTakeFirst" | "executeTakeFirstOrThrow"
        )))
}

/// The table a Drizzle select chain reads: `db.select().from(users).where(..).limit(1)` →
/// `users` (the table as its value is named).
pub fn drizzle_select_from(v: &Val) -> Option<String> {
    let mut cur = v;
    let mut table = None;
    for _ in 0..16 {
        let Val::Call(callee, args) = cur else {
            return None;
        };
        let Val::Member(obj, method) = callee.as_ref() else {
            return None;
        };
        match method.as_str() {
            "from" => table = args.first().and_then(Val::name_it_goes_by),
            "select" | "selectDistinct" | "selectDistinctOn" => return table,
            _ => {}
        }
        cur = obj;
    }
    None
}

/// The key under which an object literal keeps a value it spreads that another module defines
/// (`{ ...PaymentsMod, ...userResolvers }`, imported): the linker reads the members the literal
/// does not write itself there.
pub const SPREAD: &str = "...";

/// The index [`CallSite::spread_args`] gives a value spread into the record of a create's `data`
/// (or an upsert's `create`) field, `prisma.user.create({ data: { ...input, role } })`, rather
/// than into an argument itself.
pub const RECORD_SPREAD: usize = usize::MAX;

/// The values an object literal spreads that the front end could not enumerate (`{ ...input }`
/// of a parameter, a member or a call's result), in order.
pub fn spread_values(fields: &[(String, Val)]) -> impl Iterator<Item = &Val> {
    fields
        .iter()
        .filter(|(k, v)| {
            k == SPREAD && matches!(v, Val::Param(..) | Val::Member(..) | Val::Call(..))
        })
        .map(|(_, v)| v)
}

/// Does `v` hold an object that keeps a [`SPREAD`]?
fn has_spread(v: &Val, depth: usize) -> bool {
    depth < 64
        && match v {
            Val::Obj(fields) => fields
                .iter()
                .any(|(k, x)| k == SPREAD || has_spread(x, depth + 1)),
            Val::Arr(xs) => xs.iter().any(|x| has_spread(x, depth + 1)),
            _ => false,
        }
}

fn strip(v: Val, depth: usize) -> Val {
    match v {
        Val::Obj(fields) if depth < 64 => Val::Obj(
            fields
                .into_iter()
                .filter(|(k, _)| k != SPREAD)
                .map(|(k, x)| (k, strip(x, depth + 1)))
                .collect(),
        ),
        Val::Arr(xs) if depth < 64 => {
            Val::Arr(xs.into_iter().map(|x| strip(x, depth + 1)).collect())
        }
        v => v,
    }
}

/// Is `value`, an argument as a value holds it (`Val::Call`'s), the argument `stripped` a call
/// site keeps (see [`call_args`])?
pub fn same_call_arg(stripped: &Val, value: &Val) -> bool {
    if has_spread(value, 0) {
        *stripped == strip(value.clone(), 0)
    } else {
        stripped == value
    }
}

/// A call's arguments as the linker reads them: object literals without what they spread (a
/// call's spread arguments are [`CallSite::spread_args`]; the record a call writes names only
/// the keys it writes itself).
pub fn call_args(args: Vec<Val>) -> Vec<Val> {
    if !args.iter().any(|a| has_spread(a, 0)) {
        return args;
    }
    args.into_iter().map(|a| strip(a, 0)).collect()
}

/// The links of a query builder's chain that name its table by a string: Knex's
/// `knex.insert(..).into('users')`, `knex.select(..).from('roles')`, `knex.table('users')`;
/// Supabase's `supabase.from('posts')`; Kysely's `db.insertInto('person')`, `.replaceInto(..)`,
/// `.updateTable(..)`, `.deleteFrom(..)`, `.selectFrom(..)`, `.mergeInto(..)`.
pub const TABLE_LINKS: &[&str] = &[
    "into",
    "from",
    "table",
    "insertInto",
    "replaceInto",
    "updateTable",
    "deleteFrom",
    "selectFrom",
    "mergeInto",
];

/// The table a query builder's chain names by a string: a link of [`TABLE_LINKS`]
/// (`db.selectFrom('person').where(..)`) or the call it starts from (`knex('users').where(..)`).
pub fn chain_table(v: &Val) -> Option<String> {
    let mut cur = v;
    for _ in 0..32 {
        let Val::Call(callee, args) = cur else {
            return None;
        };
        let named = match args.as_slice() {
            [Val::Str(t)] => Some(t),
            _ => None,
        };
        match callee.as_ref() {
            Val::Member(obj, link) => {
                if let Some(t) = named
                    && TABLE_LINKS.contains(&link.as_str())
                {
                    return Some(t.clone());
                }
                cur = obj;
            }
            Val::Call(..) => cur = callee,
            _ => return named.cloned(),
        }
    }
    None
}

/// Links of a query builder's chain that make it a write: a chain with one of them is no read.
const CHAIN_WRITES: &[&str] = &["insert", "upsert", "update", "delete", "del"];

/// A read through a query builder that names its table with `.from('t')` and then selects:
/// Supabase's (PostgREST's) `supabase.from('t').select(..).eq(..).single()` and Knex's
/// `knex.from('t').select(..).where(..)`, with no write link in the chain. The table, and
/// whether the chain answers one row (Supabase's `.single()`/`.maybeSingle()`, Knex's
/// `.first()`) rather than a list of rows: `Some(true)` for Knex's `.first()`, which answers the
/// row itself, `Some(false)` for Supabase's, which answers it in `data`, `None` for a list.
/// (<https://supabase.com/docs/reference/javascript/select>,
/// <https://knexjs.org/guide/query-builder.html#from>)
pub fn from_select_read(v: &Val) -> Option<(String, Option<bool>)> {
    let mut cur = v;
    let (mut table, mut selects, mut single) = (None, false, None);
    for _ in 0..32 {
        let Val::Call(callee, args) = cur else {
            break;
        };
        let Val::Member(obj, link) = callee.as_ref() else {
            break;
        };
        match link.as_str() {
            "from" => match args.as_slice() {
                [Val::Str(t)] => table = Some(t.clone()),
                _ => return None,
            },
            "select" => selects = true,
            "single" | "maybeSingle" => single = single.or(Some(false)),
            "first" => single = Some(true),
            l if CHAIN_WRITES.contains(&l) => return None,
            _ => {}
        }
        cur = obj;
    }
    table.filter(|_| selects).map(|t| (t, single))
}

/// Objection's query builder (`Person.query().where(..).first()`, `this.models.Person
/// .query(trx)`, `person.$query()`): the value `query()` or `$query()` is called on.
pub fn query_receiver(v: &Val) -> Option<&Val> {
    let mut cur = v;
    for _ in 0..32 {
        match cur {
            Val::Call(callee, _) => match callee.as_ref() {
                Val::Member(obj, link) if link == "query" || link == "$query" => return Some(obj),
                Val::Member(obj, _) => cur = obj,
                _ => return None,
            },
            Val::Member(obj, _) => cur = obj,
            _ => return None,
        }
    }
    None
}

/// A name TypeORM's entity manager goes by (`manager`, `queryRunner.manager`, `em`,
/// `entityManager`): its reads and writes take the entity class first (`manager.findOne(User,
/// { where })`, `manager.save(User, {..})`).
pub fn entity_manager_name(name: &str) -> bool {
    matches!(
        crate::facts::model_key(name).as_str(),
        "manager" | "entitymanager" | "em" | "transactionalentitymanager"
    )
}

/// The repository a TypeORM query builder was made from (`repo.createQueryBuilder('u')
/// .where(..)` → `repo`), or the entity it was given (`manager.createQueryBuilder(User, 'u')` →
/// `User`): what the builder's `getOne()` reads.
pub fn query_builder_base(v: &Val) -> Option<&Val> {
    let mut cur = v;
    for _ in 0..32 {
        match cur {
            Val::Call(callee, args) => match callee.as_ref() {
                Val::Member(obj, link) if link == "createQueryBuilder" => {
                    return Some(match args.first() {
                        Some(entity @ Val::Class(_)) => entity,
                        _ => obj,
                    });
                }
                Val::Member(obj, _) => cur = obj,
                _ => return None,
            },
            Val::Member(obj, _) => cur = obj,
            _ => return None,
        }
    }
    None
}

/// The text of a SQL statement given as a string or a template literal, the template's
/// interpolations as the placeholders `$1`, `$2`, .. in order.
pub fn sql_text(v: &Val) -> Option<String> {
    match v {
        Val::Str(s) => Some(s.clone()),
        Val::Template(pieces) => {
            let mut out = String::new();
            let mut bound = 0;
            for p in pieces {
                match p {
                    Val::Str(s) => out.push_str(s),
                    _ => {
                        bound += 1;
                        out.push_str(&format!("${bound}"));
                    }
                }
            }
            Some(out)
        }
        _ => None,
    }
}

/// The statement a prepared-statement call runs (better-sqlite3's `db.prepare(sql).run(..)`,
/// `.get(..)`, `.all(..)`): the `prepare(sql)` call, when `callee` is a method (one of
/// `methods`) of one.
pub fn prepared_statement<'v>(callee: &'v Val, methods: &[&str]) -> Option<&'v Val> {
    let Val::Member(on, m) = callee else {
        return None;
    };
    match on.as_ref() {
        p @ Val::Call(prepare, _)
            if methods.contains(&m.as_str())
                && matches!(prepare.as_ref(), Val::Member(_, n) if n == "prepare") =>
        {
            Some(p)
        }
        _ => None,
    }
}

/// Calls that give the repository of the entity they are passed (TypeORM, MikroORM).
pub const REPOSITORY_GETTERS: &[&str] = &[
    "getRepository",
    "getMongoRepository",
    "getTreeRepository",
    "getCustomRepository",
    "withRepository",
];

/// A test of a looked-up row's state, as `CallSite::state_guard` writes it: the model, the
/// field, the test and its line.
pub type StateTest = (String, String, String, u32);

/// One call in a function body, decomposed for sink matching and call following.
#[derive(Debug, Clone)]
pub struct CallSite {
    /// The value called (for following into project code).
    pub callee: Val,
    /// The chain's root value and name: `stripe` in `stripe.refunds.create`, the field in
    /// `this.mailer.send`, `knex` in `knex('t').insert()`.
    pub root: Val,
    pub root_name: String,
    /// Member names after the root, call hops dropped.
    pub path: Vec<String>,
    /// Indices of `path` after which the chain was called.
    pub hops: Vec<usize>,
    pub args: Vec<Val>,
    /// The first argument's text when it is a string or template literal (raw SQL).
    pub literal: Option<String>,
    pub is_new: bool,
    pub line: u32,
    /// The call as written, shortened, for reports.
    pub text: String,
    /// Inside a `try` (or followed by a `.catch`) whose handler names a unique-violation code.
    pub unique_caught: bool,
    /// Runs only on a failure path: in a `catch` clause, or in a `.catch(..)` handler (the
    /// second argument of `.then(..)`).
    pub on_failure: bool,
    /// Inside the body of a `try` that has a `catch`: a failure of the call may be swallowed
    /// there instead of failing the function. Not when the `catch` only throws again, or keeps
    /// the error for a `finally` that throws it.
    pub in_try: bool,
    /// Inside the body of a `try` whose `catch` neither throws nor returns: an error of the call
    /// is dropped there and the function goes on.
    pub swallowed: bool,
    /// Runs only after a claim succeeded (see `frontend::ts::claims`): what the claim is, and
    /// the line of the test that stops the other runs.
    pub claimed: Option<(&'static str, u32)>,
    /// Runs only when a lookup found nothing (`if (!existing) create(..)`, or after
    /// `if (existing) return ..`): the model that lookup read (`tag` for `prisma.tag.findFirst`).
    pub guarded: Option<String>,
    /// Runs only after a test of that lookup whose branch throws (`if (existing) throw ..`):
    /// the test's line. A repeat of the request, which finds the row, fails there.
    pub refused: Option<u32>,
    /// Runs only while a looked-up row is in some state (after `if (order.status !== 'pending')
    /// return`, inside `if (!user.verified) {..}`): the model, the field tested and the test's
    /// line. When the request itself changes that field, a retry takes the other branch.
    /// The test is written `RUNS:KIND[:LITERAL]`: `RUNS` is `t` or `f`, the value of the
    /// condition where the call runs (`T` or `F` when the condition joins the test with others
    /// by `&&`/`||`: the call needs more than this test); `KIND` is `truthy`, `falsy`, `eq` or `ne` (with the literal
    /// compared, `null` for `null`/`undefined`).
    /// Several when such tests are nested, outermost first. Boxed: most calls have none, and
    /// every call of every file is held at once.
    pub state_guard: Option<Box<[StateTest]>>,
    /// Runs only when a parameter of a function around it tests one way (inside `if
    /// (options?.upsert) {..}`, or after `if (!notify) return`): a caller's argument may turn
    /// the branch off (see [`ParamGate`]).
    pub param_gate: Option<Box<ParamGate>>,
    /// An argument is a spread the front end could not enumerate (`f(...args)`): the call's
    /// arguments past the ones shown are not known to be absent.
    pub open_args: bool,
    /// Runs only when a lookup found its row (`if (row) {..}`, or after `if (!row) return`):
    /// those rows.
    pub found: Vec<Found>,
    /// The blocks (`{ .. }`) the call sits in, outermost first, through the functions defined
    /// in them: a call whose blocks start with another's runs whenever that one does.
    /// Shared by the calls of one block.
    pub blocks: std::sync::Arc<[usize]>,
    /// Calls chained on one another share a group (the outermost call's node id).
    pub group: usize,
    /// The HTTP methods under which the call runs (inside `if (req.method === 'POST')`), if any.
    pub branch: Option<Vec<String>>,
    /// When the call's only argument is an object literal: its keys, dotted through nested object
    /// literals (`user.create`), each with its line (where a tRPC router registers a procedure).
    pub arg_keys: Vec<(String, u32)>,
    /// Object literal arguments that spread a value the front end cannot read (`pay({ lnd,
    /// ...options })`): the argument's index and the spread value (a parameter, usually), whose
    /// keys the caller's argument shows.
    pub spread_args: Box<[(usize, Val)]>,
    /// The call is made on a field of `this` that holds an ORM repository or model of one
    /// entity (`this.users.save(..)` with `@InjectRepository(User) users: Repository<User>`):
    /// that entity, which names what the call reads or writes.
    pub receiver_model: Option<String>,
    /// A `save` of a row (its receiver or an argument) whose list the code grew after reading it
    /// (`product.reviews.push(review); product.save()`, `issue.comments = [...issue.comments,
    /// comment]; repo.save(issue)`): a read-modify-write, which a repeat grows again; `true`
    /// when all it added are rows the code loaded (`term.labels.push(label)` with `label`
    /// found), which an ORM that keeps a relation as a join table (TypeORM) keeps once.
    pub saves_grown: Option<bool>,
}

/// A test of a parameter that decides whether a call runs: parameter `index` of function
/// `function` (or the member at `path` of it) must pass `test` (be truthy or falsy, or be one of
/// some string tags: `switch (command.type) { case 'pay': .. }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamGate {
    pub function: FnId,
    pub index: usize,
    pub path: Vec<String>,
    pub test: crate::facts::ParamTest,
    pub line: u32,
}

/// Where a function receives a router it registers on: parameter `index`, or a field of it
/// (`function setup({ server }) { server.post(..) }`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ParamSlot {
    pub index: usize,
    pub fields: Vec<String>,
}

/// The index of [`ParamSlot`] that stands for `this`: a registration on a router a field of the
/// instance holds (`this.app[options.method](options.path, ..)` in a method of a class whose
/// constructor made `this.app`), whose method, path or handler are the method's parameters. The
/// linker writes it at each call of the method, on the router of the instance it is called on.
pub const THIS_SLOT: usize = usize::MAX;

impl ParamSlot {
    pub fn at(index: usize) -> Self {
        ParamSlot {
            index,
            fields: Vec::new(),
        }
    }

    /// The router field `field` of `this`.
    pub fn this(field: &str) -> Self {
        ParamSlot {
            index: THIS_SLOT,
            fields: vec![field.to_string()],
        }
    }

    pub fn is_this(&self) -> bool {
        self.index == THIS_SLOT
    }
}

/// The index of [`Val::Param`] that counts the `k`-th argument from the end of a call (`k` ≥ 1):
/// `args[args.length - 1]` of a rest parameter `...args` is the call's last argument, whatever
/// their number.
pub const fn from_end(k: usize) -> usize {
    usize::MAX - (k - 1)
}

/// How many arguments from the end [`from_end`] counts at most.
pub const FROM_END_SPAN: usize = 8;

/// The argument a call passes for parameter index `i` ([`from_end`] indexes count from its last).
pub fn argument(args: &[Val], i: usize) -> Option<&Val> {
    let back = usize::MAX - i;
    if back < FROM_END_SPAN {
        args.len().checked_sub(back + 1).and_then(|j| args.get(j))
    } else {
        args.get(i)
    }
}

/// Does `v` name a parameter of function `f` (in a member, a call, a string built from pieces, an
/// array or an object literal)?
pub fn names_param_of(v: &Val, f: FnId) -> bool {
    match v {
        Val::Param(g, _) => *g == f,
        Val::Member(inner, _) | Val::Element(inner) | Val::TypeRef(inner) => {
            names_param_of(inner, f)
        }
        Val::Call(callee, args) => {
            names_param_of(callee, f) || args.iter().any(|a| names_param_of(a, f))
        }
        Val::Template(parts) | Val::Arr(parts) => parts.iter().any(|p| names_param_of(p, f)),
        Val::Obj(fields) => fields.iter().any(|(_, x)| names_param_of(x, f)),
        Val::EnvDefault { value, .. } => names_param_of(value, f),
        _ => false,
    }
}

/// A row a lookup found: the model it read and the lookup's value (`Unknown` when the lookup is
/// not bound to a name).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub model: String,
    pub row: Val,
}

#[derive(Debug, Clone)]
pub enum RouterItem {
    /// A route. `method` is a string (`"post"`, `"all"`) or an array of them, possibly symbolic
    /// (a zod-openapi route object defined in another file).
    Route {
        method: Val,
        paths: Val,
        path_text: String,
        middleware: Vec<Val>,
        handler: Val,
        line: u32,
        /// NestJS `@Version('2')`.
        version: Option<Val>,
        /// Set by the linker where a helper registers the route from a call's arguments
        /// (`createAction(router, 'post', '/orders', h)`): that call.
        written_at: Option<WrittenAt>,
    },
    /// Middleware and/or routers mounted under an optional prefix (`app.use`, `app.route`).
    Use {
        path: Option<Val>,
        path_text: String,
        args: Vec<Val>,
        line: u32,
    },
    /// A call of a route method the router's maker adds to it (`router.postAsync('/lists', h)`,
    /// see [`RouteHelper`]): the linker reads it as the route the method registers, once it
    /// knows the router (the maker may be in another file).
    HelperCall {
        name: String,
        args: Vec<Val>,
        path_text: String,
        line: u32,
        /// Set by the linker where a function makes the call from a caller's arguments
        /// (`installUploadHandler(router, '/files/:id')`): that call (see `Route`).
        written_at: Option<WrittenAt>,
    },
    /// Fastify `register(plugin, { prefix })`: the plugin's first parameter is a child context.
    Register {
        path: Option<Val>,
        path_text: String,
        plugin: Val,
        /// The options object given with the plugin (`{ prefix, trpcOptions }`).
        options: Option<Val>,
        line: u32,
    },
}

impl RouterItem {
    /// Does the registration take its method, path, handler, middleware or mounted values from a
    /// parameter of function `f`?
    pub fn names_param_of(&self, f: FnId) -> bool {
        match self {
            RouterItem::Route {
                method,
                paths,
                middleware,
                handler,
                ..
            } => {
                [method, paths, handler]
                    .iter()
                    .any(|v| names_param_of(v, f))
                    || middleware.iter().any(|v| names_param_of(v, f))
            }
            RouterItem::Use { path, args, .. } => {
                path.as_ref().is_some_and(|p| names_param_of(p, f))
                    || args.iter().any(|v| names_param_of(v, f))
            }
            RouterItem::Register { path, plugin, .. } => {
                path.as_ref().is_some_and(|p| names_param_of(p, f)) || names_param_of(plugin, f)
            }
            RouterItem::HelperCall { args, .. } => args.iter().any(|v| names_param_of(v, f)),
        }
    }

    /// A route as a registration writes it: no version, written where it is.
    pub fn route(
        method: Val,
        paths: Val,
        path_text: String,
        middleware: Vec<Val>,
        handler: Val,
        line: u32,
    ) -> RouterItem {
        RouterItem::Route {
            method,
            paths,
            path_text,
            middleware,
            handler,
            line,
            version: None,
            written_at: None,
        }
    }

    /// The route with a NestJS `@Version(..)`.
    pub fn with_version(mut self, v: Option<Val>) -> RouterItem {
        if let RouterItem::Route { version, .. } = &mut self {
            *version = v;
        }
        self
    }
}

/// The call that writes a route a helper registers: its module index and line, and the handler
/// it passes (read in that module).
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenAt {
    pub module: usize,
    pub line: u32,
    pub handler: Option<Val>,
    /// The route's method and path as the calls that made it give them, read in the module
    /// given first, when they still name a parameter of the function calling the helper
    /// (`loadMediaEndpoint(app, version)` in `loadAPI(app, version)`, itself called as
    /// `loadAPI(app, 'v1')` from another file): made at each call above, round by round.
    pub route: Option<(usize, Val, Val)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouterKind {
    App,
    Router,
    /// A NestJS `@Controller` class: a root whose prefix comes from the bootstrap file.
    NestController,
}

#[derive(Debug, Clone)]
pub struct RouterFacts {
    pub kind: RouterKind,
    pub framework: &'static str,
    /// What the code calls it: the name it is bound to (`adminRouter`, `this.app`), or the
    /// controller's class name.
    pub name: String,
    pub line: u32,
    pub items: Vec<RouterItem>,
    /// A prefix of the router itself (koa-router `prefix`, Nest `@Controller` paths).
    pub prefixes: Vec<Val>,
    /// NestJS controller version.
    pub version: Option<Val>,
    /// Middleware applied to every route regardless of order (Nest class-level interceptors).
    pub middleware: Vec<Val>,
    /// The function whose body makes it (0: the module's top level). One made inside a function
    /// (`function create() { const router = Router(); ..; return router }`) is made afresh at
    /// each call of the function (one a class's constructor or method makes is the router of
    /// its instances instead).
    pub made_in: FnId,
    /// Route methods the code adds to the router (`router.postAsync = (path, ...handlers) =>
    /// router.post(path, ...wrap(handlers))`).
    pub helpers: Vec<RouteHelper>,
}

/// Route arguments as the frameworks read them: arrays of handlers spread into one list.
pub fn flatten(args: &[Val]) -> Vec<Val> {
    let mut out = Vec::new();
    for a in args {
        match a {
            Val::Arr(inner) => out.extend(flatten(inner)),
            v => out.push(v.clone()),
        }
    }
    out
}

/// A method added to a router that registers a route with the path it is given: `name(..)`
/// registers `method` at its argument `path_index`, the arguments after it being the route's
/// middleware and, last, its handler (as the framework's own route methods take them).
#[derive(Debug, Clone)]
pub struct RouteHelper {
    pub name: String,
    pub method: Val,
    pub path_index: usize,
}

impl RouteHelper {
    /// The route a call of the method registers with these arguments, written at `written_at`
    /// when a caller's arguments made the call.
    pub fn route(
        &self,
        args: &[Val],
        path_text: String,
        line: u32,
        written_at: Option<WrittenAt>,
    ) -> Option<RouterItem> {
        let paths = args.get(self.path_index)?.clone();
        let mut rest = flatten(args.get(self.path_index + 1..)?);
        let handler = rest.pop()?;
        let mut item =
            RouterItem::route(self.method.clone(), paths, path_text, rest, handler, line);
        if let RouterItem::Route { written_at: w, .. } = &mut item {
            *w = written_at;
        }
        Some(item)
    }
}

impl RouterFacts {
    pub fn new(kind: RouterKind, framework: &'static str, line: u32) -> Self {
        RouterFacts {
            kind,
            framework,
            name: String::new(),
            line,
            items: Vec::new(),
            prefixes: Vec::new(),
            version: None,
            middleware: Vec::new(),
            made_in: 0,
            helpers: Vec::new(),
        }
    }
}

/// What a NestJS bootstrap file configures for every controller.
#[derive(Debug, Clone, Default)]
pub struct NestBootstrap {
    pub global_prefix: Option<Val>,
    /// The global prefix as written, and the line of its `setGlobalPrefix`.
    pub global_prefix_text: String,
    pub global_prefix_line: u32,
    pub exclude: Vec<Val>,
    /// URI versioning: (prefix, default version).
    pub versioning: Option<(String, Option<Val>)>,
    pub interceptors: Vec<Val>,
    pub line: u32,
    /// The application's root module (`NestFactory.create(AppModule)`): the controllers it
    /// serves are those of the modules it imports, wherever their files are.
    pub root_module: Option<Val>,
}

impl NestBootstrap {
    /// It configures the application's routes (a global prefix, versioning, global
    /// interceptors or guards), beyond making it.
    pub fn configures(&self) -> bool {
        self.global_prefix.is_some() || self.versioning.is_some() || !self.interceptors.is_empty()
    }
}

/// A `req.method` comparison: which methods, where, and whether it excludes them.
#[derive(Debug, Clone)]
pub struct MethodCheck {
    pub methods: Vec<String>,
    pub line: u32,
    pub negated: bool,
    /// A negated check whose branch leaves the handler (`if (!allowed.includes(req.method))
    /// return res.status(405)`): a gate letting through only the methods it names.
    pub exits: bool,
}

/// A call in code that handles an idempotency key: what the linker needs to tell whether it is an
/// operation on the key store (a table, a model, Redis, a `Map`) and what it does there.
#[derive(Debug, Clone, Default)]
pub struct KeyCall {
    pub line: u32,
    /// The line where the whole chained statement starts (`knex(t).insert(..).onConflict().ignore()`):
    /// one operation, whatever its links.
    pub chain_line: u32,
    /// The member called (`set`, `create`, `query`) or the function's name.
    pub method: String,
    /// The receiver as written (`this.redis`, `prisma.idempotencyKey`), shortened.
    pub receiver: String,
    /// A first argument that is a string or template literal (SQL, a cache key).
    pub literal: Option<String>,
    /// Object keys and names in the arguments, nested (`data`, `userId`, `requestHash`).
    pub fields: Vec<String>,
    /// An `NX` option: set only if absent.
    pub nx: bool,
    /// An expiry option (`EX`, `PX`, `ttl`).
    pub ttl: bool,
    /// The arguments compare an age (`expiresAt: { lt: now }`), or the call runs in a timer.
    pub time_filter: bool,
    /// An `await` came earlier in the function: a read and a write around it can interleave.
    pub after_await: bool,
    /// An argument is (or is built from) the inbound key.
    pub on_key: bool,
    pub ctx: crate::facts::key::Ctx,
    pub cond: Option<crate::facts::key::Cond>,
}

/// Something else seen in key code (a status answered, a check on the key, a hash compared).
#[derive(Debug, Clone)]
pub struct KeySeen {
    pub obs: crate::facts::key::Obs,
    pub line: u32,
    pub ctx: crate::facts::key::Ctx,
}

#[derive(Debug, Clone, Default)]
pub struct FnFacts {
    pub name: String,
    pub line: u32,
    /// Declared `async`: its work waits on something outside the process.
    pub is_async: bool,
    pub class: Option<ClassId>,
    pub calls: Vec<CallSite>,
    /// (header name as written, line) for every read of an idempotency-key header.
    pub key_reads: Vec<(String, u32)>,
    /// (header name, line) for every read of a webhook signature header.
    pub signature_reads: Vec<(String, u32)>,
    /// (header name, line) for every read of an uncatalogued header named like a signature or a
    /// shared secret (`x-signature`, `x-postmark-secret`): a receiver's check only on a webhook
    /// path, decided when the route's path is known.
    pub signature_like_reads: Vec<(String, u32)>,
    pub returns: Vec<Val>,
    /// The return type the function declares (`: LightningProvider`, `: Promise<User>` as
    /// `User`, an object type `{ provider: LightningProvider }` as an object of type
    /// references): what a call of it holds where its returned values cannot be followed.
    pub return_type: Option<Val>,
    /// The types parameters declare where they name what a function returns (`repo: OrgRepo`
    /// with `type OrgRepo = ReturnType<typeof createOrgRepo>`, also as a field of an object type
    /// `{ repo }: { repo: OrgRepo }`): (index, the declared type as a value).
    pub param_types: Vec<(usize, Val)>,
    /// Functions defined inside this one; their bodies count as part of it.
    pub children: Vec<FnId>,
    /// Registrations on a router that arrives as parameter `usize`.
    pub param_items: Vec<(ParamSlot, RouterItem)>,
    /// Registrations on a router of an enclosing scope whose path, method, handler or mounted
    /// values are this function's parameters (`function useWith404Fallback(url, route) {
    /// app.use(url, route) }` inside the function that makes `app`): the linker makes them at
    /// each call of the function.
    pub closure_items: Option<Box<Vec<(RouterId, RouterItem)>>>,
    /// Properties the code assigns on the function object itself (`request.post = (options) =>
    /// call(options, 'POST')`): what `request.post` reads, here and where it is imported.
    pub members: Option<Box<Vec<(String, Val)>>>,
    /// `req.method` checks in the body (Next.js pages handlers).
    pub method_checks: Vec<MethodCheck>,
    /// `options.methods.includes(req.method)` in the body: the request's method tested against a
    /// list a parameter carries (function, parameter index, field), a wrapper's method gate whose
    /// methods each call gives.
    pub param_method_gates: Vec<(FnId, usize, String)>,
    /// Parameters with an object literal or a boolean as their default (`options = { methods:
    /// ['GET'] }`, `param = true`): (index, the default).
    pub param_defaults: Vec<(usize, Val)>,
    /// The body opens with `'use server'`: a Next.js server action.
    pub use_server: bool,
    /// Idempotency keys passed in this function's calls (a header or a provider's key option),
    /// with where each comes from.
    pub sent_keys: Vec<SentKey>,
    /// Calls that pass a freshly made value (a UUID, `Date.now()`) as an argument: the key a
    /// caller makes for a helper that takes it as a parameter.
    pub key_args: Vec<KeyArg>,
    /// Lines of hashes of the request body that this function hands to a store: a dedup key
    /// made from the content.
    pub body_hashes: Vec<u32>,
    /// Calls in code that handles an idempotency key (empty elsewhere).
    pub key_calls: Vec<KeyCall>,
    /// Other observations in that code.
    pub key_seen: Vec<KeySeen>,
    /// The node id of the function's body block, when it has one: a statement directly in it
    /// runs on every call.
    pub body_block: Option<usize>,
    /// The function throws unless it wins a claim (`if (res.changes !== 1) throw ..` after a
    /// `DELETE`, in its own body): what the claim is and the line of the test.
    pub refuses_unless: Option<(&'static str, u32)>,
    /// The body blocks of its `try`s whose `catch` only throws again: a failure in one leaves
    /// the `try`, so what follows the `try` runs only when the calls in it succeeded.
    pub rethrow_blocks: Vec<usize>,
    /// The body blocks of its `try`s whose `catch` throws when the error is a unique violation
    /// (`if (e.code === 'P2002') throw new ConflictException()`): a create's duplicate leaves the
    /// `try`, whatever else the `catch` swallows.
    pub unique_rethrow_blocks: Vec<usize>,
    /// The function throws when a lookup of its own body found the row (`const found = await
    /// prisma.user.findFirst(..); if (found) throw new ConflictError()`, a helper
    /// `assertEmailFree(email)`): the model and the test's line. What a caller does after it runs
    /// only when the lookup missed.
    pub refuses_found: Option<(String, u32)>,
    /// The chains of its `.catch(handler)` calls whose handler only throws again (`create(..)
    /// .catch((e) => { throw new Conflict() })`): the chain still fails the function.
    pub rethrow_catches: Vec<usize>,
    /// A `try` of the function's own has a `catch` that recognises a unique violation: a
    /// function it is handed and runs there (`uniqueError(() => insert(..), 'taken')`) has its
    /// duplicates answered.
    pub answers_unique: bool,
    /// Parameters bound to a path parameter of the route by a decorator (`@Param('id') id`,
    /// `@UuidParam('id') id`, tsoa's `@Path('id') id`): (index, the path parameter's name). A
    /// route's path parameter is always a non-empty string where the handler runs.
    pub path_params: Vec<(usize, String)>,
}

impl FnFacts {
    /// See [`FnFacts::closure_items`] (boxed: most functions have none).
    pub fn closure_items(&self) -> &[(RouterId, RouterItem)] {
        self.closure_items.as_deref().map_or(&[], Vec::as_slice)
    }

    /// The value of property `name` assigned on the function object (the last one written).
    pub fn member(&self, name: &str) -> Option<&Val> {
        self.members
            .as_deref()?
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }
}

/// An idempotency key that a call passes on, and where it comes from.
#[derive(Debug, Clone)]
pub struct SentKey {
    /// The call's line (as in its [`CallSite`]), or the line of the statement setting the header.
    pub line: u32,
    pub origin: crate::facts::KeyOrigin,
    /// For a key that is a parameter: the function it belongs to and its index.
    pub param: Option<(FnId, usize)>,
    /// The key as written, shortened.
    pub text: String,
    /// Where the key is made.
    pub key_line: u32,
    pub detail: String,
    /// Made per evaluation (a UUID, the clock), whatever the context.
    pub fresh: bool,
    /// The function that sends it, for reports (`payOrder callback` for an anonymous one).
    pub function: String,
    /// The function that makes the key (where a fix goes).
    pub key_function: String,
    /// A request sending the key in a header: its method (when the code shows it) and path.
    pub request: Option<(Option<String>, String)>,
    /// The request's URL is a parameter: the function and its index.
    pub path_param: Option<(FnId, usize)>,
}

/// A key-like value passed as argument `index` of a call: a freshly made one, a parameter
/// passed on, or a variable named like a key.
#[derive(Debug, Clone)]
pub struct KeyArg {
    pub callee: Val,
    /// The call's arguments (a URL among them).
    pub args: Vec<Val>,
    pub index: usize,
    /// The call's line.
    pub line: u32,
    pub origin: crate::facts::KeyOrigin,
    /// A parameter of the calling function passed on: the function and its index.
    pub param: Option<(FnId, usize)>,
    pub text: String,
    pub key_line: u32,
    pub detail: String,
    /// The calling function, for reports.
    pub function: String,
    /// The function that makes the key.
    pub key_function: String,
}

/// A decorator as evaluated: its name (the imported one for framework decorators), arguments
/// and line.
#[derive(Debug, Clone)]
pub struct DecoratorFacts {
    pub name: String,
    /// The decorator as written, evaluated (the linker finds the package it comes from).
    pub callee: Val,
    pub args: Vec<Val>,
    pub line: u32,
}

#[derive(Debug, Clone, Default)]
pub struct ClassFacts {
    pub name: String,
    pub line: u32,
    pub extends: Option<Val>,
    /// The classes named in its `implements` clause (a class may implement an abstract class).
    pub implements: Vec<Val>,
    pub methods: Vec<(String, FnId)>,
    pub fields: Vec<(String, Val)>,
    pub decorators: Vec<DecoratorFacts>,
    /// Property decorators (`@Column({ unique: true }) email`), with the property name.
    pub field_decorators: Vec<(String, DecoratorFacts)>,
    /// Fields that hold an ORM repository or model of one entity, with that entity's name:
    /// `@InjectRepository(User)`, `@InjectModel(User.name)`, `Repository<User>`, `Model<User>`.
    pub field_models: Vec<(String, String)>,
    /// Its type parameters (`class BaseRepository<T_DBModel, T_Entity>`): a field typed
    /// `Model<T_DBModel>` holds whatever model a subclass gives it, not one named `T_DBModel`.
    pub type_params: Vec<String>,
    /// Fields its constructor declares as parameters (`constructor(protected model: Model<T>)`),
    /// with the parameter's position: a subclass's `super(User)` says what they hold.
    pub ctor_params: Vec<(String, usize)>,
    /// Fields whose declared type names one of `type_params` (`model: Model<T_DBModel>`).
    pub generic_fields: Vec<String>,
    /// Each method's decorators (`@Mutation(() => Order)`), in the order of `methods`.
    pub method_decorators: Vec<(FnId, Vec<DecoratorFacts>)>,
    /// A class that is a router (it extends koa-router): what `this` registers, every instance.
    pub router: Option<RouterId>,
    /// Accessors (`get router() { return this.app; }`): reading the member runs the method.
    pub getters: Vec<String>,
    /// Strings assigned to the class itself after it is declared (`Application.table =
    /// 'applications'`): what `this.table` is in a static method the class inherits, called on
    /// it (`Application.make(obj)`). Kept apart from `fields`, which `this` reads where it is
    /// written: there it is whichever class the call names.
    pub statics: Vec<(String, String)>,
}

impl ClassFacts {
    pub fn method(&self, name: &str) -> Option<FnId> {
        self.methods
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| *f)
    }
    /// The name of the field that holds router `r`, if one does (`this.app = Router()`).
    pub fn router_field(&self, r: RouterId) -> Option<&str> {
        self.fields
            .iter()
            .find(|(_, v)| *v == Val::Router(r))
            .map(|(n, _)| n.as_str())
    }

    /// A field's value: the first one assigned, else its declared type (`app: Application` then
    /// `this.app = express()` is the app). Of several types, one the file names (a class, an
    /// import) beats a global it does not (`model: Pick<PrismaService, T>` then
    /// `this.model = this.prisma`, a `PrismaService` parameter, is that service).
    pub fn field(&self, name: &str) -> Option<&Val> {
        let mut declared = None;
        let mut named = None;
        for (n, v) in &self.fields {
            if n != name {
                continue;
            }
            match v {
                Val::TypeRef(t) if !matches!(**t, Val::Global(_) | Val::Unknown) => {
                    named.get_or_insert(v);
                }
                Val::TypeRef(_) | Val::Unknown => {
                    declared.get_or_insert(v);
                }
                v => return Some(v),
            }
        }
        named.or(declared)
    }
}

#[derive(Debug, Default)]
pub struct Module {
    pub file: String,
    /// Test code: parsed, but its apps and routers are not the service's routes.
    pub is_test: bool,
    pub functions: Vec<FnFacts>,
    pub classes: Vec<ClassFacts>,
    pub routers: Vec<RouterFacts>,
    pub exports: Vec<(String, Val)>,
    /// `module.exports = X` / `export = X`.
    pub cjs_whole: Option<Val>,
    /// `export * from 'spec'`.
    pub star_exports: Vec<String>,
    /// Registrations on a router imported from another file.
    pub foreign_items: Vec<(Val, RouterItem)>,
    /// Line of each export (`default` included).
    pub export_lines: Vec<(String, u32)>,
    pub nest_bootstrap: Option<NestBootstrap>,
    /// The file opens with `'use server'`: every exported function is a server action.
    pub use_server: bool,
    /// `config.server.basePath || ''`, `opts.prefix ?? '/api'`: a value the code cannot show
    /// (a configuration object's member, a parameter's field) and the literal it falls back to,
    /// with the expression as written. Where such a value is wanted as a string and cannot be
    /// read, the linker takes the fallback (and says so). At most [`MAX_FALLBACKS`].
    pub fallbacks: Vec<Fallback>,
    /// Functions assigned as statics of a value the module holds (Mongoose's
    /// `schema.statics.findByEmail = fn`): (the value, the name, the function). At most
    /// [`MAX_FALLBACKS`].
    pub statics: Vec<(Val, String, Val)>,
    /// Fields set on an instance the module makes (`const device = new Device(); device.token =
    /// body.token`), by the line of its `new`: what a `save(device)` writes besides the
    /// constructor's argument. At most [`MAX_NEW_FIELDS`].
    pub new_fields: Vec<(u32, String, Val)>,
    /// Interfaces and object type aliases (`interface Modules { orders: OrdersModule }`, `type
    /// Context = Core & { userId?: string }`), by name: the parts of each, an object type's
    /// fields with their declared types (unknown where the type is not read: `email: string`),
    /// or a type it extends or intersects. At most [`MAX_TYPE_SHAPES`] with a field of a type
    /// read, and as many more whose fields are all of types not read.
    pub type_shapes: Vec<(String, Vec<Val>)>,
}

/// Most type shapes a module notes.
pub const MAX_TYPE_SHAPES: usize = 256;

impl Module {
    /// The parts of the interface or object type alias `name` this module declares.
    pub fn type_shape(&self, name: &str) -> Option<&[Val]> {
        self.type_shapes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, parts)| parts.as_slice())
    }
}

/// Most fallbacks a module notes.
pub const MAX_FALLBACKS: usize = 64;

/// The most fields set on instances a module makes that it keeps (see `Module::new_fields`).
pub const MAX_NEW_FIELDS: usize = 1024;

/// A value written with a literal fallback: `A || 'lit'`, `A ?? 'lit'`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fallback {
    /// `A`, as the evaluator sees it.
    pub value: Val,
    /// The literal.
    pub literal: String,
    /// `A || 'lit'` as written.
    pub expr: String,
}

impl Module {
    /// The literal `v` falls back to where the code writes one (`v || 'lit'`), and the expression.
    pub fn fallback(&self, v: &Val) -> Option<&Fallback> {
        self.fallbacks.iter().find(|f| &f.value == v)
    }

    /// Gives back what the lists grew beyond their length while the file was read: every module
    /// of a tree is held at once while linking, so the slack adds up (a tenth of the peak).
    pub fn shrink_to_fit(&mut self) {
        for f in &mut self.functions {
            for c in &mut f.calls {
                c.args.shrink_to_fit();
                c.path.shrink_to_fit();
                c.hops.shrink_to_fit();
                c.found.shrink_to_fit();
                c.arg_keys.shrink_to_fit();
                c.text.shrink_to_fit();
            }
            f.calls.shrink_to_fit();
            f.returns.shrink_to_fit();
            f.children.shrink_to_fit();
            f.key_reads.shrink_to_fit();
            f.key_calls.shrink_to_fit();
            f.key_seen.shrink_to_fit();
        }
        self.functions.shrink_to_fit();
        self.classes.shrink_to_fit();
        self.routers.shrink_to_fit();
        self.exports.shrink_to_fit();
        self.export_lines.shrink_to_fit();
        self.foreign_items.shrink_to_fit();
        self.fallbacks.shrink_to_fit();
        self.statics.shrink_to_fit();
    }

    /// The `new X(..)` call on `line` (a [`Val::New`] names it so), with its arguments.
    pub fn new_call(&self, line: u32) -> Option<&CallSite> {
        self.functions
            .iter()
            .flat_map(|f| f.calls.iter())
            .find(|c| c.is_new && c.line == line)
    }

    pub fn export_line(&self, name: &str) -> Option<u32> {
        self.export_lines
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, l)| *l)
    }
    pub fn export(&self, name: &str) -> Option<&Val> {
        self.exports
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

/// A value generated per call: a random id, token or timestamp, or something computed from one
/// (`hash(\`${randomBytes(32)}${secret}\`)`, a token signed around a random `jti`). A name-based
/// uuid (`uuid.v5(name, ns)`, `v3`) is not: it is the same for the same input; nor is what a
/// read returns (`findFirst({ where: { expires: { gt: Date.now() } } })`).
pub fn fresh_random(v: &Val) -> bool {
    fresh_at(v, 0)
}

fn fresh_at(v: &Val, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    match v {
        Val::Call(callee, args) => {
            let name_based = matches!(
                callee.as_ref(),
                Val::Member(_, n) | Val::Import { name: Some(n), .. } if matches!(n.as_str(), "v5" | "v3")
            );
            (!name_based && fresh_callee(callee, depth + 1))
                || (!returns_stored(callee) && args.iter().any(|a| fresh_at(a, depth + 1)))
        }
        // A field read (`req.body.token`, `row.id`) is as fresh as what it is read from: its
        // name says nothing.
        Val::Member(inner, _) => fresh_at(inner, depth + 1),
        Val::Template(parts) => parts.iter().any(|p| fresh_at(p, depth + 1)),
        Val::Obj(fields) => fields.iter().any(|(_, x)| fresh_at(x, depth + 1)),
        _ => false,
    }
}

/// A function whose call makes a new value each time: named like a maker (`randomUUID`,
/// `generateToken`, `Date.now`) or from an id package, or a method of such a value.
fn fresh_callee(callee: &Val, depth: usize) -> bool {
    const MAKERS: &[&str] = &[
        "random", "uuid", "nanoid", "cuid", "ulid", "v4", "v7", "generate", "token", "now",
        "createId", "newId", "makeId", "genId", "newKey",
    ];
    const ID_PACKAGES: &[&str] = &["uuid", "nanoid", "cuid", "@paralleldrive/cuid2", "ulid"];
    if depth > 8 {
        return false;
    }
    let maker = |name: &str| {
        !matches!(name, "v5" | "v3")
            && MAKERS
                .iter()
                .any(|m| name.to_ascii_lowercase().contains(&m.to_ascii_lowercase()))
    };
    match callee {
        Val::Member(inner, name) => {
            !matches!(name.as_str(), "v5" | "v3")
                && (maker(name)
                    || match inner.as_ref() {
                        Val::Call(..) => fresh_at(inner, depth + 1),
                        other => fresh_callee(other, depth + 1),
                    })
        }
        Val::Import {
            name: Some(name),
            spec,
        } => maker(name) || ID_PACKAGES.contains(&spec.as_str()),
        Val::Import { spec, .. } => ID_PACKAGES.contains(&spec.as_str()),
        Val::Call(..) => fresh_at(callee, depth),
        _ => false,
    }
}

/// A call whose result is read from a store rather than computed from its arguments: a lookup
/// (`findFirst({ where: { expires: { gt: Date.now() } } })`), or a write on a model that returns
/// the stored row (`prisma.order.update({ data: { paidAt: Date.now() } })`).
fn returns_stored(callee: &Val) -> bool {
    let Val::Member(receiver, name) = callee else {
        return false;
    };
    let reads = [
        "find", "get", "select", "query", "where", "count", "exists", "load", "fetch",
    ]
    .iter()
    .any(|p| name.starts_with(p));
    let writes = [
        "create", "update", "upsert", "insert", "save", "delete", "destroy", "remove",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        && !matches!(receiver.as_ref(), Val::Call(..));
    reads || writes
}

#[cfg(test)]
mod tests {
    use super::package_spec;

    #[test]
    fn deno_specifiers_name_their_packages() {
        for (raw, want) in [
            ("npm:stripe@17", "stripe"),
            ("npm:stripe", "stripe"),
            ("npm:@supabase/supabase-js@2", "@supabase/supabase-js"),
            (
                "npm:@supabase/supabase-js@2.45.0/dist",
                "@supabase/supabase-js/dist",
            ),
            ("jsr:@supabase/supabase-js@2", "@supabase/supabase-js"),
            ("jsr:@hono/hono", "hono"),
            ("jsr:@hono/hono@^4/factory", "hono/factory"),
            ("https://deno.land/x/hono@v4.0.0/mod.ts", "hono"),
            ("https://esm.sh/stripe@14?target=deno", "stripe"),
            (
                "https://esm.sh/@supabase/supabase-js@2",
                "@supabase/supabase-js",
            ),
            ("./routes.ts", "./routes.ts"),
            ("hono", "hono"),
            ("npm:", "npm:"),
            ("jsr:@scope", "jsr:@scope"),
        ] {
            assert_eq!(package_spec(raw), want, "{raw}");
        }
    }
}
