//! Rust client requests: `reqwest`-style request builders that send an idempotency-key header
//! (`client.post(url).header("Idempotency-Key", key)`) in code no endpoint reaches (a CLI, a
//! worker, an SDK), with where the key comes from: made inside a retry loop or a retry closure,
//! made by the function that sends the request, from the clock, a domain id, a parameter (then
//! judged at the callers in view).

use super::effects::Effects;
use super::ir::*;
use super::model::{FnId, ModId, Model, Res};
use super::parse::{children, first_line};
use crate::facts::{ClientRequest, DownstreamKey, KeyOrigin, Location};
use crate::text::{domain_id_name, intent_name, url_path};
use std::collections::HashSet;

const HTTP_METHODS: &[&str] = &["post", "put", "patch", "delete"];

/// What a key expression is made of.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    Random,
    Clock,
    DomainId,
    ContentHash,
    Param(usize),
    /// A field or a value kept elsewhere (`self.idempotency_key`).
    Held,
    Inbound,
    Constant,
    Unknown,
}

struct Trace {
    source: Source,
    line: Line,
    text: String,
    purpose: bool,
    /// A parameter or variable named like a key (`inbound_key`): with a purpose, the inbound key.
    keyish: bool,
}

/// One function's bindings: `let` names to their values, parameters to their index.
struct Body<'a> {
    lets: Vec<(&'a str, &'a Ex)>,
    params: &'a [Param],
}

fn collect_lets<'a>(stmts: &'a [Stmt], out: &mut Vec<(&'a str, &'a Ex)>, depth: usize) {
    if depth > 64 {
        return;
    }
    for s in stmts {
        match s {
            Stmt::Let { names, init, .. } => {
                if let (Some(init), [name]) = (init, names.as_slice()) {
                    out.push((name.as_str(), init));
                }
                if let Some(init) = init {
                    collect_ex(init, out, depth + 1);
                }
            }
            Stmt::Expr(e, _) => collect_ex(e, out, depth + 1),
            Stmt::Item(_) => {}
        }
    }
}

fn collect_ex<'a>(e: &'a Ex, out: &mut Vec<(&'a str, &'a Ex)>, depth: usize) {
    if depth > 64 {
        return;
    }
    if let Ex::Block(stmts) = e {
        collect_lets(stmts, out, depth + 1);
        return;
    }
    let mut kids = Vec::new();
    children(e, &mut kids);
    for k in kids {
        collect_ex(k, out, depth + 1);
    }
}

fn short(e: &Ex) -> String {
    match e {
        Ex::Lit(s) => format!("{s:?}"),
        Ex::Path(p, _) => p.join("::"),
        Ex::Call(f, args, _) => {
            format!("{}({})", short(f), if args.is_empty() { "" } else { ".." })
        }
        Ex::Method(r, name, args, _) => format!(
            "{}.{name}({})",
            short(r),
            if args.is_empty() { "" } else { ".." }
        ),
        Ex::Macro { path, .. } => format!("{}!(..)", path.join("::")),
        Ex::Field(b, f) => format!("{}.{f}", short(b)),
        _ => "..".into(),
    }
}

pub struct Clients<'c, 'm, 'a> {
    model: &'m Model<'a>,
    fx: &'c Effects<'m, 'a>,
}

impl<'c, 'm, 'a> Clients<'c, 'm, 'a> {
    pub fn new(model: &'m Model<'a>, fx: &'c Effects<'m, 'a>) -> Self {
        Clients { model, fx }
    }

    /// The idempotency key a provider call passes, from its arguments (and the variables they
    /// name in function `f`): async-stripe's `RequestStrategy` on the client
    /// (`client.with_strategy(RequestStrategy::Idempotent(key))`), or an idempotency-key header
    /// on a raw request (`.header("Idempotency-Key", key)`). `None` when neither is in view.
    pub fn downstream(
        &self,
        f: Option<FnId>,
        m: ModId,
        imp: Option<super::model::ImplId>,
        args: &[&Ex],
    ) -> Option<(DownstreamKey, String)> {
        let body = match f {
            Some(f) => self.body(f),
            None => Body {
                lets: vec![],
                params: &[],
            },
        };
        let mut stack: Vec<(&Ex, usize)> = args.iter().map(|a| (*a, 0)).collect();
        let mut seen = 0;
        while let Some((e, depth)) = stack.pop() {
            seen += 1;
            if seen > 4096 {
                break;
            }
            match e {
                Ex::Method(_, name, margs, _)
                    if matches!(name.as_str(), "header" | "header_str")
                        && margs.len() == 2
                        && self.fx.is_key_name(&margs[0], m, imp) =>
                {
                    return Some(self.classify(&margs[1], &body, m));
                }
                Ex::Call(func, cargs, _) => {
                    if let Ex::Path(p, _) = &**func
                        && p.iter().any(|s| s == "RequestStrategy")
                    {
                        let last = p.last().map(String::as_str).unwrap_or("");
                        return Some(match (last, cargs.first()) {
                            ("Idempotent", Some(k)) => self.classify(k, &body, m),
                            ("Once", _) => (DownstreamKey::Missing, String::new()),
                            // a UUID made per request by the library
                            _ => (DownstreamKey::Random, p.join("::")),
                        });
                    }
                }
                Ex::Path(p, _) if p.len() == 1 && depth < 3 => {
                    if let Some((_, init)) = body.lets.iter().rev().find(|(n, _)| *n == p[0]) {
                        stack.push((init, depth + 1));
                    }
                    continue;
                }
                // `RequestStrategy::Once` as a value
                Ex::Path(p, _)
                    if p.iter().any(|s| s == "RequestStrategy")
                        && p.last().is_some_and(|l| l == "Once") =>
                {
                    return Some((DownstreamKey::Missing, String::new()));
                }
                _ => {}
            }
            let mut kids = Vec::new();
            children(e, &mut kids);
            stack.extend(kids.into_iter().map(|k| (k, depth)));
        }
        None
    }

    fn classify(&self, e: &Ex, body: &Body, m: ModId) -> (DownstreamKey, String) {
        let t = self.trace(e, body, m, 0);
        let key = match t.source {
            Source::Random | Source::Clock => DownstreamKey::Random,
            Source::DomainId => DownstreamKey::DomainId,
            Source::Inbound if t.purpose => DownstreamKey::FromInboundKey,
            _ => DownstreamKey::Derived,
        };
        (key, t.text)
    }

    /// Every client request of the crate graph, leaving out the functions in `reached` (server
    /// code: its keys go to providers downstream).
    pub fn requests(&self, reached: &HashSet<FnId>) -> Vec<ClientRequest> {
        let mut out = Vec::new();
        for (f, def) in self.model.fns.iter().enumerate() {
            if def.func.is_test || self.model.modules[def.module].is_test || reached.contains(&f) {
                continue;
            }
            let mut stack = Vec::new();
            super::parse::push_stmts(&def.func.body, &mut stack);
            let mut seen = 0;
            while let Some(e) = stack.pop() {
                seen += 1;
                if seen > 200_000 {
                    break;
                }
                if let Ex::Method(recv, name, args, line) = e
                    && matches!(name.as_str(), "header" | "header_str")
                    && args.len() == 2
                    && self.fx.is_key_name(&args[0], def.module, def.imp)
                {
                    out.extend(self.request(f, recv, &args[1], *line));
                }
                children(e, &mut stack);
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn body(&self, f: FnId) -> Body<'a> {
        let func = self.model.fns[f].func;
        let mut lets = Vec::new();
        collect_lets(&func.body, &mut lets, 0);
        Body {
            lets,
            params: &func.params,
        }
    }

    /// The request a `.header(KEY, value)` belongs to, with the key judged.
    fn request(&self, f: FnId, recv: &Ex, value: &Ex, line: Line) -> Vec<ClientRequest> {
        let def = &self.model.fns[f];
        let file = self.model.file_of(def.module).to_string();
        let body = self.body(f);
        let (method, url) = http_method(recv);
        let path = url
            .map(|u| self.url(u, &body, 0))
            .unwrap_or_else(|| "{url}".into());
        let t = self.trace(value, &body, def.module, 0);
        let judged = self.judge(f, &t, line);
        let base = ClientRequest {
            method: method.unwrap_or_else(|| "ANY".into()),
            path,
            location: Location::new(file.clone(), line),
            function: def.func.name.clone(),
            key_origin: judged.0,
            key_expression: t.text.clone(),
            key_location: Location::new(file, t.line.max(def.func.line)),
            key_function: def.func.name.clone(),
            detail: judged.1,
            endpoint: None,
            endpoint_location: None,
        };
        let Source::Param(i) = t.source else {
            return vec![base];
        };
        // A parameter: judged where the callers in view make it.
        let callers = self.callers(f, i);
        if callers.is_empty() {
            return vec![base];
        }
        callers
            .into_iter()
            .map(|(cf, arg, at)| {
                let cdef = &self.model.fns[cf];
                let cfile = self.model.file_of(cdef.module).to_string();
                let cbody = self.body(cf);
                let ct = self.trace(arg, &cbody, cdef.module, 0);
                let (origin, detail) = self.judge(cf, &ct, at);
                ClientRequest {
                    key_origin: origin,
                    key_expression: ct.text.clone(),
                    key_location: Location::new(cfile.clone(), ct.line.max(cdef.func.line)),
                    key_function: cdef.func.name.clone(),
                    detail: format!(
                        "{detail}, and passed to `{}` at {cfile}:{at}",
                        def.func.name
                    ),
                    ..base.clone()
                }
            })
            .collect()
    }

    /// Calls to `f` in view, with the argument for its parameter `i` and the call's line.
    fn callers(&self, f: FnId, i: usize) -> Vec<(FnId, &'a Ex, Line)> {
        let target = &self.model.fns[f];
        let has_self = target.func.params.first().is_some_and(|p| p.name == "self");
        let mut out = Vec::new();
        for (g, def) in self.model.fns.iter().enumerate() {
            if g == f || def.func.is_test {
                continue;
            }
            let mut stack = Vec::new();
            super::parse::push_stmts(&def.func.body, &mut stack);
            let mut seen = 0;
            while let Some(e) = stack.pop() {
                seen += 1;
                if seen > 200_000 || out.len() > 32 {
                    break;
                }
                match e {
                    Ex::Call(func, args, line) if !has_self => {
                        if let Ex::Path(p, _) = &**func
                            && p.last() == Some(&target.func.name)
                            && self.model.resolve(def.module, p) == Res::Fn(f)
                            && let Some(a) = args.get(i)
                        {
                            out.push((g, a, *line));
                        }
                    }
                    Ex::Method(_, name, args, line) if has_self && i > 0 => {
                        if *name == target.func.name
                            && self
                                .model
                                .methods_by_name
                                .get(name.as_str())
                                .is_some_and(|c| c.as_slice() == [f])
                            && let Some(a) = args.get(i - 1)
                        {
                            out.push((g, a, *line));
                        }
                    }
                    _ => {}
                }
                children(e, &mut stack);
            }
        }
        out
    }

    fn url(&self, e: &Ex, body: &Body, depth: usize) -> String {
        match e {
            Ex::Lit(s) => url_path(s),
            Ex::Macro {
                path, lits, args, ..
            } if path.last().is_some_and(|p| p == "format") => match lits.first() {
                Some(fmt) => {
                    // the format string itself may be among the arguments read from the tokens
                    let skip = usize::from(matches!(args.first(), Some(Ex::Lit(_))));
                    let names: Vec<String> = args.iter().skip(skip).map(arg_name).collect();
                    url_path(&format_to_template(fmt, &names))
                }
                None => "{url}".into(),
            },
            Ex::Method(r, name, _, _)
                if matches!(name.as_str(), "as_str" | "to_string" | "clone") =>
            {
                self.url(r, body, depth)
            }
            Ex::Path(p, _) if p.len() == 1 && depth < 3 => {
                match body.lets.iter().rev().find(|(n, _)| *n == p[0]) {
                    Some((_, init)) => self.url(init, body, depth + 1),
                    None => "{url}".into(),
                }
            }
            _ => "{url}".into(),
        }
    }

    fn trace(&self, e: &Ex, body: &Body, m: ModId, depth: usize) -> Trace {
        let of = |source, e: &Ex| Trace {
            source,
            line: first_line(e),
            text: short(e),
            purpose: false,
            keyish: false,
        };
        if depth > 8 {
            return of(Source::Unknown, e);
        }
        match e {
            Ex::Lit(_) => of(Source::Constant, e),
            Ex::Method(r, name, args, _) => {
                let n = name.as_str();
                if matches!(
                    n,
                    "to_string"
                        | "clone"
                        | "as_str"
                        | "to_owned"
                        | "into"
                        | "as_ref"
                        | "unwrap"
                        | "expect"
                        | "to_str"
                        | "unwrap_or_default"
                        | "simple"
                        | "hyphenated"
                        | "as_hyphenated"
                        | "as_simple"
                        | "and_then"
                        | "map"
                        | "ok"
                        | "ok_or"
                        | "ok_or_else"
                        | "unwrap_or"
                        | "context"
                        | "with_context"
                ) {
                    return self.trace(r, body, m, depth + 1);
                }
                if matches!(
                    n,
                    "timestamp"
                        | "timestamp_millis"
                        | "timestamp_nanos"
                        | "elapsed"
                        | "duration_since"
                        | "as_millis"
                        | "as_secs"
                        | "as_nanos"
                        | "as_micros"
                        | "unix_timestamp"
                ) || n == "gen"
                    || n == "random"
                {
                    let inner = self.trace(r, body, m, depth + 1);
                    if matches!(inner.source, Source::Clock | Source::Random) {
                        return inner;
                    }
                    return of(
                        if n == "gen" {
                            Source::Random
                        } else {
                            Source::Unknown
                        },
                        e,
                    );
                }
                if matches!(n, "get" | "get_one" | "get_all")
                    && args
                        .first()
                        .is_some_and(|a| self.fx.is_key_name(a, m, None))
                {
                    return of(Source::Inbound, e);
                }
                if domain_id_name(n) && args.is_empty() {
                    return of(Source::DomainId, e);
                }
                if matches!(n, "finalize" | "digest" | "hash") {
                    return self.hashed(e, body, m, depth);
                }
                of(Source::Unknown, e)
            }
            Ex::Call(func, args, _) => {
                let Ex::Path(p, _) = &**func else {
                    return of(Source::Unknown, e);
                };
                let last = p.last().map(String::as_str).unwrap_or("");
                let joined = p.join("::");
                if matches!(
                    last,
                    "new_v4" | "now_v7" | "new_v7" | "random" | "nanoid" | "generate"
                ) || (joined.contains("Ulid") && last == "new")
                    || joined.ends_with("thread_rng")
                {
                    return of(Source::Random, e);
                }
                if last == "now" {
                    return of(Source::Clock, e);
                }
                if matches!(
                    last,
                    "from_str" | "from_string" | "try_from" | "from" | "from_maybe_shared"
                ) && let Some(a) = args.first()
                {
                    return self.trace(a, body, m, depth + 1);
                }
                if ["sha256", "sha1", "digest", "hash", "Sha256"]
                    .iter()
                    .any(|h| joined.contains(h))
                {
                    return self.hashed(e, body, m, depth);
                }
                of(Source::Unknown, e)
            }
            Ex::Macro {
                path,
                args,
                lits,
                line,
            } if path.last().is_some_and(|p| p == "format") => {
                let inline: Vec<Ex> = lits
                    .first()
                    .map(|f| inline_names(f))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|n| Ex::Path(vec![n], *line))
                    .collect();
                let parts: Vec<Trace> = args
                    .iter()
                    .chain(inline.iter())
                    .map(|a| self.trace(a, body, m, depth + 1))
                    .collect();
                let literal = lits
                    .first()
                    .is_some_and(|f| f.replace("{}", "").chars().any(|c| c.is_alphabetic()));
                let mut t = combine(parts, literal);
                if t.line == 0 {
                    t.line = e.line();
                }
                if t.source == Source::Unknown || t.source == Source::DomainId || t.text.is_empty()
                {
                    t.text = short(e);
                }
                t
            }
            Ex::Field(_, name) => {
                if domain_id_name(name) {
                    of(Source::DomainId, e)
                } else if name.to_ascii_lowercase().contains("key") {
                    of(Source::Held, e)
                } else {
                    of(Source::Unknown, e)
                }
            }
            Ex::Path(p, _) if p.len() == 1 => {
                let name = p[0].as_str();
                if let Some((_, init)) = body.lets.iter().rev().find(|(n, _)| *n == name) {
                    let mut t = self.trace(init, body, m, depth + 1);
                    if t.source == Source::Unknown && domain_id_name(name) {
                        return of(Source::DomainId, e);
                    }
                    if t.source == Source::Unknown {
                        t.keyish = name.to_ascii_lowercase().contains("key");
                        t.text = name.to_string();
                    }
                    return t;
                }
                if let Some(i) = body.params.iter().position(|pa| pa.name == name) {
                    if domain_id_name(name) {
                        return of(Source::DomainId, e);
                    }
                    return Trace {
                        keyish: name.to_ascii_lowercase().contains("key"),
                        ..of(Source::Param(i), e)
                    };
                }
                // a `const`: one key for every request
                if matches!(self.model.resolve(m, p), Res::Const(..)) {
                    return of(Source::Constant, e);
                }
                of(Source::Unknown, e)
            }
            _ => of(Source::Unknown, e),
        }
    }

    /// A hash: of the request body (a content hash), or of the inbound key and a purpose.
    fn hashed(&self, e: &Ex, body: &Body, m: ModId, depth: usize) -> Trace {
        let mut stack = vec![e];
        let mut parts = Vec::new();
        let mut literal = false;
        let mut seen = 0;
        while let Some(x) = stack.pop() {
            seen += 1;
            if seen > 256 {
                break;
            }
            match x {
                Ex::Path(p, _) if p.len() == 1 => {
                    let n = p[0].to_ascii_lowercase();
                    if matches!(n.as_str(), "body" | "payload" | "request_body") {
                        return Trace {
                            source: Source::ContentHash,
                            line: first_line(e),
                            text: short(e),
                            purpose: false,
                            keyish: false,
                        };
                    }
                    parts.push(self.trace(x, body, m, depth + 1));
                }
                Ex::Call(f, _, _) if matches!(&**f, Ex::Path(p, _) if p.join("::").contains("to_vec") || p.join("::").contains("to_string") && p.first().is_some_and(|s| s == "serde_json")) =>
                {
                    return Trace {
                        source: Source::ContentHash,
                        line: first_line(e),
                        text: short(e),
                        purpose: false,
                        keyish: false,
                    };
                }
                Ex::Lit(s) => literal |= s.chars().any(|c| c.is_alphabetic()),
                Ex::Macro { lits, .. } => {
                    literal |= lits
                        .first()
                        .is_some_and(|f| f.replace("{}", "").chars().any(|c| c.is_alphabetic()));
                    children(x, &mut stack);
                }
                _ => children(x, &mut stack),
            }
        }
        let mut t = combine(parts, literal);
        t.line = first_line(e);
        t.text = short(e);
        if t.source == Source::Constant {
            t.source = Source::Unknown;
        }
        t
    }

    /// (origin, detail) of a traced key sent at `at` from function `f`.
    fn judge(&self, f: FnId, t: &Trace, at: Line) -> (KeyOrigin, String) {
        let func = self.model.fns[f].func;
        let what = &t.text;
        let cw = crate::text::code(what);
        match t.source {
            Source::Random | Source::Clock => {
                let made = if t.source == Source::Clock {
                    format!("{cw} (the clock)")
                } else {
                    cw.clone()
                };
                if let Some(span) = func
                    .retry_spans
                    .iter()
                    .filter(|s| s.contains(t.line) && s.contains(at))
                    .min_by_key(|s| s.end - s.start)
                {
                    return (
                        KeyOrigin::PerAttempt,
                        format!(
                            "made by {made} in `{}` inside {} (line {}): every attempt sends a new key",
                            func.name, span.what, span.start
                        ),
                    );
                }
                if t.source == Source::Clock {
                    return (
                        KeyOrigin::Clock,
                        format!(
                            "made by {made} in `{}`: it changes on every call, and two clients at the same instant share it",
                            func.name
                        ),
                    );
                }
                if let Some(span) = func
                    .retry_spans
                    .iter()
                    .find(|s| s.contains(at) && t.line < s.start)
                {
                    return (
                        KeyOrigin::OncePerIntent,
                        format!(
                            "made once by {made} in `{}` before {} (line {}), which reuses it on every attempt",
                            func.name, span.what, span.start
                        ),
                    );
                }
                if intent_name(&func.name) {
                    return (
                        KeyOrigin::OncePerIntent,
                        format!(
                            "made once per intent by {made} in the handler `{}`",
                            func.name
                        ),
                    );
                }
                (
                    KeyOrigin::PerCall,
                    format!(
                        "made by {made} in `{}`, which sends the request: every call, so every retry by its callers, sends a new key",
                        func.name
                    ),
                )
            }
            Source::DomainId => (
                KeyOrigin::DomainId,
                format!(
                    "taken from {cw}, a stable id of a domain object rather than of one intent"
                ),
            ),
            Source::ContentHash => (
                KeyOrigin::ContentHash,
                format!(
                    "hashed from the request body ({cw}): two real intents with the same body share it"
                ),
            ),
            Source::Param(_) => (
                KeyOrigin::PassedIn,
                format!("taken from the parameter {cw}: the caller makes it"),
            ),
            Source::Held => (KeyOrigin::Held, format!("kept across calls ({cw})")),
            Source::Inbound if t.purpose => (
                KeyOrigin::FromInboundKey,
                format!("derived from the inbound key and a purpose ({cw})"),
            ),
            Source::Inbound => (
                KeyOrigin::PassedIn,
                format!("forwarded from the inbound request ({cw})"),
            ),
            Source::Constant | Source::Unknown => (
                KeyOrigin::Unknown,
                format!("whose origin is not visible ({cw})"),
            ),
        }
    }
}

/// The name an argument reads as in a path: `order_id`, `self.base` → `base`.
fn arg_name(e: &Ex) -> String {
    match e {
        Ex::Path(p, _) => p.last().cloned().unwrap_or_default(),
        Ex::Field(_, f) => f.clone(),
        Ex::Method(r, _, _, _) => arg_name(r),
        _ => String::new(),
    }
}

/// Names a format string reads inline (`{now}`, `{id:?}`).
fn inline_names(fmt: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = fmt;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let name = rest[open + 1..open + close].split(':').next().unwrap_or("");
        if !name.is_empty()
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !name.chars().all(|c| c.is_ascii_digit())
        {
            out.push(name.to_string());
        }
        rest = &rest[open + close + 1..];
    }
    out
}

/// `"{}/orders/{}"` with its arguments' names → `${base}/orders/${order_id}`, ready for
/// [`url_path`].
fn format_to_template(fmt: &str, names: &[String]) -> String {
    let mut out = String::new();
    let mut rest = fmt;
    let mut n = 0;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let inner = &rest[open + 1..open + close];
        let name = inner.split(':').next().unwrap_or("");
        let name = if name.is_empty() {
            match names.get(n).filter(|s| !s.is_empty()) {
                Some(s) => s.clone(),
                None => format!("p{n}"),
            }
        } else {
            name.to_string()
        };
        out.push_str(&format!("${{{name}}}"));
        n += 1;
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// The HTTP method and URL a request builder chain starts with: `client.post(url)`,
/// `client.request(Method::POST, url)`.
fn http_method(mut e: &Ex) -> (Option<String>, Option<&Ex>) {
    loop {
        match e {
            Ex::Method(recv, name, args, _) => {
                if HTTP_METHODS.contains(&name.as_str()) {
                    return (Some(name.to_ascii_uppercase()), args.first());
                }
                if name == "request"
                    && let Some(Ex::Path(p, _)) = args.first()
                {
                    let m = p.last().map(|s| s.to_ascii_uppercase());
                    return (m, args.get(1));
                }
                e = recv;
            }
            Ex::Call(func, args, _) => {
                if let Ex::Path(p, _) = &**func
                    && let Some(last) = p.last()
                    && HTTP_METHODS.contains(&last.as_str())
                {
                    return (Some(last.to_ascii_uppercase()), args.first());
                }
                return (None, None);
            }
            _ => return (None, None),
        }
    }
}

/// The origin of a key built from parts (`format!`, a hash's input).
fn combine(parts: Vec<Trace>, literal: bool) -> Trace {
    let material: Vec<&Trace> = parts
        .iter()
        .filter(|p| p.source != Source::Constant)
        .collect();
    for s in [Source::Random, Source::Clock, Source::ContentHash] {
        if let Some(p) = material.iter().find(|p| p.source == s) {
            return Trace {
                source: s,
                line: p.line,
                text: p.text.clone(),
                purpose: literal,
                keyish: false,
            };
        }
    }
    let line = material.first().map(|p| p.line).unwrap_or(0);
    let text = material.first().map(|p| p.text.clone()).unwrap_or_default();
    let source = if material.iter().any(|p| p.source == Source::Inbound) {
        Source::Inbound
    } else if material.is_empty() {
        Source::Constant
    } else if material.iter().all(|p| p.source == Source::DomainId) {
        Source::DomainId
    } else if material.len() == 1 && literal && material[0].keyish {
        // `format!("{inbound_key}:charge")`: a key passed in, with a purpose
        Source::Inbound
    } else if material.len() == 1 {
        material[0].source.clone()
    } else {
        Source::Unknown
    };
    Trace {
        source,
        line,
        text,
        purpose: literal || material.iter().any(|p| p.purpose),
        keyish: material.len() == 1 && material[0].keyish,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_strings_become_paths() {
        let names = ["base".to_string(), "order_id".to_string()];
        assert_eq!(
            url_path(&format_to_template("{}/orders", &names)),
            "{base}/orders"
        );
        assert_eq!(
            url_path(&format_to_template(
                "https://api.shop.test/orders/{}/pay",
                &[]
            )),
            "/orders/{p0}/pay"
        );
        assert_eq!(
            url_path(&format_to_template("{}/orders/{}/pay", &names)),
            "{base}/orders/{order_id}/pay"
        );
        assert_eq!(inline_names("refund-{now}-{0}-{id:?}"), vec!["now", "id"]);
    }
}
