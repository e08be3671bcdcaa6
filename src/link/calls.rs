//! Call following: what a function reaches through every call the resolver can follow (imports,
//! `this.service.method()`, module objects, callbacks), memoised and cycle-safe, and which of those
//! calls are side effects according to the sink catalogue.

use super::message_ids::IdSource;
use super::resolve::{ModId, Resolved, Resolver};
use crate::catalog::Catalog;
use crate::facts::key::{Ctx, Obs, OpKind, StoreBackend, StoreOp, words};
use crate::facts::{
    DownstreamKey, Effect, EffectKind, KeyObs, KeyOrigin, Location, ParamRef, ParamTest, model_key,
};
use crate::program::{
    CallSite, ClassId, FnId, Found, HELPER_GUARD, KeyCall, REPOSITORY_GETTERS, TABLE_LINKS, Val,
    fresh_random,
};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// What one function reaches.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    pub effects: Vec<Effect>,
    pub key_reads: Vec<Location>,
    /// Models read (find, count, exists), directly or through calls: a create after such a
    /// read is pre-checked. `None` is a read of a model the call does not name.
    pub reads: Vec<Option<String>>,
    /// Where a hash of the request body is used as a dedup key, directly or through calls.
    pub content_hashes: Vec<Location>,
    /// What the key-handling code reached does (store operations, statuses, checks), in the
    /// order of the calls of this function that lead to it.
    pub key_obs: Vec<KeyObs>,
    /// Models looked up row by row (find/exists, not count), in the order read.
    pub lookups: Vec<String>,
    /// The fields those lookups' filters fix to constants (`where: { status: 'PENDING' }`).
    pub lookup_filters: Vec<(String, String)>,
    /// Ids made deterministically from their input (`uuid.v5(name, ns)`): the same event gives
    /// the same id on every delivery.
    pub derived_ids: Vec<Location>,
    /// Checks that a receiver would make, known by their names only (a header named like a
    /// signature or a secret, a call to `verifyWebhookSignature`): what they are, and where. They
    /// mark a webhook receiver only on a webhook path (see `link::webhooks::by_convention`).
    pub signature_checks: Vec<(String, Location)>,
    /// Calls this function makes, directly or through calls, that name their callee by a value
    /// computed at run time (`inst[action](ctx)`, `handlers[event.type](payload)`) and that
    /// resolve to nothing: what they do is unknown.
    pub unfollowed: Vec<(String, Location)>,
    /// The function throws unless it wins a claim (`if (res.changes !== 1) throw ..` after a
    /// `DELETE`, in its body or in a call of its body whose failure it lets through): what the
    /// claim is and where it is tested. What a caller does after such a call runs once.
    pub refuses_unless: Option<(&'static str, Location)>,
    /// The function throws when a lookup of the model found its row (in its body, or in a call
    /// of its body whose failure it lets through): the model and where it is tested. What a
    /// caller does after such a call runs only when the lookup missed.
    pub refuses_found: Option<(String, Location)>,
}

/// A callee that throws when its lookup finds the row: the model, where it is tested, and the
/// constants its lookups filter on.
type Refusal = (String, Location, Vec<(String, String)>);

/// Drops the repeats of `v`, keeping each value where it first appears.
fn keep_first<T: std::hash::Hash + Eq + Clone>(v: &mut Vec<T>) {
    let mut seen = HashSet::with_capacity(v.len());
    v.retain(|x| seen.insert(x.clone()));
}

/// A call whose callee is a member picked by a value computed at run time: `inst[action](..)`,
/// `handlers[event.type](..)`, `inst[action].call(inst, ctx)`; not `obj['name'](..)`,
/// `list[0](..)`, nor a method called by its name on an element (`rows[i].map(..)`,
/// `[a, b].join(..)`).
pub fn computed_callee(text: &str) -> bool {
    let callee = text.split('(').next().unwrap_or(text).trim();
    let callee = ["call", "apply", "bind"]
        .iter()
        .find_map(|m| callee.strip_suffix(&format!(".{m}")))
        .unwrap_or(callee);
    let Some(open) = callee.strip_suffix(']').and_then(|c| c.rfind('[')) else {
        return false;
    };
    open > 0
        && callee[open + 1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
}

enum Memo {
    Busy,
    Done(Rc<Summary>),
}

#[cfg(test)]
#[test]
fn callees_computed_at_run_time() {
    for dynamic in [
        "inst[action].call(inst, ctx)",
        "handlers[event.type](payload)",
        "this.jobs[name](data)",
    ] {
        assert!(computed_callee(dynamic), "{dynamic}");
    }
    for named in [
        "obj['create'](x)",
        "list[0](x)",
        "rows[i].map(f)",
        "[a, b].join('.')",
        "where[Op.and].push(x)",
        "prisma.user.create({ data })",
    ] {
        assert!(!computed_callee(named), "{named}");
    }
}

/// Packages of in-process caches.
const MEMORY_PACKAGES: &[&str] = &[
    "lru-cache",
    "quick-lru",
    "node-cache",
    "memory-cache",
    "@isaacs/ttlcache",
    "lru.min",
];

/// Clients of Redis and similar shared stores.
const REDIS_PACKAGES: &[&str] = &[
    "ioredis",
    "redis",
    "@redis/client",
    "@upstash/redis",
    "@vercel/kv",
    "iovalkey",
];

/// Names too generic to follow by name alone.
/// `(field, member)` -> the functions a project registers under them.
type Registry = HashMap<(String, String), Vec<(ModId, FnId)>>;

/// In-process event names (or patterns, `order.*`) -> the functions that listen to them.
type Listeners = Vec<(String, Vec<(ModId, FnId)>)>;

/// The methods that fire an in-process event by name: Node's `EventEmitter` and Nest's
/// `EventEmitter2` (`emit`, `emitAsync`).
const EMIT_METHODS: &[&str] = &["emit", "emitAsync"];

/// The methods that register a listener for an event name on an emitter.
const LISTEN_METHODS: &[&str] = &["on", "once", "addListener", "prependListener"];

/// Most implementations of one base class a method called by name alone is followed into.
const MAX_SIBLINGS: usize = 8;

/// Most listeners one event name may have before an emit of it is not followed (a name so common
/// every socket and stream listens to it).
const MAX_LISTENERS: usize = 16;

/// Whether an `@OnEvent` pattern matches an event name: EventEmitter2's wildcards, `*` for one
/// segment and `**` for any number, with `.` between segments.
fn event_matches(pattern: &str, name: &str) -> bool {
    if pattern == name {
        return true;
    }
    if !pattern.contains('*') {
        return false;
    }
    fn walk(p: &[&str], n: &[&str]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(&"**"), _) => walk(&p[1..], n) || (!n.is_empty() && walk(p, &n[1..])),
            (Some(a), Some(b)) => (*a == "*" || a == b) && walk(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let p: Vec<&str> = pattern.split('.').collect();
    let n: Vec<&str> = name.split('.').collect();
    walk(&p, &n)
}

/// Methods every array, promise or function has: never a project's registered function.
const BUILTIN_METHODS: &[&str] = &[
    "then", "catch", "finally", "map", "filter", "forEach", "reduce", "find", "some", "every",
    "push", "pop", "toString", "call", "apply", "bind", "keys", "values", "entries", "valueOf",
    "toJSON",
];

/// A built-in of the language that reads its arguments and calls none of the functions inside
/// them: `Object.keys(table)`, `JSON.stringify(x)`, `console.log(x)`, `String(x)`.
fn inert_builtin(callee: &Val) -> bool {
    match callee {
        Val::Member(recv, name) => match recv.as_ref() {
            Val::Global(g) => match g.as_str() {
                "Object" => matches!(
                    name.as_str(),
                    "keys"
                        | "values"
                        | "entries"
                        | "assign"
                        | "freeze"
                        | "getOwnPropertyNames"
                        | "hasOwn"
                        | "fromEntries"
                        | "defineProperty"
                        | "defineProperties"
                ),
                "JSON" | "console" | "Math" => true,
                "Array" => name == "isArray",
                _ => false,
            },
            _ => false,
        },
        Val::Global(g) => matches!(
            g.as_str(),
            "String" | "Number" | "Boolean" | "structuredClone" | "encodeURIComponent"
        ),
        _ => false,
    }
}

/// Methods every object has (`Object.prototype`'s): never a function a project module defines.
const OBJECT_METHODS: &[&str] = &["hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable"];

/// Most functions one `(field, member)` pair of a registry lists; a call through a pair with
/// more candidates than this is not guessed at.
const MAX_REGISTERED: usize = 4;

const GENERIC_METHODS: &[&str] = &[
    "then", "catch", "finally", "map", "filter", "forEach", "reduce", "find", "some", "every",
    "push", "pop", "json", "send", "status", "end", "get", "set", "has", "delete", "keys",
    "values", "entries", "toString", "call", "apply", "bind", "log", "info", "warn", "error",
    "debug", "emit", "on", "once", "next", "render", "redirect", "query", "exec", "save", "create",
    "update", "remove", "add", "validate", "parse", "init",
];

/// A function and the calls deep still left when it was entered (see [`Calls::summary`]).
type CutKey = ((ModId, FnId), usize);

pub struct Calls<'a> {
    res: &'a Resolver<'a>,
    catalog: &'a Catalog,
    memo: RefCell<HashMap<(ModId, FnId), Memo>>,
    /// Summaries cut by the depth bound, by function and the depth left when it was entered
    /// (see [`Calls::summary`]).
    cut_memo: RefCell<HashMap<CutKey, Rc<Summary>>>,
    /// Whether a function only wraps what it is given (see [`Calls::only_wraps`]).
    wraps: RefCell<HashMap<(ModId, FnId), bool>>,
    /// Method name -> every class method of that name, for calls on values of unknown type.
    by_name: HashMap<&'a str, Vec<(ModId, FnId)>>,
    /// Class -> the classes that extend or implement it directly.
    subclasses: HashMap<(ModId, ClassId), Vec<(ModId, ClassId)>>,
    /// Interface name -> the classes that `implements` it (an interface is no class the
    /// resolver can find, so it goes by its name).
    implementers: HashMap<String, Vec<(ModId, ClassId)>>,
    /// `(field, member)` -> the functions registered under them, built on first use (see
    /// [`Self::registered`]).
    registry: std::cell::OnceCell<Registry>,
    /// In-process event name -> its listeners, built on first use (see [`Self::listeners`]).
    listeners: std::cell::OnceCell<Listeners>,
    /// How many calls deep to follow (`call_depth` in retrysafe.toml).
    max_depth: usize,
    depth: std::cell::Cell<usize>,
    /// Whether the summary under way was cut by the depth bound somewhere below it.
    truncated: std::cell::Cell<bool>,
    /// The first function not followed because calls went deeper than `max_depth`.
    cut: std::cell::Cell<Option<(ModId, FnId)>>,
    /// The functions the project's SQL defines, by lower-cased name: what each does, when it
    /// writes (see [`Calls::with_db_functions`]).
    db_functions: HashMap<String, Option<(EffectKind, bool, bool)>>,
}

/// Calls followed when the configuration does not say: deep enough for real services, shallow
/// enough for the stack.
pub const DEFAULT_CALL_DEPTH: usize = 48;

/// How a function left unfollowed because it lies deeper than the depth bound is named, in
/// `unfollowed` and its diagnostic (both languages).
pub fn beyond_call_depth(name: &str, depth: usize) -> String {
    format!("`{name}` (deeper than `call_depth` = {depth})")
}

/// The diagnostic of an audit that stopped following calls at the depth bound.
pub fn depth_cut_diagnostic(at: Location, name: &str, depth: usize) -> crate::facts::Diagnostic {
    crate::facts::Diagnostic::new(
        at.file,
        at.line,
        format!(
            "calls were followed {depth} deep from a handler and `{name}` lies deeper: what it reaches is not counted (raise `call_depth` in retrysafe.toml)"
        ),
    )
}

/// The argument of a query builder's call that names its table by a value
/// (`tx(entityType.sharesTable)`): the value's names, dotted (`getEntityType().sharesTable`), the
/// same in every chain of the function that names the table so. Stricter than
/// [`super::display`]: a whole module or a parameter names no table (with `display`, any root
/// call of one argument named a table, and opencollective's high precision fell).
fn table_written(c: &CallSite) -> Option<String> {
    fn name(v: &Val, depth: usize) -> Option<String> {
        if depth > 8 {
            return None;
        }
        match v {
            Val::Global(n) | Val::Import { name: Some(n), .. } => Some(n.clone()),
            Val::Member(base, n) => Some(match base.as_ref() {
                Val::Import { name: None, .. } | Val::This(_) => n.clone(),
                b => format!("{}.{n}", name(b, depth + 1)?),
            }),
            Val::Call(callee, _) => Some(format!("{}()", name(callee, depth + 1)?)),
            _ => None,
        }
    }
    match c.args.as_slice() {
        [v] => name(v, 0),
        _ => None,
    }
}

fn write_method(args: &[Val]) -> bool {
    args.iter().any(|a| match a {
        Val::Obj(fields) => fields.iter().any(|(k, v)| {
            k == "method" && matches!(v, Val::Str(m) if crate::facts::is_mutation_method(&m.to_ascii_uppercase()))
        }),
        _ => false,
    })
}

/// The operation a GraphQL document names: the first word of its first definition (`mutation
/// CreateReceiver(..) {..}`; a document that opens with `{` is a query), past comments and
/// fragments.
fn graphql_operation(document: &str) -> Option<&str> {
    let mut rest = document;
    loop {
        rest = rest.trim_start();
        if let Some(comment) = rest.strip_prefix('#') {
            rest = comment.split_once('\n').map_or("", |(_, r)| r);
            continue;
        }
        if rest.starts_with('{') {
            return Some("query");
        }
        let word_end = rest
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(rest.len());
        let word = &rest[..word_end];
        match word {
            "query" | "mutation" | "subscription" => return Some(word),
            // a fragment before the operation: past its selection set
            "fragment" => {
                let mut depth = 0usize;
                let mut end = None;
                for (i, c) in rest.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 1 => {
                            end = Some(i + 1);
                            break;
                        }
                        '}' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
                rest = &rest[end?..];
            }
            _ => return None,
        }
    }
}

fn has_key(v: &Val, keys: &[String], depth: usize) -> bool {
    if depth > 6 {
        return false;
    }
    match v {
        Val::Obj(fields) => fields
            .iter()
            .any(|(k, v)| keys.iter().any(|x| x == k) || has_key(v, keys, depth + 1)),
        Val::Arr(items) => items.iter().any(|i| has_key(i, keys, depth + 1)),
        _ => false,
    }
}

/// A write that sets a field to a value computed from that field of a row the code read
/// (`update({ data: { balance: wallet.balance + amount } })`, `{ content: note.content + ' #x' }`):
/// a read-modify-write, which a repeat applies again.
fn read_modify_write(v: &Val, depth: usize) -> bool {
    depth <= 4
        && match v {
            Val::Obj(fields) => fields
                .iter()
                .any(|(k, x)| from_row_field(k, x) || read_modify_write(x, depth + 1)),
            _ => false,
        }
}

/// A value computed from the same field of a row the request looked up (`balance:
/// wallet.balance + amount`, `existing[0].balance + amount` of a Drizzle select).
fn from_row_field(field: &str, v: &Val) -> bool {
    let parts: &[Val] = match (crate::program::arith_parts(v), v) {
        (Some(xs), _) => xs,
        (None, Val::Template(parts)) => parts,
        _ => return false,
    };
    parts
        .iter()
        .any(|p| crate::program::row_field(p) == Some(field))
}

/// A value a `sql` template tag computes from the column `field` it is written to, with an
/// operator after the column (`` sql`${userRecords.flaggedRecordsCount} - 1` ``, as Drizzle
/// documents increments): the new value depends on the old one.
fn column_arithmetic(field: &str, v: &Val) -> bool {
    let Val::Call(tag, args) = v else {
        return false;
    };
    let tag_name = match tag.as_ref() {
        Val::Member(_, n) => Some(n.clone()),
        other => other.name_it_goes_by(),
    };
    if tag_name.as_deref() != Some("sql") {
        return false;
    }
    let parts = match args.as_slice() {
        [Val::Template(parts)] => parts.as_slice(),
        // (a template without holes is its text)
        [text @ Val::Str(_)] => std::slice::from_ref(text),
        _ => return false,
    };
    // (or the column by its name: Kysely's `sql\`count + 1\``)
    if let Some(Val::Str(head)) = parts.first()
        && computes_from_itself(field, head)
    {
        return true;
    }
    parts.windows(2).any(|w| {
        matches!(&w[0], Val::Member(_, col) if col == field)
            && matches!(&w[1], Val::Str(op) if ARITHMETIC.iter().any(|o| op.trim_start().starts_with(o)))
    })
}

/// The operators after a column that make its new value depend on its old one. Not `||`: on
/// `jsonb` it merges (`flags || :patch::jsonb` writes the same keys again), on text it appends.
const ARITHMETIC: &[&str] = &["+", "-", "*"];

/// SQL that computes a column from its own value: `credits + 1`, `"credits" - :n` for `credits`.
fn computes_from_itself(field: &str, sql: &str) -> bool {
    let sql = sql.trim();
    let rest = ["\"", "`", ""].iter().find_map(|q| {
        let quoted = format!("{q}{field}{q}");
        sql.get(..quoted.len())
            .filter(|head| head.eq_ignore_ascii_case(&quoted))
            .map(|_| &sql[quoted.len()..])
    });
    rest.is_some_and(|r| {
        let r = r.trim_start();
        ARITHMETIC.iter().any(|o| r.starts_with(o))
    })
}

/// An options object that gives one of `keys` a value other than `false`.
fn option_given(v: &Val, keys: &[String]) -> bool {
    match v {
        Val::Obj(fields) => fields
            .iter()
            .any(|(k, v)| keys.contains(k) && !matches!(v, Val::Bool(false) | Val::Unknown)),
        _ => false,
    }
}

/// The fields a relative update changes by their old value: the keys of an operator object
/// (MongoDB's `{ $inc: { views: 1 } }`) and a field given an operation (Prisma's
/// `{ data: { views: { increment: 1 } } }`).
fn relative_fields(args: &[Val], ops: &[String]) -> Vec<String> {
    fn walk(v: &Val, ops: &[String], depth: usize, out: &mut Vec<String>) {
        let Val::Obj(fields) = v else { return };
        if depth > 6 {
            return;
        }
        for (k, v) in fields {
            let is_op = |f: &str| ops.iter().any(|o| o == f);
            match v {
                Val::Obj(inner) if k.starts_with('$') && is_op(k) => {
                    out.extend(inner.iter().map(|(f, _)| f.clone()));
                }
                Val::Obj(inner) if inner.iter().any(|(f, _)| !f.starts_with('$') && is_op(f)) => {
                    out.push(k.clone());
                }
                _ => walk(v, ops, depth + 1, out),
            }
        }
    }
    let mut out = Vec::new();
    for a in args {
        walk(a, ops, 0, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// The counter a Redis increment moves, by its name: a hash's field (`hincrby(key, 'calls', 1)`),
/// or the last named segment of the key (`` incr(`views:${id}`) `` is `views`).
fn redis_counter(method: &str, args: &[Val]) -> Option<String> {
    let lower = method.to_ascii_lowercase();
    if lower.starts_with("hincr") {
        return args.get(1).and_then(|f| f.as_str()).map(String::from);
    }
    let pieces: Vec<&str> = match args.first()? {
        Val::Str(s) => vec![s.as_str()],
        Val::Template(parts) => parts.iter().map(|p| p.as_str().unwrap_or("\0")).collect(),
        _ => return None,
    };
    crate::text::key_counter_name(&pieces.concat())
}

/// Strips SQL comments and returns the upper-cased words of a statement.
fn sql_words(sql: &str) -> Vec<String> {
    let mut clean = String::with_capacity(sql.len());
    let mut lines = sql.lines();
    for l in lines.by_ref() {
        let l = l.split("--").next().unwrap_or("");
        clean.push_str(l);
        clean.push(' ');
    }
    let mut out = String::new();
    let mut rest = clean.as_str();
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = rest[start..]
            .find("*/")
            .map(|e| &rest[start + e + 2..])
            .unwrap_or("");
    }
    out.push_str(rest);
    out.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '+' || c == '-' || c == '='))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_uppercase())
        .collect()
}

/// `SET n = n + 1`: a column assigned from itself plus or minus something.
fn has_self_increment(sql: &str) -> bool {
    let mut spaced = String::with_capacity(sql.len() * 2);
    for c in sql.chars() {
        if matches!(c, '=' | ',' | '+' | '-' | '(' | ')' | '|') {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else {
            spaced.push(c);
        }
    }
    let tokens: Vec<String> = spaced
        .split_whitespace()
        .map(|t| t.trim_matches('"').to_ascii_lowercase())
        .collect();
    let column = |t: &str| {
        t.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    };
    // `n = n + 1`, `note = note || $1` (a string or array appended to itself; not a JSON
    // object merged into a `jsonb` column, `config = config || '{"a": 1}'`, `|| $1::jsonb`,
    // which a repeat merges to the same value)
    let merges_json = |next: Option<&String>| {
        next.is_some_and(|t| {
            t.starts_with("'{")
                || t.contains("::json")
                || t.starts_with("jsonb_build_object")
                || t.starts_with("json_build_object")
                || t.starts_with("to_jsonb")
        })
    };
    (0..tokens.len().saturating_sub(3))
        .any(|i| {
            let w = &tokens[i..i + 4];
            w[1] == "="
                && w[0] == w[2]
                && column(&w[0])
                && match w[3].as_str() {
                    "+" | "-" => true,
                    "|" => tokens.get(i + 4).is_some_and(|t| t == "|") && !merges_json(tokens.get(i + 5)),
                    _ => false,
                }
        })
        // `tags = array_append(tags, $1)`, `note = concat(note, $1)`
        || tokens.windows(5).any(|w| {
            w[1] == "="
                && matches!(w[2].as_str(), "array_append" | "array_cat" | "concat")
                && w[3] == "("
                && w[4] == w[0]
                && column(&w[0])
        })
        // a flip: `active = NOT active`, `email = CASE WHEN email = 'inactive' THEN ..`
        || tokens
            .windows(4)
            .any(|w| w[1] == "=" && w[2] == "not" && w[3] == w[0] && column(&w[0]))
        || tokens.windows(5).any(|w| {
            w[1] == "=" && w[2] == "case" && w[3] == "when" && w[4] == w[0] && column(&w[0])
        })
}

/// A function named like a signature check: a verb of verification with a signature, an HMAC or
/// a webhook (`validSNSSignature`, `verifyWebhook`, `isValidHmac`, `check_signature`).
pub fn looks_like_signature_check(name: &str) -> bool {
    let words = words::split(name);
    let has = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    let signature = words
        .iter()
        .any(|w| w.ends_with("signature") || w == "hmac");
    let verb = has(&[
        "verify",
        "verified",
        "valid",
        "validate",
        "check",
        "assert",
        "authenticate",
    ]);
    // `verifyWebhook(req)` checks a delivery; `validateWebhookUrl` checks a configuration.
    let webhook = has(&["webhook"])
        && has(&["verify", "verified", "validate", "authenticate"])
        && !has(&["url", "endpoint", "config", "settings"]);
    (verb && signature) || webhook
}

/// The parameter a value is, or the member of one it is: `props` → (props, []), `props.id` →
/// (props, [id]).
/// The parameter an update's change is (`Model.updateOne(filter, update)`), or that its options
/// write (`update({ where, data: update })`): the arguments after the first.
fn update_param(m: ModId, args: &[Val]) -> Option<ParamRef> {
    args.iter()
        .skip(1)
        .chain(args.first())
        .find_map(|a| match a {
            Val::Obj(fields) => fields
                .iter()
                .filter(|(k, _)| matches!(k.as_str(), "data" | "update" | "$set"))
                .find_map(|(_, v)| param_ref(m, v)),
            Val::Param(..) => param_ref(m, a),
            _ => None,
        })
}

fn param_ref(m: ModId, v: &Val) -> Option<ParamRef> {
    let mut path = Vec::new();
    let mut cur = v;
    for _ in 0..16 {
        match cur {
            Val::Param(f, i) => {
                path.reverse();
                return Some(ParamRef {
                    module: m,
                    function: *f,
                    index: *i,
                    path,
                });
            }
            Val::Member(inner, p) => {
                path.push(p.clone());
                cur = inner;
            }
            // A schema's validation hands back what it was given (`bodySchema.parse(req.body)`,
            // zod's `parseAsync`, Joi's `validateAsync`, Yup's `validateSync`).
            Val::Call(callee, args)
                if matches!(&**callee, Val::Member(_, name) if VALIDATES.contains(&name.as_str()))
                    && !args.is_empty() =>
            {
                cur = &args[0];
            }
            // The same value normalised (`email.toLowerCase()`, `name.trim()`).
            Val::Call(callee, args)
                if args.is_empty()
                    && matches!(&**callee, Val::Member(_, name) if crate::program::STRING_IDENTITY.contains(&name.as_str())) =>
            {
                let Val::Member(inner, _) = &**callee else {
                    return None;
                };
                cur = inner;
            }
            _ => return None,
        }
    }
    None
}

/// Schema methods that return the value they validate.
const VALIDATES: &[&str] = &[
    "parse",
    "parseAsync",
    "validateAsync",
    "validateSync",
    "cast",
];

/// What a call passes for a parameter of the function `(m2, f2)` it calls: the argument, or the
/// member of it the reference names. `None` for a parameter of another function.
fn bind_param(r: &ParamRef, m2: ModId, f2: FnId, args: &[Val]) -> Bound {
    if r.module != m2 || r.function != f2 {
        return Bound::Unknown;
    }
    let Some(mut v) = args.get(r.index).cloned() else {
        return Bound::Unknown;
    };
    for p in &r.path {
        v = match v {
            // An object without the key may still carry it through a spread the front end
            // could not see: not shown, rather than not passed.
            Val::Obj(fields) => match fields.into_iter().rev().find(|(k, _)| k == p) {
                Some((_, x)) => x,
                None => return Bound::Unknown,
            },
            Val::Unknown => return Bound::Unknown,
            other => Val::Member(std::sync::Arc::new(other), p.clone()),
        };
    }
    Bound::Val(v)
}

/// The parameter test a call runs under (see `CallSite::param_gate`), as link facts.
fn param_gate(m: ModId, cs: &CallSite) -> Option<Box<(ParamRef, ParamTest)>> {
    let g = cs.param_gate.as_deref()?;
    Some(Box::new((
        ParamRef {
            module: m,
            function: g.function,
            index: g.index,
            path: g.path.clone(),
        },
        g.test.clone(),
    )))
}

/// An effect that runs only under a test of a parameter of `(m2, f2)`, at a call of it: false
/// (the call does not reach it) when the call's argument turns the test the other way — for a
/// truthy test an argument left out (`updateOne(id, dto)` for `if (options?.upsert)
/// create(..)`) or `false`; for a falsy one `true`, a string, an object. A caller passing a
/// parameter of its own hands the test on; an argument the code does not show keeps the effect.
fn bind_gate(m: ModId, m2: ModId, f2: FnId, cs: &CallSite, e: &mut Effect) -> bool {
    let Some(gate) = e.param_gate.take() else {
        return true;
    };
    let (r, test) = *gate;
    if r.module != m2 || r.function != f2 {
        return true;
    }
    // What the argument is: `None` for one left out (undefined, and so is any member of it).
    let mut v = match cs.args.get(r.index) {
        Some(v) => Some(v.clone()),
        None if !cs.open_args => None,
        None => return true,
    };
    for (k, p) in r.path.iter().enumerate() {
        v = match v {
            None => None,
            Some(Val::Obj(fields)) => match fields.into_iter().rev().find(|(x, _)| x == p) {
                Some((_, x)) => Some(x),
                // not shown: a spread may carry it
                None => return true,
            },
            Some(other) => {
                // the caller's own parameter, or a member of one: its callers decide
                if let Some(mut r2) = param_ref(m, &other) {
                    r2.path.extend(r.path[k..].iter().cloned());
                    e.param_gate = Some(Box::new((r2, test)));
                }
                return true;
            }
        };
    }
    let truthy = match test {
        ParamTest::Truthy(t) => t,
        // `switch (command.type) { case 'pay': .. }`: the tag the caller's value carries
        ParamTest::Variant { names, is, .. } => {
            return match &v {
                Some(Val::Str(s)) => names.contains(s) == is,
                Some(other) => {
                    if let Some(r2) = param_ref(m, other) {
                        e.param_gate = Some(Box::new((
                            r2,
                            ParamTest::Variant {
                                enum_name: String::new(),
                                names,
                                is,
                            },
                        )));
                    }
                    true
                }
                None => !is,
            };
        }
    };
    let is_truthy = match &v {
        None => false,
        Some(Val::Bool(b)) => *b,
        Some(Val::Str(s)) => !s.is_empty(),
        Some(Val::Obj(_) | Val::Arr(_) | Val::Func(_) | Val::Instance(_)) => true,
        Some(other) => {
            if let Some(r2) = param_ref(m, other) {
                e.param_gate = Some(Box::new((r2, ParamTest::Truthy(truthy))));
            }
            return true;
        }
    };
    is_truthy == truthy
}

/// Where a create's record comes from when it is a parameter, and which of its keys are
/// parameters (see `Calls::record_params`).
type RecordParams = (Option<ParamRef>, Vec<(String, ParamRef)>);

/// A caller's value for a parameter reference.
enum Bound {
    /// The caller passes this.
    Val(Val),
    /// The call does not show it.
    Unknown,
}

/// A call of a body's function: the function, the call, whether its failure fails the function,
/// and the effects it reached (own?, index).
type CallEffects<'a> = (FnId, &'a CallSite, bool, Vec<(bool, usize)>);

/// A call that registers its callback to run later, not now (`emitter.on('x', async () =>
/// ..)`, `setTimeout(..)`, `items.forEach(async ..)`): the callback's failure does not fail it.
fn registers_listener(cs: &CallSite) -> bool {
    let called = cs.path.last().unwrap_or(&cs.root_name);
    matches!(
        called.as_str(),
        "on" | "once"
            | "addListener"
            | "prependListener"
            | "addEventListener"
            | "subscribe"
            | "setTimeout"
            | "setInterval"
            | "setImmediate"
            | "nextTick"
            | "forEach"
            | "catch"
            | "finally"
            | "use"
    )
}

/// The keys of a record whose values are parameters (or members of one) of the function.
fn key_params(m: ModId, fields: &[(String, Val)]) -> Vec<(String, ParamRef)> {
    fields
        .iter()
        .filter_map(|(k, v)| {
            param_ref(m, v)
                .or_else(|| connected_param(m, v))
                .or_else(|| looked_up_param(m, v))
                .map(|r| (k.clone(), r))
        })
        .collect()
}

/// The id of a row a lookup found by the caller's value (`workspace.id` after `const workspace =
/// await this.authz.authorizeUserAccessToWorkspace({ user, slug })`, `(await
/// this.teams.findBySlug(slug)).id`): a retry finds the same row, so the id is as much the
/// request's as that value. Only a method named for reading (`find`, `get`, `fetch`, `load`,
/// `authorize`, ..), never one that creates.
fn looked_up_param(m: ModId, v: &Val) -> Option<ParamRef> {
    const READS: &[&str] = &[
        "find",
        "get",
        "fetch",
        "load",
        "read",
        "lookup",
        "authorize",
        "require",
    ];
    let Val::Member(row, field) = v.plain() else {
        return None;
    };
    if !matches!(field.to_ascii_lowercase().as_str(), "id" | "_id" | "uuid") {
        return None;
    }
    let Val::Call(callee, args) = row.plain() else {
        return None;
    };
    let Val::Member(_, name) = callee.plain() else {
        return None;
    };
    let lower = name.to_ascii_lowercase();
    if !READS.iter().any(|r| lower.starts_with(r)) || crate::catalog::names_a_create(name) {
        return None;
    }
    args.iter().find_map(|a| {
        param_ref(m, a).or_else(|| match a.plain() {
            Val::Obj(fields) => fields.iter().find_map(|(_, v)| param_ref(m, v)),
            _ => None,
        })
    })
}

/// A Prisma relation connected by the caller's value (`team: { connect: { id: teamId } }`,
/// https://www.prisma.io/docs/orm/prisma-client/queries/relation-queries#connect-an-existing-record):
/// the foreign key the row writes is that value.
fn connected_param(m: ModId, v: &Val) -> Option<ParamRef> {
    let Val::Obj(rel) = v.plain() else {
        return None;
    };
    let [(k, Val::Obj(by))] = rel.as_slice() else {
        return None;
    };
    match (k.as_str(), by.as_slice()) {
        ("connect", [(_, key)]) => param_ref(m, key),
        _ => None,
    }
}

/// Methods of a subclass that a base class's method runs as its steps (see
/// `Calls::template_steps`), and whether they come from more than one class (then each is one
/// candidate of several).
type Steps = (Vec<(ModId, FnId)>, bool);

/// Most steps one call's candidate classes give.
const MAX_STEPS: usize = 32;

/// How a model held by a field of a base class is named until a subclass says which it is
/// (`this.MongooseModel`).
const THIS_FIELD: &str = "this.";

/// A call on `this` itself in a class method (`this.create(..)`, `this.findOne(..)`): the class.
fn this_call(cs: &CallSite) -> Option<usize> {
    match &cs.root {
        Val::Member(inner, _) if cs.path.is_empty() && !cs.is_new => match inner.as_ref() {
            Val::This(Some(c)) => Some(*c),
            _ => None,
        },
        _ => None,
    }
}

/// The names a call's receiver goes by, normalised: the variable or field (`usersRepository`)
/// and the type it is declared with (`UserRepository`).
fn receiver_names(cs: &CallSite) -> Vec<String> {
    let mut out = Vec::new();
    if !cs.root_name.is_empty() && cs.root_name != "this" {
        out.push(model_key(&cs.root_name));
    }
    let declared = match &cs.root {
        Val::TypeRef(t) => t.name_it_goes_by(),
        v => v.name_it_goes_by(),
    };
    if let Some(n) = declared {
        out.push(model_key(&n));
    }
    out.dedup();
    out
}

/// Records that the receiver of `cs` stands for `target` when a guard names it.
fn alias_receiver(guard_alias: &mut HashMap<String, Vec<String>>, cs: &CallSite, target: &str) {
    for name in receiver_names(cs) {
        let known = guard_alias.entry(name).or_default();
        if !known.iter().any(|k| k == target) {
            known.push(target.to_string());
        }
    }
}

/// A read that locks the rows it reads: Sequelize's `lock` option, TypeORM's `lock: { mode }`
/// and `.setLock(..)`, Knex's `.forUpdate()`/`.forShare()`.
fn locks_rows(cs: &CallSite) -> bool {
    cs.path.iter().any(|p| {
        matches!(
            p.as_str(),
            "forUpdate" | "forShare" | "forNoKeyUpdate" | "setLock" | "lockForUpdate"
        )
    }) || cs.args.iter().any(|a| match a {
        Val::Obj(fields) => fields.iter().any(|(k, _)| k == "lock"),
        _ => false,
    })
}

/// The names a state guard's model goes by: as looked up, and what its receiver stands for.
fn state_models(
    model: &str,
    aliased: &dyn Fn(&str) -> String,
    guard_alias: &HashMap<String, Vec<String>>,
) -> Vec<String> {
    let mut out = vec![model_key(&aliased(model))];
    for a in guard_alias.get(&model_key(model)).into_iter().flatten() {
        out.push(model_key(&aliased(a)));
    }
    out.sort();
    out.dedup();
    out
}

/// The value written when it is a constant: a literal, the current time, an enum member.
fn constant(v: &Val) -> Option<String> {
    match v {
        Val::Str(s) => Some(format!("s:{s}")),
        Val::Bool(b) => Some(format!("b:{b}")),
        Val::New(ctor, _) if matches!(ctor.as_ref(), Val::Global(g) if g == "Date") => {
            Some("now".into())
        }
        Val::Call(callee, _) => match callee.as_ref() {
            Val::Member(o, n)
                if n == "now" && matches!(o.as_ref(), Val::Global(g) if g == "Date") =>
            {
                Some("now".into())
            }
            _ => None,
        },
        // an enum member (`Status.Paid`), not a field of what the request sent
        // (`req.body.accepted`)
        Val::Member(o, n) if param_index(o).is_none() => {
            o.name_it_goes_by().map(|e| format!("m:{e}.{n}"))
        }
        _ => None,
    }
}

/// The fields a lookup's filter fixes to constants (`findOne({ where: { status: 'PENDING' } })`,
/// `findOne({ status: Status.Pending })`), as `Effect::update_keys` writes constants.
fn lookup_filter(cs: &CallSite) -> Vec<(String, String)> {
    let Some(Val::Obj(fields)) = cs.args.first() else {
        return vec![];
    };
    let filter = match fields.iter().find(|(k, _)| k == "where") {
        Some((_, Val::Obj(w))) => w,
        Some(_) => return vec![],
        None => fields,
    };
    filter
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), constant(v)?)))
        .collect()
}

/// The fields an update sets: Prisma's `data`, MongoDB's `$set`, the values object of TypeORM's
/// `update(criteria, values)` or Sequelize's `update(values, { where })`; for a create, what its
/// record holds.
fn update_keys(cs: &CallSite, kind: EffectKind) -> Vec<(String, Option<String>)> {
    written_fields(cs, kind)
        .into_iter()
        .map(|(k, v)| match v {
            Some(v) => (k, constant(v).or_else(|| value_name(v))),
            None => (k, Some("v:*".into())),
        })
        .collect()
}

/// The columns an update sets to a parameter of the function it is in (`data: { status }` in
/// `setStatus(id, status)`): what is written there is the caller's argument (see
/// `Effect::written_params`).
fn written_params(m: ModId, cs: &CallSite) -> Vec<(String, ParamRef)> {
    written_fields(cs, EffectKind::DbUpdate)
        .into_iter()
        .filter_map(|(k, v)| match v? {
            v @ Val::Param(..) => Some((k, param_ref(m, v)?)),
            _ => None,
        })
        .collect()
}

/// What [`update_keys`] reads: each field with the value written, `*` with none when a whole
/// value the request holds is written.
fn written_fields(cs: &CallSite, kind: EffectKind) -> Vec<(String, Option<&Val>)> {
    // Which argument holds the values: of an update given two, the second (MongoDB's and
    // Mongoose's `updateOne(filter, update)`, `findByIdAndUpdate(id, update)`, TypeORM's
    // `update(criteria, values)`), unless it is Sequelize's options (`update(values, { where })`,
    // `instance.update(values, { transaction })`); a create's record is its first.
    const OPTIONS: &[&str] = &[
        "where",
        "transaction",
        "fields",
        "silent",
        "hooks",
        "returning",
        "validate",
        "logging",
    ];
    let options = |v: &Val| match v {
        Val::Obj(o) => !o.is_empty() && o.iter().all(|(k, _)| OPTIONS.contains(&k.as_str())),
        _ => false,
    };
    let values: Vec<&Val> = match cs.args.as_slice() {
        [a, b, ..] if kind == EffectKind::DbUpdate && !options(b) => {
            // (knex's `update('status', value)`: a column and its value)
            if matches!(a, Val::Str(_)) {
                return vec![];
            }
            vec![b]
        }
        args => args.iter().take(2).collect(),
    };
    let mut out = Vec::new();
    for a in values {
        let Val::Obj(fields) = a else {
            // `update(id, dto)`: a value the request holds, written whole (each of its fields
            // into the column of that name).
            if kind == EffectKind::DbUpdate && whole_value(a) && cs.args.len() >= 2 {
                out.push(("*".into(), None));
            }
            continue;
        };
        if fields.iter().any(|(k, _)| k == "where") && !fields.iter().any(|(k, _)| k == "data") {
            continue;
        }
        let inner = fields.iter().find(|(k, _)| match k.as_str() {
            // (Prisma's `data`, not a column of that name: see `prisma_args`)
            "data" => prisma_args(fields),
            "$set" | "set" | "values" => true,
            _ => false,
        });
        match inner {
            Some((_, Val::Obj(data))) => out.extend(data.iter().map(|(k, v)| (k.clone(), Some(v)))),
            // `data: dto`, `$set: body`: every field of a value the request holds.
            Some((_, v)) if whole_value(v) => out.push(("*".into(), None)),
            Some(_) => {}
            None => out.extend(fields.iter().map(|(k, v)| (k.clone(), Some(v)))),
        }
    }
    out
}

/// A written value by the name the request gives it (`body.priority`, `dto.assigneeId`): `v:priority`,
/// as a state guard's test names the value it compares (see `guards::holds`).
fn value_name(v: &Val) -> Option<String> {
    match v {
        Val::Member(_, n) if !n.is_empty() && n != "length" => Some(format!("v:{n}")),
        _ => None,
    }
}

/// The fields a caller's object gives an update that writes it (`updateUser({ password: hash },
/// id)`), joined to those the update sets itself (its `updatedAt`), as [`update_keys`] reads
/// them: a constant, a value the request holds by its name, or a value not known.
fn set_fields(e: &mut Effect, fields: &[(String, Val)]) {
    for (k, v) in fields {
        if !e.update_keys.iter().any(|(k2, _)| k2 == k) {
            e.update_keys
                .push((k.clone(), constant(v).or_else(|| value_name(v))));
        }
    }
}

/// Prisma's arguments of a create or an upsert (`{ data, select }`, `{ where, create, update }`):
/// the record is their `data` or `create`. An object with other keys is the record itself, one
/// whose column may be named `data` (Sequelize's `Collective.create({ name, data: {..} })`).
fn prisma_args(fields: &[(String, Val)]) -> bool {
    const ARGS: &[&str] = &[
        "data",
        "create",
        "update",
        "where",
        "select",
        "include",
        "omit",
        "skipDuplicates",
        "relationLoadStrategy",
    ];
    fields.iter().any(|(k, _)| k == "data" || k == "create")
        && fields.iter().all(|(k, _)| ARGS.contains(&k.as_str()))
}

/// A whole value the request holds (a parameter, a field of one): what an update given it writes
/// is each of its fields, into the column of that name.
fn whole_value(v: &Val) -> bool {
    param_index(v).is_some()
}

/// The keys of a record whose values a retry sends again: not a value made up for this request
/// (`randomUUID()`, `nanoid()`, the id of a row it created), which a retry writes anew.
fn repeated_keys(fields: &[(String, Val)]) -> Vec<String> {
    fields
        .iter()
        .filter(|(_, v)| !made_per_call(v))
        .map(|(k, _)| k.clone())
        .collect()
}

/// The keys of a record written with a value made per call, which a retry writes anew whatever
/// the caller's object (spread into the record) gives for them.
fn made_keys(fields: Option<&Vec<(String, Val)>>) -> Vec<String> {
    fields
        .into_iter()
        .flatten()
        .filter(|(_, v)| made_per_call(v))
        .map(|(k, _)| k.clone())
        .collect()
}

/// `mongoose.model(name, schema)`, `sequelize.define(name, ..)`: a model registered by name.
fn is_model_registration(callee: &Val) -> bool {
    matches!(callee, Val::Member(_, g) if g == "model" || g == "define")
}

/// Key-value calls that give a key a time to live (Redis's `EXPIRE` family).
pub(crate) const EXPIRES: &[&str] = &["expire", "pexpire", "expireat", "pexpireat"];

/// A key-value write that gives the key a time to live (`setex`, `set(k, v, 'EX', 60)`, `{ EX:
/// 60 }`, `expire`): a session, a one-time code, a cache entry that lapses, not a record kept.
fn expires(method: &str, args: &[Val]) -> bool {
    const TTL: &[&str] = &["EX", "PX", "EXAT", "PXAT", "ex", "px"];
    matches!(method, "setex" | "setEx" | "psetex" | "expire")
        || args.iter().any(|a| match a {
            Val::Str(s) => TTL.contains(&s.as_str()),
            Val::Obj(fields) => fields.iter().any(|(k, _)| TTL.contains(&k.as_str())),
            _ => false,
        })
}

/// A call that hands out an entity's repository: `dataSource.getRepository(User)`, or TypeORM's
/// `getRepository(User)` imported from the package.
fn repository_getter(callee: &Val) -> bool {
    match callee {
        Val::Member(_, getter) => REPOSITORY_GETTERS.contains(&getter.as_str()),
        Val::Import {
            spec,
            name: Some(getter),
        } => spec == "typeorm" && REPOSITORY_GETTERS.contains(&getter.as_str()),
        _ => false,
    }
}

/// An instance made here rather than loaded: `new Model(..)`, `Model.build(..)`.
fn freshly_built(v: &Val) -> bool {
    match v {
        Val::New(..) | Val::Instance(_) => true,
        Val::Call(callee, _) => matches!(callee.as_ref(), Val::Member(_, m) if m == "build"),
        _ => false,
    }
}

/// One chained expression is one effect: `insert(t).values(v).onConflictDoNothing()` matches at
/// several of its calls, and the upsert at the end decides what the whole chain does.
/// `uuid.v5(name, namespace)` (or v3), imported by name or through the module: the same input
/// gives the same id.
pub(super) fn derives_id(callee: &Val) -> bool {
    let from_uuid = |v: &Val| matches!(v, Val::Import { spec, .. } if spec == "uuid");
    match callee {
        Val::Import {
            spec,
            name: Some(n),
        } => spec == "uuid" && (n == "v5" || n == "v3"),
        Val::Member(inner, p) => (p == "v5" || p == "v3") && from_uuid(inner),
        _ => false,
    }
}

/// The parameter a value comes from (`jobs`, `opts.jobId` of a destructured parameter).
/// The parameter a value comes from and the fields read from it (`options.jobId` → the
/// parameter `options`, `["jobId"]`).
fn param_path(v: &Val) -> Option<(usize, Vec<String>)> {
    match v {
        Val::Param(_, i) => Some((*i, Vec::new())),
        Val::Member(inner, field) => param_path(inner).map(|(i, mut fields)| {
            fields.push(field.clone());
            (i, fields)
        }),
        _ => None,
    }
}

/// Where the message id of a publish call comes from when a parameter decides it: an id field of
/// an object argument; else the last argument, when a parameter gives it (options come last);
/// else, when the options are an object whose spread parts cannot be read (`{ ...opts, x }`), the
/// first parameter among the arguments, judged whole at each caller.
fn key_param_of_call(args: &[Val], keys: &[String]) -> Option<crate::facts::DedupParam> {
    args.iter()
        .filter(|a| matches!(a, Val::Obj(_)))
        .find_map(|a| key_from_param(a, keys))
        .or_else(|| {
            args.last()
                .filter(|a| !matches!(a, Val::Obj(_)))
                .and_then(|a| key_from_param(a, keys))
        })
        .or_else(|| {
            args.iter()
                .find_map(param_index)
                .map(|index| crate::facts::DedupParam {
                    index,
                    fields: Vec::new(),
                    is_id: false,
                })
        })
}

/// Where a message id given to a publish call comes from when a parameter decides it: a field
/// named by `keys` whose value is read from a parameter (`{ jobId: options.jobId }`), or the
/// options object itself passed through (`queue.add(name, data, opts)`).
fn key_from_param(arg: &Val, keys: &[String]) -> Option<crate::facts::DedupParam> {
    match arg {
        Val::Obj(fields) => fields.iter().find_map(|(k, x)| {
            keys.contains(k)
                .then(|| param_path(x))
                .flatten()
                .map(|(index, fields)| crate::facts::DedupParam {
                    index,
                    fields,
                    is_id: true,
                })
        }),
        _ => param_path(arg).map(|(index, fields)| crate::facts::DedupParam {
            index,
            fields,
            is_id: false,
        }),
    }
}

fn param_index(v: &Val) -> Option<usize> {
    match v {
        Val::Param(_, i) => Some(*i),
        Val::Member(inner, _) => param_index(inner),
        _ => None,
    }
}

/// Where Objection's query builder starts in a chain (`Person.query().where(..).delete()`,
/// `this.models.Person.query(trx).insert(..)`): the index in `path` of a `query()` or `$query()`
/// that is called before the last link. Drizzle's `db.query.users.findFirst(..)`, whose `query`
/// is no call, is not one.
fn objection_query(cs: &CallSite) -> Option<usize> {
    let n = cs.path.len();
    (0..n.saturating_sub(1))
        .find(|&i| matches!(cs.path[i].as_str(), "query" | "$query") && cs.hops.contains(&(i + 1)))
}

/// The relation an Objection chain works on (`user.$relatedQuery('sessions').insert(..)`,
/// `Person.relatedQuery('pets').for(1).insert(..)`,
/// https://vincit.github.io/objection.js/api/model/instance-methods.html#relatedquery): its
/// name, which names the related rows.
fn objection_relation(v: &Val, depth: usize) -> Option<String> {
    if depth > 12 {
        return None;
    }
    match v {
        Val::Member(inner, _) => objection_relation(inner, depth + 1),
        Val::Call(callee, args) => match (callee.as_ref(), args.first()) {
            (Val::Member(_, q), Some(Val::Str(relation)))
                if q == "$relatedQuery" || q == "relatedQuery" =>
            {
                Some(relation.clone())
            }
            (c, _) => objection_relation(c, depth + 1),
        },
        _ => None,
    }
}

/// A lookup by a value this request just made (`where key = ${randomUUID()}`, `{ where: { token:
/// generateToken() } }`): it never finds what an earlier run created, so it guards nothing.
/// Equality only: a window on the time (`created_at > ${since}`) still finds an earlier run's row.
fn looks_up_fresh(cs: &CallSite) -> bool {
    // Raw SQL: a tagged template's interpolations, or the values after a statement
    // (`pool.query('select .. where key = $1', [key])`).
    let sql = cs.args.first().and_then(crate::program::sql_text);
    if let Some(sql) = sql.filter(|q| is_select(q)) {
        let binds: Vec<&Val> = match (cs.args.first(), cs.args.get(1)) {
            (Some(Val::Template(pieces)), _) => pieces
                .iter()
                .filter(|p| !matches!(p, Val::Str(_)))
                .collect(),
            (_, Some(Val::Arr(items))) => items.iter().collect(),
            _ => cs.args.iter().skip(1).collect(),
        };
        return crate::sql::sql_equality_binds(&sql)
            .into_iter()
            .filter_map(|i| binds.get(i))
            .any(|b| made_by_maker(b));
    }
    match cs.args.first() {
        Some(Val::Obj(fields)) => {
            let filter = match fields.iter().find(|(k, _)| k == "where") {
                Some((_, Val::Obj(w))) => w,
                Some(_) => return false,
                None => fields,
            };
            filter.iter().any(|(_, v)| made_by_maker(v))
        }
        _ => false,
    }
}

/// A value a maker call returns itself (`randomUUID()`, `nanoid()`, a template of one), not a
/// field read from some call's result (`schema.safeParse(body).data.name`, whose receiver's name
/// may sound like a maker).
fn made_by_maker(v: &Val) -> bool {
    match v {
        Val::Call(..) => fresh_random(v),
        Val::Template(parts) => parts.iter().any(made_by_maker),
        _ => false,
    }
}

/// An update that marks rows deleted (`SET deleted = true`, `deletedAt: new Date()`,
/// `is_deleted = true`): a soft delete, which hides them as a delete removes them. So does one
/// that retires them (`status: 'inactive'`, `revokedAt: new Date()`, `SET active = false`): the
/// rows that count are those still valid, and a create after it rotates them (a new invite
/// link, a new API key). Not a flag that only ranks rows (`isDefault = false`).
pub fn soft_deletes(e: &Effect) -> bool {
    e.kind == EffectKind::DbUpdate
        && !e.relative
        && e.update_keys.iter().any(|(k, v)| {
            let k: String = k
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_lowercase();
            let v = v.as_deref();
            match k.as_str() {
                "deleted" | "isdeleted" | "deletedat" | "removed" | "isremoved" | "removedat"
                | "revoked" | "isrevoked" | "revokedat" | "expired" | "isexpired"
                | "invalidated" | "isinvalidated" | "invalidatedat" | "deactivatedat"
                | "disabledat" => matches!(v, Some("b:true" | "now")),
                "active" | "isactive" | "enabled" | "isenabled" | "valid" | "isvalid" => {
                    v == Some("b:false")
                }
                // (a string, or an enum's member: `m:LinkStatus.Inactive`)
                "status" | "state" => v.is_some_and(|v| {
                    let name = match v.strip_prefix("m:") {
                        Some(member) => member.rsplit('.').next().unwrap_or(""),
                        None => v.strip_prefix("s:").unwrap_or(""),
                    };
                    matches!(
                        name.to_ascii_lowercase().as_str(),
                        "inactive"
                            | "deactivated"
                            | "revoked"
                            | "expired"
                            | "disabled"
                            | "invalid"
                            | "invalidated"
                            | "superseded"
                            | "replaced"
                            | "deleted"
                    )
                }),
                _ => false,
            }
        })
}

/// Does a delete (or a soft delete) clear the set a later create of its model writes again (a
/// replace)? Not one that runs only while a looked-up row of its own model is in some state (`if
/// (row.status === 'FAILED') delete(row)`): that removes one stale row, and the create beside it
/// is a create. Not one on a failure path either.
pub fn replaces_set(e: &Effect) -> bool {
    if e.kind != EffectKind::DbDelete && !soft_deletes(e) {
        return false;
    }
    let stale_row = e.state_guard.iter().any(|(models, ..)| {
        e.target.as_deref().is_some_and(|t| {
            let t = model_key(t);
            models.iter().any(|m| model_key(m) == t)
        })
    });
    !stale_row && !e.on_failure
}

/// Marks an effect that runs only when a lookup of `model` missed as running once, when the body
/// creates that model's row on the path where the lookup missed (`creates`: the model's key, the
/// model as looked up, the create): a sequential retry finds that row. Whether it was marked.
fn guard_by_missed_create(
    e: &mut Effect,
    creates: &[(String, String, String)],
    model: &str,
) -> bool {
    let Some((_, looked_up, create)) = creates.iter().find(|(k, _, _)| *k == model_key(model))
    else {
        return false;
    };
    e.lookup_guarded = Some(format!(
        "runs only when the lookup of `{looked_up}` found nothing, on the path that creates that row ({create})"
    ));
    true
}

/// Two model names that name the same model (`messageTemplate`, `MessageTemplate`).
fn same_model(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => model_key(a) == model_key(b),
        _ => false,
    }
}

/// A delete removes the row a lookup found: it is called on the row (`row.destroy()`), given it
/// (`repo.remove(row)`), or filters only on the row's fields and on what the lookup matched on
/// (`where: { id: row.id }`, `where: { identifier: email }` after a lookup by `email`). A filter
/// with anything else (`expires: { lt: now }`) may leave the row.
fn deletes_row(callee: &Val, args: &[Val], row: &Val) -> bool {
    /// A value that stands for something of this request: a parameter or what is read from one.
    fn of_request(v: &Val) -> bool {
        match v {
            Val::Param(..) => true,
            Val::Member(inner, _) => of_request(inner),
            _ => false,
        }
    }
    /// The request values in `v`, outermost (`req.body.email`, not `req.body` as well).
    fn request_values<'v>(v: &'v Val, depth: usize, out: &mut Vec<&'v Val>) {
        if depth > 12 {
            return;
        }
        if of_request(v) {
            out.push(v);
            return;
        }
        match v {
            Val::Obj(fields) => fields
                .iter()
                .for_each(|(_, x)| request_values(x, depth + 1, out)),
            Val::Arr(items) | Val::Template(items) => {
                items.iter().for_each(|x| request_values(x, depth + 1, out))
            }
            Val::Call(_, args) => args.iter().for_each(|x| request_values(x, depth + 1, out)),
            _ => {}
        }
    }
    /// The row itself or one of its fields (`row`, `row.id`).
    fn of_row(v: &Val, row: &Val) -> bool {
        v == row || matches!(v, Val::Member(inner, _) if of_row(inner, row))
    }
    // node-postgres answers `{ rows }`: the row is `rows[0]` of the lookup's call.
    let mut base = row;
    while let Val::Member(inner, k) = base
        && (k == "0" || k == "rows")
    {
        base = inner;
    }
    let Val::Call(_, lookup_args) = base else {
        return false;
    };
    if matches!(callee, Val::Member(receiver, _) if receiver.as_ref() == row)
        || args.iter().any(|a| a == row)
    {
        return true;
    }
    let mut matched_on: Vec<&Val> = Vec::new();
    for a in lookup_args {
        request_values(a, 0, &mut matched_on);
    }
    // Raw SQL (`pool.query('DELETE FROM podcasts WHERE id = $1', [row.id])`): every value it
    // binds is the row's or what the lookup matched on.
    if let Some(sql) = args.first().and_then(crate::program::sql_text)
        && classify_sql(&sql).is_some_and(|(kind, ..)| kind == EffectKind::DbDelete)
    {
        let bound: Vec<&Val> = args[1..]
            .iter()
            .flat_map(|a| match a {
                Val::Arr(items) => items.iter().collect::<Vec<_>>(),
                v => vec![v],
            })
            .collect();
        return !bound.is_empty()
            && bound
                .iter()
                .all(|v| of_row(v, row) || matched_on.contains(v));
    }
    let filter = match args.first() {
        Some(Val::Obj(fields)) => match fields.iter().find(|(k, _)| k == "where") {
            Some((_, Val::Obj(w))) => w,
            Some(_) => return false,
            None => fields,
        },
        _ => return false,
    };
    !filter.is_empty()
        && filter
            .iter()
            .all(|(_, v)| of_row(v, row) || matched_on.contains(&v))
}

/// Find-or-create in one function: a create that runs only when a lookup of the same model found
/// nothing. With an update of the row found it is an upsert by hand, whatever constraint also
/// backs it; a guard alone counts only where no unique constraint does the job. A sequential retry
/// finds the row, but two concurrent retries can both create.
/// Kysely's writes, the links that start a write chain: a read that ends one
/// (`db.insertInto('t').values(v).executeTakeFirst()`) reads nothing.
const BUILDER_WRITES: &[&str] = &[
    "insertInto",
    "replaceInto",
    "updateTable",
    "deleteFrom",
    "mergeInto",
];

/// postgres.js's dynamic insert: `insert into t $1` (the statement ends at the bound value),
/// where that value is the helper called with the row (`sql(row)`, `sql(row, 'a', 'b')` for only
/// those columns; an array of rows inserts each): the columns and the values they get.
fn dynamic_insert_row(sql: &str, values: &[Val]) -> Option<Vec<(String, Val)>> {
    let lower = sql.to_ascii_lowercase();
    let after = &lower[lower.find("insert into")? + "insert into".len()..];
    let mut words = after.split_whitespace();
    let (_table, bound) = (words.next()?, words.next()?);
    let index: usize = bound.strip_prefix('$')?.parse().ok()?;
    let Val::Call(_, args) = values.get(index.checked_sub(1)?)? else {
        return None;
    };
    let fields = match args.first()? {
        Val::Obj(fields) => fields,
        Val::Arr(rows) => match rows.first()? {
            Val::Obj(fields) => fields,
            _ => return None,
        },
        _ => return None,
    };
    let only: Vec<&str> = args[1..]
        .iter()
        .filter_map(|a| match a {
            Val::Str(c) => Some(c.as_str()),
            _ => None,
        })
        .collect();
    Some(
        fields
            .iter()
            .filter(|(k, _)| only.is_empty() || only.contains(&k.as_str()))
            .cloned()
            .collect(),
    )
}

/// A value a retry does not send again: one made up per call ([`fresh_random`]), or the id of
/// a row this request created (`_notification.id` after `const _notification = await
/// db.insert(notification).values(..).returning().get()`).
fn made_per_call(v: &Val) -> bool {
    let v = &through_validation(v, 0);
    fresh_random(v) || field_of_created(v)
}

/// A value read through a schema's validation (`schema.parse(req.body).email`) as the value
/// validated (`req.body.email`): the schema itself (`z.string().uuid()`) makes nothing.
fn through_validation(v: &Val, depth: usize) -> Val {
    match v {
        _ if depth > 16 => v.clone(),
        Val::Member(inner, p) => Val::Member(
            std::sync::Arc::new(through_validation(inner, depth + 1)),
            p.clone(),
        ),
        Val::Call(callee, args)
            if matches!(&**callee, Val::Member(_, name) if VALIDATES.contains(&name.as_str()))
                && !args.is_empty() =>
        {
            through_validation(&args[0], depth + 1)
        }
        _ => v.clone(),
    }
}

fn field_of_created(v: &Val) -> bool {
    // the row's own id (the database makes it); its other fields may be the caller's
    let Val::Member(row, name) = v else {
        return false;
    };
    if !matches!(name.to_ascii_lowercase().as_str(), "id" | "_id" | "uuid") {
        return false;
    }
    let mut cur: &Val = row;
    while let Val::Member(inner, _) | Val::Element(inner) = cur {
        cur = inner;
    }
    for _ in 0..32 {
        cur = match cur {
            // `const [user] = await sql\`insert into account .. returning *\``
            Val::Call(_, args)
                if args
                    .first()
                    .and_then(crate::program::sql_text)
                    .and_then(|t| classify_sql(&t))
                    .is_some_and(|(k, _, _)| k == EffectKind::DbCreate) =>
            {
                return true;
            }
            Val::Call(callee, _) => match callee.as_ref() {
                // (or named for one: `workos.organizations.createOrganization(..)`)
                Val::Member(_, m)
                    if matches!(
                        m.as_str(),
                        "insert" | "insertInto" | "create" | "createOne" | "save" | "insertOne"
                    ) || crate::catalog::names_a_create(m) =>
                {
                    return true;
                }
                Val::Member(obj, _) => obj,
                _ => return false,
            },
            Val::Member(obj, _) | Val::Element(obj) => obj,
            _ => return false,
        };
    }
    false
}

/// `db.select(..).from(t)` (and `selectDistinct`): a Drizzle select of a table.
fn drizzle_select(cs: &CallSite) -> bool {
    let n = cs.path.len();
    n >= 2
        && cs.path[n - 1] == "from"
        && matches!(
            cs.path[n - 2].as_str(),
            "select" | "selectDistinct" | "selectDistinctOn"
        )
}

/// Supabase's (PostgREST's) and Knex's `.from('t').select(..)`: a read of the table the chain
/// names (see `program::from_select_read`), found by the link of the chain that selects.
fn from_select(cs: &CallSite) -> bool {
    let n = cs.path.len();
    n >= 2 && cs.path[n - 1] == "select" && cs.path[n - 2] == "from"
}

/// (So is an upsert the ORM makes by reading the row first, TypeORM's `save` of an entity given
/// its key: what runs after it runs only when the lookup missed. An atomic upsert is not.)
fn find_or_create(looked_up: &str, updated: &HashSet<String>, e: &mut Effect) {
    if e.kind == EffectKind::DbCreate
        && (!e.upsert || e.reads_then_writes)
        && let Some(t) = e.target.as_deref().map(model_key)
        && model_key(looked_up) == t
    {
        e.find_or_create = true;
        e.upsert = e.reads_then_writes || updated.contains(&t);
    }
}

fn merge_chains(own: Vec<(usize, Effect)>) -> Vec<Effect> {
    let mut groups: std::collections::BTreeMap<usize, Vec<Effect>> =
        std::collections::BTreeMap::new();
    for (g, e) in own {
        groups.entry(g).or_default().push(e);
    }
    let mut out = Vec::new();
    for (_, mut effects) in groups {
        if effects.iter().any(|e| e.upsert) {
            effects.retain(|e| e.upsert || e.kind != EffectKind::DbCreate);
        }
        // Inner calls are recorded first: keep the innermost effect of each kind (the call that
        // writes, not a `.then()` / `.catch()` after it), the upsert when there is one.
        let mut kept: Vec<Effect> = Vec::new();
        for e in effects.into_iter() {
            if !kept.iter().any(|k| k.kind == e.kind) {
                kept.push(e);
            }
        }
        out.extend(kept);
    }
    out
}

/// The table a write statement names: `INSERT INTO t`, `UPDATE t`, `DELETE FROM t`.
/// The fields of a call's object arguments, dotted one level deep, with their literal values
/// (for the harm judgement's provider semantics and request bodies). A body encoded on the way
/// out is read as the object it encodes: `JSON.stringify({..})`, `qs.stringify({..})`,
/// `new URLSearchParams({..})`, and a form-encoded literal (`'grant_type=client_credentials'`).
fn arg_fields(
    args: &[Val],
    built: impl Fn(&Val) -> Option<Vec<(String, Val)>>,
) -> Vec<(String, Option<String>)> {
    fn lit(v: &Val) -> Option<String> {
        match v.plain() {
            Val::Str(s) => Some(s.clone()),
            Val::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
    // The fields of a value read as an object: a literal, an encoded literal, a form string.
    let fields = |v: &Val| -> Option<Vec<(String, Val)>> {
        match v.plain() {
            Val::Obj(f) => Some(f.clone()),
            Val::Str(s) => crate::catalog::harm::form_fields(s)
                .map(|f| f.into_iter().map(|(k, v)| (k, Val::Str(v))).collect()),
            other => built(other),
        }
    };
    let mut out = Vec::new();
    for a in args {
        let Some(top) = fields(a) else { continue };
        for (k, v) in &top {
            out.push((k.clone(), lit(v)));
            if let Some(inner) = fields(v) {
                out.extend(inner.iter().map(|(k2, v2)| (format!("{k}.{k2}"), lit(v2))));
            }
        }
    }
    out
}

/// The fields of object arguments whose value a call made (`{ request: fetched.pr }`,
/// `{ request: await newInvoice() }`): not what the client sent.
fn made_fields(args: &[Val]) -> Vec<String> {
    fn made(v: &Val, depth: usize) -> bool {
        match v {
            Val::Call(f, _) => !matches!(f.as_ref(), Val::Global(g) if g == crate::program::EITHER),
            Val::Member(inner, _) if depth < 16 => made(inner, depth + 1),
            _ => false,
        }
    }
    args.iter()
        .filter_map(|a| match a.plain() {
            Val::Obj(fields) => Some(fields),
            _ => None,
        })
        .flatten()
        .filter(|(_, v)| made(v, 0))
        .map(|(k, _)| k.clone())
        .collect()
}

/// The URL an HTTP call is made to, as written: its first argument's text, or the `url` of its
/// config object.
/// A URL as written: a string, or a template held in a variable (`const url =
/// `${API}/v1/oauth2/token``): its literal parts, each unknown part a `${}` hole.
fn url_text(v: &Val) -> Option<String> {
    match v.plain() {
        Val::Str(s) => Some(s.clone()),
        Val::Template(parts) => Some(
            parts
                .iter()
                .map(|p| p.as_str().map_or_else(|| "${}".to_string(), str::to_string))
                .collect(),
        ),
        _ => None,
    }
}

/// The value an HTTP call takes its URL from when it is not written there: its first argument,
/// or the `url` of its options (`axios.post(options.url, ..)`, `axios.request({ url })`).
fn url_arg(cs: &CallSite) -> Option<Val> {
    let first = cs.args.first()?;
    match first {
        Val::Obj(fields) => fields
            .iter()
            .rev()
            .find(|(k, _)| k == "url")
            .map(|(_, v)| v.clone()),
        v => Some(v.clone()),
    }
}

fn call_url(cs: &CallSite) -> Option<String> {
    let text = url_text;
    cs.literal.clone().or_else(|| {
        if let Some(s) = cs.args.first().and_then(text) {
            return Some(s);
        }
        cs.args.iter().find_map(|a| match a {
            Val::Obj(fields) => fields.iter().find_map(|(k, v)| match text(v) {
                Some(s) if k == "url" => Some(s),
                _ => None,
            }),
            _ => None,
        })
    })
}

/// The table of a statement built with it from a field of `this` (`INSERT into
/// ${this.table} SET ?` in a base model's static method): `this.table`, named where a caller
/// names the class (see `Calls::bind_subclass_field`).
fn this_table(sql: &str, built: Option<&Val>) -> Option<String> {
    let Some(Val::Template(pieces)) = built else {
        return None;
    };
    let hole: usize = table_word(sql)?.strip_prefix('$')?.parse().ok()?;
    let piece = pieces
        .iter()
        .filter(|p| !matches!(p, Val::Str(_)))
        .nth(hole.checked_sub(1)?)?;
    match piece {
        Val::Member(this, field) if matches!(this.as_ref(), Val::This(_)) => {
            Some(format!("{THIS_FIELD}{field}"))
        }
        _ => None,
    }
}

/// The word after a statement's first `INTO`, `UPDATE` or `FROM`: its table as written.
fn table_word(sql: &str) -> Option<&str> {
    let mut words = sql
        .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .filter(|w| !w.is_empty());
    words.find(|w| matches!(w.to_ascii_uppercase().as_str(), "INTO" | "UPDATE" | "FROM"))?;
    words.next()
}

pub fn sql_table(sql: &str) -> Option<String> {
    let name = table_word(sql)?.trim_matches(|c| c == '"' || c == '`');
    // (the schema of a queue library's own tables stays: `pgboss.job` is pg-boss's job table,
    // not the application's `job`)
    let schema = name
        .rsplit_once('.')
        .map(|(s, _)| s.trim_matches(|c| c == '"' || c == '`'));
    let library = schema.is_some_and(|s| {
        matches!(
            s.to_ascii_lowercase().as_str(),
            "pgboss" | "graphile_worker"
        )
    });
    let name = if library {
        name
    } else {
        name.rsplit('.').next().unwrap_or(name)
    };
    let name = name
        .trim_matches(|c| c == '"' || c == '`')
        .replace("\".\"", ".");
    (!name.is_empty() && !name.starts_with('$')).then(|| name.to_ascii_lowercase())
}

/// Whether a raw SQL statement is a `SELECT`.
pub fn is_select(sql: &str) -> bool {
    sql.trim_start()
        .get(..6)
        .is_some_and(|w| w.eq_ignore_ascii_case("select"))
}

/// Whether a `SELECT` counts rows (`select count(*) from ..`): a count, not a row looked up.
pub fn selects_count(sql: &str) -> bool {
    sql.trim_start()
        .get(6..)
        .is_some_and(|rest| rest.trim_start().to_ascii_lowercase().starts_with("count"))
}

/// What a raw SQL statement does: (kind, upsert, relative).
/// `a || fresh()` whose `a` is not made per call: fresh only when the caller sends no `a`.
fn only_fallback_fresh(v: &Val) -> bool {
    match v {
        Val::Call(callee, args) => {
            matches!(callee.as_ref(), Val::Global(g) if g == crate::program::EITHER)
                && args.first().is_some_and(|a| !fresh_random(a))
        }
        // `where: { id: body.id || uuidv4() }`: each part made per call is a fallback
        Val::Obj(fields) => {
            fields.iter().any(|(_, x)| fresh_random(x))
                && fields
                    .iter()
                    .all(|(_, x)| !fresh_random(x) || only_fallback_fresh(x))
        }
        _ => false,
    }
}

/// An upsert matched on these values, made per call (a retry's fresh value matches no row, so it
/// creates again), and made only when the caller's value is missing (`body.id || uuidv4()`).
pub fn per_call_match(matched: &[&Val]) -> (bool, bool) {
    let per_call = matched.iter().any(|v| fresh_random(v));
    let unless_missing = per_call
        && matched
            .iter()
            .all(|v| !fresh_random(v) || only_fallback_fresh(v));
    (per_call, unless_missing)
}

/// A write's label; an upsert matched on a value made per call says so.
pub fn per_call_label(label: &str, per_call: bool, unless_missing: bool) -> String {
    match (per_call, unless_missing) {
        (false, _) => label.to_string(),
        (true, false) => format!("{label} matched on a value made per call"),
        (true, true) => {
            format!(
                "{label} matched on the caller's value, or one made per call when it is missing"
            )
        }
    }
}

pub fn classify_sql(sql: &str) -> Option<(EffectKind, bool, bool)> {
    let words = sql_words(sql);
    let first = words.iter().position(|w| {
        matches!(
            w.as_str(),
            "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | "MERGE" | "SELECT"
        )
    })?;
    let kind = match words[first].as_str() {
        "INSERT" | "REPLACE" | "MERGE" => EffectKind::DbCreate,
        "UPDATE" => EffectKind::DbUpdate,
        "DELETE" => EffectKind::DbDelete,
        _ => return None,
    };
    let joined = words.join(" ");
    let upsert = kind == EffectKind::DbCreate
        && (joined.contains("ON CONFLICT")
            || joined.contains("INSERT IGNORE")
            // SQLite's conflict clauses: a duplicate is skipped or replaced.
            || joined.contains("INSERT OR IGNORE")
            || joined.contains("INSERT OR REPLACE")
            || joined.contains("ON DUPLICATE KEY")
            || words[first] == "REPLACE"
            || words[first] == "MERGE");
    // `SET n = n + 1`: the column on both sides of an assignment with + or -, or a flip of it
    // (`SET active = NOT active`, `CASE WHEN active ..`); not when the statement moves rows out
    // of its own `WHERE` (a second run changes nothing).
    let relative = kind == EffectKind::DbUpdate
        && has_self_increment(sql)
        && !crate::sql::sql_moves_state(sql);
    Some((kind, upsert, relative))
}

impl<'a> Calls<'a> {
    pub fn new(res: &'a Resolver<'a>, catalog: &'a Catalog) -> Self {
        let mut by_name: HashMap<&str, Vec<(ModId, FnId)>> = HashMap::new();
        for (m, module) in res.modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            for class in &module.classes {
                for (name, f) in &class.methods {
                    by_name.entry(name.as_str()).or_default().push((m, *f));
                }
            }
        }
        let mut subclasses: HashMap<(ModId, ClassId), Vec<(ModId, ClassId)>> = HashMap::new();
        let mut implementers: HashMap<String, Vec<(ModId, ClassId)>> = HashMap::new();
        for (m, module) in res.modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            for (c, class) in module.classes.iter().enumerate() {
                for base in class.extends.iter().chain(&class.implements) {
                    match res.resolve(m, base) {
                        Resolved::Class(bm, bc) if (bm, bc) != (m, c) => {
                            subclasses.entry((bm, bc)).or_default().push((m, c));
                        }
                        Resolved::Class(..) => {}
                        _ => {
                            if let Some(name) = base.name_it_goes_by() {
                                implementers.entry(name).or_default().push((m, c));
                            }
                        }
                    }
                }
            }
        }
        Calls {
            max_depth: DEFAULT_CALL_DEPTH,
            depth: std::cell::Cell::new(0),
            truncated: std::cell::Cell::new(false),
            cut: std::cell::Cell::new(None),
            res,
            catalog,
            memo: RefCell::new(HashMap::new()),
            cut_memo: RefCell::new(HashMap::new()),
            wraps: RefCell::new(HashMap::new()),
            by_name,
            subclasses,
            implementers,
            registry: std::cell::OnceCell::new(),
            listeners: std::cell::OnceCell::new(),
            db_functions: HashMap::new(),
        }
    }

    /// The functions the project's SQL defines (see [`crate::sql::database_functions`]), each
    /// judged once: what its body does, read as raw SQL is (a create that is no upsert first,
    /// then a relative update, then its first write), the functions its statements call in
    /// turn, two levels down.
    pub fn with_db_functions(mut self, functions: &[(String, String)]) -> Self {
        let bodies: HashMap<&str, &str> = functions
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_str()))
            .collect();
        let mut memo: HashMap<String, Option<(EffectKind, bool, bool)>> = HashMap::new();
        for (name, _) in functions {
            db_function_effect(&bodies, name, 0, &mut memo);
        }
        self.db_functions = memo;
        self
    }

    fn db_function_effect(&self, name: &str) -> Option<(EffectKind, bool, bool)> {
        self.db_functions.get(name).copied().flatten()
    }

    /// The database function a statement calls (`SELECT top_up($1, $2)`) that the project
    /// defines and that writes: its name and what it does.
    fn sql_function_effect(&self, sql: &str) -> Option<(String, (EffectKind, bool, bool))> {
        if self.db_functions.is_empty() {
            return None;
        }
        crate::sql::called_functions(sql)
            .into_iter()
            .find_map(|f| self.db_function_effect(&f).map(|e| (f, e)))
    }

    /// The functions a project registers under `field.member` in an object it hands to a call or
    /// exports (`app.registerPlugin({ mutations: { createRefund } })`, `paymentMethods: [{
    /// functions: { createRefund: stripeCreateRefund } }]`): the plugin registries that a call
    /// like `context.mutations.createRefund(..)` or `functions.createRefund(..)` dispatches
    /// through. Every such object, at any depth of the arguments, up to [`MAX_REGISTERED`]
    /// functions under one pair.
    fn registered(&self, field: &str, member: &str) -> &[(ModId, FnId)] {
        let index = self.registry.get_or_init(|| {
            let mut index = Registry::new();
            for (m, module) in self.res.modules.iter().enumerate() {
                if module.is_test {
                    continue;
                }
                let mut roots: Vec<&Val> = module.exports.iter().map(|(_, v)| v).collect();
                roots.extend(&module.cjs_whole);
                for f in &module.functions {
                    for cs in &f.calls {
                        roots.extend(&cs.args);
                    }
                }
                for v in roots {
                    self.register_fields(m, v, 0, &mut index);
                }
            }
            for v in index.values_mut() {
                v.sort();
                v.dedup();
            }
            index
        });
        index
            .get(&(field.to_string(), member.to_string()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    fn register_fields(&self, m: ModId, v: &Val, depth: usize, index: &mut Registry) {
        if depth > 4 {
            return;
        }
        match v {
            Val::Arr(items) => {
                for i in items {
                    self.register_fields(m, i, depth + 1, index);
                }
            }
            Val::Obj(fields) => {
                for (field, value) in fields {
                    let (m2, members) = match value {
                        Val::Obj(members) => (m, members.clone()),
                        Val::Import { .. } => match self.res.resolve(m, value) {
                            Resolved::Obj(m2, members) => (m2, members),
                            _ => continue,
                        },
                        other => {
                            self.register_fields(m, other, depth + 1, index);
                            continue;
                        }
                    };
                    for (member, fv) in &members {
                        if BUILTIN_METHODS.contains(&member.as_str()) {
                            continue;
                        }
                        if let Resolved::Func(m3, f3) = self.res.resolve(m2, fv) {
                            let at = index.entry((field.clone(), member.clone())).or_default();
                            if at.len() < MAX_REGISTERED {
                                at.push((m3, f3));
                            }
                        }
                    }
                    if matches!(value, Val::Obj(_)) {
                        self.register_fields(m, value, depth + 1, index);
                    }
                }
            }
            _ => {}
        }
    }

    /// The functions that run when the project fires in-process event `name`: each method a
    /// class marks `@OnEvent(name)` (Nest's event emitter, whose patterns may hold wildcards),
    /// and each function registered with `emitter.on(name, fn)` (or `once`, `addListener`).
    /// Every listener runs on an emit, so none is a guess; a name with more than
    /// [`MAX_LISTENERS`] listeners (`error`, `close`) is not followed.
    fn listeners(&self, name: &str) -> Vec<(ModId, FnId)> {
        let index = self.listeners.get_or_init(|| {
            let mut by_name: HashMap<String, Vec<(ModId, FnId)>> = HashMap::new();
            for (m, module) in self.res.modules.iter().enumerate() {
                if module.is_test {
                    continue;
                }
                for class in &module.classes {
                    for (f, decorators) in &class.method_decorators {
                        for d in decorators.iter().filter(|d| d.name == "OnEvent") {
                            for a in &d.args {
                                let names = match self.res.resolve_str(m, a) {
                                    Resolved::Str(s) => vec![s],
                                    // `@OnEvent(['a', 'b'])`
                                    _ => match a {
                                        Val::Arr(xs) => xs
                                            .iter()
                                            .filter_map(|x| match self.res.resolve_str(m, x) {
                                                Resolved::Str(s) => Some(s),
                                                _ => None,
                                            })
                                            .collect(),
                                        _ => vec![],
                                    },
                                };
                                for n in names {
                                    by_name.entry(n).or_default().push((m, *f));
                                }
                            }
                        }
                    }
                }
                for func in &module.functions {
                    for cs in &func.calls {
                        if !cs
                            .path
                            .last()
                            .is_some_and(|p| LISTEN_METHODS.contains(&p.as_str()))
                        {
                            continue;
                        }
                        let (Some(event), Some(handler)) = (cs.args.first(), cs.args.get(1)) else {
                            continue;
                        };
                        let Resolved::Str(n) = self.res.resolve_str(m, event) else {
                            continue;
                        };
                        if let Resolved::Func(m2, f2) = self.res.resolve(m, handler) {
                            by_name.entry(n).or_default().push((m2, f2));
                        }
                    }
                }
            }
            let mut out: Listeners = by_name
                .into_iter()
                .map(|(n, mut fs)| {
                    fs.sort();
                    fs.dedup();
                    (n, fs)
                })
                .collect();
            out.sort();
            out
        });
        let mut out: Vec<(ModId, FnId)> = index
            .iter()
            .filter(|(pattern, _)| event_matches(pattern, name))
            .flat_map(|(_, fs)| fs.iter().copied())
            .collect();
        out.sort();
        out.dedup();
        if out.len() > MAX_LISTENERS {
            out.clear();
        }
        out
    }

    /// A base class's method called on an instance of a subclass (`this.createApiKeyUseCase
    /// .execute(..)`, `execute` written in `AbstractUseCase`, the field a `CreateApiKeyUseCase`):
    /// the subclass's methods that method calls on `this` and the base class only declares
    /// (`await this.implementation(input)` of a template method): they run with it.
    fn template_steps(&self, m: ModId, callee: &Val, resolved: &Resolved) -> Vec<(ModId, FnId)> {
        let (Resolved::Func(bm, bf), Val::Member(recv, _)) = (resolved, callee) else {
            return vec![];
        };
        let Some(bc) = self.res.modules[*bm].functions[*bf].class else {
            return vec![];
        };
        let (Resolved::Instance(sm, sc) | Resolved::Class(sm, sc)) = self.res.resolve(m, recv)
        else {
            return vec![];
        };
        self.steps_of((*bm, *bf), bc, (sm, sc))
    }

    /// The methods of class `(sm, sc)` that method `(bm, bf)` of its base class `bc` calls on
    /// `this` and `bc` only declares (see [`Self::template_steps`]).
    fn steps_of(
        &self,
        (bm, bf): (ModId, FnId),
        bc: ClassId,
        (sm, sc): (ModId, ClassId),
    ) -> Vec<(ModId, FnId)> {
        if (sm, sc) == (bm, bc) {
            return vec![];
        }
        let mut out = Vec::new();
        for cs in &self.res.modules[bm].functions[bf].calls {
            let Val::Member(_, name) = &cs.callee else {
                continue;
            };
            if this_call(cs) != Some(bc)
                || !matches!(self.res.resolve(bm, &cs.callee), Resolved::Opaque)
            {
                continue;
            }
            let own = Val::Member(std::sync::Arc::new(Val::This(Some(sc))), name.clone());
            if let Resolved::Func(m2, f2) = self.res.resolve(sm, &own)
                && !out.contains(&(m2, f2))
                && out.len() < 8
            {
                out.push((m2, f2));
            }
        }
        out
    }

    /// The methods that implement `recv.prop(..)` when `recv` is an instance of a class that
    /// declares `prop` without a body (an abstract class): the method of that name in each class
    /// extending or implementing it, at any depth, the nearest one on each branch.
    fn overrides(&self, m: ModId, callee: &Val) -> (Vec<(ModId, FnId)>, Steps) {
        let Val::Member(recv, prop) = callee else {
            return (vec![], (vec![], false));
        };
        let (Resolved::Instance(bm, bc) | Resolved::Class(bm, bc)) = self.res.resolve(m, recv)
        else {
            return self.implementations(m, recv, prop);
        };
        let mut out = Vec::new();
        let mut seen: HashSet<(ModId, ClassId)> = HashSet::from([(bm, bc)]);
        let mut work = vec![(bm, bc)];
        while let Some(c) = work.pop() {
            for &sub in self.subclasses.get(&c).into_iter().flatten() {
                if seen.len() > 256 || !seen.insert(sub) {
                    continue;
                }
                match self.res.modules[sub.0].classes[sub.1].method(prop) {
                    Some(f) => out.push((sub.0, f)),
                    None => work.push(sub),
                }
            }
        }
        out.sort();
        (out, (vec![], false))
    }

    /// The methods that implement `recv.prop(..)` when `recv` is declared with an interface's
    /// type only (`constructor(private folders: FoldersRepository)`, the field a factory fills
    /// with `new PrismaFoldersRepository()`): the method of that name in each class that
    /// `implements` an interface of that name.
    fn implementations(&self, m: ModId, recv: &Val, prop: &str) -> (Vec<(ModId, FnId)>, Steps) {
        // What a call of a project function holds, by the type it declares it returns.
        let returned = |callee: &Val| match self.res.resolve(m, callee) {
            Resolved::Func(fm, ff) => self.res.modules[fm].functions[ff].return_type.clone(),
            _ => None,
        };
        let declared = match recv {
            Val::TypeRef(t) => t.name_it_goes_by(),
            // a parameter declared with the interface (`routes(apiKeys: ApiKeyRepository)`)
            Val::Param(pf, i) => self.res.modules[m]
                .functions
                .get(*pf)
                .and_then(|def| def.param_types.iter().find(|(k, _)| k == i))
                .and_then(|(_, t)| match t {
                    Val::TypeRef(t) => t.name_it_goes_by(),
                    _ => None,
                }),
            // `const provider = registry.getProvider(t)`, declared `: LightningProvider`
            Val::Call(callee, _) => match returned(callee) {
                Some(Val::TypeRef(t)) => t.name_it_goes_by(),
                _ => None,
            },
            Val::Member(obj, field) => match self.res.resolve(m, obj) {
                Resolved::Instance(cm, cc) => self.res.modules[cm].classes[cc]
                    .fields
                    .iter()
                    .filter(|(n, _)| n == field)
                    .find_map(|(_, v)| match v {
                        Val::TypeRef(t) => t.name_it_goes_by(),
                        _ => None,
                    }),
                // `const { provider } = this.accountAndProvider(id)`, declared
                // `: { account: Account; provider: LightningProvider }`
                _ => match obj.as_ref() {
                    Val::Call(callee, _) => match returned(callee) {
                        Some(Val::Obj(fields)) => fields.iter().find_map(|(k, v)| match v {
                            Val::TypeRef(t) if k == field => t.name_it_goes_by(),
                            _ => None,
                        }),
                        _ => None,
                    },
                    _ => None,
                },
            },
            _ => None,
        };
        let Some(name) = declared else {
            return (vec![], (vec![], false));
        };
        let classes: Vec<(ModId, ClassId)> =
            self.implementers.get(&name).cloned().unwrap_or_default();
        // Test doubles (`InMemoryFoldersRepository`, `FakeMailer`, files under `in-memory/` or
        // `__mocks__/`) implement the interface for the tests, not for the running service.
        let double = |&(cm, cc): &(ModId, ClassId)| {
            let class = &self.res.modules[cm].classes[cc].name;
            let file = &self.res.modules[cm].file;
            ["InMemory", "Fake", "Mock", "Stub", "Dummy"]
                .iter()
                .any(|p| class.starts_with(p))
                || [
                    "in-memory/",
                    "inmemory/",
                    "__mocks__/",
                    "/fakes/",
                    "/mocks/",
                ]
                .iter()
                .any(|d| file.contains(d))
        };
        let real: Vec<(ModId, ClassId)> = classes.iter().copied().filter(|c| !double(c)).collect();
        let chosen = if real.is_empty() { classes } else { real };
        // The class's own method, or the one it inherits (a use case whose `execute` its
        // abstract base writes), with the steps that method leaves to the class.
        let mut out: Vec<(ModId, FnId)> = Vec::new();
        let mut steps: Vec<(ModId, FnId)> = Vec::new();
        let mut stepping = 0;
        for (cm, cc) in chosen {
            if let Some(f) = self.res.modules[cm].classes[cc].method(prop) {
                out.push((cm, f));
                continue;
            }
            let own = Val::Member(std::sync::Arc::new(Val::This(Some(cc))), prop.to_string());
            if let Resolved::Func(bm, bf) = self.res.resolve(cm, &own)
                && let Some(bc) = self.res.modules[bm].functions[bf].class
            {
                out.push((bm, bf));
                let own_steps = self.steps_of((bm, bf), bc, (cm, cc));
                if !own_steps.is_empty() && steps.len() < MAX_STEPS {
                    stepping += 1;
                    steps.extend(own_steps);
                }
            }
        }
        out.sort();
        out.dedup();
        steps.sort();
        steps.dedup();
        // (one inherited method run by several classes: each class's steps are one candidate)
        (out, (steps, stepping > 1))
    }

    pub fn location(&self, m: ModId, line: u32) -> Location {
        Location::new(self.res.modules[m].file.clone(), line)
    }

    /// Every function reachable inside `f`'s body: itself and the functions defined in it.
    fn body_functions(&self, m: ModId, f: FnId) -> Vec<FnId> {
        let fns = &self.res.modules[m].functions;
        let mut out = vec![f];
        let mut i = 0;
        while i < out.len() && out.len() < 10_000 {
            out.extend(fns[out[i]].children.iter().copied());
            i += 1;
        }
        out
    }

    /// The functions that run when `f` runs: its body and the functions defined in it, less those
    /// `f` only hands back. A function `f` returns (alone, or as a field of a returned object or
    /// array: `return { jwt: async () => .. }`) and never calls or passes on runs when `f`'s
    /// caller calls it, and the linker follows that call where it is made; building an options
    /// object of callbacks runs none of them.
    fn run_body_functions(&self, m: ModId, f: FnId) -> Vec<FnId> {
        self.run_body_functions_d(m, f, 0)
    }

    /// [`Self::run_body_functions`], `depth` wrappers deep (see [`Self::only_wraps`]).
    fn run_body_functions_d(&self, m: ModId, f: FnId, depth: usize) -> Vec<FnId> {
        let fns = &self.res.modules[m].functions;
        let mut handed_back: Vec<FnId> = Vec::new();
        // Handed back inside what a package's factory makes of it (`return { providers:
        // [EmailProvider({ sendVerificationRequest })] }`): passed to that call, and run no more
        // for it unless passed elsewhere too.
        let mut in_returned_call: HashSet<FnId> = HashSet::new();
        // (value, inside a returned object or array, through a package's call)
        let mut stack: Vec<(&Val, bool, bool)> =
            fns[f].returns.iter().map(|v| (v, false, false)).collect();
        while let Some((v, in_object, through_call)) = stack.pop() {
            match v {
                Val::Func(g) if fns[f].children.contains(g) => {
                    handed_back.push(*g);
                    if through_call {
                        in_returned_call.insert(*g);
                    }
                }
                Val::Obj(fields) => {
                    stack.extend(fields.iter().map(|(_, x)| (x, true, through_call)));
                }
                Val::Arr(items) => stack.extend(items.iter().map(|x| (x, true, through_call))),
                // Only inside a returned object: a package call returned as it is (`return
                // createStreamResponse({ execute })`, a response) is taken to run what it is given.
                Val::Call(callee, items)
                    if in_object
                        && self.res.origin(m, callee).is_some()
                        && !matches!(self.res.resolve(m, callee), Resolved::Func(..)) =>
                {
                    stack.extend(items.iter().map(|x| (x, true, true)));
                }
                // A project function that only wraps what it is given (`return { ...wrapAll({
                // fns: { send, update } }) }`, a tracing decorator): what it is given is
                // handed back, wrapped.
                Val::Call(callee, items) => {
                    if let Resolved::Func(wm, w) = self.res.resolve(m, callee)
                        && self.only_wraps(wm, w, depth)
                    {
                        stack.extend(items.iter().map(|x| (x, in_object, true)));
                    }
                }
                _ => {}
            }
        }
        if handed_back.is_empty() {
            return self.body_functions(m, f);
        }
        let body = self.body_functions(m, f);
        // A function called or passed on anywhere in the body (outside itself) runs here.
        let own: HashSet<FnId> = handed_back
            .iter()
            .flat_map(|g| self.body_functions(m, *g))
            .collect();
        let mut used: HashMap<FnId, usize> = HashMap::new();
        for &h in body.iter().filter(|h| !own.contains(h)) {
            for cs in fns[h].calls.iter().filter(|cs| !inert_builtin(&cs.callee)) {
                let mut stack: Vec<&Val> = vec![&cs.callee, &cs.root];
                stack.extend(cs.args.iter());
                while let Some(v) = stack.pop() {
                    match v {
                        Val::Func(g) => {
                            *used.entry(*g).or_default() += 1;
                        }
                        Val::Obj(fields) => stack.extend(fields.iter().map(|(_, x)| x)),
                        Val::Arr(items) | Val::Call(_, items) => stack.extend(items.iter()),
                        _ => {}
                    }
                }
            }
        }
        handed_back.retain(|g| {
            let uses = used.get(g).copied().unwrap_or(0);
            uses == 0 || (uses == 1 && in_returned_call.contains(g))
        });
        // A function of the body that only what is handed back calls (`const sendWelcome =
        // async (..) => ..`, called by a returned `sendTransaction`): it runs when they do.
        let own: HashSet<FnId> = handed_back
            .iter()
            .flat_map(|g| self.body_functions(m, *g))
            .collect();
        let called_by_own: HashSet<FnId> = own
            .iter()
            .flat_map(|h| fns[*h].calls.iter())
            .filter_map(|cs| match &cs.callee {
                Val::Func(g) => Some(*g),
                _ => None,
            })
            .collect();
        for g in fns[f].children.iter().copied() {
            if called_by_own.contains(&g) && !own.contains(&g) && !used.contains_key(&g) {
                handed_back.push(g);
            }
        }
        let skipped: HashSet<FnId> = handed_back
            .iter()
            .flat_map(|g| self.body_functions(m, *g))
            .collect();
        body.into_iter().filter(|g| !skipped.contains(g)).collect()
    }

    /// Does project function `f` only wrap what it is given: it hands something back and, where
    /// it runs, neither calls a parameter nor gives one to anything but another such wrapper (a
    /// tracing decorator `(fn) => async (...a) => fn(...a)`, `wrapAll({ fns })`)? A function
    /// that calls what it is given (`withTransaction(async (tx) => ..)`) does not.
    fn only_wraps(&self, m: ModId, f: FnId, depth: usize) -> bool {
        // Only answers asked from the top are kept and read: one asked deeper has less depth left,
        // and keeping it would make answers depend on the order functions are followed in.
        if depth > 0 {
            return self.only_wraps_uncached(m, f, depth);
        }
        if let Some(known) = self.wraps.borrow().get(&(m, f)) {
            return *known;
        }
        let wraps = self.only_wraps_uncached(m, f, depth);
        self.wraps.borrow_mut().insert((m, f), wraps);
        wraps
    }

    fn only_wraps_uncached(&self, m: ModId, f: FnId, depth: usize) -> bool {
        let fns = &self.res.modules[m].functions;
        if depth > 4 || fns[f].returns.is_empty() {
            return false;
        }
        use crate::program::names_param_of;
        for g in self.run_body_functions_d(m, f, depth + 1) {
            for cs in &fns[g].calls {
                if names_param_of(&cs.callee, f) || names_param_of(&cs.root, f) {
                    return false;
                }
                if inert_builtin(&cs.callee) || !cs.args.iter().any(|a| names_param_of(a, f)) {
                    continue;
                }
                match self.res.resolve(m, &cs.callee) {
                    Resolved::Func(m2, f2) if self.only_wraps(m2, f2, depth + 1) => {}
                    _ => return false,
                }
            }
        }
        true
    }

    /// Every function whose summary was computed, with the functions defined inside it: the code
    /// endpoints reach.
    pub fn reached(&self) -> HashSet<(ModId, FnId)> {
        let mut out = HashSet::new();
        for &(m, f) in self.memo.borrow().keys() {
            for g in self.body_functions(m, f) {
                out.insert((m, g));
            }
        }
        out
    }

    /// The functions defined inside `f`, with `f`.
    pub fn with_children(&self, m: ModId, f: FnId) -> Vec<FnId> {
        self.body_functions(m, f)
    }

    /// Limits call following to `depth` calls below a handler.
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Where following calls first stopped at the depth limit, and the limit.
    pub fn depth_cut(&self) -> Option<((ModId, FnId), usize)> {
        self.cut.get().map(|at| (at, self.max_depth))
    }

    /// What function `f` does, memoised. A summary the depth bound cut somewhere below is
    /// incomplete, and what it holds depends on how many calls deep were left when `f` was
    /// entered: it is kept by function and that depth, so a function many paths reach is
    /// walked once per depth at most, not once per path (exponential in a deep call graph
    /// whose functions share callees). A complete summary serves every depth.
    pub fn summary(&self, m: ModId, f: FnId) -> Rc<Summary> {
        match self.memo.borrow().get(&(m, f)) {
            Some(Memo::Done(s)) => return s.clone(),
            Some(Memo::Busy) => return Rc::new(Summary::default()),
            None => {}
        }
        if self.depth.get() > self.max_depth {
            self.truncated.set(true);
            if self.cut.get().is_none() {
                self.cut.set(Some((m, f)));
            }
            // What lies deeper is not known, which is not "nothing".
            let func = &self.res.modules[m].functions[f];
            return Rc::new(Summary {
                unfollowed: vec![(
                    beyond_call_depth(&func.name, self.max_depth),
                    self.location(m, func.line),
                )],
                ..Summary::default()
            });
        }
        let left = self.max_depth - self.depth.get();
        if let Some(s) = self.cut_memo.borrow().get(&((m, f), left)) {
            self.truncated.set(true);
            return s.clone();
        }
        let outer_truncated = self.truncated.replace(false);
        self.memo.borrow_mut().insert((m, f), Memo::Busy);
        self.depth.set(self.depth.get() + 1);
        let s = Rc::new(self.compute(m, f, None));
        self.depth.set(self.depth.get() - 1);
        if self.truncated.get() {
            self.memo.borrow_mut().remove(&(m, f));
            self.cut_memo.borrow_mut().insert(((m, f), left), s.clone());
        } else {
            self.memo.borrow_mut().insert((m, f), Memo::Done(s.clone()));
        }
        self.truncated.set(self.truncated.get() || outer_truncated);
        s
    }

    /// What `f` reaches when the request's method is `method`: calls inside other methods'
    /// `req.method` branches are left out (Next.js pages handlers).
    pub fn summary_for_method(&self, m: ModId, f: FnId, method: &str) -> Summary {
        self.compute(m, f, Some(method))
    }

    fn compute(&self, m: ModId, f: FnId, method: Option<&str>) -> Summary {
        let mut out = Summary::default();
        let body = self.run_body_functions(m, f);
        let inside: HashSet<FnId> = body.iter().copied().collect();
        // Every function defined in `f`, those it only hands back too: passing one of those to
        // a library call in `f` is part of handing it back.
        let defined_here: HashSet<FnId> = self.body_functions(m, f).into_iter().collect();
        let module = &self.res.modules[m];
        let mut own: Vec<(usize, Effect)> = Vec::new();
        // Effects of calls that run only when a lookup found its row: (own?, index, the row, the
        // call).
        let mut found: Vec<(bool, usize, &Found, &CallSite)> = Vec::new();
        // Functions handed to a library handler that does not serve this method never run, nor
        // do those a library call is given and does not run (`getServerSession`'s `signIn`).
        let mut unserved: HashSet<FnId> = HashSet::new();
        for &g in &body {
            for cs in &module.functions[g].calls {
                if let Some(fields) = self.runs_only(m, cs) {
                    let mut carried = Vec::new();
                    for a in &cs.args {
                        self.carried_functions(m, a, ("", false), 0, &mut carried);
                    }
                    for (path, m2, af, _) in carried {
                        if m2 == m && inside.contains(&af) && !fields.contains(&path) {
                            unserved.extend(self.body_functions(m, af));
                        }
                    }
                }
            }
        }
        if let Some(method) = method {
            for &g in &body {
                for cs in &module.functions[g].calls {
                    if self.not_served(m, cs, method) {
                        let mut stack: Vec<&Val> = cs.args.iter().collect();
                        while let Some(v) = stack.pop() {
                            match v {
                                Val::Func(af) if inside.contains(af) => {
                                    unserved.extend(self.body_functions(m, *af));
                                }
                                Val::Obj(fields) => stack.extend(fields.iter().map(|(_, x)| x)),
                                Val::Arr(items) => stack.extend(items.iter()),
                                _ => {}
                            }
                        }
                    }
                }
            }
        }
        let mut body_lookups: Vec<(String, Vec<(String, String)>)> = Vec::new();
        // Across the body's functions: the creates found on a path where their lookup missed,
        // and the effects under a lookup's miss that no create of its own function matched (a
        // create inside a transaction callback, `sql.begin(async (tx) => ..)`, is in another).
        let mut missed_creates: Vec<(String, String, String)> = Vec::new();
        let mut unmatched_guarded: Vec<(bool, usize, String)> = Vec::new();
        // What ran before the call a callback of the body is written in (`uow.withTransaction(
        // async (trx) => ..)` after a code exchange): the callback's effects run after it too.
        let mut callback_after: HashMap<FnId, Vec<Location>> = HashMap::new();
        let mut callback_read: HashMap<FnId, Vec<Option<String>>> = HashMap::new();
        // The other way: the creates a callback makes whenever it runs, whose failure fails it
        // (an awaited `sql.begin(async (tx) => ..)` rejects with the callback's error), and the
        // effects of each call of the body, so that what follows the call runs after them.
        let mut callback_creates: HashMap<FnId, Vec<Location>> = HashMap::new();
        // Functions written as the argument of a call that answers their unique violations.
        let mut callback_caught: HashSet<FnId> = HashSet::new();
        let mut call_effects: Vec<CallEffects> = Vec::new();
        for &g in &body {
            if unserved.contains(&g) {
                continue;
            }
            let facts = &module.functions[g];
            // Targets deleted earlier in this function: a create after them replaces the set.
            let mut deleted: Vec<Option<String>> = Vec::new();
            // Models read so far in this function: a create after a read is pre-checked.
            // A callback written in a call starts with what was read before the call.
            let mut read: Vec<Option<String>> = callback_read.remove(&g).unwrap_or_default();
            // `knex('t').where(..).first()`: the table a chain starts from names its target;
            // `knex.insert(..).into('t')`, `supabase.from('t')`, Kysely's `db.insertInto('t')`:
            // a link of the chain names it.
            let group_table: HashMap<usize, String> = facts
                .calls
                .iter()
                .filter(|c| match c.path.last() {
                    None => !c.is_new,
                    Some(l) => TABLE_LINKS.contains(&l.as_str()),
                })
                .filter_map(|c| match c.args.as_slice() {
                    [Val::Str(t)] => Some((c.group, t.clone())),
                    // `tx(entityType.sharesTable)`: a table named by a value goes by the value
                    // as written, the same in every chain of the function that names it so (a
                    // link naming a table by a value, Drizzle's `.from(users)`, is read below).
                    [_] if c.path.is_empty() => table_written(c).map(|t| (c.group, t)),
                    _ => None,
                })
                .collect();
            // `db.collection('logs').insertOne(..)`: the collection a chain starts from.
            let group_collection: std::collections::HashMap<usize, String> = facts
                .calls
                .iter()
                .filter(|c| c.path.last().is_some_and(|p| p == "collection"))
                .filter_map(|c| Some((c.group, c.args.first()?.as_str()?.to_string())))
                .collect();
            // `dataSource.getRepository(User).save(..)`: the entity a chain's repository serves.
            let group_entity: std::collections::HashMap<usize, String> = facts
                .calls
                .iter()
                .filter(|c| {
                    c.path.last().is_some_and(|p| {
                        REPOSITORY_GETTERS.contains(&p.as_str())
                            // TypeORM's query builder given its entity
                            // (`createQueryBuilder().insert().into(CollectionLog)`,
                            // `.update(User)`, `.delete().from(User)`)
                            || matches!(p.as_str(), "into" | "from" | "update")
                                && c.path.iter().any(|l| l == "createQueryBuilder")
                    })
                })
                .filter_map(|c| Some((c.group, self.entity_name(m, c.args.first()?)?)))
                .collect();
            // `db.insert(users).values({..})` (Drizzle): the table value names the target, and the
            // `.values(..)` / `.set(..)` call of the chain holds the record.
            let mut drizzle: std::collections::HashMap<usize, (String, Option<Vec<String>>)> =
                std::collections::HashMap::new();
            // A Drizzle table goes by its value's name in the code (`userSettings`, what a lookup
            // of it is named by) and by its SQL name (`app_user_settings`, a write's target).
            let mut table_alias: HashMap<String, String> = HashMap::new();
            for c in &facts.calls {
                let writes = matches!(
                    c.path.last().map(String::as_str),
                    Some("insert" | "update" | "delete")
                );
                // A table imported from a package the resolver cannot follow (a workspace
                // alias) goes by its name.
                if (writes || drizzle_select(c))
                    && let Some(a) = c.args.first()
                    && let Some(t) = self.res.table_name(m, a).or_else(|| match a {
                        Val::Import { name: Some(n), .. } if n != "default" => Some(n.clone()),
                        // `trx.insert(schema.users)` with the schema module handed in as a
                        // parameter, or imported as a namespace the resolver cannot follow (`import
                        // { schema } from '@/lib/db'` of a workspace package): the table the
                        // project exports as `users`, else that name.
                        Val::Member(base, n) if matches!(base.as_ref(), Val::Param(..)) => {
                            self.res.drizzle_table_named(n).cloned()
                        }
                        Val::Member(base, n) if matches!(base.as_ref(), Val::Import { .. }) => self
                            .res
                            .drizzle_table_named(n)
                            .cloned()
                            .or_else(|| Some(n.clone())),
                        _ => None,
                    })
                {
                    if let Some(name) = a.name_it_goes_by() {
                        table_alias.insert(model_key(&name), t.clone());
                    }
                    if writes {
                        drizzle.entry(c.group).or_insert((t, None));
                    }
                }
            }
            let aliased = |name: &str| -> String {
                table_alias
                    .get(&model_key(name))
                    .cloned()
                    .unwrap_or_else(|| name.to_string())
            };
            // Kysely's `db.insertInto('pages').values({..})`, `.updateTable('t').set({..})`: so
            // too, the table named by the write's first link.
            for c in &facts.calls {
                if c.path
                    .last()
                    .is_some_and(|l| BUILDER_WRITES.contains(&l.as_str()))
                    && let [Val::Str(t)] = c.args.as_slice()
                {
                    drizzle.entry(c.group).or_insert((t.clone(), None));
                }
            }
            // The record's keys that are parameters, or the parameter the record is: what the
            // caller's arguments say of them (see `bind_record`).
            let mut builder_params: HashMap<usize, (RecordParams, Vec<String>)> = HashMap::new();
            // The fields a builder's `.set({..})` writes, each with its value when it is a
            // constant (`status: 'inactive'`), as `update_keys` reads them.
            let mut builder_sets: HashMap<usize, Vec<(String, Option<String>)>> = HashMap::new();
            // The fields such a `.set({..})` computes from themselves (`sql\`${t.count} - 1\``):
            // a relative update.
            let mut builder_moves: HashMap<usize, Vec<String>> = HashMap::new();
            // (TypeORM's query builder writes the SQL as a function's string, `.set({ credits: ()
            // => 'credits + 1' })`)
            let set_sql = |v: &Val| match v {
                Val::Func(g) => self.res.modules[m].functions[*g]
                    .returns
                    .iter()
                    .find_map(|r| r.as_str().map(str::to_string)),
                _ => None,
            };
            for c in &facts.calls {
                if c.path.last().is_some_and(|l| l == "set")
                    && let Some(Val::Obj(fields)) = c.args.first()
                {
                    let moved: Vec<String> = fields
                        .iter()
                        .filter(|(k, v)| {
                            column_arithmetic(k, v)
                                || from_row_field(k, v)
                                || set_sql(v).is_some_and(|sql| computes_from_itself(k, &sql))
                        })
                        .map(|(k, _)| k.clone())
                        .collect();
                    if !moved.is_empty() {
                        builder_moves.insert(c.group, moved);
                    }
                }
                if c.path.last().is_some_and(|l| l == "set") && drizzle.contains_key(&c.group) {
                    builder_sets
                        .entry(c.group)
                        .or_insert_with(|| update_keys(c, EffectKind::DbUpdate));
                }
                if matches!(c.path.last().map(String::as_str), Some("values" | "set"))
                    && let Some((_, keys)) = drizzle.get_mut(&c.group)
                    && keys.is_none()
                {
                    *keys = Self::data_keys(c);
                    builder_params.insert(
                        c.group,
                        (Self::record_params(m, c), made_keys(Self::record(c))),
                    );
                }
            }
            let caught_groups: HashSet<usize> = facts
                .calls
                .iter()
                .filter(|c| c.unique_caught)
                .map(|c| c.group)
                .collect();
            let prechecked = |read: &[Option<String>], target: &Option<String>| {
                read.iter().any(|r| r.is_none() || same_model(r, target))
            };
            let own_start = own.len();
            let out_start = out.effects.len();
            // Models looked up here, each with the fields its filter fixes to constants.
            // The lookups made in this function, after those of the functions around it:
            // a callback's guard tests what they found (`findOne(..).then(u => { if (u) .. })`).
            let mut lookups_here: Vec<(String, Vec<(String, String)>)> =
                std::mem::take(&mut body_lookups);
            // Models looked up here with a row lock.
            let mut locked_here: Vec<String> = Vec::new();
            // What a lookup's receiver stands for: the entity a repository serves, or what a
            // project method named like a lookup reads (`this.users.findByEmail(..)`).
            let mut guard_alias: HashMap<String, Vec<String>> = HashMap::new();
            // Instances built here and saved once already: a later save updates the row.
            let mut saved_built: Vec<Val> = Vec::new();
            // Effects of calls that run only when a lookup missed: (own?, index, model looked up,
            // the test that throws when it finds the row).
            let mut guarded: Vec<(bool, usize, String, Option<Location>)> = Vec::new();
            for (_, line) in &facts.key_reads {
                out.key_reads.push(self.location(m, *line));
            }
            for line in &facts.body_hashes {
                out.content_hashes.push(self.location(m, *line));
            }
            for k in &facts.key_seen {
                out.key_obs.push(KeyObs {
                    obs: k.obs.clone(),
                    at: self.location(m, k.line),
                    ctx: k.ctx,
                    order: k.line,
                });
            }
            for kc in &facts.key_calls {
                let cs = facts.calls.iter().find(|c| {
                    c.line == kc.line
                        && (c.path.last() == Some(&kc.method)
                            || (c.path.is_empty() && c.root_name == kc.method))
                });
                if let Some(op) = self.store_op(m, kc, cs) {
                    out.key_obs.push(KeyObs {
                        obs: Obs::Op(op),
                        at: self.location(m, kc.chain_line),
                        ctx: kc.ctx,
                        order: kc.chain_line,
                    });
                }
            }
            // Reading a provider's signature header is a webhook receiver's signature check.
            for (header, line) in &facts.signature_reads {
                own.push((
                    usize::MAX - *line as usize,
                    Effect {
                        kind: EffectKind::WebhookReceiver,
                        callee: format!("{header} header"),
                        label: "webhook signature header".into(),
                        location: self.location(m, *line),
                        ..Effect::default()
                    },
                ));
            }
            for (header, line) in &facts.signature_like_reads {
                out.signature_checks
                    .push((format!("`{header}` header"), self.location(m, *line)));
            }
            // Chains that end in `.catch(..)`: a failure there is answered, not thrown on.
            // A statement prepared and run in one chain (better-sqlite3's `db.prepare(sql)
            // .run(a, b)`): the values it is run with, by chain.
            let prepared_binds: HashMap<usize, &[Val]> = facts
                .calls
                .iter()
                .filter(|c| {
                    let n = c.path.len();
                    n >= 2
                        && c.path[n - 2] == "prepare"
                        && matches!(c.path[n - 1].as_str(), "run" | "get" | "all" | "iterate")
                })
                .map(|c| (c.group, c.args.as_slice()))
                .collect();
            // (a `.catch` whose handler only throws again catches nothing)
            let catch_groups: HashSet<usize> = facts
                .calls
                .iter()
                .filter(|c| c.path.last().is_some_and(|p| p == "catch"))
                .map(|c| c.group)
                .filter(|g| !facts.rethrow_catches.contains(g))
                .collect();
            // A call's blocks as far as its failure goes: out of the `try`s around it whose
            // `catch` only throws again (and, for a create's duplicate, out of those whose `catch`
            // throws on a unique violation).
            let escaped = |blocks: &'a [usize], duplicate: bool| -> &'a [usize] {
                let mut b = blocks;
                while let [rest @ .., last] = b
                    && (facts.rethrow_blocks.contains(last)
                        || duplicate && facts.unique_rethrow_blocks.contains(last))
                {
                    b = rest;
                }
                b
            };
            // Creates made so far whose failure fails this function: (blocks, line, location).
            let mut creates_here: Vec<(&[usize], u32, Location)> = Vec::new();
            // Calls so far to functions that throw unless they win a claim, whose failure fails
            // this function: (blocks, line, the claim).
            let mut claims_here: Vec<(&[usize], u32, (&'static str, Location))> = Vec::new();
            if g == f
                && let Some((what, at)) = facts.refuses_unless
            {
                out.refuses_unless = Some((what, self.location(m, at)));
            }
            if g == f
                && let Some((model, at)) = &facts.refuses_found
            {
                out.refuses_found = Some((model.clone(), self.location(m, *at)));
            }
            // A call directly in the function's body (in no block of its own), which runs on
            // every call of it.
            let in_body = |cs: &CallSite| {
                cs.blocks.is_empty()
                    || (facts.body_block.is_some() && cs.blocks.last().copied() == facts.body_block)
            };
            // Calls so far to functions that throw when their lookup finds the row, whose
            // failure fails this function: (blocks, line, the model, where it is tested).
            let mut refusals_here: Vec<(&[usize], u32, String, Location)> = Vec::new();
            // Creates of a promise chain's earlier links whose failure rejects the chain:
            // (group, path of the link, location). A `.then(cb)` after them runs `cb` only when
            // they succeeded, whatever a `.catch(..)` at the end of the chain does.
            let mut chain_creates: Vec<(usize, &[String], Location)> = Vec::new();
            let inherited: Vec<Location> = callback_after.get(&g).cloned().unwrap_or_default();
            for cs in &facts.calls {
                // The lookups a call runs behind: its own test (`if (found) throw`), else the
                // calls before it of functions that throw when their lookup finds the row (each
                // of them: `assertNameFree(..)` then `assertNoVariableNamed(..)`, the create of
                // either model's row is behind its own).
                let call_guards: Vec<(String, Option<Location>)> = match cs.guarded.clone() {
                    Some(g) => vec![(g, cs.refused.map(|l| self.location(m, l)))],
                    None => refusals_here
                        .iter()
                        .rev()
                        .filter(|(blocks, line, ..)| {
                            *line < cs.line && cs.blocks.starts_with(blocks)
                        })
                        .map(|(_, _, model, at)| (model.clone(), Some(at.clone())))
                        .collect(),
                };
                if let (Some(method), Some(branch)) = (method, &cs.branch)
                    && !branch.iter().any(|b| b == method)
                {
                    continue;
                }
                if method.is_some_and(|method| self.not_served(m, cs, method)) {
                    continue;
                }
                let (own_before, out_before) = (own.len(), out.effects.len());
                let fails_here = !cs.in_try && !catch_groups.contains(&cs.group);
                // The creates that ran before this call whenever it runs: earlier, in a block
                // that encloses it.
                let after: Vec<Location> = inherited
                    .iter()
                    .cloned()
                    .chain(
                        creates_here
                            .iter()
                            .filter(|(blocks, line, _)| {
                                *line < cs.line && cs.blocks.starts_with(blocks)
                            })
                            .map(|(_, _, at)| at.clone()),
                    )
                    .chain(
                        chain_creates
                            .iter()
                            .filter(|(group, link, _)| {
                                *group == cs.group
                                    && cs.path.last().is_some_and(|p| p == "then")
                                    && cs.path.len() > link.len()
                                    && cs.path.starts_with(link)
                            })
                            .map(|(.., at)| at.clone()),
                    )
                    .collect();
                for a in &cs.args {
                    if let Val::Func(af) = a
                        && inside.contains(af)
                        && !read.is_empty()
                    {
                        callback_read.entry(*af).or_insert_with(|| read.clone());
                    }
                    if let Val::Func(af) = a
                        && inside.contains(af)
                        && !after.is_empty()
                    {
                        callback_after.entry(*af).or_insert_with(|| after.clone());
                    }
                }
                let called = cs.path.last().unwrap_or(&cs.root_name);
                if looks_like_signature_check(called) {
                    out.signature_checks
                        .push((format!("`{}`", cs.text), self.location(m, cs.line)));
                }
                if derives_id(&cs.callee) {
                    out.derived_ids.push(self.location(m, cs.line));
                }
                if computed_callee(&cs.text)
                    && !matches!(self.res.resolve(m, &cs.callee), Resolved::Func(..))
                {
                    out.unfollowed
                        .push((format!("`{}`", cs.text), self.location(m, cs.line)));
                }
                // A project function named like a read (`links.isValid`) is followed, not a read.
                let entity = self.orm_entity(m, cs, &group_entity);
                if let Some(t) = &entity {
                    alias_receiver(&mut guard_alias, cs, t);
                }
                // MongoDB's `db.collection('logs')`, a local bound to one, or a helper returning
                // one (`getLogsCollection()`): the collection names what the call reads or writes.
                let collection = || {
                    group_collection
                        .get(&cs.group)
                        .cloned()
                        .or_else(|| self.res.collection_name(m, &cs.root, 0))
                };
                if let Some(t) = self.read_of(m, cs)
                    && !matches!(self.res.resolve(m, &cs.callee), Resolved::Func(..))
                    // `.from(t).select(..)` names its table by a string (`group_table`)
                    && (!from_select(cs) || group_table.contains_key(&cs.group))
                {
                    let t = group_table.get(&cs.group).cloned().map(Some).unwrap_or(t);
                    // a MongoDB collection read as the effects' targets are (below)
                    let read_collection = match &t {
                        Some(n) if n == "collection" || *n == cs.root_name => collection(),
                        _ => None,
                    };
                    let t = match read_collection {
                        Some(c) => {
                            // a guard on the row names the collection by its receiver
                            // (`getUsersCollection().findOne(..)`)
                            alias_receiver(&mut guard_alias, cs, &c);
                            Some(c)
                        }
                        None => t,
                    };
                    let t = entity
                        .clone()
                        .or_else(|| self.subclass_field(m, f, cs))
                        .map(Some)
                        .unwrap_or(t);
                    let method = cs.path.last().or(this_call(cs).map(|_| &cs.root_name));
                    // A list of rows (`repo.find(..)`) is no read of one: it guards only where
                    // the front end saw its length tested for none, as a count.
                    let list = method.is_some_and(|l| self.catalog.is_list_read(l));
                    // A count guards only where the front end saw it tested for none
                    // (`if (n > 0) throw ..`): it is a lookup for the effects it marked.
                    if let Some(known) = &t
                        && (method.is_some_and(|l| l.starts_with("count"))
                            || list
                            || self.raw_select(cs).is_some_and(selects_count))
                    {
                        lookups_here.push((aliased(known), Vec::new()));
                    }
                    if !list {
                        read.push(t.clone());
                    }
                    if let Some(known) = &t
                        && !list
                        && (method.is_some_and(|l| self.catalog.is_lookup(l))
                            || drizzle_select(cs)
                            || from_select(cs)
                            || self.raw_select(cs).is_some_and(|q| !selects_count(q)))
                        && !looks_up_fresh(cs)
                    {
                        let filter = lookup_filter(cs);
                        out.lookup_filters.extend(filter.iter().cloned());
                        lookups_here.push((aliased(known), filter));
                        if locks_rows(cs) {
                            locked_here.push(model_key(&aliased(known)));
                        }
                        out.lookups.push(known.clone());
                    }
                    if !list {
                        out.reads.push(t);
                    }
                }
                let prepared = prepared_binds.get(&cs.group).copied().unwrap_or(&[]);
                if out.unfollowed.len() < 8
                    && let Some(name) = self.unread_rpc(m, cs)
                {
                    out.unfollowed.push((
                        format!("`{}` (the database function `{name}`, whose definition is not in view)", cs.text),
                        self.location(m, cs.line),
                    ));
                }
                for mut e in self.effects_of(m, cs, prepared) {
                    // `incr(key)` with `expire(key, ttl)` on the same key here: a window.
                    e.window = e.relative
                        && e.kind == EffectKind::DbUpdate
                        && cs.args.first().is_some_and(|key| {
                            facts.calls.iter().any(|c| {
                                c.path.last().is_some_and(|l| {
                                    EXPIRES.contains(&l.to_ascii_lowercase().as_str())
                                }) && c.args.first() == Some(key)
                            })
                        });
                    // The front end read the key this call passes from the syntax: it knows a
                    // domain id and a key derived from the inbound one.
                    // A raw HTTP write (`fetch`, `axios`) to a provider: the key header it
                    // sends, when it sends one.
                    let keyed_sink = e.downstream_key.is_some()
                        || (e.kind == EffectKind::ExternalCall
                            && facts
                                .sent_keys
                                .iter()
                                .any(|k| k.line == cs.line && k.request.is_some()));
                    if keyed_sink
                        && let Some(sk) = facts.sent_keys.iter().find(|k| k.line == cs.line)
                    {
                        e.downstream_key = Some(match sk.origin {
                            _ if sk.fresh => DownstreamKey::Random,
                            KeyOrigin::DomainId => DownstreamKey::DomainId,
                            KeyOrigin::FromInboundKey => DownstreamKey::FromInboundKey,
                            _ => DownstreamKey::Derived,
                        });
                        e.downstream_key_expression = Some(sk.text.clone());
                    }
                    // A write's target is the table, whatever link of the chain it is
                    // named after (`knex('t').insert(..).onConflict(..).merge()`).
                    if let Some(t) = group_table.get(&cs.group)
                        && (e.target.as_deref() == Some(cs.root_name.as_str())
                            || e.target.is_none()
                            || matches!(
                                e.kind,
                                EffectKind::DbCreate | EffectKind::DbUpdate | EffectKind::DbDelete
                            ))
                    {
                        e.target = Some(t.clone());
                    }
                    // MongoDB's `db.collection('logs').insertOne(..)`, `logs.insertOne(..)` with
                    // `const logs = db.collection('logs')`, `getLogsCollection().insertOne(..)`
                    // with a helper returning it: the collection names the target.
                    if (matches!(e.target.as_deref(), None | Some("collection"))
                        || e.target.as_deref() == Some(cs.root_name.as_str()))
                        && let Some(t) = collection()
                    {
                        e.target = Some(t);
                    }
                    if let Some(t) = &entity {
                        e.target = Some(t.clone());
                    } else if matches!(
                        e.kind,
                        EffectKind::DbCreate | EffectKind::DbUpdate | EffectKind::DbDelete
                    ) && let Some(t) = self.subclass_field(m, f, cs)
                    {
                        e.target = Some(t);
                        e.on_this = true;
                    }
                    if let Some((t, keys)) = drizzle.get(&cs.group) {
                        e.target = Some(t.clone());
                        if e.data_keys.is_none() {
                            e.data_keys = keys.clone();
                        }
                        // (the write's own first argument is the table, not the record)
                        if let Some(((record, keyed), made)) = builder_params.get(&cs.group) {
                            e.data_param = record.clone();
                            e.key_params = keyed.clone();
                            e.made_keys = made.clone();
                        }
                    }
                    if e.kind == EffectKind::DbCreate
                        && e.target.is_some()
                        && deleted.contains(&e.target)
                    {
                        e.replaces = true;
                    }
                    self.trace_message_id(m, f, &Val::Arr(cs.args.clone()), None, &mut e);
                    e.unique_caught |=
                        caught_groups.contains(&cs.group) || callback_caught.contains(&g);
                    e.on_failure |= cs.on_failure;
                    if e.kind == EffectKind::DbUpdate
                        && let Some(moved) = builder_moves.get(&cs.group)
                    {
                        e.relative = true;
                        e.relative_fields = moved.clone();
                    }
                    // (Raw SQL keeps the columns its text sets.)
                    if matches!(e.kind, EffectKind::DbUpdate | EffectKind::DbCreate) {
                        let keys = match drizzle.get(&cs.group) {
                            Some(_)
                                if e.kind == EffectKind::DbUpdate
                                    && let Some(set) = builder_sets.get(&cs.group) =>
                            {
                                set.clone()
                            }
                            Some((_, Some(keys))) => {
                                keys.iter().map(|k| (k.clone(), None)).collect()
                            }
                            _ => update_keys(cs, e.kind),
                        };
                        if !keys.is_empty() || e.update_keys.is_empty() {
                            e.update_keys = keys;
                        }
                        if e.kind == EffectKind::DbUpdate && !drizzle.contains_key(&cs.group) {
                            e.written_params = written_params(m, cs);
                        }
                    }
                    e.state_guard = cs
                        .state_guard
                        .iter()
                        .flatten()
                        .map(|(model, field, test, at)| {
                            (
                                state_models(model, &aliased, &guard_alias),
                                field.clone(),
                                test.clone(),
                                self.location(m, *at),
                            )
                        })
                        .collect();
                    e.param_gate = param_gate(m, cs);
                    if e.claimed.is_none()
                        && let Some((what, at)) = cs.claimed
                    {
                        e.claimed = Some((what.to_string(), self.location(m, at)));
                    }
                    e.prechecked |= e.kind == EffectKind::DbCreate && prechecked(&read, &e.target);
                    if replaces_set(&e) {
                        deleted.push(e.target.clone());
                    }
                    for (g, at) in &call_guards {
                        guarded.push((true, own.len(), g.clone(), at.clone()));
                    }
                    for g in &cs.found {
                        found.push((true, own.len(), g, cs));
                    }
                    own.push((cs.group, e));
                }
                let mut targets: Vec<(Resolved, bool)> =
                    vec![(self.res.resolve(m, &cs.callee), false)];
                targets.extend(
                    self.template_steps(m, &cs.callee, &targets[0].0)
                        .into_iter()
                        .map(|(m2, f2)| (Resolved::Func(m2, f2), false)),
                );
                if matches!(targets[0].0, Resolved::Opaque) {
                    // A method an abstract class only declares runs in its subclasses (a Nest
                    // provider injected by its abstract class): each override, speculative
                    // when there are several.
                    let (overrides, (steps, steps_of_several)) = self.overrides(m, &cs.callee);
                    if !overrides.is_empty() {
                        let several = overrides.len() > 1 || steps_of_several;
                        targets = overrides
                            .into_iter()
                            .map(|(m2, f2)| (Resolved::Func(m2, f2), several))
                            .chain(
                                steps
                                    .into_iter()
                                    .map(|(m2, f2)| (Resolved::Func(m2, f2), several)),
                            )
                            .collect();
                    } else {
                        // A call through a registry the project fills from the objects it
                        // registers (`context.mutations.createRefund(..)`): every function
                        // registered under that field and member, speculative. Else the methods
                        // of the name, when one class defines it or a few define a distinctive
                        // one.
                        let named = self.by_name_alone(cs, [(m, f), (m, g)]);
                        let found = match cs.path.last() {
                            Some(member) if named.len() != 1 => {
                                let field = match cs.path.len() {
                                    0 | 1 => cs.root_name.as_str(),
                                    n => cs.path[n - 2].as_str(),
                                };
                                self.registered(field, member).to_vec()
                            }
                            _ => Vec::new(),
                        };
                        let chosen = if !found.is_empty() && found.len() < MAX_REGISTERED {
                            found
                        } else {
                            named
                        };
                        // (one of the class the receiver is declared to be is that method; the
                        // others stay guesses: what the declared class's own method reaches
                        // may be out of view)
                        if !chosen.is_empty() {
                            targets = chosen
                                .into_iter()
                                .map(|(m2, f2)| {
                                    let typed = self.declared_receiver(m, cs, (m2, f2));
                                    (Resolved::Func(m2, f2), !typed)
                                })
                                .collect();
                        }
                    }
                }
                // A function of a project module that the module does not define (one its
                // exports are filled with at run time, `require('./create')(User)`): what the
                // call does is unknown, not nothing.
                if own.len() == own_before
                    && matches!(targets[..], [(Resolved::Opaque, _)])
                    && let Val::Member(receiver, name) = &cs.callee
                    && !BUILTIN_METHODS.contains(&name.as_str())
                    && !OBJECT_METHODS.contains(&name.as_str())
                    && matches!(self.res.resolve(m, receiver), Resolved::Module(_))
                {
                    out.unfollowed
                        .push((format!("`{}`", cs.text), self.location(m, cs.line)));
                }
                // A method named for a write, of a package no sink of the catalogue covers (an
                // SDK it does not know: `client.messages.create(..)`, `insert(..).execute(db)`):
                // what the call does is not known, not nothing.
                if own.len() == own_before
                    && out.unfollowed.len() < 8
                    && let [(Resolved::Package { spec, .. }, _)] = &targets[..]
                    && cs
                        .path
                        .last()
                        .is_some_and(|p| crate::catalog::PACKAGE_WRITES.contains(&p.as_str()))
                    && !crate::catalog::node_builtin(spec)
                    && !crate::catalog::framework_package(spec)
                    && !self.catalog.covers_package(crate::catalog::Lang::Ts, spec)
                    // (a class's own factory, `PDFDocument.create()`, `Schema.create(..)`, makes
                    // a value: the write is a method of a client the package made; a client a
                    // project module exports, `pusher.trigger(..)`, is no factory; nor is a
                    // project class a package's factory made, `class AliasDto extends
                    // createZodDto(schema)`, whose `AliasDto.create(..)` parses its input)
                    && !(cs.path.len() == 1
                        && cs.path[0] == "create"
                        && match self.res.resolve(m, &cs.root) {
                            Resolved::Package { .. } => true,
                            Resolved::Class(cm, cc) => self.res.extends_package(cm, cc),
                            _ => false,
                        })
                {
                    out.unfollowed.push((
                        format!(
                            "`{}` (a method of `{spec}`, a package the catalogue does not know)",
                            cs.text
                        ),
                        self.location(m, cs.line),
                    ));
                }
                // A method named for a write that no sink of a package the catalogue covers
                // has, on that package's object: one the project adds to it (TypeORM's
                // `getRepository(Group).extend({ saveNewOrUpdatedGroup(..) { .. } })`, known
                // by the repository type it is declared with): not known, not nothing.
                if own.len() == own_before
                    && out.unfollowed.len() < 8
                    && let [(Resolved::Package { spec, .. }, _)] = &targets[..]
                    && self.catalog.covers_package(crate::catalog::Lang::Ts, spec)
                    && let Some(name) = cs.path.last()
                    && crate::catalog::names_a_write(name)
                    && !crate::catalog::PACKAGE_WRITES.contains(&name.as_str())
                    && !self.catalog.sinks.iter().any(|k| {
                        k.lang == crate::catalog::Lang::Ts
                            && k.origin_matches(spec)
                            && k.calls.iter().any(|c| c.rsplit('.').next() == Some(name))
                    })
                {
                    out.unfollowed.push((
                        format!(
                            "`{}` (a method `{spec}` does not have, added by the project)",
                            cs.text
                        ),
                        self.location(m, cs.line),
                    ));
                }
                // A method named for a write on a value the code does not show (a context
                // variable a middleware sets, `c.var.api.highlights.create(body)`; an object of
                // collections a helper assembled, `collections.orders.insertOne(doc)`): what the
                // call does is not known, not nothing.
                if own.len() == own_before
                    && out.unfollowed.len() < 8
                    && matches!(targets[..], [(Resolved::Opaque, _)])
                    && !matches!(cs.root, Val::Global(_))
                    && matches!(&cs.callee, Val::Member(_, p) if crate::catalog::names_a_write(p))
                {
                    out.unfollowed.push((
                        format!("`{}` (a method of a value the code does not show)", cs.text),
                        self.location(m, cs.line),
                    ));
                }
                let callees = targets.len();
                // A project function that runs what it is handed inside a `try` whose `catch`
                // answers a unique violation (`uniqueError(() => insert(..), 'taken')`).
                let answered = targets.iter().any(|(t, _)| {
                    matches!(t, Resolved::Func(m2, f2)
                        if self.res.modules[*m2].functions[*f2].answers_unique)
                });
                // Firing an in-process event runs every listener of its name.
                if cs
                    .path
                    .last()
                    .is_some_and(|p| EMIT_METHODS.contains(&p.as_str()))
                    && let Some(Resolved::Str(event)) =
                        cs.args.first().map(|a| self.res.resolve_str(m, a))
                {
                    for (m2, f2) in self.listeners(&event) {
                        targets.push((Resolved::Func(m2, f2), false));
                    }
                }
                // A library is taken to run the functions it is given, in an object or array too
                // (`NextAuth(req, res, getAuthOptions(req))`), less those it is known not to run;
                // so is a project function given those a project function made and returned
                // (`handlers.create({ ctx: buildContext(auth) })`, which calls `ctx.authorize`).
                let library = callees == 1 && !matches!(targets[0].0, Resolved::Func(..));
                let only = if library { self.runs_only(m, cs) } else { None };
                // A request handler a package made (`const handle = toNodeHandler(auth);
                // handle(req, res)`, `[[handler_makers]]`), called: it serves the request with
                // what it was made from, and runs the callbacks of the options `auth` was made
                // from.
                if library
                    && let Val::Call(maker, made_from) = &cs.callee
                    && self.res.origin(m, maker).is_some_and(|(spec, name, path)| {
                        path.last()
                            .or(name.as_ref())
                            .is_some_and(|export| self.catalog.makes_handler(&spec, export))
                    })
                {
                    let mut carried = Vec::new();
                    for a in made_from {
                        self.handler_functions(m, a, &mut carried);
                    }
                    for (_, m2, g, _) in carried {
                        if !(m2 == m && defined_here.contains(&g)) {
                            targets.push((Resolved::Func(m2, g), false));
                        }
                    }
                }
                // `Object.keys(handlers)`, `JSON.stringify(config)`: the language's own
                // functions that read what they are given run none of its functions.
                let inert = inert_builtin(&cs.callee);
                // A project function that only wraps what it is given (`createWorkerHandler(
                // executeEmail)`, a tracing decorator) runs none of it here: the function it
                // hands back runs it, where that one is called or to whatever it is given.
                // (every candidate such a wrapper, and handing back a bare function only: one it
                // hands back in an object or array, `{ run: (x) => handler(x) }`, is not
                // followed from there)
                let wraps = cs
                    .args
                    .iter()
                    .any(|a| matches!(a, Val::Func(_) | Val::Import { .. } | Val::Member(..)))
                    && targets.iter().all(|(t, _)| match t {
                        Resolved::Func(wm, w) => {
                            let def = &self.res.modules[*wm].functions[*w];
                            def.returns
                                .iter()
                                .all(|r| matches!(r, Val::Func(g) if def.children.contains(g)))
                                && self.only_wraps(*wm, *w, 0)
                        }
                        _ => false,
                    });
                for a in cs.args.iter().filter(|_| !inert && !wraps) {
                    if let Val::Func(af) = a
                        && inside.contains(af)
                    {
                        if answered {
                            callback_caught.insert(*af);
                        }
                        continue;
                    }
                    // A function of this body that it hands back (`return { after:
                    // createAuthMiddleware(async (ctx) => ..) }`): the value made of it runs it
                    // where that value is used, not here.
                    if let Val::Func(af) = a
                        && defined_here.contains(af)
                    {
                        continue;
                    }
                    if matches!(a, Val::Func(_) | Val::Import { .. } | Val::Member(..)) {
                        let r = self.res.resolve(m, a);
                        let func = matches!(r, Resolved::Func(..));
                        // (a library known to run none of what it is given as it is: a queue's
                        // worker handed its processor)
                        if !(func
                            && library
                            && only.is_some_and(|f| !f.iter().any(|p| p.is_empty())))
                        {
                            targets.push((r, false));
                        }
                        if func {
                            continue;
                        }
                    }
                    // A table of functions handed to a library whose call this function returns
                    // (`return injectArguments({ saveOrganization, .. }, { db })`): the library
                    // hands them back, bound or wrapped, and each runs where a member of the
                    // result is called, not here.
                    if library
                        && self.res.modules[m].functions[f].returns.iter().any(
                            |r| matches!(r, Val::Call(c, xs) if **c == cs.callee && *xs == cs.args),
                        )
                        && self.res.function_table(m, a, 0).is_some()
                    {
                        continue;
                    }
                    let mut carried = Vec::new();
                    self.carried_functions(m, a, ("", false), 0, &mut carried);
                    for (path, m2, g, made) in carried {
                        let run = if library {
                            only.is_none_or(|fields| fields.contains(&path))
                        } else {
                            made
                        };
                        if run && !(m2 == m && defined_here.contains(&g)) {
                            targets.push((Resolved::Func(m2, g), false));
                        }
                    }
                }
                // Several candidates (an interface's implementations, a method's overrides):
                // which one runs is a guess, but an effect every candidate reaches runs
                // whichever does (a provider interface whose every implementation pays).
                let guessed: Vec<(ModId, FnId)> = targets
                    .iter()
                    .filter_map(|(t, speculative)| match t {
                        Resolved::Func(m2, f2)
                            if *speculative && !(*m2 == m && inside.contains(f2)) =>
                        {
                            Some((*m2, *f2))
                        }
                        _ => None,
                    })
                    .collect();
                let certain: HashSet<EffectKind> = if guessed.len() > 1 {
                    crate::facts::reached_by_all(guessed.iter().map(|&(m2, f2)| {
                        let sub = self.summary(m2, f2);
                        sub.effects.iter().map(|e| e.kind).collect::<Vec<_>>()
                    }))
                } else {
                    HashSet::new()
                };
                let mut refusing: Option<(&'static str, Location)> = None;
                let mut refusing_found: Option<Refusal> = None;
                let async_callee = targets[..callees].iter().any(|(t, _)| {
                    matches!(t, Resolved::Func(m2, f2)
                        if self.res.modules[*m2].functions[*f2].is_async)
                });
                let unfollowed_before = out.unfollowed.len();
                for (ti, (t, speculative)) in targets.into_iter().enumerate() {
                    let Resolved::Func(m2, f2) = t else { continue };
                    if m2 == m && inside.contains(&f2) {
                        continue;
                    }
                    let sub = self.summary(m2, f2);
                    if ti < callees && !speculative && refusing.is_none() {
                        refusing = sub.refuses_unless.clone();
                    }
                    if ti < callees && !speculative && refusing_found.is_none() {
                        // (with what its lookups filter on: a filter the create writes otherwise
                        // misses the row on a retry)
                        refusing_found = sub
                            .refuses_found
                            .clone()
                            .map(|(model, at)| (model, at, sub.lookup_filters.clone()));
                    }
                    let name = self.res.modules[m2].functions[f2].name.clone();
                    let caught = caught_groups.contains(&cs.group) || (answered && ti >= callees);
                    // A handler handed to `.catch(..)` runs when the promise fails.
                    let failure = cs.on_failure
                        || (ti >= callees && cs.path.last().is_some_and(|p| p == "catch"));
                    for e in &sub.effects {
                        let mut e = e.clone();
                        if ti < callees {
                            self.bind_update(m, (m2, f2), cs, &mut e);
                            Self::bind_record(m, (m2, f2), cs, &mut e);
                            Self::bind_spread(m, m2, f2, &cs.args, &mut e);
                            Self::bind_url(m, m2, f2, &cs.args, &mut e);
                            if !Self::bind_method(m, m2, f2, &cs.args, &mut e)
                                || !bind_gate(m, m2, f2, cs, &mut e)
                            {
                                continue;
                            }
                        } else {
                            e.data_param = None;
                            e.update_param = None;
                            e.written_params.clear();
                            e.key_params.clear();
                            e.param_gate = None;
                        }
                        if e.param_gate.is_none() {
                            e.param_gate = param_gate(m, cs);
                        }
                        if e.on_this {
                            self.rebind_this(
                                m,
                                (ti < callees).then_some(&cs.callee),
                                &mut e,
                                &mut saved_built,
                            );
                        }
                        // The message id comes from the caller's argument: look there.
                        if let Some(p) = e.dedup_param.take()
                            && !e.deduplicated
                            && let Some(keys) = self.dedup_options(&e).map(<[String]>::to_vec)
                        {
                            (e.deduplicated, e.dedup_param) =
                                self.dedup_at_caller(m, cs.args.get(p.index), &p, &keys);
                        }
                        // The message's id comes from the caller's argument: judge it there.
                        if let Some((i, fields, closed)) = e.id_param.take()
                            && let Some(a) = cs.args.get(i)
                        {
                            let path = super::message_ids::IdPath { fields, closed };
                            self.trace_message_id(m, f, a, Some(&path), &mut e);
                        }
                        e.via.insert(0, name.clone());
                        e.via.truncate(8);
                        // (the tests around this call enclose those inside the callee)
                        for (model, field, test, at) in cs.state_guard.iter().flatten().rev() {
                            let outer = (
                                state_models(model, &aliased, &guard_alias),
                                field.clone(),
                                test.clone(),
                                self.location(m, *at),
                            );
                            crate::facts::enclose(&mut e.state_guard, outer);
                        }
                        e.speculative |= speculative && !certain.contains(&e.kind);
                        e.unique_caught |= caught;
                        e.on_failure |= failure;
                        // A create after an earlier call deleted the same model replaces the
                        // set, as one written in this function does.
                        if e.kind == EffectKind::DbCreate
                            && e.target.is_some()
                            && deleted.contains(&e.target)
                        {
                            e.replaces = true;
                        }
                        if e.claimed.is_none()
                            && let Some((what, at)) = cs.claimed
                        {
                            e.claimed = Some((what.to_string(), self.location(m, at)));
                        }
                        e.prechecked |=
                            e.kind == EffectKind::DbCreate && prechecked(&read, &e.target);
                        for (g, at) in &call_guards {
                            guarded.push((false, out.effects.len(), g.clone(), at.clone()));
                        }
                        for g in &cs.found {
                            found.push((false, out.effects.len(), g, cs));
                        }
                        out.effects.push(e);
                    }
                    // A base class's method reads the model its subclass gives it: named here,
                    // where the receiver's class is known.
                    let bound = |l: &String| {
                        self.bind_subclass_field(m, &cs.callee, l)
                            .unwrap_or_else(|| l.clone())
                    };
                    let sub_lookups: Vec<String> = sub.lookups.iter().map(bound).collect();
                    read.extend(sub.reads.iter().map(|r| r.as_ref().map(bound)));
                    let called = cs.path.last().unwrap_or(&cs.root_name);
                    if self.catalog.is_lookup(called) {
                        // The row a wrapper returns is inlined where it is tested: its
                        // lookup's receiver, typed `Model<IntegrationModel>` on a field of the
                        // wrapper's class (`return this.integrationModel.findOne({ formId })`),
                        // names it by its declared type (`Model`).
                        let returned = self.res.modules[m2].functions[f2]
                            .returns
                            .iter()
                            .filter_map(|r| match r {
                                Val::Call(callee, _) => match callee.as_ref() {
                                    Val::Member(receiver, method)
                                        if self.catalog.is_lookup(method) =>
                                    {
                                        match receiver.as_ref() {
                                            Val::TypeRef(t) => t.name_it_goes_by(),
                                            _ => None,
                                        }
                                    }
                                    _ => None,
                                },
                                _ => None,
                            })
                            .map(|n| model_key(&n));
                        let receivers = match cs.path.last() {
                            Some(_) => receiver_names(cs),
                            None => Vec::new(),
                        };
                        for name in receivers.into_iter().chain(returned) {
                            let known = guard_alias.entry(name).or_default();
                            for l in &sub_lookups {
                                if !known.contains(l) {
                                    known.push(l.clone());
                                }
                            }
                        }
                    }
                    // A function of the project that only looks rows up (`emailTaken(email)`,
                    // `this.selectByEmail(c, email)`): a guard on what it returned is a guard
                    // on those lookups (see `HELPER_GUARD`).
                    if sub.effects.is_empty() && !sub_lookups.is_empty() {
                        let called = match cs.path.last() {
                            Some(l) => l.clone(),
                            None => cs.root_name.clone(),
                        };
                        // A field of an object literal it answers guards as the lookups the
                        // field is named for (`return { invitation }` after a lookup of
                        // `organization_invitations`), and no other (`{ auth, body, error }`
                        // of a request parser that loads the session).
                        let named_by = |f: &str, l: &str| {
                            let f = model_key(f);
                            let l = model_key(l);
                            let l = model_key(l.strip_suffix("table").unwrap_or(&l));
                            f.len() > 2 && (l == f || l.ends_with(&f))
                        };
                        let fields: Vec<&String> = self.res.modules[m2].functions[f2]
                            .returns
                            .iter()
                            .flat_map(|r| match r {
                                Val::Obj(fields) => fields.iter().map(|(k, _)| k).collect(),
                                _ => Vec::new(),
                            })
                            .collect();
                        for n in [called, name.clone()] {
                            let whole = std::iter::once((n.clone(), None));
                            let parts = fields.iter().map(|f| (format!("{n}.{f}"), Some(*f)));
                            for (guard, field) in whole.chain(parts) {
                                let looked_up: Vec<&String> = sub_lookups
                                    .iter()
                                    .filter(|l| field.is_none_or(|f| named_by(f, l)))
                                    .collect();
                                if looked_up.is_empty() {
                                    continue;
                                }
                                let known = guard_alias
                                    .entry(model_key(&format!("{HELPER_GUARD}{guard}")))
                                    .or_default();
                                for l in looked_up {
                                    if !known.contains(l) {
                                        known.push(l.clone());
                                    }
                                }
                            }
                        }
                    }
                    lookups_here.extend(
                        sub_lookups
                            .iter()
                            .map(|l| (l.clone(), sub.lookup_filters.clone())),
                    );
                    for f in &sub.lookup_filters {
                        if !out.lookup_filters.contains(f) {
                            out.lookup_filters.push(f.clone());
                        }
                    }
                    out.lookups.extend(sub_lookups.iter().cloned());
                    out.reads
                        .extend(sub.reads.iter().map(|r| r.as_ref().map(bound)));
                    out.key_reads.extend(sub.key_reads.iter().cloned());
                    out.content_hashes
                        .extend(sub.content_hashes.iter().cloned());
                    if !sub.key_obs.is_empty() {
                        // What the callee does happens at this call, in the call's context.
                        let here = facts.key_calls.iter().find(|k| {
                            k.line == cs.line
                                && (cs.path.last() == Some(&k.method)
                                    || (cs.path.is_empty() && cs.root_name == k.method))
                        });
                        for o in &sub.key_obs {
                            let mut o = o.clone();
                            o.order = cs.line;
                            if let Some(k) = here {
                                if k.ctx != Ctx::Main {
                                    o.ctx = k.ctx;
                                }
                                if let Obs::Status { cond: c @ None, .. } = &mut o.obs {
                                    *c = k.cond;
                                }
                            }
                            out.key_obs.push(o);
                        }
                    }
                    out.derived_ids.extend(sub.derived_ids.iter().cloned());
                    out.signature_checks
                        .extend(sub.signature_checks.iter().cloned());
                    out.unfollowed.extend(sub.unfollowed.iter().cloned());
                }
                // An `async` method named for a create (`repository.create(entity)`) followed
                // into the project's own code, which reaches no write the catalogue knows (a
                // `Map` the process keeps, a store it does not know): a create nothing here
                // judges, not nothing. (A synchronous one builds a value in process:
                // `createCatcher(..)`, `createDurationRecorder(..)`.)
                if async_callee
                    && own.len() == own_before
                    && out.effects.len() == out_before
                    && out.unfollowed.len() == unfollowed_before
                    && out.unfollowed.len() < 8
                    && cs
                        .path
                        .last()
                        .or(Some(&cs.root_name))
                        .is_some_and(|p| crate::catalog::names_a_create(p))
                {
                    out.unfollowed.push((
                        format!(
                            "`{}` (a method named for a create, whose code reaches no write the catalogue knows)",
                            cs.text
                        ),
                        self.location(m, cs.line),
                    ));
                }
                // What this call deleted through the functions it reached: later creates of
                // the same model replace the set.
                for e in &out.effects[out_before..] {
                    if replaces_set(e) && !deleted.contains(&e.target) {
                        deleted.push(e.target.clone());
                    }
                }
                call_effects.push((
                    g,
                    cs,
                    fails_here,
                    (own_before..own.len())
                        .map(|i| (true, i))
                        .chain((out_before..out.effects.len()).map(|i| (false, i)))
                        .collect(),
                ));
                // After a call that throws unless it won a claim, in a block around this one.
                let call_claim = claims_here
                    .iter()
                    .find(|(blocks, line, _)| *line < cs.line && cs.blocks.starts_with(blocks))
                    .map(|(.., c)| c.clone());
                let own_new = own[own_before..].iter_mut().map(|(_, e)| (e, true));
                let sub_new = out.effects[out_before..].iter_mut().map(|e| (e, false));
                for (e, is_own) in own_new.chain(sub_new) {
                    if e.claimed.is_none()
                        && let Some((what, at)) = &call_claim
                    {
                        e.claimed = Some((what.to_string(), at.clone()));
                    }
                    // The call's promise rejects on the duplicate, caught or not.
                    if (is_own || e.ends_a_duplicate())
                        && e.kind == EffectKind::DbCreate
                        && !e.upsert
                        && chain_creates.len() < 64
                    {
                        chain_creates.push((cs.group, &cs.path[..], e.location.clone()));
                    }
                    if is_own {
                        e.fails_request = fails_here;
                        e.swallowed = cs.swallowed || catch_groups.contains(&cs.group);
                    } else {
                        e.fails_request &= fails_here;
                    }
                    e.runs_after(&after);
                    if e.orders_what_follows() && creates_here.len() < 64 {
                        let blocks = escaped(&cs.blocks[..], e.kind == EffectKind::DbCreate);
                        creates_here.push((blocks, cs.line, e.location.clone()));
                    }
                }
                if fails_here
                    && let Some(claim) = refusing
                    && claims_here.len() < 64
                {
                    // Directly in the function's body: the function throws in turn.
                    if g == f && in_body(cs) {
                        out.refuses_unless.get_or_insert_with(|| claim.clone());
                    }
                    claims_here.push((&cs.blocks[..], cs.line, claim));
                }
                if fails_here
                    && let Some((model, at, filter)) = refusing_found
                    && refusals_here.len() < 64
                {
                    // Directly in the function's body: the function throws in turn.
                    if g == f && in_body(cs) {
                        out.refuses_found
                            .get_or_insert_with(|| (model.clone(), at.clone()));
                    }
                    // (the helper's lookup is this function's, for the creates after it)
                    if lookups_here.len() < 256 {
                        lookups_here.push((model.clone(), filter));
                    }
                    refusals_here.push((escaped(&cs.blocks[..], false), cs.line, model, at));
                }
            }
            let updated: HashSet<String> = own[own_start..]
                .iter()
                .map(|(_, e)| e)
                .chain(out.effects[out_start..].iter())
                .filter(|e| e.kind == EffectKind::DbUpdate && !e.relative)
                .filter_map(|e| e.target.as_deref().map(model_key))
                .collect();
            // The models whose row a path that runs only when their lookup missed creates
            // (a find-or-create found above), and that create.
            let mut created_when_missed: Vec<(String, String, String)> = Vec::new();
            for (is_own, i, model, refused) in guarded.iter().cloned() {
                let e = if is_own {
                    &mut own[i].1
                } else {
                    &mut out.effects[i]
                };
                let candidates = std::iter::once(aliased(&model)).chain(
                    guard_alias
                        .get(&model_key(&model))
                        .into_iter()
                        .flatten()
                        .map(|a| aliased(a)),
                );
                let mut matched = None;
                // (an atomic upsert of the model behind the guard is no find-or-create, but it
                // too leaves the row a retry's lookup finds)
                let mut upserted = None;
                for candidate in candidates {
                    // A lookup filtered on a constant the create writes otherwise (`status:
                    // 'PENDING'` looked up, `status: 'PAID'` created) misses the row on a retry.
                    if lookups_here.iter().any(|(l, filter)| {
                        model_key(l) == model_key(&candidate)
                            && !crate::sql::written_outside_filter(filter, &e.update_keys)
                    }) {
                        find_or_create(&candidate, &updated, e);
                        e.lookup_locked |=
                            e.find_or_create && locked_here.contains(&model_key(&candidate));
                        // (a create of another model, found or created behind a guard of its
                        // own, says nothing of this lookup)
                        let creates_it = e.kind == EffectKind::DbCreate
                            && e.target.as_deref().map(model_key) == Some(model_key(&candidate));
                        if creates_it && e.find_or_create {
                            matched.get_or_insert(candidate);
                        } else if creates_it && e.upsert {
                            upserted.get_or_insert(candidate);
                        }
                    }
                }
                if let Some(looked_up) = upserted.filter(|_| !e.find_or_create) {
                    created_when_missed.push((
                        model_key(&model),
                        looked_up,
                        format!("`{}` at {}", e.callee, e.location),
                    ));
                }
                // What a function returned guards only as the lookup it was found to be: a
                // create found behind another guard says nothing of this one.
                let looked_up = match matched {
                    Some(c) => Some(c),
                    None if model.starts_with(HELPER_GUARD) => None,
                    None => Some(model.clone()),
                };
                if let Some(looked_up) = looked_up.filter(|_| e.find_or_create) {
                    if e.refused_by.is_none()
                        && let Some(at) = refused
                    {
                        e.refused_by = Some(at);
                    }
                    created_when_missed.push((
                        model_key(&model),
                        looked_up,
                        format!("`{}` at {}", e.callee, e.location),
                    ));
                }
            }
            // What else runs only when that lookup missed runs once on a sequential retry too:
            // the retry finds the row the first run created.
            for (is_own, i, model, _) in guarded {
                let e = if is_own {
                    &mut own[i].1
                } else {
                    &mut out.effects[i]
                };
                if e.find_or_create || e.on_failure || e.lookup_guarded.is_some() {
                    continue;
                }
                if !guard_by_missed_create(e, &created_when_missed, &model) {
                    unmatched_guarded.push((is_own, i, model));
                }
            }
            missed_creates.extend(created_when_missed);
            body_lookups = lookups_here;
            // The creates of the function's own top block (the shortest blocks of its calls).
            if let Some(top) = facts.calls.iter().map(|c| c.blocks.len()).min() {
                let made: Vec<Location> = creates_here
                    .iter()
                    .filter(|(blocks, ..)| blocks.len() == top)
                    .map(|(.., at)| at.clone())
                    .collect();
                if !made.is_empty() {
                    callback_creates.insert(g, made);
                }
            }
        }
        // A call that hands the body's callback to a library and fails with it (not in a `try`,
        // not `.catch`ed, not an event registration): what follows the call, in the blocks that
        // enclose it, runs after the callback's creates.
        for (g, cs, ..) in call_effects
            .iter()
            .filter(|(_, cs, fails, _)| *fails && !cs.on_failure && !registers_listener(cs))
        {
            let made: Vec<Location> = cs
                .args
                .iter()
                .filter_map(|a| match a {
                    Val::Func(af) if inside.contains(af) && af != g => callback_creates.get(af),
                    _ => None,
                })
                .flatten()
                .cloned()
                .collect();
            if made.is_empty() {
                continue;
            }
            for (g2, later, _, effects) in &call_effects {
                if g2 != g || later.line <= cs.line || !later.blocks.starts_with(&cs.blocks) {
                    continue;
                }
                for &(is_own, i) in effects {
                    let e = if is_own {
                        &mut own[i].1
                    } else {
                        &mut out.effects[i]
                    };
                    e.runs_after(&made);
                }
            }
        }
        for (is_own, i, model) in unmatched_guarded {
            let e = if is_own {
                &mut own[i].1
            } else {
                &mut out.effects[i]
            };
            if e.lookup_guarded.is_none() {
                guard_by_missed_create(e, &missed_creates, &model);
            }
        }
        // What runs only while a row exists that this request then deletes runs once: a retry
        // finds no row (a one-time token consumed, `if (row) { delete row; shift the others }`).
        // The delete must be of that row (its call names the row or what the lookup matched on),
        // run once the row was found and whenever the effect runs (its blocks enclose the
        // effect's), and nothing here may create that model again (a key rotated). A payment is
        // left as it is: two concurrent retries both find the row.
        let recreated: HashSet<String> = own
            .iter()
            .map(|(_, e)| e)
            .chain(out.effects.iter())
            .filter(|e| e.kind == EffectKind::DbCreate)
            .filter_map(|e| e.target.as_deref().map(model_key))
            .collect();
        let deletes: Vec<(&Found, &[usize])> = found
            .iter()
            .filter(|(is_own, i, row, cs)| {
                let Some((_, e)) = own.get(*i).filter(|_| *is_own) else {
                    return false;
                };
                e.kind == EffectKind::DbDelete
                    && e.target.as_deref().map(model_key) == Some(model_key(&row.model))
                    && deletes_row(&cs.callee, &cs.args, &row.row)
            })
            .map(|(_, _, row, cs)| (*row, &cs.blocks[..]))
            .collect();
        for (is_own, i, row, cs) in found {
            let consumed = !recreated.contains(&model_key(&row.model))
                && deletes
                    .iter()
                    .any(|(d, blocks)| *d == row && cs.blocks.starts_with(blocks));
            if consumed {
                let e = if is_own {
                    &mut own[i].1
                } else {
                    &mut out.effects[i]
                };
                if !matches!(e.kind, EffectKind::DbDelete | EffectKind::Payment) {
                    e.consumes = Some(row.model.clone());
                }
            }
        }
        out.effects.extend(merge_chains(own));
        Effect::dedup(&mut out.effects);
        // Each call site adds its callee's lookups, reads and hashes: kept with repeats, a
        // function reached along many paths would carry one copy per path (exponential in the
        // depth of a call graph whose functions share callees).
        keep_first(&mut out.lookups);
        keep_first(&mut out.reads);
        keep_first(&mut out.content_hashes);
        out.key_reads.sort();
        out.key_reads.dedup();
        out.key_obs.dedup();
        out.key_obs.truncate(512);
        out.derived_ids.sort();
        out.derived_ids.dedup();
        out.signature_checks.sort();
        out.signature_checks.dedup();
        out.unfollowed.sort();
        out.unfollowed.dedup();
        out.unfollowed.truncate(8);
        out
    }

    /// Judges the id of a published message where `v` (the publishing call's arguments, or a
    /// caller's argument) makes it: derived → deduplicated; from a parameter of `f` → the callers
    /// decide; made per call or untraced → nothing.
    /// `path`: where in `v` a callee found the id (None at the publishing call itself).
    fn trace_message_id(
        &self,
        m: ModId,
        f: FnId,
        v: &Val,
        path: Option<&super::message_ids::IdPath>,
        e: &mut Effect,
    ) {
        if e.kind != EffectKind::QueuePublish || e.deduplicated {
            return;
        }
        let tracer = super::message_ids::Tracer::new(self.res, self.catalog, m, f);
        let source = match path {
            None => tracer.field_source(v),
            Some(p) => Some(tracer.argument_source(v, p)),
        };
        match source {
            Some(IdSource::Derived) => e.deduplicated = true,
            Some(IdSource::Param(i, p)) => e.id_param = Some((i, p.fields, p.closed)),
            _ => {}
        }
    }

    /// An effect on `this` of the method `callee` calls, seen from the call: `Document.createWithCtx(..)`
    /// creates a `Document` even where the base class defines the method, and `doc.saveWithCtx()`
    /// on a `Document.build(..)` creates the row the build made. Called on `this` again, the
    /// effect stays bound to the caller's own `this`.
    fn rebind_this(
        &self,
        m: ModId,
        callee: Option<&Val>,
        e: &mut Effect,
        saved_built: &mut Vec<Val>,
    ) {
        // A model a base class's field holds (see `subclass_field`): named where the receiver's
        // class gives it; else left for a caller further up.
        if e.target
            .as_deref()
            .is_some_and(|t| t.starts_with(THIS_FIELD))
        {
            if let Some(callee) = callee
                && let Some(model) =
                    self.bind_subclass_field(m, callee, e.target.as_deref().unwrap_or(""))
            {
                e.target = Some(model);
                e.on_this = false;
            }
            return;
        }
        let receiver = match callee {
            Some(Val::Member(receiver, _)) => receiver.as_ref(),
            _ => {
                e.on_this = false;
                e.saves_this = false;
                return;
            }
        };
        if let Val::This(Some(c)) = receiver {
            e.target = Some(self.res.modules[m].classes[*c].name.clone());
            return;
        }
        e.on_this = false;
        let saves = std::mem::take(&mut e.saves_this);
        if let Resolved::Class(m3, c3) | Resolved::Instance(m3, c3) = self.res.resolve(m, receiver)
        {
            e.target = Some(self.res.modules[m3].classes[c3].name.clone());
            if saves && freshly_built(receiver) && !saved_built.contains(receiver) {
                saved_built.push(receiver.clone());
                e.kind = EffectKind::DbCreate;
                e.label = "save of a newly built instance".into();
                let record = self.built_record(m, receiver);
                e.data_keys = record.map(|fields| repeated_keys(fields));
                e.data_param = None;
                e.key_params = record.map(|f| key_params(m, f)).unwrap_or_default();
            }
        }
    }

    /// A database call on a field of `this` that the class's constructor takes as a parameter,
    /// whose declared type names one of the class's type parameters and that holds no class of
    /// the project (`this.MongooseModel.findOne(..)`, `new
    /// this.model(data).save()` in `class BaseRepository<T> { constructor(protected
    /// MongooseModel: Model<T>) }`): its model is whatever each subclass passes to `super(..)`,
    /// so the call names the field (`this.MongooseModel`) until a caller names the class.
    fn subclass_field(&self, m: ModId, f: FnId, cs: &CallSite) -> Option<String> {
        let c = self.res.modules[m].functions[f].class?;
        // The call as written (`this.MongooseModel.findOne`), or the construction of the
        // instance it is called on (`new this.MongooseModel(data)`, then `.save()`).
        let text = match &cs.root {
            Val::New(_, line) => self.res.modules[m].functions[f]
                .calls
                .iter()
                .find(|n| n.is_new && n.line == *line)
                .map(|n| n.text.trim_start_matches("new ").to_string())?,
            _ => cs.text.clone(),
        };
        let field = text
            .strip_prefix("this.")?
            .split(['.', '(', '?', '!'])
            .next()
            .filter(|x| !x.is_empty())?;
        let class = &self.res.modules[m].classes[c];
        // `this.model = mongoose.model(this.name, schema)` in a base class whose `name` each
        // subclass gives (`getName() { return 'project' }`): the model is the subclass's.
        if matches!(class.field(field), Some(Val::Call(callee, args))
            if is_model_registration(callee) && args.first().is_some_and(|a| a.as_str().is_none()))
        {
            return Some(format!("{THIS_FIELD}{field}"));
        }
        if !class.generic_fields.iter().any(|g| g == field) {
            return None;
        }
        let ctor = class.method("constructor");
        let taken = class.ctor_params.iter().any(|(f, _)| f == field)
            || matches!(class.field(field), Some(Val::Param(pf, _)) if Some(*pf) == ctor);
        let holds_project_code = class.field(field).is_some_and(|v| {
            matches!(
                self.res.resolve(m, v),
                Resolved::Class(..) | Resolved::Instance(..) | Resolved::Func(..)
            )
        });
        (taken && !holds_project_code).then(|| format!("{THIS_FIELD}{field}"))
    }

    /// The model a `this.<field>` name (see `subclass_field`) stands for in the class a call's
    /// receiver is: the value its constructor chain passes to `super(..)`.
    fn bind_subclass_field(&self, m: ModId, callee: &Val, name: &str) -> Option<String> {
        let field = name.strip_prefix(THIS_FIELD)?;
        let Val::Member(receiver, _) = callee else {
            return None;
        };
        let (m3, c3) = match receiver.as_ref() {
            Val::This(Some(c)) => (m, *c),
            r => match self.res.resolve(m, r) {
                Resolved::Class(m3, c3) | Resolved::Instance(m3, c3) => (m3, c3),
                _ => return None,
            },
        };
        // A name the class itself is given (`Application.table = 'applications'`, `static
        // table = 'applications'`), read as `this.table` in a static method it inherits.
        if let Some(name) = self.res.class_chain(m3, c3).find_map(|(mc, cc)| {
            let class = &self.res.modules[mc].classes[cc];
            class
                .statics
                .iter()
                .find(|(n, _)| n == field)
                .map(|(_, v)| v.clone())
                .or_else(|| class.field(field).and_then(Val::as_str).map(str::to_string))
        }) {
            return Some(name);
        }
        // The base class registers the model under a name the instance's class gives.
        let own = self
            .res
            .class_chain(m3, c3)
            .find_map(|(mc, cc)| self.res.modules[mc].classes[cc].field(field));
        if let Some(Val::Call(callee, args)) = own
            && is_model_registration(callee)
            && let Some(name) = args
                .first()
                .and_then(|a| self.res.this_string(m3, c3, a, 0))
        {
            return Some(name);
        }
        let (mv, v) = self.res.field_from_super(m3, c3, field)?;
        // A model made where it is passed (`mongoose.model('Subscriber', schema)`,
        // `sequelize.define('user', ..)`): the name it is registered under.
        let registered = match &v {
            Val::Call(callee, args) if is_model_registration(callee) => {
                args.first().and_then(Val::as_str).map(str::to_string)
            }
            _ => None,
        };
        registered
            .or_else(|| self.entity_name(mv, &v))
            .or_else(|| v.name_it_goes_by())
            .filter(|n| n != "default")
    }

    /// The object a request body encodes: `JSON.stringify({..})`, `qs.stringify({..})`,
    /// `new URLSearchParams({..})`.
    fn encoded_body(&self, m: ModId, v: &Val) -> Option<Vec<(String, Val)>> {
        let encoder = match v {
            Val::Call(callee, _) => {
                matches!(&**callee, Val::Member(_, name) if name == "stringify")
            }
            Val::New(ctor, _) => {
                matches!(&**ctor, Val::Global(name) if name == "URLSearchParams" || name == "FormData")
            }
            _ => false,
        };
        encoder.then(|| self.built_record(m, v).cloned()).flatten()
    }

    /// What an instance made with `new` holds: its constructor's record and the fields set on
    /// it afterwards (see `Module::new_fields`).
    fn instance_fields(&self, m: ModId, v: &Val, line: u32) -> Vec<(String, Val)> {
        let mut fields = self.built_record(m, v).cloned().unwrap_or_default();
        fields.extend(
            self.res.modules[m]
                .new_fields
                .iter()
                .filter(|(at, ..)| *at == line)
                .map(|(_, k, v)| (k.clone(), v.clone())),
        );
        fields
    }

    /// The columns of the natural primary key of the entity a TypeORM `save` writes
    /// (`@PrimaryColumn() token`), found from the instance saved (`new Device()`), the entity
    /// handed to an entity manager (`manager.save(Device, {..})`) or the repository's
    /// (`getRepository(Device)`); none when the entity's key is generated.
    fn natural_primary_key(&self, m: ModId, cs: &CallSite) -> Vec<String> {
        let entity = cs
            .args
            .iter()
            .take(2)
            .find_map(|a| match a {
                Val::New(ctor, _) => Some(ctor.as_ref()),
                Val::Class(_) => Some(a),
                _ => None,
            })
            .or_else(|| {
                // the repository the call is made on: held (`const repo = getRepository(X)`) or
                // called in the chain (`getRepository(X).save(..)`)
                let chained = match &cs.callee {
                    Val::Member(receiver, _) => receiver.as_ref(),
                    _ => &cs.root,
                };
                [&cs.root, chained].into_iter().find_map(|r| match r {
                    Val::Call(callee, args) if repository_getter(callee) => args.first(),
                    _ => None,
                })
            });
        let Some(entity) = entity else {
            return Vec::new();
        };
        let (m2, c) = match entity {
            Val::Class(c) => (m, *c),
            v => match self.res.resolve(m, v) {
                Resolved::Class(m2, c) => (m2, c),
                _ => return Vec::new(),
            },
        };
        let fields = &self.res.modules[m2].classes[c].field_decorators;
        if fields
            .iter()
            .any(|(_, d)| d.name == "PrimaryGeneratedColumn")
        {
            return Vec::new();
        }
        fields
            .iter()
            .filter(|(_, d)| d.name == "PrimaryColumn")
            .map(|(f, _)| f.clone())
            .collect()
    }

    /// The record of `Entity.create({..})` that a chained `.save()` (`cs`) inserts: the
    /// argument of the call before it in the chain.
    fn chained_record(&self, m: ModId, cs: &CallSite) -> Option<Vec<(String, Val)>> {
        let made = &cs.path[..cs.path.len().checked_sub(1)?];
        let create = self.res.modules[m]
            .functions
            .iter()
            .flat_map(|f| f.calls.iter())
            .find(|c| c.group == cs.group && c.line <= cs.line && c.path == made)?;
        match create.args.first()? {
            Val::Obj(fields) if !fields.iter().any(|(k, _)| k == crate::program::SPREAD) => {
                Some(fields.clone())
            }
            _ => None,
        }
    }

    /// The record an instance was built with (`Model.build({..})`, `new Model({..})`).
    fn built_record<'v>(&'v self, m: ModId, v: &'v Val) -> Option<&'v Vec<(String, Val)>> {
        let args = match v {
            Val::Call(_, args) => args.as_slice(),
            Val::New(_, line) => self.new_call(m, *line).map(|c| c.args.as_slice())?,
            _ => return None,
        };
        match args.first()? {
            Val::Obj(fields) => Some(fields),
            _ => None,
        }
    }

    /// A call in key code as an operation on the key store, when it is one: SQL on the key
    /// table, a model named for keys, Redis with the key, or a `Map`/`Set`/LRU in the process.
    fn store_op(&self, m: ModId, kc: &KeyCall, cs: Option<&CallSite>) -> Option<StoreOp> {
        let method = kc.method.to_ascii_lowercase();
        if let Some(sql) = &kc.literal
            && let Some(op) = crate::link::keystore::sql_op(sql, kc.time_filter)
        {
            let is_sql_call = self
                .catalog
                .sql
                .calls
                .iter()
                .any(|c| c.eq_ignore_ascii_case(&kc.method))
                || self
                    .catalog
                    .sql
                    .tags
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(&kc.method))
                || matches!(
                    method.as_str(),
                    "query"
                        | "execute"
                        | "raw"
                        | "unsafe"
                        | "sql"
                        | "run"
                        | "all"
                        | "get"
                        | "prepare"
                        | "exec"
                );
            if is_sql_call {
                return Some(op);
            }
        }
        let origin = cs.and_then(|c| self.res.origin(m, &c.root));
        let spec = origin.as_ref().map(|(s, _, _)| s.as_str()).unwrap_or("");
        // Process memory.
        if let Some(cs) = cs {
            let memory = match &cs.root {
                Val::New(ctor, _) => match ctor.as_ref() {
                    Val::Global(g) => matches!(g.as_str(), "Map" | "Set" | "WeakMap"),
                    other => self
                        .res
                        .origin(m, other)
                        .is_some_and(|(spec, _, _)| MEMORY_PACKAGES.contains(&spec.as_str())),
                },
                Val::Obj(_) => true,
                _ => false,
            };
            if memory
                && (kc.on_key
                    || crate::link::keystore::is_key_target(&kc.receiver)
                    || method == "delete"
                    || method == "clear")
            {
                let kind = match method.as_str() {
                    "get" | "has" | "peek" => OpKind::Read,
                    "set" | "add" if kc.after_await => OpKind::Write,
                    // Node runs a middleware without interruption up to its first `await`:
                    // a check and a set before it cannot interleave with another request's.
                    "set" | "add" => OpKind::Claim,
                    "delete" | "clear" => OpKind::Delete,
                    _ => return None,
                };
                let ttl = kc.ttl || self.memory_ttl(m, &cs.root);
                return Some(StoreOp {
                    backend: StoreBackend::Memory,
                    kind,
                    target: kc.receiver.clone(),
                    fields: kc.fields.clone(),
                    ttl,
                    time_filter: kc.time_filter,
                });
            }
        }
        // Redis and other shared key-value stores.
        let redis = REDIS_PACKAGES.contains(&spec)
            || words::split(&kc.receiver).iter().any(|w| {
                matches!(
                    w.as_str(),
                    "redis" | "kv" | "upstash" | "valkey" | "ioredis"
                )
            });
        let key_text = kc.literal.as_deref().unwrap_or("");
        if redis && (kc.on_key || crate::link::keystore::is_key_target(key_text)) {
            let kind = match method.as_str() {
                "set" if kc.nx => OpKind::Claim,
                "setnx" | "hsetnx" => OpKind::Claim,
                "set" | "setex" | "psetex" | "hset" | "hmset" | "json.set" => OpKind::Write,
                "get" | "exists" | "hget" | "hgetall" | "mget" | "getex" => OpKind::Read,
                "del" | "unlink" | "getdel" => OpKind::Delete,
                "expire" | "pexpire" | "expireat" | "pexpireat" => OpKind::Expire,
                _ => return None,
            };
            let prefix = key_text.split("${").next().unwrap_or("").to_string();
            return Some(StoreOp {
                backend: StoreBackend::Redis,
                kind,
                target: if prefix.is_empty() {
                    kc.receiver.clone()
                } else {
                    prefix
                },
                fields: kc.fields.clone(),
                ttl: kc.ttl,
                time_filter: kc.time_filter,
            });
        }
        // DynamoDB: a command object sent by a client (`send(new PutCommand({ TableName, Item,
        // ConditionExpression }))`) or a DocumentClient method (`put({ TableName, .. })`).
        if kc.fields.iter().any(|f| f == "TableName")
            && (kc.on_key
                || kc
                    .fields
                    .iter()
                    .any(|f| crate::link::keystore::is_key_target(f)))
        {
            let op = kc
                .fields
                .iter()
                .find_map(|f| f.strip_suffix("Command"))
                .unwrap_or(&kc.method);
            if let Some(kind) = crate::facts::key::dynamo_kind(op, kc.nx) {
                let target = kc
                    .fields
                    .iter()
                    .find(|f| crate::link::keystore::is_key_target(f))
                    .unwrap_or(&kc.receiver)
                    .clone();
                return Some(StoreOp {
                    backend: StoreBackend::Dynamodb,
                    kind,
                    target,
                    fields: kc.fields.clone(),
                    // The table's TTL attribute, written with the item (`expiresAt`).
                    ttl: kc.ttl
                        || (matches!(kind, OpKind::Claim | OpKind::Write)
                            && kc.fields.iter().any(|f| words::expiry(f))),
                    time_filter: kc.time_filter,
                });
            }
        }
        // An ORM model or repository named for keys.
        if crate::link::keystore::is_key_target(&kc.receiver) {
            let kind = match method.as_str() {
                "create" | "insert" | "insertone" | "values" | "createone" | "build" => {
                    OpKind::Insert
                }
                "createmany"
                    if kc
                        .fields
                        .iter()
                        .any(|f| f.eq_ignore_ascii_case("skipDuplicates")) =>
                {
                    OpKind::Claim
                }
                "findorcreate" | "onconflictdonothing" | "orignore" | "ignore" | "setoninsert" => {
                    OpKind::Claim
                }
                "upsert"
                | "update"
                | "updatemany"
                | "updateone"
                | "findoneandupdate"
                | "findbyidandupdate"
                | "save"
                | "merge"
                | "onconflictdoupdate"
                | "onduplicatekeyupdate"
                | "replaceone" => OpKind::Write,
                "delete" | "deletemany" | "deleteone" | "destroy" | "remove" | "del" => {
                    OpKind::Delete
                }
                m if m.starts_with("find")
                    || matches!(m, "count" | "exists" | "get" | "first" | "select" | "where") =>
                {
                    OpKind::Read
                }
                _ => return None,
            };
            // The key table or model the chain names (`knex('idempotency_keys')`,
            // `prisma.idempotencyKey`, `this.idempotencyRepo`).
            let target = kc
                .receiver
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .find(|t| crate::link::keystore::is_key_target(t))
                .unwrap_or(&kc.receiver)
                .to_string();
            return Some(StoreOp {
                backend: StoreBackend::Orm,
                kind,
                target,
                fields: kc.fields.clone(),
                ttl: false,
                time_filter: kc.time_filter,
            });
        }
        None
    }

    /// Every cleanup in the project: a delete of old entries of a key store, wherever it runs
    /// (a cron job, a timer, a sweeper), with `order` `u32::MAX` (outside any request).
    pub fn cleanups(&self) -> Vec<KeyObs> {
        let mut out = Vec::new();
        for (m, module) in self.res.modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            for facts in &module.functions {
                for kc in &facts.key_calls {
                    let cs = facts.calls.iter().find(|c| {
                        c.line == kc.line
                            && (c.path.last() == Some(&kc.method)
                                || (c.path.is_empty() && c.root_name == kc.method))
                    });
                    if let Some(op) = self.store_op(m, kc, cs)
                        && op.kind == OpKind::Delete
                        && op.time_filter
                    {
                        out.push(KeyObs {
                            obs: Obs::Op(op),
                            at: self.location(m, kc.line),
                            ctx: kc.ctx,
                            order: u32::MAX,
                        });
                    }
                }
            }
        }
        out
    }

    /// An LRU or cache made with a TTL (`new LRUCache({ ttl })`, `new NodeCache({ stdTTL })`).
    fn memory_ttl(&self, m: ModId, root: &Val) -> bool {
        let Val::New(_, line) = root else {
            return false;
        };
        self.res.modules[m].functions.iter().any(|f| {
            f.calls.iter().any(|c| {
                c.is_new
                    && c.line == *line
                    && c.args.iter().any(|a| {
                        matches!(a, Val::Obj(fields) if fields.iter().any(|(k, _)| {
                            matches!(k.to_ascii_lowercase().as_str(), "ttl" | "maxage" | "stdttl" | "ttlautopurge")
                        }))
                    })
            })
        })
    }

    /// A method found by its name alone whose class is the one the receiver is declared to be:
    /// the receiver is what a project function returns (`const solana = await
    /// Solana.getInstance(network)`, a lookup in a map of instances), and that function declares
    /// it returns an instance of the method's class (`: Promise<Solana>`). The call is that
    /// method, not a guess.
    fn declared_receiver(&self, m: ModId, cs: &CallSite, (m2, f2): (ModId, FnId)) -> bool {
        let Val::Member(receiver, _) = &cs.callee else {
            return false;
        };
        let Val::Call(made_by, _) = receiver.as_ref() else {
            return false;
        };
        let Resolved::Func(m3, g) = self.res.resolve(m, made_by) else {
            return false;
        };
        let Some(declared) = &self.res.modules[m3].functions[g].return_type else {
            return false;
        };
        let (Resolved::Class(mc, cc) | Resolved::Instance(mc, cc)) = self.res.resolve(m3, declared)
        else {
            return false;
        };
        let Some(owner) = self.res.modules[m2].functions[f2].class else {
            return false;
        };
        self.res
            .class_chain(mc, cc)
            .any(|(mx, cx)| mx == m2 && cx == owner)
    }

    /// A method call on a value of unknown type, resolved by the method's name when exactly one
    /// class in the project defines it, or a few do and the name is distinctive (two words or
    /// more: `sendEmailWithHtml` on a provider the request carries, one of a Gmail and an
    /// Outlook class); each speculative.
    fn by_name_alone(&self, cs: &CallSite, callers: [(ModId, FnId); 2]) -> Vec<(ModId, FnId)> {
        let Some(method) = cs.path.last() else {
            return Vec::new();
        };
        if GENERIC_METHODS.contains(&method.as_str()) || cs.is_new {
            return Vec::new();
        }
        let distinctive =
            method.len() >= 8 && method.chars().skip(1).any(|c| c.is_ascii_uppercase());
        let root = cs.root_name.to_ascii_lowercase();
        if matches!(
            root.as_str(),
            "" | "req"
                | "res"
                | "request"
                | "response"
                | "reply"
                | "ctx"
                | "next"
                | "console"
                | "json"
                | "object"
                | "math"
                | "promise"
                | "array"
                | "logger"
                | "log"
        ) {
            // A value a middleware put on the request (`request.emailProvider.send..(..)`),
            // read through properties alone, is not the request's own method.
            let head = cs.text.split('(').next().unwrap_or("");
            let carried = matches!(root.as_str(), "req" | "request" | "ctx")
                && distinctive
                && cs.path.len() >= 2
                && head.matches('.').count() >= 2;
            if !carried {
                return Vec::new();
            }
        }
        // (A method that calls its own name on another value hands the work on: it is not one
        // of the candidates, `sendInvite(..) { return instances[id].sendInvite(..) }`.)
        let Some(v) = self.by_name.get(method.as_str()) else {
            return Vec::new();
        };
        let v: Vec<(ModId, FnId)> = v.iter().copied().filter(|c| !callers.contains(c)).collect();
        match v.len() {
            1 => v,
            2..=3 if distinctive => v,
            // The implementations of one base class (the channels, providers or drivers a
            // registry keeps, `instances[name].sendInvite(..)`): each of them.
            4..=MAX_SIBLINGS if distinctive && self.siblings(&v) => v,
            _ => Vec::new(),
        }
    }

    /// Whether every method in `candidates` belongs to a class that extends one same class of
    /// the project.
    fn siblings(&self, candidates: &[(ModId, FnId)]) -> bool {
        let base = |&(m, f): &(ModId, FnId)| {
            let c = self.res.modules[m].functions[f].class?;
            let extends = self.res.modules[m].classes[c].extends.as_ref()?;
            match self.res.resolve(m, extends) {
                Resolved::Class(bm, bc) => Some((bm, bc)),
                _ => None,
            }
        };
        let first = candidates.first().and_then(base);
        first.is_some() && candidates.iter().all(|c| base(c) == first)
    }

    /// Where a key middleware keeps its keys, when that is process memory: a `Map`/`Set` or an
    /// LRU cache it calls `get`/`set`/`has` on.
    pub fn memory_store(&self, m: ModId, f: FnId) -> Option<(Location, String)> {
        let module = &self.res.modules[m];
        for g in self.body_functions(m, f) {
            for cs in &module.functions[g].calls {
                let Some(op) = cs.path.last() else { continue };
                if !matches!(op.as_str(), "get" | "set" | "has" | "add") {
                    continue;
                }
                let in_memory = match &cs.root {
                    Val::New(ctor, _) => match ctor.as_ref() {
                        Val::Global(g) => matches!(g.as_str(), "Map" | "Set" | "WeakMap"),
                        other => self
                            .res
                            .origin(m, other)
                            .is_some_and(|(spec, _, _)| MEMORY_PACKAGES.contains(&spec.as_str())),
                    },
                    Val::Obj(_) => true,
                    _ => false,
                };
                if in_memory {
                    return Some((
                        self.location(m, cs.line),
                        format!("`{}` keeps the keys in the process", cs.text),
                    ));
                }
            }
        }
        None
    }

    /// A read of a model (`prisma.user.findUnique`, `User.findOne`, `this.findOne`).
    /// The ORM entity a call on a repository or model reads or writes: the one its field was
    /// injected for (`this.users.save(..)`), the one a chain's repository serves
    /// (`ds.getRepository(User).save(..)`, `const repo = ds.getRepository(User); repo.save(..)`),
    /// or the class an entity manager is given (`manager.save(User, {..})`).
    fn orm_entity(
        &self,
        m: ModId,
        cs: &CallSite,
        group_entity: &std::collections::HashMap<usize, String>,
    ) -> Option<String> {
        if let Some(model) = &cs.receiver_model {
            return Some(model.clone());
        }
        if let Some(e) = group_entity.get(&cs.group) {
            return Some(e.clone());
        }
        // A TypeORM query builder kept in a variable (`const q =
        // repo.createQueryBuilder('u').where(..); q.getOne()`): what it was made from.
        let root = match crate::program::query_builder_base(&cs.root) {
            Some(class @ Val::Class(_)) => return self.entity_name(m, class),
            Some(base) => base,
            None => &cs.root,
        };
        // (`dataSource.getRepository(User)`, or TypeORM's own `getRepository(User)` imported)
        if let Val::Call(callee, args) = root
            && repository_getter(callee)
        {
            return self.entity_name(m, args.first()?);
        }
        let manager = cs.path.len() >= 2 && cs.path[cs.path.len() - 2] == "manager"
            || cs.path.len() == 1 && crate::program::entity_manager_name(&cs.root_name);
        if manager && cs.args.len() >= 2 {
            return self.entity_name(m, &cs.args[0]);
        }
        // `em.persistAndFlush(em.create(Patient, data))`: the entity the manager made, or the
        // one it found (`em.findOneOrFail(Patient, { id })`).
        if manager
            && let Some(Val::Call(f, args)) = cs.args.first()
            && matches!(f.as_ref(), Val::Member(_, c)
                if c == "create" || c.starts_with("find") || self.catalog.is_lookup(c))
            && args.len() >= 2
        {
            return self.entity_name(m, &args[0]);
        }
        // Mongoose's `new TeamInvite({..}).save()`, or `const doc = new User({..});
        // doc.save(cb)` (https://mongoosejs.com/docs/models.html#constructing-documents): the
        // model the document is made from.
        if cs.path.len() == 1
            && cs.path[0] == "save"
            && let Val::New(class, line) = &cs.root
        {
            // A default import goes by the name the code gives it (`new TeamInvite(..)`), as the
            // model's lookups (`TeamInvite.findOne`) do; the `new` is this call's own, or the
            // one that made the variable saved.
            let made = if cs.text.starts_with("new ") {
                Some(cs.text.as_str())
            } else {
                self.new_call(m, *line).map(|c| c.text.as_str())
            };
            let written = made.and_then(|t| t.strip_prefix("new ")).map(|t| {
                t.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                    .collect::<String>()
            });
            return self
                .entity_name(m, class)
                .filter(|n| n != "default")
                .or(written.filter(|n| n.starts_with(|c: char| c.is_ascii_uppercase())))
                .or_else(|| self.registered_model(m, class));
        }
        // `manager.save(verification)` with `verification = new Verification()`: the instance's
        // class is the entity.
        if manager && let Some(Val::New(class, _)) = cs.args.first() {
            return self.entity_name(m, class);
        }
        None
    }

    /// The `new X(..)` call of module `m` on `line` (a [`Val::New`] names it so).
    fn new_call(&self, m: ModId, line: u32) -> Option<&CallSite> {
        self.res.modules[m].new_call(line)
    }

    /// The name a module imported whole registers its model under (`module.exports =
    /// mongoose.model('user', UserSchema)`, `sequelize.define('user', ..)`).
    fn registered_model(&self, m: ModId, v: &Val) -> Option<String> {
        let Val::Import { spec, name } = v else {
            return None;
        };
        let target = self.res.resolve_spec(m, spec)?;
        let export = self.res.modules[target].export(name.as_deref().unwrap_or("default"))?;
        match export {
            Val::Call(callee, args) if is_model_registration(callee) => {
                args.first().and_then(Val::as_str).map(str::to_string)
            }
            _ => None,
        }
    }

    /// The name of an entity class given as a value (`User`, an import of it), not a string.
    fn entity_name(&self, m: ModId, v: &Val) -> Option<String> {
        match v {
            Val::Class(c) => Some(self.res.modules[m].classes[*c].name.clone()),
            Val::Import { .. } | Val::Global(_) => v
                .name_it_goes_by()
                .filter(|n| n.chars().next().is_some_and(|c| c.is_ascii_uppercase())),
            _ => match self.res.resolve(m, v) {
                Resolved::Class(m2, c) => Some(self.res.modules[m2].classes[c].name.clone()),
                _ => None,
            },
        }
    }

    /// The statement of a raw SQL `SELECT` through a client or tag of the catalogue
    /// (`sql\`select id from account where email = ${email}\``, `pool.query('SELECT ..')`).
    fn raw_select<'c>(&self, cs: &'c CallSite) -> Option<&'c str> {
        let sql = cs.literal.as_deref()?;
        let is_sql = cs.path.last().or(Some(&cs.root_name)).is_some_and(|l| {
            self.catalog.sql.calls.contains(l) || self.catalog.sql.tags.contains(l)
        });
        (is_sql && is_select(sql)).then_some(sql)
    }

    fn read_of(&self, m: ModId, cs: &CallSite) -> Option<Option<String>> {
        // A raw `SELECT … FROM t` reads `t`.
        if let Some(sql) = self.raw_select(cs) {
            return Some(sql_table(sql));
        }
        // `supabase.from('t').select(..)`: the table is the chain's (`group_table`).
        if from_select(cs) {
            return Some(None);
        }
        // Drizzle's `db.select().from(users)`: a read of the table (a lookup of its rows).
        if drizzle_select(cs) {
            return Some(
                cs.args
                    .first()
                    .and_then(|a| self.res.table_name(m, a).or_else(|| a.name_it_goes_by())),
            );
        }
        if let Some(c) = this_call(cs) {
            return self
                .catalog
                .is_read(&cs.root_name)
                .then(|| Some(self.res.modules[m].classes[c].name.clone()));
        }
        let last = cs.path.last()?;
        if !(self.catalog.is_read(last) || self.catalog.is_list_read(last))
            || cs.path.iter().any(|p| BUILDER_WRITES.contains(&p.as_str()))
        {
            return None;
        }
        Some(match cs.path.len() {
            1 if cs.root_name == "this" || cs.root_name.is_empty() => None,
            1 => Some(cs.root_name.clone()),
            // Objection's `Person.query().where(..).first()`: the model `query()` is called on.
            n => match objection_query(cs) {
                Some(0) => Some(cs.root_name.clone()).filter(|r| !r.is_empty()),
                Some(i) => Some(cs.path[i - 1].clone()),
                None => Some(cs.path[n - 2].clone()),
            },
        })
    }

    /// The idempotency key a provider call passes: one of the sink's `idempotency_option`s
    /// (stripe-node's `{ idempotencyKey }`), or an idempotency-key header.
    fn downstream_key(&self, cs: &CallSite, options: &[String]) -> DownstreamKey {
        let mut key = None;
        for a in &cs.args {
            let Val::Obj(fields) = a else { continue };
            for (k, v) in fields {
                if options.contains(k) || self.catalog.is_key_header(k) {
                    key = Some(v);
                } else if k == "headers"
                    && let Val::Obj(headers) = v
                    && let Some((_, hv)) =
                        headers.iter().find(|(h, _)| self.catalog.is_key_header(h))
                {
                    key = Some(hv);
                }
            }
        }
        match key {
            None => DownstreamKey::Missing,
            Some(v) if fresh_random(v) => DownstreamKey::Random,
            Some(_) => DownstreamKey::Derived,
        }
    }

    /// How an upsert's match (its `where`) is made per call (`upsert({ where: { id: body.id ||
    /// uuidv4() } })`): see [`per_call_match`].
    fn keyed_per_call(cs: &CallSite) -> (bool, bool) {
        let matched: Vec<&Val> = match cs.args.first() {
            Some(Val::Obj(fields)) => fields
                .iter()
                .filter(|(k, _)| k == "where")
                .map(|(_, v)| v)
                .collect(),
            _ => vec![],
        };
        per_call_match(&matched)
    }

    /// The keys of the record a create writes, when the call shows them: Prisma's `data` (or an
    /// upsert's `create`), or the object passed (`User.create({ email })`).
    fn data_keys(cs: &CallSite) -> Option<Vec<String>> {
        let obj = Self::record(cs)?;
        // A value made up for this request (`randomUUID()`, `nanoid()`, `crypto.randomBytes()`,
        // the id of a row it created) is not the caller's: a retry writes a new one and never
        // conflicts.
        Some(repeated_keys(obj))
    }

    /// Where the record a create writes comes from when it is a parameter, and which of its
    /// keys are parameters: the caller's arguments say more (see `bind_record`).
    fn record_params(m: ModId, cs: &CallSite) -> RecordParams {
        match Self::record(cs) {
            // `data: { ...input, role: 'member' }`: the caller's object says the keys `input`
            // brings (see `bind_record`; the front end keeps the spread in `spread_args`), but
            // not a key the record writes with a value made per call (`slug: uuid()`, see
            // `made_keys`)
            Some(obj) => {
                let inner = matches!(cs.args.iter().find(|a| matches!(a, Val::Obj(_))),
                    Some(Val::Obj(fields)) if prisma_args(fields));
                let spread = cs
                    .spread_args
                    .iter()
                    .filter(|(i, _)| (*i == crate::program::RECORD_SPREAD) == inner)
                    .find_map(|(_, v)| param_ref(m, v));
                (spread, key_params(m, obj))
            }
            None => {
                let first = cs.args.first();
                let inner = match first {
                    Some(Val::Obj(fields)) if prisma_args(fields) => fields
                        .iter()
                        .find(|(k, _)| k == "data" || k == "create")
                        .map(|(_, v)| v),
                    other => other,
                };
                (inner.and_then(|v| param_ref(m, v)), Vec::new())
            }
        }
    }

    /// The record object a create writes, when the call shows it: Prisma's `data` (or an
    /// upsert's `create`), or the object passed (`User.create({ email })`).
    fn record(cs: &CallSite) -> Option<&Vec<(String, Val)>> {
        // TypeORM's `manager.save(User, {..})` names the entity (a class) first.
        let first = match cs.args.first()? {
            Val::Class(_) | Val::Import { .. } | Val::Global(_) => cs.args.get(1)?,
            // An entity the ORM made from a record (MikroORM's `em.create(Patient, {..})`,
            // TypeORM's `repo.create({..})`), then persisted or saved: that record, when all of
            // it is in view (not `{ ...payload, password }`).
            Val::Call(f, args) if matches!(f.as_ref(), Val::Member(_, c) if c == "create") => {
                let data = match args.as_slice() {
                    [
                        Val::Class(_) | Val::Import { .. } | Val::Global(_),
                        data,
                        ..,
                    ] => data,
                    [data] => data,
                    _ => return None,
                };
                match data {
                    Val::Obj(fields)
                        if !fields.iter().any(|(k, _)| k == crate::program::SPREAD) =>
                    {
                        data
                    }
                    _ => return None,
                }
            }
            first => first,
        };
        let obj = match first {
            Val::Obj(fields) if !prisma_args(fields) => fields,
            Val::Obj(fields) => match fields.iter().find(|(k, _)| k == "data" || k == "create") {
                Some((_, Val::Obj(data))) => data,
                Some((_, Val::Arr(items))) => match items.first() {
                    Some(Val::Obj(data)) => data,
                    _ => return None,
                },
                Some(_) => return None,
                None => fields,
            },
            _ => return None,
        };
        Some(obj)
    }

    /// The caller's arguments of `(m2, f2)` for a create's record and its keys: a record passed
    /// as an object shows its keys; a key the caller makes up per call (`randomUUID()`) is no
    /// longer the caller's; a parameter of the caller stays one, for its own caller.
    /// An update whose change is a parameter (`updateUser(filter, update)`): the caller's
    /// argument says whether it is relative (`{ $inc: { credits: 5 } }`, `{ $push: .. }`,
    /// Prisma's `{ increment: 1 }`), or is a parameter of the caller in turn.
    fn bind_update(&self, m: ModId, (m2, f2): (ModId, FnId), cs: &CallSite, e: &mut Effect) {
        // A column the callee sets to its parameter, as this call writes it: the constant it
        // passes (`setStatus(payout.id, 'failed')`), a value the request holds by its name, or
        // this function's own parameter, bound at its callers in turn.
        for (col, r) in std::mem::take(&mut e.written_params) {
            let Bound::Val(v) = bind_param(&r, m2, f2, &cs.args) else {
                continue;
            };
            match constant(&v).or_else(|| value_name(&v)) {
                Some(c) => {
                    if let Some((_, value)) = e.update_keys.iter_mut().find(|(k, _)| *k == col) {
                        *value = Some(c);
                    }
                }
                None => e
                    .written_params
                    .extend(param_ref(m, &v).map(|r2| (col, r2))),
            }
        }
        let Some(r) = e.update_param.take() else {
            return;
        };
        let keys = &self.catalog.relative_update.keys;
        match bind_param(&r, m2, f2, &cs.args) {
            Bound::Val(v) if has_key(&v, keys, 0) => {
                e.relative = true;
                e.relative_fields = relative_fields(std::slice::from_ref(&v), keys);
            }
            // `updateUser({ password: hash }, id)`: the fields the caller's object sets join
            // those the update writes itself (its `updatedAt`), as `update_keys` reads them.
            Bound::Val(Val::Obj(fields)) => set_fields(e, &fields),
            Bound::Val(v) => e.update_param = param_ref(m, &v),
            Bound::Unknown => {}
        }
    }

    fn bind_record(m: ModId, (m2, f2): (ModId, FnId), cs: &CallSite, e: &mut Effect) {
        let args = cs.args.as_slice();
        // `{ ...found, name }` of a row the caller looked up, as `found` itself (below)
        let loaded = crate::program::loads_row;
        // (the callee's keys that are parameters, bound below; those the caller's own object
        // gives are already the caller's)
        let callee_keys = std::mem::take(&mut e.key_params);
        if let Some(r) = e.data_param.take() {
            // `createAccount(args)` running `prisma.account.create(args)`, given `{ data: {
            // email, .. } }`: the record is the arguments' `data` (its spreads are kept apart,
            // at `RECORD_SPREAD`)
            let (bound, spread_at) = match bind_param(&r, m2, f2, args) {
                Bound::Val(Val::Obj(fields)) if r.path.is_empty() && prisma_args(&fields) => {
                    let data = fields
                        .into_iter()
                        .find(|(k, _)| k == "data" || k == "create")
                        .map(|(_, v)| v);
                    (
                        data.map_or(Bound::Unknown, Bound::Val),
                        crate::program::RECORD_SPREAD,
                    )
                }
                bound => (bound, r.index),
            };
            let copies_loaded = r.path.is_empty()
                && cs
                    .spread_args
                    .iter()
                    .any(|(i, v)| *i == spread_at && loaded(v));
            match bound {
                Bound::Val(Val::Obj(_))
                    if copies_loaded
                        && e.kind == EffectKind::DbCreate
                        && e.callee.ends_with(".save") =>
                {
                    e.kind = EffectKind::DbUpdate;
                    e.label = "save of a loaded instance".into();
                    e.data_keys = None;
                }
                Bound::Val(Val::Obj(fields)) => {
                    // (an update's: the fields it sets, `.set({ ...values, updatedAt })`)
                    if e.kind == EffectKind::DbUpdate {
                        set_fields(e, &fields);
                    }
                    // (the keys of a record that spreads the parameter join its own, but for
                    // those it writes with a value made per call)
                    let keys = e.data_keys.get_or_insert_with(Vec::new);
                    for k in repeated_keys(&fields) {
                        if !keys.contains(&k) && !e.made_keys.contains(&k) {
                            keys.push(k);
                        }
                    }
                    e.key_params.extend(
                        key_params(m, &fields)
                            .into_iter()
                            .filter(|(k, _)| !e.made_keys.contains(k)),
                    );
                    // `create({ ...dto, archived: false })`: the caller's object spreads its own
                    // parameter, whose keys its caller (or its declared type) shows in turn.
                    if r.path.is_empty() {
                        e.made_keys.extend(made_keys(Some(&fields)));
                        e.data_param = cs
                            .spread_args
                            .iter()
                            .filter(|(i, _)| *i == spread_at)
                            .find_map(|(_, v)| param_ref(m, v));
                    }
                }
                // `this.extensions.save(extension)` of a row the caller looked up
                // (`findOne(..)`, then a field set): a helper's `repo.save(entity)` writes it
                // back, as it does where the lookup is in view.
                Bound::Val(v @ Val::Call(..))
                    if e.kind == EffectKind::DbCreate
                        && e.callee.ends_with(".save")
                        && loaded(&v) =>
                {
                    e.kind = EffectKind::DbUpdate;
                    e.label = "save of a loaded instance".into();
                    e.data_keys = None;
                }
                Bound::Val(v) => e.data_param = param_ref(m, &v),
                Bound::Unknown => {}
            }
        }
        for (k, r) in callee_keys {
            match bind_param(&r, m2, f2, args) {
                // Made up per call: not a value a retry repeats.
                Bound::Val(v) if fresh_random(&v) => {
                    if let Some(keys) = &mut e.data_keys {
                        keys.retain(|x| *x != k);
                    }
                }
                Bound::Val(v) => {
                    if let Some(r2) = param_ref(m, &v) {
                        e.key_params.push((k, r2));
                    }
                }
                Bound::Unknown => {}
            }
        }
    }

    /// The keys a sink's argument object spread from a parameter (`pay({ lnd, ...options })`),
    /// read at a caller that passes an object for it (`pay(conn, { request })`): the provider's
    /// semantics may hang on them (an invoice given or not). A caller that passes a parameter of
    /// its own hands the question on to its callers.
    fn bind_spread(m: ModId, m2: ModId, f2: FnId, args: &[Val], e: &mut Effect) {
        let Some(r) = e.spread_param.take() else {
            return;
        };
        match bind_param(&r, m2, f2, args) {
            Bound::Val(v @ Val::Obj(_)) => {
                for (k, lit) in arg_fields(std::slice::from_ref(&v), |_| None) {
                    if !e.args.iter().any(|(k2, _)| *k2 == k) {
                        e.args.push((k, lit));
                    }
                }
                let made = made_fields(std::slice::from_ref(&v));
                if !made.is_empty() {
                    e.made_args = e.made_args.iter().cloned().chain(made).collect();
                }
            }
            Bound::Val(v) => e.spread_param = param_ref(m, &v).map(Box::new),
            Bound::Unknown => {}
        }
    }

    /// Whether `v`, an argument of a GraphQL client's request in module `m`, is a document whose
    /// operation is a mutation: written here or imported, as a string, a tagged template
    /// (`` gql`mutation ..` ``), request options holding one (`{ document, variables }`), or the
    /// parsed document a code generator writes (`{ kind: 'Document', definitions: [{ operation:
    /// 'mutation', .. }] }`).
    fn graphql_mutation(&self, m: ModId, v: &Val) -> bool {
        fn document(res: &Resolver, m: ModId, v: &Val, depth: usize) -> Option<bool> {
            if depth > 6 {
                return None;
            }
            match v {
                Val::Str(text) => graphql_operation(text).map(|op| op == "mutation"),
                Val::Template(pieces) => {
                    let text: String = pieces
                        .iter()
                        .map(|p| match p {
                            Val::Str(s) => s.as_str(),
                            _ => " ",
                        })
                        .collect();
                    graphql_operation(&text).map(|op| op == "mutation")
                }
                // a tag (`gql`, `graphql`) or parser (`parse(..)`) given the text
                Val::Call(_, args) => args.first().and_then(|a| document(res, m, a, depth + 1)),
                Val::Obj(fields) => fields.iter().find_map(|(k, x)| match (k.as_str(), x) {
                    ("operation", Val::Str(op)) => Some(op == "mutation"),
                    ("document" | "query" | "mutation" | "definitions", _) => {
                        document(res, m, x, depth + 1)
                    }
                    _ => None,
                }),
                Val::Arr(items) => items.first().and_then(|x| document(res, m, x, depth + 1)),
                Val::Import { .. } => {
                    let (wm, written) = res.written_value(m, v);
                    if matches!(written, Val::Import { .. }) {
                        return None;
                    }
                    document(res, wm, &written, depth + 1)
                }
                _ => None,
            }
        }
        document(self.res, m, v, 0) == Some(true)
    }

    /// The parameter (or a member of one) of the function of module `m` that decides the method
    /// of a generic request whose options are `args` (see `Effect::method_param`): the options
    /// object's `method`, or the `method` of the object a project function returns for them
    /// (`buildConfig(options, method)` returning `{ method: method || options.method || 'GET' }`),
    /// read through its parameters. None when the method is not a parameter (a literal that is
    /// no mutation, or a value the code does not show).
    fn request_method(&self, m: ModId, args: &[Val]) -> Option<ParamRef> {
        // the options: the object that names a method (`fetch(url, { method })`), else the
        // first argument (`axios.request(config)`)
        let first = args
            .iter()
            .find(|a| matches!(a, Val::Obj(fields) if fields.iter().any(|(k, _)| k == "method")))
            .or_else(|| args.first())?;
        let method = match first {
            Val::Obj(fields) => fields.iter().rev().find(|(k, _)| k == "method")?.1.clone(),
            Val::Call(callee, call_args) => {
                let Resolved::Func(m2, f2) = self.res.resolve(m, callee) else {
                    return None;
                };
                let returned = self.res.modules[m2].functions[f2]
                    .returns
                    .iter()
                    .find_map(|r| match r {
                        Val::Obj(fields) => fields
                            .iter()
                            .rev()
                            .find(|(k, _)| k == "method")
                            .map(|f| &f.1),
                        _ => None,
                    })?;
                let r = param_ref(m2, returned)?;
                match bind_param(&r, m2, f2, call_args) {
                    Bound::Val(v) => v,
                    Bound::Unknown => return None,
                }
            }
            other => Val::Member(std::sync::Arc::new(other.clone()), "method".into()),
        };
        param_ref(m, &method)
    }

    /// A write whose request method a parameter decides, at a call of that function: kept when
    /// the call passes a mutation method, left to the caller's own parameter when it passes
    /// that, and false (dropped) when it passes another method, or one the code does not show.
    fn bind_method(m: ModId, m2: ModId, f2: FnId, args: &[Val], e: &mut Effect) -> bool {
        let Some(r) = e.method_param.take() else {
            return true;
        };
        match bind_param(&r, m2, f2, args) {
            // The method it is made with, as if its options had written it (a `DELETE` is
            // idempotent by definition).
            Bound::Val(Val::Str(method)) => {
                let method = method.to_ascii_uppercase();
                match e.args.iter_mut().find(|(k, _)| k == "method") {
                    Some((_, v)) => *v = Some(method.clone()),
                    None => e.args.push(("method".into(), Some(method.clone()))),
                }
                crate::facts::is_mutation_method(&method)
            }
            Bound::Val(v) => {
                e.method_param = param_ref(m, &v).map(Box::new);
                e.method_param.is_some()
            }
            Bound::Unknown => false,
        }
    }

    /// The URL of an HTTP call made with a parameter's value (see `Effect::url_param`), read
    /// at a caller that passes it; a caller passing a parameter of its own hands it on.
    fn bind_url(m: ModId, m2: ModId, f2: FnId, args: &[Val], e: &mut Effect) {
        let Some(r) = e.url_param.take() else {
            return;
        };
        if let Bound::Val(v) = bind_param(&r, m2, f2, args) {
            match url_text(&v) {
                Some(url) => e.url = Some(url),
                None => e.url_param = param_ref(m, &v).map(Box::new),
            }
        }
    }

    /// The dedup options of the sink an effect came from.
    fn dedup_options(&self, e: &Effect) -> Option<&[String]> {
        self.catalog
            .sinks
            .iter()
            .find(|s| {
                s.lang == crate::catalog::Lang::Ts
                    && s.kind == e.kind
                    && !s.dedup_option.is_empty()
                    && (s.label == e.label || s.id == e.label)
            })
            .map(|s| s.dedup_option.as_slice())
    }

    /// A message id that the parameter `p` decides, seen at a call that passes `arg` for it:
    /// whether the call gives a stable id, else the caller's own parameter that decides it. An
    /// argument left out, or an object of options without the id, gives none.
    fn dedup_at_caller(
        &self,
        m: ModId,
        arg: Option<&Val>,
        p: &crate::facts::DedupParam,
        keys: &[String],
    ) -> (bool, Option<crate::facts::DedupParam>) {
        let mut v = match arg {
            Some(a) => a,
            None => return (false, None),
        };
        for (n, field) in p.fields.iter().enumerate() {
            if let Some((index, mut fields)) = param_path(v) {
                fields.extend(p.fields[n..].iter().cloned());
                let up = crate::facts::DedupParam {
                    index,
                    fields,
                    is_id: p.is_id,
                };
                return (false, Some(up));
            }
            match v {
                Val::Obj(entries) => match entries.iter().rev().find(|(k, _)| k == field) {
                    Some((_, x)) => v = x,
                    None => return (false, None),
                },
                _ => return (false, None),
            }
        }
        if let Some((index, fields)) = param_path(v) {
            let up = crate::facts::DedupParam {
                index,
                fields,
                is_id: p.is_id,
            };
            return (false, Some(up));
        }
        if p.is_id {
            (!fresh_random(v) && *v != Val::Unknown, None)
        } else {
            (self.has_stable_key(m, v, keys, 0), key_from_param(v, keys))
        }
    }

    /// `v` carries one of `keys` with a value that is not made up per call (`{ jobId: \`${a}-${b}\` }`),
    /// directly, in a list, or in what a `.map(cb)` callback returns.
    fn has_stable_key(&self, m: ModId, v: &Val, keys: &[String], depth: usize) -> bool {
        if depth > 6 {
            return false;
        }
        match v {
            // An id from a parameter is judged at each caller (`dedup_param`): a caller may
            // leave it out (`{ jobId: options?.jobId }` called without options).
            Val::Obj(fields) => fields.iter().any(|(k, x)| {
                (keys.contains(k) && !fresh_random(x) && param_path(x).is_none())
                    || self.has_stable_key(m, x, keys, depth + 1)
            }),
            Val::Arr(items) => items
                .iter()
                .any(|x| self.has_stable_key(m, x, keys, depth + 1)),
            Val::Call(_, args) => args
                .iter()
                .any(|x| self.has_stable_key(m, x, keys, depth + 1)),
            Val::Func(f) => self.res.modules[m].functions.get(*f).is_some_and(|f| {
                f.returns
                    .iter()
                    .any(|x| self.has_stable_key(m, x, keys, depth + 1))
            }),
            _ => false,
        }
    }

    /// A call of a library handler that does not serve `method`: it runs nothing of what it is
    /// given (`NextAuth(req, res, { callbacks })` on a PUT).
    fn not_served(&self, m: ModId, cs: &CallSite, method: &str) -> bool {
        self.refuses(m, &cs.callee, method)
    }

    /// `callee` is a package's handler that does not serve `method` (`[[served_methods]]`).
    fn refuses(&self, m: ModId, callee: &Val, method: &str) -> bool {
        self.res
            .origin(m, callee)
            .is_some_and(|(spec, name, path)| {
                path.last()
                    .or(name.as_ref())
                    .and_then(|export| self.catalog.served_methods(&spec, export))
                    .is_some_and(|served| !served.iter().any(|s| s == method))
            })
    }

    /// The field paths of the callbacks a library call runs, when it runs only some of those
    /// it is given (`getServerSession(req, res, authOptions)`: `callbacks.session`).
    fn runs_only(&self, m: ModId, cs: &CallSite) -> Option<&[String]> {
        let (spec, name, path) = self.res.origin(m, &cs.callee)?;
        let export = path.last().or(name.as_ref())?;
        self.catalog.runs_only(&spec, export)
    }

    /// A route handler made by a package from the options it is given (`export default
    /// NextAuth(authOptions)`, `const handler = NextAuth(authOptions)`, next-auth v5's
    /// `NextAuth(config).handlers.POST`): the functions in those
    /// options, which the package is taken to run, for a `method` it serves; none for a method it
    /// answers itself. Empty when `v` is no call of a package.
    pub fn library_handler_callbacks(&self, m: ModId, v: &Val, method: &str) -> Vec<(ModId, FnId)> {
        let Some((m, Val::Call(callee, args))) = self.made_by_call(m, v, 0) else {
            return Vec::new();
        };
        let Some((spec, name, path)) = self.res.origin(m, callee) else {
            return Vec::new();
        };
        if self.library_handler_refuses(m, v, method) {
            return Vec::new();
        }
        let export = path.last().or(name.as_ref());
        let only = export.and_then(|e| self.catalog.runs_only(&spec, e));
        let mut carried = Vec::new();
        for a in args {
            self.handler_functions(m, a, &mut carried);
        }
        let mut out: Vec<(ModId, FnId)> = carried
            .into_iter()
            .filter(|(path, ..)| only.is_none_or(|fields| fields.contains(path)))
            .map(|(_, m2, g, _)| (m2, g))
            .collect();
        out.dedup();
        out
    }

    /// A package's webhook controller (see `frontend::ts::nest::package_controller_call`): its
    /// route's handler is the package's decorator (`StripeWebhookHandler` of
    /// `@golevelup/nestjs-stripe`), and what runs is every method of the project's classes
    /// that decorator marks, each for its event's type.
    pub fn package_controller(
        &self,
        v: &Val,
    ) -> Option<(&crate::catalog::PackageController, Vec<(ModId, FnId)>)> {
        let Val::Import {
            spec,
            name: Some(name),
        } = v
        else {
            return None;
        };
        let entry = self.catalog.controller_of_decorator(spec, name)?;
        let mut out = Vec::new();
        for (m, module) in self.res.modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            for class in &module.classes {
                for (f, decorators) in &class.method_decorators {
                    if decorators.iter().any(|d| {
                        matches!(&d.callee, Val::Import { spec: s, name: Some(n) }
                            if crate::catalog::package_matches(&entry.package, s)
                                && *n == entry.handler_decorator)
                    }) {
                        out.push((m, *f));
                    }
                }
            }
        }
        Some((entry, out))
    }

    /// A route handler made by a package that does not serve `method` and answers it itself
    /// (next-auth's handler on a PUT).
    pub fn library_handler_refuses(&self, m: ModId, v: &Val, method: &str) -> bool {
        match self.made_by_call(m, v, 0) {
            Some((m, Val::Call(callee, _))) => self.refuses(m, callee, method),
            _ => false,
        }
    }

    /// The call whose result `v` is, or is a member of (`NextAuth(config).handlers.POST`, read
    /// through the imports and exports of project modules), with its module.
    fn made_by_call<'v>(&'v self, m: ModId, v: &'v Val, depth: usize) -> Option<(ModId, &'v Val)> {
        if depth > 8 {
            return None;
        }
        match v {
            // (a project function returning the call it makes: `initAuth()` returning
            // `betterAuth(options)`)
            Val::Call(callee, _) => match self.res.resolve(m, callee) {
                Resolved::Func(m2, g) => {
                    let returns = &self.res.modules[m2].functions[g].returns;
                    match returns.as_slice() {
                        [r @ (Val::Call(..) | Val::Import { .. } | Val::Member(..))] => {
                            self.made_by_call(m2, r, depth + 1).or(Some((m, v)))
                        }
                        _ => Some((m, v)),
                    }
                }
                _ => Some((m, v)),
            },
            Val::Member(inner, _) => self.made_by_call(m, inner, depth + 1),
            Val::Import {
                spec,
                name: Some(n),
            } => {
                let target = self.res.resolve_spec(m, spec)?;
                let x = self.res.modules[target].export(n)?;
                self.made_by_call(target, x, depth + 1)
            }
            _ => None,
        }
    }

    /// The functions a value handed to a call carries, each with the field path it sits at
    /// (`callbacks.signIn`) and whether a project function made it (returned it from a call
    /// here, `buildContext(auth)` returning `{ authorize }`): the value itself when it is a
    /// function, and the functions of the object or array it is, read through variables,
    /// imports, the returns of project functions and the options given to a package's factory
    /// (`EmailProvider({ sendVerificationRequest })`, whose fields keep the path of the array
    /// they sit in). Bounded in depth and count.
    fn carried_functions(
        &self,
        m: ModId,
        v: &Val,
        (path, made): (&str, bool),
        depth: usize,
        out: &mut Vec<(String, ModId, FnId, bool)>,
    ) {
        self.carried_functions_in(m, v, (path, made), depth, false, out);
    }

    /// [`Self::carried_functions`] of what serves a request (a package's handler made from an
    /// instance): read through the instance a package's factory made from options too (`auth`
    /// of `betterAuth(options)`, made where a project function returns it), and through the
    /// lists a project function returns (`plugins: createPlugins()`).
    fn handler_functions(&self, m: ModId, v: &Val, out: &mut Vec<(String, ModId, FnId, bool)>) {
        self.carried_functions_in(m, v, ("", false), 0, true, out);
    }

    fn carried_functions_in(
        &self,
        m: ModId,
        v: &Val,
        (path, made): (&str, bool),
        depth: usize,
        instances: bool,
        out: &mut Vec<(String, ModId, FnId, bool)>,
    ) {
        const MAX_CARRIED: usize = 64;
        if depth > 8 || out.len() >= MAX_CARRIED {
            return;
        }
        let field = |k: &str| match path {
            "" => k.to_string(),
            p => format!("{p}.{k}"),
        };
        match v {
            Val::Func(g) => out.push((path.to_string(), m, *g, made)),
            Val::Obj(fields) => {
                for (k, x) in fields {
                    self.carried_functions_in(m, x, (&field(k), made), depth + 1, instances, out);
                }
            }
            Val::Arr(items) => {
                for x in items {
                    self.carried_functions_in(m, x, (path, made), depth + 1, instances, out);
                }
            }
            Val::Call(callee, args)
                if !matches!(self.res.resolve(m, callee), Resolved::Func(..)) =>
            {
                if self.res.origin(m, callee).is_some() {
                    for x in args {
                        self.carried_functions_in(m, x, (path, made), depth + 1, instances, out);
                    }
                }
            }
            _ => {
                let made = made || matches!(v, Val::Call(..));
                match self.res.resolve(m, v) {
                    Resolved::Func(m2, g) => out.push((path.to_string(), m2, g, made)),
                    Resolved::Obj(m2, fields) => {
                        for (k, x) in &fields {
                            self.carried_functions_in(
                                m2,
                                x,
                                (&field(k), made),
                                depth + 1,
                                instances,
                                out,
                            );
                        }
                    }
                    _ if !instances => {}
                    _ => {
                        let Some((m2, Val::Call(callee, args))) = self.made_by_call(m, v, 0) else {
                            return;
                        };
                        match self.res.resolve(m2, callee) {
                            // What a project function returns (`plugins: createPlugins()`, a
                            // list of plugins made from callbacks).
                            Resolved::Func(m3, g) => {
                                for r in &self.res.modules[m3].functions[g].returns {
                                    self.carried_functions_in(
                                        m3,
                                        r,
                                        (path, true),
                                        depth + 1,
                                        instances,
                                        out,
                                    );
                                }
                            }
                            // An instance a package's factory made, or a member of one (`auth`,
                            // `auth.handler` of `betterAuth(options)`, made where a project
                            // function returns it): the functions of the options it was made
                            // from.
                            _ if self.res.origin(m2, callee).is_some() => {
                                for x in args {
                                    self.carried_functions_in(
                                        m2,
                                        x,
                                        (path, made),
                                        depth + 1,
                                        instances,
                                        out,
                                    );
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
    }

    /// A package client held in a member of a project object (`prisma.client.board.create`,
    /// where `prisma` is a module's `export default { client }` and `client` a `PrismaClient`): the
    /// call as made on that member, so it matches the package's sinks by what the receiver is,
    /// not by its name. Only members before the chain's first call are walked. In a tRPC context
    /// whose field shows nothing (`ctx.db`, from a value the audit cannot see), the call as made
    /// on that field, matched by its name like a variable.
    fn client_in_path(&self, m: ModId, cs: &CallSite) -> Option<CallSite> {
        if cs.is_new || self.res.origin(m, &cs.root).is_some() {
            return None;
        }
        let first_hop = cs.hops.first().copied().unwrap_or(cs.path.len());
        let shifted = |v: Val, i: usize| {
            let mut c = cs.clone();
            c.root = v;
            c.root_name = cs.path[i - 1].clone();
            c.path = cs.path[i..].to_vec();
            c.hops = cs.hops.iter().filter(|h| **h >= i).map(|h| h - i).collect();
            c
        };
        let mut v = cs.root.clone();
        // Inside an object a framework assembled (a tRPC resolver's `opts.ctx`), the first member
        // that is not part of it names the client when nothing shows what it is (`ctx.db`).
        let mut named: Option<(Val, usize)> = None;
        let mut assembled = matches!(self.res.resolve(m, &v), Resolved::Assembled(_));
        for i in 1..cs.path.len().min(first_hop + 1) {
            v = Val::Member(std::sync::Arc::new(v), cs.path[i - 1].clone());
            // (a getter handing out a client, read as a value before the chain calls anything:
            // `this.db.usersRepository.save(..)`; not one the chain calls, `this.knex('t')`)
            if self.res.origin(m, &v).is_some()
                || (i < first_hop && self.res.getter_of_package(m, &v))
            {
                return Some(shifted(v, i));
            }
            if assembled && named.is_none() {
                match self.res.resolve(m, &v) {
                    Resolved::Assembled(_) => {}
                    Resolved::Opaque => named = Some((v.clone(), i)),
                    _ => assembled = false,
                }
            }
        }
        named.map(|(v, i)| shifted(v, i))
    }

    /// The effects one call has by itself, from the catalogue and raw SQL.
    /// The effects of one call. `prepared`: the values a statement prepared by this call is run
    /// with further down its chain (`db.prepare(sql).run(name, url)`).
    pub fn effects_of(&self, m: ModId, cs: &CallSite, prepared: &[Val]) -> Vec<Effect> {
        let shifted;
        let cs = match self.client_in_path(m, cs) {
            Some(c) => {
                shifted = c;
                &shifted
            }
            None => cs,
        };
        let mut out = Vec::new();
        let origin = self.res.origin(m, &cs.root);
        let location = self.location(m, cs.line);
        // supabase-js's `rpc('fn', args)` (https://supabase.com/docs/reference/javascript/rpc)
        // runs a database function: what its body does.
        if let Some(name) = supabase_rpc(cs, origin.as_ref().map(|o| o.0.as_str()))
            && let Some((kind, upsert, relative)) = self.db_function_effect(&name)
        {
            out.push(Effect {
                kind,
                callee: cs.text.clone(),
                label: format!("database function `{name}`"),
                location,
                upsert,
                relative,
                ..Effect::default()
            });
            return out;
        }
        // `prisma.order.create` → `order`; `Order.create` → `Order`; `this.create` in a method of
        // class `Order` → `Order` (the caller may call it on a subclass: see `rebind_this`).
        let this_class = this_call(cs).map(|c| self.res.modules[m].classes[c].name.clone());
        // (`Order.create({..}).save()` writes what `Order.create` made: the model before it)
        let made_then_saved = cs
            .path
            .ends_with(&["create".to_string(), "save".to_string()]);
        let target = match cs.path.len() - usize::from(made_then_saved) {
            _ if this_class.is_some() => this_class.clone(),
            // Objection's `user.$relatedQuery('sessions').insert(..)`: the relation's rows (not
            // `relate`, which writes a join table's row or the related row's key)
            _ if !matches!(
                cs.path.last().map(String::as_str),
                Some("relate" | "unrelate")
            ) && let Some(relation) = objection_relation(&cs.callee, 0) =>
            {
                Some(relation)
            }
            0 => None,
            1 => Some(cs.root_name.clone()).filter(|r| !r.is_empty()),
            // Objection's `Person.query().insert(..)`, and `Person.query().whereIn('id',
            // ids).delete()` after any builder links: the model `query()` is called on.
            _ if objection_query(cs) == Some(0) => {
                Some(cs.root_name.clone()).filter(|r| !r.is_empty())
            }
            // `Database.collectionModel.create`: the model `collection`; `this.models.Entry
            // .query().where(..).delete()`: the model before `query()`.
            n => {
                let named = match objection_query(cs) {
                    Some(i) if i > 0 => &cs.path[i - 1],
                    _ => &cs.path[n - 2],
                };
                let bare = named
                    .strip_suffix("Model")
                    .filter(|b| !b.is_empty() && origin.is_none());
                Some(bare.unwrap_or(named).to_string())
            }
        };
        // A call that resolves to a project function (`this.pubsub.publish` on an injected
        // `PubSubService`) is followed into; its receiver's name says nothing of what it does.
        let by_name_ok = origin.is_none()
            && !cs.is_new
            && !matches!(self.res.resolve(m, &cs.callee), Resolved::Func(..));
        // A call matched by its receiver's name alone (`tx('users').insert(..)`) is first
        // matched against the sinks of the packages the module's manifests declare (Knex's, not
        // Drizzle's, in a project that depends on knex), then, if none of them matches, against
        // the others.
        let undeclared_skipped = std::cell::Cell::new(false);
        for sink in self
            .catalog
            .sinks
            .iter()
            .filter(|s| s.lang == crate::catalog::Lang::Ts)
            .map(|s| (s, true))
            .chain(
                std::iter::once(())
                    .filter(|_| undeclared_skipped.get())
                    .flat_map(|_| {
                        self.catalog
                            .sinks
                            .iter()
                            .filter(|s| s.lang == crate::catalog::Lang::Ts)
                            .map(|s| (s, false))
                    }),
            )
        {
            let (sink, declared_only) = sink;
            // A call named for moving money on a value of a package the catalogue does not
            // know (`wallet.withdraw(..)`): by that name alone, speculative.
            if sink.any_package {
                let named = cs
                    .path
                    .last()
                    .is_some_and(|l| sink.calls.iter().any(|p| p == l));
                if !declared_only || origin.is_none() || cs.is_new || !named {
                    continue;
                }
                out.push(Effect {
                    kind: sink.kind,
                    callee: cs.text.clone(),
                    label: sink.label.clone(),
                    location: location.clone(),
                    speculative: true,
                    sink_impact: sink.impact,
                    args: arg_fields(&cs.args, |v| self.encoded_body(m, v)),
                    made_args: made_fields(&cs.args).into(),
                    ..Effect::default()
                });
                break;
            }
            // The call as the package names it (a named import is its first segment).
            let mut package_call: Option<String> = None;
            let by_origin = origin
                .as_ref()
                .is_some_and(|(spec, _, _)| sink.origin_matches(spec));
            // The receiver named as the package's convention names it, as the chain's root
            // (`UserModel.create`) or as the member the method is called on
            // (`Database.collectionModel.create`, a model a getter hands out).
            let by_receiver =
                by_name_ok && cs.path.len() >= 2 && sink.root_matches(&cs.path[cs.path.len() - 2]);
            let by_name = by_receiver
                || ((by_name_ok || (origin.is_none() && cs.is_new))
                    && sink.root_matches(&cs.root_name));
            if !by_origin && !by_name {
                continue;
            }
            // (TypeORM 0.2's `getRepository(User).save(..)`, imported from the package: a
            // function that hands out the object)
            if sink.root_is_object
                && cs.hops.first() == Some(&0)
                && !(by_origin && REPOSITORY_GETTERS.contains(&cs.root_name.as_str()))
            {
                continue;
            }
            if declared_only
                && !by_origin
                && !sink.packages.is_empty()
                && !self.res.declares(m, &sink.packages)
            {
                // (the second pass, over the sinks of packages no manifest declares, only where
                // one of them could match the call)
                if cs.is_new
                    || this_class.is_some()
                    || sink.call_matches(&cs.path, &cs.hops).is_some()
                {
                    undeclared_skipped.set(true);
                }
                continue;
            }
            let matched = if cs.is_new {
                let name = origin
                    .as_ref()
                    .and_then(|(_, n, p)| p.last().cloned().or_else(|| n.clone()))
                    .unwrap_or_else(|| cs.root_name.clone());
                sink.constructs.contains(&name)
            } else {
                // The path from the package itself: a named import is its first segment
                // (`import { writeFile } from 'fs/promises'; writeFile(..)` → `writeFile`).
                let full: Vec<String> = origin
                    .as_ref()
                    .map(|(_, n, p)| {
                        n.iter()
                            .filter(|n| *n != "default")
                            .cloned()
                            .chain(p.iter().cloned())
                            .chain(cs.path.iter().cloned())
                            .collect()
                    })
                    .unwrap_or_default();
                let offset = full.len().saturating_sub(cs.path.len());
                // (a named import called itself is that export, never the package's default:
                // `import { parseCommandString } from 'execa'` is not `execa(..)`)
                let named_itself = cs.path.is_empty() && full.len() > cs.path.len();
                let full_hops: Vec<usize> = std::iter::once(offset)
                    .chain(cs.hops.iter().map(|h| h + offset))
                    .filter(|&h| !named_itself || h < full.len())
                    .collect();
                if full.len() > cs.path.len() {
                    package_call = Some(full.join("."));
                }
                (!named_itself && sink.call_matches(&cs.path, &cs.hops).is_some())
                    || (!full.is_empty() && sink.call_matches(&full, &full_hops).is_some())
                    // `this.save()` in a model's method: the method called on the model.
                    || (this_class.is_some()
                        && sink
                            .call_matches(std::slice::from_ref(&cs.root_name), &[])
                            .is_some())
            };
            let origin_path = origin.as_ref().map(|(_, _, p)| p.as_slice()).unwrap_or(&[]);
            if !matched || !sink.receiver_matches(origin_path) {
                continue;
            }
            let claims = |a: &Val| {
                option_given(a, &sink.claim_option)
                    || matches!(a, Val::Str(s) if sink.claim_option.iter().any(|o| o.eq_ignore_ascii_case(s)))
            };
            if !sink.claim_option.is_empty() && cs.args.iter().any(claims) {
                continue;
            }
            // A generic request (`axios.request(config)`) writes when its method is a mutation:
            // written in its options, or a parameter its callers pass.
            let method_param = match sink.write_method && !write_method(&cs.args) {
                false => None,
                true => match self.request_method(m, &cs.args) {
                    Some(r) => Some(Box::new(r)),
                    None => continue,
                },
            };
            // A GraphQL client's request writes when the document it sends is a mutation.
            if sink.graphql_mutation && !cs.args.iter().take(3).any(|a| self.graphql_mutation(m, a))
            {
                continue;
            }
            let last = match cs.path.last() {
                Some(l) => l.as_str(),
                None if this_class.is_some() => cs.root_name.as_str(),
                None => "",
            };
            // A conditional update that moves rows out of its own filter changes nothing when
            // run again, whatever its change does.
            let relative = (sink.kind == EffectKind::DbUpdate
                && (self.catalog.relative_update.calls.iter().any(|c| c == last)
                    || cs
                        .args
                        .iter()
                        .any(|a| has_key(a, &self.catalog.relative_update.keys, 0))
                    || cs.args.iter().any(|a| read_modify_write(a, 0)))
                && !crate::program::conditional_update(last, &cs.args))
                // A `save` of a row whose list was grown (TypeORM keeps a relation's rows in a
                // join table: a loaded row added again is kept once).
                || (cs.saves_grown == Some(false)
                    || cs.saves_grown == Some(true) && !sink.id.starts_with("typeorm"));
            let relative_fields = if relative {
                let mut fields = relative_fields(&cs.args, &self.catalog.relative_update.keys);
                fields.extend(redis_counter(last, &cs.args).filter(|_| sink.id == "redis-incr"));
                fields
            } else {
                Vec::new()
            };
            // `doc.save()` (no record argument) writes back an instance: a create only when the
            // instance was just made (`new Model(..)`, `Model.build(..)`), otherwise an update.
            // `this.save()` in a model's method: a loaded row's, unless the caller built it.
            let saves_this = this_class.is_some() && last == "save";
            // `repo.save(user)` with `user` a row a lookup returned (TypeORM's `save` updates an
            // entity that exists: `findOneOrFail(..)`, then fields set, then `save`).
            // So is `repo.save({ ...found, isPaused })` (or `manager.save(Workflow, { ...found,
            // .. })`): a copy of that row, its primary key with it, unless the literal clears the
            // key (`id: undefined`, a duplicate inserted).
            // (Also the rows of a lookup mapped or filtered: `found.map((j) => ({ ...j, at }))`.)
            let looked_up = |v: &Val| {
                // `Object.assign(found, body)` answers `found`
                let v = match v {
                    Val::Call(f, args)
                        if matches!(f.as_ref(), Val::Member(o, a)
                            if a == "assign" && matches!(o.as_ref(), Val::Global(g) if g == "Object")) =>
                    {
                        args.first().unwrap_or(v)
                    }
                    v => v,
                };
                let v = match v {
                    Val::Call(f, _) if matches!(f.as_ref(), Val::Member(_, m) if matches!(m.as_str(), "map" | "filter")) => {
                        match f.as_ref() {
                            Val::Member(rows, _) => rows.as_ref(),
                            _ => v,
                        }
                    }
                    v => v,
                };
                matches!(v, Val::Call(f, _)
                    if matches!(f.as_ref(), Val::Member(_, m) if self.catalog.is_lookup(m) || m.starts_with("find")))
            };
            // (`undefined` and `null` read as no value.)
            let clears_key = |i: usize| {
                matches!(cs.args.get(i), Some(Val::Obj(fields)) if fields.iter().any(|(k, v)| {
                    matches!(k.as_str(), "id" | "_id") && matches!(v, Val::Unknown)
                }))
            };
            // MikroORM's `em.persist(entity)`/`persistAndFlush(entity)` of an entity a lookup
            // returned flushes its changes: an update, as TypeORM's `save` of one is
            // (https://mikro-orm.io/docs/entity-manager#persist-and-flush).
            let persists =
                sink.id.starts_with("mikro-orm") && matches!(last, "persist" | "persistAndFlush");
            let saves_loaded = (last == "save" || persists)
                && (cs.args.iter().take(2).any(looked_up)
                    || cs
                        .spread_args
                        .iter()
                        .any(|(i, v)| looked_up(v) && !clears_key(*i)));
            let kind = if saves_this
                || sink.kind == EffectKind::DbCreate && saves_loaded
                || sink.kind == EffectKind::DbCreate
                && last == "save"
                && cs.args.iter().all(|a| matches!(a, Val::Obj(_) | Val::Unknown))
                && !cs.args.iter().any(|a| matches!(a, Val::Obj(f) if !f.is_empty() && !f.iter().any(|(k, _)| matches!(k.as_str(), "transaction" | "validate" | "session" | "fields" | "hooks"))))
                && !freshly_built(&cs.root)
                // TypeORM's `Entity.create({..})` / `repo.create({..})` makes an instance and
                // stores nothing (https://typeorm.io/docs/working-with-entity-manager/repository-api):
                // its `save()` inserts it, also in one chain (`Entity.create({..}).save()`).
                && !(sink.id.starts_with("typeorm")
                    && (made_then_saved
                        || matches!(&cs.root, Val::Call(f, _)
                            if matches!(f.as_ref(), Val::Member(_, c) if c == "create"))))
            {
                EffectKind::DbUpdate
            } else if sink.keyed
                && cs.args.first().is_some_and(crate::program::fresh_random)
                && !expires(last, &cs.args)
            {
                EffectKind::DbCreate
            } else {
                sink.kind
            };
            // TypeORM's `save` loads the entity by its primary key and updates it, or inserts it
            // when it is missing (https://typeorm.io/docs/working-with-entity-manager/repository-api):
            // given an id the request names (`manager.save(Audience, { id: audienceId, .. })`), a
            // repeat writes the same row. Not an id made for this call (`randomUUID()`).
            // So does one of an instance made here (`const device = new Device(); device.token =
            // body.token; repo.save(device)`) or a literal whose entity's primary key is a
            // natural one (`@PrimaryColumn() token`, not `@PrimaryGeneratedColumn()`), given
            // that key.
            let instance: Option<Vec<(String, Val)>> = (last == "save"
                && sink.id.starts_with("typeorm"))
            .then(|| {
                cs.args.iter().take(2).find_map(|a| match a {
                    Val::New(_, line) => Some(self.instance_fields(m, a, *line)),
                    _ => None,
                })
            })
            .flatten();
            let natural_key = if last == "save" && sink.id.starts_with("typeorm") {
                self.natural_primary_key(m, cs)
            } else {
                Vec::new()
            };
            let given = |fields: &[(String, Val)], key: &str| {
                fields
                    .iter()
                    .any(|(k, v)| k == key && !matches!(v, Val::Unknown) && !made_per_call(v))
            };
            let keyed_save = last == "save"
                && sink.id.starts_with("typeorm")
                && (cs.args.iter().take(2).any(|a| {
                    matches!(a, Val::Obj(f) if f.iter().any(|(k, v)| {
                        matches!(k.as_str(), "id" | "_id")
                            && !matches!(v, Val::Unknown)
                            && !made_per_call(v)
                    }))
                }) || !natural_key.is_empty()
                    && cs
                        .args
                        .iter()
                        .take(2)
                        .filter_map(|a| match a {
                            Val::Obj(f) => Some(f.as_slice()),
                            Val::New(..) => instance.as_deref(),
                            _ => None,
                        })
                        .any(|fields| natural_key.iter().all(|k| given(fields, k))));
            let upsert = sink.upsert
                || keyed_save
                || cs.args.iter().any(|a| option_given(a, &sink.upsert_option));
            let (per_call, unless_missing) = if upsert {
                Self::keyed_per_call(cs)
            } else {
                (false, false)
            };
            // `doc.save(cb)` of a document built with `new Model({..})`: the record it was
            // built with is what the create writes.
            let built: Option<Vec<(String, Val)>> =
                (kind == EffectKind::DbCreate && last == "save" && freshly_built(&cs.root))
                    .then(|| self.built_record(m, &cs.root).cloned())
                    .flatten()
                    .or_else(|| {
                        (kind == EffectKind::DbCreate && made_then_saved)
                            .then(|| self.chained_record(m, cs))
                            .flatten()
                    })
                    .or(instance.filter(|_| kind == EffectKind::DbCreate));
            let label = if sink.label.is_empty() {
                &sink.id
            } else {
                &sink.label
            };
            out.push(Effect {
                kind,
                on_this: this_class.is_some(),
                saves_this,
                callee: cs.text.clone(),
                package_call,
                // A create sink's `save()` that writes back a loaded instance.
                label: if kind == EffectKind::DbCreate && kind != sink.kind {
                    format!("{label} under a key made per call")
                } else if kind != sink.kind {
                    "save of a loaded instance".into()
                } else {
                    per_call_label(label, per_call, unless_missing)
                },
                location: location.clone(),
                upsert: upsert && !per_call,
                upsert_unless_missing: unless_missing,
                reads_then_writes: keyed_save && !sink.upsert,
                relative,
                relative_fields,
                target: target.clone(),
                data_keys: match &built {
                    Some(fields) => Some(repeated_keys(fields)),
                    None => Self::data_keys(cs),
                },
                data_param: Self::record_params(m, cs).0.filter(|_| built.is_none()),
                made_keys: made_keys(Self::record(cs).filter(|_| built.is_none())),
                update_param: (kind == EffectKind::DbUpdate && !relative)
                    .then(|| {
                        // (or the values spread from one: `.set({ ...updatableUser, updatedAt })`)
                        update_param(m, &cs.args)
                            .or_else(|| cs.spread_args.iter().find_map(|(_, v)| param_ref(m, v)))
                    })
                    .flatten(),
                // (or the whole argument object, handed on by a client wrapper: `createRefund(params)
                // { return this.stripe.refunds.create(params) }`)
                spread_param: cs
                    .spread_args
                    .iter()
                    .find_map(|(_, v)| param_ref(m, v))
                    .or_else(|| {
                        cs.args
                            .first()
                            .filter(|_| sink.kind == EffectKind::Payment)
                            .and_then(|a| param_ref(m, a))
                    })
                    .map(Box::new),
                made_args: made_fields(&cs.args).into(),
                key_params: match &built {
                    Some(fields) => key_params(m, fields),
                    None => Self::record_params(m, cs).1,
                },
                downstream_key: (!sink.idempotency_option.is_empty())
                    .then(|| self.downstream_key(cs, &sink.idempotency_option)),
                deduplicated: !sink.dedup_option.is_empty()
                    && cs
                        .args
                        .iter()
                        .any(|a| self.has_stable_key(m, a, &sink.dedup_option, 0)),
                dedup_param: if sink.dedup_option.is_empty() {
                    None
                } else {
                    key_param_of_call(&cs.args, &sink.dedup_option)
                },
                sink_impact: sink.impact,
                args: arg_fields(&cs.args, |v| self.encoded_body(m, v)),
                url: call_url(cs),
                method_param,
                url_param: call_url(cs)
                    .is_none()
                    .then(|| url_arg(cs).and_then(|v| param_ref(m, &v)))
                    .flatten()
                    .map(Box::new),
                ..Effect::default()
            });
            break;
        }
        // A statement built before the call, its table or columns filled in
        // (`const query = \`INSERT INTO ${tableName} (${columns}) VALUES (..)\`;
        // execute(query, values)`): read as written, the holes standing for what they hold.
        let built = match (&cs.literal, cs.args.first()) {
            (None, Some(t @ Val::Template(_))) => {
                crate::program::sql_text(t).filter(|text| crate::sql::starts_with_write(text))
            }
            _ => None,
        };
        if out.is_empty()
            && let Some(literal) = cs.literal.as_ref().or(built.as_ref())
        {
            // A tagged template (`sql\`insert into t (a) values (${x})\``): its text with the
            // interpolations as `$1`, `$2`, .., and those interpolations as the bound values.
            let tagged = match cs.args.first() {
                Some(t @ Val::Template(pieces)) if built.is_none() => crate::program::sql_text(t)
                    .map(|text| {
                        let binds: Vec<Val> = pieces
                            .iter()
                            .filter(|p| !matches!(p, Val::Str(_)))
                            .cloned()
                            .collect();
                        (text, binds)
                    }),
                _ => None,
            };
            let sql: &String = tagged.as_ref().map_or(literal, |(t, _)| t);
            let last = cs
                .path
                .last()
                .map(String::as_str)
                .unwrap_or(cs.root_name.as_str());
            let is_sql_call = self.catalog.sql.calls.iter().any(|c| c == last)
                || self.catalog.sql.tags.iter().any(|t| t == last);
            // (or a database function it calls: `SELECT top_up($1, $2)`)
            let function = match is_sql_call.then(|| classify_sql(sql)).flatten() {
                Some(_) => None,
                None if is_sql_call => self.sql_function_effect(sql),
                None => None,
            };
            if let Some((kind, upsert, relative)) = is_sql_call
                .then(|| classify_sql(sql))
                .flatten()
                .or(function.as_ref().map(|(_, e)| *e))
            {
                // an upsert matched on a value made per call (`[req.body.id || uuidv4(), name]`)
                // matches nothing on a retry
                let values: &[Val] = match (&tagged, cs.args.get(1)) {
                    (Some((_, binds)), _) => binds,
                    (None, Some(Val::Arr(items))) => items,
                    (None, None) if !prepared.is_empty() => prepared,
                    _ => cs.args.get(1..).unwrap_or(&[]),
                };
                let matched: Vec<&Val> = crate::sql::sql_conflict_binds(sql)
                    .into_iter()
                    .filter_map(|i| values.get(i))
                    .collect();
                let (per_call, unless_missing) = if upsert {
                    per_call_match(&matched)
                } else {
                    (false, false)
                };
                let upsert = upsert && !per_call;
                // A statement built at run time whose conflict clause is a hole (`INSERT
                // ${replace ? 'OR REPLACE' : ''} INTO ..`, `ON CONFLICT (${primaryKey})`):
                // whether a repeat writes the same row or a second one is not known.
                let open_conflict = built.is_some()
                    && kind == EffectKind::DbCreate
                    && crate::sql::open_conflict(sql);
                let (upsert, per_call) = if open_conflict {
                    (false, false)
                } else {
                    (upsert, per_call)
                };
                // postgres.js's dynamic insert (`insert into t ${sql(row)}`, `${sql(row, 'a',
                // 'b')}`): the row's keys are the columns, its values what they get
                let helper_row = (kind == EffectKind::DbCreate)
                    .then(|| dynamic_insert_row(sql, values))
                    .flatten();
                // the columns the insert writes with values a retry sends again
                let data_keys = match &helper_row {
                    Some(row) => Some(repeated_keys(row)),
                    None => (kind == EffectKind::DbCreate)
                        .then(|| {
                            crate::sql::sql_inserted_keys(sql, |i| {
                                values.get(i).is_some_and(made_per_call)
                            })
                        })
                        .flatten(),
                };
                // the columns bound to the function's parameters: the request's, where the
                // endpoint's handler is the function they lead to
                let key_params = if let Some(row) = &helper_row {
                    row.iter()
                        .filter(|(_, v)| !made_per_call(v))
                        .filter_map(|(k, v)| Some((k.clone(), param_ref(m, v)?)))
                        .collect()
                } else if kind == EffectKind::DbCreate {
                    crate::sql::sql_insert_binds(sql)
                        .into_iter()
                        .filter_map(|(column, i)| {
                            let v = values.get(i).filter(|v| !made_per_call(v))?;
                            Some((column, param_ref(m, v)?))
                        })
                        .collect()
                } else {
                    vec![]
                };
                // (a base model's `${this.table}`: named where a caller names the class)
                let of_this = this_table(sql, cs.args.first());
                out.push(Effect {
                    data_keys,
                    key_params,
                    // As the Rust front end reads raw SQL: the constants an `UPDATE` sets, and
                    // an `INSERT .. WHERE NOT EXISTS` that inserts only what is missing.
                    find_or_create: kind == EffectKind::DbCreate
                        && crate::sql::sql_inserts_if_absent(sql),
                    update_keys: if kind == EffectKind::DbUpdate {
                        crate::sql::sql_set_values(sql)
                    } else {
                        vec![]
                    },
                    kind,
                    callee: cs.text.clone(),
                    label: if open_conflict {
                        crate::sql::OPEN_CONFLICT.into()
                    } else if let Some((name, _)) = &function {
                        format!("database function `{name}`")
                    } else {
                        per_call_label("raw SQL", per_call, unless_missing)
                    },
                    sink_impact: open_conflict.then_some(crate::facts::Impact::Unknown),
                    location,
                    upsert,
                    upsert_unless_missing: unless_missing,
                    relative,
                    shifts_range: relative && crate::sql::sql_shifts_range(sql),
                    fixed_keys: if kind == EffectKind::DbCreate {
                        crate::sql::sql_insert_constants(sql, |i| {
                            matches!(values.get(i), Some(Val::Str(_) | Val::Bool(_)))
                        })
                    } else {
                        vec![]
                    },
                    target: if function.is_some() {
                        None
                    } else {
                        sql_table(sql).or_else(|| of_this.clone())
                    },
                    on_this: function.is_none() && sql_table(sql).is_none() && of_this.is_some(),
                    ..Effect::default()
                });
            }
        }
        out
    }

    /// A supabase-js `rpc('fn')` whose function the project's SQL does not define: what it does
    /// is not known.
    fn unread_rpc(&self, m: ModId, cs: &CallSite) -> Option<String> {
        let origin = self.res.origin(m, &cs.root);
        let name = supabase_rpc(cs, origin.as_ref().map(|o| o.0.as_str()))?;
        (!self.db_functions.contains_key(&name)).then_some(name)
    }
}

/// What database function `name` does (see [`Calls::with_db_functions`]), memoised in `memo`
/// (a function being judged counts as writing nothing there, so a cycle ends).
fn db_function_effect(
    bodies: &HashMap<&str, &str>,
    name: &str,
    depth: usize,
    memo: &mut HashMap<String, Option<(EffectKind, bool, bool)>>,
) -> Option<(EffectKind, bool, bool)> {
    if let Some(known) = memo.get(name) {
        return *known;
    }
    let body = bodies.get(name)?;
    if depth > 2 {
        return None;
    }
    memo.insert(name.to_string(), None);
    let rank = |(kind, upsert, relative): (EffectKind, bool, bool)| match kind {
        EffectKind::DbCreate if !upsert => 3,
        EffectKind::DbUpdate if relative => 2,
        _ => 1,
    };
    let mut best: Option<(EffectKind, bool, bool)> = None;
    for stmt in body.split(';').take(256) {
        let found = classify_sql(stmt).or_else(|| {
            crate::sql::called_functions(stmt)
                .iter()
                .filter(|f| f.as_str() != name)
                .find_map(|f| db_function_effect(bodies, f, depth + 1, memo))
        });
        if let Some(c) = found
            && best.is_none_or(|b| rank(c) > rank(b))
        {
            best = Some(c);
        }
    }
    memo.insert(name.to_string(), best);
    best
}

/// The database function a supabase-js `rpc('fn', ..)` call runs, lower-cased.
fn supabase_rpc(cs: &CallSite, origin: Option<&str>) -> Option<String> {
    if cs.path.last().map(String::as_str) != Some("rpc") {
        return None;
    }
    let supabase = origin.is_some_and(|spec| spec.starts_with("@supabase/"))
        || cs.root_name.to_ascii_lowercase().contains("supabase");
    match cs.args.first() {
        Some(Val::Str(name)) if supabase => Some(name.to_ascii_lowercase()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graphql_documents_operation_is_its_first_definitions() {
        assert_eq!(
            graphql_operation(
                "mutation CreateTransfer($i: In!) { createTransfer(input: $i) { id } }"
            ),
            Some("mutation")
        );
        assert_eq!(
            graphql_operation("# a comment\n  query GetBalance { balance }"),
            Some("query")
        );
        assert_eq!(graphql_operation("{ viewer { id } }"), Some("query"));
        // fragments written first are skipped over, nested selections included
        assert_eq!(
            graphql_operation(
                "fragment F on T { a { b } }\nfragment G on T { c }\nmutation M { m { ...F } }"
            ),
            Some("mutation")
        );
        assert_eq!(
            graphql_operation("subscription S { s }"),
            Some("subscription")
        );
        assert_eq!(graphql_operation("select * from users"), None);
        assert_eq!(graphql_operation("fragment F on T { a "), None);
    }

    fn effect(kind: EffectKind, upsert: bool, line: u32) -> Effect {
        Effect {
            kind,
            upsert,
            callee: format!("c{line}"),
            location: Location::new("a.ts", line),
            ..Effect::default()
        }
    }

    #[test]
    fn a_dynamic_insert_names_its_columns() {
        use std::sync::Arc;
        let helper = |args: Vec<Val>| Val::Call(Arc::new(Val::Global("sql".into())), args);
        let row = Val::Obj(vec![
            ("email".into(), Val::Str("a@b.c".into())),
            ("role".into(), Val::Unknown),
        ]);
        let keys = |sql: &str, values: &[Val]| {
            dynamic_insert_row(sql, values)
                .map(|r| r.into_iter().map(|(k, _)| k).collect::<Vec<_>>())
        };
        assert_eq!(
            keys(
                "insert into account $1 returning *",
                &[helper(vec![row.clone()])]
            ),
            Some(vec!["email".to_string(), "role".to_string()])
        );
        // only the columns named after the row
        assert_eq!(
            keys(
                "INSERT INTO account $1",
                &[helper(vec![row.clone(), Val::Str("email".into())])]
            ),
            Some(vec!["email".to_string()])
        );
        // an array of rows inserts each
        assert_eq!(
            keys(
                "insert into account $1",
                &[helper(vec![Val::Arr(vec![row.clone()])])]
            ),
            Some(vec!["email".to_string(), "role".to_string()])
        );
        // a column list, a value that is no helper call, odd placeholders: not this form
        assert_eq!(
            keys(
                "insert into account (email) values ($1)",
                std::slice::from_ref(&row)
            ),
            None
        );
        assert_eq!(
            keys("insert into account $1", std::slice::from_ref(&row)),
            None
        );
        assert_eq!(
            keys("insert into account $0", &[helper(vec![row.clone()])]),
            None
        );
        assert_eq!(keys("insert into account $9", &[helper(vec![row])]), None);
        assert_eq!(keys("insert into", &[]), None);
    }

    #[test]
    fn validation_hands_back_what_it_validated() {
        use std::sync::Arc;
        let body = Val::Member(Arc::new(Val::Param(3, 0)), "body".into());
        let schema = Val::Call(
            Arc::new(Val::Member(
                Arc::new(Val::Global("z".into())),
                "object".into(),
            )),
            vec![Val::Obj(vec![(
                "id".into(),
                Val::Call(
                    Arc::new(Val::Member(
                        Arc::new(Val::Global("z".into())),
                        "uuid".into(),
                    )),
                    vec![],
                ),
            )])],
        );
        let parsed = Val::Call(
            Arc::new(Val::Member(Arc::new(schema), "parse".into())),
            vec![body],
        );
        let email = Val::Member(Arc::new(parsed), "email".into());
        let r = param_ref(0, &email).expect("the request's");
        assert_eq!(
            (r.index, r.path.clone()),
            (0, vec!["body".to_string(), "email".to_string()])
        );
        assert!(!made_per_call(&email));
    }

    #[test]
    fn a_chain_ending_in_an_upsert_is_one_upsert() {
        // insert(t) (inner call) then .onConflictDoNothing() (outer) in group 7; a plain create in group 9.
        let own = vec![
            (7, effect(EffectKind::DbCreate, false, 3)),
            (7, effect(EffectKind::DbCreate, true, 3)),
            (9, effect(EffectKind::DbCreate, false, 5)),
        ];
        let merged = merge_chains(own);
        assert_eq!(merged.len(), 2);
        assert!(merged.iter().any(|e| e.upsert && e.location.line == 3));
        assert!(merged.iter().any(|e| !e.upsert && e.location.line == 5));
    }

    #[test]
    fn what_is_computed_from_a_random_value_is_fresh() {
        let import = |spec: &str, name: &str| Val::Import {
            spec: spec.into(),
            name: Some(name.into()),
        };
        let call = |f: Val, args: Vec<Val>| Val::Call(std::sync::Arc::new(f), args);
        let member = |v: Val, n: &str| Val::Member(std::sync::Arc::new(v), n.into());
        let random = call(import("node:crypto", "randomBytes"), vec![]);
        // sha256(`${raw}:${pepper}`)
        let hashed = call(
            member(
                call(
                    member(call(import("node:crypto", "createHash"), vec![]), "update"),
                    vec![Val::Template(vec![random.clone(), Val::Unknown])],
                ),
                "digest",
            ),
            vec![Val::Str("hex".into())],
        );
        assert!(fresh_random(&hashed));
        // decode(sign({ jti: randomUUID() })).jti
        let signed = call(
            import("jsonwebtoken", "sign"),
            vec![Val::Obj(vec![(
                "jti".into(),
                call(import("node:crypto", "randomUUID"), vec![]),
            )])],
        );
        assert!(fresh_random(&member(
            call(import("jsonwebtoken", "decode"), vec![signed]),
            "jti"
        )));
        // A name-based uuid of the caller's input, and what a read returns, are not.
        assert!(!fresh_random(&call(
            import("uuid", "v5"),
            vec![Val::Param(0, 0), Val::Str("ns".into())]
        )));
        let found = call(
            member(member(Val::Global("prisma".into()), "user"), "findFirst"),
            vec![Val::Obj(vec![(
                "where".into(),
                Val::Obj(vec![("since".into(), random)]),
            )])],
        );
        assert!(!fresh_random(&member(found, "id")));
        // A field of the request named like a token is the caller's, and so is what is computed
        // from it; a row a write returns is the stored row.
        let body_token = member(member(Val::Param(0, 0), "body"), "token");
        assert!(!fresh_random(&body_token));
        assert!(!fresh_random(&call(
            member(call(import("node:crypto", "createHash"), vec![]), "update"),
            vec![body_token]
        )));
        let paid = call(
            member(member(Val::Global("prisma".into()), "order"), "update"),
            vec![Val::Obj(vec![(
                "data".into(),
                Val::Obj(vec![(
                    "paidAt".into(),
                    call(member(Val::Global("Date".into()), "now"), vec![]),
                )]),
            )])],
        );
        assert!(!fresh_random(&member(paid, "id")));
        assert!(!fresh_random(&Val::Template(vec![Val::Param(0, 1)])));
    }

    #[test]
    fn sql_tables() {
        assert_eq!(
            sql_table("INSERT INTO public.orders (a) VALUES ($1)"),
            Some("orders".into())
        );
        assert_eq!(
            sql_table("update \"Users\" set name = $1"),
            Some("users".into())
        );
        assert_eq!(
            sql_table("DELETE FROM sessions WHERE id = $1"),
            Some("sessions".into())
        );
    }

    #[test]
    fn sql_kinds() {
        assert_eq!(
            classify_sql("INSERT INTO t (a) VALUES ($1)"),
            Some((EffectKind::DbCreate, false, false))
        );
        assert_eq!(
            classify_sql("insert into t (a) values ($1) on conflict do nothing"),
            Some((EffectKind::DbCreate, true, false))
        );
        assert_eq!(
            classify_sql("UPDATE accounts SET balance = balance + $1 WHERE id = $2"),
            Some((EffectKind::DbUpdate, false, true))
        );
        assert_eq!(
            classify_sql("UPDATE users SET name = $1 WHERE id = $2"),
            Some((EffectKind::DbUpdate, false, false))
        );
        // a string or array appended to itself: a repeat appends again
        for sql in [
            "UPDATE orders SET note = note || $2 WHERE id = $1",
            "UPDATE orders SET note=note||$2 WHERE id = $1",
            "UPDATE posts SET tags = array_append(tags, $1) WHERE id = $2",
            "UPDATE t SET log = CONCAT(log, ?) WHERE id = ?",
        ] {
            assert_eq!(
                classify_sql(sql),
                Some((EffectKind::DbUpdate, false, true)),
                "{sql}"
            );
        }
        // a JSON object merged into a `jsonb` column: the same value however often
        for sql in [
            "UPDATE datasets SET server_configuration = server_configuration || '{\"a\": 1}' WHERE id = $1",
            "UPDATE t SET meta = meta || $1::jsonb WHERE id = $2",
        ] {
            assert_eq!(
                classify_sql(sql),
                Some((EffectKind::DbUpdate, false, false)),
                "{sql}"
            );
        }
        // an append to the column the `WHERE` matches by equality moves the row out of it
        assert_eq!(
            classify_sql(
                "UPDATE tenant SET tenant = tenant || ' (' || id || ')' WHERE tenant = $1 AND id <> $2"
            ),
            Some((EffectKind::DbUpdate, false, false))
        );
        // (a column concatenated from others is set, not moved)
        assert_eq!(
            classify_sql("UPDATE users SET name = first || ' ' || last WHERE id = $1"),
            Some((EffectKind::DbUpdate, false, false))
        );
        assert_eq!(
            classify_sql("-- note\nDELETE FROM t WHERE id = 1"),
            Some((EffectKind::DbDelete, false, false))
        );
        for sql in [
            "INSERT OR IGNORE INTO meta (module, key1) VALUES ($1, $2)",
            "insert or replace into meta (module, key1) values (?, ?)",
            "INSERT IGNORE INTO tags (name) VALUES (?)",
            "REPLACE INTO tags (name) VALUES (?)",
        ] {
            assert_eq!(
                classify_sql(sql),
                Some((EffectKind::DbCreate, true, false)),
                "{sql}"
            );
        }
        assert_eq!(classify_sql("SELECT * FROM t"), None);
        // a flip undoes itself on a repeat
        for sql in [
            "UPDATE flags SET enabled = NOT enabled WHERE id = $1",
            r#"UPDATE "Users" SET email = CASE WHEN email = 'inactive' THEN 'active' ELSE 'inactive' END WHERE username = 'guest'"#,
        ] {
            assert_eq!(
                classify_sql(sql),
                Some((EffectKind::DbUpdate, false, true)),
                "{sql}"
            );
        }
        // a `CASE` on another column sets an absolute value
        assert_eq!(
            classify_sql("UPDATE t SET status = CASE WHEN paid THEN 'done' ELSE 'open' END"),
            Some((EffectKind::DbUpdate, false, false))
        );
    }
}

#[cfg(test)]
mod random_tests {
    use super::*;

    #[test]
    fn signature_checks_by_name() {
        for name in [
            "validSNSSignature",
            "verifyWebhookSignature",
            "verifyWebhook",
            "isValidHmac",
            "check_signature",
            "validateWebhookMiddleware",
        ] {
            assert!(looks_like_signature_check(name), "{name}");
        }
        for name in [
            "validateWebhookUrl",
            "signPayload",
            "verifyEmail",
            "createSignature",
        ] {
            assert!(!looks_like_signature_check(name), "{name}");
        }
    }

    #[test]
    fn values_made_per_request_are_not_the_callers() {
        let uuid = Val::Call(
            std::sync::Arc::new(Val::Import {
                spec: "node:crypto".into(),
                name: Some("randomUUID".into()),
            }),
            vec![],
        );
        let bytes = Val::Call(
            std::sync::Arc::new(Val::Member(
                std::sync::Arc::new(Val::Call(
                    std::sync::Arc::new(Val::Member(
                        std::sync::Arc::new(Val::Import {
                            spec: "crypto".into(),
                            name: None,
                        }),
                        "randomBytes".into(),
                    )),
                    vec![],
                )),
                "toString".into(),
            )),
            vec![],
        );
        assert!(fresh_random(&uuid));
        assert!(fresh_random(&bytes));
        // `import { v4, v5 } from 'uuid'`: v4 is random, v5 of an event id is the event's.
        let uuid_fn = |name: &str| {
            Val::Call(
                std::sync::Arc::new(Val::Import {
                    spec: "uuid".into(),
                    name: Some(name.into()),
                }),
                vec![Val::Member(
                    std::sync::Arc::new(Val::Param(1, 0)),
                    "id".into(),
                )],
            )
        };
        assert!(fresh_random(&uuid_fn("v4")));
        assert!(!fresh_random(&uuid_fn("v5")));
        // `import * as uuid from 'uuid'; uuid.v5(..)`
        assert!(!fresh_random(&Val::Call(
            std::sync::Arc::new(Val::Member(
                std::sync::Arc::new(Val::Import {
                    spec: "uuid".into(),
                    name: None,
                }),
                "v5".into(),
            )),
            vec![],
        )));
        assert!(!fresh_random(&Val::Member(
            std::sync::Arc::new(Val::Param(1, 0)),
            "email".into()
        )));
    }
}
