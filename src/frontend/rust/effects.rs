//! What a handler reaches: calls followed into project functions and methods (through paths,
//! `use`, `impl` blocks, and by unique method name as a last resort), memoised and cycle-safe;
//! the side effects among those calls according to the Rust entries of `rules/sinks.toml` and raw
//! SQL; and where the idempotency-key header is read.

use super::ir::*;
use super::model::{FnId, ImplId, ModId, Model, Res};
use super::parse::{Visit, children, push_stmts, search};
use crate::catalog::{Catalog, Sink, pattern_matches};
use crate::facts::key::Obs;
use crate::facts::{Effect, EffectKind, KeyObs, Location, ParamTest};
use crate::link::calls::classify_sql;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Associated functions the standard derives and conversions provide (`Default::default`,
/// `From::from`): never a write of the project's.
/// Method names that write: one a project type has no code for (a derive made it) is a write
/// not followed.
const WRITE_METHODS: &[&str] = &[
    "save", "insert", "create", "update", "upsert", "delete", "destroy", "remove", "store",
    "persist",
];

/// `recv.name` as the code writes it, for a message (`token.save`).
fn name_in_text(recv: &Ex, name: &str) -> String {
    match recv {
        Ex::Path(p, _) => format!("{}.{name}", p.join("::")),
        Ex::Field(_, f) => format!("{f}.{name}"),
        Ex::Call(f, _, _) => match &**f {
            Ex::Path(p, _) => format!("{}(..).{name}", p.join("::")),
            _ => format!("..{name}"),
        },
        Ex::Method(_, m, _, _) => format!("..{m}(..).{name}"),
        _ => format!("..{name}"),
    }
}

const DERIVED_FNS: &[&str] = &[
    "default",
    "clone",
    "from",
    "into",
    "try_from",
    "try_into",
    "from_str",
    "deserialize",
    "serialize",
    "hash",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "fmt",
    "to_string",
    "as_ref",
];

#[derive(Debug, Default, Clone)]
pub struct Summary {
    pub effects: Vec<Effect>,
    pub key_reads: Vec<Location>,
    /// Tables read so far (`SELECT .. FROM t`), in order: a create of `t` after one is
    /// pre-checked.
    pub reads: Vec<String>,
    /// Of those, the tables read with a lock (`SELECT .. FOR UPDATE`).
    pub locked_reads: Vec<String>,
    /// The fields those reads' filters fix to constants (`WHERE status = 'pending'`,
    /// `.filter(Column::Status.eq(Status::Pending))`), as (field, constant).
    pub read_filters: Vec<(String, String)>,
    /// What the key code reached does, in the order of this function's calls that lead to it.
    pub key_obs: Vec<KeyObs>,
    /// Calls to a project type's associated function that resolves to nothing (one a
    /// `macro_rules!` or a derive generates): what they do is not known.
    pub unfollowed: Vec<(String, Location)>,
    /// Checks the project writes itself that look like a provider's signature check (a header
    /// named like a signature or secret, a function named like a verification of one): on a
    /// webhook path they make the endpoint a receiver (see `link::webhooks::by_convention`).
    pub signature_checks: Vec<(String, Location)>,
    /// The function fails unless it wins a claim (`if res.rows_affected() != 1 { return
    /// Err(..) }` after a `DELETE`, in its own body or in a call whose error it hands on): what
    /// the claim is and where it is tested. A caller whose own failure follows from this call's
    /// runs what comes after the call once.
    pub refuses_unless: Option<(&'static str, Location)>,
    /// The calls of this function's walk made so far to functions that refuse unless they win a
    /// claim (see `refuses_unless`), in order.
    claim_calls: Vec<(&'static str, Location)>,
    /// The function fails when a lookup of its own body finds the row (`if existing.is_some() {
    /// return Err(Conflict) }`, every call reaching the test, or a call whose error it hands
    /// on): the lookup and where it is tested. What a caller does after a call of it that
    /// fails the caller in turn runs only when the lookup missed.
    pub refuses_found: Option<(Lookup, Location)>,
    /// The calls of this function's walk made so far to functions that fail when their lookup
    /// finds the row (see `refuses_found`), in order.
    refusal_calls: Vec<(Lookup, Location)>,
    /// Reads of a table a parameter names (see `Effect::target_param`): the caller's argument
    /// names it.
    read_params: Vec<crate::facts::ParamRef>,
    /// This function's own key-value calls on a key written as a name or a `format!`: the
    /// effect's index, the key, and whether the call gives it a time to live (see
    /// `Effect::window`).
    kv_keys: Vec<(usize, String, bool)>,
}

/// A function named for a read by the usual conventions: a getter (`get_config`), a predicate
/// (`is_enabled`, `has_access`), a lookup or a listing (`find_user`, `list_members`,
/// `count_rows`, `exists`); not one that also names a write (`get_or_create_user`).
fn named_for_a_read(name: &str) -> bool {
    let words = crate::facts::key::words::split(name);
    matches!(
        words.first().map(String::as_str),
        Some("get" | "is" | "has" | "find" | "list" | "count" | "exists")
    ) && !words.iter().any(|w| {
        matches!(
            w.as_str(),
            "or" | "and"
                | "create"
                | "insert"
                | "update"
                | "upsert"
                | "set"
                | "add"
                | "save"
                | "delete"
                | "remove"
        )
    })
}

/// Does an expression name a unique violation (`is_unique_violation()`, `23505`,
/// `UniqueViolation`)?
fn names_unique_violation(e: &Ex) -> bool {
    search(vec![e], 10_000, false, |x| match x {
        Ex::Method(_, name, _, _) if name == "is_unique_violation" => Visit::Found,
        Ex::Lit(s) if crate::text::names_unique_violation(s) => Visit::Found,
        Ex::Path(p, _)
            if p.last().is_some_and(|l| {
                matches!(
                    l.as_str(),
                    "UniqueViolation" | "UNIQUE_VIOLATION" | "DuplicateKey"
                )
            }) =>
        {
            Visit::Found
        }
        _ => Visit::Enter,
    })
}

enum Memo {
    Busy,
    Done(Rc<Summary>),
}

/// Method names too common to follow by name alone.
const GENERIC_METHODS: &[&str] = &[
    "new",
    "default",
    "clone",
    "into",
    "from",
    "try_from",
    "try_into",
    "as_ref",
    "as_mut",
    "unwrap",
    "expect",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "ok",
    "err",
    "map",
    "map_err",
    "and_then",
    "or_else",
    "iter",
    "into_iter",
    "collect",
    "get",
    "get_mut",
    "set",
    "insert",
    "remove",
    "push",
    "pop",
    "len",
    "is_empty",
    "to_string",
    "to_owned",
    "as_str",
    "fmt",
    "eq",
    "cmp",
    "hash",
    "send",
    "execute",
    "run",
    "call",
    "lock",
    "read",
    "write",
    "json",
    "body",
    "status",
    "into_inner",
    "save",
    "create",
    "update",
    "delete",
    "find",
    "validate",
    "parse",
    "build",
    "next",
    "poll",
    "poll_ready",
    "drop",
    "deref",
    "from_request",
    "from_request_parts",
    "handle",
    "apply",
    "load",
    "first",
    "filter",
    "values",
    "execute_query",
    "serialize",
    "deserialize",
    "to_json",
    "from_str",
    "try_into_inner",
    "extend",
    "contains",
    "with",
    "init",
    "start",
    "stop",
    "close",
    "connect",
    "query",
    "fetch",
    "post",
    "put",
    "patch",
    "head",
    "request",
    "response",
    "clear",
    "flush",
];

/// Crates whose values live in the process (channels, maps, caches, hashers, the web framework
/// itself): a `send` or `create` on one of them writes nowhere a retry would notice.
/// A message built where it is sent: a struct literal (`Envelope { message, .. }`) or an enum
/// variant (`Command::Pay(req)`, `Message::Api(Api::PaymentRequest(p))`), not a plain value.
fn built_message(e: &Ex) -> bool {
    match e {
        Ex::Struct(..) => true,
        Ex::Call(f, _, _) => matches!(&**f, Ex::Path(p, _)
            if p.len() >= 2 && p.last().is_some_and(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))),
        _ => false,
    }
}

const IN_PROCESS_CRATES: &[&str] = &[
    "tokio",
    "tokio_stream",
    "futures",
    "futures_util",
    "futures_channel",
    "crossbeam",
    "crossbeam_channel",
    "flume",
    "async_channel",
    "async_broadcast",
    "kanal",
    "postage",
    "dashmap",
    "moka",
    "lru",
    "quick_cache",
    "cached",
    "indexmap",
    "hashbrown",
    "parking_lot",
    "serde_json",
    "bytes",
    "http",
    "tracing",
    "log",
    "metrics",
    "prometheus",
    "opentelemetry",
    "sha2",
    "sha1",
    "hmac",
    "md5",
    "digest",
    "blake3",
    "ring",
    "rand",
    "uuid",
    "chrono",
    "time",
    "axum",
    "actix_web",
    "actix",
    "rocket",
    "tower",
    "tera",
    "askama",
    "handlebars",
    "minijinja",
    "async_graphql",
    "juniper",
    "arc_swap",
    "cel_interpreter",
    "fs_err",
    "cap_std",
    "actix_web_flash_messages",
    "multipart",
    "tower_sessions",
    "actix_session",
    "axum_sessions",
    "rust_xlsxwriter",
];

/// Of those, the verbs that name work a project's method does (`wallet.run(cmd)`,
/// `service.create(dto)`) rather than a container's or a conversion's.
const WORK_METHODS: &[&str] = &[
    "send", "execute", "run", "call", "save", "create", "update", "delete", "handle", "apply",
];

/// Wrappers a value of type `T` is reached through: `Option<T>`, `web::Data<T>`, `Arc<T>`, …
const TRANSPARENT: &[&str] = &[
    "Option",
    "Result",
    "Box",
    "Arc",
    "Rc",
    "Data",
    // actix-web's `web::ThinData` extractor (application data without the `Arc`)
    "ThinData",
    "State",
    "Extension",
    "Json",
    "Form",
    "Query",
    "Path",
    "RwLock",
    "Mutex",
    "Cow",
    "Ref",
    "RefMut",
    "MutexGuard",
    "LemmyResult",
    "Pin",
    "ApubData",
    // a value made once, on first use (`static CLIENT: Lazy<reqwest::Client>`,
    // `OnceLock<T>`): once_cell's and std's cells
    "Lazy",
    "LazyLock",
    "LazyCell",
    "OnceLock",
    "OnceCell",
];

/// Methods that set a header (downstream keys), not read one.
/// Methods that read a request header by its name (`headers.get("x-signature")`, rocket's
/// `get_one`).
const HEADER_READERS: &[&str] = &["get", "get_all", "get_one", "contains_key"];

const HEADER_WRITERS: &[&str] = &[
    "header",
    "insert",
    "append",
    "insert_header",
    "append_header",
    "typed_insert",
    "set_header",
    "header_str",
    "idempotency_key",
];

/// sqlx (and similar) query functions and macros whose first string is SQL.
const SQL_QUERIES: &[&str] = &[
    "query",
    "query_as",
    "query_scalar",
    "query_unchecked",
    "query_as_unchecked",
    "query_scalar_unchecked",
    "query_with",
    "query_as_with",
    "query_scalar_with",
    "sql_query",
];

fn norm(s: &str) -> String {
    s.replace('-', "_")
}

struct Scope {
    module: ModId,
    imp: Option<ImplId>,
    /// The function being summarised (none for a closure handler).
    func: Option<FnId>,
    /// Its parameters' names in order, `self` left out (as a method call's arguments are).
    params: Vec<String>,
    /// The project's functions that return a value made per call (see [`fresh_makers`]).
    makers: Rc<HashSet<String>>,
    /// The names of the project's functions (a call given a generator that is one of them is a
    /// write or a lookup of the project's, not a value made from it, unless it is a maker).
    own_fns: Rc<HashSet<String>>,
    /// Variables holding a generator of random values (see [`rng_param`]).
    rngs: HashSet<String>,
    vars: HashMap<String, Res>,
    /// Type names as written for variables whose type did not resolve (derive-generated
    /// `ActiveModel`, `Entity`): what catalogue `roots` are matched against.
    names: HashMap<String, String>,
    /// Record variables (a SeaORM `ActiveModel`) and the fields set on them from the caller's
    /// data; `None` when the record came from somewhere the fields cannot be seen.
    records: HashMap<String, Option<Vec<String>>>,
    /// Record variables bound to an `ActiveModel` literal of an entity that is not in view
    /// (`let values = Session::ActiveModel { .. }`): the entity's module as written.
    record_entities: HashMap<String, String>,
    /// Variables holding a SeaORM select not yet run (`let mut query =
    /// Entity::find().filter(..)`, run later as `query.one(db)`): the entity's module.
    selects: HashMap<String, String>,
    /// Variables holding a diesel select of a table not named where it is built
    /// (`let query = <T as HasTable>::table().filter(predicate);`, run as
    /// `query.get_result_async(conn)`): the table its filter names, or the parameter that does.
    table_queries: HashMap<String, Result<String, crate::facts::ParamRef>>,
    /// Variables holding a value made for this request (`let id = Uuid::new_v4();`).
    fresh: HashSet<String>,
    /// Variables holding a row an insert of this request created, or its id (`let user_id:
    /// Uuid = query_scalar("insert .. returning id")`): the row is new, so a key holding its id
    /// (`account_project (account_id, ..)`) is one no earlier run wrote.
    created: HashSet<String>,
    /// Variables made per request only when the caller's value is missing
    /// (`let id = body.id.unwrap_or_else(Uuid::new_v4);`).
    fallback: HashSet<String>,
    /// The effects each variable's initialiser produced (indices into the summary's effects),
    /// for a later `match res { Err(..UniqueConstraintViolation..) }`.
    var_effects: HashMap<String, std::ops::Range<usize>>,
    /// Variables holding a claim's outcome (see `crate::sql`): what the claim is.
    claims: HashMap<String, &'static str>,
    /// How many blocks deep the walk is in the function (1: its own statements).
    blocks: usize,
    /// Variables holding what a lookup found (`let existing = sqlx::query_as("SELECT .. FROM
    /// users ..")..fetch_optional(..)`, or a call of a function that only reads): the tables it
    /// read (as `facts::model_key`s), and whether it locked them (`FOR UPDATE`).
    lookups: HashMap<String, Lookup>,
    /// Of those, the ones that hold whether the lookup found nothing (`let missing =
    /// existing.is_none()`): true where the row is not there.
    missing: HashSet<String>,
    /// Variables holding a select filtered on `not(exists(..))`: inserted, it writes only
    /// what is not there yet.
    absent_selects: HashSet<String>,
    /// Variables holding what a call in the request made (an invoice fetched from a service),
    /// not what the client sent (see `Effect::made_args`).
    made: HashSet<String>,
    /// The fields set on a SeaORM `ActiveModel` variable (`active.accepted = Set(true)`), each
    /// with the constant written when it is one (as `Effect::update_keys`): what its
    /// `.update(db)` writes.
    sets: HashMap<String, Vec<(String, Option<String>)>>,
    /// Variables bound to a struct literal with no `..rest` (`let page = NewPage { .. }`): the
    /// fields it gives a value the caller would send again (see [`record_keys`]), what a
    /// diesel `insert_into(t).values(&page)` writes.
    literals: HashMap<String, Vec<String>>,
    /// Variables holding a column of a row a lookup found combined with another value (`let
    /// new_balance = existing.balance + amount;`): the column. An `UPDATE .. SET` of that column
    /// to the variable is computed from the old value.
    row_sums: HashMap<String, String>,
    /// Variables bound to a statement built at run time (`let sql = format!("INSERT INTO {table}
    /// ..")`): its text, the holes written `$1`, `$2`, .. (see `super::consts::format_statement`).
    built_sql: HashMap<String, String>,
    /// Variables bound to a URL written in place (`let url = format!("{}/v2/checkout/orders",
    /// base)`): its text as written, for an HTTP call given the variable.
    urls: HashMap<String, String>,
    /// Variables holding an enum variant (`let request = NodeRequest::Keysend { .. }`, `let
    /// request = params.into()`): which, for a `match` the value reaches.
    variants: HashMap<String, VariantVal>,
    /// Variables holding a prepared statement (`let mut stmt = conn.prepare_cached(ADD_LINK)?`):
    /// what it runs when it is run (`stmt.execute(..)`, `client.execute(&stmt, ..)`).
    prepared: HashMap<String, Prepared>,
    /// The line of the `prepare` a `let` being walked binds: it runs where the variable is run.
    deferred_prepare: Option<Line>,
}

/// A statement prepared and kept in a variable: its SQL, where and how it was prepared, and
/// whether the walk has seen it run.
struct Prepared {
    sql: String,
    line: Line,
    callee: String,
    run: std::cell::Cell<bool>,
}

/// rusqlite's `Connection::prepare` and `prepare_cached` (and tokio-postgres's
/// `Client::prepare`): a statement made to be run later.
const PREPARES: &[&str] = &["prepare", "prepare_cached"];

/// The methods that run a prepared statement: rusqlite's `Statement` (`execute`, `insert`,
/// `query_row`, `query_map`, ..), or tokio-postgres's `Client` given the statement.
const STATEMENT_RUNS: &[&str] = &[
    "execute",
    "insert",
    "query",
    "query_row",
    "query_one",
    "query_opt",
    "query_map",
    "query_and_then",
    "exists",
    "raw_execute",
    "raw_query",
    "query_raw",
    "execute_raw",
];

/// A row a variable holds from a lookup: the tables read (as `facts::model_key`s), whether
/// they were read with a lock, and the fields the lookup's filter fixes to constants.
type Lookup = (Vec<String>, bool, Vec<(String, String)>);

/// How far a summary had got before an expression was walked: what the walk then read is a
/// lookup when it wrote nothing (`let row = find(..)`, `if exists(..) {`).
struct Mark {
    effects: usize,
    reads: usize,
    locked: usize,
    filters: usize,
}

impl Mark {
    fn of(out: &Summary) -> Self {
        Mark {
            effects: out.effects.len(),
            reads: out.reads.len(),
            locked: out.locked_reads.len(),
            filters: out.read_filters.len(),
        }
    }

    /// What was looked up since the mark, if anything was and nothing was written.
    fn lookup(&self, out: &Summary) -> Option<Lookup> {
        let read = read_keys(&out.reads[self.reads..]);
        (out.effects.len() == self.effects && !read.is_empty()).then(|| {
            (
                read,
                out.locked_reads.len() > self.locked,
                out.read_filters[self.filters..].to_vec(),
            )
        })
    }
}

/// What an `if` on a looked-up row makes of the statements after it (or of one of its branches).
enum Guard {
    /// They run only when the lookup found nothing: a create of the table read is a
    /// find-or-create, refused on a repeat when the `if` leaves with an error.
    Missing {
        tables: Vec<String>,
        locked: bool,
        refuses: bool,
        /// The fields the lookup's filter fixes to constants: a create that writes another
        /// constant there is not the row a retry's lookup finds.
        filter: Vec<(String, String)>,
        /// The tables the branch where the lookup found its row updates: a create of one of
        /// them behind the guard is an update-or-insert by hand.
        updated: Vec<String>,
    },
    /// They run only while a field of the row passes a test (`Effect::state_guard`'s `t:..` /
    /// `f:..`).
    State {
        tables: Vec<String>,
        field: String,
        test: String,
    },
    /// They run only while a parameter of the function (or a field of one) is truthy or falsy
    /// (`if notify { .. }`, `if let Some(o) = options`, `if opts.upsert`): see
    /// `Effect::param_gate`.
    Param(Box<(crate::facts::ParamRef, ParamTest)>),
}

/// The enum variants a variable may hold, as far as the code shows (see
/// [`ParamTest::Variant`]).
#[derive(Debug, Clone)]
enum VariantVal {
    /// One of these (enum, variant) pairs, the enum as written (`Self` resolved to the impl's
    /// type).
    Named(Vec<(String, String)>),
    /// Converted with `.into()`: a variant a `From` impl of the enum returns (see
    /// [`Effects::converted_variants`]), from the type named when the receiver's is known.
    Into(Option<String>),
}

impl Guard {
    /// To the effects of a branch that runs only when the lookup missed (or found its state).
    fn apply(&self, effects: &mut [Effect], at: &Location) {
        self.apply_each(effects, at);
        self.mark_path(effects, at);
    }

    /// What else runs only when the lookup missed runs once on a sequential retry too, when the
    /// same path creates the row: the retry finds it. `effects`: all that run behind the guard.
    fn mark_path(&self, effects: &mut [Effect], at: &Location) {
        if let Guard::Missing { tables, .. } = self
            && let Some(create) = effects.iter().find(|e| {
                // (an atomic upsert behind the guard too leaves the row a retry finds)
                (e.find_or_create || (e.kind == EffectKind::DbCreate && e.upsert))
                    && e.target
                        .as_deref()
                        .is_some_and(|t| tables.contains(&crate::facts::model_key(t)))
            })
        {
            let guard = format!(
                "runs only when the lookup of `{}` at {at} found nothing, on the path that creates that row (`{}` at {})",
                create.target.as_deref().unwrap_or_default(),
                create.callee,
                create.location
            );
            for e in effects.iter_mut() {
                if !e.find_or_create && !e.on_failure && e.lookup_guarded.is_none() {
                    e.lookup_guarded = Some(guard.clone());
                }
            }
        }
    }

    fn apply_each(&self, effects: &mut [Effect], at: &Location) {
        for e in effects {
            match self {
                Guard::Missing {
                    tables,
                    locked,
                    refuses,
                    filter,
                    updated,
                } => {
                    if e.kind != EffectKind::DbCreate
                        || e.upsert
                        || !e
                            .target
                            .as_deref()
                            .is_some_and(|t| tables.contains(&crate::facts::model_key(t)))
                        || crate::sql::written_outside_filter(filter, &e.update_keys)
                    {
                        continue;
                    }
                    e.find_or_create = true;
                    e.upsert |= e
                        .target
                        .as_deref()
                        .is_some_and(|t| updated.contains(&crate::facts::model_key(t)));
                    e.lookup_locked |= *locked;
                    if *refuses && e.refused_by.is_none() {
                        e.refused_by = Some(at.clone());
                    }
                }
                Guard::State {
                    tables,
                    field,
                    test,
                } => {
                    // (applied from the innermost test out: each encloses those already there)
                    let outer = (tables.clone(), field.clone(), test.clone(), at.clone());
                    crate::facts::enclose(&mut e.state_guard, outer);
                }
                Guard::Param(gate) => {
                    e.param_gate.get_or_insert_with(|| gate.clone());
                }
            }
        }
    }
}

impl Scope {
    fn new(module: ModId, imp: Option<ImplId>, func: Option<FnId>) -> Self {
        Scope {
            module,
            imp,
            func,
            params: Vec::new(),
            makers: Rc::default(),
            own_fns: Rc::default(),
            rngs: HashSet::new(),
            vars: HashMap::new(),
            names: HashMap::new(),
            records: HashMap::new(),
            record_entities: HashMap::new(),
            selects: HashMap::new(),
            table_queries: HashMap::new(),
            fresh: HashSet::new(),
            created: HashSet::new(),
            fallback: HashSet::new(),
            var_effects: HashMap::new(),
            claims: HashMap::new(),
            missing: HashSet::new(),
            blocks: 0,
            lookups: HashMap::new(),
            absent_selects: HashSet::new(),
            row_sums: HashMap::new(),
            made: HashSet::new(),
            sets: HashMap::new(),
            literals: HashMap::new(),
            built_sql: HashMap::new(),
            urls: HashMap::new(),
            variants: HashMap::new(),
            prepared: HashMap::new(),
            deferred_prepare: None,
        }
    }
}

/// Calls that make a value per request: a retry writes a different one.
const FRESH_CALLS: &[&str] = &[
    "new_v4",
    "new_v7",
    "now_v7",
    "now",
    "now_utc",
    "now_local",
    "random",
    "new_random",
    "generate",
    "nanoid",
    "thread_rng",
    "rng",
];
const FRESH_METHODS: &[&str] = &["gen", "gen_range", "random", "random_range", "sample"];

/// A type of random generator (`RngCore`, `CryptoRngCore`, `StdRng`, `OsRng`, `ThreadRng`, a
/// project's `BoxRng`), by its name.
fn rng_type(name: &str) -> bool {
    name.contains("Rng")
}

/// A parameter (or a field a struct pattern binds) that holds a random generator: by its type
/// (`rng: &mut (dyn RngCore + Send)`, `mut rng: BoxRng`, `impl Rng`) or, for a generic one
/// (`rng: &mut R`), by its name (`rng`, `csprng`, `id_rng`).
fn rng_param(name: &str, ty: Option<&Ty>) -> bool {
    ty.is_some_and(|t| t.all().iter().any(|t| rng_type(t.last())))
        || name == "rng"
        || name.ends_with("_rng")
        || name == "csprng"
}

/// The parameters of a function that hold a random generator.
fn rng_params(params: &[Param]) -> HashSet<String> {
    params
        .iter()
        .filter(|p| p.fields.is_empty() && rng_param(&p.name, p.ty.as_ref()))
        .map(|p| p.name.clone())
        .collect()
}

/// A random generator as a value: a variable holding one (`&mut rng`), or a generator type that
/// is its own value (`OsRng`, `rand::rngs::OsRng`). The generator itself is not a value made per
/// call (a function given `&mut rng` may write the caller's data); what is made from it is.
fn is_rng(e: &Ex, scope: &Scope) -> bool {
    match bare(e) {
        Ex::Path(p, _) if p.len() == 1 && scope.rngs.contains(&p[0]) => true,
        Ex::Path(p, _) => p
            .last()
            .is_some_and(|l| rng_type(l) && l.starts_with(char::is_uppercase)),
        _ => false,
    }
}

/// A value made from a random generator given to the call that makes it:
/// `Ulid::from_datetime_with_rng(clock.now(), &mut rng)`, `Alphanumeric.sample_string(&mut rng,
/// 32)`, `TokenType::AccessToken.generate(&mut rng)`. Not a call of one of the project's
/// functions that only takes the generator along (`repo.user().add(&mut rng, &clock, username)`
/// writes a row keyed on what the caller sent), unless that function is a maker itself.
fn made_with_rng(name: &str, args: &[Ex], scope: &Scope) -> bool {
    args.iter().any(|a| is_rng(a, scope))
        && (scope.makers.contains(name) || !scope.own_fns.contains(name))
}

/// A call being followed: its line and the name called, and whether an argument holds a value
/// the caller makes per request.
#[derive(Clone, Copy)]
struct Site<'a> {
    line: Line,
    name: &'a str,
    fresh_args: bool,
    /// The arguments, and whether the call is written as a path (`Type::method(&x, ..)`), so
    /// that a method's receiver is the first of them.
    args: &'a [Ex],
    path_call: bool,
}

impl<'a> Site<'a> {
    fn new(line: Line, name: &'a str, args: &'a [Ex], scope: &Scope) -> Self {
        Site {
            line,
            name,
            fresh_args: args
                .iter()
                .any(|a| fresh(a, scope) || made_here(a, scope, 0)),
            args,
            path_call: false,
        }
    }
}

/// Does `e` hold a value made for this request (`Uuid::new_v4()`, `Utc::now()`, `rng.gen()`,
/// `nanoid!()`), in part or whole?
fn fresh(e: &Ex, scope: &Scope) -> bool {
    search(vec![e], 2_000, false, |e| {
        let hit = match e {
            // a variable holding one, or a maker passed as a function
            // (`body.id.unwrap_or_else(Uuid::new_v4)`)
            Ex::Path(p, _) => {
                (p.len() == 1 && (scope.fresh.contains(&p[0]) || scope.created.contains(&p[0])))
                    || (p.len() >= 2 && p.last().is_some_and(|l| FRESH_CALLS.contains(&l.as_str())))
            }
            // The id of a row this request created (`user.id`); its other fields
            // (`user.email`) may be the caller's.
            Ex::Field(base, name) if matches!(&**base, Ex::Path(p, _) if p.len() == 1 && scope.created.contains(&p[0])) =>
            {
                return if matches!(name.as_str(), "id" | "_id" | "uuid") {
                    Visit::Found
                } else {
                    Visit::Skip
                };
            }
            Ex::Call(f, args, _) => match &**f {
                Ex::Path(p, _) => {
                    let last = p.last().map(String::as_str).unwrap_or("");
                    FRESH_CALLS.contains(&last)
                        || (last == "new" && p.iter().any(|s| s == "Ulid" || s == "Nanoid"))
                        || scope.makers.contains(last)
                        || made_with_rng(last, args, scope)
                }
                _ => false,
            },
            Ex::Method(recv, name, args, _) => {
                FRESH_METHODS.contains(&name.as_str())
                    || is_rng(recv, scope)
                    || made_with_rng(name, args, scope)
            }
            // (`format!("paste:{id}")` names what it captures in its string: see
            // https://doc.rust-lang.org/std/fmt/#named-parameters)
            Ex::Macro { path, lits, .. } => {
                path.last().is_some_and(|m| m == "nanoid")
                    || path.last().is_some_and(|m| m == "format")
                        && lits.first().is_some_and(|l| {
                            super::parse::captured_names(l)
                                .iter()
                                .any(|n| scope.fresh.contains(n) || scope.created.contains(n))
                        })
            }
            _ => false,
        };
        if hit { Visit::Found } else { Visit::Enter }
    })
}

/// The project's functions whose value is made per call (`fn generate_random_id(prefix: &str) ->
/// String { let uuid = Uuid::new_v4(); format!("{prefix}_{uuid}") }`): their last expression is
/// such a value. By name; not constructors and conversions (`new`, `from`, `default`), whose
/// value is more than an id.
fn fresh_makers(model: &Model, own_fns: &Rc<HashSet<String>>) -> HashSet<String> {
    let mut out = HashSet::new();
    for def in &model.fns {
        let name = def.func.name.as_str();
        if matches!(
            name,
            "new" | "default" | "from" | "into" | "clone" | "build" | "main"
        ) {
            continue;
        }
        let Some(Stmt::Expr(last, _)) = def.func.body.last() else {
            continue;
        };
        let mut scope = Scope::new(def.module, def.imp, None);
        scope.own_fns = own_fns.clone();
        scope.rngs = rng_params(&def.func.params);
        for st in &def.func.body {
            match st {
                Stmt::Let {
                    names,
                    init: Some(init),
                    ..
                } if names.len() == 1 && fresh(init, &scope) => {
                    scope.fresh.insert(names[0].clone());
                }
                // `rng.fill_bytes(&mut buf)`
                Stmt::Expr(Ex::Method(_, m, args, _), _)
                    if matches!(m.as_str(), "fill_bytes" | "try_fill_bytes" | "fill")
                        && let Some(Ex::Path(p, _)) = args.first()
                        && p.len() == 1 =>
                {
                    scope.fresh.insert(p[0].clone());
                }
                _ => {}
            }
        }
        if fresh(last, &scope) {
            out.insert(name.to_string());
        }
    }
    out
}

/// Does `e` hold a value made per request only when the caller's is missing
/// (`body.id.unwrap_or_else(Uuid::new_v4)`, a variable holding one)?
fn fresh_fallback(e: &Ex, scope: &Scope) -> bool {
    match e {
        Ex::Path(p, _) => p.len() == 1 && scope.fallback.contains(&p[0]),
        Ex::Method(recv, name, args, _) => {
            matches!(
                name.as_str(),
                "unwrap_or_else" | "unwrap_or" | "or_else" | "or"
            ) && !fresh(recv, scope)
                && args.iter().any(|a| fresh(a, scope))
        }
        _ => false,
    }
}

/// A field value that writes nothing of the caller's: `NotSet`, a default.
fn unset(e: &Ex) -> bool {
    match e {
        Ex::Path(p, _) => p.last().is_some_and(|l| l == "NotSet"),
        Ex::Call(f, args, _) => {
            args.is_empty()
                && matches!(&**f, Ex::Path(p, _) if p.last().is_some_and(|l| l == "default"))
        }
        _ => false,
    }
}

/// The fields of a record literal that carry the caller's data.
fn record_keys(values: &[Ex], names: &[String], scope: &Scope) -> Vec<String> {
    names
        .iter()
        .zip(values)
        .filter(|(_, v)| !unset(v) && !fresh(v, scope))
        .map(|(n, _)| n.clone())
        .collect()
}

/// The row a caller builds for a callee that inserts it whole (a struct literal, a variable bound
/// to one, diesel's `col.eq(v)` tuple): the columns a retry writes again (see [`values_keys`]),
/// and those of them that are the request's: not a value a call here made (`activity.id()`); a
/// row's id a call made, or one whose value is not in view, is no key a retry sends again.
fn caller_row(arg: &Ex, scope: &Scope) -> Option<(Vec<String>, Vec<String>)> {
    let mut keys = values_keys(bare(arg), scope)?;
    let mut request = Vec::new();
    match bare(arg) {
        Ex::Struct(_, values, fields) => {
            for (f, v) in fields.iter().zip(values.iter()) {
                if !made_here(v, scope, 0) {
                    request.push(f.clone());
                } else if crate::text::names_a_made_value(f) {
                    keys.retain(|k| k != f);
                }
            }
            request.retain(|k| keys.contains(k));
        }
        _ => keys.retain(|k| !crate::text::names_a_made_value(k)),
    }
    Some((keys, request))
}

/// The columns a diesel `.values(..)` writes with a value the caller would send again:
/// `(pages::space_id.eq(id), pages::slug_id.eq(nanoid!()))` → `space_id`; a struct literal, or a
/// variable bound to one (`&page`), by its fields. `None` where they cannot be seen.
fn values_keys(e: &Ex, scope: &Scope) -> Option<Vec<String>> {
    let column = |e: &Ex| match e {
        Ex::Method(col, name, args, _) if name == "eq" && args.len() == 1 => match &**col {
            Ex::Path(p, _) if p.len() >= 2 => {
                Some((!fresh(&args[0], scope)).then(|| p[p.len() - 1].clone()))
            }
            _ => None,
        },
        _ => None,
    };
    match e {
        Ex::List(items) => {
            let mut keys = Vec::new();
            for item in items {
                keys.extend(column(item)?);
            }
            Some(keys)
        }
        Ex::Method(..) => column(e).map(|k| k.into_iter().collect()),
        Ex::Struct(_, values, fields) if values.len() == fields.len() => {
            Some(record_keys(values, fields, scope))
        }
        Ex::Path(p, _) if p.len() == 1 => scope.literals.get(&p[0]).cloned(),
        _ => None,
    }
}

/// The root of a call chain and the method calls on it.
/// The fields of the struct literals a chain's calls are given, dotted one level deep, with their
/// literal values (`mode: Some(CheckoutSessionMode::Setup)` → `mode` = `setup`), for the harm
/// judgement's provider semantics.
fn arg_fields(c: &Chain) -> Vec<(String, Option<String>)> {
    fn lit(e: &Ex) -> Option<String> {
        match e {
            Ex::Lit(s) => Some(s.clone()),
            Ex::Path(segs, _) => segs.last().map(|s| s.to_ascii_lowercase()),
            Ex::Call(f, args, _) if matches!(&**f, Ex::Path(p, _) if p.last().is_some_and(|s| s == "Some")) => {
                args.first().and_then(lit)
            }
            _ => None,
        }
    }
    fn unwrap(e: &Ex) -> &Ex {
        match e {
            Ex::Call(f, args, _)
                if args.len() == 1
                    && matches!(&**f, Ex::Path(p, _) if p.last().is_some_and(|s| s == "Some")) =>
            {
                unwrap(&args[0])
            }
            Ex::Other(v) if v.len() == 1 => unwrap(&v[0]),
            _ => e,
        }
    }
    let mut out = Vec::new();
    // A request body given as pairs (`.form(&[("grant_type", "refresh_token")])`,
    // `.query(&[..])`): its fields under the method's name, as `body.x` is in TypeScript.
    for (method, args, _) in &c.links {
        // `.body("grant_type=client_credentials")`: a form-encoded string.
        if *method == "body"
            && let Some(Ex::Lit(text)) = args.first().map(unwrap)
            && let Some(fields) = crate::catalog::harm::form_fields(text)
        {
            out.extend(
                fields
                    .into_iter()
                    .map(|(k, v)| (format!("body.{k}"), Some(v))),
            );
        }
        if !matches!(*method, "form" | "query" | "json") {
            continue;
        }
        for a in args.iter() {
            let Ex::List(pairs) = unwrap(a) else { continue };
            for p in pairs {
                if let Ex::List(kv) = unwrap(p)
                    && let [Ex::Lit(k), v] = kv.as_slice()
                {
                    out.push((format!("{method}.{k}"), lit(v)));
                }
            }
        }
    }
    let args = c
        .root_args
        .iter()
        .chain(c.links.iter().flat_map(|(_, a, _)| a.iter()));
    for a in args {
        let Ex::Struct(_, values, names) = unwrap(a) else {
            continue;
        };
        for (k, v) in names.iter().zip(values) {
            out.push((k.clone(), lit(v)));
            if let Ex::Struct(_, inner, inner_names) = unwrap(v) {
                out.extend(
                    inner_names
                        .iter()
                        .zip(inner)
                        .map(|(k2, v2)| (format!("{k}.{k2}"), lit(v2))),
                );
            }
        }
    }
    out
}

/// Does a value come from a call made in the request (`fetch_invoice(..).await?`,
/// `resp.json::<Invoice>().await?.pr`, a variable bound to one), not from what the client sent?
/// Conversions of a value (`clone`, `to_string`, `into`) keep where it came from.
fn made_here(e: &Ex, scope: &Scope, depth: usize) -> bool {
    const KEEPS: &[&str] = &[
        "clone",
        "to_string",
        "to_owned",
        "into",
        "as_str",
        "as_ref",
        "unwrap",
        "expect",
        "trim",
        "to_lowercase",
        "to_uppercase",
        "unwrap_or_default",
        // a failure mapped, a value parsed or decoded: still what the client sent
        "map_err",
        "ok_or",
        "ok_or_else",
        "parse",
        "to_vec",
    ];
    // `hex::decode(&body.hash)`, `Uuid::parse_str(&body.id)`: the client's value decoded
    const DECODES: &[&str] = &["decode", "from_hex", "from_str", "parse_str", "try_from"];
    if depth > 16 {
        return false;
    }
    match e {
        Ex::Method(recv, name, _, _) if KEEPS.contains(&name.as_str()) => {
            made_here(recv, scope, depth + 1)
        }
        Ex::Method(..) => true,
        Ex::Call(f, args, _) => match &**f {
            // `Some(x)`, `String::from(x)`: the value inside
            Ex::Path(p, _)
                if p.last().is_some_and(|s| {
                    matches!(s.as_str(), "Some" | "from" | "Ok") || DECODES.contains(&s.as_str())
                }) =>
            {
                args.first().is_some_and(|a| made_here(a, scope, depth + 1))
            }
            _ => true,
        },
        Ex::Field(base, _) => made_here(base, scope, depth + 1),
        Ex::Path(p, _) if p.len() == 1 => scope.made.contains(&p[0]),
        Ex::Other(v) if v.len() == 1 => made_here(&v[0], scope, depth + 1),
        _ => false,
    }
}

/// An `UPDATE .. SET col = $n` whose `n`-th bound value (`.bind(..)`) changes field `col` of a
/// row the request looked up (`wallet.balance + body.amount`).
fn read_modify_write(c: &Chain, sql: &str, scope: &Scope) -> bool {
    let binds = Effects::binds(c);
    crate::sql::sql_set_binds(sql)
        .iter()
        .any(|(column, i)| match binds.get(*i) {
            // (or a variable holding it: `let new_balance = existing.balance + amount;`)
            Some(Ex::Path(p, _)) if p.len() == 1 => scope.row_sums.get(&p[0]) == Some(column),
            Some(e) => row_operand(e, scope).as_ref() == Some(column),
            None => false,
        })
}

/// The column of a row a lookup found that `e` combines with another value (`existing.balance +
/// amount`: `balance`).
fn row_operand(e: &Ex, scope: &Scope) -> Option<String> {
    let Ex::Other(operands) = e else { return None };
    if operands.len() != 2 {
        return None;
    }
    operands.iter().find_map(|o| {
        let o = match o {
            Ex::Other(inner) if inner.len() == 1 => &inner[0],
            o => o,
        };
        match o {
            Ex::Field(base, f)
                if matches!(&**base, Ex::Path(p, _) if p.len() == 1 && scope.lookups.contains_key(&p[0])) =>
            {
                Some(f.clone())
            }
            _ => None,
        }
    })
}

/// The fields of a struct literal argument whose value a call in the request made (see
/// [`made_here`]).
fn made_fields(c: &Chain, scope: &Scope) -> Vec<String> {
    let args = c
        .root_args
        .iter()
        .chain(c.links.iter().flat_map(|(_, a, _)| a.iter()));
    let mut out = Vec::new();
    for a in args {
        if let Ex::Struct(_, values, names) = a {
            for (k, v) in names.iter().zip(values) {
                if made_here(v, scope, 0) {
                    out.push(k.clone());
                }
            }
        }
    }
    out
}

/// The URL an HTTP call is made to, as written: the first string literal of its calls (a
/// `format!` gives its literal parts), or the URL a local variable it is given was bound to.
fn call_url(c: &Chain, scope: &Scope) -> Option<String> {
    c.root_args
        .iter()
        .chain(c.links.iter().flat_map(|(_, a, _)| a.iter()))
        .find_map(|a| match a {
            Ex::Lit(s) => Some(s.clone()),
            Ex::Macro { lits, .. } if !lits.is_empty() => Some(lits.join("")),
            Ex::Path(p, _) if p.len() == 1 => scope.urls.get(&p[0]).cloned(),
            _ => None,
        })
        .or_else(|| c.lits.first().cloned())
}

/// A URL written as a literal or a `format!` whose text has a path (`"https://api.x.com/v1"`,
/// `format!("{}/v2/checkout/orders", base)`), as [`call_url`] reads one in place.
fn written_url(e: &Ex) -> Option<String> {
    let text = match e {
        Ex::Lit(s) => s.clone(),
        Ex::Macro { path, lits, .. }
            if path.last().is_some_and(|l| l == "format") && !lits.is_empty() =>
        {
            lits.join("")
        }
        _ => return None,
    };
    (text.contains("://") || text.starts_with('/') || text.contains("}/")).then_some(text)
}

struct Chain<'e> {
    /// The external crate the chain starts from, when known.
    origin: Option<String>,
    /// Path segments after the crate, then each method name.
    segs: Vec<String>,
    root_name: String,
    /// String literals of the root call or macro.
    lits: Vec<String>,
    links: Vec<(&'e str, &'e [Ex], Line)>,
    /// The arguments of the root call (`insert_into(twofactor::table)`).
    root_args: &'e [Ex],
    /// The expressions a root macro is given after its literals (`query!("..", email, code)`):
    /// the values its statement binds, in order.
    macro_args: &'e [Ex],
    /// The SeaORM entity written (its module's name), when the root names one.
    entity: Option<String>,
    /// The fields of the record written, when the chain shows them.
    record: Option<Vec<String>>,
    /// The local variable the chain starts from (`active` in `active.update(db)`).
    root_var: Option<String>,
    /// What a SeaORM `ActiveModel { .. }` literal the chain starts from sets, as
    /// `Effect::update_keys` has it.
    written: Vec<(String, Option<String>)>,
    /// The arguments a prepared statement is run with (`stmt.execute(params![..])`,
    /// `client.execute(&stmt, &[..])` after the statement): the values it binds.
    run_args: Option<&'e [Ex]>,
    line: Line,
    text: String,
}

impl<'e> Chain<'e> {
    /// A chain with nothing read yet, written `text`.
    fn blank(text: String, line: Line) -> Self {
        Chain {
            origin: None,
            segs: vec![],
            root_name: String::new(),
            lits: vec![],
            links: vec![],
            root_args: &[],
            macro_args: &[],
            entity: None,
            record: None,
            root_var: None,
            written: vec![],
            run_args: None,
            line,
            text,
        }
    }
}

pub struct Effects<'m, 'a> {
    model: &'m Model<'a>,
    catalog: &'m Catalog,
    /// The Rust sinks, each with its package names as Cargo writes them in code (`-` → `_`).
    sinks: Vec<(&'m Sink, Vec<String>)>,
    memo: RefCell<HashMap<FnId, Memo>>,
    /// Summaries cut by the depth bound, by function and the depth left when it was entered
    /// (see [`Effects::summary`]).
    cut_memo: RefCell<HashMap<(FnId, usize), Rc<Summary>>>,
    /// How many calls deep to follow (`call_depth` in retrysafe.toml), as the linker does.
    max_depth: usize,
    depth: std::cell::Cell<usize>,
    /// Whether the summary under way was cut by the depth bound somewhere below it.
    truncated: std::cell::Cell<bool>,
    /// The first function not followed because calls went deeper than `max_depth`.
    cut: std::cell::Cell<Option<FnId>>,
    /// The project's functions that return a value made per call (see [`fresh_makers`]).
    makers: Rc<HashSet<String>>,
    /// The names of the project's functions.
    own_fns: Rc<HashSet<String>>,
    /// The statements of queries a build step generates functions for (see `generated_sql`).
    queries: &'m super::generated_sql::Queries,
}

impl<'m, 'a> Effects<'m, 'a> {
    pub fn new(
        model: &'m Model<'a>,
        catalog: &'m Catalog,
        call_depth: Option<u32>,
        queries: &'m super::generated_sql::Queries,
    ) -> Self {
        let own_fns: Rc<HashSet<String>> =
            Rc::new(model.fns.iter().map(|d| d.func.name.clone()).collect());
        Effects {
            model,
            catalog,
            queries,
            sinks: catalog
                .sinks
                .iter()
                .filter(|s| s.lang == crate::catalog::Lang::Rust)
                .map(|s| (s, s.packages.iter().map(|p| norm(p)).collect()))
                .collect(),
            memo: RefCell::new(HashMap::new()),
            cut_memo: RefCell::new(HashMap::new()),
            max_depth: call_depth.map_or(crate::link::calls::DEFAULT_CALL_DEPTH, |d| d as usize),
            depth: std::cell::Cell::new(0),
            truncated: std::cell::Cell::new(false),
            cut: std::cell::Cell::new(None),
            makers: Rc::new(fresh_makers(model, &own_fns)),
            own_fns,
        }
    }

    /// The first function left unfollowed at the depth bound, and the bound.
    pub fn depth_cut(&self) -> Option<(FnId, usize)> {
        self.cut.get().map(|f| (f, self.max_depth))
    }

    fn location(&self, m: ModId, line: Line) -> Location {
        Location::new(self.model.file_of(m), line)
    }

    /// What function `f` does, memoised. A summary that the depth bound cut somewhere below is
    /// incomplete, and what it holds depends on how many calls deep were left when `f` was
    /// entered and on nothing else: it is kept by function and that depth, so a function
    /// reached by many paths is walked once per depth at most, not once per path (which is
    /// exponential in a large, deep call graph). A complete summary serves every depth.
    pub fn summary(&self, f: FnId) -> Rc<Summary> {
        match self.memo.borrow().get(&f) {
            Some(Memo::Done(s)) => return s.clone(),
            Some(Memo::Busy) => return Rc::new(Summary::default()),
            None => {}
        }
        let def = &self.model.fns[f];
        if self.depth.get() > self.max_depth {
            self.truncated.set(true);
            if self.cut.get().is_none() {
                self.cut.set(Some(f));
            }
            // What lies deeper is not known, which is not "nothing".
            return Rc::new(Summary {
                unfollowed: vec![(
                    crate::link::calls::beyond_call_depth(&def.func.name, self.max_depth),
                    self.location(def.module, def.func.line),
                )],
                ..Summary::default()
            });
        }
        let left = self.max_depth - self.depth.get();
        if let Some(s) = self.cut_memo.borrow().get(&(f, left)) {
            self.truncated.set(true);
            return s.clone();
        }
        let outer_truncated = self.truncated.replace(false);
        self.memo.borrow_mut().insert(f, Memo::Busy);
        self.depth.set(self.depth.get() + 1);
        let mut scope = Scope::new(def.module, def.imp, Some(f));
        scope.makers = self.makers.clone();
        scope.own_fns = self.own_fns.clone();
        self.bind_params(&def.func.params, &mut scope);
        scope.params = def
            .func
            .params
            .iter()
            .filter(|p| p.name != "self")
            .map(|p| p.name.clone())
            .collect();
        let mut out = Summary::default();
        for k in &def.func.key_obs {
            out.key_obs.push(KeyObs {
                obs: k.obs.clone(),
                at: self.location(def.module, k.line),
                ctx: k.ctx,
                order: k.line,
            });
        }
        self.stmts(&def.func.body, &mut scope, &mut out);
        self.unrun_statements(&scope, &mut out);
        mark_windows(&mut out);
        finish(&mut out);
        let s = Rc::new(out);
        self.depth.set(self.depth.get() - 1);
        if self.truncated.get() {
            self.memo.borrow_mut().remove(&f);
            self.cut_memo.borrow_mut().insert((f, left), s.clone());
        } else {
            self.memo.borrow_mut().insert(f, Memo::Done(s.clone()));
        }
        self.truncated.set(self.truncated.get() || outer_truncated);
        s
    }

    /// A closure used as a handler or middleware.
    pub fn closure_summary(&self, module: ModId, imp: Option<ImplId>, ex: &Ex) -> Summary {
        let mut scope = Scope::new(module, imp, None);
        scope.makers = self.makers.clone();
        scope.own_fns = self.own_fns.clone();
        let mut out = Summary::default();
        if let Ex::Closure { params, body, .. } = ex {
            self.bind_params(params, &mut scope);
            self.walk(body, &mut scope, &mut out, false);
        }
        self.unrun_statements(&scope, &mut out);
        mark_windows(&mut out);
        finish(&mut out);
        out
    }

    fn bind_params(&self, params: &[Param], scope: &mut Scope) {
        for p in params {
            mark(
                &mut scope.rngs,
                &p.name,
                p.fields.is_empty() && rng_param(&p.name, p.ty.as_ref()),
            );
            if p.name == "self" {
                if let Some(i) = scope.imp {
                    scope.vars.insert("self".into(), self.self_type(i));
                }
                continue;
            }
            if let Some(ty) = &p.ty {
                let ty = if p.unwrap {
                    ty.args.first().cloned().unwrap_or_default()
                } else {
                    ty.clone()
                };
                let r = self.resolve_ty(&ty, scope.module, scope.imp);
                if !p.fields.is_empty() {
                    if let Some(r) = r {
                        self.bind_fields(&r, &p.fields, scope);
                    }
                    continue;
                }
                match r {
                    Some(r) => {
                        scope.vars.insert(p.name.clone(), r);
                    }
                    None => {
                        scope.names.insert(p.name.clone(), ty.last().to_string());
                    }
                }
            }
        }
    }

    /// The names a struct pattern binds (`CallContext { mut repo, clock, .. }`, the struct of
    /// type `ty`): each has the type its field declares (as written, when it does not resolve).
    fn bind_fields(&self, ty: &Res, fields: &[(String, String)], scope: &mut Scope) {
        let Res::Type(m, name) = ty else { return };
        let Some(declared) = self.model.modules[*m].fields.get(name) else {
            return;
        };
        for (field, bound) in fields {
            scope.vars.remove(bound);
            scope.names.remove(bound);
            let Some((_, t)) = declared.iter().find(|(n, _)| n == field) else {
                continue;
            };
            mark(&mut scope.rngs, bound, rng_param(field, Some(t)));
            match self.resolve_ty(t, *m, None) {
                Some(r) => {
                    scope.vars.insert(bound.clone(), r);
                }
                None => {
                    scope.names.insert(bound.clone(), t.last().to_string());
                }
            }
        }
    }

    /// What `self` is in the methods of impl `i`: the impl's type; in a blanket impl
    /// (`impl<T: JobRepository + ?Sized> JobRepositoryExt for T`), a value of the trait its
    /// type parameter is bounded by, whose methods `self.schedule(..)` runs.
    fn self_type(&self, i: ImplId) -> Res {
        let imp = &self.model.impls[i];
        imp.imp
            .blanket
            .iter()
            .flatten()
            .map(|b| self.model.resolve(imp.module, b))
            .find(|r| matches!(r, Res::Trait(..)))
            .unwrap_or_else(|| self.model.impl_type(i))
    }

    /// Whether `ty` (written in module `m`) is one of the [`TRANSPARENT`] wrappers, also
    /// under a name its import gives it (`use tokio::sync::MutexGuard as TokioMutexGuard`).
    fn transparent(&self, ty: &Ty, m: ModId) -> bool {
        TRANSPARENT.contains(&ty.last())
            || (ty.path.len() == 1
                && !ty.args.is_empty()
                && matches!(self.model.resolve(m, &ty.path),
                    Res::Ext(p) if p.last().is_some_and(|l| TRANSPARENT.contains(&l.as_str()))))
    }

    /// A type, through `Option`/`Arc`/`web::Data`/… wrappers.
    /// The project type, trait or outside type `ty` names, through wrappers (`Arc<..>`,
    /// `web::Data<..>`) and type aliases (`type AppData = web::Data<Arc<Data>>`).
    fn resolve_ty(&self, ty: &Ty, m: ModId, imp: Option<ImplId>) -> Option<Res> {
        use std::borrow::Cow;
        let (mut t, mut m): (Cow<Ty>, ModId) = (Cow::Borrowed(ty), m);
        for _ in 0..8 {
            for _ in 0..8 {
                if self.transparent(&t, m)
                    && let Some(a) = t.args.first()
                {
                    t = Cow::Owned(a.clone());
                    continue;
                }
                break;
            }
            if t.path.is_empty() {
                return None;
            }
            if t.path.len() == 1 && t.path[0] == "Self" {
                return imp.map(|i| self.model.impl_type(i));
            }
            match self.model.resolve(m, &t.path) {
                Res::Type(m2, name) => match self.model.modules[m2].aliases.get(&name) {
                    // a generic alias with the arguments of its use filled in: one that
                    // wraps a parameter (`type CoreResult<T> = Result<T, CoreError>`) is the
                    // argument, named where the alias is used
                    Some(aliased) if !t.args.is_empty() => {
                        let mut head: &Ty = aliased;
                        while self.transparent(head, m2)
                            && let Some(a) = head.args.first()
                        {
                            head = a;
                        }
                        let param = match head.path.as_slice() {
                            [one] => one
                                .strip_prefix('$')
                                .and_then(|n| n.parse::<usize>().ok())
                                .and_then(|i| t.args.get(i)),
                            _ => None,
                        };
                        if let Some(arg) = param {
                            t = Cow::Owned(arg.clone());
                        } else {
                            let mut filled = (*aliased).clone();
                            fill_params(&mut filled, &t.args, 0);
                            (t, m) = (Cow::Owned(filled), m2);
                        }
                    }
                    Some(aliased) => (t, m) = (Cow::Borrowed(*aliased), m2),
                    None => return Some(Res::Type(m2, name)),
                },
                r @ (Res::Trait(..) | Res::Ext(_)) => return Some(r),
                _ => return None,
            }
        }
        None
    }

    /// The type of a `static` a path names (`SMTP_CLIENT`, `crate::config::SMTP_CLIENT`), as
    /// declared, through the cells and wrappers that hold it (`Lazy<Option<AsyncSmtpTransport<
    /// Tokio1Executor>>>` is a lettre transport): a type of the project, or of a crate the code
    /// depends on (not `std`'s atomics and maps, nor a primitive).
    fn static_type(&self, p: &[String], scope: &Scope) -> Option<Res> {
        let Res::Const(m, name) = self.resolve(p, scope) else {
            return None;
        };
        let ty = self.model.modules[m].static_types.get(&name)?;
        match self.resolve_ty(ty, m, None)? {
            r @ (Res::Type(..) | Res::Trait(..)) => Some(r),
            Res::Ext(full)
                if full
                    .first()
                    .is_some_and(|c| self.model.crate_of(m).deps.contains_key(&norm(c))) =>
            {
                Some(Res::Ext(full))
            }
            _ => None,
        }
    }

    fn ret_type(&self, f: FnId) -> Option<Res> {
        let def = &self.model.fns[f];
        let ty = def.func.ret.as_ref()?;
        self.resolve_ty(ty, def.module, def.imp)
    }

    fn field_type(&self, ty: &Res, field: &str) -> Option<Res> {
        let Res::Type(m, name) = ty else { return None };
        let fields = self.model.modules[*m].fields.get(name)?;
        let (_, t) = fields.iter().find(|(n, _)| n == field)?;
        self.resolve_ty(t, *m, None)
    }

    /// Does a sink of the catalogue name the crate module `m` calls `code` (by that name, or by
    /// its package's when Cargo.toml renames the dependency)?
    fn sink_crate(&self, m: ModId, code: &str) -> bool {
        let package = self.model.crate_of(m).deps.get(code);
        self.sinks.iter().any(|(_, pk)| {
            pk.iter()
                .any(|p| p == code || package.is_some_and(|pkg| p == pkg))
        })
    }

    /// The type of an expression, where cheap to know.
    fn type_of(&self, e: &Ex, scope: &Scope, depth: usize) -> Option<Res> {
        if depth > 12 {
            return None;
        }
        match e {
            Ex::Path(p, _) if p.len() == 1 && scope.vars.contains_key(&p[0]) => {
                scope.vars.get(&p[0]).cloned()
            }
            Ex::Path(p, _) => self.static_type(p, scope),
            Ex::Field(b, f) => {
                let t = self.type_of(b, scope, depth + 1)?;
                self.field_type(&t, f)
            }
            // a SeaORM select run for rows (`credential::Entity::find_by_id(id).one(db)`): the
            // entity's `Model`
            Ex::Method(_, name, _, _)
                if matches!(name.as_str(), "one" | "all")
                    && let Some(m) = self.selected_entity(e, scope, depth) =>
            {
                Some(Res::Type(m, "Model".into()))
            }
            // a struct written out, of the project's, or of a crate a sink names (`Mailgun {
            // api_key, .. }`; another crate's, an entity crate out of view, is matched by name)
            Ex::Struct(p, ..) => match self.resolve(p, scope) {
                r @ Res::Type(..) => Some(r),
                Res::Ext(full)
                    if full
                        .first()
                        .is_some_and(|c| self.sink_crate(scope.module, &norm(c))) =>
                {
                    Some(Res::Ext(full))
                }
                _ => None,
            },
            Ex::Call(func, args, _) => {
                let Ex::Path(p, _) = &**func else { return None };
                let r = self.resolve(p, scope);
                let fns = self.fns_of(&r);
                if let Some(&f) = fns.first() {
                    return self.ret_type(f);
                }
                // `Arc::clone(&state)`, `Arc::make_mut(&mut sender)`, `Rc::new(x)`: the value
                // behind the pointer, as a variable's type is read through it
                if let Res::Ext(full) = &r
                    && let [.., ptr, f] = full.as_slice()
                    && matches!(ptr.as_str(), "Arc" | "Rc")
                    && matches!(
                        f.as_str(),
                        "new" | "clone" | "make_mut" | "get_mut" | "as_ref"
                    )
                {
                    return self.type_of(args.first()?, scope, depth + 1);
                }
                match r {
                    Res::Assoc(ty, name)
                        if matches!(name.as_str(), "new" | "default" | "builder") =>
                    {
                        Some(*ty)
                    }
                    Res::Ext(mut p) if p.len() >= 2 => {
                        // `reqwest::Client::new()` -> reqwest::Client
                        let last = p.pop()?;
                        let first = p.last()?.chars().next()?;
                        (first.is_uppercase() && !last.chars().next()?.is_uppercase())
                            .then_some(Res::Ext(p))
                    }
                    _ => None,
                }
            }
            Ex::Method(recv, name, args, _) => {
                let t = self.type_of(recv, scope, depth + 1)?;
                if matches!(
                    name.as_str(),
                    "clone"
                        | "unwrap"
                        | "expect"
                        | "to_owned"
                        | "into_inner"
                        | "as_ref"
                        | "lock"
                        | "read"
                        | "write"
                        | "borrow"
                        | "borrow_mut"
                        | "get_ref"
                        | "deref"
                        | "ok_or"
                        | "ok_or_else"
                        // the error changes, the value does not (`?` is lowered away)
                        | "map_err"
                        | "context"
                        | "with_context"
                        | "wrap_err"
                        | "unwrap_or_else"
                        | "unwrap_or_default"
                        // a cell's value, made on first use (`OnceLock`, `OnceCell`, `Lazy`)
                        | "get_or_init"
                        | "get_or_try_init"
                        | "force"
                        | "wait"
                ) {
                    return Some(t);
                }
                match &t {
                    // a trait object's method (`locator.integration()` on `Arc<dyn
                    // ServiceLocator>`): the type the trait declares it returns
                    // (a supertrait's method on a trait object: `repo.user_email()` on `Box<dyn
                    // Repository>` where `trait Repository: RepositoryAccess`)
                    // (a `get()` the type does not define is its cell's: `STORE.get()` on a
                    // `static STORE: OnceLock<Store>`)
                    Res::Type(..) | Res::Trait(..) => {
                        let fns = self.model.methods_of(&t, name);
                        match fns
                            .first()
                            .copied()
                            .or_else(|| self.model.trait_method(&t, name))
                        {
                            Some(f) => self.ret_type(f),
                            None if name == "get" && args.is_empty() => Some(t),
                            None => None,
                        }
                    }
                    // A project trait's method implemented for a crate's type (an extension
                    // trait: `impl ContextExt for async_graphql::Context<'_> { fn state(&self)
                    // -> &BoxState { .. } }`): the type that impl declares it returns. Any other
                    // value from an external crate keeps that crate as its origin.
                    Res::Ext(p) => self
                        .model
                        .methods_of(&t, name)
                        .first()
                        .and_then(|&f| self.ret_type(f))
                        .or_else(|| p.first().map(|c| Res::Ext(vec![c.clone()]))),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The entity module a SeaORM select chain starts from (`X::Entity::find*(..)`, through a
    /// prelude alias too), when it is in the scanned tree.
    fn selected_entity(&self, e: &Ex, scope: &Scope, depth: usize) -> Option<ModId> {
        let mut cur = e;
        for _ in depth..24 {
            match cur {
                // `user.find_related(credential::Entity)`: the related entity is what is read
                Ex::Method(_, name, args, _) if is_related_find(name) => {
                    let Some(Ex::Path(p, _)) = args.first() else {
                        return None;
                    };
                    let r = self.resolve(p, scope);
                    self.model.entity_of(&r)?;
                    let Res::Type(m, _) = r else { return None };
                    return Some(m);
                }
                Ex::Method(recv, ..) => cur = recv,
                Ex::Call(func, _, _) => {
                    let Ex::Path(p, _) = &**func else { return None };
                    if !p.last().is_some_and(|l| l.starts_with("find")) {
                        return None;
                    }
                    let Res::Assoc(ty, _) = self.resolve(p, scope) else {
                        return None;
                    };
                    self.model.entity_of(&ty)?;
                    let Res::Type(m, _) = *ty else { return None };
                    return Some(m);
                }
                _ => return None,
            }
        }
        None
    }

    /// The caller-data fields of a record expression: `Some(Some(keys))` for a SeaORM
    /// `ActiveModel` literal (or a fresh one, `ActiveModel::new()`), `Some(None)` for an
    /// `ActiveModel` whose fields cannot be seen, `None` for anything else.
    fn record_of(&self, e: &Ex, ty: Option<&Ty>, scope: &Scope) -> Option<Option<Vec<String>>> {
        let is_model = |p: &[String]| {
            p.last().is_some_and(|l| l == "ActiveModel")
                || self
                    .model
                    .entity_of(&self.resolve(p, scope))
                    .is_some_and(|(_, t)| t == "ActiveModel")
        };
        let typed = ty.is_some_and(|t| is_model(&t.path));
        match e {
            Ex::Struct(p, values, names) if is_model(p) => {
                Some(Some(record_keys(values, names, scope)))
            }
            Ex::Call(f, args, _) if args.is_empty() => match &**f {
                Ex::Path(p, _)
                    if p.last().is_some_and(|l| l == "new" || l == "default")
                        && (typed || (p.len() >= 2 && is_model(&p[..p.len() - 1]))) =>
                {
                    Some(Some(vec![]))
                }
                _ => typed.then_some(None),
            },
            Ex::Path(p, _) if p.len() == 1 => scope.records.get(&p[0]).cloned(),
            _ => typed.then_some(None),
        }
    }

    fn resolve(&self, p: &[String], scope: &Scope) -> Res {
        if p.first().is_some_and(|s| s == "Self") {
            if let Some(i) = scope.imp {
                let ty = self.model.impl_type(i);
                return match p.len() {
                    1 => ty,
                    2 => Res::Assoc(Box::new(ty), p[1].clone()),
                    _ => Res::Unknown,
                };
            }
            return Res::Unknown;
        }
        self.model.resolve(scope.module, p)
    }

    fn fns_of(&self, r: &Res) -> Vec<FnId> {
        match r {
            Res::Fn(f) => vec![*f],
            Res::Assoc(ty, name) => self.model.methods_of(ty, name),
            _ => vec![],
        }
    }

    fn stmts(&self, stmts: &[Stmt], scope: &mut Scope, out: &mut Summary) {
        // After `if rows == 0 { return .. }` on a claim: the effects from here on run once.
        // With where it is tested, and whether the other runs leave the function with an error.
        let mut claimed_from: Option<(usize, &'static str, Location, bool)> = None;
        scope.blocks += 1;
        // Creates made by earlier statements whose failure fails this function, and the
        // statement being walked: where its effects start, whether it ends in `?`, and the
        // creates before it (its effects run after them).
        let mut creates_here: Vec<Location> = Vec::new();
        let mut pending: Option<Settle> = None;
        // What the `if`s on looked-up rows so far make of the statements after them.
        // With each, where the block's effects stood when it took hold.
        let mut guards: Vec<(Guard, Location, usize)> = Vec::new();
        // Rows this block looked up and requires (`let krate = load_crate(..)?;`): the variable,
        // its tables, where the block's effects stood when it was bound; and the first of them
        // a later statement of this block deletes (`diesel::delete(crates::table.find(krate.id))`).
        let mut required: Vec<(String, Vec<String>, usize)> = Vec::new();
        let mut consumed: Option<(String, usize)> = None;
        for s in stmts {
            if let Some(p) = pending.take() {
                for (g, at, _) in &guards[..p.guards] {
                    g.apply_each(&mut out.effects[p.start..], at);
                }
                claim_call(out, &p, &mut claimed_from);
                self.refusal_call(out, &p, scope, &mut guards);
                settle_statement(out, p, &mut creates_here);
            }
            let fails = match s {
                Stmt::Let { fails, .. } | Stmt::Expr(_, fails) => *fails,
                Stmt::Item(_) => false,
            };
            // `let _ = insert(..).await;`, `insert(..).await.ok();`: the error is dropped.
            let drops = match s {
                Stmt::Let { names, init, .. } => names.is_empty() && init.is_some(),
                Stmt::Expr(Ex::Method(_, m, _, _), false) => matches!(
                    m.as_str(),
                    "ok" | "unwrap_or_default" | "unwrap_or" | "unwrap_or_else"
                ),
                _ => false,
            };
            // `let res = insert(..).await;` .. `res.map_err(..)?`, or `res` handed on as the
            // function's value: the insert's failure fails this function after all.
            let handed_on = match s {
                Stmt::Expr(e, true) => Some(e),
                Stmt::Let {
                    init: Some(e),
                    fails: true,
                    ..
                } => Some(&**e),
                _ => None,
            };
            // (or handed to a function of the project's own that answers its unique violation
            // and returns the rest: `unique_error(res)?`)
            let handed_to = handed_on.and_then(|e| match e {
                Ex::Call(f, args, _) => match &**f {
                    Ex::Path(p, _)
                        if self
                            .fns_of(&self.resolve(p, scope))
                            .iter()
                            .any(|&f| self.answers_unique_violation(f)) =>
                    {
                        args.iter().find_map(|a| match a {
                            Ex::Path(v, _)
                                if v.len() == 1 && scope.var_effects.contains_key(&v[0]) =>
                            {
                                Some(v[0].as_str())
                            }
                            _ => None,
                        })
                    }
                    _ => None,
                },
                _ => None,
            });
            if let Some(r) = handed_on
                .and_then(chain_root)
                .or(handed_to)
                .and_then(|v| scope.var_effects.get(v))
                .cloned()
            {
                for e in out.effects.get_mut(r).into_iter().flatten() {
                    if e.on_failure {
                        continue;
                    }
                    e.fails_request = true;
                    if e.orders_what_follows()
                        && creates_here.len() < 64
                        && !creates_here.contains(&e.location)
                    {
                        creates_here.push(e.location.clone());
                    }
                }
            }
            pending = Some(Settle {
                start: out.effects.len(),
                fails,
                drops,
                before: creates_here.clone(),
                guards: guards.len(),
                claim_calls: out.claim_calls.len(),
                refusal_calls: out.refusal_calls.len(),
            });
            // `let saved = match find(..).await? { Some(row) => update, None => insert };`: the
            // test is the initializer's, as the statement's own would be.
            // (`if exists { update } else { insert }.map_err(..)`: the `if`, then what maps its
            // error)
            let (tested, mapped) = match s {
                Stmt::Expr(e, _) => {
                    let (inner, mapped) = error_mapped(e);
                    (Some(inner), mapped)
                }
                Stmt::Let {
                    init: Some(init), ..
                } if matches!(**init, Ex::Gate { .. } | Ex::FieldTest(_)) => {
                    (Some(&**init), Vec::new())
                }
                _ => (None, Vec::new()),
            };
            if let Some(e) = tested
                && let Some(after) = self.guarded_if(e, scope, out)
            {
                for a in mapped {
                    self.walk(a, scope, out, false);
                }
                let start = out.effects.len();
                guards.extend(after.into_iter().map(|(g, at)| (g, at, start)));
                continue;
            }
            if let Stmt::Expr(
                Ex::Gate {
                    var,
                    failed_when_true,
                    then_exits,
                    then_refuses,
                    line,
                    parts,
                    ..
                },
                _,
            ) = s
                && let Some(what) = scope.claims.get(var).copied()
            {
                if *failed_when_true {
                    for p in parts {
                        self.walk(p, scope, out, false);
                    }
                    if *then_exits && claimed_from.is_none() {
                        let at = self.location(scope.module, *line);
                        claimed_from = Some((out.effects.len(), what, at, *then_refuses));
                    }
                } else {
                    // `if won { .. }`: the `then` branch runs once.
                    for (i, p) in parts.iter().enumerate() {
                        let start = out.effects.len();
                        self.walk(p, scope, out, false);
                        if i == 1 {
                            let at = self.location(scope.module, *line);
                            for e in &mut out.effects[start..] {
                                e.claimed
                                    .get_or_insert_with(|| (what.to_string(), at.clone()));
                            }
                        }
                    }
                }
                continue;
            }
            match s {
                Stmt::Let {
                    names,
                    ty,
                    init,
                    diverge,
                    fields,
                    quota,
                    ..
                } => {
                    let start = out.effects.len();
                    let before = Mark::of(out);
                    // `let (found, total) = try_join!(lookup_a, lookup_b)?`: each name holds
                    // what its future read
                    let joined = init
                        .as_deref()
                        .and_then(joined_futures)
                        .filter(|futures| names.len() > 1 && futures.len() == names.len());
                    // `let mut stmt = conn.prepare_cached(SQL)?;`: the statement runs where
                    // `stmt` is run
                    let prepared = init
                        .as_deref()
                        .filter(|_| names.len() == 1)
                        .and_then(|e| self.prepared_statement(e, scope));
                    if let Some(futures) = joined {
                        for (name, future) in names.iter().zip(futures) {
                            let mark = Mark::of(out);
                            self.walk(future, scope, out, false);
                            match mark.lookup(out) {
                                Some(l) => scope.lookups.insert(name.clone(), l),
                                None => scope.lookups.remove(name),
                            };
                        }
                    } else if let Some(e) = init {
                        let outer = scope.deferred_prepare.take();
                        scope.deferred_prepare = prepared.as_ref().map(|p| p.1);
                        self.walk(e, scope, out, false);
                        scope.deferred_prepare = outer;
                    }
                    for name in names.iter() {
                        if let Some(p) = scope.prepared.remove(name) {
                            // an earlier statement of that name, never run: judged where it was
                            // prepared
                            let mut gone = Scope::new(scope.module, scope.imp, scope.func);
                            gone.prepared.insert(name.clone(), p);
                            self.unrun_statements(&gone, out);
                        }
                    }
                    if let Some((sql, line, callee)) = prepared {
                        scope.prepared.insert(
                            names[0].clone(),
                            Prepared {
                                sql,
                                line,
                                callee,
                                run: std::cell::Cell::new(false),
                            },
                        );
                    }
                    // `let exists = existing.is_some();`: whether the lookup found its row
                    let tested = match init.as_deref() {
                        Some(Ex::Method(recv, m, args, _))
                            if args.is_empty() && matches!(m.as_str(), "is_some" | "is_none") =>
                        {
                            match &**recv {
                                Ex::Path(p, _) if p.len() == 1 => scope.lookups.get(&p[0]).cloned(),
                                _ => None,
                            }
                        }
                        _ => None,
                    };
                    let lookup = if *quota {
                        // (`let full = count(..) >= 10`: a bound, not a row found)
                        None
                    } else if let Some(l) = before.lookup(out) {
                        Some(l)
                    } else if let Some(Ex::Path(p, _)) = init.as_deref()
                        && p.len() == 1
                    {
                        // `let Some(order) = order else { .. }`
                        scope.lookups.get(&p[0]).cloned()
                    } else if let Some(row) = init.as_deref().and_then(count_of_row) {
                        // `let count: i64 = existing.try_get("count")?`: the rows a `SELECT
                        // COUNT(*)` found, tested as a lookup's row is (`if count > 0`)
                        scope.lookups.get(row).cloned()
                    } else {
                        tested
                    };
                    if let Some(e) = diverge {
                        let start = out.effects.len();
                        self.walk(e, scope, out, false);
                        // `let Some(entry) = inserted else { return .. }` on what an insert that
                        // skips an existing row returned (`.on_conflict_do_nothing()
                        // .get_result(c).optional()?`): the `else` leaves, so what follows runs
                        // once, for the request that wrote the row.
                        let claim = match init.as_deref() {
                            Some(Ex::Path(p, _)) if p.len() == 1 => {
                                scope.claims.get(&p[0]).copied()
                            }
                            Some(i) => claim_of(i),
                            None => None,
                        };
                        if !matches!(**e, Ex::Failure(_))
                            && claimed_from.is_none()
                            && let Some(what) = claim
                        {
                            let at = self.location(
                                scope.module,
                                e.line().max(init.as_deref().map_or(0, Ex::line)),
                            );
                            claimed_from = Some((out.effects.len(), what, at, false));
                        }
                        // `let Some(row) = lookup(..)? else { insert(..); .. }`: the `else` runs
                        // when the lookup found nothing, a create of its table there is a
                        // find-or-create (an `Ok(..)` pattern's `else` is the failure path).
                        if !matches!(**e, Ex::Failure(_))
                            && let Some((tables, locked, filter)) = &lookup
                        {
                            let at = self.location(
                                scope.module,
                                e.line().max(init.as_deref().map_or(0, Ex::line)),
                            );
                            Guard::Missing {
                                tables: tables.clone(),
                                locked: *locked,
                                refuses: false,
                                filter: filter.clone(),
                                updated: Vec::new(),
                            }
                            .apply(&mut out.effects[start..], &at);
                        }
                        // `let Some(o) = options else { create(..); return .. }` on a parameter:
                        // the `else` runs only when the caller passes `None`.
                        if !matches!(**e, Ex::Failure(_))
                            && let Some(Ex::Path(p, line)) = init.as_deref()
                            && p.len() == 1
                            && !scope.lookups.contains_key(&p[0])
                            && let Some(g) = self.param_guard(scope, &p[0], &[], false)
                        {
                            let at = self.location(scope.module, *line);
                            g.apply(&mut out.effects[start..], &at);
                        }
                    }
                    // `let (private_key, public_key) = generate_keypair();`: each part of a
                    // value made per call is made per call
                    if names.len() > 1 {
                        let made = init.as_deref().is_some_and(|e| fresh(e, scope));
                        for name in names {
                            mark(&mut scope.fresh, name, made);
                        }
                    }
                    if names.len() == 1 {
                        let name = &names[0];
                        match lookup {
                            Some(l) => scope.lookups.insert(name.clone(), l),
                            None => scope.lookups.remove(name),
                        };
                        // `.is_none()` of the lookup (a variable holding it, or the call)
                        let none = matches!(init.as_deref(), Some(Ex::Method(_, m, a, _)) if m == "is_none" && a.is_empty());
                        mark(
                            &mut scope.missing,
                            name,
                            none && scope.lookups.contains_key(name),
                        );
                        let absent = init.as_deref().is_some_and(|e| tests_absence(e, scope));
                        mark(&mut scope.absent_selects, name, absent);
                        match init.as_deref().and_then(|e| row_operand(e, scope)) {
                            Some(column) => scope.row_sums.insert(name.clone(), column),
                            None => scope.row_sums.remove(name),
                        };
                        let made = init.as_deref().is_some_and(|e| made_here(e, scope, 0));
                        mark(&mut scope.made, name, made);
                        // (only a name bound once: what it holds is what this `let` says)
                        let once = scope
                            .func
                            .is_some_and(|f| !self.model.fns[f].func.rebound.contains(name));
                        match init
                            .as_deref()
                            .filter(|_| once)
                            .and_then(|e| self.variant_value(e, scope, 0))
                        {
                            Some(v) => scope.variants.insert(name.clone(), v),
                            None => scope.variants.remove(name),
                        };
                        scope
                            .var_effects
                            .insert(name.clone(), start..out.effects.len());
                        match init.as_deref().and_then(claim_of) {
                            Some(what) => scope.claims.insert(name.clone(), what),
                            None => scope.claims.remove(name),
                        };
                        let made_here = init.as_deref().is_some_and(|e| fresh(e, scope));
                        let fallback = init.as_deref().is_some_and(|e| fresh_fallback(e, scope));
                        mark(&mut scope.fresh, name, made_here);
                        mark(&mut scope.fallback, name, fallback);
                        let created = out.effects[start..]
                            .iter()
                            .any(|e| e.kind == EffectKind::DbCreate && !e.upsert);
                        mark(&mut scope.created, name, created);
                        match init.as_deref() {
                            Some(Ex::Struct(_, values, fields)) if values.len() == fields.len() => {
                                let keys = record_keys(values, fields, scope);
                                scope.literals.insert(name.clone(), keys)
                            }
                            _ => scope.literals.remove(name),
                        };
                        match init.as_deref() {
                            Some(Ex::Macro { path, lits, .. })
                                if path.last().is_some_and(|l| l == "format")
                                    && let Some(text) = lits
                                        .first()
                                        .and_then(|l| super::consts::format_statement(l)) =>
                            {
                                scope.built_sql.insert(name.clone(), text)
                            }
                            _ => scope.built_sql.remove(name),
                        };
                        match init.as_deref().and_then(written_url) {
                            Some(url) => scope.urls.insert(name.clone(), url),
                            None => scope.urls.remove(name),
                        };
                        match init
                            .as_ref()
                            .and_then(|e| self.record_of(e, ty.as_deref(), scope))
                        {
                            Some(keys) => scope.records.insert(name.clone(), keys),
                            None => scope.records.remove(name),
                        };
                        let written = ty.as_deref().map(|t| t.last().to_string()).or_else(|| {
                            match init.as_deref()? {
                                Ex::Struct(p, ..) => p.last().cloned(),
                                Ex::Call(f, _, _) => match &**f {
                                    Ex::Path(p, _) if p.len() >= 2 => Some(p[p.len() - 2].clone()),
                                    _ => None,
                                },
                                _ => None,
                            }
                        });
                        // `let values = Session::ActiveModel { .. }; values.insert(db)`: the
                        // path before `ActiveModel` names the entity, as in a literal inserted
                        // directly.
                        // `let m = Entity::ActiveModel { status: Set(Status::Open), .. }`: what its
                        // insert or update writes
                        if let Some(Ex::Struct(p, values, fields)) = init.as_deref()
                            && p.last().is_some_and(|l| l == "ActiveModel")
                        {
                            let set: Vec<(String, Option<String>)> = fields
                                .iter()
                                .zip(values.iter())
                                .filter_map(|(f, v)| Some((f.clone(), set_value(v)?)))
                                .collect();
                            scope.sets.insert(name.clone(), set);
                        }
                        match init.as_deref() {
                            Some(Ex::Struct(p, ..))
                                if p.len() >= 2 && p.last().is_some_and(|l| l == "ActiveModel") =>
                            {
                                scope
                                    .record_entities
                                    .insert(name.clone(), p[p.len() - 2].clone())
                            }
                            _ => scope.record_entities.remove(name),
                        };
                        match init.as_deref().and_then(|e| self.select_of(e, scope)) {
                            Some(entity) => scope.selects.insert(name.clone(), entity),
                            None => scope.selects.remove(name),
                        };
                        match init.as_deref().and_then(|e| self.table_query(e, scope)) {
                            Some(q) => scope.table_queries.insert(name.clone(), q),
                            None => scope.table_queries.remove(name),
                        };
                        match written {
                            Some(w) => scope.names.insert(names[0].clone(), w),
                            None => scope.names.remove(&names[0]),
                        };
                        let t = ty
                            .as_ref()
                            .and_then(|t| self.resolve_ty(t, scope.module, scope.imp))
                            .or_else(|| init.as_deref().and_then(|e| self.type_of(e, scope, 0)));
                        // a row of a SeaORM entity that is not in view (or whose path
                        // resolves into another crate): its `Model`, of the entity as the select
                        // names it
                        let row_as_written =
                            init.as_deref().and_then(selected_as_written).filter(|_| {
                                t.as_ref().is_none_or(|t| self.model.entity_of(t).is_none())
                            });
                        match (t, row_as_written) {
                            (_, Some(entity)) => {
                                scope.vars.remove(&names[0]);
                                scope.names.insert(names[0].clone(), "Model".into());
                                scope.record_entities.insert(names[0].clone(), entity);
                            }
                            (Some(t), None) => {
                                scope.vars.insert(names[0].clone(), t);
                            }
                            (None, None) => {
                                scope.vars.remove(&names[0]);
                            }
                        }
                    }
                    // `let CallContext { mut repo, .. } = ctx;`: each name has its field's type
                    if !fields.is_empty() {
                        let t = ty
                            .as_ref()
                            .and_then(|t| self.resolve_ty(t, scope.module, scope.imp))
                            .or_else(|| init.as_deref().and_then(|e| self.type_of(e, scope, 0)));
                        for (_, bound) in fields {
                            scope.vars.remove(bound);
                        }
                        if let Some(t) = t {
                            self.bind_fields(&t, fields, scope);
                        }
                    }
                }
                Stmt::Expr(e, _) => self.walk(e, scope, out, false),
                Stmt::Item(_) => {}
            }
            // A delete, in this statement, of a row the block required: what the block does
            // once the row was found runs only while it exists.
            let start = pending.as_ref().map_or(out.effects.len(), |p| p.start);
            if consumed.is_none()
                && let Some((_, tables, from)) = required.iter().find(|(var, tables, _)| {
                    out.effects[start..].iter().any(|e| {
                        e.kind == EffectKind::DbDelete
                            && e.target
                                .as_deref()
                                .is_some_and(|t| tables.contains(&crate::facts::model_key(t)))
                    }) && mentions_var(s, var)
                        && unconditional(s)
                })
            {
                consumed = Some((tables[0].clone(), *from));
            }
            if let Stmt::Let {
                names, fails: true, ..
            } = s
                && names.len() == 1
                && let Some((tables, ..)) = scope.lookups.get(&names[0])
            {
                required.push((names[0].clone(), tables.clone(), out.effects.len()));
            }
        }
        if let Some(p) = pending.take() {
            for (g, at, _) in &guards[..p.guards] {
                g.apply_each(&mut out.effects[p.start..], at);
            }
            claim_call(out, &p, &mut claimed_from);
            self.refusal_call(out, &p, scope, &mut guards);
            settle_statement(out, p, &mut creates_here);
        }
        for (g, at, start) in &guards {
            g.mark_path(&mut out.effects[*start..], at);
        }
        if let Some((table, from)) = consumed {
            consume(&mut out.effects[from..], table);
        }
        if let Some((start, what, at, refuses)) = claimed_from {
            for e in &mut out.effects[start..] {
                e.claimed
                    .get_or_insert_with(|| (what.to_string(), at.clone()));
            }
            // In the function's own statements: every run that loses the claim fails it.
            if refuses && scope.blocks == 1 && scope.func.is_some() {
                out.refuses_unless.get_or_insert((what, at));
            }
        }
        scope.blocks -= 1;
    }

    /// A statement that ends in `?` on calls of functions that fail when their lookup finds the
    /// row (`assert_name_free(&db, name).await?;`): the statements after it run only when each
    /// lookup missed, as after `if existing.is_some() { return Err(..) }`; in the function's own
    /// statements, the function fails in turn.
    fn refusal_call(
        &self,
        out: &mut Summary,
        p: &Settle,
        scope: &Scope,
        guards: &mut Vec<(Guard, Location, usize)>,
    ) {
        if !p.fails {
            return;
        }
        let calls = out
            .refusal_calls
            .get(p.refusal_calls..)
            .unwrap_or_default()
            .to_vec();
        for ((tables, locked, filter), at) in calls {
            if scope.blocks == 1 && scope.func.is_some() {
                out.refuses_found
                    .get_or_insert_with(|| ((tables.clone(), locked, filter.clone()), at.clone()));
            }
            if guards.len() < 64 {
                let guard = Guard::Missing {
                    tables,
                    locked,
                    refuses: true,
                    filter,
                    updated: Vec::new(),
                };
                guards.push((guard, at, out.effects.len()));
            }
        }
    }

    /// An `if` on what a lookup found (`if existing.is_some() { return Err(..) }`, `if let
    /// Some(user) = found { .. } else { .. }`) or on a field of the row (`if order.status !=
    /// "paid" { return .. }`): walks its branches, marking the effects of each with what they
    /// run under, and returns what it makes of the statements after it (when its `then` leaves
    /// the function). `None` for any other expression.
    fn guarded_if(
        &self,
        e: &Ex,
        scope: &mut Scope,
        out: &mut Summary,
    ) -> Option<Vec<(Guard, Location)>> {
        let mut after = Vec::new();
        match e {
            // `if notify { .. }`, `if let Some(o) = options { .. }` on a parameter
            Ex::Gate {
                var,
                failed_when_true,
                then_exits,
                line,
                parts,
                ..
            } if !scope.claims.contains_key(var)
                && !scope.lookups.contains_key(var)
                && self.param_guard(scope, var, &[], true).is_some() =>
            {
                let at = self.location(scope.module, *line);
                // where the `then` runs, and where the `else` (and what follows a `then` that
                // leaves) does
                let then = self.param_guard(scope, var, &[], !*failed_when_true);
                let otherwise = self.param_guard(scope, var, &[], *failed_when_true);
                for (i, p) in parts.iter().enumerate() {
                    let start = out.effects.len();
                    self.walk(p, scope, out, false);
                    let g = match i {
                        1 => then.as_ref(),
                        2 => otherwise.as_ref(),
                        _ => None,
                    };
                    if let Some(g) = g {
                        g.apply(&mut out.effects[start..], &at);
                    }
                }
                if *then_exits && let Some(g) = otherwise {
                    after.push((g, at));
                }
            }
            Ex::Gate {
                var,
                failed_when_true,
                then_exits,
                then_refuses,
                line,
                parts,
            } if !scope.claims.contains_key(var) => {
                // `if email_taken(&db, &e).await? {`: the call is bound to a name of its own,
                // a lookup when it reads and writes nothing (as `let taken = ..` would be).
                let skip = if var.starts_with(super::parse::CALL_GATE) {
                    let mark = Mark::of(out);
                    self.walk(parts.first()?, scope, out, false);
                    let Some(lookup) = mark.lookup(out) else {
                        for p in &parts[1..] {
                            self.walk(p, scope, out, false);
                        }
                        return Some(after);
                    };
                    scope.lookups.insert(var.clone(), lookup);
                    1
                } else {
                    0
                };
                let (tables, locked, filter) = scope.lookups.get(var)?.clone();
                let found_when_true = *failed_when_true == scope.missing.contains(var);
                let at = self.location(scope.module, *line);
                let missing = |refuses, updated| Guard::Missing {
                    tables: tables.clone(),
                    locked,
                    refuses,
                    filter: filter.clone(),
                    updated,
                };
                let gate_start = out.effects.len();
                for (i, p) in parts.iter().enumerate().skip(skip) {
                    let start = out.effects.len();
                    self.walk(p, scope, out, false);
                    if (i == 1 && !found_when_true) || (i == 2 && found_when_true) {
                        missing(false, Vec::new()).apply(&mut out.effects[start..], &at);
                    } else if i > 0 {
                        consume_found(&mut out.effects[start..], &tables);
                    }
                }
                // Update-or-insert by hand: the row found is updated, the one missing created
                // (what the TypeScript follower makes of a function that does both).
                let gate = &mut out.effects[gate_start..];
                let updated: HashSet<String> = gate
                    .iter()
                    .filter(|e| e.kind == EffectKind::DbUpdate && !e.relative)
                    .filter_map(|e| e.target.as_deref().map(crate::facts::model_key))
                    .collect();
                for e in gate.iter_mut().filter(|e| e.find_or_create) {
                    e.upsert |= e
                        .target
                        .as_deref()
                        .is_some_and(|t| updated.contains(&crate::facts::model_key(t)));
                }
                // In the function's own statements, before any other way out of it: every call
                // that finds the row fails. (Of a row the function looked up itself: what a
                // call tested in the condition answers, `if let Some(q) = quota_reached(..)? {`,
                // says no more than that it read something.)
                if *then_exits
                    && found_when_true
                    && *then_refuses
                    && skip == 0
                    && scope.blocks == 1
                    && let Some(f) = scope.func
                    && self.model.fns[f]
                        .func
                        .early_return
                        .is_none_or(|r| r >= *line)
                {
                    out.refuses_found.get_or_insert_with(|| {
                        ((tables.clone(), locked, filter.clone()), at.clone())
                    });
                }
                if *then_exits && found_when_true {
                    after.push((missing(*then_refuses, updated.into_iter().collect()), at));
                }
            }
            Ex::FieldTest(t) => {
                // A row looked up here, or one given to the function (the signed-in `user` an
                // extractor loaded): named for its variable, as the table it comes from is.
                let tables = match scope.lookups.get(&t.var) {
                    Some((tables, ..)) => tables.clone(),
                    None => vec![crate::facts::model_key(&t.var)],
                };
                let at = self.location(scope.module, t.line);
                let state = |runs: bool| Guard::State {
                    tables: tables.clone(),
                    field: t.field.clone(),
                    test: format!(
                        "{}:{}",
                        crate::facts::state_runs(runs, t.any.is_some()),
                        t.test
                    ),
                };
                // `if opts.notify { .. }` on a parameter: a caller may turn it off
                let param = |runs: bool| {
                    let truthy = match t.test.as_str() {
                        "truthy" => runs,
                        "falsy" => !runs,
                        _ => return None,
                    };
                    if scope.lookups.contains_key(&t.var) {
                        return None;
                    }
                    self.param_guard(scope, &t.var, std::slice::from_ref(&t.field), truthy)
                };
                let (param_then, param_else) = (param(true), param(false));
                for (i, p) in t.parts.iter().enumerate() {
                    let start = out.effects.len();
                    self.walk(p, scope, out, false);
                    if i == 1 && t.any != Some(true) {
                        state(true).apply(&mut out.effects[start..], &at);
                        if let Some(g) = &param_then {
                            g.apply(&mut out.effects[start..], &at);
                        }
                    } else if i == 2 && t.any != Some(false) {
                        state(false).apply(&mut out.effects[start..], &at);
                        if let Some(g) = &param_else {
                            g.apply(&mut out.effects[start..], &at);
                        }
                    }
                }
                if t.then_exits && t.any != Some(false) {
                    after.push((state(false), at.clone()));
                    if let Some(g) = param_else {
                        after.push((g, at));
                    }
                }
            }
            _ => return None,
        }
        Some(after)
    }

    /// The diesel table an argument names: a row, new row or changeset of a `#[diesel(table_name
    /// = ..)]` struct (a literal, or a variable of that type), or a test of a column of the
    /// table's `dsl` (`dsl::merchant_id.eq(id)`, `users::dsl::email.eq(e).and(..)`).
    fn table_from_arg(&self, e: &Ex, scope: &Scope) -> Option<String> {
        let e = bare(e);
        if let Some(ty) = self.type_of(e, scope, 0)
            && let Some(t) = self.model.diesel_table(&ty)
        {
            return Some(t.to_string());
        }
        let uses = &self.model.modules[scope.module].uses;
        let mut cur = e;
        for _ in 0..16 {
            match cur {
                Ex::Method(recv, _, args, _) => {
                    if let Ex::Path(p, _) = &**recv {
                        return column_table(p, uses);
                    }
                    if let Some(t) = args.first().and_then(|a| match a {
                        Ex::Path(p, _) => column_table(p, uses),
                        _ => None,
                    }) {
                        return Some(t);
                    }
                    cur = recv;
                }
                _ => return None,
            }
        }
        None
    }

    /// A diesel select of a table the statement does not name (`<T as HasTable>::table()
    /// .filter(predicate)`): the table its filter names, or the parameter that does.
    fn table_query(&self, e: &Ex, scope: &Scope) -> Option<Result<String, crate::facts::ParamRef>> {
        let c = self.chain(e, scope);
        if !c.text.contains("table") || !c.links.iter().any(|(n, ..)| *n == "filter") {
            return None;
        }
        if diesel_read(&c, &self.model.modules[scope.module].uses).is_some() {
            return None;
        }
        let args = diesel_args(&c);
        match args.iter().find_map(|a| self.table_from_arg(a, scope)) {
            Some(t) => Some(Ok(t)),
            None => args.iter().find_map(|a| self.param_of(a, scope)).map(Err),
        }
    }

    /// The parameter of the function being summarised that `e` is (`values`, `&predicate`).
    fn param_of(&self, e: &Ex, scope: &Scope) -> Option<crate::facts::ParamRef> {
        let Ex::Path(p, _) = bare(e) else { return None };
        let [name] = p.as_slice() else { return None };
        Some(crate::facts::ParamRef {
            module: scope.module,
            function: scope.func?,
            index: scope.params.iter().position(|x| x == name)?,
            path: Vec::new(),
        })
    }

    /// The argument a call of `f` passes for its parameter `r`: `None` for a parameter of
    /// another function, or one the call does not show.
    fn argument<'s>(&self, f: FnId, r: &crate::facts::ParamRef, site: Site<'s>) -> Option<&'s Ex> {
        if r.function != f || r.module != self.model.fns[f].module {
            return None;
        }
        let receiver = site.path_call
            && self.model.fns[f]
                .func
                .params
                .first()
                .is_some_and(|p| p.name == "self");
        site.args.get(r.index + usize::from(receiver))
    }

    /// A guard on parameter `var` of the function being summarised (or on the members `path` of
    /// it) being truthy or not; `None` when `var` is no parameter.
    fn param_guard(
        &self,
        scope: &Scope,
        var: &str,
        path: &[String],
        truthy: bool,
    ) -> Option<Guard> {
        self.param_test(scope, var, path, ParamTest::Truthy(truthy))
    }

    /// A guard on parameter `var` (or its members `path`) passing `test`; `None` when `var`
    /// is no parameter.
    fn param_test(
        &self,
        scope: &Scope,
        var: &str,
        path: &[String],
        test: ParamTest,
    ) -> Option<Guard> {
        let index = scope.params.iter().position(|p| p == var)?;
        let function = scope.func?;
        Some(Guard::Param(Box::new((
            crate::facts::ParamRef {
                module: scope.module,
                function,
                index,
                path: path.to_vec(),
            },
            test,
        ))))
    }

    /// The values bound to a chain's placeholders: sqlx's `.bind(..)`s in order, else what
    /// follows the statement in `query!(sql, ..)`.
    fn binds<'c>(c: &'c Chain<'_>) -> Vec<&'c Ex> {
        // cornucopia's and clorinde's generated `.bind(&client, &a, &b, ..)`: the client, then
        // the statement's parameters in order
        if let [(_, args, _)] = c
            .links
            .iter()
            .filter(|(n, ..)| *n == "bind")
            .collect::<Vec<_>>()
            .as_slice()
            && args.len() > 1
        {
            return args[1..].iter().collect();
        }
        let binds: Vec<&Ex> = c
            .links
            .iter()
            .filter(|(n, ..)| *n == "bind")
            .filter_map(|(_, a, _)| a.first())
            .collect();
        if !binds.is_empty() {
            return binds;
        }
        // rusqlite's `conn.execute("INSERT ..", params![a, b])` (also a tuple, an array, or the
        // values one by one): what follows the statement in the method's arguments.
        let positional = |rest: &'c [Ex]| -> Vec<&'c Ex> {
            match rest {
                // every positional value, literals too (`params!["note", &id]`)
                [Ex::Macro { path, args, .. }] if path.last().is_some_and(|m| m == "params") => {
                    args.iter().collect()
                }
                // bound by name, not by position
                [Ex::Macro { path, .. }] if path.last().is_some_and(|m| m == "named_params") => {
                    Vec::new()
                }
                [Ex::List(items)] => items.iter().collect(),
                _ => rest.iter().collect(),
            }
        };
        if let Some(args) = c.run_args {
            return positional(args);
        }
        let sql_at = c.root_args.iter().position(|a| matches!(a, Ex::Lit(_)));
        let in_link = || {
            c.links.iter().find_map(|(_, args, _)| {
                let i = args.iter().position(|a| matches!(a, Ex::Lit(_)))?;
                Some(positional(&args[i + 1..]))
            })
        };
        match sql_at {
            Some(i) => c.root_args[i + 1..].iter().collect(),
            None if c.macro_args.is_empty() => in_link().unwrap_or_default(),
            // `query!("INSERT .. VALUES (?, ?)", email, code)`
            None => c
                .macro_args
                .iter()
                .filter(|a| !matches!(a, Ex::Lit(_)))
                .collect(),
        }
    }

    /// Is a value an upsert matches on (its `ON CONFLICT` columns) made per call, and is each
    /// such value made only when the caller's is missing?
    fn conflict_bound_fresh(&self, c: &Chain<'_>, sql: &str, scope: &Scope) -> (bool, bool) {
        let binds = Self::binds(c);
        let matched: Vec<&Ex> = crate::sql::sql_conflict_binds(sql)
            .into_iter()
            .filter_map(|i| binds.get(i).copied())
            .collect();
        let per_call = matched.iter().any(|b| fresh(b, scope));
        let unless_missing = per_call
            && matched
                .iter()
                .all(|b| !fresh(b, scope) || fresh_fallback(b, scope));
        (per_call, unless_missing)
    }

    /// Whether a `SELECT` compares a column for equality with a value bound from one made per
    /// request (`where key = $1` with `.bind(Uuid::new_v4())` or a variable holding one).
    fn selects_by_fresh(&self, c: &Chain<'_>, sql: &str, scope: &Scope) -> bool {
        let binds = Self::binds(c);
        crate::sql::sql_equality_binds(sql)
            .into_iter()
            .filter_map(|i| binds.get(i).copied())
            .any(|b| fresh(b, scope))
    }

    /// The columns a raw `INSERT` writes from the caller's data: each column with the value bound
    /// to its placeholder (sqlx's `.bind(..)` in order, or a `query!` macro's arguments), less
    /// those whose value is made per request (`Uuid::new_v4()`, `now()`, a variable holding
    /// one). `None` when the columns or their values cannot be told apart.
    fn inserted_keys(&self, c: &Chain<'_>, sql: &str, scope: &Scope) -> Option<Vec<String>> {
        let binds = Self::binds(c);
        crate::sql::sql_inserted_keys(sql, |i| binds.get(i).is_some_and(|b| fresh(b, scope)))
    }

    /// Follows each impl a trait's method may run (`impls`), speculatively when there are
    /// several, except for the kinds of effect every one of them reaches: those run whichever
    /// impl does (a provider trait whose every impl pays).
    fn follow_impls(&self, impls: &[FnId], out: &mut Summary, scope: &Scope, site: Site<'_>) {
        let several = impls.len() > 1;
        let certain = if several {
            crate::facts::reached_by_all(impls.iter().map(|&f| {
                let sub = self.summary(f);
                sub.effects.iter().map(|e| e.kind).collect::<Vec<_>>()
            }))
        } else {
            HashSet::new()
        };
        for &f in impls {
            self.follow_certain(f, several, &certain, out, scope, site);
        }
    }

    /// Follows one project function from a call site (`site`: its line and the name called).
    fn follow(&self, f: FnId, speculative: bool, out: &mut Summary, scope: &Scope, site: Site<'_>) {
        self.follow_certain(f, speculative, &HashSet::new(), out, scope, site);
    }

    /// [`Self::follow`], where effects of the kinds in `certain` are not speculative.
    fn follow_certain(
        &self,
        f: FnId,
        speculative: bool,
        certain: &HashSet<EffectKind>,
        out: &mut Summary,
        scope: &Scope,
        site: Site<'_>,
    ) {
        let sub = self.summary(f);
        let name = self.model.fns[f].func.name.clone();
        for e in &sub.effects {
            let mut e = e.clone();
            if !self.bind_gate(f, &mut e, scope, site) {
                continue;
            }
            if let Some(r) = e.target_param.take()
                && let Some(arg) = self.argument(f, &r, site)
            {
                match self.table_from_arg(arg, scope) {
                    Some(t) => e.target = Some(t),
                    None => e.target_param = self.param_of(arg, scope).map(Box::new),
                }
                // the row it inserts, as the caller builds it: the fields a retry sends again
                if e.kind == EffectKind::DbCreate
                    && e.data_keys.is_none()
                    && let Some((data, request)) = caller_row(arg, scope)
                {
                    e.request_keys = request;
                    e.data_keys = Some(data);
                }
            }
            // the row a callee inserts whole (`.values(&new)`), as the caller builds it
            let mut keyed_here = false;
            if let Some(r) = e.data_param.take()
                && let Some(arg) = self.argument(f, &r, site)
                && e.data_keys.is_none()
            {
                match caller_row(arg, scope) {
                    Some((data, request)) => {
                        e.request_keys = request;
                        e.data_keys = Some(data);
                        keyed_here = true;
                    }
                    None => e.data_param = self.param_of(arg, scope),
                }
            }
            self.bind_written(f, &mut e, site);
            e.via.insert(0, name.clone());
            e.via.truncate(8);
            e.speculative |= speculative && !certain.contains(&e.kind);
            // A column the callee binds from a parameter to which this call passes a value it
            // makes (`create_project(conn, &input, &public_key)` after `let (_, public_key) =
            // generate_keypair()`): a retry writes a new one, which conflicts with nothing.
            for (col, r) in std::mem::take(&mut e.key_params) {
                let Some(arg) = self.argument(f, &r, site) else {
                    continue;
                };
                if fresh(arg, scope) {
                    if let Some(keys) = &mut e.data_keys {
                        keys.retain(|k| *k != col);
                    }
                    e.request_keys.retain(|k| *k != col);
                } else if let Some(r2) = self.param_of(arg, scope) {
                    e.key_params.push((col, r2));
                }
            }
            // A value this call makes (`insert_user(db, Uuid::new_v4(), ..)`) may be what the
            // callee's create is keyed on: its keys are no longer known to be the request's.
            // (Not the keys of a row this call's own argument builds, read field by field
            // above: another argument made here, the connection, is no column.)
            if site.fresh_args && !keyed_here {
                e.request_keys.clear();
            }
            e.prechecked |= e.kind == EffectKind::DbCreate
                && e.target.as_ref().is_some_and(|t| out.reads.contains(t));
            out.effects.push(e);
        }
        if !speculative && let Some(r) = &sub.refuses_unless {
            out.claim_calls.push(r.clone());
        }
        if !speculative && let Some(r) = &sub.refuses_found {
            out.refusal_calls.push(r.clone());
        }
        out.key_reads.extend(sub.key_reads.iter().cloned());
        out.reads.extend(sub.reads.iter().cloned());
        for r in &sub.read_params {
            if let Some(arg) = self.argument(f, r, site) {
                match self.table_from_arg(arg, scope) {
                    Some(t) => out.reads.push(t),
                    None => out.read_params.extend(self.param_of(arg, scope)),
                }
            }
        }
        out.locked_reads.extend(sub.locked_reads.iter().cloned());
        out.read_filters.extend(sub.read_filters.iter().cloned());
        for u in &sub.unfollowed {
            if out.unfollowed.len() < 8 && !out.unfollowed.contains(u) {
                out.unfollowed.push(u.clone());
            }
        }
        for c in &sub.signature_checks {
            if out.signature_checks.len() < 8 && !out.signature_checks.contains(c) {
                out.signature_checks.push(c.clone());
            }
        }
        if !sub.key_obs.is_empty() {
            // What the callee does to the key store happens at this call, in its context.
            let here = scope.func.and_then(|c| {
                self.model.fns[c]
                    .func
                    .key_calls
                    .iter()
                    .find(|k| k.line == site.line && k.name == site.name)
            });
            for o in &sub.key_obs {
                let mut o = o.clone();
                o.order = site.line;
                if let Some(k) = here {
                    if k.ctx != crate::facts::key::Ctx::Main {
                        o.ctx = k.ctx;
                    }
                    if let Obs::Status { cond: c @ None, .. } = &mut o.obs {
                        *c = k.cond;
                    }
                }
                out.key_obs.push(o);
            }
        }
    }

    /// An update's column that `f` sets from one of its parameters (`.set(txn_state.eq(status))`
    /// in `fn update_state(conn, id, status)`), as this call writes it: the constant it passes
    /// (`update_state(conn, id, PaymentState::Completed)`), a value the request holds by its
    /// name, or a value not known. A state guard of the caller reads what the row then holds.
    fn bind_written(&self, f: FnId, e: &mut Effect, site: Site<'_>) {
        if e.kind != EffectKind::DbUpdate {
            return;
        }
        let def = &self.model.fns[f];
        for (_, value) in e.update_keys.iter_mut() {
            // (the parameter's position as a call passes it, the receiver aside)
            let Some(index) = value
                .as_deref()
                .and_then(|v| v.strip_prefix("v:"))
                .and_then(|n| {
                    def.func
                        .params
                        .iter()
                        .filter(|p| p.name != "self")
                        .position(|p| p.name == n)
                })
            else {
                continue;
            };
            let r = crate::facts::ParamRef {
                module: def.module,
                function: f,
                index,
                path: Vec::new(),
            };
            *value = self.argument(f, &r, site).and_then(written_value);
        }
    }

    /// An effect that runs only under a test of a parameter of `f` (see `Guard::Param`), at a
    /// call of `f`: false (the call does not reach it) when the argument turns the test the
    /// other way (`false`, `None`, `Some(..)`, a struct literal's field); an argument that is a
    /// parameter of the caller hands the test on; any other keeps the effect.
    fn bind_gate(&self, f: FnId, e: &mut Effect, scope: &Scope, site: Site<'_>) -> bool {
        let Some(gate) = e.param_gate.take() else {
            return true;
        };
        let (r, test) = *gate;
        let Some(v) = self.argument(f, &r, site) else {
            return true;
        };
        let mut v = bare(v);
        let mut k = 0;
        while k < r.path.len() {
            match v {
                Ex::Struct(_, values, fields) if values.len() == fields.len() => {
                    match fields.iter().position(|x| *x == r.path[k]) {
                        Some(i) => v = &values[i],
                        None => return true,
                    }
                    k += 1;
                }
                _ => break,
            }
        }
        // the caller's own parameter: its callers decide
        let hand_on = |e: &mut Effect, name: &str, test: ParamTest| {
            if let (Some(index), Some(caller)) =
                (scope.params.iter().position(|x| x == name), scope.func)
            {
                e.param_gate = Some(Box::new((
                    crate::facts::ParamRef {
                        module: scope.module,
                        function: caller,
                        index,
                        path: r.path[k..].to_vec(),
                    },
                    test,
                )));
            }
        };
        let truthy = match test {
            ParamTest::Truthy(truthy) => truthy,
            ParamTest::Variant {
                enum_name,
                names,
                is,
            } => {
                if k < r.path.len() {
                    return true;
                }
                if let Ex::Path(p, _) = v
                    && let [name] = p.as_slice()
                    && scope.params.contains(name)
                    && !scope.variants.contains_key(name)
                {
                    hand_on(
                        e,
                        name,
                        ParamTest::Variant {
                            enum_name,
                            names,
                            is,
                        },
                    );
                    return true;
                }
                let Some(held) = self.arg_variants(v, &enum_name, scope) else {
                    return true;
                };
                let named = held.iter().filter(|x| names.contains(x)).count();
                return if is { named > 0 } else { named < held.len() };
            }
        };
        let holds = match v {
            // nothing there, nor any field of it
            Ex::Path(p, _) if p.len() == 1 && p[0] == "None" => false,
            Ex::Path(p, _) if k == r.path.len() && p.len() == 1 && p[0] == "true" => true,
            Ex::Path(p, _) if k == r.path.len() && p.len() == 1 && p[0] == "false" => false,
            Ex::Call(func, _, _)
                if k == r.path.len()
                    && matches!(&**func, Ex::Path(p, _) if p.len() == 1 && p[0] == "Some") =>
            {
                true
            }
            Ex::Path(p, _) if p.len() == 1 => {
                hand_on(e, &p[0], ParamTest::Truthy(truthy));
                return true;
            }
            _ => return true,
        };
        holds == truthy
    }

    /// The one method a call on a value of unknown type can run, of the methods of its name:
    /// the only one whose parameters take the arguments' types where the code shows them (`handle.node.call(request)` with `request: NodeRequest` runs
    /// `LightningNode::call(&self, request: NodeRequest)`, not `AdminService::call(&self,
    /// request: AdminRequest)`). At least one argument's type must be a type of the project.
    fn typed_candidate(&self, cands: &[FnId], args: &[Ex], scope: &Scope) -> Option<FnId> {
        let known: Vec<(usize, Res)> = args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match self.type_of(a, scope, 0)? {
                t @ Res::Type(..) => Some((i, t)),
                _ => None,
            })
            .collect();
        if known.is_empty() || cands.len() > 64 {
            return None;
        }
        let mut fits = cands.iter().copied().filter(|&f| {
            let def = &self.model.fns[f];
            let params: Vec<&Param> = def
                .func
                .params
                .iter()
                .filter(|p| p.name != "self")
                .collect();
            params.len() == args.len()
                && known.iter().all(|(i, t)| {
                    params[*i].ty.as_ref().is_some_and(|pt| {
                        self.resolve_ty(pt, def.module, def.imp).as_ref() == Some(t)
                    })
                })
        });
        let fits: Vec<FnId> = fits.by_ref().take(8).collect();
        if let [one] = fits.as_slice() {
            return Some(*one);
        }
        // Methods of one type: its inherent one is what a call runs (`impl Service<Req> for
        // Node { fn call(..) { this.call(req) } }` beside `impl Node { fn call(..) }`).
        let imps: Vec<&super::model::ImplDef> = fits
            .iter()
            .map(|&f| self.model.fns[f].imp.map(|i| &self.model.impls[i]))
            .collect::<Option<_>>()?;
        let ty = &imps.first()?.imp.self_ty;
        if imps.iter().any(|i| i.imp.self_ty != *ty) {
            return None;
        }
        let mut inherent = fits
            .iter()
            .zip(&imps)
            .filter(|(_, i)| i.imp.trait_.is_none())
            .map(|(f, _)| *f);
        let first = inherent.next()?;
        inherent.next().is_none().then_some(first)
    }

    /// A `match` of a variable on an enum's variants: on a variable known to hold some of them,
    /// the arms that can take them; on a parameter, every arm, its effects gated on the
    /// variants its pattern names (a caller passing another variant does not reach them).
    fn variant_arms(&self, m: &VariantMatch, scope: &mut Scope, out: &mut Summary) {
        if let Some(s) = m.parts.first() {
            self.walk(s, scope, out, false);
        }
        let enum_name = self
            .enum_named(&m.enum_name, scope)
            .unwrap_or_else(|| m.enum_name.clone());
        let held = self.arg_variants(&Ex::Path(vec![m.var.clone()], m.line), &enum_name, scope);
        // a parameter a `let` binds again (`let command = upgrade(command)`) may no longer hold
        // the caller's value: its arms are not gated on it
        let shadowed = scope
            .func
            .is_some_and(|f| self.model.fns[f].func.shadowed.contains(&m.var));
        let at = self.location(scope.module, m.line);
        // the variants an arm before names, without a guard: a catch-all does not take them
        let mut earlier: Vec<String> = Vec::new();
        for (i, arm) in m.arms.iter().enumerate() {
            let runs = match (&held, arm) {
                (None, _) => true,
                (Some(h), Some(names)) => h.iter().any(|x| names.contains(x)),
                (Some(h), None) => h.iter().any(|x| !earlier.contains(x)),
            };
            if runs && let Some(part) = m.parts.get(i + 1) {
                let start = out.effects.len();
                self.walk(part, scope, out, false);
                let test = ParamTest::Variant {
                    enum_name: enum_name.clone(),
                    names: arm.clone().unwrap_or_else(|| earlier.clone()),
                    is: arm.is_some(),
                };
                if held.is_none()
                    && !shadowed
                    && (arm.is_some() || !earlier.is_empty())
                    && let Some(g) = self.param_test(scope, &m.var, &[], test)
                {
                    g.apply(&mut out.effects[start..], &at);
                }
            }
            if let Some(names) = arm
                && !m.guarded.get(i).copied().unwrap_or(false)
            {
                earlier.extend(names.iter().cloned());
            }
        }
    }

    /// An enum as a pattern or a path names it: `Self` is the type of the impl the code is in
    /// (`None` outside one).
    fn enum_named(&self, name: &str, scope: &Scope) -> Option<String> {
        if name != "Self" {
            return Some(name.to_string());
        }
        match self.model.impl_type(scope.imp?) {
            Res::Type(_, t) => Some(t),
            _ => None,
        }
    }

    /// The variants of enum `enum_name` an argument may be (see [`VariantVal`]); `None` when
    /// the code does not show.
    fn arg_variants(&self, v: &Ex, enum_name: &str, scope: &Scope) -> Option<Vec<String>> {
        match self.variant_value(v, scope, 0)? {
            VariantVal::Named(pairs) => {
                let names: Vec<String> = pairs
                    .into_iter()
                    .filter(|(e, _)| e == enum_name)
                    .map(|(_, n)| n)
                    .collect();
                (!names.is_empty()).then_some(names)
            }
            VariantVal::Into(from) => {
                self.converted_variants(enum_name, from.as_deref(), scope.func?)
            }
        }
    }

    /// The variants `.into()` may make of a value in function `f`: those the `From` impls of
    /// the enum return for the types `f` names (its parameters' and its `let`s' annotations:
    /// `let params: Result<KeysendParams, _> = ..; .. params.into()`). `None` when it names
    /// none of them.
    fn converted_variants(
        &self,
        enum_name: &str,
        from: Option<&str>,
        f: FnId,
    ) -> Option<Vec<String>> {
        let func = self.model.fns[f].func;
        let mut named: HashSet<&str> = HashSet::new();
        for p in &func.params {
            if let Some(t) = &p.ty {
                named.extend(t.all().into_iter().map(Ty::last));
            }
        }
        let mut lets: Vec<&Ty> = Vec::new();
        annotated(&func.body, &mut lets);
        for t in lets {
            named.extend(t.all().into_iter().map(Ty::last));
        }
        // The receiver's type when known; else the one type with a `From` impl the function
        // names (of several, not known which).
        let impls = self.model.from_impls(enum_name);
        let source = |g: FnId| {
            let from = self.model.fns[g].func;
            (from.name == "from")
                .then(|| {
                    from.params
                        .first()
                        .and_then(|p| p.ty.as_ref())
                        .map(Ty::last)
                })
                .flatten()
        };
        let wanted: Vec<&str> = match from {
            Some(t) => vec![t],
            None => {
                let mut sources: Vec<&str> = impls
                    .iter()
                    .flat_map(|&i| self.model.impls[i].fns.iter().filter_map(|&g| source(g)))
                    .filter(|t| named.contains(t))
                    .collect();
                sources.sort_unstable();
                sources.dedup();
                if sources.len() != 1 {
                    return None;
                }
                sources
            }
        };
        let mut out: Vec<String> = Vec::new();
        for i in impls {
            let imp = &self.model.impls[i];
            for &g in &imp.fns {
                let from = self.model.fns[g].func;
                if !source(g).is_some_and(|t| wanted.contains(&t)) {
                    continue;
                }
                let mut scope = Scope::new(imp.module, Some(i), Some(g));
                scope.params = vec![];
                let last = match from.body.last() {
                    Some(Stmt::Expr(e, _)) => Some(e),
                    _ => None,
                };
                match last.and_then(|e| self.variant_value(e, &scope, 0)) {
                    Some(VariantVal::Named(pairs)) => {
                        for (e, n) in pairs {
                            if e == enum_name && !out.contains(&n) {
                                out.push(n);
                            }
                        }
                    }
                    _ => return None,
                }
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// The enum variants a value may be: a variant written out (`NodeRequest::Keysend { .. }`,
    /// `Command::Stop`, `Msg::Text(..)`), wrapped in `Ok`/`Some`/`Box::new`, a variable holding
    /// one, `.into()`, or the arms of a `match`/`if` producing them (arms that fail aside).
    fn variant_value(&self, e: &Ex, scope: &Scope, depth: usize) -> Option<VariantVal> {
        if depth > 8 {
            return None;
        }
        let named = |p: &[String]| -> Option<VariantVal> {
            let n = p.len();
            if n < 2 || !p[n - 1].starts_with(|c: char| c.is_ascii_uppercase()) {
                return None;
            }
            let enum_name = self.enum_named(&p[n - 2], scope)?;
            Some(VariantVal::Named(vec![(enum_name, p[n - 1].clone())]))
        };
        match bare(e) {
            Ex::Struct(p, ..) => named(p),
            Ex::Path(p, _) if p.len() == 1 => scope.variants.get(&p[0]).cloned(),
            Ex::Path(p, _) => named(p),
            Ex::Call(callee, args, _) => match &**callee {
                Ex::Path(p, _)
                    if matches!(p.as_slice(), [o] if o == "Ok" || o == "Some")
                        || p.ends_with(&["Box".to_string(), "new".to_string()]) =>
                {
                    self.variant_value(args.first()?, scope, depth + 1)
                }
                Ex::Path(p, _) => named(p),
                _ => None,
            },
            Ex::Method(recv, name, args, _) if name == "into" && args.is_empty() => {
                let from = match self.type_of(recv, scope, 0) {
                    Some(Res::Type(_, t)) => Some(t),
                    _ => None,
                };
                Some(VariantVal::Into(from))
            }
            Ex::Method(recv, name, args, _) if name == "clone" && args.is_empty() => {
                self.variant_value(recv, scope, depth + 1)
            }
            Ex::Block(stmts) => match stmts.last()? {
                Stmt::Expr(e, _) => self.variant_value(e, scope, depth + 1),
                _ => None,
            },
            // a `match` or `if`: what its arms produce, those that fail aside
            // (two parts are an operator or an index, not branches)
            Ex::Other(parts) if parts.len() >= 3 => self.arms_variants(&parts[1..], scope, depth),
            Ex::Variants(m) => self.arms_variants(&m.parts[1..], scope, depth),
            Ex::Gate { parts, .. } => self.arms_variants(parts.get(1..)?, scope, depth),
            Ex::FieldTest(t) => self.arms_variants(t.parts.get(1..)?, scope, depth),
            _ => None,
        }
    }

    fn arms_variants(&self, arms: &[Ex], scope: &Scope, depth: usize) -> Option<VariantVal> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut into: Option<Option<String>> = None;
        for a in arms {
            if matches!(a, Ex::Failure(_)) {
                continue;
            }
            match self.variant_value(a, scope, depth + 1)? {
                VariantVal::Named(p) => pairs.extend(p),
                // conversions of two types (or of one not known): not known which
                VariantVal::Into(from) => match &into {
                    Some(f) if *f != from => return None,
                    _ => into = Some(from),
                },
            }
        }
        match (into, pairs.is_empty()) {
            (Some(from), true) => Some(VariantVal::Into(from)),
            (None, false) => Some(VariantVal::Named(pairs)),
            _ => None,
        }
    }

    /// Arguments: a function passed by name is followed (a callback), then each is walked.
    fn walk_args(&self, args: &[Ex], scope: &mut Scope, out: &mut Summary) {
        for a in args {
            if let Ex::Path(p, line) = a
                && !(p.len() == 1 && scope.vars.contains_key(&p[0]))
                && let Res::Fn(f) = self.resolve(p, scope)
            {
                let name = p.last().cloned().unwrap_or_default();
                self.follow(f, false, out, scope, Site::new(*line, &name, &[], scope));
            }
            self.walk(a, scope, out, false);
        }
    }

    fn walk(&self, e: &Ex, scope: &mut Scope, out: &mut Summary, in_chain: bool) {
        match e {
            Ex::Variants(m) => {
                self.variant_arms(m, scope, out);
                return;
            }
            Ex::Block(stmts) => {
                self.stmts(stmts, scope, out);
                return;
            }
            Ex::Caught(inner) => {
                // A duplicate insert in `inner` (or in the variable it reads) is answered.
                if let Ex::Path(p, _) = &**inner
                    && p.len() == 1
                    && let Some(r) = scope.var_effects.get(&p[0])
                {
                    for e in out.effects.get_mut(r.clone()).into_iter().flatten() {
                        e.unique_caught = true;
                    }
                }
                let start = out.effects.len();
                self.walk(inner, scope, out, false);
                for e in &mut out.effects[start..] {
                    e.unique_caught = true;
                }
                return;
            }
            Ex::Failure(inner) => {
                let start = out.effects.len();
                self.walk(inner, scope, out, in_chain);
                for e in &mut out.effects[start..] {
                    e.on_failure = true;
                }
                return;
            }
            Ex::Assign(lhs, rhs) => {
                // `active.accepted = Set(true)`: what the record's update will write
                if let Ex::Field(base, field) = &**lhs
                    && let Ex::Path(p, _) = &**base
                    && p.len() == 1
                    && let Some(value) = set_value(rhs)
                {
                    scope
                        .sets
                        .entry(p[0].clone())
                        .or_default()
                        .push((field.clone(), value));
                }
                // `am.email = Set(body.email)`: one more field of the record
                if let Ex::Field(base, field) = &**lhs
                    && let Ex::Path(p, _) = &**base
                    && p.len() == 1
                    && !unset(rhs)
                    && !fresh(rhs, scope)
                    && let Some(Some(keys)) = scope.records.get_mut(&p[0])
                    && !keys.contains(field)
                {
                    keys.push(field.clone());
                }
            }
            // `rng.fill_bytes(&mut buf)`: the buffer holds a value made for this request.
            Ex::Method(_, name, args, _)
                if matches!(name.as_str(), "fill_bytes" | "try_fill_bytes" | "fill")
                    && let Some(Ex::Path(p, _)) = args.first()
                    && p.len() == 1 =>
            {
                scope.fresh.insert(p[0].clone());
            }
            Ex::Closure { params, body, .. } => {
                let saved: Vec<(String, Option<Res>)> = params
                    .iter()
                    .map(|p| (p.name.clone(), scope.vars.remove(&p.name)))
                    .collect();
                self.walk(body, scope, out, false);
                for (n, v) in saved {
                    if let Some(v) = v {
                        scope.vars.insert(n, v);
                    }
                }
                return;
            }
            _ => {}
        }
        match e {
            Ex::Call(func, args, line) => {
                let before = out.effects.len();
                if !in_chain {
                    self.sink_check(e, scope, out);
                }
                self.key_args(None, args, scope, *line, out);
                if let Ex::Path(p, _) = func.as_ref() {
                    self.signature_check_call(p.last(), scope, *line, out);
                }
                if let Ex::Path(p, _) = &**func {
                    let r = self.resolve(p, scope);
                    let name = p.last().cloned().unwrap_or_default();
                    let fns = self.fns_of(&r);
                    // `App::insert(&conn, new)` on a project type with no such function in view
                    // (a `macro_rules!` or a derive made it): not followed, and said so.
                    // (An enum's tuple variant, `Status::Disabled(..)`, is no function.)
                    if fns.is_empty()
                        && !DERIVED_FNS.contains(&name.as_str())
                        && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
                        && let Res::Assoc(ty, _) = &r
                        && matches!(**ty, Res::Type(..))
                        && self.model.entity_of(ty).is_none()
                        && out.unfollowed.len() < 8
                    {
                        out.unfollowed.push((
                            format!("`{}`", p.join("::")),
                            self.location(scope.module, *line),
                        ));
                    }
                    // `o2_enterprise::enterprise::actions::register_app(..)`, a function of the
                    // project's whose code is not in view (a path dependency not in the
                    // checkout, a stub crate, a module a build step writes): not followed, and
                    // said so.
                    // (Not a query a build step generates from a SQL file the audit reads, nor
                    // a function named for a read: `get_config()`.)
                    if fns.is_empty()
                        && out.effects.len() == before
                        && out.unfollowed.len() < 8
                        && matches!(r, Res::Unknown | Res::Ext(_))
                        && let Some((krate, full)) = self.model.unreadable_fn(scope.module, p)
                        && !full.last().is_some_and(|f| named_for_a_read(f))
                        && !full
                            .windows(2)
                            .any(|w| self.queries.contains_key(&(w[0].clone(), w[1].clone())))
                    {
                        out.unfollowed.push((
                            format!(
                                "`{}` (a function of crate `{krate}`, whose code is not in view)",
                                full.join("::")
                            ),
                            self.location(scope.module, *line),
                        ));
                    }
                    let site = Site {
                        path_call: true,
                        ..Site::new(*line, &name, args, scope)
                    };
                    // `unique_error(res)`: a function of the project's own that answers the
                    // unique violation of the result it is handed handles its creates.
                    if fns.iter().any(|&f| self.answers_unique_violation(f)) {
                        for a in args.iter() {
                            if let Ex::Path(v, _) = a
                                && v.len() == 1
                                && let Some(r) = scope.var_effects.get(&v[0]).cloned()
                            {
                                answered(out, r);
                            }
                        }
                    }
                    for f in fns {
                        self.follow(f, false, out, scope, site);
                    }
                    // `Trait::method(x, ..)`, `<H as Trait>::method(x, ..)`: one of the trait's
                    // impls runs, each followed, speculatively when there are several.
                    if let Res::Assoc(ty, _) = &r
                        && matches!(**ty, Res::Trait(..))
                    {
                        let impls = self.model.implementations(ty, &name);
                        self.follow_impls(&impls, out, scope, site);
                    }
                }
                self.walk_args(args, scope, out);
                return;
            }
            Ex::Method(recv, name, args, line) => {
                let before = out.effects.len();
                let unfollowed_before = out.unfollowed.len();
                if !in_chain {
                    self.sink_check(e, scope, out);
                }
                let matched = out.effects.len() > before;
                self.key_args(Some(name), args, scope, *line, out);
                self.signature_check_call(Some(name), scope, *line, out);
                let ty = self.type_of(recv, scope, 0);
                let site = Site::new(*line, name, args, scope);
                let mut called: Vec<FnId> = Vec::new();
                if let Some(t @ (Res::Type(..) | Res::Trait(..))) = &ty {
                    for f in self.model.methods_of(t, name) {
                        self.follow(f, false, out, scope, site);
                        called.push(f);
                    }
                    // A trait object or a bounded generic runs one of the trait's impls: each
                    // is followed, speculatively when there are several.
                    let impls = self.model.implementations(t, name);
                    self.follow_impls(&impls, out, scope, site);
                    called.extend(impls);
                }
                // (a name every other type has, `call`, `get`: only where the arguments'
                // types pick the method)
                // A project's trait implemented for a crate's type (`impl Deliver for Mailgun`):
                // its method, on a value of that type.
                if called.is_empty()
                    && let Some(Res::Ext(full)) = &ty
                    && let Some(cands) = self.model.methods_by_name.get(name.as_str())
                {
                    for &f in cands {
                        let own = self.model.fns[f]
                            .imp
                            .is_some_and(|i| self.model.impls[i].imp.self_ty.last() == full.last());
                        if own {
                            self.follow(f, false, out, scope, site);
                            called.push(f);
                        }
                    }
                }
                // (only methods of the crates this one can call)
                let callable: Option<Vec<FnId>> =
                    self.model.methods_by_name.get(name.as_str()).map(|c| {
                        c.iter()
                            .copied()
                            .filter(|&f| self.model.can_call(scope.module, f))
                            .collect()
                    });
                if called.is_empty()
                    && !matches!(ty, Some(Res::Ext(_)))
                    && let Some(cands) = callable.as_ref().filter(|c| !c.is_empty())
                    && let Some((f, speculative)) = match cands.as_slice() {
                        [one] if !GENERIC_METHODS.contains(&name.as_str()) => Some((*one, true)),
                        // the arguments' types single it out: what the call runs
                        _ => self.typed_candidate(cands, args, scope).map(|f| (f, false)),
                    }
                {
                    self.follow(f, speculative, out, scope, site);
                    called.push(f);
                }
                let followed = !called.is_empty();
                // An `async` method named for a create (`state.repository.create(entity)`)
                // followed into the project's own code, which reaches no write the catalogue
                // knows (a map the process keeps, a store it does not know): a create nothing
                // here judges, not nothing. (A synchronous one builds a value in process:
                // `create_path(..)`, `create_recorder(..)`. Nor a factory: given nothing, it
                // returns a trait object, `repository_factory.create()` → `Box<dyn
                // Repository>`, whose methods the calls on it are followed into.)
                let factory = args.is_empty()
                    && !called.is_empty()
                    && called
                        .iter()
                        .all(|&f| matches!(self.ret_type(f), Some(Res::Trait(..))));
                if !factory
                    && called.iter().any(|&f| self.model.fns[f].func.is_async)
                    && out.effects.len() == before
                    && out.unfollowed.len() == unfollowed_before
                    && out.unfollowed.len() < 8
                    && crate::catalog::names_a_create(name)
                {
                    out.unfollowed.push((
                        format!(
                            "`{}` (a method named for a create, whose code reaches no write the catalogue knows)",
                            name_in_text(recv, name)
                        ),
                        self.location(scope.module, *line),
                    ));
                }
                // `token.save(&pool)` on a project type none of whose code in view defines
                // `save` (a derive or a macro of the project's own made it): a write not
                // followed, and said so, so the endpoint is not read as having none.
                if !followed
                    && !matched
                    && WRITE_METHODS.iter().any(|w| name.starts_with(w))
                    && let Some(t @ Res::Type(..)) = &ty
                    && self.model.entity_of(t).is_none()
                    && out.unfollowed.len() < 8
                {
                    out.unfollowed.push((
                        format!(
                            "`{}` (a method no code in view defines)",
                            name_in_text(recv, name)
                        ),
                        self.location(scope.module, *line),
                    ));
                }
                // `state.billing.create_usage_record(..)` on a trait object (or a bounded
                // generic) of a trait with no implementation the audit can read (none in view, or
                // one a macro writes): what runs is not known, not
                // nothing.
                // (The trait's own declaration has no body to run.)
                if !matched
                    && let Some(Res::Trait(..)) = &ty
                    && out.unfollowed.len() < 8
                    && (crate::catalog::names_a_write(name)
                        || WORK_METHODS.contains(&name.as_str()))
                    && called
                        .iter()
                        .all(|&f| self.model.fns[f].func.body.is_empty())
                {
                    out.unfollowed.push((
                        format!(
                            "`{}` (a method of a trait with no implementation the audit can read)",
                            name_in_text(recv, name)
                        ),
                        self.location(scope.module, *line),
                    ));
                }
                // `wallet.run(cmd)` on a value whose type the code does not show, where several
                // methods of the project have that name and one of them writes: which runs is
                // not known, and said so, so the endpoint is not read as having no effect.
                // (Past 16 such methods, only a name that says it writes: `add` is everyone's.)
                if !followed
                    && !matched
                    && !matches!(ty, Some(Res::Type(..) | Res::Trait(..) | Res::Ext(_)))
                    && (!GENERIC_METHODS.contains(&name.as_str())
                        || WORK_METHODS.contains(&name.as_str()))
                    && out.unfollowed.len() < 8
                    && let Some(cands) = &callable
                    && (cands.len() >= 2
                        && (cands.len() <= 16 || crate::catalog::names_a_write(name)))
                    && cands.iter().any(|&f| !self.summary(f).effects.is_empty())
                {
                    out.unfollowed.push((
                        format!(
                            "`{}` (one of {} methods of that name; the receiver's type is not shown)",
                            name_in_text(recv, name),
                            cands.len()
                        ),
                        self.location(scope.module, *line),
                    ));
                }
                // A method named for a write on a value whose type the code does not show and
                // that no method of the project is named for (`state.store.create_invoice(..)`
                // on a field of a type from a macro): what the call does is not known, not
                // nothing.
                if !followed
                    && !matched
                    && ty.is_none()
                    && out.unfollowed.len() < 8
                    && crate::catalog::names_a_write(name)
                    && callable.as_ref().is_none_or(|c| c.is_empty())
                {
                    out.unfollowed.push((
                        format!(
                            "`{}` (a method of a value whose type the code does not show)",
                            name_in_text(recv, name)
                        ),
                        self.location(scope.module, *line),
                    ));
                }
                // A message handed to another task over an in-process channel or to an actor
                // (`sender.send(Envelope { message, .. }).await`, `addr.send(PayInvoice { .. })`):
                // the work is done where it is received, a loop this sender is not tied to in the
                // code, so what the call leads to is not known, not nothing. Only a message the
                // request builds here (a struct or a variant), on a value whose type is a
                // channel's sender or an actor's address, or not shown.
                if !followed
                    && !matched
                    && out.unfollowed.len() < 8
                    && matches!(
                        name.as_str(),
                        "send"
                            | "try_send"
                            | "send_async"
                            | "blocking_send"
                            | "do_send"
                            | "send_timeout"
                            | "unbounded_send"
                    )
                    && match &ty {
                        None => true,
                        Some(Res::Ext(full)) => full.last().is_some_and(|l| {
                            matches!(
                                l.as_str(),
                                "Sender" | "UnboundedSender" | "SyncSender" | "Addr" | "Recipient"
                            )
                        }),
                        _ => false,
                    }
                    && args.first().is_some_and(built_message)
                {
                    out.unfollowed.push((
                        format!(
                            "`{}` (a message handed to another task or actor, whose handling is not followed)",
                            name_in_text(recv, name)
                        ),
                        self.location(scope.module, *line),
                    ));
                }
                // A method named for a write, on a chain rooted at a crate no sink of the
                // catalogue covers (an SDK it does not know: `github.issues(..).create(title)
                // .send()`): what the call does is not known, not nothing.
                if !in_chain && !followed && !matched && out.unfollowed.len() < 8 {
                    let c = self.chain(e, scope);
                    if let Some(o) = c.origin.as_deref().map(norm)
                        && !matches!(o.as_str(), "std" | "core" | "alloc")
                        && !IN_PROCESS_CRATES.contains(&o.as_str())
                        && let Some(package) = self.model.crate_of(scope.module).deps.get(&o)
                        && !self.sink_crate(scope.module, &o)
                        && !IN_PROCESS_CRATES.contains(&package.as_str())
                        && c.links
                            .iter()
                            .any(|(n, ..)| crate::catalog::PACKAGE_WRITES.contains(n))
                    {
                        out.unfollowed.push((
                            format!(
                                "`{}` (a method of crate `{o}`, which the catalogue does not know)",
                                c.text
                            ),
                            self.location(scope.module, *line),
                        ));
                    }
                }
                let start = out.effects.len();
                self.walk(recv, scope, out, true);
                // `res.unique_error("taken")`, `insert(..).await.on_duplicate(..)`: a method of
                // the project's own that answers the unique violation of the result it is called
                // on (`Err(Database(e)) if e.is_unique_violation() => ..`) handles the creates
                // that result comes from.
                if called.iter().any(|&f| self.answers_unique_violation(f)) {
                    let from_var = chain_root(recv)
                        .and_then(|v| scope.var_effects.get(v))
                        .cloned()
                        .unwrap_or_default();
                    answered(out, from_var);
                    answered(out, start..out.effects.len());
                }
                self.walk_args(args, scope, out);
                return;
            }
            // `match record(..).await { Err(e) if e.is_unique_violation() => .., .. }`, `if let
            // Err(e) = record(..) { if e.is_unique_violation() { .. } }`: the creates reached
            // from the scrutinee have their unique violation handled.
            Ex::Other(kids) if kids.len() >= 2 && kids[1..].iter().any(names_unique_violation) => {
                let mut inner = Summary {
                    reads: out.reads.clone(),
                    ..Summary::default()
                };
                self.walk(&kids[0], scope, &mut inner, false);
                for mut e in inner.effects {
                    e.unique_caught |= e.kind == EffectKind::DbCreate;
                    out.effects.push(e);
                }
                out.key_reads.extend(inner.key_reads);
                out.reads = inner.reads;
                for k in &kids[1..] {
                    self.walk(k, scope, out, false);
                }
                return;
            }
            Ex::Macro {
                args, line, lits, ..
            } => {
                if !in_chain {
                    self.sink_check(e, scope, out);
                }
                if lits.iter().any(|l| self.catalog.is_key_header(l)) {
                    out.key_reads.push(self.location(scope.module, *line));
                }
                self.key_args(None, args, scope, *line, out);
            }
            _ => {}
        }
        let mut kids = Vec::new();
        children(e, &mut kids);
        for k in kids {
            self.walk(k, scope, out, false);
        }
    }

    /// Does function `f`'s own body answer a unique violation (`is_unique_violation()`, the
    /// `23505` code)?
    fn answers_unique_violation(&self, f: FnId) -> bool {
        let mut roots = Vec::new();
        super::parse::push_stmts(&self.model.fns[f].func.body, &mut roots);
        roots.iter().any(|e| names_unique_violation(e))
    }

    /// Where function `f` names the key header anywhere (a literal or a constant), if it does.
    pub fn names_key(&self, f: FnId) -> Option<Location> {
        let def = &self.model.fns[f];
        let scope = Scope::new(def.module, def.imp, Some(f));
        let mut stack = Vec::new();
        super::parse::push_stmts(&def.func.body, &mut stack);
        while let Some(e) = stack.pop() {
            if matches!(e, Ex::Lit(_) | Ex::Path(..)) && self.is_key_arg(e, &scope) {
                return Some(self.location(def.module, e.line().max(def.func.line)));
            }
            children(e, &mut stack);
        }
        None
    }

    /// Is `a`, in module `m`, the key header's name (a literal or a constant)?
    pub fn is_key_name(&self, a: &Ex, m: ModId, imp: Option<ImplId>) -> bool {
        let scope = Scope::new(m, imp, None);
        self.is_key_arg(a, &scope)
    }

    /// Every function whose summary was computed: the code endpoints reach.
    pub fn reached(&self) -> std::collections::HashSet<FnId> {
        self.memo.borrow().keys().copied().collect()
    }

    /// A call to a function named like a signature check (`verify_signature`, `verify_webhook`).
    fn signature_check_call(
        &self,
        name: Option<&String>,
        scope: &Scope,
        line: Line,
        out: &mut Summary,
    ) {
        if let Some(name) = name
            && crate::link::calls::looks_like_signature_check(name)
        {
            out.signature_checks
                .push((format!("`{name}`"), self.location(scope.module, line)));
        }
    }

    /// A provider's signature header named by an argument (a literal or a constant).
    fn signature_header(&self, a: &Ex, scope: &Scope) -> Option<String> {
        let name = match a {
            Ex::Lit(s) => s.clone(),
            Ex::Path(p, _) => match self.resolve(p, scope) {
                Res::Const(m, n) => self.model.const_str(m, &n)?,
                _ => return None,
            },
            _ => return None,
        };
        self.catalog.is_signature_header(&name).then_some(name)
    }

    /// Is an argument the key header's name (a literal or a constant)?
    fn is_key_arg(&self, a: &Ex, scope: &Scope) -> bool {
        match a {
            Ex::Lit(s) => self.catalog.is_key_header(s),
            Ex::Path(p, _) => match self.resolve(p, scope) {
                Res::Const(m, n) => self
                    .model
                    .const_str(m, &n)
                    .is_some_and(|s| self.catalog.is_key_header(&s)),
                _ => false,
            },
            Ex::Call(_, args, _) => args.iter().any(|a| self.is_key_arg(a, scope)),
            _ => false,
        }
    }

    fn key_args(
        &self,
        method: Option<&String>,
        args: &[Ex],
        scope: &Scope,
        line: Line,
        out: &mut Summary,
    ) {
        if method.is_some_and(|m| HEADER_WRITERS.contains(&m.as_str())) {
            return;
        }
        if args.iter().any(|a| self.is_key_arg(a, scope)) {
            out.key_reads.push(self.location(scope.module, line));
        }
        // A header read named like a signature or a shared secret (`x-acme-signature`) that the
        // catalogue does not list: a signature check of the project's own, on a webhook path.
        if method.is_some_and(|m| HEADER_READERS.contains(&m.as_str()))
            && let Some(Ex::Lit(name)) = args.first()
            && name.contains('-')
            && crate::text::named_like_signature(name)
            && !self.catalog.is_signature_header(name)
        {
            out.signature_checks.push((
                format!("`{name}` header"),
                self.location(scope.module, line),
            ));
        }
        // Reading a provider's signature header is a webhook receiver's signature check.
        if let Some(header) = args.iter().find_map(|a| self.signature_header(a, scope)) {
            out.effects.push(Effect {
                kind: EffectKind::WebhookReceiver,
                callee: format!("{header} header"),
                label: "webhook signature header".into(),
                location: self.location(scope.module, line),
                ..Effect::default()
            });
        }
    }

    /// The chain ending at `e`: its root and method links, innermost first.
    fn chain<'e>(&self, e: &'e Ex, scope: &Scope) -> Chain<'e> {
        let mut links: Vec<(&'e str, &'e [Ex], Line)> = Vec::new();
        // each link's call, the chain up to it
        let mut calls: Vec<&'e Ex> = Vec::new();
        let mut cur = e;
        while let Ex::Method(recv, name, args, line) = cur {
            links.push((name.as_str(), args.as_slice(), *line));
            calls.push(cur);
            cur = recv;
        }
        links.reverse();
        calls.reverse();
        let mut c = Chain {
            links,
            ..Chain::blank(String::new(), 0)
        };
        let from_type = |c: &mut Chain, t: Option<Res>| {
            if let Some(Res::Ext(p)) = t {
                c.origin = p.first().cloned();
                c.segs = p[1..].to_vec();
            }
        };
        match cur {
            Ex::Call(func, args, line) => {
                c.line = *line;
                c.root_args = args.as_slice();
                c.lits = args
                    .iter()
                    .filter_map(|a| match a {
                        Ex::Lit(s) => Some(s.clone()),
                        _ => None,
                    })
                    .collect();
                if let Ex::Path(p, _) = &**func {
                    c.root_name = p.first().cloned().unwrap_or_default();
                    c.text = p.join("::");
                    let r = self.resolve(p, scope);
                    // `user::Entity::insert(am)`, `User::insert(am)` through a prelude
                    if let Res::Assoc(ty, _) = &r
                        && let Some((module, ty)) = self.model.entity_of(ty)
                    {
                        c.root_name = ty.to_string();
                        c.entity = Some(module.to_string());
                        c.segs = vec![ty.to_string(), p.last().cloned().unwrap_or_default()];
                        c.record = args
                            .first()
                            .and_then(|a| self.record_of(a, None, scope))
                            .flatten();
                    }
                    match r {
                        _ if c.entity.is_some() => {}
                        Res::Ext(full) => {
                            c.origin = full.first().cloned();
                            c.segs = full[1..].to_vec();
                        }
                        r => {
                            // a project function: its return type may be an external client
                            let fns = self.fns_of(&r);
                            if fns.is_empty() {
                                // a derive-generated or unresolved function: as written
                                if p.len() >= 2 {
                                    c.root_name = p[p.len() - 2].clone();
                                }
                                c.segs = p.clone();
                            } else {
                                let t = fns.first().and_then(|&f| self.ret_type(f));
                                from_type(&mut c, t);
                            }
                        }
                    }
                    // `entities::PasswordCredential::Entity::delete_many()`, written as a path
                    // whose entity is not in view: the module before `Entity` names it.
                    if c.entity.is_none() {
                        c.entity = p.split_last().and_then(|(_, rest)| entity_as_written(rest));
                    }
                }
            }
            Ex::Macro {
                path,
                lits,
                line,
                args,
            } => {
                c.line = *line;
                c.lits = lits.clone();
                c.macro_args = args;
                c.root_name = path.last().cloned().unwrap_or_default();
                c.text = format!("{}!", path.join("::"));
                match self.resolve(path, scope) {
                    Res::Ext(full) if full.len() > 1 => {
                        c.origin = full.first().cloned();
                        c.segs = full[1..].to_vec();
                    }
                    _ => c.segs = vec![c.root_name.clone()],
                }
            }
            Ex::Path(p, line) => {
                c.line = *line;
                c.root_name = p.last().cloned().unwrap_or_default();
                let var = c.root_name.clone();
                if let Some(n) = scope.names.get(&c.root_name) {
                    c.root_name = n.clone();
                }
                c.text = p.join("::");
                let t = self.type_of(cur, scope, 0);
                if let Some(t) = &t
                    && let Some((module, ty)) = self.model.entity_of(t)
                {
                    c.root_name = ty.to_string();
                    c.entity = Some(module.to_string());
                }
                if p.len() == 1 {
                    c.root_var = Some(var.clone());
                    c.record = scope.records.get(&var).cloned().flatten();
                    if c.entity.is_none() {
                        c.entity = scope.record_entities.get(&var).cloned();
                    }
                }
                from_type(&mut c, t);
            }
            Ex::Struct(p, values, names) => {
                // `user::ActiveModel { email: Set(..), ..Default::default() }.insert(db)`
                c.root_name = p.last().cloned().unwrap_or_default();
                c.text = format!("{} {{ .. }}", p.join("::"));
                c.record = Some(record_keys(values, names, scope));
                c.written = names
                    .iter()
                    .zip(values.iter())
                    .filter_map(|(n, v)| Some((n.clone(), set_value(v)?)))
                    .collect();
                match self.resolve(p, scope) {
                    r @ Res::Type(..) => {
                        if let Some((module, ty)) = self.model.entity_of(&r) {
                            c.root_name = ty.to_string();
                            c.entity = Some(module.to_string());
                        }
                    }
                    // not in the scanned tree: the path as written names the entity's module
                    _ if p.len() >= 2 => c.entity = Some(p[p.len() - 2].clone()),
                    _ => {}
                }
            }
            Ex::Field(_, f) => {
                c.root_name = f.clone();
                c.text = f.clone();
                from_type(&mut c, self.type_of(cur, scope, 0));
            }
            _ => {}
        }
        // A project value whose method hands out a client of a crate a sink names
        // (`self.get_rgb_wallet().send_btc(..)`, the getter returning `MutexGuard<'_, Wallet>`):
        // the chain goes on from that client, as it would from a variable holding it.
        let mut from = 0;
        if c.origin.is_none() && c.entity.is_none() && c.links.len() >= 2 {
            for (i, call) in calls[..calls.len() - 1].iter().enumerate() {
                if let Some(Res::Ext(p)) = self.type_of(call, scope, 0)
                    && p.first()
                        .is_some_and(|k| self.sink_crate(scope.module, &norm(k)))
                {
                    c.origin = p.first().cloned();
                    c.segs = p[1..].to_vec();
                    from = i + 1;
                    break;
                }
            }
        }
        for (k, (name, _, line)) in c.links.iter().enumerate() {
            if c.line == 0 {
                c.line = *line;
            }
            c.text.push_str(&format!(".{name}()"));
            if k < from {
                continue;
            }
            c.segs.push(name.to_string());
        }
        c
    }

    /// The entity a SeaORM select names when it is built but not yet run (`Entity::find()
    /// .filter(..)`, no `.one(db)`): what a variable holding it reads when it is run.
    fn select_of(&self, e: &Ex, scope: &Scope) -> Option<String> {
        if !matches!(e, Ex::Method(..)) {
            return None;
        }
        let c = self.chain(e, scope);
        if c.links
            .iter()
            .any(|(name, _, _)| SEAORM_RUNS.contains(name))
        {
            return None;
        }
        let finds = c.segs.iter().any(|s| s.starts_with("find"));
        c.entity.filter(|_| finds)
    }

    /// The statement an argument gives, as written, or the text of a constant it names
    /// (`sqlx::query(UPSERT_SET)` with `const UPSERT_SET: &str = "INSERT .."`), or of one built
    /// at run time (`sqlx::query(&sql)` after `let sql = format!(..)`).
    fn statement(&self, e: &Ex, scope: &Scope) -> Option<String> {
        match e {
            Ex::Lit(s) => Some(s.clone()),
            Ex::Path(p, _) if p.len() == 1 && scope.built_sql.contains_key(&p[0]) => {
                scope.built_sql.get(&p[0]).cloned()
            }
            Ex::Path(..) => super::consts::text(self.model, scope.module, scope.imp, e, []),
            _ => None,
        }
    }

    /// A statement prepared to be run later (`conn.prepare_cached(queries::ADD_LINK)?`, `let
    /// Ok(stmt) = tx.prepare(SQL) else { .. }`, through `.unwrap()`, `.map_err(..)`, ..): its
    /// SQL and the `prepare`'s line. Only text that reads as SQL.
    fn prepared_statement(&self, e: &Ex, scope: &Scope) -> Option<(String, Line, String)> {
        let mut cur = bare(e);
        for _ in 0..8 {
            let Ex::Method(recv, name, args, line) = cur else {
                return None;
            };
            if PREPARES.contains(&name.as_str()) {
                let sql = self.statement(args.first()?, scope)?;
                let is_sql = classify(&sql).is_some() || crate::link::calls::is_select(&sql);
                return is_sql.then(|| (sql, *line, self.chain(cur, scope).text));
            }
            if !matches!(
                name.as_str(),
                "unwrap" | "expect" | "map_err" | "context" | "with_context" | "wrap_err" | "ok"
            ) {
                return None;
            }
            cur = bare(recv);
        }
        None
    }

    /// The prepared statements of a walk that were never seen run (handed to a function, kept
    /// for later): each is judged where it was prepared, so a write is not lost.
    fn unrun_statements(&self, scope: &Scope, out: &mut Summary) {
        let mut unrun: Vec<&Prepared> = scope
            .prepared
            .values()
            .filter(|p| !p.run.get() && classify(&p.sql).is_some())
            .collect();
        unrun.sort_by_key(|p| p.line);
        for p in unrun {
            let c = Chain::blank(p.callee.clone(), p.line);
            self.sql_effect(&c, &p.sql, p.line, scope, out);
        }
    }

    fn sink_check(&self, e: &Ex, scope: &Scope, out: &mut Summary) {
        let mut c = self.chain(e, scope);
        if c.segs.is_empty() {
            return;
        }
        let location = self.location(scope.module, c.line);
        let package = c
            .origin
            .as_ref()
            .map(|o| self.model.package_of(scope.module, o));
        let deps_unknown = self.model.crate_of(scope.module).deps.is_empty();
        let origin = c.origin.as_deref().map(norm);
        // A path into no crate this one depends on: a module of the project not in view (a
        // client generated at build time, `crate::prisma::PrismaClient`). Matched by name.
        let origin_unread = !deps_unknown
            && origin.as_deref().is_some_and(|o| {
                !matches!(o, "std" | "core" | "alloc")
                    && !self.model.crate_of(scope.module).deps.contains_key(o)
            });
        for (sink, packages) in &self.sinks {
            // A call named for moving money on a value of a crate the catalogue does not know
            // (`wallet.withdraw(..)`): by that name alone, speculative.
            if sink.any_package {
                let external = origin
                    .as_deref()
                    .is_some_and(|o| !matches!(o, "std" | "core" | "alloc"));
                if !external
                    || !c
                        .links
                        .iter()
                        .any(|(n, ..)| sink.calls.iter().any(|p| p == n))
                {
                    continue;
                }
                out.effects.push(Effect {
                    kind: sink.kind,
                    callee: c.text.clone(),
                    label: sink.label.clone(),
                    location,
                    speculative: true,
                    sink_impact: sink.impact,
                    args: arg_fields(&c),
                    made_args: made_fields(&c, scope).into(),
                    fails_request: true,
                    ..Effect::default()
                });
                return;
            }
            let by_origin = origin.as_ref().is_some_and(|o| {
                packages
                    .iter()
                    .any(|p| p == o || package.as_ref().is_some_and(|pk| pk == p))
            });
            let by_name = (c.origin.is_none() || origin_unread)
                && sink.root_matches(&c.root_name)
                && (deps_unknown
                    || packages
                        .iter()
                        .any(|p| self.model.depends_on(scope.module, p)));
            if !by_origin && !by_name {
                continue;
            }
            let n = c.segs.len();
            let matched = (0..n).find(|&i| {
                (i + 1..=n).any(|j| sink.calls.iter().any(|p| pattern_matches(p, &c.segs[i..j])))
            });
            let Some(at) = matched else {
                continue;
            };
            if sink.write_method && !writes(&c) {
                continue;
            }
            let relative = sink.kind == EffectKind::DbUpdate
                && (c
                    .segs
                    .iter()
                    .any(|s| self.catalog.relative_update.calls.contains(s))
                    || diesel_relative(&c));
            let target = table_of(&c, &self.model.modules[scope.module].uses)
                .or_else(|| c.entity.clone())
                .or_else(|| {
                    at.checked_sub(1)
                        .filter(|_| sink.model_call)
                        .map(|i| c.segs[i].clone())
                });
            // A diesel write generic over its table: named by what it is given (a row of a
            // `#[diesel(table_name)]` struct, a column of the table's `dsl`), here or by a caller.
            let (target, target_param) = match target {
                Some(t) => (Some(t), None),
                None if origin.as_deref() == Some("diesel") => {
                    let args = diesel_args(&c);
                    match args.iter().find_map(|a| self.table_from_arg(a, scope)) {
                        Some(t) => (Some(t), None),
                        None => (None, args.iter().find_map(|a| self.param_of(a, scope))),
                    }
                }
                None => (None, None),
            };
            let prechecked = sink.kind == EffectKind::DbCreate
                && target.as_ref().is_some_and(|t| out.reads.contains(t));
            // The key a provider call passes: a client's request strategy (a sink that takes
            // one: missing when none is in view), or a key header on a raw request.
            let downstream =
                if !sink.idempotency_option.is_empty() || sink.kind == EffectKind::ExternalCall {
                    let args: Vec<&Ex> = c
                        .root_args
                        .iter()
                        .chain(c.links.iter().flat_map(|(_, a, _)| a.iter()))
                        .chain(std::iter::once(e))
                        .collect();
                    super::client::Clients::new(self.model, self)
                        .downstream(scope.func, scope.module, scope.imp, &args)
                        .or_else(|| {
                            (!sink.idempotency_option.is_empty())
                                .then(|| (crate::facts::DownstreamKey::Missing, String::new()))
                        })
                } else {
                    None
                };
            // `insert_into(t).values(select(..).filter(not(exists(similar))))`: inserts only
            // when no such row exists (by a lookup, not atomically).
            let find_or_create = sink.kind == EffectKind::DbCreate
                && c.links
                    .iter()
                    .filter(|(n, ..)| *n == "values")
                    .any(|(_, args, _)| args.iter().any(|a| tests_absence(a, scope)));
            // SeaORM's `ActiveModel::save` updates the row when the primary key is `Set` and
            // inserts it when it is `NotSet` (https://www.sea-ql.org/SeaORM/docs/basic-crud/insert/):
            // given an id the request names (`ActiveModel { id: Set(id), .. }.save(db)`), a
            // repeat writes the same row. Not an id made for this call (`Set(Uuid::new_v4())`).
            let keyed_save = sink.kind == EffectKind::DbCreate
                && c.entity.is_some()
                && c.links.last().is_some_and(|(n, ..)| *n == "save")
                && c.record
                    .as_ref()
                    .is_some_and(|r| r.iter().any(|k| k == "id"));
            let data_keys = if c.entity.is_some() {
                c.record.clone()
            } else if sink.kind == EffectKind::DbCreate {
                c.links
                    .iter()
                    .find(|(n, ..)| *n == "values")
                    .and_then(|(_, args, _)| values_keys(args.first()?, scope))
            } else {
                None
            };
            // `con.set(format!("session:{}", Uuid::new_v4()), ..)`: a key made per call names a
            // new record on every call.
            // (Not one given a time to live, `set_ex`, `expire`: a session or a cache entry
            // that lapses.)
            let kind = match sink.keyed
                && c.links
                    .iter()
                    .find(|(n, ..)| sink.calls.iter().any(|p| p == n))
                    .filter(|(n, ..)| {
                        !matches!(*n, "set_ex" | "pset_ex" | "set_options" | "expire")
                    })
                    .and_then(|(_, args, _)| args.first())
                    .is_some_and(|k| fresh(k, scope))
            {
                true => EffectKind::DbCreate,
                false => sink.kind,
            };
            // (the key of a key-value call: `incr(&key, 1)`, `expire(&key, 60)`)
            if let Some(key) = c
                .links
                .iter()
                .find(|(n, ..)| sink.calls.iter().any(|p| p == n))
                .and_then(|(n, args, _)| Some((*n, kv_key(args.first()?)?)))
            {
                let expires = crate::link::calls::EXPIRES.contains(&key.0);
                out.kv_keys.push((out.effects.len(), key.1, expires));
            }
            out.effects.push(Effect {
                find_or_create,
                prechecked,
                downstream_key: downstream.as_ref().map(|d| d.0),
                downstream_key_expression: downstream.map(|d| d.1).filter(|t| !t.is_empty()),
                kind,
                callee: c.text.clone(),
                label: match (sink.label.is_empty(), kind != sink.kind) {
                    (true, _) => sink.id.clone(),
                    (false, false) => sink.label.clone(),
                    (false, true) => format!("{} under a key made per call", sink.label),
                },
                location,
                upsert: sink.upsert || keyed_save,
                relative,
                relative_fields: c
                    .links
                    .iter()
                    .filter(|_| relative)
                    .find_map(|(n, args, _)| redis_counter(n, args))
                    .into_iter()
                    .collect(),
                target,
                target_param: target_param.map(Box::new),
                // the keys of the record not made for this call: a repeat writes them again
                // (as a raw insert's bound columns, below)
                request_keys: data_keys.clone().unwrap_or_default(),
                // `.values(&new)` of a parameter: the row as the caller builds it (see
                // `Effects::call_effects`)
                data_param: (sink.kind == EffectKind::DbCreate && data_keys.is_none())
                    .then(|| {
                        c.links
                            .iter()
                            .find(|(n, ..)| *n == "values")
                            .and_then(|(_, args, _)| self.param_of(args.first()?, scope))
                    })
                    .flatten(),
                data_keys,
                sink_impact: sink.impact,
                args: arg_fields(&c),
                made_args: made_fields(&c, scope).into(),
                url: call_url(&c, scope),
                fails_request: true,
                update_keys: match &c.root_var {
                    Some(v) if matches!(sink.kind, EffectKind::DbUpdate | EffectKind::DbCreate) => {
                        scope.sets.get(v).cloned().unwrap_or_default()
                    }
                    _ if sink.kind == EffectKind::DbCreate => c.written.clone(),
                    _ if sink.kind == EffectKind::DbUpdate => diesel_set(&c),
                    _ => vec![],
                },
                ..Effect::default()
            });
            return;
        }
        // raw SQL: a query function or macro with the statement as its first string
        let root_last = c.segs.first().map(String::as_str).unwrap_or("");
        let sql_root = SQL_QUERIES.contains(&root_last)
            || (c.segs.len() == c.links.len() + 1
                && self.catalog.sql.calls.iter().any(|x| x == root_last));
        let mut sql: Option<(String, Line)> = None;
        let statement = |e: &Ex| self.statement(e, scope);
        if sql_root {
            sql = c
                .lits
                .first()
                .cloned()
                .or_else(|| c.root_args.first().and_then(statement))
                .map(|s| (s, c.line));
        }
        // A prepared statement runs where it is run (`conn.prepare_cached(SQL)?.execute(params)`,
        // `stmt.execute(params)` on a variable holding one, tokio-postgres's
        // `client.execute(&stmt, &[..])`), with the values given there; one a `let` keeps is
        // judged where the variable is run.
        if sql.is_none() {
            let prepared_var = |e: &Ex| match bare(e) {
                Ex::Path(p, _) if p.len() == 1 => scope.prepared.get(&p[0]),
                _ => None,
            };
            let run_after = |from: usize| {
                c.links[from..]
                    .iter()
                    .find(|(n, ..)| STATEMENT_RUNS.contains(n))
                    .map(|(_, args, line)| (*args, *line))
            };
            if let Some((i, s)) = c.links.iter().enumerate().find_map(|(i, (n, args, _))| {
                PREPARES
                    .contains(n)
                    .then(|| args.first().and_then(statement))
                    .flatten()
                    .map(|s| (i, s))
            }) {
                match run_after(i + 1) {
                    Some((args, line)) => {
                        sql = Some((s, line));
                        c.run_args = Some(args);
                    }
                    None if scope.deferred_prepare == Some(c.links[i].2) => return,
                    None => sql = Some((s, c.links[i].2)),
                }
            } else if let Some(p) = c.root_var.as_deref().and_then(|v| scope.prepared.get(v))
                && let Some((args, line)) = run_after(0)
            {
                p.run.set(true);
                sql = Some((p.sql.clone(), line));
                c.run_args = Some(args);
            } else if let Some((p, args, line)) = c.links.iter().find_map(|(n, args, line)| {
                let p = prepared_var(args.first()?)?;
                STATEMENT_RUNS.contains(n).then_some((p, &args[1..], *line))
            }) {
                p.run.set(true);
                sql = Some((p.sql.clone(), line));
                c.run_args = Some(args);
            }
        }
        for (name, args, line) in &c.links {
            if sql.is_none()
                && (self.catalog.sql.calls.iter().any(|x| x == name) || SQL_QUERIES.contains(name))
                && let Some(s) = args.first().and_then(statement)
            {
                sql = Some((s, *line));
            }
        }
        // a query whose function a build step generates from a SQL file (cornucopia's
        // `queries::teams::insert_team().bind(&client, ..)`): the statement that file names
        // (its module is included from the build's output: a path into no code in view, of
        // this crate, of another crate of the workspace, or named through a `use` of one)
        if sql.is_none()
            && !self.queries.is_empty()
            && c.origin.as_deref().is_none_or(|o| {
                let o = norm(o);
                self.model.crates.iter().any(|k| k.name == o)
                    || !self.model.crate_of(scope.module).deps.contains_key(&o)
            })
        {
            sql = c.segs.windows(2).find_map(|w| {
                self.queries
                    .get(&(w[0].clone(), w[1].clone()))
                    .map(|s| (s.clone(), c.line))
            });
        }
        let Some((s, line)) = sql else {
            // a diesel read (`favorites::table.filter(..).count().first(conn)`): a create of
            // the same table after it is pre-checked
            // a diesel read generic over its table (`<T as HasTable>::table().filter(predicate)`):
            // named by its filter, here or by a caller; also one built in a variable before
            if c.links.iter().any(|(n, ..)| DIESEL_READS.contains(n))
                && let Some(q) = c.root_var.as_ref().and_then(|v| scope.table_queries.get(v))
            {
                match q.clone() {
                    Ok(t) => out.reads.push(t),
                    Err(r) => out.read_params.push(r),
                }
                return;
            }
            if diesel_read(&c, &self.model.modules[scope.module].uses).is_none()
                && c.links.iter().any(|(n, ..)| DIESEL_READS.contains(n))
                && c.text.contains("table")
            {
                let args = diesel_args(&c);
                if let Some(t) = args.iter().find_map(|a| self.table_from_arg(a, scope)) {
                    out.reads.push(t);
                    return;
                }
                if let Some(r) = args.iter().find_map(|a| self.param_of(a, scope)) {
                    out.read_params.push(r);
                    return;
                }
            }
            if let Some(t) = diesel_read(&c, &self.model.modules[scope.module].uses)
                .or_else(|| seaorm_read(&c))
                .or_else(|| {
                    // `query.one(db)`: a select kept in a variable, run here
                    let var = c.root_var.as_ref()?;
                    c.links
                        .iter()
                        .any(|(name, _, _)| SEAORM_RUNS.contains(name))
                        .then(|| scope.selects.get(var).cloned())?
                })
            {
                out.reads.push(t);
                for (name, args, _) in &c.links {
                    if *name == "filter" {
                        out.read_filters.extend(args.iter().flat_map(lookup_filter));
                    }
                }
            }
            return;
        };
        self.sql_effect(&c, &s, line, scope, out);
    }

    /// What a statement run by chain `c` at `line` does: a write of its table (of the kind its
    /// SQL says, with what it binds), or a read a later create of that table follows.
    fn sql_effect(&self, c: &Chain<'_>, s: &str, line: Line, scope: &Scope, out: &mut Summary) {
        let target = crate::link::calls::sql_table(s);
        match classify(s) {
            Some((kind, upsert, relative)) => {
                // `SET balance = $1` bound to `wallet.balance + body.amount`, `wallet` a row
                // looked up: a read-modify-write, which a repeat applies again
                let relative =
                    relative || kind == EffectKind::DbUpdate && read_modify_write(c, s, scope);
                // a statement built at run time whose conflict clause is a hole (see
                // `crate::sql::open_conflict`): whether a repeat writes a second row is not known
                let open = kind == EffectKind::DbCreate
                    && crate::sql::open_conflict(s)
                    && scope.built_sql.values().any(|b| *b == s);
                // an upsert matched on a value made per call matches nothing on a retry
                let (per_call, unless_missing) = if upsert && !open {
                    self.conflict_bound_fresh(c, s, scope)
                } else {
                    (false, false)
                };
                let upsert = upsert && !per_call && !open;
                // `DELETE .. RETURNING ..` read as one row (sqlx's `fetch_one`, an error
                // `RowNotFound` when nothing was deleted; tokio-postgres's `query_one`): a claim
                // its statement's `?` tests (see `claim_call`), as Prisma's `delete` is.
                if kind == EffectKind::DbDelete
                    && c.links
                        .iter()
                        .any(|(n, ..)| matches!(&**n, "fetch_one" | "query_one"))
                {
                    out.claim_calls.push((
                        "a `DELETE` read as one row (`fetch_one`), an error when the row is already gone",
                        self.location(scope.module, line),
                    ));
                }
                let prechecked = kind == EffectKind::DbCreate
                    && target.as_ref().is_some_and(|t| out.reads.contains(t));
                let data_keys = (kind == EffectKind::DbCreate)
                    .then(|| self.inserted_keys(c, s, scope))
                    .flatten();
                // the columns bound to a parameter (`VALUES ($1, ..)` with `.bind(code)`): a
                // caller that passes a value it makes per call writes a new one there
                let key_params = match (&data_keys, kind) {
                    (Some(_), EffectKind::DbCreate) => {
                        let binds = Self::binds(c);
                        crate::sql::sql_insert_binds(s)
                            .into_iter()
                            .filter_map(|(col, i)| {
                                Some((col, self.param_of(binds.get(i)?, scope)?))
                            })
                            .collect()
                    }
                    _ => Vec::new(),
                };
                // `INSERT INTO t .. SELECT .. WHERE NOT EXISTS (..)`: only what is not there.
                let find_or_create =
                    kind == EffectKind::DbCreate && crate::sql::sql_inserts_if_absent(s);
                out.effects.push(Effect {
                    find_or_create,
                    // the columns bound to what this request does not make: a repeat sends them
                    // again (values a caller makes are dropped where the create is followed)
                    request_keys: data_keys.clone().unwrap_or_default(),
                    data_keys,
                    key_params,
                    update_keys: match kind {
                        EffectKind::DbUpdate => {
                            // (a column set to a bound value: that value, by its name)
                            let binds = Self::binds(c);
                            let bound = crate::sql::sql_set_binds(s);
                            let mut keys = crate::sql::sql_set_values(s);
                            for (column, value) in keys.iter_mut().filter(|(_, v)| v.is_none()) {
                                *value = bound
                                    .iter()
                                    .find(|(c, _)| c == column)
                                    .and_then(|(_, i)| binds.get(*i))
                                    .and_then(|b| written_value(b));
                            }
                            keys
                        }
                        EffectKind::DbCreate => crate::sql::sql_insert_values(s),
                        _ => vec![],
                    },
                    kind,
                    callee: c.text.clone(),
                    label: if open {
                        crate::sql::OPEN_CONFLICT.into()
                    } else {
                        crate::link::calls::per_call_label("raw SQL", per_call, unless_missing)
                    },
                    sink_impact: open.then_some(crate::facts::Impact::Unknown),
                    location: self.location(scope.module, line),
                    upsert,
                    upsert_unless_missing: unless_missing,
                    relative,
                    shifts_range: relative && crate::sql::sql_shifts_range(s),
                    prechecked,
                    target,
                    fails_request: true,
                    ..Effect::default()
                });
            }
            // `SELECT .. FROM t WHERE key = $1` bound to a value this request just made
            // (`Uuid::new_v4()`): it never finds an earlier run's row, so it guards nothing.
            None if crate::link::calls::is_select(s) && self.selects_by_fresh(c, s, scope) => {}
            // `SELECT .. FROM t`: a read that a later create of `t` follows
            None if crate::link::calls::is_select(s) => {
                if crate::sql::sql_locks(s) {
                    out.locked_reads.extend(target.clone());
                }
                out.reads.extend(target);
                out.read_filters.extend(crate::sql::sql_where_constants(s));
            }
            None => {}
        }
    }
}

/// The methods that run a diesel select for rows (diesel-async's and the `_async` wrappers').
const DIESEL_READS: &[&str] = &[
    "first",
    "load",
    "get_result",
    "get_results",
    "count",
    "exists",
    "find",
    "first_async",
    "load_async",
    "get_result_async",
    "get_results_async",
];

/// The arguments of a diesel chain that may name its table: what `values`, `set` and `filter`
/// are given, also inside the statement (`update(<T>::table().filter(predicate))`).
fn diesel_args<'e>(c: &Chain<'e>) -> Vec<&'e Ex> {
    fn inner<'e>(e: &'e Ex, out: &mut Vec<&'e Ex>, depth: usize) {
        if depth > 16 {
            return;
        }
        if let Ex::Method(recv, name, args, _) = e {
            if matches!(name.as_str(), "filter" | "values" | "set" | "find") {
                out.extend(args.iter());
            }
            inner(recv, out, depth + 1);
        }
    }
    let mut out = Vec::new();
    for (name, args, _) in &c.links {
        if matches!(*name, "filter" | "values" | "set" | "find") {
            out.extend(args.iter());
        }
    }
    for a in c.root_args {
        inner(a, &mut out, 0);
    }
    out
}

/// The table a diesel query reads (`favorites::table.filter(..).first(conn)` → `favorites`).
fn diesel_read(c: &Chain<'_>, uses: &[&UseDecl]) -> Option<String> {
    if !c
        .links
        .iter()
        .any(|(name, _, _)| DIESEL_READS.contains(name))
    {
        return None;
    }
    let root = c.text.split('.').next().unwrap_or("");
    let mut segs = root.rsplit("::");
    match (segs.next(), segs.next()) {
        (Some("table"), Some(t)) if !t.is_empty() => Some(t.to_string()),
        _ => table_of(c, uses),
    }
}

/// The entity a SeaORM select reads (`credential::Entity::find_by_id(id).one(db)`,
/// `Invite::find().filter(..).all(db)`): its module, as the chain names it.
/// The methods that run a SeaORM select for rows.
const SEAORM_RUNS: &[&str] = &["one", "all", "count", "exists", "stream", "paginate"];

fn seaorm_read(c: &Chain<'_>) -> Option<String> {
    if !c
        .links
        .iter()
        .any(|(name, _, _)| SEAORM_RUNS.contains(name))
    {
        return None;
    }
    // `user.find_related(credential::Entity)`: the entity named by the argument
    let related = c
        .links
        .iter()
        .find(|(name, _, _)| is_related_find(name))
        .map(|(_, args, _)| match args.first() {
            Some(Ex::Path(p, _)) => entity_as_written(p),
            _ => None,
        });
    match related {
        Some(entity) => entity,
        None => {
            let finds = c.segs.iter().any(|s| s.starts_with("find"))
                || c.segs
                    .iter()
                    .position(|s| s == "Entity")
                    .and_then(|i| c.segs.get(i + 1))
                    .is_some_and(|s| entity_select(s));
            c.entity.clone().filter(|_| finds)
        }
    }
}

/// An associated function of a SeaORM `Entity` run for rows (`.one(db)`, `.all(db)`) that is
/// no write: SeaORM's own `find*`, or a finder the project defines on the entity
/// (`impl Entity { pub fn find_by_name(..) -> Select<Entity> { Self::find().filter(..) } }`,
/// named as it likes: `secure_find_by_name`, `by_org`), which returns a `Select`.
fn entity_select(name: &str) -> bool {
    !["insert", "update", "delete", "exec"]
        .iter()
        .any(|w| name.starts_with(w))
}

/// The tables read, as `facts::model_key`s, each once and in order.
fn read_keys(reads: &[String]) -> Vec<String> {
    reads
        .iter()
        .map(|t| crate::facts::model_key(t))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The futures a `try_join!`/`join!` (tokio, futures) or `try_join(a, b)` awaits together, in
/// the order their results are bound.
fn joined_futures(e: &Ex) -> Option<&[Ex]> {
    let joins = |p: &[String]| {
        p.last()
            .is_some_and(|l| matches!(l.as_str(), "try_join" | "join"))
    };
    match e {
        Ex::Macro { path, args, .. } if joins(path) => Some(args),
        // `futures::future::try_join(a, b).await` (`.await` and `?` are lowered away)
        Ex::Call(f, args, _) if matches!(&**f, Ex::Path(p, _) if joins(p)) => Some(args),
        _ => None,
    }
}

/// The entity a SeaORM select run for rows reads, as written (`entities::Credential::Entity::
/// find_by_id(id).one(db)`, `user.find_related(entities::Credential::Entity)..one(db)`): the
/// module before `Entity`.
fn selected_as_written(e: &Ex) -> Option<String> {
    let mut cur = e;
    let mut runs = false;
    for _ in 0..24 {
        match cur {
            Ex::Method(recv, name, args, _) => {
                if is_related_find(name) {
                    return match args.first() {
                        Some(Ex::Path(p, _)) if runs => entity_as_written(p),
                        _ => None,
                    };
                }
                runs |= matches!(name.as_str(), "one" | "all");
                cur = recv;
            }
            Ex::Call(func, _, _) => {
                let Ex::Path(p, _) = &**func else { return None };
                let (last, rest) = p.split_last()?;
                return (runs && (last.starts_with("find") || entity_select(last)))
                    .then(|| entity_as_written(rest))
                    .flatten();
            }
            _ => return None,
        }
    }
    None
}

/// The entity a path to a SeaORM `Entity` names, as written: the module before it
/// (`entities::Credential::Entity` → `Credential`).
fn entity_as_written(p: &[String]) -> Option<String> {
    match p {
        [.., module, last] if last == "Entity" => Some(module.clone()),
        _ => None,
    }
}

/// SeaORM's selects of the rows related to a model (`find_related`, `find_also_related`,
/// `find_with_related`, `find_linked`).
fn is_related_find(name: &str) -> bool {
    name.starts_with("find_") && (name.ends_with("_related") || name.ends_with("_linked"))
}

/// The fields a lookup's filter fixes to constants: the argument of SeaORM's and diesel's
/// `.filter(col.eq(C))` (`Column::Status.eq(Status::Pending)`, `status.eq("pending")`, also
/// inside `.and(..)`); as (field, constant).
fn lookup_filter(e: &Ex) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    let mut seen = 0usize;
    while let Some(e) = stack.pop() {
        seen += 1;
        if seen > 4096 {
            break;
        }
        match e {
            Ex::Method(recv, name, args, _)
                if name == "eq"
                    && args.len() == 1
                    && let Ex::Path(p, _) = &**recv
                    && let Some(c) = constant_value(&args[0]) =>
            {
                if let Some(field) = p.last() {
                    out.push((field.clone(), c));
                }
            }
            _ => {}
        }
        super::parse::children(e, &mut stack);
    }
    out
}

/// What `Set(value)` (SeaORM's `ActiveValue::Set`) writes, as `Effect::update_keys` has it: the
/// constant when it is one (`Set(true)`, `Set("paid".into())`, `Set(Some(Utc::now()))`,
/// `Set(Status::Done)`), else `Some(None)`; `None` when `rhs` is no `Set(..)`.
fn set_value(rhs: &Ex) -> Option<Option<String>> {
    let Ex::Call(f, args, _) = rhs else {
        return None;
    };
    let Ex::Path(p, _) = &**f else { return None };
    if p.last().is_none_or(|l| l != "Set") {
        return None;
    }
    Some(args.first().and_then(written_value))
}

/// What an update writes into a column, as `Effect::update_keys` has it: a constant (see
/// [`constant_value`]), or a value the request holds by its name (`body.priority`,
/// `&payload.status`, `input.title.clone()`: `v:priority`), which a state guard's test may
/// compare the row's field with.
fn written_value(e: &Ex) -> Option<String> {
    fn name(e: &Ex, depth: usize) -> Option<String> {
        if depth > 8 {
            return None;
        }
        match e {
            Ex::Other(inner) if inner.len() == 1 => name(&inner[0], depth + 1),
            Ex::Field(_, f) if !f.is_empty() && !f.starts_with(|c: char| c.is_ascii_digit()) => {
                Some(f.clone())
            }
            Ex::Path(p, _)
                if p.len() == 1 && p[0].starts_with(|c: char| c.is_ascii_lowercase()) =>
            {
                Some(p[0].clone())
            }
            Ex::Method(recv, m, args, _)
                if args.is_empty()
                    && matches!(
                        m.as_str(),
                        "clone"
                            | "to_string"
                            | "to_owned"
                            | "as_str"
                            | "as_ref"
                            | "as_deref"
                            | "into"
                    ) =>
            {
                name(recv, depth + 1)
            }
            Ex::Call(f, args, _)
                if args.len() == 1
                    && matches!(&**f, Ex::Path(p, _) if p.last().is_some_and(|l| l == "Some")) =>
            {
                name(&args[0], depth + 1)
            }
            _ => None,
        }
    }
    constant_value(e).or_else(|| name(e, 0).map(|n| format!("v:{n}")))
}

/// The assignments of a diesel update's `.set(..)`: each `column.eq(value)` (alone or in a
/// tuple), as the column's path and the value.
fn diesel_assignments<'e>(c: &Chain<'e>) -> impl Iterator<Item = (&'e [String], &'e Ex)> {
    fn one(e: &Ex) -> Option<(&[String], &Ex)> {
        match e {
            Ex::Method(col, name, args, _) if name == "eq" && args.len() == 1 => match &**col {
                Ex::Path(p, _) => Some((p.as_slice(), &args[0])),
                _ => None,
            },
            _ => None,
        }
    }
    c.links
        .iter()
        .filter(|(n, ..)| *n == "set")
        .flat_map(|(_, args, _)| args.iter())
        .flat_map(|a| match a {
            Ex::List(items) => items.iter().filter_map(one).collect::<Vec<_>>(),
            other => one(other).into_iter().collect(),
        })
}

/// What a diesel update's `.set(..)` writes: `deleted.eq(true)`, `(status.eq("done"),
/// updated_at.eq(now))`, each column with its constant (see [`constant_value`]).
fn diesel_set(c: &Chain<'_>) -> Vec<(String, Option<String>)> {
    diesel_assignments(c)
        .filter_map(|(p, value)| p.last().map(|k| (k.clone(), written_value(value))))
        .collect()
}

/// The counter a Redis increment moves, by its name: a hash's field (`hincr(key, "calls", 1)`),
/// or the last named segment of the key (`incr(format!("views:{id}"), 1)` is `views`). As the
/// TypeScript front end reads `hincrby`/`incr`.
fn redis_counter(method: &str, args: &[Ex]) -> Option<String> {
    let lit = |e: &Ex| -> Option<String> {
        match e {
            Ex::Lit(s) => Some(s.clone()),
            Ex::Macro { path, lits, .. } if path.last().is_some_and(|p| p == "format") => {
                lits.first().cloned()
            }
            _ => None,
        }
    };
    if method.starts_with("hincr") {
        return args.get(1).and_then(lit);
    }
    if !(method.starts_with("incr") || method.starts_with("decr")) {
        return None;
    }
    // (the holes of a `format!` string, `{id}`, are no names)
    let key = lit(args.first()?)?;
    let mut plain = String::new();
    let mut depth = 0usize;
    for ch in key.chars() {
        match ch {
            '{' => {
                depth += 1;
                plain.push('\0');
            }
            '}' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(ch),
            _ => {}
        }
    }
    crate::text::key_counter_name(&plain)
}

/// A diesel update that sets a column from its own value: `.set(posts::count.eq(posts::count -
/// 1))` (an operator on the column, named as the `eq` names it), `.set(blocked.eq(!row.blocked))`
/// (the field of that name of a value the code holds, turned over, the operation's only
/// operand): a repeat changes it again
/// (https://docs.rs/diesel/latest/diesel/query_builder/struct.UpdateStatement.html#method.set).
fn diesel_relative(c: &Chain<'_>) -> bool {
    diesel_assignments(c).any(|(p, value)| match value {
        Ex::Other(parts) => {
            (p.len() >= 2 && parts.iter().any(|x| matches!(x, Ex::Path(q, _) if q == p)))
                || matches!(parts.as_slice(), [Ex::Field(_, f)] if p.last() == Some(f))
        }
        _ => false,
    })
}

/// A constant as `Effect::update_keys` writes it (see [`set_value`]).
fn constant_value(e: &Ex) -> Option<String> {
    match e {
        Ex::Lit(s) => Some(format!("s:{s}")),
        Ex::Path(p, _) if p.len() == 1 && matches!(p[0].as_str(), "true" | "false") => {
            Some(format!("b:{}", p[0]))
        }
        // an enum member: `Status::Done`
        Ex::Path(p, _)
            if p.len() >= 2
                && p.iter()
                    .all(|s| s.chars().next().is_some_and(char::is_uppercase)) =>
        {
            Some(format!("m:{}.{}", p[p.len() - 2], p[p.len() - 1]))
        }
        // `Some(x)`, `"paid".into()`, `x.to_string()`: what it wraps
        Ex::Call(f, args, _) if matches!(&**f, Ex::Path(p, _) if p.last().is_some_and(|l| l == "Some")) => {
            args.first().and_then(constant_value)
        }
        Ex::Method(recv, name, args, _)
            if args.is_empty() && matches!(name.as_str(), "into" | "to_string" | "to_owned") =>
        {
            constant_value(recv)
        }
        // `Utc::now()`, `OffsetDateTime::now_utc()`, `chrono::Local::now().naive_utc()`
        Ex::Call(f, _, _) if matches!(&**f, Ex::Path(p, _) if p.last().is_some_and(|l| matches!(l.as_str(), "now" | "now_utc" | "now_local"))) => {
            Some("now".into())
        }
        Ex::Method(recv, _, _, _) if matches!(constant_value(recv).as_deref(), Some("now")) => {
            Some("now".into())
        }
        _ => None,
    }
}

/// The table a diesel call names (`insert_into(twofactor::table)` → `twofactor`), also through
/// the `dsl` module diesel's `table!` makes, where the table goes by its own name
/// (`use crate::schema::price::dsl::price; insert_into(price)`, `use schema::coupon::dsl as c;
/// update(c::coupon)`, `use schema::users::dsl::*; delete(users)`): `uses` are the `use`s of
/// the calling module.
fn table_of(c: &Chain<'_>, uses: &[&UseDecl]) -> Option<String> {
    // `crates::table`, `price::dsl::price`
    fn named(p: &[String]) -> Option<String> {
        match p {
            [.., t, last] if last == "table" => Some(t.clone()),
            [.., t, dsl, x] if dsl == "dsl" && x == t => Some(t.clone()),
            _ => None,
        }
    }
    let path = |p: &[String]| through_uses(p, uses, named);
    // also as the receiver of a query (`crates::table.find(id)`, `posts::table.filter(..)` in
    // `diesel::delete(..)`)
    let table = |a: &Ex| {
        let mut cur = a;
        for _ in 0..16 {
            match cur {
                Ex::Path(p, _) => return path(p),
                Ex::Method(recv, ..) => cur = recv,
                _ => return None,
            }
        }
        None
    };
    c.root_args
        .iter()
        .chain(c.links.iter().flat_map(|(_, args, _)| args.iter()))
        .find_map(table)
}

/// The table of a column named through its table's `dsl` (`dsl::merchant_id` with `use
/// schema::merchant_account::dsl;`, `users::dsl::email`): the segment before `dsl`.
fn column_table(p: &[String], uses: &[&UseDecl]) -> Option<String> {
    through_uses(p, uses, |full| match full {
        [.., t, dsl, _] if dsl == "dsl" => Some(t.clone()),
        _ => None,
    })
}

/// What `named` makes of a path as written, or as the calling module's `use`s spell it out: its
/// first segment through an alias (`use schema::coupon::dsl as c;` for `c::coupon`), a lone
/// name through a glob (`use schema::users::dsl::*;` for `users`).
fn through_uses(
    p: &[String],
    uses: &[&UseDecl],
    named: impl Fn(&[String]) -> Option<String>,
) -> Option<String> {
    named(p).or_else(|| {
        let (first, rest) = p.split_first()?;
        uses.iter().find_map(|u| {
            if u.alias == *first {
                named(&[u.path.as_slice(), rest].concat())
            } else if u.alias == "*" && rest.is_empty() {
                named(&[u.path.as_slice(), std::slice::from_ref(first)].concat())
            } else {
                None
            }
        })
    })
}

/// An expression without the wrappers that only pass it on (`&x`, `(x)`, lowered as a lone
/// sub-expression).
fn bare(e: &Ex) -> &Ex {
    let mut e = e;
    for _ in 0..8 {
        match e {
            Ex::Other(inner) if inner.len() == 1 => e = &inner[0],
            _ => break,
        }
    }
    e
}

/// A generic alias's type with its parameters (`$0`, `$1`, ..) replaced by the arguments of a
/// use of it; a parameter the use leaves out stays as it is (and resolves to nothing).
fn fill_params(t: &mut Ty, args: &[Ty], depth: usize) {
    if depth > 32 {
        return;
    }
    if let [one] = t.path.as_slice()
        && let Some(i) = one.strip_prefix('$').and_then(|n| n.parse::<usize>().ok())
        && let Some(a) = args.get(i)
    {
        *t = a.clone();
        return;
    }
    for a in &mut t.args {
        fill_params(a, args, depth + 1);
    }
}

/// The type annotations of the `let`s in `stmts`, blocks inside included.
fn annotated<'a>(stmts: &'a [Stmt], out: &mut Vec<&'a Ty>) {
    let mut stack: Vec<&Ex> = Vec::new();
    for s in stmts {
        if let Stmt::Let { ty: Some(t), .. } = s
            && out.len() < 256
        {
            out.push(t);
        }
    }
    push_stmts(stmts, &mut stack);
    let mut seen = 0;
    while let Some(e) = stack.pop() {
        seen += 1;
        if seen > 100_000 {
            break;
        }
        if let Ex::Block(inner) = e {
            for s in inner.iter() {
                if let Stmt::Let { ty: Some(t), .. } = s
                    && out.len() < 256
                {
                    out.push(t);
                }
            }
        }
        children(e, &mut stack);
    }
}

/// An HTTP client call whose method is a write (`request(Method::POST, ..)`).
fn writes(c: &Chain<'_>) -> bool {
    let is_write = |s: &str| crate::facts::is_mutation_method(&s.to_ascii_uppercase());
    c.links.iter().any(|(_, args, _)| {
        args.iter().any(|a| match a {
            Ex::Path(p, _) => p.last().is_some_and(|s| is_write(s)),
            Ex::Lit(s) => is_write(s),
            _ => false,
        })
    })
}

/// Raw SQL, including a `WITH` whose common table expressions write (`with x as (insert ..)
/// select ..`): the first writing statement decides.
fn classify(sql: &str) -> Option<(EffectKind, bool, bool)> {
    if let Some(c) = classify_sql(sql) {
        return Some(c);
    }
    let lower = sql.to_ascii_lowercase();
    if lower.split_whitespace().next() != Some("with") {
        return None;
    }
    let words: Vec<(usize, &str)> = lower
        .match_indices(|c: char| c.is_ascii_alphanumeric() || c == '_')
        .map(|(i, _)| i)
        .filter(|&i| {
            i == 0
                || !lower.as_bytes()[i - 1].is_ascii_alphanumeric()
                    && lower.as_bytes()[i - 1] != b'_'
        })
        .map(|i| {
            let end = lower[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(lower.len(), |e| i + e);
            (i, &lower[i..end])
        })
        .collect();
    for (k, (i, w)) in words.iter().enumerate() {
        let prev = if k > 0 { words[k - 1].1 } else { "" };
        if matches!(*w, "insert" | "update" | "delete") && !matches!(prev, "for" | "do") {
            return classify_sql(&sql[*i..]);
        }
    }
    None
}

/// A statement being walked: where its effects start, whether it ends in `?`, whether it drops
/// its error (`let _ =`, `.ok()`), and the creates of the statements before it.
struct Settle {
    start: usize,
    fails: bool,
    drops: bool,
    before: Vec<Location>,
    /// How many of the walk's calls to functions that refuse unless they win a claim came
    /// before it.
    claim_calls: usize,
    /// How many of the block's guards came before it.
    guards: usize,
    /// How many of the walk's calls to functions that fail when their lookup finds the row came
    /// before it.
    refusal_calls: usize,
}

/// A statement that ends in `?` on a call that fails unless it wins a claim
/// (`self.db.delete_integration(id).await?;`): what follows it runs once, and the function
/// refuses the other runs in turn.
fn claim_call(
    out: &Summary,
    p: &Settle,
    claimed_from: &mut Option<(usize, &'static str, Location, bool)>,
) {
    if p.fails
        && claimed_from.is_none()
        && let Some((what, at)) = out.claim_calls.get(p.claim_calls..).and_then(|c| c.first())
    {
        *claimed_from = Some((out.effects.len(), what, at.clone(), true));
    }
}

/// After a statement is walked: its effects fail the function only if it ends in `?` (its own
/// creates' errors are dropped if it drops them); they run after the creates of the statements
/// before it; and its own creates that fail the function precede the statements after it.
fn settle_statement(out: &mut Summary, s: Settle, creates_here: &mut Vec<Location>) {
    let Settle {
        start,
        fails,
        drops,
        before,
        ..
    } = s;
    for e in &mut out.effects[start..] {
        e.fails_request &= fails;
        e.swallowed |= drops && e.via.is_empty();
        e.runs_after(&before);
        if e.orders_what_follows() && creates_here.len() < 64 && !creates_here.contains(&e.location)
        {
            creates_here.push(e.location.clone());
        }
    }
}

/// The key of a key-value call, written as a name or a `format!` string (`&key`,
/// `format!("ratelimit:{ip}")`), to compare with the key of another call in the same function.
fn kv_key(e: &Ex) -> Option<String> {
    match bare(e) {
        Ex::Path(segs, _) => Some(segs.join("::")),
        Ex::Lit(s) => Some(format!("\"{s}\"")),
        Ex::Macro { path, lits, .. } if path.last().is_some_and(|p| p == "format") => {
            lits.first().map(|l| format!("format!({l})"))
        }
        _ => None,
    }
}

/// An increment whose key the same function gives a time to live (`incr(&key, 1)` and
/// `expire(&key, 60)`): a window counter (see `Effect::window`).
fn mark_windows(out: &mut Summary) {
    let expiring: Vec<String> = out
        .kv_keys
        .iter()
        .filter(|(_, _, expires)| *expires)
        .map(|(_, k, _)| k.clone())
        .collect();
    for (i, key, _) in std::mem::take(&mut out.kv_keys) {
        if expiring.contains(&key)
            && let Some(e) = out.effects.get_mut(i)
            && e.relative
            && e.kind == EffectKind::DbUpdate
        {
            e.window = true;
        }
    }
}

fn finish(out: &mut Summary) {
    // A create after a delete of the same model, in this function or in a function it called
    // before, replaces the set: a repeat leaves the same rows (as the TypeScript side judges it).
    // The effects are in the order the function reaches them.
    // A called function's effects are sorted, not in its order: its own deletes count only for
    // the effects of later calls.
    let mut deleted: Vec<(Option<String>, String)> = Vec::new();
    for e in out.effects.iter_mut() {
        let call = e.via.first().cloned();
        match (e.kind, &e.target) {
            // Not a delete that runs only while a looked-up row is in some state (`if
            // row.status == Failed { delete }`): it removes one stale row, not the set.
            (EffectKind::DbDelete | EffectKind::DbUpdate, Some(t))
                if crate::link::calls::replaces_set(e) =>
            {
                deleted.push((call, crate::catalog::harm::model_name(t)));
            }
            (EffectKind::DbCreate, Some(t))
                if deleted.iter().any(|(c, d)| {
                    *d == crate::catalog::harm::model_name(t) && (c.is_none() || *c != call)
                }) =>
            {
                e.replaces = true;
            }
            _ => {}
        }
    }
    out.key_obs.dedup();
    out.key_obs.truncate(512);
    out.signature_checks.sort();
    out.signature_checks.dedup();
    out.signature_checks.truncate(8);
    Effect::dedup(&mut out.effects);
    out.key_reads.sort();
    out.key_reads.dedup();
}

/// The creates among effects `r` have their unique violation answered.
fn answered(out: &mut Summary, r: std::ops::Range<usize>) {
    for e in out.effects.get_mut(r).into_iter().flatten() {
        e.unique_caught |= e.kind == EffectKind::DbCreate;
    }
}

/// The variable a method chain starts from (`res` in `res.unique_error(msg).map(..)`).
fn chain_root(e: &Ex) -> Option<&str> {
    let mut e = e;
    for _ in 0..4096 {
        e = match e {
            Ex::Method(recv, ..) => recv,
            Ex::Field(base, _) => base,
            Ex::Path(p, _) if p.len() == 1 => return Some(&p[0]),
            _ => return None,
        };
    }
    None
}

/// Puts `name` in `set` or takes it out.
/// An expression without the calls that only map its error or wait for it (`.map_err(..)`,
/// `.await`, `.context(..)`), and the arguments of those calls.
fn error_mapped(e: &Ex) -> (&Ex, Vec<&Ex>) {
    const MAPS: &[&str] = &[
        "map_err",
        "context",
        "with_context",
        "change_context",
        "attach_printable",
        "attach",
        "await",
    ];
    let mut cur = e;
    let mut args = Vec::new();
    for _ in 0..8 {
        match cur {
            Ex::Method(recv, name, a, _) if MAPS.contains(&name.as_str()) => {
                args.extend(a.iter());
                cur = recv;
            }
            _ => break,
        }
    }
    (cur, args)
}

fn mark(set: &mut HashSet<String>, name: &str, on: bool) {
    if on {
        set.insert(name.to_string());
    } else {
        set.remove(name);
    }
}

/// Does an expression filter on `not(exists(..))`, or name a variable that holds one?
fn tests_absence(e: &Ex, scope: &Scope) -> bool {
    let named =
        |x: &Ex, name: &str| matches!(x, Ex::Path(p, _) if p.last().is_some_and(|l| l == name));
    search(vec![e], 2_000, false, |x| match x {
        Ex::Path(p, _) if p.len() == 1 && scope.absent_selects.contains(&p[0]) => Visit::Found,
        Ex::Call(f, args, _)
            if named(f, "not")
                && args
                    .iter()
                    .any(|a| matches!(a, Ex::Call(g, _, _) if named(g, "exists"))) =>
        {
            Visit::Found
        }
        Ex::Closure { .. } => Visit::Skip,
        _ => Visit::Enter,
    })
}

/// Does a statement run all it does whenever it runs: no block, branch or closure in it?
fn unconditional(s: &Stmt) -> bool {
    let mut roots = Vec::new();
    push_stmts(std::slice::from_ref(s), &mut roots);
    !search(roots, 2_000, true, |e| match e {
        Ex::Block(_) | Ex::Closure { .. } | Ex::Gate { .. } | Ex::FieldTest(_) | Ex::Failure(_) => {
            Visit::Found
        }
        _ => Visit::Enter,
    })
}

/// Does a statement name a local variable (`krate`, `krate.id`)?
fn mentions_var(s: &Stmt, var: &str) -> bool {
    let mut roots = Vec::new();
    push_stmts(std::slice::from_ref(s), &mut roots);
    search(roots, 2_000, false, |e| match e {
        Ex::Path(p, _) if p.len() == 1 && p[0] == var => Visit::Found,
        _ => Visit::Enter,
    })
}

/// What claim an initialiser makes, if it makes one: an `UPDATE` of the state its `WHERE` tests
/// (`sqlx::query!("UPDATE jobs SET status = 'running' WHERE .. AND status = 'pending'")`), a
/// Redis `SET .. NX` (`redis::cmd("SET").arg(k).arg(v).arg("NX")`) or `set_nx`, an `INSERT ..
/// ON CONFLICT DO NOTHING` whose row count says whether it wrote.
fn claim_of(e: &Ex) -> Option<&'static str> {
    let mut stack = vec![e];
    let mut seen = 0usize;
    let (mut set, mut nx) = (false, false);
    while let Some(e) = stack.pop() {
        seen += 1;
        if seen > 2_000 {
            return None;
        }
        match e {
            Ex::Lit(l) => {
                if crate::sql::sql_moves_state(l) {
                    return Some("an `UPDATE` of the state its `WHERE` tests");
                }
                if crate::sql::sql_skips_existing(l) {
                    return Some(crate::sql::SKIPS_EXISTING);
                }
                if crate::sql::sql_deletes(l) {
                    return Some(crate::sql::DELETES_ROW);
                }
                set |= l.eq_ignore_ascii_case("set");
                nx |= l.eq_ignore_ascii_case("nx");
            }
            Ex::Macro { lits, .. } if lits.iter().any(|l| crate::sql::sql_moves_state(l)) => {
                return Some("an `UPDATE` of the state its `WHERE` tests");
            }
            Ex::Macro { lits, .. } if lits.iter().any(|l| crate::sql::sql_skips_existing(l)) => {
                return Some(crate::sql::SKIPS_EXISTING);
            }
            Ex::Macro { lits, .. } if lits.iter().any(|l| crate::sql::sql_deletes(l)) => {
                return Some(crate::sql::DELETES_ROW);
            }
            // diesel's `diesel::delete(t.find(id)).execute(conn)?`, SeaORM's
            // `Entity::delete_by_id(id).exec(db)`: the number of rows it removed.
            Ex::Call(f, _, _)
                if matches!(&**f, Ex::Path(p, _)
                    if p.last().is_some_and(|l| l == "delete" || l == "delete_by_id")) =>
            {
                return Some(crate::sql::DELETES_ROW);
            }
            // diesel's `insert_into(t).values(..).on_conflict_do_nothing().execute(conn)?`: the
            // number of rows it wrote.
            Ex::Method(_, name, _, _) if name == "on_conflict_do_nothing" => {
                return Some(crate::sql::SKIPS_EXISTING);
            }
            Ex::Method(_, name, _, _) if name == "set_nx" => return Some("a Redis `SETNX`"),
            // A closure's body runs later, if at all.
            Ex::Closure { .. } => continue,
            _ => {}
        }
        super::parse::children(e, &mut stack);
    }
    if set && nx {
        return Some("a Redis `SET .. NX`");
    }
    diesel_moves_state(e).then_some("a diesel `update` of the state its `filter` tests")
}

/// `diesel::update(t.filter(status.eq("pending"))).set(status.eq("running"))`, or
/// `..filter(yanked.is_distinct_from(v))..set(yanked.eq(v))`: an update that sets a column its
/// filter tests (not to a value computed from the column, as a counter is), so the row leaves
/// the state the filter matches and a second run updates nothing.
fn diesel_moves_state(e: &Ex) -> bool {
    // The column a comparison's receiver names (`versions::yanked`, `status`).
    fn column(e: &Ex) -> Option<&str> {
        match e {
            Ex::Path(p, _) => p.last().map(String::as_str),
            _ => None,
        }
    }
    const TESTS: &[&str] = &[
        "eq",
        "ne",
        "is_distinct_from",
        "is_not_distinct_from",
        "is_null",
        "is_not_null",
        "eq_any",
        "lt",
        "le",
        "gt",
        "ge",
    ];
    let (mut update, mut filtered, mut set) = (false, Vec::new(), Vec::new());
    let mut stack = vec![(e, false, false)];
    let mut seen = 0usize;
    while let Some((x, in_filter, in_set)) = stack.pop() {
        seen += 1;
        if seen > 2_000 {
            return false;
        }
        match x {
            Ex::Call(f, args, _) => {
                update |= matches!(&**f, Ex::Path(p, _) if p.last().is_some_and(|l| l == "update"));
                stack.push((f, in_filter, in_set));
                stack.extend(args.iter().map(|a| (a, in_filter, in_set)));
            }
            Ex::Method(recv, name, args, _) => {
                if in_filter
                    && TESTS.contains(&name.as_str())
                    && let Some(c) = column(recv)
                {
                    filtered.push(c);
                }
                // `col.eq(value)` in `set(..)`: not a counter (`count.eq(count + 1)`).
                if in_set
                    && name == "eq"
                    && let Some(c) = column(recv)
                    && !args
                        .iter()
                        .any(|a| !matches!(a, Ex::Path(..) | Ex::Lit(_)) && mentions_column(a, c))
                {
                    set.push(c);
                }
                let (f, s) = (
                    in_filter || name == "filter" || name == "or_filter",
                    in_set || name == "set",
                );
                stack.push((recv, in_filter, in_set));
                stack.extend(args.iter().map(|a| (a, f, s)));
            }
            Ex::Closure { .. } => {}
            _ => {
                let mut kids = Vec::new();
                super::parse::children(x, &mut kids);
                stack.extend(kids.into_iter().map(|k| (k, in_filter, in_set)));
            }
        }
    }
    update && set.iter().any(|c| filtered.contains(c))
}

/// Does an expression name a column (`count + 1` names `count`)?
fn mentions_column(e: &Ex, column: &str) -> bool {
    search(vec![e], 500, true, |x| match x {
        Ex::Path(p, _) if p.last().is_some_and(|l| l == column) => Visit::Found,
        _ => Visit::Enter,
    })
}

/// The row a count is read from (`existing.try_get("count")?`, `row.get::<i64, _>("total")`,
/// with any error mapping): the variable holding the row of a `SELECT COUNT(*) AS count`.
fn count_of_row(e: &Ex) -> Option<&str> {
    let mut e = e;
    for _ in 0..8 {
        match e {
            Ex::Caught(inner) => e = inner,
            Ex::Method(recv, m, _, _)
                if matches!(
                    m.as_str(),
                    "map_err" | "unwrap" | "expect" | "unwrap_or" | "unwrap_or_default"
                ) =>
            {
                e = recv
            }
            Ex::Method(recv, m, args, _) if matches!(m.as_str(), "try_get" | "get") => {
                let column = match args.first() {
                    Some(Ex::Lit(l)) => l.to_ascii_lowercase(),
                    _ => return None,
                };
                return match &**recv {
                    Ex::Path(p, _)
                        if p.len() == 1
                            && (column.contains("count") || column.contains("total")) =>
                    {
                        Some(p[0].as_str())
                    }
                    _ => None,
                };
            }
            _ => return None,
        }
    }
    None
}

/// The branch that runs when a lookup found its row (`if let Some(row) = found { .. }`) and
/// deletes from the table it read: a retry's lookup finds nothing, so what the branch does runs
/// once, as after a consumed token (unless it creates that row again; money is left as it is).
fn consume_found(effects: &mut [Effect], tables: &[String]) {
    let deleted = effects.iter().find_map(|e| {
        let t = crate::facts::model_key(e.target.as_deref()?);
        (e.kind == EffectKind::DbDelete && tables.contains(&t)).then_some(t)
    });
    if let Some(table) = deleted {
        consume(effects, table);
    }
}

/// What runs while a row of `table` exists that these effects delete runs once: marked as
/// consuming it, unless they create that row again (a key rotated). Money is left as it is:
/// two concurrent retries both find the row.
fn consume(effects: &mut [Effect], table: String) {
    let recreated = effects.iter().any(|e| {
        e.kind == EffectKind::DbCreate
            && e.target.as_deref().map(crate::facts::model_key).as_ref() == Some(&table)
    });
    if recreated {
        return;
    }
    for e in effects {
        if !matches!(e.kind, EffectKind::DbDelete | EffectKind::Payment) {
            e.consumes.get_or_insert_with(|| table.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_expr(body: &str) -> Ex {
        let (ir, _) = super::super::parse::parse_file("src/a.rs", &format!("fn f() {{ {body} }}"));
        let Some(Item::Fn(f)) = ir.items.into_iter().next() else {
            panic!("no fn")
        };
        match f.body.into_iter().next() {
            Some(Stmt::Let { init: Some(e), .. }) => *e,
            Some(Stmt::Expr(e, _)) => e,
            _ => panic!("no statement"),
        }
    }

    #[test]
    fn a_diesel_update_of_the_state_its_filter_tests_is_a_claim() {
        let claim = |body: &str| claim_of(&first_expr(body)).is_some();
        assert!(claim(
            "let n = diesel::update(jobs::table.find(id).filter(jobs::status.eq(\"pending\"))).set(jobs::status.eq(\"running\")).execute(conn).await?;"
        ));
        assert!(claim(
            "let n = diesel::update(versions::table.find(id).filter(versions::yanked.is_distinct_from(yanked).or(versions::note.is_distinct_from(&note)))).set((versions::yanked.eq(yanked), versions::note.eq(&note))).execute(conn).await?;"
        ));
        // Another column, or a counter computed from the one tested.
        assert!(!claim(
            "let n = diesel::update(users::table.filter(users::id.eq(uid))).set(users::name.eq(name)).execute(conn).await?;"
        ));
        assert!(!claim(
            "let n = diesel::update(seats::table.filter(seats::count.lt(10))).set(seats::count.eq(seats::count + 1)).execute(conn).await?;"
        ));
    }

    #[test]
    fn what_a_seaorm_set_writes() {
        let set = |body: &str| set_value(&first_expr(body));
        assert_eq!(set("Set(true)"), Some(Some("b:true".into())));
        assert_eq!(
            set("Set(\"paid\".to_string())"),
            Some(Some("s:paid".into()))
        );
        assert_eq!(
            set("Set(Some(chrono::Utc::now()))"),
            Some(Some("now".into()))
        );
        assert_eq!(
            set("ActiveValue::Set(Status::Done)"),
            Some(Some("m:Status.Done".into()))
        );
        // a value the request sent is no constant, but known by its name (a state guard may
        // compare the row's field with it); anything but `Set(..)` sets nothing
        assert_eq!(set("Set(body.accepted)"), Some(Some("v:accepted".into())));
        assert_eq!(set("Set(format!(\"{}\", x))"), Some(None));
        assert_eq!(set("NotSet"), None);
    }

    #[test]
    fn the_entity_a_seaorm_select_reads_as_written() {
        let read = |body: &str| selected_as_written(&first_expr(body));
        assert_eq!(
            read(
                "let Some(m) = entities::Credential::Entity::find_by_id(id).filter(c).one(db).await? else { return };"
            ),
            Some("Credential".into())
        );
        assert_eq!(
            read(
                "let m = user.find_related(entities::Credential::Entity).filter(c).one(db).await?;"
            ),
            Some("Credential".into())
        );
        // not run for rows, or not a select
        assert_eq!(read("let q = credential::Entity::find_by_id(id);"), None);
        assert_eq!(
            read("let n = credential::Entity::delete_by_id(id).exec(db).await?;"),
            None
        );
    }

    #[test]
    fn writing_ctes() {
        let sql = "with a as (select id from t where s = $1), b as (insert into f(id) select id from a on conflict do nothing) select id from a";
        assert_eq!(classify(sql), Some((EffectKind::DbCreate, true, false)));
        assert_eq!(
            classify("with a as (select 1) select * from a for update"),
            None
        );
    }
}
