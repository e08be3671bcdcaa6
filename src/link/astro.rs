//! Astro endpoints and actions: `src/pages/**/*.(ts|js)` method exports (`ALL` answers the methods
//! without their own), under `base` and `srcDir` from `astro.config.*`; and the actions of
//! `src/actions/index.ts` (`export const server = { name: defineAction({ handler }) }`) as
//! `POST /_actions/<name>`, nested objects giving dotted names; and the routes integrations add
//! with `injectRoute({ pattern, entrypoint })`.

use super::fileroutes::{
    bracket_segment, config_module, config_object, config_value, in_dir, project_roots, under,
    written,
};
use super::mounts::{RawRoute, normalize_path};
use super::resolve::{ModId, Resolved, Resolver};
use crate::facts::{Diagnostic, Protocol};
use crate::program::{FnId, Val};
use std::collections::BTreeSet;

const FRAMEWORK: &str = "astro";
const ENDPOINT_EXTS: &[&str] = &["ts", "js", "mts", "mjs"];

struct Site {
    root: String,
    src: String,
    base: String,
}

impl Site {
    fn read(res: &Resolver, root: &str, diagnostics: &mut Vec<Diagnostic>) -> Site {
        let mut site = Site {
            root: root.to_string(),
            src: in_dir(root, "src"),
            base: String::new(),
        };
        let Some(m) = config_module(res, root, "astro.config") else {
            return site;
        };
        let file = res.modules[m].file.clone();
        let Some((om, fields)) = config_object(res, m) else {
            diagnostics.push(Diagnostic::new(
                file,
                0,
                "the Astro configuration here is not an object this audit can read: endpoints are read from `src/pages`, with no base path",
            ));
            return site;
        };
        for (key, default) in [("srcDir", "src"), ("base", "")] {
            let Some(value) = config_value(res, om, &fields, &[key], &file, default, diagnostics)
            else {
                continue;
            };
            if key == "srcDir" {
                site.src = in_dir(root, value.trim_start_matches("./").trim_end_matches('/'));
            } else {
                site.base = value;
            }
        }
        site
    }
}

pub fn routes(res: &Resolver) -> (Vec<RawRoute>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let sites: Vec<Site> = project_roots(res, &["astro"], &["astro.config"])
        .iter()
        .map(|root| Site::read(res, root, &mut diagnostics))
        .collect();
    let mut out = Vec::new();
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        let Some((site, rest)) = sites
            .iter()
            .filter_map(|s| under(&module.file, &s.src).map(|r| (s, r)))
            .max_by_key(|(s, _)| s.src.len())
        else {
            continue;
        };
        if let Some(page) = rest.strip_prefix("pages/") {
            endpoint(res, m, site, page, &mut out);
        } else if let Some(name) = rest.strip_prefix("actions/")
            && name
                .rsplit_once('.')
                .is_some_and(|(stem, ext)| stem == "index" && ENDPOINT_EXTS.contains(&ext))
        {
            actions(res, m, site, &mut out, &mut diagnostics);
        }
    }
    let handed = handed_inject_route(res);
    for (m, module) in res.modules.iter().enumerate() {
        if !module.is_test {
            injected(res, m, &sites, &handed, &mut out, &mut diagnostics);
        }
    }
    (out, diagnostics)
}

/// `injectRoute({ pattern, entrypoint })` in an integration's `astro:config:setup` hook (the
/// function the hook's options object gives, destructured or not): the entrypoint module answers
/// at the pattern, under the site's base, with its method exports as endpoints (an `.astro`
/// entrypoint is a page). The function may be handed to a helper that calls it. A string
/// entrypoint is a package specifier or a path from the project's root (Astro resolves it from
/// there); `new URL('./x.ts', import.meta.url)` is a path from the integration's file.
fn injected(
    res: &Resolver,
    m: ModId,
    sites: &[Site],
    handed: &BTreeSet<(ModId, FnId, usize)>,
    out: &mut Vec<RawRoute>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let module = &res.modules[m];
    let file = &module.file;
    let site = sites
        .iter()
        .filter(|s| under(file, &s.root).is_some())
        .max_by_key(|s| s.root.len());
    let mut by_name: Vec<String> = Vec::new();
    for facts in &module.functions {
        // The calls written in an `injectRoute` call's arguments come just before it.
        let mut after_previous = 0;
        for (ci, cs) in facts.calls.iter().enumerate() {
            let given = matches!(&cs.callee, Val::Param(f, i) if handed.contains(&(m, *f, *i)));
            if !is_inject_route(&cs.callee) && !given {
                continue;
            }
            let inner = &facts.calls[after_previous..ci];
            after_previous = ci + 1;
            let fields = match cs.args.first().map(|a| res.resolve(m, a)) {
                Some(Resolved::Obj(om, fields)) => Some((om, fields)),
                _ => None,
            };
            let field = |name: &str| {
                fields.as_ref().and_then(|(om, fs)| {
                    fs.iter()
                        .rev()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| (*om, v.clone()))
                })
            };
            let pattern = field("pattern").and_then(|(om, v)| match res.resolve(om, &v) {
                Resolved::Str(s) => Some(s),
                _ => None,
            });
            let Some(pattern) = pattern else {
                diagnostics.push(Diagnostic::new(
                    file.clone(),
                    cs.line,
                    format!(
                        "`{}` injects a route whose pattern this audit cannot read: its endpoints are left out",
                        cs.text
                    ),
                ));
                continue;
            };
            let entry = field("entrypoint");
            // An `.astro` entrypoint is a page, not an endpoint.
            if let Some((om, v)) = &entry
                && let Resolved::Str(spec) = res.resolve(*om, v)
                && spec.ends_with(".astro")
            {
                continue;
            }
            let mut target = entry
                .as_ref()
                .and_then(|(om, v)| entrypoint(res, *om, v, site.map(|s| s.root.as_str())));
            // A page given by name to a helper (`resolveRoute('admin.astro')`).
            if target.is_none()
                && inner.iter().filter(|c| c.line >= cs.line).any(|c| {
                    c.args.iter().any(
                        |a| matches!(res.resolve(m, a), Resolved::Str(s) if s.ends_with(".astro")),
                    )
                })
            {
                continue;
            }
            if target.is_none()
                && let Some((t, helper)) = entry_by_name(res, m, inner, cs.line)
            {
                target = Some(t);
                by_name.push(helper);
            }
            let Some(target) = target else {
                diagnostics.push(Diagnostic::new(
                    file.clone(),
                    cs.line,
                    format!(
                        "the route `{pattern}` injected here has an entrypoint this audit cannot resolve to a file of the tree ({}): its endpoints are left out",
                        entry
                            .as_ref()
                            .map(|(_, v)| super::display(v))
                            .unwrap_or_else(|| "none given".into())
                    ),
                ));
                continue;
            };
            let segs: Vec<String> = pattern.split('/').map(bracket_segment).collect();
            let path = normalize_path(site.map_or("", |s| s.base.as_str()), &segs.join("/"));
            super::fileroutes::method_exports(FRAMEWORK, res, target, &path, "ALL", out);
        }
    }
    if !by_name.is_empty() {
        by_name.sort();
        by_name.dedup();
        diagnostics.push(Diagnostic::new(
            file.clone(),
            0,
            format!(
                "the entrypoints of the routes injected here are built by a function this audit does not evaluate ({}): each is the file of the tree whose path ends with the name given to it",
                by_name.join(", ")
            ),
        ));
    }
}

/// An entrypoint built by a project function from a file name (`resolveRoute('api/x.ts')`,
/// which finds the file in the package's build or source): the one file of the tree whose path
/// ends with that name, nearest to the integration's file; with the call as written.
fn entry_by_name(
    res: &Resolver,
    m: ModId,
    inner: &[crate::program::CallSite],
    from_line: u32,
) -> Option<(ModId, String)> {
    let file = &res.modules[m].file;
    for cs in inner.iter().filter(|c| c.line >= from_line) {
        if !matches!(res.resolve(m, &cs.callee), Resolved::Func(..)) {
            continue;
        }
        let [arg] = cs.args.as_slice() else {
            continue;
        };
        let Resolved::Str(name) = res.resolve(m, arg) else {
            continue;
        };
        let name = name.trim_start_matches("./");
        if name.is_empty() || name.starts_with('.') || name.starts_with('/') {
            continue;
        }
        let stem = name
            .rsplit_once('.')
            .filter(|(_, ext)| ENDPOINT_EXTS.contains(ext) || *ext == "tsx" || *ext == "jsx")
            .map_or(name, |(s, _)| s);
        let shared = |other: &str| {
            file.split('/')
                .zip(other.split('/'))
                .take_while(|(a, b)| a == b)
                .count()
        };
        let mut best: Vec<(usize, ModId)> = res
            .modules
            .iter()
            .enumerate()
            .filter(|(_, md)| !md.is_test)
            .filter(|(_, md)| {
                let s = md
                    .file
                    .rsplit_once('.')
                    .map_or(md.file.as_str(), |(s, _)| s);
                s.strip_suffix(stem).is_some_and(|p| p.ends_with('/'))
            })
            .map(|(t, md)| (shared(&md.file), t))
            .collect();
        best.sort_by_key(|b| std::cmp::Reverse(b.0));
        match best.as_slice() {
            [(_, t)] => return Some((*t, cs.text.clone())),
            [(a, t), (b, _), ..] if a > b => return Some((*t, cs.text.clone())),
            _ => continue,
        }
    }
    None
}

/// The parameters `injectRoute` is handed to (`injectCoreRoutes(injectRoute, ..)` in a hook): the
/// function, in its module, and the parameter's index; a helper may hand it on again.
fn handed_inject_route(res: &Resolver) -> BTreeSet<(ModId, FnId, usize)> {
    let mut handed: BTreeSet<(ModId, FnId, usize)> = BTreeSet::new();
    for _round in 0..3 {
        let before = handed.len();
        for (m, module) in res.modules.iter().enumerate() {
            for facts in &module.functions {
                for cs in &facts.calls {
                    for (i, a) in cs.args.iter().enumerate() {
                        let passes = is_inject_route(a)
                            || matches!(a, Val::Param(f, j) if handed.contains(&(m, *f, *j)));
                        if !passes {
                            continue;
                        }
                        if let Resolved::Func(m2, f2) = res.resolve(m, &cs.callee) {
                            handed.insert((m2, f2, i));
                        }
                    }
                }
            }
        }
        if handed.len() == before {
            break;
        }
    }
    handed
}

/// `injectRoute`, or `options.injectRoute`, as a hook's argument gives it.
fn is_inject_route(callee: &Val) -> bool {
    match callee {
        Val::Member(inner, name) => {
            name == "injectRoute" && matches!(inner.as_ref(), Val::Param(..))
        }
        _ => false,
    }
}

/// The module an entrypoint names: a string (a package specifier, or a path from the project
/// root `root`), `new URL(rel, import.meta.url)` (a path from the file that writes it), or
/// `fileURLToPath(..)` of one.
fn entrypoint(res: &Resolver, m: ModId, v: &Val, root: Option<&str>) -> Option<ModId> {
    let (m, v) = written(res, m, v);
    match &v {
        Val::New(ctor, line) if matches!(ctor.as_ref(), Val::Global(g) if g == "URL") => {
            let args = res.modules[m].new_call(*line).map(|c| c.args.clone())?;
            let Resolved::Str(rel) = res.resolve(m, args.first()?) else {
                return None;
            };
            // The base is `import.meta.url` (what the evaluator keeps of it is no string); a
            // string base is a web address, not a file.
            if matches!(args.get(1)?, Val::Str(_)) {
                return None;
            }
            let dir = res.modules[m].file.rsplit_once('/').map_or("", |(d, _)| d);
            res.file_module(&crate::paths::join(dir, &rel)?)
        }
        Val::Call(callee, args)
            if args.len() == 1
                && matches!(callee.as_ref(), Val::Import { name: Some(n), .. } if n == "fileURLToPath") =>
        {
            entrypoint(res, m, &args[0], root)
        }
        _ => {
            let Resolved::Str(spec) = res.resolve(m, &v) else {
                return None;
            };
            if let Some(rel) = spec.strip_prefix("./").or_else(|| {
                (!spec.starts_with('.') && !spec.starts_with('@') && !spec.starts_with('/'))
                    .then_some(spec.as_str())
            }) && let Some(t) = res.file_module(&in_dir(root.unwrap_or(""), rel))
            {
                return Some(t);
            }
            res.resolve_spec(m, &spec)
        }
    }
}

fn route(
    m: ModId,
    method: &str,
    path: String,
    line: u32,
    handler: Val,
    protocol: Protocol,
) -> RawRoute {
    super::fileroutes::route(FRAMEWORK, m, method, path, line, handler, protocol)
}

/// An endpoint file's method exports; files and folders starting with `_` are not routes.
fn endpoint(res: &Resolver, m: ModId, site: &Site, page: &str, out: &mut Vec<RawRoute>) {
    let Some((stem, ext)) = page.rsplit_once('.') else {
        return;
    };
    if !ENDPOINT_EXTS.contains(&ext) || page.split('/').any(|c| c.starts_with('_')) {
        return;
    }
    let mut segs: Vec<String> = stem.split('/').map(bracket_segment).collect();
    if segs.last().is_some_and(|s| s == "index") {
        segs.pop();
    }
    let path = normalize_path(&site.base, &segs.join("/"));
    super::fileroutes::method_exports(FRAMEWORK, res, m, &path, "ALL", out);
}

/// `export const server = { .. }`: each `defineAction({ handler })`, by its dotted name.
fn actions(
    res: &Resolver,
    m: ModId,
    site: &Site,
    out: &mut Vec<RawRoute>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let module = &res.modules[m];
    let Some(server) = module.export("server") else {
        return;
    };
    let line = module.export_line("server").unwrap_or(1);
    let mut stack: Vec<(String, ModId, Val, usize)> = vec![(String::new(), m, server.clone(), 0)];
    let mut found: Vec<(String, ModId, Val)> = Vec::new();
    while let Some((name, vm, v, depth)) = stack.pop() {
        let (vm, v) = written(res, vm, &v);
        let fields = match &v {
            Val::Obj(fields) => Some((vm, fields.clone())),
            Val::Call(..) => None,
            _ => match res.resolve(vm, &v) {
                Resolved::Obj(om, fields) => Some((om, fields)),
                _ => None,
            },
        };
        match (&v, fields) {
            (Val::Call(_, args), _) => {
                let handler = args.first().and_then(|a| match res.resolve(vm, a) {
                    Resolved::Obj(om, fields) => fields
                        .iter()
                        .rev()
                        .find(|(k, _)| k == "handler")
                        .map(|(_, h)| (om, h.clone())),
                    _ => None,
                });
                match handler {
                    Some((hm, h)) => found.push((name, hm, h)),
                    None => diagnostics.push(Diagnostic::new(
                        module.file.clone(),
                        line,
                        format!("the action `{name}` has no `handler` this audit can read: it is left out"),
                    )),
                }
            }
            (_, Some((om, fields))) if depth < 8 => {
                for (k, fv) in fields {
                    // `{ ...shared, signup }`: what the spread holds sits at this level
                    let dotted = if k == crate::program::SPREAD {
                        name.clone()
                    } else if name.is_empty() {
                        k
                    } else {
                        format!("{name}.{k}")
                    };
                    stack.push((dotted, om, fv, depth + 1));
                }
            }
            _ => diagnostics.push(Diagnostic::new(
                module.file.clone(),
                line,
                format!(
                    "the actions under `{}` are not an object this audit can read: they are left out",
                    if name.is_empty() { "server" } else { &name }
                ),
            )),
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, hm, h) in found {
        let hline = match res.resolve(hm, &h) {
            Resolved::Func(fm, f) if fm == m => res.modules[fm].functions[f].line,
            _ => line,
        };
        let mut r = route(
            m,
            "POST",
            normalize_path(&site.base, &format!("_actions/{name}")),
            hline,
            h,
            Protocol::ServerAction,
        );
        r.handler_module = hm;
        r.handler_name = Some(name);
        out.push(r);
    }
}
