//! Next.js file routes: `pages/api/**` handlers (methods from their `req.method` checks) and
//! app-router `app/**/route.ts` method exports, under `basePath` from `next.config.*`.

use super::fileroutes::{bracket_segment as segment, strip_ext};
use super::mounts::{RawRoute, normalize_path};
use super::resolve::{ModId, Resolved, Resolver};
use crate::facts::Protocol;
use crate::program::{FnId, MethodCheck, Val};

pub const MUTATIONS: &[&str] = &crate::facts::MUTATION_METHODS;
const APP_METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/// Route groups `(shop)` and parallel-route slots `@modal` are not path segments.
fn is_group_or_slot(dir: &str) -> bool {
    (dir.starts_with('(') && dir.ends_with(')')) || dir.starts_with('@')
}

/// Splits `apps/web/pages/api/x.ts` at its `pages/` folder: (project root, `api/x.ts`).
fn split_at<'f>(file: &'f str, folder: &str) -> Option<(&'f str, &'f str)> {
    let marker = format!("{folder}/");
    let at = if file.starts_with(&marker) {
        0
    } else {
        file.find(&format!("/{marker}"))? + 1
    };
    let root = file[..at].trim_end_matches('/');
    let root = root
        .strip_suffix("/src")
        .or_else(|| (root == "src").then_some(""))
        .unwrap_or(root);
    Some((root, &file[at + marker.len()..]))
}

fn base_path(res: &Resolver, root: &str) -> String {
    for ext in ["js", "mjs", "cjs", "ts", "mts"] {
        let file = if root.is_empty() {
            format!("next.config.{ext}")
        } else {
            format!("{root}/next.config.{ext}")
        };
        let Some(m) = res.module_of(&file) else {
            continue;
        };
        let module = &res.modules[m];
        let Some(v) = module
            .cjs_whole
            .clone()
            .or_else(|| module.export("default").cloned())
        else {
            continue;
        };
        if let Resolved::Obj(om, fields) = res.resolve(m, &v)
            && let Some((_, bp)) = fields.iter().rev().find(|(k, _)| k == "basePath")
            && let Resolved::Str(s) | Resolved::Default { value: s, .. } = res.resolve(om, bp)
        {
            return s;
        }
    }
    String::new()
}

/// The URL path a file serves as a Next.js route: a `pages/api/**` handler, or an app-router
/// `app/**/route.ts` (route groups and slots dropped; None in a private folder), under `basePath`.
pub fn file_route(res: &Resolver, file: &str) -> Option<FileRoute> {
    if let Some((root, rest)) = split_at(file, "pages").filter(|(_, rest)| rest.starts_with("api/"))
    {
        let prefix = base_path(res, root);
        let mut segs: Vec<String> = strip_ext(rest).split('/').map(segment).collect();
        if segs.last().is_some_and(|s| s == "index") {
            segs.pop();
        }
        return Some(FileRoute::Pages(normalize_path(&prefix, &segs.join("/"))));
    }
    let (root, rest) = split_at(file, "app")?;
    let name = rest.rsplit('/').next().unwrap_or(rest);
    if strip_ext(name) != "route" {
        return None;
    }
    let dirs: Vec<&str> = rest.split('/').collect();
    let dirs = &dirs[..dirs.len() - 1];
    if dirs.iter().any(|d| d.starts_with('_')) {
        return None; // private folder
    }
    let segs: Vec<String> = dirs
        .iter()
        .filter(|d| !is_group_or_slot(d))
        .map(|d| segment(d))
        .collect();
    Some(FileRoute::App(normalize_path(
        &base_path(res, root),
        &segs.join("/"),
    )))
}

/// A file's route: a pages-router API handler or an app-router route handler, with its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRoute {
    Pages(String),
    App(String),
}

impl FileRoute {
    pub fn path(&self) -> &str {
        match self {
            FileRoute::Pages(p) | FileRoute::App(p) => p,
        }
    }
}

pub fn routes(res: &Resolver) -> Vec<RawRoute> {
    let mut out = Vec::new();
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        server_actions(res, m, &mut out);
        match file_route(res, &module.file) {
            Some(FileRoute::Pages(path)) => pages_handler(res, m, path, &mut out),
            Some(FileRoute::App(path)) => {
                for method in APP_METHODS {
                    let Some(handler) = module.export(method) else {
                        continue;
                    };
                    let line = module.export_line(method).unwrap_or(1);
                    out.push(file_route_of(
                        method.to_string(),
                        &path,
                        (m, line),
                        (handler.clone(), m),
                    ));
                }
            }
            None => {}
        }
    }
    out
}

/// A Next.js file's route: `method` at `path`, written at (module, line), run by (handler, its
/// module).
fn file_route_of(
    method: String,
    path: &str,
    (module, line): (ModId, u32),
    (handler, handler_module): (Val, ModId),
) -> RawRoute {
    RawRoute {
        method,
        path: path.to_string(),
        framework: "nextjs",
        module,
        line,
        handler,
        handler_module,
        middleware: vec![],
        branch: None,
        protocol: Protocol::Rest,
        handler_name: None,
        path_complete: true,
        steps: vec![],
        file: None,
    }
}

/// A pages-router handler: the methods its `req.method` checks let through, each at the line of
/// its check, or every mutation method at the `export default` line when there is no check (unlike
/// the other handlers for every method, which are listed once as `POST`: the labelled corpus
/// counts a pages handler under each method).
fn pages_handler(res: &Resolver, m: ModId, path: String, out: &mut Vec<RawRoute>) {
    let module = &res.modules[m];
    let Some(default) = module.export("default").or(module.cjs_whole.as_ref()) else {
        return;
    };
    let export_line = module.export_line("default").unwrap_or(1);
    // A table of handlers by method handed to a project function (`withMiddlewares({ POST:
    // createRoute(..), GET: .. })`, which calls the one `req.method` names): each mutation
    // method of the table is a route, its handler the table's value.
    if let Some(table) = method_table(res, m, default).or_else(|| method_chain(default)) {
        for (method, handler) in table {
            out.push(file_route_of(method, &path, (m, export_line), (handler, m)));
        }
        return;
    }
    // The handler hands the request and such a table to a dispatcher (`await defaultHandler(req,
    // res, { GET: handleGET, POST: handlePOST })`, which runs the one `req.method` names).
    if let Some((hm, table)) = dispatched_table(res, m, default) {
        for (method, handler) in table {
            out.push(file_route_of(
                method,
                &path,
                (m, export_line),
                (handler, hm),
            ));
        }
        return;
    }
    let mut served = methods_served(res, m, default, export_line, MUTATIONS);
    // A wrapper's method gate says which methods reach the handler: those the handler's own
    // checks tell apart keep their place, the others run its code under that method, unless the
    // handler gates them out itself.
    if let Some(allowed) = wrapper_methods(res, m, default) {
        let gated = own_gate(res, m, default);
        let mut through = Vec::new();
        for method in allowed {
            if !MUTATIONS.contains(&method.as_str())
                || through.iter().any(|s: &Served| s.method == method)
            {
                continue;
            }
            match served.iter().find(|s| s.method == method) {
                Some(s) => through.push(s.clone()),
                None if !gated => through.push(Served {
                    branch: Some(method.clone()),
                    method,
                    module: m,
                    line: export_line,
                    handed: None,
                }),
                None => {}
            }
        }
        served = through;
    }
    for s in served {
        // A handler that only hands its request on: what runs is the function it hands it to.
        let (handler, handler_module) = match s.handed {
            Some((hm, hf)) => (Val::Func(hf), hm),
            None => (default.clone(), m),
        };
        out.push(RawRoute {
            branch: s.branch,
            ..file_route_of(
                s.method,
                &path,
                (s.module, s.line),
                (handler, handler_module),
            )
        });
    }
}

/// The mutation methods and their handlers of a table of handlers by method that a project
/// function is given as the whole default export: an object literal argument whose keys are all
/// HTTP methods (`GET`, `post`, ..). None when there is no such table.
fn method_table(res: &Resolver, m: ModId, v: &Val) -> Option<Vec<(String, Val)>> {
    let Val::Call(callee, args) = v.plain() else {
        return None;
    };
    if !matches!(res.resolve(m, callee), Resolved::Func(..)) {
        return None;
    }
    args.iter().find_map(method_fields)
}

/// The mutation methods and handlers of a table of handlers by method that a handler gives a
/// dispatcher together with its request (`defaultHandler(req, res, { GET: .., POST: .. })`):
/// those are all the methods it serves, even when the table names no mutation. The table's
/// module is the handler's. None when the handler makes no such call to a project function, or
/// makes other calls too (what it does itself would be lost).
fn dispatched_table(res: &Resolver, m: ModId, v: &Val) -> Option<(ModId, Vec<(String, Val)>)> {
    let Resolved::Func(hm, hf) = res.resolve(m, v) else {
        return None;
    };
    let calls = &res.modules[hm].functions[hf].calls;
    let (cs, table) = calls.iter().find_map(|cs| {
        if !matches!(cs.args.first(), Some(Val::Param(f, 0)) if *f == hf)
            || !matches!(res.resolve(hm, &cs.callee), Resolved::Func(..))
        {
            return None;
        }
        Some((cs, cs.args.iter().find_map(method_fields)?))
    })?;
    // A handler that does more than dispatch keeps its own reading (what it does itself would
    // be lost); calls of a factory that returns a handler (`POST: withSetupLink(handlePOST)`)
    // build the table's entries.
    let builds_entry = |c: &crate::program::CallSite| match res.resolve(hm, &c.callee) {
        Resolved::Func(m2, f2) => res.modules[m2].functions[f2]
            .returns
            .iter()
            .any(|r| matches!(r, Val::Func(_))),
        _ => false,
    };
    if calls
        .iter()
        .any(|c| !std::ptr::eq(c, cs) && !builds_entry(c))
    {
        return None;
    }
    Some((hm, table))
}

const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// An object literal whose keys are all HTTP methods (`{ GET: .., post: .. }`), or that names
/// some in capitals beside other settings (`{ url, GET: { handle }, POST: { auth, handle } }`):
/// its mutation methods, each with its handler (a method's value, or the one function a
/// method's settings object holds).
fn method_fields(v: &Val) -> Option<Vec<(String, Val)>> {
    let Val::Obj(fields) = v else {
        return None;
    };
    let all = fields
        .iter()
        .all(|(k, _)| METHODS.contains(&k.to_ascii_uppercase().as_str()));
    let capitals = fields.iter().any(|(k, _)| METHODS.contains(&k.as_str()));
    if fields.is_empty() || !(all || capitals) {
        return None;
    }
    let mut out: Vec<(String, Val)> = Vec::new();
    for (k, handler) in fields {
        let method = if all {
            k.to_ascii_uppercase()
        } else {
            k.clone()
        };
        if MUTATIONS.contains(&method.as_str()) && !out.iter().any(|(m2, _)| *m2 == method) {
            out.push((method, settings_handler(handler)));
        }
    }
    Some(out)
}

/// A method's handler as a table gives it: the value, or the one function of a settings object
/// (`{ auth: true, handle: async (..) => .. }`).
fn settings_handler(v: &Val) -> Val {
    if let Val::Obj(fields) = v {
        let mut funcs = fields.iter().filter(|(_, f)| matches!(f, Val::Func(_)));
        if let (Some((_, f)), None) = (funcs.next(), funcs.next()) {
            return f.clone();
        }
    }
    v.clone()
}

/// A default export built as a chain of routes by method (next-connect's `nc().use(mw)
/// .get(h).post(h)`, a builder's `createRoute().GET({..}).handler(h).POST({..}).handler(h)
/// .toNextApiHandler()`): each mutation method of the chain with its handler, the function the
/// link is given or, when it is given none, the one the `.handler(..)` after it is. None when
/// the chain names no method.
fn method_chain(v: &Val) -> Option<Vec<(String, Val)>> {
    let mut out: Vec<(String, Val)> = Vec::new();
    let mut named = false;
    let mut then_handler: Option<Val> = None;
    let mut cur = v.plain();
    for _ in 0..64 {
        let Val::Call(callee, args) = cur else {
            break;
        };
        let Val::Member(recv, link) = callee.as_ref() else {
            break;
        };
        // the handler: the last argument that is neither a path nor options (a function, an
        // imported one, a wrapped one)
        let func = args
            .iter()
            .rev()
            .find(|a| !matches!(a, Val::Str(_) | Val::Obj(_) | Val::Template(_)))
            .cloned();
        let method = link.to_ascii_uppercase();
        if METHODS.contains(&method.as_str()) {
            named = true;
            // (a method given no handler the chain shows is still served: its handler is
            // unknown, not absent)
            let handler = func.or_else(|| then_handler.take()).unwrap_or(Val::Unknown);
            if MUTATIONS.contains(&method.as_str()) && !out.iter().any(|(m2, _)| *m2 == method) {
                out.push((method, handler));
            }
            then_handler = None;
        } else if link == "handler" {
            then_handler = func;
        }
        cur = recv.plain();
    }
    // (the links were read from the last to the first)
    out.reverse();
    named.then_some(out)
}

/// The methods a project wrapper lets through to the handler it wraps: `withApi(handler, {
/// methods: ['POST', 'DELETE'] })` (also `allowedMethods`), where the wrapper tests the request's
/// method against that field of its options (`if (!options.methods.includes(req.method)) return
/// 405`); without the options, their default (`options = { methods: ['GET'] }`). None when the
/// wrapper is no project function or tests no list of its options.
fn wrapper_methods(res: &Resolver, m: ModId, v: &Val) -> Option<Vec<String>> {
    let Val::Call(callee, args) = v.plain() else {
        return None;
    };
    let Resolved::Func(wm, wf) = res.resolve(m, callee) else {
        return None;
    };
    let fns = &res.modules[wm].functions;
    let mut stack = vec![wf];
    let mut gate = None;
    while let Some(f) = stack.pop() {
        if let Some(g) = fns[f]
            .param_method_gates
            .iter()
            .find(|(gf, _, _)| *gf == wf)
        {
            gate = Some(g.clone());
            break;
        }
        stack.extend(fns[f].children.iter().copied());
    }
    let (_, index, field) = gate?;
    let options = match args.get(index) {
        Some(a) => match res.resolve(m, a) {
            Resolved::Obj(om, fields) => Some((om, fields)),
            _ => None,
        },
        None => fns[wf]
            .param_defaults
            .iter()
            .find(|(i, _)| *i == index)
            .and_then(|(_, d)| match d {
                Val::Obj(fields) => Some((wm, fields.clone())),
                _ => None,
            }),
    }?;
    let (om, fields) = options;
    let (_, list) = fields.iter().rev().find(|(k, _)| *k == field)?;
    let Val::Arr(items) = list else {
        return None;
    };
    items
        .iter()
        .map(|i| match res.resolve(om, i) {
            Resolved::Str(s) => Some(s.to_ascii_uppercase()),
            _ => None,
        })
        .collect()
}

/// Whether a handler gates the methods itself (`if (req.method !== 'POST') return 405`).
fn own_gate(res: &Resolver, m: ModId, handler: &Val) -> bool {
    let Resolved::Func(hm, hf) = res.resolve(m, handler) else {
        return false;
    };
    match delegated_checks(res, hm, hf, 0) {
        Delegated::Own(_, checks) | Delegated::Handed(_, checks) => {
            checks.iter().any(|c| c.negated && c.exits)
        }
    }
}

/// A mutation method a handler that sees every method serves: where it is told apart (the
/// module and line of its check) and the branch of the handler it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub method: String,
    pub module: ModId,
    pub line: u32,
    pub branch: Option<String>,
    /// The function the handler hands its request to, whose checks these are: what runs.
    pub handed: Option<(ModId, FnId)>,
}

/// The mutation methods a handler that is called for every method serves (a pages-router
/// handler, a Nitro handler without a method suffix, a Remix action), from its method checks
/// (`req.method === 'POST'`, `switch (event.method)`, `assertMethod(event, 'POST')`): those its
/// gates let through, else those its branches name, each at its check's line. With no check,
/// `unchecked` at `line` of module `m`, each followed for itself (a library handler inside may
/// serve only some).
pub fn methods_served(
    res: &Resolver,
    m: ModId,
    handler: &Val,
    line: u32,
    unchecked: &[&str],
) -> Vec<Served> {
    let mut out = Vec::new();
    let delegated = match res.resolve(m, handler) {
        Resolved::Func(hm, hf) => delegated_checks(res, hm, hf, 0),
        _ => Delegated::Own(m, vec![]),
    };
    // Checks of a handler written in another module (`export { default } from '@ee/api/sso'`)
    // or of a function it hands its request to: the routes stay where they are registered, at
    // that line.
    let (hm, checks, handed) = match delegated {
        Delegated::Own(hm2, checks) if hm2 == m => (hm2, checks, None),
        Delegated::Own(_, checks) => (m, at_line(checks, line), None),
        Delegated::Handed(to, checks) => (m, at_line(checks, line), Some(to)),
    };
    let served = |method: &str, module: ModId, line: u32, branch: Option<String>| Served {
        method: method.to_string(),
        module,
        line,
        branch,
        handed,
    };
    let positive: Vec<_> = checks.iter().filter(|c| !c.negated).collect();
    let negative: Vec<_> = checks.iter().filter(|c| c.negated).collect();
    // A gate (`if (!allowed.includes(req.method)) return 405`) says which methods get through,
    // whatever branches follow; those branches say what each method runs.
    let gates: Vec<_> = negative.iter().filter(|c| c.exits).collect();
    if let Some(first) = gates.first() {
        let mut seen = Vec::new();
        for method in &first.methods {
            let through = gates.iter().all(|g| g.methods.contains(method));
            if through && MUTATIONS.contains(&method.as_str()) && !seen.contains(method) {
                seen.push(method.clone());
                let line = positive
                    .iter()
                    .find(|c| c.methods.contains(method))
                    .map_or(first.line, |c| c.line);
                let branch = (!positive.is_empty()).then(|| method.clone());
                out.push(served(method, hm, line, branch));
            }
        }
        return out;
    }
    let list = if positive.is_empty() {
        &negative
    } else {
        &positive
    };
    // Checks that only answer a preflight and leave (`if (req.method === 'OPTIONS') return
    // res.status(200).end()`, CORS): every mutation goes on to the rest, as if unchecked. (A
    // `GET` branch that returns is the handler's own work: the others reach nothing.)
    let others_only = negative.is_empty()
        && positive.iter().all(|c| {
            c.exits
                && c.methods
                    .iter()
                    .all(|m| matches!(m.as_str(), "OPTIONS" | "HEAD"))
        });
    if list.is_empty() || others_only {
        for method in unchecked {
            out.push(served(method, m, line, Some(method.to_string())));
        }
        return out;
    }
    let mut seen = Vec::new();
    for check in list {
        for method in &check.methods {
            if MUTATIONS.contains(&method.as_str()) && !seen.contains(method) {
                seen.push(method.clone());
                let branch = (!positive.is_empty()).then(|| method.clone());
                out.push(served(method, hm, check.line, branch));
            }
        }
    }
    out
}

/// Method checks moved to the line of the registration they are read for.
fn at_line(checks: Vec<MethodCheck>, line: u32) -> Vec<MethodCheck> {
    checks
        .into_iter()
        .map(|c| MethodCheck { line, ..c })
        .collect()
}

/// The mutation methods a handler registered for every method is listed under (`router.all`,
/// `@All()`, a Nitro file without a method suffix): one per mutation method its `req.method`
/// checks tell apart, or else once, as `POST`: the same code runs whatever the method, and one
/// entry says what a retry does. A check for the preflight (`if (req.method === 'OPTIONS')`)
/// tells no mutation apart; other checks naming no mutation method (`if (req.method !== 'GET')
/// return 405`) serve none.
pub fn any_method_served(res: &Resolver, m: ModId, handler: &Val, line: u32) -> Vec<Served> {
    let out = methods_served(res, m, handler, line, ANY_METHOD);
    if !out.is_empty() {
        return out;
    }
    let checks = match res.resolve(m, handler) {
        Resolved::Func(hm, hf) => match delegated_checks(res, hm, hf, 0) {
            Delegated::Own(_, c) | Delegated::Handed(_, c) => c,
        },
        _ => vec![],
    };
    // A check for the preflight or `HEAD` only (`if (req.method === 'OPTIONS') return ..`)
    // tells no mutation apart; any other check (`if (req.method === 'GET') {..} else 405`)
    // says which methods the handler serves, and it serves no mutation.
    if checks
        .iter()
        .any(|c| c.methods.iter().any(|x| x != "OPTIONS" && x != "HEAD"))
    {
        return out;
    }
    vec![Served {
        method: "POST".into(),
        module: m,
        line,
        branch: None,
        handed: None,
    }]
}

/// How a handler called for every method that tells none apart is listed: once, as `POST`.
pub const ANY_METHOD: &[&str] = &["POST"];

/// The method checks of handler `hf` and the functions inside it. A handler with none that
/// hands its request to a function of the project (`return handleRoute(req, res)`) serves what
/// that function checks, and runs it.
enum Delegated {
    /// The handler's own checks, in its module.
    Own(ModId, Vec<MethodCheck>),
    /// Those of a function it hands the request to (and that function).
    Handed((ModId, FnId), Vec<MethodCheck>),
}

fn delegated_checks(res: &Resolver, hm: ModId, hf: FnId, depth: usize) -> Delegated {
    let fns = &res.modules[hm].functions;
    let mut checks = fns[hf].method_checks.clone();
    let mut stack = fns[hf].children.clone();
    while let Some(c) = stack.pop() {
        checks.extend(fns[c].method_checks.iter().cloned());
        stack.extend(fns[c].children.iter().copied());
    }
    if !checks.is_empty() || depth >= 3 {
        return Delegated::Own(hm, checks);
    }
    // The calls given the request, in order; the first whose function checks a mutation method.
    for cs in &fns[hf].calls {
        if !matches!(cs.args.first(), Some(Val::Param(f, 0)) if *f == hf) {
            continue;
        }
        let Resolved::Func(m2, f2) = res.resolve(hm, &cs.callee) else {
            continue;
        };
        if (m2, f2) == (hm, hf) {
            continue;
        }
        let (to, found) = match delegated_checks(res, m2, f2, depth + 1) {
            Delegated::Own(_, found) => ((m2, f2), found),
            Delegated::Handed(to, found) => (to, found),
        };
        if found
            .iter()
            .any(|c| c.methods.iter().any(|x| MUTATIONS.contains(&x.as_str())))
        {
            return Delegated::Handed(to, found);
        }
    }
    Delegated::Own(hm, checks)
}

/// Server actions (`'use server'` files' exported functions, and functions that open with the
/// directive) are POST endpoints; they have no URL of their own, so the path names the action.
fn server_actions(res: &Resolver, m: ModId, out: &mut Vec<RawRoute>) {
    let module = &res.modules[m];
    let mut actions: Vec<(String, u32, FnId)> = Vec::new();
    if module.use_server {
        for (name, v) in &module.exports {
            if let Resolved::Func(fm, f) = res.resolve(m, v)
                && fm == m
            {
                let line = module.export_line(name).unwrap_or(module.functions[f].line);
                actions.push((
                    if name == "default" {
                        module.functions[f].name.clone()
                    } else {
                        name.clone()
                    },
                    line,
                    f,
                ));
            }
        }
    }
    for (f, facts) in module.functions.iter().enumerate() {
        if facts.use_server && !actions.iter().any(|(_, _, g)| *g == f) {
            actions.push((facts.name.clone(), facts.line, f));
        }
    }
    actions.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    actions.dedup_by(|a, b| a.2 == b.2);
    for (name, line, f) in actions {
        out.push(RawRoute {
            method: "POST".into(),
            path: format!("action:{name}"),
            framework: "nextjs",
            module: m,
            line,
            handler: Val::Func(f),
            handler_module: m,
            middleware: vec![],
            branch: None,
            protocol: Protocol::ServerAction,
            handler_name: None,
            path_complete: true,
            steps: vec![],
            file: None,
        });
    }
}
