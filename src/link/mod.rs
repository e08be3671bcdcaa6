//! Linking: mounts across files, handlers to their definitions, calls into services, and the
//! mechanisms that cover each route. Produces language-neutral [`Endpoint`]s.

pub mod apidoc;
pub mod astro;
pub mod calls;
pub mod clients;
pub mod constraints;
pub mod evershop;
pub mod fileroutes;
pub mod guards;
pub mod harm;
pub mod key_tests;
pub mod keystore;
pub mod medusa;
pub mod message_ids;
pub mod mounts;
pub mod next;
pub mod nuxt;
pub mod remix;
pub mod resolve;
pub mod sveltekit;
pub mod trpc;
pub mod webhooks;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::facts::{
    ClientRequest, Diagnostic, Effect, EffectKind, Endpoint, KeyObs, KeyStore, Location, Mechanism,
    MechanismKind, UniqueConstraint,
};
use crate::program::{FnId, Module, Val};
use calls::Calls;
use resolve::{ModId, Resolved, Resolver};
use std::path::Path;

/// A value as the code names it (`config.serve.path`, `process.env.X`), for reports.
pub(crate) fn display(v: &Val) -> String {
    match v {
        Val::EnvDefault { var, .. } => var.clone(),
        Val::Member(inner, p) => {
            let base = display(inner);
            if base.is_empty() {
                p.clone()
            } else {
                format!("{base}.{p}")
            }
        }
        Val::Import { spec, name } => name
            .clone()
            .filter(|n| n != "default")
            .unwrap_or_else(|| spec.rsplit('/').next().unwrap_or(spec).to_string()),
        Val::Global(g) => g.clone(),
        Val::Call(callee, _) => format!("{}(…)", display(callee)),
        Val::Str(s) => format!("'{s}'"),
        Val::Arr(items) => format!(
            "[{}]",
            items.iter().map(display).collect::<Vec<_>>().join(", ")
        ),
        _ => String::new(),
    }
}

/// The variable an environment read names: `process.env.API_PREFIX`, `process.env['API_PREFIX']`,
/// `import.meta.env.BASE`, `Bun.env.X`, `Deno.env.get('X')`, `env('X')`.
pub(crate) fn env_name(var: &str) -> Option<&str> {
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    for p in ["process.env", "import.meta.env", "Bun.env"] {
        if let Some(rest) = var.strip_prefix(p) {
            let name = rest.strip_prefix('.').or_else(|| {
                rest.strip_prefix('[')
                    .and_then(|r| r.strip_suffix(']'))
                    .map(|r| r.trim_matches(['\'', '"', '`']))
            })?;
            return ident(name).then_some(name);
        }
    }
    if !reads_environment(var) {
        return None;
    }
    let (_, arg) = var.split_once('(')?;
    let name = arg.trim_end_matches(')').trim_matches(['\'', '"']);
    ident(name).then_some(name)
}

/// Is `var`, the source of a [`Resolved::Default`], a read of the environment (`process.env.X`,
/// `import.meta.env.X`, `Bun.env.X`, `Deno.env.get('X')`, `env('X')`), rather than another value
/// the code gives a literal fallback (`config.server.basePath || ''`)?
pub(crate) fn reads_environment(var: &str) -> bool {
    ["process.env", "import.meta.env", "Bun.env", "Deno.env"]
        .iter()
        .any(|p| var.starts_with(p))
        || var.split_once('(').is_some_and(|(f, arg)| {
            !f.is_empty()
                && f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && arg.starts_with(['\'', '"'])
                && arg
                    .trim_end_matches(')')
                    .trim_matches(['\'', '"'])
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
}

/// What linking one tree's TypeScript/JavaScript gives.
pub struct Linked {
    pub endpoints: Vec<Endpoint>,
    pub diagnostics: Vec<Diagnostic>,
    /// The unique constraints their ORM models declare.
    pub constraints: Vec<UniqueConstraint>,
    /// Schema statements the code runs as strings (migrations written in TypeScript).
    pub schema_sql: Vec<crate::facts::SchemaSql>,
    /// Requests client code sends with an idempotency key.
    pub clients: Vec<ClientRequest>,
}

/// Links the modules of one tree into endpoints, and collects the unique constraints their ORM
/// models declare and the client requests that send keys.
/// `prisma_clients`: the folders Prisma schemas generate their client into (imports from there are
/// `@prisma/client`).
pub fn link_ts(
    modules: &[Module],
    root: &Path,
    catalog: &Catalog,
    config: &Config,
    prisma_clients: &[String],
    docs: &crate::facts::doc::ApiDocs,
    db_functions: &[(String, String)],
) -> Linked {
    let mut res = Resolver::new(modules, root).with_generated_clients(prisma_clients);
    crate::trace_phase("ts resolver");
    let (mut routes, mut diagnostics, mounted, bindings) =
        mounts::Mounter::new(&res, config).with_docs(docs).routes();
    crate::trace_phase("ts mounts");
    // What GraphQL servers pass their resolvers (the context) is bound like tRPC's.
    res.bind_params(bindings);
    // tRPC procedures are routes too; what tRPC passes their resolvers (the context) is bound
    // before any call is followed.
    // A bug met there costs the tRPC procedures, not the audit.
    let linked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut rest = routes.clone();
        let t = trpc::link(&res, &mut rest, &mounted);
        (rest, t)
    }));
    match linked {
        Ok((rest, t)) => {
            routes = rest;
            routes.extend(t.routes);
            diagnostics.extend(t.diagnostics);
            res.bind_params(t.bindings);
        }
        Err(e) => diagnostics.push(Diagnostic::new(
            "",
            0,
            format!(
                "internal error while linking tRPC routers ({}); their procedures are left out, please report it",
                crate::isolate::panic_reason(e.as_ref())
            ),
        )),
    }
    let res = res;
    crate::trace_phase("ts trpc");
    let mut calls = Calls::new(&res, catalog).with_db_functions(db_functions);
    if let Some(depth) = config.call_depth {
        calls = calls.with_max_depth(depth as usize);
    }
    let cleanups = calls.cleanups();
    let mut endpoints = Vec::new();
    // Handlers summarised per method are not memoised: they are server code too.
    let mut handlers = std::collections::HashSet::new();
    // A package's webhook controller imported by several modules is served once (Nest
    // registers one controller class): the first import, in file order, places it.
    let mut served = std::collections::HashSet::new();
    routes.retain(|r| {
        calls.package_controller(&r.handler).is_none()
            || served.insert((r.method.clone(), r.path.clone()))
    });
    for route in routes {
        // A bug met while linking one route costs that route, not the audit.
        let file = route
            .file
            .clone()
            .unwrap_or_else(|| modules[route.module].file.clone());
        let route_file = file.clone();
        let (line, label) = (route.line, format!("{} {}", route.method, route.path));
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut effects: Vec<Effect> = Vec::new();
            let mut mechanisms: Vec<Mechanism> = Vec::new();
            let mut key_reads: Vec<Location> = Vec::new();
            let mut content_hashes: Vec<Location> = Vec::new();
            let mut key_obs: Vec<KeyObs> = Vec::new();
            let mut derived_ids: Vec<Location> = Vec::new();
            let mut signature_checks: Vec<(String, Location)> = Vec::new();
            let here = Location::new(route_file.clone(), route.line);
            let mut unfollowed: Option<(String, Location)> = None;
            let mut handler: Option<(String, Option<Location>)> = None;
            // The handler, then the steps that run as it does (a chain of middleware files).
            let parts = std::iter::once((route.handler_module, &route.handler))
                .chain(route.steps.iter().map(|(m, v)| (*m, v)));
            // Each function that runs, and whether it is a callback of a package's handler.
            let mut funcs: Vec<(ModId, FnId, bool)> = Vec::new();
            for (pm, pv) in parts {
                match res.resolve(pm, pv) {
                    Resolved::Func(m, f) => funcs.push((m, f, false)),
                    // A package's own webhook controller: it checks the provider's signature,
                    // then runs the methods the project marks for it.
                    _ if let Some((entry, marked)) = calls.package_controller(pv) => {
                        effects.push(Effect {
                            kind: EffectKind::WebhookReceiver,
                            callee: entry.package.clone(),
                            label: entry.label.clone(),
                            location: here.clone(),
                            ..Effect::default()
                        });
                        handler.get_or_insert((
                            format!("the webhook controller of {}", entry.package),
                            Some(here.clone()),
                        ));
                        funcs.extend(marked.into_iter().map(|(m, f)| (m, f, true)));
                    }
                    _ => {
                        let d = display(pv);
                        let d = match (&route.handler_name, &handler) {
                            (Some(n), None) => n.clone(),
                            _ => d,
                        };
                        let d = if d.is_empty() { "unresolved".into() } else { d };
                        // A handler the audit could not read (from a package, or from a value it
                        // cannot resolve) was not looked at.
                        // A package's handler that answers this method itself (next-auth on a
                        // PUT) runs nothing; any other one was not looked at.
                        if !calls.library_handler_refuses(pm, pv, &route.method) {
                            unfollowed.get_or_insert((format!("the handler `{d}`"), here.clone()));
                        }
                        handler.get_or_insert((d, None));
                        // A package's handler made from options (`export default
                        // NextAuth(authOptions)`): the callbacks it is given run in it.
                        funcs.extend(
                            calls
                                .library_handler_callbacks(pm, pv, &route.method)
                                .into_iter()
                                .map(|(m, f)| (m, f, true)),
                        );
                    }
                }
            }
            for (m, f, callback) in funcs {
                for g in calls.with_children(m, f) {
                    handlers.insert((m, g));
                }
                let s = match &route.branch {
                    Some(method) => std::rc::Rc::new(calls.summary_for_method(m, f, method)),
                    None => calls.summary(m, f),
                };
                let before = effects.len();
                // A generic request whose method is still a parameter at the handler was
                // never given a mutation method.
                effects.extend(
                    s.effects
                        .iter()
                        .filter(|e| e.method_param.is_none())
                        .filter(|e| !needs_absent_path_param(e, &modules[m], m, f, &route.path))
                        .cloned()
                        .map(|e| request_message_id(e, catalog)),
                );
                // A callback a package's handler runs is a call of that handler's: its name
                // heads the way to what it reaches (`sendMagicLink` → `sendEmail`).
                let name = &modules[m].functions[f].name;
                if callback && !name.is_empty() && name != "anonymous" {
                    for e in &mut effects[before..] {
                        e.via.insert(0, name.clone());
                    }
                }
                request_keys(&mut effects[before..], m, f);
                dto_keys(&res, &mut effects[before..], m, f);
                content_hashes.extend(s.content_hashes.iter().cloned());
                if let Some(first) = s.key_reads.first() {
                    if key_reads.is_empty() {
                        mechanisms.push(Mechanism::handler_reads_key(first.clone()));
                    }
                    key_obs.extend(s.key_obs.iter().cloned());
                }
                key_reads.extend(s.key_reads.iter().cloned());
                derived_ids.extend(s.derived_ids.iter().cloned());
                signature_checks.extend(s.signature_checks.iter().cloned());
                if let Some(u) = s.unfollowed.first() {
                    unfollowed.get_or_insert(u.clone());
                }
                let facts = &modules[m].functions[f];
                if !callback && handler.as_ref().is_none_or(|(_, at)| at.is_none()) {
                    handler = Some((
                        route
                            .handler_name
                            .clone()
                            .unwrap_or_else(|| facts.name.clone()),
                        Some(Location::new(modules[m].file.clone(), facts.line)),
                    ));
                }
            }
            // (Handlers of a package's controller share what they call: each effect once.)
            if calls.package_controller(&route.handler).is_some() {
                let mut seen = std::collections::BTreeSet::new();
                effects.retain(|e| seen.insert((e.kind, e.callee.clone(), e.location.clone())));
            }
            let (handler, handler_location) =
                handler.unwrap_or_else(|| ("unresolved".into(), None));
            let mut key_store = None;
            let mut after_obs: Vec<KeyObs> = Vec::new();
            for (mm, mv) in &route.middleware {
                if let Resolved::Func(m2, f2) = res.resolve(*mm, mv) {
                    let s = calls.summary(m2, f2);
                    content_hashes.extend(s.content_hashes.iter().cloned());
                    // A middleware that checks the signature (`verifyWebhookSignature`), by its name
                    // or by what it reads: a provider's signature header read there
                    // (`stripe-signature`) makes a receiver, as in the handler.
                    signature_checks.extend(s.signature_checks.iter().cloned());
                    effects.extend(
                        s.effects
                            .iter()
                            .filter(|e| e.kind == EffectKind::WebhookReceiver)
                            .cloned(),
                    );
                    let name = &modules[m2].functions[f2].name;
                    if calls::looks_like_signature_check(name) {
                        signature_checks.push((
                            format!("`{name}` middleware"),
                            Location::new(modules[m2].file.clone(), modules[m2].functions[f2].line),
                        ));
                    }
                }
                // A hook after the handler (Fastify `onSend`): what it does to the key store
                // happens once the handler has answered.
                if let Some(hook) = crate::program::as_after_handler(mv) {
                    if let Resolved::Func(m2, f2) = res.resolve(*mm, hook) {
                        for o in &calls.summary(m2, f2).key_obs {
                            let mut o = o.clone();
                            if o.ctx == crate::facts::key::Ctx::Main {
                                o.ctx = crate::facts::key::Ctx::AfterHandler;
                            }
                            after_obs.push(o);
                        }
                    }
                    continue;
                }
                if let Resolved::Func(m2, f2) = res.resolve(*mm, mv)
                    && !calls.summary(m2, f2).key_reads.is_empty()
                    && let Some((location, detail)) = calls.memory_store(m2, f2)
                {
                    key_store = Some(KeyStore::of_kind("memory", detail, location));
                }
                if let Some((mech, library)) = key_middleware(
                    &res,
                    &calls,
                    catalog,
                    (*mm, mv),
                    here.clone(),
                    &mut key_reads,
                    &mut key_obs,
                ) {
                    if let Some(known) = library {
                        key_store = Some(keystore::from_catalogue(known, &mech.location));
                    }
                    mechanisms.push(mech);
                }
            }
            if !key_obs.is_empty() {
                key_obs.extend(after_obs);
            }
            if key_obs
                .iter()
                .any(|o| matches!(o.obs, crate::facts::key::Obs::Op(_)))
            {
                key_obs.extend(cleanups.iter().cloned());
            }

            key_reads.sort();
            key_reads.dedup();
            // A hash of the body used as the dedup key, where no key header is read (beside one, it
            // is the request's fingerprint).
            content_hashes.sort();
            if key_reads.is_empty()
                && let Some(first) = content_hashes.first()
            {
                mechanisms.push(Mechanism {
                    kind: MechanismKind::ContentHash,
                    detail: format!("a hash of the request body ({first}) is the dedup key"),
                    location: first.clone(),
                });
            }
            webhooks::add_by_convention(&mut effects, &route.path, &signature_checks);
            Endpoint {
                method: route.method,
                path: route.path,
                path_complete: route.path_complete,
                framework: route.framework.to_string(),
                protocol: route.protocol,
                location: here,
                handler,
                side_effects: effects,
                mechanisms,
                key_reads,
                handler_location,
                key_store,
                key_obs,
                derived_ids,
                unfollowed,
                ..Endpoint::default()
            }
        }));
        match built {
            Ok(endpoint) => endpoints.push(endpoint),
            Err(e) => {
                let why = crate::isolate::panic_reason(e.as_ref());
                diagnostics.push(Diagnostic::new(
                    file,
                    line,
                    format!(
                        "internal error while linking `{label}` ({why}); it is left out, please report it"
                    ),
                ));
            }
        }
    }
    if let Some(((m, f), depth)) = calls.depth_cut() {
        diagnostics.push(calls::depth_cut_diagnostic(
            Location::new(modules[m].file.clone(), modules[m].functions[f].line),
            &modules[m].functions[f].name,
            depth,
        ));
    }
    crate::trace_phase("ts endpoints");
    let mut reached = calls.reached();
    reached.extend(handlers);
    let (constraints, schema_sql) = constraints::from_modules(&res);
    crate::trace_phase("ts constraints");
    let clients = clients::from_modules(&res, &reached);
    diagnostics.extend(res.take_manifest_problems());
    Linked {
        endpoints,
        diagnostics,
        constraints,
        schema_sql,
        clients,
    }
}

/// One diagnostic per call that could not be followed, for the endpoints that reach nothing else:
/// their classification is `unknown`.
pub fn unfollowed_diagnostics(endpoints: &[Endpoint]) -> Vec<Diagnostic> {
    // (with whether every endpoint of the call reaches nothing at all)
    let mut by_call: std::collections::BTreeMap<(&Location, &str), (Vec<String>, bool)> =
        std::collections::BTreeMap::new();
    for ep in endpoints {
        // Nothing reached, or what was reached leaves it `unknown` (see `rules::classify`).
        if let Some((call, at)) = &ep.unfollowed
            && (ep.side_effects.is_empty()
                || crate::rules::classify(ep) == crate::rules::Classification::Unknown)
            && ep.is_mutation()
        {
            let (eps, bare) = by_call
                .entry((at, call.as_str()))
                .or_insert_with(|| (Vec::new(), true));
            eps.push(ep.label());
            *bare &= ep.side_effects.is_empty();
        }
    }
    by_call
        .into_iter()
        .map(|((at, call), (eps, bare))| {
            let n = eps.len();
            let shown: Vec<&str> = eps.iter().take(3).map(String::as_str).collect();
            // A call whose note says why it is not judged (`x.create` (a method named for a
            // create, ..)) needs no list of the reasons a call may not be followed.
            let why = if call.ends_with(')') {
                "is not judged"
            } else {
                "could not be followed (a callee computed at run time, a function no source in view defines, a handler that resolves to nothing, or a call deeper than `call_depth`)"
            };
            Diagnostic::new(
                at.file.clone(),
                at.line,
                format!(
                    "{call} {why}: {n} endpoint{} reaching nothing {} ({}{}) {} classified `unknown`, not idempotent by nature",
                    if n == 1 { "" } else { "s" },
                    if bare { "else" } else { "else a repeat would change" },
                    shown.join(", "),
                    if n > 3 { ", …" } else { "" },
                    if n == 1 { "is" } else { "are" },
                ),
            )
        })
        .collect()
}

/// At the handler, a message id that still comes from a parameter comes from the request: the
/// client's event id, which a retry sends again. Only an id read from a field named for one
/// (`body.messageId`), or from within the body when it went through a list or a mix of values
/// (each event of a batch), counts: a user id or a path parameter is not a message's id.
/// An effect that runs only when a parameter of the handler is falsy (`if (!id) return
/// this.create(body)`), where the route binds that parameter to one of its path parameters
/// (`@Param('id') id` on `PATCH /menu/{id}`): the router matched a non-empty segment, so the
/// branch never runs.
fn needs_absent_path_param(e: &Effect, module: &Module, m: ModId, f: FnId, path: &str) -> bool {
    let Some(gate) = e.param_gate.as_deref() else {
        return false;
    };
    let (r, test) = gate;
    *test == crate::facts::ParamTest::Truthy(false)
        && r.module == m
        && r.function == f
        && r.path.is_empty()
        && module.functions[f]
            .path_params
            .iter()
            .any(|(i, name)| *i == r.index && path.contains(&format!("{{{name}}}")))
}

fn request_message_id(mut e: Effect, catalog: &Catalog) -> Effect {
    // A job id read from the request (`{ jobId: req.body.eventId }`): a retry sends it again.
    if let Some(p) = e.dedup_param.take() {
        e.deduplicated |= p.is_id && !p.fields.is_empty();
    }
    if let Some((_, fields, closed)) = e.id_param.take() {
        let named = fields
            .last()
            .is_some_and(|f| message_ids::is_id_field(catalog, f));
        let in_body = fields.iter().take(2).any(|f| f == "body");
        e.deduplicated |= if closed { in_body } else { named };
    }
    e
}

/// A middleware that handles the idempotency key: a project function that reads the header
/// (through its calls too), or a known idempotency package.
fn key_middleware<'c>(
    res: &Resolver,
    calls: &Calls,
    catalog: &'c Catalog,
    (m, v): (ModId, &Val),
    route: Location,
    key_reads: &mut Vec<Location>,
    key_obs: &mut Vec<KeyObs>,
) -> Option<(Mechanism, Option<&'c crate::catalog::Middleware>)> {
    match res.resolve(m, v) {
        Resolved::Func(m2, f2) => {
            let s = calls.summary(m2, f2);
            let first = s.key_reads.first()?;
            key_reads.extend(s.key_reads.iter().cloned());
            key_obs.extend(s.key_obs.iter().cloned());
            let name = &res.modules[m2].functions[f2].name;
            Some((
                Mechanism {
                    kind: MechanismKind::HeaderKey,
                    detail: format!(
                        "idempotency middleware `{name}` reads the key header ({first})"
                    ),
                    location: Location::new(
                        res.modules[m2].file.clone(),
                        res.modules[m2].functions[f2].line,
                    ),
                },
                None,
            ))
        }
        // A NestJS interceptor or guard class (or an instance of one): its methods decide.
        Resolved::Class(m2, c) | Resolved::Instance(m2, c) => {
            let class = &res.modules[m2].classes[c];
            let mut found = None;
            let mut seen = Vec::new();
            // The entry the framework calls (`intercept`, `use`, `canActivate`) sees the helper
            // methods through its calls, in its own order.
            let entry = class
                .methods
                .iter()
                .find(|(n, _)| matches!(n.as_str(), "intercept" | "use" | "canActivate" | "handle"))
                .map(|(_, f)| *f);
            for (_, f2) in &class.methods {
                let s = calls.summary(m2, *f2);
                if let Some(first) = s.key_reads.first() {
                    key_reads.extend(s.key_reads.iter().cloned());
                    found.get_or_insert(first.clone());
                }
                if entry.is_none_or(|e| e == *f2) {
                    seen.extend(s.key_obs.iter().cloned());
                }
            }
            if let Some(first) = found {
                key_obs.extend(seen);
                return Some((
                    Mechanism {
                        kind: MechanismKind::HeaderKey,
                        detail: format!("`{}` reads the key header ({first})", class.name),
                        location: Location::new(res.modules[m2].file.clone(), class.line),
                    },
                    None,
                ));
            }
            match class.extends.as_ref().map(|e| res.resolve(m2, e)) {
                Some(Resolved::Package { spec, .. }) => catalog
                    .middleware_for(crate::catalog::Lang::Ts, &spec)
                    .map(|known| {
                        (
                            Mechanism {
                                kind: MechanismKind::HeaderKey,
                                detail: format!(
                                    "`{}` extends {} (`{spec}`)",
                                    class.name,
                                    if known.label.is_empty() {
                                        &known.id
                                    } else {
                                        &known.label
                                    }
                                ),
                                location: Location::new(res.modules[m2].file.clone(), class.line),
                            },
                            Some(known),
                        )
                    }),
                _ => None,
            }
        }
        Resolved::Package { spec, .. } => {
            let known = catalog.middleware_for(crate::catalog::Lang::Ts, &spec)?;
            Some((
                Mechanism {
                    kind: MechanismKind::HeaderKey,
                    detail: format!(
                        "{} (`{spec}`)",
                        if known.label.is_empty() {
                            &known.id
                        } else {
                            &known.label
                        }
                    ),
                    location: route,
                },
                Some(known),
            ))
        }
        _ => None,
    }
}

/// The keys of each create's record that come from the handler `(m, f)`'s parameters (the
/// request, its body, the Nest DTO) through every call on the way: what the client supplies.
fn request_keys(effects: &mut [Effect], m: usize, f: usize) {
    for e in effects.iter_mut() {
        e.request_keys = e
            .key_params
            .iter()
            .filter(|(_, r)| r.module == m && r.function == f)
            .map(|(k, _)| k.clone())
            .chain(e.fixed_keys.iter().cloned())
            .collect();
    }
}

/// A create whose record is (or spreads) the handler's own parameter, `prisma.team.create({ data:
/// { ...args.data, workspace: { connect: { id } } } })` with `@Args() args: TeamCreateArgs`: the
/// fields the parameter's declared type (a DTO class, an interface) gives are keys the record
/// writes from the request. Not a row's id (`id?: string` of a generated input is optional, and
/// the column's default fills it).
fn dto_keys(res: &Resolver, effects: &mut [Effect], m: usize, f: usize) {
    for e in effects.iter_mut() {
        let Some(r) = e
            .data_param
            .as_ref()
            .filter(|r| r.module == m && r.function == f)
        else {
            continue;
        };
        if e.kind != crate::facts::EffectKind::DbCreate {
            continue;
        }
        let Some(fields) = res.param_fields(m, f, r.index, &r.path) else {
            // (`data: { ...req.body, ownerId }`: the fields the client sends are not in view,
            // so any column may come from them, as when the record is `req.body` whole; a
            // natural key's constraint is then taken as written)
            e.data_keys = None;
            continue;
        };
        for k in fields {
            if matches!(
                k.to_ascii_lowercase().as_str(),
                "id" | "_id" | "uuid" | "guid"
            ) || e.made_keys.contains(&k)
            {
                continue;
            }
            let keys = e.data_keys.get_or_insert_with(Vec::new);
            if !keys.contains(&k) {
                keys.push(k.clone());
            }
            if !e.request_keys.contains(&k) {
                e.request_keys.push(k);
            }
        }
    }
}

/// An upsert matched on the caller's value, or on one made per call when the caller sends none:
/// a `PUT`, `PATCH` or `DELETE` names the row it writes, so its upsert matches that row on a
/// retry; a `POST` creates, and its client sends no id.
pub fn upserts_by_method(endpoints: &mut [crate::facts::Endpoint]) {
    for ep in endpoints {
        if matches!(ep.method.as_str(), "PUT" | "PATCH" | "DELETE") {
            for e in &mut ep.side_effects {
                if e.upsert_unless_missing {
                    e.upsert = true;
                }
            }
        }
    }
}

/// The mechanisms every endpoint gets the same way from what it reaches, once nothing it reaches
/// repeats on a retry: `upsert` for each upsert, and `natural` when its writes are absolute
/// updates, deletes, replaces and upserts (or there are none), whatever key also covers it.
/// Sorts and deduplicates.
pub fn complete_mechanisms(effects: &[Effect], mechanisms: &mut Vec<Mechanism>, handler: Location) {
    // Something still repeats on a retry: only a key (found by the front end) protects it.
    if effects.iter().any(Effect::repeats_on_retry) {
        return;
    }
    // Money that only a racy state test keeps from moving twice is nothing natural.
    if effects.iter().any(|e| {
        e.impact == crate::facts::Impact::Money
            && (e.state_guarded.is_some() || e.lookup_guarded.is_some())
            && e.claimed.is_none()
    }) {
        return;
    }
    // Find-or-create by hand counts as an upsert unless a unique constraint is what stops the
    // duplicate (then the constraint is the mechanism, the lookup a courtesy).
    let upserts: Vec<&Effect> = effects
        .iter()
        .filter(|e| e.upsert || (e.find_or_create && e.constraint.is_none()))
        .collect();
    for e in &upserts {
        mechanisms.push(Mechanism {
            kind: MechanismKind::Upsert,
            detail: if e.find_or_create {
                format!(
                    "find-or-create on `{}`: it looks the row up, then {} (`{}`); not atomic, \
                     two concurrent retries can both create",
                    e.target.as_deref().unwrap_or("?"),
                    if e.upsert {
                        "updates it or creates it"
                    } else {
                        "creates it only when missing"
                    },
                    e.callee
                )
            } else {
                format!("upsert `{}`", e.callee)
            },
            location: e.location.clone(),
        });
    }
    // A claim stops the effects after it: one mechanism per claim.
    let mut claims: Vec<&(String, Location)> =
        effects.iter().filter_map(|e| e.claimed.as_ref()).collect();
    claims.sort();
    claims.dedup();
    for (what, at) in claims {
        mechanisms.push(Mechanism {
            kind: MechanismKind::Claim,
            detail: format!(
                "{what} whose outcome is tested before the effects after it: a retry finds the row, key or token claimed and stops"
            ),
            location: at.clone(),
        });
    }
    // Idempotent by nature: every write is an absolute update, a delete, a replace or an upsert
    // (an upsert writes the values it is given: a repeat leaves the same row). A create that only
    // a constraint stops is not.
    let constrained = effects.iter().any(|e| {
        e.kind == EffectKind::DbCreate
            && !e.upsert
            && !e.replaces
            && e.consumes.is_none()
            && e.claimed.is_none()
            && e.stopped_by.is_none()
            && e.state_guarded.is_none()
            && e.lookup_guarded.is_none()
            && !upserts.contains(&e)
    });
    if !constrained {
        let mut kinds: Vec<&str> = Vec::new();
        if effects
            .iter()
            .any(|e| matches!(e.kind, EffectKind::DbUpdate | EffectKind::DbDelete))
        {
            kinds.push("absolute updates and deletes");
        }
        if !upserts.is_empty() {
            kinds.push("upserts");
        }
        if effects
            .iter()
            .any(|e| e.deduplicated && e.kind == EffectKind::QueuePublish)
        {
            kinds.push("messages with a stable id the broker or its consumers dedup on");
        }
        if effects
            .iter()
            .any(|e| e.deduplicated && e.kind != EffectKind::QueuePublish)
        {
            kinds.push("provider calls with a stable idempotency key the provider dedups on");
        }
        if effects
            .iter()
            .any(|e| e.impact == crate::facts::Impact::Read)
        {
            kinds.push("calls that only read, verify or that the provider refuses to repeat");
        }
        if effects.iter().any(|e| e.replaces) {
            kinds.push("creates that replace the rows deleted first");
        }
        if effects.iter().any(|e| e.consumes.is_some()) {
            kinds.push("effects that run only while a row exists that the request deletes");
        }
        if effects.iter().any(|e| e.claimed.is_some()) {
            kinds.push("effects that run only after the request wins a claim");
        }
        if effects.iter().any(|e| e.lookup_guarded.is_some()) {
            kinds.push("effects that run only when a lookup finds nothing, on the path that creates the row it looks for");
        }
        if effects.iter().any(|e| e.state_guarded.is_some()) {
            kinds.push("effects that run only in a state of a row the request changes");
        }
        if effects.iter().any(|e| e.kind == EffectKind::FileWrite) {
            kinds.push("file writes");
        }
        if kinds.is_empty() {
            kinds.push("writes a repeat leaves unchanged");
        }
        let detail = if effects
            .iter()
            .all(|e| e.kind == EffectKind::WebhookReceiver)
        {
            "no side effect reached: repeating the request changes nothing".to_string()
        } else {
            format!("only {}: a repeat leaves the same state", kinds.join(", "))
        };
        mechanisms.push(Mechanism {
            kind: MechanismKind::Natural,
            detail,
            location: handler,
        });
    }
    mechanisms.sort();
    mechanisms.dedup_by(|a, b| a.kind == b.kind && a.location == b.location);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::EffectKind;

    fn effect(kind: EffectKind, upsert: bool) -> Effect {
        Effect {
            kind,
            upsert,
            location: Location::new("s.ts", 2),
            ..Effect::default()
        }
    }

    fn kinds(effects: &[Effect]) -> Vec<MechanismKind> {
        let mut m = Vec::new();
        complete_mechanisms(effects, &mut m, Location::new("h.ts", 1));
        m.iter().map(|m| m.kind).collect()
    }

    #[test]
    fn upsert_protects_only_its_own_write() {
        assert_eq!(
            kinds(&[effect(EffectKind::DbCreate, true)]),
            vec![MechanismKind::Upsert, MechanismKind::Natural]
        );
        // A plain create beside the upsert still repeats: no mechanism.
        assert!(
            kinds(&[
                effect(EffectKind::DbCreate, true),
                effect(EffectKind::DbCreate, false)
            ])
            .is_empty()
        );
        // Absolute writes beside an upsert: idempotent by nature, the upsert listed too.
        assert_eq!(
            kinds(&[
                effect(EffectKind::DbCreate, true),
                effect(EffectKind::DbUpdate, false)
            ]),
            vec![MechanismKind::Upsert, MechanismKind::Natural]
        );
        assert_eq!(kinds(&[]), vec![MechanismKind::Natural]);
    }
}
