//! Where an idempotency key comes from, read from the syntax around the call that passes it.
//!
//! The methodology wants the key made once per intent and reused by every retry. What decides
//! that is where the expression that makes the key sits relative to the request: inside the
//! retry loop or a retry callback (a new key per attempt), in the function that sends the
//! request (a new key per call), in the submit handler or once before the loop (once per
//! intent), or nowhere in view (a parameter, state, storage). Identifiers are followed to their
//! declarations in the file; the judgement is per call and recorded as a [`SentKey`] (a key this
//! call passes on) or a [`KeyArg`] (a fresh value passed to a helper that may send it).

use super::FieldExt;
use super::eval::{Chain, Decl, Evaluator, line};
use crate::facts::KeyOrigin;
use crate::program::*;
use crate::text::{code, domain_id_name, intent_name, last_ident, url_path};
use tree_sitter::Node;

/// What a key expression is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// A UUID, nanoid, random bytes: new on every evaluation.
    Random,
    /// `Date.now()`, `Math.random()`, `new Date()`.
    Clock,
    DomainId,
    /// A hash of the request body.
    ContentHash,
    /// A parameter of a function.
    Param(FnId, usize),
    /// `localStorage.getItem(..)`.
    Stored,
    /// React state, a ref, a memo.
    Hook,
    /// A field or property holding a key (`this.idempotencyKey`, `form.key`).
    Field,
    /// The inbound request's key (a server forwarding or deriving from it).
    Inbound,
    /// A string literal.
    Constant,
    Unknown,
}

/// A key judged where it is passed on.
struct Judged {
    origin: KeyOrigin,
    key_line: u32,
    detail: String,
    key_function: String,
}

struct Trace<'t> {
    source: Source,
    /// Where the key is made: the call that generates it, or the expression that names it.
    node: Node<'t>,
    /// A literal part besides the key material (a purpose: `${key}:charge`).
    purpose: bool,
    /// A parameter or variable named like a key (`inboundKey`): with a purpose, the inbound key.
    keyish: bool,
}

/// Callees whose result is fresh on every call.
const RANDOM_MAKERS: &[&str] = &[
    "uuid",
    "uuidv4",
    "uuidv7",
    "v4",
    "v7",
    "nanoid",
    "cuid",
    "cuid2",
    "createid",
    "ulid",
    "randomuuid",
    "randombytes",
    "getrandomvalues",
    "generateid",
    "generatekey",
    "generateidempotencykey",
    "newidempotencykey",
    "createidempotencykey",
    "makeidempotencykey",
];

/// Header-less request functions: their default method is GET.
const FETCHERS: &[&str] = &["fetch", "$fetch", "ofetch", "ky", "axios", "got"];

/// Receivers that belong to a server's request or response, not a client.
const SERVER_ROOTS: &[&str] = &["res", "reply", "ctx", "response", "req", "request", "c"];

fn is_function_node(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function"
            | "function_expression"
            | "function"
            | "generator_function"
            | "function_declaration"
            | "generator_function_declaration"
            | "method_definition"
    )
}

fn contains(outer: Node, inner: Node) -> bool {
    outer.start_byte() <= inner.start_byte() && inner.end_byte() <= outer.end_byte()
}

/// The innermost function around `n` (not `n` itself), if any.
fn enclosing_fn(n: Node) -> Option<Node> {
    let mut cur = n.parent();
    while let Some(p) = cur {
        if is_function_node(p.kind()) {
            return Some(p);
        }
        cur = p.parent();
    }
    None
}

/// A name that holds an idempotency key.
fn key_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("idempot") || lower == "key" || lower.ends_with("key")
}

fn upper(s: &str) -> String {
    s.to_ascii_uppercase()
}

impl<'t> Evaluator<'t, '_> {
    fn short(&self, n: Node) -> String {
        let t: String = self
            .text(n)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if t.chars().count() > 60 {
            format!("{}…", t.chars().take(57).collect::<String>())
        } else {
            t
        }
    }

    fn fn_name(&self, f: Option<Node>) -> String {
        match f {
            Some(f) => self
                .fn_memo
                .get(&f.id())
                .map(|id| self.module.functions[*id].name.clone())
                .unwrap_or_else(|| "anonymous".into()),
            None => "<module>".into(),
        }
    }

    /// The function around `n` as a reader knows it: its name, `payOrder callback` for an
    /// anonymous function inside `payOrder`, `request interceptor`.
    pub(super) fn display_fn(&self, n: Node<'t>) -> String {
        let f = enclosing_fn(n);
        let name = self.fn_name(f);
        if name != "anonymous" {
            return name;
        }
        if self.in_interceptor(n) {
            return "request interceptor".into();
        }
        let mut cur = f.and_then(enclosing_fn);
        while let Some(g) = cur {
            let outer = self.fn_name(Some(g));
            if outer != "anonymous" {
                return format!("{outer} callback");
            }
            cur = enclosing_fn(g);
        }
        "callback".into()
    }

    /// A function passed to a retry wrapper: `pRetry(() => ..)`, `retry(async () => ..)`,
    /// `backOff(..)`, or given beside `retry: n` (`useMutation({ mutationFn, retry: 3 })`).
    fn retry_callback(&self, f: Node<'t>) -> Option<String> {
        let parent = f.parent()?;
        let retryish = |t: &str| {
            let last = t.rsplit('.').next().unwrap_or(t).to_ascii_lowercase();
            last.contains("retry") || last.contains("backoff")
        };
        match parent.kind() {
            "arguments" => {
                let call = parent.parent()?;
                let callee = call.field("function")?;
                let t = self.text(callee);
                retryish(t).then(|| t.to_string())
            }
            "pair" => {
                let obj = parent.parent()?;
                let mut cursor = obj.walk();
                let retries = obj.named_children(&mut cursor).any(|p| {
                    p.kind() == "pair"
                        && p.field("key")
                            .is_some_and(|k| matches!(self.text(k), "retry" | "retries"))
                        && p.field("value")
                            .is_some_and(|v| !matches!(self.text(v), "0" | "false"))
                });
                let call = obj.parent().filter(|a| a.kind() == "arguments")?.parent()?;
                let callee = call.field("function")?;
                retries.then(|| format!("{} retry", self.text(callee)))
            }
            _ => None,
        }
    }

    /// A loop that retries: its header names attempts or retries, or it runs until a `try`
    /// succeeds (`while (true) { try { … } catch { … } }`).
    fn retry_loop(&self, n: Node) -> bool {
        let header = match n.kind() {
            "for_statement" | "for_in_statement" => {
                let end = n
                    .field("body")
                    .map(|b| b.start_byte())
                    .unwrap_or(n.end_byte());
                self.src.get(n.start_byte()..end).unwrap_or("")
            }
            "while_statement" | "do_statement" => {
                n.field("condition").map(|c| self.text(c)).unwrap_or("")
            }
            _ => return false,
        };
        let lower = header.to_ascii_lowercase();
        if ["attempt", "retr", "tries", "backoff"]
            .iter()
            .any(|w| lower.contains(w))
        {
            return true;
        }
        let bare: String = lower.chars().filter(|c| !c.is_whitespace()).collect();
        let forever = matches!(bare.as_str(), "(true)" | "true" | "(1)" | "for(;;)");
        forever && self.text(n).contains("catch")
    }

    /// The retry construct (a retry loop, a retry callback) around both `a` and `b`, innermost
    /// first: (what, line).
    fn retry_around(&self, a: Node<'t>, b: Node<'t>) -> Option<(String, u32)> {
        let mut cur = a.parent();
        while let Some(p) = cur {
            if contains(p, b) {
                if self.retry_loop(p) {
                    return Some(("the retry loop".into(), line(p)));
                }
                if is_function_node(p.kind())
                    && let Some(name) = self.retry_callback(p)
                {
                    return Some((format!("the `{name}` callback"), line(p)));
                }
            }
            cur = p.parent();
        }
        None
    }

    /// Traces a key expression to what makes it. `scope` is the scope its identifiers are read in.
    fn trace(&self, n: Node<'t>, scope: usize, depth: usize) -> Trace<'t> {
        let unknown = Trace {
            source: Source::Unknown,
            node: n,
            purpose: false,
            keyish: false,
        };
        if depth > 8 {
            return unknown;
        }
        let of = |source| Trace {
            source,
            node: n,
            purpose: false,
            keyish: false,
        };
        match n.kind() {
            "parenthesized_expression"
            | "await_expression"
            | "non_null_expression"
            | "as_expression"
            | "satisfies_expression" => match n.named_child(0) {
                Some(inner) => self.trace(inner, scope, depth + 1),
                None => unknown,
            },
            "string" => of(Source::Constant),
            "identifier" | "shorthand_property_identifier" => {
                let name = self.text(n);
                let Some(s) = self.find_from(scope, name) else {
                    return unknown;
                };
                match self.decls.get(&(s, name.to_string())) {
                    Some(Decl::Param(f, i)) => {
                        if domain_id_name(name) {
                            of(Source::DomainId)
                        } else {
                            Trace {
                                keyish: key_name(name),
                                ..of(Source::Param(*f, *i))
                            }
                        }
                    }
                    Some(Decl::Var(decl)) => {
                        let Some(value) = decl.field("value") else {
                            return unknown;
                        };
                        let destructured =
                            decl.field("name").is_some_and(|p| p.kind() != "identifier");
                        let t = if destructured {
                            // `const [key] = useState(() => uuid())`: state, not a fresh value
                            match self.trace(value, s, depth + 1) {
                                t @ Trace {
                                    source: Source::Hook,
                                    ..
                                } => t,
                                _ => Trace {
                                    source: Source::Unknown,
                                    node: value,
                                    purpose: false,
                                    keyish: false,
                                },
                            }
                        } else {
                            self.trace(value, s, depth + 1)
                        };
                        if t.source == Source::Unknown && domain_id_name(name) {
                            return Trace {
                                source: Source::DomainId,
                                node: value,
                                purpose: false,
                                keyish: false,
                            };
                        }
                        t
                    }
                    None => unknown,
                }
            }
            "member_expression" => {
                let prop = n.field("property").map(|p| self.text(p)).unwrap_or("");
                let object = n.field("object");
                let obj_text = object.map(|o| self.text(o)).unwrap_or("");
                if matches!(obj_text, "localStorage" | "sessionStorage") {
                    return of(Source::Stored);
                }
                if prop == "current" {
                    return of(Source::Hook);
                }
                if domain_id_name(prop) {
                    return of(Source::DomainId);
                }
                if key_name(prop) {
                    let root = obj_text.split('.').next().unwrap_or("");
                    let server = SERVER_ROOTS.contains(&root);
                    return of(if server {
                        Source::Inbound
                    } else {
                        Source::Field
                    });
                }
                unknown
            }
            "subscript_expression" => {
                let index = n
                    .field("index")
                    .map(|i| self.text(i).trim_matches(['\'', '"', '`']).to_string())
                    .unwrap_or_default();
                let obj_text = n.field("object").map(|o| self.text(o)).unwrap_or("");
                if obj_text.ends_with("headers") && self.catalog.is_key_header(&index) {
                    return of(Source::Inbound);
                }
                unknown
            }
            "new_expression" => {
                let ctor = n.field("constructor").map(|c| self.text(c)).unwrap_or("");
                if ctor == "Date" {
                    of(Source::Clock)
                } else {
                    unknown
                }
            }
            "call_expression" => self.trace_call(n, scope, depth),
            "template_string" => {
                let mut parts = Vec::new();
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    if c.kind() == "template_substitution"
                        && let Some(e) = c.named_child(0)
                    {
                        parts.push(self.trace(e, scope, depth + 1));
                    }
                }
                if parts.is_empty() {
                    return of(Source::Constant);
                }
                // a literal part with letters: a purpose (`${key}:charge`)
                let literal = self.text(n).split("${").enumerate().any(|(i, part)| {
                    let lit = if i == 0 {
                        part
                    } else {
                        part.split_once('}').map(|(_, r)| r).unwrap_or("")
                    };
                    lit.chars().any(|ch| ch.is_alphabetic())
                });
                combine(n, parts, literal)
            }
            "binary_expression" => {
                let op = n.field("operator").map(|o| self.text(o)).unwrap_or("");
                let (Some(l), Some(r)) = (n.field("left"), n.field("right")) else {
                    return unknown;
                };
                match op {
                    "??" | "||" => {
                        let left = self.trace(l, scope, depth + 1);
                        if matches!(
                            left.source,
                            Source::Param(..)
                                | Source::Stored
                                | Source::Hook
                                | Source::Field
                                | Source::Inbound
                        ) {
                            left
                        } else {
                            self.trace(r, scope, depth + 1)
                        }
                    }
                    "+" => {
                        let (lt, rt) = (
                            self.trace(l, scope, depth + 1),
                            self.trace(r, scope, depth + 1),
                        );
                        let literal = [&lt, &rt].iter().any(|t| t.source == Source::Constant);
                        combine(n, vec![lt, rt], literal)
                    }
                    _ => unknown,
                }
            }
            _ => unknown,
        }
    }

    fn trace_call(&self, n: Node<'t>, scope: usize, depth: usize) -> Trace<'t> {
        let of = |source| Trace {
            source,
            node: n,
            purpose: false,
            keyish: false,
        };
        let unknown = of(Source::Unknown);
        let Some(callee) = n.field("function") else {
            return unknown;
        };
        let ct: String = self.text(callee).split_whitespace().collect();
        let last = ct.rsplit('.').next().unwrap_or(&ct).to_string();
        let last_lower = last.to_ascii_lowercase();
        let args: Vec<Node<'t>> = n
            .field("arguments")
            .map(|a| {
                let mut cursor = a.walk();
                a.named_children(&mut cursor).collect()
            })
            .unwrap_or_default();
        let first_str = args
            .first()
            .filter(|a| a.kind() == "string")
            .map(|a| self.text(*a).trim_matches(['\'', '"']).to_string());
        if matches!(last.as_str(), "get" | "header" | "getHeader")
            && first_str
                .as_deref()
                .is_some_and(|h| self.catalog.is_key_header(h))
        {
            let root = ct.split('.').next().unwrap_or("");
            return of(
                if SERVER_ROOTS.contains(&root) || root.ends_with("headers") {
                    Source::Inbound
                } else {
                    Source::Stored
                },
            );
        }
        if last == "getItem" || ct.to_ascii_lowercase().contains("storage.get") {
            return of(Source::Stored);
        }
        if matches!(
            last.as_str(),
            "useState" | "useRef" | "useMemo" | "useCallback" | "ref" | "shallowRef" | "computed"
        ) {
            return of(Source::Hook);
        }
        if matches!(ct.as_str(), "Date.now" | "Math.random" | "performance.now")
            || ct.starts_with("newDate()")
            || ct.starts_with("Math.random()")
            || ct.starts_with("Date.now()")
        {
            return of(Source::Clock);
        }
        if RANDOM_MAKERS.contains(&last_lower.as_str()) {
            return of(Source::Random);
        }
        let lower = ct.to_ascii_lowercase();
        if lower.contains("createhmac") {
            return unknown;
        }
        let hashing = [
            "createhash",
            "sha256",
            "sha1",
            "sha512",
            "md5",
            "objecthash",
            "hash",
        ]
        .iter()
        .any(|h| lower.contains(h))
            || last == "digest";
        if hashing {
            // every argument along the chain: createHash('sha256').update(x).digest('hex')
            let mut material = Vec::new();
            let mut literal = false;
            let mut cur = Some(n);
            while let Some(call) = cur {
                if let Some(a) = call.field("arguments") {
                    let mut cursor = a.walk();
                    for arg in a.named_children(&mut cursor) {
                        let t = self.text(arg);
                        if t.contains("JSON.stringify")
                            || t.split(|c: char| !c.is_alphanumeric())
                                .any(|w| w == "body" || w == "payload")
                        {
                            return of(Source::ContentHash);
                        }
                        let tr = self.trace(arg, scope, depth + 1);
                        if tr.source == Source::Constant {
                            let v = t.trim_matches(['\'', '"', '`']).to_ascii_lowercase();
                            literal |= !matches!(
                                v.as_str(),
                                "sha256"
                                    | "sha1"
                                    | "sha512"
                                    | "md5"
                                    | "hex"
                                    | "base64"
                                    | "base64url"
                                    | "utf8"
                                    | "utf-8"
                                    | "sha-256"
                            );
                        }
                        literal |= tr.purpose;
                        material.push(tr);
                    }
                }
                cur = call
                    .field("function")
                    .and_then(|f| f.field("object"))
                    .filter(|o| o.kind() == "call_expression");
            }
            let mut t = combine(n, material, literal);
            if t.source == Source::Constant {
                t.source = Source::Unknown;
            }
            t.node = n;
            return t;
        }
        // transparent conversions: String(x), x.toString(), encodeURIComponent(x)
        if matches!(last.as_str(), "String" | "encodeURIComponent")
            && let Some(a) = args.first()
        {
            return self.trace(*a, scope, depth + 1);
        }
        if matches!(
            last.as_str(),
            "toString"
                | "trim"
                | "slice"
                | "substring"
                | "toLowerCase"
                | "toUpperCase"
                | "replace"
                | "replaceAll"
                | "padStart"
        ) && let Some(obj) = callee.field("object")
        {
            return self.trace(obj, scope, depth + 1);
        }
        unknown
    }

    /// Judges a traced key against the request (or call) `at` that passes it on: its origin,
    /// the line that makes it, why, and the function that makes it.
    fn judge(&self, t: &Trace<'t>, at: Node<'t>) -> Judged {
        let key_line = line(t.node);
        let what = self.short(t.node);
        let cw = code(&what);
        let key_function = self.display_fn(t.node);
        let judged = |origin, detail: String| Judged {
            origin,
            key_line,
            detail,
            key_function: key_function.clone(),
        };
        match t.source {
            Source::Random | Source::Clock => {
                let clock = t.source == Source::Clock;
                let made = if clock {
                    format!("{cw} (the clock or `Math.random()`)")
                } else {
                    cw.clone()
                };
                if let Some((retry, l)) = self.retry_around(t.node, at) {
                    return judged(
                        KeyOrigin::PerAttempt,
                        format!(
                            "made by {made} in `{key_function}` inside {retry} (line {l}): every attempt sends a new key"
                        ),
                    );
                }
                if clock {
                    return judged(
                        KeyOrigin::Clock,
                        format!(
                            "made by {made} in `{key_function}`: it changes on every call, and two clients in the same millisecond share it"
                        ),
                    );
                }
                let gen_fn = enclosing_fn(t.node);
                let req_fn = enclosing_fn(at);
                // the request is retried around it, the key made once outside
                let mut cur = at.parent();
                while let Some(p) = cur {
                    if !contains(p, t.node) && gen_fn.is_some_and(|g| contains(g, p)) {
                        let retry = if self.retry_loop(p) {
                            Some(("the retry loop".to_string(), line(p)))
                        } else if is_function_node(p.kind()) {
                            self.retry_callback(p)
                                .map(|n| (format!("the `{n}` callback"), line(p)))
                        } else {
                            None
                        };
                        if let Some((retry, l)) = retry {
                            return judged(
                                KeyOrigin::OncePerIntent,
                                format!(
                                    "made once by {made} in `{key_function}` before {retry} (line {l}), which reuses it on every attempt"
                                ),
                            );
                        }
                    }
                    cur = p.parent();
                }
                let gen_name = self.fn_name(gen_fn);
                let same = gen_fn.map(|g| g.id()) == req_fn.map(|r| r.id());
                if intent_name(&gen_name) {
                    return judged(
                        KeyOrigin::OncePerIntent,
                        format!("made once per intent by {made} in the handler `{gen_name}`"),
                    );
                }
                if same {
                    let detail = if self.in_interceptor(at) {
                        format!(
                            "made by {made} in a request interceptor: every request, and every retry that runs the interceptors again, sends a new key"
                        )
                    } else {
                        format!(
                            "made by {made} in `{key_function}`, which sends the request: every call, so every retry by its callers, sends a new key"
                        )
                    };
                    return judged(KeyOrigin::PerCall, detail);
                }
                if gen_fn.is_none()
                    || gen_name
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_uppercase())
                {
                    // module level (one key for every request) or a component body (a new key on
                    // every render): neither is an intent, and neither is judged here
                    return judged(
                        KeyOrigin::Unknown,
                        format!(
                            "made by {made} in `{key_function}`, outside the function that sends it"
                        ),
                    );
                }
                judged(
                    KeyOrigin::Held,
                    format!(
                        "made once by {made} in `{key_function}` and reused by the function inside it that sends the request"
                    ),
                )
            }
            Source::DomainId => judged(
                KeyOrigin::DomainId,
                format!(
                    "taken from {cw}, a stable id of a domain object rather than of one intent"
                ),
            ),
            Source::ContentHash => judged(
                KeyOrigin::ContentHash,
                format!(
                    "hashed from the request body ({cw}): two real intents with the same body share it"
                ),
            ),
            Source::Param(..) => judged(
                KeyOrigin::PassedIn,
                format!("taken from the parameter {cw}: the caller makes it"),
            ),
            Source::Stored => judged(
                KeyOrigin::Persisted,
                format!("read from storage ({cw}), so a reload resends the same key"),
            ),
            Source::Hook | Source::Field => judged(
                KeyOrigin::Held,
                format!("kept across calls ({cw}: state, a ref or a field)"),
            ),
            Source::Inbound if t.purpose => judged(
                KeyOrigin::FromInboundKey,
                format!("derived from the inbound key and a purpose ({cw})"),
            ),
            Source::Inbound => judged(
                KeyOrigin::PassedIn,
                format!("forwarded from the inbound request ({cw})"),
            ),
            Source::Constant | Source::Unknown => judged(
                KeyOrigin::Unknown,
                format!("whose origin is not visible ({cw})"),
            ),
        }
    }

    /// The value of a key header or key option inside an argument: an object literal's pair
    /// (`'Idempotency-Key': k`, `idempotencyKey: k`), through `headers: {..}`, `new Headers({..})`
    /// and variables holding them. Returns the value, the scope to read it in, and whether it
    /// travels as a header.
    fn find_key(&self, n: Node<'t>, scope: usize, depth: usize) -> Option<(Node<'t>, usize, bool)> {
        if depth > 4 {
            return None;
        }
        match n.kind() {
            "object" => {
                let mut cursor = n.walk();
                let children: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
                for c in children {
                    match c.kind() {
                        "pair" => {
                            let (Some(k), Some(v)) = (c.field("key"), c.field("value")) else {
                                continue;
                            };
                            let key = self.property_name(k);
                            if self.catalog.is_key_header(&key) {
                                return Some((v, scope, true));
                            }
                            if self.catalog.is_key_option(&key) {
                                return Some((v, scope, false));
                            }
                            if key == "headers"
                                && let Some(found) = self.find_key(v, scope, depth + 1)
                            {
                                return Some(found);
                            }
                        }
                        "shorthand_property_identifier" => {
                            let key = self.text(c);
                            if self.catalog.is_key_option(key) {
                                return Some((c, scope, false));
                            }
                            if key == "headers"
                                && let Some(found) = self.find_key(c, scope, depth + 1)
                            {
                                return Some(found);
                            }
                        }
                        "spread_element" => {
                            if let Some(inner) = c.named_child(0)
                                && let Some(found) = self.find_key(inner, scope, depth + 1)
                            {
                                return Some(found);
                            }
                        }
                        _ => {}
                    }
                }
                None
            }
            "identifier" | "shorthand_property_identifier" => {
                let name = self.text(n);
                let s = self.find_from(scope, name)?;
                match self.decls.get(&(s, name.to_string()))? {
                    Decl::Var(decl) => {
                        let value = decl.field("value")?;
                        self.find_key(value, s, depth + 1)
                    }
                    Decl::Param(..) => None,
                }
            }
            "new_expression" => {
                let args = n.field("arguments")?;
                let first = args.named_child(0)?;
                self.find_key(first, scope, depth + 1)
            }
            "parenthesized_expression" | "as_expression" | "satisfies_expression" => {
                self.find_key(n.named_child(0)?, scope, depth + 1)
            }
            _ => None,
        }
    }

    /// A string or template argument, through a variable.
    fn url_of(&self, n: Node<'t>, scope: usize, depth: usize) -> Option<String> {
        if depth > 3 {
            return None;
        }
        match n.kind() {
            "string" => Some(url_path(self.text(n).trim_matches(['\'', '"']))),
            "template_string" => {
                let t = self.text(n);
                Some(url_path(t.get(1..t.len().saturating_sub(1)).unwrap_or("")))
            }
            "binary_expression" => {
                let l = n.field("left")?;
                let r = n.field("right")?;
                let left = self
                    .url_of(l, scope, depth + 1)
                    .unwrap_or_else(|| format!("{{{}}}", last_ident(self.text(l))));
                let right = self
                    .url_of(r, scope, depth + 1)
                    .unwrap_or_else(|| format!("{{{}}}", last_ident(self.text(r))));
                Some(url_path(&format!("{left}{right}")))
            }
            "identifier" => {
                let name = self.text(n);
                let s = self.find_from(scope, name)?;
                match self.decls.get(&(s, name.to_string()))? {
                    Decl::Var(decl) => self.url_of(decl.field("value")?, s, depth + 1),
                    Decl::Param(..) => None,
                }
            }
            "object" => {
                let mut cursor = n.walk();
                let pair = n.named_children(&mut cursor).find(|p| {
                    p.kind() == "pair"
                        && p.field("key")
                            .is_some_and(|k| self.property_name(k) == "url")
                })?;
                self.url_of(pair.field("value")?, scope, depth + 1)
            }
            _ => None,
        }
    }

    /// The `method` an options object names, through a variable.
    fn method_of(&self, n: Node<'t>, scope: usize, depth: usize) -> Option<String> {
        if depth > 3 {
            return None;
        }
        match n.kind() {
            "object" => {
                let mut cursor = n.walk();
                let pair = n.named_children(&mut cursor).find(|p| {
                    p.kind() == "pair"
                        && p.field("key")
                            .is_some_and(|k| self.property_name(k) == "method")
                })?;
                let v = pair.field("value")?;
                (v.kind() == "string").then(|| upper(self.text(v).trim_matches(['\'', '"'])))
            }
            "identifier" => {
                let name = self.text(n);
                let s = self.find_from(scope, name)?;
                match self.decls.get(&(s, name.to_string()))? {
                    Decl::Var(decl) => self.method_of(decl.field("value")?, s, depth + 1),
                    Decl::Param(..) => None,
                }
            }
            _ => None,
        }
    }

    /// Is this call inside a request interceptor (`api.interceptors.request.use(cb)`)?
    fn in_interceptor(&self, n: Node<'t>) -> bool {
        enclosing_fn(n)
            .and_then(|f| f.parent())
            .filter(|a| a.kind() == "arguments")
            .and_then(|a| a.parent())
            .and_then(|c| c.field("function"))
            .is_some_and(|c| self.text(c).contains("interceptors"))
    }

    /// Records the key a call passes on (a header or a key option), and key-like values it
    /// passes to a helper.
    pub(super) fn keys_at_call(
        &mut self,
        c: &Chain,
        args: &[Val],
        arg_nodes: &[Node<'t>],
        node: Node<'t>,
        call_line: u32,
    ) {
        let scope = self.cur_scope();
        let last = c.path.last().map(String::as_str).unwrap_or("");
        // `headers.set('Idempotency-Key', k)`, `xhr.setRequestHeader(..)`
        let setter = matches!(last, "set" | "append" | "setRequestHeader")
            && !SERVER_ROOTS.contains(&c.root_name.as_str())
            && arg_nodes.first().is_some_and(|a| {
                a.kind() == "string"
                    && self
                        .catalog
                        .is_key_header(self.text(*a).trim_matches(['\'', '"']))
            });
        let found = if setter {
            arg_nodes.get(1).map(|v| (*v, scope, true))
        } else {
            arg_nodes.iter().find_map(|a| self.find_key(*a, scope, 0))
        };
        if let Some((value, vscope, header)) = found {
            let t = self.trace(value, vscope, 0);
            let j = self.judge(&t, node);
            let param = match t.source {
                Source::Param(f, i) => Some((f, i)),
                _ => None,
            };
            let mut path_param = None;
            let request = header.then(|| {
                if setter {
                    if self.in_interceptor(node) {
                        (Some("ANY".to_string()), "*".to_string())
                    } else {
                        (None, "{url}".to_string())
                    }
                } else {
                    let method = if matches!(
                        last.to_ascii_lowercase().as_str(),
                        "post" | "put" | "patch" | "delete"
                    ) {
                        Some(upper(last))
                    } else {
                        arg_nodes
                            .iter()
                            .find_map(|a| self.method_of(*a, scope, 0))
                            .or_else(|| {
                                let name = if c.path.is_empty() {
                                    c.root_name.as_str()
                                } else {
                                    last
                                };
                                FETCHERS.contains(&name).then(|| "GET".to_string())
                            })
                    };
                    let first = arg_nodes.first();
                    if let Some(a) = first.filter(|a| a.kind() == "identifier") {
                        let name = self.text(*a);
                        if let Some(s) = self.find_from(scope, name)
                            && let Some(Decl::Param(f, i)) = self.decls.get(&(s, name.to_string()))
                        {
                            path_param = Some((*f, *i));
                        }
                    }
                    let path = first
                        .and_then(|a| self.url_of(*a, scope, 0))
                        .unwrap_or_else(|| "{url}".into());
                    (method, path)
                }
            });
            let text = self.short(t.node);
            let function = self.display_fn(node);
            let f = self.cur_fn();
            self.module.functions[f].sent_keys.push(SentKey {
                fresh: matches!(t.source, Source::Random | Source::Clock),
                line: call_line,
                origin: j.origin,
                param,
                text,
                key_line: j.key_line,
                detail: j.detail,
                function,
                key_function: j.key_function,
                request,
                path_param,
            });
        }
        // Key-like values handed to a helper that may send them as its key.
        for (i, a) in arg_nodes.iter().enumerate() {
            if !self.key_like(*a, scope) {
                continue;
            }
            let t = self.trace(*a, scope, 0);
            if matches!(t.source, Source::Unknown | Source::Constant) {
                continue;
            }
            let j = self.judge(&t, node);
            let param = match t.source {
                Source::Param(f, i) => Some((f, i)),
                _ => None,
            };
            let text = self.short(t.node);
            let function = self.display_fn(node);
            let f = self.cur_fn();
            self.module.functions[f].key_args.push(KeyArg {
                callee: c.val.clone(),
                args: args.to_vec(),
                index: i,
                line: call_line,
                origin: j.origin,
                param,
                text,
                key_line: j.key_line,
                detail: j.detail,
                function,
                key_function: j.key_function,
            });
        }
    }

    /// A cheap look before tracing an argument: a variable named like a key, or an expression
    /// (or a variable's value) that names a generator.
    fn key_like(&self, n: Node<'t>, scope: usize) -> bool {
        if n.kind() == "identifier" && key_name(self.text(n)) {
            return true;
        }
        self.looks_fresh(n, scope)
    }

    /// A cheap look before tracing: does the argument (or the variable's value) name a generator?
    fn looks_fresh(&self, n: Node<'t>, scope: usize) -> bool {
        let text = match n.kind() {
            "identifier" => {
                let name = self.text(n);
                let Some(s) = self.find_from(scope, name) else {
                    return false;
                };
                match self.decls.get(&(s, name.to_string())) {
                    Some(Decl::Var(d)) => d.field("value").map(|v| self.text(v)).unwrap_or(""),
                    _ => return false,
                }
            }
            "call_expression" | "template_string" | "binary_expression" => self.text(n),
            _ => return false,
        };
        if text.len() > 400 {
            return false;
        }
        let lower = text.to_ascii_lowercase();
        [
            "uuid",
            "nanoid",
            "cuid",
            "ulid",
            "date.now",
            "math.random",
            "randombytes",
            "createid",
        ]
        .iter()
        .any(|w| lower.contains(w))
    }

    /// `config.headers['Idempotency-Key'] = k` (an interceptor, axios defaults, a headers object).
    pub(super) fn key_assignment(&mut self, left: Node<'t>, right: Node<'t>, node: Node<'t>) {
        let (object, name) = match left.kind() {
            "subscript_expression" => (
                left.field("object"),
                left.field("index")
                    .map(|i| self.text(i).trim_matches(['\'', '"', '`']).to_string()),
            ),
            "member_expression" => (
                left.field("object"),
                left.field("property").map(|p| self.text(p).to_string()),
            ),
            _ => return,
        };
        let (Some(object), Some(name)) = (object, name) else {
            return;
        };
        let obj_text = self.text(object);
        let root = obj_text.split(['.', '[']).next().unwrap_or("");
        if !obj_text.contains("headers")
            || SERVER_ROOTS.contains(&root)
            || !self.catalog.is_key_header(&name)
        {
            return;
        }
        let scope = self.cur_scope();
        let t = self.trace(right, scope, 0);
        let j = self.judge(&t, node);
        let param = match t.source {
            Source::Param(f, i) => Some((f, i)),
            _ => None,
        };
        let every = self.in_interceptor(node) || obj_text.contains("defaults");
        let request = if every {
            (Some("ANY".to_string()), "*".to_string())
        } else {
            (None, "{url}".to_string())
        };
        let text = self.short(t.node);
        let function = self.display_fn(node);
        let f = self.cur_fn();
        self.module.functions[f].sent_keys.push(SentKey {
            fresh: matches!(t.source, Source::Random | Source::Clock),
            line: line(node),
            origin: j.origin,
            param,
            text,
            key_line: j.key_line,
            detail: j.detail,
            function,
            key_function: j.key_function,
            request: Some(request),
            path_param: None,
        });
    }

    /// A hash of the request body (`createHash('sha256').update(JSON.stringify(req.body))`)
    /// that the same function then hands to a store (a lookup, a `SET`, a create): a dedup key
    /// made from the content.
    pub(super) fn body_hash(&mut self, c: &Chain, node: Node<'t>) {
        let last = c
            .path
            .last()
            .map(String::as_str)
            .unwrap_or(c.root_name.as_str());
        if !matches!(
            last,
            "digest" | "sha256" | "hash" | "objectHash" | "hashObject"
        ) {
            return;
        }
        // the outermost call of the chain only (`.digest()` after `.update()`)
        if node
            .parent()
            .is_some_and(|p| p.kind() == "member_expression")
        {
            return;
        }
        let text = self.text(node);
        if text.contains("createHmac") || text.len() > 400 {
            return;
        }
        let body = [
            "req.body",
            "request.body",
            "ctx.request.body",
            "JSON.stringify(body",
            "JSON.stringify(payload",
        ]
        .iter()
        .any(|b| text.contains(b));
        if !body {
            return;
        }
        let mut holder = node.parent();
        while let Some(p) = holder.filter(|p| {
            matches!(
                p.kind(),
                "await_expression" | "parenthesized_expression" | "as_expression"
            )
        }) {
            holder = p.parent();
        }
        let Some(name) = holder
            .filter(|p| p.kind() == "variable_declarator")
            .and_then(|d| d.field("name"))
            .filter(|n| n.kind() == "identifier")
            .map(|n| self.text(n))
        else {
            return;
        };
        let Some(func) = enclosing_fn(node) else {
            return;
        };
        if self.stored_after(func, name, node.end_byte()) {
            let f = self.cur_fn();
            self.module.functions[f].body_hashes.push(line(node));
        }
    }

    /// Does a call after `after` in `func` hand `name` to a store (a lookup, a set, a create)?
    fn stored_after(&self, func: Node<'t>, name: &str, after: usize) -> bool {
        const STORE: &[&str] = &[
            "set",
            "setnx",
            "setNX",
            "get",
            "exists",
            "has",
            "add",
            "sadd",
            "findOne",
            "findFirst",
            "findUnique",
            "findUniqueOrThrow",
            "findOneBy",
            "count",
            "create",
            "insert",
            "upsert",
            "findOrCreate",
            "query",
            "execute",
            "put",
            "putItem",
            "where",
        ];
        let mut cursor = func.walk();
        let mut stack = vec![func];
        let mut seen = 0;
        while let Some(n) = stack.pop() {
            seen += 1;
            if seen > 50_000 {
                return false;
            }
            if n.kind() == "call_expression"
                && n.start_byte() >= after
                && let (Some(callee), Some(args)) = (n.field("function"), n.field("arguments"))
            {
                let ct = self.text(callee);
                let last = ct.rsplit('.').next().unwrap_or(ct);
                let root = ct.split('.').next().unwrap_or("");
                if STORE.contains(&last)
                    && !SERVER_ROOTS.contains(&root)
                    && !matches!(root, "console" | "logger" | "log")
                    && mentions(self, args, name)
                {
                    return true;
                }
            }
            stack.extend(n.named_children(&mut cursor));
        }
        false
    }
}

/// Does `n` use the identifier `name` anywhere?
fn mentions(ev: &Evaluator, n: Node, name: &str) -> bool {
    let mut cursor = n.walk();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if matches!(x.kind(), "identifier" | "shorthand_property_identifier") && ev.text(x) == name
        {
            return true;
        }
        stack.extend(x.named_children(&mut cursor));
    }
    false
}

/// The origin of a key built from parts (a template, a concatenation, a hash's input).
fn combine<'t>(n: Node<'t>, parts: Vec<Trace<'t>>, literal: bool) -> Trace<'t> {
    let material: Vec<&Trace> = parts
        .iter()
        .filter(|p| p.source != Source::Constant)
        .collect();
    let pick = |s: Source| material.iter().find(|p| p.source == s);
    for s in [Source::Random, Source::Clock, Source::ContentHash] {
        if let Some(p) = pick(s) {
            return Trace {
                source: s,
                node: p.node,
                purpose: literal,
                keyish: false,
            };
        }
    }
    if material.iter().any(|p| p.source == Source::Inbound) {
        return Trace {
            source: Source::Inbound,
            node: n,
            purpose: literal || material.iter().any(|p| p.purpose),
            keyish: false,
        };
    }
    if material.is_empty() {
        return Trace {
            source: Source::Constant,
            node: n,
            purpose: literal,
            keyish: false,
        };
    }
    if material.iter().all(|p| p.source == Source::DomainId) {
        return Trace {
            source: Source::DomainId,
            node: n,
            purpose: literal,
            keyish: false,
        };
    }
    if material.len() == 1 {
        // `${inboundKey}:charge`: a key passed in, with a purpose
        let inbound = literal && material[0].keyish;
        return Trace {
            source: if inbound {
                Source::Inbound
            } else {
                material[0].source
            },
            node: if inbound { n } else { material[0].node },
            purpose: literal,
            keyish: material[0].keyish,
        };
    }
    Trace {
        source: Source::Unknown,
        node: n,
        purpose: literal,
        keyish: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::discover::{Lang, SourceFile};

    /// (origin, method, path) of every key sent in `src`, in order.
    fn sent(src: &str) -> Vec<(KeyOrigin, Option<String>, String)> {
        let catalog = Catalog::builtin().unwrap();
        let file = SourceFile {
            rel: "web/api.ts".into(),
            lang: Lang::TypeScript,
            text: src.into(),
        };
        let (module, _) = crate::frontend::ts::analyze_file(&file, &catalog);
        let mut out: Vec<(u32, KeyOrigin, Option<String>, String)> = module
            .functions
            .iter()
            .flat_map(|f| f.sent_keys.iter())
            .filter_map(|k| {
                let (m, p) = k.request.clone()?;
                Some((k.line, k.origin, m, p))
            })
            .collect();
        out.sort_by_key(|k| k.0);
        out.into_iter().map(|(_, o, m, p)| (o, m, p)).collect()
    }

    #[test]
    fn a_loop_over_items_is_not_a_retry_loop() {
        let got = sent(
            "export async function importAll(items) {\n  for (const item of items) {\n    await fetch('/api/items', { method: 'POST', headers: { 'Idempotency-Key': crypto.randomUUID() } });\n  }\n}\n",
        );
        assert_eq!(
            got,
            vec![(KeyOrigin::PerCall, Some("POST".into()), "/api/items".into())]
        );
    }

    #[test]
    fn a_retry_loop_and_a_key_held_before_it() {
        let got = sent(
            "async function send(body) {\n  const key = uuid();\n  for (let attempt = 0; attempt < 3; attempt++) {\n    await axios.post('/api/a', body, { headers: { 'Idempotency-Key': key } });\n    const again = uuid();\n    await axios.post('/api/b', body, { headers: { 'Idempotency-Key': again } });\n  }\n}\n",
        );
        assert_eq!(
            got.iter().map(|g| g.0).collect::<Vec<_>>(),
            vec![KeyOrigin::OncePerIntent, KeyOrigin::PerAttempt]
        );
    }

    #[test]
    fn state_storage_parameters_and_gets() {
        let got = sent(
            "function Form() {\n  const [key] = useState(() => crypto.randomUUID());\n  const save = () => fetch('/api/x', { method: 'PUT', headers: { 'Idempotency-Key': key } });\n  const load = () => fetch('/api/x', { headers: { 'Idempotency-Key': crypto.randomUUID() } });\n  return null;\n}\nexport function post(url, key) {\n  return fetch(url, { method: 'POST', headers: { 'Idempotency-Key': key } });\n}\nexport function resume() {\n  return fetch('/api/y', { method: 'POST', headers: { 'Idempotency-Key': localStorage.getItem('k') } });\n}\n",
        );
        assert_eq!(
            got,
            vec![
                (KeyOrigin::Held, Some("PUT".into()), "/api/x".into()),
                // fetch's default method: a GET, which client findings leave out
                (KeyOrigin::PerCall, Some("GET".into()), "/api/x".into()),
                (KeyOrigin::PassedIn, Some("POST".into()), "{url}".into()),
                (KeyOrigin::Persisted, Some("POST".into()), "/api/y".into()),
            ]
        );
    }

    #[test]
    fn a_server_echoing_the_key_sends_nothing() {
        let got = sent(
            "export function mw(req, res, next) {\n  res.setHeader('Idempotency-Key', req.get('Idempotency-Key'));\n  res.set('Idempotency-Key', 'x');\n  req.headers['idempotency-key'] = crypto.randomUUID();\n  next();\n}\n",
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn domain_ids_hashes_and_the_clock() {
        let got = sent(
            "export function a(order) {\n  return fetch(`/api/orders/${order.id}/pay`, { method: 'POST', headers: { 'Idempotency-Key': `pay-${order.id}` } });\n}\nexport async function b(body) {\n  return fetch('/api/topups', { method: 'POST', headers: { 'Idempotency-Key': await sha256(JSON.stringify(body)) } });\n}\nexport function c() {\n  return fetch('/api/c', { method: 'POST', headers: { 'Idempotency-Key': String(Date.now()) } });\n}\n",
        );
        assert_eq!(
            got,
            vec![
                (
                    KeyOrigin::DomainId,
                    Some("POST".into()),
                    "/api/orders/{id}/pay".into()
                ),
                (
                    KeyOrigin::ContentHash,
                    Some("POST".into()),
                    "/api/topups".into()
                ),
                (KeyOrigin::Clock, Some("POST".into()), "/api/c".into()),
            ]
        );
    }
}
