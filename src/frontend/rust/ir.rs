//! What the Rust front end keeps of a parsed file: a small, owned, thread-safe model of its items
//! and function bodies. `syn`'s trees hold `proc_macro2` spans, which are neither `Send` nor valid
//! after the per-thread span table is cleared, so each file is lowered to this right after parsing.

/// 1-based line.
pub type Line = u32;

#[derive(Debug, Default)]
pub struct FileIr {
    /// Relative to the scanned root, `/`-separated.
    pub rel: String,
    pub items: Vec<Item>,
    /// Schema statements its string literals hold (see [`super::schema_sql`]).
    pub schema_sql: Vec<crate::facts::SchemaSql>,
}

#[derive(Debug)]
pub enum Item {
    /// `mod name;` (body `None`) or `mod name { .. }`.
    Mod {
        name: String,
        path_attr: Option<String>,
        body: Option<Vec<Item>>,
        is_test: bool,
    },
    Use(Vec<UseDecl>),
    /// `extern crate name as alias;`
    ExternCrate {
        name: String,
        alias: String,
    },
    Fn(Func),
    Impl(Impl),
    Trait {
        name: String,
        fns: Vec<Func>,
        /// The supertraits it names (`trait Db: BaseDb + Send`): their paths as written.
        supers: Vec<Vec<String>>,
    },
    /// A `const` or `static`.
    Const {
        name: String,
        value: Ex,
        /// A `static`'s declared type (`Lazy<Option<AsyncSmtpTransport<Tokio1Executor>>>`):
        /// what a use of it elsewhere holds.
        ty: Option<Ty>,
    },
    /// `macro_rules! name { (..) => { .. }; .. }`.
    MacroRules(Box<MacroRules>),
    /// A struct, enum, union or type alias: a name paths can resolve to.
    Type {
        name: String,
        /// A struct's named fields.
        fields: Vec<(String, Ty)>,
        /// A SeaORM model (`#[derive(DeriveEntityModel)]`): its `#[sea_orm(..)]` attributes.
        entity: Option<Box<EntityAttrs>>,
        /// A type alias: the type it names (`type BoxDB = Box<dyn Database>;`); in a generic
        /// alias's, its parameters are written `$0`, `$1`, .. (`Result<$0, EmailError>`).
        alias: Option<Ty>,
        /// axum-extra's `#[derive(TypedPath)] #[typed_path("/users/{id}")]`: the path a typed
        /// route whose handler takes this type is registered at.
        typed_path: Option<String>,
        /// diesel's `#[diesel(table_name = users)]` (`#[table_name = "users"]` in diesel 1): the
        /// table the struct is a row, a new row or a changeset of.
        diesel_table: Option<String>,
    },
}

/// A `macro_rules!` definition: each arm's transcriber read as statements, with every `$name`
/// written as the identifier `name` (a metavariable is an opaque value where it is expanded) and
/// each repetition `$( .. )*` once.
#[derive(Debug)]
pub struct MacroRules {
    pub name: String,
    pub line: Line,
    /// `#[macro_export]`: in scope across the crate (and for other crates).
    pub exported: bool,
    pub arms: Vec<MacroArm>,
}

#[derive(Debug)]
pub struct MacroArm {
    /// The metavariables its matcher binds, in order.
    pub params: Vec<String>,
    /// The transcriber as statements; `None` when its tokens do not parse as such.
    pub body: Option<Vec<Stmt>>,
    /// The transcriber builds or configures routes (read from the lowered body, or from its
    /// tokens when it did not parse: `App::new()`, `web::scope`, `.service(..)`).
    pub builds_routes: bool,
}

/// One argument of a `#[sea_orm(..)]` attribute: `unique` (no value) or `table_name = "users"`
/// (the literal's value; other values as their tokens).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrmArg {
    pub key: String,
    pub value: Option<String>,
}

/// The `#[sea_orm(..)]` attributes of a struct deriving `DeriveEntityModel`.
#[derive(Debug, Default)]
pub struct EntityAttrs {
    pub line: Line,
    /// The struct's own arguments (`table_name`, `schema_name`).
    pub args: Vec<OrmArg>,
    pub fields: Vec<EntityField>,
    /// Lines of `sea_orm` attributes that could not be read (not a list, no key).
    pub unreadable: Vec<Line>,
}

#[derive(Debug)]
pub struct EntityField {
    pub name: String,
    pub ty: Ty,
    pub args: Vec<OrmArg>,
    pub line: Line,
}

impl EntityField {
    pub fn has(&self, key: &str) -> bool {
        self.args.iter().any(|a| a.key == key)
    }
    pub fn value(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .rev()
            .find(|a| a.key == key)
            .and_then(|a| a.value.as_deref())
    }
}

/// One name brought in by a `use`: `path` (as written, `crate`/`self`/`super` included) under
/// `alias`; a glob has alias `*`.
#[derive(Debug, Clone)]
pub struct UseDecl {
    pub path: Vec<String>,
    pub alias: String,
}

#[derive(Debug)]
pub struct Impl {
    /// The implementing type's path, generics dropped.
    pub self_ty: Vec<String>,
    pub trait_: Option<Vec<String>>,
    /// `type Transform = IdempotencyService<S>;` and the like.
    pub assoc_types: Vec<(String, Ty)>,
    /// `const PATH: &'static str = "/oauth2/token";`
    pub consts: Vec<(String, Ex)>,
    /// A blanket impl (`impl<T: SimpleRoute> Route for T`): the traits its type parameter is
    /// bounded by, each as written. None for an impl of a named type.
    pub blanket: Option<Vec<Vec<String>>>,
    pub fns: Vec<Func>,
    /// poem-openapi's `#[OpenApi(prefix_path = "/v1")]` (empty for a bare `#[OpenApi]`).
    pub openapi_prefix: Option<String>,
    /// A GraphQL object's resolvers: `async-graphql` (`#[Object]`) or `juniper`
    /// (`#[graphql_object]`).
    pub graphql: Option<&'static str>,
}

/// An attribute that registers a route: `#[post("/x")]`, `#[route("/x", method = "PUT")]`,
/// `#[route(POST, uri = "/x")]`.
#[derive(Debug, Clone)]
pub struct RouteAttr {
    pub path: Vec<String>,
    /// String literals in positional places.
    pub lits: Vec<String>,
    /// `key = "value"` pairs.
    pub pairs: Vec<(String, String)>,
    /// Bare identifiers (`POST` in rocket's `#[route(POST, ..)]`).
    pub idents: Vec<String>,
    pub line: Line,
}

#[derive(Debug)]
pub struct Func {
    pub name: String,
    pub line: Line,
    /// `async fn`: its work waits on something outside the process.
    pub is_async: bool,
    pub route_attrs: Vec<RouteAttr>,
    pub params: Vec<Param>,
    pub ret: Option<Ty>,
    pub body: Vec<Stmt>,
    /// `#[test]`, `#[tokio::test]`, `#[cfg(test)]`, …: its routers are fixtures of a test.
    pub is_test: bool,
    /// The body builds or configures routes (a cheap filter before evaluating it).
    pub builds_routes: bool,
    /// What the function does with an idempotency key, when it is key code.
    pub key_obs: Vec<super::keyscan::KeyRaw>,
    /// The context of each call in key code, for what a callee does there.
    pub key_calls: Vec<super::keyscan::KeyCallCtx>,
    /// Retry loops and closures passed to retry wrappers in the body.
    pub retry_spans: Vec<RetrySpan>,
    /// Names the function binds more than once (a parameter or `let` shadowed, a name a
    /// pattern binds again in a `match` arm, a closure or a loop) or assigns to: what such a
    /// name holds at one place is not what its first binding says.
    pub rebound: Vec<String>,
    /// Parameters a `let` binds again or an assignment replaces (`let command =
    /// upgrade(command)`): past that, the name no longer holds the caller's value.
    pub shadowed: Vec<String>,
    /// The line of the first statement of the body that may return before the body's end (a
    /// `return` in it, outside closures), other than one that returns only when a parameter is
    /// `None` (`let Some(name) = name else { return Ok(()) };`): a test after it does not run
    /// on every call.
    pub early_return: Option<Line>,
}

/// Lines of a retry construct: a loop that counts attempts, or a closure given to a retry
/// wrapper (`backoff::future::retry`, `tokio_retry::Retry::spawn`, backon's `.retry(..)`).
#[derive(Debug, Clone)]
pub struct RetrySpan {
    pub start: Line,
    pub end: Line,
    /// "the retry loop", "the `Retry::spawn` closure".
    pub what: String,
}

impl RetrySpan {
    pub fn contains(&self, line: Line) -> bool {
        self.start <= line && line <= self.end
    }
}

#[derive(Debug, Clone)]
pub struct Param {
    /// `self` for a receiver; `_` when the pattern binds no single name.
    pub name: String,
    pub ty: Option<Ty>,
    /// The pattern destructures the type (`Json(body): Json<T>`): `name` has its first generic
    /// argument's type.
    pub unwrap: bool,
    /// The pattern destructures a struct, the parameter's type (`CallContext { mut repo, clock,
    /// .. }: CallContext`) or, under `unwrap`, its first generic argument (`State(AppState { db,
    /// .. }): State<AppState>`): each field and the name it binds, which has the field's type.
    pub fields: Vec<(String, String)>,
}

/// A type as far as resolution needs it: its path and generic arguments. References, `mut`,
/// parentheses are dropped; `impl Trait`/`dyn Trait` keep the trait's path.
#[derive(Debug, Clone, Default)]
pub struct Ty {
    pub path: Vec<String>,
    pub args: Vec<Ty>,
}

impl Ty {
    pub fn last(&self) -> &str {
        self.path.last().map(String::as_str).unwrap_or("")
    }
    /// This type and every type in its generic arguments, outermost first.
    pub fn all(&self) -> Vec<&Ty> {
        let mut out = vec![self];
        let mut i = 0;
        while i < out.len() && out.len() < 64 {
            out.extend(out[i].args.iter());
            i += 1;
        }
        out
    }
}

#[derive(Debug)]
pub enum Stmt {
    Let {
        /// Every name the pattern binds.
        names: Vec<String>,
        // boxed, as is `init`: a statement is then no larger than an expression statement
        ty: Option<Box<Ty>>,
        init: Option<Box<Ex>>,
        /// The `else` of a `let .. else`.
        diverge: Option<Box<Ex>>,
        /// A struct pattern's fields and the names they bind (`let Options { mounts, cfg: c } =
        /// ..` gives `mounts`→`mounts`, `cfg`→`c`; an enum variant's are `Variant.field`,
        /// `Variant.0`); empty for other patterns.
        fields: Vec<(String, String)>,
        /// The initialiser ends in `?` (see [`Stmt::Expr`]).
        fails: bool,
        /// The initialiser compares a number with a bound other than none or one (`let full =
        /// count(..).await? >= 10`): what it holds says nothing of whether a row exists.
        quota: bool,
    },
    /// An expression statement, and whether a failure of it fails the function: its expression
    /// ends in `?` (`insert(..).await?;`, `query.execute(db).await.map_err(e)?.rows_affected()`),
    /// so an error leaves the function before the statements after it.
    Expr(Ex, bool),
    Item(Box<Item>),
}

/// How an `if`'s test reads a field of a local variable, and how its branches end.
#[derive(Debug)]
pub struct FieldTest {
    pub var: String,
    pub field: String,
    /// The test as `facts::Effect::state_guard` writes it: `truthy`, `falsy`, `eq:LIT`, `ne:LIT`
    /// (an enum member as `Type.Member`).
    pub test: String,
    /// How the test is joined to others in the condition: `Some(true)` by `||` (the test is
    /// false wherever the `else` runs), `Some(false)` by `&&` (true wherever the `then` runs),
    /// `None` when it is the whole condition.
    pub any: Option<bool>,
    pub then_exits: bool,
    pub then_refuses: bool,
    pub line: Line,
    /// The lowered `if`: `[cond, then, else?]`.
    pub parts: Vec<Ex>,
}

/// A `match` of a local variable (or parameter) on the variants of an enum (`match request {
/// NodeRequest::Keysend { .. } => .., NodeRequest::OpenChannels { .. } => .., _ => .. }`): each
/// arm runs only when the value is one of the variants its pattern names.
#[derive(Debug)]
pub struct VariantMatch {
    pub var: String,
    /// The enum as the patterns name it (`NodeRequest`, `Self`).
    pub enum_name: String,
    /// The variants each arm's pattern names (`A | B` names two); `None` for a catch-all arm
    /// (`_`, a binding), which runs for every variant no arm before it names.
    pub arms: Vec<Option<Vec<String>>>,
    /// Each arm has a guard (`A::B { .. } if ..`): it may not run for the variants it names.
    pub guarded: Vec<bool>,
    /// The lowered scrutinee, then each arm (its guard and body), in order.
    pub parts: Vec<Ex>,
    pub line: Line,
}

#[derive(Debug)]
pub enum Ex {
    /// A string literal.
    Lit(String),
    Path(Vec<String>, Line),
    Call(Box<Ex>, Vec<Ex>, Line),
    /// `receiver.name(args)`; the line is the method name's.
    Method(Box<Ex>, String, Vec<Ex>, Line),
    /// `path!(..)`: string literals found at its top level, and the expressions that could be
    /// read out of its tokens.
    Macro {
        // boxed slices, as in `Struct`: an expression is then no larger than a method call
        path: Box<[String]>,
        lits: Vec<String>,
        args: Box<[Ex]>,
        line: Line,
    },
    Closure {
        params: Vec<Param>,
        body: Box<Ex>,
        line: Line,
    },
    Field(Box<Ex>, String),
    Block(Vec<Stmt>),
    /// Arrays and tuples.
    List(Vec<Ex>),
    /// `Type { field: value, .. }`: the path, the values (then the `..rest`), the field names
    /// (one per named value, in order).
    Struct(Box<[String]>, Box<[Ex]>, Box<[String]>),
    /// An expression whose result a `match`, `if let` or `.map_err(..)` inspects for a unique
    /// violation (`SqlErr::UniqueConstraintViolation`, `DatabaseErrorKind::UniqueViolation`,
    /// `is_unique_violation()`): a duplicate insert in it is answered, not a 500.
    Caught(Box<Ex>),
    /// What runs only when a `Result` failed: an `Err(..)` arm, the body of `if let Err(..)`,
    /// the `else` of `let Ok(..) = .. else`, a `map_err`/`or_else` closure.
    Failure(Box<Ex>),
    /// `if` on a test of a local variable that may hold a claim's outcome (`rows == 0`,
    /// `!won`, `reply.is_none()`): whether the test holds when the claim failed, whether the
    /// `then` branch leaves the function, the `if`'s line, and the lowered `if`
    /// (`Other([cond, then, else?])`).
    Gate {
        var: String,
        failed_when_true: bool,
        then_exits: bool,
        /// The `then` branch leaves the function with an error (`return Err(..)`, `Err(..)?`,
        /// `bail!`): a request that takes it is refused.
        then_refuses: bool,
        line: Line,
        parts: Vec<Ex>,
    },
    /// `if` on a test of a field of a local variable (`order.status != "paid"`,
    /// `invite.accepted_at.is_some()`, `!user.active`): see [`FieldTest`].
    FieldTest(Box<FieldTest>),
    /// `a = b`
    Assign(Box<Ex>, Box<Ex>),
    /// `match` on a local variable by the variants of an enum: see [`VariantMatch`].
    Variants(Box<VariantMatch>),
    /// Anything else, with its sub-expressions (control flow, operators, …).
    Other(Vec<Ex>),
}

impl Ex {
    pub fn line(&self) -> Line {
        match self {
            Ex::Path(_, l) | Ex::Call(_, _, l) | Ex::Method(_, _, _, l) => *l,
            Ex::Macro { line, .. } | Ex::Closure { line, .. } => *line,
            Ex::Field(e, _) | Ex::Caught(e) | Ex::Failure(e) => e.line(),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    /// The lowered files of a large crate hold millions of expressions: each stays the size of a
    /// method call (no variant carries three vectors inline).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn an_expression_is_no_larger_than_a_method_call() {
        assert_eq!(std::mem::size_of::<super::Ex>(), 64);
    }
}
