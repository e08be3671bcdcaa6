//! Reads the code that handles an idempotency key: the functions that read the key header, or
//! that name an idempotency store (`idempotency_keys`, `IdempotencyKey`, `idem:`), and the
//! sweepers of the in-process containers they use.
//!
//! For each such function it records every call ([`KeyCall`], for the linker to tell store
//! operations apart once imports are resolved) and what else matters ([`KeySeen`]): the statuses
//! answered and under which condition (key missing, fingerprint mismatch, in progress, duplicate),
//! checks on the key, a generated key, hashes computed and compared, a stored response sent back
//! or logged, and where the protected handler runs. Each carries the context it runs in: before
//! the handler, after it (a finish hook, a response override), on failure, in a `finally`, on
//! an abort.

use super::FieldExt;
use super::eval::{Evaluator, line};
use crate::facts::key::{Cond, Ctx, KeyCheck, Obs, words};
use crate::program::*;
use std::collections::HashSet;
use tree_sitter::Node;

const MAX_SCAN_DEPTH: usize = 150;

fn is_fn(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function"
            | "function_expression"
            | "function"
            | "function_declaration"
            | "generator_function_declaration"
            | "generator_function"
            | "method_definition"
    )
}

fn has_idem(text: &str) -> bool {
    text.as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"idem"))
}

fn status_code(text: &str) -> Option<u16> {
    text.trim()
        .parse::<u16>()
        .ok()
        .filter(|c| (400..600).contains(c))
}

/// A call that makes up a value per request (`uuid()`, `randomUUID()`, `nanoid()`).
fn is_random_call(text: &str) -> bool {
    let callee = text.split('(').next().unwrap_or("");
    words::split(callee).iter().any(|w| {
        matches!(
            w.as_str(),
            "uuid"
                | "uuidv4"
                | "v4"
                | "randomuuid"
                | "nanoid"
                | "cuid"
                | "createid"
                | "ulid"
                | "random"
                | "randombytes"
                | "generate"
                | "generateid"
        )
    })
}

/// Method-name prefixes of a lookup (`get`, `findKey`, `loadRecord`) and of a claim (`set`,
/// `claimKey`, `tryAcquire`).
const READ_METHODS: &[&str] = &[
    "get", "has", "exists", "find", "hget", "mget", "lookup", "fetch", "select", "contains",
    "load", "read", "peek", "first",
];
const CLAIM_METHODS: &[&str] = &[
    "set", "insert", "create", "claim", "acquire", "tryclaim", "trylock", "lock", "reserve",
    "begin", "start",
];

/// Object properties a handler answers with: `res.json = …` and friends.
fn is_response_override(left: &str) -> bool {
    let l = left.replace(' ', "");
    [
        "res.json",
        "res.send",
        "res.end",
        "res.write",
        "response.json",
        "response.send",
        "reply.send",
    ]
    .iter()
    .any(|p| l == *p)
}

struct State {
    key_vars: HashSet<String>,
    /// Variables holding a store lookup (truthy: the key was seen before).
    found_vars: HashSet<String>,
    /// Variables holding a claim's result (truthy: this request won).
    claim_vars: HashSet<String>,
    /// Variables holding the caller (`const userId = req.user.id`, `scope = req.user?.accountId`).
    principal_vars: HashSet<String>,
    /// Variables holding an object literal, with its keys (a record written to the store later).
    obj_vars: std::collections::HashMap<String, Vec<String>>,
    /// Variables holding what the protected handler returned (`const result = await next()` in a
    /// tRPC middleware: `result.ok` is false when it failed).
    result_vars: HashSet<String>,
    saw_await: bool,
    ctx: Ctx,
    cond: Option<Cond>,
    in_compare: bool,
    in_timer: bool,
    fns: Vec<FnId>,
    depth: usize,
}

impl State {
    /// A fresh walk, inside the functions `fns`.
    fn new(fns: Vec<FnId>) -> State {
        State {
            key_vars: HashSet::new(),
            found_vars: HashSet::new(),
            claim_vars: HashSet::new(),
            principal_vars: HashSet::new(),
            obj_vars: std::collections::HashMap::new(),
            result_vars: HashSet::new(),
            saw_await: false,
            ctx: Ctx::Main,
            cond: None,
            in_compare: false,
            in_timer: false,
            fns,
            depth: 0,
        }
    }
}

impl<'t> Evaluator<'t, '_> {
    /// Finds the key code of the file and records what it does. Runs once, after evaluation.
    pub(super) fn scan_key_code(&mut self, root: Node<'t>) {
        let key_lines: HashSet<u32> = self
            .module
            .functions
            .iter()
            .flat_map(|f| f.key_reads.iter().map(|(_, l)| *l))
            .collect();
        // Most files hold no key code: neither a key read nor anything named for idempotency.
        if key_lines.is_empty() && !has_idem(self.src) {
            return;
        }
        let mut scanned: Vec<Node<'t>> = Vec::new();
        let mut rest: Vec<Node<'t>> = Vec::new();
        // Iterative walk: (node, enclosing class name mentions idem).
        let mut stack: Vec<(Node<'t>, bool)> = vec![(root, false)];
        let mut visited = 0usize;
        while let Some((n, idem_class)) = stack.pop() {
            visited += 1;
            if visited > 2_000_000 {
                break;
            }
            if is_fn(n.kind())
                && let Some(&f) = self.fn_memo.get(&n.id())
            {
                let text = self.text(n);
                let reads_key = (n.start_position().row as u32 + 1
                    ..=n.end_position().row as u32 + 1)
                    .any(|l| key_lines.contains(&l));
                if idem_class || has_idem(text) || reads_key || self.takes_key(n) {
                    self.scan_fn(n, f, &key_lines);
                    scanned.push(n);
                    continue;
                }
                rest.push(n);
            }
            let class_idem = if n.kind().contains("class") {
                n.field("name").is_some_and(|c| has_idem(self.text(c)))
            } else {
                idem_class
            };
            let mut cursor = n.walk();
            let children: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
            for c in children.into_iter().rev() {
                stack.push((c, class_idem));
            }
        }
        if scanned.is_empty() {
            return;
        }
        // Sweepers: other functions of this file that touch a module-level container the key
        // code keeps its keys in (`setInterval(() => { for (…) seen.delete(k) })`).
        let containers: HashSet<String> = self
            .module
            .functions
            .iter()
            .flat_map(|f| f.key_calls.iter())
            .filter_map(|c| {
                let root = c.receiver.split(['.', '[', '(']).next()?.trim().to_string();
                self.module_container(&root).then_some(root)
            })
            .collect();
        if containers.is_empty() {
            return;
        }
        for n in rest {
            // Only outermost functions not already inside scanned code.
            if scanned
                .iter()
                .any(|s| s.start_byte() <= n.start_byte() && n.end_byte() <= s.end_byte())
            {
                continue;
            }
            let text = self.text(n);
            let touches = containers.iter().any(|c| {
                words::split(text)
                    .iter()
                    .any(|w| *w == c.to_ascii_lowercase())
            });
            if touches && let Some(&f) = self.fn_memo.get(&n.id()) {
                self.scan_fn(n, f, &key_lines);
                scanned.push(n);
            }
        }
    }

    fn scan_fn(&mut self, n: Node<'t>, f: FnId, key_lines: &HashSet<u32>) {
        let mut st = State::new(vec![f]);
        self.scan_params(n, &mut st);
        if let Some(body) = n.field("body") {
            self.scan(body, &mut st, key_lines);
        }
    }

    /// A function handed the key by its caller (`protect(req, res, next, key)`).
    fn takes_key(&self, n: Node<'t>) -> bool {
        let mut st = State::new(vec![]);
        self.scan_params(n, &mut st);
        !st.key_vars.is_empty()
    }

    fn scan_params(&self, n: Node<'t>, st: &mut State) {
        let params = n.field("parameters").or_else(|| n.field("parameter"));
        let Some(params) = params else { return };
        let mut stack = vec![params];
        while let Some(p) = stack.pop() {
            if matches!(
                p.kind(),
                "identifier" | "shorthand_property_identifier_pattern"
            ) {
                let name = self.text(p);
                if words::key_name(name) {
                    st.key_vars.insert(name.to_string());
                }
                continue;
            }
            if p.kind().contains("type") {
                continue;
            }
            let mut cursor = p.walk();
            stack.extend(p.named_children(&mut cursor));
        }
    }

    fn seen(&mut self, st: &State, obs: Obs, at: u32) {
        let f = *st.fns.last().unwrap_or(&0);
        let ctx = if st.cond == Some(Cond::ServerError)
            && matches!(st.ctx, Ctx::Main | Ctx::AfterHandler)
        {
            Ctx::Failure
        } else {
            st.ctx
        };
        let seen = &mut self.module.functions[f].key_seen;
        if !seen
            .iter()
            .any(|s| s.obs == obs && s.line == at && s.ctx == ctx)
        {
            seen.push(KeySeen { obs, line: at, ctx });
        }
    }

    fn status(&mut self, st: &State, code: u16, at: u32) {
        self.seen(
            st,
            Obs::Status {
                code,
                cond: st.cond,
            },
            at,
        );
    }

    /// Does the subtree name one of the key variables (or read the key header itself)?
    fn mentions_key(&self, n: Node<'t>, st: &State, key_lines: &HashSet<u32>) -> bool {
        if key_lines.contains(&line(n))
            && matches!(
                n.kind(),
                "call_expression" | "member_expression" | "subscript_expression"
            )
        {
            return true;
        }
        let mut stack = vec![n];
        let mut seen = 0;
        while let Some(x) = stack.pop() {
            seen += 1;
            if seen > 4000 {
                return false;
            }
            if matches!(x.kind(), "identifier" | "shorthand_property_identifier")
                && st.key_vars.contains(self.text(x))
            {
                return true;
            }
            if matches!(x.kind(), "string" | "template_string") {
                let t = self.string_value(x).to_ascii_lowercase();
                if self.catalog.key_headers.contains(&t) {
                    return true;
                }
            }
            let mut cursor = x.walk();
            stack.extend(x.named_children(&mut cursor));
        }
        false
    }

    fn scan_children(&mut self, n: Node<'t>, st: &mut State, key_lines: &HashSet<u32>) {
        let mut cursor = n.walk();
        let children: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
        for c in children {
            self.scan(c, st, key_lines);
        }
    }

    fn scan_under(
        &mut self,
        n: Node<'t>,
        st: &mut State,
        key_lines: &HashSet<u32>,
        ctx: Option<Ctx>,
        cond: Option<Option<Cond>>,
    ) {
        let saved = (st.ctx, st.cond);
        if let Some(c) = ctx {
            st.ctx = c;
        }
        if let Some(c) = cond {
            st.cond = c;
        }
        self.scan(n, st, key_lines);
        st.ctx = saved.0;
        st.cond = saved.1;
    }

    fn scan(&mut self, n: Node<'t>, st: &mut State, key_lines: &HashSet<u32>) {
        if st.depth > MAX_SCAN_DEPTH {
            return;
        }
        st.depth += 1;
        self.scan_inner(n, st, key_lines);
        st.depth -= 1;
    }

    fn scan_inner(&mut self, n: Node<'t>, st: &mut State, key_lines: &HashSet<u32>) {
        match n.kind() {
            k if is_fn(k) => {
                let Some(&f) = self.fn_memo.get(&n.id()) else {
                    return;
                };
                st.fns.push(f);
                let saved_await = st.saw_await;
                st.saw_await = false;
                self.scan_params(n, st);
                if let Some(body) = n.field("body") {
                    self.scan(body, st, key_lines);
                }
                st.saw_await = saved_await;
                st.fns.pop();
            }
            "variable_declarator" => {
                let (Some(name), value) = (n.field("name"), n.field("value")) else {
                    return;
                };
                let Some(value) = value else { return };
                self.scan(value, st, key_lines);
                self.bind(name, value, st, key_lines);
            }
            "assignment_expression" | "augmented_assignment_expression" => {
                let (Some(left), Some(right)) = (n.field("left"), n.field("right")) else {
                    return;
                };
                let lt = self.text(left).to_string();
                if is_response_override(&lt) {
                    self.scan_under(right, st, key_lines, Some(Ctx::AfterHandler), None);
                    return;
                }
                self.scan(right, st, key_lines);
                let prop = lt.rsplit('.').next().unwrap_or("");
                if matches!(prop, "status" | "statusCode")
                    && let Some(code) = status_code(self.text(right))
                {
                    self.status(st, code, line(n));
                }
                if prop == "body" && lt.starts_with("ctx") && self.stored_member(right, st) {
                    self.seen(st, Obs::Replay, line(n));
                }
                if left.kind() == "identifier" && st.key_vars.contains(lt.as_str()) {
                    if is_random_call(self.text(right)) {
                        self.seen(st, Obs::KeyGenerated, line(n));
                    }
                } else if left.kind() == "identifier" {
                    self.bind(left, right, st, key_lines);
                }
            }
            "if_statement" => {
                let Some(cond) = n.field("condition") else {
                    return;
                };
                self.scan(cond, st, key_lines);
                let (c, negated) = self.classify(cond, st, key_lines);
                let (then_c, else_c) = match (c, negated) {
                    (Some(c), false) => (Some(c), opposite(c)),
                    (Some(c), true) => (opposite(c), Some(c)),
                    (None, _) => (None, None),
                };
                if then_c == Some(Cond::KeyPresent) {
                    self.seen(st, Obs::KeyMissingProceeds, line(cond));
                }
                if let Some(t) = n.field("consequence") {
                    let inherit = then_c.or(st.cond);
                    self.scan_under(t, st, key_lines, None, Some(inherit));
                }
                if let Some(e) = n.field("alternative") {
                    let inherit = else_c.or(st.cond);
                    self.scan_under(e, st, key_lines, None, Some(inherit));
                }
            }
            "try_statement" => {
                if let Some(b) = n.field("body") {
                    self.scan(b, st, key_lines);
                }
                if let Some(h) = n.field("handler") {
                    self.scan_under(h, st, key_lines, Some(Ctx::Failure), None);
                }
                if let Some(fin) = n.field("finalizer") {
                    self.scan_under(fin, st, key_lines, Some(Ctx::Finally), None);
                }
            }
            "await_expression" => {
                self.scan_children(n, st, key_lines);
                st.saw_await = true;
            }
            "call_expression" => self.scan_call(n, st, key_lines),
            "new_expression" => {
                if let Some(ctor) = n.field("constructor") {
                    let name = self.text(ctor).rsplit('.').next().unwrap_or("");
                    let args = n.field("arguments");
                    let num = args.and_then(|a| {
                        let mut c = a.walk();
                        a.named_children(&mut c).find_map(|x| {
                            status_code(self.text(x)).or_else(|| self.status_const(x))
                        })
                    });
                    // tRPC: `new TRPCError({ code: 'CONFLICT' })` answers the status its code names.
                    let trpc = (name == "TRPCError")
                        .then(|| args.and_then(|a| self.trpc_error_status(a)))
                        .flatten();
                    if let Some(code) =
                        trpc.or_else(|| crate::facts::key::named_status(name).or(num))
                    {
                        self.status(st, code, line(n));
                    }
                }
                self.scan_children(n, st, key_lines);
            }
            "pair" => {
                if let (Some(k), Some(v)) = (n.field("key"), n.field("value"))
                    && matches!(self.text(k), "status" | "statusCode")
                    && let Some(code) = status_code(self.text(v)).or_else(|| self.status_const(v))
                {
                    self.status(st, code, line(n));
                }
                self.scan_children(n, st, key_lines);
            }
            "binary_expression" => {
                let op = n.field("operator").map(|o| self.text(o)).unwrap_or("");
                if matches!(op, "??" | "||")
                    && let (Some(l), Some(r)) = (n.field("left"), n.field("right"))
                    && self.mentions_key(l, st, key_lines)
                    && is_random_call(self.text(r))
                    && r.kind() == "call_expression"
                {
                    self.seen(st, Obs::KeyGenerated, line(n));
                }
                if matches!(op, "===" | "!==" | "==" | "!=" | "<" | ">" | "<=" | ">=") {
                    self.classify(n, st, key_lines);
                    let saved = st.in_compare;
                    st.in_compare = true;
                    self.scan_children(n, st, key_lines);
                    st.in_compare = saved;
                } else {
                    self.scan_children(n, st, key_lines);
                }
            }
            "string" | "template_string" => {
                let t = self.string_value(n);
                if !st.in_compare && crate::facts::key::state_literals(&t).any(words::in_progress) {
                    self.seen(st, Obs::InProgress, line(n));
                }
                self.scan_children(n, st, key_lines);
            }
            "member_expression" => {
                if let Some(code) = self.status_const(n) {
                    let parent_is_call = n.parent().is_some_and(|p| {
                        p.kind() == "arguments"
                            || (p.kind() == "call_expression" && p.field("function") != Some(n))
                    });
                    if parent_is_call {
                        self.status(st, code, line(n));
                    }
                }
                self.scan_children(n, st, key_lines);
            }
            _ => self.scan_children(n, st, key_lines),
        }
    }

    /// `HttpStatus.CONFLICT` and the like.
    fn status_const(&self, n: Node<'t>) -> Option<u16> {
        if n.kind() != "member_expression" {
            return None;
        }
        let object = self.text(n.field("object")?);
        let prop = self.text(n.field("property")?);
        let o = object.to_ascii_lowercase();
        if o.contains("status") || o.contains("http") {
            crate::facts::key::named_status(prop)
        } else {
            None
        }
    }

    /// A member of a stored entry: `cached.body` (of a lookup), `row.response_status`,
    /// `existing.response`.
    fn stored_member(&self, n: Node<'t>, st: &State) -> bool {
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            if x.kind() == "member_expression"
                && let (Some(o), Some(p)) = (x.field("object"), x.field("property"))
            {
                let obj = self.text(o);
                let root = obj.split(['.', '[', '(']).next().unwrap_or("");
                let prop = self.text(p);
                let not_request = !matches!(
                    root,
                    "req"
                        | "request"
                        | "res"
                        | "reply"
                        | "ctx"
                        | "c"
                        | "context"
                        | "err"
                        | "error"
                        | "e"
                        | "this"
                        | "response"
                );
                let of_lookup = st.found_vars.contains(root)
                    && (words::response(prop)
                        || matches!(prop, "status" | "statusCode" | "headers" | "body"));
                let named = words::split(prop).iter().any(|w| w == "response");
                if not_request && (of_lookup || named) {
                    return true;
                }
            }
            if is_fn(x.kind()) {
                continue;
            }
            let mut cursor = x.walk();
            stack.extend(x.named_children(&mut cursor));
        }
        false
    }

    /// Remembers what a variable holds: the key (or a string built from it, then noting the
    /// caller it is combined with), a store lookup, or a claim's result.
    fn bind(&mut self, name: Node<'t>, value: Node<'t>, st: &mut State, key_lines: &HashSet<u32>) {
        let mut names = Vec::new();
        let mut stack = vec![name];
        while let Some(p) = stack.pop() {
            if matches!(
                p.kind(),
                "identifier" | "shorthand_property_identifier_pattern"
            ) {
                names.push(self.text(p).to_string());
            } else {
                let mut c = p.walk();
                stack.extend(p.named_children(&mut c));
            }
        }
        let value = strip_await(value);
        let vtext = self.text(value);
        if value.kind() == "call_expression" && runs_handler(vtext) {
            st.result_vars.extend(names.iter().cloned());
        }
        if value.kind() == "object" {
            let mut keys = Vec::new();
            self.collect_fields(value, &mut keys, 0, st);
            for n in &names {
                st.obj_vars.insert(n.clone(), keys.clone());
            }
        }
        let callers: Vec<String> = st
            .principal_vars
            .iter()
            .map(|p| p.to_ascii_lowercase())
            .collect();
        let names_caller = move |t: &str| {
            words::principal(t).or_else(|| {
                words::split(t)
                    .into_iter()
                    .find(|w| callers.iter().any(|p| p == w))
            })
        };
        if names.len() == 1
            && !self.mentions_key(value, st, key_lines)
            && (words::principal(vtext).is_some() || words::principal(&names[0]).is_some())
        {
            st.principal_vars.insert(names[0].clone());
        }
        let header_get = match value.kind() {
            "call_expression" => value
                .field("function")
                .map(|c| self.text(c).rsplit('.').next().unwrap_or("").to_string())
                .is_some_and(|m| {
                    matches!(m.as_str(), "get" | "header" | "getHeader" | "get_header")
                }),
            "member_expression" | "subscript_expression" => vtext.contains("headers"),
            "binary_expression" => true,
            _ => false,
        };
        let reads_header = key_lines.contains(&line(value))
            && (header_get
                || self
                    .catalog
                    .key_headers
                    .iter()
                    .any(|h| vtext.to_ascii_lowercase().contains(h.as_str())));
        // `const storeKey = request.idempotencyStoreKey`: a key handed over by an earlier hook.
        let handed_over = names.len() == 1
            && words::split(&names[0]).last().is_some_and(|w| w == "key")
            && has_idem(vtext)
            && matches!(value.kind(), "member_expression" | "subscript_expression");
        if handed_over {
            st.key_vars.insert(names[0].clone());
            return;
        }
        let composed = matches!(
            value.kind(),
            "template_string"
                | "binary_expression"
                | "array"
                | "call_expression"
                | "member_expression"
                | "identifier"
        ) && self.mentions_key(value, st, key_lines);
        if reads_header || composed {
            // A call that merely takes the key (`await store.get(key)`) holds a lookup, not
            // the key; a string built from it is still the key.
            let is_lookup = value.kind() == "call_expression" && {
                let callee = value.field("function").map(|c| self.text(c)).unwrap_or("");
                let m = callee.rsplit('.').next().unwrap_or("");
                // A helper that builds a storage key from the key (`buildStorageKey({ orgId,
                // key })`, `makeIdempotencyKey(userId, key)`) returns the key, not a lookup.
                let builds_key = words::builds_key(m);
                let m = m.to_ascii_lowercase();
                !reads_header
                    && !builds_key
                    && !matches!(
                        m.as_str(),
                        "trim"
                            | "tolowercase"
                            | "touppercase"
                            | "join"
                            | "concat"
                            | "string"
                            | "tostring"
                            | "slice"
                            | "substring"
                            | "format"
                    )
            };
            if !is_lookup {
                for n in &names {
                    st.key_vars.insert(n.clone());
                }
                if !reads_header && let Some(who) = names_caller(vtext) {
                    self.seen(st, Obs::Scoped(who), line(value));
                }
                return;
            }
        }
        // `JSON.parse(await redis.get(k))`: what is decoded is what was read.
        let value = if value.kind() == "call_expression"
            && value.field("function").is_some_and(|c| {
                matches!(
                    self.text(c),
                    "JSON.parse" | "parse" | "deserialize" | "decode"
                )
            }) {
            let mut inner = value;
            let mut stack = vec![value];
            while let Some(x) = stack.pop() {
                if x.kind() == "call_expression" && x.id() != value.id() {
                    inner = x;
                    break;
                }
                let mut c = x.walk();
                stack.extend(x.named_children(&mut c));
            }
            inner
        } else {
            value
        };
        if value.kind() == "call_expression" {
            let callee = value.field("function").map(|c| self.text(c)).unwrap_or("");
            let method = callee.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
            let sql = value
                .field("arguments")
                .and_then(|a| a.named_child(0))
                .filter(|a| matches!(a.kind(), "string" | "template_string"))
                .map(|a| self.string_value(a).trim_start().to_ascii_uppercase());
            let is_read = READ_METHODS.iter().any(|r| method.starts_with(r))
                || sql.as_deref().is_some_and(|s| s.starts_with("SELECT"));
            let is_claim = CLAIM_METHODS.iter().any(|c| method.starts_with(c))
                || sql.as_deref().is_some_and(|s| s.starts_with("INSERT"));
            for n in names {
                if is_read {
                    st.found_vars.insert(n);
                } else if is_claim {
                    st.claim_vars.insert(n);
                }
            }
        }
    }

    /// The condition a test checks, and whether it is negated.
    fn classify(
        &mut self,
        cond: Node<'t>,
        st: &mut State,
        key_lines: &HashSet<u32>,
    ) -> (Option<Cond>, bool) {
        if st.depth > MAX_SCAN_DEPTH {
            return (None, false);
        }
        st.depth += 1;
        let r = self.classify_inner(cond, st, key_lines);
        st.depth -= 1;
        r
    }

    fn classify_inner(
        &mut self,
        cond: Node<'t>,
        st: &mut State,
        key_lines: &HashSet<u32>,
    ) -> (Option<Cond>, bool) {
        match cond.kind() {
            "parenthesized_expression" => match cond.named_child(0) {
                Some(c) => self.classify(c, st, key_lines),
                None => (None, false),
            },
            "unary_expression" if cond.field("operator").is_some_and(|o| self.text(o) == "!") => {
                let Some(arg) = cond.field("argument") else {
                    return (None, false);
                };
                // `!existing.response`: no response yet, still in progress.
                if arg.kind() == "member_expression"
                    && let Some(p) = arg.field("property")
                    && (words::response(self.text(p))
                        || matches!(
                            self.text(p),
                            "completedAt" | "completed_at" | "completed" | "done" | "finished"
                        ))
                {
                    return (Some(Cond::InProgress), false);
                }
                let (c, neg) = self.classify(arg, st, key_lines);
                (c, !neg)
            }
            "identifier" => {
                let name = self.text(cond);
                if st.key_vars.contains(name) {
                    (Some(Cond::KeyPresent), false)
                } else if st.found_vars.contains(name) {
                    (Some(Cond::Duplicate), false)
                } else if st.claim_vars.contains(name) {
                    (Some(Cond::Duplicate), true)
                } else {
                    (None, false)
                }
            }
            "await_expression" => match cond.named_child(0) {
                Some(c) => self.classify(c, st, key_lines),
                None => (None, false),
            },
            "call_expression" => {
                let callee = cond.field("function").map(|c| self.text(c)).unwrap_or("");
                let method = callee.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
                let args = cond.field("arguments");
                let on_key = args.is_some_and(|a| self.mentions_key(a, st, key_lines));
                let receiver_on_key = cond
                    .field("function")
                    .and_then(|f| f.field("object"))
                    .is_some_and(|o| self.mentions_key(o, st, key_lines));
                if on_key
                    && (method == "test"
                        || method == "match"
                        || method.starts_with("isuuid")
                        || method.starts_with("isvalid")
                        || method == "validate"
                        || method.contains("uuid"))
                {
                    self.seen(st, Obs::KeyCheck(KeyCheck::Charset), line(cond));
                    return (Some(Cond::KeyInvalid), true);
                }
                if receiver_on_key && method == "test" {
                    return (None, false);
                }
                if on_key && matches!(method.as_str(), "has" | "get" | "exists" | "contains") {
                    return (Some(Cond::Duplicate), false);
                }
                if matches!(method.as_str(), "timingsafeequal" | "equals" | "isequal")
                    && words::hash(self.text(cond))
                {
                    self.seen(st, Obs::HashCompared, line(cond));
                    return (Some(Cond::HashMismatch), true);
                }
                (None, false)
            }
            "binary_expression" => {
                let op = cond.field("operator").map(|o| self.text(o)).unwrap_or("");
                let (Some(l), Some(r)) = (cond.field("left"), cond.field("right")) else {
                    return (None, false);
                };
                if matches!(op, "||" | "&&") {
                    // Each side as the condition its branch runs under; the more telling wins.
                    let then_of = |(c, neg): (Option<Cond>, bool)| match (c, neg) {
                        (Some(c), false) => Some(c),
                        (Some(c), true) => opposite(c),
                        (None, _) => None,
                    };
                    let a = then_of(self.classify(l, st, key_lines));
                    let b = then_of(self.classify(r, st, key_lines));
                    if op == "&&" && (a == Some(Cond::KeyPresent) || b == Some(Cond::KeyPresent)) {
                        // `if (key && …)`: without a key the request goes on unprotected.
                        self.seen(st, Obs::KeyMissingProceeds, line(cond));
                    }
                    let best = match (a, b) {
                        (Some(x), Some(y)) => Some(Cond::more_specific(x, y)),
                        (x, y) => x.or(y),
                    };
                    return (best, false);
                }
                let (lt, rt) = (self.text(l), self.text(r));
                let negated_eq = matches!(op, "!==" | "!=");
                let eq = matches!(op, "===" | "==" | "!==" | "!=");
                // Fingerprints.
                if eq && (words::hash(lt) || words::hash(rt)) {
                    self.seen(st, Obs::HashCompared, line(cond));
                    return (Some(Cond::HashMismatch), !negated_eq);
                }
                // Status guards: `res.statusCode >= 500`, `status < 400`.
                let status_side = |t: &str| {
                    let w = words::split(t);
                    w.iter().any(|x| x == "status" || x == "statuscode")
                };
                let num = |t: &str| t.trim().parse::<u32>().ok();
                if let Some((s, n)) = if status_side(lt) {
                    num(rt).map(|n| (op, n))
                } else if status_side(rt) {
                    num(lt).map(|n| (flip(op), n))
                } else {
                    None
                } && (200..=599).contains(&n)
                {
                    self.seen(st, Obs::StatusGuard, line(cond));
                    return match s {
                        ">=" | ">" if n >= 499 => (Some(Cond::ServerError), false),
                        "<" | "<=" => (Some(Cond::ServerError), true),
                        ">=" | ">" => (None, false),
                        _ => (None, false),
                    };
                }
                // In-progress states.
                let lit_side = |t: &str| {
                    (t.starts_with('\'')
                        || t.starts_with('"')
                        || t.starts_with('`')
                        || t.contains("::")
                        || t.contains('.'))
                        && words::in_progress(t)
                };
                if eq && (lit_side(lt) || lit_side(rt)) {
                    return (Some(Cond::InProgress), negated_eq);
                }
                if eq
                    && (rt == "null" || rt == "undefined")
                    && l.kind() == "member_expression"
                    && l.field("property").is_some_and(|p| {
                        words::response(self.text(p))
                            || matches!(self.text(p), "completedAt" | "completed_at")
                    })
                {
                    return (Some(Cond::InProgress), negated_eq);
                }
                // Checks on the key.
                let key_len = |t: &str| {
                    (t.ends_with(".length") || t.ends_with(".length()"))
                        && st.key_vars.iter().any(|k| t.starts_with(k.as_str()))
                };
                if key_len(lt) || key_len(rt) {
                    let zero = lt == "0" || rt == "0";
                    if zero {
                        self.seen(st, Obs::KeyCheck(KeyCheck::Empty), line(cond));
                        return (Some(Cond::KeyMissing), false);
                    }
                    self.seen(st, Obs::KeyCheck(KeyCheck::Length), line(cond));
                    return (Some(Cond::KeyInvalid), matches!(op, "<=" | "<") && !zero);
                }
                let on_key = |t: &str| st.key_vars.contains(t.trim());
                if eq && (on_key(lt) || on_key(rt)) {
                    let other = if on_key(lt) { rt } else { lt };
                    if matches!(other, "undefined" | "null" | "''" | "\"\"") {
                        self.seen(st, Obs::KeyCheck(KeyCheck::Empty), line(cond));
                        return (Some(Cond::KeyMissing), negated_eq);
                    }
                }
                if eq
                    && l.kind() == "unary_expression"
                    && lt.starts_with("typeof")
                    && on_key(lt.trim_start_matches("typeof").trim())
                {
                    return (Some(Cond::KeyMissing), !negated_eq);
                }
                // A claim's row count or a lookup's emptiness.
                let root = |t: &str| {
                    t.split(['.', '[', '('])
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string()
                };
                let zeroish = |t: &str| matches!(t, "0" | "null" | "undefined" | "false");
                if eq && (zeroish(rt) || zeroish(lt)) {
                    let side = if zeroish(rt) { lt } else { rt };
                    let r = root(side);
                    if st.claim_vars.contains(&r) {
                        return (Some(Cond::Duplicate), negated_eq);
                    }
                    if st.found_vars.contains(&r) {
                        return (Some(Cond::Duplicate), !negated_eq);
                    }
                }
                (None, false)
            }
            "member_expression" => {
                let t = self.text(cond);
                let root = t.split(['.', '[', '(']).next().unwrap_or("");
                // `result.ok` of the handler's result: it did not fail.
                if st.result_vars.contains(root)
                    && cond.field("property").is_some_and(|p| self.text(p) == "ok")
                {
                    return (Some(Cond::ServerError), true);
                }
                if st.found_vars.contains(root) {
                    (Some(Cond::Duplicate), false)
                } else {
                    (None, false)
                }
            }
            _ => (None, false),
        }
    }

    /// The HTTP status a `TRPCError`'s options name (`{ code: 'BAD_REQUEST' }` → 400).
    fn trpc_error_status(&self, args: Node<'t>) -> Option<u16> {
        let mut c = args.walk();
        let opts = args.named_children(&mut c).find(|a| a.kind() == "object")?;
        let mut c2 = opts.walk();
        let code = opts.named_children(&mut c2).find_map(|p| {
            (p.kind() == "pair" && p.field("key").is_some_and(|k| self.text(k) == "code"))
                .then(|| p.field("value"))
                .flatten()
        })?;
        (code.kind() == "string")
            .then(|| crate::facts::key::named_status(&self.string_value(code)))
            .flatten()
    }

    fn scan_call(&mut self, n: Node<'t>, st: &mut State, key_lines: &HashSet<u32>) {
        let Some(callee) = n.field("function") else {
            return self.scan_children(n, st, key_lines);
        };
        let args = n.field("arguments");
        let arg_nodes: Vec<Node<'t>> = match args {
            Some(a) if a.kind() == "arguments" => {
                let mut c = a.walk();
                a.named_children(&mut c)
                    .filter(|x| x.kind() != "comment")
                    .collect()
            }
            Some(a) => vec![a],
            None => vec![],
        };
        let callee_text = self.text(callee).to_string();
        let (receiver, method) = match callee.kind() {
            "member_expression" => (
                callee
                    .field("object")
                    .map(|o| self.text(o).to_string())
                    .unwrap_or_default(),
                callee
                    .field("property")
                    .map(|p| self.text(p).to_string())
                    .unwrap_or_default(),
            ),
            _ => (String::new(), callee_text.clone()),
        };
        let at = line(callee.field("property").unwrap_or(callee));
        let lower = method.to_ascii_lowercase();
        let first_lit = arg_nodes
            .first()
            .filter(|a| matches!(a.kind(), "string" | "template_string"))
            .map(|a| self.string_value(*a));

        // Statuses.
        let num_arg = |i: usize| arg_nodes.get(i).and_then(|a| status_code(self.text(*a)));
        let code = match lower.as_str() {
            "status" | "sendstatus" | "code" | "writehead" => {
                num_arg(0).or_else(|| arg_nodes.first().and_then(|a| self.status_const(*a)))
            }
            "json" | "body" | "text" | "newresponse"
                if receiver == "c" || receiver.ends_with("Response") =>
            {
                num_arg(1)
            }
            "throw" | "createerror" | "httperror" | "httperrors" => num_arg(0),
            // @fastify/sensible: `reply.conflict()`, `reply.unprocessableEntity()`.
            _ if matches!(receiver.as_str(), "reply" | "res" | "this.reply") => {
                crate::facts::key::named_status(&method)
            }
            _ => None,
        };
        if let Some(code) = code {
            self.status(st, code, at);
        }
        // The protected handler.
        let runs_handler = arg_nodes.is_empty() && runs_handler(self.text(n));
        if runs_handler {
            match st.cond {
                Some(Cond::KeyMissing) => self.seen(st, Obs::KeyMissingProceeds, at),
                Some(Cond::KeyInvalid) => {}
                _ => self.seen(st, Obs::RunsHandler, at),
            }
        }
        // Fingerprints computed.
        if (lower == "digest"
            || lower.contains("sha256")
            || lower.contains("fingerprint")
            || (lower.contains("hash") && !lower.contains("hashset") && !lower.contains("hashmap")))
            && !logger_like(&receiver)
        {
            self.seen(st, Obs::HashComputed, at);
        }
        // A stored response sent back.
        let sends = matches!(
            lower.as_str(),
            "status"
                | "json"
                | "send"
                | "end"
                | "sendstatus"
                | "code"
                | "body"
                | "set"
                | "header"
                | "writehead"
                | "of"
        ) && (receiver.is_empty()
            || ["res", "reply", "response", "c", "ctx"].iter().any(|r| {
                receiver == *r
                    || receiver.starts_with(&format!("{r}."))
                    || receiver.starts_with(&format!("{r}["))
            })
            || lower == "of"
            || callee_text.ends_with("Response.json"));
        if sends && arg_nodes.iter().any(|a| self.stored_member(*a, st)) {
            self.seen(st, Obs::Replay, at);
        }
        if (callee_text.ends_with("Response.json") || callee_text == "new Response")
            && let Some(opts) = arg_nodes.get(1)
            && self.stored_member(*opts, st)
        {
            self.seen(st, Obs::Replay, at);
        }
        // Logging a stored or captured response.
        if logger_like(&receiver)
            && matches!(
                lower.as_str(),
                "log" | "info" | "debug" | "warn" | "error" | "trace"
            )
            && arg_nodes.iter().any(|a| {
                let t = self.text(*a);
                words::response(t) && !t.starts_with("req.body") && !t.contains("err")
            })
        {
            self.seen(st, Obs::LogsResponse, at);
        }
        // Schema checks on the key (`z.string().uuid().max(255).parse(key)`).
        if matches!(
            lower.as_str(),
            "parse" | "safeparse" | "validate" | "assert"
        ) && arg_nodes
            .iter()
            .any(|a| self.mentions_key(*a, st, key_lines))
        {
            if receiver.contains(".max(") || receiver.contains(".length(") {
                self.seen(st, Obs::KeyCheck(KeyCheck::Length), at);
            }
            if receiver.contains(".uuid(") || receiver.contains(".regex(") {
                self.seen(st, Obs::KeyCheck(KeyCheck::Charset), at);
            }
        }

        // The call itself, for the linker.
        let mut fields = Vec::new();
        for a in &arg_nodes {
            self.collect_fields(*a, &mut fields, 0, st);
        }
        fields.sort();
        fields.dedup();
        let arg_text: String = arg_nodes
            .iter()
            .map(|a| self.text(*a))
            .collect::<Vec<_>>()
            .join(" ")
            .replace("=>", " ");
        let upper = arg_text.to_ascii_uppercase();
        let has_token = |tok: &str| {
            arg_nodes.iter().any(|a| {
                matches!(a.kind(), "string") && self.string_value(*a).eq_ignore_ascii_case(tok)
            })
        };
        let field = |name: &str| fields.iter().any(|f| f.eq_ignore_ascii_case(name));
        let nx = has_token("NX")
            || field("nx")
            || lower == "setnx"
            || lower == "hsetnx"
            || upper.contains(" NX")
            // DynamoDB's conditional write: only when no item has the key.
            || upper.contains("ATTRIBUTE_NOT_EXISTS(");
        let ttl = has_token("EX")
            || has_token("PX")
            || has_token("EXAT")
            || has_token("PXAT")
            || [
                "ex",
                "px",
                "ttl",
                "expiration",
                "expirationTtl",
                "maxAge",
                "exat",
                "pxat",
            ]
            .iter()
            .any(|f| field(f))
            || matches!(lower.as_str(), "setex" | "psetex");
        let compares = [
            "lt",
            "lte",
            "gt",
            "gte",
            "$lt",
            "$lte",
            "LessThan",
            "LessThanOrEqual",
            "<",
            ">",
        ]
        .iter()
        .any(|c| {
            field(c)
                || field(c.trim_start_matches('$'))
                || arg_text.contains(&format!("{c}("))
                || (c.len() == 1 && arg_text.contains(c))
        });
        let time_filter = st.in_timer || (compares && words::age(&arg_text));
        let f = *st.fns.last().unwrap_or(&0);
        let ctx = if st.cond == Some(Cond::ServerError)
            && matches!(st.ctx, Ctx::Main | Ctx::AfterHandler)
        {
            Ctx::Failure
        } else {
            st.ctx
        };
        let on_key = arg_nodes
            .iter()
            .any(|a| !is_fn(a.kind()) && self.mentions_key(*a, st, key_lines));
        let mut top = n;
        while let Some(p) = top.parent() {
            let chained = match p.kind() {
                "member_expression" => p.field("object") == Some(top),
                "call_expression" => p.field("function") == Some(top),
                "await_expression" | "parenthesized_expression" | "non_null_expression" => true,
                _ => false,
            };
            if !chained {
                break;
            }
            top = p;
        }
        self.module.functions[f].key_calls.push(KeyCall {
            line: at,
            chain_line: line(top),
            method: method.clone(),
            receiver: receiver.chars().take(120).collect(),
            literal: first_lit.map(|l| l.chars().take(2000).collect()),
            fields,
            nx,
            ttl,
            time_filter,
            after_await: st.saw_await,
            on_key,
            ctx,
            cond: st.cond,
        });

        // What the callback arguments run as.
        let first_str = arg_nodes
            .first()
            .filter(|a| a.kind() == "string")
            .map(|a| self.string_value(*a));
        let cb_ctx = match lower.as_str() {
            "on" | "once" | "addlistener" | "addeventlistener" => match first_str.as_deref() {
                Some("finish") => Some(Ctx::AfterHandler),
                Some("close" | "aborted" | "abort") => Some(Ctx::Cancel),
                Some("error") => Some(Ctx::Failure),
                _ => None,
            },
            "onfinished" => Some(Ctx::AfterHandler),
            "tap" | "map" | "mergemap" | "switchmap" | "concatmap" if st.ctx == Ctx::Main => {
                Some(Ctx::AfterHandler)
            }
            "then" if callee_text.contains("next") || callee_text.contains("handle") => {
                Some(Ctx::AfterHandler)
            }
            "catcherror" | "catch" => Some(Ctx::Failure),
            "finalize" | "finally" => Some(Ctx::Finally),
            _ => None,
        };
        let timer = matches!(lower.as_str(), "settimeout" | "setinterval" | "schedule");
        self.scan(callee, st, key_lines);
        let saved_timer = st.in_timer;
        st.in_timer |= timer;
        for a in arg_nodes {
            if is_fn(a.kind()) && cb_ctx.is_some() {
                self.scan_under(a, st, key_lines, cb_ctx, None);
            } else {
                self.scan(a, st, key_lines);
            }
        }
        st.in_timer = saved_timer;
    }

    /// Object keys (nested) and plain names in an argument, lower-cased words kept whole.
    fn collect_fields(&self, n: Node<'t>, out: &mut Vec<String>, depth: usize, st: &State) {
        if depth > 8 || out.len() > 64 || is_fn(n.kind()) {
            return;
        }
        match n.kind() {
            "pair" => {
                if let Some(k) = n.field("key") {
                    out.push(self.property_name(k));
                }
                if let Some(v) = n.field("value") {
                    self.collect_fields(v, out, depth + 1, st);
                }
            }
            "shorthand_property_identifier" | "identifier" | "property_identifier" => {
                let name = self.text(n);
                out.push(name.to_string());
                // A record built earlier in the function: its keys are what gets written.
                if let Some(keys) = st.obj_vars.get(name) {
                    out.extend(keys.iter().cloned());
                }
            }
            "template_string" => {
                out.push(self.string_value(n));
                let mut c = n.walk();
                for x in n.named_children(&mut c) {
                    self.collect_fields(x, out, depth + 1, st);
                }
            }
            "string" | "number" | "comment" => {}
            _ => {
                let mut c = n.walk();
                for x in n.named_children(&mut c) {
                    self.collect_fields(x, out, depth + 1, st);
                }
            }
        }
    }
}

/// `console`, `logger`, `this.logger`, `req.log`, `fastify.log`.
fn logger_like(receiver: &str) -> bool {
    let r = receiver.to_ascii_lowercase();
    let last = r.rsplit('.').next().unwrap_or("");
    matches!(last, "console" | "logger" | "log" | "pino" | "winston") || last.ends_with("logger")
}

/// A call that runs the protected handler: `next()`, `next.handle()`, `handler()`.
fn runs_handler(call: &str) -> bool {
    let c: String = call.chars().filter(|c| !c.is_whitespace()).collect();
    matches!(
        c.as_str(),
        "next()" | "next.handle()" | "next.run()" | "handler()" | "next.call()"
    )
}

fn strip_await(n: Node) -> Node {
    let mut n = n;
    while matches!(
        n.kind(),
        "await_expression" | "parenthesized_expression" | "as_expression" | "non_null_expression"
    ) {
        match n.named_child(0) {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

fn flip(op: &str) -> &str {
    match op {
        "<" => ">",
        ">" => "<",
        "<=" => ">=",
        ">=" => "<=",
        o => o,
    }
}

/// What the `else` of a test runs under.
fn opposite(c: Cond) -> Option<Cond> {
    match c {
        Cond::KeyMissing => Some(Cond::KeyPresent),
        Cond::KeyPresent => Some(Cond::KeyMissing),
        _ => None,
    }
}
