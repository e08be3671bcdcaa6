//! What the TS/JS front end keeps of one file: a summary of its functions, classes, routers and
//! exports, with every reference to another file left symbolic for the linker.

/// Index of a function in its module. 0 is the module's top level.
pub type FnId = usize;
pub type ClassId = usize;
pub type RouterId = usize;

/// An abstract value: what an expression evaluates to, as far as one file can tell.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Unknown,
    Str(String),
    Arr(Vec<Val>),
    Obj(Vec<(String, Val)>),
    Func(FnId),
    Class(ClassId),
    Instance(ClassId),
    Router(RouterId),
    /// `router.route(path)`: the paths of the chain and the router it belongs to.
    RouteChain(RouterId, Box<Val>),
    /// A binding imported from `spec`; `name` None is the whole module (require, `import * as`).
    Import {
        spec: String,
        name: Option<String>,
    },
    Member(Box<Val>, String),
    /// The result of calling something this file cannot see into.
    Call(Box<Val>, Vec<Val>),
    New(Box<Val>),
    /// A TypeScript type annotation naming a class: an instance of it.
    TypeRef(Box<Val>),
    /// An unbound identifier (`fetch`, `process`).
    Global(String),
    /// The `index`-th parameter of function `FnId`.
    Param(FnId, usize),
    This(Option<ClassId>),
}

impl Val {
    pub fn is_function_like(&self) -> bool {
        matches!(self, Val::Func(_))
    }
}

/// One call in a function body, decomposed for sink matching and call following.
#[derive(Debug, Clone)]
pub struct CallSite {
    /// The value called (for following into project code).
    pub callee: Val,
    /// The chain's root value and name: `stripe` in `stripe.refunds.create`, the field in
    /// `this.mailer.send`, `knex` in `knex('t').insert()`.
    pub root: Val,
    pub root_name: String,
    /// Member names after the root, call hops dropped.
    pub path: Vec<String>,
    /// Indices of `path` after which the chain was called.
    pub hops: Vec<usize>,
    pub args: Vec<Val>,
    /// The first argument's text when it is a string or template literal (raw SQL).
    pub literal: Option<String>,
    pub is_new: bool,
    pub line: u32,
    /// The call as written, shortened, for reports.
    pub text: String,
}

#[derive(Debug, Clone)]
pub enum RouterItem {
    Route {
        method: String,
        paths: Val,
        path_text: String,
        middleware: Vec<Val>,
        handler: Val,
        line: u32,
    },
    Use {
        path: Option<Val>,
        path_text: String,
        args: Vec<Val>,
        line: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouterKind {
    App,
    Router,
}

#[derive(Debug, Clone)]
pub struct RouterFacts {
    pub kind: RouterKind,
    pub framework: &'static str,
    pub line: u32,
    pub items: Vec<RouterItem>,
}

#[derive(Debug, Clone, Default)]
pub struct FnFacts {
    pub name: String,
    pub line: u32,
    pub class: Option<ClassId>,
    pub calls: Vec<CallSite>,
    /// (header name as written, line) for every read of an idempotency-key header.
    pub key_reads: Vec<(String, u32)>,
    pub returns: Vec<Val>,
    /// Functions defined inside this one; their bodies count as part of it.
    pub children: Vec<FnId>,
    /// Registrations on a router that arrives as parameter `usize`.
    pub param_items: Vec<(usize, RouterItem)>,
}

#[derive(Debug, Clone, Default)]
pub struct ClassFacts {
    pub name: String,
    pub line: u32,
    pub extends: Option<Val>,
    pub methods: Vec<(String, FnId)>,
    pub fields: Vec<(String, Val)>,
}

impl ClassFacts {
    pub fn method(&self, name: &str) -> Option<FnId> {
        self.methods
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| *f)
    }
    pub fn field(&self, name: &str) -> Option<&Val> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

#[derive(Debug, Default)]
pub struct Module {
    pub file: String,
    /// Test code: parsed, but its apps and routers are not the service's routes.
    pub is_test: bool,
    pub functions: Vec<FnFacts>,
    pub classes: Vec<ClassFacts>,
    pub routers: Vec<RouterFacts>,
    pub exports: Vec<(String, Val)>,
    /// `module.exports = X` / `export = X`.
    pub cjs_whole: Option<Val>,
    /// `export * from 'spec'`.
    pub star_exports: Vec<String>,
    /// Registrations on a router imported from another file.
    pub foreign_items: Vec<(Val, RouterItem)>,
}

impl Module {
    pub fn export(&self, name: &str) -> Option<&Val> {
        self.exports
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}
