//! Keyed requests in Rust tests, read with syn: axum `Request::builder().method("POST")
//! .uri("/x").header("idempotency-key", k)` (sent with `oneshot`), `axum_test::TestServer`
//! `.post("/x").add_header(..)`, actix `test::TestRequest::post().uri(..).insert_header((..))`,
//! and reqwest `client.post(url).header(..)` against a spawned server.
//!
//! A test is a function with a test attribute (`#[test]`, `#[tokio::test]`, `#[actix_web::test]`,
//! …). Other functions of the file (free functions, methods such as `TestApp::post_order`, and
//! closures bound with `let`) are helpers. Sends in one `join!`/`join_all`, in a `.map` closure
//! or spawned from a loop are concurrent; in a loop, sequential.

use super::{Arg, FileScan, Helper, HelperCall, Key, Repeat, Send, TestScope, UrlSpec};
use crate::catalog::Catalog;
use proc_macro2::TokenStream;
use std::collections::HashMap;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Token};

const HOLE: char = '\0';
const MAX_DEPTH: usize = 150;
const HTTP_METHODS: &[&str] = &["post", "put", "patch", "delete", "get", "head", "options"];
/// Methods that only pass a value through: `key.clone()` is the key.
const TRANSPARENT: &[&str] = &[
    "clone",
    "to_string",
    "to_owned",
    "as_str",
    "as_ref",
    "into",
    "unwrap",
    "expect",
    "parse",
    "try_into",
    "borrow",
    "as_bytes",
    "to_vec",
    "deref",
];
/// Calls and macros whose arguments run at once.
const JOINS: &[&str] = &[
    "join",
    "try_join",
    "join_all",
    "try_join_all",
    "join3",
    "join4",
    "join5",
    "select_all",
];

/// Reads one Rust file's keyed test requests. A file syn cannot parse, or one nested too deeply
/// to parse safely, gives nothing (the route front end reports it).
pub fn scan(rel: &str, text: &str, catalog: &Catalog) -> FileScan {
    let mut out = FileScan {
        file: rel.to_string(),
        ..Default::default()
    };
    if crate::frontend::rust::parse::too_deep(text).is_some() {
        return out;
    }
    if let Ok(file) = syn::parse_file(text) {
        let mut s = Scanner {
            catalog,
            out: std::mem::take(&mut out),
            consts: HashMap::new(),
            owner: None,
            vars: Vec::new(),
            regions: Vec::new(),
            marks: Vec::new(),
            together: Vec::new(),
            bound: Vec::new(),
            joins: Vec::new(),
            depth: 0,
            next_id: 0,
        };
        s.collect_consts(&file.items, 0);
        s.items(&file.items, 0);
        out = s.out;
    }
    proc_macro2::extra::invalidate_current_thread_spans();
    out
}

use super::OwnerKind;

struct Var {
    name: String,
    id: usize,
    /// How many regions were open where it was bound.
    regions: usize,
    /// Bound to a string literal.
    lit: Option<String>,
    /// The owner's `n`-th parameter.
    param: Option<usize>,
    /// Bound outside the owner (a test's variable seen from a closure helper).
    outer: bool,
    /// Bound to a URL the scanner can read (`format!("{addr}/orders")`), holes included.
    url: Option<String>,
}

struct Scanner<'c> {
    catalog: &'c Catalog,
    out: FileScan,
    /// `const NAME: &str = "…";` anywhere in the file.
    consts: HashMap<String, String>,
    owner: Option<OwnerKind>,
    vars: Vec<Var>,
    /// Loops and `.map` closures: concurrent or not.
    regions: Vec<bool>,
    /// Region counts where a `spawn`/`push` was entered: a loop around it runs its body at once.
    marks: Vec<usize>,
    together: Vec<usize>,
    /// Sends or calls bound to a `let`: (name, is_call, index).
    bound: Vec<(String, bool, usize)>,
    /// `join!`s: (id, identifiers in their arguments).
    joins: Vec<(usize, Vec<String>)>,
    depth: usize,
    next_id: usize,
}

fn line_of(e: &impl Spanned) -> u32 {
    e.span().start().line as u32
}

fn last_seg(p: &syn::Path) -> String {
    p.segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

fn is_test_fn(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let last = last_seg(a.path());
        matches!(last.as_str(), "test" | "rstest") || last.starts_with("test_case")
    })
}

fn lit_str(e: &Expr) -> Option<String> {
    match e {
        Expr::Lit(l) => match &l.lit {
            syn::Lit::Str(s) => Some(s.value()),
            _ => None,
        },
        Expr::Reference(r) => lit_str(&r.expr),
        Expr::Paren(p) => lit_str(&p.expr),
        Expr::Group(g) => lit_str(&g.expr),
        _ => None,
    }
}

/// Wrappers that do not change what a value is.
fn strip(mut e: &Expr) -> &Expr {
    loop {
        e = match e {
            Expr::Reference(r) => &r.expr,
            Expr::Paren(p) => &p.expr,
            Expr::Group(g) => &g.expr,
            Expr::Await(a) => &a.base,
            Expr::Try(t) => &t.expr,
            Expr::Cast(c) => &c.expr,
            Expr::MethodCall(m) if TRANSPARENT.contains(&m.method.to_string().as_str()) => {
                &m.receiver
            }
            _ => return e,
        }
    }
}

fn macro_args(m: &syn::Macro) -> Option<Punctuated<Expr, Token![,]>> {
    syn::parse::Parser::parse2(
        Punctuated::<Expr, Token![,]>::parse_terminated,
        m.tokens.clone(),
    )
    .ok()
}

fn macro_stmts(tokens: TokenStream) -> Option<Vec<syn::Stmt>> {
    syn::parse::Parser::parse2(syn::Block::parse_within, tokens).ok()
}

impl<'c> Scanner<'c> {
    fn collect_consts(&mut self, items: &[syn::Item], depth: usize) {
        if depth > 16 {
            return;
        }
        for item in items {
            match item {
                syn::Item::Const(c) => {
                    if let Some(v) = lit_str(&c.expr) {
                        self.consts.insert(c.ident.to_string(), v);
                    }
                }
                syn::Item::Static(c) => {
                    if let Some(v) = lit_str(&c.expr) {
                        self.consts.insert(c.ident.to_string(), v);
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        self.collect_consts(items, depth + 1);
                    }
                }
                _ => {}
            }
        }
    }

    fn items(&mut self, items: &[syn::Item], depth: usize) {
        if depth > 16 {
            return;
        }
        for item in items {
            match item {
                syn::Item::Fn(f) => self.function(&f.attrs, &f.sig, &f.block),
                syn::Item::Impl(i) => {
                    for it in &i.items {
                        if let syn::ImplItem::Fn(f) = it {
                            self.function(&f.attrs, &f.sig, &f.block);
                        }
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        self.items(items, depth + 1);
                    }
                }
                _ => {}
            }
        }
    }

    fn function(&mut self, attrs: &[syn::Attribute], sig: &syn::Signature, block: &syn::Block) {
        if self.owner.is_some() {
            return;
        }
        let kind = if is_test_fn(attrs) {
            self.out.tests.push(TestScope::default());
            OwnerKind::Test(self.out.tests.len() - 1)
        } else {
            self.out.helpers.push(Helper {
                name: sig.ident.to_string(),
                ..Default::default()
            });
            OwnerKind::Helper(self.out.helpers.len() - 1)
        };
        let params: Vec<&syn::Pat> = sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                syn::FnArg::Typed(t) => Some(&*t.pat),
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        self.enter(kind, &params, |s| s.block(block));
    }

    /// Runs `body` as the owner `kind` with these parameters bound.
    fn enter(&mut self, kind: OwnerKind, params: &[&syn::Pat], body: impl FnOnce(&mut Self)) {
        let saved = (
            self.owner.replace(kind),
            std::mem::take(&mut self.vars),
            std::mem::take(&mut self.regions),
            std::mem::take(&mut self.marks),
            std::mem::take(&mut self.together),
            std::mem::take(&mut self.bound),
            std::mem::take(&mut self.joins),
        );
        // A closure helper still sees the test's variables, as constants of its own.
        for v in &saved.1 {
            self.vars.push(Var {
                name: v.name.clone(),
                id: v.id,
                regions: 0,
                lit: v.lit.clone(),
                param: None,
                outer: true,
                url: v.url.clone(),
            });
        }
        for (i, p) in params.iter().enumerate() {
            let mut names = Vec::new();
            crate::frontend::rust::parse::pat_names(p, &mut names, 0);
            for name in names {
                let id = self.fresh_id();
                self.vars.push(Var {
                    name,
                    id,
                    regions: 0,
                    lit: None,
                    param: Some(i),
                    outer: false,
                    url: None,
                });
            }
        }
        body(self);
        self.finish(kind);
        self.owner = saved.0;
        self.vars = saved.1;
        self.regions = saved.2;
        self.marks = saved.3;
        self.together = saved.4;
        self.bound = saved.5;
        self.joins = saved.6;
    }

    fn fresh_id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }

    /// Requests bound with `let` and then awaited in one `join!`.
    fn finish(&mut self, kind: OwnerKind) {
        for (id, names) in &self.joins {
            for (name, is_call, i) in &self.bound {
                if !names.contains(name) {
                    continue;
                }
                if let Some(t) = self.out.together(kind, *is_call, *i) {
                    t.get_or_insert(*id);
                }
            }
        }
    }

    fn block(&mut self, b: &syn::Block) {
        self.stmts(&b.stmts);
    }

    fn stmts(&mut self, stmts: &[syn::Stmt]) {
        let scope = self.vars.len();
        for s in stmts {
            match s {
                syn::Stmt::Local(l) => self.local(l),
                syn::Stmt::Item(i) => {
                    if let syn::Item::Const(c) = i
                        && let Some(v) = lit_str(&c.expr)
                    {
                        self.consts.insert(c.ident.to_string(), v);
                    }
                }
                syn::Stmt::Expr(e, _) => self.expr(e, true),
                syn::Stmt::Macro(m) => self.mac(&m.mac),
            }
        }
        self.vars.truncate(scope);
    }

    fn local(&mut self, l: &syn::Local) {
        let mut names = Vec::new();
        crate::frontend::rust::parse::pat_names(&l.pat, &mut names, 0);
        let init = l.init.as_ref().map(|i| &*i.expr);
        // `let send = |key: &str| client.post(..).header(K, key)`: a helper of this test.
        if let (Some(Expr::Closure(c)), [name], Some(OwnerKind::Test(t))) =
            (init, names.as_slice(), self.owner)
        {
            self.out.helpers.push(Helper {
                name: name.clone(),
                test: Some(t),
                ..Default::default()
            });
            let h = self.out.helpers.len() - 1;
            let params: Vec<&syn::Pat> = c.inputs.iter().collect();
            let body = &c.body;
            self.enter(OwnerKind::Helper(h), &params, |s| s.expr(body, true));
            return;
        }
        if let Some(init) = init {
            let before = self.counts();
            self.expr(init, true);
            if let ([name], Some(made)) = (names.as_slice(), self.made_since(before)) {
                self.bound.push((name.clone(), made.0, made.1));
            }
        }
        if let Some(d) = l.init.as_ref().and_then(|i| i.diverge.as_ref()) {
            self.expr(&d.1, true);
        }
        let lit = init.map(strip).and_then(lit_str);
        let url = init.and_then(|i| self.url_text(i, 0));
        for name in names {
            let id = self.fresh_id();
            let regions = self.regions.len();
            self.vars.push(Var {
                name,
                id,
                regions,
                lit: lit.clone(),
                param: None,
                outer: false,
                url: url.clone(),
            });
        }
    }

    fn counts(&self) -> (usize, usize) {
        match self.owner {
            Some(OwnerKind::Test(t)) => {
                (self.out.tests[t].sends.len(), self.out.tests[t].calls.len())
            }
            Some(OwnerKind::Helper(h)) => (self.out.helpers[h].sends.len(), 0),
            None => (0, 0),
        }
    }

    /// The first send (or helper call) recorded since `before`: what a `let` binds.
    fn made_since(&self, before: (usize, usize)) -> Option<(bool, usize)> {
        let now = self.counts();
        if now.0 > before.0 {
            Some((false, before.0))
        } else if now.1 > before.1 {
            Some((true, before.1))
        } else {
            None
        }
    }

    fn exprs<'e>(&mut self, es: impl IntoIterator<Item = &'e Expr>) {
        for e in es {
            self.expr(e, true);
        }
    }

    /// Walks an expression; `top` says it is not the receiver of a method call (so a chain
    /// starting here is complete).
    fn expr(&mut self, e: &Expr, top: bool) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        if self.owner.is_some() {
            let sent = top
                && matches!(strip(e), Expr::MethodCall(_) | Expr::Call(_))
                && self.send(e).map(|s| self.record_send(s)).is_some();
            if !sent && let Some(call) = self.helper_call(e) {
                self.record_call(call);
            }
        }
        match e {
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                self.expr(&m.receiver, false);
                self.call_args(&name, &m.args);
            }
            Expr::Call(c) => {
                let name = match &*c.func {
                    Expr::Path(p) => last_seg(&p.path),
                    other => {
                        self.expr(other, true);
                        String::new()
                    }
                };
                self.call_args(&name, &c.args);
            }
            Expr::Macro(m) => self.mac(&m.mac),
            Expr::Closure(c) => self.expr(&c.body, true),
            Expr::Block(b) => self.block(&b.block),
            Expr::Unsafe(b) => self.block(&b.block),
            Expr::Async(b) => self.block(&b.block),
            Expr::TryBlock(b) => self.block(&b.block),
            Expr::Loop(l) => self.region(false, None, |s| s.block(&l.body)),
            Expr::While(w) => {
                self.expr(&w.cond, true);
                self.region(false, None, |s| s.block(&w.body));
            }
            Expr::ForLoop(f) => {
                self.expr(&f.expr, true);
                self.region(false, Some(&f.pat), |s| s.block(&f.body));
            }
            Expr::If(i) => {
                self.expr(&i.cond, true);
                self.block(&i.then_branch);
                if let Some((_, e)) = &i.else_branch {
                    self.expr(e, true);
                }
            }
            Expr::Match(m) => {
                self.expr(&m.expr, true);
                for arm in &m.arms {
                    self.expr(&arm.body, true);
                }
            }
            Expr::Let(l) => self.expr(&l.expr, true),
            // The chain through these was read above, at this level.
            Expr::Await(a) => self.expr(&a.base, false),
            Expr::Try(t) => self.expr(&t.expr, false),
            Expr::Paren(p) => self.expr(&p.expr, false),
            Expr::Group(g) => self.expr(&g.expr, false),
            Expr::Reference(r) => self.expr(&r.expr, false),
            Expr::Cast(c) => self.expr(&c.expr, false),
            Expr::Unary(u) => self.expr(&u.expr, true),
            Expr::Array(a) => self.exprs(&a.elems),
            Expr::Tuple(t) => self.exprs(&t.elems),
            Expr::Struct(s) => self.exprs(s.fields.iter().map(|f| &f.expr)),
            Expr::Assign(a) => {
                self.expr(&a.left, true);
                self.expr(&a.right, true);
            }
            Expr::Binary(b) => {
                self.expr(&b.left, true);
                self.expr(&b.right, true);
            }
            Expr::Index(i) => {
                self.expr(&i.expr, true);
                self.expr(&i.index, true);
            }
            Expr::Return(r) => self.exprs(r.expr.iter().map(|e| &**e)),
            Expr::Field(f) => self.expr(&f.base, true),
            _ => {}
        }
        self.depth -= 1;
    }

    /// A call's arguments: a `.map` closure repeats at once, a `join` groups, a `spawn` or `push`
    /// defers.
    fn call_args<'e>(&mut self, name: &str, args: impl IntoIterator<Item = &'e Expr>) {
        let args: Vec<&Expr> = args.into_iter().collect();
        if JOINS.contains(&name) {
            self.join(|s| s.exprs(args.iter().copied()), &args);
            return;
        }
        let mark = matches!(name, "spawn" | "push" | "push_back" | "spawn_local");
        if mark {
            self.marks.push(self.regions.len());
        }
        for a in args {
            match a {
                Expr::Closure(c)
                    if matches!(
                        name,
                        "map" | "for_each" | "flat_map" | "then" | "filter_map"
                    ) =>
                {
                    let params: Vec<&syn::Pat> = c.inputs.iter().collect();
                    self.region(true, None, |s| {
                        s.bind_pats(&params);
                        s.expr(&c.body, true);
                    });
                }
                other => self.expr(other, true),
            }
        }
        if mark {
            self.marks.pop();
        }
    }

    fn join(&mut self, walk: impl FnOnce(&mut Self), args: &[&Expr]) {
        let id = self.fresh_id();
        let mut names = Vec::new();
        for a in args {
            idents(a, &mut names, 0);
        }
        self.joins.push((id, names));
        self.together.push(id);
        walk(self);
        self.together.pop();
    }

    fn bind_pats(&mut self, pats: &[&syn::Pat]) {
        for p in pats {
            let mut names = Vec::new();
            crate::frontend::rust::parse::pat_names(p, &mut names, 0);
            for name in names {
                let id = self.fresh_id();
                let regions = self.regions.len();
                self.vars.push(Var {
                    name,
                    id,
                    regions,
                    lit: None,
                    param: None,
                    outer: false,
                    url: None,
                });
            }
        }
    }

    fn region(&mut self, concurrent: bool, pat: Option<&syn::Pat>, body: impl FnOnce(&mut Self)) {
        self.regions.push(concurrent);
        let scope = self.vars.len();
        if let Some(p) = pat {
            self.bind_pats(&[p]);
        }
        body(self);
        self.vars.truncate(scope);
        self.regions.pop();
    }

    fn mac(&mut self, m: &syn::Macro) {
        let name = last_seg(&m.path);
        if let Some(args) = macro_args(m) {
            let args: Vec<&Expr> = args.iter().collect();
            if JOINS.contains(&name.as_str()) {
                self.join(|s| s.exprs(args.iter().copied()), &args);
            } else {
                self.exprs(args.iter().copied());
            }
        } else if let Some(stmts) = macro_stmts(m.tokens.clone()) {
            self.stmts(&stmts);
        }
    }

    fn record_send(&mut self, mut send: Send) {
        send.together = self.together.last().copied();
        match self.owner {
            Some(OwnerKind::Test(t)) => self.out.tests[t].sends.push(send),
            Some(OwnerKind::Helper(h)) => self.out.helpers[h].sends.push(send),
            None => {}
        }
    }

    fn record_call(&mut self, mut call: HelperCall) {
        call.together = self.together.last().copied();
        if let Some(OwnerKind::Test(t)) = self.owner {
            self.out.tests[t].calls.push(call);
        }
    }

    /// How often code here runs with a key bound with `regions` regions open (`None`: a fresh key).
    fn repeat(&self, bound_at: Option<usize>) -> Repeat {
        let Some(bound_at) = bound_at else {
            return Repeat::Once;
        };
        let mut repeat = Repeat::Once;
        for (j, concurrent) in self.regions.iter().enumerate().rev() {
            if bound_at > j {
                break;
            }
            let spawned = self.marks.iter().any(|m| *m > j);
            repeat = repeat.max(if *concurrent || spawned {
                Repeat::Concurrent
            } else {
                Repeat::Sequential
            });
        }
        repeat
    }

    /// A method chain that builds or sends a request with a key header.
    fn send(&mut self, e: &Expr) -> Option<Send> {
        let links = links(e);
        let mut method: Option<String> = None;
        let mut url: Option<UrlSpec> = None;
        let mut key: Option<(Key, usize)> = None;
        for (name, args) in &links {
            let lower = name.to_ascii_lowercase();
            if HTTP_METHODS.contains(&lower.as_str()) && method.is_none() && args.len() <= 1 {
                method = Some(lower.to_ascii_uppercase());
                if let Some(a) = args.first() {
                    url = Some(self.url_of(a));
                }
            } else if lower == "method" && args.len() == 1 {
                method = method_name(args[0]);
            } else if lower == "request" && args.len() == 2 {
                method = method_name(args[0]);
                url = Some(self.url_of(args[1]));
            } else if matches!(lower.as_str(), "uri" | "url") && args.len() == 1 {
                url = Some(self.url_of(args[0]));
            } else if matches!(
                lower.as_str(),
                "header" | "add_header" | "append_header" | "insert_header"
            ) {
                let pair: Vec<&Expr> = match args.as_slice() {
                    [Expr::Tuple(t)] => t.elems.iter().collect(),
                    other => other.to_vec(),
                };
                if let [h, v] = pair.as_slice()
                    && self.is_key_header(h)
                {
                    key = Some(self.key_of(v, 0));
                }
            }
        }
        let (method, url, (key, bound_at)) = (method?, url?, key?);
        let repeat = if key == Key::Fresh {
            Repeat::Once
        } else {
            self.repeat(Some(bound_at))
        };
        Some(Send {
            method,
            url,
            key,
            line: line_of(e),
            repeat,
            together: None,
        })
    }

    fn is_key_header(&self, e: &Expr) -> bool {
        let e = strip(e);
        if let Some(s) = lit_str(e) {
            return self.catalog.is_key_header(&s);
        }
        match e {
            Expr::Path(p) => {
                let name = last_seg(&p.path);
                match self.consts.get(&name) {
                    Some(v) => self.catalog.is_key_header(v),
                    None => name.to_ascii_lowercase().contains("idempoten"),
                }
            }
            // `HeaderName::from_static("idempotency-key")`
            Expr::Call(c) => c.args.iter().any(|a| self.is_key_header(a)),
            Expr::MethodCall(m) => self.is_key_header(&m.receiver),
            _ => false,
        }
    }

    fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().rev().find(|v| v.name == name)
    }

    /// What a key expression is, and how many regions were open where its variables were bound
    /// (0 for constants).
    fn key_of(&self, e: &Expr, depth: usize) -> (Key, usize) {
        if depth > 16 {
            return (Key::Fresh, 0);
        }
        let e = strip(e);
        if let Some(s) = lit_str(e) {
            return (Key::Const(format!("{s:?}")), 0);
        }
        match e {
            Expr::Path(p) if p.path.segments.len() == 1 => {
                let name = last_seg(&p.path);
                match self.var(&name) {
                    Some(v) => {
                        if let Some(l) = &v.lit {
                            (Key::Const(format!("{l:?}")), 0)
                        } else if let (Some(i), Some(OwnerKind::Helper(_))) = (v.param, self.owner)
                        {
                            (Key::Param(i), 0)
                        } else if v.outer {
                            (Key::Const(format!("{name}@{}", v.id)), 0)
                        } else {
                            (Key::Local(format!("{name}@{}", v.id)), v.regions)
                        }
                    }
                    None => (
                        Key::Const(self.consts.get(&name).cloned().unwrap_or(name)),
                        0,
                    ),
                }
            }
            Expr::Path(p) => (
                Key::Const(
                    p.path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect::<Vec<_>>()
                        .join("::"),
                ),
                0,
            ),
            Expr::Field(f) => {
                let (k, r) = self.key_of(&f.base, depth + 1);
                let member = match &f.member {
                    syn::Member::Named(i) => i.to_string(),
                    syn::Member::Unnamed(i) => i.index.to_string(),
                };
                (suffix(k, &member), r)
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                if super::is_generator(&name) {
                    return (Key::Fresh, 0);
                }
                let parts: Vec<&Expr> =
                    std::iter::once(&*m.receiver).chain(m.args.iter()).collect();
                let (k, r) = self.combine(&parts, depth);
                (suffix(k, &name), r)
            }
            Expr::Call(c) => {
                let name = match &*c.func {
                    Expr::Path(p) => last_seg(&p.path),
                    _ => return (Key::Fresh, 0),
                };
                let first = match &*c.func {
                    Expr::Path(p) => p
                        .path
                        .segments
                        .first()
                        .map(|s| s.ident.to_string())
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                let fresh_type =
                    matches!(first.as_str(), "Uuid" | "Ulid" | "uuid" | "ulid" | "rand");
                if super::is_generator(&name) || c.args.is_empty() || fresh_type && name == "new" {
                    return (Key::Fresh, 0);
                }
                let parts: Vec<&Expr> = c.args.iter().collect();
                self.combine(&parts, depth)
            }
            Expr::Macro(m) => {
                let name = last_seg(&m.mac.path);
                if super::is_generator(&name) {
                    return (Key::Fresh, 0);
                }
                match macro_args(&m.mac) {
                    Some(args) if !args.is_empty() => {
                        let parts: Vec<&Expr> = args.iter().collect();
                        let (k, r) = self.combine(&parts, depth);
                        (suffix(k, &name), r)
                    }
                    _ => (Key::Fresh, 0),
                }
            }
            _ => (Key::Fresh, 0),
        }
    }

    fn combine(&self, parts: &[&Expr], depth: usize) -> (Key, usize) {
        let mut regions = 0;
        let mut keys = Vec::with_capacity(parts.len());
        for p in parts {
            let (k, r) = self.key_of(p, depth + 1);
            regions = regions.max(r);
            if k == Key::Fresh {
                return (Key::Fresh, 0);
            }
            keys.push(k);
        }
        (Key::combine(keys), regions)
    }

    fn url_of(&self, e: &Expr) -> UrlSpec {
        let e = strip(e);
        if let Expr::Path(p) = e
            && p.path.segments.len() == 1
            && let Some(v) = self.var(&last_seg(&p.path))
            && v.lit.is_none()
            && let (Some(i), Some(OwnerKind::Helper(_))) = (v.param, self.owner)
        {
            return UrlSpec::Param(i);
        }
        let text = self.url_text(e, 0).unwrap_or_else(|| HOLE.to_string());
        UrlSpec::Known(super::parse_url(&text, HOLE))
    }

    /// A URL's text with holes where it has expressions, if it is a literal, a constant, a
    /// `format!` or a variable bound to one of these.
    fn url_text(&self, e: &Expr, depth: usize) -> Option<String> {
        let e = strip(e);
        if depth > 8 {
            return None;
        }
        if let Some(s) = lit_str(e) {
            return Some(s);
        }
        match e {
            Expr::Path(p) if p.path.segments.len() == 1 => {
                let name = last_seg(&p.path);
                match self.var(&name) {
                    Some(v) => v.lit.clone().or_else(|| v.url.clone()),
                    None => self.consts.get(&name).cloned(),
                }
            }
            Expr::Macro(m) if last_seg(&m.mac.path) == "format" => {
                let args = macro_args(&m.mac)?;
                let fmt = args.first().and_then(lit_str)?;
                Some(format_holes(&fmt))
            }
            _ => None,
        }
    }

    fn helper_call(&self, e: &Expr) -> Option<HelperCall> {
        let (name, args): (String, Vec<&Expr>) = match e {
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => (last_seg(&p.path), c.args.iter().collect()),
                _ => return None,
            },
            // `app.post_order(&key)`: a method of a test harness, on a variable.
            Expr::MethodCall(m) if matches!(strip(&m.receiver), Expr::Path(_)) => {
                (m.method.to_string(), m.args.iter().collect())
            }
            _ => return None,
        };
        let innermost = self.regions.len();
        let args = args
            .into_iter()
            .map(|a| {
                let (key, bound) = self.key_of(a, 0);
                let url = match self.url_of(a) {
                    UrlSpec::Known(u) if u.path.is_some() => Some(u),
                    _ => None,
                };
                Arg {
                    key,
                    url,
                    varies: innermost > 0 && bound >= innermost,
                }
            })
            .collect();
        Some(HelperCall {
            name,
            args,
            line: line_of(e),
            repeat: self.repeat(Some(0)),
            together: None,
        })
    }
}

/// `format!` text with its placeholders as holes (`"{}/orders/{id}"` → `␀/orders/␀`).
fn format_holes(fmt: &str) -> String {
    use crate::frontend::rust::consts::{Piece, format_pieces};
    format_pieces(fmt)
        .into_iter()
        .map(|p| match p {
            Piece::Text(t) => t,
            Piece::Hole(_) => HOLE.to_string(),
        })
        .collect()
}

/// `Method::POST`, `"POST"`, `http::Method::PUT` → `POST`.
fn method_name(e: &Expr) -> Option<String> {
    let e = strip(e);
    if let Some(s) = lit_str(e) {
        return Some(s.to_ascii_uppercase());
    }
    match e {
        Expr::Path(p) => {
            let m = last_seg(&p.path).to_ascii_uppercase();
            HTTP_METHODS
                .contains(&m.to_ascii_lowercase().as_str())
                .then_some(m)
        }
        _ => None,
    }
}

/// The calls of a chain, outermost last: (name, arguments).
fn links(e: &Expr) -> Vec<(String, Vec<&Expr>)> {
    let mut out = Vec::new();
    let mut cur = e;
    while out.len() < 64 {
        match cur {
            Expr::MethodCall(m) => {
                out.push((m.method.to_string(), m.args.iter().collect()));
                cur = &m.receiver;
            }
            Expr::Call(c) => {
                if let Expr::Path(p) = &*c.func {
                    out.push((last_seg(&p.path), c.args.iter().collect()));
                }
                break;
            }
            Expr::Await(a) => cur = &a.base,
            Expr::Try(t) => cur = &t.expr,
            Expr::Paren(p) => cur = &p.expr,
            Expr::Reference(r) => cur = &r.expr,
            Expr::Group(g) => cur = &g.expr,
            _ => break,
        }
    }
    out.reverse();
    out
}

fn suffix(k: Key, what: &str) -> Key {
    match k {
        Key::Const(s) => Key::Const(format!("{s}.{what}")),
        Key::Local(s) => Key::Local(format!("{s}.{what}")),
        k => k,
    }
}

/// Single-segment paths (variables) in an expression.
fn idents(e: &Expr, out: &mut Vec<String>, depth: usize) {
    if depth > 24 {
        return;
    }
    match e {
        Expr::Path(p) if p.path.segments.len() == 1 => out.push(last_seg(&p.path)),
        Expr::MethodCall(m) => {
            idents(&m.receiver, out, depth + 1);
            m.args.iter().for_each(|a| idents(a, out, depth + 1));
        }
        Expr::Call(c) => c.args.iter().for_each(|a| idents(a, out, depth + 1)),
        Expr::Await(a) => idents(&a.base, out, depth + 1),
        Expr::Try(t) => idents(&t.expr, out, depth + 1),
        Expr::Reference(r) => idents(&r.expr, out, depth + 1),
        Expr::Paren(p) => idents(&p.expr, out, depth + 1),
        Expr::Array(a) => a.elems.iter().for_each(|x| idents(x, out, depth + 1)),
        Expr::Tuple(t) => t.elems.iter().for_each(|x| idents(x, out, depth + 1)),
        Expr::Macro(m) => {
            if let Some(args) = macro_args(&m.mac) {
                args.iter().for_each(|a| idents(a, out, depth + 1));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeated(src: &str) -> Vec<(String, Option<String>, bool, bool, u32)> {
        let catalog = Catalog::builtin().unwrap();
        super::super::repeating(super::super::resolve(&[scan(
            "tests/api.rs",
            src,
            &catalog,
        )]))
    }

    #[test]
    fn axum_oneshot_twice_through_a_helper() {
        let got = repeated(
            r#"
fn pay(id: u64, key: &str) -> Request<Body> {
    Request::builder()
        .method(Method::POST)
        .uri(format!("/api/v1/orders/{id}/pay"))
        .header("Idempotency-Key", key)
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn replays_the_payment() {
    let app = app();
    let key = Uuid::new_v4().to_string();
    let first = app.clone().oneshot(pay(7, &key)).await.unwrap();
    let second = app.clone().oneshot(pay(7, &key)).await.unwrap();
    assert_eq!(first.status(), second.status());
}

#[tokio::test]
async fn two_payments() {
    let a = app().oneshot(pay(7, &Uuid::new_v4().to_string())).await.unwrap();
    let b = app().oneshot(pay(7, &Uuid::new_v4().to_string())).await.unwrap();
}
"#,
        );
        assert_eq!(
            got,
            vec![(
                "POST".into(),
                Some("/api/v1/orders/{}/pay".into()),
                true,
                false,
                15
            )]
        );
    }

    #[test]
    fn reqwest_join_and_actix_loop() {
        let got = repeated(
            r#"
const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

#[tokio::test]
async fn concurrent_charges() {
    let client = reqwest::Client::new();
    let (a, b) = tokio::join!(
        client.post(format!("{}/charges", addr)).header(IDEMPOTENCY_KEY, "k1").send(),
        client.post(format!("{}/charges", addr)).header(IDEMPOTENCY_KEY, "k1").send(),
    );
}

#[actix_web::test]
async fn retried_refund() {
    let app = test::init_service(App::new().configure(config)).await;
    let key = "refund-1";
    for _ in 0..2 {
        let req = test::TestRequest::post()
            .uri("/refunds")
            .insert_header(("Idempotency-Key", key))
            .to_request();
        let resp = test::call_service(&app, req).await;
    }
}
"#,
        );
        assert_eq!(
            got,
            vec![
                ("POST".into(), Some("/charges".into()), false, true, 8),
                ("POST".into(), Some("/refunds".into()), true, false, 18),
            ]
        );
    }

    #[test]
    fn a_key_made_in_the_loop_is_not_repeated_and_routes_are_not_requests() {
        let got = repeated(
            r#"
fn app() -> Router {
    Router::new().route("/orders", post(create_order))
}

#[tokio::test]
async fn many_orders() {
    let server = TestServer::new(app()).unwrap();
    for _ in 0..3 {
        let key = Uuid::new_v4().to_string();
        server.post("/orders").add_header(HeaderName::from_static("idempotency-key"), HeaderValue::from_str(&key).unwrap()).await;
    }
}
"#,
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn axum_test_server_helper_method_on_a_harness() {
        let got = repeated(
            r#"
impl TestApp {
    pub async fn post_transfer(&self, key: &str) -> TestResponse {
        self.server
            .post("/transfers")
            .add_header(HeaderName::from_static("idempotency-key"), HeaderValue::from_str(key).unwrap())
            .await
    }
}

#[tokio::test]
async fn transfer_is_replayed() {
    let app = TestApp::spawn().await;
    let key = "t-1".to_string();
    let a = app.post_transfer(&key).await;
    let b = app.post_transfer(&key).await;
}
"#,
        );
        assert_eq!(
            got,
            vec![("POST".into(), Some("/transfers".into()), true, false, 15)]
        );
    }
}
