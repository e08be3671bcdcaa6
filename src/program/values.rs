//! What the linker and the TypeScript lowering read off abstract values alike: an object's field,
//! the markers the lowering leaves among a route's middleware, and an ORM update that moves its
//! rows out of its own filter.

use super::Val;

/// The framework label of a router class the project writes (see
/// [`Evaluator::table_router_class`]); the linker names the server framework of its package.
pub const TABLE_ROUTER: &str = "table";

/// An application of its own mounted under a prefix (Hono `app.mount('/x', other.fetch)`), kept
/// in a `use` under this marker: a router this audit reads is walked under the prefix; anything
/// else is named in a diagnostic, not taken for middleware.
pub const MOUNTED_APP: &str = "__mounted_app__";

pub fn as_mounted_app(v: &Val) -> Option<&Val> {
    match v {
        Val::Call(g, args) if matches!(g.as_ref(), Val::Global(n) if n == MOUNTED_APP) => {
            args.first()
        }
        _ => None,
    }
}

/// A hook that runs once the handler has answered (Fastify `onSend`/`onResponse`/`onError`),
/// kept among the route's middleware under this marker: it is not a guard in front of the
/// handler, but a key mechanism may store the response there.
pub const AFTER_HANDLER: &str = "__after_handler__";

pub fn after_handler(hook: Val) -> Val {
    Val::Call(
        std::sync::Arc::new(Val::Global(AFTER_HANDLER.into())),
        vec![hook],
    )
}

/// The hook a marker made by [`after_handler`] holds.
pub fn as_after_handler(v: &Val) -> Option<&Val> {
    match v {
        Val::Call(g, args) if matches!(g.as_ref(), Val::Global(n) if n == AFTER_HANDLER) => {
            args.first()
        }
        _ => None,
    }
}

/// A field of an object value (the last one written wins).
pub fn field(v: &Val, name: &str) -> Option<Val> {
    match v {
        Val::Obj(fields) => fields
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone()),
        _ => None,
    }
}

/// Prisma, TypeORM, Mongoose and Sequelize calls that update the rows a filter matches.
const CONDITIONAL_UPDATES: &[&str] = &[
    "updateMany",
    "update",
    "updateOne",
    "findOneAndUpdate",
    "findAndModify",
];

fn keys(v: &Val) -> Vec<&str> {
    match v {
        Val::Obj(fields) => fields.iter().map(|(k, _)| k.as_str()).collect(),
        _ => Vec::new(),
    }
}

fn field_ref<'v>(v: &'v Val, name: &str) -> Option<&'v Val> {
    match v {
        Val::Obj(fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| v),
        _ => None,
    }
}

/// The fields a filter tests, through the logical operators of Prisma (`OR`, `AND`, `NOT`) and
/// MongoDB (`$or`, `$and`, `$nor`): `{ OR: [{ status: 'PENDING' }, { status: 'FAILED' }] }` tests
/// `status`.
fn filter_keys<'v>(v: &'v Val, depth: usize, out: &mut Vec<&'v str>) {
    if depth > 8 {
        return;
    }
    match v {
        Val::Obj(fields) => {
            for (k, v) in fields {
                if matches!(k.as_str(), "OR" | "AND" | "NOT" | "$or" | "$and" | "$nor") {
                    filter_keys(v, depth + 1, out);
                } else {
                    out.push(k);
                }
            }
        }
        Val::Arr(items) => {
            for item in items {
                filter_keys(item, depth + 1, out);
            }
        }
        _ => {}
    }
}

/// A filter and a change that share a field: the update moves rows out of what it matches.
fn moves_state(filter: &Val, change: &Val) -> bool {
    let change = field_ref(change, "$set").unwrap_or(change);
    // A counter moved by an amount (`{ increment: 1 }`) may still match its bound after one run.
    let set: Vec<&str> = keys(change)
        .into_iter()
        .filter(|k| {
            !field_ref(change, k).is_some_and(|v| {
                keys(v)
                    .iter()
                    .any(|op| matches!(*op, "increment" | "decrement" | "multiply" | "divide"))
            })
        })
        .collect();
    let mut tested = Vec::new();
    filter_keys(filter, 0, &mut tested);
    tested
        .iter()
        .any(|k| !matches!(*k, "id" | "_id") && set.contains(k))
}

/// An ORM update (`updateMany`, `findOneAndUpdate`, ..) that sets a field its filter tests: once
/// it has run, the rows no longer match, so running it again changes nothing, whatever else its
/// change does (`{ attempts: { increment: 1 } }` next to the state it moves included).
pub fn conditional_update(method: &str, args: &[Val]) -> bool {
    if !CONDITIONAL_UPDATES.contains(&method) {
        return false;
    }
    let prisma = args
        .first()
        .and_then(|a| Some((field_ref(a, "where")?, field_ref(a, "data")?)));
    match prisma {
        Some((filter, change)) => moves_state(filter, change),
        None => match (args.first(), args.get(1)) {
            (Some(filter), Some(change)) => moves_state(filter, change),
            _ => false,
        },
    }
}
