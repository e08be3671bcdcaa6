//! Express: `express()` makes an app, `express.Router()` / `Router()` a router.

use super::eval::{Chain, Evaluator};
use crate::program::*;
use tree_sitter::Node;

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

impl<'t> Evaluator<'t, '_> {
    pub(super) fn express_create(&mut self, c: &Chain, node: Node<'t>) -> Option<Val> {
        if is_express_module(&c.val) {
            return Some(Val::Router(self.new_router(
                RouterKind::App,
                "express",
                node,
            )));
        }
        if is_router_factory(&c.val) {
            return Some(Val::Router(self.new_router(
                RouterKind::Router,
                "express",
                node,
            )));
        }
        None
    }

    /// express-ws (<https://github.com/HenningM/express-ws#usage>): `expressWs(app)` adds
    /// websocket routes to `app` and returns `{ app, getWss, applyTo }`, whose `app` is that same
    /// app (`const app = expressWs(express()).app`).
    pub(super) fn express_ws(&mut self, c: &Chain, args: &[Val]) -> Option<Val> {
        let is_ws = matches!(&c.val, Val::Import { spec, name } if spec == "express-ws" && name.as_deref().is_none_or(|n| n == "default"));
        match args.first() {
            Some(app @ Val::Router(_)) if is_ws => {
                Some(Val::Obj(vec![("app".into(), app.clone())]))
            }
            _ => None,
        }
    }
}
