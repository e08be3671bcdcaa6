//! Requests in the repository's tests that send an idempotency key: supertest, fetch, axios,
//! Playwright and `inject` chains in TS/JS tests ([`ts`]); axum `oneshot`, `axum_test`, actix
//! `TestRequest` and reqwest requests in Rust tests ([`rust`]); `.http`/`.rest` files ([`http`]).
//!
//! Each front end reduces a file to a [`FileScan`]: the sends of every test and of every helper
//! function, with what each send's key and URL are as far as the file tells. [`resolve`] follows
//! the tests' calls into helpers and groups the sends of one test into language-neutral
//! [`KeyTest`]s: one key sent twice, or concurrently, to one URL.
//!
//! Test code never produces endpoints or effects: the route front ends already leave test files
//! out, and this module reads them for requests only.

pub mod http;
pub mod rust;
pub mod ts;

use crate::catalog::Catalog;
use crate::discover::{Lang, RustFile, SourceFile};
use crate::facts::{KeyTest, Location};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};

/// A URL as a test writes it: the path with parameters as `{}`, and whether an unreadable base
/// (`${baseUrl}`, `{{host}}`, `format!("{}/x", addr)`) comes first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Url {
    pub path: Option<String>,
    pub base: bool,
}

impl Url {
    pub fn unknown() -> Url {
        Url {
            path: None,
            base: false,
        }
    }
}

/// The key a send carries, as far as the test's source tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// The same value every time this code runs: a literal, or a variable bound outside the
    /// function the send is in. The string identifies the value.
    Const(String),
    /// A variable of the function the send is in: one value per call of that function.
    Local(String),
    /// Made anew at each evaluation (`randomUUID()`, `Uuid::new_v4()`, `{{$uuid}}`).
    Fresh,
    /// The function's `n`-th parameter (in a helper).
    Param(usize),
}

impl Key {
    /// The key made of several parts (a template, `format!`): fresh if any part is, a parameter
    /// if one is, local if any part is local, else constant.
    pub fn combine(parts: impl IntoIterator<Item = Key>) -> Key {
        let mut ids = Vec::new();
        let mut local = false;
        let mut param = None;
        for k in parts {
            match k {
                Key::Fresh => return Key::Fresh,
                Key::Param(i) => {
                    param.get_or_insert(i);
                }
                Key::Local(s) => {
                    local = true;
                    ids.push(s);
                }
                Key::Const(s) => ids.push(s),
            }
        }
        let id = ids.join(",");
        match param {
            Some(i) => Key::Param(i),
            None if local => Key::Local(id),
            None => Key::Const(id),
        }
    }
}

/// A URL argument: known, or a helper's parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlSpec {
    Known(Url),
    Param(usize),
}

/// How often a send runs with one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Repeat {
    Once,
    /// In a loop whose iterations share the key, one after the other.
    Sequential,
    /// In a `.map`/`Array.from`/spawned loop whose iterations share the key, all at once.
    Concurrent,
}

/// One request with a key header.
#[derive(Debug, Clone)]
pub struct Send {
    pub method: String,
    pub url: UrlSpec,
    pub key: Key,
    pub line: u32,
    pub repeat: Repeat,
    /// The `Promise.all` / `join!` it is an element of, by an id unique in its file.
    pub together: Option<usize>,
}

/// An argument of a call to a helper, read both as a key and as a URL.
#[derive(Debug, Clone)]
pub struct Arg {
    pub key: Key,
    pub url: Option<Url>,
    /// Bound inside the innermost loop around the call: a new value on every iteration.
    pub varies: bool,
}

/// A call from a test (or a helper) to a named function, which may be a helper that sends.
#[derive(Debug, Clone)]
pub struct HelperCall {
    pub name: String,
    pub args: Vec<Arg>,
    pub line: u32,
    pub repeat: Repeat,
    pub together: Option<usize>,
}

/// A named function of the test code whose sends take their key or URL from its parameters.
#[derive(Debug, Clone, Default)]
pub struct Helper {
    pub name: String,
    /// The test it is declared in, if any: it is looked up there first.
    pub test: Option<usize>,
    pub sends: Vec<Send>,
    /// Default values of its parameters, as keys (`key = randomUUID()`).
    pub defaults: Vec<Option<Key>>,
}

/// One test case (an `it`/`test` callback, a `#[test]` function, a `.http` file).
#[derive(Debug, Clone, Default)]
pub struct TestScope {
    pub sends: Vec<Send>,
    pub calls: Vec<HelperCall>,
}

/// What one file holds.
#[derive(Debug, Clone, Default)]
pub struct FileScan {
    pub file: String,
    pub tests: Vec<TestScope>,
    pub helpers: Vec<Helper>,
}

/// Whose code a reader is in: a test, or a helper tests call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OwnerKind {
    Test(usize),
    Helper(usize),
}

impl FileScan {
    /// Where the `i`-th send (or helper call, `is_call`) of `owner` records the concurrent group
    /// it belongs to. A helper's calls have none.
    fn together(
        &mut self,
        owner: OwnerKind,
        is_call: bool,
        i: usize,
    ) -> Option<&mut Option<usize>> {
        match (owner, is_call) {
            (OwnerKind::Test(t), false) => self.tests[t].sends.get_mut(i).map(|s| &mut s.together),
            (OwnerKind::Test(t), true) => self.tests[t].calls.get_mut(i).map(|c| &mut c.together),
            (OwnerKind::Helper(h), false) => {
                self.helpers[h].sends.get_mut(i).map(|s| &mut s.together)
            }
            (OwnerKind::Helper(_), true) => None,
        }
    }
}

/// A send with its key and URL settled.
#[derive(Debug, Clone)]
struct Concrete {
    method: String,
    url: Url,
    /// `None`: a fresh key each time.
    key: Option<String>,
    line: u32,
    repeat: Repeat,
    together: Option<usize>,
}

/// Every keyed test request under the scanned root.
pub fn collect(files: &[SourceFile], rust_files: &[RustFile], catalog: &Catalog) -> Vec<KeyTest> {
    let mentions_key = |text: &str| {
        let lower = text.to_ascii_lowercase();
        lower.contains("idempoten") || catalog.key_headers.iter().any(|h| lower.contains(h))
    };
    let ts_tests: Vec<&SourceFile> = files
        .iter()
        .filter(|f| f.lang.is_ts() && is_ts_test(&f.rel))
        .collect();
    let rust_tests: Vec<&RustFile> = rust_files
        .iter()
        .filter(|f| f.text.contains("test"))
        .collect();
    let scan_ts = |f: &&SourceFile| scan_guarded(&f.rel, || ts::scan(f, catalog));
    let scan_rust = |f: &&RustFile| scan_guarded(&f.rel, || rust::scan(&f.rel, &f.text, catalog));
    let mut scans: Vec<FileScan> = ts_tests
        .par_iter()
        .filter(|f| mentions_key(&f.text))
        .map(scan_ts)
        .chain(
            rust_tests
                .par_iter()
                .filter(|f| mentions_key(&f.text))
                .map(scan_rust),
        )
        .chain(
            files
                .par_iter()
                .filter(|f| f.lang == Lang::Http)
                .map(|f| http::scan(&f.rel, &f.text, catalog)),
        )
        .collect();
    // Tests that send through a helper of another file need not mention the key themselves.
    let names: Vec<String> = scans
        .iter()
        .flat_map(|s| s.helpers.iter())
        .filter(|h| h.test.is_none() && !h.sends.is_empty())
        .map(|h| format!("{}(", h.name))
        .collect();
    if !names.is_empty() {
        let calls_helper =
            |text: &str| !mentions_key(text) && names.iter().any(|n| text.contains(n));
        let more: Vec<FileScan> = ts_tests
            .par_iter()
            .filter(|f| calls_helper(&f.text))
            .map(scan_ts)
            .chain(
                rust_tests
                    .par_iter()
                    .filter(|f| calls_helper(&f.text))
                    .map(scan_rust),
            )
            .collect();
        scans.extend(more);
    }
    scans.sort_by(|a, b| a.file.cmp(&b.file));
    resolve(&scans)
}

/// Test code of the TS front end, and Cypress specs (`cy.request`).
fn is_ts_test(rel: &str) -> bool {
    crate::frontend::ts::is_test_file(rel)
        || rel.contains(".cy.")
        || rel.starts_with("cypress/")
        || rel.contains("/cypress/")
}

/// A bug of ours on one test file costs that file's requests, nothing else.
fn scan_guarded(rel: &str, scan: impl FnOnce() -> FileScan) -> FileScan {
    crate::isolate::guarded(rel, || (scan(), Vec::new()), FileScan::default).0
}

/// Follows helper calls and groups each test's sends by method and URL.
pub fn resolve(scans: &[FileScan]) -> Vec<KeyTest> {
    // name → (file index, helper index) of every top-level helper that sends.
    let mut by_name: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (fi, s) in scans.iter().enumerate() {
        for (hi, h) in s.helpers.iter().enumerate() {
            if h.test.is_none() && !h.sends.is_empty() {
                by_name.entry(h.name.as_str()).or_default().push((fi, hi));
            }
        }
    }
    let mut out = Vec::new();
    for scan in scans {
        for (ti, test) in scan.tests.iter().enumerate() {
            let mut sends: Vec<Concrete> = test
                .sends
                .iter()
                .filter_map(|s| settle(s, &[], &[], None).map(|(c, _)| c))
                .collect();
            for (ci, call) in test.calls.iter().enumerate() {
                let local = scan
                    .helpers
                    .iter()
                    .filter(|h| h.name == call.name && !h.sends.is_empty())
                    .find(|h| h.test == Some(ti))
                    .or_else(|| {
                        scan.helpers.iter().find(|h| {
                            h.name == call.name && h.test.is_none() && !h.sends.is_empty()
                        })
                    });
                let helper = local.or_else(|| match by_name.get(call.name.as_str()) {
                    Some(found) if found.len() == 1 => Some(&scans[found[0].0].helpers[found[0].1]),
                    _ => None,
                });
                let Some(helper) = helper else {
                    continue;
                };
                for s in &helper.sends {
                    if let Some((mut c, same_every_call)) =
                        settle(s, &call.args, &helper.defaults, Some(ci))
                    {
                        // The test's line says where the test is.
                        c.line = call.line;
                        if same_every_call {
                            c.repeat = c.repeat.max(call.repeat);
                        }
                        c.together = call.together.or(c.together);
                        sends.push(c);
                    }
                }
            }
            out.extend(group(&scan.file, sends));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A send's key and URL, with a helper's parameters replaced by the call's arguments. `call`
/// numbers the call, so a helper's own variables differ from one call to the next. Also says
/// whether the key is the same on every call (a constant, or an argument that does not change).
fn settle(
    s: &Send,
    args: &[Arg],
    defaults: &[Option<Key>],
    call: Option<usize>,
) -> Option<(Concrete, bool)> {
    let (key, varies) = match &s.key {
        Key::Param(i) => match args.get(*i) {
            Some(a) => (a.key.clone(), a.varies),
            None => (defaults.get(*i).cloned().flatten()?, false),
        },
        k => (k.clone(), false),
    };
    let (key, same_every_call) = match (key, call) {
        (Key::Const(k), _) => (Some(k), !varies),
        (Key::Local(k), None) => (Some(k), false),
        (Key::Local(k), Some(_)) if matches!(s.key, Key::Param(_)) => (Some(k), !varies),
        (Key::Local(k), Some(c)) => (Some(format!("{k}#{c}")), false),
        (Key::Fresh, _) => (None, false),
        // A parameter of the test function itself.
        (Key::Param(i), _) => (Some(format!("param{i}")), !varies),
    };
    let url = match &s.url {
        UrlSpec::Known(u) => u.clone(),
        UrlSpec::Param(i) => args.get(*i).and_then(|a| a.url.clone())?,
    };
    Some((
        Concrete {
            method: s.method.clone(),
            url,
            key,
            line: s.line,
            repeat: s.repeat,
            together: s.together,
        },
        same_every_call,
    ))
}

/// One [`KeyTest`] per method and URL of one test.
fn group(file: &str, sends: Vec<Concrete>) -> Vec<KeyTest> {
    let mut by_target: BTreeMap<(String, Url), Vec<Concrete>> = BTreeMap::new();
    for s in sends {
        by_target
            .entry((s.method.clone(), s.url.clone()))
            .or_default()
            .push(s);
    }
    let mut out = Vec::new();
    for ((method, url), mut sends) in by_target {
        sends.sort_by_key(|s| s.line);
        let mut twice: Option<u32> = None;
        let mut concurrent: Option<u32> = None;
        for (i, s) in sends.iter().enumerate() {
            if s.key.is_none() {
                continue;
            }
            match s.repeat {
                Repeat::Sequential => {
                    twice.get_or_insert(s.line);
                }
                Repeat::Concurrent => {
                    concurrent.get_or_insert(s.line);
                }
                Repeat::Once => {}
            }
            for o in &sends[i + 1..] {
                if o.key != s.key {
                    continue;
                }
                if s.together.is_some() && s.together == o.together {
                    concurrent.get_or_insert(s.line);
                } else {
                    twice.get_or_insert(s.line);
                }
            }
        }
        let line = match (twice, concurrent) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => sends[0].line,
        };
        out.push(KeyTest {
            method,
            path: url.path,
            base: url.base,
            same_key_twice: twice.is_some(),
            concurrent: concurrent.is_some(),
            exact: false,
            location: Location::new(file, line),
        });
    }
    out
}

/// Splits a URL as written into a [`Url`]. `hole` marks where the source had an expression the
/// audit cannot read (a template substitution, a `format!` placeholder, an `{{var}}`).
pub fn parse_url(text: &str, hole: char) -> Url {
    let mut s = text.trim();
    // Query and fragment never name the route.
    if let Some(i) = s.find(['?', '#']) {
        s = &s[..i];
    }
    let mut base = false;
    if let Some(rest) = s
        .strip_prefix("http://")
        .or_else(|| s.strip_prefix("https://"))
        .or_else(|| s.strip_prefix("//"))
    {
        s = rest.find('/').map(|i| &rest[i..]).unwrap_or("/");
    } else if !s.starts_with('/') {
        // `${base}/orders`, `localhost:3000/orders`, or `orders` against a configured base URL.
        base = true;
        let first = s.find('/').map(|i| &s[..i]).unwrap_or(s);
        if first.contains(hole) || first.contains(':') || first.contains('.') {
            s = &s[first.len()..];
        }
    }
    let segments: Vec<String> = s
        .split('/')
        .filter(|seg| !seg.is_empty())
        .map(|seg| {
            if seg.contains(hole) || (seg.starts_with('{') && seg.ends_with('}')) {
                "{}".to_string()
            } else {
                seg.to_string()
            }
        })
        .collect();
    if segments.is_empty() && base {
        return Url { path: None, base };
    }
    Url {
        path: Some(format!("/{}", segments.join("/"))),
        base,
    }
}

/// Generators of fresh values: a key made by one of these differs on every evaluation.
pub fn is_generator(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "randomuuid"
            | "uuid"
            | "uuidv4"
            | "uuidv7"
            | "v4"
            | "v7"
            | "new_v4"
            | "new_v7"
            | "now_v7"
            | "nanoid"
            | "ulid"
            | "cuid"
            | "cuid2"
            | "createid"
            | "now"
            | "random"
            | "gen"
            | "generate"
            | "thread_rng"
            | "randombytes"
            | "hrtime"
    ) || n.contains("random")
        || n.starts_with("gen_")
        || n.starts_with("generate")
}

/// The tests among `tests` that repeat a key, as (method, path, same key twice, concurrent,
/// line), for the readers' unit tests.
#[cfg(test)]
pub(crate) fn repeating(tests: Vec<KeyTest>) -> Vec<(String, Option<String>, bool, bool, u32)> {
    tests
        .into_iter()
        .filter(|t| t.repeats())
        .map(|t| {
            (
                t.method,
                t.path,
                t.same_key_twice,
                t.concurrent,
                t.location.line,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(key: Key, line: u32) -> Send {
        Send {
            method: "POST".into(),
            url: UrlSpec::Known(parse_url("/orders", '\0')),
            key,
            line,
            repeat: Repeat::Once,
            together: None,
        }
    }

    #[test]
    fn urls_keep_the_path_and_mark_holes_and_bases() {
        let h = '\0';
        assert_eq!(
            parse_url("/orders/\0/pay?x=1", h).path.as_deref(),
            Some("/orders/{}/pay")
        );
        let u = parse_url("\0/api/orders", h);
        assert_eq!((u.path.as_deref(), u.base), (Some("/api/orders"), true));
        let u = parse_url("http://localhost:3000/api/orders/", h);
        assert_eq!((u.path.as_deref(), u.base), (Some("/api/orders"), false));
        let u = parse_url("http://\0/orders", h);
        assert_eq!((u.path.as_deref(), u.base), (Some("/orders"), false));
        assert_eq!(parse_url("\0", h).path, None);
        let u = parse_url("orders", h);
        assert_eq!((u.path.as_deref(), u.base), (Some("/orders"), true));
    }

    #[test]
    fn one_key_twice_repeats_and_fresh_keys_do_not() {
        let scan = FileScan {
            file: "t.test.ts".into(),
            tests: vec![
                TestScope {
                    sends: vec![
                        send(Key::Local("k@1".into()), 3),
                        send(Key::Local("k@1".into()), 5),
                    ],
                    calls: vec![],
                },
                TestScope {
                    sends: vec![send(Key::Fresh, 9), send(Key::Fresh, 10)],
                    calls: vec![],
                },
                TestScope {
                    sends: vec![
                        send(Key::Const("'a'".into()), 12),
                        send(Key::Const("'b'".into()), 13),
                    ],
                    calls: vec![],
                },
            ],
            helpers: vec![],
        };
        let got = resolve(&[scan]);
        let twice: Vec<u32> = got
            .iter()
            .filter(|t| t.same_key_twice)
            .map(|t| t.location.line)
            .collect();
        assert_eq!(twice, vec![3]);
        assert_eq!(got.len(), 3);
        assert!(got.iter().all(|t| !t.concurrent));
    }

    #[test]
    fn sends_in_one_promise_all_are_concurrent() {
        let mut a = send(Key::Local("k@1".into()), 4);
        let mut b = send(Key::Local("k@1".into()), 5);
        a.together = Some(7);
        b.together = Some(7);
        let scan = FileScan {
            file: "t.test.ts".into(),
            tests: vec![TestScope {
                sends: vec![a, b],
                calls: vec![],
            }],
            helpers: vec![],
        };
        let got = resolve(&[scan]);
        assert_eq!(got.len(), 1);
        assert!(got[0].concurrent && !got[0].same_key_twice);
    }

    #[test]
    fn helpers_take_the_key_and_url_from_the_call() {
        let helper = Helper {
            name: "pay".into(),
            test: None,
            sends: vec![Send {
                method: "POST".into(),
                url: UrlSpec::Param(1),
                key: Key::Param(0),
                line: 2,
                repeat: Repeat::Once,
                together: None,
            }],
            defaults: vec![Some(Key::Fresh)],
        };
        let arg = |k: Key| Arg {
            key: k,
            url: None,
            varies: false,
        };
        let url = Arg {
            key: Key::Const("'/pay'".into()),
            url: Some(parse_url("/orders/\0/pay", '\0')),
            varies: false,
        };
        let call = |args: Vec<Arg>, line| HelperCall {
            name: "pay".into(),
            args,
            line,
            repeat: Repeat::Once,
            together: None,
        };
        let helpers = FileScan {
            file: "test/helpers.ts".into(),
            tests: vec![],
            helpers: vec![helper],
        };
        let tests = FileScan {
            file: "test/pay.test.ts".into(),
            tests: vec![
                TestScope {
                    sends: vec![],
                    calls: vec![
                        call(vec![arg(Key::Local("k@3".into())), url.clone()], 4),
                        call(vec![arg(Key::Local("k@3".into())), url.clone()], 5),
                    ],
                },
                // No key passed: the default makes a fresh one each time.
                TestScope {
                    sends: vec![],
                    calls: vec![call(vec![], 8), call(vec![], 9)],
                },
            ],
            helpers: vec![],
        };
        let got = resolve(&[helpers, tests]);
        let confirmed: Vec<_> = got.iter().filter(|t| t.repeats()).collect();
        assert_eq!(confirmed.len(), 1);
        assert_eq!(confirmed[0].path.as_deref(), Some("/orders/{}/pay"));
        assert_eq!(confirmed[0].location, Location::new("test/pay.test.ts", 4));
    }

    #[test]
    fn a_helper_variable_is_new_on_every_call() {
        let helper = Helper {
            name: "order".into(),
            test: None,
            sends: vec![send(Key::Local("key@1".into()), 2)],
            defaults: vec![],
        };
        let call = |line| HelperCall {
            name: "order".into(),
            args: vec![],
            line,
            repeat: Repeat::Once,
            together: None,
        };
        let scan = FileScan {
            file: "t.test.ts".into(),
            tests: vec![TestScope {
                sends: vec![],
                calls: vec![call(5), call(6)],
            }],
            helpers: vec![helper],
        };
        let got = resolve(&[scan]);
        assert_eq!(got.len(), 1);
        assert!(!got[0].repeats());
    }
}
