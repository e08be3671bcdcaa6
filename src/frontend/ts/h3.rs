//! h3 on its own (outside Nuxt's file routes): v1 `createApp()` with `createRouter()` routers
//! (`router.post(path, handler)`, `router.add(path, handler, method)`), mounted with
//! `app.use(router)`, `app.use('/api', router.handler)` or `useBase('/api', router.handler)`;
//! v2 `new H3()` apps with `.post(path, handler)` and `.mount(base, app)`.

use super::eval::{Chain, Evaluator};
use super::routers::Target;
use crate::program::*;
use tree_sitter::Node;

fn h3_import(v: &Val, names: &[&str]) -> bool {
    matches!(v, Val::Import { spec, name: Some(n) } if spec == "h3" && names.contains(&n.as_str()))
}

/// What a mount hands its routes to: `router.handler` is the router, `useBase(base, x)` is `x`
/// under `base` (with the base, when there is one).
pub fn mounted(v: &Val) -> (Option<Val>, Val) {
    match v {
        Val::Call(callee, args)
            if h3_import(callee, &["useBase", "withBase"]) && args.len() == 2 =>
        {
            (Some(args[0].clone()), mounted(&args[1]).1)
        }
        Val::Member(inner, p) if p == "handler" => (None, inner.as_ref().clone()),
        other => (None, other.clone()),
    }
}

impl<'t> Evaluator<'t, '_> {
    /// `createApp()` (an app), `createRouter()` (a router that an app uses).
    pub(super) fn h3_create_call(&mut self, c: &Chain, node: Node<'t>) -> Option<Val> {
        if h3_import(&c.val, &["createApp"]) {
            return Some(Val::Router(self.new_router(RouterKind::App, "h3", node)));
        }
        if h3_import(&c.val, &["createRouter"]) {
            return Some(Val::Router(self.new_router(RouterKind::Router, "h3", node)));
        }
        None
    }

    /// `new H3()`: an h3 v2 app (it can be mounted in another, or serve on its own).
    pub(super) fn h3_create_new(&mut self, c: &Chain, node: Node<'t>) -> Option<Val> {
        h3_import(&c.val, &["H3"])
            .then(|| Val::Router(self.new_router(RouterKind::App, "h3", node)))
    }

    pub(super) fn is_h3_target(&self, target: &Target) -> bool {
        matches!(target, Target::Router(r) if self.module.routers[*r].framework == "h3")
    }
}
