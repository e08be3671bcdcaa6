//! Next.js pages handlers dispatch on `req.method`: the checks say which methods a handler
//! serves, and the branch a call sits in says for which method it runs.

use super::eval::{Evaluator, line};
use super::ir::*;
use tree_sitter::Node;

const HTTP_METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

impl<'t> Evaluator<'t, '_> {
    /// `req.method`, `req.method!`, or a local holding it (`const method = req.method`).
    fn is_method_ref(&mut self, n: Node<'t>) -> bool {
        let n = if n.kind() == "non_null_expression" {
            n.named_child(0).unwrap_or(n)
        } else {
            n
        };
        match n.kind() {
            "member_expression" => n
                .child_by_field_name("property")
                .is_some_and(|p| self.text(p) == "method"),
            "identifier" => matches!(self.eval(n), Val::Member(_, p) if p == "method"),
            _ => false,
        }
    }

    fn method_literal(&self, n: Node<'t>) -> Option<String> {
        if n.kind() != "string" {
            return None;
        }
        let t = self.text(n);
        let m = t.get(1..t.len().saturating_sub(1))?.to_ascii_uppercase();
        HTTP_METHODS.contains(&m.as_str()).then_some(m)
    }

    /// `req.method === 'POST'`, `req.method !== 'POST'`, `a || b`, `!x`, `['POST'].includes(req.method)`:
    /// the methods named and whether the condition excludes them.
    fn method_check(&mut self, cond: Node<'t>) -> Option<(Vec<String>, bool)> {
        match cond.kind() {
            "parenthesized_expression" => self.method_check(cond.named_child(0)?),
            "unary_expression"
                if cond
                    .child_by_field_name("operator")
                    .is_some_and(|o| self.text(o) == "!") =>
            {
                let (m, neg) = self.method_check(cond.child_by_field_name("argument")?)?;
                Some((m, !neg))
            }
            "binary_expression" => {
                let op = self.text(cond.child_by_field_name("operator")?);
                let (l, r) = (
                    cond.child_by_field_name("left")?,
                    cond.child_by_field_name("right")?,
                );
                match op {
                    "===" | "==" | "!==" | "!=" => {
                        let lit = if self.is_method_ref(l) {
                            self.method_literal(r)
                        } else if self.is_method_ref(r) {
                            self.method_literal(l)
                        } else {
                            None
                        }?;
                        Some((vec![lit], op.starts_with('!')))
                    }
                    "||" | "&&" => {
                        let (mut a, na) = self.method_check(l)?;
                        let (b, nb) = self.method_check(r)?;
                        // `a === X || a === Y` allows both; `a !== X && a !== Y` excludes both.
                        if na != nb || (op == "||") == na {
                            return None;
                        }
                        a.extend(b);
                        Some((a, na))
                    }
                    _ => None,
                }
            }
            "call_expression" => {
                let f = cond.child_by_field_name("function")?;
                let prop = f.child_by_field_name("property")?;
                if self.text(prop) != "includes" {
                    return None;
                }
                let arg = cond.child_by_field_name("arguments")?.named_child(0)?;
                if !self.is_method_ref(arg) {
                    return None;
                }
                let list = match self.eval(f.child_by_field_name("object")?) {
                    Val::Arr(items) => items
                        .iter()
                        .filter_map(|i| {
                            if let Val::Str(s) = i {
                                Some(s.to_ascii_uppercase())
                            } else {
                                None
                            }
                        })
                        .filter(|m| HTTP_METHODS.contains(&m.as_str()))
                        .collect::<Vec<_>>(),
                    _ => return None,
                };
                (!list.is_empty()).then_some((list, false))
            }
            _ => None,
        }
    }

    fn record_check(&mut self, methods: &[String], line: u32, negated: bool) {
        let f = self.cur_fn();
        self.module.functions[f].method_checks.push(MethodCheck {
            methods: methods.to_vec(),
            line,
            negated,
        });
    }

    fn walk_under(&mut self, node: Node<'t>, branch: Option<Vec<String>>) {
        let saved = std::mem::replace(&mut self.branch, branch);
        self.walk_stmt_or_expr(node);
        self.branch = saved;
    }

    pub(super) fn walk_if(&mut self, node: Node<'t>) {
        let Some(cond) = node.child_by_field_name("condition") else {
            return;
        };
        let check = self.method_check(cond);
        let guard = self.is_lookup_guard(cond);
        self.eval(cond);
        let consequence = node.child_by_field_name("consequence");
        let alternative = node.child_by_field_name("alternative");
        let saved_guard = self.guarded.clone();
        if guard.is_some() {
            self.guarded = guard.clone();
        }
        match check {
            Some((methods, false)) => {
                self.record_check(&methods, line(cond), false);
                if let Some(c) = consequence {
                    self.walk_under(c, Some(methods));
                }
            }
            Some((methods, true)) => {
                self.record_check(&methods, line(cond), true);
                if let Some(c) = consequence {
                    self.walk_under(c, self.branch.clone());
                }
            }
            None => {
                if let Some(c) = consequence {
                    self.walk_under(c, self.branch.clone());
                }
            }
        }
        if let Some(a) = alternative {
            self.walk_under(a, self.branch.clone());
        }
        // `if (existing) return ..;` / `throw`: what follows runs only when the lookup missed.
        self.guarded = match guard {
            Some(g) if consequence.is_some_and(exits) => Some(g),
            _ => saved_guard,
        };
    }

    /// The condition tests a row looked up earlier (`existing`, `!found`, `await X.findFirst(..)`):
    /// the model it read.
    fn is_lookup_guard(&mut self, cond: Node<'t>) -> Option<String> {
        let mut stack = vec![cond];
        let mut budget = 64;
        while let Some(n) = stack.pop() {
            budget -= 1;
            if budget == 0 {
                return None;
            }
            match n.kind() {
                "identifier" => {
                    let name = self.text(n).to_string();
                    if let Val::Call(callee, _) = self.lookup(&name)
                        && let Val::Member(model, method) = callee.as_ref()
                        && self.catalog.is_lookup(method)
                        && let Some(model) = value_name(model)
                    {
                        return Some(model);
                    }
                }
                "call_expression" => {
                    if let Some(f) = n.child_by_field_name("function")
                        && let Some(p) = f.child_by_field_name("property")
                        && self.catalog.is_lookup(self.text(p))
                        && let Some(o) = f.child_by_field_name("object")
                    {
                        let o = o.child_by_field_name("property").unwrap_or(o);
                        if matches!(o.kind(), "identifier" | "property_identifier") {
                            return Some(self.text(o).to_string());
                        }
                    }
                }
                "arrow_function" | "function_expression" => continue,
                _ => {}
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        None
    }

    pub(super) fn walk_switch(&mut self, node: Node<'t>) {
        let (Some(value), Some(body)) = (
            node.child_by_field_name("value"),
            node.child_by_field_name("body"),
        ) else {
            return;
        };
        let inner = if value.kind() == "parenthesized_expression" {
            value.named_child(0).unwrap_or(value)
        } else {
            value
        };
        let on_method = self.is_method_ref(inner);
        self.eval(value);
        let mut cursor = body.walk();
        let cases: Vec<Node<'t>> = body.named_children(&mut cursor).collect();
        let mut pending: Vec<String> = Vec::new();
        for case in cases {
            let label = case
                .child_by_field_name("value")
                .and_then(|v| self.method_literal(v));
            if on_method && let Some(m) = &label {
                self.record_check(std::slice::from_ref(m), line(case), false);
                pending.push(m.clone());
            }
            let mut c2 = case.walk();
            let stmts: Vec<Node<'t>> = case.children_by_field_name("body", &mut c2).collect();
            if stmts.is_empty() {
                continue;
            }
            let branch = if on_method && !pending.is_empty() {
                Some(std::mem::take(&mut pending))
            } else {
                self.branch.clone()
            };
            for st in stmts {
                self.walk_under(st, branch.clone());
            }
        }
    }
}

/// A statement that leaves the function: `return`/`throw`, or a block ending in one.
fn exits(node: Node) -> bool {
    match node.kind() {
        "return_statement" | "throw_statement" => true,
        "statement_block" => {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .filter(|c| c.kind() != "comment")
                .last()
                .is_some_and(exits)
        }
        _ => false,
    }
}

/// The name a value goes by: the last member (`user` in `prisma.user`), an import, a global.
fn value_name(v: &Val) -> Option<String> {
    match v {
        Val::Member(_, n) | Val::Global(n) => Some(n.clone()),
        Val::Import { name: Some(n), .. } => Some(n.clone()),
        _ => None,
    }
}
