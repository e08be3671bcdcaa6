//! Router mounting: routers nested under prefixes across files, plugins registered under
//! prefixes, middleware in each framework's order, NestJS controllers under the bootstrap's global
//! prefix and version; one endpoint per (method, full path).

use super::resolve::{ModId, Resolved, Resolver};
use crate::config::Config;
use crate::facts::{Diagnostic, Protocol};
use crate::program::{
    ClassId, FnId, Module, ParamSlot, RouterId, RouterItem, RouterKind, Val, WrittenAt,
};
use std::collections::{BTreeMap, BTreeSet};

mod dirs;
mod graphql;
mod nest;
mod openapi;
mod spec;
mod tables;
mod ts_rest;

/// A route before its handler is followed.
#[derive(Debug, Clone)]
pub struct RawRoute {
    pub method: String,
    pub path: String,
    pub framework: &'static str,
    pub module: ModId,
    pub line: u32,
    pub handler: Val,
    /// The module `handler` is written in (it can differ from `module`, the route's location).
    pub handler_module: ModId,
    /// Every middleware covering the route, outermost first, with the module it was written in.
    pub middleware: Vec<(ModId, Val)>,
    /// Only the handler's code under this method's `req.method` branch runs (Next.js pages).
    pub branch: Option<String>,
    pub protocol: Protocol,
    /// The handler's name in reports when it is not its function's (a tRPC procedure's path).
    pub handler_name: Option<String>,
    /// False when part of the path could not be read (see [`crate::facts::Endpoint`]).
    pub path_complete: bool,
    /// More functions that run as the handler, in order after it, each written in its module: what
    /// they do is the route's too (EverShop's middleware files of a route folder).
    pub steps: Vec<(ModId, Val)>,
    /// The file the route is declared in when it is not a module (EverShop's `route.json`): the
    /// route's location is there, at `line`.
    pub file: Option<String>,
}

/// Something mounted like middleware or a plugin that serves a whole protocol under its prefix (a
/// tRPC adapter: `app.use('/trpc', createExpressMiddleware({ router }))`, Fastify's
/// `register(fastifyTRPCPlugin, { prefix, trpcOptions })`).
#[derive(Debug, Clone)]
pub struct Mount {
    pub module: ModId,
    /// The value mounted (the adapter call, or the plugin).
    pub value: Val,
    /// A plugin's options.
    pub options: Option<Val>,
    /// The full prefix it is mounted under (`/` for the root).
    pub prefix: String,
    /// The middleware in front of it, outermost first.
    pub middleware: Vec<(ModId, Val)>,
    pub framework: &'static str,
    pub line: u32,
    /// False when part of `prefix` could not be read (an unmounted router's adapter).
    pub prefix_complete: bool,
}

/// A router: one an app or file made, or the context a plugin function receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Local(ModId, RouterId),
    Plugin(ModId, FnId),
    /// The router (module, router) that a field of every instance holds, made by the constructor
    /// of a base class, as instances of a subclass (module, class) have it: what the subclass
    /// registers on `this.app` and through the base class's helpers (`this.route({ method, path,
    /// handler })`), after what the base class registers for every instance.
    Instance(ModId, ClassId, ModId, RouterId),
    /// The router (module, router) a function makes afresh at each call (see
    /// [`RouterFacts::made_in`]), as one call makes it: the module of the call and a hash of the
    /// call as written there. What the function registers on every router it makes, then what is
    /// registered on this one.
    Made(ModId, u64, ModId, RouterId),
}

type Items = BTreeMap<Key, Vec<(ModId, RouterItem)>>;
/// Registrations waiting for the router a function receives: (parameter index, module, item).
type ParamItems = BTreeMap<(ModId, usize), Vec<(ParamSlot, ModId, RouterItem)>>;

const MAX_NESTING: usize = 24;
/// Most paths one prefix or route path made of pieces stands for.
const MAX_CHOICES: usize = 64;
/// How many functions a router parameter is followed through (`routes(app)` calling `users(app)`).
const PARAM_ROUNDS: usize = 6;

/// Where clients reach an app that a Supabase Edge Function serves: the function in
/// `supabase/functions/<name>/` answers `https://<project>.supabase.co/functions/v1/<name>/..`,
/// and hands its app the path from `/<name>` on (which is why its app has
/// `basePath('/<name>')`). The app's paths sit under `/functions/v1`. Folders whose name starts
/// with `_` (`_shared`) hold code the functions import, no function.
fn supabase_function_prefix(file: &str) -> &'static str {
    let parts: Vec<&str> = file.split('/').collect();
    let served = parts.windows(4).any(|w| {
        w[0] == "supabase" && w[1] == "functions" && !w[2].starts_with('_') && !w[2].is_empty()
    });
    if served { "/functions/v1" } else { "" }
}

/// Joins prefix and path: `:id` → `{id}`, no trailing slash, `/` for the root.
pub fn normalize_path(prefix: &str, path: &str) -> String {
    let joined = format!("{prefix}/{path}");
    let mut segs = Vec::new();
    for seg in joined.split('/').filter(|s| !s.is_empty()) {
        if let Some(name) = seg.strip_prefix(':') {
            let name: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            segs.push(format!("{{{name}}}"));
        } else {
            segs.push(seg.to_string());
        }
    }
    format!("/{}", segs.join("/"))
}

/// The server framework the package holding `file` depends on (its nearest package.json): what
/// dispatches the routes of a router class the project writes.
fn server_framework(res: &Resolver, file: &str) -> &'static str {
    let dir = file.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let deps = res
        .manifests()
        .filter(|(d, _)| d.is_empty() || dir == *d || dir.starts_with(&format!("{d}/")))
        .max_by_key(|(d, _)| d.len())
        .map(|(_, deps)| deps);
    const SERVERS: &[&str] = &["koa", "express", "fastify", "hono"];
    deps.and_then(|deps| {
        SERVERS
            .iter()
            .find(|s| deps.iter().any(|d| d == *s))
            .copied()
    })
    .unwrap_or("node")
}

fn methods_of(m: &str) -> Vec<&'static str> {
    match m.to_ascii_lowercase().as_str() {
        "all" => crate::facts::MUTATION_METHODS.to_vec(),
        "get" => vec!["GET"],
        "post" => vec!["POST"],
        "put" => vec!["PUT"],
        "patch" => vec!["PATCH"],
        "delete" | "del" => vec!["DELETE"],
        "head" => vec!["HEAD"],
        _ => vec![],
    }
}

/// Middleware with the path scope it covers, relative to the router it sits in.
type Scoped = (ModId, Val, String);

/// A scope seen from a router mounted at `mount`: all of it (`""`), the rest of it, or nothing.
fn rescope(scope: &str, mount: &str) -> Option<String> {
    if under(mount, scope) {
        return Some(String::new());
    }
    let mount = mount.trim_end_matches('/');
    let s = scope.trim_end_matches('*');
    s.strip_prefix(mount)
        .filter(|rest| rest.starts_with('/'))
        .map(|rest| format!("{rest}*"))
}

/// Is `path` inside a middleware scope (`/admin`, `/admin/*`, `*`)?
fn under(path: &str, scope: &str) -> bool {
    let scope = scope.trim_end_matches('*').trim_end_matches('/');
    scope.is_empty() || path == scope || path.starts_with(&format!("{scope}/"))
}

/// Field `f` of a value as a caller writes it: of an object literal (`{ server }`), or symbolic.
fn field_of(v: &Val, f: &str) -> Val {
    match v {
        Val::Obj(fields) => fields
            .iter()
            .rev()
            .find(|(k, _)| k == f)
            .map(|(_, x)| x.clone())
            .unwrap_or(Val::Unknown),
        Val::Unknown => Val::Unknown,
        other => Val::Member(std::sync::Arc::new(other.clone()), f.to_string()),
    }
}

/// A receiver that is the caller's own parameter (or a field of it): the router is passed on.
fn forwarded(receiver: &Val, caller: FnId) -> Option<ParamSlot> {
    match receiver {
        Val::Param(f, i) if *f == caller => Some(ParamSlot::at(*i)),
        Val::Member(inner, p) => {
            let mut slot = forwarded(inner, caller)?;
            if slot.fields.len() >= 3 {
                return None;
            }
            slot.fields.push(p.clone());
            Some(slot)
        }
        _ => None,
    }
}

/// Does `v` mention a parameter of function `f`?
fn mentions_param(v: &Val, f: FnId) -> bool {
    match v {
        Val::Param(g, _) => *g == f,
        Val::Member(inner, _) | Val::Element(inner) => mentions_param(inner, f),
        Val::Template(parts) | Val::Arr(parts) => parts.iter().any(|p| mentions_param(p, f)),
        Val::EnvDefault { value, .. } => mentions_param(value, f),
        _ => false,
    }
}

/// The parameter a value is, when it is one (`Val::Param`).
fn param_index(v: &Val) -> Option<usize> {
    match v {
        Val::Param(_, k) => Some(*k),
        _ => None,
    }
}

/// Does a registration made at a call still take its method, path or handler from parameters of
/// function `f` (the caller, itself a helper)?
fn route_mentions_param(item: &RouterItem, f: FnId) -> bool {
    match item {
        RouterItem::Route {
            method,
            paths,
            written_at,
            ..
        } => {
            mentions_param(method, f)
                || mentions_param(paths, f)
                || written_at.as_ref().is_some_and(|w| {
                    w.handler.as_ref().is_some_and(|h| mentions_param(h, f))
                        || w.route.as_ref().is_some_and(|(_, method, paths)| {
                            mentions_param(method, f) || mentions_param(paths, f)
                        })
                })
        }
        _ => false,
    }
}

/// The part of a helper's value that the caller passes: `options.handler` in
/// `this.withErrors(options.handler)`, a parameter or a field of one, unwrapped from the helper's
/// own calls around it (read where the caller is, without them).
fn passed_part(v: &Val, f: FnId) -> Option<Val> {
    match v {
        Val::Param(g, _) if *g == f => Some(v.clone()),
        Val::Member(inner, _)
            if mentions_param(inner, f) && !matches!(inner.as_ref(), Val::Call(..)) =>
        {
            passed_part(inner, f).map(|_| v.clone())
        }
        Val::Call(callee, args) => {
            args.iter()
                .find_map(|a| passed_part(a, f))
                .or_else(|| match callee.as_ref() {
                    Val::Member(inner, m) if m == "bind" => passed_part(inner, f),
                    _ => None,
                })
        }
        _ => None,
    }
}

/// `v` with each parameter of `f` replaced by the argument a call passes for it.
fn replace_params(v: &Val, f: FnId, args: &[Val]) -> Val {
    match v {
        Val::Param(g, i) if *g == f => crate::program::argument(args, *i)
            .cloned()
            .unwrap_or(Val::Unknown),
        Val::Member(inner, p) => match replace_params(inner, f, args) {
            Val::Obj(fields) => field_of(&Val::Obj(fields), p),
            x => Val::Member(std::sync::Arc::new(x), p.clone()),
        },
        Val::Element(inner) => Val::Element(std::sync::Arc::new(replace_params(inner, f, args))),
        Val::Call(..) if !crate::program::names_param_of(v, f) => v.clone(),
        Val::Call(callee, xs) => Val::Call(
            std::sync::Arc::new(replace_params(callee, f, args)),
            xs.iter().map(|x| replace_params(x, f, args)).collect(),
        ),
        Val::Template(parts) => {
            Val::Template(parts.iter().map(|p| replace_params(p, f, args)).collect())
        }
        Val::Arr(items) => Val::Arr(items.iter().map(|p| replace_params(p, f, args)).collect()),
        Val::EnvDefault { var, value } => Val::EnvDefault {
            var: var.clone(),
            value: std::sync::Arc::new(replace_params(value, f, args)),
        },
        other => other.clone(),
    }
}

/// The class whose `this` function `f` sees: its own, or, for a callback defined inside a method
/// (`routes.forEach((r) => this.route(r))`), the enclosing method's.
fn class_of(module: &Module, f: FnId) -> Option<ClassId> {
    let mut f = f;
    for _ in 0..8 {
        if let Some(c) = module.functions[f].class {
            return Some(c);
        }
        f = module
            .functions
            .iter()
            .position(|g| g.children.contains(&f))?;
    }
    None
}

/// Code as a message shows it: in backticks, doubled when the code has one (a template literal).
fn code(text: &str) -> String {
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

fn dir_of(file: &str) -> &str {
    file.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

pub struct Mounter<'a> {
    res: &'a Resolver<'a>,
    /// Known prefixes for routers mounted dynamically (`[[mount]]` in retrysafe.toml).
    config: &'a Config,
    items: Items,
    /// Functions whose router parameter was bound by a call: not roots of their own.
    applied: BTreeSet<(ModId, FnId)>,
    routes: Vec<RawRoute>,
    /// tRPC adapters mounted on the routers walked.
    mounts: Vec<Mount>,
    pub diagnostics: Vec<Diagnostic>,
    /// NestJS configuration factories, found once when a configuration value is first read.
    nest_config: Option<Vec<nest::ConfigFactory>>,
    /// NestJS controllers by (module, class name), each with the bootstrap whose root module
    /// imports the module that lists it; found once, when a controller has no bootstrap in a
    /// folder around it.
    nest_served: Option<std::collections::HashMap<(ModId, String), ModId>>,
    /// The module of the first router or prefix cut at the resolver's depth limit.
    depth_cut: std::cell::Cell<Option<ModId>>,
    /// What a server passes its resolvers' parameters (a GraphQL server's context).
    bindings: Vec<Binding>,
    /// The ts-rest implementations `createExpressEndpoints` registers.
    ts_rest_registered: Vec<(ModId, Val)>,
    /// The walk is under a router nothing mounts or a prefix that could not be read: the paths
    /// it makes are incomplete.
    incomplete: bool,
    /// Next.js route files that serve a GraphQL server (`startServerAndCreateNextHandler`): the
    /// module and its path. Their mutations are the endpoints, not the file's handler.
    gql_next: Vec<(ModId, String)>,
    /// The arguments of each call that makes routers afresh (see [`Key::Made`]): (module of the
    /// call, hash of the call) → arguments, read in that module.
    made_args: std::cell::RefCell<BTreeMap<(ModId, u64), Vec<Val>>>,
    /// The repository's API documents, for spec-first routers (see `spec`).
    docs: Option<&'a crate::facts::doc::ApiDocs>,
}

/// A parameter of a function (module, function, index) and what the framework passes it.
pub type Binding = ((ModId, FnId, usize), Resolved);

impl<'a> Mounter<'a> {
    /// The repository's API documents, read by spec-first routers.
    pub fn with_docs(mut self, docs: &'a crate::facts::doc::ApiDocs) -> Self {
        self.docs = Some(docs);
        self
    }

    pub fn new(res: &'a Resolver<'a>, config: &'a Config) -> Self {
        let mut items: Items = BTreeMap::new();
        for (m, module) in res.modules.iter().enumerate() {
            for (r, router) in module.routers.iter().enumerate() {
                items
                    .entry(Key::Local(m, r))
                    .or_default()
                    .extend(router.items.iter().map(|i| (m, i.clone())));
            }
            for (f, facts) in module.functions.iter().enumerate() {
                for (slot, item) in &facts.param_items {
                    if *slot == ParamSlot::at(0) {
                        items
                            .entry(Key::Plugin(m, f))
                            .or_default()
                            .push((m, item.clone()));
                    }
                }
            }
        }
        let mut mounter = Mounter {
            res,
            config,
            items,
            applied: BTreeSet::new(),
            routes: Vec::new(),
            mounts: Vec::new(),
            diagnostics: Vec::new(),
            nest_config: None,
            nest_served: None,
            depth_cut: std::cell::Cell::new(None),
            bindings: Vec::new(),
            ts_rest_registered: Vec::new(),
            incomplete: false,
            gql_next: Vec::new(),
            made_args: Default::default(),
            docs: None,
        };
        mounter.add_foreign_items();
        mounter.add_openapi_items();
        mounter.add_param_items();
        mounter
    }

    fn modules(&self) -> &'a [Module] {
        self.res.modules
    }

    /// What a router, a mounted value or a prefix is; a cut at the resolver's depth limit is
    /// remembered for a diagnostic.
    fn resolve(&self, m: ModId, v: &Val) -> Resolved {
        self.res.take_depth_cut();
        let r = self.res.resolve(m, v);
        if self.res.take_depth_cut().is_some() && self.depth_cut.get().is_none() {
            self.depth_cut.set(Some(m));
        }
        r
    }

    /// [`Self::resolve`] where a string is wanted: a literal fallback the code writes for a value
    /// it does not show is taken ([`Resolver::resolve_str`]).
    fn resolve_str(&self, m: ModId, v: &Val) -> Resolved {
        self.res.take_depth_cut();
        let r = self.res.resolve_str(m, v);
        if self.res.take_depth_cut().is_some() && self.depth_cut.get().is_none() {
            self.depth_cut.set(Some(m));
        }
        r
    }

    /// `router.post(...)` on a router imported from another file.
    fn add_foreign_items(&mut self) {
        for (m, module) in self.modules().iter().enumerate() {
            for (receiver, item) in &module.foreign_items {
                if let Some(key) = self.router_key(m, receiver) {
                    self.items.entry(key).or_default().push((m, item.clone()));
                }
            }
        }
    }

    /// `function routes(app) { app.post(...) }` called as `routes(app)`: the registrations go to
    /// the router passed in, also through functions that pass their parameter on.
    fn add_param_items(&mut self) {
        let mut pending: ParamItems = BTreeMap::new();
        for (m, module) in self.modules().iter().enumerate() {
            for (f, facts) in module.functions.iter().enumerate() {
                for (slot, item) in &facts.param_items {
                    pending
                        .entry((m, f))
                        .or_default()
                        .push((slot.clone(), m, item.clone()));
                }
            }
        }
        let closures: BTreeMap<(ModId, FnId), &[(RouterId, RouterItem)]> = self
            .modules()
            .iter()
            .enumerate()
            .flat_map(|(m, module)| {
                module
                    .functions
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| !f.closure_items().is_empty())
                    .map(move |(f, facts)| ((m, f), facts.closure_items()))
            })
            .collect();
        if pending.is_empty() && closures.is_empty() {
            return;
        }
        // Every call to a function of the tree, its callee resolved once for all rounds:
        // (caller's module, caller, index of the call, callee).
        let mut calls_to: Vec<(ModId, FnId, usize, (ModId, FnId))> = Vec::new();
        for (m, module) in self.modules().iter().enumerate() {
            for (caller, facts) in module.functions.iter().enumerate() {
                for (i, cs) in facts.calls.iter().enumerate() {
                    match self.res.resolve(m, &cs.callee) {
                        Resolved::Func(tm, tf) => calls_to.push((m, caller, i, (tm, tf))),
                        // `new DocApi(app)`: a call of the constructor, whose parameter the
                        // instance keeps (`constructor(private app: Application)`) and whose
                        // methods register routes on (`this.app.post(..)`).
                        Resolved::Class(tm, tc) if cs.is_new => {
                            if let Some(ctor) = self.modules()[tm].classes[tc].method("constructor")
                            {
                                calls_to.push((m, caller, i, (tm, ctor)));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        self.add_closure_items(&closures, &calls_to);
        for _round in 0..PARAM_ROUNDS {
            if pending.is_empty() {
                break;
            }
            let mut next: ParamItems = BTreeMap::new();
            for &(m, caller, i, (tm, tf)) in &calls_to {
                let Some(list) = pending.get(&(tm, tf)) else {
                    continue;
                };
                let cs = &self.modules()[m].functions[caller].calls[i];
                for (slot, im, item) in list {
                    if slot.is_this() {
                        self.this_helper_call(
                            (slot, *im, item),
                            (tm, tf),
                            (m, caller, i),
                            &mut next,
                        );
                        continue;
                    }
                    let Some(arg) = cs.args.get(slot.index) else {
                        continue;
                    };
                    // What the callee receives there, as the caller writes it.
                    let receiver = slot.fields.iter().fold(arg.clone(), |v, f| field_of(&v, f));
                    // A method of an object a factory returns (`endpoint.mountHttp(app)` on
                    // `defineEndpoint({ route, handler })`), which registers what the factory
                    // was given: the factory's parameters are that call's arguments.
                    let made =
                        self.factory_call(m, &cs.callee, (tm, tf))
                            .and_then(|(mf, made_args)| {
                                self.instantiate(item, (*im, tm, mf), made_args, m, (m, cs.line))
                                    .into_iter()
                                    .next()
                                    .map(|(_, made)| made)
                            });
                    let item = made.as_ref().unwrap_or(item);
                    // The registration as this call makes it: the callee's parameters in
                    // its method and path are this call's arguments.
                    let (_, item) = self
                        .instantiate(item, (*im, tm, tf), &cs.args, m, (m, cs.line))
                        .remove(0);
                    match forwarded(&receiver, caller) {
                        Some(up) => {
                            if up == ParamSlot::at(0) {
                                self.items
                                    .entry(Key::Plugin(m, caller))
                                    .or_default()
                                    .push((*im, item.clone()));
                            }
                            next.entry((m, caller)).or_default().push((up, *im, item));
                            self.applied.insert((tm, tf));
                        }
                        None => {
                            if let Some(key) = self.router_key(m, &receiver) {
                                self.items.entry(key).or_default().push((*im, item));
                                self.applied.insert((tm, tf));
                            }
                        }
                    }
                }
            }
            pending = next;
        }
        // Registrations still waiting: a router passed on through more functions than followed.
        let called: BTreeSet<(ModId, FnId)> = calls_to.iter().map(|c| c.3).collect();
        for ((m, f), list) in pending {
            if called.contains(&(m, f)) {
                let facts = &self.modules()[m].functions[f];
                self.diagnostics.push(Diagnostic::new(
                    self.modules()[m].file.clone(),
                    facts.line,
                    format!(
                        "`{}` receives its router through more than {PARAM_ROUNDS} functions passing it on: its {} registration(s) are left out of the inventory",
                        facts.name,
                        list.len()
                    ),
                ));
            }
        }
    }

    /// The factory that made the object whose method `callee` calls, when the method `(tm, tf)`
    /// is written inside it (`defineEndpoint(args)` returning `{ mount(app) { app.openapi(
    /// args.route, args.handler) } }`): the factory and the arguments of the call that made the
    /// object.
    fn factory_call<'v>(
        &self,
        m: ModId,
        callee: &'v Val,
        (tm, tf): (ModId, FnId),
    ) -> Option<(FnId, &'v [Val])> {
        let Val::Member(object, _) = callee else {
            return None;
        };
        let Val::Call(maker, made_args) = object.as_ref() else {
            return None;
        };
        let Resolved::Func(fm, mf) = self.res.resolve(m, maker) else {
            return None;
        };
        if fm != tm {
            return None;
        }
        let functions = &self.modules()[tm].functions;
        // (written in it, at most a few functions deep)
        let mut inside = vec![mf];
        for _ in 0..4 {
            if inside.contains(&tf) {
                break;
            }
            inside = inside
                .iter()
                .flat_map(|g| functions[*g].children.iter().copied())
                .collect();
        }
        inside.contains(&tf).then_some((mf, made_args.as_slice()))
    }

    /// Registrations a function makes on a router of its enclosing scope from its parameters
    /// (see [`FnFacts::closure_items`]): made at each call found, on that router; a function no
    /// call is found of keeps them as written (a path read from a parameter is then incomplete).
    fn add_closure_items(
        &mut self,
        closures: &BTreeMap<(ModId, FnId), &[(RouterId, RouterItem)]>,
        calls_to: &[(ModId, FnId, usize, (ModId, FnId))],
    ) {
        let mut called = BTreeSet::new();
        // Registrations made at a call whose method, path or handler are still the caller's
        // own parameters (`function apiRoute(method, path, h) { route(method, path, [auth], h)
        // }`): made again at each call of the caller, round by round. (The router's module
        // and id, the registration's module, the registration.)
        type Waiting = BTreeMap<(ModId, FnId), Vec<(ModId, RouterId, ModId, RouterItem)>>;
        let mut waiting: Waiting = BTreeMap::new();
        for &(m, caller, i, (tm, tf)) in calls_to {
            let Some(list) = closures.get(&(tm, tf)) else {
                continue;
            };
            called.insert((tm, tf));
            let cs = &self.modules()[m].functions[caller].calls[i];
            for (r, item) in list.iter() {
                for (im, made) in self.instantiate(item, (tm, tm, tf), &cs.args, m, (m, cs.line)) {
                    if im == m && route_mentions_param(&made, caller) {
                        waiting
                            .entry((m, caller))
                            .or_default()
                            .push((tm, *r, im, made));
                    } else {
                        self.items
                            .entry(Key::Local(tm, *r))
                            .or_default()
                            .push((im, made));
                    }
                }
            }
        }
        for _round in 0..PARAM_ROUNDS {
            if waiting.is_empty() {
                break;
            }
            let mut next: Waiting = BTreeMap::new();
            let mut made_any = BTreeSet::new();
            for &(m, caller, i, (tm, tf)) in calls_to {
                let Some(list) = waiting.get(&(tm, tf)) else {
                    continue;
                };
                made_any.insert((tm, tf));
                let cs = &self.modules()[m].functions[caller].calls[i];
                for (rm, r, im, item) in list {
                    for (im2, made) in
                        self.instantiate(item, (*im, tm, tf), &cs.args, m, (m, cs.line))
                    {
                        if im2 == m && route_mentions_param(&made, caller) {
                            next.entry((m, caller))
                                .or_default()
                                .push((*rm, *r, im2, made));
                        } else {
                            self.items
                                .entry(Key::Local(*rm, *r))
                                .or_default()
                                .push((im2, made));
                        }
                    }
                }
            }
            // A helper nobody calls keeps its registrations as written.
            for (k, list) in waiting {
                if !made_any.contains(&k) {
                    for (rm, r, im, item) in list {
                        self.items
                            .entry(Key::Local(rm, r))
                            .or_default()
                            .push((im, item));
                    }
                }
            }
            waiting = next;
        }
        for (&(tm, tf), list) in closures {
            if !called.contains(&(tm, tf)) {
                for (r, item) in list.iter() {
                    self.items
                        .entry(Key::Local(tm, *r))
                        .or_default()
                        .push((tm, item.clone()));
                }
            }
        }
    }

    /// A call (module `m`, function `caller`, call `i`) of a method `(tm, tf)` that registers on
    /// a router a field of `this` holds (see [`ParamSlot::this`]): the registration as the call
    /// makes it goes to the router of the instance the method is called on (`this` of the
    /// caller's class, or an instance of another), or, when it still takes its values from the
    /// caller's own parameters (`post(path, h) { this.route({ method: 'post', path, handler: h })
    /// }`), waits for the caller's calls.
    fn this_helper_call(
        &mut self,
        (slot, im, item): (&ParamSlot, ModId, &RouterItem),
        (tm, tf): (ModId, FnId),
        (m, caller, i): (ModId, FnId, usize),
        next: &mut ParamItems,
    ) {
        let modules = self.modules();
        let cs = &modules[m].functions[caller].calls[i];
        // `this.route(..)` in the class's own methods is read as the method itself.
        let on = match &cs.callee {
            Val::Member(on, _) => on.as_ref().clone(),
            _ if cs.text.strip_prefix("this.").is_some_and(|name| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            }) =>
            {
                Val::This(class_of(&modules[m], caller))
            }
            _ => return,
        };
        let receiver = slot.fields.iter().fold(on.clone(), |v, f| {
            Val::Member(std::sync::Arc::new(v), f.clone())
        });
        let caller_class = class_of(&modules[m], caller);
        // A constructor is no helper: `new` calls it, and its parameters are read where it is.
        // Nor is a callback inside a method (`routes.forEach((r) => this.route(r))`): what it
        // passes is read where it is (a table's element).
        let helper = modules[m].functions[caller].class.is_some()
            && !modules[m].functions[caller].name.ends_with(".constructor");
        for (am, item) in self.instantiate(item, (im, tm, tf), &cs.args, m, (m, cs.line)) {
            let on_this = matches!(on, Val::This(Some(c)) if Some(c) == caller_class);
            if on_this && helper && item.names_param_of(caller) && am == m {
                next.entry((m, caller))
                    .or_default()
                    .push((slot.clone(), am, item));
                continue;
            }
            if let Some(key) = self.router_key(m, &receiver) {
                self.items.entry(key).or_default().push((am, item));
            }
        }
    }

    /// A registration made in function `tf` (module `tm`; the registration's values are read in
    /// module `im`) as the call `args` in module `m` makes it: the callee's parameters
    /// in its method and paths become the call's arguments, read as strings (frame-free), or
    /// kept as the caller's own values when both are in one module. Each registration with the
    /// module its values are read in: a `use` whose mounted values the call passes is read where
    /// the call is (its own middleware, if any, stays in a `use` of its own).
    fn instantiate(
        &self,
        item: &RouterItem,
        (im, tm, tf): (ModId, ModId, FnId),
        args: &[Val],
        m: ModId,
        at: (usize, u32),
    ) -> Vec<(ModId, RouterItem)> {
        if im != tm {
            return vec![(im, self.carry_route(item, tm, tf, args, m))];
        }
        if let RouterItem::Use {
            path,
            path_text,
            args: mounted,
            line,
        } = item
        {
            return self.instantiate_use((path, path_text, mounted, *line), (im, tf), args, m);
        }
        // A call of a router's added method with the helper's parameters: the path the call
        // gives, read as a string, the rest kept as written (handlers of the helper's module).
        if let RouterItem::HelperCall {
            name,
            args: passed,
            path_text,
            line,
            ..
        } = item
        {
            let passed = passed
                .iter()
                .map(|v| {
                    self.passed_value(v, tf, args, (m, im))
                        .unwrap_or(Val::Unknown)
                })
                .collect();
            return vec![(
                im,
                RouterItem::HelperCall {
                    name: name.clone(),
                    args: passed,
                    path_text: path_text.clone(),
                    line: *line,
                    written_at: Some(WrittenAt {
                        module: at.0,
                        line: at.1,
                        handler: None,
                        route: None,
                    }),
                },
            )];
        }
        let RouterItem::Route {
            method,
            paths,
            path_text,
            middleware,
            handler,
            line,
            version,
            written_at,
        } = item
        else {
            return vec![(im, item.clone())];
        };
        let subst = |v: &Val| -> Val {
            self.passed_value(v, tf, args, (m, im))
                .unwrap_or_else(|| v.clone())
        };
        let (method2, paths2) = (subst(method), subst(paths));
        // Read in another module and still naming the caller's own parameters: kept as the
        // call gives them, for the calls above to make (see `WrittenAt::route`).
        let carried = (m != im
            && [method, paths].iter().any(|v| {
                mentions_param(v, tf) && self.passed_value(v, tf, args, (m, im)).is_none()
            }))
        .then(|| {
            (
                m,
                replace_params(method, tf, args),
                replace_params(paths, tf, args),
            )
        });
        // A handler the call passes: read where the call is.
        let (mut handler2, mut passed) = (handler.clone(), None);
        // A handler the call passes, possibly wrapped by the helper (`this.withErrors(h)`); not
        // a handler the helper gets from the router it is given (`app.oauth.token()`).
        let handler_passed = mentions_param(handler, tf) || passed_part(handler, tf).is_some();
        if handler_passed {
            if m == im {
                handler2 = replace_params(handler, tf, args);
            } else {
                // Read where the call is: only what the call passes, without the helper's
                // wrappers around it (`this.withErrors(options.handler)`).
                let part = passed_part(handler, tf).unwrap_or_else(|| handler.clone());
                passed = Some(replace_params(&part, tf, args));
            }
        }
        // A handler the helper writes around the one it is given (`(req, res, next) => { ..;
        // const cb = () => routeHandler(req, res, next); .. }`): the endpoint runs what the call
        // passes for it (the wrapper's own work is the helper's plumbing).
        let wrapped = match handler {
            Val::Func(g) if !handler_passed => self
                .runs_param(im, tf, *g, &[method, paths])
                .and_then(|k| args.get(k))
                .cloned(),
            _ => None,
        };
        let handler_passed = handler_passed || wrapped.is_some();
        if wrapped.is_some() {
            passed = wrapped;
        }
        // A handler an earlier call passed as its own caller's parameter: this call's argument.
        let earlier = written_at
            .as_ref()
            .and_then(|w| w.handler.as_ref())
            .filter(|h| mentions_param(h, tf))
            .map(|h| replace_params(h, tf, args));
        let handler_passed = handler_passed || earlier.is_some();
        if passed.is_none() {
            passed = earlier;
        }
        // The route's method, path or handler comes from this call: the call is where it is
        // written (also when what it passes cannot be read).
        // A route whose handler is the helper's own and whose path alone the call gives
        // (`loadMediaEndpoint(app, version)` registering several routes under `/api/${version}`)
        // stays where the helper writes it: the call would stand for all of them at one line.
        let written_at = if handler_passed {
            Some(WrittenAt {
                module: at.0,
                line: at.1,
                handler: passed.or_else(|| written_at.as_ref().and_then(|w| w.handler.clone())),
                route: carried,
            })
        } else if carried.is_some() {
            let mut w = written_at.clone().unwrap_or(WrittenAt {
                module: im,
                line: *line,
                handler: None,
                route: None,
            });
            w.route = carried;
            Some(w)
        } else {
            written_at.clone()
        };
        vec![(
            im,
            RouterItem::Route {
                method: method2,
                paths: paths2,
                path_text: path_text.clone(),
                middleware: middleware.clone(),
                handler: handler2,
                line: *line,
                version: version.clone(),
                written_at,
            },
        )]
    }

    /// The parameter of helper `tf` (module `m`) that a function `g` written inside it calls,
    /// directly or through the functions written inside `g`, or else hands to a call
    /// (`(req, res) => processRequest(req, res, routeHandler)`): `g` runs the handler the helper
    /// is given. Parameters that make the route's method or path (`skip`) are not handlers.
    fn runs_param(&self, m: ModId, tf: FnId, g: FnId, skip: &[&Val]) -> Option<usize> {
        let functions = &self.modules()[m].functions;
        if !functions[tf].children.contains(&g) {
            return None;
        }
        let mut stack = vec![g];
        let mut seen = 0;
        let mut handed: Option<usize> = None;
        while let Some(h) = stack.pop() {
            seen += 1;
            if seen > 64 {
                break;
            }
            for cs in &functions[h].calls {
                if let Val::Param(p, k) = &cs.callee
                    && *p == tf
                {
                    return Some(*k);
                }
                for a in &cs.args {
                    if let Val::Param(p, k) = a
                        && *p == tf
                        && handed.is_none()
                        && !skip
                            .iter()
                            .any(|v| mentions_param(v, tf) && param_index(v) == Some(*k))
                    {
                        handed = Some(*k);
                    }
                }
            }
            stack.extend(functions[h].children.iter().copied());
        }
        handed
    }

    /// A registration of another module whose method and path the calls that made it carry
    /// (see [`WrittenAt::route`]), as this call of `tf` (module `tm`) makes them: the
    /// parameters of `tf` they name replaced by this call's arguments, read as strings where
    /// they can be, kept in the caller's module `m` otherwise.
    fn carry_route(
        &self,
        item: &RouterItem,
        tm: ModId,
        tf: FnId,
        args: &[Val],
        m: ModId,
    ) -> RouterItem {
        let mut item = item.clone();
        if let RouterItem::Route {
            written_at: Some(w),
            ..
        } = &mut item
            && let Some((rm, method, paths)) = &mut w.route
            && *rm == tm
            && (mentions_param(method, tf) || mentions_param(paths, tf))
        {
            let made = |v: &Val| {
                self.passed_value(v, tf, args, (m, tm))
                    .unwrap_or_else(|| replace_params(v, tf, args))
            };
            let (method2, paths2) = (made(method), made(paths));
            *method = method2;
            *paths = paths2;
            *rm = m;
        }
        item
    }

    /// A value of a registration in function `tf` (module `im`) as a call in module `m` makes it:
    /// itself when it names no parameter of `tf`; else with the call's arguments for them, read as
    /// strings, or kept as the caller's own values when both are in one module; None when it
    /// cannot be read across modules.
    fn passed_value(
        &self,
        v: &Val,
        tf: FnId,
        args: &[Val],
        (m, im): (ModId, ModId),
    ) -> Option<Val> {
        if !mentions_param(v, tf) {
            return Some(v.clone());
        }
        let replaced = replace_params(v, tf, args);
        match self.strings(m, &replaced) {
            Some(list) if list.len() == 1 => {
                Some(Val::Str(list.into_iter().next().unwrap_or_default()))
            }
            Some(list) => Some(Val::Arr(list.into_iter().map(Val::Str).collect())),
            // One module: the caller's values read as the registration's own.
            None if m == im => Some(replaced),
            None => None,
        }
    }

    /// [`Self::instantiate`] for a `use`: its path a string where the call's argument reads as
    /// one, the routers and middleware the call passes read in the caller's module `m`.
    fn instantiate_use(
        &self,
        (path, path_text, mounted, line): (&Option<Val>, &String, &[Val], u32),
        (im, tf): (ModId, FnId),
        args: &[Val],
        m: ModId,
    ) -> Vec<(ModId, RouterItem)> {
        let use_item = |path: Option<Val>, args: Vec<Val>| RouterItem::Use {
            path,
            path_text: path_text.clone(),
            args,
            line,
        };
        let path = match path {
            Some(p) if mentions_param(p, tf) => {
                let replaced = replace_params(p, tf, args);
                Some(match self.strings(m, &replaced) {
                    Some(list) => Val::Arr(list.into_iter().map(Val::Str).collect()),
                    None if m == im => replaced,
                    None => Val::Unknown,
                })
            }
            p => p.clone(),
        };
        // `use(path, router) { this.app.use(path, router) }`: the front end could not tell the
        // path from the routers; a first argument the call makes a string is the path.
        let mut mounted: Vec<Val> = mounted.to_vec();
        let mut path = path;
        if path.is_none()
            && mounted.len() >= 2
            && mentions_param(&mounted[0], tf)
            && let Some(list) = self.strings(m, &replace_params(&mounted[0], tf, args))
        {
            mounted.remove(0);
            path = Some(Val::Arr(list.into_iter().map(Val::Str).collect()));
        }
        if m == im {
            let mounted = mounted
                .iter()
                .map(|a| replace_params(a, tf, args))
                .collect();
            return vec![(im, use_item(path, mounted))];
        }
        let (passed, own): (Vec<Val>, Vec<Val>) =
            mounted.into_iter().partition(|a| mentions_param(a, tf));
        let mut out = Vec::new();
        if !own.is_empty() {
            out.push((im, use_item(path.clone(), own)));
        }
        if !passed.is_empty() {
            let passed = passed
                .iter()
                .map(|a| {
                    let part = passed_part(a, tf).unwrap_or_else(|| a.clone());
                    replace_params(&part, tf, args)
                })
                .collect();
            out.push((m, use_item(path, passed)));
        }
        out
    }

    /// The prefixes a mount puts its routes under: none given is the router's own root, a
    /// static one is itself, a dynamic one is what `[[mount]]` configures, or None (the routes are
    /// listed without it and marked incomplete, and when `what` names the mount a diagnostic says
    /// so).
    fn prefixes(
        &mut self,
        m: ModId,
        path: Option<&Val>,
        path_text: &str,
        line: u32,
        what: Option<&str>,
    ) -> Option<Vec<String>> {
        let Some(p) = path else {
            return Some(vec![String::new()]);
        };
        // (what `[[mount]]` says first: the project's word over a default or an example file)
        if let Some(configured) = self.configured(m, line, path_text) {
            return Some(vec![configured]);
        }
        if let Some(s) = self.strings_at(m, p, line, &format!("the prefix {}", code(path_text))) {
            return Some(s);
        }
        if let Some(what) = what {
            self.unknown_prefix(m, line, what, p, path_text);
        }
        None
    }

    /// A router (not an app) or a router-taking function that nothing this audit found mounts,
    /// registers or calls, though it holds routes: they are listed with their own paths, and a
    /// diagnostic says a prefix may be missing. Hono and Elysia apps stand alone by design (`export
    /// default app` for a runtime, `app.listen(3000)`), so they are not reported.
    fn unmounted(&mut self, root: Key) -> bool {
        let (m, line, what) = match root {
            Key::Local(m, r) | Key::Made(_, _, m, r) => {
                let router = &self.modules()[m].routers[r];
                if router.kind != RouterKind::Router
                    || matches!(router.framework, "hono" | "elysia")
                {
                    return false;
                }
                (
                    m,
                    router.line,
                    "is not mounted under any app this audit found",
                )
            }
            Key::Plugin(m, f) => (
                m,
                self.modules()[m].functions[f].line,
                "registers on the router it is given, but no call found gives it one",
            ),
            Key::Instance(m, c, rm, rr) => {
                let router = &self.modules()[rm].routers[rr];
                if router.kind != RouterKind::Router
                    || matches!(router.framework, "hono" | "elysia")
                {
                    return false;
                }
                (
                    m,
                    self.modules()[m].classes[c].line,
                    "is not mounted under any app this audit found",
                )
            }
        };
        let n = self.route_count(root);
        if n == 0 {
            return false;
        }
        let file = self.modules()[m].file.clone();
        let who = self.describe(root);
        self.diagnostics.push(Diagnostic::new(
            file,
            line,
            format!(
                "{who} {what}: its routes are listed with their own paths, without any prefix a mount would add, and marked `path_complete: false`"
            ),
        ));
        true
    }

    /// The path of a `use`: the one the front end saw, or a first argument the linker reads as
    /// a string or an environment read (`app.use(config.apiPrefix, router)`, with `config` from
    /// another file).
    fn use_path(&self, m: ModId, path: Option<Val>, args: Vec<Val>) -> (Option<Val>, Vec<Val>) {
        if path.is_some() || args.len() < 2 {
            return (path, args);
        }
        match self.resolve(m, &args[0]) {
            Resolved::Str(_) | Resolved::Default { .. } | Resolved::Env(_) => {
                let mut args = args;
                let first = args.remove(0);
                (Some(first), args)
            }
            // A property of a value only known at run time (`settings.partnerPrefix` of a parsed
            // file) before a router: Express takes a first argument that is no function as the
            // path, so it is a prefix that cannot be read.
            // The same for a name imported from a module the scanned tree does not hold
            // (`app.use(API_PREFIX, router)` with `API_PREFIX` from `../../shared/constants` when
            // one package of a repository is audited).
            Resolved::Opaque | Resolved::Package { .. }
                if (matches!(args[0], Val::Member(..))
                    || self.outside_tree(m, &args[0]).is_some())
                    && args[1..]
                        .iter()
                        .any(|a| self.child_of(m, a, false).is_some()) =>
            {
                let mut args = args;
                let first = args.remove(0);
                (Some(first), args)
            }
            _ => (None, args),
        }
    }

    /// The diagnostic for routes under a prefix that could not be read.
    fn unknown_prefix(&mut self, m: ModId, line: u32, what: &str, value: &Val, path_text: &str) {
        let file = self.modules()[m].file.clone();
        let why = match self.outside_tree(m, value) {
            Some(spec) => format!(
                "a prefix imported from {}, which is not in the scanned tree (run the audit from the repository's root to read it)",
                code(&spec)
            ),
            None => "a prefix that is not statically known".to_string(),
        };
        self.diagnostics.push(Diagnostic::new(
            file.clone(),
            line,
            format!(
                "{what} {}, {why}: its routes are listed without it and marked `path_complete: false` (give the prefix in retrysafe.toml: [[mount]] file = \"{file}\", line = {line}, prefix = \"/…\")",
                code(path_text)
            ),
        ));
    }

    /// The relative module a value is imported from when that module is not in the scanned tree
    /// (an audit run on one package of a repository, whose prefix constant lives in another).
    fn outside_tree(&self, m: ModId, v: &Val) -> Option<String> {
        match self.resolve(m, v) {
            Resolved::Package { spec, .. } if spec.starts_with('.') => Some(spec),
            _ => None,
        }
    }

    /// The prefix the configuration gives a dynamic mount (`[[mount]]`), if any.
    fn configured(&self, m: ModId, line: u32, expression: &str) -> Option<String> {
        self.config
            .mount_prefix(&self.modules()[m].file, line, expression)
            .map(String::from)
    }

    fn child_of(&self, m: ModId, v: &Val, plugin: bool) -> Option<Key> {
        if let Some(app) = crate::program::as_mounted_app(v) {
            return self.child_of(m, app, plugin);
        }
        match self.resolve(m, v) {
            Resolved::Router(m2, r2) => Some(self.instance_key(m, v, (m2, r2))),
            Resolved::Func(m2, f2) if plugin && self.items.contains_key(&Key::Plugin(m2, f2)) => {
                Some(Key::Plugin(m2, f2))
            }
            _ => None,
        }
    }

    fn module_of(key: Key) -> ModId {
        match key {
            Key::Local(m, _) | Key::Plugin(m, _) | Key::Instance(m, ..) | Key::Made(m, ..) => m,
        }
    }

    /// A registration function `f` (of module `im`) makes on a router it makes, as the call with
    /// `args` (in module `m`) makes it: the prefix of a `use` and the method and path of a route
    /// the call's arguments give where they name `f`'s parameters (the handlers stay the
    /// function's own); what cannot be read stays the function's own (a fallback it writes, or a
    /// diagnostic).
    fn as_called(
        &self,
        item: RouterItem,
        (im, f): (ModId, FnId),
        args: &[Val],
        m: ModId,
    ) -> RouterItem {
        let read = |v: &Val| -> Val {
            self.passed_value(v, f, args, (m, im))
                .unwrap_or_else(|| v.clone())
        };
        let mut item = item;
        match &mut item {
            RouterItem::Use { path: Some(p), .. } => *p = read(p),
            RouterItem::Route { method, paths, .. } => {
                *method = read(method);
                *paths = read(paths);
            }
            _ => {}
        }
        item
    }

    /// The router made in the same call as router `rr` of `rm` that mounts it, if any.
    fn made_parent(&self, rm: ModId, rr: RouterId) -> Option<RouterId> {
        let routers = &self.modules()[rm].routers;
        let made_in = routers[rr].made_in;
        if made_in == 0 {
            return None;
        }
        routers.iter().enumerate().find_map(|(p, r)| {
            let mounts = r.items.iter().any(|i| {
                matches!(i, RouterItem::Use { args, .. }
                    if args.iter().any(|a| matches!(a, Val::Router(c) if *c == rr)))
            });
            (p != rr && r.made_in == made_in && mounts).then_some(p)
        })
    }

    /// The first router the call that makes router `rr` of `rm` makes: the one that mounts,
    /// directly or not, every other it makes.
    fn made_top(&self, rm: ModId, rr: RouterId) -> RouterId {
        let mut cur = rr;
        let mut seen = vec![rr];
        while let Some(p) = self.made_parent(rm, cur) {
            if seen.contains(&p) || seen.len() > MAX_NESTING {
                break;
            }
            seen.push(p);
            cur = p;
        }
        cur
    }

    /// A router a router of the same call mounts, as that call makes it.
    fn in_call(&self, key: Key, child: Key) -> Key {
        match (key, child) {
            (Key::Made(sm, h, rm, rr), Key::Local(cm, c))
                if cm == rm
                    && c != rr
                    && self.modules()[rm].routers[rr].made_in != 0
                    && self.modules()[rm].routers[c].made_in
                        == self.modules()[rm].routers[rr].made_in =>
            {
                Key::Made(sm, h, rm, c)
            }
            _ => child,
        }
    }

    /// The key of the router a value stands for (see [`Key::Instance`]).
    fn router_key(&self, m: ModId, v: &Val) -> Option<Key> {
        match self.resolve(m, v) {
            Resolved::Router(rm, rr) => Some(self.instance_key(m, v, (rm, rr))),
            _ => None,
        }
    }

    /// Router `(rm, rr)`, which `v` (read in `m`) resolved to, as the instance `v` reads it from
    /// has it: a field of `this` or of an instance (`this.app`, `new UsersController(..).router`)
    /// of a class that inherits the router from the base class whose constructor makes it is the
    /// router of that class's instances; anything else is the router itself.
    fn instance_key(&self, m: ModId, v: &Val, (rm, rr): (ModId, RouterId)) -> Key {
        let local = Key::Local(rm, rr);
        let made_in = self.modules()[rm].routers[rr].made_in;
        if made_in != 0
            && self.modules()[rm].functions[made_in].class.is_none()
            && let Some((sm, call)) = self.res.call_site(m, v, (rm, made_in))
        {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            super::display(&call).hash(&mut h);
            let h = h.finish();
            if let Val::Call(_, args) = &call {
                self.made_args
                    .borrow_mut()
                    .entry((sm, h))
                    .or_insert_with(|| args.clone());
            }
            return Key::Made(sm, h, rm, rr);
        }
        let Val::Member(on, _) = v else {
            return local;
        };
        let (im, ic) = match on.as_ref() {
            Val::This(Some(c)) => (m, *c),
            other => match self.resolve(m, other) {
                Resolved::Instance(im, ic) => (im, ic),
                _ => return local,
            },
        };
        let Some(owner) = self.modules()[rm]
            .classes
            .iter()
            .position(|c| c.router_field(rr).is_some())
        else {
            return local;
        };
        if (im, ic) == (rm, owner) || !self.ancestors(im, ic).contains(&(rm, owner)) {
            return local;
        }
        Key::Instance(im, ic, rm, rr)
    }

    /// The classes a class extends, nearest first, as far as this tree holds them.
    fn ancestors(&self, m: ModId, c: ClassId) -> Vec<(ModId, ClassId)> {
        let mut out: Vec<(ModId, ClassId)> = Vec::new();
        let (mut m, mut c) = (m, c);
        for _ in 0..16 {
            let Some(ext) = &self.modules()[m].classes[c].extends else {
                break;
            };
            match self.resolve(m, ext) {
                Resolved::Class(m2, c2) if !out.contains(&(m2, c2)) => {
                    out.push((m2, c2));
                    (m, c) = (m2, c2);
                }
                _ => break,
            }
        }
        out
    }

    /// What a router holds: for the router of a subclass's instances, what the base class
    /// registers on it for every instance, then what each class between them registers, then
    /// the subclass's own.
    fn key_items(&self, key: Key) -> Vec<(ModId, RouterItem)> {
        let items = self.key_items_raw(key);
        let helpers = match key {
            Key::Local(m, r) | Key::Instance(_, _, m, r) | Key::Made(_, _, m, r) => {
                &self.modules()[m].routers[r].helpers
            }
            Key::Plugin(..) => return items,
        };
        items
            .into_iter()
            .filter_map(|(m, item)| match item {
                RouterItem::HelperCall {
                    name,
                    args,
                    path_text,
                    line,
                    written_at,
                } => {
                    let h = helpers.iter().find(|h| h.name == name)?;
                    Some((m, h.route(&args, path_text, line, written_at)?))
                }
                item => Some((m, item)),
            })
            .collect()
    }

    fn key_items_raw(&self, key: Key) -> Vec<(ModId, RouterItem)> {
        let own = |k: Key| self.items.get(&k).cloned().unwrap_or_default();
        if let Key::Made(sm, h, rm, rr) = key {
            let args = self.made_args.borrow().get(&(sm, h)).cloned();
            let made_in = self.modules()[rm].routers[rr].made_in;
            let mut out: Vec<(ModId, RouterItem)> = own(Key::Local(rm, rr))
                .into_iter()
                .map(|(am, item)| match &args {
                    Some(args) if am == rm => (am, self.as_called(item, (rm, made_in), args, sm)),
                    _ => (am, item),
                })
                .collect();
            out.extend(own(key));
            return out;
        }
        let Key::Instance(m, c, rm, rr) = key else {
            return own(key);
        };
        let mut out = own(Key::Local(rm, rr));
        let between: Vec<(ModId, ClassId)> = self
            .ancestors(m, c)
            .into_iter()
            .take_while(|&(am, ac)| {
                am != rm || self.modules()[am].classes[ac].router_field(rr).is_none()
            })
            .collect();
        for (am, ac) in between.into_iter().rev() {
            out.extend(own(Key::Instance(am, ac, rm, rr)));
        }
        out.extend(own(key));
        out
    }

    /// Strings a value stands for: `'/x'`, `['/a', '/b']`, or constants from other files.
    fn strings(&self, m: ModId, v: &Val) -> Option<Vec<String>> {
        self.strings_noting(m, v, &mut Vec::new())
    }

    /// [`Self::strings`], noting in `env` each environment read whose default was taken
    /// (`process.env.API_PREFIX || '/api'`): (the read, the default, the example environment file
    /// that gave it).
    fn strings_noting(
        &self,
        m: ModId,
        v: &Val,
        env: &mut Vec<(String, String, Option<String>)>,
    ) -> Option<Vec<String>> {
        match v {
            Val::Str(s) => Some(vec![s.clone()]),
            Val::Arr(items) => {
                let mut out = Vec::new();
                for i in items {
                    out.extend(self.strings_noting(m, i, env)?);
                }
                Some(out)
            }
            // `${API_PREFIX}/notes`, `base + '/x'`: every piece read, one string per choice.
            Val::Template(parts) => {
                let mut out = vec![String::new()];
                for part in parts {
                    let choices = self.strings_noting(m, part, env)?;
                    if out.len() * choices.len() > MAX_CHOICES {
                        return None;
                    }
                    out = out
                        .iter()
                        .flat_map(|o| choices.iter().map(move |c| format!("{o}{c}")))
                        .collect();
                }
                Some(out)
            }
            Val::Unknown => None,
            other => match self.resolve_str(m, other) {
                Resolved::Str(s) => Some(vec![s]),
                Resolved::Default {
                    value,
                    var,
                    example,
                } => {
                    env.push((var, value.clone(), example));
                    Some(vec![value])
                }
                _ => None,
            },
        }
    }

    /// [`Self::strings`] for a prefix or path written at `file:line`: a default taken for an
    /// environment read is a diagnostic, since the deployment may set another.
    fn strings_at(&mut self, m: ModId, v: &Val, line: u32, what: &str) -> Option<Vec<String>> {
        self.strings_at_in(m, v, (m, line), what)
    }

    /// [`Self::strings_at`] for a value read in module `m` and written at `at`.
    fn strings_at_in(
        &mut self,
        m: ModId,
        v: &Val,
        (at, line): (ModId, u32),
        what: &str,
    ) -> Option<Vec<String>> {
        let mut env = Vec::new();
        let out = self.strings_noting(m, v, &mut env)?;
        for (var, value, example) in env {
            let file = self.modules()[at].file.clone();
            let message = if let Some(example) = example {
                format!(
                    "{what} reads `{var}` from the environment: its routes are listed under `{value}`, the value `{example}` gives it, which the deployment may change"
                )
            } else if super::reads_environment(&var) {
                format!(
                    "{what} reads `{var}` from the environment: its routes are listed under the code's default `{value}`, which the deployment may change"
                )
            } else {
                format!(
                    "{what} uses `{var}`, whose value is not known before run time: its routes are listed under the code's fallback `'{value}'`, which the configuration may change"
                )
            };
            self.diagnostics.push(Diagnostic::new(file, line, message));
        }
        Some(out)
    }

    /// A router's name and how many routes it holds, itself and through the routers mounted in
    /// it, for diagnostics: ``router `admin` (3 routes)``.
    fn describe(&self, key: Key) -> String {
        let name = match key {
            Key::Local(m, r) => self.modules()[m].routers[r].name.clone(),
            Key::Plugin(m, f) => self.modules()[m].functions[f].name.clone(),
            Key::Instance(m, c, ..) => self.modules()[m].classes[c].name.clone(),
            Key::Made(_, _, m, r) => self.modules()[m].routers[r].name.clone(),
        };
        let n = self.route_count(key);
        let kind = match key {
            Key::Local(..) => "router",
            Key::Plugin(..) => "function",
            Key::Instance(..) => "router of",
            Key::Made(..) => "router",
        };
        format!(
            "{kind} `{name}` ({n} route{})",
            if n == 1 { "" } else { "s" }
        )
    }

    /// Registrations in a router, counting those of the routers and plugins mounted in it.
    fn route_count(&self, key: Key) -> usize {
        let mut seen = BTreeSet::new();
        let mut stack = vec![key];
        let mut n = 0;
        while let Some(k) = stack.pop() {
            if !seen.insert(k) {
                continue;
            }
            for (m, item) in &self.key_items(k) {
                match item {
                    // A computed call whose method was never read is no registration.
                    RouterItem::Route { method, .. }
                        if tables::read_later(method) && self.strings(*m, method).is_none() => {}
                    RouterItem::Route { .. } => n += 1,
                    RouterItem::Use { args, line, .. } => {
                        let expanded = self.directory_routers(*m, *line, args);
                        stack.extend(
                            expanded
                                .as_deref()
                                .unwrap_or(args)
                                .iter()
                                .flat_map(|a| self.children_of(*m, a)),
                        )
                    }
                    RouterItem::Register { plugin, .. } => {
                        stack.extend(self.child_of(*m, plugin, true))
                    }
                    RouterItem::HelperCall { .. } => {}
                }
            }
        }
        n
    }

    /// Every route of every app, of routers and plugins that nothing mounts, and of NestJS
    /// controllers; and the tRPC adapters mounted on them, with their full prefixes.
    pub fn routes(mut self) -> (Vec<RawRoute>, Vec<Diagnostic>, Vec<Mount>, Vec<Binding>) {
        // ts-rest implementations registered on an app are that app's routes.
        self.ts_rest();
        let mut mounted = BTreeSet::new();
        for list in self.items.values() {
            for (m, item) in list {
                match item {
                    RouterItem::Use { args, line, .. } => {
                        let expanded = self.directory_routers(*m, *line, args);
                        for a in expanded.as_deref().unwrap_or(args) {
                            mounted.extend(self.children_of(*m, a));
                        }
                    }
                    RouterItem::Register { plugin, .. } => {
                        if let Some(k) = self.child_of(*m, plugin, true) {
                            mounted.insert(k);
                        }
                    }
                    RouterItem::Route { .. } | RouterItem::HelperCall { .. } => {}
                }
            }
        }
        // The routers of subclasses' instances hold what the base class and the classes between
        // registers: those are walked there, not on their own.
        let instances: Vec<Key> = self
            .items
            .keys()
            .chain(mounted.iter())
            .copied()
            .filter(|k| matches!(k, Key::Instance(..)))
            .collect();
        for k in instances {
            if let Key::Instance(m, c, rm, rr) = k {
                mounted.insert(Key::Local(rm, rr));
                for (am, ac) in self.ancestors(m, c) {
                    mounted.insert(Key::Instance(am, ac, rm, rr));
                }
            }
        }
        // A router a function makes at each call is walked as each call makes it, from the
        // router that call makes first (`new Hono().basePath(`/${name}`)` returns a router the
        // app it makes mounts under the prefix the call's argument gives).
        let made: Vec<Key> = self
            .items
            .keys()
            .chain(mounted.iter())
            .copied()
            .filter(|k| matches!(k, Key::Made(..)))
            .collect();
        for k in made {
            if let Key::Made(sm, h, rm, rr) = k {
                mounted.insert(Key::Local(rm, rr));
                let top = self.made_top(rm, rr);
                if top != rr {
                    mounted.insert(k);
                    mounted.insert(Key::Local(rm, top));
                    self.items.entry(Key::Made(sm, h, rm, top)).or_default();
                }
            }
        }
        let hint = self
            .modules()
            .iter()
            .flat_map(|m| m.routers.iter())
            .filter(|r| r.kind != RouterKind::NestController)
            .map(|r| r.framework)
            .find(|f| *f != "nestjs" && *f != crate::program::TABLE_ROUTER)
            .unwrap_or("express");
        let roots: Vec<Key> = self
            .items
            .keys()
            .copied()
            .filter(|k| !self.modules()[Self::module_of(*k)].is_test && !mounted.contains(k))
            .filter(|k| match k {
                Key::Local(m, r) => {
                    self.modules()[*m].routers[*r].kind != RouterKind::NestController
                }
                Key::Plugin(m, f) => !self.applied.contains(&(*m, *f)),
                Key::Instance(..) | Key::Made(..) => true,
            })
            .collect();
        for root in roots {
            let framework = match root {
                Key::Local(m, r) | Key::Instance(_, _, m, r) | Key::Made(_, _, m, r) => {
                    self.modules()[m].routers[r].framework
                }
                Key::Plugin(..) => hint,
            };
            self.incomplete = self.unmounted(root);
            let mut stack = vec![root];
            let base = supabase_function_prefix(&self.modules()[Self::module_of(root)].file);
            self.walk(root, base, &[], &mut stack, framework);
            self.incomplete = false;
        }
        self.nest_routes();
        self.graphql_routes();
        let gql_next = std::mem::take(&mut self.gql_next);
        self.routes.extend(
            super::next::routes(self.res)
                .into_iter()
                .filter(|r| !gql_next.contains(&(r.handler_module, r.path.clone()))),
        );
        self.routes.extend(super::medusa::routes(self.res));
        for (routes, diagnostics) in [
            super::sveltekit::routes(self.res),
            super::remix::routes(self.res),
            super::nuxt::routes(self.res),
            super::astro::routes(self.res),
            super::evershop::routes(self.res),
        ] {
            self.routes.extend(routes);
            self.diagnostics.extend(diagnostics);
        }
        for r in &mut self.routes {
            if r.framework == crate::program::TABLE_ROUTER {
                r.framework = server_framework(self.res, &self.res.modules[r.module].file);
            }
        }
        self.routes.sort_by(|a, b| {
            (&a.path, &a.method, a.module, a.line).cmp(&(&b.path, &b.method, b.module, b.line))
        });
        self.routes.dedup_by(|a, b| {
            a.path == b.path && a.method == b.method && a.module == b.module && a.line == b.line
        });
        if let Some(m) = self.depth_cut.get() {
            self.diagnostics.push(Diagnostic::new(
                self.modules()[m].file.clone(),
                0,
                "a router or prefix here was followed through more imports, exports and members than the limit (a cycle of re-exports?): what it stands for may be missing",
            ));
        }
        self.diagnostics.sort();
        self.diagnostics.dedup();
        (self.routes, self.diagnostics, self.mounts, self.bindings)
    }

    fn walk(
        &mut self,
        key: Key,
        prefix: &str,
        inherited: &[Scoped],
        stack: &mut Vec<Key>,
        framework: &'static str,
    ) {
        if stack.len() > MAX_NESTING {
            let (m, line) = match key {
                Key::Local(m, r) => (m, self.modules()[m].routers[r].line),
                Key::Plugin(m, f) => (m, self.modules()[m].functions[f].line),
                Key::Instance(m, c, ..) => (m, self.modules()[m].classes[c].line),
                Key::Made(_, _, m, r) => (m, self.modules()[m].routers[r].line),
            };
            self.diagnostics.push(Diagnostic::new(
                self.modules()[m].file.clone(),
                line,
                format!(
                    "routers mounted more than {MAX_NESTING} levels deep under `{prefix}`: this one and those under it are left out of the inventory"
                ),
            ));
            return;
        }
        let (framework, own_prefixes) = match key {
            Key::Local(m, r) | Key::Instance(_, _, m, r) | Key::Made(_, _, m, r) => {
                let router = &self.modules()[m].routers[r];
                let (framework, line, name) = (router.framework, router.line, router.name.clone());
                let mut prefixes: Vec<String> = Vec::new();
                for p in router.prefixes.clone() {
                    let text = super::display(&p);
                    if let Some(configured) = self.configured(m, line, &text) {
                        prefixes.push(configured);
                        continue;
                    }
                    match self.strings_at(m, &p, line, &format!("the prefix of `{name}`")) {
                        Some(list) => prefixes.extend(list),
                        None => {
                            let what = format!("{} with its own prefix", self.describe(key));
                            self.unknown_prefix(m, line, &what, &p, &text);
                            let was = std::mem::replace(&mut self.incomplete, true);
                            self.walk_items(key, prefix, inherited, stack, framework);
                            self.incomplete = was;
                            return;
                        }
                    }
                }
                (framework, prefixes)
            }
            Key::Plugin(..) => (framework, vec![]),
        };
        if own_prefixes.is_empty() {
            self.walk_items(key, prefix, inherited, stack, framework);
        } else {
            for p in own_prefixes {
                let full = normalize_path(prefix, &p);
                self.walk_items(
                    key,
                    if full == "/" { "" } else { &full },
                    inherited,
                    stack,
                    framework,
                );
            }
        }
    }

    fn walk_items(
        &mut self,
        key: Key,
        prefix: &str,
        inherited: &[Scoped],
        stack: &mut Vec<Key>,
        framework: &'static str,
    ) {
        let items = self.key_items(key);
        // Router-level middleware seen so far: (module, value, path scope). Express, Koa and Hono
        // apply it to what is registered after; Fastify hooks cover the whole context.
        let mut active: Vec<(ModId, Val, String)> = Vec::new();
        let order_free = framework == "fastify";
        if order_free {
            for (m, item) in &items {
                if let RouterItem::Use {
                    path: None, args, ..
                } = item
                {
                    for a in args {
                        if self.child_of(*m, a, false).is_none() {
                            active.push((*m, a.clone(), String::new()));
                        }
                    }
                }
            }
        }
        for (m, item) in items {
            match item {
                RouterItem::Use {
                    path,
                    path_text,
                    args,
                    line,
                } => {
                    let (path, args) = self.use_path(m, path, args);
                    let args = self.directory_routers(m, line, &args).unwrap_or(args);
                    for (path, args) in self.use_rows(m, path, args) {
                        // The routers it mounts, named only for a prefix that cannot be read.
                        let unread = path.as_ref().is_some_and(|p| self.strings(m, p).is_none());
                        let mounted: Vec<String> = args
                            .iter()
                            .filter(|_| unread)
                            .filter_map(|(am, a)| self.child_of(*am, a, false))
                            .map(|k| self.describe(k))
                            .collect();
                        let what = (!mounted.is_empty())
                            .then(|| format!("{} mounted at", mounted.join(", ")));
                        // A prefix that cannot be read: the routers it mounts are walked at their
                        // own paths, marked incomplete; middleware and adapters under it are left.
                        let (scopes, unknown) = match self.prefixes(
                            m,
                            path.as_ref(),
                            &path_text,
                            line,
                            what.as_deref(),
                        ) {
                            Some(scopes) => (scopes, false),
                            None if what.is_some() => (vec![String::new()], true),
                            None => continue,
                        };
                        let mut before: Vec<(ModId, Val)> = Vec::new();
                        let mut children = Vec::new();
                        for (am, a) in &args {
                            match self.child_of(*am, a, false) {
                                Some(k) => children.push((self.in_call(key, k), before.clone())),
                                None if unknown => {}
                                // An application mounted whole that is no router this audit
                                // reads (another framework's handler): what it serves is unseen.
                                None if crate::program::as_mounted_app(a).is_some() => {
                                    let at = if prefix.is_empty() { "/" } else { prefix };
                                    self.diagnostics.push(Diagnostic::new(
                                        self.modules()[m].file.clone(),
                                        line,
                                        format!(
                                            "an application mounted at {} (under `{at}`) is not a router this audit reads: the routes it serves there are not listed",
                                            code(&path_text)
                                        ),
                                    ));
                                }
                                None if self.is_spec_router(*am, a) => {
                                    for scope in &scopes {
                                        let chain = self.chain(inherited, &active, scope, &before);
                                        self.spec_routes(
                                            *am, a, prefix, scope, &chain, framework, line,
                                        );
                                    }
                                    before.push((*am, a.clone()));
                                }
                                None => {
                                    if super::trpc::mounted_adapter(self.res, *am, a)
                                        || graphql::mounted_server(self.res, *am, a)
                                    {
                                        for scope in &scopes {
                                            let chain =
                                                self.chain(inherited, &active, scope, &before);
                                            self.mount(
                                                *am, a, None, prefix, scope, &chain, framework,
                                                line,
                                            );
                                        }
                                    }
                                    before.push((*am, a.clone()));
                                }
                            }
                        }
                        if children.is_empty() {
                            if !(order_free && path.is_none()) {
                                for scope in &scopes {
                                    for (bm, b) in &before {
                                        active.push((*bm, b.clone(), scope.clone()));
                                    }
                                }
                            }
                            continue;
                        }
                        let was = self.incomplete;
                        self.incomplete |= unknown;
                        for scope in &scopes {
                            for (child, mws) in &children {
                                let chain = self.chain(inherited, &active, scope, mws);
                                self.descend(*child, prefix, scope, &chain, stack, framework);
                            }
                        }
                        self.incomplete = was;
                    }
                }
                RouterItem::Register {
                    path,
                    path_text,
                    plugin,
                    options,
                    line,
                } => {
                    let unread = path.as_ref().is_some_and(|p| self.strings(m, p).is_none());
                    let what = match self.child_of(m, &plugin, true).filter(|_| unread) {
                        Some(k) => format!("{} registered with prefix", self.describe(k)),
                        None => "plugin registered with prefix".to_string(),
                    };
                    let (scope, unknown) =
                        match self.prefixes(m, path.as_ref(), &path_text, line, Some(&what)) {
                            Some(scope) => (scope, false),
                            None => (vec![String::new()], true),
                        };
                    match self.child_of(m, &plugin, true) {
                        Some(child) => {
                            let was = self.incomplete;
                            self.incomplete |= unknown;
                            for s in &scope {
                                let chain = self.chain(inherited, &active, s, &[]);
                                self.descend(child, prefix, s, &chain, stack, framework);
                            }
                            self.incomplete = was;
                        }
                        // Under a prefix that cannot be read: left out.
                        None if unknown => {}
                        // A plugin that serves tRPC under its prefix.
                        None if super::trpc::mounted_adapter(self.res, m, &plugin)
                            || graphql::mounted_server(self.res, m, &plugin) =>
                        {
                            for s in &scope {
                                let chain = self.chain(inherited, &active, s, &[]);
                                self.mount(
                                    m,
                                    &plugin,
                                    options.clone(),
                                    prefix,
                                    s,
                                    &chain,
                                    framework,
                                    line,
                                );
                            }
                        }
                        // A plugin with no routes of its own: hooks, decorators, an idempotency
                        // plugin. It covers the context it is registered in.
                        None => active.push((m, plugin.clone(), String::new())),
                    }
                }
                RouterItem::Route {
                    method,
                    paths,
                    path_text,
                    mut middleware,
                    mut handler,
                    line,
                    version: _,
                    written_at,
                } => {
                    // A router class the project writes takes `(path, handler, ..options)`: the
                    // handler is the second argument, what follows it no middleware.
                    if framework == crate::program::TABLE_ROUTER && !middleware.is_empty() {
                        handler = middleware.remove(0);
                        middleware.clear();
                    }
                    let (at_module, at_line) = written_at
                        .as_ref()
                        .map_or((m, line), |w| (w.module, w.line));
                    // The method and path the calls that made the route give, where they read
                    // as strings.
                    let (method, paths) = match written_at.as_ref().and_then(|w| w.route.as_ref()) {
                        Some((rm, rmethod, rpaths)) => {
                            let read = |v: &Val, own: Val| {
                                self.strings(*rm, v).map_or(own, |list| {
                                    Val::Arr(list.into_iter().map(Val::Str).collect())
                                })
                            };
                            (read(rmethod, method), read(rpaths, paths))
                        }
                        None => (method, paths),
                    };
                    let handler = match written_at.and_then(|w| w.handler.map(|h| (w.module, h))) {
                        Some(passed) => passed,
                        None => (m, handler),
                    };
                    for instance in self.route_instances(
                        m,
                        &method,
                        &paths,
                        &path_text,
                        (handler.0, &handler.1),
                        &middleware,
                        (at_module, at_line),
                    ) {
                        let methods = self.served_methods(
                            &instance.methods,
                            instance.handler.0,
                            &instance.handler.1,
                            at_line,
                        );
                        for p in &instance.paths {
                            let mut chain: Vec<(ModId, Val)> = inherited
                                .iter()
                                .chain(active.iter())
                                .filter(|(_, _, s)| under(p, s))
                                .map(|(am, v, _)| (*am, v.clone()))
                                .collect();
                            chain.extend(instance.middleware.iter().cloned());
                            for (method, branch) in &methods {
                                self.routes.push(RawRoute {
                                    method: method.to_string(),
                                    path: normalize_path(prefix, p),
                                    framework,
                                    module: instance.written_at.map_or(at_module, |w| w.0),
                                    line: instance.written_at.map_or(at_line, |w| w.1),
                                    handler: instance.handler.1.clone(),
                                    handler_module: instance.handler.0,
                                    middleware: chain.clone(),
                                    branch: branch.clone(),
                                    protocol: Protocol::Rest,
                                    handler_name: None,
                                    path_complete: !self.incomplete && instance.complete,
                                    steps: vec![],
                                    file: None,
                                });
                            }
                        }
                    }
                }
                // A method no helper of this router defines: no registration.
                RouterItem::HelperCall { .. } => {}
            }
        }
    }

    /// The mutation methods a registration answers, each with the branch of the handler that
    /// runs for it. A registration for every method (`router.all`, `@All()`) is listed under the
    /// mutation methods its handler tells apart (`if (req.method === 'DELETE')`), or else once,
    /// as `POST`: the same code runs for every method, and one entry says what a retry does.
    pub(super) fn served_methods(
        &self,
        written: &[String],
        hm: ModId,
        handler: &Val,
        line: u32,
    ) -> Vec<(&'static str, Option<String>)> {
        let mut out: Vec<(&'static str, Option<String>)> = Vec::new();
        for w in written {
            if w.eq_ignore_ascii_case("all") || w == "*" {
                for s in crate::link::next::any_method_served(self.res, hm, handler, line) {
                    if let Some(m) = crate::facts::MUTATION_METHODS
                        .iter()
                        .find(|m| **m == s.method)
                        && !out.iter().any(|(o, _)| o == m)
                    {
                        out.push((m, s.branch));
                    }
                }
            } else {
                for m in methods_of(w) {
                    if !out.iter().any(|(o, _)| *o == m) {
                        out.push((m, None));
                    }
                }
            }
        }
        out
    }

    /// Records a tRPC adapter mounted at `scope` of a router under `prefix`.
    #[allow(clippy::too_many_arguments)]
    fn mount(
        &mut self,
        m: ModId,
        value: &Val,
        options: Option<Val>,
        prefix: &str,
        scope: &str,
        chain: &[Scoped],
        framework: &'static str,
        line: u32,
    ) {
        let scope = scope.trim_end_matches('*');
        self.mounts.push(Mount {
            module: m,
            value: value.clone(),
            options,
            prefix: normalize_path(prefix, scope),
            middleware: chain.iter().map(|(cm, v, _)| (*cm, v.clone())).collect(),
            framework,
            line,
            prefix_complete: !self.incomplete,
        });
    }

    fn chain(
        &self,
        inherited: &[Scoped],
        active: &[(ModId, Val, String)],
        scope: &str,
        extra: &[(ModId, Val)],
    ) -> Vec<Scoped> {
        let mut chain: Vec<Scoped> = inherited
            .iter()
            .chain(active.iter())
            .filter_map(|(am, v, s)| rescope(s, scope).map(|s| (*am, v.clone(), s)))
            .collect();
        chain.extend(extra.iter().map(|(m, v)| (*m, v.clone(), String::new())));
        chain
    }

    fn descend(
        &mut self,
        child: Key,
        prefix: &str,
        scope: &str,
        chain: &[Scoped],
        stack: &mut Vec<Key>,
        framework: &'static str,
    ) {
        if stack.contains(&child) {
            return;
        }
        let child_prefix = normalize_path(prefix, scope);
        stack.push(child);
        self.walk(
            child,
            if child_prefix == "/" {
                ""
            } else {
                &child_prefix
            },
            chain,
            stack,
            framework,
        );
        stack.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(normalize_path("/api", "/users/:id"), "/api/users/{id}");
        assert_eq!(normalize_path("", "/"), "/");
        assert_eq!(normalize_path("/api/", "/"), "/api");
        assert_eq!(
            normalize_path("/v1", "items/:itemId?"),
            "/v1/items/{itemId}"
        );
        assert_eq!(
            normalize_path("/api", "documents.list"),
            "/api/documents.list"
        );
    }

    #[test]
    fn scopes() {
        assert!(under("/v1/payments/x", "/v1/payments/*"));
        assert!(under("/anything", "*"));
        assert!(!under("/v1/other", "/v1/payments/*"));
    }
}
