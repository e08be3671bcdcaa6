//! Claims: a conditional write whose outcome the code tests before it goes on, so that only one
//! run gets past it. `updateMany({ where: { id, status: 'PENDING' }, data: { status: 'RUNNING' } })`
//! with `if (claimed.count === 0) return`, a Redis `SET key value NX` with `if (!ok) return`, or
//! `UPDATE jobs SET status = 'running' WHERE id = $1 AND status = 'pending'` with its row count
//! tested: a retry finds the row or key already claimed and stops, atomically, before what follows.

use super::eval::Evaluator;
use crate::program::{Val, conditional_update};
use crate::sql::{DELETES_ROW, SKIPS_EXISTING, sql_deletes, sql_moves_state, sql_skips_existing};
use tree_sitter::Node;

/// Members of an update's result that count the rows it changed.
const COUNTS: &[&str] = &[
    "count",
    "rowCount",
    "affected",
    "affectedRows",
    "modifiedCount",
    "matchedCount",
    "nModified",
    "numUpdatedRows",
    "changes",
    "deletedCount",
];

/// What kind of claim a value is the result of, if it is one.
pub fn claim_call(v: &Val) -> Option<&'static str> {
    let Val::Call(callee, args) = v else {
        return None;
    };
    let Val::Member(_, method) = callee.as_ref() else {
        return None;
    };
    let m = method.as_str();
    if m.eq_ignore_ascii_case("setnx") {
        return Some("a Redis `SETNX`");
    }
    if m == "set"
        && args.iter().skip(2).any(|a| match a {
            Val::Str(s) => s.eq_ignore_ascii_case("nx"),
            Val::Obj(fields) => fields
                .iter()
                .any(|(k, v)| k.eq_ignore_ascii_case("nx") && *v == Val::Bool(true)),
            _ => false,
        })
    {
        return Some("a Redis `SET .. NX`");
    }
    if conditional_update(m, args) {
        return Some("a conditional update of the state it filters on");
    }
    // The SQL run: the call's first argument, or the statement `run` is called on
    // (better-sqlite3's `db.prepare(sql).run(..)`).
    let prepared = match crate::program::prepared_statement(callee, &["run"]) {
        Some(Val::Call(_, prepared)) => prepared.first(),
        _ => None,
    };
    let sql = match prepared.or(args.first()) {
        Some(Val::Str(sql))
            if matches!(
                m,
                "query" | "execute" | "run" | "$executeRawUnsafe" | "none" | "result"
            ) =>
        {
            Some(sql)
        }
        _ => None,
    };
    if let Some(sql) = sql {
        if sql_moves_state(sql) {
            return Some("an `UPDATE` of the state its `WHERE` tests");
        }
        if sql_skips_existing(sql) {
            return Some(SKIPS_EXISTING);
        }
        if sql_deletes(sql) {
            return Some(DELETES_ROW);
        }
    }
    // An ORM's delete answers how many rows it removed (TypeORM's `{ affected }`, Sequelize's
    // count, MongoDB's `{ deletedCount }`, Prisma's `deleteMany`'s `{ count }`).
    if matches!(
        m,
        "delete" | "deleteMany" | "deleteOne" | "destroy" | "deleteFrom" | "del"
    ) && !args.is_empty()
    {
        return Some(DELETES_ROW);
    }
    // Prisma's `createMany({ data, skipDuplicates: true })` answers `{ count }` of the rows it
    // wrote (`ON CONFLICT DO NOTHING`).
    if m == "createMany"
        && args.first().is_some_and(|a| {
            matches!(a, Val::Obj(fields) if fields
                .iter()
                .any(|(k, v)| k == "skipDuplicates" && *v == Val::Bool(true)))
        })
    {
        return Some(
            "a `createMany` that skips rows already there (`skipDuplicates`), its count tested",
        );
    }
    None
}

/// The claim an insert that skips an existing row makes when what it returns is tested.
const INSERTS_IF_ABSENT: &str = "an insert that skips a row already there (`ON CONFLICT DO NOTHING`), the rows it returns tested";

/// A query builder's insert that skips a row already there and answers the rows it wrote:
/// Drizzle's `db.insert(t).values(v).onConflictDoNothing().returning()`
/// (https://orm.drizzle.team/docs/insert#on-conflict-do-nothing), Knex's
/// `knex(t).insert(v).onConflict(c).ignore().returning(..)`, Kysely's and TypeORM's
/// `.orIgnore()`. A retry's insert returns no row: only one request gets past a test of them.
fn inserts_if_absent(v: &Val) -> bool {
    let (mut skips, mut inserts) = (false, false);
    let mut cur = v;
    for _ in 0..32 {
        let Val::Call(callee, _) = cur else { break };
        let Val::Member(inner, method) = callee.as_ref() else {
            break;
        };
        match method.as_str() {
            "onConflictDoNothing" | "ignore" | "orIgnore" => skips = true,
            "insert" | "insertInto" => inserts = true,
            _ => {}
        }
        cur = inner;
    }
    skips && inserts
}

/// The claim a delete that fails when its row is gone makes, its failure failing the request.
pub const DELETES_OR_FAILS: &str =
    "a Prisma `delete` (it throws `P2025` when the row is already gone, failing the request)";

impl<'t> Evaluator<'t, '_> {
    /// A statement deleting one row with Prisma's `delete({ where })` (or returning that delete),
    /// which throws `P2025` when the row is not there
    /// (https://www.prisma.io/docs/orm/reference/prisma-client-reference#delete), the failure
    /// caught nowhere in the function (no enclosing `try`, no `.catch`): a retry fails there, so
    /// what follows runs once, for the request that deleted the row.
    pub(super) fn deletes_or_fails(&mut self, stmt: Node<'t>) -> bool {
        let expr = match stmt.kind() {
            // (`return await prisma.invite.delete(..)` in a helper: the helper fails in turn)
            "expression_statement" | "return_statement" => stmt.named_child(0),
            "lexical_declaration" | "variable_declaration" => {
                let mut cursor = stmt.walk();
                let decls: Vec<Node<'t>> = stmt.named_children(&mut cursor).collect();
                match decls.as_slice() {
                    [d] if d.kind() == "variable_declarator" => d.child_by_field_name("value"),
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(mut e) = expr else { return false };
        for _ in 0..4 {
            match e.kind() {
                "await_expression" | "parenthesized_expression" => match e.named_child(0) {
                    Some(inner) => e = inner,
                    None => return false,
                },
                _ => break,
            }
        }
        if e.kind() != "call_expression" {
            return false;
        }
        let Some(f) = e.child_by_field_name("function") else {
            return false;
        };
        // `prisma.invite.delete(..)`, `tx.invite.delete(..)`: a model's delegate, not a Map's
        let on_model = f.kind() == "member_expression"
            && f.child_by_field_name("property")
                .is_some_and(|p| self.text(p) == "delete")
            && f.child_by_field_name("object")
                .is_some_and(|o| o.kind() == "member_expression");
        let filter = e
            .child_by_field_name("arguments")
            .and_then(|a| a.named_child(0))
            .filter(|a| a.kind() == "object")
            .and_then(|o| {
                let mut cursor = o.walk();
                let pairs: Vec<Node<'t>> = o.named_children(&mut cursor).collect();
                pairs.into_iter().find_map(|p| {
                    (p.kind() == "pair"
                        && p.child_by_field_name("key")
                            .is_some_and(|k| self.text(k) == "where"))
                    .then(|| p.child_by_field_name("value"))
                    .flatten()
                })
            });
        let Some(filter) = filter.filter(|_| on_model) else {
            return false;
        };
        // Keyed on what the request names (`{ token: req.params.token }`), not on a row it
        // looked up (`{ id: current.id }`): that row's delete is judged with its lookup (a key
        // rotated is found again on a retry).
        if filter.kind() == "object" {
            let mut cursor = filter.walk();
            let values: Vec<Node<'t>> = filter
                .named_children(&mut cursor)
                .filter_map(|p| p.child_by_field_name("value"))
                .collect();
            for v in values {
                if v.kind() == "member_expression"
                    && let Some(o) = v.child_by_field_name("object")
                    && o.kind() == "identifier"
                    && self.is_lookup_leaf(o).is_some()
                {
                    return false;
                }
            }
        }
        // (its failure reaches the caller: no `try` around it in this function)
        let mut cur = stmt.parent();
        while let Some(n) = cur {
            match n.kind() {
                "try_statement" => return false,
                "function_declaration"
                | "function_expression"
                | "arrow_function"
                | "method_definition"
                | "function" => break,
                _ => {}
            }
            cur = n.parent();
        }
        true
    }

    /// A value a condition tests: a claim's result, or the count of rows it changed.
    fn claim_value(&mut self, n: Node<'t>, depth: usize) -> Option<&'static str> {
        if depth > 8 {
            return None;
        }
        match n.kind() {
            "parenthesized_expression" | "await_expression" | "non_null_expression" => {
                self.claim_value(n.named_child(0)?, depth + 1)
            }
            "member_expression" => {
                let p = n.child_by_field_name("property")?;
                let object = n.child_by_field_name("object")?;
                // `inserted.length === 0`: the rows an insert that skips existing ones wrote
                if self.text(p) == "length" && object.kind() == "identifier" {
                    let v = self.lookup(self.text(object));
                    return inserts_if_absent(&v).then_some(INSERTS_IF_ABSENT);
                }
                if !COUNTS.contains(&self.text(p)) {
                    return None;
                }
                self.claim_value(object, depth + 1)
            }
            "identifier" => {
                let name = self.text(n).to_string();
                let v = self.lookup(&name);
                match &v {
                    Val::Member(inner, m) if COUNTS.contains(&m.as_str()) => claim_call(inner),
                    // `const [row] = await db.insert(t).values(v).onConflictDoNothing()
                    // .returning(); if (!row) return`: the row it wrote, if any
                    Val::Member(inner, m) if m == "0" && inserts_if_absent(inner) => {
                        Some(INSERTS_IF_ABSENT)
                    }
                    _ => claim_call(&v),
                }
            }
            _ => None,
        }
    }

    /// A condition on a claim, and whether it holds when the claim failed (`!claimed`,
    /// `claimed.count === 0`, `res !== 'OK'`) or when it succeeded (`claimed`, `count > 0`).
    pub(super) fn claim_test(
        &mut self,
        cond: Node<'t>,
        depth: usize,
    ) -> Option<(&'static str, bool)> {
        if depth > 8 {
            return None;
        }
        match cond.kind() {
            "parenthesized_expression" => self.claim_test(cond.named_child(0)?, depth + 1),
            "unary_expression" => {
                let op = self.text(cond.child_by_field_name("operator")?);
                let arg = cond.child_by_field_name("argument")?;
                if op != "!" {
                    return None;
                }
                let (what, failed) = self.claim_test(arg, depth + 1)?;
                Some((what, !failed))
            }
            "binary_expression" => {
                let op = self.text(cond.child_by_field_name("operator")?).to_string();
                let (l, r) = (
                    cond.child_by_field_name("left")?,
                    cond.child_by_field_name("right")?,
                );
                let what = self.claim_value(l, depth + 1)?;
                let rhs = self
                    .text(r)
                    .trim_matches(|c| c == '\'' || c == '"')
                    .to_string();
                let nothing = matches!(rhs.as_str(), "0" | "null" | "undefined" | "false");
                let failed = match op.as_str() {
                    "===" | "==" => nothing,
                    "!==" | "!=" => !nothing,
                    "<" => rhs == "1",
                    "<=" => rhs == "0",
                    ">" | ">=" => false,
                    _ => return None,
                };
                Some((what, failed))
            }
            _ => Some((self.claim_value(cond, depth + 1)?, false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(method: &str, args: Vec<Val>) -> Val {
        Val::Call(
            std::sync::Arc::new(Val::Member(
                std::sync::Arc::new(Val::Unknown),
                method.into(),
            )),
            args,
        )
    }

    fn obj(fields: &[(&str, Val)]) -> Val {
        Val::Obj(
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn conditional_updates_redis_nx_and_sql() {
        let s = |x: &str| Val::Str(x.into());
        let prisma = call(
            "updateMany",
            vec![obj(&[
                (
                    "where",
                    obj(&[("id", Val::Unknown), ("status", s("PENDING"))]),
                ),
                ("data", obj(&[("status", s("RUNNING"))])),
            ])],
        );
        assert!(claim_call(&prisma).is_some());
        let by_id = call(
            "update",
            vec![obj(&[
                ("where", obj(&[("id", Val::Unknown)])),
                ("data", obj(&[("status", s("RUNNING"))])),
            ])],
        );
        assert!(claim_call(&by_id).is_none());
        let mongo = call(
            "findOneAndUpdate",
            vec![
                obj(&[("_id", Val::Unknown), ("state", s("open"))]),
                obj(&[("$set", obj(&[("state", s("closed"))]))]),
            ],
        );
        assert!(claim_call(&mongo).is_some());
        // The state tested under `OR`, and a bounded counter moved with it.
        let either = call(
            "updateMany",
            vec![obj(&[
                (
                    "where",
                    obj(&[
                        ("id", Val::Unknown),
                        ("attempts", obj(&[("lt", Val::Unknown)])),
                        (
                            "OR",
                            Val::Arr(vec![
                                obj(&[("status", obj(&[("in", Val::Unknown)]))]),
                                obj(&[("status", s("PROCESSING")), ("updatedAt", Val::Unknown)]),
                            ]),
                        ),
                    ]),
                ),
                (
                    "data",
                    obj(&[
                        ("status", s("PROCESSING")),
                        ("attempts", obj(&[("increment", Val::Unknown)])),
                    ]),
                ),
            ])],
        );
        assert!(claim_call(&either).is_some());
        let counter = call(
            "updateMany",
            vec![obj(&[
                (
                    "where",
                    obj(&[("id", Val::Unknown), ("used", obj(&[("lt", Val::Unknown)]))]),
                ),
                (
                    "data",
                    obj(&[("used", obj(&[("increment", Val::Unknown)]))]),
                ),
            ])],
        );
        assert!(claim_call(&counter).is_none());
        assert!(
            claim_call(&call(
                "set",
                vec![s("k"), s("1"), obj(&[("nx", Val::Bool(true))])]
            ))
            .is_some()
        );
        assert!(
            claim_call(&call(
                "set",
                vec![s("k"), s("1"), s("EX"), s("60"), s("NX")]
            ))
            .is_some()
        );
        assert!(claim_call(&call("set", vec![s("k"), s("1")])).is_none());
        assert!(
            claim_call(&call(
                "query",
                vec![s(
                    "UPDATE jobs SET status = 'running' WHERE id = $1 AND status = 'pending'"
                )]
            ))
            .is_some()
        );
        assert!(
            claim_call(&call(
                "query",
                vec![s("UPDATE jobs SET status = $2 WHERE id = $1")]
            ))
            .is_none()
        );
        assert!(
            claim_call(&call(
                "query",
                vec![s(
                    "UPDATE jobs SET sent_at = now() WHERE id = $1 AND sent_at IS NULL"
                )]
            ))
            .is_some()
        );
        assert!(
            claim_call(&call(
                "query",
                vec![s(
                    "UPDATE jobs SET last_status = $2 WHERE id = $1 AND status = 'x'"
                )]
            ))
            .is_none()
        );
    }
}
