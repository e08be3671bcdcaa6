//! express-openapi: `initialize({ app, apiDoc, paths })` registers on `app` the operations that
//! path modules export, each under the API document's `basePath` (OpenAPI 2) or its first
//! server's path (OpenAPI 3) joined with the module's path. `paths` is a directory (or several),
//! relative to the working directory the service starts in (the package's), whose files are
//! the paths (`users/{id}.ts` is `/users/{id}`, an `index` file its folder's); or route
//! specifications `{ path: '/users/{id}', module: require('./handlers/users') }`, also made by
//! mapping a list of paths (`routes.map((r) => ({ path: '/' + r, module: require(`./v1/${r}`)
//! }))`). A path module exports its operations by method (`GET`, `post`, `del`): a handler, or
//! an array of middleware ending with the handler; as its named exports, as the object it
//! exports whole, or as the object a default-exported function returns (the dependency
//! injection form). Documented at <https://www.npmjs.com/package/express-openapi>.

use super::Mounter;
use crate::facts::Diagnostic;
use crate::link::resolve::{ModId, Resolved};
use crate::program::{RouterItem, Val};
use std::sync::Arc;

/// Operation keys a path module may export, as express-openapi reads them: lower or upper case,
/// and `del` for DELETE.
const METHODS: &[&str] = &[
    "get", "post", "put", "patch", "delete", "del", "head", "options", "GET", "POST", "PUT",
    "PATCH", "DELETE", "HEAD", "OPTIONS",
];
/// Most path modules one `initialize` call is read for.
const MAX_MODULES: usize = 1024;

impl Mounter<'_> {
    /// Registers the operations of every `initialize` call of express-openapi on its app.
    pub(super) fn add_openapi_items(&mut self) {
        let mut found = Vec::new();
        for (m, module) in self.modules().iter().enumerate() {
            if module.is_test {
                continue;
            }
            for facts in &module.functions {
                for cs in &facts.calls {
                    if self.initializes_openapi(m, &cs.callee)
                        && let Some(opts) = cs.args.first()
                    {
                        found.push((m, opts.clone(), cs.line));
                    }
                }
            }
        }
        for (m, opts, line) in found {
            self.openapi_routes(m, &opts, line);
        }
    }

    fn initializes_openapi(&self, m: ModId, callee: &Val) -> bool {
        matches!(
            self.res.resolve(m, callee),
            Resolved::Package { spec, name, path }
                if spec == "express-openapi"
                    && match (name.as_deref(), path.as_slice()) {
                        (Some("initialize"), []) => true,
                        (None | Some("default"), [one]) => one == "initialize",
                        _ => false,
                    }
        )
    }

    fn openapi_routes(&mut self, m: ModId, opts: &Val, line: u32) {
        let fields = match self.resolve(m, opts) {
            Resolved::Obj(om, fields) => (om, fields),
            _ => return,
        };
        let (om, fields) = fields;
        let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        let Some(key) = field("app").and_then(|app| self.router_key(om, app)) else {
            return;
        };
        let file = self.modules()[m].file.clone();
        let (bases, base_read) = match field("apiDoc") {
            Some(doc) => self.openapi_bases(om, doc),
            None => (vec![String::new()], false),
        };
        let mut specs: Vec<(String, ModId)> = Vec::new();
        let mut unread = false;
        match field("paths") {
            Some(paths) => self.path_specs(om, paths, &mut specs, &mut unread, 0),
            None => unread = true,
        }
        let cut = specs.len() > MAX_MODULES;
        let mut added = 0;
        for (path, t) in specs.into_iter().take(MAX_MODULES) {
            for (method, value, at) in self.operations(t) {
                let (handler, middleware) = match &value {
                    Val::Arr(items) if !items.is_empty() => {
                        let (last, rest) = items.split_last().expect("not empty");
                        (last.clone(), rest.to_vec())
                    }
                    v => (v.clone(), Vec::new()),
                };
                // the handler's own line where it is a function of the module (the operation's
                // key has none of its own in the value)
                let at = match (at, self.resolve(t, &handler)) {
                    (Some(at), _) => at,
                    (None, Resolved::Func(fm, f)) if fm == t => self.modules()[t].functions[f].line,
                    (None, _) => self.modules()[t].export_line("default").unwrap_or(1),
                };
                for base in &bases {
                    let full = format!(
                        "{}/{}",
                        base.trim_end_matches('/'),
                        path.trim_start_matches('/')
                    );
                    let item = RouterItem::route(
                        Val::Str(method.clone()),
                        Val::Str(full.clone()),
                        full,
                        middleware.clone(),
                        handler.clone(),
                        at,
                    );
                    self.items.entry(key).or_default().push((t, item));
                    added += 1;
                }
            }
        }
        let mut notes = Vec::new();
        if !base_read {
            notes.push(
                "the API document's base path could not be read: the paths start at the app's root",
            );
        }
        if unread && field("paths").is_some() {
            notes.push(
                "some of `paths` could not be read: operations registered from it are missing",
            );
        }
        if field("operations").is_some() {
            notes.push(
                "the handlers `operations` gives by operationId are served at the API document's paths, which are not read: those operations are missing",
            );
        }
        if cut {
            notes.push("more path modules than are read: the rest are missing");
        }
        self.diagnostics.push(Diagnostic::new(
            file,
            line,
            format!(
                "express-openapi `initialize(..)`: {added} operations read from its path modules{}",
                if notes.is_empty() {
                    String::new()
                } else {
                    format!("; {}", notes.join("; "))
                }
            ),
        ));
    }

    /// The paths an API document serves its operations under: OpenAPI 2's `basePath`; the path
    /// of each of OpenAPI 3's `servers` (its `basePath` is not read); the root when the document
    /// names none. And whether they were read.
    fn openapi_bases(&self, m: ModId, doc: &Val) -> (Vec<String>, bool) {
        let Resolved::Obj(dm, fields) = self.resolve(m, doc) else {
            return (vec![String::new()], false);
        };
        let field = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        if field("openapi").is_none() {
            return match field("basePath") {
                Some(b) => match self.strings(dm, &b).as_deref() {
                    Some([one]) => (vec![one.clone()], true),
                    _ => (vec![String::new()], false),
                },
                None => (vec![String::new()], true),
            };
        }
        let Some(servers) = field("servers") else {
            return (vec![String::new()], true);
        };
        let Some((sm, items)) = self.res.array(dm, &servers) else {
            return (vec![String::new()], false);
        };
        let mut out = Vec::new();
        for s in items.iter().take(8) {
            let url = match self.resolve(sm, s) {
                Resolved::Obj(om, f) => f
                    .iter()
                    .find(|(k, _)| k == "url")
                    .and_then(|(_, u)| self.strings(om, u))
                    .and_then(|v| v.into_iter().next()),
                _ => None,
            };
            let Some(u) = url else {
                return (vec![String::new()], false);
            };
            let path = match u.split_once("://") {
                Some((_, rest)) => rest.find('/').map_or("", |i| &rest[i..]).to_string(),
                None => u,
            };
            if !out.contains(&path) {
                out.push(path);
            }
        }
        if out.is_empty() {
            out.push(String::new());
        }
        (out, true)
    }

    /// The (path, module) pairs `paths` names.
    fn path_specs(
        &self,
        m: ModId,
        paths: &Val,
        out: &mut Vec<(String, ModId)>,
        unread: &mut bool,
        depth: usize,
    ) {
        if depth > 8 {
            *unread = true;
            return;
        }
        match paths {
            Val::Arr(items) => {
                for i in items {
                    self.path_specs(m, i, out, unread, depth + 1);
                }
            }
            // `routes.map((r) => ({ path: .., module: require(..) }))`
            Val::Call(callee, args)
                if matches!(&**callee, Val::Member(_, n) if n == "map")
                    && let [Val::Func(f)] = args.as_slice() =>
            {
                let Val::Member(list, _) = &**callee else {
                    return;
                };
                let Some((lm, elements)) = self.res.array(m, list) else {
                    *unread = true;
                    return;
                };
                let Some(ret) = self.modules()[m].functions[*f].returns.first().cloned() else {
                    *unread = true;
                    return;
                };
                for e in elements {
                    let s = match self.strings(lm, &e).as_deref() {
                        Some([one]) => one.clone(),
                        _ => {
                            *unread = true;
                            continue;
                        }
                    };
                    let spec = substitute(&ret, *f, &Val::Str(s));
                    self.path_specs(m, &spec, out, unread, depth + 1);
                }
            }
            Val::Obj(fields) => {
                let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
                let path = field("path").and_then(|p| self.strings(m, p));
                let module = field("module").and_then(|v| self.required_module(m, v));
                match (path.as_deref(), module) {
                    (Some([p]), Some(t)) => out.push((p.clone(), t)),
                    _ => *unread = true,
                }
            }
            v => {
                let here = self.modules()[m]
                    .file
                    .rsplit_once('/')
                    .map_or("", |(d, _)| d)
                    .to_string();
                // `path.resolve(__dirname, 'api')`: a directory of the tree
                if matches!(v, Val::Call(..) | Val::Global(_))
                    && let Some(dir) = self.dir_value(m, v, &here, 0)
                {
                    self.dir_specs(m, &format!("/{dir}"), out, unread);
                    return;
                }
                match self.strings(m, v) {
                    Some(dirs) => {
                        for d in dirs {
                            self.dir_specs(m, &d, out, unread);
                        }
                    }
                    None => match self.resolve(m, v) {
                        Resolved::Obj(om, fields) => {
                            self.path_specs(om, &Val::Obj(fields), out, unread, depth + 1)
                        }
                        // a list the module keeps in a variable or imports
                        _ => match self.res.array(m, v) {
                            Some((am, items)) => {
                                for i in items.iter().take(MAX_MODULES) {
                                    self.path_specs(am, i, out, unread, depth + 1);
                                }
                            }
                            _ => *unread = true,
                        },
                    },
                }
            }
        }
    }

    /// A module a route specification's `module` names: `require('./x')` (a literal or a string
    /// made of literals), an import.
    fn required_module(&self, m: ModId, v: &Val) -> Option<ModId> {
        if let Val::Call(callee, args) = v
            && matches!(&**callee, Val::Global(g) if g == "require")
        {
            let spec = self.strings(m, args.first()?)?.into_iter().next()?;
            return self.res.resolve_spec(m, &spec);
        }
        match self.resolve(m, v) {
            Resolved::Module(t) => Some(t),
            _ => None,
        }
    }

    /// The path modules of directory `dir`, relative to the working directory the service starts
    /// in: the package the initializing module is in (else that module's own directory).
    fn dir_specs(&self, m: ModId, dir: &str, out: &mut Vec<(String, ModId)>, unread: &mut bool) {
        let file = &self.modules()[m].file;
        let here = file.rsplit_once('/').map_or("", |(d, _)| d);
        let rel = dir.trim_start_matches("./").trim_end_matches('/');
        // (an absolute directory, `path.resolve(__dirname, 'api')`, is already from the root)
        let candidates: Vec<Option<String>> = if dir.starts_with("./") || !dir.starts_with('/') {
            vec![
                crate::paths::join(self.res.package_root(m), rel),
                crate::paths::join(here, rel),
            ]
        } else {
            vec![Some(dir.trim_start_matches('/').to_string())]
        };
        for full in candidates.into_iter().flatten() {
            let prefix = format!("{full}/");
            let mut any = false;
            for (t, module) in self.modules().iter().enumerate() {
                if module.is_test {
                    continue;
                }
                let Some(inner) = module.file.strip_prefix(&prefix) else {
                    continue;
                };
                any = true;
                let stem = inner.rsplit_once('.').map_or(inner, |(s, _)| s);
                let stem = stem
                    .strip_suffix("/index")
                    .or(stem.strip_suffix("index"))
                    .unwrap_or(stem);
                out.push((format!("/{}", stem.trim_end_matches('/')), t));
            }
            if any {
                return;
            }
        }
        *unread = true;
    }

    /// The operations a path module exports, as express-openapi reads it (`module.default ||
    /// module`): (method, operation, the line of its export when it is a named one).
    fn operations(&self, t: ModId) -> Vec<(String, Val, Option<u32>)> {
        let module = &self.modules()[t];
        let mut out = Vec::new();
        if let Some(whole) = module.export("default").or(module.cjs_whole.as_ref()) {
            let fields = match self.resolve(t, whole) {
                Resolved::Obj(_, fields) => fields,
                Resolved::Func(fm, f) if fm == t => {
                    match self.modules()[fm].functions[f]
                        .returns
                        .first()
                        .map(|r| self.resolve(fm, r))
                    {
                        Some(Resolved::Obj(_, fields)) => fields,
                        _ => return out,
                    }
                }
                _ => return out,
            };
            for (name, v) in fields {
                if METHODS.contains(&name.as_str()) {
                    out.push((method_of(&name), v, None));
                }
            }
            return out;
        }
        for (name, v) in &module.exports {
            if METHODS.contains(&name.as_str()) {
                let line = module.export_line(name).unwrap_or(1);
                out.push((method_of(name), v.clone(), Some(line)));
            }
        }
        out
    }
}

/// The route method an operation key stands for (`del` is `delete`).
fn method_of(key: &str) -> String {
    match key {
        "del" => "delete".into(),
        k => k.to_ascii_lowercase(),
    }
}

/// `v` with parameter 0 of function `f` replaced by `with`.
fn substitute(v: &Val, f: crate::program::FnId, with: &Val) -> Val {
    match v {
        Val::Param(g, 0) if *g == f => with.clone(),
        Val::Obj(fields) => Val::Obj(
            fields
                .iter()
                .map(|(k, x)| (k.clone(), substitute(x, f, with)))
                .collect(),
        ),
        Val::Arr(xs) => Val::Arr(xs.iter().map(|x| substitute(x, f, with)).collect()),
        Val::Template(xs) => Val::Template(xs.iter().map(|x| substitute(x, f, with)).collect()),
        Val::Call(c, xs) => Val::Call(
            Arc::new(substitute(c, f, with)),
            xs.iter().map(|x| substitute(x, f, with)).collect(),
        ),
        other => other.clone(),
    }
}
