//! Route registration, shared by the call-registered frameworks (Express, Koa, Hono, Fastify).
//!
//! Recognition happens while a file is evaluated, on abstract values: a framework file says what
//! creates an app or router (`express()`, `new Router()`, `new Hono()`, `Fastify()`); this file
//! says what registers on one. Registrations on a router that arrives as a parameter (a Fastify
//! plugin, a `routes(app)` function) or an import are kept for the linker.

use super::eval::{Chain, Evaluator, line};
use crate::program::*;
use tree_sitter::Node;

/// Route registration methods; `all` stands for every mutation method.
pub const ROUTE_METHODS: &[&str] = &[
    "get", "post", "put", "patch", "delete", "del", "all", "head", "options",
];

/// A first argument that names a mount prefix rather than a handler or router: Some(true) when
/// static, Some(false) when read from the environment.
pub fn prefix_like(v: &Val) -> Option<bool> {
    match v {
        v if v.as_str().is_some() => Some(true),
        // `${API_PREFIX}/notes`, `config.apiPrefix + '/x'`: a string, read by the linker.
        Val::Template(_) => Some(true),
        Val::Arr(items) if !items.is_empty() && items.iter().all(|i| i.as_str().is_some()) => {
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
    if let Some(s) = v.as_str() {
        return s.starts_with('/') || s == "*";
    }
    match v {
        Val::Arr(items) => !items.is_empty() && items.iter().all(path_like),
        // `/api/${version}/media`, `${base}/addbalance/`: a path with pieces the caller gives
        // (read where the function is called), its first piece a path or an interpolated base
        // followed by one.
        Val::Template(parts) => match parts.first() {
            Some(first @ (Val::Str(_) | Val::Template(_))) => path_like(first),
            Some(_) => parts
                .get(1)
                .and_then(Val::as_str)
                .is_some_and(|s| s.starts_with('/')),
            None => false,
        },
        _ => false,
    }
}

/// Fastify route options: hooks that run before the handler (then those after it, marked), and
/// possibly the handler itself.
fn route_options(opts: &Val) -> (Vec<Val>, Option<Val>) {
    let mut hooks = Vec::new();
    for hook in ["onRequest", "preParsing", "preValidation", "preHandler"] {
        if let Some(h) = field(opts, hook) {
            hooks.extend(flatten(&[h]));
        }
    }
    for hook in ["onSend", "onResponse", "onError"] {
        if let Some(h) = field(opts, hook) {
            hooks.extend(flatten(&[h]).into_iter().map(after_handler));
        }
    }
    (hooks, field(opts, "handler"))
}

pub(super) enum Target {
    Router(RouterId),
    Param(FnId, ParamSlot),
    Foreign(Val),
}

/// `deps.server`, `opts.app.router`: a parameter and the fields read from it.
fn param_fields(v: &Val) -> Option<(FnId, ParamSlot)> {
    match v {
        Val::Param(f, i) => Some((*f, ParamSlot::at(*i))),
        Val::Member(inner, p) => {
            let (f, mut slot) = param_fields(inner)?;
            if slot.fields.len() >= 3 {
                return None;
            }
            slot.fields.push(p.clone());
            Some((f, slot))
        }
        _ => None,
    }
}

impl<'t> Evaluator<'t, '_> {
    pub(super) fn new_router(
        &mut self,
        kind: RouterKind,
        framework: &'static str,
        node: Node,
    ) -> RouterId {
        let mut router = RouterFacts::new(kind, framework, line(node));
        router.name = self.binding_name(node);
        router.made_in = self.cur_fn();
        self.module.routers.push(router);
        self.module.routers.len() - 1
    }

    /// The name the value made at `node` is bound to: `const admin = Router()` → `admin`,
    /// `this.app = express()` → `this.app`, `{ router: Router() }` → `router`; otherwise the
    /// expression as written, shortened.
    pub(super) fn binding_name(&self, node: Node<'t>) -> String {
        let mut cur = node;
        while let Some(parent) = cur.parent() {
            let name = match parent.kind() {
                "call_expression"
                | "new_expression"
                | "parenthesized_expression"
                | "await_expression"
                | "as_expression"
                | "non_null_expression"
                | "satisfies_expression" => {
                    cur = parent;
                    continue;
                }
                "variable_declarator" | "public_field_definition" | "field_definition" => parent
                    .child_by_field_name("name")
                    .or_else(|| parent.child_by_field_name("property")),
                "assignment_expression" => parent.child_by_field_name("left"),
                "pair" => parent.child_by_field_name("key"),
                _ => None,
            };
            if let Some(n) = name {
                return self.short_text(n);
            }
            break;
        }
        self.short_text(node)
    }

    /// A router class the project writes itself: its `get` and at least one mutation method
    /// (`post`, `put`, `patch`, `delete`/`del`) each take a path and a handler and store the
    /// handler under the path in a table the instance holds (`this.routes_.POST[path] = {
    /// handler }`, `this.routes.set(path, handler)`, `this.routes.push({ path, handler })`), which
    /// a middleware of the app later looks the request's path up in. Its instances are routers
    /// whose paths are the table's keys, whole (no mount adds a prefix to a lookup key).
    pub(super) fn table_router_class(
        &mut self,
        class: ClassId,
        members: &[Node<'t>],
        node: Node<'t>,
    ) {
        let mut get = false;
        let mut mutation = false;
        for m in members {
            if m.kind() != "method_definition" {
                continue;
            }
            let Some(name) = m.child_by_field_name("name").map(|n| self.property_name(n)) else {
                continue;
            };
            if !matches!(
                name.as_str(),
                "get" | "post" | "put" | "patch" | "delete" | "del"
            ) {
                continue;
            }
            if !self.stores_handler_by_path(*m) {
                continue;
            }
            match name.as_str() {
                "get" => get = true,
                _ => mutation = true,
            }
        }
        if !(get && mutation) {
            return;
        }
        let r = self.new_router(RouterKind::App, TABLE_ROUTER, node);
        self.module.routers[r].name = self.module.classes[class].name.clone();
        self.module.classes[class].router = Some(r);
    }

    /// A method `(path, handler, ..)` whose body stores the handler under the path in a table
    /// reached from `this`.
    fn stores_handler_by_path(&self, method: Node<'t>) -> bool {
        let Some(params) = method.child_by_field_name("parameters") else {
            return false;
        };
        let mut cursor = params.walk();
        let names: Vec<String> = params
            .named_children(&mut cursor)
            .filter_map(|p| self.param_name(p))
            .collect();
        let [path, handler, ..] = names.as_slice() else {
            return false;
        };
        let Some(body) = method.child_by_field_name("body") else {
            return false;
        };
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            match n.kind() {
                // `this.table[..][path] = { handler }`
                "assignment_expression" => {
                    if let (Some(left), Some(right)) = (
                        n.child_by_field_name("left"),
                        n.child_by_field_name("right"),
                    ) && left.kind() == "subscript_expression"
                        && left
                            .child_by_field_name("index")
                            .is_some_and(|i| self.text(i) == path.as_str())
                        && self.text(left).starts_with("this")
                        && self.mentions(right, handler)
                    {
                        return true;
                    }
                }
                // `this.table.set(path, handler)`, `this.table.push({ path, handler })`
                "call_expression" => {
                    if let (Some(f), Some(args)) = (
                        n.child_by_field_name("function"),
                        n.child_by_field_name("arguments"),
                    ) && f.kind() == "member_expression"
                        && self.text(f).starts_with("this")
                        && f.child_by_field_name("property")
                            .is_some_and(|p| matches!(self.text(p), "set" | "push"))
                        && self.mentions(args, path)
                        && self.mentions(args, handler)
                    {
                        return true;
                    }
                }
                _ => {}
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        false
    }

    /// A plain parameter's name (`path`, `path: string`, `type = null`).
    fn param_name(&self, p: Node<'t>) -> Option<String> {
        let n = match p.kind() {
            "identifier" => p,
            "required_parameter" | "optional_parameter" => p.child_by_field_name("pattern")?,
            "assignment_pattern" => p.child_by_field_name("left")?,
            _ => return None,
        };
        (n.kind() == "identifier").then(|| self.text(n).to_string())
    }

    /// `name` appears in `n` as an identifier.
    fn mentions(&self, n: Node<'t>, name: &str) -> bool {
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            if matches!(x.kind(), "identifier" | "shorthand_property_identifier")
                && self.text(x) == name
            {
                return true;
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c));
        }
        false
    }

    /// `router.postAsync = (path, ...handlers) => router.post(path, ...wrap(handlers))`: the
    /// function `f` assigned to the router's member `name` registers a route at its own parameter:
    /// that registration is the method's, made at each call of it, not a route of its own.
    pub(super) fn route_helper(&mut self, r: RouterId, name: String, f: FnId) {
        let Some(items) = self.module.functions[f].closure_items.as_deref_mut() else {
            return;
        };
        let Some(i) = items.iter().position(|(ir, it)| {
            *ir == r
                && matches!(it, RouterItem::Route { method: Val::Str(_), paths: Val::Param(pf, _), .. } if *pf == f)
        }) else {
            return;
        };
        if let (
            _,
            RouterItem::Route {
                method,
                paths: Val::Param(_, path_index),
                ..
            },
        ) = items.remove(i)
        {
            self.module.routers[r].helpers.push(RouteHelper {
                name,
                method,
                path_index,
            });
        }
    }

    /// A call of a route method a router's maker added to it ([`Self::route_helper`]): on this
    /// file's router, the route it registers. With `foreign`, also a method no framework has,
    /// called with a path first on a router of another file or of a factory
    /// (`require('./router-async').create().postAsync('/lists', h)`), or on a router a function
    /// receives with the path it receives (`function installUploadHandler(router, url) {
    /// router.postAsync(url, ..) }`): kept for the linker, which reads it as a route when the
    /// router's maker added the method.
    fn helper_call(
        &mut self,
        receiver: &Val,
        (name, args): (&str, &[Val]),
        (path_text, line): (&str, u32),
        foreign: bool,
    ) -> Option<Val> {
        if let Val::Router(r) = receiver {
            let item = self.module.routers[*r]
                .helpers
                .iter()
                .find(|h| h.name == name)?
                .route(args, path_text.to_string(), line, None)?;
            self.push_item(Target::Router(*r), item);
            return Some(receiver.clone());
        }
        if !foreign {
            return None;
        }
        let passed = matches!(args[0], Val::Param(f, _) if f == self.cur_fn());
        if !path_like(&args[0]) && !passed {
            return None;
        }
        let target = self.target(receiver, true)?;
        if matches!(target, Target::Router(_)) || matches!(target, Target::Param(..)) != passed {
            return None;
        }
        self.push_item(
            target,
            RouterItem::HelperCall {
                name: name.to_string(),
                args: args.to_vec(),
                path_text: path_text.to_string(),
                line,
                written_at: None,
            },
        );
        Some(receiver.clone())
    }

    /// `new X(...)` that makes an app or router.
    pub(super) fn router_new(&mut self, c: &Chain, args: &[Val], node: Node<'t>) -> Option<Val> {
        if let Val::Class(k) = &c.val
            && let Some(r) = self.module.classes[*k].router
        {
            return Some(Val::Router(r));
        }
        self.express_create(c, node)
            .or_else(|| self.koa_create(c, args, node))
            .or_else(|| self.hono_create(c, node))
            .or_else(|| self.elysia_create(c, args, node))
            .or_else(|| self.h3_create_new(c, node))
    }

    /// A call that makes a router, or registers on one. Returns the call's value when it did.
    pub(super) fn router_call(
        &mut self,
        c: &Chain,
        args: &[Val],
        arg_nodes: &[Node<'t>],
        node: Node<'t>,
    ) -> Option<Val> {
        if let Some(v) = self
            .express_create(c, node)
            .or_else(|| self.express_ws(c, args))
            .or_else(|| self.koa_create(c, args, node))
            .or_else(|| self.koa_mount(c, args, node))
            .or_else(|| self.hono_passthrough(c, args))
            .or_else(|| self.hono_factory_app(c, node))
            .or_else(|| self.fastify_create(c, node))
            .or_else(|| self.h3_create_call(c, node))
        {
            return Some(v);
        }
        let Val::Member(receiver, method) = &c.val else {
            return None;
        };
        // `this.post(..)` in a class that is a router.
        let receiver = match receiver.as_ref() {
            Val::This(Some(class)) => match self.module.classes[*class].router {
                Some(r) => Val::Router(r),
                None => receiver.as_ref().clone(),
            },
            r => r.clone(),
        };
        let method_line = node
            .child_by_field_name("function")
            .and_then(|f| f.child_by_field_name("property"))
            .map(line)
            .unwrap_or_else(|| line(node));
        let path_text = arg_nodes
            .first()
            .map(|n| self.text(*n).to_string())
            .unwrap_or_default();
        let method = method.as_str();
        if !ROUTE_METHODS.contains(&method)
            && args.len() >= 2
            && let Some(v) =
                self.helper_call(&receiver, (method, args), (&path_text, method_line), false)
        {
            return Some(v);
        }
        if let Val::RouteChain(r, paths) = &receiver {
            if !ROUTE_METHODS.contains(&method) {
                return None;
            }
            let mut all = flatten(args);
            let handler = all.pop()?;
            let item = RouterItem::route(
                Val::Str(method.into()),
                (**paths).clone(),
                String::new(),
                all,
                handler,
                method_line,
            );
            self.module.routers[*r].items.push(item);
            return Some(receiver.clone());
        }
        match method {
            m if ROUTE_METHODS.contains(&m) => {
                if args.len() < 2 {
                    return None; // `app.get('env')` reads a setting
                }
                // On an instance of a class of another file (`new Router(..)`), any string: a
                // router class the project writes may take its paths without a leading `/`.
                // (a path built from pieces is a route's only when a handler follows it, not a
                // body: `http.post(`${base}/notify`, body)` is a client's request)
                let handler_last = args.last().is_some_and(|h| {
                    matches!(h, Val::Func(_) | Val::Import { .. } | Val::Call(..))
                        || matches!(h, Val::Member(..) if is_import_rooted(h))
                });
                let plausible = (path_like(&args[0])
                    && (!matches!(args[0], Val::Template(_)) || handler_last))
                    || (matches!(receiver, Val::New(..)) && args[0].as_str().is_some());
                let target = self.target(&receiver, plausible)?;
                let (mut paths, mut rest) = (args[0].clone(), &args[1..]);
                // koa-router named routes: router.post('name', '/path', handler)
                if let (Some(_), Some(p)) = (args[0].as_str(), rest.first())
                    && p.as_str().is_some()
                    && rest.len() >= 2
                {
                    paths = p.clone();
                    rest = &rest[1..];
                }
                let mut middleware = Vec::new();
                let mut handler = None;
                if let Some(opts @ Val::Obj(_)) = rest.first() {
                    let (hooks, h) = route_options(opts);
                    middleware.extend(hooks);
                    handler = h;
                    rest = &rest[1..];
                }
                // Elysia's hook object after the handler: `.post('/x', handler, { beforeHandle })`.
                let mut after = Vec::new();
                if rest.len() >= 2
                    && let Some(opts @ Val::Obj(_)) = rest.last()
                {
                    after = super::elysia::route_hooks(opts);
                    rest = &rest[..rest.len() - 1];
                }
                let mut rest = flatten(rest);
                let handler = match handler {
                    Some(h) if rest.is_empty() => h,
                    _ => rest.pop()?,
                };
                middleware.extend(rest);
                middleware.extend(after);
                self.push_item(
                    target,
                    RouterItem::route(
                        Val::Str(m.into()),
                        paths,
                        path_text,
                        middleware,
                        handler,
                        method_line,
                    ),
                );
                Some(receiver.clone())
            }
            // Elysia `.use(plugin)`: an instance, or a function given the instance (`(app) =>
            // app.post(..)`, in this file or another), which registers on it.
            "use"
                if args.len() == 1
                    && self
                        .target(&receiver, false)
                        .is_some_and(|t| self.is_elysia_target(&t)) =>
            {
                let target = self.target(&receiver, true)?;
                self.push_item(
                    target,
                    RouterItem::Register {
                        path: None,
                        path_text: String::new(),
                        plugin: args[0].clone(),
                        options: None,
                        line: method_line,
                    },
                );
                Some(receiver.clone())
            }
            // Elysia `.group(prefix, [hooks,] (app) => app.post(..))` and `.guard(hooks, (app) =>
            // ..)`: the callback registers on an instance under the prefix.
            "group" | "guard" if args.len() >= 2 && matches!(args.last(), Some(Val::Func(_))) => {
                let target = self.target(&receiver, true)?;
                let path = (method == "group").then(|| args[0].clone());
                self.push_item(
                    target,
                    RouterItem::Register {
                        path,
                        path_text: if method == "group" {
                            path_text
                        } else {
                            String::new()
                        },
                        plugin: args[args.len() - 1].clone(),
                        options: None,
                        line: method_line,
                    },
                );
                Some(receiver.clone())
            }
            // Elysia `.route('POST', '/x', handler, hooks?)`.
            "route"
                if args.len() >= 3
                    && args[0].as_str().is_some_and(|m| {
                        ROUTE_METHODS.contains(&m.to_ascii_lowercase().as_str())
                    })
                    && self
                        .target(&receiver, false)
                        .is_some_and(|t| self.is_elysia_target(&t)) =>
            {
                let target = self.target(&receiver, true)?;
                let middleware = match args.get(3) {
                    Some(opts @ Val::Obj(_)) => super::elysia::route_hooks(opts),
                    _ => Vec::new(),
                };
                let path_text = arg_nodes
                    .get(1)
                    .map(|n| self.text(*n).to_string())
                    .unwrap_or_default();
                self.push_item(
                    target,
                    RouterItem::route(
                        Val::Str(args[0].as_str().unwrap_or_default().to_ascii_lowercase()),
                        args[1].clone(),
                        path_text,
                        middleware,
                        args[2].clone(),
                        method_line,
                    ),
                );
                Some(receiver.clone())
            }
            // h3: `app.use([prefix,] router.handler | useBase(base, router.handler))` and v2
            // `app.mount(base, sub)` mount the router under the prefix and the base.
            "use" | "mount"
                if !args.is_empty()
                    && self
                        .target(&receiver, false)
                        .is_some_and(|t| self.is_h3_target(&t))
                    && (method == "use" || args.len() == 2) =>
            {
                let target = self.target(&receiver, true)?;
                let (prefix, value) = match args {
                    [p, v] if method == "mount" || prefix_like(p).is_some() => (Some(p.clone()), v),
                    [v, ..] => (None, v),
                    [] => return None,
                };
                let (base, value) = super::h3::mounted(value);
                // An app strips the prefix it mounts at; a router's `use` path is a pattern that
                // forwards requests unchanged, so only the base counts there.
                let on_router = matches!(target, Target::Router(r) if self.module.routers[r].kind == RouterKind::Router);
                let prefix = prefix.filter(|_| !on_router || method == "mount");
                let path = match (prefix, base) {
                    (Some(p), Some(b)) => Some(Val::Template(vec![p, b])),
                    (p, b) => p.or(b),
                };
                self.push_item(
                    target,
                    RouterItem::Use {
                        path,
                        path_text,
                        args: vec![value],
                        line: method_line,
                    },
                );
                Some(receiver.clone())
            }
            // h3 v1 `router.add(path, handler, method?)`: every method when none is named.
            "add"
                if args.len() >= 2
                    && self
                        .target(&receiver, false)
                        .is_some_and(|t| self.is_h3_target(&t)) =>
            {
                let target = self.target(&receiver, true)?;
                self.push_item(
                    target,
                    RouterItem::route(
                        args.get(2).cloned().unwrap_or(Val::Str("all".into())),
                        args[0].clone(),
                        path_text,
                        vec![],
                        args[1].clone(),
                        method_line,
                    ),
                );
                Some(receiver.clone())
            }
            // Hono `app.mount('/x', handler)`: an application's request handler (another Hono
            // app's `fetch`, another framework's), answering under the prefix, which Hono strips
            // by default.
            "mount"
                if args.len() >= 2
                    && self
                        .target(&receiver, false)
                        .is_some_and(|t| self.is_hono_target(&t)) =>
            {
                let target = self.target(&receiver, true)?;
                let app = match &args[1] {
                    Val::Member(inner, p) if p == "fetch" => inner.as_ref().clone(),
                    v => v.clone(),
                };
                self.push_item(
                    target,
                    RouterItem::Use {
                        path: Some(args[0].clone()),
                        path_text,
                        args: vec![Val::Call(
                            std::sync::Arc::new(Val::Global(MOUNTED_APP.into())),
                            vec![app],
                        )],
                        line: method_line,
                    },
                );
                Some(receiver.clone())
            }
            // Elysia lifecycle hooks cover the routes registered after them.
            "onBeforeHandle" | "onTransform" | "derive" | "resolve"
                if self
                    .target(&receiver, false)
                    .is_some_and(|t| self.is_elysia_target(&t)) =>
            {
                let target = self.target(&receiver, true)?;
                let hooks: Vec<Val> = args
                    .iter()
                    .filter(|a| !matches!(a, Val::Obj(_)))
                    .cloned()
                    .collect();
                self.push_item(
                    target,
                    RouterItem::Use {
                        path: None,
                        path_text: String::new(),
                        args: flatten(&hooks),
                        line: method_line,
                    },
                );
                Some(receiver.clone())
            }
            "use" => {
                let target = self
                    .target(&receiver, !args.is_empty())
                    .or_else(|| wrapped_app(&receiver).map(Target::Router))?;
                let (path, rest) = match args.first().and_then(prefix_like) {
                    Some(_) => (Some(args[0].clone()), &args[1..]),
                    None => (None, args),
                };
                // On an import it may be something else's `use` (a tRPC procedure builder's
                // `.use(middleware)` makes a new builder): the call keeps its value, and a
                // registration chained on it still goes to the import (see `target`).
                // `this.app.use(..)` read before the field is set hands back the app.
                let value = match &target {
                    Target::Foreign(v) if is_import_rooted(v) => {
                        Val::Call(std::sync::Arc::new(c.val.clone()), args.to_vec())
                    }
                    _ => receiver.clone(),
                };
                self.push_item(
                    target,
                    RouterItem::Use {
                        path,
                        path_text,
                        args: flatten(rest),
                        line: method_line,
                    },
                );
                Some(value)
            }
            // Express `router.route(path)` chains; Hono `app.route(prefix, sub)`; Fastify
            // `fastify.route({ method, url, handler })`.
            "route" => match args {
                [p] if !matches!(p, Val::Obj(_)) => {
                    let Target::Router(r) = self.target(&receiver, true)? else {
                        return None;
                    };
                    Some(Val::RouteChain(r, std::sync::Arc::new(p.clone())))
                }
                [opts @ Val::Obj(_)] => {
                    let target = self.target(
                        &receiver,
                        field(opts, "url")
                            .or_else(|| field(opts, "path"))
                            .is_some_and(|p| path_like(&p)),
                    )?;
                    let (middleware, handler) = route_options(opts);
                    self.push_item(
                        target,
                        RouterItem::route(
                            field(opts, "method").unwrap_or(Val::Unknown),
                            field(opts, "url")
                                .or_else(|| field(opts, "path"))
                                .unwrap_or(Val::Unknown),
                            String::new(),
                            middleware,
                            handler?,
                            method_line,
                        ),
                    );
                    Some(receiver.clone())
                }
                // A prefix built by a helper or named by a constant of another file
                // (`app.route(formatPath('/api'), sub)`) is read by the linker.
                [p, subs @ ..]
                    if !subs.is_empty()
                        && (prefix_like(p).is_some()
                            || matches!(
                                p,
                                Val::Call(..) | Val::Import { .. } | Val::Member(..)
                            )) =>
                {
                    let target = self.target(&receiver, true)?;
                    self.push_item(
                        target,
                        RouterItem::Use {
                            path: Some(p.clone()),
                            path_text,
                            args: subs.to_vec(),
                            line: method_line,
                        },
                    );
                    Some(receiver.clone())
                }
                _ => None,
            },
            // Hono `app.on('POST', '/x', h)` and `app.on(['POST', 'PUT'], ['/a', '/b'], h)`.
            "on" if args.len() >= 3 && matches!(args[0], Val::Str(_) | Val::Arr(_)) => {
                let target = self.target(&receiver, path_like(&args[1]))?;
                let mut rest = flatten(&args[2..]);
                let handler = rest.pop()?;
                let path_text = arg_nodes
                    .get(1)
                    .map(|n| self.text(*n).to_string())
                    .unwrap_or_default();
                self.push_item(
                    target,
                    RouterItem::route(
                        args[0].clone(),
                        args[1].clone(),
                        path_text,
                        rest,
                        handler,
                        method_line,
                    ),
                );
                Some(receiver.clone())
            }
            // @hono/zod-openapi: `app.openapi(createRoute({ method, path }), handler)`.
            "openapi" if args.len() >= 2 => {
                let target = self.target(&receiver, true)?;
                let route = args[0].clone();
                let method = self.member(route.clone(), "method");
                let paths = self.member(route, "path");
                self.push_item(
                    target,
                    RouterItem::route(
                        method,
                        paths,
                        path_text,
                        vec![],
                        args[1].clone(),
                        method_line,
                    ),
                );
                Some(receiver.clone())
            }
            // Fastify `register(plugin, { prefix })`.
            "register"
                if args.first().is_some_and(plugin_like)
                    && args.get(1).is_none_or(|o| matches!(o, Val::Obj(_))) =>
            {
                let target = self.target(&receiver, true)?;
                let path = args.get(1).and_then(|o| field(o, "prefix"));
                let path_text = arg_nodes
                    .get(1)
                    .map(|n| self.text(*n).to_string())
                    .unwrap_or_default();
                self.push_item(
                    target,
                    RouterItem::Register {
                        path,
                        path_text,
                        plugin: args[0].clone(),
                        options: args.get(1).cloned(),
                        line: method_line,
                    },
                );
                Some(receiver.clone())
            }
            // Fastify hooks: run for every route of the context.
            "addHook" if args.len() >= 2 => {
                let hook = matches!(&args[0], Val::Str(h) if matches!(h.as_str(), "onRequest" | "preParsing" | "preValidation" | "preHandler"));
                if !hook {
                    return None;
                }
                let target = self.target(&receiver, true)?;
                self.push_item(
                    target,
                    RouterItem::Use {
                        path: None,
                        path_text: String::new(),
                        args: flatten(&args[1..]),
                        line: method_line,
                    },
                );
                Some(receiver.clone())
            }
            // A Worker's `fetch` that strips a prefix from the path, then hands the request to
            // its app (`url.pathname = url.pathname.replace('/api', ''); return app.fetch(req,
            // env, ctx)`): the clients reach the app's routes under the prefix.
            // The app may be imported (`import app from './hono/webs'`).
            "fetch" if matches!(receiver, Val::Router(_) | Val::Import { .. }) => {
                let (f, prefix) = self.stripped_prefix.clone()?;
                if f != self.cur_fn() {
                    return None;
                }
                let framework = match receiver {
                    Val::Router(r) => self.module.routers[r].framework,
                    _ => "hono",
                };
                let root = self.new_router(RouterKind::App, framework, node);
                self.module.routers[root].items.push(RouterItem::Use {
                    path: Some(Val::Str(prefix.clone())),
                    path_text: format!("'{prefix}'"),
                    args: vec![receiver.clone()],
                    line: method_line,
                });
                None
            }
            // Hono `app.basePath('/api')`: a router whose routes sit under the prefix.
            "basePath" if args.len() == 1 => {
                let Target::Router(r) = self.target(&receiver, true)? else {
                    return None;
                };
                let framework = self.module.routers[r].framework;
                let child = self.new_router(RouterKind::Router, framework, node);
                self.module.routers[r].items.push(RouterItem::Use {
                    path: Some(args[0].clone()),
                    path_text,
                    args: vec![Val::Router(child)],
                    line: method_line,
                });
                Some(Val::Router(child))
            }
            // koa-router `router.routes()` / `.middleware()` hand the router to `use`.
            "routes" | "middleware" if matches!(receiver, Val::Router(_)) => Some(receiver.clone()),
            // koa-router `router.prefix('/x')`.
            "prefix" if matches!(receiver, Val::Router(_)) && args.len() == 1 => {
                if let Val::Router(r) = receiver {
                    self.module.routers[r].prefixes = vec![args[0].clone()];
                }
                Some(receiver.clone())
            }
            "withTypeProvider" => Some(receiver.clone()),
            // Settings and handlers that return the app itself, so a chain goes on through them
            // (`new Hono().post(..).onError(..)`, `app.set('x', y)`, Fastify's
            // `setErrorHandler`, Elysia's `onError` / `decorate`).
            "onError" | "notFound" | "setErrorHandler" | "setNotFoundHandler" | "decorate"
            | "decorateRequest" | "decorateReply" | "enable" | "disable" | "engine" | "param"
            | "state" | "derive" | "onBeforeHandle" | "onAfterHandle" | "onTransform"
            | "onParse" | "onAfterResponse"
                if matches!(receiver, Val::Router(_)) =>
            {
                Some(receiver.clone())
            }
            "set" if matches!(receiver, Val::Router(_)) && args.len() == 2 => {
                Some(receiver.clone())
            }
            _ if args.len() >= 2 => {
                self.helper_call(&receiver, (method, args), (&path_text, method_line), true)
            }
            _ => None,
        }
    }

    /// A call on a computed member (`router[method](path, handler)`): a registration for each
    /// route method the key stands for (`'post'`, `isNew ? 'post' : 'put'`), or, when the key is
    /// read only later (a helper's parameter, a route table's field), one whose method the linker
    /// reads.
    pub(super) fn computed_call(
        &mut self,
        c: &Chain,
        receiver: Val,
        key: Val,
        args: &[Val],
        arg_nodes: &[Node<'t>],
        node: Node<'t>,
    ) -> Option<Val> {
        let literal: Option<Vec<String>> = match &key {
            Val::Arr(items) => items.iter().map(|i| i.as_str().map(String::from)).collect(),
            k => k.as_str().map(|m| vec![m.to_string()]),
        };
        if let Some(methods) = literal {
            let mut registered = None;
            for m in methods {
                let link = Chain {
                    val: Val::Member(std::sync::Arc::new(receiver.clone()), m),
                    root: c.root.clone(),
                    root_name: c.root_name.clone(),
                    path: c.path.clone(),
                    hops: c.hops.clone(),
                    computed: None,
                    model: None,
                };
                registered = self
                    .router_call(&link, args, arg_nodes, node)
                    .or(registered);
            }
            return registered;
        }
        // Read later: only a key that may stand for a string, on a call shaped like a route.
        let symbolic = matches!(
            key,
            Val::Param(..) | Val::Member(..) | Val::Template(_) | Val::Element(_)
        );
        if args.len() < 2 {
            return None;
        }
        let receiver = match receiver {
            Val::This(Some(class)) => self.module.classes[class]
                .router
                .map(Val::Router)
                .unwrap_or(receiver),
            r => r,
        };
        // A key computed some other way (`app[segments[i].toLowerCase()](route, ..)`) on an app
        // or router of this file: a registration whose method cannot be read, which the linker
        // names in a diagnostic rather than dropping it unseen.
        let key = match key {
            k if symbolic => k,
            _ if matches!(receiver, Val::Router(_)) => Val::Unknown,
            _ => return None,
        };
        let target = self.target(&receiver, true)?;
        let mut rest = flatten(&args[1..]);
        let handler = rest.pop()?;
        let path_text = arg_nodes
            .first()
            .map(|n| self.text(*n).to_string())
            .unwrap_or_default();
        let method_line = node
            .child_by_field_name("function")
            .map(line)
            .unwrap_or_else(|| line(node));
        self.push_item(
            target,
            RouterItem::route(key, args[0].clone(), path_text, rest, handler, method_line),
        );
        Some(receiver)
    }

    /// Where a registration on `receiver` goes. Routers this file made are certain; a parameter
    /// or an import is kept only when the call looks like a route (`plausible`).
    pub(super) fn target(&mut self, receiver: &Val, plausible: bool) -> Option<Target> {
        // `imported.use(a).use(b)`: the second registration is on the import too.
        if let Val::Call(callee, _) = receiver
            && let Val::Member(inner, m) = callee.as_ref()
            && m == "use"
            && is_import_rooted(inner)
        {
            return self.target(inner, plausible);
        }
        match receiver {
            Val::Router(r) => Some(Target::Router(*r)),
            // A variable branches assign (see `join_branches`): the first branch's router.
            Val::Call(callee, args)
                if matches!(callee.as_ref(), Val::Global(g) if g == crate::program::EITHER)
                    && !args.is_empty() =>
            {
                self.target(&args[0], plausible)
            }
            Val::Param(..) | Val::Member(..) if plausible && param_fields(receiver).is_some() => {
                param_fields(receiver).map(|(f, slot)| Target::Param(f, slot))
            }
            // `this.app.post(..)` in a method of a class that keeps the app its constructor is
            // given (`constructor(private app: Application)`): a registration on the
            // constructor's parameter, made at each `new` of the class.
            Val::TypeRef(t) if plausible && is_server_type(t) => self.ctor_param_router(receiver),
            Val::Import { .. } | Val::Member(..) if plausible && is_import_rooted(receiver) => {
                Some(Target::Foreign(receiver.clone()))
            }
            // What a function of the project returns (`require('./router-async').create()`,
            // `makeRouter()`): the linker reads whether it is a router.
            Val::Call(callee, _)
                if plausible && (is_import_rooted(callee) || matches!(**callee, Val::Func(_))) =>
            {
                Some(Target::Foreign(receiver.clone()))
            }
            // An instance of a class another file exports (`new ApiRouter()`): the linker reads
            // whether the class is a router.
            Val::New(ctor, _) if plausible && is_import_rooted(ctor) => {
                Some(Target::Foreign(receiver.clone()))
            }
            // `this.app.use(..)` before the method that sets `this.app` was read: the linker
            // reads the field.
            Val::Member(..) if plausible && is_this_rooted(receiver) => {
                Some(Target::Foreign(receiver.clone()))
            }
            _ => None,
        }
    }

    /// The constructor parameter a field of `this` keeps, when `receiver` is that field's
    /// declared type and only one such field has it (see `target`).
    fn ctor_param_router(&self, receiver: &Val) -> Option<Target> {
        let class = &self.module.classes[self.this_class()?];
        let ctor = class.method("constructor")?;
        let typed = |field: &str| {
            class
                .fields
                .iter()
                .any(|(n, v)| n == field && v == receiver)
        };
        // `constructor(private app: Application)`, or `app: Application` assigned `this.app =
        // app` in the constructor
        let mut kept: Vec<usize> = class
            .ctor_params
            .iter()
            .filter(|(field, _)| typed(field))
            .map(|(_, i)| *i)
            .chain(class.fields.iter().filter_map(|(n, v)| match v {
                Val::Param(f, i) if *f == ctor && typed(n) => Some(*i),
                _ => None,
            }))
            .collect();
        kept.dedup();
        match kept[..] {
            [index] => Some(Target::Param(ctor, ParamSlot::at(index))),
            _ => None,
        }
    }

    pub(super) fn push_item(&mut self, target: Target, item: RouterItem) {
        match target {
            Target::Router(r) => match self.this_router_helper(r, &item) {
                Some((f, field)) => {
                    let item = self.helper_handler(f, item);
                    self.module.functions[f]
                        .param_items
                        .push((ParamSlot::this(&field), item))
                }
                None => {
                    // In a function nested in the one that makes the router.
                    let (f, made_in) = (self.cur_fn(), self.module.routers[r].made_in);
                    if f != made_in && self.inside(made_in) && item.names_param_of(f) {
                        self.module.functions[f]
                            .closure_items
                            .get_or_insert_default()
                            .push((r, item));
                    } else {
                        self.module.routers[r].items.push(item);
                    }
                }
            },
            Target::Param(f, slot) => self.module.functions[f].param_items.push((slot, item)),
            Target::Foreign(v) => self.module.foreign_items.push((v, item)),
        }
    }
}

impl Evaluator<'_, '_> {
    /// A registration on router `r` in a method (not the constructor) of a class one of whose
    /// fields holds `r`, whose method, path, handler or mounted values are the method's
    /// parameters (`route(options) { this.app[options.method](options.path, ..) }`): a helper
    /// that registers for its caller, on the router of the instance it is called on. The method
    /// and the field.
    fn this_router_helper(&self, r: RouterId, item: &RouterItem) -> Option<(FnId, String)> {
        let class = self.this_class()?;
        let f = self.cur_fn();
        let facts = &self.module.functions[f];
        if facts.class != Some(class) || facts.name.ends_with(".constructor") {
            return None;
        }
        let field = self.module.classes[class].router_field(r)?.to_string();
        item.names_param_of(f).then_some((f, field))
    }

    /// A helper's route whose handler is a wrapper its class makes from a parameter
    /// (`this.withErrors(options.handler)` returning a closure): the wrapping call, so that the
    /// linker finds the caller's handler among its arguments.
    fn helper_handler(&self, f: FnId, mut item: RouterItem) -> RouterItem {
        let RouterItem::Route { handler, .. } = &mut item else {
            return item;
        };
        let Val::Func(h) = handler else {
            return item;
        };
        let made = self.module.functions[f].calls.iter().rev().find(|cs| {
            matches!(&cs.callee, Val::Func(g)
                if self.module.functions.get(*g).is_some_and(|w| w.returns.contains(&Val::Func(*h))))
                && cs.args.iter().any(|a| names_param_of(a, f))
        });
        if let Some(cs) = made {
            *handler = Val::Call(std::sync::Arc::new(cs.callee.clone()), cs.args.clone());
        }
        item
    }
}

/// A Fastify plugin: a function, a reference to one in another file, or a wrapper call around one
/// (`fp(plugin)`, `import('./routes')`).
fn plugin_like(v: &Val) -> bool {
    match v {
        Val::Func(_) | Val::Import { .. } => true,
        Val::Member(..) => is_import_rooted(v),
        Val::Call(callee, args) => is_import_rooted(callee) || args.iter().any(plugin_like),
        _ => false,
    }
}

/// An app a package wraps and hands back (`websockify(new Koa())` from koa-websocket): what is
/// mounted on the wrapper is mounted on the app.
fn wrapped_app(v: &Val) -> Option<RouterId> {
    let Val::Call(callee, args) = v else {
        return None;
    };
    let package = matches!(callee.as_ref(), Val::Import { spec, .. } if is_package_spec(spec));
    match args.first() {
        Some(Val::Router(r)) if package => Some(*r),
        _ => None,
    }
}

fn is_this_rooted(v: &Val) -> bool {
    match v {
        Val::Member(inner, _) => {
            matches!(inner.as_ref(), Val::This(Some(_))) || is_this_rooted(inner)
        }
        _ => false,
    }
}

fn is_import_rooted(v: &Val) -> bool {
    match v {
        Val::Import { .. } => true,
        Val::Member(inner, _) => is_import_rooted(inner),
        _ => false,
    }
}

/// A type a server package declares for its app or router (`Application` and `Router` of
/// express, `FastifyInstance`, `Hono`, Koa's): a field of that type receives routes.
fn is_server_type(t: &Val) -> bool {
    matches!(t, Val::Import { spec, .. } if matches!(
        spec.as_str(),
        "express"
            | "express-serve-static-core"
            | "koa"
            | "koa-router"
            | "@koa/router"
            | "fastify"
            | "hono"
            | "polka"
            | "restify"
    ))
}
