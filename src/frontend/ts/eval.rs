//! Builds a [`Module`] from one tree-sitter tree: a small abstract interpreter over the file.
//!
//! Declarations are bound lazily (so hoisting and use-before-definition work), function bodies are
//! walked once when the function value is first made, `forEach`/`for…of` over a literal array is
//! unrolled (route tables), and every call is recorded with its chain decomposed. References to
//! other files stay symbolic (`Val::Import`) for the linker.

use super::FieldExt;
use crate::catalog::Catalog;
use crate::facts::Diagnostic;
use crate::program::*;
use crate::text::{named_like_signature, names_unique_violation};
use rustc_hash::FxHashMap as HashMap;
use tree_sitter::Node;

/// Deeper than this, an expression is not followed (a diagnostic says so once per file).
const MAX_DEPTH: usize = 200;

/// Most keys of an object literal a `for … in` loop is walked for.
const MAX_UNROLLED: usize = 256;

/// Most loop bodies one file's literal tables are walked for, all loops together.
const MAX_UNROLLED_TOTAL: usize = 4096;

/// How many parameters a rest parameter (`...args`) stands for.
const REST_SPAN: usize = 6;

/// Past this many members and calls, a chain's calls are not recorded and its value is unknown
/// (a diagnostic says so once per file); registrations on a router go on whatever the length.
const MAX_CHAIN_LINKS: usize = 256;

enum Binding<'t> {
    Lazy(Node<'t>),
    LazyFn(Node<'t>),
    LazyClass(Node<'t>),
    Busy,
    Val(Val),
}

/// Where a name was declared, for reading a key's origin from the syntax.
#[derive(Clone, Copy)]
pub(super) enum Decl<'t> {
    /// A `variable_declarator`.
    Var(Node<'t>),
    /// Parameter `usize` of a function.
    Param(FnId, usize),
}

struct Scope<'t> {
    parent: Option<usize>,
    owner: FnId,
    this_class: Option<ClassId>,
    vars: HashMap<String, Binding<'t>>,
}

pub(super) struct Chain {
    pub root: Val,
    pub root_name: String,
    pub path: Vec<String>,
    pub hops: Vec<usize>,
    pub val: Val,
    /// The last link is a computed member whose key is not a string (`router[method]`,
    /// `router[isNew ? 'post' : 'put']`): the receiver and the key, for a call on it.
    pub computed: Option<(Val, Val)>,
    /// The chain starts at a field of `this` that holds an ORM repository or model of one
    /// entity (`@InjectRepository(User) repo: Repository<User>`): that entity.
    pub model: Option<String>,
}

/// Assignments in the two branches of one `if`/`else` past which they are not joined (see
/// [`Evaluator::join_branches`]): the last write stands, as it does without a join.
const MAX_JOINED: usize = 512;

/// The most grown (and tested) row fields an evaluator keeps a function (see
/// [`Evaluator::grown`]).
const MAX_GROWN: usize = 64;

/// A value made from a row's field the code read (see [`crate::program::ARITH`]).
fn is_arith(v: &Val) -> bool {
    crate::program::arith_parts(v).is_some()
}

/// The list a membership test reads: `row.tags` of `row.tags.includes(t)` and of
/// `row.seasons.map((s) => s.n).includes(n)`.
fn tested_list(v: &Val) -> &Val {
    let mut v = v;
    for _ in 0..4 {
        match v {
            Val::Call(f, _) => match f.as_ref() {
                Val::Member(inner, m) if matches!(m.as_str(), "map" | "filter") => v = inner,
                _ => break,
            },
            _ => break,
        }
    }
    v
}

pub struct Evaluator<'t, 'c> {
    pub(super) src: &'t str,
    pub(super) module: Module,
    pub(super) catalog: &'c Catalog,
    pub(super) diagnostics: Vec<Diagnostic>,
    scopes: Vec<Scope<'t>>,
    cur: usize,
    pub(super) fn_memo: HashMap<usize, FnId>,
    /// (scope, name) → its declaration.
    pub(super) decls: HashMap<(usize, String), Decl<'t>>,
    class_memo: HashMap<usize, ClassId>,
    depth: usize,
    /// The line where evaluation was first cut at [`MAX_DEPTH`].
    too_deep: Option<u32>,
    /// The line of the first chain cut at [`MAX_CHAIN_LINKS`].
    long_chain: Option<u32>,
    /// Loop bodies walked for the elements of literal tables so far, and the line of the first
    /// loop past [`MAX_UNROLLED_TOTAL`].
    unrolled: usize,
    unroll_cut: Option<u32>,
    name_hint: Option<String>,
    export_clauses: Vec<(String, String, u32)>,
    /// The HTTP methods the code being walked runs under (`if (req.method === 'POST')`).
    pub(super) branch: Option<Vec<String>>,
    /// Inside a `try` whose `catch` names a unique-violation code.
    unique_catch: bool,
    /// On a failure path (see `CallSite::on_failure`).
    failure: bool,
    /// Inside the body of a `try` that has a `catch` (see `CallSite::in_try`).
    in_try: bool,
    /// Inside the body of a `try` whose `catch` neither throws nor returns (see
    /// `CallSite::swallowed`).
    swallowed: bool,
    /// After a claim succeeded (see `CallSite::claimed`).
    pub(super) claimed: Option<(&'static str, u32)>,
    /// Under a condition on a looked-up row (see `CallSite::guarded`).
    pub(super) guarded: Option<String>,
    /// `url.pathname = url.pathname.replace('/api', '')` in a Worker's `fetch` before it hands
    /// the request to its app (`app.fetch(req, env, ctx)`): the function and the prefix the
    /// clients' paths carry, which the app's routes do not.
    pub(super) stripped_prefix: Option<(FnId, String)>,
    /// Fields of rows a lookup returned whose list the code grew (`row.tags.push(tag)`,
    /// `row.tags = [...row.tags, tag]`): what reads them after holds a value made from the one
    /// read (see `crate::program::ARITH`); and whether all it added are rows the code loaded.
    /// Bounded by [`MAX_GROWN`].
    grown: Vec<(FnId, Val, bool)>,
    /// Row fields whose list the code tests for an item (`row.tags.includes(tag)`,
    /// `row.hooks.find((h) => h.url === url)`, also through a `map` or `filter` of it) or
    /// replaces (`row.devices = row.devices.filter(..)`): what it adds then is what the list
    /// lacks, a set's add or a replacement, which a repeat does not grow. Both lists are kept
    /// by the handler-level function ([`Evaluator::top_fn`]), so a test or a push in a callback
    /// counts.
    tested: Vec<(FnId, Val)>,
    /// Names the module binds to its CommonJS exports object (`const helpers = module.exports;`):
    /// each `helpers.name = value` exports `name`, as `module.exports.name = value` does.
    exports_aliases: Vec<String>,
    /// The functions the module's top level assigns to an exports alias (`helpers.tryRoute =
    /// function ..`), by name: made when first read, so a function written above another reads
    /// it (`helpers.setupApiRoute` calling `helpers.tryRoute`, assigned below it).
    alias_functions: HashMap<String, Node<'t>>,
    /// Every assignment to a variable, in order: (its scope, its name, the value assigned); read
    /// by [`Self::join_branches`].
    pub(super) assigned: Vec<(usize, String, Val)>,
    /// Under such a condition whose other branch throws (`if (existing) throw ..`): the line
    /// of the test. A repeat of the request fails there (see `CallSite::refused`).
    pub(super) refused: Option<u32>,
    /// Under tests of a looked-up row's state, outermost first (see `CallSite::state_guard`).
    pub(super) state_guard: Vec<crate::program::StateTest>,
    /// Under a test of a parameter's truthiness (see `CallSite::param_gate`).
    pub(super) param_gate: Option<crate::program::ParamGate>,
    /// The refusing guard in force at the end of the block last walked.
    pub(super) block_guard: Option<(String, u32)>,
    /// Under a condition that the looked-up row exists (see `CallSite::found`). Functions
    /// defined there keep it: they are the callbacks that run there (`$transaction(tx => ..)`).
    pub(super) found: Vec<Found>,
    /// The blocks being walked (see `CallSite::blocks`).
    pub(super) blocks: Vec<usize>,
    /// `blocks` as the calls made in the current block share it (made at the first of them).
    blocks_shared: Option<std::sync::Arc<[usize]>>,
    chain_group: Option<usize>,
    /// Callbacks about to be made whose first parameter holds a known value: a `.then(cb)`'s,
    /// what its promise fulfils with (`countDocuments(..).then(n => ..)`); an `async.auto`
    /// task's, the results of the other tasks (see [`ASYNC_AUTO_RESULTS`]).
    fulfilled: Vec<(usize, Val)>,
    /// Functions made for model accessors (see `model_accessor`): calling one gives its class.
    model_accessors: Vec<FnId>,
}

impl Evaluator<'_, '_> {
    /// The blocks being walked, shared by every call made in the same block.
    fn blocks_now(&mut self) -> std::sync::Arc<[usize]> {
        self.blocks_shared
            .get_or_insert_with(|| self.blocks.as_slice().into())
            .clone()
    }
}

pub fn line(n: Node) -> u32 {
    n.start_position().row as u32 + 1
}

fn is_statement(kind: &str) -> bool {
    kind.ends_with("_statement") || kind.ends_with("_declaration") || kind == "statement_block"
}

/// A string method called on a known string, or on an environment read's default (the result
/// is then the default of that read): `trim`, `trimStart`, `trimEnd`, `toLowerCase`,
/// `toUpperCase`, `replace` / `replaceAll` of a literal string, and of a regular expression on
/// the empty string by the empty string (`''.replace(/\/$/, '')` is `''`). None for anything else.
/// `pattern_kind` is the syntax kind of the first argument (`string`, `regex`).
fn string_method(
    recv: &Val,
    method: &str,
    args: &[Val],
    pattern_kind: Option<&str>,
) -> Option<Val> {
    let (s, var) = match recv {
        Val::Str(s) => (s.as_str(), None),
        Val::EnvDefault { var, value } => match value.as_ref() {
            Val::Str(s) => (s.as_str(), Some(var)),
            _ => return None,
        },
        _ => return None,
    };
    let out = match (method, args) {
        ("trim", []) => s.trim().to_string(),
        ("trimStart", []) => s.trim_start().to_string(),
        ("trimEnd", []) => s.trim_end().to_string(),
        ("toLowerCase", []) => s.to_lowercase(),
        ("toUpperCase", []) => s.to_uppercase(),
        ("replace" | "replaceAll", [pattern, Val::Str(with)]) => match (pattern, pattern_kind) {
            (Val::Str(p), Some("string")) if !p.is_empty() => {
                if method == "replace" {
                    s.replacen(p.as_str(), with, 1)
                } else {
                    s.replace(p.as_str(), with)
                }
            }
            (_, Some("regex")) if s.is_empty() && with.is_empty() => String::new(),
            _ => return None,
        },
        _ => return None,
    };
    Some(match var {
        Some(var) => Val::EnvDefault {
            var: var.clone(),
            value: std::sync::Arc::new(Val::Str(out)),
        },
        None => Val::Str(out),
    })
}

/// Most parts a string built from pieces keeps; past that it is cut (and cannot be read).
const MAX_TEMPLATE_PARTS: usize = 32;

/// A value that can be one side of a string concatenation: a string, or something symbolic that
/// may stand for one (a parameter, a member, an import), not a number or an unknown.
fn concatenable(v: &Val) -> bool {
    matches!(
        v,
        Val::Str(_)
            | Val::EnvDefault { .. }
            | Val::Template(_)
            | Val::Param(..)
            | Val::Member(..)
            | Val::Import { .. }
    )
}

/// A string built from pieces (a template literal, `a + b`): the string itself when every piece
/// is one (an environment read's default among them makes the whole that default), otherwise a
/// [`Val::Template`] of the pieces, literal text as [`Val::Str`], at most
/// [`MAX_TEMPLATE_PARTS`] of them (a cut one ends in [`Val::Unknown`]).
fn concat(pieces: Vec<Val>) -> Val {
    let mut parts: Vec<Val> = Vec::new();
    for p in pieces {
        let p = match p {
            Val::Template(inner) => {
                parts.extend(inner);
                continue;
            }
            p => p,
        };
        match (parts.last_mut(), &p) {
            (Some(Val::Str(prev)), Val::Str(s)) => prev.push_str(s),
            (_, Val::Str(s)) if s.is_empty() => {}
            _ => parts.push(p),
        }
    }
    if parts.iter().all(|p| p.as_str().is_some()) {
        let text: String = parts.iter().filter_map(Val::as_str).collect();
        return match parts.into_iter().find_map(|p| match p {
            Val::EnvDefault { var, .. } => Some(var),
            _ => None,
        }) {
            Some(var) => Val::EnvDefault {
                var,
                value: std::sync::Arc::new(Val::Str(text)),
            },
            None => Val::Str(text),
        };
    }
    if parts.len() > MAX_TEMPLATE_PARTS {
        parts.truncate(MAX_TEMPLATE_PARTS - 1);
        parts.push(Val::Unknown);
    }
    Val::Template(parts)
}

/// A value the code may not show that can stand for a string: a member, a parameter, a call's
/// result, an import, an unbound name.
fn may_fall_back(v: &Val) -> bool {
    matches!(
        v,
        Val::Member(..) | Val::Param(..) | Val::Call(..) | Val::Import { .. } | Val::Global(_)
    )
}

/// A value with nothing known in it: unknown, or an object literal of unknowns
/// (`{ dbRead: undefined as never }`, a stand-in while building).
fn placeholder(v: &Val) -> bool {
    match v {
        Val::Unknown => true,
        Val::Obj(fields) => fields.iter().all(|(_, v)| matches!(v, Val::Unknown)),
        _ => false,
    }
}

/// A value made by running code: a call's result or a new instance.
fn made(v: &Val) -> bool {
    matches!(v, Val::Call(..) | Val::New(..))
}

/// A value read from a global at run time (`globalThis.x`, `process.env.X`, `window.y`).
fn rooted_in_global(v: &Val) -> bool {
    match v {
        Val::Global(_) => true,
        Val::Member(inner, _) => rooted_in_global(inner),
        _ => false,
    }
}

fn is_function(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

impl<'t, 'c> Evaluator<'t, 'c> {
    pub fn new(file: &str, src: &'t str, catalog: &'c Catalog) -> Self {
        let mut module = Module {
            file: file.to_string(),
            ..Default::default()
        };
        module.functions.push(FnFacts {
            name: "<module>".into(),
            line: 1,
            ..Default::default()
        });
        Evaluator {
            src,
            module,
            catalog,
            diagnostics: Vec::new(),
            scopes: vec![Scope {
                parent: None,
                owner: 0,
                this_class: None,
                vars: HashMap::default(),
            }],
            cur: 0,
            fn_memo: HashMap::default(),
            decls: HashMap::default(),
            class_memo: HashMap::default(),
            depth: 0,
            too_deep: None,
            long_chain: None,
            unrolled: 0,
            unroll_cut: None,
            name_hint: None,
            export_clauses: Vec::new(),
            branch: None,
            chain_group: None,
            fulfilled: Vec::new(),
            model_accessors: Vec::new(),
            unique_catch: false,
            failure: false,
            in_try: false,
            swallowed: false,
            claimed: None,
            guarded: None,
            stripped_prefix: None,
            grown: Vec::new(),
            tested: Vec::new(),
            exports_aliases: Vec::new(),
            alias_functions: HashMap::default(),
            assigned: Vec::new(),
            refused: None,
            state_guard: Vec::new(),
            param_gate: None,
            block_guard: None,
            found: Vec::new(),
            blocks: Vec::new(),
            blocks_shared: None,
        }
    }

    pub fn run(mut self, root: Node<'t>) -> (Module, Vec<Diagnostic>) {
        self.module.use_server = self.has_directive(root, "use server");
        self.hoist(root);
        self.walk_children(root);
        self.cur = 0;
        for (exported, local, l) in std::mem::take(&mut self.export_clauses) {
            let v = self.lookup(&local);
            self.module.export_lines.push((exported.clone(), l));
            self.module.exports.push((exported, v));
        }
        self.scan_key_code(root);
        if let Some(at) = self.too_deep {
            self.diagnostics.push(Diagnostic::new(
                self.module.file.clone(),
                at,
                format!(
                    "expressions nested deeper than {MAX_DEPTH} levels were not followed: routes, mounts and calls written inside them are left out"
                ),
            ));
        }
        if let Some(at) = self.unroll_cut {
            self.diagnostics.push(Diagnostic::new(
                self.module.file.clone(),
                at,
                format!(
                    "loops over literal tables were walked {MAX_UNROLLED_TOTAL} times in this file: from here on a loop is read once for an unknown element, and routes it registers per element are left out"
                ),
            ));
        }
        if let Some(at) = self.long_chain {
            self.diagnostics.push(Diagnostic::new(
                self.module.file.clone(),
                at,
                format!(
                    "a chain of more than {MAX_CHAIN_LINKS} calls and members: the calls past that are not followed for side effects (routes registered on a router are kept)"
                ),
            ));
        }
        (self.module, self.diagnostics)
    }

    /// The class `this` is in the current function, when it is one.
    /// Is the code being read inside function `f` (also nested in functions of its body)?
    pub(super) fn inside(&self, f: FnId) -> bool {
        let mut scope = Some(self.cur);
        while let Some(i) = scope {
            if self.scopes[i].owner == f {
                return true;
            }
            scope = self.scopes[i].parent;
        }
        false
    }

    pub(super) fn this_class(&self) -> Option<ClassId> {
        self.scopes[self.cur].this_class
    }

    pub(super) fn text(&self, n: Node) -> &'t str {
        // The source is already a `&str`: slicing it checks two char boundaries, where
        // `utf8_text` validates every byte of the node again.
        self.src.get(n.byte_range()).unwrap_or("")
    }

    pub(super) fn cur_fn(&self) -> FnId {
        self.scopes[self.cur].owner
    }

    pub(super) fn cur_scope(&self) -> usize {
        self.cur
    }

    // ----- scopes -----

    fn push_scope(&mut self, owner: FnId, this_class: Option<ClassId>) -> usize {
        self.scopes.push(Scope {
            parent: Some(self.cur),
            owner,
            this_class,
            vars: HashMap::default(),
        });
        let prev = self.cur;
        self.cur = self.scopes.len() - 1;
        prev
    }

    fn declare(&mut self, name: &str, b: Binding<'t>) {
        self.scopes[self.cur].vars.insert(name.to_string(), b);
    }

    fn set_in(&mut self, scope: usize, name: &str, v: Val) {
        self.scopes[scope]
            .vars
            .insert(name.to_string(), Binding::Val(v));
    }

    /// How many scopes have been made so far (each scope made later has a higher index).
    pub(super) fn scope_count(&self) -> usize {
        self.scopes.len()
    }

    pub(super) fn find(&self, name: &str) -> Option<usize> {
        self.find_from(self.cur, name)
    }

    /// The scope, from `start` outwards, that declares `name`.
    pub(super) fn find_from(&self, start: usize, name: &str) -> Option<usize> {
        let mut s = Some(start);
        while let Some(i) = s {
            if self.scopes[i].vars.contains_key(name) {
                return Some(i);
            }
            s = self.scopes[i].parent;
        }
        None
    }

    /// A module-level binding already evaluated to an in-process container (`new Map()`, an
    /// object literal, an LRU): what a sweeper function touching it cleans.
    pub(super) fn module_container(&self, name: &str) -> bool {
        matches!(
            self.scopes[0].vars.get(name),
            Some(Binding::Val(Val::New(..) | Val::Obj(_)))
        )
    }

    pub(super) fn lookup(&mut self, name: &str) -> Val {
        match self.find(name) {
            Some(i) => self.force(i, name),
            None => Val::Global(name.to_string()),
        }
    }

    fn force(&mut self, scope: usize, name: &str) -> Val {
        let binding = match self.scopes[scope].vars.get_mut(name) {
            Some(b) => std::mem::replace(b, Binding::Busy),
            None => return Val::Unknown,
        };
        let node = match binding {
            Binding::Val(v) => {
                self.set_in(scope, name, v.clone());
                return v;
            }
            Binding::Busy => {
                self.set_in(scope, name, Val::Unknown);
                return Val::Unknown;
            }
            Binding::Lazy(n) | Binding::LazyFn(n) | Binding::LazyClass(n) => n,
        };
        let saved = self.cur;
        self.cur = scope;
        match node.kind() {
            "variable_declarator" => self.eval_declarator(node),
            k if k.contains("class") => {
                let c = self.make_class(node, name.to_string());
                self.set_in(scope, name, Val::Class(c));
            }
            _ => {
                let f = self.make_function(node, Some(name.to_string()), None);
                self.set_in(scope, name, Val::Func(f));
            }
        }
        self.cur = saved;
        match self.scopes[scope].vars.get(name) {
            Some(Binding::Val(v)) => v.clone(),
            _ => Val::Unknown,
        }
    }

    fn eval_declarator(&mut self, decl: Node<'t>) {
        let Some(pattern) = decl.field("name") else {
            return;
        };
        let v = match decl.field("value") {
            // `const helpers = module.exports;` at the top of a module: an object the module
            // fills with its exports (see `exports_aliases`).
            Some(value)
                if self.cur == 0
                    && pattern.kind() == "identifier"
                    && matches!(self.text(value), "module.exports" | "exports") =>
            {
                let alias = self.text(pattern).to_string();
                self.alias_functions_of(decl, &alias);
                self.exports_aliases.push(alias);
                Val::Obj(Vec::new())
            }
            Some(value) => {
                if pattern.kind() == "identifier" {
                    self.name_hint = Some(self.text(pattern).to_string());
                }
                let v = self.eval(value);
                self.name_hint = None;
                v
            }
            None => match decl.field("type") {
                Some(t) => self.type_ref(t),
                None => Val::Unknown,
            },
        };
        let scope = self.cur;
        let mut names = Vec::new();
        self.pattern_names(pattern, &mut names);
        for n in names {
            self.decls.insert((scope, n), Decl::Var(decl));
        }
        self.bind_pattern(pattern, v, scope);
    }

    /// Binds every name in a destructuring pattern to the matching part of `v`.
    fn bind_pattern(&mut self, pattern: Node<'t>, v: Val, scope: usize) {
        match pattern.kind() {
            "identifier" | "shorthand_property_identifier_pattern" => {
                let name = self.text(pattern).to_string();
                self.set_in(scope, &name, v);
            }
            "object_pattern" => {
                let mut cursor = pattern.walk();
                for child in pattern.named_children(&mut cursor) {
                    match child.kind() {
                        "shorthand_property_identifier_pattern" => {
                            let name = self.text(child).to_string();
                            let field = self.member(v.clone(), &name);
                            self.set_in(scope, &name, field);
                        }
                        "pair_pattern" => {
                            let (Some(k), Some(value)) = (child.field("key"), child.field("value"))
                            else {
                                continue;
                            };
                            let key = self.property_name(k);
                            self.header_read(&key, line(k));
                            let field = self.member(v.clone(), &key);
                            self.bind_pattern(value, field, scope);
                        }
                        "object_assignment_pattern" => {
                            if let Some(left) = child.field("left") {
                                let name = self.text(left).to_string();
                                let field = self.member(v.clone(), &name);
                                self.bind_pattern(left, field, scope);
                            }
                        }
                        // `const { name, ...rest } = route`: the other fields of the value
                        // (of an object literal, exactly those; of another value, read through
                        // it: `rest.path` is `route.path`).
                        "rest_pattern" => {
                            if let Some(inner) = child.named_child(0) {
                                let rest = match &v {
                                    Val::Obj(fields) => {
                                        let named = self.pattern_keys(pattern);
                                        Val::Obj(
                                            fields
                                                .iter()
                                                .filter(|(k, _)| !named.contains(k))
                                                .cloned()
                                                .collect(),
                                        )
                                    }
                                    Val::Unknown => Val::Unknown,
                                    other => other.clone(),
                                };
                                self.bind_pattern(inner, rest, scope);
                            }
                        }
                        _ => {}
                    }
                }
            }
            "array_pattern" => {
                let mut cursor = pattern.walk();
                let items: Vec<Node> = pattern.named_children(&mut cursor).collect();
                for (i, child) in items.into_iter().enumerate() {
                    let item = match &v {
                        Val::Arr(a) => a.get(i).cloned().unwrap_or(Val::Unknown),
                        // `const [found, total] = await Promise.all([lookupA, lookupB])`: each
                        // name holds what its promise gives
                        Val::Call(callee, args)
                            if matches!(callee.as_ref(), Val::Member(p, all)
                                if all == "all" && matches!(p.as_ref(), Val::Global(g) if g == "Promise")) =>
                        {
                            match args.first() {
                                Some(Val::Arr(a)) => a.get(i).cloned().unwrap_or(Val::Unknown),
                                _ => Val::Unknown,
                            }
                        }
                        // `([path, handler]) => ..` over a table read later: the element's items.
                        Val::Param(..) | Val::Element(_) | Val::Member(..) => {
                            Val::Member(std::sync::Arc::new(v.clone()), i.to_string())
                        }
                        // `const [row] = await db.select().from(t).limit(1)`: the first row of
                        // a query's result.
                        Val::Call(..) if i == 0 => {
                            Val::Member(std::sync::Arc::new(v.clone()), "0".into())
                        }
                        _ => Val::Unknown,
                    };
                    self.bind_pattern(child, item, scope);
                }
            }
            "assignment_pattern" | "object_assignment_pattern" => {
                if let Some(left) = pattern.field("left") {
                    self.bind_pattern(left, v, scope);
                }
            }
            "rest_pattern" => {
                if let Some(inner) = pattern.named_child(0) {
                    self.bind_pattern(inner, Val::Unknown, scope);
                }
            }
            _ => {}
        }
    }

    /// The keys an object pattern names before its rest (`{ a, b: c, d = 1, ...rest }`: `a`,
    /// `b`, `d`).
    fn pattern_keys(&self, pattern: Node<'t>) -> Vec<String> {
        let mut cursor = pattern.walk();
        pattern
            .named_children(&mut cursor)
            .filter_map(|child| match child.kind() {
                "shorthand_property_identifier_pattern" => Some(self.text(child).to_string()),
                "pair_pattern" => child.field("key").map(|k| self.property_name(k)),
                "object_assignment_pattern" => {
                    child.field("left").map(|l| self.text(l).to_string())
                }
                _ => None,
            })
            .collect()
    }

    fn pattern_names(&self, pattern: Node<'t>, out: &mut Vec<String>) {
        match pattern.kind() {
            "identifier" | "shorthand_property_identifier_pattern" => {
                out.push(self.text(pattern).to_string())
            }
            _ => {
                let mut cursor = pattern.walk();
                for child in pattern.named_children(&mut cursor) {
                    match child.kind() {
                        "pair_pattern" => {
                            if let Some(v) = child.field("value") {
                                self.pattern_names(v, out);
                            }
                        }
                        "object_assignment_pattern" | "assignment_pattern" => {
                            if let Some(l) = child.field("left") {
                                self.pattern_names(l, out);
                            }
                        }
                        _ => self.pattern_names(child, out),
                    }
                }
            }
        }
    }

    /// Declares, without evaluating, everything a block declares (hoisting).
    fn hoist(&mut self, block: Node<'t>) {
        let mut cursor = block.walk();
        let children: Vec<Node<'t>> = block.named_children(&mut cursor).collect();
        for &stmt in &children {
            self.hoist_stmt(stmt);
        }
        // (after the functions, which an alias may name before they are declared)
        for stmt in children {
            let decl = match stmt.kind() {
                "export_statement" => stmt.field("declaration"),
                _ => Some(stmt),
            };
            if let Some(d) = decl.filter(|d| d.kind() == "type_alias_declaration") {
                self.return_type_alias(d);
            }
            if let Some(d) = decl
                .filter(|d| matches!(d.kind(), "interface_declaration" | "type_alias_declaration"))
            {
                self.type_shape(d);
            }
        }
    }

    /// `type OrgRepo = ReturnType<typeof createOrgRepo>` (or `Awaited<..>` of one): the alias
    /// names what a call of the function returns, so a parameter declared with it holds that
    /// (`{ orgRepo }: { orgRepo: OrgRepo }`, and where the alias is imported). Types and values
    /// have names of their own: a value of the same name keeps it.
    fn return_type_alias(&mut self, decl: Node<'t>) {
        let (Some(name), Some(value)) = (decl.field("name"), decl.field("value")) else {
            return;
        };
        let name = self.text(name).to_string();
        if self.scopes[self.cur].vars.contains_key(&name) {
            return;
        }
        let mut ty = value;
        let mut function = None;
        for _ in 0..4 {
            if ty.kind() != "generic_type" {
                break;
            }
            let (Some(generic), Some(arg)) = (
                ty.named_child(0),
                ty.field("type_arguments").and_then(|a| a.named_child(0)),
            ) else {
                break;
            };
            match self.text(generic) {
                "Awaited" => ty = arg,
                "ReturnType" if arg.kind() == "type_query" => {
                    function = arg
                        .named_child(0)
                        .filter(|t| t.kind() == "identifier")
                        .map(|t| self.text(t).to_string());
                    break;
                }
                _ => break,
            }
        }
        let Some(function) = function else {
            return;
        };
        let made = Val::Call(std::sync::Arc::new(self.lookup(&function)), Vec::new());
        self.declare(&name, Binding::Val(made));
    }

    /// The fields of an interface's body or an object type: each with its declared type, a field
    /// of a type not read (`email: string`) as unknown, so that the shape says which fields a
    /// value of it carries (a DTO spread into a record writes them).
    fn shape_fields(&mut self, body: Node<'t>) -> Val {
        let typed = match self.declared_type(body, 0) {
            Val::Obj(fields) => fields,
            _ => Vec::new(),
        };
        let mut cursor = body.walk();
        let members: Vec<Node<'t>> = body.named_children(&mut cursor).collect();
        let mut fields = Vec::new();
        for m in members.into_iter().take(32) {
            if m.kind() != "property_signature" {
                continue;
            }
            let Some(name) = m.field("name") else {
                continue;
            };
            let name = self.text(name).to_string();
            let v = typed
                .iter()
                .find(|(k, _)| *k == name)
                .map_or(Val::Unknown, |(_, v)| v.clone());
            fields.push((name, v));
        }
        if fields.is_empty() {
            Val::Unknown
        } else {
            Val::Obj(fields)
        }
    }

    /// `interface Modules extends Base { orders: OrdersModule }` or `type Context = Core & {
    /// userId?: string }`: its parts (see `program::Module::type_shapes`), for a parameter
    /// declared with it whose members are called.
    fn type_shape(&mut self, decl: Node<'t>) {
        // (shapes whose fields are all of types not read count apart: they say only which
        // fields a value carries, and must not crowd out the shapes that type services)
        if self.module.type_shapes.len() >= 2 * crate::program::MAX_TYPE_SHAPES {
            return;
        }
        let Some(name) = decl.field("name") else {
            return;
        };
        let name = self.text(name).to_string();
        let mut parts = Vec::new();
        if decl.kind() == "interface_declaration" {
            let mut cursor = decl.walk();
            let heritage: Vec<Node<'t>> = decl
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "extends_type_clause")
                .collect();
            for h in heritage {
                let mut c = h.walk();
                let bases: Vec<Node<'t>> = h.named_children(&mut c).take(8).collect();
                for b in bases {
                    let t = self.type_ref(b);
                    if !matches!(t, Val::Unknown) {
                        parts.push(t);
                    }
                }
            }
            if let Some(body) = decl.field("body") {
                parts.push(self.shape_fields(body));
            }
        } else if let Some(value) = decl.field("value") {
            let mut stack = vec![value];
            while let Some(t) = stack.pop() {
                if parts.len() >= 8 {
                    break;
                }
                match t.kind() {
                    "intersection_type" => {
                        let mut c = t.walk();
                        let mut items: Vec<Node<'t>> = t.named_children(&mut c).collect();
                        items.reverse();
                        stack.extend(items);
                    }
                    "object_type" => parts.push(self.shape_fields(t)),
                    "type_identifier" | "nested_type_identifier" | "generic_type" => {
                        parts.push(self.type_ref(t))
                    }
                    _ => {}
                }
            }
        }
        parts.retain(|p| !matches!(p, Val::Unknown));
        let typed = |parts: &[Val]| {
            parts.iter().any(|p| match p {
                Val::Obj(fields) => fields.iter().any(|(_, v)| !matches!(v, Val::Unknown)),
                _ => true,
            })
        };
        let kind = typed(&parts);
        let same_kind = self
            .module
            .type_shapes
            .iter()
            .filter(|(_, p)| typed(p) == kind)
            .count();
        if !parts.is_empty() && same_kind < crate::program::MAX_TYPE_SHAPES {
            self.module.type_shapes.push((name, parts));
        }
    }

    fn hoist_stmt(&mut self, stmt: Node<'t>) {
        match stmt.kind() {
            "lexical_declaration" | "variable_declaration" => {
                let mut cursor = stmt.walk();
                let decls: Vec<Node<'t>> = stmt.named_children(&mut cursor).collect();
                for decl in decls
                    .into_iter()
                    .filter(|d| d.kind() == "variable_declarator")
                {
                    if let Some(p) = decl.field("name") {
                        let mut names = Vec::new();
                        self.pattern_names(p, &mut names);
                        for n in names {
                            self.decls.insert((self.cur, n.clone()), Decl::Var(decl));
                            self.declare(&n, Binding::Lazy(decl));
                        }
                    }
                }
            }
            "function_declaration" | "generator_function_declaration" => {
                if let Some(n) = stmt.field("name") {
                    let name = self.text(n).to_string();
                    self.declare(&name, Binding::LazyFn(stmt));
                }
            }
            "class_declaration" | "abstract_class_declaration" => {
                if let Some(n) = stmt.field("name") {
                    let name = self.text(n).to_string();
                    self.declare(&name, Binding::LazyClass(stmt));
                }
            }
            "export_statement" => {
                if let Some(d) = stmt.field("declaration") {
                    self.hoist_stmt(d);
                }
            }
            "import_statement" => self.bind_import(stmt),
            _ => {}
        }
    }

    /// Whether a condition holds in production, when it tests only which environment the code
    /// runs in: a flag named for it (`isDev`, `isDevelopment`, `__DEV__`, `isProd`,
    /// `config.isProduction`) or `process.env.NODE_ENV` compared with a literal
    /// (`'production'`, `'development'`, `'test'`), negated or not.
    pub(super) fn production_test(&self, n: Node, depth: usize) -> Option<bool> {
        if depth > 8 {
            return None;
        }
        let flag = |name: &str| -> Option<bool> {
            let name = name.trim_start_matches('_').trim_end_matches('_');
            let key: String = name
                .chars()
                .filter(|c| *c != '_')
                .collect::<String>()
                .to_ascii_lowercase();
            match key.as_str() {
                "isdev" | "isdevelopment" | "dev" | "development" | "isdevmode" | "devmode"
                | "indevelopment" => Some(false),
                "isprod" | "isproduction" | "prod" | "production" | "isprodmode"
                | "inproduction" => Some(true),
                _ => None,
            }
        };
        let env_name = |x: Node| {
            let t = self.text(x);
            t.ends_with("NODE_ENV") || t.ends_with("APP_ENV")
        };
        let env_value = |v: &str| -> Option<bool> {
            match v.to_ascii_lowercase().as_str() {
                "production" | "prod" => Some(true),
                "development" | "dev" | "test" | "local" => Some(false),
                _ => None,
            }
        };
        match n.kind() {
            "parenthesized_expression" => self.production_test(n.named_child(0)?, depth + 1),
            "unary_expression" if n.field("operator").map(|o| self.text(o)) == Some("!") => self
                .production_test(n.field("argument")?, depth + 1)
                .map(|p| !p),
            "identifier" => flag(self.text(n)),
            "member_expression" => {
                let p = n.field("property")?;
                flag(self.text(p))
            }
            "binary_expression" => {
                let op = self.text(n.field("operator")?);
                let (l, r) = (n.field("left")?, n.field("right")?);
                let lit = if env_name(l) && r.kind() == "string" {
                    r
                } else if env_name(r) && l.kind() == "string" {
                    l
                } else {
                    return None;
                };
                // whether `NODE_ENV === lit` holds in production
                let holds = env_value(&self.string_value(lit))?;
                match op {
                    "===" | "==" => Some(holds),
                    "!==" | "!=" => Some(!holds),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    pub(super) fn string_value(&self, n: Node) -> String {
        let t = self.text(n);
        if t.len() >= 2 && (t.starts_with('"') || t.starts_with('\'') || t.starts_with('`')) {
            t[1..t.len() - 1].to_string()
        } else {
            t.to_string()
        }
    }

    /// The module an import's source names, as the project's other imports name it (see
    /// [`crate::program::package_spec`]).
    fn import_spec(&self, n: Node) -> String {
        crate::program::package_spec(&self.string_value(n))
    }

    fn bind_import(&mut self, stmt: Node<'t>) {
        let Some(source) = stmt.field("source") else {
            // `import x = require('y')`
            let mut cursor = stmt.walk();
            for child in stmt.named_children(&mut cursor) {
                if child.kind() == "import_require_clause" {
                    let id = child.named_child(0);
                    let src = child.field("source");
                    if let (Some(id), Some(src)) = (id, src) {
                        let v = Val::Import {
                            spec: self.import_spec(src),
                            name: None,
                        };
                        let name = self.text(id).to_string();
                        self.declare(&name, Binding::Val(v));
                    }
                }
            }
            return;
        };
        let spec = self.import_spec(source);
        let mut cursor = stmt.walk();
        let clauses: Vec<Node<'t>> = stmt
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "import_clause")
            .collect();
        for clause in clauses {
            let mut c2 = clause.walk();
            let parts: Vec<Node<'t>> = clause.named_children(&mut c2).collect();
            for part in parts {
                match part.kind() {
                    "identifier" => {
                        let v = Val::Import {
                            spec: spec.clone(),
                            name: Some("default".into()),
                        };
                        let name = self.text(part).to_string();
                        self.declare(&name, Binding::Val(v));
                    }
                    "namespace_import" => {
                        if let Some(id) = part.named_child(0) {
                            let v = Val::Import {
                                spec: spec.clone(),
                                name: None,
                            };
                            let name = self.text(id).to_string();
                            self.declare(&name, Binding::Val(v));
                        }
                    }
                    "named_imports" => {
                        let mut c3 = part.walk();
                        let specs: Vec<Node<'t>> = part.named_children(&mut c3).collect();
                        for s in specs.into_iter().filter(|s| s.kind() == "import_specifier") {
                            let Some(name) = s.field("name") else {
                                continue;
                            };
                            let imported = self.property_name(name);
                            let local = s
                                .field("alias")
                                .map(|a| self.text(a).to_string())
                                .unwrap_or_else(|| imported.clone());
                            let v = Val::Import {
                                spec: spec.clone(),
                                name: Some(imported),
                            };
                            self.declare(&local, Binding::Val(v));
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    // ----- statements -----

    fn walk_children(&mut self, node: Node<'t>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.walk(child);
        }
    }

    /// The statements of a block, in order; after a delete that fails when its row is gone
    /// (see `deletes_or_fails`), what follows runs once.
    fn walk_block(&mut self, node: Node<'t>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.walk(child);
            if self.claimed.is_none() && self.deletes_or_fails(child) {
                let what = super::claims::DELETES_OR_FAILS;
                self.claimed = Some((what, line(child)));
                // in the function's own body: every run that finds no row fails the function,
                // so its callers go on once
                let f = self.cur_fn();
                let facts = &mut self.module.functions[f];
                if facts.body_block == Some(node.id()) {
                    facts.refuses_unless.get_or_insert((what, line(child)));
                }
            }
        }
    }

    fn walk(&mut self, node: Node<'t>) {
        if self.depth > MAX_DEPTH {
            self.too_deep.get_or_insert(line(node));
            return;
        }
        self.depth += 1;
        self.walk_inner(node);
        self.depth -= 1;
    }

    fn walk_inner(&mut self, node: Node<'t>) {
        match node.kind() {
            "lexical_declaration" | "variable_declaration" => {
                let mut cursor = node.walk();
                let decls: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                for decl in decls
                    .into_iter()
                    .filter(|d| d.kind() == "variable_declarator")
                {
                    let Some(p) = decl.field("name") else {
                        continue;
                    };
                    let mut names = Vec::new();
                    self.pattern_names(p, &mut names);
                    match names.first() {
                        Some(first) if self.find(first).is_some() => {
                            if let Some(i) = self.find(first) {
                                self.force(i, first);
                            }
                        }
                        _ => self.eval_declarator(decl),
                    }
                }
            }
            "function_declaration"
            | "generator_function_declaration"
            | "class_declaration"
            | "abstract_class_declaration" => {
                if let Some(n) = node.field("name") {
                    let name = self.text(n).to_string();
                    match self.find(&name) {
                        Some(i) => {
                            self.force(i, &name);
                        }
                        None if node.kind().contains("class") => {
                            self.make_class(node, name);
                        }
                        None => {
                            self.make_function(node, Some(name), None);
                        }
                    }
                }
            }
            "export_statement" => self.walk_export(node),
            "import_statement" => {}
            "expression_statement" => {
                self.method_assertion(node);
                self.walk_children_eval(node)
            }
            "return_statement" => {
                if let Some(e) = node.named_child(0) {
                    let v = self.eval(e).pruned(MAX_VAL_NODES);
                    let f = self.cur_fn();
                    self.module.functions[f].returns.push(v);
                }
            }
            "statement_block" | "class_static_block" => {
                let prev = self.push_scope(self.cur_fn(), self.scopes[self.cur].this_class);
                // An `if (!row) return` inside the block says nothing after the block.
                let saved_guard = self.guarded.clone();
                let saved_refused = self.refused;
                let saved_state = self.state_guard.clone();
                let saved_gate = self.param_gate.clone();
                let saved_found = self.found.clone();
                let saved_claim = self.claimed;
                let saved_branch = self.branch.clone();
                self.blocks.push(node.id());
                self.blocks_shared = None;
                self.hoist(node);
                self.walk_block(node);
                self.blocks.pop();
                self.blocks_shared = None;
                // What a presence test around the block needs (`if (dto.email) { .. }`).
                self.block_guard = self.guarded.clone().zip(self.refused);
                self.guarded = saved_guard;
                self.refused = saved_refused;
                self.state_guard = saved_state;
                self.param_gate = saved_gate;
                self.found = saved_found;
                self.claimed = saved_claim;
                self.branch = saved_branch;
                self.cur = prev;
            }
            "for_in_statement" => self.walk_for_of(node),
            "if_statement" => self.walk_if(node),
            "try_statement" => self.walk_try(node),
            "switch_statement" => self.walk_switch(node),
            "interface_declaration"
            | "type_alias_declaration"
            | "enum_declaration"
            | "ambient_declaration" => {}
            _ => self.walk_children_eval(node),
        }
    }

    /// A `'use server'`-style directive: a string expression statement before any other.
    fn has_directive(&self, block: Node<'t>, directive: &str) -> bool {
        let mut cursor = block.walk();
        for stmt in block.named_children(&mut cursor) {
            match stmt.kind() {
                "comment" => continue,
                "expression_statement" => match stmt.named_child(0) {
                    Some(s) if s.kind() == "string" => {
                        if self.string_value(s) == directive {
                            return true;
                        }
                    }
                    _ => return false,
                },
                _ => return false,
            }
        }
        false
    }

    /// A `try` whose `catch` recognises a unique violation covers the calls in its body.
    fn walk_try(&mut self, node: Node<'t>) {
        let handler = node.field("handler");
        let catches = handler.is_some_and(|h| names_unique_violation(self.text(h)));
        if catches {
            let f = self.cur_fn();
            self.module.functions[f].answers_unique = true;
        }
        let finally_throws = node
            .field("finalizer")
            .is_some_and(|f| self.text(f).contains("throw"));
        // A `catch` that only throws again (or keeps the error for a `finally` that throws it)
        // lets every failure leave the function, as if there were no `try`.
        let rethrows = finally_throws
            || handler.is_some_and(|h| {
                let t = self.text(h);
                t.contains("throw") && !t.contains("return")
            });
        // A `catch` with no `throw` and no `return` goes on after the `try`: the error is
        // dropped there, unless the `finally` throws what the catch kept (`catch (e) { err = e;
        // rollback() } finally { release(); if (err) throw err }`).
        let drops = handler.is_some_and(|h| {
            let t = self.text(h);
            !t.contains("throw") && !t.contains("return")
        }) && !finally_throws;
        // A `catch` whose body always ends by throwing (not one that throws only for other
        // errors: `if (e.code !== 'P2002') throw e` lets a duplicate through).
        let always_throws = handler
            .and_then(|h| h.field("body"))
            .is_some_and(|b| super::next::throws(b, self.src));
        let throws_on_unique = !always_throws
            && handler
                .and_then(|h| h.field("body"))
                .is_some_and(|b| throws_on_unique_violation(b, self.src));
        if let Some(body) = node.field("body") {
            if always_throws {
                let f = self.cur_fn();
                if self.module.functions[f].rethrow_blocks.len() < 64 {
                    self.module.functions[f].rethrow_blocks.push(body.id());
                }
            }
            if throws_on_unique {
                let f = self.cur_fn();
                if self.module.functions[f].unique_rethrow_blocks.len() < 64 {
                    self.module.functions[f]
                        .unique_rethrow_blocks
                        .push(body.id());
                }
            }
            let saved = (self.unique_catch, self.in_try, self.swallowed);
            self.unique_catch |= catches;
            self.in_try |= handler.is_some() && !rethrows;
            self.swallowed |= drops;
            self.walk(body);
            (self.unique_catch, self.in_try, self.swallowed) = saved;
        }
        if let Some(h) = handler {
            let saved = std::mem::replace(&mut self.failure, true);
            self.walk_stmt_or_expr(h);
            self.failure = saved;
        }
        if let Some(f) = node.field("finalizer") {
            self.walk_stmt_or_expr(f);
        }
    }

    /// A read of a header the audit tracks: an idempotency key, or a webhook signature.
    pub(super) fn header_read(&mut self, name: &str, at: u32) {
        let f = self.cur_fn();
        if self.catalog.is_key_header(name) {
            self.module.functions[f]
                .key_reads
                .push((name.to_string(), at));
        } else if self.catalog.is_signature_header(name) {
            self.module.functions[f]
                .signature_reads
                .push((name.to_string(), at));
        } else if named_like_signature(name) {
            self.module.functions[f]
                .signature_like_reads
                .push((name.to_string(), at));
        }
    }

    pub(super) fn walk_stmt_or_expr(&mut self, node: Node<'t>) {
        if is_statement(node.kind()) {
            self.walk(node);
        } else {
            self.eval(node);
        }
    }

    fn walk_children_eval(&mut self, node: Node<'t>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        for child in children {
            if is_statement(child.kind()) {
                self.walk(child);
            } else {
                self.eval(child);
            }
        }
    }

    fn walk_export(&mut self, node: Node<'t>) {
        let source = node.field("source").map(|s| self.import_spec(s));
        if let Some(decl) = node.field("declaration") {
            self.walk(decl);
            let mut names = Vec::new();
            match decl.kind() {
                "lexical_declaration" | "variable_declaration" => {
                    let mut cursor = decl.walk();
                    for d in decl
                        .named_children(&mut cursor)
                        .filter(|d| d.kind() == "variable_declarator")
                    {
                        if let Some(p) = d.field("name") {
                            self.pattern_names(p, &mut names);
                        }
                    }
                }
                _ => {
                    if let Some(n) = decl.field("name") {
                        names.push(self.text(n).to_string());
                    }
                }
            }
            let is_default = self.has_token(node, "default");
            for n in names {
                let v = self.lookup(&n);
                if is_default {
                    self.module.exports.push(("default".into(), v.clone()));
                    self.module
                        .export_lines
                        .push(("default".into(), line(node)));
                }
                self.module.export_lines.push((n.clone(), line(node)));
                self.module.exports.push((n, v));
            }
            return;
        }
        if let Some(value) = node.field("value") {
            self.name_hint = Some("default".into());
            let v = self.eval(value);
            self.name_hint = None;
            self.module.exports.push(("default".into(), v));
            self.module
                .export_lines
                .push(("default".into(), line(node)));
            return;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.children(&mut cursor).collect();
        let mut clause_seen = false;
        for child in &children {
            match child.kind() {
                "export_clause" => {
                    clause_seen = true;
                    let mut c2 = child.walk();
                    for s in child
                        .named_children(&mut c2)
                        .filter(|s| s.kind() == "export_specifier")
                    {
                        let Some(name) = s.field("name") else {
                            continue;
                        };
                        let local = self.property_name(name);
                        let exported = s
                            .field("alias")
                            .map(|a| self.property_name(a))
                            .unwrap_or_else(|| local.clone());
                        match &source {
                            Some(spec) => {
                                self.module
                                    .export_lines
                                    .push((exported.clone(), line(node)));
                                self.module.exports.push((
                                    exported,
                                    Val::Import {
                                        spec: spec.clone(),
                                        name: Some(local),
                                    },
                                ))
                            }
                            None => self.export_clauses.push((exported, local, line(node))),
                        }
                    }
                }
                "namespace_export" => {
                    clause_seen = true;
                    if let (Some(spec), Some(id)) = (&source, child.named_child(0)) {
                        let name = self.property_name(id);
                        self.module.exports.push((
                            name,
                            Val::Import {
                                spec: spec.clone(),
                                name: None,
                            },
                        ));
                    }
                }
                _ => {}
            }
        }
        if !clause_seen {
            if let Some(spec) = source {
                self.module.star_exports.push(spec);
            } else if children.iter().any(|c| c.kind() == "=") {
                // `export = X`
                if let Some(e) = node.named_children(&mut node.walk()).last() {
                    let v = self.eval(e);
                    self.module.cjs_whole = Some(v);
                }
            }
        }
    }

    fn has_token(&self, node: Node, token: &str) -> bool {
        let mut cursor = node.walk();
        node.children(&mut cursor).any(|c| c.kind() == token)
    }

    fn walk_for_of(&mut self, node: Node<'t>) {
        let (Some(left), Some(right), Some(body)) =
            (node.field("left"), node.field("right"), node.field("body"))
        else {
            return self.walk_children_eval(node);
        };
        let is_of = self.has_token(node, "of");
        let iterable = self.eval(right);
        let elements = match (&iterable, is_of) {
            (Val::Arr(items), true) if !items.is_empty() => items.clone(),
            // `for (const key in table)`: its keys.
            (Val::Obj(fields), false) if !fields.is_empty() => {
                let mut keys: Vec<Val> = Vec::new();
                for (k, _) in fields
                    .iter()
                    .filter(|(k, _)| k != crate::program::SPREAD)
                    .take(MAX_UNROLLED)
                {
                    if !keys.iter().any(|x| x.as_str() == Some(k.as_str())) {
                        keys.push(Val::Str(k.clone()));
                    }
                }
                keys
            }
            // A table from elsewhere: one element stands for all of them.
            (Val::Unknown | Val::Arr(_) | Val::Obj(_), _) | (_, false) => vec![Val::Unknown],
            (other, true) => vec![Val::Element(std::sync::Arc::new(other.clone()))],
        };
        let elements = self.within_unroll_budget(elements, node);
        for element in elements {
            let prev = self.push_scope(self.cur_fn(), self.scopes[self.cur].this_class);
            let scope = self.cur;
            self.bind_pattern(left, element, scope);
            self.walk(body);
            self.cur = prev;
        }
    }

    /// The elements a loop over a literal table is walked for, within the file's budget: past
    /// [`MAX_UNROLLED_TOTAL`] walks (tables nested in tables), a loop is walked once for an
    /// unknown element, and a diagnostic says so.
    fn within_unroll_budget(&mut self, elements: Vec<Val>, node: Node<'t>) -> Vec<Val> {
        if elements.len() <= 1 {
            return elements;
        }
        if self.unrolled + elements.len() > MAX_UNROLLED_TOTAL {
            self.unroll_cut.get_or_insert(line(node));
            return vec![Val::Unknown];
        }
        self.unrolled += elements.len();
        elements
    }

    // ----- functions and classes -----

    /// Makes (once per node) the function value of a function-like node, walking its body.
    pub(super) fn make_function(
        &mut self,
        node: Node<'t>,
        name: Option<String>,
        class: Option<ClassId>,
    ) -> FnId {
        if let Some(&f) = self.fn_memo.get(&node.id()) {
            return f;
        }
        let id = self.module.functions.len();
        let name = name
            .or_else(|| node.field("name").map(|n| self.text(n).to_string()))
            .unwrap_or_else(|| "anonymous".into());
        let this_class = if node.kind() == "arrow_function" {
            self.scopes[self.cur].this_class
        } else {
            class.or(self.scopes[self.cur].this_class)
        };
        // `async f(..)`, `async (..) =>`, `public async f(..)`: the word before the parameters
        let is_async = self
            .text(node)
            .split('(')
            .next()
            .is_some_and(|head| head.split_whitespace().any(|w| w == "async"));
        self.module.functions.push(FnFacts {
            name,
            line: line(node),
            is_async,
            class,
            body_block: node
                .field("body")
                .filter(|b| b.kind() == "statement_block")
                .map(|b| b.id()),
            ..Default::default()
        });
        let parent = self.cur_fn();
        self.module.functions[parent].children.push(id);
        self.fn_memo.insert(node.id(), id);
        let prev = self.push_scope(id, this_class);
        // A function written as a call's argument (`sql.begin(async (tx) => { .. })`,
        // `db.transaction(..)`, `.then(u => ..)`) runs, or is handed on, where the call is: under
        // the guards around the call. Any other starts with none.
        let inline = node.parent().is_some_and(|p| p.kind() == "arguments");
        let saved_guard = if inline {
            self.guarded.clone()
        } else {
            self.guarded.take()
        };
        let saved_refused = if inline {
            self.refused
        } else {
            self.refused.take()
        };
        let saved_state = if inline {
            self.state_guard.clone()
        } else {
            std::mem::take(&mut self.state_guard)
        };
        let saved_gate = if inline {
            self.param_gate.clone()
        } else {
            self.param_gate.take()
        };
        let saved_found = self.found.clone();
        let saved_claim = self.claimed;
        let saved_branch = self.branch.clone();
        // (nor the `try` around a call that names a function declared further down: the body
        // runs in its own frame, where that `catch` is not)
        let saved_try = (self.unique_catch, self.in_try, self.swallowed, self.failure);
        if !inline {
            (self.unique_catch, self.in_try, self.swallowed, self.failure) =
                (false, false, false, false);
        }
        // A body walked while a call is being read (a function declared further down, hoisted
        // when the call names it) starts chains of its own, not links of that call's.
        let saved_chain = self.chain_group.take();
        let scope = self.cur;
        if let Some(params) = node.field("parameters") {
            let mut cursor = params.walk();
            // A TypeScript `this` parameter (`static make(this: ModelStatic<M>, values)`) types
            // the receiver: it is no argument, the next parameter is the call's first.
            let list: Vec<Node<'t>> = params
                .named_children(&mut cursor)
                .filter(|p| p.field("pattern").is_none_or(|pat| pat.kind() != "this"))
                .collect();
            // A type parameter with a constraint (`<S extends TokenStore>(store: S)`): a
            // parameter of that type holds a value of the constraint.
            let constraints: Vec<(&str, Node<'t>)> = node
                .field("type_parameters")
                .map(|tp| {
                    let mut c = tp.walk();
                    tp.named_children(&mut c)
                        .filter_map(|t| {
                            let name = self.text(t.field("name")?);
                            let bound = t.field("constraint")?.named_child(0)?;
                            Some((name, bound))
                        })
                        .take(16)
                        .collect()
                })
                .unwrap_or_default();
            for (i, p) in list.into_iter().enumerate() {
                let pattern = p.field("pattern").unwrap_or(p);
                self.param_decorators(p, id, i);
                // `function init(app: Koa = new Koa())`: the default is the app.
                let default = p.field("value").or_else(|| {
                    (p.kind() == "assignment_pattern")
                        .then(|| p.field("right"))
                        .flatten()
                });
                let pattern = if p.kind() == "assignment_pattern" {
                    p.field("left").unwrap_or(pattern)
                } else {
                    pattern
                };
                // `(...args)`: the parameters from here on, as an array.
                let (pattern, rest) = match pattern.kind() {
                    "rest_pattern" => (pattern.named_child(0).unwrap_or(pattern), true),
                    _ => (pattern, false),
                };
                let default = default.map(|d| self.eval(d));
                if let Some(obj @ (Val::Obj(_) | Val::Bool(_))) = &default {
                    self.module.functions[id]
                        .param_defaults
                        .push((i, obj.clone()));
                }
                let fulfilled = if i == 0 && !rest {
                    self.fulfilled_for(node)
                } else {
                    None
                };
                let value = match default {
                    Some(r @ Val::Router(_)) => r,
                    _ if fulfilled.is_some() => fulfilled.unwrap_or(Val::Param(id, 0)),
                    _ if rest => Val::Arr((i..i + REST_SPAN).map(|k| Val::Param(id, k)).collect()),
                    _ => Val::Param(id, i),
                };
                let mut names = Vec::new();
                self.pattern_names(pattern, &mut names);
                for n in names {
                    self.decls.insert((scope, n), Decl::Param(id, i));
                }
                if let Some(t) = p.field("type") {
                    let t = t
                        .named_child(0)
                        .filter(|n| n.kind() == "type_identifier")
                        .and_then(|n| {
                            let name = self.text(n);
                            constraints
                                .iter()
                                .find(|(p, _)| *p == name)
                                .map(|(_, b)| *b)
                        })
                        .unwrap_or(t);
                    let declared = self.declared_type(t, 0);
                    // (or an interface or object type this module declares)
                    let local_shape = matches!(&declared, Val::TypeRef(t)
                        if matches!(t.as_ref(), Val::Global(n) if self.module.type_shape(n).is_some()));
                    if names_alias_or_import(&declared) || local_shape {
                        self.module.functions[id].param_types.push((i, declared));
                    }
                }
                self.bind_pattern(pattern, value, scope);
            }
        } else if let Some(p) = node.field("parameter") {
            if p.kind() == "identifier" {
                let n = self.text(p).to_string();
                self.decls.insert((scope, n), Decl::Param(id, 0));
            }
            let value = match self.fulfilled_for(node) {
                Some(v) => v,
                None => Val::Param(id, 0),
            };
            self.bind_pattern(p, value, scope);
        }
        if let Some(t) = node.field("return_type") {
            let declared = self.declared_type(t, 0);
            if !matches!(declared, Val::Unknown) {
                self.module.functions[id].return_type = Some(declared);
            }
        }
        if let Some(body) = node.field("body") {
            if body.kind() == "statement_block" {
                self.module.functions[id].use_server = self.has_directive(body, "use server");
                self.hoist(body);
                self.walk_block(body);
            } else {
                let v = self.eval(body).pruned(MAX_VAL_NODES);
                self.module.functions[id].returns.push(v);
            }
        }
        self.guarded = saved_guard;
        self.refused = saved_refused;
        self.state_guard = saved_state;
        self.param_gate = saved_gate;
        self.found = saved_found;
        self.claimed = saved_claim;
        self.branch = saved_branch;
        self.chain_group = saved_chain;
        (self.unique_catch, self.in_try, self.swallowed, self.failure) = saved_try;
        self.cur = prev;
        id
    }

    /// A declared type as a value (see `FnFacts::return_type`): a type reference, what a
    /// `Promise<T>` resolves to, or an object type's fields each as its own.
    fn declared_type(&mut self, annotation: Node<'t>, depth: usize) -> Val {
        if depth > 8 {
            return Val::Unknown;
        }
        match annotation.kind() {
            "type_annotation" => match annotation.named_child(0) {
                Some(c) => self.declared_type(c, depth + 1),
                None => Val::Unknown,
            },
            "generic_type"
                if annotation
                    .named_child(0)
                    .is_some_and(|n| self.text(n) == "Promise") =>
            {
                match annotation
                    .field("type_arguments")
                    .and_then(|a| a.named_child(0))
                {
                    Some(t) => self.declared_type(t, depth + 1),
                    None => Val::Unknown,
                }
            }
            "object_type" | "interface_body" => {
                let mut cursor = annotation.walk();
                let members: Vec<Node<'t>> = annotation.named_children(&mut cursor).collect();
                let mut fields = Vec::new();
                for m in members.into_iter().take(32) {
                    if m.kind() != "property_signature" {
                        continue;
                    }
                    let (Some(name), Some(t)) = (m.field("name"), m.field("type")) else {
                        continue;
                    };
                    let v = self.declared_type(t, depth + 1);
                    if !matches!(v, Val::Unknown) {
                        fields.push((self.text(name).to_string(), v));
                    }
                }
                if fields.is_empty() {
                    Val::Unknown
                } else {
                    Val::Obj(fields)
                }
            }
            _ => self.type_ref(annotation),
        }
    }

    fn type_ref(&mut self, annotation: Node<'t>) -> Val {
        // `: Foo`, `: Foo<T>`, `: mod.Foo`
        let mut n = annotation;
        loop {
            match n.kind() {
                "type_annotation" | "generic_type" => match n.named_child(0) {
                    Some(c) => n = c,
                    None => return Val::Unknown,
                },
                "type_identifier" => {
                    let name = self.text(n).to_string();
                    return Val::TypeRef(std::sync::Arc::new(self.lookup(&name)));
                }
                "nested_type_identifier" => {
                    let t = self.text(n).to_string();
                    let mut parts = t.split('.');
                    let first = parts.next().unwrap_or_default().to_string();
                    let mut v = self.lookup(&first);
                    for p in parts {
                        v = Val::Member(std::sync::Arc::new(v), p.to_string());
                    }
                    return Val::TypeRef(std::sync::Arc::new(v));
                }
                // `Repository<User> & IUserRepository` (a TypeORM repository extended with the
                // project's methods): the package's type it names, else the first type.
                "intersection_type" => {
                    let mut cursor = n.walk();
                    let parts: Vec<Node<'t>> = n.named_children(&mut cursor).take(8).collect();
                    let types: Vec<Val> = parts
                        .into_iter()
                        .map(|p| self.type_ref(p))
                        .filter(|t| !matches!(t, Val::Unknown))
                        .collect();
                    let of_package = |t: &Val| {
                        matches!(t, Val::TypeRef(i) if matches!(i.as_ref(),
                            Val::Import { spec, .. } if crate::program::is_package_spec(spec)))
                    };
                    return types
                        .iter()
                        .find(|t| of_package(t))
                        .or(types.first())
                        .cloned()
                        .unwrap_or(Val::Unknown);
                }
                _ => return Val::Unknown,
            }
        }
    }

    /// A field of class `id` (`private app: Application`, `handler = async (req) => ..`): its
    /// value, decorators and injected model.
    fn class_field(&mut self, m: Node<'t>, id: ClassId) {
        let Some(n) = m.field("name").or_else(|| m.field("property")) else {
            return;
        };
        let field = self.property_name(n);
        let mut cursor = m.walk();
        let decorators: Vec<Node<'t>> = m
            .children(&mut cursor)
            .filter(|c| c.kind() == "decorator")
            .collect();
        self.note_generic_field(id, &field, m.field("type"));
        if let Some(model) = self.injected_model(&decorators, m.field("type"))
            && !self.module.classes[id].type_params.contains(&model)
        {
            self.module.classes[id]
                .field_models
                .push((field.clone(), model));
        }
        let prev = self.push_scope(self.cur_fn(), Some(id));
        let v = match (m.field("value"), m.field("type")) {
            // An arrow function or function held by a field is made as the class's methods are:
            // its `this` is the instance, with the fields its constructor sets.
            (Some(v), _) if is_function(v.kind()) => {
                let name = format!("{}.{field}", self.module.classes[id].name);
                Val::Func(self.make_function(v, Some(name), Some(id)))
            }
            (Some(v), _) => self.eval(v),
            (None, Some(t)) => self.type_ref(t),
            _ => Val::Unknown,
        };
        self.cur = prev;
        for d in self.decorators_of(&decorators) {
            self.module.classes[id]
                .field_decorators
                .push((field.clone(), d));
        }
        self.module.classes[id].fields.push((field, v));
    }

    pub(super) fn make_class(&mut self, node: Node<'t>, name: String) -> ClassId {
        if let Some(&c) = self.class_memo.get(&node.id()) {
            return c;
        }
        let id = self.module.classes.len();
        let name = node
            .field("name")
            .map(|n| self.text(n).to_string())
            .unwrap_or(name);
        let type_params = node
            .field("type_parameters")
            .map(|tp| {
                let mut c = tp.walk();
                tp.named_children(&mut c)
                    .filter_map(|p| p.field("name"))
                    .map(|n| self.text(n).to_string())
                    .collect()
            })
            .unwrap_or_default();
        self.module.classes.push(ClassFacts {
            name: name.clone(),
            line: line(node),
            type_params,
            ..Default::default()
        });
        self.class_memo.insert(node.id(), id);
        // Its methods may name the class being made (`new Task().schedule(..)` in a static
        // method): bind the name now rather than reading it as unknown.
        if let Some(Binding::Busy) = self.scopes[self.cur].vars.get(&name) {
            self.set_in(self.cur, &name, Val::Class(id));
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        for child in &children {
            if child.kind() == "class_heritage" {
                let mut c2 = child.walk();
                let parts: Vec<Node<'t>> = child.named_children(&mut c2).collect();
                for part in parts {
                    if part.kind() == "implements_clause" {
                        // `implements UserRepository`: an abstract class (or an interface)
                        // whose methods this class provides.
                        let mut c3 = part.walk();
                        let types: Vec<Node<'t>> = part.named_children(&mut c3).collect();
                        for t in types {
                            if let Val::TypeRef(v) = self.type_ref(t) {
                                self.module.classes[id].implements.push((*v).clone());
                            }
                        }
                        continue;
                    }
                    let expr = match part.kind() {
                        "extends_clause" => part.field("value"),
                        _ => Some(part),
                    };
                    if let Some(e) = expr {
                        let v = mixin_base(self.eval(e));
                        self.koa_router_class(id, &v, node);
                        self.module.classes[id].extends = Some(v);
                    }
                }
            }
        }
        let Some(body) = node.field("body") else {
            return id;
        };
        let mut c3 = body.walk();
        let members: Vec<Node<'t>> = body.named_children(&mut c3).collect();
        if self.module.classes[id].router.is_none() {
            self.table_router_class(id, &members, node);
        }
        // Fields first, so that methods see them; a field holding a function (`registerRoutes =
        // (c) => { this.app.route(..) }`) after the constructor, whose fields (`this.app =
        // express()`) its body reads as a method's does.
        let is_field =
            |m: &Node<'t>| matches!(m.kind(), "public_field_definition" | "field_definition");
        let holds_function = |m: &Node<'t>| m.field("value").is_some_and(|v| is_function(v.kind()));
        for m in members.iter().filter(|m| is_field(m) && !holds_function(m)) {
            self.class_field(*m, id);
        }
        let class_decorators = self.class_decorator_nodes(node);
        let decorators = self.decorators_of(&class_decorators);
        self.module.classes[id].decorators = decorators;
        // The constructor first: the fields it sets (`this.app = express()`) are what the other
        // methods see, whatever order they are written in.
        let ctor = members.iter().find(|m| {
            m.kind() == "method_definition"
                && m.field("name")
                    .is_some_and(|n| self.property_name(n) == "constructor")
        });
        if let Some(ctor) = ctor {
            self.constructor_fields(*ctor, id);
            self.make_function(*ctor, Some(format!("{name}.constructor")), Some(id));
        }
        for m in members.iter().filter(|m| is_field(m) && holds_function(m)) {
            self.class_field(*m, id);
        }
        let mut decorators: Vec<Node<'t>> = Vec::new();
        let mut decorated: Vec<(FnId, Vec<DecoratorFacts>)> = Vec::new();
        for m in &members {
            if m.kind() == "decorator" {
                decorators.push(*m);
                continue;
            }
            if m.kind() == "comment" {
                continue;
            }
            if m.kind() != "method_definition" {
                decorators.clear();
                continue;
            }
            let Some(n) = m.field("name") else {
                continue;
            };
            let method = self.property_name(n);
            let f = self.make_function(*m, Some(format!("{name}.{method}")), Some(id));
            let mut cursor = m.walk();
            if m.children(&mut cursor).any(|c| c.kind() == "get") {
                self.module.classes[id].getters.push(method.clone());
            }
            self.module.classes[id].methods.push((method, f));
            let nodes = std::mem::take(&mut decorators);
            let ds = self.decorators_of(&nodes);
            decorated.push((f, ds));
        }
        self.nest_controller(node, id, &decorated);
        self.module.classes[id].method_decorators = decorated;
        id
    }

    /// The class a constructor parameter typed `Accessor<typeof X>` gives when called: a
    /// generic over one `typeof` of a class, named for what hands out a model (`ModelProxy`,
    /// `Lazy`, `Factory`, `Provider`, `Getter`, `Accessor`). A generic that holds the class
    /// (`Repository<typeof X>`) is not called and says nothing here.
    fn model_accessor(&mut self, annotation: Node<'t>) -> Option<Val> {
        let g = annotation
            .named_child(0)
            .filter(|g| g.kind() == "generic_type")?;
        let name = g.named_child(0).map(|n| self.text(n).to_string())?;
        let hands_out = crate::facts::key::words::split(&name)
            .last()
            .is_some_and(|w| {
                matches!(
                    w.as_str(),
                    "proxy" | "lazy" | "factory" | "provider" | "getter" | "accessor" | "thunk"
                )
            });
        if !hands_out {
            return None;
        }
        let args = g.field("type_arguments")?;
        let mut c = args.walk();
        let list: Vec<Node<'t>> = args.named_children(&mut c).collect();
        let [q] = list.as_slice() else {
            return None;
        };
        let x = (q.kind() == "type_query")
            .then(|| q.named_child(0))
            .flatten()
            .filter(|x| x.kind() == "identifier")?;
        Some(self.lookup(self.text(x)))
    }

    /// A field declared with a type that names one of its class's type parameters
    /// (`protected model: Model<T_DBModel>`): what it holds is each subclass's choice.
    fn note_generic_field(&mut self, class: ClassId, field: &str, ty: Option<Node<'t>>) {
        let Some(ty) = ty else { return };
        let text = self.text(ty);
        let class = &mut self.module.classes[class];
        if text
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .any(|w| class.type_params.iter().any(|p| p == w))
            && !class.generic_fields.iter().any(|f| f == field)
        {
            class.generic_fields.push(field.to_string());
        }
    }

    /// TypeScript parameter properties: `constructor(private readonly orders: OrdersService)`.
    fn constructor_fields(&mut self, ctor: Node<'t>, class: ClassId) {
        let Some(params) = ctor.field("parameters") else {
            return;
        };
        let mut cursor = params.walk();
        let list: Vec<Node<'t>> = params.named_children(&mut cursor).collect();
        for (index, p) in list.into_iter().enumerate() {
            let mut c2 = p.walk();
            let is_property = p.children(&mut c2).any(|c| {
                matches!(
                    c.kind(),
                    "accessibility_modifier" | "readonly" | "override_modifier"
                )
            });
            if !is_property {
                continue;
            }
            let (Some(pat), Some(t)) = (p.field("pattern"), p.field("type")) else {
                continue;
            };
            let field = self.text(pat).to_string();
            let mut c3 = p.walk();
            let decorators: Vec<Node<'t>> = p
                .children(&mut c3)
                .filter(|c| c.kind() == "decorator")
                .collect();
            self.note_generic_field(class, &field, Some(t));
            if let Some(model) = self.injected_model(&decorators, Some(t))
                && !self.module.classes[class].type_params.contains(&model)
            {
                self.module.classes[class]
                    .field_models
                    .push((field.clone(), model));
            }
            self.module.classes[class]
                .ctor_params
                .push((field.clone(), index));
            // `@Inject(ApiKey.name) private readonly apiKeyModel: typeof ApiKey`: the class
            // itself (its static `query()`, `create()`), not an instance of it.
            let v = match t.named_child(0).filter(|q| q.kind() == "type_query") {
                Some(q) => match q.named_child(0).filter(|x| x.kind() == "identifier") {
                    Some(x) => self.lookup(self.text(x)),
                    None => Val::Unknown,
                },
                None => match self.model_accessor(t) {
                    Some(model) => {
                        // `private paymentReceived: TenantModelProxy<typeof PaymentReceived>`
                        // (`type TenantModelProxy<T> = () => T`), called as
                        // `this.paymentReceived().query()`: an accessor whose call gives the
                        // class.
                        let f = self.module.functions.len();
                        let name = format!("{}.{field}", self.module.classes[class].name);
                        self.module.functions.push(FnFacts {
                            name,
                            line: line(p),
                            class: Some(class),
                            returns: vec![model],
                            ..FnFacts::default()
                        });
                        self.model_accessors.push(f);
                        Val::Func(f)
                    }
                    None => self.type_ref(t),
                },
            };
            self.module.classes[class].fields.push((field, v));
        }
    }

    /// The entity an injected ORM repository or model serves, from its decorator
    /// (`@InjectRepository(User)`, `@InjectModel(User.name)`, `@InjectModel('User')`) or its
    /// declared type (`Repository<User>`, `Model<UserDocument>`, `typeof User`).
    fn injected_model(&self, decorators: &[Node<'t>], ty: Option<Node<'t>>) -> Option<String> {
        for d in decorators {
            let Some(call) = d.named_child(0).filter(|c| c.kind() == "call_expression") else {
                continue;
            };
            let name = call
                .field("function")
                .map(|f| self.text(f))
                .unwrap_or_default();
            if !matches!(
                name,
                "InjectRepository" | "InjectModel" | "InjectEntityModel" | "InjectEntityRepository"
            ) {
                continue;
            }
            let arg = call.field("arguments").and_then(|a| a.named_child(0));
            let model = match arg {
                Some(a) if a.kind() == "identifier" => Some(self.text(a).to_string()),
                // `User.name`: the class's name.
                Some(a) if a.kind() == "member_expression" => a
                    .field("object")
                    .filter(|o| o.kind() == "identifier")
                    .map(|o| self.text(o).to_string()),
                Some(a) if a.kind() == "string" => Some(self.string_value(a)),
                _ => None,
            };
            if let Some(m) = model.filter(|m| !m.is_empty()) {
                return Some(m);
            }
        }
        let mut n = ty?;
        if n.kind() == "type_annotation" {
            n = n.named_child(0)?;
        }
        let entity = |this: &Self, t: Node<'t>| -> Option<String> {
            match t.kind() {
                "type_identifier" => Some(this.text(t).to_string()),
                "type_query" => t
                    .named_child(0)
                    .filter(|c| c.kind() == "identifier")
                    .map(|c| this.text(c).to_string()),
                _ => None,
            }
        };
        match n.kind() {
            "type_query" => entity(self, n),
            "generic_type" => {
                let name = n.field("name").map(|x| self.text(x))?;
                let wrapper = name.rsplit('.').next().unwrap_or(name);
                if !matches!(
                    wrapper,
                    "Repository"
                        | "MongoRepository"
                        | "TreeRepository"
                        | "EntityRepository"
                        | "Model"
                        | "ModelCtor"
                        | "ModelStatic"
                        | "ReturnModelType"
                ) {
                    return None;
                }
                let args = n.field("type_arguments")?;
                let first = args.named_child(0)?;
                let model = entity(self, first)?;
                // Mongoose's `Model<UserDocument>`: the document type of `User`.
                Some(match model.strip_suffix("Document") {
                    Some(base) if !base.is_empty() => base.to_string(),
                    _ => model,
                })
            }
            _ => None,
        }
    }

    pub(super) fn property_name(&self, n: Node) -> String {
        match n.kind() {
            "string" => self.string_value(n),
            "computed_property_name" => n
                .named_child(0)
                .map(|c| self.string_value(c))
                .unwrap_or_default(),
            _ => self.text(n).to_string(),
        }
    }

    // ----- expressions -----

    pub(super) fn eval(&mut self, node: Node<'t>) -> Val {
        if self.depth > MAX_DEPTH {
            self.too_deep.get_or_insert(line(node));
            return Val::Unknown;
        }
        self.depth += 1;
        let v = self.eval_inner(node);
        self.depth -= 1;
        v
    }

    fn eval_inner(&mut self, node: Node<'t>) -> Val {
        match node.kind() {
            "identifier" | "shorthand_property_identifier" => {
                let name = self.text(node).to_string();
                let v = self.lookup(&name);
                // (a copy of a row's list, grown: `images.push(url)` after `[...row.images]`)
                match &v {
                    Val::Arr(items) if items.len() == 1 => self.read_grown(v),
                    _ => v,
                }
            }
            "this" => Val::This(self.scopes[self.cur].this_class),
            "string" => Val::Str(self.string_value(node)),
            "template_string" => self.eval_template(node),
            // `nullObject as never as DBServiceType`: a value that says nothing of itself (a
            // placeholder replaced later) is what its cast names.
            "as_expression" => {
                let v = match node.named_child(0) {
                    Some(c) => self.eval(c),
                    None => Val::Unknown,
                };
                // (not `{} as T`: an object filled in afterwards is what it is filled with)
                let placeholder = match &v {
                    Val::Unknown => true,
                    Val::New(ctor, _) => matches!(ctor.as_ref(), Val::Global(g) if g == "Proxy"),
                    _ => false,
                };
                let cast = node
                    .named_child(1)
                    .filter(|t| {
                        matches!(
                            t.kind(),
                            "type_identifier" | "nested_type_identifier" | "generic_type"
                        )
                    })
                    .map(|t| self.type_ref(t));
                match cast {
                    Some(t @ Val::TypeRef(_)) if placeholder => t,
                    _ => v,
                }
            }
            "parenthesized_expression"
            | "await_expression"
            | "non_null_expression"
            | "satisfies_expression"
            | "spread_element" => match node.named_child(0) {
                Some(c) => self.eval(c),
                None => Val::Unknown,
            },
            // `yield* ProjectRepository` (see `YIELDED`); a plain `yield` gives what the caller
            // sends back, not known.
            "yield_expression" => {
                let delegates = (0..node.child_count())
                    .filter_map(|i| node.child(i))
                    .any(|c| c.kind() == "*");
                match node.named_child(0) {
                    Some(c) if delegates => {
                        let inner = self.eval(c);
                        Val::Call(
                            std::sync::Arc::new(Val::Global(crate::program::YIELDED.into())),
                            vec![inner],
                        )
                    }
                    Some(c) => {
                        self.eval(c);
                        Val::Unknown
                    }
                    None => Val::Unknown,
                }
            }
            // `ConfigService<AllConfig>`: the value, its type arguments aside.
            "instantiation_expression" => {
                match node.field("function").or_else(|| node.named_child(0)) {
                    Some(c) => self.eval(c),
                    None => Val::Unknown,
                }
            }
            "type_assertion" => {
                match node.named_child((node.named_child_count().saturating_sub(1)) as u32) {
                    Some(c) => self.eval(c),
                    None => Val::Unknown,
                }
            }
            "array" => {
                let mut cursor = node.walk();
                let items: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                let mut out = Vec::new();
                let mut lists = Vec::new();
                for item in items.into_iter().filter(|i| i.kind() != "comment") {
                    let spread = item.kind() == "spread_element";
                    match self.eval(item) {
                        Val::Arr(inner) if spread => out.extend(inner),
                        v => {
                            if spread && (crate::program::row_field(&v).is_some() || is_arith(&v)) {
                                lists.push(out.len());
                            }
                            out.push(v)
                        }
                    }
                }
                // `[...issue.comments, comment]`: a row's list with more in it, a value made
                // from the one read (see `ARITH`; and [`Evaluator::grows_list`]).
                let added: Vec<Val> = out
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !lists.contains(i))
                    .map(|(_, v)| v.clone())
                    .collect();
                // (A copy alone, `[...row.images]`, is an array of the list: it grows when
                // pushed to.)
                if lists.iter().any(|&i| {
                    is_arith(&out[i]) && !added.is_empty() || self.grows_list(&out[i], &added)
                }) {
                    return crate::program::arith(out).pruned(MAX_VAL_NODES);
                }
                Val::Arr(out).pruned(MAX_VAL_NODES)
            }
            // `!user.notificationsEnabled`: a row's flag turned over, a value made from the one
            // read (see `ARITH`); a repeat turns it back.
            "unary_expression"
                if node.field("operator").is_some_and(|o| self.text(o) == "!")
                    && let Some(arg) = node.field("argument") =>
            {
                let v = self.eval(arg);
                match crate::program::row_field(&v) {
                    Some(_) => crate::program::arith(vec![v]),
                    None => Val::Unknown,
                }
            }
            "object" => self.eval_object(node).pruned(MAX_VAL_NODES),
            k if is_function(k) => {
                let hint = self.name_hint.take();
                Val::Func(self.make_function(node, hint, None))
            }
            "class" => {
                let hint = self.name_hint.take().unwrap_or_else(|| "anonymous".into());
                Val::Class(self.make_class(node, hint))
            }
            "call_expression" => self.eval_call(node).val,
            "new_expression" => self.eval_new(node).val,
            "member_expression" | "subscript_expression" => {
                let v = self.chain(node).val;
                self.read_grown(v)
            }
            "binary_expression" => {
                let op = node.field("operator").map(|o| self.text(o)).unwrap_or("");
                let left = node.field("left");
                // `found?._id || (await create(..))._id`, `row ?? (await insert(..))`: the
                // right side runs only when the lookup on the left found nothing (a
                // get-or-create, as `if (!row) { create }`).
                let missed = left.filter(|_| matches!(op, "||" | "??")).and_then(|n| {
                    let (model, _) = self.is_lookup_guard(n)?;
                    let (when_true, when_false) = self.lookup_polarity(n, 0);
                    let missed = match when_false {
                        Some(found) => !found,
                        None => when_true != Some(false),
                    };
                    missed.then_some(model)
                });
                let l = left.map(|n| self.eval(n)).unwrap_or(Val::Unknown);
                let saved_guard = self.guarded.clone();
                if missed.is_some() {
                    self.guarded = missed;
                }
                let r = node
                    .field("right")
                    .map(|n| self.eval(n))
                    .unwrap_or(Val::Unknown);
                self.guarded = saved_guard;
                let env_read = left.filter(|n| self.reads_environment(*n));
                match (op, l, r) {
                    // String concatenation (`'/api' + path`, `base + '/x'`): what a template
                    // literal would give.
                    ("+", l, r) if concatenable(&l) && concatenable(&r) => concat(vec![l, r]),
                    // `'/v0/' + segments.join('/')`: a string whose start is known, the rest
                    // not (a string on the left makes the whole a string).
                    ("+", l @ Val::Str(_), _) => concat(vec![l, Val::Unknown]),
                    // `wallet.balance + Number(amount)`: a row's field changed by a value (see
                    // `ARITH`)
                    ("+" | "-", l, r)
                        if crate::program::row_field(&l).is_some()
                            || crate::program::row_field(&r).is_some() =>
                    {
                        crate::program::arith(vec![l, r])
                    }
                    // `process.env.API_PREFIX || '/api'`: the code's default, and where it comes
                    // from.
                    ("||" | "??", _, r) if env_read.is_some() && r.as_str().is_some() => {
                        Val::EnvDefault {
                            var: env_read.map(|n| self.short_text(n)).unwrap_or_default(),
                            value: std::sync::Arc::new(r.plain().clone()),
                        }
                    }
                    // `'' || '/'` on an environment read's empty default: the code's fallback.
                    ("||", Val::EnvDefault { var, value }, r)
                        if matches!(value.as_ref(), Val::Str(s) if s.is_empty())
                            && r.as_str().is_some() =>
                    {
                        Val::EnvDefault {
                            var,
                            value: std::sync::Arc::new(r.plain().clone()),
                        }
                    }
                    ("||" | "??", Val::Unknown, r) => r,
                    // `globalThis.prisma || getClient()`, `process.env.X ?? 'x'`: the left is
                    // run-time state the code cannot show; the right is the code's own value.
                    ("||" | "??", l, r) if rooted_in_global(&l) && !matches!(r, Val::Unknown) => r,
                    // `config.server.basePath || ''`: the value stays what it is (the linker may
                    // read it); the literal is noted as the code's fallback for when it cannot.
                    ("||" | "??", l, Val::Str(lit)) if may_fall_back(&l) => {
                        if self.module.fallbacks.len() < MAX_FALLBACKS
                            && self.module.fallback(&l).is_none()
                        {
                            self.module.fallbacks.push(Fallback {
                                value: l.clone(),
                                literal: lit,
                                expr: self.short_text(node),
                            });
                        }
                        l
                    }
                    // `body.id || uuidv4()`: the value, or one made per call (see `EITHER`)
                    ("||" | "??", l, r)
                        if !matches!(l, Val::Unknown) && crate::program::fresh_random(&r) =>
                    {
                        Val::Call(
                            std::sync::Arc::new(Val::Global(crate::program::EITHER.into())),
                            vec![l, r],
                        )
                    }
                    // `command.subscriber ?? (await this.fetchSubscriber(..))`: the row handed
                    // in, or else one read now; what the code tests afterwards is the read (an
                    // awaited right side is I/O, not a configured default).
                    ("||" | "??", _, r) if awaited(node.field("right")) => r,
                    ("||" | "??", l, _) => l,
                    _ => Val::Unknown,
                }
            }
            // `cond ? await X.findOne(..) : null`: the lookup's row, or nothing.
            "ternary_expression" => {
                let cond = node.field("condition");
                let tested_value = cond.map(|c| self.eval(c));
                let branch = |name| node.child_by_field_name(name);
                let (Some(yes), Some(no)) = (branch("consequence"), branch("alternative")) else {
                    return Val::Unknown;
                };
                let nothing = |this: &Self, n: Node<'t>| {
                    matches!(n.kind(), "null" | "undefined") || this.text(n) == "undefined"
                };
                let (a, b) = (self.eval(yes), self.eval(no));
                // a condition the code shows (a string): the branch it picks
                if let Some(Val::Str(t)) = &tested_value {
                    return if t.is_empty() { b } else { a };
                }
                // `isDev ? '' : '/api/v2'`, `process.env.NODE_ENV === 'production' ? a : b`: the
                // service audited is the one deployed, in production.
                if let Some(in_production) = cond.and_then(|c| self.production_test(c, 0)) {
                    return if in_production { a } else { b };
                }
                // `process.env.BASE ? process.env.BASE : '/x'`: the environment's value, or the
                // code's default.
                if let Some(c) = cond
                    && self.reads_environment(yes)
                    && self.short_text(c) == self.short_text(yes)
                    && b.as_str().is_some()
                {
                    return Val::EnvDefault {
                        var: self.short_text(yes),
                        value: std::sync::Arc::new(b.plain().clone()),
                    };
                }
                // `options.url && options.url !== '' ? options.url : options.uri`: the value the
                // condition tests, when it is set, as `options.url || options.uri` is.
                if let Some(c) = cond
                    && !matches!(a, Val::Unknown)
                    && {
                        let (tested, shown) = (self.short_text(c), self.short_text(yes));
                        tested == shown || tested.starts_with(&format!("{shown} &&"))
                    }
                {
                    return a;
                }
                // (`cond ? [plugin(..)] : []`: an empty list is nothing to add; `...(cond ? {
                // stripe: .. } : {})`, an empty object nothing to spread)
                let empty = |n: Node<'t>| {
                    matches!(n.kind(), "array" | "object") && n.named_child_count() == 0
                };
                if nothing(self, no) || empty(no) {
                    a
                } else if nothing(self, yes) || empty(yes) {
                    b
                } else {
                    // `config.pathPrefix ? `/${config.pathPrefix}` : ''`: the value when it is
                    // set, else the literal; the code cannot show which, so the literal is its
                    // default (like an environment read's).
                    let string_like = |v: &Val| matches!(v, Val::Template(_)) || may_fall_back(v);
                    let (lit, shown) = match (&a, &b) {
                        (v, Val::Str(lit)) if string_like(v) => (lit.clone(), yes),
                        (Val::Str(lit), v) if string_like(v) => (lit.clone(), no),
                        // `cond ? make() : make()`: either way, the same value.
                        _ if a == b => return a,
                        // `isDemo ? t.procedure.use(readOnly) : t.procedure`: a value, or the
                        // same value refined by calls on it: what both are, the value.
                        _ if refines(&a, &b) => return b,
                        _ if refines(&b, &a) => return a,
                        // `extra ? { ...route, middleware } : route`: an object, or the same
                        // object with fields added: what both hold, the object.
                        _ if extends_object(&a, &b) => return b,
                        _ if extends_object(&b, &a) => return a,
                        // `isBuild ? { db: undefined as never } : make()`: a placeholder on
                        // one side (nothing in it known) and a value made on the other: what
                        // runs is the value, when anything does.
                        _ if placeholder(&a) && made(&b) => return b,
                        _ if placeholder(&b) && made(&a) => return a,
                        _ => return Val::Unknown,
                    };
                    let Some(c) = cond else { return Val::Unknown };
                    let tested = self.short_text(c);
                    if tested.is_empty() || !self.text(shown).contains(tested.as_str()) {
                        return Val::Unknown;
                    }
                    Val::EnvDefault {
                        var: self.short_text(node),
                        value: std::sync::Arc::new(Val::Str(lit)),
                    }
                }
            }
            "assignment_expression" => self.eval_assignment(node),
            // `global.__clients ??= make()` (or `||=`): the value already there, or the one
            // made now, as `global.__clients ?? make()` reads; run-time state the code cannot
            // show leaves the code's own value.
            "augmented_assignment_expression"
                if matches!(
                    node.field("operator").map(|o| self.text(o)),
                    Some("??=" | "||=")
                ) =>
            {
                let l = node
                    .field("left")
                    .map(|n| self.eval(n))
                    .unwrap_or(Val::Unknown);
                let r = node
                    .field("right")
                    .map(|n| self.eval(n))
                    .unwrap_or(Val::Unknown);
                match l {
                    Val::Unknown => r,
                    l if rooted_in_global(&l) && !matches!(r, Val::Unknown) => r,
                    l => l,
                }
            }
            // `route += '/:instanceName'` on a variable: the string it held, extended (what
            // `route = route + ..` gives); anything else added leaves a value not known.
            "augmented_assignment_expression"
                if node.field("operator").map(|o| self.text(o)) == Some("+=")
                    && node.field("left").is_some_and(|l| l.kind() == "identifier") =>
            {
                let Some(left) = node.field("left") else {
                    return Val::Unknown;
                };
                let name = self.text(left).to_string();
                let old = self.eval(left);
                let r = node
                    .field("right")
                    .map(|n| self.eval(n))
                    .unwrap_or(Val::Unknown);
                let v = match (old.clone(), r) {
                    (l, r) if concatenable(&l) && concatenable(&r) => concat(vec![l, r]),
                    (l @ Val::Str(_), _) => concat(vec![l, Val::Unknown]),
                    _ => Val::Unknown,
                };
                // (under a test of a parameter: one value or the other, as callers decide)
                let v = match self.param_condition(node) {
                    Some((param, holds)) => Val::Call(
                        std::sync::Arc::new(Val::Global(crate::program::WHEN.into())),
                        if holds {
                            vec![param, v, old]
                        } else {
                            vec![param, old, v]
                        },
                    ),
                    None => v,
                };
                if let Some(i) = self.find(&name) {
                    self.set_in(i, &name, v.clone());
                    self.assigned.push((i, name, v.clone()));
                }
                v
            }
            // `onSubmit={() => ..}`: the handler is named after its event.
            "jsx_attribute" => {
                let name = node.named_child(0).map(|n| self.text(n).to_string());
                if let (Some(n), Some(value)) = (name, node.named_child(1)) {
                    if n.starts_with("on") {
                        self.name_hint = Some(n);
                    }
                    self.eval(value);
                    self.name_hint = None;
                }
                Val::Unknown
            }
            "sequence_expression" => {
                let mut last = Val::Unknown;
                let mut cursor = node.walk();
                let items: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
                for c in items {
                    last = self.eval(c);
                }
                last
            }
            "true" => Val::Bool(true),
            "false" => Val::Bool(false),
            "number" | "null" | "undefined" | "regex" | "comment" => Val::Unknown,
            k if is_statement(k) => {
                self.walk(node);
                Val::Unknown
            }
            _ => {
                self.walk_children_eval(node);
                Val::Unknown
            }
        }
    }

    /// The parameter of the function under way that the branch holding `node` tests, and
    /// whether the branch runs when it is truthy: `param ? (route += x) : null`, `if (!param) {
    /// route += x }`. None under any other condition, or none.
    fn param_condition(&mut self, node: Node<'t>) -> Option<(Val, bool)> {
        let mut child = node;
        let mut parent = node.parent()?;
        for _ in 0..6 {
            match parent.kind() {
                "parenthesized_expression"
                | "expression_statement"
                | "statement_block"
                | "else_clause" => {}
                "ternary_expression" | "if_statement" => break,
                _ => return None,
            }
            // (in a block, the statement is in the branch whatever else the block holds)
            child = parent;
            parent = parent.parent()?;
        }
        let consequence = parent.field("consequence").map(|c| c.id());
        let alternative = parent.field("alternative").map(|c| c.id());
        let holds = if consequence == Some(child.id()) {
            true
        } else if alternative == Some(child.id()) {
            false
        } else {
            return None;
        };
        let mut cond = parent.field("condition")?;
        let mut negated = false;
        loop {
            match cond.kind() {
                "parenthesized_expression" => cond = cond.named_child(0)?,
                "unary_expression" if cond.field("operator").map(|o| self.text(o)) == Some("!") => {
                    negated = !negated;
                    cond = cond.field("argument")?;
                }
                _ => break,
            }
        }
        if cond.kind() != "identifier" {
            return None;
        }
        match self.lookup(self.text(cond)) {
            p @ Val::Param(f, _) if f == self.cur_fn() => Some((p, holds != negated)),
            _ => None,
        }
    }

    /// A read of the environment: `process.env.X`, `import.meta.env.X`, `Bun.env.X`,
    /// `Deno.env.get('X')`, or an `||` / `??` of such reads.
    fn reads_environment(&self, n: Node) -> bool {
        match n.kind() {
            "parenthesized_expression" => {
                n.named_child(0).is_some_and(|i| self.reads_environment(i))
            }
            "binary_expression" => ["left", "right"].iter().all(|f| {
                n.child_by_field_name(f)
                    .is_some_and(|side| self.reads_environment(side))
            }),
            "member_expression" | "subscript_expression" | "call_expression" => {
                let t = self.short_text(n);
                ["process.env", "import.meta.env", "Bun.env", "Deno.env.get("]
                    .iter()
                    .any(|p| t.starts_with(p))
                    || self.env_helper_read(n)
            }
            _ => false,
        }
    }

    /// `env('API_BASE_PATH')`, `getEnv('PORT')`: a project's helper for reading a variable of the
    /// environment, called with the variable's name (upper case).
    fn env_helper_read(&self, n: Node) -> bool {
        if n.kind() != "call_expression" {
            return false;
        }
        let Some(f) = n.field("function") else {
            return false;
        };
        if !matches!(self.text(f), "env" | "getEnv" | "getEnvVar" | "readEnv") {
            return false;
        }
        let Some(args) = n.field("arguments") else {
            return false;
        };
        let mut cursor = args.walk();
        let list: Vec<Node> = args.named_children(&mut cursor).collect();
        let [only] = list.as_slice() else {
            return false;
        };
        if only.kind() != "string" {
            return false;
        }
        let name = self.text(*only).trim_matches(['\'', '"']);
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    }

    fn eval_template(&mut self, node: Node<'t>) -> Val {
        let mut parts = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        let mut pos = node.start_byte() + 1;
        for c in children {
            if c.kind() == "template_substitution" {
                parts.push(Val::Str(self.src[pos..c.start_byte()].to_string()));
                parts.push(
                    c.named_child(0)
                        .map(|e| self.eval(e))
                        .unwrap_or(Val::Unknown),
                );
                pos = c.end_byte();
            }
        }
        let end = node.end_byte().saturating_sub(1).max(pos);
        parts.push(Val::Str(self.src[pos..end].to_string()));
        concat(parts)
    }

    fn eval_object(&mut self, node: Node<'t>) -> Val {
        let mut fields = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        for c in children {
            match c.kind() {
                "pair" => {
                    let (Some(k), Some(v)) = (c.field("key"), c.field("value")) else {
                        continue;
                    };
                    let key = self.property_name(k);
                    self.name_hint = Some(key.clone());
                    let v = self.eval(v);
                    self.name_hint = None;
                    fields.push((key, v));
                }
                "shorthand_property_identifier" => {
                    let key = self.text(c).to_string();
                    let v = self.eval(c);
                    fields.push((key, v));
                }
                "method_definition" => {
                    if let Some(n) = c.field("name") {
                        let key = self.property_name(n);
                        let f = self.make_function(c, Some(key.clone()), None);
                        fields.push((key, Val::Func(f)));
                    }
                }
                "spread_element" => match self.eval(c) {
                    Val::Obj(inner) => {
                        // `{ ...wrapAll({ fns }) }` of a function in view: what it returned,
                        // and the call itself, for what it was given.
                        if let Some(call) =
                            c.named_child(0).filter(|n| n.kind() == "call_expression")
                            && let Some(cs) = self.module.functions[self.cur_fn()]
                                .calls
                                .iter()
                                .rev()
                                .find(|cs| cs.group == call.id())
                        {
                            let v =
                                Val::Call(std::sync::Arc::new(cs.callee.clone()), cs.args.clone());
                            fields.push((crate::program::SPREAD.into(), v));
                        }
                        fields.extend(inner)
                    }
                    v @ Val::Import { .. } => fields.push((crate::program::SPREAD.into(), v)),
                    // A value spread into the literal: `{ ...found, isPaused }` with `found` a
                    // looked-up row (a save of it writes that row back); `{ ...wrapAll({ fns })
                    // }`, what a project function makes of the functions it is given; `{
                    // ...fns }` of a parameter.
                    v @ (Val::Param(..) | Val::Member(..) | Val::Call(..)) => {
                        fields.push((crate::program::SPREAD.into(), v));
                    }
                    _ => {}
                },
                _ => {
                    self.eval(c);
                }
            }
        }
        Val::Obj(fields)
    }

    /// `url.pathname.replace('/api', '')` (or the prefix as a regular expression anchored at the
    /// start, `/^\/api/`): the prefix the expression strips from a request path.
    fn stripped(&self, right: Node<'t>) -> Option<String> {
        if right.kind() != "call_expression" {
            return None;
        }
        let f = right.field("function")?;
        let object = f.field("object")?;
        if self.text(f.field("property")?) != "replace" || !self.text(object).ends_with("pathname")
        {
            return None;
        }
        let args = right.field("arguments")?;
        let mut cursor = args.walk();
        let parts: Vec<Node> = args.named_children(&mut cursor).collect();
        let [pattern, with] = parts.as_slice() else {
            return None;
        };
        let with = self.text(*with);
        if !matches!(with, "''" | "\"\"" | "``") {
            return None;
        }
        let text = self.text(*pattern);
        let prefix = match pattern.kind() {
            "string" => text.trim_matches(|c| c == '\'' || c == '"').to_string(),
            "regex" => text
                .strip_prefix("/^")?
                .rsplit_once('/')?
                .0
                .replace("\\/", "/"),
            _ => return None,
        };
        (prefix.starts_with('/')
            && prefix.len() > 1
            && prefix[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/-_.".contains(c)))
        .then_some(prefix)
    }

    /// Whether adding `added` to `list`, a field of a row the code read, grows it: the list
    /// is the row's, something is added, and the code did not test the list for it first.
    fn grows_list(&self, list: &Val, added: &[Val]) -> bool {
        let here = self.top_fn();
        crate::program::row_field(list).is_some()
            && !added.is_empty()
            && !self.tested.iter().any(|(g, x)| *g == here && x == list)
    }

    /// The function of the outermost scope below the module's around the code evaluated: a
    /// callback's handler.
    fn top_fn(&self) -> FnId {
        let mut s = self.cur;
        for _ in 0..self.scopes.len() {
            match self.scopes[s].parent {
                Some(p) if self.scopes[p].owner != 0 => s = p,
                _ => break,
            }
        }
        self.scopes[s].owner
    }

    /// Notes that `list` (or a copy of it) grew, with whether all it gained are loaded rows.
    fn mark_grown(&mut self, list: Val, rows_only: bool) {
        let here = self.top_fn();
        let mine = self.grown.iter().filter(|(g, _, _)| *g == here);
        if mine.clone().count() < MAX_GROWN && !mine.into_iter().any(|(_, x, _)| *x == list) {
            self.grown.push((here, list, rows_only));
        }
    }

    /// What reads a grown list (see [`Evaluator::grown`]) holds a value made from the one read.
    fn read_grown(&self, v: Val) -> Val {
        let here = self.top_fn();
        match (self.grown.iter().any(|(g, x, _)| *g == here && *x == v), v) {
            // (a copy stands for the list it copies)
            (true, Val::Arr(items)) => crate::program::arith(items),
            (true, v) => crate::program::arith(vec![v]),
            (false, v) => v,
        }
    }

    fn mark_tested(&mut self, list: Val) {
        let here = self.top_fn();
        let mine = self.tested.iter().filter(|(g, _)| *g == here);
        if mine.clone().count() < MAX_GROWN && !mine.into_iter().any(|(_, x)| *x == list) {
            self.tested.push((here, list));
        }
    }

    fn eval_assignment(&mut self, node: Node<'t>) -> Val {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            return Val::Unknown;
        };
        let left_text = self.text(left).to_string();
        // `module.exports = function legacyRoutes(app) {..}`: the function keeps its own name.
        let named_function = is_function(right.kind()) && right.field("name").is_some();
        self.name_hint = (!(named_function && left_text.ends_with("exports")))
            .then(|| left_text.rsplit('.').next().unwrap_or("").to_string());
        let v = self.eval(right);
        self.name_hint = None;
        self.key_assignment(left, right, node);
        if left_text.ends_with(".pathname")
            && let Some(prefix) = self.stripped(right)
        {
            self.stripped_prefix = Some((self.cur_fn(), prefix));
        }
        // `issue.comments = [...issue.comments, comment]`, `row.archived = !row.archived`: the
        // row's field made from itself; `row.devices = row.devices.filter(..)`, any other value:
        // replaced, so what is added after replaces too.
        if left.kind() == "member_expression" {
            let target = self.chain(left).val;
            if crate::program::row_field(&target).is_some() {
                match &v {
                    Val::Call(_, parts) if is_arith(&v) && parts.contains(&target) => {
                        // (a list grown by loaded rows only, which a join table keeps once)
                        let others: Vec<&Val> = parts.iter().filter(|p| **p != target).collect();
                        let rows_only = !others.is_empty()
                            && others.iter().all(|p| crate::program::loads_row(p));
                        self.mark_grown(target, rows_only);
                    }
                    _ => self.mark_tested(target),
                }
            }
        }
        match left.kind() {
            "member_expression" => {
                let object = left.field("object");
                let prop = left
                    .field("property")
                    .map(|p| self.text(p).to_string())
                    .unwrap_or_default();
                let via_alias = object
                    .filter(|o| o.kind() == "identifier")
                    .is_some_and(|o| self.is_exports_alias(self.text(o)));
                if left_text == "module.exports" {
                    self.module.cjs_whole = Some(v.clone());
                    self.module
                        .export_lines
                        .push(("default".into(), line(node)));
                } else if via_alias
                    || left_text.starts_with("module.exports.")
                    || left_text.starts_with("exports.")
                {
                    // An alias of the exports object is also read as one in this module
                    // (`helpers.tryRoute(..)` beside `helpers.tryRoute = ..`).
                    if via_alias {
                        self.write_field(object, &prop, &v);
                    }
                    self.module.export_lines.push((prop.clone(), line(node)));
                    self.module.exports.push((prop, v.clone()));
                } else if object.is_some_and(|o| o.kind() == "this") {
                    if let Some(c) = self.scopes[self.cur].this_class {
                        self.module.classes[c].fields.push((prop, v.clone()));
                    }
                } else {
                    self.eval(left);
                    self.write_field(object, &prop, &v);
                    // `schema.statics.findByEmail = async function (..) {..}`
                    if let Some(o) = object.filter(|o| o.kind() == "member_expression")
                        && o.field("property")
                            .is_some_and(|p| self.text(p) == "statics")
                        && let Some(holder) = o.field("object")
                        && matches!(v, Val::Func(_))
                        && self.module.statics.len() < crate::program::MAX_FALLBACKS
                    {
                        let holder = self.eval(holder);
                        self.module.statics.push((holder, prop.clone(), v.clone()));
                    }
                    match (
                        object
                            .filter(|o| o.kind() == "identifier")
                            .map(|o| self.eval(o)),
                        &v,
                    ) {
                        (Some(Val::Router(r)), Val::Func(f)) => self.route_helper(r, prop, *f),
                        // `request.post = (options) => call(options, 'POST')`
                        (Some(Val::Func(g)), v) if !matches!(v, Val::Unknown) => {
                            self.module.functions[g]
                                .members
                                .get_or_insert_default()
                                .push((prop, v.clone()));
                        }
                        _ => {}
                    }
                }
            }
            "identifier" => {
                // `export let Config: Configuration;` set in a constructor from what it is handed
                // (`Config = config ?? GetConfig()`): a value nothing here says more about than
                // the declared type does not replace it.
                // (also declared further down the module, not yet read)
                let declared = |b: Option<&Binding<'t>>| {
                    let typed = match b {
                        Some(Binding::Val(Val::TypeRef(_))) => true,
                        Some(Binding::Lazy(d)) => {
                            d.kind() == "variable_declarator"
                                && d.field("value").is_none()
                                && d.field("type").is_some()
                        }
                        _ => false,
                    };
                    typed && matches!(v, Val::Param(..) | Val::Unknown)
                };
                // (a module's variable: a local one keeps what it is given, for the links a
                // parameter makes)
                if let Some(i) = self.find(&left_text)
                    && !(i == 0 && declared(self.scopes[i].vars.get(&left_text)))
                {
                    self.set_in(i, &left_text, v.clone());
                    self.assigned.push((i, left_text.clone(), v.clone()));
                }
            }
            _ => {}
        }
        v
    }

    /// After `if (c) { x = a } else { x = b }`: a variable both branches assign, declared before
    /// the `if` (its scope below `scopes`), holds either value ([`crate::program::EITHER`] of the
    /// first branch's and the second's), not only the one the second branch wrote last.
    /// `assigned[mark..split]` are the first branch's assignments, `assigned[split..]` the
    /// second's.
    pub(super) fn join_branches(&mut self, scopes: usize, mark: usize, split: usize) {
        let last = |list: &[(usize, String, Val)], i: usize, name: &str| {
            list.iter()
                .rev()
                .find(|(j, n, _)| *j == i && n == name)
                .map(|(_, _, v)| v.clone())
        };
        // Bounded work: long `else if` chains nest their branches, each rescanned once per level.
        if self.assigned.len() - mark > MAX_JOINED {
            return;
        }
        let mut joined: Vec<(usize, String, Val)> = Vec::new();
        for (i, name, _) in &self.assigned[split..] {
            if *i >= scopes || joined.iter().any(|(j, n, _)| j == i && n == name) {
                continue;
            }
            let (Some(first), Some(second)) = (
                last(&self.assigned[mark..split], *i, name),
                last(&self.assigned[split..], *i, name),
            ) else {
                continue;
            };
            if first != second && !matches!(first, Val::Unknown) {
                let either = Val::Call(
                    std::sync::Arc::new(Val::Global(crate::program::EITHER.into())),
                    vec![first, second],
                );
                joined.push((*i, name.clone(), either));
            }
        }
        for (i, name, v) in joined {
            self.set_in(i, &name, v.clone());
            self.assigned.push((i, name, v));
        }
    }

    /// `options.url = base + '/v1/transactions'` on a variable holding an object literal, or
    /// what a function of the project returned (`options = common.getOptions(req)`, an options
    /// object): the variable holds an object with that field written (`request.post(options)`
    /// after it passes the URL). What a package returned (a client, a transaction) is left as it
    /// is.
    fn write_field(&mut self, object: Option<Node<'t>>, prop: &str, v: &Val) {
        let Some(o) = object.filter(|o| o.kind() == "identifier") else {
            return;
        };
        let name = self.text(o);
        let Some(i) = self.find(name) else {
            return;
        };
        let mut fields = match self.scopes[i].vars.get(name) {
            Some(Binding::Val(Val::Class(c))) => {
                let c = *c;
                if let Val::Str(s) = v
                    && self.module.classes[c].statics.len() < 16
                {
                    self.module.classes[c]
                        .statics
                        .push((prop.to_string(), s.clone()));
                }
                return;
            }
            Some(Binding::Val(Val::Obj(fields))) if fields.len() < 64 => fields.clone(),
            // A row a lookup returned (`const user = await User.findById(id)`), its fields
            // set before `user.save()`, stays that row.
            Some(Binding::Val(Val::Call(callee, _))) if matches!(callee.as_ref(), Val::Member(_, m) if m.starts_with("find")) =>
            {
                return;
            }
            Some(Binding::Val(Val::Call(callee, _))) if project_callee(callee) => Vec::new(),
            // An instance made here (`new Device()`): it stays that instance; what is set on
            // it is kept beside it, by the line of its `new`.
            Some(Binding::Val(Val::New(_, at))) => {
                if self.module.new_fields.len() < crate::program::MAX_NEW_FIELDS {
                    self.module
                        .new_fields
                        .push((*at, prop.to_string(), v.clone()));
                }
                return;
            }
            _ => return,
        };
        fields.push((prop.to_string(), v.clone()));
        self.set_in(i, name, Val::Obj(fields));
    }

    /// Member access on an abstract value.
    pub(super) fn member(&mut self, obj: Val, prop: &str) -> Val {
        match &obj {
            Val::Obj(fields) => match fields.iter().rev().find(|(k, _)| k == prop) {
                Some((_, v)) => v.clone(),
                // A field the literal does not write, of a value it spreads (`{ ...rest,
                // operationId }` read for `path`): that value's.
                None => match fields
                    .iter()
                    .rev()
                    .find(|(k, _)| k == crate::program::SPREAD)
                {
                    Some((_, spread)) if !matches!(spread, Val::Import { .. }) => {
                        let spread = spread.clone();
                        self.member(spread, prop)
                    }
                    _ => Val::Unknown,
                },
            },
            Val::Instance(c) | Val::Class(c) | Val::This(Some(c)) => {
                let class = &self.module.classes[*c];
                if let Some(f) = class.method(prop) {
                    Val::Func(f)
                } else if let Some(v) = class.field(prop) {
                    // `this.model = model` in the constructor, read in another method: that
                    // parameter means nothing there; the field's declared type
                    // (`protected model: Model<T>`) says what it is.
                    let ctor = class.method("constructor");
                    match v {
                        Val::Param(p, _) if Some(*p) == ctor && Some(self.cur_fn()) != ctor => {
                            class
                                .fields
                                .iter()
                                .find(|(n, d)| n == prop && matches!(d, Val::TypeRef(_)))
                                .map(|(_, d)| d.clone())
                                .unwrap_or_else(|| v.clone())
                        }
                        v => v.clone(),
                    }
                } else {
                    Val::Member(std::sync::Arc::new(obj), prop.to_string())
                }
            }
            Val::Func(g) => match self.module.functions[*g].member(prop) {
                Some(v) => v.clone(),
                None => Val::Member(std::sync::Arc::new(obj), prop.to_string()),
            },
            Val::Arr(items) if prop.parse::<usize>().is_ok() => prop
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i).cloned())
                .unwrap_or(Val::Unknown),
            Val::Unknown => Val::Unknown,
            _ => Val::Member(std::sync::Arc::new(obj), prop.to_string()),
        }
    }

    /// Evaluates a callee-like expression and decomposes it into root, member path and call hops.
    /// The links of a chain (`router.post(a, h).post(b, h)…`, `a.b.c`) are walked in a loop from
    /// the root outwards, so a chain of any length costs one level of the depth budget; only what
    /// its arguments nest counts further.
    pub(super) fn chain(&mut self, node: Node<'t>) -> Chain {
        if self.depth > MAX_DEPTH {
            self.too_deep.get_or_insert(line(node));
            return Chain {
                root: Val::Unknown,
                root_name: String::new(),
                path: vec![],
                hops: vec![],
                val: Val::Unknown,
                computed: None,
                model: None,
            };
        }
        self.depth += 1;
        let c = self.chain_links(node);
        self.depth -= 1;
        c
    }

    fn chain_links(&mut self, node: Node<'t>) -> Chain {
        // The links, outermost first, down to the root.
        let mut links: Vec<Node<'t>> = Vec::new();
        let mut cur = node;
        loop {
            let inner = match cur.kind() {
                "member_expression" | "subscript_expression" => {
                    let object = cur.field("object");
                    if object.is_some() {
                        links.push(cur);
                    }
                    object
                }
                "call_expression" => {
                    let function = cur.field("function");
                    if function.is_some() {
                        links.push(cur);
                    }
                    function
                }
                "parenthesized_expression"
                | "await_expression"
                | "non_null_expression"
                | "as_expression"
                | "satisfies_expression" => cur.named_child(0),
                "instantiation_expression" => cur.field("function").or_else(|| cur.named_child(0)),
                _ => None,
            };
            match inner {
                Some(i) => cur = i,
                None => break,
            }
        }
        // Calls chained on one another share the outermost call's group.
        let group_here = self.chain_group.is_none();
        if group_here {
            self.chain_group = links
                .iter()
                .find(|l| l.kind() == "call_expression")
                .map(|l| l.id());
        }
        let mut c = self.chain_root(cur);
        for link in links.into_iter().rev() {
            c = if link.kind() == "call_expression" {
                // `this.paymentReceived()` on a model accessor: the chain goes on from the class.
                let accessor = match &c.root {
                    Val::Func(f) if c.path.is_empty() && c.hops.is_empty() => {
                        self.model_accessors.contains(f).then_some(*f)
                    }
                    _ => None,
                };
                match accessor.and_then(|f| self.module.functions[f].returns.first().cloned()) {
                    Some(model) => Chain {
                        root_name: model.name_it_goes_by().unwrap_or_default(),
                        root: model.clone(),
                        val: model,
                        ..c
                    },
                    None => {
                        let mut c = self.call_link(c, link);
                        c.hops.push(c.path.len());
                        c
                    }
                }
            } else {
                self.member_link(c, link)
            };
        }
        if group_here {
            self.chain_group = None;
        }
        c
    }

    /// `cond ? 'post' : 'put'` (parenthesized or not): the strings it may be.
    fn string_choices(&self, node: Node<'t>) -> Option<Val> {
        match node.kind() {
            "parenthesized_expression" => self.string_choices(node.named_child(0)?),
            "ternary_expression" => {
                let mut out = Vec::new();
                for branch in ["consequence", "alternative"] {
                    let b = node.child_by_field_name(branch)?;
                    match b.kind() {
                        "string" => out.push(Val::Str(self.string_value(b))),
                        _ => match self.string_choices(b)? {
                            Val::Arr(items) => out.extend(items),
                            v => out.push(v),
                        },
                    }
                }
                Some(Val::Arr(out))
            }
            _ => None,
        }
    }

    /// Does `node` end with the name `name` (`headers`, `req.headers`)? Reads the last name only,
    /// not the whole chain before it.
    fn ends_with_name(&self, node: Node, name: &str) -> bool {
        let last = match node.kind() {
            "member_expression" => node.field("property"),
            _ => Some(node),
        };
        last.is_some_and(|n| n.end_byte() - n.start_byte() < 256 && self.text(n).ends_with(name))
    }

    /// The start of a chain: a name, `this`, or any other expression's value.
    fn chain_root(&mut self, node: Node<'t>) -> Chain {
        let (v, name) = match node.kind() {
            "identifier" => {
                let name = self.text(node).to_string();
                (self.lookup(&name), name)
            }
            "this" => (Val::This(self.scopes[self.cur].this_class), "this".into()),
            // `super.create(req)` in a method of a class that extends another: an instance of
            // the parent, whose method runs. `super(..)` in a constructor, or a class whose
            // parent is not known: as written.
            "super" => {
                let parent = self.scopes[self.cur]
                    .this_class
                    .and_then(|c| self.module.classes.get(c))
                    .and_then(|c| c.extends.clone());
                let v = match parent {
                    Some(p)
                        if node
                            .parent()
                            .is_some_and(|n| n.kind() == "member_expression") =>
                    {
                        Val::TypeRef(std::sync::Arc::new(p))
                    }
                    _ => Val::Global("super".into()),
                };
                (v, "super".into())
            }
            // A link without its object or callee (a syntax error): nothing to follow.
            "member_expression" | "subscript_expression" | "call_expression" => {
                (Val::Unknown, String::new())
            }
            _ => return self.opaque_chain(node),
        };
        Chain {
            root: v.clone(),
            root_name: name,
            path: vec![],
            hops: vec![],
            val: v,
            computed: None,
            model: None,
        }
    }

    /// `.prop` or `[index]` on the chain so far.
    fn member_link(&mut self, mut c: Chain, node: Node<'t>) -> Chain {
        c.computed = None;
        let (prop, key) = if node.kind() == "member_expression" {
            let prop = node.field("property").map(|p| self.text(p).to_string());
            (prop, None)
        } else {
            let index = node.field("index");
            // `args[args.length - 1]` on a rest parameter: an argument counted from the end.
            if let Some(k) = index.and_then(|i| self.back_index(node, i))
                && let Val::Arr(items) = &c.val
                && let Some(Val::Param(f, _)) = items.last()
                && items.len() == REST_SPAN
            {
                c.val = Val::Param(*f, crate::program::from_end(k));
                c.path.push(format!("-{k}"));
                return c;
            }
            let key = index.map(|i| self.eval(i));
            // `args[0]`: an index is a member like a name.
            let prop = key
                .as_ref()
                .and_then(|v| v.as_str().map(String::from))
                .or_else(|| {
                    index
                        .filter(|i| i.kind() == "number")
                        .map(|i| self.text(i).to_string())
                        .filter(|t| t.parse::<usize>().is_ok())
                });
            (prop, index.zip(key))
        };
        let Some(prop) = prop else {
            // `router[method]`: the receiver and the key are kept for a call on them.
            let receiver = if matches!(c.root, Val::This(_)) && c.path.is_empty() {
                c.root.clone()
            } else {
                c.val.clone()
            };
            let computed =
                key.map(|(index, k)| (receiver, self.string_choices(index).unwrap_or(k)));
            return Chain {
                val: Val::Unknown,
                computed,
                ..c
            };
        };
        if node.kind() == "subscript_expression"
            && node
                .field("object")
                .is_some_and(|o| self.ends_with_name(o, "headers"))
        {
            self.header_read(&prop, line(node));
        }
        if matches!(c.root, Val::This(_)) && c.path.is_empty() {
            if let Val::This(Some(class)) = c.root {
                c.model = self.module.classes[class]
                    .field_models
                    .iter()
                    .find(|(f, _)| *f == prop)
                    .map(|(_, model)| model.clone());
            }
            c.root = self.member(c.val.clone(), &prop);
            c.root_name = prop.clone();
            c.val = c.root.clone();
            return c;
        }
        c.val = if c.path.is_empty()
            && matches!(&c.val, Val::Obj(fields) if !fields.iter().any(|(k, _)| *k == prop))
            && let Some(f) = self.alias_function(&c.root_name.clone(), &prop)
        {
            f
        } else if c.path.len() >= MAX_CHAIN_LINKS
            && !matches!(c.val, Val::Router(_) | Val::RouteChain(..))
        {
            self.long_chain
                .get_or_insert(line(node.field("property").unwrap_or(node)));
            Val::Unknown
        } else {
            self.member(c.val, &prop)
        };
        c.path.push(prop);
        c
    }

    /// The functions the top level of the module of `decl` assigns to `alias` (see
    /// `alias_functions`).
    fn alias_functions_of(&mut self, decl: Node<'t>, alias: &str) {
        let mut root = decl;
        while let Some(p) = root.parent() {
            root = p;
        }
        let mut cursor = root.walk();
        for statement in root.named_children(&mut cursor) {
            let Some(assign) = statement
                .named_child(0)
                .filter(|_| statement.kind() == "expression_statement")
                .filter(|a| a.kind() == "assignment_expression")
            else {
                continue;
            };
            let (Some(left), Some(right)) = (assign.field("left"), assign.field("right")) else {
                continue;
            };
            if left.kind() == "member_expression"
                && left.field("object").is_some_and(|o| self.text(o) == alias)
                && let Some(prop) = left.field("property")
                && is_function(right.kind())
            {
                self.alias_functions
                    .entry(self.text(prop).to_string())
                    .or_insert(right);
            }
        }
    }

    /// `alias.prop` read before the top level assigns it a function: that function, made now
    /// in the module's scope (it is the same function when the assignment is reached).
    fn alias_function(&mut self, alias: &str, prop: &str) -> Option<Val> {
        if !self.is_exports_alias(alias) {
            return None;
        }
        let node = *self.alias_functions.get(prop)?;
        let saved = self.cur;
        self.cur = 0;
        let f = self.make_function(node, Some(prop.to_string()), None);
        self.cur = saved;
        Some(Val::Func(f))
    }

    /// Is `name`, as this scope sees it, the module's alias of its exports object?
    fn is_exports_alias(&self, name: &str) -> bool {
        self.exports_aliases.iter().any(|a| a == name) && self.find(name) == Some(0)
    }

    /// `k` of an index written `x.length - k` on `x` itself (`args[args.length - 1]`), up to
    /// [`crate::program::FROM_END_SPAN`].
    fn back_index(&self, subscript: Node<'t>, index: Node<'t>) -> Option<usize> {
        let object = subscript.field("object")?;
        if index.kind() != "binary_expression"
            || index.field("operator").map(|o| self.text(o)) != Some("-")
        {
            return None;
        }
        let length = index.field("left")?;
        let k: usize = self.text(index.field("right")?).parse().ok()?;
        (length.kind() == "member_expression"
            && length
                .field("property")
                .is_some_and(|p| self.text(p) == "length")
            && length
                .field("object")
                .is_some_and(|o| self.text(o) == self.text(object))
            && (1..=crate::program::FROM_END_SPAN).contains(&k))
        .then_some(k)
    }

    fn opaque_chain(&mut self, node: Node<'t>) -> Chain {
        let v = self.eval(node);
        Chain {
            root: v.clone(),
            root_name: String::new(),
            path: vec![],
            hops: vec![],
            val: v,
            computed: None,
            model: None,
        }
    }

    /// The node as written, whitespace collapsed, cut to 80 bytes. Reads no further than that,
    /// whatever the node's length (each link of a long chain is shortened from the chain's start).
    pub(super) fn short_text(&self, node: Node) -> String {
        let written = self
            .src
            .get(node.start_byte()..node.end_byte())
            .unwrap_or("");
        let mut t = String::new();
        let mut space = false;
        for ch in written.chars() {
            if ch.is_whitespace() {
                space = !t.is_empty();
                continue;
            }
            if space {
                t.push(' ');
                space = false;
            }
            t.push(ch);
            if t.len() > 80 {
                break;
            }
        }
        if t.len() > 80 {
            let mut end = 77;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}...", &t[..end])
        } else {
            t
        }
    }

    pub(super) fn eval_call(&mut self, node: Node<'t>) -> Chain {
        // Calls chained on one another (`db.insert(t).values(v).onConflictDoNothing()`) share
        // the outermost call's group; arguments start groups of their own.
        let outermost = self.chain_group.is_none();
        if outermost {
            self.chain_group = Some(node.id());
        }
        let c = match node.field("function") {
            Some(callee) => {
                let c = self.chain(callee);
                self.call_link(c, node)
            }
            None => self.opaque_chain(node),
        };
        if outermost {
            self.chain_group = None;
        }
        c
    }

    /// The call `node` on its callee's chain `c` (already evaluated).
    fn call_link(&mut self, mut c: Chain, node: Node<'t>) -> Chain {
        let Some(callee) = node.field("function") else {
            return self.opaque_chain(node);
        };
        let group = self.chain_group.unwrap_or(node.id());
        let args_node = node.field("arguments");
        let arg_nodes: Vec<Node<'t>> = match args_node {
            Some(a) if a.kind() == "arguments" => {
                let mut cursor = a.walk();
                a.named_children(&mut cursor)
                    .filter(|n| n.kind() != "comment")
                    .collect()
            }
            Some(a) => vec![a], // tagged template
            None => vec![],
        };
        // require('x'), and a dynamic `import('x')` (awaited: the module's namespace)
        if (c.root == Val::Global("require".into()) && c.path.is_empty()
            || callee.kind() == "import")
            && let Some(Val::Str(spec)) = arg_nodes.first().map(|a| self.eval(*a))
        {
            c.val = Val::Import {
                spec: crate::program::package_spec(&spec),
                name: None,
            };
            return c;
        }
        // forEach over a literal array: unroll the callback once per element (route tables).
        if c.path.last().is_some_and(|p| p == "forEach")
            && let (Val::Member(recv, _), Some(cb)) = (&c.val, arg_nodes.first())
            && let (Val::Arr(items), true) = (recv.as_ref(), is_function(cb.kind()))
        {
            let items = items.clone();
            let saved_group = self.chain_group.take();
            self.unroll(*cb, items);
            self.chain_group = saved_group;
            c.val = Val::Unknown;
            return c;
        }
        let saved_group = self.chain_group.take();
        // `form.addEventListener('submit', () => ..)`: the listener is named after its event.
        let listener = match (c.path.last(), arg_nodes.first()) {
            (Some(p), Some(a)) if p == "addEventListener" && a.kind() == "string" => {
                let ev = self.string_value(*a);
                let mut chars = ev.chars();
                chars
                    .next()
                    .map(|f| format!("on{}{}", f.to_ascii_uppercase(), chars.as_str()))
            }
            _ => None,
        };
        let mut args: Vec<Val> = Vec::with_capacity(arg_nodes.len());
        let fulfilled_before = self.fulfilled.len();
        // `x.then(v => ..)`: `v` is what `x` fulfils with (Promise.prototype.then), when `x` is
        // a call whose result is known (not another `.then`, whose value is its callback's).
        if c.path.last().is_some_and(|p| p == "then")
            && let (Val::Member(recv, _), Some(cb)) = (&c.val, arg_nodes.first())
            && is_function(cb.kind())
            && let Val::Call(inner, _) = recv.as_ref()
            && !matches!(inner.as_ref(), Val::Member(_, m) if matches!(m.as_str(), "then" | "catch" | "finally"))
        {
            self.fulfilled.push((cb.id(), recv.as_ref().clone()));
        }
        // `async.auto({ a: fn, b: ['a', fn] })` (https://caolan.github.io/async/v3/docs.html#auto):
        // each task's function receives the results of the tasks it depends on, values the
        // request made, never what the client sent.
        if is_async_auto(&c.val)
            && let Some(tasks) = arg_nodes.first().filter(|a| a.kind() == "object")
        {
            let mut cursor = tasks.walk();
            for pair in tasks.named_children(&mut cursor) {
                let task = pair.field("value").and_then(|v| match v.kind() {
                    "array" => v.named_child((v.named_child_count() as u32).saturating_sub(1)),
                    _ => Some(v),
                });
                if let Some(task) = task.filter(|t| is_function(t.kind())) {
                    self.fulfilled.push((
                        task.id(),
                        Val::Call(
                            std::sync::Arc::new(Val::Global(ASYNC_AUTO_RESULTS.into())),
                            Vec::new(),
                        ),
                    ));
                }
            }
        }
        // `.catch(handler)` and `.then(ok, handler)`: the handler runs when the promise fails.
        let failure_arg = match c.path.last().map(String::as_str) {
            Some("catch") => Some(0),
            Some("then") => Some(1),
            _ => None,
        };
        for (i, a) in arg_nodes.iter().enumerate() {
            if i == 1 && listener.is_some() && is_function(a.kind()) {
                self.name_hint = listener.clone();
            }
            let saved = self.failure;
            self.failure |= failure_arg == Some(i);
            self.push_arg(&mut args, *a);
            self.failure = saved;
        }
        self.fulfilled.truncate(fulfilled_before);
        self.chain_group = saved_group;
        if let Some(ctx) = self.trpc_context_type(&c, &args, node) {
            args.push(ctx);
        }
        if callee.kind() == "super" {
            self.koa_super(&args);
        }
        // `Object.keys(table)`, `Object.values(..)`, `Object.entries(..)` of an object literal.
        if c.root == Val::Global("Object".into())
            && let ([p], Some(Val::Obj(fields))) = (c.path.as_slice(), args.first())
        {
            let fields = fields.iter().filter(|(k, _)| k != crate::program::SPREAD);
            let folded = match p.as_str() {
                "keys" => Some(fields.map(|(k, _)| Val::Str(k.clone())).collect()),
                "values" => Some(fields.map(|(_, v)| v.clone()).collect()),
                "entries" => Some(
                    fields
                        .map(|(k, v)| Val::Arr(vec![Val::Str(k.clone()), v.clone()]))
                        .collect(),
                ),
                _ => None,
            };
            if let Some(items) = folded {
                c.val = Val::Arr(items);
                return c;
            }
        }
        // `wallet.history.concat(entry)`: a row's list with more in it (see `ARITH`).
        if let Val::Member(recv, method) = &c.val
            && method == "concat"
            && self.grows_list(recv, &args)
        {
            let mut parts = vec![(**recv).clone()];
            parts.extend(args.iter().cloned());
            c.val = crate::program::arith(parts);
            return c;
        }
        // `base.replace(/\/$/, '')`, `prefix.trim()` on a known string (or an environment read's
        // default): the string it gives.
        if let Val::Member(recv, method) = &c.val
            && let Some(v) = string_method(recv, method, &args, arg_nodes.first().map(|n| n.kind()))
        {
            c.val = v;
            return c;
        }
        self.nest_bootstrap_call(&c, &args, node);
        self.package_controller_call(&c, &args, node);
        let registered = match c.computed.take() {
            Some((receiver, key)) => self.computed_call(&c, receiver, key, &args, &arg_nodes, node),
            None => self.router_call(&c, &args, &arg_nodes, node),
        };
        // A registration on a router this file made is certain; on a parameter or an import it
        // may be an ordinary call (`users.register(email)`), so the call is kept too.
        let certain = matches!(&c.val, Val::Member(r, _) if matches!(r.as_ref(), Val::Router(_) | Val::RouteChain(..)))
            || !matches!(&c.val, Val::Member(..));
        if let Some(v) = &registered
            && certain
        {
            c.val = v.clone();
            return c;
        }
        if c.path.last().is_some_and(|p| p == "bind")
            && let Val::Member(recv, _) = &c.val
        {
            c.val = (**recv).clone();
            return c;
        }
        if c.path.len() > MAX_CHAIN_LINKS {
            self.long_chain
                .get_or_insert(line(callee.field("property").unwrap_or(callee)));
            c.val = registered.unwrap_or(Val::Unknown);
            return c;
        }
        let last = c.path.last().map(String::as_str).unwrap_or("");
        if matches!(last, "get" | "header" | "getHeader" | "get_header")
            && let Some(h) = args.first().and_then(Val::as_str)
        {
            let h = h.to_string();
            self.header_read(&h, line(node));
        }
        // `create(...).catch((e) => { if (e.code === 'P2002') ... })` on the same chain.
        let chain_catches = c.path.last().is_some_and(|p| p == "catch")
            && arg_nodes
                .first()
                .is_some_and(|a| names_unique_violation(self.text(*a)));
        // the statement as written, or the text of a constant it names (`pool.query(UPSERT_SET,
        // [..])` with `const UPSERT_SET = 'INSERT ..'` in the file)
        let literal = arg_nodes
            .first()
            .filter(|a| matches!(a.kind(), "string" | "template_string"))
            .map(|a| self.string_value(*a))
            .or_else(|| {
                arg_nodes
                    .first()
                    .filter(|a| matches!(a.kind(), "identifier" | "member_expression"))
                    .and(args.first())
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            });
        let f = self.cur_fn();
        // `.catch((e) => { throw new Conflict() })`: a handler that only throws again.
        if c.path.last().is_some_and(|p| p == "catch")
            && arg_nodes
                .first()
                .and_then(|a| a.field("body"))
                .is_some_and(|b| super::next::throws(b, self.src))
            && self.module.functions[f].rethrow_catches.len() < 64
        {
            self.module.functions[f].rethrow_catches.push(group);
        }
        let text = self.short_text(callee);
        let call_line = line(callee.field("property").unwrap_or(callee));
        self.keys_at_call(&c, &args, &arg_nodes, node, call_line);
        let arg_keys = match arg_nodes.as_slice() {
            [only] if only.kind() == "object" => {
                let mut keys = Vec::new();
                self.object_keys(*only, "", 0, &mut keys);
                keys
            }
            _ => Vec::new(),
        };
        let blocks = self.blocks_now();
        let open_args = arg_nodes.iter().any(|a| a.kind() == "spread_element");
        // `pay({ lnd, ...options } as any)`: the literal under a type assertion
        // What the object arguments spread that the front end cannot read (`pay({ lnd,
        // ...options })`, `save(data)` with `data = { ...found, level }`): the argument's index
        // and the spread value, whose keys the caller's argument shows.
        // (also the record of a create's `data`/`create` field: `prisma.user.create({ data: {
        // ...input, role } })`)
        use crate::program::spread_values;
        let spread_args: Box<[(usize, Val)]> = args
            .iter()
            .enumerate()
            .flat_map(|(i, a)| match a.plain() {
                Val::Obj(fields) => {
                    let mut found: Vec<(usize, Val)> =
                        spread_values(fields).map(|v| (i, v.clone())).collect();
                    // (kept apart from the argument's own: at `crate::program::RECORD_SPREAD`)
                    for (k, v) in fields {
                        if (k == "data" || k == "create")
                            && let Val::Obj(inner) = v.plain()
                        {
                            found.extend(
                                spread_values(inner)
                                    .map(|v| (crate::program::RECORD_SPREAD, v.clone())),
                            );
                        }
                    }
                    found
                }
                _ => Vec::new(),
            })
            .collect();
        // `row.tags.push(tag)`: the row's list grown; `row.save()`, `repo.save(row)` after it.
        let here = self.top_fn();
        if let Val::Member(recv, m) = &c.val
            && matches!(
                m.as_str(),
                "includes" | "find" | "findIndex" | "some" | "indexOf" | "has"
            )
            && let list = tested_list(recv)
            && crate::program::row_field(list).is_some()
        {
            self.mark_tested(list.clone());
        }
        if let Val::Member(recv, m) = &c.val
            && matches!(m.as_str(), "push" | "unshift" | "splice")
        {
            let rows_only = !args.is_empty() && args.iter().all(crate::program::loads_row);
            match recv.as_ref() {
                // `row.tags.push(tag)`
                list if m != "splice" && self.grows_list(list, &args) => {
                    self.mark_grown(list.clone(), rows_only)
                }
                // `images.push(url)` with `images = [...row.images]`: the copy grown
                Val::Arr(items)
                    if items.len() == 1 && m != "splice" && self.grows_list(&items[0], &args) =>
                {
                    self.mark_grown((**recv).clone(), rows_only)
                }
                _ => {}
            }
        }
        // (all the saved row's grown lists added loaded rows only, or not)
        let saves_grown = match c.path.last().map(String::as_str) {
            Some("save") => self
                .grown
                .iter()
                .filter(|(g, x, _)| match x {
                    Val::Member(base, _) if *g == here => {
                        matches!(&c.val, Val::Member(r, _) if r == base)
                            || args.iter().any(|a| a == base.as_ref())
                    }
                    _ => false,
                })
                .map(|(_, _, rows)| *rows)
                .reduce(|a, b| a && b),
            _ => None,
        };
        self.module.functions[f].calls.push(CallSite {
            spread_args,
            callee: c.val.clone(),
            root: c.root.clone(),
            root_name: c.root_name.clone(),
            path: c.path.clone(),
            hops: c.hops.clone(),
            args: crate::program::call_args(args.clone()),
            literal,
            is_new: false,
            line: call_line,
            text,
            group,
            unique_caught: self.unique_catch || chain_catches,
            on_failure: self.failure,
            in_try: self.in_try,
            swallowed: self.swallowed,
            claimed: self.claimed,
            guarded: self.guarded.clone(),
            refused: self.refused,
            state_guard: site_state_guard(&self.state_guard),
            param_gate: self.param_gate.clone().map(Box::new),
            open_args,
            found: self.found.clone(),
            blocks,
            branch: self.branch.clone(),
            arg_keys,
            receiver_model: c.model.clone(),
            saves_grown,
        });
        if let Some(v) = registered {
            c.val = v;
            return c;
        }
        c.val = match &c.val {
            Val::Func(fid) => {
                // A wrapper that may hand back the function it was given (`tryRoute(controller,
                // onError)` returning `controller` when it cannot wrap it): that argument, which
                // is a function or names one, rather than another function passed beside it.
                let handed_back =
                    self.module.functions[*fid]
                        .returns
                        .iter()
                        .find_map(|r| match r {
                            Val::Param(g, i) if g == fid => crate::program::argument(&args, *i)
                                .filter(|a| {
                                    matches!(
                                        a,
                                        Val::Func(_)
                                            | Val::Param(..)
                                            | Val::Member(..)
                                            | Val::Import { .. }
                                    )
                                }),
                            _ => None,
                        });
                if let Some(given) = handed_back {
                    given.clone()
                } else if let Some(wrapped) = args.iter().find(|a| a.is_function_like()) {
                    wrapped.clone()
                } else {
                    // The first return that says something; an early `return []` or `return
                    // {}` beside others is an edge case, not what the function makes.
                    let returns = &self.module.functions[*fid].returns;
                    let empty = |r: &Val| {
                        matches!(r, Val::Arr(v) if v.is_empty())
                            || matches!(r, Val::Obj(v) if v.is_empty())
                    };
                    match returns
                        .iter()
                        .find(|r| !matches!(r, Val::Unknown) && !empty(r))
                    {
                        // What it returns for these arguments: its parameters are what this call
                        // passes (`buildConfig(options, method)` returning `{ method }`).
                        Some(r) => with_args(r, *fid, &args, 0),
                        None if returns.len() == 1 => returns[0].clone(),
                        None => Val::Unknown,
                    }
                }
            }
            Val::Unknown => Val::Unknown,
            callee_val => {
                Val::Call(std::sync::Arc::new(callee_val.clone()), args).pruned(MAX_VAL_NODES)
            }
        };
        self.body_hash(&c, node);
        c
    }

    /// The keys of an object literal with their lines, dotted through nested object literals
    /// (four levels, 256 keys at most).
    fn object_keys(&self, obj: Node<'t>, prefix: &str, depth: usize, out: &mut Vec<(String, u32)>) {
        let mut cursor = obj.walk();
        for c in obj.named_children(&mut cursor) {
            if out.len() >= 256 {
                return;
            }
            let (key, value) = match c.kind() {
                "pair" => match c.field("key") {
                    Some(k) => (k, c.field("value")),
                    None => continue,
                },
                "shorthand_property_identifier" | "method_definition" => {
                    (c.field("name").unwrap_or(c), None)
                }
                _ => continue,
            };
            let name = format!("{prefix}{}", self.property_name(key));
            out.push((name.clone(), line(key)));
            if let Some(v) = value.filter(|v| v.kind() == "object")
                && depth < 4
            {
                self.object_keys(v, &format!("{name}."), depth + 1, out);
            }
        }
    }

    /// An argument's value; a spread of an array (`f(...[router, tenant])`, `r(...args)`) is
    /// its elements, each an argument of its own.
    fn push_arg(&mut self, args: &mut Vec<Val>, node: Node<'t>) {
        match (node.kind(), self.eval(node)) {
            ("spread_element", Val::Arr(items)) => args.extend(items),
            (_, v) => args.push(v),
        }
    }

    /// The value a `.then(..)` callback's first parameter holds (see `fulfilled`), once.
    fn fulfilled_for(&mut self, callback: Node<'t>) -> Option<Val> {
        let at = self
            .fulfilled
            .iter()
            .position(|(id, _)| *id == callback.id())?;
        Some(self.fulfilled.remove(at).1)
    }

    fn unroll(&mut self, callback: Node<'t>, items: Vec<Val>) {
        let param = callback
            .field("parameters")
            .and_then(|p| p.named_child(0))
            .map(|p| p.field("pattern").unwrap_or(p))
            .or_else(|| callback.field("parameter"));
        let Some(body) = callback.field("body") else {
            return;
        };
        let items = self.within_unroll_budget(items, callback);
        for item in items {
            let prev = self.push_scope(self.cur_fn(), self.scopes[self.cur].this_class);
            let scope = self.cur;
            if let Some(p) = param {
                self.bind_pattern(p, item, scope);
            }
            if body.kind() == "statement_block" {
                self.hoist(body);
                self.walk_children(body);
            } else {
                self.eval(body);
            }
            self.cur = prev;
        }
    }

    fn eval_new(&mut self, node: Node<'t>) -> Chain {
        let Some(ctor) = node.field("constructor") else {
            return self.opaque_chain(node);
        };
        let c = self.chain(ctor);
        let args: Vec<Val> = match node.field("arguments") {
            Some(a) => {
                let mut cursor = a.walk();
                let nodes: Vec<Node<'t>> = a.named_children(&mut cursor).collect();
                let mut args = Vec::with_capacity(nodes.len());
                for n in nodes {
                    self.push_arg(&mut args, n);
                }
                args
            }
            None => vec![],
        };
        if let Some(v) = self.router_new(&c, &args, node) {
            return Chain { val: v, ..c };
        }
        let f = self.cur_fn();
        let text = format!("new {}", self.short_text(ctor));
        let blocks = self.blocks_now();
        self.module.functions[f].calls.push(CallSite {
            spread_args: Box::default(),
            callee: c.val.clone(),
            root: c.root.clone(),
            root_name: c.root_name.clone(),
            path: c.path.clone(),
            hops: c.hops.clone(),
            args: crate::program::call_args(args),
            literal: None,
            is_new: true,
            line: line(node),
            text,
            group: node.id(),
            unique_caught: self.unique_catch,
            on_failure: self.failure,
            in_try: self.in_try,
            swallowed: self.swallowed,
            claimed: self.claimed,
            guarded: self.guarded.clone(),
            refused: self.refused,
            state_guard: site_state_guard(&self.state_guard),
            param_gate: self.param_gate.clone().map(Box::new),
            open_args: true,
            found: self.found.clone(),
            blocks,
            branch: self.branch.clone(),
            arg_keys: Vec::new(),
            receiver_model: c.model.clone(),
            saves_grown: None,
        });
        let val = match &c.val {
            Val::Class(k) => Val::Instance(*k),
            Val::Unknown => Val::Unknown,
            v => Val::New(std::sync::Arc::new(v.clone()), line(node)),
        };
        Chain { val, ..c }
    }
}

/// Whether `a` is the object literal `b` with fields added (`{ ...route, middleware }` beside
/// `route`, both read as literals): every field of `b` is in `a`, with the same value.
fn extends_object(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::Obj(more), Val::Obj(fewer)) => {
            !fewer.is_empty() && more.len() > fewer.len() && fewer.iter().all(|f| more.contains(f))
        }
        _ => false,
    }
}

/// Is `v` built by calling methods on `base` (`t.procedure.use(mw)` on `t.procedure`)?
fn refines(v: &Val, base: &Val) -> bool {
    let mut cur = v;
    for _ in 0..16 {
        match cur {
            Val::Call(callee, _) => match callee.as_ref() {
                Val::Member(inner, _) if inner.as_ref() == base => return true,
                Val::Member(inner, _) => cur = inner,
                _ => return false,
            },
            _ => return false,
        }
    }
    false
}

/// A callee the project defines: a function of this file, or one imported by a relative or
/// aliased path (not a package's).
fn project_callee(callee: &Val) -> bool {
    match callee {
        Val::Func(_) => true,
        Val::Import { spec, .. } => ["./", "../", "/", "@/", "~/"]
            .iter()
            .any(|p| spec.starts_with(p)),
        Val::Member(inner, _) => project_callee(inner),
        _ => false,
    }
}

/// What an `async.auto` task's function receives: the results of the tasks it depends on, made
/// by the request (a call, to the linker).
const ASYNC_AUTO_RESULTS: &str = "async.auto results";

/// `auto` of the `async` package (`import { auto } from 'async'`, `async.auto`, `async/auto`).
fn is_async_auto(v: &Val) -> bool {
    let from_async = |spec: &str| matches!(spec, "async" | "async/auto" | "async-es");
    match v {
        Val::Import { spec, name } => {
            (name.as_deref() == Some("auto") && from_async(spec))
                || (spec == "async/auto" && name.as_deref().is_none_or(|n| n == "default"))
        }
        Val::Member(inner, p) => {
            p == "auto" && matches!(inner.as_ref(), Val::Import { spec, .. } if from_async(spec))
        }
        _ => false,
    }
}

/// The most nodes of an argument a function's result keeps where the function returns that
/// parameter (see [`Val::pruned`]): a chain of builders each returning what it was given grows
/// by at most this much per call.
const MAX_ARG_NODES: usize = 2048;

/// `v`, a value function `f` returns, with its parameters replaced by the arguments of a call
/// (a parameter the call leaves out is unknown). Values nest at most 16 deep here.
fn with_args(v: &Val, f: FnId, args: &[Val], depth: usize) -> Val {
    fn mentions(v: &Val, f: FnId, depth: usize) -> bool {
        if depth > 16 {
            return false;
        }
        match v {
            Val::Param(g, _) => *g == f,
            Val::Obj(fields) => fields.iter().any(|(_, x)| mentions(x, f, depth + 1)),
            Val::Arr(xs) | Val::Template(xs) => xs.iter().any(|x| mentions(x, f, depth + 1)),
            Val::Member(b, _) | Val::Element(b) | Val::TypeRef(b) => mentions(b, f, depth + 1),
            Val::Call(c, xs) => {
                mentions(c, f, depth + 1) || xs.iter().any(|x| mentions(x, f, depth + 1))
            }
            _ => false,
        }
    }
    if depth == 0 && !mentions(v, f, 0) {
        return v.clone();
    }
    if depth > 16 {
        return v.clone();
    }
    let sub = |x: &Val| with_args(x, f, args, depth + 1);
    match v {
        Val::Param(g, i) if *g == f => {
            crate::program::argument(args, *i).map_or(Val::Unknown, |a| a.pruned(MAX_ARG_NODES))
        }
        Val::Obj(fields) => Val::Obj(fields.iter().map(|(k, x)| (k.clone(), sub(x))).collect()),
        Val::Arr(xs) => Val::Arr(xs.iter().map(sub).collect()),
        Val::Template(xs) => Val::Template(xs.iter().map(sub).collect()),
        Val::Member(b, n) => Val::Member(std::sync::Arc::new(sub(b)), n.clone()),
        Val::Element(b) => Val::Element(std::sync::Arc::new(sub(b))),
        Val::Call(c, xs) => Val::Call(std::sync::Arc::new(sub(c)), xs.iter().map(sub).collect()),
        other => other.clone(),
    }
}

/// An awaited expression, through parentheses (`(await x)`, `await x`).
/// The class a mixin application extends: `extends Searchable(Base)`, `extends
/// pipe(Searchable, Timestamped)(Base)`, `extends A(B(Base))` and a const holding one of those
/// (`const Extended = R.pipe(..)(BaseModel); class M extends Extended`). A mixin returns a
/// subclass of the class it is given, so what the class is (an ORM model, a router) comes from
/// that argument. A call given no class (`extends Factory('users')`) stays the call.
fn mixin_base(v: Val) -> Val {
    let Val::Call(_, args) = &v else {
        return v;
    };
    let base = args.iter().find_map(|a| match a {
        Val::Class(_) | Val::Import { .. } | Val::Member(..) | Val::TypeRef(_) => Some(a.clone()),
        Val::Call(..) => Some(mixin_base(a.clone())).filter(|b| !matches!(b, Val::Call(..))),
        _ => None,
    });
    base.unwrap_or(v)
}

fn awaited(n: Option<Node>) -> bool {
    let mut n = n;
    while let Some(x) = n {
        match x.kind() {
            "await_expression" => return true,
            "parenthesized_expression" => n = x.named_child(0),
            _ => return false,
        }
    }
    false
}

/// A declared type that may name what a function returns: an alias made here
/// (`ReturnType<typeof f>`, a call of `f`), an imported type, or an object type with one.
fn names_alias_or_import(v: &Val) -> bool {
    match v {
        Val::TypeRef(inner) => matches!(inner.as_ref(), Val::Call(..) | Val::Import { .. }),
        Val::Call(..) => true,
        Val::Obj(fields) => fields.iter().any(|(_, f)| names_alias_or_import(f)),
        _ => false,
    }
}

/// A `catch` body that throws when the error is a unique violation: an `if` directly in it whose
/// test names one positively (`e.code === 'P2002'`, `err instanceof UniqueConstraintError`) and
/// whose branch ends by throwing. Not `if (e.code !== 'P2002') throw e`, which lets the duplicate
/// through.
fn throws_on_unique_violation(body: Node, src: &str) -> bool {
    let mut cursor = body.walk();
    body.named_children(&mut cursor).any(|st| {
        if st.kind() != "if_statement" {
            return false;
        }
        let (Some(cond), Some(then)) = (
            st.child_by_field_name("condition"),
            st.child_by_field_name("consequence"),
        ) else {
            return false;
        };
        let test = &src[cond.byte_range()];
        crate::text::names_unique_violation(test)
            && !test.contains("!=")
            && !test.trim_start_matches('(').trim_start().starts_with('!')
            && !test.contains("||")
            && super::next::throws(then, src)
    })
}

/// The state tests a call runs under, as `CallSite::state_guard` keeps them.
fn site_state_guard(
    tests: &[crate::program::StateTest],
) -> Option<Box<[crate::program::StateTest]>> {
    (!tests.is_empty()).then(|| tests.into())
}

#[cfg(test)]
mod tests {
    use crate::catalog::Catalog;
    use crate::discover::{Lang, SourceFile};
    use crate::program::Val;

    #[test]
    fn a_class_named_inside_its_own_methods_is_the_class() {
        let text = "import { BaseTask } from './base';\n\
                    export default class ImportTask extends BaseTask {\n\
                    \x20 static async scheduleAndWait(props) {\n\
                    \x20   const job = await new ImportTask().schedule(props);\n\
                    \x20   return job.finished();\n\
                    \x20 }\n\
                    }\n";
        let file = SourceFile {
            rel: "tasks/ImportTask.ts".into(),
            lang: Lang::TypeScript,
            text: text.into(),
        };
        let (module, _) = super::super::analyze_file(&file, &Catalog::builtin().unwrap());
        let schedule = module
            .functions
            .iter()
            .flat_map(|f| f.calls.iter())
            .find(|c| c.path.last().is_some_and(|p| p == "schedule"))
            .expect("the schedule call");
        assert!(
            matches!(&schedule.callee, Val::Member(inner, _) if matches!(inner.as_ref(), Val::Instance(0))),
            "{:?}",
            schedule.callee
        );
    }

    #[test]
    fn shapes_of_untyped_fields_do_not_crowd_out_typed_ones() {
        let mut text: String = (0..300)
            .map(|i| format!("export interface Dto{i} {{ a: string; b: number }}\n"))
            .collect();
        text.push_str("import { OrdersModule } from './orders';\n");
        text.push_str("export interface Modules { orders: OrdersModule }\n");
        let file = SourceFile {
            rel: "src/modules.ts".into(),
            lang: Lang::TypeScript,
            text,
        };
        let (module, _) = super::super::analyze_file(&file, &Catalog::builtin().unwrap());
        assert!(
            module.type_shape("Modules").is_some(),
            "the typed shape is kept"
        );
        assert!(
            module.type_shape("Dto0").is_some(),
            "an untyped one names its fields"
        );
        assert!(module.type_shapes.len() <= 2 * crate::program::MAX_TYPE_SHAPES);
    }

    /// The value exported as `name` by `text`.
    fn exported(text: &str, name: &str) -> Val {
        let file = SourceFile {
            rel: "src/base.ts".into(),
            lang: Lang::TypeScript,
            text: text.into(),
        };
        let (module, _) = super::super::analyze_file(&file, &Catalog::builtin().unwrap());
        module.export(name).cloned().expect("the export")
    }

    fn env_default(var: &str, value: &str) -> Val {
        Val::EnvDefault {
            var: var.into(),
            value: std::sync::Arc::new(Val::Str(value.into())),
        }
    }

    #[test]
    fn an_env_helper_with_a_fallback_is_the_code_default() {
        let text = "import { env } from './env';
                    export const base = (env('BASE_PATH') ?? '').replace(/[/]$/, '');
                    export const prefix = base || '/';
                    export const lower = (process.env.P ?? '/API').toLowerCase();
                    export const other = (env('BASE_PATH') ?? 'x/').replace(/[/]$/, '');
                    export const notEnv = (env('basePath') ?? '');
";
        assert_eq!(exported(text, "base"), env_default("env('BASE_PATH')", ""));
        assert_eq!(
            exported(text, "prefix"),
            env_default("env('BASE_PATH')", "/")
        );
        assert_eq!(
            exported(text, "lower"),
            env_default("process.env.P", "/api")
        );
        // A regular expression on a non-empty string is not evaluated.
        assert!(!matches!(exported(text, "other"), Val::EnvDefault { .. }));
        // `env(name)` with a name that is not a variable's is an ordinary call.
        assert!(!matches!(exported(text, "notEnv"), Val::EnvDefault { .. }));
    }

    #[test]
    fn a_value_with_a_literal_fallback_stays_itself_and_notes_the_fallback() {
        let text = "export function make(config: any, opts: any) {
                        const base = config.server.basePath || '';
                        const nested = opts.prefix ?? '/api';
                        const numeric = config.port || 3000;
                        return [base, nested, numeric];
                    }
";
        let file = SourceFile {
            rel: "src/app.ts".into(),
            lang: Lang::TypeScript,
            text: text.into(),
        };
        let (module, _) = super::super::analyze_file(&file, &Catalog::builtin().unwrap());
        let noted: Vec<(&str, &str)> = module
            .fallbacks
            .iter()
            .map(|f| (f.expr.as_str(), f.literal.as_str()))
            .collect();
        assert_eq!(
            noted,
            [
                ("config.server.basePath || ''", ""),
                ("opts.prefix ?? '/api'", "/api")
            ]
        );
        // The value itself is what the code reads: a member of the parameter.
        assert!(matches!(module.fallbacks[0].value, Val::Member(..)));
    }

    #[test]
    fn string_methods_on_known_strings() {
        use super::string_method;
        let s = |x: &str| Val::Str(x.into());
        assert_eq!(string_method(&s(" /a "), "trim", &[], None), Some(s("/a")));
        assert_eq!(
            string_method(&s("/a/b"), "replace", &[s("/"), s("-")], Some("string")),
            Some(s("-a/b"))
        );
        assert_eq!(
            string_method(&s("/a/b"), "replaceAll", &[s("/"), s("-")], Some("string")),
            Some(s("-a-b"))
        );
        assert_eq!(
            string_method(&s(""), "replace", &[Val::Unknown, s("")], Some("regex")),
            Some(s(""))
        );
        assert_eq!(
            string_method(&s("a/"), "replace", &[Val::Unknown, s("")], Some("regex")),
            None
        );
        assert_eq!(string_method(&Val::Unknown, "trim", &[], None), None);
        assert_eq!(string_method(&s("a"), "padEnd", &[], None), None);
    }
}
