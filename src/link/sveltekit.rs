//! SvelteKit file routes: `+server.(ts|js)` method exports and the form actions of
//! `+page.server.(ts|js)`, under `kit.files.routes` (default `src/routes`) and `kit.paths.base`
//! from `svelte.config.*`.

use super::fileroutes::{
    bracket_segment, config_module, config_object, config_value, in_dir, is_group, project_roots,
    strip_ext, under,
};
use super::mounts::{RawRoute, normalize_path};
use super::resolve::{ModId, Resolved, Resolver};
use crate::facts::{Diagnostic, Protocol};
use crate::program::Val;

const FRAMEWORK: &str = "sveltekit";

/// One SvelteKit app: where its routes live and the base path it is served under.
struct App {
    routes: String,
    base: String,
}

impl App {
    fn read(res: &Resolver, root: &str, diagnostics: &mut Vec<Diagnostic>) -> App {
        let mut app = App {
            routes: in_dir(root, "src/routes"),
            base: String::new(),
        };
        let Some(m) = config_module(res, root, "svelte.config") else {
            return app;
        };
        let file = &res.modules[m].file;
        let Some((om, fields)) = config_object(res, m) else {
            diagnostics.push(Diagnostic::new(
                file.clone(),
                0,
                "the SvelteKit configuration here is not an object this audit can read: routes are read from `src/routes`, with no base path",
            ));
            return app;
        };
        let mut read = |path: &[&str], default: &str| -> String {
            config_value(res, om, &fields, path, file, default, diagnostics)
                .unwrap_or_else(|| default.to_string())
        };
        let routes = read(&["kit", "files", "routes"], "src/routes");
        app.base = read(&["kit", "paths", "base"], "");
        app.routes = in_dir(root, routes.trim_start_matches("./").trim_end_matches('/'));
        app
    }
}

pub fn routes(res: &Resolver) -> (Vec<RawRoute>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut out = Vec::new();
    let apps: Vec<App> = project_roots(res, &["@sveltejs/kit"], &["svelte.config"])
        .iter()
        .map(|root| App::read(res, root, &mut diagnostics))
        .collect();
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        let Some((app, rest)) = apps
            .iter()
            .filter_map(|a| under(&module.file, &a.routes).map(|r| (a, r)))
            .max_by_key(|(a, _)| a.routes.len())
        else {
            continue;
        };
        let (dirs, name) = rest.rsplit_once('/').unwrap_or(("", rest));
        let segs: Vec<String> = dirs
            .split('/')
            .filter(|d| !d.is_empty() && !is_group(d))
            .map(bracket_segment)
            .collect();
        let path = normalize_path(&app.base, &segs.join("/"));
        match strip_ext(name) {
            "+server" => endpoints(res, m, &path, &mut out),
            "+page.server" => actions(res, m, &path, &mut out, &mut diagnostics),
            _ => {}
        }
    }
    (out, diagnostics)
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

/// A `+server` module's method exports; `fallback` answers the mutation methods it exports no
/// handler for.
fn endpoints(res: &Resolver, m: ModId, path: &str, out: &mut Vec<RawRoute>) {
    super::fileroutes::method_exports(FRAMEWORK, res, m, path, "fallback", out);
}

/// `export const actions = { default, register }`: `POST <page>` for `default`, `POST
/// <page>?/<name>` for a named one, each run by its function.
fn actions(
    res: &Resolver,
    m: ModId,
    path: &str,
    out: &mut Vec<RawRoute>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let module = &res.modules[m];
    let Some(v) = module.export("actions") else {
        return;
    };
    let export_line = module.export_line("actions").unwrap_or(1);
    let Resolved::Obj(om, fields) = res.resolve(m, v) else {
        diagnostics.push(Diagnostic::new(
            module.file.clone(),
            export_line,
            "the `actions` export is not an object this audit can read: the page's form actions are left out",
        ));
        return;
    };
    // (what the object spreads from elsewhere is not read: `{ ...shared, create }`)
    for (name, handler) in fields
        .into_iter()
        .filter(|(k, _)| k != crate::program::SPREAD)
    {
        let line = match res.resolve(om, &handler) {
            Resolved::Func(fm, f) if fm == m => res.modules[fm].functions[f].line,
            _ => export_line,
        };
        let path = if name == "default" {
            path.to_string()
        } else {
            format!("{path}?/{name}")
        };
        let mut r = route(m, "POST", path, line, handler, Protocol::FormAction);
        r.handler_module = om;
        out.push(r);
    }
}
