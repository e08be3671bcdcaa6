//! Astro endpoints and actions: `src/pages/**/*.(ts|js)` method exports (`ALL` answers the methods
//! without their own), under `base` and `srcDir` from `astro.config.*`; and the actions of
//! `src/actions/index.ts` (`export const server = { name: defineAction({ handler }) }`) as
//! `POST /_actions/<name>`, nested objects giving dotted names.

use super::fileroutes::{
    bracket_segment, config_module, config_object, config_value, in_dir, project_roots, under,
    written,
};
use super::mounts::{RawRoute, normalize_path};
use super::resolve::{ModId, Resolved, Resolver};
use crate::facts::{Diagnostic, Protocol};
use crate::frontend::ts::ir::Val;

const FRAMEWORK: &str = "astro";
const ENDPOINT_EXTS: &[&str] = &["ts", "js", "mts", "mjs"];

struct Site {
    src: String,
    base: String,
}

impl Site {
    fn read(res: &Resolver, root: &str, diagnostics: &mut Vec<Diagnostic>) -> Site {
        let mut site = Site {
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
                    let dotted = if name.is_empty() { k } else { format!("{name}.{k}") };
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
