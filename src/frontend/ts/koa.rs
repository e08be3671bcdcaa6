//! Koa: `new Koa()` makes an app; `new Router({ prefix })` from `koa-router` / `@koa/router` a
//! router; `mount('/api', app)` from `koa-mount` mounts an app under a prefix.

use super::eval::{Chain, Evaluator};
use crate::program::field;
use crate::program::*;
use tree_sitter::Node;

fn from(v: &Val, packages: &[&str]) -> bool {
    match v {
        Val::Import { spec, name } => {
            packages.contains(&spec.as_str())
                && name
                    .as_deref()
                    .is_none_or(|n| n == "default" || n == "Router")
        }
        Val::Member(inner, p) => p == "default" && from(inner, packages),
        _ => false,
    }
}

impl<'t> Evaluator<'t, '_> {
    pub(super) fn koa_create(&mut self, c: &Chain, args: &[Val], node: Node<'t>) -> Option<Val> {
        if from(&c.val, &["koa"]) {
            return Some(Val::Router(self.new_router(RouterKind::App, "koa", node)));
        }
        if from(&c.val, &["koa-router", "@koa/router"]) {
            let r = self.new_router(RouterKind::Router, "koa", node);
            if let Some(p) = args.first().and_then(|o| field(o, "prefix")) {
                self.module.routers[r].prefixes.push(p);
            }
            return Some(Val::Router(r));
        }
        None
    }

    /// A class that extends koa-router (or such a class): it is a router, whatever instance.
    pub(super) fn koa_router_class(&mut self, class: ClassId, extends: &Val, node: Node<'t>) {
        let router_base = from(extends, &["koa-router", "@koa/router"])
            || matches!(extends, Val::Class(k) if self.module.classes[*k].router.is_some());
        if !router_base {
            return;
        }
        let r = self.new_router(RouterKind::Router, "koa", node);
        self.module.routers[r].name = self.module.classes[class].name.clone();
        self.module.classes[class].router = Some(r);
    }

    /// `super({ prefix: '/api' })` in the constructor of a koa-router subclass.
    pub(super) fn koa_super(&mut self, args: &[Val]) {
        let Some(r) = self
            .this_class()
            .and_then(|c| self.module.classes[c].router)
        else {
            return;
        };
        if let Some(p) = args.first().and_then(|o| field(o, "prefix")) {
            self.module.routers[r].prefixes = vec![p];
        }
    }

    /// `mount('/api', app)`: a router holding one mount.
    pub(super) fn koa_mount(&mut self, c: &Chain, args: &[Val], node: Node<'t>) -> Option<Val> {
        if !from(&c.val, &["koa-mount"]) {
            return None;
        }
        let r = self.new_router(RouterKind::Router, "koa", node);
        let (path, rest) = match args {
            [p, rest @ ..] if p.as_str().is_some() => (Some(p.clone()), rest.to_vec()),
            rest => (None, rest.to_vec()),
        };
        let path_text = node
            .child_by_field_name("arguments")
            .and_then(|a| a.named_child(0))
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        self.module.routers[r].items.push(RouterItem::Use {
            path,
            path_text,
            args: rest,
            line: super::eval::line(node),
        });
        Some(Val::Router(r))
    }
}
