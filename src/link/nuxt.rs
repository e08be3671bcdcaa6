//! Nuxt and Nitro server routes: `server/api/**` under `/api`, `server/routes/**` under `/`
//! (Nitro alone: `api/` and `routes/` of its source folder), a method suffix (`orders.post.ts`)
//! naming the one method a file answers; a file without one answers every method, served as a
//! Next.js pages handler is (its `event.method` checks, `assertMethod`, `isMethod`).

use super::fileroutes::{
    bracket_segment, config_module, config_object, config_value, in_dir, is_group, project_roots,
    under,
};
use super::mounts::{RawRoute, normalize_path};
use super::next::{MUTATIONS, any_method_served};
use super::resolve::{ModId, Resolver};
use crate::facts::{Diagnostic, Protocol};
use crate::program::Val;

const FRAMEWORK: &str = "nuxt";
const SUFFIXES: &[&str] = &[
    "get", "head", "post", "put", "patch", "delete", "options", "connect", "trace",
];

/// One server: its source folder (from the tree's root).
struct Server {
    dir: String,
}

fn read_dir_option(
    res: &Resolver,
    root: &str,
    stem: &str,
    key: &str,
    default: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> String {
    let fallback = in_dir(root, default);
    let Some(m) = config_module(res, root, stem) else {
        return fallback;
    };
    let file = res.modules[m].file.clone();
    let Some((om, fields)) = config_object(res, m) else {
        diagnostics.push(Diagnostic::new(
            file,
            0,
            format!("this configuration is not an object this audit can read: server routes are read from `{default}`"),
        ));
        return fallback;
    };
    match config_value(res, om, &fields, &[key], &file, default, diagnostics) {
        Some(s) => in_dir(root, s.trim_start_matches("./").trim_end_matches('/')),
        None => fallback,
    }
}

pub fn routes(res: &Resolver) -> (Vec<RawRoute>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut servers: Vec<Server> = Vec::new();
    let nuxt = project_roots(res, &["nuxt", "nuxt3"], &["nuxt.config"]);
    for root in &nuxt {
        servers.push(Server {
            dir: read_dir_option(
                res,
                root,
                "nuxt.config",
                "serverDir",
                "server",
                &mut diagnostics,
            ),
        });
        // Nuxt 3 keeps `server/` in the source folder when `srcDir` moves it.
        let src = read_dir_option(res, root, "nuxt.config", "srcDir", "", &mut Vec::new());
        if src != *root {
            servers.push(Server {
                dir: in_dir(&src, "server"),
            });
        }
    }
    for root in project_roots(res, &["nitropack", "nitro"], &["nitro.config"]) {
        if nuxt.contains(&root) {
            continue;
        }
        servers.push(Server {
            dir: read_dir_option(res, &root, "nitro.config", "srcDir", "", &mut diagnostics),
        });
    }
    let mut out = Vec::new();
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        // The deepest server folder holding the file, then `api/` or `routes/` in it.
        let Some((rest, prefix)) = servers
            .iter()
            .filter_map(|s| under(&module.file, &s.dir).map(|r| (s, r)))
            .max_by_key(|(s, _)| s.dir.len())
            .and_then(|(_, r)| {
                r.strip_prefix("api/")
                    .map(|r| (r, "/api"))
                    .or_else(|| r.strip_prefix("routes/").map(|r| (r, "")))
            })
        else {
            continue;
        };
        let (dirs, name) = rest.rsplit_once('/').unwrap_or(("", rest));
        let Some((stem, _ext)) = name.rsplit_once('.') else {
            continue;
        };
        let (stem, method) = match stem.rsplit_once('.') {
            Some((s, suffix)) if SUFFIXES.contains(&suffix) => {
                (s, Some(suffix.to_ascii_uppercase()))
            }
            _ => (stem, None),
        };
        let mut segs: Vec<String> = dirs
            .split('/')
            .filter(|d| !d.is_empty() && !is_group(d))
            .map(bracket_segment)
            .collect();
        if stem != "index" {
            segs.push(bracket_segment(stem));
        }
        let path = normalize_path(prefix, &segs.join("/"));
        handler_routes(res, m, path, method, &mut out, &mut diagnostics);
    }
    (out, diagnostics)
}

/// The function an event handler's definition runs: `defineEventHandler(fn)`,
/// `eventHandler(fn)`, `defineCachedEventHandler(fn, opts)`, `defineEventHandler({ handler })`,
/// or a project's wrapper of them: the function given, or the object's `handler`.
fn inner_handler(v: &Val, depth: usize) -> Option<Val> {
    if depth > 8 {
        return None;
    }
    match v {
        Val::Func(_) => Some(v.clone()),
        Val::Call(_, args) => args.iter().find_map(|a| match a {
            Val::Func(_) => Some(a.clone()),
            Val::Obj(fields) => fields
                .iter()
                .rev()
                .find(|(k, _)| k == "handler")
                .map(|(_, h)| h.clone()),
            Val::Call(..) => inner_handler(a, depth + 1),
            _ => None,
        }),
        _ => None,
    }
}

fn handler_routes(
    res: &Resolver,
    m: ModId,
    path: String,
    method: Option<String>,
    out: &mut Vec<RawRoute>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let module = &res.modules[m];
    let Some(default) = module.export("default").or(module.cjs_whole.as_ref()) else {
        return;
    };
    let line = module.export_line("default").unwrap_or(1);
    let handler = inner_handler(default, 0).unwrap_or_else(|| default.clone());
    let route = |method: String, module: ModId, line: u32, branch: Option<String>| RawRoute {
        method,
        path: path.clone(),
        framework: FRAMEWORK,
        module,
        line,
        handler: handler.clone(),
        handler_module: m,
        middleware: vec![],
        branch,
        protocol: Protocol::Rest,
        handler_name: None,
        path_complete: true,
        steps: vec![],
        file: None,
    };
    match method {
        Some(method) if MUTATIONS.contains(&method.as_str()) => {
            out.push(route(method, m, line, None));
        }
        Some(_) => {}
        None => {
            if !matches!(res.resolve(m, &handler), super::resolve::Resolved::Func(..)) {
                diagnostics.push(Diagnostic::new(
                    module.file.clone(),
                    line,
                    format!(
                        "the handler of `{path}` is not a function this audit can read: it is listed once, as `POST`, with no effects followed"
                    ),
                ));
            }
            for s in any_method_served(res, m, &handler, line) {
                out.push(route(s.method, s.module, s.line, s.branch));
            }
        }
    }
}
