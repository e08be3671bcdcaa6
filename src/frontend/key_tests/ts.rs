//! Keyed requests in TS/JS test files, read with tree-sitter: supertest and agents
//! (`request(app).post('/x').set('Idempotency-Key', key)`, NestJS `request(app.getHttpServer())`),
//! `fetch`/axios/Playwright/`app.request` calls with a `headers` option, Fastify `inject`.
//!
//! A test is the callback of `it`/`test` (skipped ones excluded). A named function of the file is
//! a helper: its sends may take their key and URL from its parameters. Sends in one
//! `Promise.all`, or in a `.map`/`Array.from` callback whose iterations share the key, are
//! concurrent; in a loop that awaits them, sequential.

use super::{Arg, FileScan, Helper, HelperCall, Key, Repeat, Send, TestScope, UrlSpec};
use crate::catalog::Catalog;
use crate::discover::SourceFile;
use tree_sitter::{Node, Parser};

/// Stands for an expression the scanner cannot read inside a URL.
const HOLE: char = '\0';
/// Deeper than this, the tree is not followed.
const MAX_DEPTH: usize = 200;

const HTTP_METHODS: &[&str] = &[
    "post", "put", "patch", "delete", "del", "get", "head", "options",
];
/// Calls that take a URL (or a request object) and an options object: `fetch(url, { method,
/// headers })`, `axios({ method, url, headers })`, `app.inject({ … })`, Hono's `app.request`.
const REQUESTERS: &[&str] = &[
    "fetch",
    "axios",
    "request",
    "inject",
    "$fetch",
    "ofetch",
    "got",
    "ky",
    "makeRequest",
];
/// Chain links that set a header: supertest `.set`, light-my-request `.headers`, `.header`.
const HEADER_SETTERS: &[&str] = &["set", "header", "headers", "setHeader", "withHeaders"];
/// Calls whose array argument runs all at once.
const ALL: &[&str] = &["all", "allSettled", "race", "any"];

use super::OwnerKind;

struct Owner<'t> {
    kind: OwnerKind,
    func: Node<'t>,
    /// Where this owner's regions start in the region stack.
    regions_from: usize,
    /// Sends (or calls) whose promise is bound to a variable: (name, is_call, index).
    bound: Vec<(String, bool, usize)>,
    /// `Promise.all` calls: (id, identifiers in their arguments).
    alls: Vec<(usize, Vec<String>)>,
}

struct Region<'t> {
    node: Node<'t>,
    /// A `.map`/`Array.from` callback: its iterations run at once.
    concurrent: bool,
}

struct Scanner<'t, 'c> {
    src: &'t str,
    catalog: &'c Catalog,
    out: FileScan,
    owners: Vec<Owner<'t>>,
    regions: Vec<Region<'t>>,
    together: Vec<usize>,
    depth: usize,
}

/// Reads one test file's keyed requests.
pub fn scan(file: &SourceFile, catalog: &Catalog) -> FileScan {
    let mut out = FileScan {
        file: file.rel.clone(),
        ..Default::default()
    };
    let mut parser = Parser::new();
    let Some(lang) = crate::frontend::ts::language(file.lang) else {
        return out;
    };
    if parser.set_language(&lang).is_err() {
        return out;
    }
    let Some(tree) = parser.parse(&file.text, None) else {
        return out;
    };
    let mut s = Scanner {
        src: &file.text,
        catalog,
        out: std::mem::take(&mut out),
        owners: Vec::new(),
        regions: Vec::new(),
        together: Vec::new(),
        depth: 0,
    };
    s.walk(tree.root_node());
    s.out
}

fn line(n: Node) -> u32 {
    n.start_position().row as u32 + 1
}

fn is_function(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function"
            | "function_expression"
            | "function"
            | "function_declaration"
            | "generator_function"
            | "generator_function_declaration"
            | "method_definition"
    )
}

fn named_children(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

/// Parentheses, `await`, `!`, `as T`, `<T>x` and `satisfies` add nothing to a value.
fn strip(mut n: Node) -> Node {
    while matches!(
        n.kind(),
        "parenthesized_expression"
            | "await_expression"
            | "non_null_expression"
            | "as_expression"
            | "satisfies_expression"
            | "type_assertion"
    ) {
        match n.named_child(0) {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

fn contains(outer: Node, byte: usize) -> bool {
    outer.start_byte() <= byte && byte < outer.end_byte()
}

/// A variable binding as the scanner sees it.
enum Decl<'t> {
    /// `n`-th parameter of `func`.
    Param {
        func: Node<'t>,
        index: usize,
        pos: usize,
    },
    /// A `const`/`let`/`var`, a destructured parameter, a `catch` binding.
    Var { init: Option<Node<'t>>, pos: usize },
    /// A `for (const x of …)` variable: new on every iteration.
    LoopVar { pos: usize },
}

impl<'t, 'c> Scanner<'t, 'c> {
    fn text(&self, n: Node) -> &'t str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    fn walk(&mut self, node: Node<'t>) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let kind = node.kind();
        if is_function(kind) {
            self.function(node);
        } else if matches!(
            kind,
            "for_statement" | "for_in_statement" | "while_statement" | "do_statement"
        ) {
            self.regions.push(Region {
                node,
                concurrent: false,
            });
            self.children(node);
            self.regions.pop();
        } else if kind == "call_expression" {
            self.call(node);
        } else {
            self.children(node);
        }
        self.depth -= 1;
    }

    fn children(&mut self, node: Node<'t>) {
        for c in named_children(node) {
            self.walk(c);
        }
    }

    fn function(&mut self, node: Node<'t>) {
        let test_scope = self.owners.iter().rev().find_map(|o| match o.kind {
            OwnerKind::Test(t) => Some(t),
            OwnerKind::Helper(_) => None,
        });
        let kind = if self.is_test_callback(node) {
            self.out.tests.push(TestScope::default());
            Some(OwnerKind::Test(self.out.tests.len() - 1))
        } else if let Some(name) = self.function_name(node) {
            let defaults = self.defaults(node);
            self.out.helpers.push(Helper {
                name,
                test: test_scope,
                sends: Vec::new(),
                defaults,
            });
            Some(OwnerKind::Helper(self.out.helpers.len() - 1))
        } else {
            None
        };
        match kind {
            Some(kind) => {
                self.owners.push(Owner {
                    kind,
                    func: node,
                    regions_from: self.regions.len(),
                    bound: Vec::new(),
                    alls: Vec::new(),
                });
                let together = std::mem::take(&mut self.together);
                self.children(node);
                self.together = together;
                if let Some(owner) = self.owners.pop() {
                    self.finish(owner);
                }
            }
            None => match self.repeat_callback(node) {
                Some(concurrent) => {
                    self.regions.push(Region { node, concurrent });
                    self.children(node);
                    self.regions.pop();
                }
                None => self.children(node),
            },
        }
    }

    /// Sends whose promise was bound to a variable that a `Promise.all` then awaits.
    fn finish(&mut self, owner: Owner<'t>) {
        for (id, names) in &owner.alls {
            for (name, is_call, i) in &owner.bound {
                if !names.contains(name) {
                    continue;
                }
                if let Some(t) = self.out.together(owner.kind, *is_call, *i) {
                    t.get_or_insert(*id);
                }
            }
        }
    }

    /// The callback of `it(…)`/`test(…)`, not of a skipped or `describe` one.
    fn is_test_callback(&self, f: Node) -> bool {
        let Some(call) = f
            .parent()
            .filter(|a| a.kind() == "arguments")
            .and_then(|a| a.parent())
            .filter(|c| c.kind() == "call_expression")
        else {
            return false;
        };
        let mut callee = call.child_by_field_name("function");
        // `it.each(table)(name, fn)`
        while let Some(c) = callee.filter(|c| c.kind() == "call_expression") {
            callee = c.child_by_field_name("function");
        }
        let Some(callee) = callee else {
            return false;
        };
        let text: String = self
            .text(callee)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let parts: Vec<&str> = text.split('.').collect();
        let first = parts[0];
        let last = parts[parts.len() - 1];
        if parts
            .iter()
            .any(|p| matches!(*p, "skip" | "todo" | "describe" | "step" | "fixme"))
        {
            return false;
        }
        matches!(first, "it" | "test" | "specify" | "fit" | "Deno") || matches!(last, "test" | "it")
    }

    fn function_name(&self, f: Node) -> Option<String> {
        if let Some(n) = f.child_by_field_name("name") {
            return Some(self.text(n).to_string());
        }
        let p = f.parent()?;
        let n = match p.kind() {
            "variable_declarator" => p.child_by_field_name("name")?,
            "pair" => p.child_by_field_name("key")?,
            "assignment_expression" => {
                let left = p.child_by_field_name("left")?;
                left.child_by_field_name("property").unwrap_or(left)
            }
            "public_field_definition" | "field_definition" => p.child_by_field_name("name")?,
            _ => return None,
        };
        (n.kind().contains("identifier")).then(|| self.text(n).to_string())
    }

    /// Parameter defaults of a helper, as keys.
    fn defaults(&mut self, f: Node<'t>) -> Vec<Option<Key>> {
        let Some(params) = f.child_by_field_name("parameters") else {
            return Vec::new();
        };
        named_children(params)
            .into_iter()
            .map(|p| {
                let d = p.child_by_field_name("value").or_else(|| {
                    (p.kind() == "assignment_pattern")
                        .then(|| p.child_by_field_name("right"))
                        .flatten()
                });
                d.map(|d| self.key_of(d, 0).0)
            })
            .collect()
    }

    /// A `.map`/`.forEach`/`Array.from` callback: Some(concurrent).
    fn repeat_callback(&self, f: Node) -> Option<bool> {
        let call = f
            .parent()
            .filter(|a| a.kind() == "arguments")?
            .parent()
            .filter(|c| c.kind() == "call_expression")?;
        let callee = call.child_by_field_name("function")?;
        let name = match callee.kind() {
            "member_expression" => self.text(callee.child_by_field_name("property")?),
            "identifier" => self.text(callee),
            _ => return None,
        };
        match name {
            "map" | "flatMap" | "forEach" | "from" | "times" | "mapLimit" => Some(true),
            _ => None,
        }
    }

    fn call(&mut self, node: Node<'t>) {
        let callee = node.child_by_field_name("function");
        let is_all = callee.is_some_and(|c| {
            c.kind() == "member_expression"
                && c.child_by_field_name("object")
                    .is_some_and(|o| self.text(o) == "Promise")
                && c.child_by_field_name("property")
                    .is_some_and(|p| ALL.contains(&self.text(p)))
        });
        if is_all {
            let id = node.id();
            if let Some(args) = node.child_by_field_name("arguments") {
                let mut names = Vec::new();
                self.identifiers(args, &mut names, 0);
                if let Some(o) = self.owners.last_mut() {
                    o.alls.push((id, names));
                }
            }
            self.together.push(id);
            self.children(node);
            self.together.pop();
            return;
        }
        if !self.owners.is_empty() {
            let top = !node.parent().is_some_and(|p| {
                p.kind() == "member_expression"
                    && p.child_by_field_name("object")
                        .is_some_and(|o| o.id() == node.id())
            });
            if top && let Some(send) = self.send(node) {
                self.record_send(node, send);
            } else if let Some(call) = self.helper_call(node) {
                self.record_call(node, call);
            }
        }
        self.children(node);
    }

    fn identifiers(&self, n: Node, out: &mut Vec<String>, depth: usize) {
        if depth > 32 {
            return;
        }
        if n.kind() == "identifier" {
            out.push(self.text(n).to_string());
        }
        for c in named_children(n) {
            self.identifiers(c, out, depth + 1);
        }
    }

    fn owner(&self) -> Option<&Owner<'t>> {
        self.owners.last()
    }

    /// The variable the send's promise is bound to, when it is not awaited there.
    fn bound_name(&self, top: Node) -> Option<String> {
        let p = top.parent()?;
        (p.kind() == "variable_declarator")
            .then(|| p.child_by_field_name("name"))
            .flatten()
            .filter(|n| n.kind() == "identifier")
            .map(|n| self.text(n).to_string())
    }

    fn record_send(&mut self, top: Node<'t>, mut send: Send) {
        let bound = self.bound_name(top);
        send.together = self.together.last().copied();
        let Some(owner) = self.owners.last_mut() else {
            return;
        };
        let (i, is_call) = match owner.kind {
            OwnerKind::Test(t) => {
                self.out.tests[t].sends.push(send);
                (self.out.tests[t].sends.len() - 1, false)
            }
            OwnerKind::Helper(h) => {
                self.out.helpers[h].sends.push(send);
                (self.out.helpers[h].sends.len() - 1, false)
            }
        };
        if let Some(name) = bound {
            owner.bound.push((name, is_call, i));
        }
    }

    fn record_call(&mut self, top: Node<'t>, mut call: HelperCall) {
        let bound = self.bound_name(top);
        call.together = self.together.last().copied();
        let Some(owner) = self.owners.last_mut() else {
            return;
        };
        // Helpers calling helpers are not followed.
        if let OwnerKind::Test(t) = owner.kind {
            self.out.tests[t].calls.push(call);
            if let Some(name) = bound {
                owner
                    .bound
                    .push((name, true, self.out.tests[t].calls.len() - 1));
            }
        }
    }

    /// How often the code at `at` runs with a key bound at `decls`: the innermost loops or
    /// callbacks (of the current function) that do not bind the key repeat it.
    fn repeat(&self, at: Node, decls: &[usize]) -> Repeat {
        let from = self.owner().map(|o| o.regions_from).unwrap_or(0);
        let mut repeat = Repeat::Once;
        for r in self.regions[from..].iter().rev() {
            if decls.iter().any(|d| contains(r.node, *d)) {
                break;
            }
            let concurrent = r.concurrent || !self.awaited_within(at, r.node);
            repeat = repeat.max(if concurrent {
                Repeat::Concurrent
            } else {
                Repeat::Sequential
            });
        }
        repeat
    }

    /// Is the promise made at `at` awaited before control leaves `region`?
    fn awaited_within(&self, at: Node, region: Node) -> bool {
        let mut n = at;
        while let Some(p) = n.parent() {
            if p.id() == region.id() {
                return false;
            }
            if matches!(p.kind(), "await_expression" | "yield_expression") {
                return true;
            }
            n = p;
        }
        false
    }

    /// A chain that sends a request with a key header.
    fn send(&mut self, top: Node<'t>) -> Option<Send> {
        let links = self.links(top);
        let mut method: Option<String> = None;
        let mut url: Option<UrlSpec> = None;
        let mut key: Option<(Key, Vec<usize>)> = None;
        for (name, args) in &links {
            let lower = name.to_ascii_lowercase();
            if method.is_none()
                && HTTP_METHODS.contains(&lower.as_str())
                && !args.is_empty()
                && !args.iter().any(|a| is_function(a.kind()))
            {
                method = Some(if lower == "del" {
                    "DELETE".into()
                } else {
                    lower.to_ascii_uppercase()
                });
                url = Some(self.url_of(args[0]));
                for o in &args[1..] {
                    self.options(*o, &mut None, &mut None, &mut key);
                }
            } else if method.is_none() && REQUESTERS.contains(&name.as_str()) && !args.is_empty() {
                let mut m = None;
                let mut u = None;
                let first = strip(args[0]);
                if first.kind() == "object" {
                    self.options(first, &mut m, &mut u, &mut key);
                } else {
                    u = Some(self.url_of(first));
                    for o in &args[1..] {
                        self.options(*o, &mut m, &mut None, &mut key);
                    }
                }
                if u.is_some() {
                    method = m.or_else(|| (name == "fetch").then(|| "GET".into()));
                    url = u;
                }
            } else if HEADER_SETTERS.contains(&name.as_str()) {
                match args.as_slice() {
                    [h, v] if self.is_key_header(*h) => key = Some(self.key_of(*v, 0)),
                    [obj] => {
                        if let Some(v) = self.key_in_headers(*obj, 0) {
                            key = Some(self.key_of(v, 0));
                        }
                    }
                    _ => {}
                }
            }
        }
        let (method, url, (key, decls)) = (method?, url?, key?);
        Some(Send {
            method,
            url,
            repeat: if key == Key::Fresh {
                Repeat::Once
            } else {
                self.repeat(top, &decls)
            },
            key,
            line: line(top),
            together: None,
        })
    }

    /// Reads `method`, `url` and a key header out of an options object.
    fn options(
        &mut self,
        obj: Node<'t>,
        method: &mut Option<String>,
        url: &mut Option<UrlSpec>,
        key: &mut Option<(Key, Vec<usize>)>,
    ) {
        let obj = strip(obj);
        if obj.kind() != "object" {
            return;
        }
        // `{ headers }`: a variable holding the headers.
        let shorthand: Vec<Node<'t>> = named_children(obj)
            .into_iter()
            .filter(|p| p.kind() == "shorthand_property_identifier" && self.text(*p) == "headers")
            .collect();
        for short in shorthand {
            if let Some(Decl::Var {
                init: Some(init), ..
            }) = self.decl(short)
                && let Some(v) = self.key_in_headers(init, 1)
            {
                *key = Some(self.key_of(v, 0));
            }
        }
        for pair in named_children(obj)
            .into_iter()
            .filter(|p| p.kind() == "pair")
        {
            let (Some(k), Some(v)) = (
                pair.child_by_field_name("key"),
                pair.child_by_field_name("value"),
            ) else {
                continue;
            };
            match self.text(k).trim_matches(['"', '\'']) {
                "method" => {
                    let v = strip(v);
                    if v.kind() == "string" {
                        *method = Some(self.unquote(v).to_ascii_uppercase());
                    }
                }
                "url" | "path" => *url = Some(self.url_of(v)),
                "headers" => {
                    if let Some(v) = self.key_in_headers(v, 0) {
                        *key = Some(self.key_of(v, 0));
                    }
                }
                _ => {}
            }
        }
    }

    /// The value of the key header in a headers object (`{ 'Idempotency-Key': key }`, a variable
    /// holding one, `new Headers({ … })`).
    fn key_in_headers(&self, n: Node<'t>, depth: usize) -> Option<Node<'t>> {
        if depth > 3 {
            return None;
        }
        let n = strip(n);
        match n.kind() {
            "object" => named_children(n).into_iter().find_map(|p| match p.kind() {
                "pair" => {
                    let k = p.child_by_field_name("key")?;
                    let k = if k.kind() == "computed_property_name" {
                        k.named_child(0)?
                    } else {
                        k
                    };
                    self.is_key_header(k)
                        .then(|| p.child_by_field_name("value"))
                        .flatten()
                }
                _ => None,
            }),
            "identifier" => match self.decl(n) {
                Some(Decl::Var {
                    init: Some(init), ..
                }) => self.key_in_headers(init, depth + 1),
                _ => None,
            },
            "new_expression" | "call_expression" => {
                let args = n.child_by_field_name("arguments")?;
                named_children(args)
                    .into_iter()
                    .find_map(|a| self.key_in_headers(a, depth + 1))
            }
            _ => None,
        }
    }

    /// A header name that carries an idempotency key: a literal the catalogue lists, a constant
    /// bound to one, or a constant named for it (`IDEMPOTENCY_HEADER`).
    fn is_key_header(&self, n: Node<'t>) -> bool {
        let n = strip(n);
        match n.kind() {
            "string" => self.catalog.is_key_header(self.unquote(n)),
            "property_identifier" => self.catalog.is_key_header(self.text(n)),
            "identifier" | "member_expression" => {
                if let Some(Decl::Var {
                    init: Some(init), ..
                }) = (n.kind() == "identifier").then(|| self.decl(n)).flatten()
                    && strip(init).kind() == "string"
                {
                    return self.catalog.is_key_header(self.unquote(strip(init)));
                }
                self.text(n).to_ascii_lowercase().contains("idempoten")
            }
            _ => false,
        }
    }

    fn unquote(&self, n: Node) -> &'t str {
        self.text(n).trim_matches(['"', '\'', '`'])
    }

    /// The chain of calls ending at `top`, outermost last: `request(app).post('/x').set(h, k)` →
    /// [request(app), post('/x'), set(h, k)].
    fn links(&self, top: Node<'t>) -> Vec<(String, Vec<Node<'t>>)> {
        let mut out = Vec::new();
        let mut cur = top;
        while out.len() < 64 {
            let args = cur
                .child_by_field_name("arguments")
                .map(named_children)
                .unwrap_or_default();
            let Some(f) = cur.child_by_field_name("function") else {
                break;
            };
            match f.kind() {
                "member_expression" => {
                    let name = f
                        .child_by_field_name("property")
                        .map(|p| self.text(p).to_string())
                        .unwrap_or_default();
                    out.push((name, args));
                    match f.child_by_field_name("object").map(strip) {
                        Some(o) if o.kind() == "call_expression" => cur = o,
                        _ => break,
                    }
                }
                "identifier" => {
                    out.push((self.text(f).to_string(), args));
                    break;
                }
                "call_expression" => {
                    out.push((String::new(), args));
                    cur = f;
                }
                _ => break,
            }
        }
        out.reverse();
        out
    }

    /// A call to a named function that may be a helper that sends.
    fn helper_call(&mut self, node: Node<'t>) -> Option<HelperCall> {
        let f = node.child_by_field_name("function")?;
        let name = match f.kind() {
            "identifier" => self.text(f),
            "member_expression" => self.text(f.child_by_field_name("property")?),
            _ => return None,
        };
        if REQUESTERS.contains(&name)
            || HTTP_METHODS.contains(&name)
            || matches!(name, "expect" | "describe")
        {
            return None;
        }
        let mut decls = Vec::new();
        let args = node
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        let innermost = self
            .regions
            .get(self.owner().map(|o| o.regions_from).unwrap_or(0)..)
            .and_then(|r| r.last())
            .map(|r| r.node);
        let args: Vec<Arg> = args
            .into_iter()
            .map(|a| {
                let (key, d) = self.key_of(a, 0);
                let varies = innermost.is_some_and(|r| d.iter().any(|p| contains(r, *p)));
                decls.extend(d);
                let url = match self.url_of(a) {
                    UrlSpec::Known(u) if u.path.is_some() => Some(u),
                    _ => None,
                };
                Arg { key, url, varies }
            })
            .collect();
        Some(HelperCall {
            name: name.to_string(),
            args,
            line: line(node),
            repeat: self.repeat(node, &[]),
            together: None,
        })
    }

    /// A URL argument: a parameter of the helper, or the text with holes for what is not known.
    fn url_of(&self, n: Node<'t>) -> UrlSpec {
        let n = strip(n);
        if n.kind() == "identifier"
            && let Some(Decl::Param { func, index, .. }) = self.decl(n)
            && self.owner().is_some_and(|o| o.func.id() == func.id())
            && matches!(self.owner().map(|o| o.kind), Some(OwnerKind::Helper(_)))
        {
            return UrlSpec::Param(index);
        }
        let mut text = String::new();
        self.url_text(n, &mut text, 0);
        UrlSpec::Known(super::parse_url(&text, HOLE))
    }

    fn url_text(&self, n: Node<'t>, out: &mut String, depth: usize) {
        let n = strip(n);
        if depth > 8 {
            out.push(HOLE);
            return;
        }
        match n.kind() {
            "string" => out.push_str(self.unquote(n)),
            "template_string" => {
                for c in named_children(n) {
                    match c.kind() {
                        "template_substitution" => match c.named_child(0) {
                            Some(e) => self.url_text(e, out, depth + 1),
                            None => out.push(HOLE),
                        },
                        _ => out.push_str(self.text(c)),
                    }
                }
            }
            "binary_expression" => {
                match (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) {
                    (Some(l), Some(r)) => {
                        self.url_text(l, out, depth + 1);
                        self.url_text(r, out, depth + 1);
                    }
                    _ => out.push(HOLE),
                }
            }
            "identifier" => match self.decl(n) {
                Some(Decl::Var {
                    init: Some(init), ..
                }) if matches!(
                    strip(init).kind(),
                    "string" | "template_string" | "binary_expression"
                ) =>
                {
                    self.url_text(init, out, depth + 1)
                }
                _ => out.push(HOLE),
            },
            _ => out.push(HOLE),
        }
    }

    /// What a key expression is, with the byte positions of the bindings it depends on.
    fn key_of(&mut self, n: Node<'t>, depth: usize) -> (Key, Vec<usize>) {
        let n = strip(n);
        if depth > 16 {
            return (Key::Fresh, Vec::new());
        }
        match n.kind() {
            "string" | "number" => (Key::Const(self.text(n).to_string()), Vec::new()),
            "identifier" => self.key_of_identifier(n, depth),
            "member_expression" => {
                let (k, d) = match n.child_by_field_name("object") {
                    Some(o) => self.key_of(o, depth + 1),
                    None => (Key::Fresh, Vec::new()),
                };
                let prop = n
                    .child_by_field_name("property")
                    .map(|p| self.text(p))
                    .unwrap_or("");
                (suffix(k, prop), d)
            }
            "call_expression" => {
                let Some(f) = n.child_by_field_name("function") else {
                    return (Key::Fresh, Vec::new());
                };
                let args = n
                    .child_by_field_name("arguments")
                    .map(named_children)
                    .unwrap_or_default();
                let (name, receiver) = match f.kind() {
                    "member_expression" => (
                        f.child_by_field_name("property")
                            .map(|p| self.text(p))
                            .unwrap_or(""),
                        f.child_by_field_name("object"),
                    ),
                    _ => (self.text(f), None),
                };
                // A value made from nothing, or by a generator, is new on every call.
                if super::is_generator(name) || (receiver.is_none() && args.is_empty()) {
                    return (Key::Fresh, Vec::new());
                }
                let mut parts: Vec<Node<'t>> = receiver.into_iter().collect();
                parts.extend(args);
                let (k, d) = self.combine(&parts, depth);
                (suffix(k, name), d)
            }
            "template_string" => {
                let subs: Vec<Node<'t>> = named_children(n)
                    .into_iter()
                    .filter(|c| c.kind() == "template_substitution")
                    .filter_map(|c| c.named_child(0))
                    .collect();
                if subs.is_empty() {
                    return (Key::Const(self.text(n).to_string()), Vec::new());
                }
                let (k, d) = self.combine(&subs, depth);
                (suffix(k, self.text(n)), d)
            }
            _ => {
                let parts = named_children(n);
                if parts.is_empty() {
                    return (Key::Const(self.text(n).to_string()), Vec::new());
                }
                let (k, d) = self.combine(&parts, depth);
                (suffix(k, n.kind()), d)
            }
        }
    }

    fn combine(&mut self, parts: &[Node<'t>], depth: usize) -> (Key, Vec<usize>) {
        let mut decls = Vec::new();
        let mut keys = Vec::with_capacity(parts.len());
        for p in parts {
            let (k, d) = self.key_of(*p, depth + 1);
            decls.extend(d);
            if k == Key::Fresh {
                return (Key::Fresh, Vec::new());
            }
            keys.push(k);
        }
        (Key::combine(keys), decls)
    }

    fn key_of_identifier(&mut self, n: Node<'t>, depth: usize) -> (Key, Vec<usize>) {
        let name = self.text(n);
        let owner = self.owner().map(|o| (o.func, o.kind));
        let inside_owner = |pos: usize| owner.is_some_and(|(f, _)| contains(f, pos));
        match self.decl(n) {
            Some(Decl::Param {
                func, index, pos, ..
            }) => match owner {
                Some((f, OwnerKind::Helper(_))) if f.id() == func.id() => {
                    (Key::Param(index), Vec::new())
                }
                _ if inside_owner(pos) => (Key::Local(format!("{name}@{pos}")), vec![pos]),
                _ => (Key::Const(format!("{name}@{pos}")), Vec::new()),
            },
            Some(Decl::Var { init, pos }) => {
                if let Some(init) = init.map(strip)
                    && (init.kind() == "string"
                        || init.kind() == "number"
                        || (init.kind() == "template_string"
                            && !named_children(init)
                                .iter()
                                .any(|c| c.kind() == "template_substitution")))
                {
                    return (Key::Const(self.text(init).to_string()), Vec::new());
                }
                if let Some(init) = init.map(strip)
                    && depth < 4
                    && init.kind() == "identifier"
                {
                    // `const k = key;`
                    let (k, mut d) = self.key_of(init, depth + 1);
                    if !matches!(k, Key::Const(_)) {
                        d.push(pos);
                    }
                    return (k, d);
                }
                if inside_owner(pos) {
                    (Key::Local(format!("{name}@{pos}")), vec![pos])
                } else {
                    (Key::Const(format!("{name}@{pos}")), Vec::new())
                }
            }
            Some(Decl::LoopVar { pos }) => (Key::Local(format!("{name}@{pos}")), vec![pos]),
            None => (Key::Const(name.to_string()), Vec::new()),
        }
    }

    /// The binding an identifier refers to: the nearest parameter, loop variable or declaration
    /// in an enclosing block.
    fn decl(&self, ident: Node<'t>) -> Option<Decl<'t>> {
        let name = self.text(ident);
        let mut cur = ident;
        let mut hops = 0;
        while let Some(a) = cur.parent() {
            hops += 1;
            if hops > 400 {
                return None;
            }
            let found = match a.kind() {
                k if is_function(k) => self.param_decl(a, name),
                "for_in_statement" => a
                    .child_by_field_name("left")
                    .filter(|l| self.binds(*l, name))
                    .map(|l| Decl::LoopVar {
                        pos: l.start_byte(),
                    }),
                "for_statement" => a
                    .child_by_field_name("initializer")
                    .filter(|i| self.binds(*i, name))
                    .map(|i| Decl::LoopVar {
                        pos: i.start_byte(),
                    }),
                "catch_clause" => a
                    .child_by_field_name("parameter")
                    .filter(|p| self.binds(*p, name))
                    .map(|p| Decl::Var {
                        init: None,
                        pos: p.start_byte(),
                    }),
                "statement_block" | "program" | "class_body" | "switch_body" => {
                    self.block_decl(a, name)
                }
                _ => None,
            };
            if found.is_some() {
                return found;
            }
            cur = a;
        }
        None
    }

    fn block_decl(&self, block: Node<'t>, name: &str) -> Option<Decl<'t>> {
        for stmt in named_children(block) {
            let stmt = if stmt.kind() == "export_statement" {
                stmt.child_by_field_name("declaration").unwrap_or(stmt)
            } else {
                stmt
            };
            if !matches!(stmt.kind(), "lexical_declaration" | "variable_declaration") {
                continue;
            }
            for d in named_children(stmt)
                .into_iter()
                .filter(|d| d.kind() == "variable_declarator")
            {
                let Some(n) = d.child_by_field_name("name") else {
                    continue;
                };
                if n.kind() == "identifier" && self.text(n) == name {
                    return Some(Decl::Var {
                        init: d.child_by_field_name("value"),
                        pos: d.start_byte(),
                    });
                }
                if n.kind() != "identifier" && self.binds(n, name) {
                    return Some(Decl::Var {
                        init: None,
                        pos: d.start_byte(),
                    });
                }
            }
        }
        None
    }

    fn param_decl(&self, f: Node<'t>, name: &str) -> Option<Decl<'t>> {
        if let Some(p) = f.child_by_field_name("parameter") {
            return self.binds(p, name).then(|| Decl::Param {
                func: f,
                index: 0,
                pos: p.start_byte(),
            });
        }
        let params = f.child_by_field_name("parameters")?;
        for (index, p) in named_children(params).into_iter().enumerate() {
            let pattern = p
                .child_by_field_name("pattern")
                .or_else(|| p.child_by_field_name("left"))
                .unwrap_or(p);
            if pattern.kind() == "identifier" && self.text(pattern) == name {
                return Some(Decl::Param {
                    func: f,
                    index,
                    pos: p.start_byte(),
                });
            }
            if pattern.kind() != "identifier" && self.binds(pattern, name) {
                // A destructured parameter: a variable of the function.
                return Some(Decl::Var {
                    init: None,
                    pos: p.start_byte(),
                });
            }
        }
        None
    }

    /// Does a pattern or declaration bind `name`?
    fn binds(&self, n: Node, name: &str) -> bool {
        let mut stack = vec![(n, 0usize)];
        while let Some((n, d)) = stack.pop() {
            if d > 16 {
                continue;
            }
            match n.kind() {
                "identifier" | "shorthand_property_identifier_pattern" if self.text(n) == name => {
                    // In `const x = y`, only the name side binds.
                    return true;
                }
                "variable_declarator" => {
                    if let Some(nm) = n.child_by_field_name("name") {
                        stack.push((nm, d + 1));
                    }
                }
                "pair_pattern" => {
                    if let Some(v) = n.child_by_field_name("value") {
                        stack.push((v, d + 1));
                    }
                }
                "assignment_pattern" | "object_assignment_pattern" => {
                    if let Some(v) = n.child_by_field_name("left") {
                        stack.push((v, d + 1));
                    }
                }
                _ => {
                    for c in named_children(n) {
                        stack.push((c, d + 1));
                    }
                }
            }
        }
        false
    }
}

fn suffix(k: Key, what: &str) -> Key {
    match k {
        Key::Const(s) => Key::Const(format!("{s}.{what}")),
        Key::Local(s) => Key::Local(format!("{s}.{what}")),
        k => k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::Lang;
    use crate::facts::KeyTest;

    fn tests_of(src: &str) -> Vec<KeyTest> {
        let catalog = Catalog::builtin().unwrap();
        let f = SourceFile {
            rel: "test/orders.test.ts".into(),
            lang: Lang::TypeScript,
            text: src.into(),
        };
        super::super::resolve(&[scan(&f, &catalog)])
    }

    fn repeated(src: &str) -> Vec<(String, Option<String>, bool, bool, u32)> {
        super::super::repeating(tests_of(src))
    }

    #[test]
    fn supertest_twice_with_one_key() {
        let got = repeated(
            r#"
import request from 'supertest';
import app from '../src/app';
describe('orders', () => {
  it('replays', async () => {
    const key = randomUUID();
    const a = await request(app).post('/api/orders').set('Idempotency-Key', key).send({ sku: 'x' });
    const b = await request(app).post('/api/orders').set('Idempotency-Key', key).send({ sku: 'x' });
    expect(b.body).toEqual(a.body);
  });
  it('new keys are new orders', async () => {
    await request(app).post('/api/orders').set('Idempotency-Key', randomUUID());
    await request(app).post('/api/orders').set('Idempotency-Key', randomUUID());
  });
});
"#,
        );
        assert_eq!(
            got,
            vec![("POST".into(), Some("/api/orders".into()), true, false, 7)]
        );
    }

    #[test]
    fn promise_all_over_a_map_is_concurrent() {
        let got = repeated(
            r#"
test('one wins', async () => {
  const key = 'k-1';
  const rs = await Promise.all([1, 2, 3].map(() => agent.post(`/api/accounts/${id}/transfers`).set({ 'Idempotency-Key': key })));
  const more = await Promise.all(Array.from({ length: 5 }, () => fetch(`${base}/api/refunds`, { method: 'POST', headers: { 'idempotency-key': key } })));
});
"#,
        );
        assert_eq!(
            got,
            vec![
                (
                    "POST".into(),
                    Some("/api/accounts/{}/transfers".into()),
                    false,
                    true,
                    4
                ),
                ("POST".into(), Some("/api/refunds".into()), false, true, 5),
            ]
        );
    }

    #[test]
    fn a_key_made_inside_the_loop_is_not_repeated() {
        let got = repeated(
            r#"
it('many orders', async () => {
  for (const sku of skus) {
    const key = randomUUID();
    await request(app).post('/orders').set('Idempotency-Key', key);
  }
  await Promise.all(keys.map((k) => request(app).post('/orders').set('Idempotency-Key', k)));
});
"#,
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn a_loop_over_one_key_repeats_it() {
        let got = repeated(
            r#"
it('retries', async () => {
  const key = uuid();
  for (let i = 0; i < 3; i++) {
    const res = await request(app).put('/orders/7').set(IDEMPOTENCY_HEADER, key);
  }
});
"#,
        );
        assert_eq!(
            got,
            vec![("PUT".into(), Some("/orders/7".into()), true, false, 5)]
        );
    }

    #[test]
    fn bound_promises_awaited_together_are_concurrent() {
        let got = repeated(
            r#"
it('race', async () => {
  const headers = { 'Idempotency-Key': 'abc' };
  const first = request(app.getHttpServer()).post('/v1/payments').set(headers);
  const second = request(app.getHttpServer()).post('/v1/payments').set(headers);
  const [a, b] = await Promise.all([first, second]);
});
"#,
        );
        assert_eq!(
            got,
            vec![("POST".into(), Some("/v1/payments".into()), false, true, 4)]
        );
    }

    #[test]
    fn helpers_pass_the_key_and_defaults_are_fresh() {
        let got = repeated(
            r#"
const pay = (id: string, key: string = randomUUID()) =>
  request(app).post(`/orders/${id}/pay`).set('Idempotency-Key', key).send({});

it('replays a payment', async () => {
  const key = randomUUID();
  await pay(order.id, key);
  await pay(order.id, key);
});
it('two payments', async () => {
  await pay(order.id);
  await pay(order.id);
});
"#,
        );
        assert_eq!(
            got,
            vec![("POST".into(), Some("/orders/{}/pay".into()), true, false, 7)]
        );
    }

    #[test]
    fn routes_and_skipped_tests_are_not_requests() {
        let got = tests_of(
            r#"
const app = express();
app.post('/orders', (req, res) => res.set('Idempotency-Key', req.get('Idempotency-Key')).end());
it.skip('replays', async () => {
  await request(app).post('/orders').set('Idempotency-Key', 'a');
  await request(app).post('/orders').set('Idempotency-Key', 'a');
});
"#,
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn option_objects_carry_method_url_and_key() {
        let got = repeated(
            r#"
const IDEMPOTENCY_HEADER = 'Idempotency-Key';
test('cypress', () => {
  const key = 'abc';
  cy.request({ method: 'POST', url: '/api/orders', headers: { [IDEMPOTENCY_HEADER]: key } });
  cy.request({ method: 'POST', url: '/api/orders', headers: { [IDEMPOTENCY_HEADER]: key } });
});
test('playwright', async ({ request }) => {
  const headers = { 'Idempotency-Key': 'k-2' };
  await request.post('/api/refunds', { headers, data: { amount: 1 } });
  await request.post('/api/refunds', { headers, data: { amount: 1 } });
});
test('fastify inject', async () => {
  const opts = { method: 'PATCH', url: '/api/orders/7', headers: { 'idempotency-key': 'k-3' } };
  await app.inject({ method: 'PATCH', url: '/api/orders/7', headers: { 'idempotency-key': 'k-3' } });
  await app.inject({ method: 'PATCH', url: '/api/orders/7', headers: { 'idempotency-key': 'k-3' } });
});
"#,
        );
        assert_eq!(
            got,
            vec![
                (
                    "PATCH".into(),
                    Some("/api/orders/7".into()),
                    true,
                    false,
                    15
                ),
                ("POST".into(), Some("/api/orders".into()), true, false, 5),
                ("POST".into(), Some("/api/refunds".into()), true, false, 10),
            ]
        );
    }

    #[test]
    fn a_single_send_is_kept_as_a_hint() {
        let got = tests_of(
            r#"
it('creates', async () => {
  await request(app).post('/orders').set('Idempotency-Key', 'k').expect(201);
  await request(app).post('/orders').set('Authorization', 'x').expect(400);
});
"#,
        );
        assert_eq!(got.len(), 1);
        assert!(!got[0].repeats());
        assert_eq!(got[0].location.line, 3);
    }
}
