//! EverShop module routes: each `api/<routeId>/route.json` of an EverShop module or extension
//! declares a route (`{ "methods": ["POST"], "path": "/orders/:id/cancel" }`), served at `/api` +
//! its path; the route runs the middleware files of that folder (and of the folders of the same
//! route id in other modules), each a module whose default export is `(request, response, next)`,
//! in the order their names ask for: `[a,b]id.js` runs after `a` and `b`, `id[c].js` before `c`.
//! The middleware files of `api/global/` run for every API route. `pages/**/route.json` are pages,
//! not API routes. A project is EverShop's when its package.json depends on `@evershop/evershop`,
//! or it is that package itself.

use super::fileroutes::{project_of, project_roots, strip_ext, under};
use super::mounts::{RawRoute, normalize_path};
use super::resolve::{ModId, Resolver};
use crate::facts::{Diagnostic, Protocol};
use crate::program::Val;
use std::collections::BTreeMap;

const FRAMEWORK: &str = "evershop";
const PACKAGE: &str = "@evershop/evershop";
const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
/// The folder of middleware that runs for every API route.
const GLOBAL: &str = "global";

/// A middleware file's id and the ids it runs after and before, from its name:
/// `[context]bodyParser[auth].ts` → (`bodyParser`, [`context`], [`auth`]).
fn middleware_order(file_name: &str) -> (String, Vec<String>, Vec<String>) {
    let stem = strip_ext(file_name);
    let list = |s: &str| -> Vec<String> {
        s.split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (after, rest) = match stem.strip_prefix('[').and_then(|r| r.split_once(']')) {
        Some((after, rest)) => (list(after), rest),
        None => (vec![], stem),
    };
    let (id, before) = match rest.strip_suffix(']').and_then(|r| r.split_once('[')) {
        Some((id, before)) => (id, list(before)),
        None => (rest, vec![]),
    };
    (id.trim().to_string(), after, before)
}

/// One middleware file: its module, its default export, and its place in the order.
struct Step {
    module: ModId,
    handler: Val,
    id: String,
    after: Vec<String>,
    before: Vec<String>,
}

/// The steps in the order their names ask for (in file order where they ask nothing; a cycle
/// keeps file order).
fn ordered(mut steps: Vec<Step>) -> Vec<Step> {
    let n = steps.len();
    let runs_before = |a: &Step, b: &Step| a.before.contains(&b.id) || b.after.contains(&a.id);
    let mut indegree: Vec<usize> = (0..n)
        .map(|j| {
            (0..n)
                .filter(|&i| i != j && runs_before(&steps[i], &steps[j]))
                .count()
        })
        .collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let next = (0..n)
            .find(|&i| !done[i] && indegree[i] == 0)
            .or_else(|| (0..n).find(|&i| !done[i]));
        let Some(i) = next else { break };
        done[i] = true;
        order.push(i);
        for j in 0..n {
            if !done[j] && j != i && runs_before(&steps[i], &steps[j]) {
                indegree[j] = indegree[j].saturating_sub(1);
            }
        }
    }
    let mut slots: Vec<Option<Step>> = steps.drain(..).map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// `<module>/api/<routeId>` of a file: the route folder, the `api` folder and the route id.
fn route_folder(file: &str) -> Option<(&str, &str, &str)> {
    let (folder, _) = file.rsplit_once('/')?;
    let (api, id) = folder_id(folder)?;
    Some((folder, api, id))
}

/// The `api` folder and the route id of a route folder `<module>/api/<routeId>`.
fn folder_id(folder: &str) -> Option<(&str, &str)> {
    let (api, id) = folder.rsplit_once('/')?;
    let name = api.rsplit('/').next()?;
    (name == "api" && !id.is_empty() && id.chars().all(|c| c.is_ascii_alphabetic()))
        .then_some((api, id))
}

/// The line (1-based) of the first `needle` at or after byte `from` of `text`.
fn line_of(text: &str, needle: &str, from: usize) -> Option<u32> {
    let at = from + text.get(from..)?.find(needle)?;
    Some(text[..at].matches('\n').count() as u32 + 1)
}

/// A folder a build writes (`dist/`, `build/`): its routes are the source's, compiled.
fn is_build(folder: &str) -> bool {
    folder.split('/').any(|d| d == "dist" || d == "build")
}

pub fn routes(res: &Resolver) -> (Vec<RawRoute>, Vec<Diagnostic>) {
    let mut roots = project_roots(res, &[PACKAGE], &[]);
    if let Some(dir) = res.package_dir(PACKAGE) {
        roots.push(dir.to_string());
        roots.sort();
        roots.dedup();
    }
    let mut out = Vec::new();
    let mut diagnostics = Vec::new();
    if roots.is_empty() {
        return (out, diagnostics);
    }
    // Per project: the `api` folders, the middleware files of each route id, and the global ones.
    type Folders = BTreeMap<String, Vec<ModId>>;
    let mut projects: BTreeMap<&str, (BTreeMap<String, ModId>, Folders)> = BTreeMap::new();
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        let Some(root) = project_of(&roots, &module.file) else {
            continue;
        };
        let Some((folder, api, _)) =
            under(&module.file, root).and_then(|_| route_folder(&module.file))
        else {
            continue;
        };
        let (apis, folders) = projects.entry(root).or_default();
        apis.entry(api.to_string()).or_insert(m);
        folders.entry(folder.to_string()).or_default().push(m);
    }
    for (_, (apis, folders)) in projects {
        // Route folders: those holding a route.json, also with no middleware file of their own.
        let mut declared: Vec<(String, ModId)> = Vec::new();
        for (api, any) in &apis {
            for folder in res.subfolders(api) {
                let module = folders.get(&folder).and_then(|ms| ms.first()).copied();
                declared.push((folder, module.unwrap_or(*any)));
            }
        }
        let step = |m: ModId| -> Option<Step> {
            let module = &res.modules[m];
            let name = module.file.rsplit('/').next().unwrap_or(&module.file);
            // EverShop loads only files whose name starts lowercase or with a bracket.
            if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                return None;
            }
            let handler = module.export("default").or(module.cjs_whole.as_ref())?;
            let (id, after, before) = middleware_order(name);
            Some(Step {
                module: m,
                handler: handler.clone(),
                id,
                after,
                before,
            })
        };
        let global: Vec<(ModId, Val)> = ordered(
            folders
                .iter()
                .filter(|(f, _)| folder_id(f).is_some_and(|(_, id)| id == GLOBAL))
                .flat_map(|(_, ms)| ms.iter().filter_map(|m| step(*m)))
                .collect(),
        )
        .into_iter()
        .map(|s| (s.module, s.handler))
        .collect();
        let mut seen: BTreeMap<(String, String), String> = BTreeMap::new();
        // Source folders first: a build's copy of a route is the same route.
        declared.sort_by_key(|(f, _)| (is_build(f), f.clone()));
        for (folder, module) in declared {
            let Some((_, id)) = folder_id(&folder) else {
                continue;
            };
            if id == GLOBAL {
                continue;
            }
            let json = format!("{folder}/route.json");
            let Some((text, v)) = res.read_json(&json) else {
                continue;
            };
            let Some(path) = v.get("path").and_then(|p| p.as_str()) else {
                diagnostics.push(Diagnostic::new(
                    json.clone(),
                    0,
                    "this EverShop route has no `path` string: it is left out".to_string(),
                ));
                continue;
            };
            let methods: Vec<String> = v
                .get("methods")
                .and_then(|m| m.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str())
                        .map(str::to_ascii_uppercase)
                        .collect()
                })
                .unwrap_or_default();
            if methods.is_empty() {
                diagnostics.push(Diagnostic::new(
                    json.clone(),
                    0,
                    "this EverShop route names no `methods`: it is left out".to_string(),
                ));
                continue;
            }
            // The middleware of this route id, in every module of the project.
            let steps = ordered(
                folders
                    .iter()
                    .filter(|(f, _)| {
                        folder_id(f).is_some_and(|(_, i)| i == id)
                            && is_build(f) == is_build(&folder)
                    })
                    .flat_map(|(_, ms)| ms.iter().filter_map(|m| step(*m)))
                    .collect(),
            );
            let url = normalize_path("/api", path);
            let methods_at = text.find("\"methods\"").unwrap_or(0);
            for method in methods {
                if !METHODS.contains(&method.as_str()) {
                    diagnostics.push(Diagnostic::new(
                        json.clone(),
                        0,
                        format!("`{method}` is not an HTTP method EverShop serves: it is left out"),
                    ));
                    continue;
                }
                if let Some(other) = seen.get(&(method.clone(), url.clone())) {
                    if is_build(&folder) {
                        continue;
                    }
                    diagnostics.push(Diagnostic::new(
                        json.clone(),
                        0,
                        format!("`{method} {url}` is declared in {other} too: both are listed"),
                    ));
                }
                seen.insert((method.clone(), url.clone()), json.clone());
                let line = line_of(&text, &format!("\"{method}\""), methods_at)
                    .or_else(|| {
                        // Methods written in lower case.
                        let lower = method.to_ascii_lowercase();
                        line_of(&text, &format!("\"{lower}\""), methods_at)
                    })
                    .or_else(|| line_of(&text, "\"methods\"", 0))
                    .unwrap_or(1);
                let (handler_module, handler) = steps
                    .first()
                    .map(|s| (s.module, s.handler.clone()))
                    .unwrap_or((module, Val::Unknown));
                out.push(RawRoute {
                    method,
                    path: url.clone(),
                    framework: FRAMEWORK,
                    module: handler_module,
                    line,
                    handler,
                    handler_module,
                    middleware: global.clone(),
                    branch: None,
                    protocol: Protocol::Rest,
                    handler_name: Some(id.to_string()),
                    path_complete: true,
                    steps: steps
                        .iter()
                        .skip(1)
                        .map(|s| (s.module, s.handler.clone()))
                        .collect(),
                    file: Some(json.clone()),
                });
            }
        }
    }
    (out, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn middleware_names_give_their_order() {
        assert_eq!(
            middleware_order("[context]bodyParser[auth].ts"),
            (
                "bodyParser".into(),
                vec!["context".into()],
                vec!["auth".into()]
            )
        );
        assert_eq!(
            middleware_order("[a,b]createOrder.js"),
            ("createOrder".into(), vec!["a".into(), "b".into()], vec![])
        );
        assert_eq!(
            middleware_order("finish[apiResponse].ts"),
            ("finish".into(), vec![], vec!["apiResponse".into()])
        );
        assert_eq!(
            middleware_order("sendEmail.js"),
            ("sendEmail".into(), vec![], vec![])
        );
    }

    #[test]
    fn route_folders_are_under_api() {
        assert_eq!(
            route_folder("src/modules/oms/api/createOrder/[bodyParser]create.ts"),
            Some((
                "src/modules/oms/api/createOrder",
                "src/modules/oms/api",
                "createOrder"
            ))
        );
        assert_eq!(
            route_folder("src/modules/oms/pages/admin/orderEdit/index.ts"),
            None
        );
        assert_eq!(route_folder("src/api/create-order/x.ts"), None);
    }
}
