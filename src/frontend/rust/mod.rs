//! The Rust front end: `syn` parsing, the crate model, route registration for axum, actix-web
//! and rocket, and call following into the effects and key reads each handler reaches.
//!
//! Files are parsed in parallel and lowered at once to an owned model ([`ir`]); everything after
//! that reads the model only. The output is language-neutral [`Endpoint`]s.

pub mod client;
pub mod consts;
pub mod effects;
pub mod generated_sql;
pub mod graphql;
pub mod ir;
pub mod keyscan;
pub mod model;
pub mod nesting;
pub mod parse;
pub mod routes;
pub mod schema_sql;
pub mod seaorm;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::discover::RustFile;
use crate::facts::{
    ClientRequest, Diagnostic, Endpoint, Location, Mechanism, MechanismKind, SchemaSql,
    UniqueConstraint,
};
use effects::{Effects, Summary};
use model::{FnId, Model, Res};
use rayon::prelude::*;
use routes::{Handler, Mw, MwAt, Routes};
use std::collections::HashSet;
use std::path::Path;

/// Traits whose implementations turn a request into a handler argument (axum extractors, actix
/// and rocket `FromRequest`, typed headers).
const EXTRACTOR_TRAITS: &[&str] = &[
    "FromRequest",
    "FromRequestParts",
    "Header",
    "FromRequestAsync",
];

/// What [`analyze`] finds: endpoints, diagnostics, constraints, schema statements written as
/// strings, and client requests.
pub type Analysis = (
    Vec<Endpoint>,
    Vec<Diagnostic>,
    Vec<UniqueConstraint>,
    Vec<SchemaSql>,
    Vec<ClientRequest>,
);

/// Audits the Rust files of one tree: its endpoints, what could not be read, the unique
/// constraints its ORM models and migrations declare, the schema statements its code holds as
/// strings, and the requests its client code sends with an idempotency key. Each file's text is
/// dropped once it is parsed.
pub fn analyze(
    files: Vec<RustFile>,
    root: &Path,
    catalog: &Catalog,
    config: &Config,
    queries: &generated_sql::Queries,
) -> Analysis {
    let parsed: Vec<_> = files
        .into_par_iter()
        .map(|f| {
            crate::isolate::guarded(
                &f.rel,
                || parse::parse_file(&f.rel, &f.text),
                || ir::FileIr {
                    rel: f.rel.clone(),
                    items: Vec::new(),
                    schema_sql: Vec::new(),
                },
            )
        })
        .collect();
    let mut irs = Vec::with_capacity(parsed.len());
    let mut diagnostics = Vec::new();
    let mut schema_sql = Vec::new();
    for (mut ir, d) in parsed {
        schema_sql.append(&mut ir.schema_sql);
        irs.push(ir);
        diagnostics.extend(d);
    }
    crate::trace_phase("rust parsed");
    let model = Model::build(&irs, root);
    crate::trace_phase("rust model");
    diagnostics.extend(model.diagnostics.iter().cloned());
    let (constraints, more) = seaorm::constraints(&model);
    diagnostics.extend(more);
    let (mut entries, more) = Routes::new(&model, config).run();
    diagnostics.extend(more);
    // a GraphQL transport answers writes by POST only (`any(graphql)`)
    entries.retain(|e| {
        matches!(e.method.as_str(), "POST" | "GET" | "HEAD" | "OPTIONS")
            || !graphql::is_transport(&model, &e.handler)
    });
    let (mutations, more) = graphql::entries(&model, &entries);
    entries.extend(mutations);
    diagnostics.extend(more);
    let fx = Effects::new(&model, catalog, config.call_depth, queries);
    let cleanups = cleanups(&model);
    let mut seen = HashSet::new();
    let mut endpoints = Vec::new();
    for e in entries {
        let location = Location::new(model.file_of(e.module), e.line);
        if !seen.insert((e.method.clone(), e.path.clone(), location.clone())) {
            continue;
        }
        let mut mechanisms = Vec::new();
        let mut key_reads = Vec::new();
        let mut key_obs: Vec<crate::facts::KeyObs> = Vec::new();
        let (name, handler_location, summary) = match &e.handler {
            Handler::Fn(f) => {
                let def = &model.fns[*f];
                let s = (*fx.summary(*f)).clone();
                for (ex_name, at, reads, obs) in extractor_reads(&model, &fx, *f) {
                    key_reads.extend(reads);
                    key_obs.extend(obs);
                    mechanisms.push(Mechanism {
                        kind: MechanismKind::HeaderKey,
                        detail: format!("extractor `{ex_name}` reads the idempotency-key header"),
                        location: at,
                    });
                }
                (
                    def.func.name.clone(),
                    Some(Location::new(model.file_of(def.module), def.func.line)),
                    s,
                )
            }
            Handler::Closure {
                module, imp, ex, ..
            } => (
                "closure".to_string(),
                Some(Location::new(model.file_of(*module), ex.line())),
                fx.closure_summary(*module, *imp, ex),
            ),
            Handler::Named(n) => (n.clone(), None, Summary::default()),
        };
        if let Some(first) = summary.key_reads.first() {
            mechanisms.push(Mechanism::handler_reads_key(first.clone()));
            key_obs.extend(summary.key_obs.iter().cloned());
        }
        key_reads.extend(summary.key_reads.iter().cloned());
        let safe = !crate::facts::is_mutation_method(&e.method);
        let mut key_store = None;
        for mw in &e.middleware {
            if let Some((mech, reads, mutations_only, obs, known)) =
                key_middleware(&model, &fx, catalog, mw)
            {
                if safe && mutations_only {
                    continue;
                }
                key_obs.extend(obs);
                if let Some(known) = known {
                    key_store = Some(crate::link::keystore::from_catalogue(known, &mech.location));
                }
                if let Mw::Type(r) = &mw.mw {
                    let applied = Location::new(model.file_of(mw.module), mw.line);
                    key_store = key_store.or_else(|| {
                        memory_store(&model, r, 0).map(|k| crate::facts::KeyStore {
                            location: applied,
                            ..k
                        })
                    });
                }
                mechanisms.push(mech);
                key_reads.extend(reads);
            }
        }
        let mut effects = summary.effects;
        if let Handler::Fn(f) = &e.handler {
            effects.retain(|x| !needs_absent_path(&model, *f, x, &e.path));
        }
        // A signature check of the project's own on a webhook path (in the handler, or a
        // middleware named like one) makes a receiver, as on the TypeScript side.
        let mut signature_checks = summary.signature_checks;
        for mw in &e.middleware {
            if let Mw::Handler(Handler::Fn(f)) = &mw.mw {
                let def = &model.fns[*f];
                // What the middleware checks runs before the handler: a provider's signature
                // header it reads (`from_fn(verify)` reading `stripe-signature`) makes a
                // receiver, as in the handler.
                let ms = fx.summary(*f);
                signature_checks.extend(ms.signature_checks.iter().cloned());
                effects.extend(
                    ms.effects
                        .iter()
                        .filter(|x| x.kind == crate::facts::EffectKind::WebhookReceiver)
                        .cloned(),
                );
                if crate::link::calls::looks_like_signature_check(&def.func.name) {
                    signature_checks.push((
                        format!("`{}` middleware", def.func.name),
                        Location::new(model.file_of(def.module), def.func.line),
                    ));
                }
            }
        }
        crate::link::webhooks::add_by_convention(&mut effects, &e.path, &signature_checks);
        // A handler this audit cannot read (a library's service, a path that resolves to
        // nothing): what it does is not known, which is not "nothing". A GraphQL transport's
        // mutations are endpoints of their own.
        let unfollowed = summary
            .unfollowed
            .into_iter()
            .next()
            .or_else(|| match &e.handler {
                Handler::Named(n) if !graphql::is_transport(&model, &e.handler) => Some((
                    format!("`{n}`"),
                    Location::new(model.file_of(e.module), e.line),
                )),
                _ => None,
            });
        // The mechanisms that follow from the effects are completed with the TypeScript
        // endpoints', once the schemas' constraints are applied (`collect_facts_with`).
        key_reads.sort();
        key_reads.dedup();
        if key_obs
            .iter()
            .any(|o| matches!(o.obs, crate::facts::key::Obs::Op(_)))
        {
            key_obs.extend(cleanups.iter().cloned());
        }
        endpoints.push(Endpoint {
            method: e.method,
            path: e.path,
            path_complete: e.path_complete,
            framework: e.framework.to_string(),
            protocol: match e.framework {
                "async-graphql" | "juniper" => crate::facts::Protocol::Graphql,
                _ => crate::facts::Protocol::Rest,
            },
            location,
            handler: name,
            side_effects: effects,
            mechanisms,
            key_reads,
            handler_location,
            key_store,
            key_obs,
            unfollowed,
            ..Endpoint::default()
        });
    }
    endpoints
        .sort_by(|a, b| (&a.location, &a.method, &a.path).cmp(&(&b.location, &b.method, &b.path)));
    if let Some((f, depth)) = fx.depth_cut() {
        let def = &model.fns[f];
        diagnostics.push(crate::link::calls::depth_cut_diagnostic(
            Location::new(model.file_of(def.module), def.func.line),
            &def.func.name,
            depth,
        ));
    }
    let clients = client::Clients::new(&model, &fx).requests(&fx.reached());
    crate::trace_phase("rust done");
    // The lowered files are many small allocations: freed on every thread at once.
    drop(fx);
    drop(model);
    irs.into_par_iter().for_each(drop);
    (endpoints, diagnostics, constraints, schema_sql, clients)
}

/// Containers that keep keys in the process's memory.
const MEMORY_CONTAINERS: &[&str] = &[
    "HashMap", "HashSet", "BTreeMap", "BTreeSet", "DashMap", "DashSet", "LruCache", "TtlCache",
    "IndexMap", "IndexSet",
];

/// A middleware type that keeps its keys in memory: a field (or a field of a field's type) that
/// is a map or set in the process (`Arc<RwLock<HashSet<Entry>>>`).
fn memory_store(model: &Model, r: &Res, depth: usize) -> Option<crate::facts::KeyStore> {
    let Res::Type(m, name) = r else { return None };
    if depth > 3 {
        return None;
    }
    let fields = model.modules[*m].fields.get(name)?;
    for (field, ty) in fields.iter() {
        for t in ty.all() {
            if MEMORY_CONTAINERS.contains(&t.last()) {
                return Some(crate::facts::KeyStore::of_kind(
                    "memory",
                    format!("`{name}.{field}` is a `{}` in the process", t.last()),
                    Location::new(model.file_of(*m), 0),
                ));
            }
            if t.path.is_empty() {
                continue;
            }
            let inner = model.resolve(*m, &t.path);
            if inner != *r
                && let Some(found) = memory_store(model, &inner, depth + 1)
            {
                return Some(found);
            }
        }
    }
    None
}

/// Key reads in the extractors among a handler's parameters: a type whose `FromRequest`,
/// `FromRequestParts` or `Header` implementation reads the header.
fn extractor_reads(
    model: &Model,
    fx: &Effects,
    f: model::FnId,
) -> Vec<(String, Location, Vec<Location>, Vec<crate::facts::KeyObs>)> {
    let def = &model.fns[f];
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for p in &def.func.params {
        let Some(ty) = &p.ty else { continue };
        for t in ty.all() {
            if t.path.is_empty() {
                continue;
            }
            let r = model.resolve(def.module, &t.path);
            if !matches!(r, Res::Type(..)) || !seen.insert(r.clone()) {
                continue;
            }
            let mut reads = Vec::new();
            let mut obs = Vec::new();
            let mut at = None;
            for i in model.impls_of(&r) {
                let imp = &model.impls[i];
                let is_extractor = imp
                    .imp
                    .trait_
                    .as_ref()
                    .and_then(|t| t.last())
                    .is_some_and(|t| EXTRACTOR_TRAITS.contains(&t.as_str()));
                if !is_extractor {
                    continue;
                }
                let typed_header = imp
                    .imp
                    .trait_
                    .as_ref()
                    .and_then(|t| t.last())
                    .is_some_and(|t| t == "Header");
                for &g in &imp.fns {
                    obs.extend(fx.summary(g).key_obs.iter().cloned());
                    let mut found: Vec<Location> = fx.summary(g).key_reads.clone();
                    // a typed header names itself: `fn name() -> &'static HeaderName { &KEY }`
                    if found.is_empty()
                        && typed_header
                        && let Some(l) = fx.names_key(g)
                    {
                        found.push(l);
                    }
                    if !found.is_empty() && at.is_none() {
                        at = Some(Location::new(
                            model.file_of(imp.module),
                            model.fns[g].func.line,
                        ));
                    }
                    reads.extend(found);
                }
            }
            if let Some(at) = at {
                out.push((t.last().to_string(), at, reads, obs));
            }
        }
    }
    out
}

/// A middleware that handles the idempotency key: project code that reads the header (a
/// function, a closure, or a type's implementations such as actix `Transform`/`Service`, tower
/// `Layer`/`Service`, rocket `Fairing`), or a known idempotency crate.
type KeyMiddleware<'c> = (
    Mechanism,
    Vec<Location>,
    bool,
    Vec<crate::facts::KeyObs>,
    Option<&'c crate::catalog::Middleware>,
);

fn key_middleware<'c>(
    model: &Model,
    fx: &Effects,
    catalog: &'c Catalog,
    mw: &MwAt,
) -> Option<KeyMiddleware<'c>> {
    let here = Location::new(model.file_of(mw.module), mw.line);
    match &mw.mw {
        Mw::Handler(Handler::Fn(f)) => {
            let s = fx.summary(*f);
            let first = s.key_reads.first()?;
            let def = &model.fns[*f];
            Some((
                Mechanism {
                    kind: MechanismKind::HeaderKey,
                    detail: format!(
                        "idempotency middleware `{}` reads the key header ({first})",
                        def.func.name
                    ),
                    location: Location::new(model.file_of(def.module), def.func.line),
                },
                s.key_reads.clone(),
                mutations_only(model, &[*f], &[]),
                s.key_obs.clone(),
                None,
            ))
        }
        Mw::Handler(Handler::Closure {
            module, imp, ex, ..
        }) => {
            let s = fx.closure_summary(*module, *imp, ex);
            let first = s.key_reads.first()?.clone();
            Some((
                Mechanism {
                    kind: MechanismKind::HeaderKey,
                    detail: format!("middleware closure reads the key header ({first})"),
                    location: here,
                },
                s.key_reads,
                mutations_only(model, &[], &[ex]),
                s.key_obs,
                None,
            ))
        }
        Mw::Handler(Handler::Named(_)) => None,
        Mw::Type(r) => {
            let mut types = vec![r.clone()];
            let mut reads = Vec::new();
            let mut obs = Vec::new();
            let mut fns = Vec::new();
            let mut i = 0;
            while i < types.len() && i < 8 {
                for imp_id in model.impls_of(&types[i]) {
                    let imp = &model.impls[imp_id];
                    for &g in &imp.fns {
                        reads.extend(fx.summary(g).key_reads.iter().cloned());
                        obs.extend(fx.summary(g).key_obs.iter().cloned());
                        fns.push(g);
                    }
                    for (_, t) in &imp.imp.assoc_types {
                        let tr = model.resolve(imp.module, &t.path);
                        if matches!(tr, Res::Type(..)) && !types.contains(&tr) {
                            types.push(tr);
                        }
                    }
                }
                i += 1;
            }
            reads.sort();
            reads.dedup();
            let first = reads.first()?.clone();
            let name = match r {
                Res::Type(_, n) => n.clone(),
                _ => "middleware".into(),
            };
            Some((
                Mechanism {
                    kind: MechanismKind::HeaderKey,
                    detail: format!(
                        "idempotency middleware `{name}` reads the key header ({first})"
                    ),
                    location: here,
                },
                reads,
                mutations_only(model, &fns, &[]),
                obs,
                None,
            ))
        }
        Mw::Ext(path) => {
            let krate = path.first()?;
            let package = model.package_of(mw.module, krate);
            let known = [krate.clone(), package.clone(), package.replace('_', "-")]
                .iter()
                .find_map(|spec| catalog.middleware_for(crate::catalog::Lang::Rust, spec))?;
            Some((
                Mechanism {
                    kind: MechanismKind::HeaderKey,
                    detail: format!(
                        "{} (`{}`)",
                        if known.label.is_empty() {
                            &known.id
                        } else {
                            &known.label
                        },
                        path.join("::")
                    ),
                    location: here,
                },
                vec![],
                true,
                vec![],
                Some(known),
            ))
        }
    }
}

/// Every cleanup in the crates: a delete of old entries of a key store (a sweeper task, a job),
/// with `order` `u32::MAX` (outside any request).
fn cleanups(model: &Model) -> Vec<crate::facts::KeyObs> {
    let mut out = Vec::new();
    for def in &model.fns {
        for k in &def.func.key_obs {
            if let crate::facts::key::Obs::Op(op) = &k.obs
                && op.kind == crate::facts::key::OpKind::Delete
                && op.time_filter
            {
                out.push(crate::facts::KeyObs {
                    obs: k.obs.clone(),
                    at: Location::new(model.file_of(def.module), k.line),
                    ctx: k.ctx,
                    order: u32::MAX,
                });
            }
        }
    }
    out
}

/// Does middleware code restrict itself to write methods (`Method::POST`, `is_safe()`)? Then it
/// does not handle keys on the GET routes it also wraps.
fn mutations_only(model: &Model, fns: &[model::FnId], closures: &[&ir::Ex]) -> bool {
    let mut stack: Vec<&ir::Ex> = closures.to_vec();
    for &f in fns {
        parse::push_stmts(&model.fns[f].func.body, &mut stack);
    }
    let mut seen = 0usize;
    while let Some(e) = stack.pop() {
        seen += 1;
        if seen > 100_000 {
            break;
        }
        match e {
            ir::Ex::Path(p, _) if p.len() >= 2 => {
                let (ty, m) = (&p[p.len() - 2], &p[p.len() - 1]);
                if ty == "Method" && crate::facts::is_mutation_method(m) {
                    return true;
                }
            }
            ir::Ex::Method(_, name, _, _)
                if matches!(name.as_str(), "is_safe" | "is_idempotent") =>
            {
                return true;
            }
            _ => {}
        }
        parse::children(e, &mut stack);
    }
    false
}

/// An effect that runs only when a parameter of the handler is `None` (`if let Some(Path(id)) =
/// id { .. return } create(..)`), where that parameter is the route's optional path extractor
/// (`id: Option<Path<Uuid>>` on `/menus/{id}`): the router matched the path's parameters, so
/// the branch never runs (see `link::needs_absent_path_param`, its TypeScript twin).
fn needs_absent_path(model: &Model, f: FnId, e: &crate::facts::Effect, path: &str) -> bool {
    let Some((r, crate::facts::ParamTest::Truthy(false))) = e.param_gate.as_deref() else {
        return false;
    };
    let def = &model.fns[f];
    if r.function != f || r.module != def.module || !r.path.is_empty() || !path.contains('{') {
        return false;
    }
    def.func
        .params
        .iter()
        .filter(|p| p.name != "self")
        .nth(r.index)
        .and_then(|p| p.ty.as_ref())
        .is_some_and(|t| {
            t.path.last().is_some_and(|l| l == "Option")
                && t.args
                    .first()
                    .is_some_and(|a| a.path.last().is_some_and(|l| l == "Path"))
        })
}
