//! Router mounting: routers nested under prefixes across files, middleware in Express order, one
//! endpoint per (method, full path).

use super::resolve::{ModId, Resolved, Resolver};
use crate::facts::Diagnostic;
use crate::frontend::ts::ir::{RouterItem, RouterKind, Val};
use std::collections::{BTreeMap, BTreeSet};

/// A route before its handler is followed.
#[derive(Debug, Clone)]
pub struct RawRoute {
    pub method: String,
    pub path: String,
    pub framework: &'static str,
    pub module: ModId,
    pub line: u32,
    pub handler: Val,
    /// Every middleware covering the route, outermost first, with the module it was written in.
    pub middleware: Vec<(ModId, Val)>,
}

type RouterKey = (ModId, usize);
type Items = BTreeMap<RouterKey, Vec<(ModId, RouterItem)>>;
/// Registrations waiting for the router a function receives: (parameter index, module, item).
type ParamItems = BTreeMap<(ModId, usize), Vec<(usize, ModId, RouterItem)>>;

const MAX_NESTING: usize = 24;

/// `:id` → `{id}`, joined with `/`, no trailing slash.
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

fn static_paths(r: &Resolved, v: &Val) -> Option<Vec<String>> {
    match (r, v) {
        (Resolved::Str(s), _) => Some(vec![s.clone()]),
        (_, Val::Arr(items)) => items
            .iter()
            .map(|i| {
                if let Val::Str(s) = i {
                    Some(s.clone())
                } else {
                    None
                }
            })
            .collect(),
        _ => None,
    }
}

fn methods_of(m: &str) -> Vec<&'static str> {
    match m {
        "all" => vec!["POST", "PUT", "PATCH", "DELETE"],
        "get" => vec!["GET"],
        "post" => vec!["POST"],
        "put" => vec!["PUT"],
        "patch" => vec!["PATCH"],
        "delete" | "del" => vec!["DELETE"],
        "head" => vec!["HEAD"],
        _ => vec![],
    }
}

fn under(path: &str, scope: &str) -> bool {
    let scope = scope.trim_end_matches('/');
    scope.is_empty() || path == scope || path.starts_with(&format!("{scope}/"))
}

pub struct Mounter<'a> {
    res: &'a Resolver<'a>,
    items: Items,
    routes: Vec<RawRoute>,
    pub diagnostics: Vec<Diagnostic>,
}

impl<'a> Mounter<'a> {
    pub fn new(res: &'a Resolver<'a>) -> Self {
        let mut items: Items = BTreeMap::new();
        for (m, module) in res.modules.iter().enumerate() {
            for (r, router) in module.routers.iter().enumerate() {
                items
                    .entry((m, r))
                    .or_default()
                    .extend(router.items.iter().map(|i| (m, i.clone())));
            }
        }
        let mut mounter = Mounter {
            res,
            items,
            routes: Vec::new(),
            diagnostics: Vec::new(),
        };
        mounter.add_foreign_items();
        mounter.add_param_items();
        mounter
    }

    /// `router.post(...)` on a router imported from another file.
    fn add_foreign_items(&mut self) {
        for (m, module) in self.res.modules.iter().enumerate() {
            for (receiver, item) in &module.foreign_items {
                if let Resolved::Router(m2, r2) = self.res.resolve(m, receiver) {
                    self.items
                        .entry((m2, r2))
                        .or_default()
                        .push((m, item.clone()));
                }
            }
        }
    }

    /// `function routes(app) { app.post(...) }` called as `routes(app)`: the registrations go to
    /// the router passed in, also through functions that pass their parameter on.
    fn add_param_items(&mut self) {
        let mut pending: ParamItems = BTreeMap::new();
        for (m, module) in self.res.modules.iter().enumerate() {
            for (f, facts) in module.functions.iter().enumerate() {
                for (i, item) in &facts.param_items {
                    pending
                        .entry((m, f))
                        .or_default()
                        .push((*i, m, item.clone()));
                }
            }
        }
        if pending.is_empty() {
            return;
        }
        for _round in 0..4 {
            let mut next: ParamItems = BTreeMap::new();
            let mut changed = false;
            for (m, module) in self.res.modules.iter().enumerate() {
                for (caller, facts) in module.functions.iter().enumerate() {
                    for cs in &facts.calls {
                        let Resolved::Func(tm, tf) = self.res.resolve(m, &cs.callee) else {
                            continue;
                        };
                        let Some(list) = pending.get(&(tm, tf)) else {
                            continue;
                        };
                        for (i, im, item) in list {
                            match cs.args.get(*i) {
                                Some(Val::Param(pf, pi)) if *pf == caller => {
                                    next.entry((m, caller)).or_default().push((
                                        *pi,
                                        *im,
                                        item.clone(),
                                    ));
                                    changed = true;
                                }
                                Some(arg) => {
                                    if let Resolved::Router(rm, rr) = self.res.resolve(m, arg) {
                                        self.items
                                            .entry((rm, rr))
                                            .or_default()
                                            .push((*im, item.clone()));
                                    }
                                }
                                None => {}
                            }
                        }
                    }
                }
            }
            if !changed {
                break;
            }
            pending = next;
        }
    }

    fn kind(&self, key: RouterKey) -> RouterKind {
        self.res.modules[key.0].routers[key.1].kind
    }

    /// Every route of every app, and of routers that nothing mounts.
    pub fn routes(mut self) -> (Vec<RawRoute>, Vec<Diagnostic>) {
        let mut mounted = BTreeSet::new();
        for list in self.items.values() {
            for (m, item) in list {
                if let RouterItem::Use { args, .. } = item {
                    for a in args {
                        if let Resolved::Router(m2, r2) = self.res.resolve(*m, a) {
                            mounted.insert((m2, r2));
                        }
                    }
                }
            }
        }
        let roots: Vec<RouterKey> = self
            .items
            .keys()
            .copied()
            .filter(|k| !self.res.modules[k.0].is_test)
            .filter(|k| self.kind(*k) == RouterKind::App || !mounted.contains(k))
            .collect();
        for root in roots {
            let mut stack = vec![root];
            self.walk(root, "", &[], &mut stack);
        }
        self.routes.sort_by(|a, b| {
            (&a.path, &a.method, a.module, a.line).cmp(&(&b.path, &b.method, b.module, b.line))
        });
        self.routes.dedup_by(|a, b| {
            a.path == b.path && a.method == b.method && a.module == b.module && a.line == b.line
        });
        self.diagnostics.sort();
        self.diagnostics.dedup();
        (self.routes, self.diagnostics)
    }

    fn walk(
        &mut self,
        key: RouterKey,
        prefix: &str,
        inherited: &[(ModId, Val)],
        stack: &mut Vec<RouterKey>,
    ) {
        if stack.len() > MAX_NESTING {
            return;
        }
        let framework = self.res.modules[key.0].routers[key.1].framework;
        let items = self.items.get(&key).cloned().unwrap_or_default();
        // Router-level middleware seen so far: (module, value, path scope).
        let mut active: Vec<(ModId, Val, String)> = Vec::new();
        for (m, item) in items {
            match item {
                RouterItem::Use {
                    path,
                    path_text,
                    args,
                    line,
                } => {
                    let scopes: Vec<String> = match &path {
                        None => vec![String::new()],
                        Some(p) => match static_paths(&self.res.resolve(m, p), p) {
                            Some(s) => s,
                            None => {
                                let has_router = args.iter().any(|a| {
                                    matches!(self.res.resolve(m, a), Resolved::Router(..))
                                });
                                if has_router {
                                    self.diagnostics.push(Diagnostic::new(
                                        self.res.modules[m].file.clone(),
                                        line,
                                        format!("router mounted at `{path_text}`, a prefix that is not statically known: its routes are left out of the inventory"),
                                    ));
                                }
                                continue;
                            }
                        },
                    };
                    let mut before: Vec<(ModId, Val)> = Vec::new();
                    let mut children = Vec::new();
                    for a in &args {
                        match self.res.resolve(m, a) {
                            Resolved::Router(m2, r2) => children.push(((m2, r2), before.clone())),
                            _ => before.push((m, a.clone())),
                        }
                    }
                    if children.is_empty() {
                        for scope in &scopes {
                            for (bm, b) in &before {
                                active.push((*bm, b.clone(), scope.clone()));
                            }
                        }
                        continue;
                    }
                    for scope in &scopes {
                        for (child, mws) in &children {
                            if stack.contains(child) {
                                continue;
                            }
                            let mut chain: Vec<(ModId, Val)> = inherited.to_vec();
                            chain.extend(
                                active
                                    .iter()
                                    .filter(|(_, _, s)| under(scope, s))
                                    .map(|(am, v, _)| (*am, v.clone())),
                            );
                            chain.extend(mws.iter().cloned());
                            let child_prefix = normalize_path(prefix, scope);
                            stack.push(*child);
                            self.walk(
                                *child,
                                if child_prefix == "/" {
                                    ""
                                } else {
                                    &child_prefix
                                },
                                &chain,
                                stack,
                            );
                            stack.pop();
                        }
                    }
                }
                RouterItem::Route {
                    method,
                    paths,
                    path_text,
                    middleware,
                    handler,
                    line,
                } => {
                    let Some(list) = static_paths(&self.res.resolve(m, &paths), &paths) else {
                        self.diagnostics.push(Diagnostic::new(
                            self.res.modules[m].file.clone(),
                            line,
                            format!("route path `{path_text}` is not statically known: the route is left out of the inventory"),
                        ));
                        continue;
                    };
                    for p in list {
                        let mut chain: Vec<(ModId, Val)> = inherited.to_vec();
                        chain.extend(
                            active
                                .iter()
                                .filter(|(_, _, s)| under(&p, s))
                                .map(|(am, v, _)| (*am, v.clone())),
                        );
                        chain.extend(middleware.iter().map(|v| (m, v.clone())));
                        for method in methods_of(&method) {
                            self.routes.push(RawRoute {
                                method: method.to_string(),
                                path: normalize_path(prefix, &p),
                                framework,
                                module: m,
                                line,
                                handler: handler.clone(),
                                middleware: chain.clone(),
                            });
                        }
                    }
                }
            }
        }
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
    }
}
