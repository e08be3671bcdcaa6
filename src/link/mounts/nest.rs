//! NestJS controllers under the bootstrap that serves them: the global prefix (a literal, a
//! constant, or a configuration value read through `ConfigService`), its `exclude` list (paths
//! and methods), and URI versioning (controller and route versions, `defaultVersion`,
//! `VERSION_NEUTRAL`, arrays of versions, the version `prefix`).

use super::{Key, Mounter, RawRoute, code, dir_of, normalize_path};
use crate::facts::{Diagnostic, Protocol};
use crate::link::resolve::{ModId, Resolved};
use crate::program::field;
use crate::program::{FnId, NestBootstrap, RouterItem, RouterKind, Val};
use std::collections::{HashMap, HashSet};

/// A configuration factory: `registerAs('app', () => ({ .. }))` (its namespace) or a plain
/// function in `ConfigModule.forRoot({ load: [..] })` (no namespace).
#[derive(Debug, Clone)]
pub(super) struct ConfigFactory {
    namespace: Option<String>,
    module: ModId,
    function: FnId,
}

/// What a configuration read (`configService.get('app.apiPrefix')`) gives.
struct ConfigValue {
    value: String,
    /// The environment read whose default it is (`process.env.API_PREFIX`), if it is one.
    env: Option<String>,
    /// The key, and where a factory sets it (its file and line).
    source: String,
}

/// An `exclude` entry of `setGlobalPrefix`: a path pattern, and the methods it excludes (None:
/// every method).
struct Exclusion {
    pattern: String,
    methods: Option<Vec<String>>,
}

/// Does a path-to-regexp pattern (`health`, `users/:id`, `cats/*splat`, `cats/{*splat}`,
/// `cats/(.*)`) match a route path? Both are normalized (`:id` is `{id}`).
fn pattern_matches(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let mut i = 0;
    for (k, p) in pat.iter().enumerate() {
        let last = k == pat.len() - 1;
        // Wildcards that take the rest: `{*splat}` and `(.*)` also nothing, `*splat` and `*` one
        // segment or more.
        if last && (p.starts_with("{*") || *p == "(.*)" || *p == "{(.*)}") {
            return true;
        }
        if last && p.starts_with('*') {
            return segs.len() > i;
        }
        let Some(s) = segs.get(i) else {
            return false;
        };
        let param = p.starts_with('{') && p.ends_with('}');
        if !param && p != s {
            return false;
        }
        i += 1;
    }
    i == segs.len()
}

/// `RequestMethod.POST` as a method name; `ALL` is every method (None).
fn request_method(v: &Val) -> Option<Option<String>> {
    match v {
        Val::Member(_, m) if m == "ALL" => Some(None),
        Val::Member(_, m) => Some(Some(m.to_ascii_uppercase())),
        _ => None,
    }
}

/// `VERSION_NEUTRAL` from `@nestjs/common`.
fn version_neutral(v: &Val) -> bool {
    match v {
        Val::Import {
            spec,
            name: Some(n),
        } => spec.starts_with("@nestjs/") && n == "VERSION_NEUTRAL",
        Val::Member(inner, n) => {
            n == "VERSION_NEUTRAL"
                && matches!(inner.as_ref(), Val::Import { spec, .. } if spec.starts_with("@nestjs/"))
        }
        _ => false,
    }
}

/// An import of `ConfigService` from `@nestjs/config` somewhere in a value (`app.get(ConfigService)`).
fn names_config_service(v: &Val, depth: usize) -> bool {
    if depth > 6 {
        return false;
    }
    match v {
        Val::Import {
            spec,
            name: Some(n),
        } => spec == "@nestjs/config" && n == "ConfigService",
        Val::Call(callee, args) => {
            names_config_service(callee, depth + 1)
                || args.iter().any(|a| names_config_service(a, depth + 1))
        }
        Val::TypeRef(inner) | Val::New(inner, _) => names_config_service(inner, depth + 1),
        _ => false,
    }
}

impl Mounter<'_> {
    /// The bootstrap that serves a controller: the one in the nearest enclosing folder.
    pub(super) fn bootstrap_for(&self, file: &str) -> Option<ModId> {
        let modules = self.modules();
        modules
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                m.nest_bootstrap.as_ref().is_some_and(|b| b.configures()) && !m.is_test
            })
            .map(|(i, _)| i)
            .filter(|i| {
                let d = dir_of(&modules[*i].file);
                let d = d.strip_suffix("/src").unwrap_or(d);
                d.is_empty() || file.starts_with(&format!("{d}/"))
            })
            .max_by_key(|i| dir_of(&modules[*i].file).len())
    }

    /// The bootstrap whose application's root module imports, directly or through other
    /// modules, the module that lists controller `name` of module `m` (a controller of a library
    /// folder that an app's `AppModule` imports): the first such bootstrap of the tree.
    pub(super) fn bootstrap_importing(&mut self, m: ModId, name: &str) -> Option<ModId> {
        if self.nest_served.is_none() {
            let served = self.nest_served_map();
            self.nest_served = Some(served);
        }
        self.nest_served
            .as_ref()
            .and_then(|s| s.get(&(m, name.to_string())).copied())
    }

    fn nest_served_map(&self) -> HashMap<(ModId, String), ModId> {
        let modules = self.modules();
        let mut out: HashMap<(ModId, String), ModId> = HashMap::new();
        // (a class of a module, when it is one: `AppModule`, `BillingModule.forRoot(..)`)
        let class_of = |m: ModId, v: &Val| -> Option<(ModId, usize)> {
            let v = match v {
                Val::Call(callee, _) => match callee.as_ref() {
                    Val::Member(base, _) => base.as_ref(),
                    _ => return None,
                },
                v => v,
            };
            match self.resolve(m, v) {
                Resolved::Class(cm, ck) => Some((cm, ck)),
                _ => None,
            }
        };
        for (bm, module) in modules.iter().enumerate() {
            let Some(boot) = module.nest_bootstrap.as_ref().filter(|_| !module.is_test) else {
                continue;
            };
            let Some(root) = boot.root_module.as_ref() else {
                continue;
            };
            // (the application is configured where it is made, or by a bootstrap module in a
            // folder around it: `configureVersioning(app)` of an `app.provider.ts`)
            let serving = if boot.configures() {
                Some(bm)
            } else {
                self.bootstrap_for(&module.file)
            };
            let Some(serving) = serving else {
                continue;
            };
            let mut stack: Vec<(ModId, usize)> = class_of(bm, root).into_iter().collect();
            let mut seen: HashSet<(ModId, usize)> = HashSet::new();
            while let Some((km, k)) = stack.pop() {
                if !seen.insert((km, k)) || seen.len() > 4096 {
                    continue;
                }
                for d in modules[km].classes[k]
                    .decorators
                    .iter()
                    .filter(|d| d.name == "Module")
                {
                    let Some(options) = d.args.first() else {
                        continue;
                    };
                    if let Some(Val::Arr(controllers)) = field(options, "controllers") {
                        for c in &controllers {
                            if let Resolved::Class(cm, ck) = self.resolve(km, c) {
                                out.entry((cm, modules[cm].classes[ck].name.clone()))
                                    .or_insert(serving);
                            }
                        }
                    }
                    if let Some(Val::Arr(imports)) = field(options, "imports") {
                        stack.extend(imports.iter().filter_map(|i| class_of(km, i)));
                    }
                }
            }
        }
        out
    }

    /// Every configuration factory of the tree: `registerAs(namespace, factory)` calls, and the
    /// plain functions `ConfigModule.forRoot({ load })` lists.
    fn config_factories(&mut self) -> Vec<ConfigFactory> {
        if let Some(f) = &self.nest_config {
            return f.clone();
        }
        let mut named: Vec<ConfigFactory> = Vec::new();
        let mut loaded: Vec<(ModId, FnId)> = Vec::new();
        for (m, module) in self.modules().iter().enumerate() {
            if module.is_test {
                continue;
            }
            for facts in &module.functions {
                for cs in &facts.calls {
                    let Resolved::Package { spec, name, path } = self.res.resolve(m, &cs.callee)
                    else {
                        continue;
                    };
                    if spec != "@nestjs/config" {
                        continue;
                    }
                    match (name.as_deref(), path.as_slice()) {
                        (Some("registerAs"), []) => {
                            if let (Some(ns), Some(f)) = (
                                cs.args.first().and_then(|a| self.strings(m, a)),
                                cs.args.get(1),
                            ) && let Resolved::Func(fm, ff) = self.res.resolve(m, f)
                            {
                                for namespace in ns {
                                    named.push(ConfigFactory {
                                        namespace: Some(namespace),
                                        module: fm,
                                        function: ff,
                                    });
                                }
                            }
                        }
                        (Some("ConfigModule"), [call]) if call == "forRoot" => {
                            let Some(Val::Arr(load)) =
                                cs.args.first().and_then(|o| field(o, "load"))
                            else {
                                continue;
                            };
                            for item in &load {
                                if let Resolved::Func(fm, ff) = self.res.resolve(m, item) {
                                    loaded.push((fm, ff));
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        // A `registerAs` factory listed in `load` is read under its namespace only.
        loaded.retain(|(fm, ff)| !named.iter().any(|n| (n.module, n.function) == (*fm, *ff)));
        let mut all = named;
        all.extend(loaded.into_iter().map(|(module, function)| ConfigFactory {
            namespace: None,
            module,
            function,
        }));
        all.sort_by_key(|f| (f.module, f.function, f.namespace.clone()));
        all.dedup_by(|a, b| {
            (a.module, a.function, &a.namespace) == (b.module, b.function, &b.namespace)
        });
        self.nest_config = Some(all.clone());
        all
    }

    /// `configService.get('app.apiPrefix')`, `getOrThrow(.., { infer: true })`,
    /// `get('API_PREFIX', 'api')`, `get('app').apiPrefix`: the key read, and a default given to
    /// the read.
    fn config_read(&self, m: ModId, v: &Val) -> Option<(Vec<String>, Option<Val>)> {
        match v {
            Val::Member(inner, p) => {
                let (mut key, default) = self.config_read(m, inner)?;
                key.push(p.clone());
                Some((key, default))
            }
            Val::Call(callee, args) => {
                let Val::Member(receiver, method) = callee.as_ref() else {
                    return None;
                };
                if !matches!(method.as_str(), "get" | "getOrThrow") {
                    return None;
                }
                let config_service = names_config_service(receiver, 0)
                    || self.res.origin(m, receiver).is_some_and(|(spec, name, _)| {
                        spec == "@nestjs/config" && name.as_deref() == Some("ConfigService")
                    });
                if !config_service {
                    return None;
                }
                let key = self.strings(m, args.first()?)?.into_iter().next()?;
                let default = args.get(1).filter(|d| !matches!(d, Val::Obj(_))).cloned();
                Some((key.split('.').map(String::from).collect(), default))
            }
            _ => None,
        }
    }

    /// The value a configuration read stands for: a factory's field (and whether it is an
    /// environment read's default), or, when no factory sets the key, the environment variable
    /// of that name (`ConfigService` reads `process.env` too) at the read's own default.
    fn config_value(&mut self, m: ModId, v: &Val) -> Option<ConfigValue> {
        let (key, default) = self.config_read(m, v)?;
        // The factories nearest the read first: in a monorepo each app registers its own `app`
        // namespace (`apps/main/src/config`, `apps/gateway/src/config`).
        let mut factories = self.config_factories();
        let file = self.modules()[m].file.clone();
        factories
            .sort_by_key(|f| std::cmp::Reverse(common_dirs(&file, &self.modules()[f.module].file)));
        for factory in factories {
            let path: &[String] = match &factory.namespace {
                Some(ns) if key.first() == Some(ns) => &key[1..],
                Some(_) => continue,
                None => &key,
            };
            if path.is_empty() {
                continue;
            }
            let facts = &self.modules()[factory.module].functions[factory.function];
            for r in &facts.returns {
                let Resolved::Obj(mut om, mut fields) = self.res.resolve(factory.module, r) else {
                    continue;
                };
                let mut found = None;
                for (i, name) in path.iter().enumerate() {
                    let Some((_, fv)) = fields.iter().rev().find(|(k, _)| k == name).cloned()
                    else {
                        break;
                    };
                    if i + 1 == path.len() {
                        found = Some(fv);
                        break;
                    }
                    match self.res.resolve(om, &fv) {
                        Resolved::Obj(m2, f2) => (om, fields) = (m2, f2),
                        _ => break,
                    }
                }
                let Some(fv) = found else { continue };
                let mut env = Vec::new();
                let value = self.strings_noting(om, &fv, &mut env)?.into_iter().next()?;
                let module = &self.modules()[factory.module];
                return Some(ConfigValue {
                    value,
                    env: env.into_iter().next().map(|(var, ..)| var),
                    source: format!(
                        "`{}` ({}:{})",
                        key.join("."),
                        module.file,
                        module.functions[factory.function].line
                    ),
                });
            }
        }
        // No factory sets it: the environment variable itself.
        let value = self.strings(m, &default?)?.into_iter().next()?;
        Some(ConfigValue {
            value,
            env: Some(format!("process.env.{}", key.join("."))),
            source: format!("`{}`", key.join(".")),
        })
    }

    /// A template whose holes are configuration reads or strings, as one configuration value: the
    /// pieces joined, the first environment variable a piece reads, every source named.
    fn config_template(&mut self, m: ModId, parts: &[Val]) -> Option<ConfigValue> {
        let (mut value, mut env, mut sources) = (String::new(), None, Vec::new());
        let mut read = false;
        for part in parts {
            match self.config_value(m, part) {
                Some(c) => {
                    value.push_str(&c.value);
                    env = env.or(c.env);
                    sources.push(c.source);
                    read = true;
                }
                None => {
                    let [s] = self.strings(m, part)?.try_into().ok()?;
                    value.push_str(&s);
                }
            }
        }
        read.then(|| ConfigValue {
            value,
            env,
            source: sources.join(" and "),
        })
    }

    /// The global prefix of a bootstrap: a literal or a constant, or a configuration value, with
    /// a diagnostic when it is a default the deployment may change or when it cannot be read
    /// (the routes are then listed without it, or under the prefix `[[mount]]` gives). False
    /// beside it when it could not be read.
    pub(super) fn global_prefix(&mut self, bm: ModId, b: &NestBootstrap) -> (String, bool) {
        let Some(g) = &b.global_prefix else {
            return (String::new(), true);
        };
        let (line, text) = (b.global_prefix_line, code(&b.global_prefix_text));
        let what = format!("the global prefix {text}");
        // (what `[[mount]]` says first: the project's word over a default or an example file)
        if let Some(configured) = self.configured(bm, line, &b.global_prefix_text) {
            return (configured, true);
        }
        if let Some(list) = self.strings_at(bm, g, line, &what) {
            return (list.into_iter().next().unwrap_or_default(), true);
        }
        let file = self.modules()[bm].file.clone();
        // (or a template around one: `` `api/${config.get('app.apiVersion')}` ``)
        let config = match g {
            Val::Template(parts) => self.config_template(bm, parts),
            _ => self.config_value(bm, g),
        };
        if let Some(c) = config {
            if let Some(var) = &c.env {
                self.diagnostics.push(Diagnostic::new(
                    file,
                    line,
                    format!(
                        "{what} is the configuration {}, which reads `{var}` from the environment: the routes are listed under its default `{}`, which the deployment may change",
                        c.source, c.value
                    ),
                ));
            }
            return (c.value, true);
        }
        self.diagnostics.push(Diagnostic::new(
            file.clone(),
            line,
            format!(
                "{what} is not statically known: the controllers' routes are listed without it and marked `path_complete: false` (give it in retrysafe.toml: [[mount]] file = \"{file}\", line = {line}, prefix = \"/…\")"
            ),
        ));
        (String::new(), false)
    }

    fn exclusions(&self, bm: ModId, b: &NestBootstrap) -> Vec<Exclusion> {
        let mut out = Vec::new();
        for e in &b.exclude {
            let (paths, methods) = match self.strings(bm, e) {
                Some(p) => (p, None),
                None => {
                    let Some(p) = field(e, "path").and_then(|p| self.strings(bm, &p)) else {
                        continue;
                    };
                    // `RequestMethod.ALL`, or a method this cannot read, excludes every method.
                    let methods = match field(e, "method") {
                        None => None,
                        Some(Val::Arr(items)) => items
                            .iter()
                            .map(|i| request_method(i).flatten())
                            .collect::<Option<Vec<String>>>(),
                        Some(m) => request_method(&m).flatten().map(|x| vec![x]),
                    };
                    (p, methods)
                }
            };
            for p in paths {
                out.push(Exclusion {
                    pattern: normalize_path("", &p),
                    methods: methods.clone(),
                });
            }
        }
        out
    }

    /// The path segments a version value gives under URI versioning: `'1'` → `v1`,
    /// `VERSION_NEUTRAL` → none, an array → each; None when it cannot be read.
    fn version_segments(&self, m: ModId, v: &Val, prefix: &str) -> Option<Vec<String>> {
        if version_neutral(v) {
            return Some(vec![String::new()]);
        }
        if let Val::Arr(items) = v {
            let mut out = Vec::new();
            for i in items {
                out.extend(self.version_segments(m, i, prefix)?);
            }
            return Some(out);
        }
        let list = self.strings(m, v)?;
        Some(list.into_iter().map(|s| format!("{prefix}{s}")).collect())
    }

    /// routing-controllers: the `routePrefix` of the `useExpressServer(app, { routePrefix,
    /// controllers })` (or `createExpressServer`, `useKoaServer`, `createKoaServer`) whose
    /// `controllers` list class `name` of module `m`, or a glob of files; false beside it when it
    /// could not be read.
    fn route_prefix(&mut self, m: ModId, name: &str) -> (String, bool) {
        let modules = self.modules();
        for (cm, module) in modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            for facts in &module.functions {
                for cs in &facts.calls {
                    let Resolved::Package { spec, name: f, .. } = self.res.resolve(cm, &cs.callee)
                    else {
                        continue;
                    };
                    let index = match (spec.as_str(), f.as_deref()) {
                        ("routing-controllers", Some("useExpressServer" | "useKoaServer")) => 1,
                        (
                            "routing-controllers",
                            Some("createExpressServer" | "createKoaServer"),
                        ) => 0,
                        _ => continue,
                    };
                    let Some(opts) = cs.args.get(index) else {
                        continue;
                    };
                    let lists = match field(opts, "controllers") {
                        Some(Val::Arr(items)) => {
                            items.iter().any(|i| match self.res.resolve(cm, i) {
                                Resolved::Class(km, k) => {
                                    km == m && modules[km].classes[k].name == name
                                }
                                Resolved::Str(_) => true,
                                _ => false,
                            })
                        }
                        _ => false,
                    };
                    if !lists {
                        continue;
                    }
                    let Some(p) = field(opts, "routePrefix") else {
                        return (String::new(), true);
                    };
                    let what = "the `routePrefix` of routing-controllers";
                    match self.strings_at(cm, &p, cs.line, what) {
                        Some(list) => return (list.into_iter().next().unwrap_or_default(), true),
                        None => {
                            let file = module.file.clone();
                            self.diagnostics.push(Diagnostic::new(
                                file,
                                cs.line,
                                format!("{what} is not statically known: the controllers' routes are listed without it and marked `path_complete: false`"),
                            ));
                            return (String::new(), false);
                        }
                    }
                }
            }
        }
        (String::new(), true)
    }

    /// NestJS `RouterModule.register(routes)` in a module's `imports`: the paths each listed
    /// module's controllers are served under (a child's under its parent's), by the controller's
    /// (module, class name).
    fn router_module_paths(&mut self) -> HashMap<(ModId, String), Vec<String>> {
        let modules = self.modules();
        let mut by_module: Vec<((ModId, usize), String)> = Vec::new();
        for (m, module) in modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            for class in &module.classes {
                for d in class.decorators.iter().filter(|d| d.name == "Module") {
                    let Some(Val::Arr(imports)) = d.args.first().and_then(|o| field(o, "imports"))
                    else {
                        continue;
                    };
                    for import in imports {
                        let Val::Call(callee, args) = import else {
                            continue;
                        };
                        let registers = matches!(
                            self.resolve(m, callee.as_ref()),
                            Resolved::Package { spec, name: Some(n), path }
                                if spec == "@nestjs/core" && n == "RouterModule" && path == ["register"]
                        );
                        if let (true, Some(routes)) = (registers, args.first()) {
                            self.router_module_routes(m, routes, "", d.line, 0, &mut by_module);
                        }
                    }
                }
            }
        }
        let mut out: HashMap<(ModId, String), Vec<String>> = HashMap::new();
        for ((km, k), prefix) in by_module {
            let class = &modules[km].classes[k];
            let controllers = class
                .decorators
                .iter()
                .filter(|d| d.name == "Module")
                .filter_map(|d| d.args.first().and_then(|o| field(o, "controllers")));
            for list in controllers {
                let Val::Arr(items) = list else { continue };
                for c in items {
                    if let Resolved::Class(cm, ck) = self.resolve(km, &c) {
                        let paths = out
                            .entry((cm, modules[cm].classes[ck].name.clone()))
                            .or_default();
                        if !paths.contains(&prefix) {
                            paths.push(prefix.clone());
                        }
                    }
                }
            }
        }
        out
    }

    /// One level of a `RouterModule` route tree: `{ path, module, children }` objects (or bare
    /// module classes among `children`).
    fn router_module_routes(
        &mut self,
        m: ModId,
        routes: &Val,
        prefix: &str,
        line: u32,
        depth: usize,
        out: &mut Vec<((ModId, usize), String)>,
    ) {
        let Val::Arr(items) = routes else { return };
        if depth > 16 {
            return;
        }
        for item in items {
            match item {
                Val::Obj(_) => {
                    let path = match field(item, "path") {
                        None => prefix.to_string(),
                        Some(p) => {
                            match self.strings_at(m, &p, line, "the path of a `RouterModule` route")
                            {
                                Some(list) => normalize_path(
                                    prefix,
                                    list.first().map(String::as_str).unwrap_or(""),
                                ),
                                None => {
                                    let text = crate::link::display(&p);
                                    self.unknown_prefix(
                                        m,
                                        line,
                                        "a `RouterModule` route at",
                                        &p,
                                        &text,
                                    );
                                    prefix.to_string()
                                }
                            }
                        }
                    };
                    if let Some(module) = field(item, "module")
                        && let Resolved::Class(km, k) = self.resolve(m, &module)
                    {
                        out.push(((km, k), path.clone()));
                    }
                    if let Some(children) = field(item, "children") {
                        self.router_module_routes(m, &children, &path, line, depth + 1, out);
                    }
                }
                v => {
                    if let Resolved::Class(km, k) = self.resolve(m, v) {
                        out.push(((km, k), prefix.to_string()));
                    }
                }
            }
        }
    }

    /// OvernightJS `@ChildControllers([new Users()])`: the paths each listed controller is served
    /// under (its parents' own paths, under theirs), by the controller's (module, class name).
    fn child_controller_paths(&self) -> HashMap<(ModId, String), Vec<String>> {
        let modules = self.modules();
        let mut parents: HashMap<(ModId, usize), Vec<(ModId, usize)>> = HashMap::new();
        for (m, module) in modules.iter().enumerate() {
            for (r, router) in module.routers.iter().enumerate() {
                if router.framework != "overnightjs" {
                    continue;
                }
                for item in &router.items {
                    let RouterItem::Use { args, .. } = item else {
                        continue;
                    };
                    for a in args {
                        let (km, kc) = match self.resolve(m, a) {
                            Resolved::Instance(km, kc) | Resolved::Class(km, kc) => (km, kc),
                            _ => continue,
                        };
                        let name = &modules[km].classes[kc].name;
                        if let Some(kr) = modules[km]
                            .routers
                            .iter()
                            .position(|x| x.kind == RouterKind::NestController && x.name == *name)
                        {
                            parents.entry((km, kr)).or_default().push((m, r));
                        }
                    }
                }
            }
        }
        let mut memo: HashMap<(ModId, usize), Vec<String>> = HashMap::new();
        let mut out = HashMap::new();
        let mut children: Vec<(ModId, usize)> = parents.keys().copied().collect();
        children.sort();
        for child in children {
            let paths = self.parent_paths(child, &parents, &mut memo, &mut Vec::new());
            out.insert(
                (child.0, modules[child.0].routers[child.1].name.clone()),
                paths,
            );
        }
        out
    }

    /// The full paths of the controllers that list `key` as a child ("" for none), each a
    /// parent's own path under the paths of its parents; a cycle of controllers listing each
    /// other ends where it meets itself.
    fn parent_paths(
        &self,
        key: (ModId, usize),
        parents: &HashMap<(ModId, usize), Vec<(ModId, usize)>>,
        memo: &mut HashMap<(ModId, usize), Vec<String>>,
        open: &mut Vec<(ModId, usize)>,
    ) -> Vec<String> {
        if let Some(done) = memo.get(&key) {
            return done.clone();
        }
        let Some(list) = parents.get(&key).filter(|_| !open.contains(&key)) else {
            return vec![String::new()];
        };
        open.push(key);
        let mut out = Vec::new();
        for &(pm, pr) in list {
            let above = self.parent_paths((pm, pr), parents, memo, open);
            let own: Vec<String> = self.modules()[pm].routers[pr]
                .prefixes
                .iter()
                .flat_map(|p| self.strings(pm, p).unwrap_or_default())
                .collect();
            for a in &above {
                out.extend(own.iter().map(|o| normalize_path(a, o)));
            }
        }
        open.pop();
        out.sort();
        out.dedup();
        if out.is_empty() {
            out.push(String::new());
        }
        memo.insert(key, out.clone());
        out
    }

    pub(super) fn nest_routes(&mut self) {
        let mut module_paths = self.router_module_paths();
        module_paths.extend(self.child_controller_paths());
        let modules = self.modules();
        for (m, module) in modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            for (r, router) in module
                .routers
                .iter()
                .enumerate()
                .filter(|(_, r)| r.kind == RouterKind::NestController)
            {
                // A Nest bootstrap serves Nest controllers; routing-controllers' are served under
                // the `routePrefix` of the server that lists them; tsoa's at their own paths.
                let boot = self
                    .bootstrap_for(&module.file)
                    .or_else(|| self.bootstrap_importing(m, &router.name))
                    .filter(|_| router.framework == "nestjs");
                let bootstrap = boot.and_then(|bm| modules[bm].nest_bootstrap.as_ref());
                let ((global, global_read), excluded) = match (boot, bootstrap) {
                    (Some(bm), Some(b)) => (self.global_prefix(bm, b), self.exclusions(bm, b)),
                    _ if router.framework == "routing-controllers" => {
                        (self.route_prefix(m, &router.name), Vec::new())
                    }
                    _ => ((String::new(), true), Vec::new()),
                };
                // Every part of the controller's paths was read.
                let mut complete = global_read;
                // The default version is read where the bootstrap wrote it (`defaultVersion:
                // Config.defaultVersion` names an import of `main.ts`).
                let versioning = boot.zip(bootstrap).and_then(|(bm, b)| {
                    b.versioning
                        .clone()
                        .map(|(prefix, default)| (prefix, default.map(|d| (bm, d))))
                });
                let interceptors: Vec<(ModId, Val)> = match (boot, bootstrap) {
                    (Some(bm), Some(b)) => b.interceptors.iter().map(|v| (bm, v.clone())).collect(),
                    _ => Vec::new(),
                };
                // `RouterModule` paths of the module that lists the controller, before its own.
                let module_prefixes = match module_paths.get(&(m, router.name.clone())) {
                    Some(paths) if matches!(router.framework, "nestjs" | "overnightjs") => {
                        paths.clone()
                    }
                    _ => vec![String::new()],
                };
                let mut prefixes: Vec<String> = Vec::new();
                for p in &router.prefixes {
                    let what = format!("the path of controller `{}`", router.name);
                    match self.strings_at(m, p, router.line, &what) {
                        Some(list) => prefixes.extend(list.iter().flat_map(|own| {
                            module_prefixes
                                .iter()
                                .map(move |mp| normalize_path(mp, own))
                        })),
                        None => {
                            let expression = crate::link::display(p);
                            // The prefix the configuration gives it (`[[mount]]`, as the
                            // diagnostic below says).
                            if let Some(given) = self.configured(m, router.line, &expression) {
                                prefixes.extend(
                                    module_prefixes.iter().map(|mp| normalize_path(mp, &given)),
                                );
                                continue;
                            }
                            let what = format!("{} at", self.describe(Key::Local(m, r)));
                            self.unknown_prefix(m, router.line, &what, p, &expression);
                            prefixes.push(String::new());
                            complete = false;
                        }
                    }
                }
                for (im, item) in self
                    .items
                    .get(&Key::Local(m, r))
                    .cloned()
                    .unwrap_or_default()
                {
                    let RouterItem::Route {
                        method,
                        paths,
                        path_text,
                        middleware,
                        handler,
                        line,
                        version,
                        ..
                    } = item
                    else {
                        continue;
                    };
                    let mut route_complete = complete;
                    let list = match self.strings(im, &paths) {
                        Some(list) => list,
                        None => {
                            self.diagnostics.push(Diagnostic::new(module.file.clone(), line, format!("route path `{path_text}` is not statically known: the route is listed at its controller's path, marked `path_complete: false`")));
                            route_complete = false;
                            vec![String::new()]
                        }
                    };
                    // A method's version, else the controller's, else the default (Nest's order).
                    let versions: Vec<String> = match &versioning {
                        None => vec![String::new()],
                        Some((vprefix, default)) => {
                            match version
                                .clone()
                                .or_else(|| router.version.clone())
                                .map(|v| (m, v))
                                .or_else(|| default.clone())
                            {
                                None => vec![String::new()],
                                Some((vm, v)) => match self.version_segments(vm, &v, vprefix) {
                                    Some(vs) if !vs.is_empty() => vs,
                                    _ => {
                                        self.diagnostics.push(Diagnostic::new(
                                            module.file.clone(),
                                            line,
                                            format!(
                                                "the version `{}` of this route is not statically known: it is listed without a version segment, marked `path_complete: false`",
                                                crate::link::display(&v)
                                            ),
                                        ));
                                        route_complete = false;
                                        vec![String::new()]
                                    }
                                },
                            }
                        }
                    };
                    let written = self.strings(im, &method).unwrap_or_default();
                    let methods = self.served_methods(&written, im, &handler, line);
                    let mut chain = interceptors.clone();
                    chain.extend(router.middleware.iter().map(|v| (m, v.clone())));
                    chain.extend(middleware.iter().map(|v| (im, v.clone())));
                    for prefix in &prefixes {
                        for p in &list {
                            // Exclusions match the route's own path, without version or prefix.
                            let local = normalize_path(prefix, p);
                            for (method, branch) in &methods {
                                let excluded_here = excluded.iter().any(|e| {
                                    pattern_matches(&e.pattern, &local)
                                        && e.methods
                                            .as_ref()
                                            .is_none_or(|ms| ms.iter().any(|x| x == method))
                                });
                                let global_here = if excluded_here { "" } else { global.as_str() };
                                for v in &versions {
                                    let path =
                                        normalize_path(&normalize_path(global_here, v), &local);
                                    self.routes.push(RawRoute {
                                        method: method.to_string(),
                                        path,
                                        framework: router.framework,
                                        module: im,
                                        line,
                                        handler: handler.clone(),
                                        handler_module: im,
                                        middleware: chain.clone(),
                                        branch: branch.clone(),
                                        protocol: Protocol::Rest,
                                        handler_name: None,
                                        path_complete: route_complete,
                                        steps: vec![],
                                        file: None,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// How many leading directories two files share.
fn common_dirs(a: &str, b: &str) -> usize {
    let dirs = |f: &str| -> Vec<String> {
        let mut d: Vec<String> = f.split('/').map(String::from).collect();
        d.pop();
        d
    };
    dirs(a)
        .iter()
        .zip(dirs(b).iter())
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::pattern_matches;

    #[test]
    fn exclusion_patterns() {
        assert!(pattern_matches("/health", "/health"));
        assert!(!pattern_matches("/health", "/health/db"));
        assert!(pattern_matches("/users/{id}", "/users/{userId}"));
        assert!(pattern_matches("/health/*splat", "/health/db"));
        assert!(!pattern_matches("/health/*splat", "/health"));
        assert!(pattern_matches("/health/{*splat}", "/health"));
        assert!(pattern_matches("/cats/(.*)", "/cats/a/b"));
        assert!(pattern_matches("/", "/"));
        assert!(!pattern_matches("/", "/auth"));
    }
}
