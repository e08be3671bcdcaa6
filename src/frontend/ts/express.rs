//! Express: what creates an app or a router, and what registers a route or mounts a router.
//!
//! Recognition happens while the file is evaluated, on abstract values: `express()` and
//! `express.Router()` (whatever the variable is called) make routers; `.get/.post/…/.all`,
//! `.route(path)` chains and `.use` on such a value register. Registrations on a router that
//! arrives as a parameter or an import are kept for the linker.

use super::eval::{Chain, Evaluator, line};
use super::ir::*;
use tree_sitter::Node;

/// Route registration methods; `all` stands for every method.
pub const ROUTE_METHODS: &[&str] = &[
    "get", "post", "put", "patch", "delete", "del", "all", "head", "options",
];

fn is_express_module(v: &Val) -> bool {
    matches!(v, Val::Import { spec, name } if spec == "express" && name.as_deref().is_none_or(|n| n == "default"))
}

fn is_router_factory(v: &Val) -> bool {
    match v {
        Val::Import {
            spec,
            name: Some(n),
        } => spec == "express" && n == "Router",
        Val::Member(inner, p) => p == "Router" && is_express_module(inner),
        _ => false,
    }
}

/// A first argument that names a mount prefix rather than a handler or router.
fn prefix_like(v: &Val) -> Option<bool> {
    match v {
        Val::Str(_) => Some(true),
        Val::Arr(items) if !items.is_empty() && items.iter().all(|i| matches!(i, Val::Str(_))) => {
            Some(true)
        }
        Val::Member(..) if rooted_at_process(v) => Some(false),
        _ => None,
    }
}

fn rooted_at_process(v: &Val) -> bool {
    match v {
        Val::Member(inner, _) => rooted_at_process(inner),
        Val::Global(g) => g == "process",
        _ => false,
    }
}

fn path_like(v: &Val) -> bool {
    match v {
        Val::Str(s) => s.starts_with('/') || s == "*",
        Val::Arr(items) => !items.is_empty() && items.iter().all(path_like),
        _ => false,
    }
}

fn flatten(args: &[Val]) -> Vec<Val> {
    let mut out = Vec::new();
    for a in args {
        match a {
            Val::Arr(inner) => out.extend(flatten(inner)),
            v => out.push(v.clone()),
        }
    }
    out
}

enum Target {
    Router(RouterId),
    Param(FnId, usize),
    Foreign(Val),
}

impl<'t> Evaluator<'t, '_> {
    fn new_router(&mut self, kind: RouterKind, node: Node) -> Val {
        let id = self.module.routers.len();
        self.module.routers.push(RouterFacts {
            kind,
            framework: "express",
            line: line(node),
            items: Vec::new(),
        });
        Val::Router(id)
    }

    pub(super) fn express_new(&mut self, c: &Chain) -> Option<Val> {
        // `new express.Router()` is unusual but valid.
        if is_router_factory(&c.val) {
            return Some(Val::Router(self.module.routers.len())).inspect(|_| {
                self.module.routers.push(RouterFacts {
                    kind: RouterKind::Router,
                    framework: "express",
                    line: 0,
                    items: Vec::new(),
                })
            });
        }
        None
    }

    pub(super) fn express_call(
        &mut self,
        c: &Chain,
        args: &[Val],
        arg_nodes: &[Node<'t>],
        node: Node<'t>,
    ) -> Option<Val> {
        if is_express_module(&c.val) {
            return Some(self.new_router(RouterKind::App, node));
        }
        if is_router_factory(&c.val) {
            return Some(self.new_router(RouterKind::Router, node));
        }
        let Val::Member(receiver, method) = &c.val else {
            return None;
        };
        let method = method.as_str();
        let receiver = receiver.as_ref().clone();
        let method_line = c.path.last().map(|_| {
            node.child_by_field_name("function")
                .and_then(|f| f.child_by_field_name("property"))
                .map(line)
                .unwrap_or_else(|| line(node))
        })?;
        let path_text = arg_nodes
            .first()
            .map(|n| self.text(*n).to_string())
            .unwrap_or_default();
        match (&receiver, method) {
            (Val::RouteChain(r, paths), m) if ROUTE_METHODS.contains(&m) => {
                let mut all = flatten(args);
                let handler = all.pop()?;
                let item = RouterItem::Route {
                    method: m.to_string(),
                    paths: (**paths).clone(),
                    path_text: String::new(),
                    middleware: all,
                    handler,
                    line: method_line,
                };
                self.module.routers[*r].items.push(item);
                Some(receiver.clone())
            }
            (Val::RouteChain(..), _) => None,
            (_, "route") => {
                let Target::Router(r) = self.target(&receiver, true)? else {
                    return None;
                };
                Some(Val::RouteChain(
                    r,
                    Box::new(args.first().cloned().unwrap_or(Val::Unknown)),
                ))
            }
            (_, m) if ROUTE_METHODS.contains(&m) => {
                if args.len() < 2 {
                    return None; // `app.get('env')` reads a setting
                }
                let target = self.target(&receiver, path_like(&args[0]))?;
                let mut rest = flatten(&args[1..]);
                let handler = rest.pop()?;
                let item = RouterItem::Route {
                    method: m.to_string(),
                    paths: args[0].clone(),
                    path_text,
                    middleware: rest,
                    handler,
                    line: method_line,
                };
                self.push_item(target, item);
                Some(receiver.clone())
            }
            (_, "use") => {
                let target = self.target(&receiver, !args.is_empty())?;
                let (path, rest) = match args.first().and_then(prefix_like) {
                    Some(_) => (Some(args[0].clone()), &args[1..]),
                    None => (None, args),
                };
                let item = RouterItem::Use {
                    path,
                    path_text,
                    args: flatten(rest),
                    line: method_line,
                };
                self.push_item(target, item);
                Some(receiver.clone())
            }
            _ => None,
        }
    }

    /// Where a registration on `receiver` goes. Routers this file made are certain; a parameter
    /// or an import is kept only when the call looks like a route (`plausible`).
    fn target(&mut self, receiver: &Val, plausible: bool) -> Option<Target> {
        match receiver {
            Val::Router(r) => Some(Target::Router(*r)),
            Val::Param(f, i) if plausible => Some(Target::Param(*f, *i)),
            Val::Import { .. } | Val::Member(..) if plausible && is_import_rooted(receiver) => {
                Some(Target::Foreign(receiver.clone()))
            }
            _ => None,
        }
    }

    fn push_item(&mut self, target: Target, item: RouterItem) {
        match target {
            Target::Router(r) => self.module.routers[r].items.push(item),
            Target::Param(f, i) => self.module.functions[f].param_items.push((i, item)),
            Target::Foreign(v) => self.module.foreign_items.push((v, item)),
        }
    }
}

fn is_import_rooted(v: &Val) -> bool {
    match v {
        Val::Import { spec, .. } => {
            spec.starts_with('.')
                || spec.starts_with('@')
                || spec.starts_with('~')
                || spec.starts_with('#')
        }
        Val::Member(inner, _) => is_import_rooted(inner),
        _ => false,
    }
}
