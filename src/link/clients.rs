//! Client requests: code no endpoint of this repository reaches that sends an idempotency key,
//! with where the key comes from; and the endpoint of this repository each one calls.
//!
//! The front end judged every key where it is sent ([`SentKey`]). A key that is a parameter is
//! judged again at the callers in view: a helper that takes the key is fine, unless its caller
//! makes the key inside a retry loop ([`KeyArg`]).

use super::resolve::{ModId, Resolved, Resolver};
use crate::facts::{ClientRequest, Endpoint, KeyOrigin, Location};
use crate::program::{FnId, KeyArg, Val};
use crate::text::url_path;
use std::collections::{HashMap, HashSet};

/// (module, function, parameter) → the key-like values callers pass there.
type Callers<'a> = HashMap<(ModId, FnId, usize), Vec<(ModId, &'a KeyArg)>>;

/// Where a key that is a parameter comes from, at the end of one chain of callers.
struct Leaf {
    origin: KeyOrigin,
    text: String,
    key_location: Location,
    key_function: String,
    detail: String,
    path: Option<String>,
}

/// Follows parameter `i` of `f` up its callers (a helper that passes its own parameter on is
/// followed to its callers), with the URL when the request's path is a parameter too.
fn leaves(
    res: &Resolver,
    callers: &Callers,
    at: (ModId, FnId, usize),
    path_param: Option<usize>,
    depth: usize,
) -> Vec<Leaf> {
    let Some(list) = callers.get(&at) else {
        return vec![];
    };
    let callee = &res.modules[at.0].functions[at.1].name;
    let mut out = Vec::new();
    for (cm, ka) in list {
        let file = &res.modules[*cm].file;
        let (path, up_path) = match path_param.and_then(|j| ka.args.get(j)).map(Val::plain) {
            Some(Val::Str(s)) => (Some(url_path(s)), None),
            Some(Val::Param(_, k)) => (None, Some(*k)),
            _ => (None, None),
        };
        if let (KeyOrigin::PassedIn, Some((cf, ci)), true) = (ka.origin, ka.param, depth < 4) {
            let sub = leaves(res, callers, (*cm, cf, ci), up_path, depth + 1);
            if !sub.is_empty() {
                out.extend(sub.into_iter().map(|mut l| {
                    l.path = l.path.or_else(|| path.clone());
                    l
                }));
                continue;
            }
        }
        out.push(Leaf {
            origin: ka.origin,
            text: ka.text.clone(),
            key_location: Location::new(file.clone(), ka.key_line),
            key_function: ka.key_function.clone(),
            detail: format!(
                "{}, and passed to `{callee}` at {file}:{}",
                ka.detail, ka.line
            ),
            path,
        });
    }
    out
}

/// The TypeScript/JavaScript client requests. `reached` are the functions an endpoint reaches
/// (server code): a key they send goes to a provider downstream, which RS007 judges.
pub fn from_modules(res: &Resolver, reached: &HashSet<(ModId, FnId)>) -> Vec<ClientRequest> {
    let mut callers: Callers = HashMap::new();
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        for f in &module.functions {
            for ka in &f.key_args {
                if let Resolved::Func(m2, f2) = res.resolve(m, &ka.callee) {
                    callers.entry((m2, f2, ka.index)).or_default().push((m, ka));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (m, module) in res.modules.iter().enumerate() {
        if module.is_test {
            continue;
        }
        for (g, f) in module.functions.iter().enumerate() {
            if reached.contains(&(m, g)) {
                continue;
            }
            for sk in &f.sent_keys {
                let Some((method, path)) = &sk.request else {
                    continue;
                };
                let method = method.clone().unwrap_or_else(|| "ANY".into());
                if matches!(method.as_str(), "GET" | "HEAD" | "OPTIONS") {
                    continue;
                }
                let req = ClientRequest {
                    method,
                    path: path.clone(),
                    location: Location::new(module.file.clone(), sk.line),
                    function: sk.function.clone(),
                    key_origin: sk.origin,
                    key_expression: sk.text.clone(),
                    key_location: Location::new(module.file.clone(), sk.key_line),
                    key_function: sk.key_function.clone(),
                    detail: sk.detail.clone(),
                    endpoint: None,
                    endpoint_location: None,
                };
                let from_callers = match (sk.origin, sk.param) {
                    (KeyOrigin::PassedIn, Some((pf, pi))) => {
                        let path_param = sk.path_param.filter(|(f, _)| *f == pf).map(|(_, j)| j);
                        leaves(res, &callers, (m, pf, pi), path_param, 0)
                    }
                    _ => vec![],
                };
                if from_callers.is_empty() {
                    out.push(req);
                    continue;
                }
                for leaf in from_callers {
                    out.push(ClientRequest {
                        path: leaf.path.unwrap_or_else(|| req.path.clone()),
                        key_origin: leaf.origin,
                        key_expression: leaf.text,
                        key_location: leaf.key_location,
                        key_function: leaf.key_function,
                        detail: leaf.detail,
                        ..req.clone()
                    });
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

fn is_param(seg: &str) -> bool {
    seg.starts_with('{') && seg.ends_with('}')
}

/// Does a client path match an endpoint path? `{x}` on either side matches one segment; a
/// client path that starts with an unknown base (`{API_URL}/orders`) matches at the end.
fn path_matches(client: &str, endpoint: &str) -> bool {
    let mut c = segments(client);
    let e = segments(endpoint);
    let based = c.first().is_some_and(|s| is_param(s)) && client.starts_with('{');
    if based {
        c.remove(0);
        if c.is_empty() || c.len() > e.len() {
            return false;
        }
    } else if c.len() != e.len() {
        return false;
    }
    let e = &e[e.len() - c.len()..];
    c.iter()
        .zip(e)
        .all(|(a, b)| is_param(a) || is_param(b) || a == b)
}

/// Links each client request to the one mutation endpoint of this repository it calls, when its
/// method and path match exactly one.
pub fn attach(clients: &mut [ClientRequest], endpoints: &[Endpoint]) {
    for c in clients.iter_mut() {
        if c.path.contains("{url}") || c.path == "*" {
            continue;
        }
        let matches: Vec<&Endpoint> = endpoints
            .iter()
            .filter(|e| e.is_mutation() && e.method == c.method && path_matches(&c.path, &e.path))
            .collect();
        // An exact literal match wins over matches through parameters.
        let exact: Vec<&&Endpoint> = matches
            .iter()
            .filter(|e| segments(&e.path) == segments(&c.path))
            .collect();
        let pick = match (exact.as_slice(), matches.as_slice()) {
            ([one], _) => Some(**one),
            ([], [one]) => Some(*one),
            _ => None,
        };
        if let Some(e) = pick {
            c.endpoint = Some(e.label());
            c.endpoint_location = Some(e.location.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert!(path_matches("/api/orders", "/api/orders"));
        assert!(path_matches(
            "/api/orders/{id}/pay",
            "/api/orders/{orderId}/pay"
        ));
        assert!(path_matches("{API_URL}/orders", "/api/orders"));
        assert!(!path_matches("/orders", "/api/orders"));
        assert!(!path_matches("{API_URL}/a/b/c", "/b/c"));
    }
}
