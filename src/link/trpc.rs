//! tRPC (v10 and v11, trpc.io/docs): procedures built on `initTRPC`'s procedure builder, gathered
//! in routers, served by an adapter at its endpoint.
//!
//! - A procedure is `<builder>.mutation(resolver)` (or `.query`, `.subscription`); a builder is
//!   `t.procedure`, or a builder with `.use(middleware)`, `.input(..)`, `.output(..)`, `.meta(..)`
//!   or `.concat(builder)` chained on it, wherever it is exported from.
//! - A router is a call of `t.router` (under any name it is re-exported as: `router`,
//!   `createTRPCRouter`) on an object whose values are procedures, routers, or plain objects of
//!   them (v11); `t.mergeRouters(a, b)` puts the procedures of both at one level.
//! - The router given to an adapter is served at the adapter's endpoint: a Next.js
//!   `pages/api/trpc/[trpc].ts` (`createNextApiHandler`) at its folder's path, `fetchRequestHandler`
//!   at its `endpoint`, Express `createExpressMiddleware` where it is mounted, Fastify
//!   `fastifyTRPCPlugin` at its `prefix`, Hono `trpcServer` at its `endpoint` (`/trpc` by default),
//!   the standalone server at its `basePath` (`/` by default).
//!
//! Every mutation is a `POST` endpoint at `<endpoint>/<dotted.path>`; a query is a `GET` (kept
//! for the rules that read safe methods, never in the inventory); subscriptions are not listed.
//! A router no adapter serves (or served at an endpoint that is not statically known) keeps its
//! procedures, at `trpc:<dotted.path>`, with a diagnostic saying why.
//!
//! oRPC (orpc.unnoq.com) is read the same way: a procedure is `<builder>.handler(fn)` on a builder
//! from `os` (`@orpc/server`) with `.use`, `.input`, `.route({ method, path })` and the rest
//! chained on it; a router is a plain object of procedures and routers (or `os.router({..})`); a
//! router is served by `new RPCHandler(router)` (`@orpc/server/*`) or `new OpenAPIHandler(router)`
//! (`@orpc/openapi/*`) at the `prefix` its `.handle(request, { prefix, context })` call gives (a
//! Next.js catch-all file's folder when it gives none). Over RPC a procedure is a `POST` at
//! `<prefix>/<key>/<key>`; over OpenAPI it is at the method and path its `.route()` gives (`POST`
//! and the key path when it gives none). A procedure both serve is listed once: at its OpenAPI
//! route where `.route()` names a path, else at its RPC path. A `GET` route is a query.
//!
//! The resolver is the endpoint's handler. Its options' `ctx` is what the context creator
//! (the adapter's `createContext`, else the function `initTRPC.context<typeof X>()` names)
//! returns, extended by each middleware's `next({ ctx: { .. } })`: the linker binds it, so
//! `ctx.db.post.create(..)` is followed to the client the context holds. Each `.use(..)`
//! middleware is the route's middleware (a key read there is a key mechanism).

use super::mounts::{Mount, RawRoute, normalize_path};
use super::resolve::{ModId, Part, Resolved, Resolver};
use crate::facts::{Diagnostic, Protocol};
use crate::program::{CallSite, FnId, Val};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Values followed deeper than this are not tRPC values the audit can read.
const MAX_DEPTH: usize = 24;
/// Routers nested deeper than this are not walked (a diagnostic says so).
const MAX_NESTING: usize = 16;
/// Router visits per root: routers shared many times over (`mergeRouters(a, a)` in a chain) stop
/// here rather than multiply.
const MAX_VISITS: usize = 4096;

fn is_trpc(spec: &str) -> bool {
    spec == "@trpc/server" || spec.starts_with("@trpc/server/") || is_trpc_openapi(spec)
}

/// `trpc-to-openapi` (and `trpc-openapi`, which it continues): a tRPC router served as REST, each
/// procedure whose `.meta({ openapi: { method, path } })` names a route at that route
/// (<https://github.com/mcampa/trpc-to-openapi>).
fn is_trpc_openapi(spec: &str) -> bool {
    spec == "trpc-to-openapi" || spec == "trpc-openapi"
}

/// oRPC's server packages (`@orpc/server`, its adapters, `@orpc/openapi`).
fn is_orpc(spec: &str) -> bool {
    spec == "@orpc/server" || spec.starts_with("@orpc/server/") || spec.starts_with("@orpc/openapi")
}

/// A value with the module it is written in.
type At = (ModId, Val);

/// The adapters that serve a router over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Adapter {
    Next,
    Fetch,
    Express,
    Fastify,
    Hono,
    Standalone,
    Lambda,
    NodeHttp,
    /// oRPC's `RPCHandler`: procedures at their key paths.
    OrpcRpc,
    /// oRPC's `OpenAPIHandler`: procedures at their `.route()`s.
    OrpcOpenApi,
    /// `trpc-to-openapi`'s handlers, as tRPC's fetch, Next.js, Express and Node adapters are:
    /// procedures at their `meta.openapi` routes.
    OpenApiFetch,
    OpenApiNext,
    OpenApiExpress,
    OpenApiHttp,
}

impl Adapter {
    fn of(spec: &str, name: &str) -> Option<Adapter> {
        Some(match (spec, name) {
            ("@trpc/server/adapters/next", "createNextApiHandler") => Adapter::Next,
            ("@trpc/server/adapters/fetch", "fetchRequestHandler") => Adapter::Fetch,
            ("@trpc/server/adapters/express", "createExpressMiddleware") => Adapter::Express,
            ("@trpc/server/adapters/fastify", "fastifyTRPCPlugin") => Adapter::Fastify,
            ("@hono/trpc-server", "trpcServer") => Adapter::Hono,
            (
                "@trpc/server/adapters/standalone",
                "createHTTPServer" | "createHTTPHandler" | "createHTTP2Handler",
            ) => Adapter::Standalone,
            ("@trpc/server/adapters/aws-lambda", "awsLambdaRequestHandler") => Adapter::Lambda,
            ("@trpc/server/adapters/node-http", "nodeHTTPRequestHandler") => Adapter::NodeHttp,
            (s, "RPCHandler") if s.starts_with("@orpc/server/") => Adapter::OrpcRpc,
            (s, "OpenAPIHandler") if s.starts_with("@orpc/openapi/") => Adapter::OrpcOpenApi,
            (s, "createOpenApiFetchHandler") if is_trpc_openapi(s) => Adapter::OpenApiFetch,
            (s, "createOpenApiNextHandler") if is_trpc_openapi(s) => Adapter::OpenApiNext,
            (s, "createOpenApiExpressMiddleware") if is_trpc_openapi(s) => Adapter::OpenApiExpress,
            (s, "createOpenApiHttpHandler") if is_trpc_openapi(s) => Adapter::OpenApiHttp,
            _ => return None,
        })
    }

    fn of_resolved(r: &Resolved) -> Option<(Adapter, String)> {
        let Resolved::Package { spec, name, path } = r else {
            return None;
        };
        let name = path
            .last()
            .or(name.as_ref().filter(|n| *n != "default"))?
            .clone();
        Adapter::of(spec, &name).map(|a| (a, name))
    }

    /// Adapters mounted like middleware or a plugin, whose prefix the router they sit on gives.
    fn is_mounted(self) -> bool {
        matches!(
            self,
            Adapter::Express | Adapter::OpenApiExpress | Adapter::Fastify | Adapter::Hono
        )
    }

    /// Serves procedures at their `meta.openapi` routes (`trpc-to-openapi`).
    fn trpc_openapi(self) -> bool {
        matches!(
            self,
            Adapter::OpenApiFetch
                | Adapter::OpenApiNext
                | Adapter::OpenApiExpress
                | Adapter::OpenApiHttp
        )
    }

    fn framework(self) -> &'static str {
        match self {
            Adapter::Next | Adapter::OpenApiNext => "nextjs",
            Adapter::Express | Adapter::OpenApiExpress => "express",
            Adapter::Fastify => "fastify",
            Adapter::Hono => "hono",
            Adapter::Fetch
            | Adapter::Standalone
            | Adapter::Lambda
            | Adapter::NodeHttp
            | Adapter::OpenApiFetch
            | Adapter::OpenApiHttp => "trpc",
            Adapter::OrpcRpc | Adapter::OrpcOpenApi => "orpc",
        }
    }
}

/// Is `v`, mounted with `use` or `register`, a tRPC adapter (Express middleware, Fastify plugin,
/// Hono middleware)?
pub fn mounted_adapter(res: &Resolver, m: ModId, v: &Val) -> bool {
    Adapter::of_resolved(&res.resolve(m, v)).is_some_and(|(a, _)| a.is_mounted())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Mutation,
    Query,
    Subscription,
}

impl Kind {
    fn of(name: &str) -> Option<Kind> {
        match name {
            "mutation" => Some(Kind::Mutation),
            "query" => Some(Kind::Query),
            "subscription" => Some(Kind::Subscription),
            _ => None,
        }
    }
}

/// A procedure builder: its middleware, outermost first, and the context creator its instance's
/// `initTRPC.context<typeof X>()` names.
#[derive(Debug, Clone, Default)]
struct Builder {
    middleware: Vec<At>,
    context: Option<At>,
    /// An oRPC builder (`os`), whose procedures are made by `.handler(fn)`.
    orpc: bool,
    /// oRPC: the options of its last `.route({ method, path })`; tRPC: the `openapi` of its last
    /// `.meta({ openapi: { method, path } })`.
    route: Option<At>,
}

#[derive(Debug, Clone)]
struct Procedure {
    kind: Kind,
    resolver: At,
    builder: Builder,
    /// The `.mutation(..)` call: (module, callee, arguments).
    call: (ModId, Val, Vec<Val>),
}

/// What a value is to tRPC.
#[derive(Debug, Clone)]
enum T {
    /// `initTRPC`, or a call on it before `.create()`, with the context creator named so far.
    Init(Option<At>),
    InitMethod(String, Option<At>),
    /// `initTRPC...create()`: the `t` every builder and router comes from.
    Instance(Option<At>),
    RouterFn,
    MergeFn,
    /// `lazy` (tRPC v11, oRPC): `lazy(() => import('./user.router').then((m) => m.userRouter))`
    /// is the router the loader's module gives.
    LazyFn,
    Builder(Builder),
    BuilderMethod(String, Builder),
    Procedure(Box<Procedure>),
    /// A router made by calling the router function: the call (module, callee, arguments).
    Router(ModId, Val, Vec<At>),
    /// `mergeRouters(a, b)`: the routers merged.
    Merged(Vec<At>),
    Obj(ModId, Vec<(String, Val)>),
    Module(ModId),
    Func(ModId, FnId),
    Other,
}

/// A router's identity: the call that made it (module, function, index of the call).
type RouterId = (ModId, FnId, usize);

/// A procedure found under a root router.
struct Found {
    path: Vec<String>,
    procedure: Procedure,
    /// Where the router registers it: the module and line of its key, when known.
    registered: Option<(ModId, u32)>,
}

/// Where a root router is served.
#[derive(Debug, Clone)]
enum Endpoint {
    At(String),
    /// Not known statically, with why.
    Unknown(String),
    /// Mounted at this path under a router whose own path could not be read (one nothing mounts,
    /// or under a prefix that is not statically known): the known part.
    Partial(String),
}

impl Endpoint {
    /// Where a mount puts the adapter: its prefix, partial when the prefix is.
    fn of_mount(mt: &Mount) -> Endpoint {
        if mt.prefix_complete {
            Endpoint::At(mt.prefix.clone())
        } else {
            Endpoint::Partial(mt.prefix.clone())
        }
    }
}

/// One adapter serving one router.
struct Served {
    adapter: Option<(Adapter, String)>,
    module: ModId,
    line: u32,
    router: At,
    context: Option<At>,
    endpoint: Endpoint,
    framework: &'static str,
    middleware: Vec<At>,
}

/// What linking tRPC gives: the procedures as routes, what the framework passes the resolvers and
/// middleware, and the problems met.
#[derive(Default)]
pub struct Linked {
    pub routes: Vec<RawRoute>,
    pub bindings: Vec<((ModId, FnId, usize), Resolved)>,
    pub diagnostics: Vec<Diagnostic>,
    /// The oRPC routes among `routes`: (index, served over OpenAPI, its `.route()` names a path).
    orpc: Vec<(usize, bool, bool)>,
}

struct Linker<'a> {
    res: &'a Resolver<'a>,
    exports: RefCell<HashMap<(ModId, Option<String>), T>>,
    diagnostics: BTreeSet<Diagnostic>,
}

fn field<'v>(fields: &'v [(String, Val)], name: &str) -> Option<&'v Val> {
    fields.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// Every function defined inside `f`, with `f`.
fn body(res: &Resolver, m: ModId, f: FnId) -> Vec<FnId> {
    let fns = &res.modules[m].functions;
    let mut out = vec![f];
    let mut i = 0;
    while i < out.len() && out.len() < 10_000 {
        out.extend(fns[out[i]].children.iter().copied());
        i += 1;
    }
    out
}

/// `/api/trpc/[trpc]` served by the catch-all file: the folder's path.
fn without_catch_all(path: &str) -> String {
    match path.rsplit_once('/') {
        Some((parent, last)) if last.starts_with('{') && last.ends_with('}') => {
            if parent.is_empty() {
                "/".into()
            } else {
                parent.to_string()
            }
        }
        _ => path.to_string(),
    }
}

impl<'a> Linker<'a> {
    fn file(&self, m: ModId) -> &'a str {
        &self.res.modules[m].file
    }

    fn diag(&mut self, m: ModId, line: u32, message: String) {
        self.diagnostics
            .insert(Diagnostic::new(self.file(m), line, message));
    }

    fn export(&self, target: ModId, name: Option<&str>, d: usize) -> T {
        let key = (target, name.map(String::from));
        if let Some(t) = self.exports.borrow().get(&key) {
            return t.clone();
        }
        // Cyclic re-exports end here.
        self.exports.borrow_mut().insert(key.clone(), T::Other);
        let module = &self.res.modules[target];
        let t = match name {
            None => match &module.cjs_whole {
                Some(v) => self.classify(target, v, d + 1),
                None => T::Module(target),
            },
            Some(n) => match module.export(n) {
                Some(v) => self.classify(target, v, d + 1),
                None => match &module.cjs_whole {
                    Some(v) if n == "default" => self.classify(target, v, d + 1),
                    Some(v) => self.member(self.classify(target, v, d + 1), n, d + 1),
                    None => module
                        .star_exports
                        .iter()
                        .filter_map(|spec| self.res.resolve_spec(target, spec))
                        .filter(|sub| *sub != target)
                        .map(|sub| self.export(sub, Some(n), d + 1))
                        .find(|t| !matches!(t, T::Other))
                        .unwrap_or(T::Other),
                },
            },
        };
        self.exports.borrow_mut().insert(key, t.clone());
        t
    }

    fn member(&self, base: T, p: &str, d: usize) -> T {
        match base {
            T::Init(c) => T::InitMethod(p.to_string(), c),
            T::Instance(c) => match p {
                "procedure" => T::Builder(Builder {
                    context: c,
                    ..Builder::default()
                }),
                "router" => T::RouterFn,
                "mergeRouters" => T::MergeFn,
                _ => T::Other,
            },
            T::Builder(b) => T::BuilderMethod(p.to_string(), b),
            T::Obj(m, fields) => match field(&fields, p) {
                Some(v) => self.classify(m, v, d + 1),
                None => T::Other,
            },
            T::Module(m) => self.export(m, Some(p), d + 1),
            _ => T::Other,
        }
    }

    /// What `v`, written in module `m`, is to tRPC.
    fn classify(&self, m: ModId, v: &Val, d: usize) -> T {
        if d > MAX_DEPTH {
            return T::Other;
        }
        match v {
            Val::Import { spec, name } => match self.res.resolve_spec(m, spec) {
                Some(target) => self.export(target, name.as_deref(), d + 1),
                None if is_orpc(spec) => match name.as_deref() {
                    Some("os") => T::Builder(Builder {
                        orpc: true,
                        ..Builder::default()
                    }),
                    Some("lazy") => T::LazyFn,
                    None => T::Obj(m, vec![("os".into(), v.clone())]),
                    _ => T::Other,
                },
                None if is_trpc(spec) => match name.as_deref() {
                    Some("initTRPC") => T::Init(None),
                    Some("mergeRouters") => T::MergeFn,
                    Some("lazy") => T::LazyFn,
                    None => T::Obj(
                        m,
                        vec![
                            ("initTRPC".into(), v.clone()),
                            ("mergeRouters".into(), v.clone()),
                        ],
                    ),
                    _ => T::Other,
                },
                None => T::Other,
            },
            Val::Member(inner, p) => {
                // `import * as trpc from '@trpc/server'; trpc.initTRPC`
                if let Val::Import { spec, name: None } = inner.as_ref()
                    && is_trpc(spec)
                    && self.res.resolve_spec(m, spec).is_none()
                {
                    return match p.as_str() {
                        "initTRPC" => T::Init(None),
                        "mergeRouters" => T::MergeFn,
                        "lazy" => T::LazyFn,
                        _ => T::Other,
                    };
                }
                // `import * as orpc from '@orpc/server'; orpc.os`
                if let Val::Import { spec, name: None } = inner.as_ref()
                    && is_orpc(spec)
                    && self.res.resolve_spec(m, spec).is_none()
                {
                    return match p.as_str() {
                        "os" => T::Builder(Builder {
                            orpc: true,
                            ..Builder::default()
                        }),
                        "lazy" => T::LazyFn,
                        _ => T::Other,
                    };
                }
                let base = self.classify(m, inner, d + 1);
                self.member(base, p, d)
            }
            Val::Call(callee, args) => self.call(m, callee, args, d),
            Val::Obj(fields) => T::Obj(m, fields.clone()),
            Val::Func(f) => T::Func(m, *f),
            _ => T::Other,
        }
    }

    fn call(&self, m: ModId, callee: &Val, args: &[Val], d: usize) -> T {
        match self.classify(m, callee, d + 1) {
            T::InitMethod(name, c) => match name.as_str() {
                "create" => T::Instance(c),
                "context" => T::Init(args.first().map(|a| (m, a.clone())).or(c)),
                _ => T::Init(c),
            },
            T::BuilderMethod(name, mut b) if b.orpc => {
                match name.as_str() {
                    "handler" => {
                        return match args.first() {
                            Some(r) => {
                                let get = self.route_option(&b, "method").as_deref() == Some("GET");
                                T::Procedure(Box::new(Procedure {
                                    kind: if get { Kind::Query } else { Kind::Mutation },
                                    resolver: (m, r.clone()),
                                    builder: b,
                                    call: (m, callee.clone(), args.to_vec()),
                                }))
                            }
                            None => T::Other,
                        };
                    }
                    "router" => {
                        return T::Router(
                            m,
                            callee.clone(),
                            args.iter().map(|a| (m, a.clone())).collect(),
                        );
                    }
                    "use" => b.middleware.extend(args.first().map(|a| (m, a.clone()))),
                    "route" => b.route = args.first().map(|a| (m, a.clone())),
                    _ => {}
                }
                T::Builder(b)
            }
            T::BuilderMethod(name, mut b) => {
                if let Some(kind) = Kind::of(&name) {
                    return match args.first() {
                        Some(r) => T::Procedure(Box::new(Procedure {
                            kind,
                            resolver: (m, r.clone()),
                            builder: b,
                            call: (m, callee.clone(), args.to_vec()),
                        })),
                        None => T::Other,
                    };
                }
                match name.as_str() {
                    "use" => b.middleware.extend(args.first().map(|a| (m, a.clone()))),
                    "meta" => {
                        if let Some((om, meta)) = self.options(m, args.first())
                            && let Some(openapi) = field(&meta, "openapi")
                        {
                            b.route = Some((om, openapi.clone()));
                        }
                    }
                    "concat" | "unstable_concat" => {
                        if let Some(T::Builder(other)) =
                            args.first().map(|a| self.classify(m, a, d + 1))
                        {
                            b.middleware.extend(other.middleware);
                            b.context = b.context.or(other.context);
                        }
                    }
                    _ => {}
                }
                T::Builder(b)
            }
            T::RouterFn => T::Router(
                m,
                callee.clone(),
                args.iter().map(|a| (m, a.clone())).collect(),
            ),
            T::MergeFn => T::Merged(args.iter().map(|a| (m, a.clone())).collect()),
            T::LazyFn => match args.first() {
                Some(Val::Func(f)) => self.functions_return(m, *f, d),
                Some(a) => self.loaded(m, a, d + 1),
                None => T::Other,
            },
            // A function that makes a builder or a router (`export const createRouter = (r) =>
            // t.router(r)`): what it returns, its parameters being the call's arguments.
            T::Func(fm, f) => {
                let returns = self.res.modules[fm].functions[f].returns.clone();
                for r in &returns {
                    let t = self.classify(fm, r, d + 1);
                    if !matches!(t, T::Other) {
                        return rebind(t, (fm, f), m, args);
                    }
                }
                T::Other
            }
            // `.mutation(resolver)` on a builder the audit cannot see into: still a procedure
            // when a router holds it.
            _ => match (callee, args.first()) {
                (Val::Member(_, name), Some(r)) => match Kind::of(name) {
                    Some(kind) => T::Procedure(Box::new(Procedure {
                        kind,
                        resolver: (m, r.clone()),
                        builder: Builder::default(),
                        call: (m, callee.clone(), args.to_vec()),
                    })),
                    None => T::Other,
                },
                _ => T::Other,
            },
        }
    }

    /// What a loader function (`() => import('./user.router')..`) returns, to tRPC.
    fn functions_return(&self, m: ModId, f: FnId, d: usize) -> T {
        for r in &self.res.modules[m].functions[f].returns {
            let t = self.loaded(m, r, d + 1);
            if !matches!(t, T::Other) {
                return t;
            }
        }
        T::Other
    }

    /// The router a lazily loaded module gives: `import(spec).then((m) => m.userRouter)` is that
    /// export; `import(spec)` alone is the module's default export, else its one router export.
    fn loaded(&self, m: ModId, v: &Val, d: usize) -> T {
        if d > MAX_DEPTH {
            return T::Other;
        }
        match v {
            Val::Call(callee, args) => {
                let (Val::Member(promise, then), Some(Val::Func(g))) =
                    (callee.as_ref(), args.first())
                else {
                    return self.classify(m, v, d + 1);
                };
                if then != "then" {
                    return self.classify(m, v, d + 1);
                }
                for r in &self.res.modules[m].functions[*g].returns {
                    let t = match r {
                        Val::Member(p, name) if matches!(p.as_ref(), Val::Param(pg, 0) if pg == g) => {
                            self.loaded(m, &Val::Member(promise.clone(), name.clone()), d + 1)
                        }
                        Val::Param(pg, 0) if pg == g => self.loaded(m, promise, d + 1),
                        other => self.classify(m, other, d + 1),
                    };
                    if !matches!(t, T::Other) {
                        return t;
                    }
                }
                T::Other
            }
            Val::Import { name: None, .. } => match self.classify(m, v, d + 1) {
                T::Module(t) => {
                    let default = self.export(t, Some("default"), d + 1);
                    if !matches!(default, T::Other) {
                        return default;
                    }
                    let mut routers = self.res.modules[t].exports.iter().filter_map(|(n, _)| {
                        match self.export(t, Some(n), d + 1) {
                            r @ (T::Router(..) | T::Merged(_)) => Some(r),
                            _ => None,
                        }
                    });
                    match (routers.next(), routers.next()) {
                        (Some(r), None) => r,
                        _ => T::Other,
                    }
                }
                other => other,
            },
            _ => self.classify(m, v, d + 1),
        }
    }

    /// The call that made a router, and the keys (with lines) of its object literal.
    fn router_call(&self, m: ModId, callee: &Val, args: &[At]) -> Option<(RouterId, &'a CallSite)> {
        let module = &self.res.modules[m];
        for (f, facts) in module.functions.iter().enumerate() {
            for (i, cs) in facts.calls.iter().enumerate() {
                if &cs.callee == callee
                    && cs.args.len() == args.len()
                    && cs
                        .args
                        .iter()
                        .zip(args)
                        .all(|(a, (am, b))| *am == m && crate::program::same_call_arg(a, b))
                {
                    return Some(((m, f, i), cs));
                }
            }
        }
        None
    }

    /// The line of the `.mutation(..)` call that made a procedure.
    fn procedure_line(&self, p: &Procedure) -> Option<u32> {
        let (m, callee, args) = &p.call;
        self.res.modules[*m]
            .functions
            .iter()
            .flat_map(|f| f.calls.iter())
            .find(|cs| {
                &cs.callee == callee
                    && cs.args.len() == args.len()
                    && cs
                        .args
                        .iter()
                        .zip(args.iter())
                        .all(|(a, b)| crate::program::same_call_arg(a, b))
            })
            .map(|cs| cs.line)
    }

    /// Walks a value that should be a router, collecting its procedures under `path`.
    #[allow(clippy::too_many_arguments)]
    fn walk_router(
        &mut self,
        (m, v): (ModId, &Val),
        path: &[String],
        at: Option<(ModId, u32)>,
        stack: &mut Vec<RouterId>,
        visits: &mut usize,
        reached: &mut BTreeSet<RouterId>,
        out: &mut Vec<Found>,
    ) {
        match self.classify(m, v, 0) {
            T::Router(rm, callee, args) => {
                self.walk_router_call(rm, &callee, &args, path, stack, visits, reached, out)
            }
            T::Merged(parts) => {
                if self.over_budget(visits, m, at.map_or(0, |a| a.1)) {
                    return;
                }
                for (pm, p) in parts {
                    self.walk_router((pm, &p), path, at, stack, visits, reached, out);
                }
            }
            // oRPC: a router is a plain object of procedures and routers.
            T::Obj(om, fields) => {
                if self.over_budget(visits, m, at.map_or(0, |a| a.1)) {
                    return;
                }
                self.walk_record(
                    om,
                    &fields,
                    path,
                    "",
                    (om, &[]),
                    stack,
                    visits,
                    reached,
                    out,
                );
            }
            _ => {
                if let Some((am, line)) = at {
                    let what = if path.is_empty() {
                        "a value".to_string()
                    } else {
                        format!("`{}`", path.join("."))
                    };
                    self.diag(
                        am,
                        line,
                        format!(
                            "tRPC: {what} is given as a router but is not one the audit can follow: its procedures are left out"
                        ),
                    );
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn walk_router_call(
        &mut self,
        m: ModId,
        callee: &Val,
        args: &[At],
        path: &[String],
        stack: &mut Vec<RouterId>,
        visits: &mut usize,
        reached: &mut BTreeSet<RouterId>,
        out: &mut Vec<Found>,
    ) {
        let found = self.router_call(m, callee, args);
        let line = found.map(|(_, cs)| cs.line).unwrap_or(0);
        if stack.len() >= MAX_NESTING {
            self.diag(
                m,
                line,
                format!(
                    "tRPC routers nested deeper than {MAX_NESTING} levels were not followed further"
                ),
            );
            return;
        }
        if self.over_budget(visits, m, line) {
            return;
        }
        if let Some((id, _)) = found {
            if stack.contains(&id) {
                self.diag(
                    m,
                    line,
                    "tRPC router contains itself (through its own routers): the cycle is followed once".into(),
                );
                return;
            }
            reached.insert(id);
            stack.push(id);
        }
        let keys: &[(String, u32)] = found.map(|(_, cs)| cs.arg_keys.as_slice()).unwrap_or(&[]);
        if let Some((am, a)) = args.first() {
            match self.classify(*am, a, 0) {
                T::Obj(om, fields) => {
                    // Key lines are those of the call's own object literal.
                    let keys = if matches!(a, Val::Obj(_)) { keys } else { &[] };
                    self.walk_record(
                        om,
                        &fields,
                        path,
                        "",
                        (m, keys),
                        stack,
                        visits,
                        reached,
                        out,
                    );
                }
                _ => self.diag(
                    m,
                    line,
                    "tRPC router made from a value that is not an object the audit can read: its procedures are left out".into(),
                ),
            }
        }
        if found.is_some() {
            stack.pop();
        }
    }

    /// Counts one more router walked from a root; past the budget (or too deep), says so once
    /// and stops the walk.
    fn over_budget(&mut self, visits: &mut usize, m: ModId, line: u32) -> bool {
        *visits += 1;
        if *visits == MAX_VISITS + 1 {
            self.diag(
                m,
                line,
                format!(
                    "tRPC routers visited more than {MAX_VISITS} times from one root (routers merged into each other over and over) were not followed further"
                ),
            );
        }
        *visits > MAX_VISITS
    }

    /// The fields of a router's record (or of a plain object nested in it, v11).
    #[allow(clippy::too_many_arguments)]
    fn walk_record(
        &mut self,
        m: ModId,
        fields: &[(String, Val)],
        path: &[String],
        local: &str,
        (km, keys): (ModId, &[(String, u32)]),
        stack: &mut Vec<RouterId>,
        visits: &mut usize,
        reached: &mut BTreeSet<RouterId>,
        out: &mut Vec<Found>,
    ) {
        for (k, v) in fields {
            // `{ ...adminProcedures, list }`: what the spread value holds sits at this level
            let spread = k == crate::program::SPREAD;
            let dotted = format!("{local}{k}");
            let at = keys
                .iter()
                .find(|(name, _)| *name == dotted)
                .map(|(_, l)| (km, *l));
            let mut sub = path.to_vec();
            if !spread {
                sub.push(k.clone());
            }
            match self.classify(m, v, 0) {
                T::Procedure(_) if spread => {}
                T::Procedure(p) => out.push(Found {
                    path: sub,
                    procedure: *p,
                    registered: at,
                }),
                T::Router(rm, callee, args) => {
                    self.walk_router_call(rm, &callee, &args, &sub, stack, visits, reached, out)
                }
                T::Merged(parts) => {
                    if self.over_budget(visits, m, at.map_or(0, |a| a.1)) {
                        return;
                    }
                    for (pm, p) in parts {
                        self.walk_router((pm, &p), &sub, at, stack, visits, reached, out);
                    }
                }
                T::Obj(om, inner) => {
                    if self.over_budget(visits, m, at.map_or(0, |a| a.1)) {
                        return;
                    }
                    let keys = if om == km { keys } else { &[] };
                    self.walk_record(
                        om,
                        &inner,
                        &sub,
                        &if spread {
                            local.to_string()
                        } else {
                            format!("{dotted}.")
                        },
                        (km, keys),
                        stack,
                        visits,
                        reached,
                        out,
                    );
                }
                _ => {
                    let (dm, line) = at.unwrap_or((m, 0));
                    self.diag(
                        dm,
                        line,
                        format!(
                            "tRPC router field `{}` is neither a procedure nor a router the audit can follow: it is left out",
                            if spread {
                                format!("{}...", local)
                            } else {
                                sub.join(".")
                            }
                        ),
                    );
                }
            }
        }
    }

    /// A value through the imports that name it: the module and value it is written as.
    fn deref(&self, mut m: ModId, mut v: Val) -> (ModId, Val) {
        for _ in 0..MAX_DEPTH {
            let Val::Import {
                spec,
                name: Some(name),
            } = &v
            else {
                break;
            };
            let Some(target) = self.res.resolve_spec(m, spec) else {
                break;
            };
            let Some(next) = self.res.modules[target].export(name) else {
                break;
            };
            (m, v) = (target, next.clone());
        }
        (m, v)
    }

    /// The mounts of the adapter call `called` made in module `m` (also through an import).
    fn mounts_of<'m>(&self, mounts: &'m [Mount], m: ModId, called: &Val) -> Vec<&'m Mount> {
        mounts
            .iter()
            .filter(|mt| {
                let (dm, dv) = self.deref(mt.module, mt.value.clone());
                dm == m && &dv == called
            })
            .collect()
    }

    /// The object a context creator (or its result) makes: the fields of `ctx`.
    fn context_fields(&self, (m, v): (ModId, &Val)) -> Option<(ModId, Vec<(String, Val)>)> {
        self.res.object_or_returned(m, v)
    }

    /// What a middleware adds to the context: the `ctx` of its `next({ ctx })` calls.
    fn middleware_fields(&self, m: ModId, f: FnId, key: &str) -> Vec<(ModId, Vec<(String, Val)>)> {
        let next = Val::Member(std::sync::Arc::new(Val::Param(f, 0)), "next".into());
        let mut out = Vec::new();
        for g in body(self.res, m, f) {
            for cs in &self.res.modules[m].functions[g].calls {
                if cs.callee != next {
                    continue;
                }
                let Some(Val::Obj(opts)) = cs.args.first() else {
                    continue;
                };
                if let Some(ctx) = field(opts, key)
                    && let Some(fields) = self.context_fields((m, ctx))
                {
                    out.push(fields);
                }
            }
        }
        out
    }

    /// Binds the options of a procedure's middleware and resolver: `ctx` is the context the
    /// creator makes, with what each middleware before adds.
    fn bind(
        &self,
        procedure: &Procedure,
        context: Option<&At>,
        bindings: &mut Vec<((ModId, FnId, usize), Resolved)>,
    ) {
        let mut ctx: Vec<(String, Part)> = Vec::new();
        let creator = context.or(procedure.builder.context.as_ref());
        if let Some((om, fields)) = creator.and_then(|(cm, c)| self.context_fields((*cm, c))) {
            ctx.extend(fields.into_iter().map(|(k, v)| (k, Part::Val(om, v))));
        }
        // tRPC hands resolvers and middleware `{ ctx }`, oRPC `{ context }`.
        let key = if procedure.builder.orpc {
            "context"
        } else {
            "ctx"
        };
        let opts = |ctx: &[(String, Part)]| {
            Resolved::Assembled(vec![(key.to_string(), Part::Obj(ctx.to_vec()))])
        };
        for (mm, mv) in &procedure.builder.middleware {
            if let Resolved::Func(fm, f) = self.res.resolve(*mm, mv) {
                bindings.push(((fm, f, 0), opts(&ctx)));
                for (om, fields) in self.middleware_fields(fm, f, key) {
                    ctx.extend(fields.into_iter().map(|(k, v)| (k, Part::Val(om, v))));
                }
            }
        }
        let (rm, rv) = &procedure.resolver;
        if let Resolved::Func(fm, f) = self.res.resolve(*rm, rv) {
            bindings.push(((fm, f, 0), opts(&ctx)));
        }
    }

    /// A field of an oRPC builder's `.route({ .. })` options, read as a string.
    fn route_option(&self, b: &Builder, name: &str) -> Option<String> {
        let (rm, r) = b.route.as_ref()?;
        let (om, opts) = self.options(*rm, Some(r))?;
        self.string(om, field(&opts, name)?)
    }

    /// The options object an adapter is given, with the module it is written in.
    fn options(&self, m: ModId, v: Option<&Val>) -> Option<(ModId, Vec<(String, Val)>)> {
        match v? {
            Val::Obj(fields) => Some((m, fields.clone())),
            other => match self.res.resolve(m, other) {
                Resolved::Obj(om, fields) => Some((om, fields)),
                _ => None,
            },
        }
    }

    fn string(&self, m: ModId, v: &Val) -> Option<String> {
        match self.res.resolve(m, v) {
            // `process.env.TRPC_ENDPOINT ?? '/api/trpc'`: the code's default.
            Resolved::Str(s) | Resolved::Default { value: s, .. } => Some(s),
            _ => None,
        }
    }

    /// An option that names the endpoint (`endpoint`, `basePath`): its value, or why it is unknown,
    /// or None when it is not given.
    /// An endpoint that is an environment read's default (`formatPath('/api/trpc')` of a helper
    /// prefixing `process.env.BASE_PATH ?? ''`) is said so at the adapter call `(m, line)`.
    fn endpoint_option(
        &mut self,
        opts: &(ModId, Vec<(String, Val)>),
        name: &str,
        (m, line): (ModId, u32),
    ) -> Option<Endpoint> {
        let v = field(&opts.1, name)?;
        if let Resolved::Default { value, var, .. } = self.res.resolve(opts.0, v) {
            let source = if super::reads_environment(&var) {
                "from the environment"
            } else {
                "(its value is not known before run time)"
            };
            self.diag(
                m,
                line,
                format!(
                    "the `{name}` of this tRPC adapter reads `{var}` {source}: its procedures are listed under the code's default `{value}`, which the deployment may change"
                ),
            );
        }
        Some(match self.string(opts.0, v) {
            Some(s) => Endpoint::At(normalize_path("", s.trim_end_matches('*'))),
            None => Endpoint::Unknown(format!("its `{name}` is not statically known")),
        })
    }
}

/// A value of a function's result that is one of its parameters is the caller's argument.
fn rebind(t: T, (fm, f): (ModId, FnId), m: ModId, args: &[Val]) -> T {
    let one = |(vm, v): At| -> At {
        match &v {
            Val::Param(pf, i) if vm == fm && *pf == f => {
                (m, args.get(*i).cloned().unwrap_or(Val::Unknown))
            }
            _ => (vm, v),
        }
    };
    match t {
        T::Router(rm, callee, a) => T::Router(rm, callee, a.into_iter().map(one).collect()),
        T::Merged(a) => T::Merged(a.into_iter().map(one).collect()),
        T::Builder(mut b) => {
            b.middleware = b.middleware.into_iter().map(one).collect();
            T::Builder(b)
        }
        T::Procedure(mut p) => {
            p.resolver = one(p.resolver.clone());
            p.builder.middleware = p.builder.middleware.into_iter().map(one).collect();
            T::Procedure(p)
        }
        other => other,
    }
}

/// The tRPC procedures of the tree as routes. REST routes whose handler only hands the request to
/// a tRPC adapter (a Next.js `[trpc]` file, `app.all('/trpc/*', (c) => fetchRequestHandler(..))`)
/// are the adapter's: they are taken out of `rest` and replaced by the procedures.
pub fn link(res: &Resolver, rest: &mut Vec<RawRoute>, mounts: &[Mount]) -> Linked {
    let uses_trpc = res.modules.iter().any(|module| {
        !module.is_test
            && module.functions.iter().any(|f| {
                f.calls.iter().any(|cs| {
                    matches!(&cs.root, Val::Import { spec, .. } if is_trpc(spec) || is_orpc(spec) || spec == "@hono/trpc-server")
                })
            })
    });
    if !uses_trpc {
        return Linked::default();
    }
    let mut l = Linker {
        res,
        exports: RefCell::new(HashMap::new()),
        diagnostics: BTreeSet::new(),
    };

    // Adapter calls, by the function they are made in.
    let mut calls: Vec<(ModId, FnId, &CallSite, Adapter, String)> = Vec::new();
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        for (f, facts) in module.functions.iter().enumerate() {
            for cs in &facts.calls {
                // oRPC: `handler.handle(request, { prefix })` on `new RPCHandler(router)`.
                if let Some((a, name)) = orpc_handler(&l, m, &cs.callee) {
                    calls.push((m, f, cs, a, name));
                    continue;
                }
                let Val::Import { spec, .. } = &cs.root else {
                    continue;
                };
                if !is_trpc(spec) && spec != "@hono/trpc-server" {
                    continue;
                }
                if let Some((a, name)) = Adapter::of_resolved(&res.resolve(m, &cs.callee)) {
                    calls.push((m, f, cs, a, name));
                }
            }
        }
    }
    let adapter_fns: HashSet<(ModId, FnId)> = calls.iter().map(|(m, f, ..)| (*m, *f)).collect();

    // REST routes that hand over to an adapter: the host of the adapter calls in their handlers.
    let mut hosts: BTreeMap<(ModId, FnId), (&'static str, Vec<At>)> = BTreeMap::new();
    // A `pages/api` file that makes a Next.js adapter is its endpoint, however its default
    // export wraps the adapter's handler (`withRateLimit(opts, (req, res) => nextApiHandler(req,
    // res))`): the file's own route is the procedures.
    let next_adapter_files: HashSet<ModId> = calls
        .iter()
        .filter(|(.., adapter, _)| matches!(adapter, Adapter::Next | Adapter::OpenApiNext))
        .map(|(m, ..)| *m)
        .filter(|m| {
            matches!(
                super::next::file_route(res, &res.modules[*m].file),
                Some(super::next::FileRoute::Pages(_))
            )
        })
        .collect();
    rest.retain(|r| !(r.framework == "nextjs" && next_adapter_files.contains(&r.module)));
    rest.retain(|r| match res.resolve(r.handler_module, &r.handler) {
        p @ Resolved::Package { .. } => Adapter::of_resolved(&p).is_none(),
        Resolved::Func(hm, hf) => {
            let inside: Vec<FnId> = body(res, hm, hf)
                .into_iter()
                .filter(|g| adapter_fns.contains(&(hm, *g)))
                .collect();
            for g in &inside {
                hosts
                    .entry((hm, *g))
                    .or_insert_with(|| (r.framework, r.middleware.clone()));
            }
            inside.is_empty()
        }
        _ => true,
    });

    let mut served: Vec<Served> = Vec::new();
    for (m, f, cs, adapter, name) in &calls {
        let (m, f) = (*m, *f);
        if matches!(adapter, Adapter::OrpcRpc | Adapter::OrpcOpenApi) {
            let Some((hm, made)) = orpc_instance(&l, m, &cs.callee) else {
                continue;
            };
            let Some(router) = made.first() else {
                l.diag(
                    m,
                    cs.line,
                    format!("oRPC `{name}` is made without a router the audit can read"),
                );
                continue;
            };
            let opts = l.options(m, cs.args.get(1));
            let file_route = super::next::file_route(res, &res.modules[m].file);
            let endpoint = opts
                .as_ref()
                .and_then(|o| l.endpoint_option(o, "prefix", (m, cs.line)))
                .unwrap_or_else(|| match &file_route {
                    Some(r) => Endpoint::At(without_catch_all(r.path())),
                    None => Endpoint::At("/".into()),
                });
            let host = hosts.get(&(m, f)).cloned();
            let framework = match (&file_route, &host) {
                (Some(_), _) => "nextjs",
                (None, Some(h)) => h.0,
                (None, None) => adapter.framework(),
            };
            served.push(Served {
                adapter: Some((*adapter, name.clone())),
                module: m,
                line: cs.line,
                router: (hm, router.clone()),
                context: opts
                    .as_ref()
                    .and_then(|(om, o)| field(o, "context").map(|c| (*om, c.clone()))),
                endpoint,
                framework,
                middleware: host.map(|h| h.1).unwrap_or_default(),
            });
            continue;
        }
        if *adapter == Adapter::Fastify {
            continue; // a plugin, registered: found among the mounts
        }
        let Some(opts) = l.options(m, cs.args.first()) else {
            l.diag(
                m,
                cs.line,
                format!("tRPC adapter `{name}` is given options the audit cannot read: the router it serves is not known"),
            );
            continue;
        };
        let called = Val::Call(std::sync::Arc::new(cs.callee.clone()), cs.args.clone());
        let mut endpoints: Vec<(Endpoint, Vec<At>, &'static str)> = Vec::new();
        let host = hosts.get(&(m, f)).cloned();
        let framework = host.as_ref().map(|h| h.0).unwrap_or(adapter.framework());
        let host_mw = host.map(|h| h.1).unwrap_or_default();
        let file_route = super::next::file_route(res, &res.modules[m].file);
        match adapter {
            Adapter::Next | Adapter::OpenApiNext => endpoints.push((
                match &file_route {
                    Some(super::next::FileRoute::Pages(p)) => Endpoint::At(without_catch_all(p)),
                    _ => Endpoint::Unknown(
                        "it is not called in a `pages/api` file, whose path would be its endpoint"
                            .into(),
                    ),
                },
                host_mw,
                "nextjs",
            )),
            Adapter::Fetch | Adapter::OpenApiFetch => {
                let e = l
                    .endpoint_option(&opts, "endpoint", (m, cs.line))
                    .unwrap_or_else(|| match &file_route {
                        Some(r) => Endpoint::At(without_catch_all(r.path())),
                        None => Endpoint::Unknown("it is given no `endpoint`".into()),
                    });
                let framework = if file_route.is_some() && host_mw.is_empty() {
                    "nextjs"
                } else {
                    framework
                };
                endpoints.push((e, host_mw, framework));
            }
            Adapter::Standalone | Adapter::OpenApiHttp => endpoints.push((
                l.endpoint_option(&opts, "basePath", (m, cs.line))
                    .unwrap_or(Endpoint::At("/".into())),
                host_mw,
                framework,
            )),
            Adapter::Hono => {
                let e = l
                    .endpoint_option(&opts, "endpoint", (m, cs.line))
                    .unwrap_or(Endpoint::At("/trpc".into()));
                let at = l.mounts_of(mounts, m, &called);
                if at.is_empty() {
                    endpoints.push((e.clone(), host_mw, "hono"));
                }
                for mt in at {
                    // `endpoint` must name the path the adapter is mounted at (it cuts it off the
                    // URL to find the procedure): when it is not static, the mount's path is it
                    let served = match &e {
                        Endpoint::Unknown(why)
                            if !mt.prefix.trim_matches(['/', '*']).is_empty() =>
                        {
                            let at = normalize_path("", mt.prefix.trim_end_matches('*'));
                            l.diag(
                                mt.module,
                                mt.line,
                                format!("tRPC adapter `trpcServer`: {why}; its procedures are listed under the path it is mounted at, `{at}`"),
                            );
                            Endpoint::At(at)
                        }
                        _ => e.clone(),
                    };
                    endpoints.push((served, mt.middleware.clone(), "hono"));
                }
            }
            Adapter::Express | Adapter::OpenApiExpress => {
                let at = l.mounts_of(mounts, m, &called);
                if at.is_empty() {
                    endpoints.push((
                        Endpoint::Unknown(
                            "it is not mounted on an app or router the audit follows".into(),
                        ),
                        host_mw,
                        "express",
                    ));
                }
                for mt in at {
                    endpoints.push((Endpoint::of_mount(mt), mt.middleware.clone(), "express"));
                }
            }
            Adapter::Lambda => endpoints.push((
                Endpoint::Unknown("API Gateway's configuration decides its path".into()),
                host_mw,
                framework,
            )),
            Adapter::NodeHttp | Adapter::Fastify | Adapter::OrpcRpc | Adapter::OrpcOpenApi => {
                endpoints.push((
                    Endpoint::Unknown("the code around it computes the procedure's path".into()),
                    host_mw,
                    framework,
                ))
            }
        }
        let Some(router) = field(&opts.1, "router") else {
            l.diag(
                m,
                cs.line,
                format!("tRPC adapter `{name}` is given no `router` the audit can read"),
            );
            continue;
        };
        let context = field(&opts.1, "createContext").map(|c| (opts.0, c.clone()));
        for (endpoint, middleware, framework) in endpoints {
            served.push(Served {
                adapter: Some((*adapter, name.clone())),
                module: m,
                line: cs.line,
                router: (opts.0, router.clone()),
                context: context.clone(),
                endpoint,
                framework,
                middleware,
            });
        }
    }
    // Fastify: `register(fastifyTRPCPlugin, { prefix, trpcOptions: { router, createContext } })`.
    for mt in mounts {
        let Some((Adapter::Fastify, name)) =
            Adapter::of_resolved(&res.resolve(mt.module, &mt.value))
        else {
            continue;
        };
        let trpc = l
            .options(mt.module, mt.options.as_ref())
            .and_then(|(om, o)| l.options(om, field(&o, "trpcOptions")));
        let Some((om, opts)) = trpc else {
            l.diag(
                mt.module,
                mt.line,
                format!("tRPC plugin `{name}` is registered without `trpcOptions` the audit can read: the router it serves is not known"),
            );
            continue;
        };
        let Some(router) = field(&opts, "router") else {
            continue;
        };
        served.push(Served {
            adapter: Some((Adapter::Fastify, name)),
            module: mt.module,
            line: mt.line,
            router: (om, router.clone()),
            context: field(&opts, "createContext").map(|c| (om, c.clone())),
            endpoint: Endpoint::of_mount(mt),
            framework: "fastify",
            middleware: mt.middleware.clone(),
        });
    }

    // Every router of the tree, and those another router holds: the rest are roots.
    let mut all: Vec<(RouterId, ModId, Val, Vec<At>)> = Vec::new();
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        for (f, facts) in module.functions.iter().enumerate() {
            for (i, cs) in facts.calls.iter().enumerate() {
                if cs.args.is_empty() {
                    continue;
                }
                if let T::RouterFn = l.classify(m, &cs.callee, 0) {
                    all.push((
                        (m, f, i),
                        m,
                        cs.callee.clone(),
                        cs.args.iter().map(|a| (m, a.clone())).collect(),
                    ));
                }
            }
        }
    }
    let mut nested: BTreeSet<RouterId> = BTreeSet::new();
    let mut quiet = Linker {
        res,
        exports: RefCell::new(std::mem::take(&mut *l.exports.borrow_mut())),
        diagnostics: BTreeSet::new(),
    };
    for (id, m, callee, args) in &all {
        let mut reached = BTreeSet::new();
        quiet.walk_router_call(
            *m,
            callee,
            args,
            &[],
            &mut vec![],
            &mut 0,
            &mut reached,
            &mut vec![],
        );
        reached.remove(id);
        nested.extend(reached);
    }
    *l.exports.borrow_mut() = quiet.exports.into_inner();

    let mut out = Linked::default();
    let mut served_routers: BTreeSet<RouterId> = BTreeSet::new();
    for s in &served {
        let mut found = Vec::new();
        let mut reached = BTreeSet::new();
        let at = Some((s.module, s.line));
        l.walk_router(
            (s.router.0, &s.router.1),
            &[],
            at,
            &mut vec![],
            &mut 0,
            &mut reached,
            &mut found,
        );
        served_routers.extend(reached);
        if let Endpoint::Unknown(why) = &s.endpoint
            && found.iter().any(|f| f.procedure.kind == Kind::Mutation)
        {
            let name = s
                .adapter
                .as_ref()
                .map(|a| a.1.as_str())
                .unwrap_or("adapter");
            l.diag(
                s.module,
                s.line,
                format!(
                    "tRPC adapter `{name}` serves its router at an endpoint the audit cannot tell ({why}): its procedures are listed as `POST trpc:<procedure path>`"
                ),
            );
        }
        emit(&l, s, found, &mut out);
    }
    for (id, m, callee, args) in &all {
        if nested.contains(id) || served_routers.contains(id) {
            continue;
        }
        let mut found = Vec::new();
        l.walk_router_call(
            *m,
            callee,
            args,
            &[],
            &mut vec![],
            &mut 0,
            &mut BTreeSet::new(),
            &mut found,
        );
        if !found.iter().any(|f| f.procedure.kind == Kind::Mutation) {
            continue;
        }
        let line = l
            .router_call(*m, callee, args)
            .map(|(_, cs)| cs.line)
            .unwrap_or(0);
        l.diag(
            *m,
            line,
            "tRPC router is served by no adapter the audit recognises (Next.js, fetch, Express, Fastify, Hono, standalone): its procedures are listed as `POST trpc:<procedure path>`, without the URL they are served at".into(),
        );
        let s = Served {
            adapter: None,
            module: *m,
            line,
            router: (
                *m,
                Val::Call(
                    std::sync::Arc::new(callee.clone()),
                    args.iter().map(|a| a.1.clone()).collect(),
                ),
            ),
            context: None,
            endpoint: Endpoint::Unknown(String::new()),
            framework: "trpc",
            middleware: vec![],
        };
        emit(&l, &s, found, &mut out);
    }
    orpc_once(&mut out);
    out.routes.sort_by(|a, b| {
        (&a.path, &a.method, a.module, a.line).cmp(&(&b.path, &b.method, b.module, b.line))
    });
    out.routes.dedup_by(|a, b| {
        a.path == b.path && a.method == b.method && a.module == b.module && a.line == b.line
    });
    out.diagnostics = l.diagnostics.into_iter().collect();
    out
}

/// The routes of one served router's procedures (mutations as `POST`, queries as `GET`), and the
/// options their resolvers and middleware receive.
fn emit(l: &Linker, s: &Served, found: Vec<Found>, out: &mut Linked) {
    let adapter = s.adapter.as_ref().map(|a| a.0);
    for f in found {
        let mut method = match f.procedure.kind {
            Kind::Mutation => "POST".to_string(),
            Kind::Query => "GET".to_string(),
            Kind::Subscription => continue,
        };
        let dotted = f.path.join(".");
        // The procedure's path under the endpoint: tRPC's dotted path, oRPC's key path over
        // RPC, its `.route()`'s path (else the key path) over OpenAPI.
        let mut local = dotted.clone();
        let explicit =
            f.procedure.builder.orpc && l.route_option(&f.procedure.builder, "path").is_some();
        match adapter {
            Some(Adapter::OrpcRpc) => local = f.path.join("/"),
            Some(Adapter::OrpcOpenApi) => {
                let b = &f.procedure.builder;
                if let Some(m) = l.route_option(b, "method") {
                    method = m.to_ascii_uppercase();
                }
                local = l
                    .route_option(b, "path")
                    .unwrap_or_else(|| f.path.join("/"));
            }
            // Only the procedures whose meta names a route are served, at that route.
            Some(a) if a.trpc_openapi() => {
                let b = &f.procedure.builder;
                let (Some(m), Some(p)) = (l.route_option(b, "method"), l.route_option(b, "path"))
                else {
                    continue;
                };
                method = m.to_ascii_uppercase();
                local = p;
            }
            _ => {}
        }
        let (path, path_complete) = match &s.endpoint {
            Endpoint::At(e) => (normalize_path(e, &local), true),
            Endpoint::Partial(e) => (normalize_path(e, &local), false),
            Endpoint::Unknown(_) => (format!("trpc:{dotted}"), false),
        };
        // where the procedure is written: its key in the router, or, for a procedure defined in
        // a file of its own and only named in the router, its `.mutation(..)` (where a fix goes)
        let defined = l
            .procedure_line(&f.procedure)
            .map(|line| (f.procedure.call.0, line));
        let (module, line) = match (f.registered, defined) {
            (Some(r), Some(d)) if r.0 != d.0 => d,
            (Some(r), _) => r,
            (None, Some(d)) => d,
            (None, None) => (s.module, s.line),
        };
        l.bind(&f.procedure, s.context.as_ref(), &mut out.bindings);
        let mut middleware = s.middleware.clone();
        middleware.extend(f.procedure.builder.middleware.iter().cloned());
        if let Some(a @ (Adapter::OrpcRpc | Adapter::OrpcOpenApi)) = adapter {
            out.orpc
                .push((out.routes.len(), a == Adapter::OrpcOpenApi, explicit));
        }
        let protocol = if adapter.is_some_and(|a| a == Adapter::OrpcOpenApi || a.trpc_openapi()) {
            Protocol::Rest
        } else {
            Protocol::Trpc
        };
        out.routes.push(RawRoute {
            method,
            path,
            framework: s.framework,
            module,
            line,
            handler: f.procedure.resolver.1.clone(),
            handler_module: f.procedure.resolver.0,
            middleware,
            branch: None,
            protocol,
            handler_name: Some(dotted),
            path_complete,
            steps: vec![],
            file: None,
        });
    }
}

/// The oRPC handler whose `.handle(..)` `callee` is (`new RPCHandler(router)`, also through a
/// binding or an import): which one, and its name.
fn orpc_handler(l: &Linker, m: ModId, callee: &Val) -> Option<(Adapter, String)> {
    let Val::Member(recv, p) = callee else {
        return None;
    };
    if p != "handle" {
        return None;
    }
    let (dm, dv) = l.deref(m, recv.as_ref().clone());
    let Val::New(ctor, _) = &dv else {
        return None;
    };
    Adapter::of_resolved(&l.res.resolve(dm, ctor))
        .filter(|(a, _)| matches!(a, Adapter::OrpcRpc | Adapter::OrpcOpenApi))
}

/// The arguments an oRPC handler was made with (`new RPCHandler(router, options)`), with the
/// module they are written in.
fn orpc_instance(l: &Linker, m: ModId, callee: &Val) -> Option<(ModId, Vec<Val>)> {
    let Val::Member(recv, _) = callee else {
        return None;
    };
    let (dm, Val::New(ctor, line)) = l.deref(m, recv.as_ref().clone()) else {
        return None;
    };
    l.res.modules[dm]
        .functions
        .iter()
        .flat_map(|f| f.calls.iter())
        .find(|cs| cs.line == line && cs.callee == *ctor)
        .map(|cs| (dm, cs.args.clone()))
}

/// One route per oRPC procedure that both an RPC and an OpenAPI handler serve: the OpenAPI one
/// where its `.route()` names a path (the path its clients are given), else the RPC one.
fn orpc_once(out: &mut Linked) {
    type Proc = (ModId, u32, Option<String>);
    let key = |r: &RawRoute| -> Proc { (r.module, r.line, r.handler_name.clone()) };
    let mut kinds: BTreeMap<Proc, (bool, bool)> = BTreeMap::new();
    for &(i, openapi, _) in &out.orpc {
        let e = kinds.entry(key(&out.routes[i])).or_default();
        if openapi {
            e.1 = true;
        } else {
            e.0 = true;
        }
    }
    let mut drop: BTreeSet<usize> = BTreeSet::new();
    for &(i, openapi, explicit) in &out.orpc {
        let (rpc, oapi) = kinds[&key(&out.routes[i])];
        if rpc && oapi && openapi != explicit {
            drop.insert(i);
        }
    }
    let mut i = 0;
    out.routes.retain(|_| {
        i += 1;
        !drop.contains(&(i - 1))
    });
    out.orpc.clear();
}

#[cfg(test)]
mod tests {
    use super::without_catch_all;

    #[test]
    fn a_catch_all_file_serves_its_folder() {
        assert_eq!(without_catch_all("/api/trpc/{trpc}"), "/api/trpc");
        assert_eq!(without_catch_all("/{trpc}"), "/");
        assert_eq!(without_catch_all("/api/trpc"), "/api/trpc");
    }
}
