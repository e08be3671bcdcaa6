//! Elysia (Bun): `new Elysia()` / `new Elysia({ prefix })` makes an app or a plugin, each an
//! instance that registers with `.post(path, handler, hooks)` and siblings, chained. Plugins are
//! instances mounted with `.use(plugin)`; `.group(prefix, app => app.post(..))` runs its callback
//! on an instance under the prefix (read as a plugin the group registers under it, the shape of a
//! Fastify `register`); `.route(method, path, handler)` names its method.

use super::eval::{Chain, Evaluator};
use super::routers::Target;
use crate::program::field;
use crate::program::*;
use tree_sitter::Node;

fn is_elysia(v: &Val) -> bool {
    matches!(v, Val::Import { spec, name: Some(n) } if spec == "elysia" && n == "Elysia")
}

impl<'t> Evaluator<'t, '_> {
    /// `new Elysia(config?)`: an instance, with the config's `prefix` as its own.
    pub(super) fn elysia_create(&mut self, c: &Chain, args: &[Val], node: Node<'t>) -> Option<Val> {
        if !is_elysia(&c.val) {
            return None;
        }
        let r = self.new_router(RouterKind::Router, "elysia", node);
        if let Some(prefix) = args.first().and_then(|o| field(o, "prefix")) {
            self.module.routers[r].prefixes = vec![prefix];
        }
        Some(Val::Router(r))
    }

    /// Whether a registration's receiver is an Elysia instance made in this file.
    pub(super) fn is_elysia_target(&self, target: &Target) -> bool {
        matches!(target, Target::Router(r) if self.module.routers[*r].framework == "elysia")
    }
}

/// An Elysia route's hook object (`{ beforeHandle, transform, body: t.Object(..) }`): the
/// functions that run before its handler, in Elysia's order.
pub fn route_hooks(opts: &Val) -> Vec<Val> {
    let mut out = Vec::new();
    for hook in ["transform", "derive", "resolve", "beforeHandle"] {
        if let Some(h) = field(opts, hook) {
            out.extend(crate::program::flatten(&[h]));
        }
    }
    out
}
