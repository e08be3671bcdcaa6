//! Route registration for axum, actix-web and rocket, by a small abstract interpreter over the
//! functions that build routers.
//!
//! Routers are handles into an arena, so builder calls mutate them in place whether the code
//! chains (`Router::new().route(..)`), rebinds (`let app = app.route(..)`) or passes a `&mut
//! ServiceConfig` to another crate. Nesting copies a child's routes into its parent with the
//! prefix and marks the child consumed; what is never consumed is a root. Every function that
//! builds routes is evaluated on its own; a function that another one calls is evaluated again
//! in that call (with its arguments) and its own evaluation yields no roots.

use super::consts;
use super::ir::*;
use super::model::{FnId, ImplId, ModId, Model, Res};
use super::parse::{self, FOR_ITEM, is_openapi_path};
use crate::config::Config;
use crate::facts::Diagnostic;
use std::collections::{BTreeSet, HashMap, HashSet};

mod loco;
mod salvo;
mod warp;

/// A function or closure that handles requests (or runs as middleware).
#[derive(Debug, Clone)]
pub enum Handler<'a> {
    Fn(FnId),
    /// `env` indexes the variables the closure captured where it was written.
    Closure {
        module: ModId,
        imp: Option<ImplId>,
        ex: &'a Ex,
        env: usize,
    },
    Named(String),
}

/// A middleware applied to routes: `from_fn(f)`, `wrap(Type::new())`, `attach(Fairing)`, or a
/// value from an external crate.
#[derive(Debug, Clone)]
pub enum Mw<'a> {
    Handler(Handler<'a>),
    Type(Res),
    Ext(Vec<String>),
}

#[derive(Debug, Clone)]
pub struct MwAt<'a> {
    pub mw: Mw<'a>,
    pub module: ModId,
    pub line: Line,
}

#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub method: String,
    pub path: String,
    pub framework: &'static str,
    pub module: ModId,
    pub line: Line,
    pub handler: Handler<'a>,
    pub middleware: Vec<MwAt<'a>>,
    /// False when part of the path could not be read (a prefix with a runtime part, a route
    /// nothing registers): `path` is the part that is known.
    pub path_complete: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Axum,
    ActixApp,
    ActixScope,
    ActixResource,
    ActixConfig,
    Rocket,
    /// poem's `Route` (and an `OpenApiService`, which is one endpoint tree).
    Poem,
    /// salvo's `Router`: `prefix` is its path filter.
    Salvo,
    /// loco's `Routes` (a controller's) and `AppRoutes` (the app's).
    Loco,
    LocoApp,
    /// What `warp::serve(filter)` serves.
    Warp,
}

#[derive(Debug)]
struct RouterData<'a> {
    kind: Kind,
    prefix: String,
    /// False when `prefix` could not be read wholly.
    prefix_complete: bool,
    entries: Vec<Entry<'a>>,
    /// actix `wrap` and rocket `attach`: they cover every route of the router, added before or
    /// after.
    pending: Vec<MwAt<'a>>,
    /// actix `resource(..).guard(guard::Post())`.
    methods: Vec<String>,
    /// loco `AppRoutes::prefix`: the prefix of the routes added after it, and whether it was read
    /// wholly.
    add_prefix: (String, bool),
    module: ModId,
    line: Line,
    consumed: bool,
    /// A poem-openapi service seen only making its document (`OpenApiService::new(..).spec()` in
    /// a schema-dump binary): not served, so not a root. Cleared when it is passed on, returned
    /// or used as an endpoint.
    docs_only: bool,
    /// Made for a parameter of the function evaluated on its own (`fn extend(scope: Scope) ->
    /// Scope`): the router a caller gives, under whatever prefix that caller adds.
    given: bool,
}

#[derive(Debug, Clone)]
struct MethodRoute<'a> {
    method: String,
    handler: Handler<'a>,
    module: ModId,
    line: Line,
    middleware: Vec<MwAt<'a>>,
}

#[derive(Debug, Clone)]
enum V<'a> {
    Unknown,
    Str(String),
    Methods(Vec<String>),
    Handle(usize),
    Func(Handler<'a>),
    /// A value of a known type: `Type::new(..)`, `Type { .. }`, a unit struct; with the fields a
    /// struct literal gave it (`Options { mounts, cfg }`).
    Instance(Res, Vec<(String, V<'a>)>),
    Ext(Vec<String>),
    /// axum `post(a).get(b)`.
    MethodRouter(Vec<MethodRoute<'a>>),
    /// actix `web::post().to(h)`.
    ActixRoute {
        methods: Vec<String>,
        handler: Option<Handler<'a>>,
    },
    List(Vec<V<'a>>),
    /// A warp filter.
    Filter(Box<warp::Filter<'a>>),
}

const METHODS: &[&str] = &[
    "get", "post", "put", "patch", "delete", "head", "options", "trace", "connect",
];
/// How a route that answers every method (axum `any`, an actix-web route with no method guard,
/// salvo `goal`, a warp filter with no method filter) is listed: once, as `POST`. Its handler runs
/// the same code whatever the method, so one entry says what a retry does (as in TypeScript).
const ANY_METHOD: &[&str] = &["POST"];
const MAX_CALL_DEPTH: usize = 16;

/// A format string's pieces: its text as strings, each `{..}` an unknown.
fn format_parts<'a>(f: &str) -> V<'a> {
    V::List(
        consts::format_pieces(f)
            .into_iter()
            .map(|p| match p {
                consts::Piece::Text(t) => V::Str(t),
                consts::Piece::Hole(_) => V::Unknown,
            })
            .collect(),
    )
}

/// Services that answer reads only: files (tower-http, axum-embed, memory-serve) and a
/// websocket upgrade (GraphQL subscriptions).
const STATIC_SERVICES: &[&str] = &[
    "GraphQLSubscription",
    "ServeDir",
    "ServeFile",
    "ServeEmbed",
    "MemoryServe",
    "SpaRouter",
];
/// A service built from one that answers reads only (`ServeDir::new(dist)
/// .not_found_service(ServeFile::new(index))`): the chain's first call names it.
fn names_static_service(e: &Ex) -> bool {
    let mut cur = e;
    for _ in 0..64 {
        cur = match cur {
            Ex::Method(recv, ..) => recv,
            Ex::Call(f, ..) => f,
            Ex::Path(p, _) => return p.iter().any(|s| STATIC_SERVICES.contains(&s.as_str())),
            _ => return false,
        };
    }
    false
}

/// Items of a known list a `for` loop's body is evaluated for.
const MAX_LOOP_ITEMS: usize = 64;

struct Frame<'a> {
    module: ModId,
    imp: Option<ImplId>,
    vars: HashMap<String, V<'a>>,
    /// `use`s written in the body (`let router = { use super::graphql; .. }`): alias and path.
    uses: Vec<(String, Vec<String>)>,
    /// In a `macro_rules!` body expanded elsewhere: the module it is expanded in, where a path
    /// the defining module does not know is looked up (as the compiler resolves it there).
    site: Option<ModId>,
}

pub struct Routes<'m, 'a> {
    model: &'m Model<'a>,
    arena: Vec<RouterData<'a>>,
    stack: Vec<FnId>,
    /// Functions and closures being evaluated, innermost last (bounded by `MAX_CALL_DEPTH`).
    depth: usize,
    /// What each closure captured: its defining frame's variables when it was made, and the
    /// module the `macro_rules!` body it is written in was expanded in (see [`Frame::site`]).
    envs: Vec<(HashMap<String, V<'a>>, Option<ModId>)>,
    callees: HashSet<FnId>,
    /// `macro_rules!` bodies being expanded (defining module, line): met again, a recursion.
    macros_open: Vec<(ModId, Line)>,
    /// Functions whose route attributes were registered somewhere.
    registered: HashSet<FnId>,
    steps: usize,
    diagnostics: BTreeSet<Diagnostic>,
    /// The prefixes `[[mount]]` in retrysafe.toml gives prefixes known only at run time.
    config: &'m Config,
}

/// Evaluation steps allowed for one root function (a guard against pathological code).
const MAX_STEPS: usize = 200_000;

/// `:id` / `{id}` / `<id>` / `*rest` / `<rest..>` / `{id:\d+}` → `{id}`; a query part is dropped.
/// A parameter's pattern may hold `/`, `?` and braces (actix `{uid:[0-9]{1,10}}`, `{tail:.*}`):
/// the path is split, and its query found, outside braces only.
pub fn normalize_path(path: &str) -> String {
    let path = &path[..outside_braces(path, '?')
        .first()
        .copied()
        .unwrap_or(path.len())];
    let mut out = Vec::new();
    let mut start = 0;
    let cuts = outside_braces(path, '/');
    for end in cuts.into_iter().chain([path.len()]) {
        let seg = &path[start..end];
        start = end + 1;
        if seg.is_empty() {
            continue;
        }
        let s = if let Some(n) = seg.strip_prefix(':') {
            format!("{{{n}}}")
        } else if let Some(n) = seg.strip_prefix('*') {
            format!("{{{}}}", if n.is_empty() { "wildcard" } else { n })
        } else if seg.starts_with('<') && seg.ends_with('>') {
            // rocket `<id>`, `<path..>`; the older salvo `<id:num>`, `<**rest>`
            format!("{{{}}}", param_name(&seg[1..seg.len() - 1]))
        } else {
            // `{id}`, actix `{id:\d+}`, salvo `{id|\d+}`, `{**rest}`, and such parameters inside
            // a segment (`{name:[a-z]+}.json`)
            let mut text = String::new();
            let mut depth = 0usize;
            let mut inner = String::new();
            for c in seg.chars() {
                match c {
                    '{' => {
                        if depth > 0 {
                            inner.push(c);
                        }
                        depth += 1;
                    }
                    '}' if depth > 0 => {
                        depth -= 1;
                        if depth == 0 {
                            text.push_str(&format!("{{{}}}", param_name(&inner)));
                            inner.clear();
                        } else {
                            inner.push(c);
                        }
                    }
                    c if depth > 0 => inner.push(c),
                    c => text.push(c),
                }
            }
            if depth > 0 {
                // an unclosed brace: kept as written
                seg.to_string()
            } else {
                text
            }
        };
        out.push(s);
    }
    format!("/{}", out.join("/"))
}

/// The byte offsets of `c` outside `{..}` groups.
fn outside_braces(text: &str, c: char) -> Vec<usize> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    for (i, ch) in text.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ if ch == c && depth == 0 => out.push(i),
            _ => {}
        }
    }
    out
}

/// A path parameter's name, without its pattern (`id:\d+`, `id|\d+`) or rest markers (`**rest`,
/// `path..`).
fn param_name(inner: &str) -> &str {
    let inner = inner.trim_end_matches("..");
    let name = inner.split([':', '|']).next().unwrap_or(inner);
    name.trim_start_matches('*')
}

fn join_path(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        return path.to_string();
    }
    if path.is_empty() {
        return prefix.to_string();
    }
    format!(
        "{}/{}",
        prefix.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

fn method_of(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    METHODS
        .contains(&lower.as_str())
        .then(|| lower.to_ascii_uppercase())
}

impl<'m, 'a> Routes<'m, 'a> {
    pub fn new(model: &'m Model<'a>, config: &'m Config) -> Self {
        Routes {
            model,
            config,
            arena: Vec::new(),
            stack: Vec::new(),
            depth: 0,
            envs: Vec::new(),
            callees: HashSet::new(),
            macros_open: Vec::new(),
            registered: HashSet::new(),
            steps: 0,
            diagnostics: BTreeSet::new(),
        }
    }

    /// Every route of every router that is not nested into another, plus attribute routes that
    /// nothing registers (with their own path only).
    pub fn run(mut self) -> (Vec<Entry<'a>>, Vec<Diagnostic>) {
        let model = self.model;
        // each function's own evaluation, with the diagnostics it raised: a function another one
        // calls is read in that call, with its arguments, so its own are dropped with its roots
        let mut standalone: Vec<(FnId, std::ops::Range<usize>, BTreeSet<Diagnostic>)> = Vec::new();
        let before = std::mem::take(&mut self.diagnostics);
        let mut callers = self.callers_with_arguments();
        callers.extend(self.route_macro_callers());
        for (id, f) in model.fns.iter().enumerate() {
            let module = &model.modules[f.module];
            if !(f.func.builds_routes || callers.contains(&id))
                || f.func.is_test
                || module.is_test
                || model.crate_of(f.module).is_test
            {
                continue;
            }
            let start = self.arena.len();
            self.steps = 0;
            let v = self.call(id, Vec::new());
            self.serve(&v);
            let raised = std::mem::take(&mut self.diagnostics);
            standalone.push((id, start..self.arena.len(), raised));
        }
        self.diagnostics = before;
        let mut out = Vec::new();
        for (f, range, raised) in standalone {
            if self.callees.contains(&f) {
                continue;
            }
            self.diagnostics.extend(raised);
            for h in range {
                let r = &self.arena[h];
                if r.consumed || r.docs_only {
                    continue;
                }
                // A router the function is given, and no call in view gives it one (it is
                // handed to code not in view, `scope.extend(register)` of another crate's
                // trait): its routes are under a prefix the audit does not know.
                if r.given && !r.entries.is_empty() {
                    let def = &model.fns[f];
                    self.diagnostics.insert(Diagnostic::new(
                        model.file_of(def.module),
                        def.func.line,
                        format!(
                            "`{}` registers routes on the router it is given, but no call in view gives it one: they are listed at their own paths, without any prefix its caller adds, and marked `path_complete: false`",
                            def.func.name
                        ),
                    ));
                }
                for e in &r.entries {
                    let mut e = e.clone();
                    e.path = join_path(&r.prefix, &e.path);
                    e.path_complete &= r.prefix_complete && !r.given;
                    e.middleware.extend(r.pending.iter().cloned());
                    out.push(e);
                }
            }
        }
        // Attribute routes nothing registers.
        for (id, f) in model.fns.iter().enumerate() {
            if f.func.route_attrs.is_empty()
                || self.registered.contains(&id)
                || f.func.is_test
                || model.modules[f.module].is_test
            {
                continue;
            }
            let fw = self.attr_framework(f.module, None);
            let Some(fw) = fw else { continue };
            let entries = self.attr_entries(id, fw);
            if let Some(first) = entries.first() {
                self.diagnostics.insert(Diagnostic::new(
                    model.file_of(f.module),
                    first.line,
                    format!(
                        "`{}` is a route that nothing this audit follows registers (`.service`, `.mount`, `routes!`): it is listed at its own path, without any prefix a scope or mount would add, and marked `path_complete: false`",
                        f.func.name
                    ),
                ));
            }
            out.extend(entries.into_iter().map(|e| Entry {
                path_complete: false,
                ..e
            }));
        }
        for e in &mut out {
            e.path = normalize_path(&e.path);
        }
        (out, self.diagnostics.into_iter().collect())
    }

    /// Functions that build no routes themselves but call one that does with what it builds them
    /// from (`instance(Options { mounts: mounts(), .. })`, `app(config)`): evaluated too, so the
    /// callee runs with those arguments rather than with unknown ones. Found by name first (one
    /// walk of each body), resolved only on a match.
    fn callers_with_arguments(&self) -> HashSet<FnId> {
        let model = self.model;
        let takes_values = |f: &super::model::FnDef| {
            f.func.params.iter().any(|p| {
                p.name != "self"
                    && !p.ty.as_ref().is_some_and(|t| {
                        matches!(t.last(), "ServiceConfig" | "Scope" | "Rocket" | "Router")
                    })
            })
        };
        let wanted: HashSet<&str> = model
            .fns
            .iter()
            .filter(|f| f.func.builds_routes && !f.func.is_test && takes_values(f))
            .map(|f| f.func.name.as_str())
            .collect();
        if wanted.is_empty() {
            return HashSet::new();
        }
        self.fns_calling(|m, e| {
            matches!(e, Ex::Call(func, args, _)
                if !args.is_empty()
                    && matches!(&**func, Ex::Path(p, _)
                        if p.last().is_some_and(|n| wanted.contains(n.as_str()))
                            && matches!(model.resolve(m, p), Res::Fn(g) if model.fns[g].func.builds_routes)))
        })
    }

    /// The functions that build no routes themselves, outside tests, with an expression for
    /// which `hit` holds (given the function's module): one walk of each body.
    fn fns_calling(&self, hit: impl Fn(ModId, &Ex) -> bool) -> HashSet<FnId> {
        let model = self.model;
        let mut out = HashSet::new();
        for (id, f) in model.fns.iter().enumerate() {
            if f.func.builds_routes || f.func.is_test || model.modules[f.module].is_test {
                continue;
            }
            let mut stack: Vec<&Ex> = Vec::new();
            super::parse::push_stmts(&f.func.body, &mut stack);
            while let Some(e) = stack.pop() {
                if hit(f.module, e) {
                    out.insert(id);
                    break;
                }
                super::parse::children(e, &mut stack);
            }
        }
        out
    }

    /// Functions that invoke a project `macro_rules!` whose body builds routes (`HttpServer::new(||
    /// build_app!(state))`, `fn app() -> _ { build_app!(..) }`): evaluated as if they built them.
    fn route_macro_callers(&self) -> HashSet<FnId> {
        let model = self.model;
        let names: HashSet<&str> = model
            .macros
            .iter()
            .filter(|(_, defs)| {
                defs.iter()
                    .any(|(_, d)| d.arms.iter().any(|a| a.builds_routes))
            })
            .map(|(n, _)| n.as_str())
            .collect();
        if names.is_empty() {
            return HashSet::new();
        }
        self.fns_calling(|m, e| {
            matches!(e, Ex::Macro { path, .. }
                if path.last().is_some_and(|name| names.contains(name.as_str())
                    && model
                        .macro_def(m, name)
                        .is_some_and(|(_, d)| d.arms.iter().any(|a| a.builds_routes))))
        })
    }

    /// Which framework an attribute route belongs to: the context's, else the crate's.
    fn attr_framework(&self, m: ModId, context: Option<&'static str>) -> Option<&'static str> {
        if let Some(c) = context {
            return Some(c);
        }
        let rocket = self.model.depends_on(m, "rocket");
        let actix = self.model.depends_on(m, "actix-web");
        match (rocket, actix) {
            (true, false) => Some("rocket"),
            (false, true) => Some("actix-web"),
            _ => None,
        }
    }

    fn attr_entries(&mut self, f: FnId, framework: &'static str) -> Vec<Entry<'a>> {
        self.registered.insert(f);
        let def = &self.model.fns[f];
        let mut out = Vec::new();
        for a in &def.func.route_attrs {
            let name = a.path.last().map(String::as_str).unwrap_or("");
            if is_openapi_path(&a.path) {
                continue;
            }
            let (methods, path): (Vec<String>, Option<String>) = if name == "route" {
                let mut methods: Vec<String> = a
                    .pairs
                    .iter()
                    .filter(|(k, _)| k == "method")
                    .map(|(_, v)| v.to_ascii_uppercase())
                    .collect();
                methods.extend(
                    a.idents
                        .iter()
                        .filter_map(|i| method_of(i.rsplit("::").next()?)),
                );
                let path = a
                    .pairs
                    .iter()
                    .find(|(k, _)| k == "uri" || k == "path")
                    .map(|(_, v)| v.clone())
                    .or_else(|| a.lits.first().cloned());
                (methods, path)
            } else {
                (
                    method_of(name).into_iter().collect(),
                    a.lits.first().cloned().or_else(|| {
                        // actix-web-codegen's const-routes form: `path = "crate::ROUTES.x"`
                        let (_, written) = a.pairs.iter().find(|(k, _)| k == "path")?;
                        if written.starts_with('/') {
                            return Some(written.clone());
                        }
                        consts::path_text(self.model, def.module, written)
                    }),
                )
            };
            let Some(path) = path else {
                if let Some((_, written)) = a.pairs.iter().find(|(k, _)| k == "path") {
                    self.diagnostics.insert(Diagnostic::new(
                        self.model.file_of(def.module).to_string(),
                        a.line,
                        format!(
                            "the path `{written}` of `{}` could not be evaluated: its route is not listed",
                            def.func.name
                        ),
                    ));
                }
                continue;
            };
            for method in methods {
                out.push(Entry {
                    method,
                    path: path.clone(),
                    framework,
                    module: def.module,
                    line: a.line,
                    handler: Handler::Fn(f),
                    middleware: vec![],
                    path_complete: true,
                });
            }
        }
        out
    }

    /// The routes utoipa-axum's `routes!(f)` registers: each `#[utoipa::path(method, path =
    /// "..")]` of `f`.
    fn openapi_entries(&mut self, f: FnId) -> Vec<Entry<'a>> {
        self.openapi_entries_as(f, "axum")
    }

    /// The routes of poem-openapi's `OpenApiService::new(api)`: every `#[oai(path, method)]` fn
    /// of each `#[OpenApi]` impl of each API type, under the impl's `prefix_path`.
    fn poem_api(&mut self, v: &V<'a>, out: &mut Vec<Entry<'a>>, depth: usize) {
        if depth > 8 {
            return;
        }
        match v {
            V::List(items) => {
                for i in items {
                    self.poem_api(i, out, depth + 1);
                }
            }
            V::Instance(ty, _) => {
                for i in self.model.impls_of(ty) {
                    let imp = &self.model.impls[i];
                    let Some(prefix) = imp.imp.openapi_prefix.clone() else {
                        continue;
                    };
                    for f in imp.fns.clone() {
                        for mut e in self.openapi_entries_as(f, "poem") {
                            e.path = join_path(&prefix, &e.path);
                            out.push(e);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn openapi_entries_as(&mut self, f: FnId, framework: &'static str) -> Vec<Entry<'a>> {
        self.registered.insert(f);
        let def = &self.model.fns[f];
        let mut out = Vec::new();
        for a in def
            .func
            .route_attrs
            .iter()
            .filter(|a| is_openapi_path(&a.path))
        {
            let Some(path) = a.pairs.iter().find(|(k, _)| k == "path").map(|(_, v)| v) else {
                self.diagnostics.insert(Diagnostic::new(
                    self.model.file_of(def.module).to_string(),
                    a.line,
                    format!(
                        "`{}` is registered by `routes!` but its `#[utoipa::path]` has no literal `path`: its routes are not listed",
                        def.func.name
                    ),
                ));
                continue;
            };
            let methods = a
                .idents
                .iter()
                .map(|i| i.rsplit("::").next().unwrap_or(i))
                .chain(
                    a.pairs
                        .iter()
                        .filter(|(k, _)| k == "method")
                        .map(|(_, v)| v.as_str()),
                );
            for m in methods {
                if let Some(method) = method_of(&m.to_ascii_lowercase()) {
                    out.push(Entry {
                        method,
                        path: path.clone(),
                        framework,
                        module: def.module,
                        line: a.line,
                        handler: Handler::Fn(f),
                        middleware: vec![],
                        path_complete: true,
                    });
                }
            }
        }
        out
    }

    fn new_router(&mut self, kind: Kind, prefix: String, module: ModId, line: Line) -> V<'a> {
        self.arena.push(RouterData {
            kind,
            prefix,
            prefix_complete: true,
            entries: vec![],
            pending: vec![],
            methods: vec![],
            add_prefix: (String::new(), true),
            module,
            line,
            consumed: false,
            docs_only: false,
            given: false,
        });
        V::Handle(self.arena.len() - 1)
    }

    /// Copies `child`'s routes into `parent` under `prefix` (`complete`: it was read wholly) and
    /// marks the child consumed.
    fn absorb(&mut self, parent: usize, child: usize, (prefix, complete): (&str, bool)) {
        if parent == child {
            return;
        }
        self.arena[child].consumed = true;
        let c = &self.arena[child];
        let mut moved = Vec::with_capacity(c.entries.len());
        for e in &c.entries {
            let mut e = e.clone();
            e.path = join_path(prefix, &join_path(&c.prefix, &e.path));
            e.path_complete &= complete && c.prefix_complete;
            e.middleware.extend(c.pending.iter().cloned());
            moved.push(e);
        }
        self.arena[parent].entries.extend(moved);
    }

    /// Values handed to code the interpreter does not follow (`Server::new(..).run(app)`): the
    /// routers among them are served.
    fn serve(&mut self, v: &V<'a>) {
        match v {
            V::Handle(h) => self.arena[*h].docs_only = false,
            V::List(items) => {
                for i in items {
                    self.serve(i);
                }
            }
            _ => {}
        }
    }

    /// Evaluates function `f` with `args`.
    fn call(&mut self, f: FnId, args: Vec<V<'a>>) -> V<'a> {
        if self.stack.contains(&f) || self.depth >= MAX_CALL_DEPTH {
            return V::Unknown;
        }
        let def = &self.model.fns[f];
        self.stack.push(f);
        self.depth += 1;
        let mut frame = Frame {
            module: def.module,
            imp: def.imp,
            vars: HashMap::new(),
            uses: Vec::new(),
            site: None,
        };
        let mut args = args.into_iter();
        for p in &def.func.params {
            let v = match args.next() {
                Some(V::Unknown) | None => self.param_default(def.module, p),
                Some(v) => v,
            };
            frame.vars.insert(p.name.clone(), v);
        }
        let v = self.block(&def.func.body, &mut frame);
        self.stack.pop();
        self.depth -= 1;
        v
    }

    /// Calls a function value. A closure runs in the scope it captured where it was written, not
    /// in its caller's: in `fn cached(build: F) { once(|p| build(p)) }` the closure's `build` is
    /// `cached`'s argument, whoever calls the closure.
    fn call_closure(&mut self, h: &Handler<'a>, args: Vec<V<'a>>) -> V<'a> {
        match h {
            Handler::Fn(f) => {
                if self.model.fns[*f].func.builds_routes {
                    self.callees.insert(*f);
                }
                self.call(*f, args)
            }
            Handler::Closure {
                module,
                imp,
                ex,
                env,
            } => {
                let Ex::Closure { params, body, .. } = ex else {
                    return V::Unknown;
                };
                if self.depth >= MAX_CALL_DEPTH {
                    return V::Unknown;
                }
                let mut frame = Frame {
                    module: *module,
                    imp: *imp,
                    vars: self.envs.get(*env).map(|e| e.0.clone()).unwrap_or_default(),
                    uses: Vec::new(),
                    site: self.envs.get(*env).and_then(|e| e.1),
                };
                let mut args = args.into_iter();
                for p in params {
                    let v = match args.next() {
                        Some(V::Unknown) | None => self.param_default(*module, p),
                        Some(v) => v,
                    };
                    frame.vars.insert(p.name.clone(), v);
                }
                self.depth += 1;
                let v = self.expr(body, &mut frame);
                self.depth -= 1;
                v
            }
            Handler::Named(_) => V::Unknown,
        }
    }

    /// A parameter with no argument: a fresh router when its type is one.
    fn param_default(&mut self, m: ModId, p: &Param) -> V<'a> {
        let Some(ty) = &p.ty else { return V::Unknown };
        let kind = match ty.last() {
            "ServiceConfig" => Kind::ActixConfig,
            "Scope" => Kind::ActixScope,
            "Rocket" => Kind::Rocket,
            "Router" => match self.model.resolve(m, &ty.path) {
                Res::Ext(p) if p[0] != "axum" => return V::Unknown,
                Res::Type(..) => return V::Unknown,
                _ => Kind::Axum,
            },
            _ => return V::Unknown,
        };
        let v = self.new_router(kind, String::new(), m, 0);
        if let V::Handle(h) = v {
            self.arena[h].given = true;
        }
        v
    }

    fn block(&mut self, stmts: &'a [Stmt], frame: &mut Frame<'a>) -> V<'a> {
        let mut last = V::Unknown;
        for s in stmts {
            match s {
                Stmt::Let {
                    names,
                    init,
                    fields,
                    ..
                } => {
                    let v = match init {
                        Some(e) => self.expr(e, frame),
                        None => V::Unknown,
                    };
                    if !fields.is_empty() {
                        // `let Options { mounts, cfg: c } = options;`
                        let given = match v {
                            V::Instance(_, given) => given,
                            _ => vec![],
                        };
                        for n in names {
                            let value = fields
                                .iter()
                                .find(|(_, b)| b == n)
                                .and_then(|(f, _)| given.iter().find(|(g, _)| g == f))
                                .map(|(_, v)| v.clone())
                                .unwrap_or(V::Unknown);
                            frame.vars.insert(n.clone(), value);
                        }
                    } else if names.len() == 1 {
                        frame.vars.insert(names[0].clone(), v);
                    } else if let V::List(items) = &v
                        && items.len() == names.len()
                    {
                        // `let (router, api) = router.split_for_parts();`
                        for (n, item) in names.iter().zip(items) {
                            frame.vars.insert(n.clone(), item.clone());
                        }
                    } else {
                        for n in names {
                            frame.vars.insert(n.clone(), V::Unknown);
                        }
                    }
                    last = V::Unknown;
                }
                Stmt::Expr(e, _) => last = self.expr(e, frame),
                Stmt::Item(item) => {
                    if let Item::Use(decls) = &**item {
                        for d in decls.iter().filter(|d| d.alias != "*") {
                            frame.uses.push((d.alias.clone(), d.path.clone()));
                        }
                    }
                }
            }
        }
        last
    }

    /// A prefix's text, and whether it was read wholly; a prefix that is not (wholly) a literal is
    /// reported: its literal parts are kept.
    /// A prefix the configuration gives (`[[mount]]` with this file and line, or with the
    /// expression as written) is taken as known.
    fn prefix_of(
        &mut self,
        v: &V<'a>,
        arg: Option<&Ex>,
        module: ModId,
        line: Line,
        what: &str,
    ) -> (String, bool) {
        let known = match v {
            V::Str(_) => true,
            V::List(items) => items.iter().all(|i| matches!(i, V::Str(_))),
            _ => false,
        };
        if !known {
            let expression = arg.and_then(source_text).unwrap_or_default();
            if let Some(prefix) =
                self.config
                    .mount_prefix(self.model.file_of(module), line, &expression)
            {
                return (prefix.to_string(), true);
            }
        }
        let text = self.str_of(v);
        if !known {
            let message = if text.is_empty() {
                format!(
                    "the prefix of `{what}` is not statically known: its routes are listed without it, marked `path_complete: false`"
                )
            } else {
                format!(
                    "the prefix of `{what}` has a runtime part: only `{text}` is kept, and its routes are marked `path_complete: false`"
                )
            };
            self.diagnostics
                .insert(Diagnostic::new(self.model.file_of(module), line, message));
        }
        (text, known)
    }

    /// A `.service(name)` whose name nothing in view defines (a handler a macro generates, or one
    /// defined outside the scanned tree): its endpoint cannot be listed, which is said.
    fn unread_service(&mut self, f: &Ex, module: ModId, line: Line) {
        let Ex::Path(p, _) = f else { return };
        self.diagnostics.insert(Diagnostic::new(
            self.model.file_of(module),
            line,
            format!(
                "the service `{}` is not listed: nothing in view defines it (a macro generates it, or it is defined outside the scanned tree), so the endpoint it registers is missing from this audit",
                p.join("::")
            ),
        ));
    }

    /// `.configure(f)` with a function this audit cannot read (generated by a macro, or defined
    /// outside the scanned tree): the routes it registers are not listed, and that is said.
    fn unread_configure(&mut self, f: &Ex, module: ModId, line: Line) {
        let name = match f {
            Ex::Path(p, _) => p.join("::"),
            _ => "a function".to_string(),
        };
        self.diagnostics.insert(Diagnostic::new(
            self.model.file_of(module),
            line,
            format!(
                "routes configured by `{name}` are not listed: no body of it is in view (a macro generates it, or it is defined outside the scanned tree), so the endpoints it registers are missing from this audit"
            ),
        ));
    }

    /// A route's own path, and whether it was read wholly; one that is not (wholly) a literal is
    /// reported, and its literal parts are kept.
    fn route_path_of(&mut self, v: &V<'a>, module: ModId, line: Line) -> (String, bool) {
        let known = match v {
            V::Str(_) => true,
            V::List(items) => items.iter().all(|i| matches!(i, V::Str(_))),
            _ => false,
        };
        let text = self.str_of(v);
        if !known {
            self.diagnostics.insert(Diagnostic::new(
                self.model.file_of(module),
                line,
                format!(
                    "the path of this route is not statically known: it is listed at `{}`, the part that is, marked `path_complete: false`",
                    normalize_path(&text)
                ),
            ));
        }
        (text, known)
    }

    fn str_of(&self, v: &V<'a>) -> String {
        match v {
            V::Str(s) => s.clone(),
            V::List(items) => items.iter().map(|i| self.str_of(i)).collect(),
            _ => String::new(),
        }
    }

    fn handler_of(v: &V<'a>) -> Handler<'a> {
        match v {
            V::Func(h) => h.clone(),
            V::Ext(p) => Handler::Named(p.join("::")),
            V::MethodRouter(routes) => routes
                .first()
                .map(|r| r.handler.clone())
                .unwrap_or(Handler::Named("unresolved".into())),
            _ => Handler::Named("unresolved".into()),
        }
    }

    fn mws_of(v: &V<'a>, module: ModId, line: Line, out: &mut Vec<MwAt<'a>>) {
        let mw = match v {
            V::Func(h) => Mw::Handler(h.clone()),
            V::Instance(r, _) => Mw::Type(r.clone()),
            V::Ext(p) => Mw::Ext(p.clone()),
            V::List(items) => {
                for i in items {
                    Self::mws_of(i, module, line, out);
                }
                return;
            }
            _ => return,
        };
        out.push(MwAt { mw, module, line });
    }

    fn methods_in(v: &V<'a>) -> Vec<String> {
        match v {
            V::Methods(m) => m.clone(),
            V::Str(s) => method_of(s).into_iter().collect(),
            V::List(items) => items.iter().flat_map(Self::methods_in).collect(),
            _ => vec![],
        }
    }

    fn resolve_path(&self, p: &[String], frame: &Frame<'a>) -> Res {
        // a name a `use` in the body brought in
        if let Some(first) = p.first()
            && let Some((_, full)) = frame.uses.iter().rev().find(|(a, _)| a == first)
        {
            let mut path = full.clone();
            path.extend(p[1..].iter().cloned());
            return self.model.resolve(frame.module, &path);
        }
        if p.first().is_some_and(|s| s == "Self") {
            if let Some(i) = frame.imp
                && p.len() == 2
            {
                return Res::Assoc(Box::new(self.model.impl_type(i)), p[1].clone());
            }
            return Res::Unknown;
        }
        let r = self.model.resolve(frame.module, p);
        if let Some(site) = frame.site
            && matches!(r, Res::Ext(_) | Res::Unknown)
        {
            let there = self.model.resolve(site, p);
            if !matches!(there, Res::Ext(_) | Res::Unknown) {
                return there;
            }
        }
        r
    }

    /// The functions a resolved path can call.
    fn fns_of(&self, r: &Res) -> Vec<FnId> {
        match r {
            Res::Fn(f) => vec![*f],
            Res::Assoc(ty, name) => self.model.methods_of(ty, name),
            _ => vec![],
        }
    }

    fn expr(&mut self, e: &'a Ex, frame: &mut Frame<'a>) -> V<'a> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return V::Unknown;
        }
        match e {
            Ex::Lit(s) => V::Str(s.clone()),
            Ex::Path(p, _) => {
                if p.len() == 1
                    && let Some(v) = frame.vars.get(&p[0])
                {
                    return v.clone();
                }
                self.path_value(p, frame)
            }
            Ex::Call(func, args, line) => self.call_expr(func, args, *line, frame),
            Ex::Method(recv, name, args, line) => {
                let rv = self.expr(recv, frame);
                self.method(recv, rv, name, args, *line, frame)
            }
            Ex::Macro {
                path,
                args,
                lits,
                line,
            } => {
                let name = path.last().map(String::as_str).unwrap_or("");
                match name {
                    // rocket's `routes![..]`, utoipa-axum's `routes!(..)`, rocket_okapi's
                    // `openapi_get_routes![..]` (and `_spec`, which pairs them with the document)
                    "routes" | "openapi_get_routes" | "openapi_get_routes_spec" => {
                        V::List(args.iter().map(|a| self.expr(a, frame)).collect())
                    }
                    "vec" => V::List(args.iter().map(|a| self.expr(a, frame)).collect()),
                    "path" if let Some(v) = self.warp_path_macro(lits, frame.module) => v,
                    "concat" => V::Str(lits.concat()),
                    // `format!("/api/{}", VERSION)`, with constants or known local text
                    "format" => {
                        let vars = frame.vars.iter().filter_map(|(k, v)| match v {
                            V::Str(s) => Some((k, s)),
                            _ => None,
                        });
                        match consts::text(self.model, frame.module, frame.imp, e, vars) {
                            Some(s) => V::Str(s),
                            None => {
                                for a in args {
                                    self.expr(a, frame);
                                }
                                // the text with its run-time parts (`format!("{base}/mcp")`)
                                lits.first().map_or(V::Unknown, |f| format_parts(f))
                            }
                        }
                    }
                    _ => {
                        for a in args {
                            self.expr(a, frame);
                        }
                        self.expand(name, args.len(), *line, frame)
                            .unwrap_or(V::Unknown)
                    }
                }
            }
            Ex::Closure { .. } => {
                self.envs.push((frame.vars.clone(), frame.site));
                V::Func(Handler::Closure {
                    module: frame.module,
                    imp: frame.imp,
                    ex: e,
                    env: self.envs.len() - 1,
                })
            }
            Ex::Field(b, name) => {
                // `options.mounts`: a field of a struct literal
                if let V::Instance(_, fields) = self.expr(b, frame)
                    && let Some((_, v)) = fields.into_iter().find(|(f, _)| f == name)
                {
                    return v;
                }
                // `web::scope(ROUTES.api.prefix)`: a field of a constant
                match consts::text(self.model, frame.module, frame.imp, e, []) {
                    Some(s) => V::Str(s),
                    None => V::Unknown,
                }
            }
            Ex::Block(stmts) => self.block(stmts, frame),
            Ex::List(items) => V::List(items.iter().map(|i| self.expr(i, frame)).collect()),
            Ex::Struct(path, values, names) => {
                let mut vals: Vec<V<'a>> = values.iter().map(|f| self.expr(f, frame)).collect();
                // `Options { mounts, ..base }`: the fields not given come from `base`
                let rest = (vals.len() > names.len()).then(|| vals.pop()).flatten();
                let mut fields: Vec<(String, V<'a>)> = names.iter().cloned().zip(vals).collect();
                if let Some(V::Instance(_, more)) = rest {
                    for (k, v) in more {
                        if !fields.iter().any(|(f, _)| *f == k) {
                            fields.push((k, v));
                        }
                    }
                }
                V::Instance(self.resolve_path(path, frame), fields)
            }
            Ex::Assign(l, r) => {
                let v = self.expr(r, frame);
                if let Ex::Path(p, _) = &**l
                    && p.len() == 1
                {
                    frame.vars.insert(p[0].clone(), v);
                }
                V::Unknown
            }
            Ex::Caught(inner) | Ex::Failure(inner) => self.expr(inner, frame),
            Ex::Other(children) if for_body(children).is_some() => {
                self.for_loop(&children[0], for_body(children).unwrap_or(&[]), frame)
            }
            // `match`/`if` arms: the routers they build are one router (each configuration's
            // routes exist), route lists are one list
            Ex::FieldTest(t) => self.branches(&t.parts, frame),
            Ex::Variants(v) => self.branches(&v.parts, frame),
            Ex::Other(children)
            | Ex::Gate {
                parts: children, ..
            } => self.branches(children, frame),
        }
    }

    /// What an invocation `name!(..)` of a project `macro_rules!` whose body builds routes
    /// yields: the body evaluated where the macro is defined, with its metavariables unknown
    /// (`None` for any other macro). Of several such arms, those binding as many metavariables as
    /// the invocation has arguments, joined as `match` arms are.
    fn expand(&mut self, name: &str, argc: usize, line: Line, frame: &Frame<'a>) -> Option<V<'a>> {
        let (dm, def) = self.model.macro_def(frame.module, name)?;
        let building: Vec<&'a super::ir::MacroArm> =
            def.arms.iter().filter(|a| a.builds_routes).collect();
        if building.is_empty() {
            return None;
        }
        let mut arms: Vec<&'a super::ir::MacroArm> = building
            .iter()
            .copied()
            .filter(|a| a.body.is_some())
            .collect();
        if arms.is_empty() {
            self.diagnostics.insert(Diagnostic::new(
                self.model.file_of(frame.module),
                line,
                format!(
                    "the body of macro `{name}!` ({}:{}) could not be read as Rust code: the routes it registers are not listed",
                    self.model.file_of(dm),
                    def.line
                ),
            ));
            return Some(V::Unknown);
        }
        if arms.len() > 1 && arms.iter().any(|a| a.params.len() == argc) {
            arms.retain(|a| a.params.len() == argc);
        }
        let key = (dm, def.line);
        if self.macros_open.contains(&key) || self.depth >= MAX_CALL_DEPTH {
            return Some(V::Unknown);
        }
        self.macros_open.push(key);
        self.depth += 1;
        let mut out = V::Unknown;
        for arm in arms {
            let mut inner = Frame {
                module: dm,
                imp: frame.imp,
                vars: arm.params.iter().map(|p| (p.clone(), V::Unknown)).collect(),
                uses: Vec::new(),
                site: Some(frame.site.unwrap_or(frame.module)),
            };
            let v = self.block(arm.body.as_deref().unwrap_or(&[]), &mut inner);
            out = self.either(out, v);
        }
        self.depth -= 1;
        self.macros_open.pop();
        Some(out)
    }

    /// The arms of a `match` or `if`, joined.
    fn branches(&mut self, children: &'a [Ex], frame: &mut Frame<'a>) -> V<'a> {
        let mut out = V::Unknown;
        let mut known: Option<String> = None;
        let mut partial: Option<(String, Line)> = None;
        for c in children {
            let v = self.expr(c, frame);
            match &v {
                V::Str(s) if known.as_ref().is_none_or(|k| k == s) => known = Some(s.clone()),
                V::Str(_) => return V::Unknown,
                V::List(items)
                    if items.iter().any(|i| matches!(i, V::Str(_)))
                        && items
                            .iter()
                            .all(|i| matches!(i, V::Str(_) | V::Unknown | V::Ext(_))) =>
                {
                    let text: String = items
                        .iter()
                        .map(|i| match i {
                            V::Str(s) => s.as_str(),
                            _ => "{…}",
                        })
                        .collect();
                    partial.get_or_insert((text, parse::first_line(c)));
                }
                _ => {}
            }
            out = self.either(out, v);
        }
        // `if base.is_empty() { "/mcp".to_string() } else { format!("{base}/mcp") }`: the branch
        // whose text is known, said so (as TypeScript's `c ? `/${c}` : ''` is read)
        if let (Some(k), Some((other, line))) = (known, partial) {
            self.diagnostics.insert(Diagnostic::new(
                self.model.file_of(frame.module),
                line,
                format!(
                    "a path is either `{k}` or `{other}`, which has a part only known at run time: its routes are listed under `{k}`, which the configuration may change"
                ),
            ));
            return V::Str(k);
        }
        out
    }

    /// `for pat in iter { body }`: the body once per item of a list the interpreter knows (bound
    /// to the pattern by the body's first `let`), else once with an unknown item.
    fn for_loop(&mut self, iter: &'a Ex, body: &'a [Stmt], frame: &mut Frame<'a>) -> V<'a> {
        let items = match self.expr(iter, frame) {
            V::List(items) if !items.is_empty() => items,
            _ => vec![V::Unknown],
        };
        if items.len() > MAX_LOOP_ITEMS {
            self.diagnostics.insert(Diagnostic::new(
                self.model.file_of(frame.module),
                iter.line(),
                format!(
                    "this loop goes over {} items: routes are read for the first {MAX_LOOP_ITEMS} only",
                    items.len()
                ),
            ));
        }
        for item in items.into_iter().take(MAX_LOOP_ITEMS) {
            frame.vars.insert(FOR_ITEM.to_string(), item);
            self.block(body, frame);
        }
        frame.vars.remove(FOR_ITEM);
        V::Unknown
    }

    /// The value of a `match` or `if` whose arms gave `a` and `b`: two routers make a new one
    /// holding the routes of both (each with its own prefix; a router one arm nested into the
    /// other counts in both places), lists make one list, else whichever is a router or a list.
    fn either(&mut self, a: V<'a>, b: V<'a>) -> V<'a> {
        match (a, b) {
            (V::Handle(x), V::Handle(y)) => {
                let (rx, ry) = (&self.arena[x], &self.arena[y]);
                if x == y || rx.kind != ry.kind {
                    return V::Handle(x);
                }
                let (kind, module, line) = (rx.kind, rx.module, rx.line);
                let docs_only = rx.docs_only && ry.docs_only;
                let v = self.new_router(kind, String::new(), module, line);
                if let V::Handle(u) = v {
                    self.absorb(u, x, ("", true));
                    self.absorb(u, y, ("", true));
                    self.arena[u].docs_only = docs_only;
                }
                v
            }
            (V::List(mut x), V::List(y)) => {
                x.extend(y);
                V::List(x)
            }
            (a @ (V::Handle(_) | V::List(_)), _) => a,
            (_, b @ (V::Handle(_) | V::List(_))) => b,
            _ => V::Unknown,
        }
    }

    fn path_value(&self, p: &[String], frame: &Frame<'a>) -> V<'a> {
        let last = p.last().map(String::as_str).unwrap_or("");
        if p.len() >= 2
            && matches!(p[p.len() - 2].as_str(), "MethodFilter" | "Method")
            && let Some(m) = method_of(last)
        {
            return V::Methods(vec![m]);
        }
        match self.resolve_path(p, frame) {
            Res::Fn(f) => V::Func(Handler::Fn(f)),
            r @ Res::Assoc(..) => match self.fns_of(&r).first() {
                Some(&f) => V::Func(Handler::Fn(f)),
                None => V::Unknown,
            },
            r @ Res::Type(..) => V::Instance(r, vec![]),
            Res::Const(..) => {
                let e = Ex::Path(p.to_vec(), 0);
                match consts::text(self.model, frame.module, frame.imp, &e, []) {
                    Some(s) => V::Str(s),
                    None => V::Unknown,
                }
            }
            Res::Ext(path) => V::Ext(path),
            _ => V::Ext(p.to_vec()),
        }
    }

    fn eval_args(&mut self, args: &'a [Ex], frame: &mut Frame<'a>) -> Vec<V<'a>> {
        args.iter().map(|a| self.expr(a, frame)).collect()
    }

    fn call_expr(
        &mut self,
        func: &'a Ex,
        args: &'a [Ex],
        line: Line,
        frame: &mut Frame<'a>,
    ) -> V<'a> {
        let Ex::Path(p, _) = func else {
            self.expr(func, frame);
            self.eval_args(args, frame);
            return V::Unknown;
        };
        // what wraps a value and gives it back: `Ok(router)` returned by a builder,
        // `Box::new(router)`
        let wraps = match p.as_slice() {
            [v] => v == "Ok" || v == "Some",
            [.., t, n] => n == "new" && matches!(t.as_str(), "Box" | "Arc" | "Rc"),
            _ => false,
        };
        if wraps && args.len() == 1 {
            return self.expr(&args[0], frame);
        }
        // a local closure or function value
        if p.len() == 1
            && let Some(V::Func(h)) = frame.vars.get(&p[0]).cloned()
        {
            let vals = self.eval_args(args, frame);
            return self.call_closure(&h, vals);
        }
        let r = self.resolve_path(p, frame);
        let fns = self.fns_of(&r);
        if let Some(&f) = fns.first() {
            let vals = self.eval_args(args, frame);
            let def = &self.model.fns[f];
            if def.func.builds_routes {
                self.callees.insert(f);
                return self.call(f, vals);
            }
            // a function that makes text from constants: `web::scope(&api_prefix())`
            if def
                .func
                .ret
                .as_ref()
                .is_some_and(|t| matches!(t.last(), "String" | "str" | "Cow"))
                && let Some(s) = consts::call_text(
                    self.model,
                    (frame.module, frame.imp),
                    f,
                    match &r {
                        Res::Assoc(ty, _) => Some((**ty).clone()),
                        _ => None,
                    },
                    args,
                    frame.vars.iter().filter_map(|(k, v)| match v {
                        V::Str(s) => Some((k, s)),
                        _ => None,
                    }),
                )
            {
                return V::Str(s);
            }
            // a project struct that holds routes (`RouteHandlers { routes: vec![("/chat",
            // post(chat))] }`, whose caller registers them): what it returns is read
            if let Some(ret) = def.func.ret.as_ref()
                && let Res::Type(tm, name) = self.model.resolve(def.module, &ret.path)
                && self.model.modules[tm]
                    .fields
                    .get(&name)
                    .is_some_and(|fields| fields.iter().any(|(_, t)| parse::holds_builder(t)))
            {
                return self.call(f, vals);
            }
            // a constructor of a project type: `Middleware::new(..)`
            if let Res::Assoc(ty, _) = &r
                && def.func.ret.as_ref().is_some_and(|t| {
                    t.last() == "Self" || ty_name(ty).is_some_and(|n| n == t.last())
                })
            {
                return V::Instance((**ty).clone(), vec![]);
            }
            return V::Unknown;
        }
        let ext: Vec<String> = match &r {
            Res::Ext(path) => path.clone(),
            Res::Unknown => p.clone(),
            Res::Assoc(ty, name) => {
                // an associated fn the project does not define (derive, trait default elsewhere)
                let vals = self.eval_args(args, frame);
                drop(vals);
                if matches!(name.as_str(), "new" | "default") {
                    return V::Instance((**ty).clone(), vec![]);
                }
                return V::Unknown;
            }
            _ => {
                self.eval_args(args, frame);
                return V::Unknown;
            }
        };
        self.builtin(&ext, args, line, frame)
    }

    /// Calls into the frameworks (and a few std constructors) by their path.
    fn builtin(
        &mut self,
        path: &[String],
        args: &'a [Ex],
        line: Line,
        frame: &mut Frame<'a>,
    ) -> V<'a> {
        let m = frame.module;
        if let Some(v) = self.warp_call(path, args, line, frame) {
            return v;
        }
        let last = path.last().map(String::as_str).unwrap_or("");
        let krate = path.first().map(String::as_str).unwrap_or("");
        let prev = if path.len() >= 2 {
            path[path.len() - 2].as_str()
        } else {
            ""
        };
        let in_crate =
            |c: &str, pkg: &str| krate == c || (path.len() <= 2 && self.model.depends_on(m, pkg));
        let axum = in_crate("axum", "axum");
        // paperclip's and apistos's `web` modules mirror actix-web's (documented drop-in
        // replacements that record the API document): `paperclip::actix::web::resource(..)`.
        let actix = in_crate("actix_web", "actix-web")
            || (matches!(krate, "paperclip" | "apistos") && path.iter().any(|s| s == "web"));
        // aide's routing functions (`post_with(handler, docs)`) and axum's, re-exported
        let aide = in_crate("aide", "aide");
        let poem = in_crate("poem", "poem");
        let loco = in_crate("loco_rs", "loco-rs");
        // salvo's `Router`, unless the crate uses axum's too and the path does not say which
        let salvo = krate == "salvo"
            || (path.len() <= 2 && self.model.depends_on(m, "salvo") && krate != "axum" && !axum);
        match (prev, last) {
            ("Router", "new" | "default" | "with_path" | "with_hoop") if salvo => {
                let vals = self.eval_args(args, frame);
                let v = self.new_router(Kind::Salvo, String::new(), m, line);
                if let (V::Handle(h), Some(a)) = (&v, vals.first()) {
                    if last == "with_path" {
                        let (prefix, complete) =
                            self.prefix_of(a, args.first(), m, line, "with_path");
                        self.arena[*h].prefix = prefix;
                        self.arena[*h].prefix_complete = complete;
                    } else {
                        let mut mws = Vec::new();
                        Self::mws_of(a, m, line, &mut mws);
                        self.arena[*h].pending.extend(mws);
                    }
                }
                return v;
            }
            ("Routes", "new" | "default" | "at") if loco => {
                let vals = self.eval_args(args, frame);
                let v = self.new_router(Kind::Loco, String::new(), m, line);
                if let (V::Handle(h), Some(a)) = (&v, vals.first()) {
                    let (prefix, complete) = self.prefix_of(a, args.first(), m, line, "at");
                    self.arena[*h].prefix = prefix;
                    self.arena[*h].prefix_complete = complete;
                }
                return v;
            }
            ("AppRoutes", "with_default_routes" | "empty") if loco => {
                return self.new_router(Kind::LocoApp, String::new(), m, line);
            }
            ("Router", "new") if axum => {
                return self.new_router(Kind::Axum, String::new(), m, line);
            }
            // utoipa-axum's and aide's routers are axum routers with documentation
            ("OpenApiRouter", "new" | "default" | "with_openapi")
                if in_crate("utoipa_axum", "utoipa-axum") =>
            {
                self.eval_args(args, frame);
                return self.new_router(Kind::Axum, String::new(), m, line);
            }
            ("ApiRouter", "new" | "default") if aide => {
                return self.new_router(Kind::Axum, String::new(), m, line);
            }
            ("Route", "new") if poem => {
                return self.new_router(Kind::Poem, String::new(), m, line);
            }
            ("OpenApiService", "new") if in_crate("poem_openapi", "poem-openapi") => {
                let vals = self.eval_args(args, frame);
                let mut entries = Vec::new();
                if let Some(api) = vals.first() {
                    self.poem_api(api, &mut entries, 0);
                }
                let v = self.new_router(Kind::Poem, String::new(), m, line);
                if let V::Handle(h) = v {
                    self.arena[h].entries = entries;
                    self.arena[h].docs_only = true;
                }
                return v;
            }
            ("Router" | "ApiRouter" | "OpenApiRouter", "from") if args.len() == 1 => {
                if let v @ V::Handle(_) = self.expr(&args[0], frame) {
                    return v;
                }
                return V::Unknown;
            }
            ("App", "new") if actix => {
                return self.new_router(Kind::ActixApp, String::new(), m, line);
            }
            ("Vec", "new") | ("ServiceBuilder", "new") => return V::List(vec![]),
            // rocket 0.5's `build`/`custom`, 0.4's `ignite`/`custom`
            ("rocket" | "Rocket", "build" | "custom" | "ignite")
                if in_crate("rocket", "rocket") =>
            {
                self.eval_args(args, frame);
                return self.new_router(Kind::Rocket, String::new(), m, line);
            }
            ("AdHoc", _) => {
                let vals = self.eval_args(args, frame);
                return vals
                    .into_iter()
                    .find(|v| matches!(v, V::Func(_)))
                    .unwrap_or(V::Unknown);
            }
            _ => {}
        }
        if (actix || krate == "actix_web")
            && prev == "guard"
            && let Some(mm) = method_of(last)
        {
            self.eval_args(args, frame);
            return V::Methods(vec![mm]);
        }
        if actix && (prev == "web" || path.len() == 1 || krate == "actix_web") {
            match last {
                "scope" | "resource" => {
                    let vals = self.eval_args(args, frame);
                    let (prefix, complete) = match vals.first() {
                        Some(v) => self.prefix_of(v, args.first(), m, line, last),
                        None => (String::new(), true),
                    };
                    let kind = if last == "scope" {
                        Kind::ActixScope
                    } else {
                        Kind::ActixResource
                    };
                    let v = self.new_router(kind, prefix, m, line);
                    if let V::Handle(h) = v {
                        self.arena[h].prefix_complete = complete;
                    }
                    return v;
                }
                "route" if args.is_empty() => {
                    return V::ActixRoute {
                        methods: vec![],
                        handler: None,
                    };
                }
                // actix-web 1's `to_async` is `to` for an async handler
                "to" | "to_async" if args.len() == 1 => {
                    let v = self.expr(&args[0], frame);
                    return V::ActixRoute {
                        methods: vec![],
                        handler: Some(Self::handler_of(&v)),
                    };
                }
                name if args.is_empty() && method_of(name).is_some() => {
                    return V::ActixRoute {
                        methods: method_of(name).into_iter().collect(),
                        handler: None,
                    };
                }
                _ => {}
            }
        }
        // `MethodRouter::new().post(h).get(h2)` (axum's `routing::MethodRouter`): a method
        // router with no route yet, the chain after it adds them
        if axum && prev == "MethodRouter" && last == "new" && args.is_empty() {
            return V::MethodRouter(Vec::new());
        }
        if (axum && (prev == "routing" || path.len() == 1 || krate == "axum"))
            || (loco && (matches!(prev, "routing" | "prelude") || path.len() == 1))
            || (aide && prev == "routing")
            || (poem && (prev == "poem" || prev == "routing" || path.len() == 1))
        {
            let base = last.strip_suffix("_service").unwrap_or(last);
            // aide: `post_with(handler, |op| op.description(..))`
            let (base, arity) = match base.strip_suffix("_with") {
                Some(b) => (b, 2),
                None => (base, 1),
            };
            if let Some(method) = method_of(base).filter(|_| args.len() == arity) {
                if arity == 2 {
                    self.expr(&args[1], frame);
                }
                let v = self.expr(&args[0], frame);
                return V::MethodRouter(vec![MethodRoute {
                    method,
                    handler: Self::handler_of(&v),
                    module: m,
                    line,
                    middleware: vec![],
                }]);
            }
            if matches!(base, "any") && args.len() == arity {
                let v = self.expr(&args[0], frame);
                return V::MethodRouter(
                    ANY_METHOD
                        .iter()
                        .map(|mm| MethodRoute {
                            method: mm.to_string(),
                            handler: Self::handler_of(&v),
                            module: m,
                            line,
                            middleware: vec![],
                        })
                        .collect(),
                );
            }
            if base == "on" && args.len() == 2 {
                let filter = self.expr(&args[0], frame);
                let v = self.expr(&args[1], frame);
                return V::MethodRouter(
                    Self::methods_in(&filter)
                        .into_iter()
                        .map(|method| MethodRoute {
                            method,
                            handler: Self::handler_of(&v),
                            module: m,
                            line,
                            middleware: vec![],
                        })
                        .collect(),
                );
            }
        }
        if matches!(
            last,
            "from_fn" | "from_fn_with_state" | "from_extractor" | "from_extractor_with_state"
        ) && let Some(a) = args.last()
        {
            let v = self.expr(a, frame);
            return match v {
                V::Func(h) => V::Func(h),
                _ => V::Unknown,
            };
        }
        // an unknown call: evaluate closures passed to it (`HttpServer::new(|| App::new()..)`)
        let vals = self.eval_args(args, frame);
        let mut out = V::Unknown;
        for v in &vals {
            self.serve(v);
        }
        for v in vals {
            // `HttpServer::new(|| App::new()..)`: the closure builds the app; a closure that
            // builds none (a service's factory) leaves the call a value of its type
            if let V::Func(h @ Handler::Closure { .. }) = &v
                && matches!(self.call_closure(h, vec![]), V::Handle(_))
            {
                out = v.clone();
            }
        }
        if matches!(out, V::Unknown) && path.len() >= 2 && last == "new" {
            return V::Ext(path[..path.len() - 1].to_vec());
        }
        out
    }

    fn method(
        &mut self,
        recv: &'a Ex,
        rv: V<'a>,
        name: &str,
        args: &'a [Ex],
        line: Line,
        frame: &mut Frame<'a>,
    ) -> V<'a> {
        let m = frame.module;
        match rv {
            V::Handle(h) => self.router_method(h, name, args, line, frame),
            V::Filter(f) => self.warp_method(*f, name, args, line, frame),
            V::MethodRouter(mut routes) => {
                let base = name.strip_suffix("_service").unwrap_or(name);
                let (base, arity) = match base.strip_suffix("_with") {
                    Some(b) => (b, 2),
                    None => (base, 1),
                };
                if let Some(method) = method_of(base)
                    && args.len() == arity
                {
                    let v = self.expr(&args[0], frame);
                    if arity == 2 {
                        self.expr(&args[1], frame);
                    }
                    routes.push(MethodRoute {
                        method,
                        handler: Self::handler_of(&v),
                        module: m,
                        line,
                        middleware: vec![],
                    });
                } else if name == "on" && args.len() == 2 {
                    let filter = self.expr(&args[0], frame);
                    let v = self.expr(&args[1], frame);
                    for method in Self::methods_in(&filter) {
                        routes.push(MethodRoute {
                            method,
                            handler: Self::handler_of(&v),
                            module: m,
                            line,
                            middleware: vec![],
                        });
                    }
                } else if matches!(name, "layer" | "route_layer") {
                    let v = args
                        .first()
                        .map(|a| self.expr(a, frame))
                        .unwrap_or(V::Unknown);
                    let mut mws = Vec::new();
                    Self::mws_of(&v, m, line, &mut mws);
                    for r in &mut routes {
                        r.middleware.extend(mws.iter().cloned());
                    }
                } else {
                    self.eval_args(args, frame);
                }
                V::MethodRouter(routes)
            }
            V::ActixRoute {
                mut methods,
                mut handler,
            } => {
                let vals = self.eval_args(args, frame);
                match name {
                    "to" | "to_async" | "service" => handler = vals.first().map(Self::handler_of),
                    "method" | "guard" => {
                        methods.extend(vals.iter().flat_map(Self::methods_in));
                    }
                    _ => {}
                }
                V::ActixRoute { methods, handler }
            }
            V::List(mut items) => {
                let vals = self.eval_args(args, frame);
                match name {
                    "append" | "extend" | "push" | "extend_from_slice" => {
                        for v in vals {
                            match v {
                                V::List(more) if name != "push" => items.extend(more),
                                other => items.push(other),
                            }
                        }
                        if let Ex::Path(p, _) = recv
                            && p.len() == 1
                        {
                            frame.vars.insert(p[0].clone(), V::List(items.clone()));
                        }
                        V::List(items)
                    }
                    "concat" | "join" => {
                        if items.iter().all(|i| matches!(i, V::Str(_))) {
                            V::Str(items.iter().map(|i| self.str_of(i)).collect())
                        } else if items
                            .iter()
                            .all(|i| matches!(i, V::Str(_) | V::Unknown | V::Ext(_)))
                        {
                            // a string with runtime parts: kept as parts for `prefix_of`
                            V::List(items)
                        } else {
                            V::List(
                                items
                                    .into_iter()
                                    .flat_map(|i| match i {
                                        V::List(v) => v,
                                        other => vec![other],
                                    })
                                    .collect(),
                            )
                        }
                    }
                    "layer" => {
                        items.extend(vals);
                        V::List(items)
                    }
                    "into_iter" | "iter" | "collect" | "clone" | "to_vec" | "into" | "chain" => {
                        for v in vals {
                            if let V::List(more) = v {
                                items.extend(more);
                            }
                        }
                        V::List(items)
                    }
                    _ => V::Unknown,
                }
            }
            V::Str(s) => {
                self.eval_args(args, frame);
                match name {
                    "to_string" | "to_owned" | "into" | "as_str" | "clone" | "as_ref" => V::Str(s),
                    _ => V::Unknown,
                }
            }
            V::Methods(mut ms) => {
                let vals = self.eval_args(args, frame);
                if name == "or" {
                    ms.extend(vals.iter().flat_map(Self::methods_in));
                }
                V::Methods(ms)
            }
            V::Func(h) => {
                self.eval_args(args, frame);
                V::Func(h)
            }
            other => {
                let vals = self.eval_args(args, frame);
                for v in &vals {
                    self.serve(v);
                }
                for v in vals {
                    if let V::Func(h @ Handler::Closure { .. }) = &v {
                        self.call_closure(h, vec![]);
                    }
                }
                match (name, other) {
                    ("clone", v) => v,
                    _ => V::Unknown,
                }
            }
        }
    }

    fn router_method(
        &mut self,
        h: usize,
        name: &str,
        args: &'a [Ex],
        line: Line,
        frame: &mut Frame<'a>,
    ) -> V<'a> {
        let m = frame.module;
        let kind = self.arena[h].kind;
        let handled = match kind {
            Kind::Salvo => self.salvo_method(h, name, args, line, frame),
            Kind::Loco | Kind::LocoApp => {
                self.loco_method(h, kind == Kind::LocoApp, name, args, line, frame)
            }
            _ => false,
        };
        if handled {
            return V::Handle(h);
        }
        match (kind, name) {
            // aide's `api_route(path, post_with(..))` / `api_route_with(path, .., docs)`
            (Kind::Axum, "route" | "api_route") if args.len() == 2 => {
                self.axum_route(h, &args[0], &args[1], frame, "axum");
            }
            (Kind::Axum, "api_route_with") if args.len() == 3 => {
                self.axum_route(h, &args[0], &args[1], frame, "axum");
                self.expr(&args[2], frame);
            }
            // utoipa-axum: `.routes(routes!(create, update))`
            (Kind::Axum, "routes") if args.len() == 1 => {
                let v = self.expr(&args[0], frame);
                let mut fns = Vec::new();
                collect_fns(&v, &mut fns);
                for f in fns {
                    let entries = self.openapi_entries(f);
                    self.arena[h].entries.extend(entries);
                }
            }
            // axum-extra `RouterExt::typed_post(handler)`: the path is the `#[typed_path]` of the
            // type the handler takes first.
            (Kind::Axum, n)
                if args.len() == 1
                    && n.strip_prefix("typed_")
                        .is_some_and(|v| METHODS.contains(&v)) =>
            {
                let v = self.expr(&args[0], frame);
                self.typed_route(h, &n["typed_".len()..], &v, (m, line));
            }
            // utoipa-axum: the router and its OpenAPI document
            (Kind::Axum, "split_for_parts") => return V::List(vec![V::Handle(h), V::Unknown]),
            (Kind::Poem, "at") if args.len() == 2 => {
                let path = self.expr(&args[0], frame);
                let (path, complete) = self.route_path_of(&path, m, line);
                match self.expr(&args[1], frame) {
                    V::MethodRouter(routes) => {
                        for r in routes {
                            self.arena[h].entries.push(Entry {
                                method: r.method,
                                path: path.clone(),
                                framework: "poem",
                                module: r.module,
                                line: r.line,
                                handler: r.handler,
                                middleware: r.middleware,
                                path_complete: complete,
                            });
                        }
                    }
                    V::Handle(c) => self.absorb(h, c, (&path, complete)),
                    _ => {}
                }
            }
            (Kind::Poem, "nest" | "nest_no_strip") if args.len() == 2 => {
                let prefix = self.expr(&args[0], frame);
                let prefix = self.prefix_of(&prefix, args.first(), m, line, name);
                if let V::Handle(c) = self.expr(&args[1], frame) {
                    self.absorb(h, c, (&prefix.0, prefix.1));
                }
            }
            // an OpenAPI service's documents are other endpoints, not its routes
            (
                Kind::Poem,
                "spec_endpoint" | "spec_endpoint_yaml" | "swagger_ui" | "rapidoc" | "redoc"
                | "stoplight_elements" | "openapi_explorer" | "scalar" | "spec" | "spec_yaml",
            ) => {
                self.eval_args(args, frame);
                return V::Unknown;
            }
            (Kind::Axum, "nest" | "nest_service" | "nest_api_service" | "route_service")
                if args.len() == 2 =>
            {
                let prefix = self.expr(&args[0], frame);
                let prefix = self.prefix_of(&prefix, args.first(), m, line, name);
                match self.expr(&args[1], frame) {
                    V::Handle(c) => self.absorb(h, c, (&prefix.0, prefix.1)),
                    // a router or service of the project's that is not read (a trait's method on
                    // a generic, a `tower::Service` of its own): its endpoints are missing, and
                    // that is said rather than passed over
                    V::Unknown | V::Instance(..) if !names_static_service(&args[1]) => {
                        self.diagnostics.insert(Diagnostic::new(
                            self.model.file_of(m),
                            line,
                            format!(
                                "the router or service given to `{name}` at `{}` could not be read: the endpoints it serves are missing from this audit",
                                normalize_path(&prefix.0)
                            ),
                        ));
                    }
                    V::Unknown | V::Instance(..) => {}
                    v => self.library_service(h, &v, (prefix.0, prefix.1), m, line),
                }
            }
            // A router whose fallback is a library's service (`Router::new()
            // .fallback_service(StreamableHttpService::new(..))`, nested at `/mcp`): the service
            // answers every method at the router's root, as a nested service does.
            (Kind::Axum, "fallback_service") if args.len() == 1 => {
                let v = self.expr(&args[0], frame);
                self.library_service(h, &v, ("/".to_string(), true), m, line);
            }
            (Kind::Axum, "merge") if args.len() == 1 => {
                if let V::Handle(c) = self.expr(&args[0], frame) {
                    self.absorb(h, c, ("", true));
                }
            }
            (Kind::Axum | Kind::Loco, "layer" | "route_layer") if args.len() == 1 => {
                let v = self.expr(&args[0], frame);
                let mut mws = Vec::new();
                Self::mws_of(&v, m, line, &mut mws);
                for e in &mut self.arena[h].entries {
                    e.middleware.extend(mws.iter().cloned());
                }
            }
            (Kind::Rocket, "mount") if args.len() == 2 => {
                let prefix = self.expr(&args[0], frame);
                let (prefix, complete) = self.prefix_of(&prefix, args.first(), m, line, "mount");
                let routes = self.expr(&args[1], frame);
                let mut fns = Vec::new();
                collect_fns(&routes, &mut fns);
                for f in fns {
                    for mut e in self.attr_entries(f, "rocket") {
                        e.path = join_path(&prefix, &e.path);
                        e.path_complete &= complete;
                        self.arena[h].entries.push(e);
                    }
                }
            }
            (Kind::Rocket, "attach")
            | (Kind::ActixApp | Kind::ActixScope | Kind::ActixResource, "wrap" | "wrap_fn")
                if args.len() == 1 =>
            {
                let v = self.expr(&args[0], frame);
                let mut mws = Vec::new();
                Self::mws_of(&v, m, line, &mut mws);
                self.arena[h].pending.extend(mws);
            }
            (
                Kind::ActixApp | Kind::ActixScope | Kind::ActixConfig | Kind::ActixResource,
                "service" | "services",
            ) => {
                let vals = self.eval_args(args, frame);
                for (v, a) in vals.into_iter().zip(args) {
                    // `.service(rest_pay)` of a name nothing in view defines: a handler a macro
                    // generates (`post!(pay, ..)` expanding to `#[post("pay")] fn rest_pay`)
                    // (a name that resolves to nothing evaluates to itself)
                    let unresolved =
                        matches!((&v, a), (V::Ext(p), Ex::Path(written, _)) if p == written);
                    if unresolved {
                        self.unread_service(a, m, line);
                    }
                    self.actix_service(h, v);
                }
            }
            (Kind::ActixResource, "route") if args.len() == 1 => {
                let v = self.expr(&args[0], frame);
                self.actix_route(h, "", v, None);
            }
            (Kind::ActixApp | Kind::ActixScope | Kind::ActixConfig, "route") if args.len() == 2 => {
                let path = self.expr(&args[0], frame);
                let v = self.expr(&args[1], frame);
                let (path, complete) = match v {
                    V::ActixRoute { .. } => self.route_path_of(&path, m, line),
                    _ => (self.str_of(&path), true),
                };
                let before = self.arena[h].entries.len();
                self.actix_route(h, &path, v, Some((m, line)));
                for e in &mut self.arena[h].entries[before..] {
                    e.path_complete &= complete;
                }
            }
            (Kind::ActixResource, "to" | "to_async") if args.len() == 1 => {
                let v = self.expr(&args[0], frame);
                let route = V::ActixRoute {
                    methods: vec![],
                    handler: Some(Self::handler_of(&v)),
                };
                self.actix_route(h, "", route, None);
            }
            (Kind::ActixResource, "guard") if args.len() == 1 => {
                let v = self.expr(&args[0], frame);
                let ms = Self::methods_in(&v);
                self.arena[h].methods.extend(ms);
            }
            (Kind::ActixApp | Kind::ActixScope | Kind::ActixConfig, "configure")
                if args.len() == 1 =>
            {
                let f = self.expr(&args[0], frame);
                match f {
                    // A function with no body in view: a trait's declaration whose
                    // implementation a macro generates (`.configure(<Api as Routes>::configure)`).
                    V::Func(Handler::Fn(g)) if self.model.fns[g].func.body.is_empty() => {
                        self.unread_configure(&args[0], m, line)
                    }
                    V::Func(fh) => {
                        let c = self.new_router(Kind::ActixConfig, String::new(), m, line);
                        self.call_closure(&fh, vec![c.clone()]);
                        if let V::Handle(c) = c {
                            self.absorb(h, c, ("", true));
                        }
                    }
                    V::Unknown | V::Ext(_) if matches!(args[0], Ex::Path(..)) => {
                        self.unread_configure(&args[0], m, line)
                    }
                    _ => {}
                }
            }
            // a poem-openapi service's document settings keep it a document
            (
                Kind::Poem,
                "server" | "summary" | "description" | "license" | "contact" | "external_document"
                | "terms_of_service" | "url_prefix",
            ) => {
                self.eval_args(args, frame);
            }
            _ => {
                // with_state, fallback, app_data, default_service, …: the router itself
                let vals = self.eval_args(args, frame);
                for v in &vals {
                    self.serve(v);
                }
                self.arena[h].docs_only = false;
            }
        }
        V::Handle(h)
    }

    /// `.route(path, method_router)` on axum router `h` (loco's `.add(path, method_router)`).
    /// A service a library provides, served at `path` (an MCP or gRPC transport, a proxy): it
    /// answers every method there with code this audit does not read, so it is listed once, as
    /// `POST`, its handler named and not followed. Services that answer reads only are not.
    fn library_service(&mut self, h: usize, v: &V<'a>, path: (String, bool), m: ModId, line: Line) {
        let V::Ext(p) = v else { return };
        if p.last()
            .is_some_and(|t| STATIC_SERVICES.contains(&t.as_str()))
        {
            return;
        }
        self.arena[h].entries.push(Entry {
            method: ANY_METHOD[0].to_string(),
            path: path.0,
            framework: "axum",
            module: m,
            line,
            handler: Handler::Named(p.join("::")),
            middleware: Vec::new(),
            path_complete: path.1,
        });
    }

    fn axum_route(
        &mut self,
        h: usize,
        path: &'a Ex,
        mr: &'a Ex,
        frame: &mut Frame<'a>,
        framework: &'static str,
    ) {
        let written = path.line();
        let path = self.expr(path, frame);
        let routes = self.expr(mr, frame);
        if let V::MethodRouter(routes) = routes {
            let line = match routes.first() {
                Some(r) if written == 0 => r.line,
                _ => written,
            };
            let (path, complete) = self.route_path_of(&path, frame.module, line);
            for r in routes {
                self.arena[h].entries.push(Entry {
                    method: r.method,
                    path: path.clone(),
                    framework,
                    module: r.module,
                    line: r.line,
                    handler: r.handler,
                    middleware: r.middleware,
                    path_complete: complete,
                });
            }
        }
    }

    /// An axum-extra typed route: `method` at the path of the `TypedPath` type the handler takes
    /// as its first argument (`async fn create(New { team_id }: New, ..)`). A handler whose type
    /// cannot be read is listed at `/`, `path_complete: false`, with a diagnostic.
    fn typed_route(&mut self, h: usize, method: &str, v: &V<'a>, (m, line): (ModId, Line)) {
        let handler = Self::handler_of(v);
        let path = match &handler {
            Handler::Fn(f) => {
                let def = &self.model.fns[*f];
                def.func
                    .params
                    .iter()
                    .find(|p| p.name != "self")
                    .and_then(|p| p.ty.as_ref())
                    .and_then(|ty| match self.model.resolve(def.module, &ty.path) {
                        Res::Type(tm, name) => self.model.modules[tm]
                            .typed_paths
                            .get(&name)
                            .map(|p| p.to_string()),
                        _ => None,
                    })
            }
            _ => None,
        };
        let complete = path.is_some();
        if !complete {
            self.diagnostics.insert(Diagnostic::new(
                self.model.file_of(m),
                line,
                format!(
                    "the typed route `typed_{method}` takes its path from the `#[typed_path]` of its handler's first argument, which could not be read: it is listed at `/`, marked `path_complete: false`"
                ),
            ));
        }
        self.arena[h].entries.push(Entry {
            method: method.to_ascii_uppercase(),
            path: path.unwrap_or_default(),
            framework: "axum",
            module: m,
            line,
            handler,
            middleware: vec![],
            path_complete: complete,
        });
    }

    fn actix_service(&mut self, h: usize, v: V<'a>) {
        match v {
            V::Handle(c) => self.absorb(h, c, ("", true)),
            V::Func(Handler::Fn(f)) if !self.model.fns[f].func.route_attrs.is_empty() => {
                let entries = self.attr_entries(f, "actix-web");
                self.arena[h].entries.extend(entries);
            }
            V::List(items) => {
                for i in items {
                    self.actix_service(h, i);
                }
            }
            _ => {}
        }
    }

    /// A route on an actix router: `path` relative to it; `at` is the `.route(` call for scope
    /// routes (resource routes are located at the resource).
    fn actix_route(&mut self, h: usize, path: &str, v: V<'a>, at: Option<(ModId, Line)>) {
        let V::ActixRoute { methods, handler } = v else {
            return;
        };
        let Some(handler) = handler else { return };
        let mut methods = methods;
        if methods.is_empty() {
            methods = self.arena[h].methods.clone();
        }
        // No method guard on the route nor its resource: every method.
        if methods.is_empty() {
            methods = ANY_METHOD.iter().map(|m| m.to_string()).collect();
        }
        let (module, line) = at.unwrap_or((self.arena[h].module, self.arena[h].line));
        for method in methods {
            self.arena[h].entries.push(Entry {
                method,
                path: path.to_string(),
                framework: "actix-web",
                module,
                line,
                handler: handler.clone(),
                middleware: vec![],
                path_complete: true,
            });
        }
    }
}

fn ty_name(r: &Res) -> Option<&str> {
    match r {
        Res::Type(_, n) | Res::Trait(_, n) => Some(n),
        Res::Ext(p) => p.last().map(String::as_str),
        _ => None,
    }
}

/// The body of a lowered `for` loop (`Other([iter, Block([let pat = item#, ..])])`).
fn for_body(children: &[Ex]) -> Option<&[Stmt]> {
    let [_, Ex::Block(body)] = children else {
        return None;
    };
    match body.first() {
        Some(Stmt::Let {
            init: Some(init), ..
        }) if matches!(&**init, Ex::Path(p, _) if p.len() == 1 && p[0] == FOR_ITEM) => Some(body),
        _ => None,
    }
}

fn collect_fns(v: &V<'_>, out: &mut Vec<FnId>) {
    match v {
        V::Func(Handler::Fn(f)) => out.push(*f),
        V::List(items) => items.iter().for_each(|i| collect_fns(i, out)),
        _ => {}
    }
}

/// An expression as the code writes it, where it is a path, a field, a reference or a call on
/// those (`config.admin_prefix`, `&prefix`, `env::var("PREFIX").unwrap()`): what `[[mount]]`'s
/// `expression` is compared with.
fn source_text(e: &Ex) -> Option<String> {
    fn go(e: &Ex, depth: usize) -> Option<String> {
        if depth > 16 {
            return None;
        }
        Some(match e {
            Ex::Lit(s) => format!("{s:?}"),
            Ex::Path(p, _) => p.join("::"),
            Ex::Field(b, f) => format!("{}.{f}", go(b, depth + 1)?),
            Ex::Method(r, name, args, _) => {
                let args: Option<Vec<String>> = args.iter().map(|a| go(a, depth + 1)).collect();
                format!("{}.{name}({})", go(r, depth + 1)?, args?.join(", "))
            }
            Ex::Call(f, args, _) => {
                let args: Option<Vec<String>> = args.iter().map(|a| go(a, depth + 1)).collect();
                format!("{}({})", go(f, depth + 1)?, args?.join(", "))
            }
            _ => return None,
        })
    }
    go(e, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            normalize_path("/api/articles/:slug"),
            "/api/articles/{slug}"
        );
        assert_eq!(normalize_path("/files/*rest"), "/files/{rest}");
        assert_eq!(normalize_path("/u/<id>/<path..>?<q>"), "/u/{id}/{path}");
        assert_eq!(normalize_path("/x/{id:\\d+}"), "/x/{id}");
        assert_eq!(
            normalize_path("users/{id|\\d+}/<**rest>"),
            "/users/{id}/{rest}"
        );
        assert_eq!(normalize_path("/f/{**path}/<n:num>"), "/f/{path}/{n}");
        assert_eq!(normalize_path(""), "/");
        // actix patterns with braces, slashes and `?` of their own
        assert_eq!(
            normalize_path("/1.5/{uid:[0-9]{1,10}}/storage/{collection:[a-z/]{1,32}}?x=1"),
            "/1.5/{uid}/storage/{collection}"
        );
        assert_eq!(
            normalize_path("/files/{name:[a-z]+}.json/{tail:.*?}"),
            "/files/{name}.json/{tail}"
        );
        assert_eq!(normalize_path("/a/{x}-{y:\\d+}"), "/a/{x}-{y}");
        assert_eq!(join_path("/api/v3", ""), "/api/v3");
        assert_eq!(join_path("/api/", "/x"), "/api/x");
    }
}
