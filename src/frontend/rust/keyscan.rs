//! Reads the Rust code that handles an idempotency key, on the `syn` tree while its spans are
//! alive: functions that name an idempotency store or header (`IDEMPOTENCY_HEADER`,
//! `idempotency_keys`, `IdempotencySet`), and the methods of types named so.
//!
//! It records the operations on the key store (sqlx and diesel statements on the key table, Redis
//! commands with the key, a `HashSet`/`HashMap` behind a lock), the statuses answered and under
//! which condition, checks on the key, hashes, replays, logging, where the wrapped service runs,
//! and the context of every call (an `Err` arm, a 5xx branch), for the linker to follow.

use crate::facts::key::{
    Cond, Ctx, KeyCheck, Obs, OpKind, StoreBackend, StoreOp, dynamo_kind, words,
};
use crate::link::keystore::{is_key_target, sql_op};
use quote::ToTokens;
use std::collections::{HashMap, HashSet};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Pat, Stmt, Token};

/// One observation, its line and context.
#[derive(Debug, Clone)]
pub struct KeyRaw {
    pub obs: Obs,
    pub line: u32,
    pub ctx: Ctx,
}

/// A call in key code: what a callee's observations inherit when it is followed from here.
#[derive(Debug, Clone)]
pub struct KeyCallCtx {
    pub line: u32,
    pub name: String,
    pub ctx: Ctx,
    pub cond: Option<Cond>,
}

const MAX_DEPTH: usize = 120;

fn line(s: proc_macro2::Span) -> u32 {
    s.start().line as u32
}

pub fn has_idem(text: &str) -> bool {
    text.as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"idem"))
}

fn text<T: ToTokens>(t: &T) -> String {
    t.to_token_stream().to_string()
}

/// Whole identifiers of a token text (`user_id`, `request_hash`), lower-cased.
fn idents(t: &str) -> Vec<String> {
    let mut v: Vec<String> = t
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
        .map(|w| w.to_ascii_lowercase())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// A status path: `StatusCode::CONFLICT`, `http::StatusCode::BAD_REQUEST`, `Status::Conflict`,
/// `HttpResponse::Conflict`.
fn status_path(p: &syn::Path) -> Option<u16> {
    let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
    let last = segs.last()?;
    let owner = segs.iter().rev().nth(1).map(String::as_str).unwrap_or("");
    if matches!(
        owner,
        "StatusCode" | "Status" | "HttpResponse" | "HttpResponseBuilder"
    ) || (segs.len() == 1 && last.starts_with("Error"))
        || (owner == "error" && last.starts_with("Error"))
    {
        crate::facts::key::named_status(last)
    } else {
        None
    }
}

fn is_random(t: &str) -> bool {
    let w = words::split(t);
    w.iter().any(|x| {
        matches!(
            x.as_str(),
            "uuid" | "v4" | "v7" | "new_v4" | "nanoid" | "ulid" | "random" | "rand" | "thread_rng"
        )
    }) && (t.contains("new_v4")
        || t.contains("now_v7")
        || t.contains("random")
        || t.contains("nanoid")
        || t.contains("Ulid :: new")
        || t.contains("thread_rng"))
}

fn opposite(c: Cond) -> Option<Cond> {
    match c {
        Cond::KeyMissing => Some(Cond::KeyPresent),
        Cond::KeyPresent => Some(Cond::KeyMissing),
        _ => None,
    }
}

/// The method calls of a chain, outermost last, and its root (peeling `.await`, `?`, parens).
fn chain(e: &Expr) -> (Vec<&syn::ExprMethodCall>, &Expr) {
    let mut links = Vec::new();
    let mut cur = e;
    loop {
        match cur {
            Expr::MethodCall(m) => {
                links.push(m);
                cur = &m.receiver;
            }
            Expr::Await(a) => cur = &a.base,
            Expr::Try(t) => cur = &t.expr,
            Expr::Paren(p) => cur = &p.expr,
            Expr::Reference(r) => cur = &r.expr,
            Expr::Field(f) => cur = &f.base,
            _ => break,
        }
        if links.len() > 64 {
            break;
        }
    }
    links.reverse();
    (links, cur)
}

#[derive(Default)]
struct Scan {
    key_vars: HashSet<String>,
    found_vars: HashSet<String>,
    claim_vars: HashSet<String>,
    lock_vars: HashSet<String>,
    principal_vars: HashSet<String>,
    obj_vars: HashMap<String, Vec<String>>,
    ctx: Ctx,
    cond: Option<Cond>,
    in_compare: bool,
    in_cond: bool,
    depth: usize,
    /// Inside a method chain's receiver: the chain is classified once, at its outermost method.
    chain_depth: usize,
    out: Vec<KeyRaw>,
    calls: Vec<KeyCallCtx>,
}

/// Scans one function of key code.
pub fn scan(sig: &syn::Signature, block: &syn::Block) -> (Vec<KeyRaw>, Vec<KeyCallCtx>) {
    let mut s = Scan::default();
    for input in &sig.inputs {
        if let syn::FnArg::Typed(t) = input {
            let mut names = Vec::new();
            super::parse::pat_names(&t.pat, &mut names, 0);
            for n in names {
                if words::key_name(&n) {
                    s.key_vars.insert(n.clone());
                }
                if words::principal(&n).is_some() {
                    s.principal_vars.insert(n);
                }
            }
        }
    }
    s.block(&block.stmts);
    (s.out, s.calls)
}

impl Scan {
    fn seen(&mut self, obs: Obs, at: u32) {
        let ctx = self.effective_ctx();
        if !self
            .out
            .iter()
            .any(|o| o.obs == obs && o.line == at && o.ctx == ctx)
        {
            self.out.push(KeyRaw { obs, line: at, ctx });
        }
    }

    fn effective_ctx(&self) -> Ctx {
        if self.cond == Some(Cond::ServerError) && matches!(self.ctx, Ctx::Main | Ctx::AfterHandler)
        {
            Ctx::Failure
        } else {
            self.ctx
        }
    }

    fn status(&mut self, code: u16, at: u32) {
        let cond = self.cond;
        self.seen(Obs::Status { code, cond }, at);
    }

    fn under<F: FnOnce(&mut Self)>(&mut self, ctx: Option<Ctx>, cond: Option<Option<Cond>>, f: F) {
        let saved = (self.ctx, self.cond);
        if let Some(c) = ctx {
            self.ctx = c;
        }
        if let Some(c) = cond {
            self.cond = c;
        }
        f(self);
        self.ctx = saved.0;
        self.cond = saved.1;
    }

    /// Does the expression use the key (a key variable, or the header read itself)?
    fn mentions_key(&self, e: &Expr) -> bool {
        let t = text(e);
        if reads_header(e) {
            return true;
        }
        idents(&t)
            .iter()
            .any(|i| self.key_vars.iter().any(|k| k.to_ascii_lowercase() == *i))
    }

    fn is_key_var(&self, e: &Expr) -> bool {
        matches!(strip(e), Expr::Path(p) if self.key_vars.contains(&text(p)))
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            match s {
                Stmt::Local(l) => {
                    let Some(init) = &l.init else { continue };
                    self.expr(&init.expr);
                    self.bind(&l.pat, &init.expr);
                    if let Some((_, diverge)) = &init.diverge {
                        // `let Some(key) = … else { return 400 }`
                        let cond = if reads_header(&init.expr) || self.is_key_var(&init.expr) {
                            Some(Cond::KeyMissing)
                        } else {
                            self.cond
                        };
                        self.under(None, Some(cond), |s| s.expr(diverge));
                    }
                }
                Stmt::Expr(e, _) => self.expr(e),
                Stmt::Macro(m) => self.mac(&m.mac),
                Stmt::Item(_) => {}
            }
        }
    }

    /// What a `let` binds: the key, a lookup, a claim's result, a lock guard, a record, the caller.
    fn bind(&mut self, pat: &Pat, init: &Expr) {
        let mut names = Vec::new();
        super::parse::pat_names(pat, &mut names, 0);
        let t = text(init);
        if let Expr::Struct(st) = strip(init) {
            let fields: Vec<String> = st
                .fields
                .iter()
                .map(|f| text(&f.member).to_ascii_lowercase())
                .chain(idents(&text(st)))
                .collect();
            for n in &names {
                self.obj_vars.insert(n.clone(), fields.clone());
            }
        }
        let (links, root) = chain(init);
        let mut methods: Vec<String> = links.iter().map(|m| m.method.to_string()).collect();
        // `store::find(&db, user, key).await`: the called function's name says what it returns.
        if methods
            .iter()
            .all(|m| matches!(m.as_str(), "await" | "unwrap" | "expect" | "ok" | "cloned"))
            && let Expr::Call(c) = root
            && let Expr::Path(p) = &*c.func
            && let Some(f) = p.path.segments.last()
        {
            let f = f.ident.to_string();
            let kind = if ["find", "get", "fetch", "load", "lookup", "read", "select"]
                .iter()
                .any(|x| f.starts_with(x))
            {
                Some("get")
            } else if ["claim", "insert", "acquire", "try_claim", "lock", "reserve"]
                .iter()
                .any(|x| f.starts_with(x))
            {
                Some("insert")
            } else {
                None
            };
            if let Some(k) = kind {
                methods = vec![k.to_string()];
            }
        }
        if methods.iter().any(|m| {
            matches!(
                m.as_str(),
                "read" | "write" | "lock" | "borrow_mut" | "borrow"
            )
        }) && !matches!(
            methods.last().map(String::as_str),
            Some("contains" | "contains_key" | "get" | "insert" | "remove")
        ) {
            for n in &names {
                self.lock_vars.insert(n.clone());
            }
            return;
        }
        // Only a value built from the key (a copy, a string, the header's value) is the key; a
        // call that merely takes it (`store::release(db, user, key)`) is not.
        let builds_key = match strip(init) {
            Expr::Path(_) | Expr::Field(_) | Expr::Binary(_) | Expr::Macro(_) => true,
            Expr::MethodCall(_) => links.iter().all(|m| {
                let n = m.method.to_string();
                !n.contains("find")
                    && !n.contains("claim")
                    && !n.contains("release")
                    && !n.contains("complete")
            }),
            // `build_storage_key(&user.id, &key)`: a helper named for building the key.
            Expr::Call(c) => {
                reads_header(init)
                    || matches!(&*c.func, Expr::Path(p)
                        if p.path.segments.last().is_some_and(|s| words::builds_key(&s.ident.to_string())))
            }
            _ => reads_header(init),
        };
        if self.mentions_key(init) && (builds_key || !methods.is_empty()) {
            let last = methods.last().map(String::as_str).unwrap_or("");
            let lookup = matches!(
                last,
                "fetch_optional"
                    | "fetch_one"
                    | "get"
                    | "first"
                    | "get_result"
                    | "optional"
                    | "query_async"
                    | "contains"
                    | "contains_key"
            ) && !reads_header(init);
            if lookup {
                for n in names {
                    self.found_vars.insert(n);
                }
                return;
            }
            if matches!(last, "insert" | "set_nx" | "execute" | "rows_affected") {
                for n in names {
                    self.claim_vars.insert(n);
                }
                return;
            }
            if !builds_key {
                return;
            }
            for n in &names {
                self.key_vars.insert(n.clone());
            }
            if !reads_header(init)
                && let Some(who) = words::principal(&t).or_else(|| {
                    idents(&t).into_iter().find(|i| {
                        self.principal_vars
                            .iter()
                            .any(|p| p.to_ascii_lowercase() == *i)
                    })
                })
            {
                self.seen(Obs::Scoped(who), line(init.span()));
            }
            return;
        }
        if names.len() == 1
            && (words::principal(&t).is_some() || words::principal(&names[0]).is_some())
        {
            self.principal_vars.insert(names[0].clone());
        }
        let last = methods.last().map(String::as_str).unwrap_or("");
        if matches!(
            last,
            "fetch_optional" | "fetch_one" | "first" | "optional" | "get_result" | "get" | "load"
        ) {
            for n in names {
                self.found_vars.insert(n);
            }
        } else if matches!(last, "execute" | "insert" | "set_nx") {
            for n in names {
                self.claim_vars.insert(n);
            }
        }
    }

    fn mac(&mut self, m: &syn::Macro) {
        let at = line(m.path.span());
        let name = m
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let tokens = m.tokens.to_string();
        if matches!(
            name.as_str(),
            "info" | "debug" | "warn" | "error" | "trace" | "println" | "eprintln" | "event"
        ) && idents(&tokens)
            .iter()
            .any(|i| words::response(i) && !i.starts_with("req"))
        {
            self.seen(Obs::LogsResponse, at);
        }
        if name == "defer" {
            let ctx = Ctx::Finally;
            self.under(Some(ctx), None, |s| s.tokens(&m.tokens));
            return;
        }
        if name.starts_with("query") || name == "sql" {
            // In a chain (`query!(…).execute(db)`), the chain's end classifies it.
            if self.chain_depth == 0
                && let Some(sql) = first_str(&m.tokens)
                && let Some(op) = sql_op(&sql, false)
            {
                self.seen(Obs::Op(op), at);
            }
            return;
        }
        if matches!(name.as_str(), "format" | "vec" | "json") {
            let parsed = syn::parse::Parser::parse2(
                Punctuated::<Expr, Token![,]>::parse_terminated,
                m.tokens.clone(),
            );
            if let Ok(es) = parsed {
                let has_key = es.iter().any(|e| self.mentions_key(e))
                    || self
                        .key_vars
                        .iter()
                        .any(|k| tokens.contains(&format!("{{{k}}}")));
                if has_key
                    && name == "format"
                    && let Some(who) = words::principal(&tokens).or_else(|| {
                        idents(&tokens).into_iter().find(|i| {
                            self.principal_vars
                                .iter()
                                .any(|p| p.to_ascii_lowercase() == *i)
                        })
                    })
                {
                    self.seen(Obs::Scoped(who), at);
                }
                for e in &es {
                    self.expr(e);
                }
            }
            return;
        }
        self.tokens(&m.tokens);
    }

    /// Expressions inside macro tokens.
    fn tokens(&mut self, tokens: &proc_macro2::TokenStream) {
        if let Ok(es) = syn::parse::Parser::parse2(
            Punctuated::<Expr, Token![,]>::parse_terminated,
            tokens.clone(),
        ) {
            for e in &es {
                self.expr(e);
            }
        } else if let Ok(stmts) =
            syn::parse::Parser::parse2(syn::Block::parse_within, tokens.clone())
        {
            self.block(&stmts);
        }
    }

    fn expr(&mut self, e: &Expr) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.expr_inner(e);
        self.depth -= 1;
    }

    fn expr_inner(&mut self, e: &Expr) {
        match e {
            Expr::If(i) => {
                let (then_c, else_c) = self.condition(&i.cond);
                if then_c == Some(Cond::KeyPresent) {
                    self.seen(Obs::KeyMissingProceeds, line(i.if_token.span));
                }
                let then_c = then_c.or(self.cond);
                self.under(None, Some(then_c), |s| s.block(&i.then_branch.stmts));
                if let Some((_, els)) = &i.else_branch {
                    let else_c = else_c.or(self.cond);
                    self.under(None, Some(else_c), |s| s.expr(els));
                }
            }
            Expr::Match(m) => {
                self.expr(&m.expr);
                let on_key = self.mentions_key(&m.expr);
                for arm in &m.arms {
                    let pat = text(&arm.pat);
                    let (ctx, cond) = if pat.starts_with("Err") {
                        (Some(Ctx::Failure), None)
                    } else if on_key && pat == "None" {
                        (None, Some(Some(Cond::KeyMissing)))
                    } else if on_key && pat.starts_with("Some") {
                        let mut names = Vec::new();
                        super::parse::pat_names(&arm.pat, &mut names, 0);
                        self.key_vars.extend(names);
                        (None, Some(Some(Cond::KeyPresent)))
                    } else {
                        (None, None)
                    };
                    self.under(ctx, cond, |s| s.expr(&arm.body));
                }
            }
            Expr::Binary(b) => {
                use syn::BinOp::*;
                match b.op {
                    Eq(_) | Ne(_) | Lt(_) | Le(_) | Gt(_) | Ge(_) => {
                        self.compare(b);
                        let saved = self.in_compare;
                        self.in_compare = true;
                        self.expr(&b.left);
                        self.expr(&b.right);
                        self.in_compare = saved;
                    }
                    _ => {
                        self.expr(&b.left);
                        self.expr(&b.right);
                    }
                }
            }
            Expr::MethodCall(m) => self.method(e, m),
            Expr::Call(c) => {
                let at = line(c.func.span());
                if let Expr::Path(p) = &*c.func {
                    let pt = text(p).to_ascii_lowercase();
                    if pt.contains("sha256")
                        || pt.contains("digest")
                        || pt.contains("fingerprint")
                        || pt.ends_with("hash")
                    {
                        self.seen(Obs::HashComputed, at);
                    }
                    if let Some(code) = status_path(&p.path) {
                        self.status(code, at);
                    }
                    let name = p
                        .path
                        .segments
                        .last()
                        .map(|s| s.ident.to_string())
                        .unwrap_or_default();
                    if name == "from_u16"
                        && let Some(Expr::Lit(l)) = c.args.first()
                        && let syn::Lit::Int(n) = &l.lit
                        && let Ok(code) = n.base10_parse::<u16>()
                        && (400..600).contains(&code)
                    {
                        self.status(code, at);
                    }
                    self.call_ctx(at, &name);
                    self.classify_chain(e);
                }
                self.expr(&c.func);
                for a in &c.args {
                    self.expr(a);
                }
            }
            Expr::Macro(m) => self.mac(&m.mac),
            Expr::Closure(c) => self.expr(&c.body),
            Expr::Async(a) => self.block(&a.block.stmts),
            Expr::Block(b) => self.block(&b.block.stmts),
            Expr::Unsafe(b) => self.block(&b.block.stmts),
            Expr::TryBlock(b) => self.block(&b.block.stmts),
            Expr::Loop(l) => self.block(&l.body.stmts),
            Expr::While(w) => {
                self.expr(&w.cond);
                self.block(&w.body.stmts);
            }
            Expr::ForLoop(f) => {
                self.expr(&f.expr);
                self.block(&f.body.stmts);
            }
            Expr::Field(f) => {
                self.replay(e);
                self.expr(&f.base);
            }
            Expr::Path(p) => {
                let t = text(p);
                if !self.in_compare && words::in_progress(&t) && t.contains("::") {
                    self.seen(Obs::InProgress, line(p.span()));
                }
                if !self.in_compare
                    && let Some(code) = status_path(&p.path)
                {
                    self.status(code, line(p.span()));
                }
            }
            Expr::Lit(l) => {
                if let syn::Lit::Str(s) = &l.lit
                    && !self.in_compare
                {
                    let v = s.value();
                    if crate::facts::key::state_literals(&v).any(words::in_progress) {
                        self.seen(Obs::InProgress, line(l.span()));
                    }
                }
            }
            Expr::Struct(st) => {
                let t = text(st);
                if st.fields.iter().any(|f| self.mentions_key(&f.expr))
                    && let Some(who) = st.fields.iter().find_map(|f| {
                        let m = text(&f.member);
                        words::principal(&m)
                            .or_else(|| self.principal_vars.contains(&m).then(|| m.clone()))
                    })
                {
                    self.seen(Obs::Scoped(who), line(st.span()));
                }
                let _ = t;
                for f in &st.fields {
                    self.expr(&f.expr);
                }
                if let Some(r) = &st.rest {
                    self.expr(r);
                }
            }
            Expr::Tuple(t) => {
                for x in &t.elems {
                    self.expr(x);
                }
            }
            Expr::Array(a) => {
                for x in &a.elems {
                    self.expr(x);
                }
            }
            Expr::Let(l) => self.expr(&l.expr),
            Expr::Assign(a) => {
                self.expr(&a.right);
                if let Expr::Path(p) = &*a.left
                    && self.key_vars.contains(&text(p))
                    && is_random(&text(&a.right))
                {
                    self.seen(Obs::KeyGenerated, line(a.span()));
                }
            }
            Expr::Unary(u) => self.expr(&u.expr),
            Expr::Await(a) => self.expr(&a.base),
            Expr::Try(t) => self.expr(&t.expr),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Reference(r) => self.expr(&r.expr),
            Expr::Cast(c) => self.expr(&c.expr),
            Expr::Return(r) => {
                if let Some(x) = &r.expr {
                    self.expr(x);
                }
            }
            Expr::Index(i) => {
                self.expr(&i.expr);
                self.expr(&i.index);
            }
            _ => {}
        }
    }

    fn call_ctx(&mut self, at: u32, name: &str) {
        let ctx = self.effective_ctx();
        self.calls.push(KeyCallCtx {
            line: at,
            name: name.to_string(),
            ctx,
            cond: self.cond,
        });
    }

    /// A field of a stored entry read back into a response (`row.response_body`).
    fn replay(&mut self, e: &Expr) {
        let Expr::Field(f) = e else { return };
        let member = text(&f.member);
        let base = text(&f.base);
        let root = base.split([' ', '.']).next().unwrap_or("");
        let request = matches!(
            root,
            "req" | "request" | "res" | "response" | "self" | "err" | "e"
        );
        let named = words::split(&member).iter().any(|w| w == "response");
        let of_lookup = self.found_vars.contains(root)
            && (words::response(&member)
                || matches!(
                    member.as_str(),
                    "status" | "status_code" | "body" | "headers"
                ));
        if !request && (named || of_lookup) && !self.in_compare && !self.in_cond {
            self.seen(Obs::Replay, line(f.span()));
        }
    }

    /// The condition of an `if`: what its `then` and `else` branches run under.
    fn condition(&mut self, cond: &Expr) -> (Option<Cond>, Option<Cond>) {
        let saved = self.in_cond;
        self.in_cond = true;
        let r = self.classify(cond);
        self.expr(cond);
        self.in_cond = saved;
        match r {
            (Some(c), false) => (Some(c), opposite(c)),
            (Some(c), true) => (opposite(c), Some(c)),
            (None, _) => (None, None),
        }
    }

    fn classify(&mut self, cond: &Expr) -> (Option<Cond>, bool) {
        if self.depth > MAX_DEPTH {
            return (None, false);
        }
        self.depth += 1;
        let r = self.classify_inner(cond);
        self.depth -= 1;
        r
    }

    fn classify_inner(&mut self, cond: &Expr) -> (Option<Cond>, bool) {
        match cond {
            Expr::Paren(p) => self.classify(&p.expr),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
                let (c, n) = self.classify(&u.expr);
                (c, !n)
            }
            Expr::Let(l) => {
                // `if let Some(key) = header`, `if let (Some(key), Some(user)) = (a, b)`,
                // `if let Some(existing) = lookup`.
                let pairs: Vec<(&Pat, &Expr)> = match (&*l.pat, &*l.expr) {
                    (Pat::Tuple(pt), Expr::Tuple(et)) => {
                        pt.elems.iter().zip(et.elems.iter()).collect()
                    }
                    (p, e) => vec![(p, e)],
                };
                let mut result = None;
                for (p, e) in pairs {
                    let mut names = Vec::new();
                    super::parse::pat_names(p, &mut names, 0);
                    if self.mentions_key(e)
                        && !self.found_vars.iter().any(|f| text(e).contains(f.as_str()))
                    {
                        let (links, _) = chain(e);
                        let lookup = links.last().is_some_and(|m| {
                            matches!(
                                m.method.to_string().as_str(),
                                "fetch_optional" | "get" | "first" | "optional" | "contains"
                            )
                        }) && !reads_header(e);
                        if lookup {
                            self.found_vars.extend(names);
                            result = result.or(Some(Cond::Duplicate));
                        } else {
                            self.key_vars.extend(names);
                            result = Some(Cond::KeyPresent);
                        }
                    } else if words::principal(&text(e)).is_some() {
                        for n in names {
                            self.principal_vars.insert(n);
                        }
                    } else {
                        let (links, _) = chain(e);
                        if links.last().is_some_and(|m| {
                            matches!(
                                m.method.to_string().as_str(),
                                "fetch_optional" | "first" | "optional" | "get"
                            )
                        }) {
                            self.found_vars.extend(names);
                            result = result.or(Some(Cond::Duplicate));
                        }
                    }
                }
                (result, false)
            }
            Expr::Binary(b) => {
                use syn::BinOp::*;
                match b.op {
                    And(_) | Or(_) => {
                        let then_of = |(c, n): (Option<Cond>, bool)| match (c, n) {
                            (Some(c), false) => Some(c),
                            (Some(c), true) => opposite(c),
                            _ => None,
                        };
                        let a = then_of(self.classify(&b.left));
                        let c = then_of(self.classify(&b.right));
                        let best = match (a, c) {
                            (Some(x), Some(y)) => Some(Cond::more_specific(x, y)),
                            (x, y) => x.or(y),
                        };
                        (best, false)
                    }
                    _ => self.compare(b),
                }
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                let on_key_recv = self.mentions_key(&m.receiver);
                match name.as_str() {
                    "is_empty" if on_key_recv => {
                        self.seen(Obs::KeyCheck(KeyCheck::Empty), line(m.method.span()));
                        (Some(Cond::KeyMissing), false)
                    }
                    "is_none" if on_key_recv => (Some(Cond::KeyMissing), false),
                    "is_some" if on_key_recv && reads_header(&m.receiver) => {
                        (Some(Cond::KeyPresent), false)
                    }
                    "is_server_error" => {
                        self.seen(Obs::StatusGuard, line(m.method.span()));
                        (Some(Cond::ServerError), false)
                    }
                    "is_success" | "is_client_error" | "is_redirection" => {
                        self.seen(Obs::StatusGuard, line(m.method.span()));
                        (Some(Cond::ServerError), true)
                    }
                    "contains" | "contains_key" | "is_some" | "exists" => {
                        (Some(Cond::Duplicate), false)
                    }
                    "is_match" | "is_ok" | "is_err"
                        if m.args.iter().any(|a| self.mentions_key(a)) || on_key_recv =>
                    {
                        self.seen(Obs::KeyCheck(KeyCheck::Charset), line(m.method.span()));
                        (Some(Cond::KeyInvalid), name != "is_err")
                    }
                    "all" if on_key_recv => {
                        self.seen(Obs::KeyCheck(KeyCheck::Charset), line(m.method.span()));
                        (Some(Cond::KeyInvalid), true)
                    }
                    "insert" => (Some(Cond::Duplicate), true),
                    _ => (None, false),
                }
            }
            Expr::Path(p) => {
                let n = text(p);
                if self.key_vars.contains(&n) {
                    (Some(Cond::KeyPresent), false)
                } else if self.found_vars.contains(&n) {
                    (Some(Cond::Duplicate), false)
                } else if self.claim_vars.contains(&n) {
                    (Some(Cond::Duplicate), true)
                } else {
                    (None, false)
                }
            }
            _ => (None, false),
        }
    }

    /// A comparison: hashes, statuses, states, the key's length, a claim's row count.
    fn compare(&mut self, b: &syn::ExprBinary) -> (Option<Cond>, bool) {
        use syn::BinOp::*;
        let at = line(b.span());
        let (lt, rt) = (text(&b.left), text(&b.right));
        let ne = matches!(b.op, Ne(_));
        let eq = matches!(b.op, Eq(_) | Ne(_));
        if eq && (words::hash(&lt) || words::hash(&rt)) {
            self.seen(Obs::HashCompared, at);
            return (Some(Cond::HashMismatch), !ne);
        }
        let num = |t: &str| t.trim().parse::<u32>().ok();
        let status_side = |t: &str| {
            words::split(t)
                .iter()
                .any(|w| w == "status" || w == "statuscode" || w == "u16")
        };
        if let Some(n) = if status_side(&lt) {
            num(&rt)
        } else if status_side(&rt) {
            num(&lt)
        } else {
            None
        } && (200..600).contains(&n)
        {
            self.seen(Obs::StatusGuard, at);
            let left_status = status_side(&lt);
            let greater = matches!(
                (b.op, left_status),
                (Gt(_) | Ge(_), true) | (Lt(_) | Le(_), false)
            );
            return if greater && n >= 499 {
                (Some(Cond::ServerError), false)
            } else if !greater && !eq {
                (Some(Cond::ServerError), true)
            } else {
                (None, false)
            };
        }
        let state = |t: &str| t.contains("::") || t.starts_with('"');
        if eq
            && ((state(&lt) && words::in_progress(&lt)) || (state(&rt) && words::in_progress(&rt)))
        {
            return (Some(Cond::InProgress), ne);
        }
        let key_len = |t: &str, s: &Self| {
            t.replace(' ', "").ends_with(".len()")
                && s.key_vars
                    .iter()
                    .any(|k| t.replace(' ', "").starts_with(&format!("{k}.")))
        };
        if key_len(&lt, self) || key_len(&rt, self) {
            let zero = lt.trim() == "0" || rt.trim() == "0";
            if zero {
                self.seen(Obs::KeyCheck(KeyCheck::Empty), at);
                return (Some(Cond::KeyMissing), ne);
            }
            self.seen(Obs::KeyCheck(KeyCheck::Length), at);
            let bad_when_true = matches!(
                (b.op, key_len(&lt, self)),
                (Gt(_) | Ge(_), true) | (Lt(_) | Le(_), false)
            );
            return (Some(Cond::KeyInvalid), !bad_when_true);
        }
        let zeroish = |t: &str| matches!(t.trim(), "0" | "None" | "false");
        if eq && (zeroish(&rt) || zeroish(&lt)) {
            let side = if zeroish(&rt) { &lt } else { &rt };
            let root = side.split([' ', '.']).next().unwrap_or("");
            if self.claim_vars.contains(root) || side.contains("rows_affected") {
                return (Some(Cond::Duplicate), ne);
            }
            if self.found_vars.contains(root) {
                return (Some(Cond::Duplicate), !ne);
            }
        }
        (None, false)
    }

    fn method(&mut self, e: &Expr, m: &syn::ExprMethodCall) {
        let name = m.method.to_string();
        let at = line(m.method.span());
        self.call_ctx(at, &name);
        // Statuses set on a builder: `.status(StatusCode::CONFLICT)`.
        // The wrapped service runs here.
        let recv = text(&m.receiver).replace(' ', "");
        let recv_last = recv.rsplit('.').next().unwrap_or("");
        if matches!(name.as_str(), "call" | "run")
            && !m.args.is_empty()
            && ["service", "srv", "next", "inner", "handler"]
                .iter()
                .any(|s| recv_last.ends_with(s))
        {
            match self.cond {
                Some(Cond::KeyMissing) => self.seen(Obs::KeyMissingProceeds, at),
                Some(Cond::KeyInvalid) => {}
                _ => self.seen(Obs::RunsHandler, at),
            }
        }
        // A missing key replaced by a generated one.
        if matches!(
            name.as_str(),
            "unwrap_or_else" | "unwrap_or" | "or_else" | "or"
        ) && self.mentions_key(&m.receiver)
            && m.args.iter().any(|a| is_random(&text(a)))
        {
            self.seen(Obs::KeyGenerated, at);
        }
        // Hashes.
        let lower = name.to_ascii_lowercase();
        if lower.contains("sha256")
            || lower == "finalize"
            || lower == "digest"
            || lower.contains("fingerprint")
            || lower == "hash_request"
        {
            self.seen(Obs::HashComputed, at);
        }
        if let Expr::Path(p) = &*m.receiver
            && text(p).contains("Sha256")
        {
            self.seen(Obs::HashComputed, at);
        }
        // The store operation this chain ends in.
        self.classify_chain(e);

        // Closures: key handling on the header's `Option`, failure paths.
        let on_key = self.mentions_key(&m.receiver);
        let cb_ctx = match name.as_str() {
            "map_err" | "or_else" | "unwrap_or_else" if !on_key => Some(Ctx::Failure),
            _ => None,
        };
        self.chain_depth += 1;
        self.expr(&m.receiver);
        self.chain_depth -= 1;
        for a in &m.args {
            if let Expr::Closure(c) = a {
                let mut names = Vec::new();
                for p in &c.inputs {
                    super::parse::pat_names(p, &mut names, 0);
                }
                if on_key
                    && matches!(
                        name.as_str(),
                        "map" | "and_then" | "filter" | "then" | "filter_map" | "inspect"
                    )
                {
                    self.key_vars.extend(names.iter().cloned());
                }
                self.under(cb_ctx, None, |s| s.expr(&c.body));
            } else {
                self.expr(a);
            }
        }
    }

    /// Classifies the chain ending at `e` (its outermost method) as a store operation.
    fn classify_chain(&mut self, e: &Expr) {
        if self.chain_depth > 0 {
            return;
        }
        let (links, root) = chain(e);
        let full = text(e);
        let names: Vec<String> = links.iter().map(|m| m.method.to_string()).collect();
        let at = line(root.span());
        let time_filter = {
            let compact = full.replace(' ', "");
            (compact.contains(".lt(")
                || compact.contains(".le(")
                || compact.contains(".gt(")
                || compact.contains('<')
                || compact.contains('>'))
                && idents(&full)
                    .iter()
                    .any(|i| words::age(i) || i == "elapsed" || i == "secs")
        };
        // SQL: sqlx::query("…") / query!(…) at the root.
        let sql = match root {
            Expr::Call(c) => match &*c.func {
                Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| {
                        s.ident.to_string().starts_with("query") || s.ident == "sql_query"
                    }) =>
                {
                    c.args.iter().find_map(|a| match a {
                        Expr::Lit(l) => match &l.lit {
                            syn::Lit::Str(s) => Some(s.value()),
                            _ => None,
                        },
                        _ => None,
                    })
                }
                _ => None,
            },
            Expr::Macro(mm)
                if mm
                    .mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident.to_string().starts_with("query")) =>
            {
                first_str(&mm.mac.tokens)
            }
            _ => None,
        };
        if let Some(sql) = sql {
            if let Some(op) = sql_op(&sql, time_filter) {
                self.seen(Obs::Op(op), at);
            }
            return;
        }
        // diesel: insert_into(idempotency_keys::table)…
        if let Expr::Call(c) = root
            && let Expr::Path(p) = &*c.func
            && let Some(f) = p.path.segments.last().map(|s| s.ident.to_string())
            && matches!(
                f.as_str(),
                "insert_into" | "update" | "delete" | "replace_into"
            )
            && c.args.iter().any(|a| is_key_target(&text(a)))
        {
            let target = c
                .args
                .first()
                .map(|a| text(a).split("::").next().unwrap_or("").trim().to_string())
                .unwrap_or_default();
            let kind = match f.as_str() {
                "insert_into" if names.iter().any(|n| n == "on_conflict_do_nothing") => {
                    OpKind::Claim
                }
                "insert_into" if names.iter().any(|n| n == "do_update") => OpKind::Write,
                "insert_into" => OpKind::Insert,
                "delete" => OpKind::Delete,
                _ => OpKind::Write,
            };
            self.seen(
                Obs::Op(StoreOp {
                    backend: StoreBackend::Orm,
                    kind,
                    target,
                    fields: self.fields_of(&full),
                    ttl: false,
                    time_filter,
                }),
                at,
            );
            return;
        }
        let Some(last) = links.last() else { return };
        let method = last.method.to_string();
        let recv = text(&last.receiver).replace(' ', "");
        let on_key = last.args.iter().any(|a| self.mentions_key(a))
            || last.args.iter().any(|a| {
                idents(&text(a)).iter().any(|i| {
                    self.obj_vars
                        .get(i)
                        .is_some_and(|f| f.iter().any(|x| self.key_vars.contains(x) || x == "key"))
                })
            });
        // A container behind a lock.
        let locked = names[..names.len().saturating_sub(1)].iter().any(|n| {
            matches!(
                n.as_str(),
                "read" | "write" | "lock" | "borrow" | "borrow_mut"
            )
        }) || self
            .lock_vars
            .contains(recv.split('.').next().unwrap_or(""));
        if locked
            && matches!(
                method.as_str(),
                "contains"
                    | "contains_key"
                    | "get"
                    | "insert"
                    | "remove"
                    | "retain"
                    | "entry"
                    | "clear"
            )
        {
            let kind = match method.as_str() {
                "contains" | "contains_key" | "get" => OpKind::Read,
                "insert" if self.in_cond => OpKind::Claim,
                "insert" => OpKind::Write,
                "entry" => OpKind::Claim,
                _ => OpKind::Delete,
            };
            let target = recv
                .split(".read(")
                .next()
                .unwrap_or(&recv)
                .split(".write(")
                .next()
                .unwrap_or(&recv)
                .split(".lock(")
                .next()
                .unwrap_or(&recv)
                .to_string();
            let mut fields = self.fields_of(&text(&last.args));
            for i in idents(&text(&last.args)) {
                if let Some(f) = self.obj_vars.get(&i) {
                    fields.extend(f.iter().cloned());
                }
            }
            self.seen(
                Obs::Op(StoreOp {
                    backend: StoreBackend::Memory,
                    kind,
                    target,
                    fields,
                    ttl: false,
                    time_filter: kind == OpKind::Delete && time_filter,
                }),
                at,
            );
            return;
        }
        // DynamoDB (aws-sdk-dynamodb): `client.put_item().table_name(..).item(..)
        // .condition_expression("attribute_not_exists(pk)").send()`.
        if names.iter().any(|n| n == "table_name")
            && (has_idem(&full)
                || links
                    .iter()
                    .any(|l| l.args.iter().any(|a| self.mentions_key(a))))
            && let Some(kind) = names.iter().find_map(|n| {
                let if_absent = names.iter().any(|n| n == "condition_expression")
                    && full.contains("attribute_not_exists");
                dynamo_kind(n, if_absent)
            })
        {
            let fields = self.fields_of(&full);
            let ttl = matches!(kind, OpKind::Claim | OpKind::Write)
                && fields.iter().any(|f| words::expiry(f));
            let target = links
                .iter()
                .find(|l| l.method == "table_name")
                .and_then(|l| l.args.first())
                .map(|a| text(a).replace(' ', ""))
                .unwrap_or_else(|| recv.clone());
            self.seen(
                Obs::Op(StoreOp {
                    backend: StoreBackend::Dynamodb,
                    kind,
                    target,
                    fields,
                    ttl,
                    time_filter,
                }),
                at,
            );
            return;
        }
        // Redis.
        let redis_recv = idents(&recv).iter().any(|i| {
            i.contains("redis")
                || matches!(i.as_str(), "conn" | "con" | "connection" | "kv" | "cache")
        });
        let cmd = full.replace(' ', "");
        let distinctive = matches!(
            method.as_str(),
            "set_nx" | "set_ex" | "pset_ex" | "set_options" | "expire" | "pexpire"
        );
        let is_cmd = cmd.contains("cmd(\"SET\")")
            || cmd.contains("cmd(\"GET\")")
            || cmd.contains("cmd(\"DEL\")");
        if (distinctive || redis_recv || is_cmd) && (on_key || has_idem(&full)) {
            let kind = if is_cmd {
                if cmd.contains("cmd(\"SET\")") && cmd.contains("\"NX\"") {
                    Some(OpKind::Claim)
                } else if cmd.contains("cmd(\"SET\")") {
                    Some(OpKind::Write)
                } else if cmd.contains("cmd(\"GET\")") {
                    Some(OpKind::Read)
                } else {
                    Some(OpKind::Delete)
                }
            } else {
                match method.as_str() {
                    "set_nx" => Some(OpKind::Claim),
                    "set_options" if cmd.contains("NX") => Some(OpKind::Claim),
                    "set" | "set_ex" | "pset_ex" | "set_options" => Some(OpKind::Write),
                    "get" | "exists" => Some(OpKind::Read),
                    "del" => Some(OpKind::Delete),
                    "expire" | "pexpire" => Some(OpKind::Expire),
                    _ => None,
                }
            };
            if let Some(kind) = kind {
                let ttl = matches!(method.as_str(), "set_ex" | "pset_ex")
                    || cmd.contains("\"EX\"")
                    || cmd.contains("\"PX\"")
                    || cmd.contains("with_expiration");
                self.seen(
                    Obs::Op(StoreOp {
                        backend: StoreBackend::Redis,
                        kind,
                        target: recv.clone(),
                        fields: self.fields_of(&text(&last.args)),
                        ttl,
                        time_filter: false,
                    }),
                    at,
                );
            }
        }
    }

    fn fields_of(&self, t: &str) -> Vec<String> {
        let mut v = idents(t);
        let extra: Vec<String> = v
            .iter()
            .filter_map(|i| self.obj_vars.get(i))
            .flatten()
            .cloned()
            .collect();
        v.extend(extra);
        v.sort();
        v.dedup();
        v
    }
}

/// Peels `&`, parens, `.await`, `?`.
fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Reference(r) => strip(&r.expr),
        Expr::Await(a) => strip(&a.base),
        Expr::Try(t) => strip(&t.expr),
        _ => e,
    }
}

/// Reads a header named for idempotency: `.get(IDEMPOTENCY_HEADER)`, `.get("Idempotency-Key")`.
fn reads_header(e: &Expr) -> bool {
    let (links, _) = chain(e);
    links.iter().any(|m| {
        matches!(
            m.method.to_string().as_str(),
            "get" | "get_one" | "get_all" | "typed_get"
        ) && m.args.iter().any(|a| {
            let t = text(a);
            has_idem(&t) || t.to_ascii_lowercase().contains("paypal-request-id")
        })
    })
}

/// The first string literal among macro tokens (`query!("INSERT …", a, b)`).
fn first_str(tokens: &proc_macro2::TokenStream) -> Option<String> {
    for tt in tokens.clone() {
        if let proc_macro2::TokenTree::Literal(l) = tt
            && let syn::Lit::Str(s) = syn::Lit::new(l)
        {
            return Some(s.value());
        }
    }
    None
}
