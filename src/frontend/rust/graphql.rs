//! GraphQL mutations in Rust: every resolver of an async-graphql `#[Object] impl` or a juniper
//! `#[graphql_object] impl` of a mutation type is one endpoint, `POST <graphql path>#<field>`,
//! with the resolver as its handler.
//!
//! A mutation type is one named for it (`MutationRoot`, `Mutation`, `UserMutation`,
//! `BillingMutationResolver`): both crates' documentation and the code that uses them name
//! them so, and merged roots (`#[derive(MergedObject)] struct MutationRoot(A, B)`) are made of
//! such parts. A field's name is the method's in camelCase, as both crates expose it by default.
//! The GraphQL path is the route the service registers whose last segment is `graphql`; when
//! there is none, `/graphql` is assumed and a diagnostic says so.

use super::model::Model;
use super::routes::{Entry, Handler};
use crate::facts::Diagnostic;

/// The request and response types of the GraphQL integrations (async-graphql's for axum, actix-web,
/// rocket, poem and warp; juniper's): a handler taking or returning one serves a schema.
const TRANSPORT_TYPES: &[&str] = &[
    "GraphQLRequest",
    "GraphQLBatchRequest",
    "GraphQLResponse",
    "JuniperRequest",
    "JuniperResponse",
];

/// Does `h` serve a GraphQL schema over HTTP? GraphQL over HTTP carries operations by `POST` (and
/// queries by `GET`), so such a route answers no other write method: `any(graphql)` is one `POST`
/// endpoint, whose mutations are the `#field` endpoints.
pub fn is_transport(model: &Model<'_>, h: &Handler<'_>) -> bool {
    match h {
        Handler::Fn(f) => {
            let func = &model.fns[*f].func;
            func.params
                .iter()
                .filter_map(|p| p.ty.as_ref())
                .chain(func.ret.iter())
                .flat_map(|t| t.all())
                .any(|t| TRANSPORT_TYPES.contains(&t.last()))
        }
        // `post_service(GraphQL::new(schema))`; an integration crate's handler
        // (`on(MethodFilter::GET.or(MethodFilter::POST), juniper_axum::graphql::<Arc<Schema>>)`)
        Handler::Named(n) => {
            let last = n.rsplit("::").next().unwrap_or("");
            last == "GraphQL"
                || ((n.starts_with("juniper_") || n.starts_with("async_graphql_"))
                    && last.to_ascii_lowercase().contains("graphql"))
        }
        Handler::Closure { .. } => false,
    }
}

/// The GraphQL mutations of the crate set, given the routes found (for the GraphQL path).
pub fn entries<'a>(model: &Model<'a>, routes: &[Entry<'a>]) -> (Vec<Entry<'a>>, Vec<Diagnostic>) {
    let mut out = Vec::new();
    let mut diagnostics = Vec::new();
    let mut path: Option<(&str, bool)> = routes
        .iter()
        .map(|e| (e.path.as_str(), e.path_complete))
        .filter(|(p, _)| {
            p.rsplit('/')
                .next()
                .is_some_and(|s| s.eq_ignore_ascii_case("graphql"))
        })
        .min_by_key(|(p, _)| (p.len(), *p));
    let mut assumed = None;
    for imp in &model.impls {
        let Some(framework) = imp.imp.graphql else {
            continue;
        };
        let ty = imp.imp.self_ty.last().map(String::as_str).unwrap_or("");
        if !ty.contains("Mutation") || model.modules[imp.module].is_test {
            continue;
        }
        let (base, complete) = *path.get_or_insert_with(|| {
            assumed = Some((model.file_of(imp.module).to_string(), ty.to_string()));
            ("/graphql", false)
        });
        for &f in &imp.fns {
            let def = &model.fns[f];
            if def.func.is_test || def.func.name.starts_with("__") {
                continue;
            }
            out.push(Entry {
                method: "POST".into(),
                path: format!("{base}#{}", camel(&def.func.name)),
                framework,
                module: def.module,
                line: def.func.line,
                handler: Handler::Fn(f),
                middleware: vec![],
                path_complete: complete,
            });
        }
    }
    if let Some((file, ty)) = assumed
        && !out.is_empty()
    {
        diagnostics.push(Diagnostic::new(
            file,
            0,
            format!(
                "no route serves GraphQL here: the mutations of `{ty}` and the others are listed at `/graphql`, marked `path_complete: false`"
            ),
        ));
    }
    (out, diagnostics)
}

/// `create_access_link` → `createAccessLink` (a raw `r#type` loses its prefix).
fn camel(name: &str) -> String {
    let name = name.trim_start_matches("r#");
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for (i, c) in name.chars().enumerate() {
        if c == '_' {
            upper = i > 0;
            continue;
        }
        if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::camel;

    #[test]
    fn camel_case_of_resolvers() {
        assert_eq!(camel("create_access_link"), "createAccessLink");
        assert_eq!(camel("login"), "login");
        assert_eq!(camel("r#type"), "type");
        assert_eq!(camel("_private_thing"), "privateThing");
    }
}
