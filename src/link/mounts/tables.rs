//! Route tables the front end could not unroll: a registration inside
//! `for (const r of routes)` or `routes.forEach((r) => ..)` whose method, path or handler is read
//! from the element (`router[r.method](r.path, r.action)`), where `routes` is an array another file
//! holds or a function returns. The linker reads the array and makes one route per element.

use super::{Mounter, code};
use crate::facts::Diagnostic;
use crate::link::resolve::{ModId, Resolved};
use crate::program::{STRING_IDENTITY, Val};

/// Iterator methods whose callback's first parameter is an element of the receiver.
const ITERATORS: &[&str] = &["forEach", "map", "flatMap"];

/// Most elements a table is read for.
const MAX_ELEMENTS: usize = 512;

/// One route of a registration: its methods and paths, and its handler and own middleware with
/// the module each is read in.
pub(super) struct Instance {
    pub methods: Vec<String>,
    pub paths: Vec<String>,
    pub handler: (ModId, Val),
    pub middleware: Vec<(ModId, Val)>,
    /// False when the path could not be read: `paths` is then the router's own root.
    pub complete: bool,
    /// Where the route is written when not at the registration (a route module of a directory).
    pub written_at: Option<(ModId, u32)>,
}

/// A `use` as one element of a table mounts it: its path, and its arguments with the module each
/// is read in.
pub(super) type UseRow = (Option<Val>, Vec<(ModId, Val)>);

/// The element a registration reads (an [`Val::Element`], or a callback's parameter), the
/// table, and the element standing in for it.
struct Row<'v> {
    reference: &'v Val,
    module: ModId,
    element: &'v Val,
}

fn mentions(v: &Val, reference: &Val) -> bool {
    if v == reference {
        return true;
    }
    match v {
        Val::Member(inner, _) | Val::Element(inner) => mentions(inner, reference),
        Val::Call(callee, args) => {
            mentions(callee, reference) || args.iter().any(|a| mentions(a, reference))
        }
        Val::Template(parts) | Val::Arr(parts) => parts.iter().any(|p| mentions(p, reference)),
        _ => false,
    }
}

/// A method the front end left to be read later: a parameter, a field of one, a table's
/// element, or a string built from them.
pub(super) fn read_later(v: &Val) -> bool {
    match v {
        Val::Param(..) | Val::Element(_) => true,
        Val::Member(inner, _) => read_later(inner),
        Val::Template(parts) => parts.iter().any(read_later),
        _ => false,
    }
}

/// The references to a table's element in a value: `Element(..)` and parameters.
fn references(v: &Val, out: &mut Vec<Val>) {
    match v {
        Val::Element(_) | Val::Param(..) if !out.contains(v) => out.push(v.clone()),
        Val::Member(inner, _) => references(inner, out),
        Val::Call(callee, args) => {
            references(callee, out);
            args.iter().for_each(|a| references(a, out));
        }
        Val::Template(parts) | Val::Arr(parts) => parts.iter().for_each(|p| references(p, out)),
        _ => {}
    }
}

impl Mounter<'_> {
    /// The routes a registration stands for: itself when its method and path read as strings,
    /// one per element of the table it reads them from, or none (with a diagnostic saying what
    /// could not be read).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn route_instances(
        &mut self,
        m: ModId,
        method: &Val,
        paths: &Val,
        path_text: &str,
        handler: (ModId, &Val),
        middleware: &[Val],
        (at, line): (ModId, u32),
    ) -> Vec<Instance> {
        let what = format!("the route path {}", code(path_text));
        let direct = (self.strings(m, method), self.strings(m, paths));
        if let (Some(methods), Some(_)) = &direct {
            let paths = self
                .strings_at_in(m, paths, (at, line), &what)
                .unwrap_or_default();
            return vec![Instance {
                methods: methods.clone(),
                paths,
                handler: (handler.0, handler.1.clone()),
                middleware: middleware.iter().map(|v| (m, v.clone())).collect(),
                complete: true,
                written_at: None,
            }];
        }
        if let Some(out) = self.table_routes(m, method, paths, handler, middleware) {
            return out;
        }
        // A computed call whose key never became a method (`target[prop](...args)` in a generic
        // helper): no registration.
        if direct.0.is_none() && read_later(method) {
            return Vec::new();
        }
        let file = self.modules()[at].file.clone();
        // A list of paths some of which read (`[`${base}/mirror`, '/mirror']`): those, and
        // the rest listed at the router's root as below.
        let mut out = Vec::new();
        if let (Some(methods), None, Val::Arr(items)) = (&direct.0, &direct.1, paths) {
            let (known, unknown): (Vec<&Val>, Vec<&Val>) =
                items.iter().partition(|p| self.strings(m, p).is_some());
            if !known.is_empty() && !unknown.is_empty() {
                let known = Val::Arr(known.into_iter().cloned().collect());
                out.push(Instance {
                    methods: methods.clone(),
                    paths: self
                        .strings_at_in(m, &known, (at, line), &what)
                        .unwrap_or_default(),
                    handler: (handler.0, handler.1.clone()),
                    middleware: middleware.iter().map(|v| (m, v.clone())).collect(),
                    complete: true,
                    written_at: None,
                });
            }
        }
        // A path that cannot be read: listed at the router's root, the part that is known.
        if let (Some(methods), None) = &direct {
            self.diagnostics.push(Diagnostic::new(
                file,
                line,
                format!(
                    "route path `{path_text}` is not statically known: the route is listed at its router's path, marked `path_complete: false`"
                ),
            ));
            out.push(Instance {
                methods: methods.clone(),
                paths: vec![String::new()],
                handler: (handler.0, handler.1.clone()),
                middleware: middleware.iter().map(|v| (m, v.clone())).collect(),
                complete: false,
                written_at: None,
            });
            return out;
        }
        // Route modules of a directory the module lists, each naming its route in its file name.
        if direct.1.is_none()
            && let Some(out) = self.directory_routes(paths, (at, line))
        {
            return out;
        }
        let message = match direct {
            (_, None) => format!(
                "route path `{path_text}` is not statically known: the route is left out of the inventory"
            ),
            _ => format!(
                "the method of the route at {} is not statically known: the route is left out of the inventory",
                code(path_text)
            ),
        };
        self.diagnostics.push(Diagnostic::new(file, line, message));
        Vec::new()
    }

    /// One route per element of the table the registration reads, if it reads one this tree
    /// holds.
    fn table_routes(
        &mut self,
        m: ModId,
        method: &Val,
        paths: &Val,
        handler: (ModId, &Val),
        middleware: &[Val],
    ) -> Option<Vec<Instance>> {
        let mut refs = Vec::new();
        references(method, &mut refs);
        references(paths, &mut refs);
        let (reference, table) = refs
            .iter()
            .find_map(|r| self.table_of(m, r).map(|t| (r.clone(), t)))?;
        let (tm, elements) = self.res.array(m, &table)?;
        let mut out = Vec::new();
        for element in elements.iter().take(MAX_ELEMENTS) {
            let row = Row {
                reference: &reference,
                module: tm,
                element,
            };
            let (Some(methods), Some(paths)) = (
                self.strings_in_row(m, method, &row),
                self.strings_in_row(m, paths, &row),
            ) else {
                continue;
            };
            out.push(Instance {
                methods,
                paths,
                handler: self.in_row(handler.0, handler.1, &row),
                middleware: middleware.iter().map(|v| self.in_row(m, v, &row)).collect(),
                complete: true,
                written_at: None,
            });
        }
        Some(out)
    }

    /// The routers a mounted value stands for: the router itself, or, for a field of a table's
    /// element (`routes.forEach((r) => app.use('/api', r.router))`), each element's.
    pub(super) fn children_of(&self, m: ModId, v: &Val) -> Vec<super::Key> {
        if let Some(k) = self.child_of(m, v, false) {
            return vec![k];
        }
        let mut refs = Vec::new();
        references(v, &mut refs);
        let Some((reference, table)) = refs
            .iter()
            .find_map(|r| self.table_of(m, r).map(|t| (r.clone(), t)))
        else {
            return Vec::new();
        };
        let Some((tm, elements)) = self.res.array(m, &table) else {
            return Vec::new();
        };
        elements
            .iter()
            .take(MAX_ELEMENTS)
            .filter_map(|element| {
                let row = Row {
                    reference: &reference,
                    module: tm,
                    element,
                };
                let (em, ev) = self.in_row(m, v, &row);
                self.child_of(em, &ev, false)
            })
            .collect()
    }

    /// A `use` as it mounts: its path and its arguments with the module each is read in; one
    /// per element when it mounts a field of a table's element (`app.use(r.path, r.router)`).
    pub(super) fn use_rows(&self, m: ModId, path: Option<Val>, args: Vec<Val>) -> Vec<UseRow> {
        let direct = || vec![(path.clone(), args.iter().map(|a| (m, a.clone())).collect())];
        if args.iter().any(|a| self.child_of(m, a, false).is_some()) {
            return direct();
        }
        let mut refs = Vec::new();
        args.iter().for_each(|a| references(a, &mut refs));
        let Some((reference, table)) = refs
            .iter()
            .find_map(|r| self.table_of(m, r).map(|t| (r.clone(), t)))
        else {
            return direct();
        };
        let Some((tm, elements)) = self.res.array(m, &table) else {
            return direct();
        };
        let mut out = Vec::new();
        for element in elements.iter().take(MAX_ELEMENTS) {
            let row = Row {
                reference: &reference,
                module: tm,
                element,
            };
            let path = match &path {
                Some(p) if mentions(p, &reference) => match self.strings_in_row(m, p, &row) {
                    Some(list) => Some(Val::Arr(list.into_iter().map(Val::Str).collect())),
                    None => Some(Val::Unknown),
                },
                p => p.clone(),
            };
            let mut args: Vec<(ModId, Val)> =
                args.iter().map(|a| self.in_row(m, a, &row)).collect();
            // `app.use(r.prefix, r.router)`: a first argument the element makes a string is the
            // path.
            let path = match path {
                None if args.len() >= 2 => match self.strings(args[0].0, &args[0].1) {
                    Some(list) => {
                        args.remove(0);
                        Some(Val::Arr(list.into_iter().map(Val::Str).collect()))
                    }
                    None => None,
                },
                p => p,
            };
            out.push((path, args));
        }
        out
    }

    /// The table an element reference iterates: what `Element(table)` names, or the receiver
    /// of the iterator call (`table.forEach(cb)`) whose callback has the parameter.
    fn table_of(&self, m: ModId, reference: &Val) -> Option<Val> {
        match reference {
            Val::Element(table) => Some(table.as_ref().clone()),
            Val::Param(g, 0) => self.modules()[m]
                .functions
                .iter()
                .flat_map(|f| f.calls.iter())
                .find_map(|cs| match &cs.callee {
                    Val::Member(recv, it)
                        if ITERATORS.contains(&it.as_str())
                            && cs.args.iter().any(|a| matches!(a, Val::Func(x) if x == g)) =>
                    {
                        Some(recv.as_ref().clone())
                    }
                    _ => None,
                }),
            _ => None,
        }
    }

    /// A value of the registration (read in module `m`) with the element in place of its
    /// reference, and the module it is then read in.
    fn in_row(&self, m: ModId, v: &Val, row: &Row) -> (ModId, Val) {
        if v == row.reference {
            return (row.module, row.element.clone());
        }
        if !mentions(v, row.reference) {
            return (m, v.clone());
        }
        match v {
            Val::Member(inner, p) => {
                let (im, iv) = self.in_row(m, inner, row);
                match iv {
                    Val::Obj(fields) => (
                        im,
                        fields
                            .iter()
                            .rev()
                            .find(|(k, _)| k == p)
                            .map(|(_, x)| x.clone())
                            .unwrap_or(Val::Unknown),
                    ),
                    Val::Arr(items) => (
                        im,
                        p.parse::<usize>()
                            .ok()
                            .and_then(|i| items.get(i).cloned())
                            .unwrap_or(Val::Unknown),
                    ),
                    other => (im, Val::Member(std::sync::Arc::new(other), p.clone())),
                }
            }
            Val::Call(callee, args) if args.is_empty() => match callee.as_ref() {
                Val::Member(inner, f) if STRING_IDENTITY.contains(&f.as_str()) => {
                    self.in_row(m, inner, row)
                }
                _ => (m, Val::Unknown),
            },
            _ => (m, Val::Unknown),
        }
    }

    /// The strings a value of the registration stands for, with the element in place.
    fn strings_in_row(&self, m: ModId, v: &Val, row: &Row) -> Option<Vec<String>> {
        if let Val::Template(parts) = v {
            let mut out = vec![String::new()];
            for part in parts {
                let choices = self.strings_in_row(m, part, row)?;
                out = out
                    .iter()
                    .flat_map(|o| choices.iter().map(move |c| format!("{o}{c}")))
                    .take(super::MAX_CHOICES)
                    .collect();
            }
            return Some(out);
        }
        let (vm, vv) = self.in_row(m, v, row);
        self.strings(vm, &vv)
    }
}

impl crate::link::resolve::Resolver<'_> {
    /// The arguments of every call of function `f` of module `m` (a class's constructor by
    /// `new` of the class), with the module each call is in.
    fn arguments(&self, m: ModId, f: crate::program::FnId) -> Vec<(ModId, Vec<Val>)> {
        let ctor_of = self.modules[m]
            .classes
            .iter()
            .position(|c| c.method("constructor") == Some(f));
        let mut out = Vec::new();
        for (cm, module) in self.modules.iter().enumerate() {
            for cs in module.functions.iter().flat_map(|x| x.calls.iter()) {
                let hit = match self.resolve(cm, &cs.callee) {
                    Resolved::Func(tm, tf) => (tm, tf) == (m, f),
                    Resolved::Class(tm, tc) => cs.is_new && tm == m && Some(tc) == ctor_of,
                    _ => false,
                };
                if hit {
                    out.push((cm, cs.args.clone()));
                }
            }
        }
        out
    }

    /// The elements of an array a value stands for, and the module they are read in: a literal,
    /// an import of one, a field of an object holding one, what a function returns,
    /// `Object.values(..)` / `Object.keys(..)` of an object.
    pub fn array(&self, m: ModId, v: &Val) -> Option<(ModId, Vec<Val>)> {
        self.array_d(m, v, 0)
    }

    fn array_d(&self, m: ModId, v: &Val, d: usize) -> Option<(ModId, Vec<Val>)> {
        if d > 8 {
            return None;
        }
        match v {
            Val::Arr(items) => Some((m, items.clone())),
            Val::Import { spec, name } => {
                let target = self.resolve_spec(m, spec)?;
                let module = &self.modules[target];
                let value = match name.as_deref() {
                    None | Some("default") => module
                        .cjs_whole
                        .as_ref()
                        .or_else(|| module.export("default"))?,
                    Some(n) => module.export(n)?,
                };
                self.array_d(target, value, d + 1)
            }
            Val::Member(inner, p) => match self.resolve(m, inner) {
                Resolved::Obj(om, fields) => {
                    let (_, field) = fields.iter().rev().find(|(k, _)| k == p)?;
                    self.array_d(om, field, d + 1)
                }
                Resolved::Module(tm) => {
                    let value = self.modules[tm].export(p)?;
                    self.array_d(tm, value, d + 1)
                }
                _ => None,
            },
            // A parameter: what the calls of its function pass (`new App([new UsersRoute()])`).
            Val::Param(f, i) => self
                .arguments(m, *f)
                .into_iter()
                .find_map(|(cm, args)| args.get(*i).and_then(|a| self.array_d(cm, a, d + 1))),
            Val::Call(callee, args) => {
                if let Val::Member(obj, f) = callee.as_ref()
                    && matches!(obj.as_ref(), Val::Global(g) if g == "Object")
                {
                    let Resolved::Obj(om, fields) = self.resolve(m, args.first()?) else {
                        return None;
                    };
                    let fields = fields
                        .into_iter()
                        .filter(|(k, _)| k != crate::program::SPREAD);
                    let items = match f.as_str() {
                        "values" => fields.map(|(_, v)| v).collect(),
                        "keys" => fields.map(|(k, _)| Val::Str(k)).collect(),
                        "entries" => fields
                            .map(|(k, v)| Val::Arr(vec![Val::Str(k), v]))
                            .collect(),
                        _ => return None,
                    };
                    return Some((om, items));
                }
                let Resolved::Func(fm, f) = self.resolve(m, callee) else {
                    return None;
                };
                self.modules[fm].functions[f]
                    .returns
                    .iter()
                    .find_map(|r| self.array_d(fm, r, d + 1))
            }
            _ => None,
        }
    }
}
