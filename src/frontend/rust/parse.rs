//! Parsing one `.rs` file with `syn` and lowering it to [`FileIr`] at once, on the worker thread:
//! lines are read from the spans, then the thread's span table is cleared.
//!
//! `syn` recurses on nested expressions, so a file is first scanned cheaply for nesting deeper than
//! [`MAX_NESTING`]; such a file is reported and skipped rather than risking the stack. Lowering
//! itself stops descending at [`MAX_LOWER_DEPTH`].

use super::ir::*;
use crate::facts::Diagnostic;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::HashMap;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Token};

/// Nesting (brackets, closures, generics, function types, prefix operators, ...) beyond which a
/// file is not handed to `syn`.
pub const MAX_NESTING: usize = 256;
/// Lowering stops descending below this depth (the rest of that expression is dropped).
const MAX_LOWER_DEPTH: usize = 200;
/// Links of a method chain lowered as one expression (see [`Lower::method_chain`]).
const CHAIN_SPLIT: usize = 64;
/// The binding a long chain is split through; not a name Rust code can write.
const CHAIN_VAR: &str = "chain#";
/// The name an `if` on a call's outcome binds it to (see [`call_test`]), before the line.
pub const CALL_GATE: &str = "cond#";
/// What a `for` loop's pattern is bound to in its lowered body (`for (a, b) in xs { .. }` becomes
/// `{ let (a, b) = item#; .. }` over `xs`); not a name Rust code can write.
pub const FOR_ITEM: &str = "item#";
/// How deep macro token groups are searched for expressions.
const MAX_MACRO_DEPTH: usize = 6;

/// Parses and lowers one file. Never panics on bad input: a file `syn` cannot parse, or one nested
/// too deeply to parse safely, becomes a diagnostic and an empty [`FileIr`].
pub fn parse_file(rel: &str, text: &str) -> (FileIr, Vec<Diagnostic>) {
    let mut ir = FileIr {
        rel: rel.to_string(),
        items: Vec::new(),
        schema_sql: Vec::new(),
    };
    if let Some((line, why)) = too_deep(text) {
        return (
            ir,
            vec![Diagnostic::new(
                rel,
                line,
                format!("skipped: {why}, too deep to parse safely"),
            )],
        );
    }
    let mut diagnostics = Vec::new();
    match syn::parse_file(text) {
        Ok(file) => {
            let mut lower = Lower {
                depth: 0,
                retry_spans: Vec::new(),
                idem_lines: text.lines().map(super::keyscan::has_idem).collect(),
                idem_impl: false,
                bound: Vec::new(),
                let_bound: Vec::new(),
                loops: Vec::new(),
                secret_checks: HashMap::new(),
            };
            ir.items = lower.items(&file.items);
            ir.schema_sql = super::schema_sql::collect(rel, &file);
        }
        Err(e) => {
            let line = e.span().start().line as u32;
            diagnostics.push(Diagnostic::new(
                rel,
                line,
                format!("parse error: {e}; routes in this file are not seen"),
            ));
        }
    }
    proc_macro2::extra::invalidate_current_thread_spans();
    (ir, diagnostics)
}

/// The first place where the file nests deeper than [`MAX_NESTING`] (brackets, closures, generic
/// arguments, function types, references, prefix operators; see [`super::nesting`]): its line and
/// what nests there.
pub fn too_deep(text: &str) -> Option<(u32, String)> {
    super::nesting::too_deep(text, MAX_NESTING)
}

fn line_of(span: proc_macro2::Span) -> Line {
    span.start().line as Line
}

/// The trait bounds of an impl's type parameter when the impl is for that parameter itself
/// (`impl<T: SimpleRoute> Route for T`, or `impl<T> Route for T where T: SimpleRoute`).
fn blanket_bounds(generics: &syn::Generics, self_ty: &[String]) -> Option<Vec<Vec<String>>> {
    let [name] = self_ty else { return None };
    let param = generics.type_params().find(|p| p.ident == name.as_str())?;
    let trait_paths =
        |bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>| {
            bounds
                .iter()
                .filter_map(|b| match b {
                    syn::TypeParamBound::Trait(t) => Some(path_segs(&t.path)),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
    let mut out = trait_paths(&param.bounds);
    if let Some(w) = &generics.where_clause {
        for p in &w.predicates {
            if let syn::WherePredicate::Type(t) = p
                && lower_ty(&t.bounded_ty).path == self_ty
            {
                out.extend(trait_paths(&t.bounds));
            }
        }
    }
    Some(out)
}

fn path_segs(p: &syn::Path) -> Vec<String> {
    p.segments.iter().map(|s| s.ident.to_string()).collect()
}

pub(super) fn is_test_attr(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let p = a.path();
        let last = p
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        if matches!(last.as_str(), "test" | "async_test" | "bench") {
            return true;
        }
        if p.is_ident("cfg")
            && let syn::Meta::List(l) = &a.meta
        {
            let t = l.tokens.to_string();
            return t
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == "test");
        }
        false
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| {
        if !a.path().is_ident("path") {
            return None;
        }
        match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(l) => match &l.lit {
                    syn::Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    })
}

const ROUTE_ATTRS: &[&str] = &[
    "get", "post", "put", "patch", "delete", "head", "options", "route", "trace", "connect",
];

/// `#[utoipa::path(post, path = "/x")]` (documentation, and the route itself where utoipa-axum's
/// `routes!(handler)` registers the handler) and poem-openapi's `#[oai(path = "/x", method =
/// "post")]` (a route of the `#[OpenApi]` impl it is in).
pub fn is_openapi_path(path: &[String]) -> bool {
    (path.len() == 2 && path[0] == "utoipa" && path[1] == "path")
        || (path.len() == 1 && path[0] == "oai")
}

/// `#[OpenApi]` / `#[OpenApi(prefix_path = "/v1")]` on an impl: the prefix of its `#[oai]`
/// routes.
fn openapi_impl_prefix(attrs: &[syn::Attribute]) -> Option<String> {
    let a = attrs.iter().find(|a| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "OpenApi")
    })?;
    let mut ra = RouteAttr {
        path: vec![],
        lits: vec![],
        pairs: vec![],
        idents: vec![],
        line: 0,
    };
    if let syn::Meta::List(list) = &a.meta {
        openapi_path_args(list.tokens.clone(), &mut ra);
    }
    Some(
        ra.pairs
            .into_iter()
            .find(|(k, _)| k == "prefix_path")
            .map(|(_, v)| v)
            .unwrap_or_default(),
    )
}

/// `openapi_get_routes_spec![settings: a, b]` → `a, b`: the settings are not a route.
fn without_settings_prefix(tokens: TokenStream) -> TokenStream {
    let toks: Vec<TokenTree> = tokens.clone().into_iter().collect();
    match toks.as_slice() {
        [TokenTree::Ident(_), TokenTree::Punct(colon), rest @ ..]
            if colon.as_char() == ':'
                && !matches!(rest.first(), Some(TokenTree::Punct(p)) if p.as_char() == ':') =>
        {
            rest.iter().cloned().collect()
        }
        _ => tokens,
    }
}

/// The top-level arguments of `#[utoipa::path(..)]` that make a route: a bare method
/// (`post`), `method(get, head)` and `path = "/x"`.
fn openapi_path_args(tokens: TokenStream, ra: &mut RouteAttr) {
    let mut parts: Vec<Vec<TokenTree>> = vec![vec![]];
    for t in tokens {
        match &t {
            TokenTree::Punct(p) if p.as_char() == ',' => parts.push(vec![]),
            _ => parts.last_mut().expect("never empty").push(t),
        }
    }
    for part in parts {
        match part.as_slice() {
            [TokenTree::Ident(i)] => ra.idents.push(i.to_string()),
            [TokenTree::Ident(i), TokenTree::Group(g)]
                if i == "method" && g.delimiter() == Delimiter::Parenthesis =>
            {
                for t in g.stream() {
                    if let TokenTree::Ident(m) = t {
                        ra.idents.push(m.to_string());
                    }
                }
            }
            [
                TokenTree::Ident(k),
                TokenTree::Punct(eq),
                TokenTree::Literal(l),
            ] if eq.as_char() == '=' => {
                if let Ok(syn::Lit::Str(s)) = syn::parse_str::<syn::Lit>(&l.to_string()) {
                    ra.pairs.push((k.to_string(), s.value()));
                }
            }
            _ => {}
        }
    }
}

fn route_attrs(attrs: &[syn::Attribute]) -> Vec<RouteAttr> {
    let mut out = Vec::new();
    for a in attrs {
        let path = path_segs(a.path());
        let Some(last) = path.last() else { continue };
        if !ROUTE_ATTRS.contains(&last.as_str()) && !is_openapi_path(&path) {
            continue;
        }
        let syn::Meta::List(list) = &a.meta else {
            continue;
        };
        let mut ra = RouteAttr {
            path: path.clone(),
            lits: vec![],
            pairs: vec![],
            idents: vec![],
            line: line_of(a.pound_token.span),
        };
        if is_openapi_path(&path) {
            // its other arguments (`body = Error<'_>`, `request_body(content = Vec<u8>)`) are
            // not expressions: read the method and the path from the tokens
            openapi_path_args(list.tokens.clone(), &mut ra);
            out.push(ra);
            continue;
        }
        let Ok(args) = list.parse_args_with(Punctuated::<Expr, Token![,]>::parse_terminated) else {
            continue;
        };
        for e in args {
            match e {
                Expr::Lit(l) => {
                    if let syn::Lit::Str(s) = &l.lit {
                        ra.lits.push(s.value());
                    }
                }
                Expr::Assign(asg) => {
                    let key = match &*asg.left {
                        Expr::Path(p) => path_segs(&p.path).join("::"),
                        _ => continue,
                    };
                    let value = match &*asg.right {
                        Expr::Lit(l) => match &l.lit {
                            syn::Lit::Str(s) => s.value(),
                            _ => continue,
                        },
                        Expr::Path(p) => path_segs(&p.path).join("::"),
                        _ => continue,
                    };
                    ra.pairs.push((key, value));
                }
                Expr::Path(p) => ra.idents.push(path_segs(&p.path).join("::")),
                // utoipa's `method(get, head)`
                Expr::Call(c) if matches!(&*c.func, Expr::Path(p) if p.path.is_ident("method")) => {
                    for a in &c.args {
                        if let Expr::Path(p) = a {
                            ra.idents.push(path_segs(&p.path).join("::"));
                        }
                    }
                }
                _ => {}
            }
        }
        out.push(ra);
    }
    out
}

fn use_tree(prefix: &mut Vec<String>, tree: &syn::UseTree, out: &mut Vec<UseDecl>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_tree(prefix, &p.tree, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                if let Some(last) = prefix.last() {
                    out.push(UseDecl {
                        path: prefix.clone(),
                        alias: last.clone(),
                    });
                }
            } else {
                let mut path = prefix.clone();
                path.push(name.clone());
                out.push(UseDecl { path, alias: name });
            }
        }
        syn::UseTree::Rename(r) => {
            let name = r.ident.to_string();
            let mut path = prefix.clone();
            if name != "self" {
                path.push(name);
            }
            out.push(UseDecl {
                path,
                alias: r.rename.to_string(),
            });
        }
        syn::UseTree::Glob(_) => out.push(UseDecl {
            path: prefix.clone(),
            alias: "*".into(),
        }),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_tree(prefix, t, out);
            }
        }
    }
}

pub fn lower_ty(t: &syn::Type) -> Ty {
    lower_ty_depth(t, 0)
}

fn lower_ty_depth(t: &syn::Type, depth: usize) -> Ty {
    if depth > 16 {
        return Ty::default();
    }
    match t {
        syn::Type::Path(p) => {
            let mut ty = Ty {
                path: path_segs(&p.path),
                args: vec![],
            };
            for seg in &p.path.segments {
                if let syn::PathArguments::AngleBracketed(a) = &seg.arguments {
                    for arg in &a.args {
                        if let syn::GenericArgument::Type(t) = arg {
                            ty.args.push(lower_ty_depth(t, depth + 1));
                        }
                    }
                }
            }
            ty
        }
        syn::Type::Reference(r) => lower_ty_depth(&r.elem, depth + 1),
        syn::Type::Paren(p) => lower_ty_depth(&p.elem, depth + 1),
        syn::Type::Group(g) => lower_ty_depth(&g.elem, depth + 1),
        syn::Type::Array(a) => lower_ty_depth(&a.elem, depth + 1),
        syn::Type::Slice(s) => lower_ty_depth(&s.elem, depth + 1),
        syn::Type::Ptr(p) => lower_ty_depth(&p.elem, depth + 1),
        syn::Type::Tuple(t) => Ty {
            path: vec![],
            args: t
                .elems
                .iter()
                .map(|e| lower_ty_depth(e, depth + 1))
                .collect(),
        },
        syn::Type::ImplTrait(i) => bounds_ty(i.bounds.iter()),
        syn::Type::TraitObject(o) => bounds_ty(o.bounds.iter()),
        _ => Ty::default(),
    }
}

/// The first trait of a bound list; a closure trait keeps its parameter types as arguments
/// (`impl Fn(&mut web::ServiceConfig)`: a function that configures routes).
fn bounds_ty<'a>(mut bounds: impl Iterator<Item = &'a syn::TypeParamBound>) -> Ty {
    bounds
        .find_map(|b| match b {
            syn::TypeParamBound::Trait(t) => Some(Ty {
                path: path_segs(&t.path),
                args: match t.path.segments.last().map(|s| &s.arguments) {
                    Some(syn::PathArguments::Parenthesized(p)) => {
                        p.inputs.iter().map(|a| lower_ty(&a.ty)).collect()
                    }
                    _ => vec![],
                },
            }),
            _ => None,
        })
        .unwrap_or_default()
}

/// Every identifier a pattern binds (an or-pattern's cases bind the same names).
pub(crate) fn pat_names(p: &syn::Pat, out: &mut Vec<String>, depth: usize) {
    if depth > 32 {
        return;
    }
    match p {
        syn::Pat::Ident(i) => {
            out.push(i.ident.to_string());
            if let Some((_, sub)) = &i.subpat {
                pat_names(sub, out, depth + 1);
            }
        }
        syn::Pat::Reference(r) => pat_names(&r.pat, out, depth + 1),
        syn::Pat::Paren(r) => pat_names(&r.pat, out, depth + 1),
        syn::Pat::Tuple(t) => t.elems.iter().for_each(|e| pat_names(e, out, depth + 1)),
        syn::Pat::TupleStruct(t) => t.elems.iter().for_each(|e| pat_names(e, out, depth + 1)),
        syn::Pat::Struct(s) => s
            .fields
            .iter()
            .for_each(|f| pat_names(&f.pat, out, depth + 1)),
        syn::Pat::Slice(s) => s.elems.iter().for_each(|e| pat_names(e, out, depth + 1)),
        syn::Pat::Type(t) => pat_names(&t.pat, out, depth + 1),
        syn::Pat::Or(o) => {
            if let Some(first) = o.cases.first() {
                pat_names(first, out, depth + 1)
            }
        }
        _ => {}
    }
}

/// A struct pattern's named fields and the identifiers they bind directly (`Options { mounts, cfg:
/// c, .. }`); a field bound to a nested pattern is left out.
fn struct_fields(p: &syn::Pat) -> Vec<(String, String)> {
    let p = match p {
        syn::Pat::Type(t) => &*t.pat,
        p => p,
    };
    // An enum's variant (`Client::Bitcoind { rpc, .. }`, `Self::Esplora(client)`): its fields
    // are named `Variant.field` (`Variant.0` for a tuple variant's), as the enum declares them.
    let variant = |path: &syn::Path| {
        let n = path.segments.len();
        let upper = |i: usize| {
            path.segments[i]
                .ident
                .to_string()
                .starts_with(|c: char| c.is_ascii_uppercase())
        };
        (n >= 2 && upper(n - 1) && upper(n - 2)).then(|| path.segments[n - 1].ident.to_string())
    };
    let bound = |p: &syn::Pat| match p {
        syn::Pat::Ident(i) if i.subpat.is_none() => Some(i.ident.to_string()),
        _ => None,
    };
    match p {
        syn::Pat::Struct(s) => {
            let prefix = variant(&s.path)
                .map(|v| format!("{v}."))
                .unwrap_or_default();
            s.fields
                .iter()
                .filter_map(|f| {
                    let syn::Member::Named(field) = &f.member else {
                        return None;
                    };
                    Some((format!("{prefix}{field}"), bound(&f.pat)?))
                })
                .collect()
        }
        syn::Pat::TupleStruct(t) => match variant(&t.path) {
            Some(v) => t
                .elems
                .iter()
                .enumerate()
                .filter_map(|(i, e)| Some((format!("{v}.{i}"), bound(e)?)))
                .collect(),
            None => vec![],
        },
        _ => vec![],
    }
}

/// An expression that reads a value without doing anything (`self.inner()`, `&state.client`,
/// `*wallet`): read again where a `match` arm binds the fields of what it found.
fn reads_only(e: &syn::Expr, depth: usize) -> bool {
    depth < 8
        && match e {
            syn::Expr::Path(_) => true,
            syn::Expr::Field(f) => reads_only(&f.base, depth + 1),
            syn::Expr::Reference(r) => reads_only(&r.expr, depth + 1),
            syn::Expr::Paren(p) => reads_only(&p.expr, depth + 1),
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                reads_only(&u.expr, depth + 1)
            }
            syn::Expr::MethodCall(m) => m.args.is_empty() && reads_only(&m.receiver, depth + 1),
            _ => false,
        }
}

/// A parameter: `name: Ty`, or `Extractor(name): Extractor<Inner>` (the name then has the inner
/// type, and `unwrap` says so).
fn param_of(pat: &syn::Pat, ty: Option<&syn::Type>) -> Param {
    let ty = ty.map(lower_ty);
    let mut names = Vec::new();
    pat_names(pat, &mut names, 0);
    let destructured = matches!(pat, syn::Pat::TupleStruct(_));
    // a struct pattern, the whole parameter's or the one an extractor's tuple pattern holds:
    // the names it binds have its fields' types, not the struct's
    let inner = match pat {
        syn::Pat::TupleStruct(t) if t.elems.len() == 1 => &t.elems[0],
        p => p,
    };
    let fields = struct_fields(inner);
    let is_struct = matches!(inner, syn::Pat::Struct(_));
    Param {
        name: if names.len() == 1 && !is_struct {
            names.remove(0)
        } else {
            "_".into()
        },
        ty,
        unwrap: destructured,
        fields,
    }
}

/// Result methods whose closure sees the error: a unique violation named there is handled.
const ERROR_HANDLERS: &[&str] = &[
    "map_err",
    "or_else",
    "unwrap_or_else",
    "map_or_else",
    "inspect_err",
];

/// Does a pattern match only a failure: `Err(..)` (also `Err(..) | Err(..)`, `ref`, in parentheses)?
fn pat_is_err(p: &syn::Pat, depth: usize) -> bool {
    match p {
        _ if depth > 32 => false,
        syn::Pat::TupleStruct(t) => t.path.segments.last().is_some_and(|s| s.ident == "Err"),
        syn::Pat::Or(o) => !o.cases.is_empty() && o.cases.iter().all(|c| pat_is_err(c, depth + 1)),
        syn::Pat::Paren(r) => pat_is_err(&r.pat, depth + 1),
        syn::Pat::Reference(r) => pat_is_err(&r.pat, depth + 1),
        _ => false,
    }
}

/// Whether an expression's outermost chain goes through `?` (`a().await?`,
/// `q.execute(db).await.map_err(e)?.rows_affected()`), or is a `match` whose `Err(..)` arm
/// leaves the function (`match insert().await { Ok(id) => id, Err(e) => return Err(..) }`). An
/// error there leaves the function.
fn ends_in_try(e: &Expr) -> bool {
    let mut e = e;
    for _ in 0..4096 {
        e = match e {
            Expr::Try(_) => return true,
            Expr::Match(m) => {
                return m.arms.iter().any(|a| {
                    let err = matches!(&a.pat, syn::Pat::TupleStruct(t)
                        if t.path.segments.last().is_some_and(|s| s.ident == "Err"));
                    let leaves = match &*a.body {
                        Expr::Return(_) => true,
                        Expr::Block(b) => block_exits(&b.block),
                        Expr::Macro(m) => m.mac.path.is_ident("bail"),
                        _ => false,
                    };
                    err && leaves
                });
            }
            Expr::MethodCall(m) => &m.receiver,
            Expr::Await(a) => &a.base,
            Expr::Field(f) => &f.base,
            Expr::Paren(p) => &p.expr,
            Expr::Group(g) => &g.expr,
            Expr::Cast(c) => &c.expr,
            _ => return false,
        };
    }
    false
}

/// A function's last expression that hands on the error of what it chains on
/// (`query.execute(db).await`, `res.unique_error(msg).map(|r| r.id)`): a method chain or an
/// `.await`, with no link that turns the error into a value (`.ok()`, `.is_ok()`,
/// `.unwrap_or(..)`).
fn returns_its_error(e: &Expr) -> bool {
    let mut e = e;
    if !matches!(e, Expr::MethodCall(_) | Expr::Await(_)) {
        return false;
    }
    for _ in 0..4096 {
        e = match e {
            Expr::MethodCall(m) => {
                if matches!(
                    m.method.to_string().as_str(),
                    "ok" | "is_ok"
                        | "is_err"
                        | "unwrap_or"
                        | "unwrap_or_default"
                        | "unwrap_or_else"
                        | "or_else"
                        | "or"
                        | "map_or"
                        | "map_or_else"
                        | "unwrap"
                        | "expect"
                ) {
                    return false;
                }
                &m.receiver
            }
            Expr::Await(a) => &a.base,
            Expr::Paren(p) => &p.expr,
            Expr::Group(g) => &g.expr,
            _ => return true,
        };
    }
    false
}

/// Does a pattern match only a success: `Ok(..)` (a `let Ok(x) = .. else { .. }` diverges on a
/// failure)?
fn pat_is_ok(p: &syn::Pat, depth: usize) -> bool {
    match p {
        _ if depth > 32 => false,
        syn::Pat::TupleStruct(t) => t.path.segments.last().is_some_and(|s| s.ident == "Ok"),
        syn::Pat::Type(t) => pat_is_ok(&t.pat, depth + 1),
        syn::Pat::Paren(r) => pat_is_ok(&r.pat, depth + 1),
        _ => false,
    }
}

/// What runs only when a `Result` failed: the closure handed to `map_err`, `or_else`,
/// `inspect_err` (and the error closure of `unwrap_or_else` / `map_or_else`, which takes the
/// error as its parameter; an `Option`'s takes none).
fn failure_args(method: &str, args: &mut [Ex]) {
    let at: &[usize] = match method {
        "map_err" | "or_else" | "inspect_err" | "unwrap_or_else" | "map_or_else" => &[0],
        _ => return,
    };
    for &i in at {
        if let Some(a) = args.get_mut(i)
            && matches!(a, Ex::Closure { params, .. } if !params.is_empty())
        {
            let inner = std::mem::replace(a, Ex::Other(vec![]));
            *a = Ex::Failure(Box::new(inner));
        }
    }
}

/// A local variable `if` tests for a claim's outcome, and whether the test holds when the claim
/// failed: `rows == 0`, `rows < 1`, `!won`, `reply.is_none()` (failed); `rows > 0`, `won`,
/// `reply.is_some()` (won). `rows` may be `res.rows_affected()`.
fn gate_test(e: &Expr, depth: usize) -> Option<(String, bool)> {
    if depth > 8 {
        return None;
    }
    let local = |e: &Expr| -> Option<String> {
        let e = match e {
            Expr::MethodCall(m) if m.method == "rows_affected" && m.args.is_empty() => &*m.receiver,
            // SeaORM's `DeleteResult { rows_affected }`
            Expr::Field(f) if matches!(&f.member, syn::Member::Named(n) if n == "rows_affected") => {
                &*f.base
            }
            Expr::Paren(p) => &*p.expr,
            other => other,
        };
        match e {
            Expr::Path(p) if p.path.segments.len() == 1 && p.qself.is_none() => {
                Some(p.path.segments[0].ident.to_string())
            }
            _ => None,
        }
    };
    let int = |e: &Expr| match e {
        Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) => i.base10_parse::<u64>().ok(),
            _ => None,
        },
        _ => None,
    };
    match e {
        Expr::Paren(p) => gate_test(&p.expr, depth + 1),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
            gate_test(&u.expr, depth + 1).map(|(v, f)| (v, !f))
        }
        // `if let Some(row) = found`: the value is there; `if let None = found`: it is not.
        Expr::Let(l) => {
            let failed = match &*l.pat {
                syn::Pat::TupleStruct(t) if t.path.is_ident("Some") => false,
                syn::Pat::Ident(i) if i.ident == "None" => true,
                syn::Pat::Path(p) if p.path.is_ident("None") => true,
                _ => return None,
            };
            Some((local(&l.expr)?, failed))
        }
        Expr::Binary(b) => {
            let v = local(&b.left)?;
            let n = int(&b.right)?;
            // only "none" against "at least one" (`rows == 0`, `n > 0`, `n >= 1`, `rows != 1`):
            // a comparison with another number (a quota, `total >= 500`) says nothing of it
            let failed = match (b.op, n) {
                (syn::BinOp::Eq(_), 0) | (syn::BinOp::Ne(_), 1) => true,
                (syn::BinOp::Lt(_), 1) | (syn::BinOp::Le(_), 0) => true,
                (syn::BinOp::Eq(_), 1) | (syn::BinOp::Ne(_), 0) => false,
                (syn::BinOp::Gt(_), 0) | (syn::BinOp::Ge(_), 1) => false,
                _ => return None,
            };
            Some((v, failed))
        }
        Expr::MethodCall(m) if m.args.is_empty() => {
            let failed = match m.method.to_string().as_str() {
                "is_none" | "is_err" | "is_empty" => true,
                "is_some" | "is_ok" => false,
                _ => return None,
            };
            Some((local(&m.receiver)?, failed))
        }
        other => Some((local(other)?, false)),
    }
}

/// See [`Func::early_return`].
fn early_return(stmts: &[syn::Stmt], params: &[Param]) -> Option<Line> {
    use syn::visit::Visit;
    #[derive(Default)]
    struct Returns(bool);
    impl<'ast> Visit<'ast> for Returns {
        // (`return Err(..)` fails the caller too)
        fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
            let err = matches!(r.expr.as_deref(), Some(Expr::Call(c))
                if matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Err")));
            self.0 |= !err;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let param = |e: &Expr| {
        let mut e = e;
        while let Expr::Reference(r) = e {
            e = &r.expr;
        }
        matches!(e, Expr::Path(p) if p.path.get_ident().is_some_and(|i| params.iter().any(|q| i == q.name.as_str())))
    };
    for s in stmts {
        // `let Some(name) = name else { return .. };`, `if name.is_none() { return .. }`
        let on_absence = match s {
            syn::Stmt::Local(l) => l
                .init
                .as_ref()
                .is_some_and(|i| i.diverge.is_some() && param(&i.expr)),
            syn::Stmt::Expr(Expr::If(i), _) => {
                i.else_branch.is_none()
                    && matches!(&*i.cond, Expr::MethodCall(m)
                        if m.method == "is_none" && m.args.is_empty() && param(&m.receiver))
            }
            _ => false,
        };
        if on_absence {
            continue;
        }
        let mut r = Returns::default();
        r.visit_stmt(s);
        if r.0 {
            let line = match s {
                syn::Stmt::Local(l) => line_of(l.let_token.span),
                syn::Stmt::Expr(e, _) => line_of(syn::spanned::Spanned::span(e)),
                syn::Stmt::Macro(m) => line_of(syn::spanned::Spanned::span(&m.mac.path)),
                syn::Stmt::Item(_) => continue,
            };
            return Some(line);
        }
    }
    None
}

/// A number compared with a bound other than none or one (`count >= 10`, `(total > 500)`): not
/// a test of whether a row exists (see `gate_test`).
fn compares_with_quota(e: &Expr) -> bool {
    let int = |e: &Expr| match e {
        Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) => i.base10_parse::<u64>().ok(),
            _ => None,
        },
        _ => None,
    };
    let mut e = e;
    while let Expr::Paren(p) = e {
        e = &p.expr;
    }
    let Expr::Binary(b) = e else { return false };
    let Some(n) = int(&b.right).or_else(|| int(&b.left)) else {
        return false;
    };
    use syn::BinOp::*;
    match b.op {
        Eq(_) | Ne(_) => n > 1,
        Lt(_) | Le(_) | Gt(_) | Ge(_) => !matches!(
            (b.op, n, int(&b.right).is_some()),
            (Gt(_), 0, true)
                | (Ge(_), 1, true)
                | (Lt(_), 1, true)
                | (Le(_), 0, true)
                | (Lt(_), 0, false)
                | (Le(_), 1, false)
                | (Gt(_), 1, false)
                | (Ge(_), 0, false)
        ),
        _ => false,
    }
}

/// An `if` on what a call returned, not bound to a name (`if email_taken(&db, &e).await? {`,
/// `if !exists(..)`, `if find(..).await?.is_none()`): whether the test holds when the call
/// found nothing. The effects' walk binds the call's outcome to a name of its own
/// ([`CALL_GATE`] and the line) and judges it as a `let` of it would be.
fn call_test(e: &Expr, depth: usize) -> Option<bool> {
    if depth > 8 {
        return None;
    }
    match e {
        Expr::Paren(p) => call_test(&p.expr, depth + 1),
        Expr::Try(t) => call_test(&t.expr, depth + 1),
        Expr::Await(a) => call_test(&a.base, depth + 1),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
            call_test(&u.expr, depth + 1).map(|f| !f)
        }
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(m.method.to_string().as_str(), "is_none" | "is_some") =>
        {
            let none = m.method == "is_none";
            call_test(&m.receiver, depth + 1).map(|f| f != none)
        }
        // `if let Some(row) = find_one(db, id).await? { .. }`: as `.is_some()`.
        Expr::Let(l)
            if matches!(&*l.pat, syn::Pat::TupleStruct(t)
                if t.path.segments.last().is_some_and(|s| s.ident == "Some")) =>
        {
            call_test(&l.expr, depth + 1)
        }
        Expr::Call(_) | Expr::MethodCall(_) => Some(false),
        _ => None,
    }
}

/// The name an `if` gives the row it found: `existing` in `if let Some(existing) = ..`.
fn found_row(cond: &Expr) -> Option<String> {
    let Expr::Let(l) = cond else { return None };
    let syn::Pat::TupleStruct(t) = &*l.pat else {
        return None;
    };
    if t.path.segments.last().is_none_or(|s| s.ident != "Some") {
        return None;
    }
    match t.elems.iter().collect::<Vec<_>>().as_slice() {
        [syn::Pat::Ident(i)] => Some(i.ident.to_string()),
        _ => None,
    }
}

/// A block that does nothing but leave when `row` is in some state (besides logging): `{ if
/// existing.status == Status::Done { info!(..); return Ok(existing) } }`. How it leaves.
fn leaves_in_state(
    b: &syn::Block,
    row: &str,
    secrets: &HashMap<String, (String, String, String)>,
) -> Option<bool> {
    let stmts: Vec<&syn::Stmt> = b
        .stmts
        .iter()
        .filter(|s| !matches!(s, syn::Stmt::Macro(_)))
        .collect();
    let [syn::Stmt::Expr(Expr::If(inner), _)] = stmts.as_slice() else {
        return None;
    };
    if inner.else_branch.is_some() {
        return None;
    }
    let ((var, _, _), _) = field_test(&inner.cond, secrets)?;
    (var == row)
        .then(|| block_exit(&inner.then_branch))
        .flatten()
}

/// How a block leaves the function, if it does: `Some(true)` with an error (`return Err(..)`,
/// `Err(..)?`, `bail!`), `Some(false)` otherwise (`return Ok(..)`, `return`).
fn block_exit(b: &syn::Block) -> Option<bool> {
    fn is_err(e: &Expr) -> bool {
        matches!(e, Expr::Call(c) if matches!(&*c.func, Expr::Path(p)
            if p.path.segments.last().is_some_and(|s| s.ident == "Err")))
    }
    if !block_exits(b) {
        return None;
    }
    Some(match b.stmts.last() {
        Some(syn::Stmt::Expr(Expr::Return(r), _)) => r.expr.as_deref().is_some_and(is_err),
        _ => true,
    })
}

// `order.status`, `order.status.as_str()`: the variable and the field.
fn test_field(e: &Expr) -> Option<(String, String)> {
    match e {
        Expr::Paren(p) => test_field(&p.expr),
        Expr::Reference(r) => test_field(&r.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => test_field(&u.expr),
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "as_str" | "as_ref" | "as_deref" | "to_string" | "clone"
                ) =>
        {
            test_field(&m.receiver)
        }
        Expr::Field(f) => {
            let syn::Member::Named(name) = &f.member else {
                return None;
            };
            match &*f.base {
                Expr::Path(p) if p.path.segments.len() == 1 && p.qself.is_none() => {
                    Some((p.path.segments[0].ident.to_string(), name.to_string()))
                }
                _ => None,
            }
        }
        _ => None,
    }
}
// A constant a field is compared with: a literal, an enum member (`Status::Paid`).
fn test_constant(e: &Expr) -> Option<String> {
    match e {
        Expr::Paren(p) => test_constant(&p.expr),
        Expr::Reference(r) => test_constant(&r.expr),
        Expr::Lit(l) => match &l.lit {
            syn::Lit::Str(s) => Some(s.value()),
            syn::Lit::Bool(b) => Some(b.value.to_string()),
            syn::Lit::Int(i) => Some(i.base10_digits().to_string()),
            _ => None,
        },
        Expr::Path(p) if p.path.segments.len() >= 2 => {
            let n = p.path.segments.len();
            Some(format!(
                "{}.{}",
                p.path.segments[n - 2].ident,
                p.path.segments[n - 1].ident
            ))
        }
        _ => None,
    }
}

/// The name of a value a field is compared with (`priority`, `body.priority`,
/// `input.status.as_str()`, `&payload.assignee_id`): the variable or the last field.
fn value_name(e: &Expr, depth: usize) -> Option<String> {
    if depth > 8 {
        return None;
    }
    match e {
        Expr::Paren(p) => value_name(&p.expr, depth + 1),
        Expr::Reference(r) => value_name(&r.expr, depth + 1),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => value_name(&u.expr, depth + 1),
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "as_str" | "as_ref" | "as_deref" | "to_string" | "clone" | "to_owned"
                ) =>
        {
            value_name(&m.receiver, depth + 1)
        }
        Expr::Field(f) => match &f.member {
            syn::Member::Named(n) => Some(n.to_string()),
            syn::Member::Unnamed(_) => None,
        },
        Expr::Path(p) if p.path.segments.len() == 1 && p.qself.is_none() => {
            let n = p.path.segments[0].ident.to_string();
            // (`None`, a constant's SCREAMING name: not a request's value)
            n.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
                .then_some(n)
        }
        _ => None,
    }
}

/// How an arm's body leaves the function, as [`block_exit`].
fn arm_exit(e: &Expr) -> Option<bool> {
    match e {
        Expr::Return(r) => Some(r.expr.as_deref().is_some_and(|x| {
            matches!(x, Expr::Call(c) if matches!(&*c.func, Expr::Path(p)
                if p.path.segments.last().is_some_and(|s| s.ident == "Err")))
        })),
        Expr::Block(b) => block_exit(&b.block),
        Expr::Macro(m) if m.mac.path.is_ident("bail") => Some(true),
        _ => None,
    }
}

/// A `match` that tests what a lookup found or a field of a row, read as the `if` it amounts
/// to: `match existing { Some(_) => return Err(..), None => {} }` as `if existing.is_some()`;
/// `match order.status { Status::Done => return Ok(..), _ => {} }` as `if order.status ==
/// Status::Done`; `match order.status { Status::Pending => {}, _ => return Err(..) }` as `if
/// order.status != Status::Pending`. When it applies, the lowered arms (without guards) and the
/// lowered scrutinee are taken from `arms` and `scrutinee` into the test it returns.
fn match_test(
    m: &syn::ExprMatch,
    arms: &mut Vec<Ex>,
    line: Line,
    scrutinee: &mut Option<Ex>,
) -> Option<Ex> {
    enum P {
        Some,
        None,
        Wild,
        Const(String),
    }
    let pat = |p: &syn::Pat| -> Option<P> {
        match p {
            syn::Pat::TupleStruct(t) if t.path.is_ident("Some") => Some(P::Some),
            syn::Pat::Ident(i) if i.ident == "None" => Some(P::None),
            syn::Pat::Path(x) if x.path.is_ident("None") => Some(P::None),
            syn::Pat::Wild(_) => Some(P::Wild),
            syn::Pat::Ident(i) if i.subpat.is_none() => Some(P::Wild),
            syn::Pat::Lit(l) => match &l.lit {
                syn::Lit::Str(s) => Some(P::Const(s.value())),
                syn::Lit::Bool(b) => Some(P::Const(b.value.to_string())),
                _ => None,
            },
            syn::Pat::Path(x) if x.path.segments.len() >= 2 => {
                let n = x.path.segments.len();
                Some(P::Const(format!(
                    "{}.{}",
                    x.path.segments[n - 2].ident,
                    x.path.segments[n - 1].ident
                )))
            }
            syn::Pat::TupleStruct(t) if t.path.segments.len() >= 2 => {
                let n = t.path.segments.len();
                Some(P::Const(format!(
                    "{}.{}",
                    t.path.segments[n - 2].ident,
                    t.path.segments[n - 1].ident
                )))
            }
            _ => None,
        }
    };
    let pats: Vec<(P, Option<bool>)> = m
        .arms
        .iter()
        .map(|a| Some((pat(&a.pat)?, arm_exit(&a.body))))
        .collect::<Option<_>>()?;
    let mut tested = &*m.expr;
    loop {
        tested = match tested {
            Expr::Paren(p) => &p.expr,
            Expr::Reference(r) => &r.expr,
            _ => break,
        };
    }
    // `match existing { Some(..) => .., None => .. }`
    if let Expr::Path(p) = tested
        && p.path.segments.len() == 1
        && p.qself.is_none()
        && pats.len() == 2
    {
        let var = p.path.segments[0].ident.to_string();
        let some = pats.iter().position(|(p, _)| matches!(p, P::Some))?;
        let none = 1 - some;
        if !matches!(pats[none].0, P::None | P::Wild) {
            return None;
        }
        let exit = pats[some].1;
        let scrutinee = scrutinee.take()?;
        let none_arm = arms.remove(none);
        let some_arm = arms.remove(0);
        return Some(Ex::Gate {
            var,
            failed_when_true: false,
            then_exits: exit.is_some(),
            then_refuses: exit == Some(true),
            line,
            parts: vec![scrutinee, some_arm, none_arm],
        });
    }
    // `match find_folder(db, &id).await? { Some(row) => .., None => .. }`: what the call found,
    // bound to a name of its own as an `if` on a call is ([`CALL_GATE`]).
    if pats.len() == 2
        && call_test(tested, 0) == Some(false)
        && let Some(some) = pats.iter().position(|(p, _)| matches!(p, P::Some))
        && matches!(pats[1 - some].0, P::None | P::Wild)
    {
        let none = 1 - some;
        let exit = pats[some].1;
        let scrutinee = scrutinee.take()?;
        let none_arm = arms.remove(none);
        let some_arm = arms.remove(0);
        return Some(Ex::Gate {
            var: format!("{CALL_GATE}{line}"),
            failed_when_true: false,
            then_exits: exit.is_some(),
            then_refuses: exit == Some(true),
            line,
            parts: vec![scrutinee, some_arm, none_arm],
        });
    }
    let (var, field) = test_field(tested)?;
    let exits: Vec<usize> = (0..pats.len()).filter(|&i| pats[i].1.is_some()).collect();
    let stays: Vec<usize> = (0..pats.len()).filter(|&i| pats[i].1.is_none()).collect();
    if exits.is_empty() || stays.is_empty() {
        return None;
    }
    let constant = |i: usize| match &pats[i].0 {
        P::Const(c) => Some(c.clone()),
        _ => None,
    };
    // One arm stays (`Pending => {}`) and the others leave: what runs after has that value.
    // Else the first arm that leaves on a value: what runs after does not have it.
    let (test, then, otherwise) = match stays.as_slice() {
        [one] if constant(*one).is_some() => (format!("ne:{}", constant(*one)?), exits, stays),
        _ => {
            let first = *exits.iter().find(|&&i| constant(i).is_some())?;
            let rest = (0..pats.len()).filter(|&i| i != first).collect();
            (format!("eq:{}", constant(first)?), vec![first], rest)
        }
    };
    let refuses = then.iter().all(|&i| pats[i].1 == Some(true));
    let scrutinee = scrutinee.take()?;
    let mut taken: Vec<Option<Ex>> = std::mem::take(arms).into_iter().map(Some).collect();
    let mut pick = |ix: &[usize]| Ex::Other(ix.iter().filter_map(|&i| taken[i].take()).collect());
    let then_arm = pick(&then);
    let other_arm = pick(&otherwise);
    Some(Ex::FieldTest(Box::new(FieldTest {
        var,
        field,
        test,
        any: None,
        then_exits: true,
        then_refuses: refuses,
        line,
        parts: vec![scrutinee, then_arm, other_arm],
    })))
}

/// Does a `let` pattern bind a name `mut` (`let mut command = ..`, `let (mut a, b) = ..`)?
fn pat_is_mut(p: &syn::Pat) -> bool {
    match p {
        syn::Pat::Ident(i) => i.mutability.is_some(),
        syn::Pat::Type(t) => pat_is_mut(&t.pat),
        syn::Pat::Tuple(t) => t.elems.iter().any(pat_is_mut),
        _ => false,
    }
}

/// Does a variant pattern test more than the variant: a sub-pattern that is no plain binding,
/// `_` or `..` (`Cmd::Pay(Mode::Test)`, `Cmd::Pay { live: true, .. }`, `Cmd::Pay(Some(x))`)?
fn refutable_inside(p: &syn::Pat, depth: usize) -> bool {
    fn irrefutable(p: &syn::Pat, depth: usize) -> bool {
        match p {
            _ if depth > 16 => false,
            syn::Pat::Wild(_) | syn::Pat::Rest(_) => true,
            syn::Pat::Ident(i) => i.subpat.is_none(),
            syn::Pat::Reference(r) => irrefutable(&r.pat, depth + 1),
            syn::Pat::Paren(r) => irrefutable(&r.pat, depth + 1),
            syn::Pat::Type(t) => irrefutable(&t.pat, depth + 1),
            syn::Pat::Tuple(t) => t.elems.iter().all(|e| irrefutable(e, depth + 1)),
            _ => false,
        }
    }
    match p {
        _ if depth > 16 => true,
        syn::Pat::Or(o) => o.cases.iter().any(|c| refutable_inside(c, depth + 1)),
        syn::Pat::Paren(x) => refutable_inside(&x.pat, depth + 1),
        syn::Pat::Reference(x) => refutable_inside(&x.pat, depth + 1),
        syn::Pat::TupleStruct(t) => !t.elems.iter().all(|e| irrefutable(e, 0)),
        syn::Pat::Struct(t) => !t.fields.iter().all(|f| irrefutable(&f.pat, 0)),
        _ => false,
    }
}

/// Traits that say what a type can do besides its own methods (`Send`, `Clone`, `Debug`): no
/// bound a method call is read through.
const MARKER_TRAITS: &[&str] = &[
    "AsRef",
    "AsMut",
    "Borrow",
    "Into",
    "From",
    "ToString",
    "Fn",
    "FnMut",
    "FnOnce",
    "Error",
    "Future",
    "Iterator",
    "IntoIterator",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Clone",
    "Copy",
    "Debug",
    "Display",
    "Default",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "Hash",
    "Serialize",
    "Deserialize",
    "Any",
];

/// Each type parameter of `generics` bounded by a trait of its own (in its declaration or a
/// `where` clause), with the first such bound (`K: ApiKeyRepository + Send` → `ApiKeyRepository`).
fn param_bounds(generics: &syn::Generics) -> Vec<(String, Ty)> {
    let first = |bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>| {
        bounds.iter().find_map(|b| match b {
            syn::TypeParamBound::Trait(t)
                if t.path
                    .segments
                    .last()
                    .is_some_and(|l| !MARKER_TRAITS.contains(&l.ident.to_string().as_str())) =>
            {
                Some(Ty {
                    path: path_segs(&t.path),
                    args: vec![],
                })
            }
            _ => None,
        })
    };
    let mut out: Vec<(String, Ty)> = Vec::new();
    for p in generics.type_params() {
        if let Some(t) = first(&p.bounds) {
            out.push((p.ident.to_string(), t));
        }
    }
    if let Some(w) = &generics.where_clause {
        for pred in &w.predicates {
            if let syn::WherePredicate::Type(t) = pred
                && let [name] = lower_ty(&t.bounded_ty).path.as_slice()
                && !out.iter().any(|(n, _)| n == name)
                && let Some(b) = first(&t.bounds)
            {
                out.push((name.clone(), b));
            }
        }
    }
    out
}

/// `t` with each type parameter of `bounds` written as its bound.
fn bind_params(t: &mut Ty, bounds: &[(String, Ty)], depth: usize) {
    if depth > 32 || bounds.is_empty() {
        return;
    }
    if let [one] = t.path.as_slice()
        && t.args.is_empty()
        && let Some((_, b)) = bounds.iter().find(|(p, _)| p == one)
    {
        *t = b.clone();
        return;
    }
    for a in &mut t.args {
        bind_params(a, bounds, depth + 1);
    }
}

/// The generic parameters `params` of an alias written `$0`, `$1`, .. in the type it names.
fn number_params(t: &mut Ty, params: &[String], depth: usize) {
    if depth > 32 {
        return;
    }
    if let [one] = t.path.as_slice()
        && let Some(i) = params.iter().position(|p| p == one)
    {
        t.path = vec![format!("${i}")];
    }
    for a in &mut t.args {
        number_params(a, params, depth + 1);
    }
}

/// The variants each arm of a `match` names (`None` for a catch-all).
type ArmVariants = Vec<Option<Vec<String>>>;

/// A `match` of a local variable on an enum's variants (see [`VariantMatch`]): the variable, the
/// enum as written, and the variants each arm names (`None` for a catch-all). None when the
/// scrutinee is no plain variable, an arm's pattern is anything else (a literal, a tuple,
/// `Some`/`Ok`/`Err`), or no arm names a variant.
fn variant_arms(m: &syn::ExprMatch) -> Option<(String, String, ArmVariants)> {
    fn names(
        p: &syn::Pat,
        enum_name: &mut Option<String>,
        out: &mut Vec<String>,
        depth: usize,
    ) -> bool {
        let path = match p {
            _ if depth > 16 => return false,
            syn::Pat::Or(o) => return o.cases.iter().all(|c| names(c, enum_name, out, depth + 1)),
            syn::Pat::Paren(x) => return names(&x.pat, enum_name, out, depth + 1),
            syn::Pat::Reference(x) => return names(&x.pat, enum_name, out, depth + 1),
            syn::Pat::Struct(x) if x.qself.is_none() => &x.path,
            syn::Pat::TupleStruct(x) if x.qself.is_none() => &x.path,
            syn::Pat::Path(x) if x.qself.is_none() => &x.path,
            _ => return false,
        };
        let n = path.segments.len();
        if n < 2 {
            return false;
        }
        let e = path.segments[n - 2].ident.to_string();
        if enum_name.get_or_insert_with(|| e.clone()) != &e {
            return false;
        }
        out.push(path.segments[n - 1].ident.to_string());
        true
    }
    let mut tested = &*m.expr;
    loop {
        tested = match tested {
            Expr::Paren(p) => &p.expr,
            Expr::Reference(r) => &r.expr,
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => &u.expr,
            _ => break,
        };
    }
    let Expr::Path(p) = tested else { return None };
    if p.qself.is_some() || p.path.segments.len() != 1 {
        return None;
    }
    let var = p.path.segments[0].ident.to_string();
    let mut enum_name = None;
    let mut arms = Vec::with_capacity(m.arms.len());
    for arm in &m.arms {
        let pat = match &arm.pat {
            syn::Pat::Guard(g) => &*g.pat,
            p => p,
        };
        match pat {
            syn::Pat::Wild(_) => arms.push(None),
            syn::Pat::Ident(i) if i.subpat.is_none() => arms.push(None),
            _ => {
                let mut out = Vec::new();
                if !names(pat, &mut enum_name, &mut out, 0) {
                    return None;
                }
                arms.push(Some(out));
            }
        }
    }
    Some((var, enum_name?, arms))
}

/// A test of a field of a local variable an `if` makes, as `Effect::state_guard` writes it, and
/// how it is joined to the rest of the condition (see [`FieldTest::any`]): `order.status !=
/// "paid"` (`ne:paid`), `order.status == Status::Paid` (`eq:Status.Paid`),
/// `invite.accepted_at.is_some()` (`truthy`), `!user.active` (`falsy`); the first such test of an
/// `a || b` or `a && b` chain.
fn field_test(
    e: &Expr,
    secrets: &HashMap<String, (String, String, String)>,
) -> Option<((String, String, String), Option<bool>)> {
    fn flip(test: &str) -> String {
        match test.split_once(':') {
            Some(("eq", v)) => format!("ne:{v}"),
            Some(("ne", v)) => format!("eq:{v}"),
            Some(("hash", v)) => format!("nothash:{v}"),
            Some(("nothash", v)) => format!("hash:{v}"),
            _ if test == "truthy" => "falsy".into(),
            _ => "truthy".into(),
        }
    }
    let single = |e: &Expr, depth: usize| -> Option<(String, String, String)> {
        single_test(e, depth, secrets)
    };
    fn single_test(
        e: &Expr,
        depth: usize,
        secrets: &HashMap<String, (String, String, String)>,
    ) -> Option<(String, String, String)> {
        if depth > 8 {
            return None;
        }
        if let Some(check) = secret_check(e, 0) {
            return Some(check);
        }
        match e {
            Expr::Paren(p) => single_test(&p.expr, depth + 1, secrets),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
                single_test(&u.expr, depth + 1, secrets).map(|(v, f, t)| (v, f, flip(&t)))
            }
            Expr::Path(p) if p.path.segments.len() == 1 && p.qself.is_none() => {
                secrets.get(&p.path.segments[0].ident.to_string()).cloned()
            }
            Expr::Binary(b) if matches!(b.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) => {
                // The other side a constant, or a value the request holds by its name
                // (`ticket.priority != body.priority`: `v:priority`), the row's field on the left
                // when both are fields.
                let compared = |e: &Expr| {
                    test_constant(e).or_else(|| value_name(e, 0).map(|n| format!("v:{n}")))
                };
                let ((var, name), value) = match (test_field(&b.left), test_field(&b.right)) {
                    (Some(f), None) => (f, compared(&b.right)?),
                    (None, Some(f)) => (f, compared(&b.left)?),
                    (Some(f), Some(_)) => (f, compared(&b.right)?),
                    _ => return None,
                };
                let op = if matches!(b.op, syn::BinOp::Eq(_)) {
                    "eq"
                } else {
                    "ne"
                };
                Some((var, name, format!("{op}:{value}")))
            }
            Expr::MethodCall(m) if m.args.is_empty() => {
                let test = match m.method.to_string().as_str() {
                    "is_some" | "is_ok" => "truthy",
                    "is_none" | "is_err" => "falsy",
                    _ => return None,
                };
                let (var, name) = test_field(&m.receiver)?;
                Some((var, name, test.into()))
            }
            Expr::Field(_) => {
                let (var, name) = test_field(e)?;
                Some((var, name, "truthy".into()))
            }
            // `matches!(tx.txn_state, PaymentState::Pending)`: the field equals that variant
            // (one variant: `A | B` or a guard tests no single state)
            Expr::Macro(m) if m.mac.path.is_ident("matches") => {
                let (field, pat) = m
                    .mac
                    .parse_body_with(|input: syn::parse::ParseStream| {
                        let field: Expr = input.parse()?;
                        input.parse::<Token![,]>()?;
                        let pat = syn::Pat::parse_multi(input)?;
                        input
                            .is_empty()
                            .then_some(())
                            .ok_or_else(|| input.error("guard"))?;
                        Ok((field, pat))
                    })
                    .ok()?;
                let path = match &pat {
                    syn::Pat::Path(p) => &p.path,
                    syn::Pat::TupleStruct(p) => &p.path,
                    syn::Pat::Struct(p) => &p.path,
                    _ => return None,
                };
                // (the variant as `==` compares with it)
                let variant = test_constant(&Expr::Path(syn::ExprPath {
                    attrs: Vec::new(),
                    qself: None,
                    path: path.clone(),
                }))?;
                let (var, name) = test_field(&field)?;
                Some((var, name, format!("eq:{variant}")))
            }
            _ => None,
        }
    }
    if let Some(t) = single(e, 0) {
        return Some((t, None));
    }
    // `a || b || c`: the first operand that is such a test.
    let mut e = e;
    while let Expr::Paren(p) = e {
        e = &p.expr;
    }
    let Expr::Binary(b) = e else { return None };
    let any = match b.op {
        syn::BinOp::Or(_) => true,
        syn::BinOp::And(_) => false,
        _ => return None,
    };
    let mut operands = vec![&*b.right, &*b.left];
    let mut seen = 0;
    while let Some(x) = operands.pop() {
        seen += 1;
        if seen > 64 {
            return None;
        }
        match x {
            Expr::Binary(inner)
                if matches!(
                    (&inner.op, any),
                    (syn::BinOp::Or(_), true) | (syn::BinOp::And(_), false)
                ) =>
            {
                operands.push(&inner.right);
                operands.push(&inner.left);
            }
            _ => {
                if let Some(t) = single(x, 0) {
                    return Some((t, Some(any)));
                }
            }
        }
    }
    None
}

/// Names a handler gives what the request sent (`Json(body)`, `Form(input)`): not a stored row.
const REQUEST_VARS: &[&str] = &[
    "body", "payload", "req", "request", "input", "form", "params", "data", "dto", "json",
];

/// A check of a secret the request holds against a looked-up row's stored one
/// (`bcrypt::verify(&body.current_password, &user.password_hash)?`, `.unwrap_or(false)`,
/// `user.verify_password(&body.password)`): the row's variable, the stored field, and the test
/// as `Effect::state_guard` writes it, `hash:v:NAME`. As the TypeScript front end reads one.
fn secret_check(e: &Expr, depth: usize) -> Option<(String, String, String)> {
    if depth > 8 {
        return None;
    }
    match e {
        Expr::Paren(p) => secret_check(&p.expr, depth + 1),
        Expr::Try(t) => secret_check(&t.expr, depth + 1),
        Expr::Await(a) => secret_check(&a.base, depth + 1),
        Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "unwrap" | "unwrap_or" | "unwrap_or_default" | "is_ok" | "expect"
            ) && secret_check(&m.receiver, depth + 1).is_some() =>
        {
            secret_check(&m.receiver, depth + 1)
        }
        Expr::Call(c) => {
            let Expr::Path(f) = &*c.func else { return None };
            let name = f.path.segments.last()?.ident.to_string();
            if !crate::text::names_secret_check(&name) {
                return None;
            }
            // The stored one: a field named for a secret, of a row rather than of what the
            // request sent (`body.current_password` names a password too), a hash first.
            let args: Vec<&Expr> = c.args.iter().collect();
            let candidates: Vec<(usize, String, String)> = args
                .iter()
                .enumerate()
                .filter_map(|(i, a)| {
                    let (var, field) = test_field(a)?;
                    crate::text::names_secret_field(&field).then_some((i, var, field))
                })
                .collect();
            let stored_rank = |(_, var, field): &&(usize, String, String)| {
                let lower = field.to_ascii_lowercase();
                let hashed = ["hash", "digest", "crypt"]
                    .iter()
                    .any(|w| lower.contains(w));
                let sent = REQUEST_VARS.contains(&var.as_str());
                (hashed, !sent)
            };
            let (i, var, field) = candidates.iter().max_by_key(stored_rank)?.clone();
            if REQUEST_VARS.contains(&var.as_str()) {
                return None;
            }
            let name = args
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .find_map(|(_, a)| value_name(a, 0))
                .filter(|n| crate::text::names_current_secret(n))?;
            Some((var, field, format!("hash:v:{name}")))
        }
        // `user.verify_password(&body.password)`: a method of the row, over its password.
        Expr::MethodCall(m) if crate::text::names_secret_check(&m.method.to_string()) => {
            let Expr::Path(p) = &*m.receiver else {
                return None;
            };
            if p.path.segments.len() != 1 || m.args.len() != 1 {
                return None;
            }
            let var = p.path.segments[0].ident.to_string();
            let name =
                value_name(&m.args[0], 0).filter(|n| crate::text::names_current_secret(n))?;
            Some((var, "password".into(), format!("hash:v:{name}")))
        }
        _ => None,
    }
}

/// Does a block leave the function: end in `return ..`, `Err(..)?`, or `bail!`?
fn block_exits(b: &syn::Block) -> bool {
    match b.stmts.last() {
        Some(syn::Stmt::Expr(Expr::Return(_), _)) => true,
        Some(syn::Stmt::Expr(Expr::Try(t), _)) => {
            matches!(&*t.expr, Expr::Call(c) if matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Err")))
        }
        Some(syn::Stmt::Macro(m)) => m.mac.path.is_ident("bail"),
        Some(syn::Stmt::Expr(Expr::Macro(m), _)) => m.mac.path.is_ident("bail"),
        _ => false,
    }
}

/// `if let Err(e) = insert(..).await { if is_unique_violation(&e) { return Err(..) } .. }`: the
/// statement leaves the function with an error when its call's error is a unique violation,
/// whatever else it swallows: a duplicate fails the request there. Not `if !is_unique(..)`,
/// which lets the duplicate through.
fn leaves_on_unique_violation(i: &syn::ExprIf) -> bool {
    fn test_names_unique(e: &Expr, depth: usize) -> bool {
        match e {
            _ if depth > 16 => false,
            Expr::Paren(p) => test_names_unique(&p.expr, depth + 1),
            Expr::Reference(r) => test_names_unique(&r.expr, depth + 1),
            Expr::Call(c) => matches!(&*c.func, Expr::Path(p)
                if p.path.segments.last().is_some_and(|s| names_unique(&s.ident.to_string()))),
            Expr::MethodCall(m) => {
                names_unique(&m.method.to_string()) || test_names_unique(&m.receiver, depth + 1)
            }
            Expr::Macro(m) => names_unique(&m.mac.tokens.to_string()),
            Expr::Binary(b) => match b.op {
                syn::BinOp::Eq(_) => {
                    let named = |e: &Expr| match e {
                        Expr::Lit(l) => {
                            matches!(&l.lit, syn::Lit::Str(s) if names_unique(&s.value()))
                        }
                        Expr::Path(p) => p
                            .path
                            .segments
                            .iter()
                            .any(|s| names_unique(&s.ident.to_string())),
                        _ => false,
                    };
                    named(&b.left) || named(&b.right)
                }
                syn::BinOp::And(_) => {
                    test_names_unique(&b.left, depth + 1) || test_names_unique(&b.right, depth + 1)
                }
                _ => false,
            },
            _ => false,
        }
    }
    let Expr::Let(l) = &*i.cond else { return false };
    pat_is_err(&l.pat, 0)
        && i.then_branch.stmts.iter().any(|s| {
            matches!(s, syn::Stmt::Expr(Expr::If(j), _)
                if test_names_unique(&j.cond, 0) && block_exit(&j.then_branch) == Some(true))
        })
}

/// A name or string that means a unique violation: the codes the TypeScript side knows, and
/// sea-orm's `SqlErr::UniqueConstraintViolation` (diesel's `UniqueViolation` and sqlx's
/// `is_unique_violation` are among the former).
fn names_unique(s: &str) -> bool {
    s.contains("UniqueConstraintViolation") || crate::text::names_unique_violation(s)
}

/// Does a pattern name a unique violation (`Err(DbErr::Exec(RuntimeErr::SqlxError(..)))` no;
/// `Some(SqlErr::UniqueConstraintViolation(_))`, `DatabaseErrorKind::UniqueViolation` yes)?
fn pat_names_unique(p: &syn::Pat, depth: usize) -> bool {
    if depth > 32 {
        return false;
    }
    let path = |p: &syn::Path| {
        p.segments
            .iter()
            .any(|s| names_unique(&s.ident.to_string()))
    };
    match p {
        syn::Pat::TupleStruct(t) => {
            path(&t.path) || t.elems.iter().any(|e| pat_names_unique(e, depth + 1))
        }
        syn::Pat::Struct(s) => {
            path(&s.path) || s.fields.iter().any(|f| pat_names_unique(&f.pat, depth + 1))
        }
        syn::Pat::Path(x) => path(&x.path),
        syn::Pat::Ident(i) => i
            .subpat
            .as_ref()
            .is_some_and(|(_, s)| pat_names_unique(s, depth + 1)),
        syn::Pat::Or(o) => o.cases.iter().any(|c| pat_names_unique(c, depth + 1)),
        syn::Pat::Reference(r) => pat_names_unique(&r.pat, depth + 1),
        syn::Pat::Paren(r) => pat_names_unique(&r.pat, depth + 1),
        syn::Pat::Tuple(t) => t.elems.iter().any(|e| pat_names_unique(e, depth + 1)),
        syn::Pat::Slice(t) => t.elems.iter().any(|e| pat_names_unique(e, depth + 1)),
        syn::Pat::Type(t) => pat_names_unique(&t.pat, depth + 1),
        syn::Pat::Guard(g) => pat_names_unique(&g.pat, depth + 1),
        syn::Pat::Lit(l) => match &l.lit {
            syn::Lit::Str(s) => names_unique(&s.value()),
            syn::Lit::Int(i) => names_unique(i.base10_digits()),
            _ => false,
        },
        _ => false,
    }
}

/// Does a lowered expression name a unique violation (a path, a method, a string)?
pub fn mentions_unique(e: &Ex) -> bool {
    let mut stack = vec![e];
    let mut seen = 0usize;
    while let Some(e) = stack.pop() {
        seen += 1;
        if seen > 20_000 {
            return false;
        }
        let hit = match e {
            Ex::Path(p, _) => p.iter().any(|s| names_unique(s)),
            Ex::Method(_, name, _, _) => names_unique(name),
            Ex::Lit(s) => names_unique(s),
            // a nested `match` / `if let` that already inspects one
            Ex::Caught(_) => true,
            Ex::Macro { path, lits, .. } => {
                path.iter().any(|s| names_unique(s)) || lits.iter().any(|s| names_unique(s))
            }
            _ => false,
        };
        if hit {
            return true;
        }
        children(e, &mut stack);
    }
    false
}

/// The key and value of each argument of a `#[sea_orm(..)]` attribute, or `None` when the
/// attribute is not a list of `key` / `key = value` items.
fn orm_args(a: &syn::Attribute) -> Option<Vec<OrmArg>> {
    let syn::Meta::List(list) = &a.meta else {
        return None;
    };
    let mut out = Vec::new();
    let mut chunk: Vec<TokenTree> = Vec::new();
    let mut chunks = Vec::new();
    for tt in list.tokens.clone() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => chunks.push(std::mem::take(&mut chunk)),
            _ => chunk.push(tt),
        }
    }
    if !chunk.is_empty() {
        chunks.push(chunk);
    }
    for c in chunks.into_iter().filter(|c| !c.is_empty()) {
        let Some(TokenTree::Ident(key)) = c.first() else {
            return None;
        };
        let value = match c.get(1) {
            Some(TokenTree::Punct(p)) if p.as_char() == '=' => {
                let rest = &c[2..];
                Some(match rest {
                    [TokenTree::Literal(l)] => match syn::Lit::new(l.clone()) {
                        syn::Lit::Str(s) => s.value(),
                        other => literal_text(&other),
                    },
                    _ => rest.iter().map(|t| t.to_string()).collect::<String>(),
                })
            }
            _ => None,
        };
        out.push(OrmArg {
            key: key.to_string(),
            value,
        });
    }
    Some(out)
}

fn literal_text(l: &syn::Lit) -> String {
    match l {
        syn::Lit::Bool(b) => b.value.to_string(),
        syn::Lit::Int(i) => i.base10_digits().to_string(),
        syn::Lit::Str(s) => s.value(),
        _ => String::new(),
    }
}

fn is_sea_orm(a: &syn::Attribute) -> bool {
    a.path().is_ident("sea_orm")
}

/// A struct deriving `DeriveEntityModel` (or under `#[sea_orm::model]`): its `sea_orm` arguments.
/// The path of axum-extra's `#[typed_path("/users/{id}")]` (with or without `rejection(..)`
/// after it).
/// diesel's `#[diesel(table_name = users)]` (or `= crate::schema::users`, beside other options,
/// also under `#[cfg_attr(feature = "..", diesel(..))]`), and diesel 1's `#[table_name =
/// "users"]`: the table's name.
fn diesel_table(attrs: &[syn::Attribute]) -> Option<String> {
    // `table_name = a::b::users` in a token stream, or in a group of it
    fn scan(tokens: proc_macro2::TokenStream, depth: usize) -> Option<String> {
        if depth > 4 {
            return None;
        }
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        if let Some(at) = tokens
            .iter()
            .position(|t| matches!(t, TokenTree::Ident(i) if i == "table_name"))
        {
            let mut last = None;
            for t in tokens.iter().skip(at + 2) {
                match t {
                    TokenTree::Punct(p) if p.as_char() == ',' => break,
                    TokenTree::Ident(i) => last = Some(i.to_string()),
                    _ => {}
                }
            }
            return last;
        }
        tokens.into_iter().find_map(|t| match t {
            TokenTree::Group(g) => scan(g.stream(), depth + 1),
            _ => None,
        })
    }
    for a in attrs {
        match &a.meta {
            syn::Meta::NameValue(nv) if a.path().is_ident("table_name") => {
                if let syn::Expr::Lit(l) = &nv.value
                    && let syn::Lit::Str(s) = &l.lit
                {
                    return Some(s.value());
                }
            }
            syn::Meta::List(list)
                if a.path().is_ident("diesel") || a.path().is_ident("cfg_attr") =>
            {
                if let Some(t) = scan(list.tokens.clone(), 0) {
                    return Some(t);
                }
            }
            _ => {}
        }
    }
    None
}

fn typed_path(attrs: &[syn::Attribute]) -> Option<String> {
    let attr = attrs.iter().find(|a| a.path().is_ident("typed_path"))?;
    let syn::Meta::List(list) = &attr.meta else {
        return None;
    };
    match list.tokens.clone().into_iter().next()? {
        TokenTree::Literal(lit) => match syn::Lit::new(lit) {
            syn::Lit::Str(s) => Some(s.value()),
            _ => None,
        },
        _ => None,
    }
}

fn entity_attrs(s: &syn::ItemStruct) -> Option<EntityAttrs> {
    let derives_model = s.attrs.iter().any(|a| {
        let p = path_segs(a.path());
        if p == ["sea_orm", "model"] {
            return true;
        }
        if !a.path().is_ident("derive") {
            return false;
        }
        let syn::Meta::List(l) = &a.meta else {
            return false;
        };
        l.tokens
            .clone()
            .into_iter()
            .any(|t| {
                // SeaORM's expanded entity format derives the active model on its own
                // (`#[derive(DeriveModel, DeriveActiveModel)] pub struct Model`, beside a
                // `#[derive(DeriveEntity)] pub struct Entity`): the same generated types.
                matches!(&t, TokenTree::Ident(i) if i == "DeriveEntityModel" || i == "DeriveActiveModel")
            })
    });
    if !derives_model {
        return None;
    }
    let mut out = EntityAttrs {
        line: line_of(s.ident.span()),
        ..EntityAttrs::default()
    };
    for a in s.attrs.iter().filter(|a| is_sea_orm(a)) {
        match orm_args(a) {
            Some(args) => out.args.extend(args),
            None => out.unreadable.push(line_of(a.pound_token.span)),
        }
    }
    for f in &s.fields {
        let Some(name) = &f.ident else { continue };
        let mut args = Vec::new();
        for a in f.attrs.iter().filter(|a| is_sea_orm(a)) {
            match orm_args(a) {
                Some(more) => args.extend(more),
                None => out.unreadable.push(line_of(a.pound_token.span)),
            }
        }
        out.fields.push(EntityField {
            name: name.to_string().trim_start_matches("r#").to_string(),
            ty: lower_ty(&f.ty),
            args,
            line: line_of(name.span()),
        });
    }
    Some(out)
}

struct Lower {
    /// Retry constructs of the function being lowered.
    retry_spans: Vec<RetrySpan>,
    depth: usize,
    /// Per line (0-based) of the file: does it mention `idem`? Key code is found with it.
    idem_lines: Vec<bool>,
    /// Inside an `impl` of a type named for idempotency (`impl Default for IdempotencySet`).
    idem_impl: bool,
    /// The names bound by patterns (`let`, `match` arms, closures, loops) and assigned to in
    /// the function being lowered, each time it happens (see `Func::rebound`).
    bound: Vec<String>,
    /// Of those, the ones a `let` statement binds or an assignment replaces.
    let_bound: Vec<String>,
    /// The loops around what is being lowered, innermost last: whether each goes over the items
    /// of a collection (`for x in xs`), rather than around a condition or a counter (`loop`,
    /// `while`, `for attempt in 0..5`), where a `continue` tries again.
    loops: Vec<bool>,
    /// Locals of the function being lowered that hold a secret check's outcome (`let valid =
    /// bcrypt::verify(&body.current, &user.password_hash)?;`), as [`secret_check`] reads it.
    secret_checks: HashMap<String, (String, String, String)>,
}

/// Words that name retrying in a loop header or a wrapper's name.
fn names_retry(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["attempt", "retr", "tries", "backoff"]
        .iter()
        .any(|w| lower.contains(w))
}

impl Lower {
    /// A loop whose header (or, for `loop`, body) counts attempts or retries.
    fn retry_loop(&mut self, e: &Expr, text: &str) {
        if names_retry(text) {
            let span = e.span();
            self.retry_spans.push(RetrySpan {
                start: span.start().line as Line,
                end: span.end().line as Line,
                what: "the retry loop".into(),
            });
        }
    }

    /// Closures (and async blocks) given to a call whose name says it retries.
    fn retry_closures<'e>(&mut self, callee: &str, args: impl Iterator<Item = &'e Expr>) {
        let last = callee.rsplit("::").next().unwrap_or(callee);
        if !names_retry(last) {
            return;
        }
        for a in args {
            if matches!(a, Expr::Closure(_) | Expr::Async(_)) {
                let span = a.span();
                self.retry_spans.push(RetrySpan {
                    start: span.start().line as Line,
                    end: span.end().line as Line,
                    what: format!("the `{}` closure", callee.trim_start_matches('.')),
                });
            }
        }
    }

    fn items(&mut self, items: &[syn::Item]) -> Vec<Item> {
        items.iter().filter_map(|i| self.item(i)).collect()
    }

    fn item(&mut self, item: &syn::Item) -> Option<Item> {
        Some(match item {
            syn::Item::Fn(f) => Item::Fn(self.func(&f.attrs, &f.sig, Some(&f.block), false)),
            syn::Item::Mod(m) => Item::Mod {
                name: m.ident.to_string(),
                path_attr: path_attr(&m.attrs),
                body: m.content.as_ref().map(|(_, items)| self.items(items)),
                is_test: is_test_attr(&m.attrs),
            },
            syn::Item::Use(u) => {
                let mut out = Vec::new();
                let mut prefix = Vec::new();
                if u.leading_colon.is_some() {
                    prefix.push("::".to_string());
                }
                use_tree(&mut prefix, &u.tree, &mut out);
                for d in &mut out {
                    if d.path.first().is_some_and(|s| s == "::") {
                        d.path.remove(0);
                    }
                }
                Item::Use(out)
            }
            syn::Item::ExternCrate(e) => Item::ExternCrate {
                name: e.ident.to_string(),
                alias: e
                    .rename
                    .as_ref()
                    .map(|(_, a)| a.to_string())
                    .unwrap_or_else(|| e.ident.to_string()),
            },
            syn::Item::Impl(i) => {
                let is_test = is_test_attr(&i.attrs);
                let saved = self.idem_impl;
                self.idem_impl = super::keyscan::has_idem(&lower_ty(&i.self_ty).path.join("::"));
                let mut fns = Vec::new();
                let mut assoc_types = Vec::new();
                let mut consts = Vec::new();
                for it in &i.items {
                    match it {
                        syn::ImplItem::Fn(f) => {
                            fns.push(self.func(&f.attrs, &f.sig, Some(&f.block), is_test))
                        }
                        syn::ImplItem::Type(t) => {
                            assoc_types.push((t.ident.to_string(), lower_ty(&t.ty)))
                        }
                        syn::ImplItem::Const(c) => {
                            consts.push((c.ident.to_string(), self.expr(&c.expr)))
                        }
                        _ => {}
                    }
                }
                self.idem_impl = saved;
                let self_ty = lower_ty(&i.self_ty).path;
                Item::Impl(Impl {
                    blanket: blanket_bounds(&i.generics, &self_ty),
                    self_ty,
                    trait_: i.trait_.as_ref().map(|(p, _)| path_segs(p)),
                    assoc_types,
                    consts,
                    fns,
                    openapi_prefix: openapi_impl_prefix(&i.attrs),
                    graphql: i.attrs.iter().find_map(|a| {
                        match a.path().segments.last()?.ident.to_string().as_str() {
                            "Object" => Some("async-graphql"),
                            "graphql_object" => Some("juniper"),
                            _ => None,
                        }
                    }),
                })
            }
            syn::Item::Trait(t) => Item::Trait {
                supers: t
                    .supertraits
                    .iter()
                    .filter_map(|b| match b {
                        syn::TypeParamBound::Trait(tb) => Some(path_segs(&tb.path)),
                        _ => None,
                    })
                    .collect(),
                name: t.ident.to_string(),
                fns: t
                    .items
                    .iter()
                    .filter_map(|it| match it {
                        syn::TraitItem::Fn(f) => {
                            Some(self.func(&f.attrs, &f.sig, f.default.as_ref(), false))
                        }
                        _ => None,
                    })
                    .collect(),
            },
            syn::Item::Const(c) => Item::Const {
                name: c.ident.to_string(),
                value: self.expr(&c.expr),
                ty: None,
            },
            syn::Item::Static(s) => Item::Const {
                name: s.ident.to_string(),
                value: self.expr(&s.expr),
                ty: Some(lower_ty(&s.ty)),
            },
            syn::Item::Struct(s) => Item::Type {
                name: s.ident.to_string(),
                fields: {
                    // A field of a type parameter bounded by a trait (`struct AppState<K:
                    // ApiKeyRepository> { keys: Arc<K> }`) holds a value of that trait.
                    let bounds = param_bounds(&s.generics);
                    s.fields
                        .iter()
                        .filter_map(|f| {
                            let mut t = lower_ty(&f.ty);
                            bind_params(&mut t, &bounds, 0);
                            Some((f.ident.as_ref()?.to_string(), t))
                        })
                        .collect()
                },
                entity: entity_attrs(s).map(Box::new),
                alias: None,
                typed_path: typed_path(&s.attrs),
                diesel_table: diesel_table(&s.attrs),
            },
            syn::Item::Enum(s) => Item::Type {
                name: s.ident.to_string(),
                // each variant's fields, as `Variant.field` (`Variant.0`): what a pattern on the
                // variant binds (see `struct_fields`)
                fields: s
                    .variants
                    .iter()
                    .flat_map(|v| {
                        v.fields.iter().enumerate().map(move |(i, f)| {
                            let name = match &f.ident {
                                Some(n) => format!("{}.{n}", v.ident),
                                None => format!("{}.{i}", v.ident),
                            };
                            (name, lower_ty(&f.ty))
                        })
                    })
                    .collect(),
                entity: None,
                alias: None,
                typed_path: None,
                diesel_table: None,
            },
            syn::Item::Union(s) => Item::Type {
                name: s.ident.to_string(),
                fields: vec![],
                entity: None,
                alias: None,
                typed_path: None,
                diesel_table: None,
            },
            syn::Item::Type(s) => Item::Type {
                name: s.ident.to_string(),
                fields: vec![],
                entity: None,
                // A generic alias (`type EmailResult<T> = Result<T, EmailError>`) with its
                // parameters written `$0`, `$1`, ..: a use of it fills them in.
                alias: Some({
                    let params: Vec<String> = s
                        .generics
                        .type_params()
                        .map(|p| p.ident.to_string())
                        .collect();
                    let mut t = lower_ty(&s.ty);
                    number_params(&mut t, &params, 0);
                    t
                }),
                typed_path: None,
                diesel_table: None,
            },
            syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                return self.macro_rules(m);
            }
            _ => return None,
        })
    }

    fn func(
        &mut self,
        attrs: &[syn::Attribute],
        sig: &syn::Signature,
        block: Option<&syn::Block>,
        in_test: bool,
    ) -> Func {
        let params: Vec<Param> = sig
            .inputs
            .iter()
            .map(|a| match a {
                syn::FnArg::Receiver(_) => Param {
                    name: "self".into(),
                    ty: None,
                    unwrap: false,
                    fields: Vec::new(),
                },
                syn::FnArg::Typed(t) => param_of(&t.pat, Some(&t.ty)),
            })
            .collect();
        // A parameter of a type parameter bounded by a trait (`fn add<S: TokenStore>(
        // Extension(store): Extension<Arc<S>>)`) holds a value of that trait.
        let bounds = param_bounds(&sig.generics);
        let params: Vec<Param> = params
            .into_iter()
            .map(|mut p| {
                if let Some(t) = &mut p.ty {
                    bind_params(t, &bounds, 0);
                }
                p
            })
            .collect();
        let ret = match &sig.output {
            syn::ReturnType::Type(_, t) => Some(lower_ty(t)),
            syn::ReturnType::Default => None,
        };
        let outer_spans = std::mem::take(&mut self.retry_spans);
        let outer_bound = std::mem::take(&mut self.bound);
        let outer_let_bound = std::mem::take(&mut self.let_bound);
        let outer_secrets = std::mem::take(&mut self.secret_checks);
        let mut body = block.map(|b| self.block(b)).unwrap_or_default();
        self.secret_checks = outer_secrets;
        let bound = std::mem::replace(&mut self.bound, outer_bound);
        let let_bound = std::mem::replace(&mut self.let_bound, outer_let_bound);
        let shadowed: Vec<String> = params
            .iter()
            .filter(|p| {
                p.name != "self" && (let_bound.contains(&p.name) || bound.contains(&p.name))
            })
            .map(|p| p.name.clone())
            .collect();
        let rebound = {
            let mut seen: std::collections::HashSet<&str> =
                params.iter().map(|p: &Param| p.name.as_str()).collect();
            let mut twice: Vec<String> = Vec::new();
            for n in &bound {
                if !seen.insert(n.as_str()) && !twice.contains(n) {
                    twice.push(n.clone());
                }
            }
            twice
        };
        // The function's value is its last expression: an error there is the function's.
        if let Some(syn::Stmt::Expr(tail, None)) = block.and_then(|b| b.stmts.last())
            && returns_its_error(tail)
            && let Some(Stmt::Expr(_, fails)) = body.last_mut()
        {
            *fails = true;
        }
        let retry_spans = std::mem::replace(&mut self.retry_spans, outer_spans);
        let early_return = block.and_then(|b| early_return(&b.stmts, &params));
        let (key_obs, key_calls) = match block {
            Some(b) if !in_test && (self.idem_impl || self.mentions_idem(sig, b)) => {
                super::keyscan::scan(sig, b)
            }
            _ => Default::default(),
        };
        let mut f = Func {
            retry_spans,
            key_obs,
            key_calls,
            name: sig.ident.to_string(),
            line: line_of(sig.ident.span()),
            is_async: sig.asyncness.is_some(),
            route_attrs: route_attrs(attrs),
            params,
            ret,
            body,
            is_test: in_test || is_test_attr(attrs),
            builds_routes: false,
            rebound,
            shadowed,
            early_return,
        };
        f.builds_routes = builds_routes(&f);
        f
    }

    /// `macro_rules! name { (matcher) => { transcriber }; .. }`: each arm's transcriber, with
    /// its metavariables as plain identifiers, read as statements.
    fn macro_rules(&mut self, m: &syn::ItemMacro) -> Option<Item> {
        let ident = m.ident.as_ref()?;
        let toks: Vec<TokenTree> = m.mac.tokens.clone().into_iter().collect();
        let is_punct = |t: Option<&TokenTree>, c: char| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c);
        let mut arms = Vec::new();
        let mut i = 0;
        while i + 3 < toks.len() {
            let (TokenTree::Group(matcher), TokenTree::Group(body)) = (&toks[i], &toks[i + 3])
            else {
                break;
            };
            if !(is_punct(toks.get(i + 1), '=') && is_punct(toks.get(i + 2), '>')) {
                break;
            }
            i += 4;
            if is_punct(toks.get(i), ';') {
                i += 1;
            }
            let mut params = Vec::new();
            metavars(matcher.stream(), &mut params, 0);
            let tokens = transcribe(body.stream(), 0);
            // the arm is lowered like a function body: its retry constructs are not the next
            // function's
            let outer_spans = std::mem::take(&mut self.retry_spans);
            let body = syn::parse::Parser::parse2(syn::Block::parse_within, tokens.clone())
                .ok()
                .map(|stmts| self.stmts(&stmts));
            self.retry_spans = outer_spans;
            let builds_routes = match &body {
                Some(stmts) => stmts_build_routes(stmts),
                None => mentions_builder(tokens, 0),
            };
            arms.push(MacroArm {
                params,
                body,
                builds_routes,
            });
        }
        Some(Item::MacroRules(Box::new(MacroRules {
            name: ident.to_string(),
            line: line_of(ident.span()),
            exported: m.attrs.iter().any(|a| a.path().is_ident("macro_export")),
            arms,
        })))
    }

    /// Does the function's text (signature to closing brace) mention `idem`?
    fn mentions_idem(&self, sig: &syn::Signature, b: &syn::Block) -> bool {
        let from = line_of(sig.fn_token.span).saturating_sub(1) as usize;
        let to = b.brace_token.span.close().end().line;
        (from..to.min(self.idem_lines.len())).any(|l| self.idem_lines[l])
    }

    fn block(&mut self, b: &syn::Block) -> Vec<Stmt> {
        self.stmts(&b.stmts)
    }

    fn stmts(&mut self, stmts: &[syn::Stmt]) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            match s {
                syn::Stmt::Local(l) => {
                    let mut names = Vec::new();
                    pat_names(&l.pat, &mut names, 0);
                    for n in &names {
                        self.secret_checks.remove(n);
                    }
                    if let (syn::Pat::Ident(id), Some(init)) = (&l.pat, &l.init)
                        && let Some(check) = secret_check(&init.expr, 0)
                    {
                        self.secret_checks.insert(id.ident.to_string(), check);
                    }
                    self.bound.extend(names.iter().cloned());
                    self.let_bound.extend(names.iter().cloned());
                    // a `let mut` may hold something else later: bound again
                    if pat_is_mut(&l.pat) {
                        self.bound.extend(names.iter().cloned());
                    }
                    let ty = match &l.pat {
                        syn::Pat::Type(t) => Some(lower_ty(&t.ty)),
                        _ => None,
                    };
                    let init = l.init.as_ref().map(|i| self.expr(&i.expr));
                    // `let Ok(x) = .. else { .. }`: the `else` runs on a failure.
                    let diverge = l
                        .init
                        .as_ref()
                        .and_then(|i| i.diverge.as_ref())
                        .map(|(_, d)| self.expr(d))
                        .map(|d| {
                            if pat_is_ok(&l.pat, 0) {
                                Ex::Failure(Box::new(d))
                            } else {
                                d
                            }
                        });
                    out.push(Stmt::Let {
                        names,
                        ty: ty.map(Box::new),
                        init: init.map(Box::new),
                        diverge: diverge.map(Box::new),
                        fields: struct_fields(&l.pat),
                        // `let Ok(x) = insert(..) else { return .. };` leaves on an error too.
                        fails: l.init.as_ref().is_some_and(|i| {
                            ends_in_try(&i.expr) || (i.diverge.is_some() && pat_is_ok(&l.pat, 0))
                        }),
                        quota: l
                            .init
                            .as_ref()
                            .is_some_and(|i| compares_with_quota(&i.expr)),
                    });
                }
                syn::Stmt::Item(i) => {
                    if let Some(i) = self.item(i) {
                        out.push(Stmt::Item(Box::new(i)));
                    }
                }
                syn::Stmt::Expr(e, _) => out.push(Stmt::Expr(
                    self.expr(e),
                    ends_in_try(e) || matches!(e, Expr::If(i) if leaves_on_unique_violation(i)),
                )),
                syn::Stmt::Macro(m) => out.push(Stmt::Expr(self.mac(&m.mac), false)),
            }
        }
        out
    }

    fn exprs<'a>(&mut self, es: impl IntoIterator<Item = &'a Expr>) -> Vec<Ex> {
        es.into_iter().map(|e| self.expr(e)).collect()
    }

    fn expr(&mut self, e: &Expr) -> Ex {
        if self.depth > MAX_LOWER_DEPTH {
            return Ex::Other(vec![]);
        }
        self.depth += 1;
        let out = self.expr_inner(e);
        self.depth -= 1;
        out
    }

    /// A chain of method calls, walked link by link rather than by recursion, so a builder with
    /// hundreds of `.route(..)`s is read whole: each link costs no depth, and a chain longer than
    /// [`CHAIN_SPLIT`] is lowered as a block that rebinds it every [`CHAIN_SPLIT`] links
    /// (`{ let chain = a.b()..; let chain = chain.c()..; chain }`), which keeps the lowered tree
    /// shallow for every reader after this one.
    fn method_chain(&mut self, outer: &syn::ExprMethodCall) -> Ex {
        let mut links = vec![outer];
        let mut base = &*outer.receiver;
        while let Expr::MethodCall(m) = base {
            links.push(m);
            base = &*m.receiver;
        }
        let mut cur = self.expr(base);
        let mut stmts = Vec::new();
        for (i, m) in links.iter().rev().enumerate() {
            if i > 0 && i % CHAIN_SPLIT == 0 {
                stmts.push(Stmt::Let {
                    names: vec![CHAIN_VAR.to_string()],
                    ty: None,
                    init: Some(Box::new(cur)),
                    diverge: None,
                    fields: vec![],
                    fails: false,
                    quota: false,
                });
                cur = Ex::Path(vec![CHAIN_VAR.to_string()], line_of(m.method.span()));
            }
            cur = self.method_link(cur, m);
        }
        if stmts.is_empty() {
            return cur;
        }
        stmts.push(Stmt::Expr(cur, false));
        Ex::Block(stmts)
    }

    /// One link of a method chain, on its lowered receiver.
    fn method_link(&mut self, mut recv: Ex, m: &syn::ExprMethodCall) -> Ex {
        let name = m.method.to_string();
        self.retry_closures(
            &format!(".{name}"),
            m.args.iter().chain(std::iter::once(&*m.receiver)),
        );
        let mut args = self.exprs(&m.args);
        // `.map_err(|e| match e.sql_err() { Some(SqlErr::UniqueConstraintViolation(_)) .. })`
        if ERROR_HANDLERS.contains(&name.as_str()) && args.iter().any(mentions_unique) {
            recv = Ex::Caught(Box::new(recv));
        }
        failure_args(&name, &mut args);
        Ex::Method(Box::new(recv), name, args, line_of(m.method.span()))
    }

    fn expr_inner(&mut self, e: &Expr) -> Ex {
        match e {
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Str(s) => Ex::Lit(s.value()),
                // `true`/`false` as the constants they are (a state a record is set to)
                syn::Lit::Bool(b) => Ex::Path(vec![b.value.to_string()], line_of(b.span)),
                _ => Ex::Other(vec![]),
            },
            Expr::Path(p) => {
                let line = p
                    .path
                    .segments
                    .last()
                    .map(|s| line_of(s.ident.span()))
                    .unwrap_or(0);
                Ex::Path(path_segs(&p.path), line)
            }
            Expr::Call(c) => {
                if let Expr::Path(p) = &*c.func {
                    let name = path_segs(&p.path).join("::");
                    self.retry_closures(&name, c.args.iter());
                }
                let line = match &*c.func {
                    Expr::Path(p) => p
                        .path
                        .segments
                        .last()
                        .map(|s| line_of(s.ident.span()))
                        .unwrap_or(0),
                    other => line_of(other.span()),
                };
                let func = self.expr(&c.func);
                Ex::Call(Box::new(func), self.exprs(&c.args), line)
            }
            Expr::MethodCall(m) => self.method_chain(m),
            Expr::Macro(m) => self.mac(&m.mac),
            Expr::Closure(c) => {
                for p in &c.inputs {
                    pat_names(p, &mut self.bound, 0);
                }
                let params = c
                    .inputs
                    .iter()
                    .map(|p| match p {
                        syn::Pat::Type(t) => param_of(&t.pat, Some(&t.ty)),
                        other => param_of(other, None),
                    })
                    .collect();
                Ex::Closure {
                    params,
                    body: Box::new(self.expr(&c.body)),
                    line: line_of(c.inputs_begin.span),
                }
            }
            Expr::Field(f) => {
                let member = match &f.member {
                    syn::Member::Named(i) => i.to_string(),
                    syn::Member::Unnamed(i) => i.index.to_string(),
                };
                Ex::Field(Box::new(self.expr(&f.base)), member)
            }
            Expr::Block(b) => Ex::Block(self.block(&b.block)),
            Expr::Unsafe(b) => Ex::Block(self.block(&b.block)),
            Expr::Async(b) => Ex::Block(self.block(&b.block)),
            Expr::Const(b) => Ex::Block(self.block(&b.block)),
            Expr::TryBlock(b) => Ex::Block(self.block(&b.block)),
            Expr::Loop(l) => {
                self.retry_loop(e, &l.body.to_token_stream().to_string());
                self.loops.push(false);
                let body = self.block(&l.body);
                self.loops.pop();
                Ex::Other(vec![Ex::Block(body)])
            }
            Expr::While(w) => {
                self.retry_loop(e, &w.cond.to_token_stream().to_string());
                let c = self.expr(&w.cond);
                self.loops.push(false);
                let body = self.block(&w.body);
                self.loops.pop();
                Ex::Other(vec![c, Ex::Block(body)])
            }
            Expr::ForLoop(f) => {
                let header = format!("{} {}", f.pat.to_token_stream(), f.expr.to_token_stream());
                self.retry_loop(e, &header);
                let c = self.expr(&f.expr);
                let mut names = Vec::new();
                pat_names(&f.pat, &mut names, 0);
                self.bound.extend(names.iter().cloned());
                let mut body = vec![Stmt::Let {
                    names,
                    ty: None,
                    init: Some(Box::new(Ex::Path(
                        vec![FOR_ITEM.to_string()],
                        line_of(f.for_token.span),
                    ))),
                    diverge: None,
                    fields: struct_fields(&f.pat),
                    fails: false,
                    quota: false,
                }];
                self.loops.push(!matches!(&*f.expr, Expr::Range(_)));
                body.extend(self.block(&f.body));
                self.loops.pop();
                Ex::Other(vec![c, Ex::Block(body)])
            }
            Expr::If(i) => {
                let mut cond = self.expr(&i.cond);
                let mut then = Ex::Block(self.block(&i.then_branch));
                let mut otherwise = i.else_branch.as_ref().map(|(_, e)| self.expr(e));
                // `if let Err(e) = res { .. UniqueConstraintViolation .. }`
                if let Expr::Let(l) = &*i.cond
                    && (pat_names_unique(&l.pat, 0)
                        || mentions_unique(&then)
                        || otherwise.as_ref().is_some_and(mentions_unique))
                    && let Ex::Block(stmts) = &mut cond
                    && let Some(Stmt::Let {
                        init: Some(init), ..
                    }) = stmts.first_mut()
                {
                    let inner = std::mem::replace(&mut **init, Ex::Other(vec![]));
                    **init = Ex::Caught(Box::new(inner));
                }
                // (and one that leaves the function on it fails the request with the duplicate)
                if leaves_on_unique_violation(i)
                    && let Ex::Block(stmts) = &mut cond
                    && let Some(Stmt::Let { fails, .. }) = stmts.first_mut()
                {
                    *fails = true;
                }
                // `if let Err(e) = res { .. }` runs on a failure; `if let Ok(x) = res { .. } else
                // { .. }`'s `else` does.
                if let Expr::Let(l) = &*i.cond {
                    if pat_is_err(&l.pat, 0) {
                        then = Ex::Failure(Box::new(then));
                    } else if pat_is_ok(&l.pat, 0)
                        && let Some(o) = otherwise.take()
                    {
                        otherwise = Some(Ex::Failure(Box::new(o)));
                    }
                }
                let mut v = vec![cond, then];
                v.extend(otherwise);
                // `if !acquired { continue; }` in a loop leaves the rest of its block as a
                // `return` leaves the function's
                // (a `continue` only in a loop over a collection's items, and one that names no
                // outer loop: elsewhere it tries again)
                let over_items = self.loops.last() == Some(&true);
                let exit = block_exit(&i.then_branch).or_else(|| {
                    match i.then_branch.stmts.last() {
                        Some(syn::Stmt::Expr(Expr::Break(_), _)) => true,
                        Some(syn::Stmt::Expr(Expr::Continue(c), _)) => {
                            over_items && c.label.is_none()
                        }
                        _ => false,
                    }
                    .then_some(false)
                });
                let line = line_of(i.if_token.span);
                // (a secret check first: its local is no claim's outcome)
                let field = field_test(&i.cond, &self.secret_checks);
                let secret = field.as_ref().is_some_and(|((_, _, t), _)| {
                    t.starts_with("hash:") || t.starts_with("nothash:")
                });
                let gate = if secret { None } else { gate_test(&i.cond, 0) };
                // `if let Some(existing) = find(..)? { if existing.status == Done { return
                // Ok(existing) } }`: a retry finds the row the first run finished and leaves, as
                // after `if existing.is_some() { return .. }` (refused only where the row is in
                // that state, so never refusing every call that finds it).
                let exit = match exit {
                    None if i.else_branch.is_none()
                        && (gate.is_some() || call_test(&i.cond, 0).is_some()) =>
                    {
                        found_row(&i.cond)
                            .and_then(|row| {
                                leaves_in_state(&i.then_branch, &row, &self.secret_checks)
                            })
                            .map(|_| false)
                    }
                    exit => exit,
                };
                if let Some((var, failed_when_true)) = gate {
                    Ex::Gate {
                        var,
                        failed_when_true,
                        then_exits: exit.is_some(),
                        then_refuses: exit == Some(true),
                        line,
                        parts: v,
                    }
                } else if let Some(((var, field, test), any)) = field {
                    Ex::FieldTest(Box::new(FieldTest {
                        var,
                        field,
                        test,
                        any,
                        then_exits: exit.is_some(),
                        then_refuses: exit == Some(true),
                        line,
                        parts: v,
                    }))
                } else if let Some(failed_when_true) = call_test(&i.cond, 0) {
                    Ex::Gate {
                        var: format!("{CALL_GATE}{line}"),
                        failed_when_true,
                        then_exits: exit.is_some(),
                        then_refuses: exit == Some(true),
                        line,
                        parts: v,
                    }
                } else {
                    Ex::Other(v)
                }
            }
            Expr::Match(m) => {
                let mut arms = Vec::with_capacity(m.arms.len() * 2);
                let mut unique = false;
                let read_again = reads_only(&m.expr, 0);
                for arm in &m.arms {
                    pat_names(&arm.pat, &mut self.bound, 0);
                    unique |= pat_names_unique(&arm.pat, 0);
                    if let syn::Pat::Guard(g) = &arm.pat {
                        arms.push(self.expr(&g.guard));
                    }
                    let body = self.expr(&arm.body);
                    // `Client::Bitcoind { rpc, .. } => rpc.send(..)`: each name the variant's
                    // pattern binds has its field's type (the scrutinee read again, as a `let`
                    // of that pattern would)
                    let pat = match &arm.pat {
                        syn::Pat::Guard(g) => &*g.pat,
                        p => p,
                    };
                    let fields = if read_again {
                        struct_fields(pat)
                    } else {
                        vec![]
                    };
                    let body = if fields.iter().any(|(f, _)| f.contains('.')) {
                        Ex::Block(vec![
                            Stmt::Let {
                                names: fields.iter().map(|(_, b)| b.clone()).collect(),
                                ty: None,
                                init: Some(Box::new(self.expr(&m.expr))),
                                diverge: None,
                                fields,
                                fails: false,
                                quota: false,
                            },
                            Stmt::Expr(body, false),
                        ])
                    } else {
                        body
                    };
                    let err = match &arm.pat {
                        syn::Pat::Guard(g) => pat_is_err(&g.pat, 0),
                        p => pat_is_err(p, 0),
                    };
                    // `Err(e) => { .. }` runs on a failure.
                    arms.push(if err {
                        Ex::Failure(Box::new(body))
                    } else {
                        body
                    });
                }
                unique |= arms.iter().any(mentions_unique);
                let mut scrutinee = Some(self.expr(&m.expr));
                if !unique
                    && arms.len() == m.arms.len()
                    && let Some(test) =
                        match_test(m, &mut arms, line_of(m.match_token.span), &mut scrutinee)
                {
                    return test;
                }
                if !unique && let Some((var, enum_name, pats)) = variant_arms(m) {
                    // each arm's guard and body as one part
                    let mut parts = vec![scrutinee.unwrap_or(Ex::Other(vec![]))];
                    let mut lowered = arms.into_iter();
                    for arm in &m.arms {
                        let first = lowered.next().unwrap_or(Ex::Other(vec![]));
                        parts.push(if matches!(arm.pat, syn::Pat::Guard(_)) {
                            Ex::Other(vec![first, lowered.next().unwrap_or(Ex::Other(vec![]))])
                        } else {
                            first
                        });
                    }
                    return Ex::Variants(Box::new(VariantMatch {
                        var,
                        enum_name,
                        arms: pats,
                        // an arm whose pattern can fail inside the variant
                        // (`Cmd::Pay(Mode::Test)`) may not take all of it
                        guarded: m
                            .arms
                            .iter()
                            .map(|a| {
                                matches!(a.pat, syn::Pat::Guard(_)) || refutable_inside(&a.pat, 0)
                            })
                            .collect(),
                        parts,
                        line: line_of(m.match_token.span),
                    }));
                }
                let scrutinee = scrutinee.unwrap_or(Ex::Other(vec![]));
                let mut v = vec![if unique {
                    Ex::Caught(Box::new(scrutinee))
                } else {
                    scrutinee
                }];
                v.extend(arms);
                Ex::Other(v)
            }
            Expr::Let(l) => {
                // `if let Some(x) = e`: binds like a `let`
                let mut names = Vec::new();
                pat_names(&l.pat, &mut names, 0);
                self.bound.extend(names.iter().cloned());
                Ex::Block(vec![Stmt::Let {
                    names,
                    ty: None,
                    init: Some(Box::new(self.expr(&l.expr))),
                    diverge: None,
                    fields: struct_fields(&l.pat),
                    fails: false,
                    quota: false,
                }])
            }
            Expr::Await(a) => self.expr(&a.base),
            Expr::Try(t) => self.expr(&t.expr),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Reference(r) => {
                // `&mut command`: what it holds may be replaced through the reference
                if r.mutability.is_some()
                    && let Expr::Path(p) = &*r.expr
                    && let Some(i) = p.path.get_ident()
                {
                    self.bound.push(i.to_string());
                    self.bound.push(i.to_string());
                }
                self.expr(&r.expr)
            }
            Expr::RawAddr(r) => self.expr(&r.expr),
            Expr::Cast(c) => self.expr(&c.expr),
            Expr::Unary(u) => match u.op {
                syn::UnOp::Deref(_) => self.expr(&u.expr),
                _ => Ex::Other(vec![self.expr(&u.expr)]),
            },
            Expr::Array(a) => Ex::List(self.exprs(&a.elems)),
            Expr::Tuple(t) => Ex::List(self.exprs(&t.elems)),
            Expr::Struct(s) => {
                let mut v: Vec<Ex> = s.fields.iter().map(|f| self.expr(&f.expr)).collect();
                let names: Box<[String]> = s
                    .fields
                    .iter()
                    .map(|f| match &f.member {
                        syn::Member::Named(i) => i.to_string(),
                        syn::Member::Unnamed(i) => i.index.to_string(),
                    })
                    .collect();
                if let Some(r) = &s.rest {
                    v.push(self.expr(r));
                }
                Ex::Struct(path_segs(&s.path).into(), v.into(), names)
            }
            Expr::Assign(a) => {
                if let Expr::Path(p) = &*a.left
                    && let Some(i) = p.path.get_ident()
                {
                    // assigned: bound again
                    self.bound.push(i.to_string());
                    self.bound.push(i.to_string());
                    self.let_bound.push(i.to_string());
                }
                Ex::Assign(Box::new(self.expr(&a.left)), Box::new(self.expr(&a.right)))
            }
            Expr::Binary(b) => Ex::Other(vec![self.expr(&b.left), self.expr(&b.right)]),
            Expr::Index(i) => Ex::Other(vec![self.expr(&i.expr), self.expr(&i.index)]),
            Expr::Range(r) => Ex::Other(
                r.start
                    .iter()
                    .chain(r.end.iter())
                    .map(|e| self.expr(e))
                    .collect(),
            ),
            Expr::Return(r) => Ex::Other(r.expr.iter().map(|e| self.expr(e)).collect()),
            Expr::Break(r) => Ex::Other(r.expr.iter().map(|e| self.expr(e)).collect()),
            Expr::Yield(r) => Ex::Other(r.expr.iter().map(|e| self.expr(e)).collect()),
            Expr::Repeat(r) => Ex::Other(vec![self.expr(&r.expr)]),
            _ => Ex::Other(vec![]),
        }
    }

    fn mac(&mut self, m: &syn::Macro) -> Ex {
        let path = path_segs(&m.path);
        let line = m
            .path
            .segments
            .last()
            .map(|s| line_of(s.ident.span()))
            .unwrap_or(0);
        if path
            .last()
            .is_some_and(|l| l == "mount_endpoints_and_merged_docs")
            && let Some(mounts) = self.okapi_mounts(m.tokens.clone(), line)
        {
            return mounts;
        }
        // serde_json's `json!({ "code": code, "client_id": id })`: an object of its keys, as a
        // struct literal is, so what a request body sends is read in both languages
        if path.last().is_some_and(|l| l == "json")
            && let Some(value) = self.json_value(m.tokens.clone(), 0)
        {
            return value;
        }
        let mut lits = Vec::new();
        for tt in m.tokens.clone() {
            if let TokenTree::Literal(l) = tt
                && let syn::Lit::Str(s) = syn::Lit::new(l)
            {
                lits.push(s.value());
            }
        }
        // warp's `path!("users" / u32 / "posts")`: its segments, a typed one as `{param}`
        if path.last().is_some_and(|l| l == "path")
            && let Some(segments) = path_macro_segments(m.tokens.clone())
        {
            lits = segments;
        }
        let mut tokens = m.tokens.clone();
        if path
            .last()
            .is_some_and(|l| l == "openapi_get_routes" || l == "openapi_get_routes_spec")
        {
            tokens = without_settings_prefix(tokens);
        }
        let mut args = Vec::new();
        // What a log line formats is read, not run: its arguments (`%user.id`, `?err`, field
        // assignments) are not lowered, which also spares the failed parses of their syntax.
        if !path.last().is_some_and(|l| is_log_macro(l)) {
            self.mine(tokens, &mut args, 0);
        }
        Ex::Macro {
            path: path.into(),
            lits,
            args: args.into(),
            line,
        }
    }

    /// A `json!` object or array (`{ "k": v, .. }`, `[a, b]`) as a struct literal or a list;
    /// `None` for a scalar, which is lowered as any macro is.
    fn json_value(&mut self, tokens: TokenStream, depth: usize) -> Option<Ex> {
        let mut it = tokens.clone().into_iter();
        let (Some(TokenTree::Group(g)), None) = (it.next(), it.next()) else {
            return None;
        };
        if depth > MAX_MACRO_DEPTH {
            return None;
        }
        let mut parts: Vec<Vec<TokenTree>> = vec![Vec::new()];
        for t in g.stream() {
            match &t {
                TokenTree::Punct(p) if p.as_char() == ',' => parts.push(Vec::new()),
                _ => parts.last_mut().expect("never empty").push(t),
            }
        }
        parts.retain(|p| !p.is_empty());
        match g.delimiter() {
            Delimiter::Brace => {
                let (mut names, mut values) = (Vec::new(), Vec::new());
                for part in parts {
                    // `"key": value` (a key may also be a name or a parenthesised expression)
                    let colon = part
                        .iter()
                        .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'))?;
                    let name = match &part[..colon] {
                        [TokenTree::Literal(l)] => match syn::Lit::new(l.clone()) {
                            syn::Lit::Str(s) => s.value(),
                            _ => l.to_string(),
                        },
                        [TokenTree::Ident(i)] => i.to_string(),
                        _ => continue,
                    };
                    let value: TokenStream = part[colon + 1..].iter().cloned().collect();
                    values.push(self.json_item(value, depth + 1));
                    names.push(name);
                }
                Some(Ex::Struct(Box::new([]), values.into(), names.into()))
            }
            Delimiter::Bracket => Some(Ex::List(
                parts
                    .into_iter()
                    .map(|p| self.json_item(p.into_iter().collect(), depth + 1))
                    .collect(),
            )),
            _ => None,
        }
    }

    /// A value inside a `json!` object or array.
    fn json_item(&mut self, tokens: TokenStream, depth: usize) -> Ex {
        if let Some(v) = self.json_value(tokens.clone(), depth) {
            return v;
        }
        match syn::parse2::<Expr>(tokens) {
            Ok(e) => self.expr(&e),
            Err(_) => Ex::Other(Vec::new()),
        }
    }

    /// rocket_okapi's `mount_endpoints_and_merged_docs! { rocket, base, settings, "/users" =>
    /// users::routes(), .. }`, lowered to what it does: `rocket.mount(base + "/users", ..)` for
    /// each entry.
    fn okapi_mounts(&mut self, tokens: TokenStream, line: Line) -> Option<Ex> {
        let mut parts: Vec<TokenStream> = vec![TokenStream::new()];
        for t in tokens {
            match &t {
                TokenTree::Punct(p) if p.as_char() == ',' => parts.push(TokenStream::new()),
                _ => parts.last_mut().expect("never empty").extend([t]),
            }
        }
        parts.retain(|p| !p.is_empty());
        if parts.len() < 3 {
            return None;
        }
        let rocket: Expr = syn::parse2(parts[0].clone()).ok()?;
        let base: Expr = syn::parse2(parts[1].clone()).ok()?;
        let mut stmts = Vec::new();
        for part in &parts[3..] {
            let toks: Vec<TokenTree> = part.clone().into_iter().collect();
            let arrow = toks.windows(2).position(|w| {
                matches!((&w[0], &w[1]), (TokenTree::Punct(a), TokenTree::Punct(b))
                    if a.as_char() == '=' && b.as_char() == '>')
            })?;
            let path: Expr = syn::parse2(toks[..arrow].iter().cloned().collect()).ok()?;
            let routes: Expr = syn::parse2(toks[arrow + 2..].iter().cloned().collect()).ok()?;
            let prefix = Ex::List(vec![self.expr(&base), self.expr(&path)]);
            let recv = self.expr(&rocket);
            let routes = self.expr(&routes);
            stmts.push(Stmt::Expr(
                Ex::Method(
                    Box::new(recv),
                    "mount".to_string(),
                    vec![prefix, routes],
                    line,
                ),
                false,
            ));
        }
        Some(Ex::Block(stmts))
    }

    /// Reads expressions out of macro tokens: as comma-separated expressions, else as statements,
    /// else group by group.
    fn mine(&mut self, tokens: TokenStream, out: &mut Vec<Ex>, depth: usize) {
        if depth > MAX_MACRO_DEPTH || tokens.is_empty() {
            return;
        }
        if let Ok(es) = syn::parse::Parser::parse2(
            Punctuated::<Expr, Token![,]>::parse_terminated,
            tokens.clone(),
        ) {
            let lowered = self.exprs(&es);
            out.extend(lowered);
            return;
        }
        if let Ok(stmts) = syn::parse::Parser::parse2(syn::Block::parse_within, tokens.clone()) {
            let lowered = self.stmts(&stmts);
            out.push(Ex::Block(lowered));
            return;
        }
        for tt in tokens {
            if let TokenTree::Group(g) = tt
                && g.delimiter() != Delimiter::None
            {
                self.mine(g.stream(), out, depth + 1);
            }
        }
    }
}

/// The macros of `log`, `tracing` and `std` that only write a line.
fn is_log_macro(name: &str) -> bool {
    matches!(
        name,
        "info"
            | "debug"
            | "warn"
            | "error"
            | "trace"
            | "event"
            | "println"
            | "eprintln"
            | "print"
            | "eprint"
    )
}

/// How deep a `macro_rules!` arm's token groups are read.
const MAX_TRANSCRIBE_DEPTH: usize = 64;

/// The metavariables a `macro_rules!` matcher binds (`$state:expr` → `state`), repetitions
/// included.
fn metavars(tokens: TokenStream, out: &mut Vec<String>, depth: usize) {
    if depth > MAX_TRANSCRIBE_DEPTH {
        return;
    }
    let mut dollar = false;
    for t in tokens {
        match &t {
            TokenTree::Ident(i) if dollar && i != "crate" => out.push(i.to_string()),
            TokenTree::Group(g) => metavars(g.stream(), out, depth + 1),
            _ => {}
        }
        dollar = matches!(&t, TokenTree::Punct(p) if p.as_char() == '$');
    }
}

/// A `macro_rules!` transcriber as code: `$name` becomes the identifier `name` (`$crate`,
/// `crate`), and a repetition `$( .. ) sep? op` its contents, once.
fn transcribe(tokens: TokenStream, depth: usize) -> TokenStream {
    if depth > MAX_TRANSCRIBE_DEPTH {
        return TokenStream::new();
    }
    let toks: Vec<TokenTree> = tokens.into_iter().collect();
    let is_op = |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if "*+?".contains(p.as_char()));
    let mut out = TokenStream::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        i += 1;
        match t {
            TokenTree::Punct(p) if p.as_char() == '$' => match toks.get(i) {
                Some(TokenTree::Ident(name)) => {
                    out.extend([TokenTree::Ident(name.clone())]);
                    i += 1;
                }
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    out.extend(transcribe(g.stream(), depth + 1));
                    i += 1;
                    if is_op(toks.get(i)) {
                        i += 1;
                    } else if is_op(toks.get(i + 1)) {
                        i += 2;
                    }
                }
                _ => out.extend([t.clone()]),
            },
            TokenTree::Group(g) => {
                let mut inner =
                    proc_macro2::Group::new(g.delimiter(), transcribe(g.stream(), depth + 1));
                inner.set_span(g.span());
                out.extend([TokenTree::Group(inner)]);
            }
            _ => out.extend([t.clone()]),
        }
    }
    out
}

/// Do these tokens name what builds routes (`App`, `HttpServer`, `scope`, `resource`, …)? For
/// a `macro_rules!` arm that did not parse.
fn mentions_builder(tokens: TokenStream, depth: usize) -> bool {
    depth <= MAX_TRANSCRIBE_DEPTH
        && tokens.into_iter().any(|t| match t {
            TokenTree::Ident(i) => matches!(
                i.to_string().as_str(),
                "App"
                    | "HttpServer"
                    | "scope"
                    | "resource"
                    | "service"
                    | "configure"
                    | "Router"
                    | "route"
                    | "nest"
                    | "mount"
                    | "Rocket"
            ),
            TokenTree::Group(g) => mentions_builder(g.stream(), depth + 1),
            _ => false,
        })
}

/// The segments of a `path!("a" / u32 / "b")` (warp): literals as written, a type as `{param}`;
/// a final `..` (the path goes on) adds none. `None` when the tokens are not of that shape.
fn path_macro_segments(tokens: TokenStream) -> Option<Vec<String>> {
    let mut parts: Vec<Vec<TokenTree>> = vec![vec![]];
    for t in tokens {
        match &t {
            TokenTree::Punct(p) if p.as_char() == '/' => parts.push(vec![]),
            _ => parts.last_mut()?.push(t),
        }
    }
    let mut out = Vec::new();
    for part in parts {
        match part.as_slice() {
            [] => return None,
            [TokenTree::Literal(l)] => match syn::Lit::new(l.clone()) {
                syn::Lit::Str(s) => out.push(s.value()),
                _ => return None,
            },
            [TokenTree::Punct(a), TokenTree::Punct(b)]
                if a.as_char() == '.' && b.as_char() == '.' => {}
            _ => out.push("{param}".to_string()),
        }
    }
    Some(out)
}

/// Method names and path ends that only route-building code uses (or uses often enough): a
/// function with none of them is not evaluated for routes.
const BUILDER_METHODS: &[&str] = &[
    "route",
    "nest",
    "nest_service",
    "merge",
    "service",
    "configure",
    "mount",
    "route_layer",
    "wrap",
    "wrap_fn",
    "attach",
    "default_service",
    "to",
    "to_async",
    // utoipa-axum and aide
    "routes",
    "api_route",
    "api_route_with",
    "nest_api_service",
    "nest_no_strip",
    // salvo and loco
    "hoop",
    "add_route",
    "add_routes",
];
const BUILDER_PATHS: &[&str] = &[
    "scope",
    "resource",
    "Router",
    "App",
    "build",
    "ignite",
    "custom",
    "HttpServer",
    "Rocket",
    "OpenApiRouter",
    "ApiRouter",
    // poem
    "Route",
    "OpenApiService",
    // warp::serve
    "warp",
];
const BUILDER_TYPES: &[&str] = &[
    "Router",
    "ServiceConfig",
    "Scope",
    "Resource",
    "Rocket",
    "App",
    "Route",
    "HttpServiceFactory",
    "MethodRouter",
    "Build",
    "OpenApiRouter",
    "ApiRouter",
    "UtoipaMethodRouter",
    "ApiMethodRouter",
    // poem-openapi: `fn apis() -> impl OpenApi { (A, B) }`
    "OpenApi",
    // loco
    "Routes",
    "AppRoutes",
    // warp: `fn create(db: Db) -> impl Filter<Extract = ..> + Clone`
    "Filter",
];

/// Does this type name, or one of its arguments, a router or route builder (`Router`,
/// `Vec<(&str, MethodRouter)>`)?
pub fn holds_builder(t: &Ty) -> bool {
    t.all().iter().any(|t| BUILDER_TYPES.contains(&t.last()))
}

fn builds_routes(f: &Func) -> bool {
    let typed = holds_builder;
    if f.params.iter().filter_map(|p| p.ty.as_ref()).any(typed) || f.ret.as_ref().is_some_and(typed)
    {
        return true;
    }
    stmts_build_routes(&f.body)
}

/// Do these statements build or configure routes (the cheap test of [`builds_routes`])?
pub fn stmts_build_routes(body: &[Stmt]) -> bool {
    let mut found = false;
    let mut stack: Vec<&Ex> = Vec::new();
    push_stmts(body, &mut stack);
    while let Some(e) = stack.pop() {
        match e {
            Ex::Method(r, name, args, _) => {
                if BUILDER_METHODS.contains(&name.as_str()) {
                    found = true;
                }
                stack.push(r);
                stack.extend(args.iter());
            }
            Ex::Path(p, _) => {
                if p.iter().any(|s| BUILDER_PATHS.contains(&s.as_str())) {
                    found = true;
                }
            }
            Ex::Macro { path, args, .. } => {
                if path.last().is_some_and(|s| {
                    matches!(
                        s.as_str(),
                        "routes"
                            | "openapi_get_routes"
                            | "openapi_get_routes_spec"
                            | "mount_endpoints_and_merged_docs"
                    )
                }) {
                    found = true;
                }
                stack.extend(args.iter());
            }
            _ => children(e, &mut stack),
        }
        if found {
            return true;
        }
    }
    false
}

pub fn push_stmts<'a>(stmts: &'a [Stmt], stack: &mut Vec<&'a Ex>) {
    for s in stmts {
        match s {
            Stmt::Let { init, diverge, .. } => {
                stack.extend(init.as_deref());
                stack.extend(diverge.as_deref());
            }
            Stmt::Expr(e, _) => stack.push(e),
            _ => {}
        }
    }
}

/// The direct sub-expressions of `e`.
/// What a [`search`] does at an expression.
pub enum Visit {
    Found,
    /// Not into what it contains.
    Skip,
    Enter,
}

/// Whether `visit` finds an expression among `roots` and what they contain (depth first,
/// iteratively); past `limit` expressions the search gives up and answers `past`.
pub fn search<'a>(
    roots: Vec<&'a Ex>,
    limit: usize,
    past: bool,
    mut visit: impl FnMut(&'a Ex) -> Visit,
) -> bool {
    let mut stack = roots;
    let mut seen = 0usize;
    while let Some(e) = stack.pop() {
        seen += 1;
        if seen > limit {
            return past;
        }
        match visit(e) {
            Visit::Found => return true,
            Visit::Skip => {}
            Visit::Enter => children(e, &mut stack),
        }
    }
    false
}

/// The first line an expression or one of its parts carries (a block has none of its own).
pub fn first_line(e: &Ex) -> Line {
    let l = e.line();
    if l > 0 {
        return l;
    }
    let mut kids = Vec::new();
    children(e, &mut kids);
    kids.into_iter()
        .map(first_line)
        .find(|l| *l > 0)
        .unwrap_or(0)
}

pub fn children<'a>(e: &'a Ex, stack: &mut Vec<&'a Ex>) {
    match e {
        Ex::Lit(_) | Ex::Path(..) => {}
        Ex::Call(f, args, _) => {
            stack.push(f);
            stack.extend(args.iter());
        }
        Ex::Method(r, _, args, _) => {
            stack.push(r);
            stack.extend(args.iter());
        }
        Ex::Macro { args, .. } => stack.extend(args.iter()),
        Ex::Closure { body, .. } => stack.push(body),
        Ex::Field(b, _) => stack.push(b),
        Ex::Block(stmts) => push_stmts(stmts, stack),
        Ex::List(v) | Ex::Other(v) | Ex::Gate { parts: v, .. } => stack.extend(v.iter()),
        Ex::Struct(_, v, _) => stack.extend(v.iter()),
        Ex::FieldTest(t) => stack.extend(t.parts.iter()),
        Ex::Variants(v) => stack.extend(v.parts.iter()),
        Ex::Caught(e) | Ex::Failure(e) => stack.push(e),
        Ex::Assign(a, b) => {
            stack.push(a);
            stack.push(b);
        }
    }
}

/// The identifiers a format string captures (`{id}`, `{id:?}`, `{user_id:>8}`), in order, each
/// once; not `{}`, `{0}`, `{{`.
pub(super) fn captured_names(fmt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = fmt;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        if let Some(after) = rest.strip_prefix('{') {
            rest = after;
            continue;
        }
        let end = rest.find(['}', ':']).unwrap_or(rest.len());
        let name = &rest[..end];
        if name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !out.iter().any(|n| n == name)
            && out.len() < 16
        {
            out.push(name.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_format_string_captures_its_named_arguments() {
        assert_eq!(
            super::captured_names("paste:{id}:{id}/{user_id:?} {} {0} {{lit}} {w:>8}"),
            ["id", "user_id", "w"]
        );
    }

    use super::*;

    #[test]
    fn nesting_scan_skips_strings_and_comments() {
        let deep = "(".repeat(MAX_NESTING + 1);
        assert!(too_deep(&format!("fn f() {{ {deep} }}")).is_some());
        assert!(too_deep(&format!("fn f() {{ let s = \"{deep}\"; }}")).is_none());
        assert!(too_deep(&format!("fn f() {{ let s = r#\"{deep}\"#; }}")).is_none());
        assert!(
            too_deep(&format!(
                "// {deep}\n/* {deep} */ fn f<'a>(c: char) {{ '(' }}"
            ))
            .is_none()
        );
        assert!(
            too_deep(&format!(
                "fn f() -> bool {{ {}true }}",
                "!".repeat(MAX_NESTING + 1)
            ))
            .is_some()
        );
    }

    #[test]
    fn a_match_on_a_variable_by_enum_variants_is_read_arm_by_arm() {
        let m = |src: &str| match syn::parse_str::<Expr>(src).unwrap() {
            Expr::Match(m) => m,
            _ => unreachable!(),
        };
        let (var, enum_name, arms) = variant_arms(&m(
            "match command { Cmd::Pay { .. } | Cmd::Tip(_) => a(), Cmd::Stop => b(), _ => c() }",
        ))
        .unwrap();
        assert_eq!((var.as_str(), enum_name.as_str()), ("command", "Cmd"));
        assert_eq!(
            arms,
            vec![
                Some(vec!["Pay".to_string(), "Tip".to_string()]),
                Some(vec!["Stop".to_string()]),
                None
            ]
        );
        // not a variable, `Some`/`Ok`, or two enums: no
        assert!(variant_arms(&m("match f() { Cmd::Pay => a(), _ => b() }")).is_none());
        assert!(variant_arms(&m("match x { Some(y) => a(), None => b() }")).is_none());
        assert!(variant_arms(&m("match x { A::B => a(), C::D => b() }")).is_none());
        // a sub-pattern that can fail does not take the whole variant
        let arm = |src: &str| m(src).arms[0].pat.clone();
        assert!(refutable_inside(
            &arm("match c { Cmd::Pay(Mode::Test) => a(), _ => b() }"),
            0
        ));
        assert!(refutable_inside(
            &arm("match c { Cmd::Pay { live: true, .. } => a(), _ => b() }"),
            0
        ));
        assert!(!refutable_inside(
            &arm("match c { Cmd::Pay { live, .. } => a(), _ => b() }"),
            0
        ));
        assert!(!refutable_inside(
            &arm("match c { Cmd::Pay(_, x) => a(), _ => b() }"),
            0
        ));
    }

    #[test]
    fn a_count_compared_with_none_or_one_is_a_gate_and_a_quota_is_not() {
        let gate = |cond: &str| gate_test(&syn::parse_str::<Expr>(cond).unwrap(), 0);
        assert_eq!(gate("rows == 0"), Some(("rows".into(), true)));
        assert_eq!(gate("n != 0"), Some(("n".into(), false)));
        assert_eq!(gate("n > 0"), Some(("n".into(), false)));
        assert_eq!(gate("n >= 1"), Some(("n".into(), false)));
        assert_eq!(gate("rows < 1"), Some(("rows".into(), true)));
        // a quota or a limit: nothing about whether a row was there
        assert_eq!(gate("total >= 500"), None);
        assert_eq!(gate("recent > 5"), None);
        assert_eq!(gate("n == 3"), None);
    }

    #[test]
    fn macro_rules_arms_are_lowered_as_statements() {
        let (ir, d) = parse_file(
            "src/a.rs",
            concat!(
                "#[macro_export]\n",
                "macro_rules! app {\n",
                "    ($state:expr) => { $crate::app!($state, 1) };\n",
                "    ($state:expr, $($svc:expr),*) => {{\n",
                "        App::new().app_data($state)$(.service($svc))*\n",
                "    }};\n",
                "    (@partial $h:ident) => { .route(web::post().to($h)) };\n",
                "}\n",
                "macro_rules! plain { () => { 1 + 1 } }\n",
            ),
        );
        assert!(d.is_empty());
        let defs: Vec<&MacroRules> = ir
            .items
            .iter()
            .filter_map(|i| match i {
                Item::MacroRules(m) => Some(&**m),
                _ => None,
            })
            .collect();
        assert_eq!(defs.len(), 2);
        let app = defs[0];
        assert_eq!(
            (app.name.as_str(), app.line, app.exported),
            ("app", 2, true)
        );
        let arms: Vec<(Vec<String>, bool, bool)> = app
            .arms
            .iter()
            .map(|a| (a.params.clone(), a.body.is_some(), a.builds_routes))
            .collect();
        assert_eq!(
            arms,
            vec![
                (vec!["state".to_string()], true, false),
                (vec!["state".to_string(), "svc".to_string()], true, true),
                // not code on its own: kept as unread, known to build routes by its tokens
                (vec!["h".to_string()], false, true),
            ]
        );
        // the repetition is read once, each metavariable as a plain name
        let Some(Stmt::Expr(Ex::Block(stmts), _)) = app.arms[1].body.as_ref().unwrap().first()
        else {
            panic!("a block");
        };
        let Some(Stmt::Expr(Ex::Method(_, name, args, line), _)) = stmts.first() else {
            panic!("a method chain");
        };
        assert_eq!((name.as_str(), *line), ("service", 5));
        assert!(matches!(&args[0], Ex::Path(p, _) if p == &["svc"]));
        assert!(!defs[1].exported && !defs[1].arms[0].builds_routes);
    }

    #[test]
    fn lowering_keeps_lines_and_route_attributes() {
        let (ir, d) = parse_file(
            "src/a.rs",
            "#[post(\"/x\", data = \"<d>\")]\nasync fn create(d: Json<Body>) {\n    sqlx::query!(\"insert into t values ($1)\", d.0).execute(&p).await;\n}\n",
        );
        assert!(d.is_empty());
        let Item::Fn(f) = &ir.items[0] else {
            panic!("not a fn")
        };
        assert_eq!((f.name.as_str(), f.line), ("create", 2));
        assert_eq!(f.route_attrs[0].lits, vec!["/x".to_string()]);
        assert_eq!(f.route_attrs[0].line, 1);
        let (_, d) = parse_file("src/b.rs", "fn broken( {\n");
        assert!(d[0].message.starts_with("parse error"));
    }

    /// The first test of a looked-up row in `body`: (var, field, test, then_exits, then_refuses).
    fn first_test(body: &str) -> Option<(String, String, String, bool, bool)> {
        let (ir, _) = parse_file("src/a.rs", &format!("fn f() {{ {body} }}"));
        let Item::Fn(f) = &ir.items[0] else {
            return None;
        };
        let mut stack: Vec<&Ex> = Vec::new();
        push_stmts(&f.body, &mut stack);
        while let Some(e) = stack.pop() {
            match e {
                Ex::FieldTest(t) => {
                    return Some((
                        t.var.clone(),
                        t.field.clone(),
                        t.test.clone(),
                        t.then_exits,
                        t.then_refuses,
                    ));
                }
                Ex::Gate {
                    var,
                    failed_when_true,
                    then_exits,
                    then_refuses,
                    ..
                } => {
                    let test = if *failed_when_true {
                        "missing"
                    } else {
                        "found"
                    };
                    return Some((
                        var.clone(),
                        String::new(),
                        test.into(),
                        *then_exits,
                        *then_refuses,
                    ));
                }
                _ => children(e, &mut stack),
            }
        }
        None
    }

    #[test]
    fn tests_of_a_looked_up_row() {
        let t = |body: &str| {
            first_test(body)
                .map(|(v, f, t, exits, refuses)| format!("{v}.{f} {t} {exits} {refuses}"))
        };
        assert_eq!(
            t("if order.status != \"paid\" { return Ok(order); }").as_deref(),
            Some("order.status ne:paid true false")
        );
        assert_eq!(
            t("if invite.accepted_at.is_some() { return Err(Conflict); }").as_deref(),
            Some("invite.accepted_at truthy true true")
        );
        assert_eq!(
            t("if !user.active { bail!(\"x\") }").as_deref(),
            Some("user.active falsy true true")
        );
        assert_eq!(
            t("if x.is_empty() || order.status == Status::Done { return Ok(()); }").as_deref(),
            Some("order.status eq:Status.Done true false")
        );
        assert_eq!(
            t("match order.status { Status::Pending => {}, _ => return Err(e) }").as_deref(),
            Some("order.status ne:Status.Pending true true")
        );
        assert_eq!(
            t("match job.state.as_str() { \"done\" => return Ok(()), _ => run() }").as_deref(),
            Some("job.state eq:done true false")
        );
        assert_eq!(
            t("match existing { Some(_) => return Err(Conflict), None => {} }").as_deref(),
            Some("existing. found true true")
        );
        assert_eq!(
            t("if let Some(u) = existing { return Ok(u); }").as_deref(),
            Some("existing. found true false")
        );
        // A test of something other than a local's field, or arms that all go on.
        assert_eq!(t("if self.cfg.enabled { run() }"), None);
        assert_eq!(t("match order.status { Status::A => a(), _ => b() }"), None);
    }

    #[test]
    fn statements_whose_error_leaves_the_function() {
        let leaves = |src: &str| ends_in_try(&syn::parse_str::<Expr>(src).unwrap());
        assert!(leaves("insert(&db).await?"));
        assert!(leaves("q.execute(&db).await.map_err(e)?.rows_affected()"));
        assert!(leaves(
            "match db.add_user(&u).await { Ok(id) => id, Err(e) => { log(e); return Err(bad()); } }"
        ));
        assert!(leaves(
            "match insert().await { Ok(id) => id, Err(e) => return Err(e.into()) }"
        ));
        assert!(!leaves(
            "match insert().await { Ok(id) => id, Err(_) => 0 }"
        ));
        assert!(!leaves("insert(&db).await"));
        assert!(!leaves("insert(&db).await.ok()"));
    }
}
