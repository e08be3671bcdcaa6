//! The id of a published message, judged where it is made.
//!
//! A message that carries an id (`messageId`, `event_id`, from `[message_ids]` in
//! `rules/sinks.toml`) is deduplicated by its consumers when a retry publishes the same id: the id
//! comes from the request (the client's event id) or is derived deterministically from it
//! (`uuid.v5`). An id made per call (`randomUUID()`, `Date.now()`) protects nothing, and an id
//! this analysis cannot trace is not taken as stable.
//!
//! The id is followed through the values of one module: fields of objects, elements of arrays,
//! what a callback returns (`rows.map((r) => ({ messageId: r.id }))`, whose parameter is an
//! element of `rows`), what a function of the same module returns for the arguments it is given.
//! When the id comes from a parameter of the function that publishes, the judgement moves to each
//! caller's argument (`Effect::id_param`), up to the handler, whose parameters are the request.

use super::calls::derives_id;
use super::resolve::{ModId, Resolver};
use crate::catalog::Catalog;
use crate::program::fresh_random;
use crate::program::{FnId, Val};
use std::cell::Cell;

/// Where an id comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdSource {
    /// Made per call: a retry gets a new one.
    Fresh,
    /// Derived deterministically (`uuid.v5(name, ns)`): the same input gives the same id.
    Derived,
    /// From this parameter of the function being summarised, at this path: the caller decides.
    Param(usize, IdPath),
    /// A constant, or nothing this analysis can follow.
    Unknown,
}

impl IdSource {
    /// The source of a value made of parts: one part made per call makes the whole fresh; a
    /// constant part (a prefix, a topic) leaves the others deciding.
    fn combine(self, other: IdSource) -> IdSource {
        use IdSource::*;
        match (self, other) {
            (Fresh, _) | (_, Fresh) => Fresh,
            (Derived, _) | (_, Derived) => Derived,
            (Param(a, pa), Param(b, pb)) => match a.cmp(&b) {
                std::cmp::Ordering::Less => Param(a, pa),
                std::cmp::Ordering::Greater => Param(b, pb),
                std::cmp::Ordering::Equal => Param(a, pa.common(&pb)),
            },
            (p @ Param(..), Unknown) | (Unknown, p @ Param(..)) => p,
            (Unknown, Unknown) => Unknown,
        }
    }
}

/// The fields from a parameter to the id (`data.messageId`). Closed once it went through an
/// element of a list or a mix of values: the fields after that are not followed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdPath {
    pub fields: Vec<String>,
    pub closed: bool,
}

impl IdPath {
    fn push(mut self, name: &str) -> IdPath {
        if !self.closed && self.fields.len() < 6 {
            self.fields.push(name.to_string());
        } else {
            self.closed = true;
        }
        self
    }

    fn close(mut self) -> IdPath {
        self.closed = true;
        self
    }

    /// What two paths from one parameter share.
    fn common(&self, other: &IdPath) -> IdPath {
        if self == other {
            return self.clone();
        }
        let fields: Vec<String> = self
            .fields
            .iter()
            .zip(&other.fields)
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a.clone())
            .collect();
        IdPath {
            fields,
            closed: true,
        }
    }
}

/// A field named for a message's id (`messageId`, `event_id`, `EventID`), whatever its case and
/// separators.
pub fn is_id_field(catalog: &Catalog, name: &str) -> bool {
    let normal = |s: &str| s.to_ascii_lowercase().replace(['_', '-'], "");
    catalog
        .message_id_fields
        .iter()
        .any(|m| normal(m) == normal(name))
}

/// Calls whose callback receives the elements (or the value) of what they are called on.
const ITERATORS: &[&str] = &[
    "map", "flatMap", "forEach", "filter", "find", "reduce", "some", "every", "then", "sort",
];

/// Values visited per question, so a pathological module costs little.
const BUDGET: u32 = 4000;

/// Follows ids inside function `f` of module `m`.
pub struct Tracer<'a> {
    res: &'a Resolver<'a>,
    catalog: &'a Catalog,
    m: ModId,
    f: FnId,
    budget: Cell<u32>,
}

/// Parameters bound while looking into a callback or a function of the module: (function, the
/// values of its parameters, whether they are elements of a list).
type Env = Vec<(FnId, Vec<Val>, bool)>;

impl<'a> Tracer<'a> {
    pub fn new(res: &'a Resolver<'a>, catalog: &'a Catalog, m: ModId, f: FnId) -> Self {
        Tracer {
            res,
            catalog,
            m,
            f,
            budget: Cell::new(BUDGET),
        }
    }

    /// The source of the message-id fields in `v`, when it has one (several combine).
    pub fn field_source(&self, v: &Val) -> Option<IdSource> {
        let mut found = Vec::new();
        self.fields(v, &mut Vec::new(), 0, &mut found);
        found.into_iter().reduce(IdSource::combine)
    }

    /// What a caller passes where the id of a message comes from (`path` inside argument `v`):
    /// the message-id fields it builds, or else the value at that path. An object literal that
    /// lacks a field of the path does not carry the id (or hides it in a spread this analysis
    /// cannot see): unknown.
    pub fn argument_source(&self, v: &Val, path: &IdPath) -> IdSource {
        if let Some(s) = self.field_source(v) {
            return s;
        }
        let mut cur = v.clone();
        for name in &path.fields {
            cur = match cur {
                Val::Obj(fields) => match fields.into_iter().find(|(k, _)| k == name) {
                    Some((_, x)) => x,
                    None => return IdSource::Unknown,
                },
                other => Val::Member(std::sync::Arc::new(other), name.clone()),
            };
        }
        match self.source(&cur, &mut Vec::new(), 0) {
            IdSource::Param(i, p) if path.closed => IdSource::Param(i, p.close()),
            s => s,
        }
    }

    /// A field named for a message's id (`messageId`, `event_id`, `EventID`).
    pub fn is_id_field(&self, name: &str) -> bool {
        is_id_field(self.catalog, name)
    }

    fn spend(&self, depth: usize) -> bool {
        let left = self.budget.get();
        if depth > 12 || left == 0 {
            return false;
        }
        self.budget.set(left - 1);
        true
    }

    fn returns(&self, g: FnId) -> &[Val] {
        self.res.modules[self.m]
            .functions
            .get(g)
            .map(|f| f.returns.as_slice())
            .unwrap_or(&[])
    }

    /// Binds the callbacks a call passes (`xs.map(cb)`: `cb`'s parameter is an element of `xs`)
    /// and, for a function of this module, its parameters to the arguments. Returns how many
    /// bindings were pushed.
    fn bind_call(&self, callee: &Val, args: &[Val], env: &mut Env) -> usize {
        let mut pushed = 0;
        if let Val::Member(recv, method) = callee
            && ITERATORS.contains(&method.as_str())
        {
            for a in args {
                if let Val::Func(cb) = a {
                    env.push((*cb, vec![recv.as_ref().clone()], true));
                    pushed += 1;
                }
            }
        }
        if let Val::Func(g) = callee {
            env.push((*g, args.to_vec(), false));
            pushed += 1;
        }
        pushed
    }

    fn fields(&self, v: &Val, env: &mut Env, depth: usize, out: &mut Vec<IdSource>) {
        if !self.spend(depth) {
            return;
        }
        match v {
            Val::Obj(fields) => {
                for (k, x) in fields {
                    if self.catalog.message_id_fields.iter().any(|f| f == k) {
                        out.push(self.source(x, env, depth + 1));
                    } else {
                        self.fields(x, env, depth + 1, out);
                    }
                }
            }
            Val::Arr(items) => {
                for x in items {
                    self.fields(x, env, depth + 1, out);
                }
            }
            Val::Call(callee, args) => {
                let pushed = self.bind_call(callee, args, env);
                for a in args {
                    self.fields(a, env, depth + 1, out);
                }
                if let Val::Func(g) = callee.as_ref() {
                    for r in self.returns(*g) {
                        self.fields(r, env, depth + 1, out);
                    }
                }
                env.truncate(env.len() - pushed);
            }
            Val::Func(g) => {
                for r in self.returns(*g) {
                    self.fields(r, env, depth + 1, out);
                }
            }
            _ => {}
        }
    }

    /// Where the value `v` comes from.
    fn source(&self, v: &Val, env: &mut Env, depth: usize) -> IdSource {
        if !self.spend(depth) {
            return IdSource::Unknown;
        }
        if fresh_random(v) {
            return IdSource::Fresh;
        }
        match v {
            Val::Call(callee, _) if derives_id(callee) => IdSource::Derived,
            Val::Call(callee, args) => {
                let pushed = self.bind_call(callee, args, env);
                let mut s = IdSource::Unknown;
                match callee.as_ref() {
                    Val::Func(g) => {
                        for r in self.returns(*g) {
                            s = s.combine(self.source(r, env, depth + 1));
                        }
                    }
                    // `xs.map(cb)`, `String(x)`, `x.trim()`: from the receiver and the arguments.
                    other => {
                        if let Val::Member(recv, _) = other {
                            s = s.combine(self.source(recv, env, depth + 1));
                        }
                        for a in args {
                            s = s.combine(self.source(a, env, depth + 1));
                        }
                    }
                }
                env.truncate(env.len() - pushed);
                s
            }
            // A field of an object this analysis sees: that field, or nothing when the object
            // lacks it (`{ messageId = uuid() }` then takes its default).
            Val::Member(inner, name) => match self.bound_object(inner, env) {
                Some((fields, at)) => {
                    let mut outer: Env = env[..at].to_vec();
                    fields
                        .iter()
                        .find(|(k, _)| k == name)
                        .map_or(IdSource::Unknown, |(_, x)| {
                            self.source(x, &mut outer, depth + 1)
                        })
                }
                None => match inner.as_ref() {
                    // A parameter of a module function inlined here: the field of what each call
                    // to it in this function passes.
                    Val::Param(g, i)
                        if *g != self.f
                            && !env.iter().any(|(h, _, _)| h == g)
                            && self.callback_receiver(*g).is_none() =>
                    {
                        let mut s = IdSource::Unknown;
                        for arg in self.arguments_to(*g, *i) {
                            let field = Val::Member(std::sync::Arc::new(arg), name.clone());
                            s = s.combine(self.source(&field, env, depth + 1));
                        }
                        s
                    }
                    _ => match self.source(inner, env, depth + 1) {
                        IdSource::Param(i, p) => IdSource::Param(i, p.push(name)),
                        s => s,
                    },
                },
            },
            Val::Param(g, i) if *g == self.f => IdSource::Param(*i, IdPath::default()),
            Val::Param(g, i) => {
                if let Some(at) = env.iter().rposition(|(h, _, _)| h == g) {
                    let bound = env[at].1.get(*i).cloned();
                    // The binding is looked at in the scope it was made in.
                    let mut outer: Env = env[..at].to_vec();
                    // A callback's parameter is an element of what it iterates.
                    let element = env[at].2;
                    return match bound.map(|b| self.source(&b, &mut outer, depth + 1)) {
                        Some(IdSource::Param(i, p)) if element => IdSource::Param(i, p.close()),
                        Some(s) => s,
                        None => IdSource::Unknown,
                    };
                }
                // An element of what the callback iterates.
                if let (0, Some(recv)) = (i, self.callback_receiver(*g)) {
                    return match self.source(&recv, env, depth + 1) {
                        IdSource::Param(i, p) => IdSource::Param(i, p.close()),
                        s => s,
                    };
                }
                // A function of the module whose result was inlined here: its parameter is what
                // the calls to it in this function pass.
                let mut s = IdSource::Unknown;
                for arg in self.arguments_to(*g, *i) {
                    s = s.combine(self.source(&arg, env, depth + 1));
                }
                s
            }
            Val::Obj(fields) => fields.iter().fold(IdSource::Unknown, |s, (_, x)| {
                s.combine(self.source(x, env, depth + 1))
            }),
            Val::Arr(items) => items.iter().fold(IdSource::Unknown, |s, x| {
                s.combine(self.source(x, env, depth + 1))
            }),
            // `evt-${body.eventId}`: from what it is made of, the constant parts aside.
            // A part named for an event id decides, the other parts namespacing it.
            Val::Template(parts) => {
                let sources: Vec<IdSource> = parts
                    .iter()
                    .map(|x| self.source(x, env, depth + 1))
                    .collect();
                let named = sources.iter().find(|s| {
                    matches!(s, IdSource::Param(_, p) if !p.closed && p.fields.last().is_some_and(|f| self.is_id_field(f)))
                });
                match named {
                    Some(n) if !sources.contains(&IdSource::Fresh) => n.clone(),
                    _ => sources
                        .into_iter()
                        .fold(IdSource::Unknown, IdSource::combine),
                }
            }
            Val::Func(g) => self.returns(*g).iter().fold(IdSource::Unknown, |s, r| {
                s.combine(self.source(r, env, depth + 1))
            }),
            _ => IdSource::Unknown,
        }
    }

    /// The object literal a value is, directly or as a bound parameter, with the length of the
    /// environment it is read in.
    fn bound_object(&self, v: &Val, env: &Env) -> Option<(Vec<(String, Val)>, usize)> {
        match v {
            Val::Obj(fields) => Some((fields.clone(), env.len())),
            Val::Param(g, i) if *g != self.f => {
                let at = env.iter().rposition(|(h, _, _)| h == g)?;
                match env[at].1.get(*i)? {
                    Val::Obj(fields) => Some((fields.clone(), at)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The `i`-th argument of every call to function `g` made inside the function traced.
    fn arguments_to(&self, g: FnId, i: usize) -> Vec<Val> {
        let functions = &self.res.modules[self.m].functions;
        let mut body = vec![self.f];
        let mut k = 0;
        while k < body.len() && body.len() < 1000 {
            if let Some(f) = functions.get(body[k]) {
                body.extend(f.children.iter().copied());
            }
            k += 1;
        }
        body.iter()
            .filter_map(|f| functions.get(*f))
            .flat_map(|f| f.calls.iter())
            .filter(|cs| matches!(cs.callee, Val::Func(x) if x == g))
            .filter_map(|cs| cs.args.get(i).cloned())
            .collect()
    }

    /// What callback `g` iterates (`xs` in `xs.map(g)`), wherever in the module it is passed.
    fn callback_receiver(&self, g: FnId) -> Option<Val> {
        self.res.modules[self.m]
            .functions
            .iter()
            .flat_map(|f| f.calls.iter())
            .find_map(|cs| match &cs.callee {
                Val::Member(recv, method)
                    if ITERATORS.contains(&method.as_str())
                        && cs.args.iter().any(|a| matches!(a, Val::Func(x) if *x == g)) =>
                {
                    Some(recv.as_ref().clone())
                }
                _ => None,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::IdPath;
    use super::IdSource::*;

    #[test]
    fn a_part_made_per_call_makes_the_whole_fresh() {
        let at = |fields: &[&str]| IdPath {
            fields: fields.iter().map(|f| f.to_string()).collect(),
            closed: false,
        };
        assert_eq!(Param(1, at(&[])).combine(Fresh), Fresh);
        assert_eq!(Unknown.combine(Param(2, at(&["a"]))), Param(2, at(&["a"])));
        assert_eq!(
            Param(2, at(&[])).combine(Param(0, at(&[]))),
            Param(0, at(&[]))
        );
        assert_eq!(Derived.combine(Param(0, at(&[]))), Derived);
        // Two paths from one parameter keep what they share, and no more fields after it.
        let mixed = Param(0, at(&["data", "id"])).combine(Param(0, at(&["data", "ts"])));
        assert_eq!(
            mixed,
            Param(
                0,
                IdPath {
                    fields: vec!["data".into()],
                    closed: true
                }
            )
        );
        assert_eq!(Unknown.combine(Unknown), Unknown);
    }
}
