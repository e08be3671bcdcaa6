//! Fastify: `Fastify()` makes an app; plugins (`async (fastify, opts) => { fastify.post(...) }`)
//! registered with `register(plugin, { prefix })` are contexts whose routes the linker mounts.

use super::eval::{Chain, Evaluator};
use crate::program::*;
use tree_sitter::Node;

fn is_fastify(v: &Val) -> bool {
    matches!(v, Val::Import { spec, name } if spec == "fastify" && name.as_deref().is_none_or(|n| n == "default" || n == "fastify" || n == "Fastify"))
}

impl<'t> Evaluator<'t, '_> {
    pub(super) fn fastify_create(&mut self, c: &Chain, node: Node<'t>) -> Option<Val> {
        is_fastify(&c.val).then(|| Val::Router(self.new_router(RouterKind::App, "fastify", node)))
    }
}
