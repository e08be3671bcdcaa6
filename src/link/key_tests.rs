//! Test requests to endpoints: each [`KeyTest`]'s method and URL path against the routes' full
//! paths. A route parameter (`{id}`) matches any segment; a test's own hole (`/orders/${id}`,
//! `{}`) matches a parameter first, any segment only if nothing else does. When no route has the
//! test's path exactly (a base URL in front, a prefix the test app does not mount, a prefix the
//! audit could not resolve), a route whose path ends with the test's (or the reverse) is taken if
//! it is the only one.
//!
//! A test that sends one key twice but whose URL names no route (unreadable, or matching none)
//! is attached, as not exact, to every keyed route of its method: it may be theirs.

use crate::facts::{Endpoint, KeyTest, MechanismKind};

pub fn apply(endpoints: &mut [Endpoint], tests: &[KeyTest]) {
    let mut unmatched: Vec<&KeyTest> = Vec::new();
    for t in tests {
        let targets = targets(endpoints, t);
        if targets.is_empty() {
            if t.repeats() {
                unmatched.push(t);
            }
            continue;
        }
        for i in targets {
            let mut linked = t.clone();
            linked.exact = true;
            endpoints[i].key_tests.push(linked);
        }
    }
    for t in unmatched {
        for ep in endpoints
            .iter_mut()
            .filter(|e| e.method == t.method && e.has_mechanism(MechanismKind::HeaderKey))
        {
            ep.key_tests.push(t.clone());
        }
    }
    for ep in endpoints.iter_mut() {
        ep.key_tests.sort();
        ep.key_tests.dedup();
    }
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// A route's segment against a test's: `strict` keeps a test's hole to route parameters.
fn segment_matches(route: &str, test: &str, strict: bool) -> bool {
    let param = route.contains('{');
    if test == "{}" {
        param || !strict
    } else {
        param || route == test
    }
}

/// Do the two paths match segment by segment, with at least one literal in common when
/// `literal` is asked for?
fn aligned(route: &[&str], test: &[&str], strict: bool, literal: bool) -> bool {
    route.len() == test.len()
        && route
            .iter()
            .zip(test)
            .all(|(r, t)| segment_matches(r, t, strict))
        && (!literal
            || route
                .iter()
                .zip(test)
                .any(|(r, t)| !r.contains('{') && r == t))
}

/// The endpoints a test targets.
fn targets(endpoints: &[Endpoint], t: &KeyTest) -> Vec<usize> {
    let Some(path) = &t.path else {
        return Vec::new();
    };
    let test = segments(path);
    let routes: Vec<(usize, Vec<&str>)> = endpoints
        .iter()
        .enumerate()
        .filter(|(_, e)| e.method == t.method)
        .map(|(i, e)| (i, segments(&e.path)))
        .collect();
    for strict in [true, false] {
        let exact: Vec<usize> = routes
            .iter()
            .filter(|(_, r)| aligned(r, &test, strict, false))
            .map(|(i, _)| *i)
            .collect();
        if !exact.is_empty() {
            return exact;
        }
    }
    for strict in [true, false] {
        let tails: Vec<usize> = routes
            .iter()
            .filter(|(_, r)| {
                let n = r.len().min(test.len());
                n > 0 && aligned(&r[r.len() - n..], &test[test.len() - n..], strict, true)
            })
            .map(|(i, _)| *i)
            .collect();
        match tails.len() {
            0 => continue,
            1 => return tails,
            _ => return Vec::new(),
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Location, Mechanism};

    fn ep(method: &str, path: &str) -> Endpoint {
        Endpoint {
            method: method.into(),
            path: path.into(),
            location: Location::new("r.ts", 1),
            mechanisms: vec![Mechanism::handler_reads_key(Location::new("r.ts", 2))],
            ..Endpoint::default()
        }
    }

    fn test(method: &str, path: Option<&str>, base: bool) -> KeyTest {
        KeyTest {
            method: method.into(),
            path: path.map(String::from),
            base,
            same_key_twice: true,
            concurrent: false,
            exact: false,
            location: Location::new("t.test.ts", 9),
        }
    }

    fn linked(eps: &[Endpoint]) -> Vec<(String, bool)> {
        eps.iter()
            .flat_map(|e| e.key_tests.iter().map(move |t| (e.label(), t.exact)))
            .collect()
    }

    #[test]
    fn parameters_bases_and_prefixes() {
        let routes = || {
            vec![
                ep("POST", "/api/orders"),
                ep("POST", "/api/orders/{id}/pay"),
                ep("POST", "/api/orders/search"),
                ep("POST", "/admin/orders"),
                ep("PUT", "/api/orders/{id}"),
            ]
        };
        let run = |t: KeyTest| {
            let mut eps = routes();
            apply(&mut eps, &[t]);
            linked(&eps)
        };
        let exact = |l: &str| vec![(l.to_string(), true)];
        assert_eq!(
            run(test("POST", Some("/api/orders/{}/pay"), false)),
            exact("POST /api/orders/{id}/pay")
        );
        assert_eq!(
            run(test("POST", Some("/api/orders/42/pay"), false)),
            exact("POST /api/orders/{id}/pay")
        );
        assert_eq!(
            run(test("PUT", Some("/api/orders/{}"), false)),
            exact("PUT /api/orders/{id}")
        );
        // A base URL in front: the tail names one route.
        assert_eq!(
            run(test("POST", Some("/orders/{}/pay"), true)),
            exact("POST /api/orders/{id}/pay")
        );
        // `/orders` ends two routes: ambiguous, so not exact anywhere.
        let ambiguous = run(test("POST", Some("/orders"), true));
        assert!(ambiguous.iter().all(|(_, exact)| !exact), "{ambiguous:?}");
        assert_eq!(ambiguous.len(), 4);
        // A prefix the route lacks (a mount the audit could not resolve).
        assert_eq!(
            run(test("POST", Some("/v1/api/orders/{}/pay"), false)),
            exact("POST /api/orders/{id}/pay")
        );
        // Wrong method: nothing exact.
        assert!(run(test("DELETE", Some("/api/orders"), false)).is_empty());
    }

    #[test]
    fn an_unreadable_url_may_target_any_keyed_route_of_its_method() {
        let mut eps = vec![ep("POST", "/a"), ep("POST", "/b"), ep("PUT", "/a")];
        eps[1].mechanisms.clear();
        apply(&mut eps, &[test("POST", None, false)]);
        assert_eq!(linked(&eps), vec![("POST /a".to_string(), false)]);
    }
}
