//! NestJS: `@Controller` classes with `@Post()`-style method decorators are routers; interceptors
//! and guards are middleware; `@Headers('idempotency-key')` is a key read; the bootstrap file's
//! `setGlobalPrefix` / `enableVersioning` / `useGlobalInterceptors` apply to every controller.

use super::eval::{Evaluator, line};
use crate::program::*;
use tree_sitter::Node;

const ROUTE_DECORATORS: &[(&str, &str)] = &[
    ("Get", "get"),
    ("Post", "post"),
    ("Put", "put"),
    ("Patch", "patch"),
    ("Delete", "delete"),
    ("Head", "head"),
    ("All", "all"),
];

type Decorator = DecoratorFacts;

fn nest_name(v: &Val, written: &str) -> String {
    match v {
        Val::Import {
            spec,
            name: Some(n),
        } if spec.starts_with("@nestjs/") => n.clone(),
        _ => written.to_string(),
    }
}

impl<'t> Evaluator<'t, '_> {
    /// A decorator's name (the imported name when it comes from a package) and arguments.
    pub(super) fn decorator(&mut self, node: Node<'t>) -> Option<Decorator> {
        let expr = node.named_child(0)?;
        let (callee, args) = match expr.kind() {
            "call_expression" => {
                let f = expr.child_by_field_name("function")?;
                let mut args = Vec::new();
                if let Some(a) = expr.child_by_field_name("arguments") {
                    let mut cursor = a.walk();
                    let nodes: Vec<Node<'t>> = a.named_children(&mut cursor).collect();
                    for n in nodes {
                        args.push(self.eval(n));
                    }
                }
                (f, args)
            }
            _ => (expr, vec![]),
        };
        let written = self
            .text(callee)
            .rsplit('.')
            .next()
            .unwrap_or("")
            .to_string();
        let v = self.eval(callee);
        Some(Decorator {
            name: nest_name(&v, &written),
            callee: v,
            args,
            line: line(node),
        })
    }

    pub(super) fn decorators_of(&mut self, nodes: &[Node<'t>]) -> Vec<Decorator> {
        nodes.iter().filter_map(|n| self.decorator(*n)).collect()
    }

    /// Class decorators sit on the class, or on the `export` statement around it.
    pub(super) fn class_decorator_nodes(&self, class: Node<'t>) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        for n in [
            Some(class),
            class.parent().filter(|p| p.kind() == "export_statement"),
        ]
        .into_iter()
        .flatten()
        {
            let mut cursor = n.walk();
            out.extend(n.children(&mut cursor).filter(|c| c.kind() == "decorator"));
        }
        out
    }

    pub(super) fn nest_controller(
        &mut self,
        class: Node<'t>,
        class_id: ClassId,
        methods: &[(FnId, Vec<Decorator>)],
    ) {
        let class_decorators = self.class_decorator_nodes(class);
        if class_decorators.is_empty() {
            return;
        }
        let decorators = self.decorators_of(&class_decorators);
        // NestJS `@Controller`; routing-controllers `@Controller` / `@JsonController`; tsoa
        // `@Route('users')`: the same shape, a class prefix and method decorators.
        let controller = decorators.iter().find_map(|d| {
            match (d.name.as_str(), decorator_spec(&d.callee).unwrap_or("")) {
                ("Controller" | "JsonController", "routing-controllers") => {
                    Some((d, "routing-controllers"))
                }
                ("Route", "tsoa" | "@tsoa/runtime") => Some((d, "tsoa")),
                ("Controller", "@overnightjs/core") => Some((d, "overnightjs")),
                // inversify-express-utils `@controller('/path', ...middleware)`
                ("controller", "inversify-express-utils") => Some((d, "inversify-express-utils")),
                ("Controller", _) => Some((d, "nestjs")),
                _ => None,
            }
        });
        // A class decorator of the project's own, named like one (`@ApiController('says')`, a
        // function that calls `Controller(..)` with a path it builds), on a class whose methods
        // carry Nest's route decorators: a controller all the same. Its argument is the part
        // of the prefix the code shows; what the wrapper adds is not read, so its paths are
        // partial (an unknown part first).
        let wrapped = controller.is_none();
        let controller = controller.or_else(|| {
            let nest_routes = methods.iter().any(|(_, ds)| {
                ds.iter().any(|d| {
                    ROUTE_DECORATORS.iter().any(|(n, _)| *n == d.name)
                        && from_package(&d.callee) == Some("@nestjs/common")
                })
            });
            let wrapper = decorators.iter().find(|d| {
                d.name.len() > "Controller".len()
                    && d.name.ends_with("Controller")
                    && from_package(&d.callee).is_none()
            })?;
            nest_routes.then_some((wrapper, "nestjs"))
        });
        let Some((controller, framework)) = controller else {
            return;
        };
        let mut router = RouterFacts::new(RouterKind::NestController, framework, controller.line);
        router.name = self.module.classes[class_id].name.clone();
        match controller.args.first() {
            Some(Val::Obj(fields)) => {
                for (k, v) in fields {
                    match k.as_str() {
                        "path" => router.prefixes = flatten_paths(v),
                        "version" => router.version = Some(v.clone()),
                        _ => {}
                    }
                }
            }
            Some(v) => router.prefixes = flatten_paths(v),
            None => {}
        }
        if router.prefixes.is_empty() {
            router.prefixes.push(Val::Str(String::new()));
        }
        // The wrapper's own part is the router's prefix, not known; the argument is written
        // before each route's path.
        let route_prefixes = if wrapped {
            // (The decorator's call stands for the unknown part, and names it in diagnostics.)
            let call = Val::Call(
                std::sync::Arc::new(controller.callee.clone()),
                controller.args.clone(),
            );
            std::mem::replace(&mut router.prefixes, vec![call])
        } else {
            vec![Val::Str(String::new())]
        };
        // inversify-express-utils: the controller's middleware follow its path.
        if framework == "inversify-express-utils" {
            router
                .middleware
                .extend(controller.args.iter().skip(1).cloned());
        }
        for d in &decorators {
            match d.name.as_str() {
                // OvernightJS `@ClassMiddleware(fn)` too.
                "UseInterceptors" | "UseGuards" | "UseBefore" | "ClassMiddleware" => {
                    router.middleware.extend(d.args.iter().cloned());
                }
                // OvernightJS `@ChildControllers([new Users(), ..])`: controllers served under
                // this one's path (read by the linker).
                "ChildControllers" if framework == "overnightjs" => {
                    router.items.push(RouterItem::Use {
                        path: None,
                        path_text: String::new(),
                        args: crate::program::flatten(&d.args),
                        line: d.line,
                    });
                }
                _ => {}
            }
        }
        let inversify = framework == "inversify-express-utils";
        for (f, ds) in methods {
            let routes: Vec<(&Decorator, &str)> = ds
                .iter()
                .filter_map(|d| {
                    if inversify {
                        return inversify_route(d).map(|m| (d, m));
                    }
                    ROUTE_DECORATORS
                        .iter()
                        .find(|(n, _)| *n == d.name)
                        .map(|(_, m)| (d, *m))
                })
                .collect();
            // OvernightJS registers the method at each of its route decorators (`@Post()
            // @Post('track')`); Nest keeps one.
            let take = if framework == "overnightjs" {
                routes.len()
            } else {
                1
            };
            let mut middleware = Vec::new();
            let mut version = None;
            // inversify-express-utils `@httpPost('/path', ...middleware)`, `@httpMethod('post',
            // '/path', ...middleware)`: the middleware follow the path.
            if let Some((route, _)) = routes.first().filter(|_| inversify) {
                let skip = if route.name == "httpMethod" { 2 } else { 1 };
                middleware.extend(route.args.iter().skip(skip).cloned());
            }
            for d in ds {
                match d.name.as_str() {
                    // OvernightJS `@Middleware(fn)` too.
                    "UseInterceptors" | "UseGuards" | "UseBefore" | "Middleware" => {
                        middleware.extend(d.args.iter().cloned())
                    }
                    "Version" => version = d.args.first().cloned(),
                    _ => {}
                }
            }
            for ((route, method), known) in routes
                .into_iter()
                .take(take)
                .flat_map(|r| route_prefixes.iter().map(move |p| (r, p)))
            {
                let path = route
                    .args
                    .get(usize::from(inversify && route.name == "httpMethod"))
                    .cloned()
                    .unwrap_or(Val::Str(String::new()));
                router.items.push(
                    RouterItem::route(
                        Val::Str(method.into()),
                        join_path(known, path),
                        String::new(),
                        middleware.clone(),
                        Val::Func(*f),
                        route.line,
                    )
                    .with_version(version.clone()),
                );
            }
        }
        self.module.routers.push(router);
    }

    /// `@Headers('idempotency-key') key: string` reads the key; `@Param('id') id` binds a path
    /// parameter (see `FnFacts::path_params`).
    pub(super) fn param_decorators(&mut self, param: Node<'t>, f: FnId, index: usize) {
        let mut cursor = param.walk();
        let nodes: Vec<Node<'t>> = param
            .children(&mut cursor)
            .filter(|c| c.kind() == "decorator")
            .collect();
        for d in self.decorators_of(&nodes) {
            // Nest `@Headers(h)`, routing-controllers `@HeaderParam(h)`, tsoa `@Header(h)`.
            if matches!(d.name.as_str(), "Headers" | "HeaderParam" | "Header")
                && let Some(Val::Str(h)) = d.args.first()
                && self.catalog.is_key_header(h)
            {
                self.module.functions[f].key_reads.push((h.clone(), d.line));
            }
            if binds_path_param(&d.name)
                && let Some(Val::Str(name)) = d.args.first()
            {
                self.module.functions[f]
                    .path_params
                    .push((index, name.clone()));
            }
        }
    }

    /// `StripeModule.forRoot(StripeModule, { webhookConfig })` of `@golevelup/nestjs-stripe` (a
    /// `[[controller]]` of `rules/webhooks.toml`): the package's own webhook controller, a Nest
    /// controller at the option's prefix (its default where the options the code shows do not
    /// set it) whose one route runs the methods the package's decorator marks. The route's
    /// handler is that decorator, which the linker reads as those methods.
    pub(super) fn package_controller_call(
        &mut self,
        c: &super::eval::Chain,
        args: &[Val],
        node: Node<'t>,
    ) {
        let Val::Member(module, call) = &c.val else {
            return;
        };
        let Val::Import {
            spec,
            name: Some(export),
        } = module.as_ref()
        else {
            return;
        };
        let Some(entry) = self.catalog.package_controller(spec, export, call) else {
            return;
        };
        // The options: the object given (`forRoot(StripeModule, { .. })`), or what a factory
        // written here returns (`forRootAsync({ useFactory: () => ({ .. }) })`).
        // Where they are all in view and none configures webhooks, the import is the client's
        // only.
        let mut options: Vec<Val> = Vec::new();
        let mut in_view = true;
        for a in args {
            // (`useClass: StripeConfig`, `useExisting`: options a class gives)
            if ["useClass", "useExisting"]
                .iter()
                .any(|k| crate::program::field(a, k).is_some())
            {
                in_view = false;
            }
            match crate::program::field(a, "useFactory") {
                Some(Val::Func(f)) => {
                    let returns = &self.module.functions[f].returns;
                    // (`(config) => config.get('stripe')`: not a literal)
                    in_view &=
                        !returns.is_empty() && returns.iter().all(|r| matches!(r, Val::Obj(_)));
                    options.extend(returns.iter().cloned())
                }
                Some(_) => in_view = false,
                None if matches!(a, Val::Obj(_)) => options.push(a.clone()),
                // (`forRoot(StripeModule, ..)` names the module first)
                None if matches!(a, Val::Import { .. }) => {}
                None => in_view = false,
            }
        }
        if in_view
            && !options
                .iter()
                .any(|o| crate::program::field(o, &entry.requires_option).is_some())
        {
            return;
        }
        let prefix = options
            .iter()
            .find_map(|o| {
                entry
                    .prefix_option
                    .split('.')
                    .try_fold(o.clone(), |v, k| crate::program::field(&v, k))
            })
            .unwrap_or_else(|| Val::Str(entry.default_prefix.clone()));
        let l = line(node);
        let name = format!("{export} webhook controller");
        if self
            .module
            .routers
            .iter()
            .any(|r| r.line == l && r.name == name)
        {
            return;
        }
        let mut router = RouterFacts::new(RouterKind::NestController, "nestjs", l);
        router.name = name;
        router.prefixes.push(prefix);
        router.items.push(RouterItem::route(
            Val::Str(entry.method.clone()),
            Val::Str(entry.path.clone()),
            String::new(),
            Vec::new(),
            Val::Import {
                spec: spec.clone(),
                name: Some(entry.handler_decorator.clone()),
            },
            l,
        ));
        self.module.routers.push(router);
    }

    /// `app.setGlobalPrefix`, `app.enableVersioning`, `app.useGlobalInterceptors` in a bootstrap.
    pub(super) fn nest_bootstrap_call(
        &mut self,
        c: &super::eval::Chain,
        args: &[Val],
        node: Node<'t>,
    ) {
        let Some(method) = c.path.last() else { return };
        let l = line(node);
        fn boot(module: &mut Module, l: u32) -> &mut NestBootstrap {
            module.nest_bootstrap.get_or_insert_with(|| NestBootstrap {
                line: l,
                ..Default::default()
            })
        }
        match method.as_str() {
            // `NestFactory.create(AppModule, ..)`
            "create" if c.root_name == "NestFactory" && c.path.len() == 1 && !args.is_empty() => {
                boot(&mut self.module, l).root_module = Some(args[0].clone());
            }
            "setGlobalPrefix" if !args.is_empty() => {
                let exclude = args
                    .get(1)
                    .and_then(|o| crate::program::field(o, "exclude"))
                    .map(|e| crate::program::flatten(&[e]))
                    .unwrap_or_default();
                let text = node
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0))
                    .map(|a| self.short_text(a))
                    .unwrap_or_default();
                let b = boot(&mut self.module, l);
                b.global_prefix = Some(args[0].clone());
                b.global_prefix_text = text;
                b.global_prefix_line = l;
                b.exclude = exclude;
            }
            "enableVersioning" => {
                let opts = args.first().cloned().unwrap_or(Val::Unknown);
                let is_uri = match crate::program::field(&opts, "type") {
                    Some(Val::Member(_, t)) => t == "URI",
                    None => true, // URI is Nest's default versioning type
                    _ => false,
                };
                if is_uri {
                    let prefix = match crate::program::field(&opts, "prefix") {
                        Some(p) if p.as_str().is_some() => p.as_str().unwrap_or_default().into(),
                        // `prefix: false`: the version alone is the segment.
                        Some(Val::Bool(false)) => String::new(),
                        _ => "v".into(),
                    };
                    let default = crate::program::field(&opts, "defaultVersion");
                    boot(&mut self.module, l).versioning = Some((prefix, default));
                }
            }
            "useGlobalInterceptors" | "useGlobalGuards" => {
                boot(&mut self.module, l)
                    .interceptors
                    .extend(args.iter().cloned());
            }
            _ => {}
        }
    }
}

/// An inversify-express-utils route decorator (`@httpPost(path, ..)`, `@all(path)`,
/// `@httpMethod('post', path)`) and the method it serves.
fn inversify_route(d: &Decorator) -> Option<&'static str> {
    if decorator_spec(&d.callee) != Some("inversify-express-utils") {
        return None;
    }
    match (d.name.as_str(), d.args.first()) {
        ("all", _) => Some("all"),
        ("httpMethod", Some(Val::Str(m))) => Some(
            ROUTE_DECORATORS
                .iter()
                .map(|(_, method)| *method)
                .find(|method| method.eq_ignore_ascii_case(m))
                .unwrap_or("all"),
        ),
        ("httpMethod", _) => Some("all"),
        // `httpGet` .. `httpHead`: Nest's names after `http`.
        (name, _) => {
            let nest = name.strip_prefix("http")?;
            ROUTE_DECORATORS
                .iter()
                .find(|(n, _)| *n == nest)
                .map(|(_, method)| *method)
        }
    }
}

fn flatten_paths(v: &Val) -> Vec<Val> {
    match v {
        Val::Arr(items) => items.clone(),
        v => vec![v.clone()],
    }
}

/// Where a decorator (`@Post`, `@Post()`) is imported from.
fn decorator_spec(callee: &Val) -> Option<&str> {
    match callee {
        Val::Import { spec, .. } => Some(spec),
        Val::Call(c, _) => match c.as_ref() {
            Val::Import { spec, .. } => Some(spec),
            _ => None,
        },
        _ => None,
    }
}

/// The package a decorator comes from (`@nestjs/common` for `@Post()`), or None for one the
/// project defines (imported by a relative or aliased path) or defines in the file.
fn from_package(callee: &Val) -> Option<&str> {
    decorator_spec(callee).filter(|spec| is_package_spec(spec))
}

/// `known` written before a route's `path` (both as the code gives them).
fn join_path(known: &Val, path: Val) -> Val {
    match (known, &path) {
        (Val::Str(k), _) if k.is_empty() => path,
        (Val::Str(k), Val::Str(p)) => Val::Str(format!(
            "{}/{}",
            k.trim_end_matches('/'),
            p.trim_start_matches('/')
        )),
        _ => Val::Template(vec![known.clone(), Val::Str("/".into()), path]),
    }
}

/// A parameter decorator that binds one path parameter: Nest's and routing-controllers'
/// `@Param('id')`, tsoa's `@Path('id')`, and a project's own decorator named for one
/// (`@UuidParam('id')`), not those of the query, headers, body, cookies or session.
fn binds_path_param(name: &str) -> bool {
    matches!(name, "Param" | "Path" | "PathParam")
        || (name.ends_with("Param")
            && ![
                "Query", "Header", "Body", "Cookie", "Session", "Req", "State", "Ctx",
            ]
            .iter()
            .any(|p| name.starts_with(p)))
}
