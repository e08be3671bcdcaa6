//! Remix and React Router (framework mode) route modules: each one's `action` export is an
//! endpoint (`POST`, or the methods its `request.method` checks name). Route modules come from
//! `app/routes.ts` (`route`, `index`, `layout`, `prefix`, and the file conventions it delegates
//! to: `flatRoutes()` of `@react-router/fs-routes`, `remix-flat-routes`, `autoRoutes()` of
//! `react-router-auto-routes`), else from a classic configuration's `routes` function and the
//! flat-routes convention under `app/routes/`; `app/root.tsx` is the root route.

use super::fileroutes::{
    config_module, config_object, config_value, in_dir, project_roots, under, written,
};
use super::mounts::{RawRoute, normalize_path};
use super::resolve::{ModId, Resolved, Resolver};
use crate::facts::{Diagnostic, Protocol};
use crate::program::{FnId, Val};

const ROUTE_MODULE_EXTS: &[&str] = &["js", "jsx", "ts", "tsx", "md", "mdx"];
const CONFIG_SPECS: &[&str] = &["@react-router/dev/routes", "@remix-run/route-config"];
const ADAPTER_SPECS: &[&str] = &[
    "@react-router/remix-routes-option-adapter",
    "@remix-run/routes-option-adapter",
];

/// How a folder of route files maps to URLs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Convention {
    /// The flat-routes convention of Remix v2 and `@react-router/fs-routes`: files at the top of
    /// the folder, and folders holding a `route` (or `index`) module.
    Core,
    /// `remix-flat-routes`: also `+` folders whose files are flat files, and nested folders whose
    /// route module is `index`, `route`, `layout`, `page`, `_`-prefixed or `*.route`.
    RemixFlat,
    /// `react-router-auto-routes`: every folder is a segment, `_layout` is the folder's own
    /// module, `+`-prefixed entries are colocated code.
    Auto,
}

/// A route module and the URL it serves.
type Route = (ModId, String);

struct App<'a, 'r> {
    res: &'a Resolver<'r>,
    root: String,
    /// The app folder (`app`), from the tree's root.
    app_dir: String,
    basename: String,
    /// The classic configuration's `routes` function, where it has one: (module, value, file).
    routes_fn: Option<(ModId, Val)>,
    /// `ignoredRouteFiles` of the classic configuration.
    ignored: Vec<String>,
    routes: Vec<Route>,
    diagnostics: Vec<Diagnostic>,
}

pub fn routes(res: &Resolver) -> (Vec<RawRoute>, Vec<Diagnostic>) {
    let mut out = Vec::new();
    let mut diagnostics = Vec::new();
    let roots = project_roots(
        res,
        &["@remix-run/dev", "@react-router/dev"],
        &["react-router.config", "remix.config"],
    );
    let mut seen = std::collections::BTreeSet::new();
    for root in &roots {
        // React Router 7's framework mode is Remix's successor: named for what the app uses.
        let react_router = config_module(res, root, "react-router.config").is_some()
            || res
                .manifests()
                .any(|(d, deps)| d == root && deps.iter().any(|x| x == "@react-router/dev"));
        let framework = if react_router {
            "react-router"
        } else {
            "remix"
        };
        let mut app = App::new(res, root);
        app.collect();
        diagnostics.append(&mut app.diagnostics);
        for (m, path) in app.routes {
            if seen.insert((m, path.clone())) {
                actions(res, m, &path, framework, &mut out);
            }
        }
    }
    (out, diagnostics)
}

/// The module's `action` export: one endpoint per method it serves.
fn actions(res: &Resolver, m: ModId, path: &str, framework: &'static str, out: &mut Vec<RawRoute>) {
    let module = &res.modules[m];
    if module.is_test {
        return;
    }
    let Some(action) = module.export("action") else {
        return;
    };
    let line = module.export_line("action").unwrap_or(1);
    let mut served = super::next::methods_served(res, m, action, line, &["POST"]);
    // `if (request.method === 'DELETE') {..} else {..}`: the other branch runs for the methods
    // the checks do not name, the form's own `POST` among them.
    if !served.iter().any(|s| s.method == "POST")
        && served.iter().all(|s| s.branch.is_some())
        && let Resolved::Func(hm, hf) = res.resolve(m, action)
        && runs_for(res, hm, hf, "POST")
    {
        served.push(super::next::Served {
            method: "POST".into(),
            module: m,
            line,
            branch: Some("POST".into()),
            handed: None,
        });
    }
    for s in served {
        out.push(RawRoute {
            method: s.method,
            path: path.to_string(),
            framework,
            module: s.module,
            line: s.line,
            handler: action.clone(),
            handler_module: m,
            middleware: vec![],
            branch: s.branch,
            protocol: Protocol::FormAction,
            handler_name: None,
            path_complete: true,
            steps: vec![],
            file: None,
        });
    }
}

/// Some call of the function (or of one defined in it) sits in a branch of the method checks that
/// runs for `method`.
fn runs_for(res: &Resolver, m: ModId, f: FnId, method: &str) -> bool {
    let fns = &res.modules[m].functions;
    let mut stack = vec![f];
    while let Some(g) = stack.pop() {
        if fns[g].calls.iter().any(|c| {
            c.branch
                .as_ref()
                .is_some_and(|b| b.iter().any(|x| x == method))
        }) {
            return true;
        }
        stack.extend(fns[g].children.iter().copied());
    }
    false
}

/// A string value, or an environment read's literal default.
fn string(res: &Resolver, m: ModId, v: &Val) -> Option<String> {
    match res.resolve(m, v) {
        Resolved::Str(s) | Resolved::Default { value: s, .. } => Some(s),
        _ => None,
    }
}

/// Strings: one, or an array of them.
fn strings(res: &Resolver, m: ModId, v: &Val) -> Option<Vec<String>> {
    match written(res, m, v) {
        (wm, Val::Arr(items)) => items.iter().map(|i| string(res, wm, i)).collect(),
        (wm, v) => string(res, wm, &v).map(|s| vec![s]),
    }
}

/// The field `name` of an object value.
fn field(res: &Resolver, m: ModId, v: Option<&Val>, name: &str) -> Option<(ModId, Val)> {
    match res.resolve(m, v?) {
        Resolved::Obj(om, fields) => fields
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| (om, v.clone())),
        _ => None,
    }
}

/// What a call calls, when it is a package's function: (package, function name).
fn package_fn(res: &Resolver, m: ModId, callee: &Val) -> Option<(String, String)> {
    match res.resolve(m, callee) {
        Resolved::Package { spec, name, path } => Some((spec, path.last().cloned().or(name)?)),
        _ => None,
    }
}

/// A path of a route config (`concerts/:city`, `:lang?/about`, `files/*`) in the inventory's
/// form (`concerts/{city}`, `{lang}/about`, `files/{*}`).
fn config_path(path: &str) -> String {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let s = s.strip_suffix('?').unwrap_or(s);
            if s == "*" {
                "{*}".to_string()
            } else if let Some(name) = s.strip_prefix(':') {
                format!("{{{name}}}")
            } else {
                s.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn join_url(prefix: &str, rest: &str) -> String {
    normalize_path(prefix, rest)
}

impl<'a, 'r> App<'a, 'r> {
    fn new(res: &'a Resolver<'r>, root: &str) -> Self {
        let mut app = App {
            res,
            root: root.to_string(),
            app_dir: in_dir(root, "app"),
            basename: String::new(),
            routes_fn: None,
            ignored: Vec::new(),
            routes: Vec::new(),
            diagnostics: Vec::new(),
        };
        for stem in ["react-router.config", "remix.config"] {
            if let Some(m) = config_module(res, root, stem) {
                match config_object(res, m) {
                    Some((om, fields)) => app.read_config(m, om, fields),
                    None => app.diagnostics.push(Diagnostic::new(
                        res.modules[m].file.clone(),
                        0,
                        "this configuration is not an object this audit can read: the app folder is taken to be `app`",
                    )),
                }
            }
        }
        // Remix on Vite: the options of the `vitePlugin` in `vite.config.*`.
        if let Some(m) = config_module(res, root, "vite.config") {
            for f in &res.modules[m].functions {
                for call in &f.calls {
                    if package_fn(res, m, &call.callee).is_some_and(|(spec, name)| {
                        spec == "@remix-run/dev" && name == "vitePlugin"
                    }) && let Some(Resolved::Obj(om, fields)) =
                        call.args.first().map(|a| res.resolve(m, a))
                    {
                        app.read_config(m, om, fields);
                    }
                }
            }
        }
        app
    }

    /// `appDirectory`, `basename`, and a classic configuration's `routes` and
    /// `ignoredRouteFiles`.
    fn read_config(&mut self, m: ModId, om: ModId, fields: Vec<(String, Val)>) {
        let res = self.res;
        let file = res.modules[m].file.clone();
        for (key, default) in [("appDirectory", "app"), ("basename", "/")] {
            let Some(value) = config_value(
                res,
                om,
                &fields,
                &[key],
                &file,
                default,
                &mut self.diagnostics,
            ) else {
                continue;
            };
            if key == "appDirectory" {
                self.app_dir = in_dir(
                    &self.root,
                    value.trim_start_matches("./").trim_end_matches('/'),
                );
            } else {
                self.basename = value;
            }
        }
        if let Some((_, v)) = fields.iter().rev().find(|(k, _)| k == "routes") {
            self.routes_fn = Some((om, v.clone()));
        }
        if let Some((_, v)) = fields.iter().rev().find(|(k, _)| k == "ignoredRouteFiles") {
            match strings(res, om, v) {
                Some(p) => self.ignored = p,
                None => self.diagnostics.push(Diagnostic::new(
                    file,
                    0,
                    "`ignoredRouteFiles` is not a list of strings this audit can read: no route file is ignored",
                )),
            }
        }
    }

    fn collect(&mut self) {
        let res = self.res;
        let base = self.basename.clone();
        for ext in ROUTE_MODULE_EXTS {
            if let Some(m) = res.module_of(&in_dir(&self.app_dir, &format!("root.{ext}"))) {
                self.routes.push((m, join_url(&base, "")));
                break;
            }
        }
        let config = ["ts", "js", "mts", "mjs", "tsx", "jsx"]
            .iter()
            .find_map(|ext| res.module_of(&in_dir(&self.app_dir, &format!("routes.{ext}"))));
        if let Some(m) = config {
            let module = &res.modules[m];
            match module.export("default").or(module.cjs_whole.as_ref()) {
                Some(v) => self.entries(m, &v.clone(), &base, 0),
                None => self.diagnostics.push(Diagnostic::new(
                    module.file.clone(),
                    0,
                    "this route config has no default export: its routes are left out",
                )),
            }
            return;
        }
        // A classic configuration: its `routes` function, and the default convention unless
        // `ignoredRouteFiles` turns it off.
        if let Some((m, v)) = self.routes_fn.clone() {
            let file = res.modules[m].file.clone();
            self.delegated(m, &v, &base, &file);
        }
        let ignored = self.ignored.clone();
        let dir = in_dir(&self.app_dir, "routes");
        self.folder(&dir, Convention::Core, &base, &ignored);
    }

    /// Entries of a route config (`app/routes.ts`) under the URL `prefix`.
    fn entries(&mut self, m: ModId, v: &Val, prefix: &str, depth: usize) {
        let res = self.res;
        let file = res.modules[m].file.clone();
        if depth > 32 {
            self.diagnostics.push(Diagnostic::new(
                file,
                0,
                "route config entries nest more than 32 levels deep: those below are left out",
            ));
            return;
        }
        let (m, v) = written(res, m, v);
        match &v {
            Val::Arr(items) => {
                for item in items {
                    self.entries(m, item, prefix, depth + 1);
                }
            }
            // A `RouteConfigEntry` written as an object: `{ path, file, index, children }`.
            Val::Obj(fields) => {
                let get = |k: &str| fields.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v);
                let path = match get("path").and_then(|p| string(res, m, p)) {
                    Some(p) => join_url(prefix, &config_path(&p)),
                    None => prefix.to_string(),
                };
                if let Some(f) = get("file") {
                    self.config_file(m, f, &path);
                }
                if let Some(c) = get("children") {
                    self.entries(m, c, &path, depth + 1);
                }
            }
            Val::Call(callee, args) => self.call(m, callee, args, prefix, depth),
            _ => self.diagnostics.push(Diagnostic::new(
                file,
                0,
                format!(
                    "an entry of this route config (`{}`) is not one this audit can read: the routes it stands for are left out",
                    super::display(&v)
                ),
            )),
        }
    }

    fn call(&mut self, m: ModId, callee: &Val, args: &[Val], prefix: &str, depth: usize) {
        let res = self.res;
        let file = res.modules[m].file.clone();
        let Some((spec, name)) = package_fn(res, m, callee) else {
            // A project helper returning entries.
            if let Resolved::Func(fm, f) = res.resolve(m, callee) {
                let returns = res.modules[fm].functions[f].returns.clone();
                if !returns.is_empty() {
                    for r in &returns {
                        self.entries(fm, r, prefix, depth + 1);
                    }
                    return;
                }
            }
            self.diagnostics.push(Diagnostic::new(
                file,
                0,
                format!(
                    "`{}` in this route config is not a function this audit knows: the routes it gives are left out",
                    super::display(callee)
                ),
            ));
            return;
        };
        let arr_at = |i: usize| args.get(i).filter(|a| !matches!(a, Val::Obj(_)));
        if CONFIG_SPECS.contains(&spec.as_str()) {
            match name.as_str() {
                "route" => {
                    let Some(path) = args.first().and_then(|p| string(res, m, p)) else {
                        self.unreadable(m, "the path of a `route(..)`");
                        return;
                    };
                    let path = join_url(prefix, &config_path(&path));
                    if let Some(f) = args.get(1) {
                        self.config_file(m, f, &path);
                    }
                    // `route(path, file, children)` or `route(path, file, options, children)`.
                    if let Some(c) = arr_at(2).or(args.get(3)) {
                        self.entries(m, c, &path, depth + 1);
                    }
                }
                "index" => {
                    if let Some(f) = args.first() {
                        self.config_file(m, f, prefix);
                    }
                }
                "layout" => {
                    if let Some(f) = args.first() {
                        self.config_file(m, f, prefix);
                    }
                    if let Some(c) = arr_at(1).or(args.get(2)) {
                        self.entries(m, c, prefix, depth + 1);
                    }
                }
                "prefix" => {
                    let Some(p) = args.first().and_then(|p| string(res, m, p)) else {
                        self.unreadable(m, "the path of a `prefix(..)`");
                        return;
                    };
                    if let Some(c) = args.get(1) {
                        self.entries(m, c, &join_url(prefix, &config_path(&p)), depth + 1);
                    }
                }
                _ => self.diagnostics.push(Diagnostic::new(
                    file,
                    0,
                    format!("`{name}` of `{spec}` is not read: the routes it gives are left out"),
                )),
            }
            return;
        }
        if ADAPTER_SPECS.contains(&spec.as_str()) && name == "remixRoutesOptionAdapter" {
            if let Some(f) = args.first() {
                self.delegated(m, f, prefix, &file);
            }
            return;
        }
        if !self.convention_call(m, &spec, &name, args, prefix) {
            self.diagnostics.push(Diagnostic::new(
                file,
                0,
                format!(
                    "`{name}` of `{spec}` in this route config is not read: the routes it gives are left out"
                ),
            ));
        }
    }

    /// A call to a file convention (`flatRoutes(..)`, `autoRoutes(..)`): its folders' routes
    /// under `prefix`. False when the call is not one.
    fn convention_call(
        &mut self,
        m: ModId,
        spec: &str,
        name: &str,
        args: &[Val],
        prefix: &str,
    ) -> bool {
        let res = self.res;
        let opt = |i: usize, k: &str| field(res, m, args.get(i), k);
        let list = |this: &mut Self, o: Option<(ModId, Val)>, what: &str| -> Option<Vec<String>> {
            let (om, v) = o?;
            let got = strings(res, om, &v);
            if got.is_none() {
                this.unreadable(m, what);
            }
            got
        };
        match (spec, name) {
            ("@react-router/fs-routes" | "@remix-run/fs-routes", "flatRoutes") => {
                let dir = list(self, opt(0, "rootDirectory"), "`rootDirectory`")
                    .and_then(|d| d.into_iter().next())
                    .unwrap_or_else(|| "routes".into());
                let ignored = list(self, opt(0, "ignoredRouteFiles"), "`ignoredRouteFiles`")
                    .unwrap_or_default();
                let dir = in_dir(&self.app_dir, &dir);
                self.folder(&dir, Convention::Core, prefix, &ignored);
            }
            ("remix-flat-routes", "flatRoutes") => {
                let dirs = match args.first() {
                    Some(v) => strings(res, m, v).unwrap_or_else(|| {
                        self.unreadable(m, "the folder given to `flatRoutes`");
                        vec![]
                    }),
                    None => vec!["routes".into()],
                };
                let app = list(self, opt(2, "appDir"), "`appDir`")
                    .and_then(|d| d.into_iter().next())
                    .map(|d| in_dir(&self.root, &d))
                    .unwrap_or_else(|| self.app_dir.clone());
                let base = list(self, opt(2, "basePath"), "`basePath`")
                    .and_then(|d| d.into_iter().next())
                    .unwrap_or_default();
                let ignored = list(self, opt(2, "ignoredRouteFiles"), "`ignoredRouteFiles`")
                    .unwrap_or_default();
                let prefix = join_url(prefix, &base);
                for d in dirs {
                    self.folder(&in_dir(&app, &d), Convention::RemixFlat, &prefix, &ignored);
                }
            }
            ("react-router-auto-routes", "autoRoutes") => {
                let root_dir = list(self, opt(0, "rootDir"), "`rootDir`")
                    .and_then(|d| d.into_iter().next())
                    .map(|d| in_dir(&self.root, &d))
                    .unwrap_or_else(|| self.app_dir.clone());
                let dirs = list(self, opt(0, "routesDir"), "`routesDir`")
                    .unwrap_or_else(|| vec!["routes".into()]);
                let ignored = list(self, opt(0, "ignoredRouteFiles"), "`ignoredRouteFiles`")
                    .unwrap_or_default();
                for d in dirs {
                    self.folder(&in_dir(&root_dir, &d), Convention::Auto, prefix, &ignored);
                }
            }
            _ => return false,
        }
        true
    }

    /// A `routes` function (a classic configuration's, or one given to the options adapter): the
    /// file conventions its calls delegate to.
    fn delegated(&mut self, m: ModId, v: &Val, prefix: &str, file: &str) {
        let res = self.res;
        let Resolved::Func(fm, f) = res.resolve(m, v) else {
            self.diagnostics.push(Diagnostic::new(
                file.to_string(),
                0,
                "the `routes` option is not a function this audit can read: the routes it defines are left out",
            ));
            return;
        };
        let mut stack: Vec<FnId> = vec![f];
        let mut found = false;
        while let Some(g) = stack.pop() {
            let facts = &res.modules[fm].functions[g];
            stack.extend(facts.children.iter().copied());
            for call in &facts.calls {
                if let Some((spec, name)) = package_fn(res, fm, &call.callee) {
                    found |= self.convention_call(fm, &spec, &name, &call.args, prefix);
                }
            }
        }
        if !found {
            self.diagnostics.push(Diagnostic::new(
                res.modules[fm].file.clone(),
                res.modules[fm].functions[f].line,
                "this `routes` function defines routes without a file convention this audit reads (`flatRoutes`, `autoRoutes`): the routes it defines are left out",
            ));
        }
    }

    fn unreadable(&mut self, m: ModId, what: &str) {
        self.diagnostics.push(Diagnostic::new(
            self.res.modules[m].file.clone(),
            0,
            format!("{what} in this route config is not a string this audit can read: the routes it gives are left out"),
        ));
    }

    /// A route module named in a route config, relative to the app folder.
    fn config_file(&mut self, m: ModId, f: &Val, path: &str) {
        let res = self.res;
        let Some(name) = string(res, m, f) else {
            self.unreadable(m, "the file of a route");
            return;
        };
        let target = res
            .resolve_spec(m, &format!("./{}", name.trim_start_matches("./")))
            .or_else(|| res.module_of(&in_dir(&self.app_dir, &name)));
        match target {
            Some(t) => self.routes.push((t, path.to_string())),
            None if name
                .rsplit_once('.')
                .is_some_and(|(_, e)| ["ts", "tsx", "js", "jsx"].contains(&e)) =>
            {
                self.diagnostics.push(Diagnostic::new(
                    res.modules[m].file.clone(),
                    0,
                    format!("the route module `{name}` is not among the files read: its action, if any, is left out"),
                ));
            }
            None => {}
        }
    }

    /// The route modules of a folder under a convention, under the URL `prefix`.
    fn folder(&mut self, dir: &str, convention: Convention, prefix: &str, ignored: &[String]) {
        let res = self.res;
        let mut globs = globset::GlobSetBuilder::new();
        for p in ignored {
            match globset::GlobBuilder::new(p).literal_separator(true).build() {
                Ok(g) => {
                    globs.add(g);
                }
                Err(_) => self.diagnostics.push(Diagnostic::new(
                    in_dir(&self.app_dir, ""),
                    0,
                    format!("the ignored route file pattern `{p}` is not a glob this audit reads: it ignores nothing"),
                )),
            }
        }
        let globs = globs.build().unwrap_or_else(|_| globset::GlobSet::empty());
        let app_rel = |file: &str| under(file, &self.app_dir).unwrap_or(file).to_string();
        let mut found = Vec::new();
        for (m, module) in res.modules.iter().enumerate() {
            let Some(rel) = under(&module.file, dir) else {
                continue;
            };
            if globs.is_match(rel) || globs.is_match(app_rel(&module.file)) {
                continue;
            }
            let url = match convention {
                Convention::Core => core_route(rel),
                Convention::RemixFlat => remix_flat_route(rel),
                Convention::Auto => auto_route(rel),
            };
            if let Some(url) = url {
                found.push((m, join_url(prefix, &url)));
            }
        }
        self.routes.extend(found);
    }
}

/// A flat route name split at `.` and `/` outside `[..]` escapes: each segment as meant (escapes
/// resolved) and as written.
fn flat_segments(name: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (mut seg, mut raw) = (String::new(), String::new());
    let mut escaped = false;
    for c in name.chars() {
        match c {
            '[' if !escaped => {
                escaped = true;
                raw.push(c);
            }
            ']' if escaped => {
                escaped = false;
                raw.push(c);
            }
            '.' | '/' if !escaped => {
                if !raw.is_empty() {
                    out.push((std::mem::take(&mut seg), std::mem::take(&mut raw)));
                }
            }
            c => {
                seg.push(c);
                raw.push(c);
            }
        }
    }
    if !raw.is_empty() {
        out.push((seg, raw));
    }
    out
}

/// The URL of a flat route's segments: `_layout`-style segments add nothing, a trailing `_` only
/// opts out of nesting, `$` is a splat, `$id` a parameter, `($lang)` and `(en)` optional.
fn flat_url(segs: &[(String, String)]) -> String {
    segs.iter()
        .filter(|(_, raw)| !raw.starts_with('_'))
        .map(|(seg, raw)| {
            let seg = if raw.ends_with('_') {
                &seg[..seg.len() - 1]
            } else {
                seg.as_str()
            };
            let seg = if raw.starts_with('(') && raw.ends_with(')') && seg.len() >= 2 {
                &seg[1..seg.len() - 1]
            } else {
                seg
            };
            if seg == "$" {
                "{*}".to_string()
            } else if let Some(name) = seg.strip_prefix('$') {
                format!("{{{name}}}")
            } else {
                seg.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn route_ext(file: &str) -> Option<&str> {
    let (stem, ext) = file.rsplit_once('.')?;
    ROUTE_MODULE_EXTS.contains(&ext).then_some(stem)
}

/// The core convention: `concerts.$city.tsx`, or `concerts.$city/route.tsx`; `_index` is an index.
fn core_route(rel: &str) -> Option<String> {
    let id = match rel.split_once('/') {
        None => route_ext(rel)?,
        Some((folder, file)) if !file.contains('/') => {
            let stem = route_ext(file)?;
            (stem == "route" || stem == "index").then_some(folder)?
        }
        Some(_) => return None,
    };
    let mut segs = flat_segments(id);
    if segs.last().is_some_and(|(_, raw)| raw == "_index") {
        segs.pop();
    }
    Some(flat_url(&segs))
}

/// `remix-flat-routes`: a flat file, a file right inside a `+` folder, or a route module of a
/// nested folder (`index`, `route`, `layout`, `page`, `_`-prefixed, `*.route`); `.server`
/// modules are not routes.
fn remix_flat_route(rel: &str) -> Option<String> {
    let id = route_ext(rel)?;
    if let Some((dir, file)) = rel.rsplit_once('/') {
        let stem = route_ext(file)?;
        let plain = |s: &str, brackets: bool| {
            s.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || matches!(c, '_' | '$' | '.' | '-')
                    || (brackets && matches!(c, '[' | ']'))
            })
        };
        let in_plus = dir.ends_with('+') && plain(stem, true);
        let named = matches!(stem, "index" | "route" | "layout" | "page")
            || (stem.starts_with('_') && stem.len() > 1 && plain(stem, false))
            || (stem.ends_with(".route") && plain(stem, true));
        if !(in_plus || named) {
            return None;
        }
    }
    if id.ends_with(".server") {
        return None;
    }
    let index = is_index(id);
    let has_plus = id.contains("+/");
    let mut name = id.replace("+/", ".");
    let has_folder = name.contains('/');
    // The last part is the route file's own name unless it is a flat file of a `+` folder.
    if (has_folder || !has_plus)
        && !name.ends_with(".route")
        && let Some(i) = name.rfind('/')
    {
        name.truncate(i);
    }
    let mut segs = flat_segments(&name);
    if segs.last().is_some_and(|(s, _)| s == "route") {
        segs.pop();
    }
    if index || (has_plus && segs.last().is_some_and(|(s, _)| s.starts_with('_'))) {
        segs.pop();
    }
    Some(flat_url(&segs))
}

/// An index route of `remix-flat-routes`: its name ends in `index` or `_index` (after the start, a
/// `.` or a `+/`), itself or its folder, or a folder on the way is one.
fn is_index(id: &str) -> bool {
    let ends = |s: &str| {
        ["index", "_index"].iter().any(|ix| {
            s.strip_suffix(ix)
                .is_some_and(|head| head.is_empty() || head.ends_with('.') || head.ends_with("+/"))
        })
    };
    ends(id)
        || id.rsplit_once('/').is_some_and(|(head, _)| ends(head))
        || id.contains("/index/")
        || id.contains("/_index/")
}

/// `react-router-auto-routes`: folders are segments as dots are, `_layout` is the folder's own
/// module, `index`/`_index` its index, and entries starting with `+` are not routes.
fn auto_route(rel: &str) -> Option<String> {
    let id = route_ext(rel)?;
    if rel.split('/').any(|c| c.starts_with('+')) {
        return None;
    }
    let mut segs = flat_segments(id);
    if segs
        .last()
        .is_some_and(|(_, raw)| matches!(raw.as_str(), "_layout" | "index" | "_index"))
    {
        segs.pop();
    }
    Some(flat_url(&segs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_convention() {
        for (file, want) in [
            ("_index.tsx", Some("")),
            ("about.tsx", Some("about")),
            ("concerts.$city.tsx", Some("concerts/{city}")),
            ("concerts._index.tsx", Some("concerts")),
            ("concerts_.mine.tsx", Some("concerts/mine")),
            ("_auth.login.tsx", Some("login")),
            ("_auth.tsx", Some("")),
            ("files.$.tsx", Some("files/{*}")),
            ("sitemap[.]xml.tsx", Some("sitemap.xml")),
            ("($lang).categories.tsx", Some("{lang}/categories")),
            ("app.projects.$id/route.tsx", Some("app/projects/{id}")),
            ("app.projects.$id/index.tsx", Some("app/projects/{id}")),
            ("app.projects.$id/card.tsx", None),
            ("deep/er/route.tsx", None),
            ("styles.css", None),
        ] {
            assert_eq!(core_route(file).as_deref(), want, "{file}");
        }
    }

    #[test]
    fn remix_flat_routes_convention() {
        for (file, want) in [
            ("_auth+/login.tsx", Some("login")),
            ("users+/_layout.tsx", Some("users")),
            ("users+/index.tsx", Some("users")),
            ("users+/$userId.tsx", Some("users/{userId}")),
            ("users+/$userId_.edit.tsx", Some("users/{userId}/edit")),
            ("users+/components/avatar.tsx", None),
            ("users/$userId/_route.tsx", Some("users/{userId}")),
            ("users/$userId/avatar.tsx", None),
            ("test.$/_route.tsx", Some("test/{*}")),
            ("test.$/_route.server.tsx", None),
            ("_public+/contact[.jpg].tsx", Some("contact.jpg")),
            (
                "project/parent.child/index.tsx",
                Some("project/parent/child"),
            ),
            ("_index/index.tsx", Some("")),
            (
                "app_.projects.$id.roadmap[.pdf].tsx",
                Some("app/projects/{id}/roadmap.pdf"),
            ),
            ("dashboard.route.tsx", Some("dashboard")),
            ("blog+/$slug+/_layout.tsx", Some("blog/{slug}")),
        ] {
            assert_eq!(remix_flat_route(file).as_deref(), want, "{file}");
        }
    }

    #[test]
    fn auto_routes_convention() {
        for (file, want) in [
            ("_index.tsx", Some("")),
            ("_auth/login.tsx", Some("login")),
            ("_auth/_layout.tsx", Some("")),
            ("blog/_layout.tsx", Some("blog")),
            ("blog/_index.tsx", Some("blog")),
            ("blog/$slug.tsx", Some("blog/{slug}")),
            ("files/$.tsx", Some("files/{*}")),
            ("users/$id/index.tsx", Some("users/{id}")),
            ("users/$id/+avatar.tsx", None),
            ("users/+/query.ts", None),
            ("api.users.ts", Some("api/users")),
            ("_seo/sitemap[.]xml.ts", Some("sitemap.xml")),
        ] {
            assert_eq!(auto_route(file).as_deref(), want, "{file}");
        }
    }

    #[test]
    fn config_paths() {
        assert_eq!(config_path("concerts/:city"), "concerts/{city}");
        assert_eq!(config_path(":lang?/about"), "{lang}/about");
        assert_eq!(config_path("files/*"), "files/{*}");
        assert_eq!(config_path("en?/x"), "en/x");
    }
}
