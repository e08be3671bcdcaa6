//! Hono: `new Hono()` / `new OpenAPIHono()` make an app; `createRoute({ method, path })` of
//! `@hono/zod-openapi` is the route object `app.openapi(route, handler)` registers.

use super::eval::{Chain, Evaluator};
use crate::program::*;
use tree_sitter::Node;

const PACKAGES: &[&str] = &[
    "hono",
    "hono/quick",
    "hono/tiny",
    "hono/factory",
    "@hono/zod-openapi",
];

fn named(v: &Val, names: &[&str]) -> bool {
    match v {
        Val::Import {
            spec,
            name: Some(n),
        } => PACKAGES.contains(&spec.as_str()) && names.contains(&n.as_str()),
        Val::Member(inner, p) => {
            names.contains(&p.as_str())
                && matches!(inner.as_ref(), Val::Import { spec, .. } if PACKAGES.contains(&spec.as_str()))
        }
        _ => false,
    }
}

impl<'t> Evaluator<'t, '_> {
    /// `new Hono()`, also of the class a module of the project exports under Hono's own name: a
    /// re-export, an instantiation that fixes its type parameters (`export const Hono =
    /// HonoBase<Env>`) or a subclass of the same name.
    pub(super) fn hono_create(&mut self, c: &Chain, node: Node<'t>) -> Option<Val> {
        const CLASSES: &[&str] = &["Hono", "OpenAPIHono"];
        let own =
            matches!(&c.val, Val::Import { name: Some(n), .. } if CLASSES.contains(&n.as_str()));
        (own || named(&c.val, CLASSES))
            .then(|| Val::Router(self.new_router(RouterKind::Router, "hono", node)))
    }

    /// `factory.createApp()` (`hono/factory`, https://hono.dev/docs/helpers/factory): an app, from
    /// a `createFactory()` of this module or from a factory another module exports (whose
    /// `createApp()` is the only app maker of that name a route is registered on).
    pub(super) fn hono_factory_app(&mut self, c: &Chain, node: Node<'t>) -> Option<Val> {
        let Val::Member(factory, method) = &c.val else {
            return None;
        };
        let made = method == "createApp"
            && match factory.as_ref() {
                Val::Call(f, _) => named(f, &["createFactory"]),
                Val::Import { spec, .. } => {
                    spec.starts_with('.') || spec.starts_with('@') || spec.starts_with('~')
                }
                _ => false,
            };
        made.then(|| Val::Router(self.new_router(RouterKind::Router, "hono", node)))
    }

    pub(super) fn is_hono_target(&self, target: &super::routers::Target) -> bool {
        matches!(target, super::routers::Target::Router(r) if self.module.routers[*r].framework == "hono")
    }

    /// `createRoute(x)` is `x`.
    pub(super) fn hono_passthrough(&mut self, c: &Chain, args: &[Val]) -> Option<Val> {
        named(&c.val, &["createRoute"]).then(|| args.first().cloned().unwrap_or(Val::Unknown))
    }
}
