//! ts-rest (ts-rest.com): a contract made with `initContract().router({ create: { method:
//! 'POST', path: '/posts', .. } }, { pathPrefix })` (nested routers add their own `pathPrefix`)
//! and its server implementation, an object of handlers keyed like the contract (nested objects
//! for nested routers; a handler is a function or `{ middleware, handler }`), made with
//! `initServer().router(contract, impl)`.
//!
//! - `createExpressEndpoints(contract, impl, app)` (`@ts-rest/express`) registers every route on
//!   `app`: the routes are written there, at the call, and mounted like the app's own (its prefix
//!   and the middleware before the call apply).
//! - An implementation not given to `createExpressEndpoints` (the Fastify plugin, the
//!   serverless and Next.js handlers) is listed at the contract's own paths, with a diagnostic:
//!   where its adapter is mounted is not followed.
//!
//! A contract route whose handler cannot be read is listed, and said so.

use super::{Key, Mounter, RawRoute, normalize_path};
use crate::facts::{Diagnostic, Protocol};
use crate::link::resolve::{ModId, Resolved};
use crate::program::{RouterItem, Val, WrittenAt};
use std::collections::BTreeSet;

const MAX_DEPTH: usize = 12;

/// A contract router: its fields, the module they are written in, and its own `pathPrefix`.
type ContractRouter = (ModId, Vec<(String, Val)>, String);

/// One route of a contract with the handler its implementation gives.
struct Route {
    method: String,
    path: String,
    /// The contract's key path (`posts.create`), for diagnostics.
    name: String,
    handler: Option<(ModId, Val)>,
    middleware: Vec<(ModId, Val)>,
}

fn field<'v>(fields: &'v [(String, Val)], name: &str) -> Option<&'v Val> {
    fields.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
}

impl Mounter<'_> {
    /// The package function a callee is (`@ts-rest/express`, `createExpressEndpoints`), with the
    /// members after it.
    fn ts_rest_callee(&self, m: ModId, callee: &Val) -> Option<(String, Vec<String>)> {
        match self.res.resolve(m, callee) {
            Resolved::Package { spec, name, path } if spec.starts_with("@ts-rest/") => {
                let mut all: Vec<String> = name.into_iter().collect();
                all.extend(path);
                Some((spec, all))
            }
            _ => None,
        }
    }

    /// A contract router: its fields (in their module) and its own `pathPrefix`.
    fn contract_router(&self, m: ModId, v: &Val, d: usize) -> Option<ContractRouter> {
        if d > MAX_DEPTH {
            return None;
        }
        let (m, v) = self.deref_export(m, v.clone());
        match &v {
            Val::Call(callee, args) => {
                let (spec, path) = self.ts_rest_callee(m, callee)?;
                if spec != "@ts-rest/core" || path.last().is_none_or(|p| p != "router") {
                    return None;
                }
                let Resolved::Obj(om, fields) = self.res.resolve(m, args.first()?) else {
                    return None;
                };
                let prefix = args
                    .get(1)
                    .and_then(|o| match self.res.resolve(m, o) {
                        Resolved::Obj(pm, f) => field(&f, "pathPrefix")
                            .and_then(|p| self.strings(pm, p))
                            .and_then(|l| l.into_iter().next()),
                        _ => None,
                    })
                    .unwrap_or_default();
                Some((om, fields, prefix))
            }
            // `contract.posts`: a router nested in another (its prefixes are the outer's too).
            Val::Member(inner, key) => {
                let (om, fields, prefix) = self.contract_router(m, inner, d + 1)?;
                let sub = field(&fields, key)?.clone();
                let (sm, sf, sp) = self.contract_router(om, &sub, d + 1)?;
                Some((sm, sf, normalize_path(&prefix, &sp)))
            }
            Val::Obj(fields) => Some((m, fields.clone(), String::new())),
            _ => None,
        }
    }

    /// An implementation's handlers: an object literal, or `s.router(contract, impl)`.
    fn impl_fields(&self, m: ModId, v: &Val, d: usize) -> Option<(ModId, Vec<(String, Val)>)> {
        if d > MAX_DEPTH {
            return None;
        }
        let (m, v) = self.deref_export(m, v.clone());
        if let Val::Call(callee, args) = &v
            && let Some((_, path)) = self.ts_rest_callee(m, callee)
            && path.last().is_some_and(|p| p == "router")
        {
            return self.impl_fields(m, args.get(1)?, d + 1);
        }
        match self.res.resolve(m, &v) {
            Resolved::Obj(om, fields) => Some((om, fields)),
            _ => None,
        }
    }

    /// The routes of a contract router with the handlers an implementation gives them.
    #[allow(clippy::too_many_arguments)]
    fn contract_routes(
        &self,
        contract: (ModId, &Val),
        implementation: Option<(ModId, Vec<(String, Val)>)>,
        prefix: &str,
        name: &str,
        d: usize,
        seen: &mut BTreeSet<String>,
        out: &mut Vec<Route>,
    ) {
        let Some((cm, fields, own)) = self.contract_router(contract.0, contract.1, d + 1) else {
            return;
        };
        let prefix = normalize_path(prefix, &own);
        for (key, cv) in fields.iter().filter(|(k, _)| k != crate::program::SPREAD) {
            let dotted = if name.is_empty() {
                key.clone()
            } else {
                format!("{name}.{key}")
            };
            if !seen.insert(dotted.clone()) {
                continue;
            }
            let imp = implementation
                .as_ref()
                .and_then(|(im, f)| field(f, key).map(|v| (*im, v.clone())));
            if let Resolved::Obj(rm, route) = self.res.resolve(cm, cv)
                && let (Some(method), Some(path)) = (field(&route, "method"), field(&route, "path"))
            {
                let (Some(method), Some(path)) = (
                    self.strings(rm, method).and_then(|l| l.into_iter().next()),
                    self.strings(rm, path).and_then(|l| l.into_iter().next()),
                ) else {
                    continue;
                };
                // `{ middleware: [..], handler }` or the handler itself.
                let (handler, middleware) = match &imp {
                    Some((im, v)) => match self.res.resolve(*im, v) {
                        Resolved::Obj(hm, h) if field(&h, "handler").is_some() => {
                            let mw = match field(&h, "middleware") {
                                Some(Val::Arr(items)) => {
                                    items.iter().map(|i| (hm, i.clone())).collect()
                                }
                                _ => vec![],
                            };
                            (field(&h, "handler").map(|x| (hm, x.clone())), mw)
                        }
                        _ => (Some((*im, v.clone())), vec![]),
                    },
                    None => (None, vec![]),
                };
                out.push(Route {
                    method,
                    path: normalize_path(&prefix, &path),
                    name: dotted,
                    handler,
                    middleware,
                });
            } else if d < MAX_DEPTH {
                let sub = imp.and_then(|(im, v)| self.impl_fields(im, &v, d + 1));
                self.contract_routes((cm, cv), sub, &prefix, &dotted, d + 1, seen, out);
            }
        }
    }

    /// A route's handler as a value in the module it is written in, and where it is: the
    /// function's definition, or the call that registers the implementation (said so when the
    /// handler cannot be read).
    fn ts_rest_handler(&mut self, r: &Route, at: (ModId, u32)) -> (ModId, Val, u32) {
        if let Some((hm, hv)) = &r.handler
            && let Resolved::Func(fm, f) = self.res.resolve(*hm, hv)
        {
            return (fm, Val::Func(f), self.modules()[fm].functions[f].line);
        }
        let file = self.modules()[at.0].file.clone();
        self.diagnostics.push(Diagnostic::new(
            file,
            at.1,
            format!(
                "the handler of ts-rest route `{}` ({} {}) cannot be located: it is listed without what it does",
                r.name, r.method, r.path
            ),
        ));
        match &r.handler {
            Some((hm, hv)) => (*hm, hv.clone(), at.1),
            None => (at.0, Val::Unknown, at.1),
        }
    }

    /// The ts-rest implementations of the tree: those `createExpressEndpoints` registers become
    /// routes of their app (before the walk); the others are listed at the contract's paths.
    pub(super) fn ts_rest(&mut self) {
        let modules = self.modules();
        // (module, line) of each `s.router(..)` given to `createExpressEndpoints`.
        let mut registered: BTreeSet<(ModId, u32)> = BTreeSet::new();
        let mut others: Vec<(ModId, u32, Val, Val)> = Vec::new();
        for (m, module) in modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            for facts in &module.functions {
                for cs in &facts.calls {
                    let Some((spec, path)) = self.ts_rest_callee(m, &cs.callee) else {
                        continue;
                    };
                    match path.last().map(String::as_str) {
                        Some("createExpressEndpoints") => {
                            let [contract, implementation, app, ..] = cs.args.as_slice() else {
                                continue;
                            };
                            if let (_, Val::Call(..)) = self.deref_export(m, implementation.clone())
                            {
                                registered.insert(self.call_site_of(m, implementation));
                            }
                            let Some(key) = self.child_of(m, app, false) else {
                                let file = module.file.clone();
                                self.diagnostics.push(Diagnostic::new(
                                    file,
                                    cs.line,
                                    "`createExpressEndpoints` registers on an app the audit does not follow: its routes are listed at the contract's paths, marked `path_complete: false`".to_string(),
                                ));
                                others.push((m, cs.line, contract.clone(), implementation.clone()));
                                continue;
                            };
                            self.ts_rest_registered.push((m, implementation.clone()));
                            self.ts_rest_register(key, (m, cs.line), contract, implementation);
                        }
                        Some("router") if spec != "@ts-rest/core" && cs.args.len() >= 2 => {
                            others.push((m, cs.line, cs.args[0].clone(), cs.args[1].clone()));
                        }
                        _ => {}
                    }
                }
            }
        }
        // Routers nested in another implementation (`posts: s.router(contract.posts, {..})`) are
        // served with it.
        let roots: Vec<(ModId, Val)> = others
            .iter()
            .map(|(m, _, _, i)| (*m, i.clone()))
            .chain(self.ts_rest_registered.clone())
            .collect();
        for (m, implementation) in roots {
            self.nested_routers(m, &implementation, 0, &mut registered);
        }
        for (m, line, contract, implementation) in others {
            if registered.contains(&(m, line)) {
                continue;
            }
            let imp = self.impl_fields(m, &implementation, 0);
            let mut routes = Vec::new();
            self.contract_routes(
                (m, &contract),
                imp,
                "",
                "",
                0,
                &mut BTreeSet::new(),
                &mut routes,
            );
            if routes.is_empty() {
                continue;
            }
            let file = modules[m].file.clone();
            self.diagnostics.push(Diagnostic::new(
                file,
                line,
                "this ts-rest router is served by an adapter whose mount the audit does not follow: its routes are listed at the contract's paths, marked `path_complete: false`".to_string(),
            ));
            for r in routes {
                let (hm, hv, hline) = self.ts_rest_handler(&r, (m, line));
                self.routes.push(RawRoute {
                    method: r.method.to_ascii_uppercase(),
                    path: r.path.clone(),
                    framework: "ts-rest",
                    module: hm,
                    line: hline,
                    handler: hv,
                    handler_module: hm,
                    middleware: r.middleware.clone(),
                    branch: None,
                    protocol: Protocol::Rest,
                    handler_name: None,
                    path_complete: false,
                    steps: vec![],
                    file: None,
                });
            }
        }
    }

    /// The `s.router(..)` calls an implementation holds among its values, at any depth.
    fn nested_routers(&self, m: ModId, v: &Val, d: usize, out: &mut BTreeSet<(ModId, u32)>) {
        if d > MAX_DEPTH {
            return;
        }
        let Some((im, fields)) = self.impl_fields(m, v, d + 1) else {
            return;
        };
        for (_, fv) in &fields {
            let (dm, dv) = self.deref_export(im, fv.clone());
            match &dv {
                Val::Call(callee, _)
                    if self
                        .ts_rest_callee(dm, callee)
                        .is_some_and(|(_, p)| p.last().is_some_and(|l| l == "router")) =>
                {
                    out.insert(self.call_site_of(im, fv));
                    self.nested_routers(im, fv, d + 1, out);
                }
                Val::Obj(_) => self.nested_routers(dm, &dv, d + 1, out),
                _ => {}
            }
        }
    }

    /// The `(module, line)` of the `s.router(..)` call a value is, when it is one.
    fn call_site_of(&self, m: ModId, v: &Val) -> (ModId, u32) {
        let (dm, dv) = self.deref_export(m, v.clone());
        let Val::Call(callee, args) = &dv else {
            return (dm, 0);
        };
        for facts in &self.modules()[dm].functions {
            for cs in &facts.calls {
                if &cs.callee == callee.as_ref()
                    && cs.args.len() == args.len()
                    && cs
                        .args
                        .iter()
                        .zip(args)
                        .all(|(a, b)| crate::program::same_call_arg(a, b))
                {
                    return (dm, cs.line);
                }
            }
        }
        (dm, 0)
    }

    /// `createExpressEndpoints(contract, impl, app)`: the routes, written on `app` at the call.
    fn ts_rest_register(
        &mut self,
        key: Key,
        (m, line): (ModId, u32),
        contract: &Val,
        implementation: &Val,
    ) {
        let imp = self.impl_fields(m, implementation, 0);
        let mut routes = Vec::new();
        self.contract_routes(
            (m, contract),
            imp,
            "",
            "",
            0,
            &mut BTreeSet::new(),
            &mut routes,
        );
        let mut items = Vec::new();
        for r in &routes {
            let (hm, hv, hline) = self.ts_rest_handler(r, (m, line));
            items.push((
                hm,
                RouterItem::Route {
                    method: Val::Str(r.method.to_ascii_lowercase()),
                    paths: Val::Str(r.path.clone()),
                    path_text: r.path.clone(),
                    middleware: r.middleware.iter().map(|(_, v)| v.clone()).collect(),
                    handler: hv.clone(),
                    line: hline,
                    version: None,
                    written_at: Some(WrittenAt {
                        module: hm,
                        line: hline,
                        handler: Some(hv),
                        route: None,
                    }),
                },
            ));
        }
        // In the app's order: after what was registered before the call.
        let list = self.items.entry(key).or_default();
        let at = list
            .iter()
            .position(|(im, item)| *im == m && item_line(item) > line)
            .unwrap_or(list.len());
        for (i, item) in items.into_iter().enumerate() {
            list.insert(at + i, item);
        }
    }
}

fn item_line(item: &RouterItem) -> u32 {
    match item {
        RouterItem::Route { line, .. }
        | RouterItem::Use { line, .. }
        | RouterItem::Register { line, .. }
        | RouterItem::HelperCall { line, .. } => *line,
    }
}
