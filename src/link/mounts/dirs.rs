//! Route modules loaded from a directory: a registration whose method and path are computed
//! (`app[method](route, ...callbacks)`) in a module that lists a directory (`fs.readdirSync(dir)`,
//! `readdir`, `fs/promises`), where each file of that directory names its route: dot-separated
//! path segments and an HTTP method (`files.$uuid.invites.POST.ts` is `POST files/{uuid}/invites`;
//! `$id`, `:id` and `[id]` are parameters). The route's path is the literal start of the computed
//! path (`'/v0/' + segments.join('/')`) joined with the file's segments; the handler is the
//! file's default export, or the last element of an exported array of callbacks (the ones before
//! it its middleware). A diagnostic says the routes were read from the file names.

use super::Mounter;
use super::tables::Instance;
use crate::facts::Diagnostic;
use crate::link::resolve::{ModId, Resolved};
use crate::program::Val;

const METHODS: &[&str] = &[
    "get", "post", "put", "patch", "delete", "del", "head", "options",
];
const LISTERS: &[&str] = &["readdirSync", "readdir"];

impl Mounter<'_> {
    /// The routes of the directory the registering module lists, if it lists one this tree holds
    /// route modules in.
    pub(super) fn directory_routes(
        &mut self,
        paths: &Val,
        (at, line): (ModId, u32),
    ) -> Option<Vec<Instance>> {
        let dir = self.listed_dir(at, line)?;
        let (prefix, complete) = literal_start(paths);
        let mut out = Vec::new();
        let mut unread: Vec<String> = Vec::new();
        for (t, module, name) in self.dir_modules(&dir) {
            let Some((method, segs)) = route_of_name(name) else {
                continue;
            };
            let Some(export) = module.export("default").or(module.cjs_whole.as_ref()) else {
                unread.push(name.to_string());
                continue;
            };
            let (handler, middleware) = match export {
                Val::Arr(items) if !items.is_empty() => {
                    let (last, rest) = items.split_last()?;
                    (last.clone(), rest.iter().map(|v| (t, v.clone())).collect())
                }
                v => (v.clone(), Vec::new()),
            };
            let path = if segs.is_empty() {
                prefix.clone()
            } else {
                format!("{}/{}", prefix.trim_end_matches('/'), segs.join("/"))
            };
            out.push(Instance {
                methods: vec![method],
                paths: vec![path],
                handler: (t, handler),
                middleware,
                complete,
                written_at: Some((t, module.export_line("default").unwrap_or(1))),
            });
        }
        if out.is_empty() {
            return None;
        }
        self.diagnostics.push(Diagnostic::new(
            self.modules()[at].file.clone(),
            line,
            format!(
                "this route is registered for each file of `{dir}` with a method and path computed from the file's name: {} routes are read from those names{}{}",
                out.len(),
                if complete {
                    ""
                } else {
                    ", without the start of the path, which is not a literal (marked `path_complete: false`)"
                },
                if unread.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; left out, with no default export to read: {}",
                        unread.join(", ")
                    )
                }
            ),
        ));
        Some(out)
    }

    /// `app.use('/api', require(path.join(__dirname, 'api', r)))` (or its `.default`) in a module
    /// that lists that directory: every module of the directory, each mounted as its router (a
    /// module's default export, else what it exports whole). Other arguments stay as they are.
    /// None when the arguments are to be read as they are.
    pub(super) fn directory_routers(&self, m: ModId, line: u32, args: &[Val]) -> Option<Vec<Val>> {
        if !args.iter().any(computed_require) {
            return None;
        }
        let dir = self.listed_dir(m, line)?;
        let here = self.modules()[m]
            .file
            .rsplit_once('/')
            .map_or("", |(d, _)| d);
        let rel = if here.is_empty() {
            Some(dir.as_str())
        } else {
            dir.strip_prefix(here).and_then(|r| r.strip_prefix('/'))
        };
        let rel = rel?;
        let mut out = Vec::new();
        for a in args {
            if !computed_require(a) {
                out.push(a.clone());
                continue;
            }
            for (_, module, file) in self.dir_modules(&dir) {
                let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
                out.push(Val::Import {
                    spec: format!("./{rel}/{stem}"),
                    name: module.export("default").is_some().then(|| "default".into()),
                });
            }
        }
        Some(out)
    }

    /// The modules (not tests) directly in directory `dir`, each with its file's name.
    fn dir_modules<'d>(
        &'d self,
        dir: &'d str,
    ) -> impl Iterator<Item = (ModId, &'d crate::program::Module, &'d str)> + 'd {
        self.modules()
            .iter()
            .enumerate()
            .filter(|(_, module)| !module.is_test)
            .filter_map(move |(t, module)| {
                let name = module
                    .file
                    .strip_prefix(dir)
                    .and_then(|r| r.strip_prefix('/'))
                    .filter(|r| !r.contains('/'))?;
                Some((t, module, name))
            })
    }

    /// The directory module `at` lists (`fs.readdirSync(path.join(__dirname, 'routes'))`), the
    /// listing nearest before `line`.
    fn listed_dir(&self, at: ModId, line: u32) -> Option<String> {
        let module = &self.modules()[at];
        let here = module.file.rsplit_once('/').map_or("", |(d, _)| d);
        let mut best: Option<(u32, String)> = None;
        for facts in &module.functions {
            for cs in &facts.calls {
                let lists = match self.res.resolve(at, &cs.callee) {
                    Resolved::Package { spec, name, path } => {
                        let spec = spec.trim_start_matches("node:");
                        (spec == "fs" || spec == "fs/promises")
                            && path
                                .last()
                                .or(name.as_ref())
                                .is_some_and(|n| LISTERS.contains(&n.as_str()))
                    }
                    _ => false,
                };
                if !lists || cs.line > line {
                    continue;
                }
                let Some(dir) = cs.args.first().and_then(|a| self.dir_value(at, a, here, 0)) else {
                    continue;
                };
                if best.as_ref().is_none_or(|(l, _)| cs.line >= *l) {
                    best = Some((cs.line, dir));
                }
            }
        }
        best.map(|(_, d)| d)
    }

    /// A directory of the tree a value names: `__dirname`, a literal relative to the module,
    /// `path.join(..)` / `path.resolve(..)` of those.
    pub(super) fn dir_value(&self, m: ModId, v: &Val, here: &str, depth: usize) -> Option<String> {
        if depth > 4 {
            return None;
        }
        match v {
            Val::Global(g) if g == "__dirname" => Some(here.to_string()),
            // an ES module's own: `fileURLToPath(new URL('.', import.meta.url))`
            Val::Call(callee, _)
                if matches!(
                    self.res.resolve(m, callee),
                    Resolved::Package { spec, name, path }
                        if spec.trim_start_matches("node:") == "url"
                            && path.last().or(name.as_ref()).is_some_and(|n| n == "fileURLToPath")
                ) =>
            {
                Some(here.to_string())
            }
            Val::Call(callee, args) => {
                let joins = matches!(
                    self.res.resolve(m, callee),
                    Resolved::Package { spec, name, path }
                        if spec.trim_start_matches("node:") == "path"
                            && path.last().or(name.as_ref()).is_some_and(|n| n == "join" || n == "resolve")
                );
                if !joins {
                    return None;
                }
                let mut dir = self.dir_value(m, args.first()?, here, depth + 1)?;
                for a in &args[1..] {
                    let Resolved::Str(s) = self.res.resolve(m, a) else {
                        return None;
                    };
                    dir = crate::paths::join(&dir, s.trim_start_matches('/'))?;
                }
                Some(dir)
            }
            _ => match self.res.resolve(m, v) {
                Resolved::Str(s) if s.starts_with('.') => crate::paths::join(here, &s),
                _ => None,
            },
        }
    }
}

/// The literal start of a computed path (`'/v0/' + ..`), and whether the path is that literal
/// and the file's segments alone (no other computed part before them is lost).
fn literal_start(v: &Val) -> (String, bool) {
    match v {
        Val::Str(s) => (s.clone(), true),
        Val::Template(parts) => match parts.first() {
            Some(Val::Str(s)) if parts.len() <= 2 => (s.clone(), true),
            Some(Val::Str(s)) => (s.clone(), false),
            _ => (String::new(), false),
        },
        _ => (String::new(), false),
    }
}

/// A file name's method and path segments: `teams.$uuid.invites.POST.ts` is `POST` and
/// `teams/{uuid}/invites`; a name without a method segment is no route.
fn route_of_name(name: &str) -> Option<(String, Vec<String>)> {
    let (stem, ext) = name.rsplit_once('.')?;
    if !matches!(ext, "ts" | "js" | "mts" | "mjs" | "cjs" | "cts") {
        return None;
    }
    let parts: Vec<&str> = stem.split('.').collect();
    let at = parts
        .iter()
        .position(|p| METHODS.contains(&p.to_ascii_lowercase().as_str()))?;
    let segs = parts[..at]
        .iter()
        .filter(|p| !p.is_empty() && **p != "index")
        .map(|p| {
            if let Some(n) = p.strip_prefix('$').or_else(|| p.strip_prefix(':')) {
                format!("{{{n}}}")
            } else if let Some(n) = p.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
                format!("{{{n}}}")
            } else {
                p.to_string()
            }
        })
        .collect();
    Some((parts[at].to_ascii_lowercase(), segs))
}

/// `require(x)` of a path computed at run time (`require(path.join(__dirname, 'api', r))`), its
/// `.default`, or either of them (`route.default || route`).
fn computed_require(v: &Val) -> bool {
    match v {
        Val::Call(callee, args) => match callee.as_ref() {
            Val::Global(g) if g == "require" => args.first().is_some_and(|a| a.as_str().is_none()),
            Val::Global(g) if g == crate::program::EITHER => args.iter().any(computed_require),
            _ => false,
        },
        Val::Member(inner, p) if p == "default" => computed_require(inner),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            route_of_name("files.$uuid.invites.POST.ts"),
            Some((
                "post".into(),
                vec!["files".into(), "{uuid}".into(), "invites".into()]
            ))
        );
        assert_eq!(
            route_of_name("education.GET.ts"),
            Some(("get".into(), vec!["education".into()]))
        );
        assert_eq!(route_of_name("helpers.ts"), None);
        assert_eq!(
            route_of_name("users.[id].delete.js"),
            Some(("delete".into(), vec!["users".into(), "{id}".into()]))
        );
    }
}
