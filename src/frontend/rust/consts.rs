//! Compile-time text: what a `const`, a `static` or a pure function made of literals yields, for
//! route paths and prefixes written as constants (`web::scope(API_PREFIX)`,
//! `#[post(path = "crate::ROUTES.auth.register")]`, `format!("/api/{}", VERSION)`).
//!
//! The evaluator follows constants, `const fn`s and plain functions that build strings or
//! structs of strings: `let` bindings, struct literals (shorthand fields too), field access,
//! `concat!`, `format!` with positional or named arguments, `.replace(a, b)`, `.to_string()` and
//! the like. Anything else is unknown. It is bounded in depth and never follows a constant into
//! itself.

use super::ir::{Ex, Stmt};
use super::model::{FnId, ImplId, ModId, Model, Res};
use std::collections::HashMap;

/// How deep constants and calls are followed.
const MAX_DEPTH: usize = 16;
/// Expressions evaluated for one text at most (calls can fan out).
const MAX_STEPS: usize = 4_000;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Struct(HashMap<String, Value>),
}

impl Value {
    pub fn into_str(self) -> Option<String> {
        match self {
            Value::Str(s) => Some(s),
            Value::Struct(_) => None,
        }
    }
}

/// The text of `e`, written in module `m`, when it is known at compile time; `vars` are the
/// local variables already known to hold text.
pub fn text<'v>(
    model: &Model<'_>,
    m: ModId,
    imp: Option<ImplId>,
    e: &Ex,
    vars: impl IntoIterator<Item = (&'v String, &'v String)>,
) -> Option<String> {
    let env: Env = vars
        .into_iter()
        .map(|(k, v)| (k.clone(), Value::Str(v.clone())))
        .collect();
    Eval::new(model).expr(m, imp, e, &env, 0)?.into_str()
}

/// The text a call of project function `f` with `args` (written in module `m`, where `vars` are
/// the local variables known to hold text) returns, when it is known at compile time. `self_ty`:
/// the type the call names `f` through, which `Self` is in `f` when `f` is a blanket impl's
/// (`OAuth2TokenEndpoint::route()`).
pub fn call_text<'v>(
    model: &Model<'_>,
    (m, imp): (ModId, Option<ImplId>),
    f: FnId,
    self_ty: Option<Res>,
    args: &[Ex],
    vars: impl IntoIterator<Item = (&'v String, &'v String)>,
) -> Option<String> {
    let env: Env = vars
        .into_iter()
        .map(|(k, v)| (k.clone(), Value::Str(v.clone())))
        .collect();
    let mut ev = Eval::new(model);
    if let Some(ty) = self_ty
        && model.fns[f]
            .imp
            .is_some_and(|i| model.impls[i].imp.blanket.is_some())
    {
        ev.self_ty.push(ty);
    }
    let vals = args
        .iter()
        .map(|a| ev.expr(m, imp, a, &env, 1))
        .collect::<Option<Vec<_>>>()?;
    ev.call(f, vals, 1)?.into_str()
}

/// The text of a path with field accesses written as a string, as actix-web-codegen's
/// const-routes fork takes it: `#[post(path = "crate::V1_API_ROUTES.auth.register")]`.
pub fn path_text(model: &Model<'_>, m: ModId, written: &str) -> Option<String> {
    let mut parts = written.split('.');
    let head: Vec<String> = parts
        .next()?
        .split("::")
        .map(|s| s.trim().to_string())
        .collect();
    let fields: Vec<&str> = parts.map(str::trim).collect();
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    if !head.iter().all(|s| ident(s)) || !fields.iter().all(|s| ident(s)) {
        return None;
    }
    let mut v = Eval::new(model).path(m, None, &head, &HashMap::new(), 0)?;
    for f in fields {
        v = match v {
            Value::Struct(mut fs) => fs.remove(f)?,
            Value::Str(_) => return None,
        };
    }
    v.into_str()
}

struct Eval<'m, 'a> {
    model: &'m Model<'a>,
    /// Constants and functions being evaluated: met again, they are a cycle.
    open: Vec<(ModId, String)>,
    /// The type `Self` names in a blanket impl's method, innermost last
    /// (`OAuth2TokenEndpoint::route()` runs `impl<T: SimpleRoute> Route for T`'s `route` with
    /// `Self` that type).
    self_ty: Vec<Res>,
    steps: usize,
}

type Env = HashMap<String, Value>;

impl<'m, 'a> Eval<'m, 'a> {
    fn new(model: &'m Model<'a>) -> Self {
        Eval {
            model,
            open: Vec::new(),
            self_ty: Vec::new(),
            steps: 0,
        }
    }

    fn expr(
        &mut self,
        m: ModId,
        imp: Option<ImplId>,
        e: &Ex,
        env: &Env,
        depth: usize,
    ) -> Option<Value> {
        self.steps += 1;
        if depth > MAX_DEPTH || self.steps > MAX_STEPS {
            return None;
        }
        match e {
            Ex::Lit(s) => Some(Value::Str(s.clone())),
            Ex::Path(p, _) => self.path(m, imp, p, env, depth),
            Ex::Field(base, name) => match self.expr(m, imp, base, env, depth + 1)? {
                Value::Struct(mut fs) => fs.remove(name),
                Value::Str(_) => None,
            },
            Ex::Struct(_, values, names) => {
                let mut fs = HashMap::new();
                // a field that is not text (a number, a runtime value) leaves the others known
                for (v, n) in values.iter().zip(names) {
                    if let Some(v) = self.expr(m, imp, v, env, depth + 1) {
                        fs.insert(n.clone(), v);
                    }
                }
                Some(Value::Struct(fs))
            }
            Ex::Block(stmts) => self.block(m, imp, stmts, env.clone(), depth + 1),
            Ex::Method(recv, name, args, _)
                if args.is_empty()
                    && matches!(
                        name.as_str(),
                        "to_string" | "to_owned" | "into" | "as_str" | "as_ref" | "clone"
                    ) =>
            {
                self.expr(m, imp, recv, env, depth + 1)
            }
            // `path.replace("{id}", &format!("{{id:{}}}", ID_REGEX))`
            Ex::Method(recv, name, args, _) if name == "replace" && args.len() == 2 => {
                let text = self.expr(m, imp, recv, env, depth + 1)?.into_str()?;
                let from = self.expr(m, imp, &args[0], env, depth + 1)?.into_str()?;
                let to = self.expr(m, imp, &args[1], env, depth + 1)?.into_str()?;
                if from.is_empty() {
                    return None;
                }
                Some(Value::Str(text.replace(&from, &to)))
            }
            Ex::Call(func, args, _) => {
                let Ex::Path(p, _) = &**func else {
                    return None;
                };
                let last = p.last().map(String::as_str).unwrap_or("");
                // `String::from("x")`, `Cow::Borrowed("x")`
                if matches!(last, "from" | "Borrowed" | "Owned") && args.len() == 1 {
                    return self.expr(m, imp, &args[0], env, depth + 1);
                }
                let (f, self_ty) = self.callee(m, imp, p)?;
                let vals = args
                    .iter()
                    .map(|a| self.expr(m, imp, a, env, depth + 1))
                    .collect::<Option<Vec<_>>>()?;
                if let Some(ty) = self_ty {
                    self.self_ty.push(ty);
                    let v = self.call(f, vals, depth + 1);
                    self.self_ty.pop();
                    v
                } else {
                    self.call(f, vals, depth + 1)
                }
            }
            Ex::Macro {
                path, lits, args, ..
            } => match path.last().map(String::as_str) {
                Some("concat") => Some(Value::Str(lits.concat())),
                Some("format" | "const_format" | "formatcp") => {
                    self.format(m, imp, args, env, depth + 1)
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn block(
        &mut self,
        m: ModId,
        imp: Option<ImplId>,
        stmts: &[Stmt],
        mut env: Env,
        depth: usize,
    ) -> Option<Value> {
        let mut last = None;
        for s in stmts {
            match s {
                Stmt::Let { names, init, .. } => {
                    last = None;
                    if let ([name], Some(init)) = (names.as_slice(), init)
                        && let Some(v) = self.expr(m, imp, init, &env, depth)
                    {
                        env.insert(name.clone(), v);
                    }
                }
                Stmt::Expr(e, _) => last = Some(e),
                Stmt::Item(_) => {}
            }
        }
        self.expr(m, imp, last?, &env, depth)
    }

    fn path(
        &mut self,
        m: ModId,
        imp: Option<ImplId>,
        p: &[String],
        env: &Env,
        depth: usize,
    ) -> Option<Value> {
        if let [name] = p
            && let Some(v) = env.get(name)
        {
            return Some(v.clone());
        }
        let r = match (p, imp) {
            ([this, name], Some(i)) if this == "Self" => {
                Res::Assoc(Box::new(self.self_type(i)), name.clone())
            }
            _ => self.model.resolve(m, p),
        };
        match r {
            // `OAuth2TokenEndpoint::PATH`, `Self::PATH`: an associated constant of a type
            Res::Assoc(ty, name) => {
                let (i, value) = self.model.assoc_const(&ty, &name)?;
                let key = (self.model.impls[i].module, format!("{i}::{name}"));
                if self.open.contains(&key) {
                    return None;
                }
                self.open.push(key);
                let v = self.expr(
                    self.model.impls[i].module,
                    Some(i),
                    value,
                    &HashMap::default(),
                    depth + 1,
                );
                self.open.pop();
                v
            }
            Res::Const(cm, name) => {
                let key = (cm, name.clone());
                if self.open.contains(&key) {
                    return None;
                }
                let value = *self.model.modules[cm].consts.get(&name)?;
                self.open.push(key);
                let v = self.expr(cm, imp, value, &HashMap::new(), depth + 1);
                self.open.pop();
                v
            }
            _ => None,
        }
    }

    /// The type `Self` names in impl `i`: its own, or, in a blanket impl's method, the type the
    /// call named it through.
    fn self_type(&self, i: ImplId) -> Res {
        match self.self_ty.last() {
            Some(ty) if self.model.impls[i].imp.blanket.is_some() => ty.clone(),
            _ => self.model.impl_type(i),
        }
    }

    /// The function a call's path names, when it is one the project defines, and the type
    /// `Self` names in it when that is a blanket impl's.
    fn callee(&self, m: ModId, imp: Option<ImplId>, p: &[String]) -> Option<(FnId, Option<Res>)> {
        let r = match (p.first().map(String::as_str), imp) {
            (Some("Self"), Some(i)) if p.len() == 2 => {
                Res::Assoc(Box::new(self.self_type(i)), p[1].clone())
            }
            _ => self.model.resolve(m, p),
        };
        match r {
            Res::Fn(f) => Some((f, None)),
            Res::Assoc(ty, name) => {
                let f = self.model.methods_of(&ty, &name).first().copied()?;
                let blanket = self.model.fns[f]
                    .imp
                    .is_some_and(|i| self.model.impls[i].imp.blanket.is_some());
                Some((f, blanket.then_some(*ty)))
            }
            _ => None,
        }
    }

    fn call(&mut self, f: FnId, args: Vec<Value>, depth: usize) -> Option<Value> {
        let def = &self.model.fns[f];
        let key = (def.module, format!("fn#{f}"));
        if self.open.contains(&key) {
            return None;
        }
        let env: Env = def
            .func
            .params
            .iter()
            .zip(args)
            .map(|(p, v)| (p.name.clone(), v))
            .collect();
        self.open.push(key);
        let v = self.block(def.module, def.imp, &def.func.body, env, depth);
        self.open.pop();
        v
    }

    /// `format!("/api/{}/{v}", A, v = B)`: positional and named arguments, and names captured
    /// from the scope.
    fn format(
        &mut self,
        m: ModId,
        imp: Option<ImplId>,
        args: &[Ex],
        env: &Env,
        depth: usize,
    ) -> Option<Value> {
        let (Ex::Lit(template), rest) = args.split_first()? else {
            return None;
        };
        let mut positional = Vec::new();
        let mut named: HashMap<&str, Value> = HashMap::new();
        for a in rest {
            match a {
                Ex::Assign(l, r) => {
                    let Ex::Path(p, _) = &**l else { return None };
                    let [name] = p.as_slice() else { return None };
                    named.insert(name, self.expr(m, imp, r, env, depth)?);
                }
                other => positional.push(self.expr(m, imp, other, env, depth)?),
            }
        }
        let mut out = String::new();
        let mut next = 0;
        for piece in format_pieces(template) {
            match piece {
                Piece::Text(t) => out.push_str(&t),
                Piece::Hole(spec) => {
                    let name = spec.split(':').next().unwrap_or("").trim();
                    let v = if name.is_empty() {
                        next += 1;
                        positional.get(next - 1).cloned()
                    } else if let Ok(i) = name.parse::<usize>() {
                        positional.get(i).cloned()
                    } else if let Some(v) = named.get(name) {
                        Some(v.clone())
                    } else {
                        self.path(m, imp, &[name.to_string()], env, depth)
                    };
                    out.push_str(&v?.into_str()?);
                }
            }
        }
        Some(Value::Str(out))
    }
}

/// A piece of a `format!` string: text (`{{` and `}}` read as braces) or a `{..}` placeholder
/// with what is written inside it.
pub enum Piece {
    Text(String),
    Hole(String),
}

/// A `format!` string as a statement built at run time: each `{..}` a hole `$1`, `$2`, ..
/// `None` unless it starts with a write (`INSERT`, `UPDATE`, `DELETE`, `REPLACE`) or a `SELECT`.
pub fn format_statement(fmt: &str) -> Option<String> {
    if !crate::sql::starts_with_write(fmt) && !crate::link::calls::is_select(fmt) {
        return None;
    }
    let mut out = String::with_capacity(fmt.len());
    let mut hole = 0;
    for piece in format_pieces(fmt) {
        match piece {
            Piece::Text(t) => out.push_str(&t),
            Piece::Hole(_) => {
                hole += 1;
                out.push_str(&format!("${hole}"));
            }
        }
    }
    Some(out)
}

/// The pieces of a `format!` string, in order.
pub fn format_pieces(template: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let mut spec = String::new();
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                    spec.push(c);
                }
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Hole(spec));
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    out
}
