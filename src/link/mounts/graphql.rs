//! GraphQL mutations in TypeScript/JavaScript: every resolver of a field of the mutation type is
//! one endpoint, `POST <graphql path>#<field>` (`protocol: "graphql"`), its resolver the handler,
//! so that effects, keys and rules apply to it as to any route.
//!
//! - NestJS (`@nestjs/graphql`) and type-graphql: a `@Resolver()` class; each method decorated
//!   `@Mutation(() => T)` is a field named by the decorator's `name` option (`@Mutation(() => T,
//!   { name: 'x' })`), or its string argument (schema first: `@Mutation('x')`), else the method's
//!   name. Guards and interceptors (`@UseGuards`, `@UseInterceptors`) on the class and the method,
//!   and the bootstrap's global ones, are its middleware. Nest serves GraphQL at the `path` of
//!   `GraphQLModule.forRoot({ .. })` (or what `forRootAsync`'s `useFactory` / `useClass` returns),
//!   `/graphql` by default; the global prefix applies only with `useGlobalPrefix: true`. Each
//!   `forRoot` is a server; one whose options read a parameter of the function it is written in
//!   (`static register(options)` of a dynamic module: `path: options.path`) is one server per call
//!   of that function, read with that call's arguments. A server with `include: [Module, ..]`
//!   serves only the resolver classes those modules' `@Module({ providers })` list (spread arrays
//!   and `{ useClass }` read), one without every resolver; a resolver no server serves is listed
//!   at `/graphql`, incomplete, with a diagnostic.
//! - Resolver maps (`{ Mutation: { createOrder: (parent, args, ctx) => .. } }`) given to a
//!   server: Apollo Server (`new ApolloServer({ resolvers | schema })`, at the path
//!   `app.use(path, expressMiddleware(server))` mounts it under, `applyMiddleware({ path })`
//!   (`/graphql` by default), or `/` for `startStandaloneServer`), graphql-yoga (`createYoga({
//!   schema, graphqlEndpoint })`, `/graphql` by default), Mercurius (`register(mercurius, { schema,
//!   resolvers, path })`, `/graphql` by default, under the plugin's prefix), Express middleware
//!   given the schema at the path `app.use` mounts it under (Apollo Server 1's `graphqlExpress({
//!   schema })` or `graphqlExpress((req) => ({ schema, context }))`, `express-graphql`'s
//!   `graphqlHTTP({ schema })`). A schema is `makeExecutableSchema` / `createSchema` /
//!   `buildSubgraphSchema({ typeDefs, resolvers })`. The mutation type is `Mutation` unless the
//!   `typeDefs` beside the resolvers (or Mercurius' SDL `schema`) name another in `schema {
//!   mutation: T }`: read from string and template literals, `gql`-tagged templates, arrays of
//!   them and what a project function returns, through imports (`.graphql` files are not read).
//!   Resolver maps are followed through imports, arrays, merges (`merge(a, b)`,
//!   `mergeResolvers([a, b])`, `Object.assign`) and functions that return them; a member may be a
//!   reference to a function written elsewhere, or an object with a `resolve` function.
//! - Pothos (`@pothos/core`): `builder.mutationField('x', (t) => t.field({ resolve }))`,
//!   `builder.mutationFields((t) => ({ x: t.field({ resolve }) }))`, `builder.mutationType({
//!   fields: (t) => ({ .. }) })`.
//!
//! Resolver maps no server is seen to serve (exported objects with a `Mutation` member), type-graphql
//! classes and Pothos fields are served at the path of the tree's GraphQL server when there is one,
//! else at `/graphql`, with a diagnostic. A path that is not a literal is a diagnostic and
//! `/graphql` is used; a mutation whose resolver cannot be located is listed and said so.

use super::{Mounter, RawRoute, code, normalize_path};
use crate::facts::{Diagnostic, Protocol};
use crate::link::resolve::{ModId, Resolved, Resolver};
use crate::program::{DecoratorFacts, FnId, Module, Val};
use std::collections::{BTreeMap, BTreeSet};

const DEFAULT_PATH: &str = "/graphql";
/// Values followed deeper than this are not resolver maps the audit can read.
const MAX_DEPTH: usize = 16;
/// The most values read for one list of type definitions or of providers (lists that hold each
/// other twice over would otherwise be read exponentially often).
const MAX_VISITS: usize = 4096;

/// Apollo's Express integrations.
fn is_express_middleware(spec: &str, name: &str) -> bool {
    name == "expressMiddleware"
        && (spec.starts_with("@apollo/server") || spec.starts_with("@as-integrations/express"))
}

fn is_apollo_server(spec: &str, name: &str) -> bool {
    name == "ApolloServer" && (spec == "@apollo/server" || spec.starts_with("apollo-server"))
}

/// The name a package binding or one of its members goes by (`merge` of `lodash`, `ApolloServer`).
fn package_name(r: &Resolved) -> Option<(&str, &str)> {
    let Resolved::Package { spec, name, path } = r else {
        return None;
    };
    let last = path
        .last()
        .or(name.as_ref().filter(|n| *n != "default"))
        .map(String::as_str)
        .unwrap_or(spec.as_str());
    Some((spec.as_str(), last))
}

/// Express (and Connect) middleware that serves the schema of its options (an object, or a
/// function of the request that returns one): Apollo Server 1's `graphqlExpress` /
/// `graphqlConnect` (`apollo-server-express`), `graphqlHTTP` of `express-graphql` (its default
/// export before 0.12).
fn is_schema_middleware(spec: &str, name: &str) -> bool {
    (spec == "apollo-server-express" && matches!(name, "graphqlExpress" | "graphqlConnect"))
        || (spec == "express-graphql" && matches!(name, "graphqlHTTP" | "express-graphql"))
}

/// Is `v`, mounted with `use` or `register`, a GraphQL server the inventory reads (Apollo's
/// `expressMiddleware(server)`, `graphqlExpress(options)`, `graphqlHTTP(options)`, the
/// Mercurius plugin)?
pub(crate) fn mounted_server(res: &Resolver, m: ModId, v: &Val) -> bool {
    let r = match v {
        Val::Call(callee, _) => res.resolve(m, callee),
        v => res.resolve(m, v),
    };
    match package_name(&r) {
        Some((spec, name)) => {
            is_express_middleware(spec, name)
                || is_schema_middleware(spec, name)
                || spec == "mercurius"
        }
        None => false,
    }
}

/// One GraphQL server: where its resolver maps are and the path it serves.
struct Server {
    module: ModId,
    line: u32,
    path: String,
    /// False when `path` is a guess (see [`crate::facts::Endpoint`]).
    complete: bool,
    framework: &'static str,
    /// The resolver maps and schemas it is given.
    schema: Vec<(ModId, Val)>,
    /// Its `context` option (an object, or the function that makes one per request): what
    /// resolvers receive as their third parameter.
    context: Option<(ModId, Val)>,
    /// The middleware in front of it (the app's, where it is mounted on one).
    middleware: Vec<(ModId, Val)>,
}

/// The `context` option among a server's or an integration's options.
fn context_of(opts: &Option<(ModId, Vec<(String, Val)>)>) -> Option<(ModId, Val)> {
    opts.as_ref()
        .and_then(|(om, o)| field(o, "context").map(|c| (*om, c.clone())))
}

/// A server's options, with the module they are written in: their `schema`, `resolvers` and
/// `typeDefs` are read by [`Mounter::gql_maps`].
fn schema_of(opts: &Option<(ModId, Vec<(String, Val)>)>) -> Vec<(ModId, Val)> {
    opts.iter()
        .map(|(om, o)| (*om, Val::Obj(o.clone())))
        .collect()
}

/// A value with the module it is written in.
type At = (ModId, Val);
/// An object's fields with the module they are written in.
type Fields = (ModId, Vec<(String, Val)>);
/// A GraphQL path, and whether it was read (false: a guess, or under a prefix that was not).
type GqlPath = (String, bool);
/// How an Apollo server is served: the server's `new` call, the path, the framework, the context
/// and the middleware in front of it.
type Served = ((ModId, u32), GqlPath, &'static str, Option<At>, Vec<At>);

/// A mutation field found in a resolver map.
struct Field {
    name: String,
    /// The type it is a field of: the schema's mutation type (`Mutation` unless the schema
    /// names another).
    ty: String,
    resolver: (ModId, Val),
    /// Where the map that holds it is written (when the resolver is not located).
    at: (ModId, u32),
}

/// A NestJS GraphQL server (`GraphQLModule.forRoot`).
struct NestServer {
    path: GqlPath,
    /// The resolver classes of the modules its `include` lists (their `providers`); None without
    /// `include`: every resolver of the application.
    serves: Option<BTreeSet<(ModId, usize)>>,
}

/// A call of a project function: the function (module, id), and the module and arguments of the
/// call.
struct Caller {
    function: (ModId, FnId),
    module: ModId,
    args: Vec<Val>,
}

/// The paths in order, each once: complete only where every server at it is.
fn merge_paths(paths: &mut Vec<GqlPath>) {
    paths.sort();
    paths.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 &= later.1;
        }
        same
    });
}

/// The parameter a value reads, and the members read from it: `options.path` in a function
/// `f(options)` is (f, 0, [`path`]).
fn param_root(v: &Val) -> Option<(FnId, usize, Vec<&str>)> {
    let mut names = Vec::new();
    let mut cur = v;
    for _ in 0..MAX_DEPTH {
        match cur {
            Val::Member(inner, name) => {
                names.push(name.as_str());
                cur = inner;
            }
            Val::Param(f, i) => {
                names.reverse();
                return Some((*f, *i, names));
            }
            _ => return None,
        }
    }
    None
}

impl Mounter<'_> {
    /// Follows imports to the value exported (`import { resolvers } from './resolvers'`).
    pub(super) fn deref_export(&self, mut m: ModId, mut v: Val) -> (ModId, Val) {
        for _ in 0..MAX_DEPTH {
            let next = match &v {
                Val::Import {
                    spec,
                    name: Some(name),
                } => self
                    .res
                    .resolve_spec(m, spec)
                    .and_then(|t| export_of(&self.modules()[t], name).map(|v| (t, v.clone()))),
                Val::Member(inner, name) => match inner.as_ref() {
                    Val::Import { spec, name: None } => self
                        .res
                        .resolve_spec(m, spec)
                        .and_then(|t| export_of(&self.modules()[t], name).map(|v| (t, v.clone()))),
                    _ => None,
                },
                _ => None,
            };
            match next {
                Some(n) => (m, v) = n,
                None => break,
            }
        }
        (m, v)
    }

    /// The `new X(..)` call a value is (a server made in this file or exported from another).
    fn new_site(&self, m: ModId, v: &Val) -> Option<(ModId, u32)> {
        match self.deref_export(m, v.clone()) {
            (m, Val::New(_, line)) => Some((m, line)),
            _ => None,
        }
    }

    /// An options object as fields, in the module they are written in.
    fn gql_options(&self, m: ModId, v: Option<&Val>) -> Option<(ModId, Vec<(String, Val)>)> {
        match self.res.resolve(m, v?) {
            Resolved::Obj(om, fields) => Some((om, fields)),
            _ => None,
        }
    }

    /// A path option: its literal (or the code's default for an environment read, said so), else
    /// `/graphql` with a diagnostic, marked incomplete.
    fn gql_path(
        &mut self,
        m: ModId,
        v: Option<&Val>,
        (at, line): (ModId, u32),
        what: &str,
    ) -> GqlPath {
        let Some(v) = v else {
            return (DEFAULT_PATH.to_string(), true);
        };
        let text = crate::link::display(v);
        match self.strings_at_in(m, v, (at, line), what) {
            Some(list) if !list.is_empty() => (normalize_path("", &list[0]), true),
            _ => {
                let file = self.modules()[at].file.clone();
                let shown = if text.is_empty() {
                    String::new()
                } else {
                    format!(" {}", code(&text))
                };
                self.diagnostics.push(Diagnostic::new(
                    file,
                    line,
                    format!(
                        "{what}{shown} is not statically known: its mutations are listed at `{DEFAULT_PATH}`, marked `path_complete: false`"
                    ),
                ));
                (DEFAULT_PATH.to_string(), false)
            }
        }
    }

    /// Every GraphQL server of the tree that takes resolver maps.
    fn gql_servers(&mut self) -> Vec<Server> {
        let modules = self.modules();
        let mut out = Vec::new();
        // Apollo servers made in the tree: (module, line, options).
        let mut apollo: Vec<(ModId, u32, Option<Val>)> = Vec::new();
        // How each is served: (server, path, framework).
        let mut served: Vec<Served> = Vec::new();
        for (m, module) in modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            for facts in &module.functions {
                for cs in &facts.calls {
                    let r = self.res.resolve(m, &cs.callee);
                    let Some((spec, name)) = package_name(&r) else {
                        continue;
                    };
                    if cs.is_new && is_apollo_server(spec, name) {
                        apollo.push((m, cs.line, cs.args.first().cloned()));
                    } else if spec == "graphql-yoga" && name == "createYoga" {
                        let opts = self.gql_options(m, cs.args.first());
                        let (path, complete) = match &opts {
                            Some((om, o)) => {
                                let p = field(o, "graphqlEndpoint").cloned();
                                self.gql_path(
                                    *om,
                                    p.as_ref(),
                                    (m, cs.line),
                                    "the `graphqlEndpoint` of `createYoga`",
                                )
                            }
                            None => (DEFAULT_PATH.to_string(), true),
                        };
                        out.push(Server {
                            module: m,
                            line: cs.line,
                            path,
                            complete,
                            framework: "graphql-yoga",
                            context: context_of(&opts),
                            schema: schema_of(&opts),
                            middleware: vec![],
                        });
                    } else if name == "startServerAndCreateNextHandler"
                        && spec.starts_with("@as-integrations/next")
                        && let Some(site) = cs.args.first().and_then(|s| self.new_site(m, s))
                        && let Some(route) = crate::link::next::file_route(self.res, &module.file)
                    {
                        // Apollo in a Next.js route file: served at the file's path.
                        let opts = self.gql_options(m, cs.args.get(1));
                        let path = route.path().to_string();
                        self.gql_next.push((m, path.clone()));
                        served.push((site, (path, true), "nextjs", context_of(&opts), vec![]));
                    } else if name == "startStandaloneServer"
                        && spec.starts_with("@apollo/server")
                        && let Some(site) = cs.args.first().and_then(|s| self.new_site(m, s))
                    {
                        let opts = self.gql_options(m, cs.args.get(1));
                        served.push((
                            site,
                            ("/".into(), true),
                            "apollo-server",
                            context_of(&opts),
                            vec![],
                        ));
                    }
                    // Apollo Server 3: `server.applyMiddleware({ app, path })`.
                    if let Val::Member(receiver, method) = &cs.callee
                        && method == "applyMiddleware"
                        && let Some(site) = self.new_site(m, receiver)
                    {
                        let p = self
                            .gql_options(m, cs.args.first())
                            .and_then(|(om, o)| field(&o, "path").map(|p| (om, p.clone())));
                        let path = match p {
                            Some((om, p)) => self.gql_path(
                                om,
                                Some(&p),
                                (m, cs.line),
                                "the `path` of `applyMiddleware`",
                            ),
                            None => (DEFAULT_PATH.to_string(), true),
                        };
                        served.push((site, path, "express", None, vec![]));
                    }
                }
            }
        }
        for mt in self.mounts.clone() {
            let (callee, args) = match &mt.value {
                Val::Call(callee, args) => (self.res.resolve(mt.module, callee), args.clone()),
                v => (self.res.resolve(mt.module, v), vec![]),
            };
            let Some((spec, name)) = package_name(&callee) else {
                continue;
            };
            if is_express_middleware(spec, name) {
                if let Some(site) = args.first().and_then(|s| self.new_site(mt.module, s)) {
                    let opts = self.gql_options(mt.module, args.get(1));
                    served.push((
                        site,
                        (mt.prefix.clone(), mt.prefix_complete),
                        mt.framework,
                        context_of(&opts),
                        mt.middleware.clone(),
                    ));
                }
            } else if is_schema_middleware(spec, name) {
                // `graphqlExpress({ schema })`, `graphqlExpress((req) => ({ schema, context }))`
                let opts = args
                    .first()
                    .and_then(|o| self.res.object_or_returned(mt.module, o));
                if opts.is_none() {
                    self.diagnostics.push(Diagnostic::new(
                        self.modules()[mt.module].file.clone(),
                        mt.line,
                        format!(
                            "the options of `{name}` cannot be read: the schema it serves at `{}` is not listed",
                            mt.prefix
                        ),
                    ));
                }
                out.push(Server {
                    module: mt.module,
                    line: mt.line,
                    path: mt.prefix.clone(),
                    complete: mt.prefix_complete,
                    framework: mt.framework,
                    context: context_of(&opts),
                    schema: schema_of(&opts),
                    middleware: mt.middleware.clone(),
                });
            } else if spec == "mercurius" {
                let opts = self.gql_options(mt.module, mt.options.as_ref());
                let (path, complete) = match &opts {
                    Some((om, o)) => {
                        let p = field(o, "path").cloned();
                        self.gql_path(
                            *om,
                            p.as_ref(),
                            (mt.module, mt.line),
                            "the `path` of the Mercurius plugin",
                        )
                    }
                    None => (DEFAULT_PATH.to_string(), true),
                };
                out.push(Server {
                    module: mt.module,
                    line: mt.line,
                    path: normalize_path(&mt.prefix, &path),
                    complete: complete && mt.prefix_complete,
                    framework: "mercurius",
                    context: context_of(&opts),
                    schema: schema_of(&opts),
                    middleware: mt.middleware.clone(),
                });
            }
        }
        for (m, line, opts) in apollo {
            let opts = self.gql_options(m, opts.as_ref());
            // Apollo Server 3 takes `context` with the server's own options.
            let own_context = context_of(&opts);
            let schema: Vec<(ModId, Val)> = schema_of(&opts);
            let mut paths: Vec<(GqlPath, &'static str, Option<At>, Vec<At>)> = served
                .iter()
                .filter(|(site, ..)| *site == (m, line))
                .map(|(_, p, f, c, mw)| {
                    (
                        p.clone(),
                        *f,
                        c.clone().or_else(|| own_context.clone()),
                        mw.clone(),
                    )
                })
                .collect();
            paths.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
            paths.dedup_by(|a, b| (&a.0, a.1) == (&b.0, b.1));
            if paths.is_empty() {
                self.diagnostics.push(Diagnostic::new(
                    modules[m].file.clone(),
                    line,
                    format!("this Apollo server is not seen mounted (`expressMiddleware`, `applyMiddleware`, `startStandaloneServer`, `startServerAndCreateNextHandler`): its mutations are listed at `{DEFAULT_PATH}`, marked `path_complete: false`"),
                ));
                paths.push((
                    (DEFAULT_PATH.to_string(), false),
                    "apollo-server",
                    own_context.clone(),
                    vec![],
                ));
            }
            for ((path, complete), framework, context, middleware) in paths {
                out.push(Server {
                    module: m,
                    line,
                    path,
                    complete,
                    framework,
                    schema: schema.clone(),
                    context,
                    middleware,
                });
            }
        }
        out
    }

    /// The mutation fields a resolver map (or schema, list, merge of them) holds; `seen` holds
    /// the maps already read. `root` is the name of the mutation type in effect (`Mutation`, or
    /// what the `schema { mutation: .. }` of the type definitions beside the map names).
    fn gql_maps(
        &self,
        (m, v): (ModId, &Val),
        root: &str,
        d: usize,
        seen: &mut BTreeSet<(ModId, String)>,
        out: &mut Vec<Field>,
    ) {
        if d > MAX_DEPTH {
            return;
        }
        let (m, v) = self.deref_export(m, v.clone());
        match &v {
            Val::Arr(items) => {
                for i in items {
                    self.gql_maps((m, i), root, d + 1, seen, out);
                }
            }
            // graphql-js: `new GraphQLSchema({ query, mutation })`.
            Val::New(ctor, line) => {
                if self.is_graphql_js(m, ctor, "GraphQLSchema")
                    && let Some(cs) = self.modules()[m].new_call(*line)
                    && let Some((om, opts)) = self.gql_options(m, cs.args.first())
                    && let Some(t) = field(&opts, "mutation")
                    && let Some(fields) = self.object_type_fields(om, t)
                {
                    self.graphql_js_fields(fields, (m, *line), d + 1, out);
                }
            }
            Val::Obj(fields) => {
                if !seen.insert((m, format!("{root}:{fields:?}"))) {
                    return;
                }
                // `{ typeDefs, resolvers }` (`makeExecutableSchema`, `new ApolloServer`, a
                // module of a subgraph): the mutation type the type definitions name.
                let named = self.mutation_root(m, fields);
                let root = named.as_deref().unwrap_or(root);
                for (k, fv) in fields {
                    match k.as_str() {
                        k if k == root => {
                            let start = out.len();
                            self.gql_mutation_map((m, fv), root, d + 1, out);
                            self.namespaced(m, fields, root, start, d, out);
                        }
                        // `{ typeDefs, resolvers }` modules (`buildSubgraphSchema([..])`), a
                        // server's options (`{ schema }`, `{ typeDefs, resolvers }`).
                        "resolvers" | "schema" => self.gql_maps((m, fv), root, d + 1, seen, out),
                        _ => {}
                    }
                }
            }
            Val::Call(callee, args) => match self.res.resolve(m, callee) {
                // `makeExecutableSchema({ typeDefs, resolvers })`, `merge(a, b)`,
                // `mergeResolvers([a, b])`: what the arguments hold.
                Resolved::Package { .. } | Resolved::Opaque => {
                    for a in args {
                        self.gql_maps((m, a), root, d + 1, seen, out);
                    }
                }
                // A function of the project that builds the map: what it returns.
                Resolved::Func(fm, f) => {
                    for r in self.modules()[fm].functions[f].returns.clone() {
                        self.gql_maps((fm, &r), root, d + 1, seen, out);
                    }
                }
                _ => {}
            },
            other => {
                if let Resolved::Obj(om, fields) = self.res.resolve(m, other) {
                    self.gql_maps((om, &Val::Obj(fields)), root, d + 1, seen, out);
                }
            }
        }
    }

    /// The mutation type named by the `schema { mutation: T }` definition of an object's type
    /// definitions: its `typeDefs` (graphql-tools, Apollo, graphql-yoga) or, for Mercurius, its
    /// `schema` given as SDL. None when they cannot be read or name none (then the type is
    /// `Mutation`, GraphQL's default, or the one already in effect).
    fn mutation_root(&self, m: ModId, fields: &[(String, Val)]) -> Option<String> {
        ["typeDefs", "schema"].into_iter().find_map(|k| {
            let (mut texts, mut left) = (Vec::new(), MAX_VISITS);
            self.sdl_texts((m, field(fields, k)?), 0, &mut left, &mut texts);
            texts.iter().find_map(|t| schema_mutation_type(t))
        })
    }

    /// The SDL texts a type definitions value holds: string and template literals (the literal
    /// parts of a template), `gql`-tagged templates, arrays of them, `mergeTypeDefs([..])` and
    /// what a project function returns, followed through imports.
    fn sdl_texts(&self, (m, v): (ModId, &Val), d: usize, left: &mut usize, out: &mut Vec<String>) {
        if d > MAX_DEPTH || *left == 0 {
            return;
        }
        *left -= 1;
        let (m, v) = self.deref_export(m, v.clone());
        match &v {
            Val::Str(s) => out.push(s.clone()),
            Val::Arr(items) | Val::Template(items) => {
                for i in items {
                    self.sdl_texts((m, i), d + 1, left, out);
                }
            }
            Val::Call(callee, args) => match self.res.resolve(m, callee) {
                Resolved::Package { .. } | Resolved::Opaque => {
                    for a in args {
                        self.sdl_texts((m, a), d + 1, left, out);
                    }
                }
                Resolved::Func(fm, f) => {
                    for r in &self.modules()[fm].functions[f].returns {
                        self.sdl_texts((fm, r), d + 1, left, out);
                    }
                }
                _ => {}
            },
            Val::Obj(_) | Val::Func(_) | Val::Unknown => {}
            other => {
                if let Resolved::Str(s) = self.res.resolve(m, other) {
                    out.push(s);
                }
            }
        }
    }

    /// Namespaced mutations (`Mutation: { groups() { return {} } }` beside `GroupMutation: {
    /// create(..) {..} }`, with `groups: GroupMutation` in the schema): a `Mutation` field whose
    /// resolver only returns an empty object is a namespace, and the fields of the map of the same
    /// resolver object named for it (`<Type>Mutation`, the one there is, or the one whose name the
    /// field's starts with) are the mutations, named `groups.create`. `fields[start..]` of `out`
    /// are the `Mutation` map's.
    fn namespaced(
        &self,
        m: ModId,
        map: &[(String, Val)],
        root: &str,
        start: usize,
        d: usize,
        out: &mut Vec<Field>,
    ) {
        let types: Vec<&(String, Val)> = map
            .iter()
            .filter(|(k, _)| k != root && k.len() > "Mutation".len() && k.ends_with("Mutation"))
            .collect();
        if types.is_empty() {
            return;
        }
        let mut i = start;
        while i < out.len() {
            let f = &out[i];
            let empty = match self.res.resolve(f.resolver.0, &f.resolver.1) {
                Resolved::Func(fm, g) => {
                    let returns = &self.modules()[fm].functions[g].returns;
                    !returns.is_empty()
                        && returns
                            .iter()
                            .all(|r| matches!(r, Val::Obj(o) if o.is_empty()))
                }
                _ => false,
            };
            let stem = |t: &str| t.trim_end_matches("Mutation").to_ascii_lowercase();
            let name = f.name.to_ascii_lowercase();
            let ty = match types.as_slice() {
                [one] => Some(*one),
                many => many
                    .iter()
                    .filter(|(t, _)| name.starts_with(&stem(t)))
                    .max_by_key(|(t, _)| t.len())
                    .copied(),
            };
            let (Some((_, tv)), true) = (ty, empty) else {
                i += 1;
                continue;
            };
            let mut inner = Vec::new();
            self.gql_mutation_map((m, tv), root, d + 1, &mut inner);
            let ns = f.name.clone();
            let n = inner.len();
            out.splice(
                i..=i,
                inner.into_iter().map(|mut g| {
                    g.name = format!("{ns}.{}", g.name);
                    g
                }),
            );
            i += n;
        }
    }

    /// The members of the map of mutation type `root`: each a field.
    fn gql_mutation_map(&self, (m, v): (ModId, &Val), root: &str, d: usize, out: &mut Vec<Field>) {
        if d > MAX_DEPTH {
            return;
        }
        let (m, v) = self.deref_export(m, v.clone());
        match &v {
            Val::Obj(fields) => {
                for (k, fv) in fields {
                    // `{ ...orderMutations, .. }`: the members of the map spread here
                    if k == crate::program::SPREAD {
                        self.gql_mutation_map((m, fv), root, d + 1, out);
                        continue;
                    }
                    // `createOrder: { resolve(parent, args) {..} }`
                    let resolver = match self.res.resolve(m, fv) {
                        Resolved::Obj(om, inner) => match field(&inner, "resolve") {
                            Some(r) => (om, r.clone()),
                            None => (m, fv.clone()),
                        },
                        _ => (m, fv.clone()),
                    };
                    out.push(Field {
                        name: k.clone(),
                        ty: root.to_string(),
                        resolver,
                        at: (m, 0),
                    });
                }
            }
            Val::Call(callee, args) => match self.res.resolve(m, callee) {
                Resolved::Package { .. } | Resolved::Opaque => {
                    for a in args {
                        self.gql_mutation_map((m, a), root, d + 1, out);
                    }
                }
                Resolved::Func(fm, f) => {
                    for r in self.modules()[fm].functions[f].returns.clone() {
                        self.gql_mutation_map((fm, &r), root, d + 1, out);
                    }
                }
                _ => {}
            },
            other => {
                if let Resolved::Obj(om, fields) = self.res.resolve(m, other) {
                    self.gql_mutation_map((om, &Val::Obj(fields)), root, d + 1, out);
                }
            }
        }
    }

    /// Is `ctor` graphql-js's class `name` (`GraphQLSchema`, `GraphQLObjectType`)?
    fn is_graphql_js(&self, m: ModId, ctor: &Val, name: &str) -> bool {
        matches!(package_name(&self.res.resolve(m, ctor)), Some((spec, n)) if spec == "graphql" && n == name)
    }

    /// Does function `f` of module `fm` make a graphql-js object type of its first parameter (a
    /// project's shorthand, `Object: (config) => new GraphQLObjectType(config)`)?
    fn makes_object_type(&self, fm: ModId, f: FnId) -> bool {
        self.modules()[fm].functions[f].calls.iter().any(|c| {
            c.is_new
                && matches!(c.args.first(), Some(Val::Param(pf, 0)) if *pf == f)
                && self.is_graphql_js(fm, &c.callee, "GraphQLObjectType")
        })
    }

    /// The options of a graphql-js object type: `new GraphQLObjectType({ name, fields })`, or a
    /// call of a project function that makes one of its argument.
    fn object_type_options(&self, m: ModId, v: &Val) -> Option<Fields> {
        let (m, v) = self.deref_export(m, v.clone());
        match &v {
            Val::New(ctor, line) if self.is_graphql_js(m, ctor, "GraphQLObjectType") => {
                let args = &self.modules()[m].new_call(*line)?.args;
                self.gql_options(m, args.first())
            }
            Val::Call(callee, args) => match self.res.resolve(m, callee) {
                Resolved::Func(fm, f) if self.makes_object_type(fm, f) => {
                    self.gql_options(m, args.first())
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The fields of a graphql-js object type: its `fields` option.
    fn object_type_fields(&self, m: ModId, v: &Val) -> Option<Fields> {
        let (om, opts) = self.object_type_options(m, v)?;
        self.res.object_or_returned(om, field(&opts, "fields")?)
    }

    /// The mutations of a graphql-js `Mutation` type's fields: each field's `resolve` (`{ type,
    /// args, resolve }`, also through a project helper that returns its configuration), or the
    /// `mutateAndGetPayload` of graphql-relay's `mutationWithClientMutationId({ .. })`.
    fn graphql_js_fields(
        &self,
        (m, fields): Fields,
        at: (ModId, u32),
        d: usize,
        out: &mut Vec<Field>,
    ) {
        if d > MAX_DEPTH {
            return;
        }
        for (name, fv) in fields {
            // `fields: { ...accountMutations, .. }`: the fields of the map spread here
            if name == crate::program::SPREAD {
                if let Resolved::Obj(om, inner) = self.res.resolve(m, &fv) {
                    self.graphql_js_fields((om, inner), at, d + 1, out);
                }
                continue;
            }
            let (fm, fv) = self.deref_export(m, fv);
            let config = |v: &Val| match self.res.resolve(fm, v) {
                Resolved::Obj(om, o) => ["resolve", "mutateAndGetPayload"]
                    .into_iter()
                    .find_map(|k| field(&o, k).map(|r| (om, r.clone()))),
                _ => None,
            };
            let resolver = match &fv {
                Val::Call(_, args) => args.iter().find_map(config),
                v => config(v),
            };
            out.push(Field {
                name,
                ty: "Mutation".into(),
                resolver: resolver.unwrap_or((fm, fv)),
                at,
            });
        }
    }

    /// Every call of the tree outside tests, with its module.
    fn tree_calls(&self) -> impl Iterator<Item = (ModId, &crate::program::CallSite)> {
        self.modules()
            .iter()
            .enumerate()
            .filter(|(_, module)| !module.is_test)
            .flat_map(|(m, module)| {
                module
                    .functions
                    .iter()
                    .flat_map(move |facts| facts.calls.iter().map(move |cs| (m, cs)))
            })
    }

    /// graphql-js `Mutation` types no server is seen to take: `new GraphQLObjectType({ name:
    /// 'Mutation', fields })` and the project's shorthands for it.
    fn graphql_js_types(&self) -> Vec<Field> {
        let mut out = Vec::new();
        for (m, cs) in self.tree_calls() {
            let Some(Val::Obj(opts)) = cs.args.first() else {
                continue;
            };
            if !matches!(field(opts, "name"), Some(Val::Str(n)) if n == "Mutation") {
                continue;
            }
            let made = if cs.is_new {
                self.is_graphql_js(m, &cs.callee, "GraphQLObjectType")
            } else {
                matches!(self.res.resolve(m, &cs.callee), Resolved::Func(fm, f) if self.makes_object_type(fm, f))
            };
            let fields = field(opts, "fields").and_then(|f| self.res.object_or_returned(m, f));
            if let (true, Some(fields)) = (made, fields) {
                self.graphql_js_fields(fields, (m, cs.line), 0, &mut out);
            }
        }
        out
    }

    /// A route for one mutation field; a resolver that cannot be located is said so.
    fn gql_route(
        &mut self,
        (base, complete): (&str, bool),
        framework: &'static str,
        f: Field,
        middleware: Vec<(ModId, Val)>,
    ) {
        let (rm, rv) = f.resolver;
        let (module, line) = match self.res.resolve(rm, &rv) {
            Resolved::Func(fm, g) => (fm, self.modules()[fm].functions[g].line),
            _ => {
                let file = self.modules()[f.at.0].file.clone();
                let shown = crate::link::display(&rv);
                self.diagnostics.push(Diagnostic::new(
                    file,
                    f.at.1,
                    format!(
                        "the resolver of GraphQL mutation `{}`{} cannot be located: it is listed without what it does",
                        f.name,
                        if shown.is_empty() || shown == f.name {
                            String::new()
                        } else {
                            format!(" ({})", code(&shown))
                        }
                    ),
                ));
                f.at
            }
        };
        self.routes.push(RawRoute {
            method: "POST".into(),
            path: format!("{base}#{}", f.name),
            framework,
            module,
            line,
            handler: rv,
            handler_module: rm,
            middleware,
            branch: None,
            protocol: Protocol::Graphql,
            handler_name: Some(format!("{}.{}", f.ty, f.name)),
            path_complete: complete,
            steps: vec![],
            file: None,
        });
    }

    /// Every `GraphQLModule.forRoot(..)` / `forRootAsync(..)` call of `@nestjs/graphql` in the
    /// tree: its module, line, which of the two, and its argument.
    fn nest_root_calls(&self) -> Vec<(ModId, u32, String, Option<Val>)> {
        let mut found = Vec::new();
        for (m, cs) in self.tree_calls() {
            let Resolved::Package { spec, name, path } = self.res.resolve(m, &cs.callee) else {
                continue;
            };
            if spec != "@nestjs/graphql" || name.as_deref() != Some("GraphQLModule") {
                continue;
            }
            let [call] = path.as_slice() else { continue };
            if matches!(call.as_str(), "forRoot" | "forRootAsync") {
                found.push((m, cs.line, call.clone(), cs.args.first().cloned()));
            }
        }
        found
    }

    /// The NestJS GraphQL servers of the tree: one per `GraphQLModule.forRoot` (or
    /// `forRootAsync`), or, where its options read a parameter of the function it is written in
    /// (a dynamic module's `static register(options)` returning `{ imports: [GraphQLModule.forRoot({
    /// path: options.path, include: options.include })] }`), one per call of that function, with
    /// the arguments of that call. None when the tree configures none.
    fn nest_servers(&mut self) -> Option<Vec<NestServer>> {
        let calls = self.nest_root_calls();
        if calls.is_empty() {
            return None;
        }
        let mut out = Vec::new();
        for (m, line, call, arg) in calls {
            let callers: Vec<Option<Caller>> = match arg
                .as_ref()
                .and_then(|a| self.nest_option_param(m, a, &call))
            {
                Some((pm, f)) => {
                    let found = self.callers_of(pm, f);
                    if found.is_empty() {
                        vec![None]
                    } else {
                        found.into_iter().map(Some).collect()
                    }
                }
                None => vec![None],
            };
            for caller in callers {
                let server = self.nest_server((m, line), &call, arg.as_ref(), caller.as_ref());
                out.push(server);
            }
        }
        Some(out)
    }

    /// The function whose parameter a `GraphQLModule.forRoot` argument, or its `path` or
    /// `include` option, reads (`options.path` in `static register(options)`), with its module.
    fn nest_option_param(&self, m: ModId, arg: &Val, call: &str) -> Option<(ModId, FnId)> {
        if let Some((f, ..)) = param_root(arg) {
            return Some((m, f));
        }
        let (om, opts) = self.nest_root_options(m, arg, call)?;
        ["path", "include"].into_iter().find_map(|k| {
            let (f, ..) = param_root(field(&opts, k)?)?;
            Some((om, f))
        })
    }

    /// The options of a `GraphQLModule.forRoot` (the object) or `forRootAsync` (what it makes).
    fn nest_root_options(&self, m: ModId, arg: &Val, call: &str) -> Option<Fields> {
        match call {
            "forRoot" => self.gql_options(m, Some(arg)),
            _ => self.nest_async_options(m, Some(arg)),
        }
    }

    /// The calls of function `f` of module `fm` in the tree, each with its module and arguments
    /// (`GraphqlApiModule.register({ .. })` in a module's `imports`).
    fn callers_of(&self, fm: ModId, f: FnId) -> Vec<Caller> {
        let full = &self.modules()[fm].functions[f].name;
        let short = full.rsplit('.').next().unwrap_or(full);
        let mut out = Vec::new();
        for (m, cs) in self.tree_calls() {
            let named = match &cs.callee {
                Val::Func(g) => m == fm && *g == f,
                v => v.name_it_goes_by().as_deref() == Some(short),
            };
            if named
                && matches!(self.res.resolve(m, &cs.callee), Resolved::Func(rm, g) if (rm, g) == (fm, f))
            {
                out.push(Caller {
                    function: (fm, f),
                    module: m,
                    args: cs.args.clone(),
                });
            }
        }
        out
    }

    /// `v` with the parameter of `caller`'s function it reads replaced by what the caller passes
    /// (`options.path` with `register({ path: '/admin-api' })`: `'/admin-api'`, in the caller's
    /// module); `v` itself when it reads none, or what is passed cannot be read.
    fn bound(&self, m: ModId, v: &Val, caller: Option<&Caller>) -> (ModId, Val) {
        let (Some(c), Some((f, i, names))) = (caller, param_root(v)) else {
            return (m, v.clone());
        };
        let Some(arg) = c.args.get(i).filter(|_| c.function == (m, f)) else {
            return (m, v.clone());
        };
        let mut at = (c.module, arg.clone());
        for name in names {
            let Resolved::Obj(om, fields) = self.res.resolve(at.0, &at.1) else {
                return (m, v.clone());
            };
            let Some(next) = field(&fields, name) else {
                return (m, v.clone());
            };
            at = (om, next.clone());
        }
        at
    }

    /// One NestJS GraphQL server: its path (`path`, `/graphql` by default, under the global
    /// prefix with `useGlobalPrefix: true`) and the resolvers its `include` restricts it to, the
    /// options read with the arguments of `caller` where it is given.
    fn nest_server(
        &mut self,
        (m, line): (ModId, u32),
        call: &str,
        arg: Option<&Val>,
        caller: Option<&Caller>,
    ) -> NestServer {
        let modules = self.modules();
        let file = modules[m].file.clone();
        let opts = arg.and_then(|a| {
            let (am, av) = self.bound(m, a, caller);
            self.nest_root_options(am, &av, call)
        });
        let Some((om, opts)) = opts else {
            self.diagnostics.push(Diagnostic::new(
                file,
                line,
                format!("the options of `GraphQLModule.{call}` cannot be read: the GraphQL mutations are listed at `{DEFAULT_PATH}`, marked `path_complete: false`"),
            ));
            return NestServer {
                path: (DEFAULT_PATH.to_string(), false),
                serves: None,
            };
        };
        let (mut path, mut complete) = match field(&opts, "path") {
            Some(p) => {
                let (pm, p) = self.bound(om, p, caller);
                self.gql_path(
                    pm,
                    Some(&p),
                    (m, line),
                    &format!("the `path` of `GraphQLModule.{call}`"),
                )
            }
            None => (DEFAULT_PATH.to_string(), true),
        };
        if matches!(field(&opts, "useGlobalPrefix"), Some(Val::Bool(true)))
            && let Some(bm) = self.bootstrap_for(&file)
            && let Some(b) = modules[bm].nest_bootstrap.as_ref()
        {
            let (global, read) = self.global_prefix(bm, b);
            path = normalize_path(&global, &path);
            complete &= read;
        }
        let serves = field(&opts, "include").and_then(|i| {
            let (im, iv) = self.bound(om, i, caller);
            let read = self.nest_included(im, &iv);
            if read.is_none() {
                self.diagnostics.push(Diagnostic::new(
                    file.clone(),
                    line,
                    format!(
                        "the `include` of `GraphQLModule.{call}` at `{path}` cannot be read: every resolver is listed there"
                    ),
                ));
            }
            read
        });
        NestServer {
            path: (path, complete),
            serves,
        }
    }

    /// The resolver classes the modules of an `include` list provide (`@Module({ providers })`,
    /// arrays spread into it, `{ provide, useClass }`): what Nest restricts that server to. None
    /// when the list cannot be read.
    fn nest_included(&self, m: ModId, v: &Val) -> Option<BTreeSet<(ModId, usize)>> {
        let (m, v) = self.deref_export(m, v.clone());
        let Val::Arr(items) = &v else { return None };
        let mut out = BTreeSet::new();
        let mut left = MAX_VISITS;
        for item in items {
            let Resolved::Class(km, k) = self.res.resolve(m, item) else {
                return None;
            };
            for d in &self.modules()[km].classes[k].decorators {
                if d.name != "Module" {
                    continue;
                }
                if let Some(providers) = d
                    .args
                    .first()
                    .and_then(|o| crate::program::field(o, "providers"))
                {
                    self.provided_classes(km, &providers, (0, &mut left), &mut out);
                }
            }
        }
        Some(out)
    }

    /// The classes a `providers` list holds.
    fn provided_classes(
        &self,
        m: ModId,
        v: &Val,
        (d, left): (usize, &mut usize),
        out: &mut BTreeSet<(ModId, usize)>,
    ) {
        if d > MAX_DEPTH || *left == 0 {
            return;
        }
        *left -= 1;
        let (m, v) = self.deref_export(m, v.clone());
        match &v {
            Val::Arr(items) => {
                for i in items {
                    self.provided_classes(m, i, (d + 1, left), out);
                }
            }
            Val::Obj(fields) => {
                if let Some(c) = field(fields, "useClass") {
                    self.provided_classes(m, c, (d + 1, left), out);
                }
            }
            other => match self.res.resolve(m, other) {
                Resolved::Class(cm, c) => {
                    out.insert((cm, c));
                }
                Resolved::Obj(om, fields) => {
                    self.provided_classes(om, &Val::Obj(fields), (d + 1, left), out)
                }
                _ => {}
            },
        }
    }

    /// `forRootAsync({ useFactory })`: what the factory returns; `useClass` / `useExisting`: what
    /// the class's `createGqlOptions` returns.
    fn nest_async_options(&self, m: ModId, v: Option<&Val>) -> Option<(ModId, Vec<(String, Val)>)> {
        let (om, opts) = self.gql_options(m, v)?;
        let returns = |fm: ModId, f: FnId| {
            self.modules()[fm].functions[f]
                .returns
                .iter()
                .find_map(|r| match self.res.resolve(fm, r) {
                    Resolved::Obj(rm, fields) => Some((rm, fields)),
                    _ => None,
                })
        };
        if let Some(factory) = field(&opts, "useFactory")
            && let Resolved::Func(fm, f) = self.res.resolve(om, factory)
        {
            return returns(fm, f);
        }
        for k in ["useClass", "useExisting"] {
            if let Some(c) = field(&opts, k)
                && let Resolved::Class(cm, c) = self.res.resolve(om, c)
                && let Some(f) = self.modules()[cm].classes[c].method("createGqlOptions")
            {
                return returns(cm, f);
            }
        }
        None
    }

    /// The package a decorator comes from (`@nestjs/graphql`, `type-graphql`).
    fn decorator_spec(&self, m: ModId, d: &DecoratorFacts) -> Option<String> {
        let callee = match &d.callee {
            Val::Call(c, _) => c.as_ref(),
            v => v,
        };
        match self.res.resolve(m, callee) {
            Resolved::Package { spec, .. } => Some(spec),
            _ => None,
        }
    }

    /// The resolver classes of NestJS and type-graphql and their mutation methods.
    fn gql_classes(&mut self, servers_path: &mut dyn FnMut(&mut Self, ModId) -> GqlPath) {
        let namespaces = self.nest_field_resolvers();
        let modules = self.modules();
        let mut nest_servers: Option<Option<Vec<NestServer>>> = None;
        for (m, module) in modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            for (c, class) in module.classes.iter().enumerate() {
                // NestJS finds `@Mutation` methods in any provider, `@Resolver()` or not (a
                // class without it still shows in the generated schema).
                let Some((spec, resolver_line)) = class
                    .decorators
                    .iter()
                    .find_map(|d| {
                        (d.name == "Resolver")
                            .then(|| self.decorator_spec(m, d))
                            .flatten()
                            .filter(|s| s == "@nestjs/graphql" || s == "type-graphql")
                            .map(|s| (s, d.line))
                    })
                    .or_else(|| {
                        class
                            .method_decorators
                            .iter()
                            .flat_map(|(_, ds)| ds)
                            .any(|d| {
                                d.name == "Mutation"
                                    && self.decorator_spec(m, d).as_deref()
                                        == Some("@nestjs/graphql")
                            })
                            .then(|| ("@nestjs/graphql".to_string(), class.line))
                    })
                else {
                    continue;
                };
                let nest = spec == "@nestjs/graphql";
                let mut class_mw: Vec<(ModId, Val)> = Vec::new();
                if nest
                    && let Some(bm) = self.bootstrap_for(&module.file)
                    && let Some(b) = modules[bm].nest_bootstrap.as_ref()
                {
                    class_mw.extend(b.interceptors.iter().map(|v| (bm, v.clone())));
                }
                for d in &class.decorators {
                    if matches!(d.name.as_str(), "UseInterceptors" | "UseGuards") {
                        class_mw.extend(d.args.iter().map(|a| (m, a.clone())));
                    }
                }
                // The paths of the servers that serve the class.
                let mut class_bases: Option<Vec<GqlPath>> = None;
                for (f, ds, mutation, name) in self.decorated_fields(m, class, "Mutation", &spec) {
                    let mut middleware = class_mw.clone();
                    for d in ds {
                        if matches!(d.name.as_str(), "UseInterceptors" | "UseGuards") {
                            middleware.extend(d.args.iter().map(|a| (m, a.clone())));
                        }
                    }
                    // A namespace (`@Mutation(() => TeamMutations) team() { return {} }`): the
                    // operations are the `@ResolveField`s of the resolvers of its type.
                    let operations = if nest {
                        self.nest_namespace(&name, (m, *f, mutation), &namespaces, 0)
                    } else {
                        Vec::new()
                    };
                    let bases = if nest {
                        if class_bases.is_none() {
                            let servers = match nest_servers.take() {
                                Some(s) => s,
                                None => {
                                    let s = self.nest_servers();
                                    if s.is_none() {
                                        self.diagnostics.push(Diagnostic::new(
                                            module.file.clone(),
                                            resolver_line,
                                            format!("no `GraphQLModule.forRoot` is found: the mutations of `{}` and the other resolvers are listed at `{DEFAULT_PATH}`, marked `path_complete: false`", class.name),
                                        ));
                                    }
                                    s
                                }
                            };
                            class_bases =
                                Some(self.nest_bases(servers.as_deref(), (m, c), resolver_line));
                            nest_servers = Some(servers);
                        }
                        class_bases.clone().unwrap_or_default()
                    } else {
                        vec![servers_path(self, m)]
                    };
                    let operations = if operations.is_empty() {
                        vec![(name, m, *f, mutation.line)]
                    } else {
                        operations
                    };
                    for ((name, om, of, line), base) in operations
                        .iter()
                        .flat_map(|op| bases.iter().map(move |b| (op, b)))
                    {
                        let (om, of, line) = (*om, *of, *line);
                        self.routes.push(RawRoute {
                            method: "POST".into(),
                            path: format!("{}#{name}", base.0),
                            framework: if nest { "nestjs" } else { "type-graphql" },
                            module: om,
                            line,
                            handler: Val::Func(of),
                            handler_module: om,
                            middleware: middleware.clone(),
                            branch: None,
                            protocol: Protocol::Graphql,
                            handler_name: None,
                            path_complete: base.1,
                            steps: vec![],
                            file: None,
                        });
                    }
                }
            }
        }
    }

    /// The paths a NestJS resolver class `(m, c)` is served at: those of the servers without
    /// `include` and of those whose `include` lists a module that provides it; `/graphql`,
    /// incomplete, when no server is configured or none serves it.
    fn nest_bases(
        &mut self,
        servers: Option<&[NestServer]>,
        (m, c): (ModId, usize),
        line: u32,
    ) -> Vec<GqlPath> {
        let Some(servers) = servers else {
            return vec![(DEFAULT_PATH.to_string(), false)];
        };
        let mut bases: Vec<GqlPath> = servers
            .iter()
            .filter(|s| s.serves.as_ref().is_none_or(|set| set.contains(&(m, c))))
            .map(|s| s.path.clone())
            .collect();
        merge_paths(&mut bases);
        if bases.is_empty() {
            let mut paths: Vec<&str> = servers.iter().map(|s| s.path.0.as_str()).collect();
            paths.sort();
            paths.dedup();
            let paths: Vec<String> = paths.into_iter().map(code).collect();
            let module = &self.modules()[m];
            self.diagnostics.push(Diagnostic::new(
                module.file.clone(),
                line,
                format!(
                    "`{}` is provided by no module that the `include` of a GraphQL server lists (the servers at {}): Nest serves its mutations on none of them; they are listed at `{DEFAULT_PATH}`, marked `path_complete: false`",
                    module.classes[c].name,
                    paths.join(", ")
                ),
            ));
            bases.push((DEFAULT_PATH.to_string(), false));
        }
        bases
    }

    /// The methods of `class` (of module `m`) decorated `@<decorator>` from package `spec`: each
    /// with its decorators, that decorator, and the field it resolves (the name the decorator
    /// gives, else the method's).
    fn decorated_fields<'c>(
        &self,
        m: ModId,
        class: &'c crate::program::ClassFacts,
        decorator: &str,
        spec: &str,
    ) -> Vec<(&'c FnId, &'c [DecoratorFacts], &'c DecoratorFacts, String)> {
        let mut out = Vec::new();
        for (f, ds) in &class.method_decorators {
            let Some(d) = ds.iter().find(|d| {
                d.name == decorator && self.decorator_spec(m, d).as_deref() == Some(spec)
            }) else {
                continue;
            };
            let method = class
                .methods
                .iter()
                .find(|(_, g)| g == f)
                .map(|(n, _)| n.clone())
                .unwrap_or_default();
            out.push((f, ds.as_slice(), d, mutation_name(d).unwrap_or(method)));
        }
        out
    }

    /// The class a NestJS GraphQL decorator's type function names (`@Mutation(() => T)`,
    /// `@Resolver(() => T)`, `@ResolveField(() => T)`).
    fn decorated_type(&self, m: ModId, d: &DecoratorFacts) -> Option<(ModId, usize)> {
        let Some(Val::Func(f)) = d.args.first() else {
            return None;
        };
        self.modules()[m].functions[*f]
            .returns
            .iter()
            .find_map(|r| match self.res.resolve(m, r) {
                Resolved::Class(cm, c) => Some((cm, c)),
                _ => None,
            })
    }

    /// Object type → the `@Resolver(() => T)` classes of `@nestjs/graphql` that resolve its
    /// fields.
    fn nest_field_resolvers(&self) -> BTreeMap<(ModId, usize), Vec<(ModId, usize)>> {
        let mut out: BTreeMap<(ModId, usize), Vec<(ModId, usize)>> = BTreeMap::new();
        for (m, module) in self.modules().iter().enumerate() {
            if module.is_test {
                continue;
            }
            for (c, class) in module.classes.iter().enumerate() {
                for d in &class.decorators {
                    if d.name == "Resolver"
                        && self.decorator_spec(m, d).as_deref() == Some("@nestjs/graphql")
                        && let Some(t) = self.decorated_type(m, d)
                    {
                        out.entry(t).or_default().push((m, c));
                    }
                }
            }
        }
        out
    }

    /// The operations under a namespace field: the `@ResolveField` methods of the resolvers of
    /// the type the field returns, named `ns.field`, through namespaces nested in it. The field
    /// is a namespace only when its method returns nothing but `{}` and its type has resolvers;
    /// otherwise none.
    fn nest_namespace(
        &self,
        ns: &str,
        (m, f, d): (ModId, FnId, &DecoratorFacts),
        namespaces: &BTreeMap<(ModId, usize), Vec<(ModId, usize)>>,
        depth: usize,
    ) -> Vec<(String, ModId, FnId, u32)> {
        let returns = &self.modules()[m].functions[f].returns;
        let empty = !returns.is_empty()
            && returns
                .iter()
                .all(|r| matches!(r, Val::Obj(o) if o.is_empty()));
        let Some(resolvers) = self
            .decorated_type(m, d)
            .filter(|_| empty && depth < 8)
            .and_then(|t| namespaces.get(&t))
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &(rm, rc) in resolvers {
            let class = &self.modules()[rm].classes[rc];
            for (g, _, field, name) in
                self.decorated_fields(rm, class, "ResolveField", "@nestjs/graphql")
            {
                let name = format!("{ns}.{name}");
                let inner = self.nest_namespace(&name, (rm, *g, field), namespaces, depth + 1);
                if inner.is_empty() {
                    out.push((name, rm, *g, field.line));
                } else {
                    out.extend(inner);
                }
            }
        }
        out
    }

    /// Pothos: `builder.mutationField(..)`, `builder.mutationFields(..)`,
    /// `builder.mutationType({ fields })` on a `SchemaBuilder` of `@pothos/core`.
    fn pothos_fields(&self) -> Vec<Field> {
        let mut out = Vec::new();
        for (m, cs) in self.tree_calls() {
            let Val::Member(builder, method) = &cs.callee else {
                continue;
            };
            if !matches!(
                method.as_str(),
                "mutationField" | "mutationFields" | "mutationType"
            ) {
                continue;
            }
            if !matches!(self.res.resolve(m, builder), Resolved::Package { spec, .. } if spec == "@pothos/core")
            {
                continue;
            }
            let at = (m, cs.line);
            let fields_fn = match method.as_str() {
                "mutationField" => {
                    let (Some(Val::Str(name)), Some(f)) = (cs.args.first(), cs.args.get(1)) else {
                        continue;
                    };
                    for r in self.returns_of(m, f) {
                        out.push(Field {
                            name: name.clone(),
                            ty: "Mutation".into(),
                            resolver: pothos_resolve(self, r).unwrap_or((m, Val::Unknown)),
                            at,
                        });
                    }
                    continue;
                }
                "mutationFields" => cs.args.first().cloned(),
                // `mutationType({ fields })`, or `mutationType(options, fields)`.
                _ => self
                    .gql_options(m, cs.args.first())
                    .and_then(|(_, o)| field(&o, "fields").cloned())
                    .or_else(|| cs.args.get(1).cloned()),
            };
            let Some(f) = fields_fn else { continue };
            for r in self.returns_of(m, &f) {
                let Resolved::Obj(om, fields) = self.res.resolve(r.0, &r.1) else {
                    continue;
                };
                for (name, fv) in fields
                    .into_iter()
                    .filter(|(k, _)| k != crate::program::SPREAD)
                {
                    out.push(Field {
                        name,
                        ty: "Mutation".into(),
                        resolver: pothos_resolve(self, (om, fv)).unwrap_or((m, Val::Unknown)),
                        at,
                    });
                }
            }
        }
        out
    }

    /// The object a `context` option stands for: the object itself, or what the function making
    /// it returns.
    fn context_object(&self, (m, v): &(ModId, Val)) -> Option<Resolved> {
        self.res
            .object_or_returned(*m, v)
            .map(|(om, fields)| Resolved::Obj(om, fields))
    }

    /// What a function value returns, each in its module.
    fn returns_of(&self, m: ModId, f: &Val) -> Vec<(ModId, Val)> {
        match self.res.resolve(m, f) {
            Resolved::Func(fm, g) => self.modules()[fm].functions[g]
                .returns
                .iter()
                .map(|r| (fm, r.clone()))
                .collect(),
            _ => vec![],
        }
    }

    /// Every GraphQL mutation of the tree, as routes.
    pub(super) fn graphql_routes(&mut self) {
        let servers = self.gql_servers();
        let mut paths: Vec<GqlPath> = servers
            .iter()
            .map(|s| (s.path.clone(), s.complete))
            .collect();
        merge_paths(&mut paths);
        let mut seen = BTreeSet::new();
        let mut reached: BTreeSet<(ModId, String)> = BTreeSet::new();
        for s in &servers {
            let mut fields = Vec::new();
            for v in &s.schema {
                self.gql_maps((v.0, &v.1), "Mutation", 0, &mut seen, &mut fields);
            }
            seen.clear();
            let context = s.context.as_ref().and_then(|c| self.context_object(c));
            for mut f in fields {
                reached.insert((f.resolver.0, format!("{}#{:?}", f.name, f.resolver.1)));
                f.at = (s.module, s.line);
                // `(parent, args, context, info)`: the context the server makes.
                if let (Some(ctx), Resolved::Func(fm, g)) =
                    (&context, self.res.resolve(f.resolver.0, &f.resolver.1))
                {
                    self.bindings.push(((fm, g, 2), ctx.clone()));
                }
                self.gql_route((&s.path, s.complete), s.framework, f, s.middleware.clone());
            }
        }
        // What no server is seen to take is served by the tree's one server, behind its middleware.
        let tree_mw: Vec<At> = match servers.as_slice() {
            [one] => one.middleware.clone(),
            _ => vec![],
        };
        // The path of the tree's one server, for what no server is seen to be given.
        let tree_path = |me: &mut Self, m: ModId, what: &str| -> GqlPath {
            match paths.as_slice() {
                [one] => one.clone(),
                _ => {
                    let file = me.modules()[m].file.clone();
                    me.diagnostics.push(Diagnostic::new(
                        file,
                        0,
                        format!(
                            "{what} {}: they are listed at `{DEFAULT_PATH}`, marked `path_complete: false`",
                            if paths.is_empty() {
                                "are served by no GraphQL server the audit recognises (Apollo, express-graphql, graphql-yoga, Mercurius, NestJS)"
                            } else {
                                "may be served by more than one GraphQL server"
                            }
                        ),
                    ));
                    (DEFAULT_PATH.to_string(), false)
                }
            }
        };
        // Exported resolver maps no server was seen to take.
        let modules = self.modules();
        for (m, module) in modules.iter().enumerate() {
            if module.is_test {
                continue;
            }
            let mut fields = Vec::new();
            for v in module
                .exports
                .iter()
                .map(|(_, v)| v)
                .chain(module.cjs_whole.iter())
            {
                if matches!(v, Val::Obj(fs) if fs.iter().any(|(k, _)| k == "Mutation")) {
                    self.gql_maps((m, v), "Mutation", 0, &mut BTreeSet::new(), &mut fields);
                }
            }
            fields.retain(|f| {
                !reached.contains(&(f.resolver.0, format!("{}#{:?}", f.name, f.resolver.1)))
            });
            if fields.is_empty() {
                continue;
            }
            let base = tree_path(self, m, "the resolver maps with a `Mutation` member here");
            for mut f in fields {
                reached.insert((f.resolver.0, format!("{}#{:?}", f.name, f.resolver.1)));
                f.at = (m, module.export_line("default").unwrap_or(0));
                self.gql_route((&base.0, base.1), "graphql", f, tree_mw.clone());
            }
        }
        let mut graphql_js = self.graphql_js_types();
        graphql_js.retain(|f| {
            !reached.contains(&(f.resolver.0, format!("{}#{:?}", f.name, f.resolver.1)))
        });
        if let Some(first) = graphql_js.first() {
            let base = tree_path(self, first.at.0, "the graphql-js `Mutation` types");
            for f in graphql_js {
                self.gql_route((&base.0, base.1), "graphql", f, tree_mw.clone());
            }
        }
        let mut type_graphql_path = None;
        self.gql_classes(&mut |me: &mut Self, m: ModId| {
            type_graphql_path
                .get_or_insert_with(|| tree_path(me, m, "the type-graphql resolvers"))
                .clone()
        });
        let pothos = self.pothos_fields();
        if let Some(first) = pothos.first() {
            let base = tree_path(self, first.at.0, "the Pothos mutation fields");
            for f in pothos {
                self.gql_route((&base.0, base.1), "pothos", f, tree_mw.clone());
            }
        }
    }
}

/// `t.field({ resolve })` (and `t.prismaField`, `t.boolean`, ..): the resolve function it is given.
fn pothos_resolve(me: &Mounter, (m, v): (ModId, Val)) -> Option<(ModId, Val)> {
    let Val::Call(_, args) = &v else {
        return None;
    };
    args.iter().find_map(|a| match me.res.resolve(m, a) {
        Resolved::Obj(om, fields) => field(&fields, "resolve").map(|r| (om, r.clone())),
        _ => None,
    })
}

/// The tokens of GraphQL SDL: names and punctuators; comments, strings (descriptions) and
/// commas are left out.
fn sdl_tokens(sdl: &str) -> Vec<&str> {
    let b = sdl.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"\"\"\"") {
            i = sdl[i + 3..]
                .find("\"\"\"")
                .map_or(b.len(), |e| i + 3 + e + 3);
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == b'_' || c.is_ascii_alphanumeric() {
            let start = i;
            while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            out.push(&sdl[start..i]);
        } else {
            if b"{}():=@|&".contains(&c) {
                out.push(&sdl[i..i + 1]);
            }
            i += 1;
        }
    }
    out
}

/// The mutation type a schema definition of GraphQL SDL names (`schema { query: RootQuery
/// mutation: RootMutation }`, also `extend schema`, with directives): None when the text has
/// none (GraphQL's default, `Mutation`, applies).
fn schema_mutation_type(sdl: &str) -> Option<String> {
    let t = sdl_tokens(sdl);
    let (mut braces, mut parens) = (0usize, 0usize);
    let mut i = 0;
    while i < t.len() {
        match t[i] {
            "{" => braces += 1,
            "}" => braces = braces.saturating_sub(1),
            "(" => parens += 1,
            ")" => parens = parens.saturating_sub(1),
            // The keyword, not a type named `schema` nor a use of such a type.
            "schema"
                if braces == 0
                    && parens == 0
                    && !matches!(
                        i.checked_sub(1).map(|p| t[p]),
                        Some(
                            "type"
                                | "interface"
                                | "input"
                                | "enum"
                                | "union"
                                | "scalar"
                                | "="
                                | "|"
                                | "@"
                                | "implements"
                                | "&"
                                | ":"
                        )
                    ) =>
            {
                // Its directives, then `{ operation: Type .. }`.
                let mut j = i + 1;
                let mut depth = 0usize;
                while j < t.len() && !(depth == 0 && t[j] == "{") {
                    match t[j] {
                        "(" => depth += 1,
                        ")" => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    j += 1;
                }
                let mut k = j + 1;
                while k + 2 < t.len() && t[k] != "}" {
                    if t[k] == "mutation" && t[k + 1] == ":" {
                        return Some(t[k + 2].to_string());
                    }
                    k += 1;
                }
                i = k;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The field a `@Mutation(..)` names: its string argument (schema first) or its `name` option.
fn mutation_name(d: &DecoratorFacts) -> Option<String> {
    d.args.iter().find_map(|a| match a {
        Val::Str(s) => Some(s.clone()),
        Val::Obj(_) => match crate::program::field(a, "name") {
            Some(Val::Str(s)) => Some(s),
            _ => None,
        },
        _ => None,
    })
}

fn field<'v>(fields: &'v [(String, Val)], name: &str) -> Option<&'v Val> {
    fields.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn export_of<'m>(module: &'m Module, name: &str) -> Option<&'m Val> {
    match module.export(name) {
        Some(v) => Some(v),
        None if name == "default" => module.cjs_whole.as_ref(),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{mutation_name, schema_mutation_type};
    use crate::program::{DecoratorFacts, Val};

    fn mutation(args: Vec<Val>) -> DecoratorFacts {
        DecoratorFacts {
            name: "Mutation".into(),
            callee: Val::Unknown,
            args,
            line: 1,
        }
    }

    #[test]
    fn the_field_a_mutation_decorator_names() {
        // `@Mutation(() => Order)`: the method's name.
        assert_eq!(mutation_name(&mutation(vec![Val::Func(1)])), None);
        // `@Mutation(() => Order, { name: 'cancelOrder' })`
        let named = Val::Obj(vec![("name".into(), Val::Str("cancelOrder".into()))]);
        assert_eq!(
            mutation_name(&mutation(vec![Val::Func(1), named])).as_deref(),
            Some("cancelOrder")
        );
        // `@Mutation('publishPost')` (schema first)
        assert_eq!(
            mutation_name(&mutation(vec![Val::Str("publishPost".into())])).as_deref(),
            Some("publishPost")
        );
        // `@Mutation(() => Boolean, { nullable: true })`
        let other = Val::Obj(vec![("nullable".into(), Val::Bool(true))]);
        assert_eq!(mutation_name(&mutation(vec![Val::Func(1), other])), None);
    }

    #[test]
    fn the_mutation_type_a_schema_definition_names() {
        let sdl = "schema {\n  query: RootQuery\n  mutation: RootMutation\n}\n";
        assert_eq!(schema_mutation_type(sdl).as_deref(), Some("RootMutation"));
        // Descriptions, comments, commas, directives and `extend schema`.
        let sdl = r#"
            """ The schema (it has no schema { mutation: Nope } of its own) """
            # schema { mutation: Commented }
            type Query { schema: String, "a field" mutation: Int }
            directive @auth(role: String = "x") on OBJECT
            extend schema @link(url: "https://specs.apollo.dev/federation/v2.0", import: ["@key"]) {
              query: Query, mutation: Operations
            }
        "#;
        assert_eq!(schema_mutation_type(sdl).as_deref(), Some("Operations"));
        // A schema definition without a mutation, a type named after the keyword, no schema.
        assert_eq!(schema_mutation_type("schema { query: Q }"), None);
        assert_eq!(
            schema_mutation_type("type schema { mutation: Int }\nunion U = schema | Q"),
            None
        );
        assert_eq!(schema_mutation_type("type Mutation { a: Int }"), None);
        // Cut short: no panic.
        assert_eq!(schema_mutation_type("schema { mutation:"), None);
        assert_eq!(schema_mutation_type("schema @x(\"unterminated"), None);
        // Text that is not ASCII (in comments, descriptions, stray characters) is skipped whole.
        assert_eq!(
            schema_mutation_type("# café\n«» schema { \"Änderungen\" mutation: Root }").as_deref(),
            Some("Root")
        );
    }
}
