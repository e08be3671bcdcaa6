//! Next.js pages handlers dispatch on `req.method`: the checks say which methods a handler
//! serves, and the branch a call sits in says for which method it runs.

use super::FieldExt;
use super::eval::{Evaluator, line};
use crate::facts::ParamTest;
use crate::program::*;
use tree_sitter::Node;

const HTTP_METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// The read a test's operand is the result of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    /// A lookup of a row (`findOne`, `findFirst`), tested for the row.
    Lookup,
    /// A count (`count`, `countDocuments`, a raw `COUNT(*)`).
    Count,
    /// A list of rows (`repo.find(..)`, Mongoose's `Model.find(..)`), whose `.length` counts
    /// them.
    List,
}

impl<'t> Evaluator<'t, '_> {
    /// `req.method`, `req.method!`, `req.method ?? ''`, `req.method as string`, or a local
    /// holding it (`const method = req.method`).
    fn is_method_ref(&mut self, n: Node<'t>) -> bool {
        match n.kind() {
            "non_null_expression" | "parenthesized_expression" | "as_expression" => {
                return n.named_child(0).is_some_and(|i| self.is_method_ref(i));
            }
            // `req.method ?? ''`, `req.method || 'GET'`: the method, or a stand-in for none.
            "binary_expression"
                if n.child_by_field_name("operator")
                    .is_some_and(|o| matches!(self.text(o), "??" | "||")) =>
            {
                return n
                    .child_by_field_name("left")
                    .is_some_and(|l| self.is_method_ref(l));
            }
            _ => {}
        }
        match n.kind() {
            "member_expression" => n
                .child_by_field_name("property")
                .is_some_and(|p| self.text(p) == "method"),
            // h3's `getMethod(event)`.
            "call_expression" => n
                .child_by_field_name("function")
                .is_some_and(|f| f.kind() == "identifier" && self.text(f) == "getMethod"),
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
                let (op, l, r) = self.binary(cond)?;
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
            // h3's `isMethod(event, 'POST')`, `isMethod(event, ['PUT', 'PATCH'])`.
            "call_expression"
                if cond
                    .child_by_field_name("function")
                    .is_some_and(|f| f.kind() == "identifier" && self.text(f) == "isMethod") =>
            {
                let methods = self.h3_methods(cond)?;
                Some((methods, false))
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

    /// `options.methods.includes(req.method)` (negated or not): the method tested against the list
    /// in a field of a parameter (function, parameter index, field).
    fn param_method_gate(&mut self, cond: Node<'t>) -> Option<(FnId, usize, String)> {
        match cond.kind() {
            "parenthesized_expression" => self.param_method_gate(cond.named_child(0)?),
            "unary_expression"
                if cond
                    .child_by_field_name("operator")
                    .is_some_and(|o| self.text(o) == "!") =>
            {
                self.param_method_gate(cond.child_by_field_name("argument")?)
            }
            "call_expression" => {
                let f = cond.child_by_field_name("function")?;
                if self.text(f.child_by_field_name("property")?) != "includes" {
                    return None;
                }
                let arg = cond.child_by_field_name("arguments")?.named_child(0)?;
                if !self.is_method_ref(arg) {
                    return None;
                }
                match self.eval(f.child_by_field_name("object")?) {
                    Val::Member(base, field) => match base.as_ref() {
                        Val::Param(f, i) => Some((*f, *i, field)),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The methods named by the second argument of h3's `isMethod` / `assertMethod`: a literal or
    /// an array of them.
    fn h3_methods(&mut self, call: Node<'t>) -> Option<Vec<String>> {
        let arg = call.child_by_field_name("arguments")?.named_child(1)?;
        let methods: Vec<String> = match arg.kind() {
            "string" => vec![self.method_literal(arg)?],
            "array" => {
                let mut cursor = arg.walk();
                arg.named_children(&mut cursor)
                    .filter_map(|i| self.method_literal(i))
                    .collect()
            }
            _ => return None,
        };
        (!methods.is_empty()).then_some(methods)
    }

    /// `assertMethod(event, 'POST')` (h3) as a statement: a gate that answers 405 to every other
    /// method.
    pub(super) fn method_assertion(&mut self, stmt: Node<'t>) {
        let Some(mut expr) = stmt.named_child(0) else {
            return;
        };
        if expr.kind() == "await_expression"
            && let Some(inner) = expr.named_child(0)
        {
            expr = inner;
        }
        if expr.kind() != "call_expression"
            || !expr
                .child_by_field_name("function")
                .is_some_and(|f| f.kind() == "identifier" && self.text(f) == "assertMethod")
        {
            return;
        }
        if let Some(methods) = self.h3_methods(expr) {
            self.record_check(&methods, line(expr), true, true);
        }
    }

    fn record_check(&mut self, methods: &[String], line: u32, negated: bool, exits: bool) {
        let f = self.cur_fn();
        self.module.functions[f].method_checks.push(MethodCheck {
            methods: methods.to_vec(),
            line,
            negated,
            exits,
        });
    }

    /// The methods the code being walked runs under, but `methods`.
    fn methods_except(&self, methods: &[String]) -> Vec<String> {
        let all: Vec<String> = HTTP_METHODS.iter().map(|m| m.to_string()).collect();
        self.branch
            .clone()
            .unwrap_or(all)
            .into_iter()
            .filter(|m| !methods.contains(m))
            .collect()
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
        if let Some(gate) = self.param_method_gate(cond) {
            let f = self.cur_fn();
            self.module.functions[f].param_method_gates.push(gate);
        }
        let mut looked_up = self.is_lookup_guard(cond);
        // What a project function returned guards only where the condition tests it for
        // presence (`if (row)`, `if (!(await taken(x)))`, not `if (res.ok)`), and never in
        // place of a guard on a lookup already in force.
        if looked_up
            .as_ref()
            .is_some_and(|(m, _)| m.starts_with(HELPER_GUARD))
            && (self.guarded.is_some() || self.lookup_polarity(cond, 0) == (None, None))
        {
            looked_up = None;
        }
        let guard = looked_up.as_ref().map(|(model, _)| model.clone());
        let row = looked_up.map(|(model, row)| Found { model, row });
        self.eval(cond);
        // `if (claimed.count === 0) return`: what follows runs once; `if (claimed) { .. }`: the
        // consequence does.
        let claim = self
            .claim_test(cond, 0)
            .map(|(what, failed)| ((what, line(cond)), failed));
        let saved_claim = self.claimed;
        if let Some((c, false)) = claim {
            self.claimed = Some(c);
        }
        let consequence = node.child_by_field_name("consequence");
        let alternative = node.child_by_field_name("alternative");
        // Which way the condition tests the row: `if (!parent) throw ..` goes on only when the
        // lookup found it, so what follows is not a find-or-create.
        let (when_true, when_false) = if guard.is_some() {
            self.lookup_polarity(cond, 0)
        } else {
            (None, None)
        };
        // A condition that reads the row without saying whether it was found (a field compared,
        // `limit.count >= 10`; the row handed to a predicate, `helper.isEmpty(form.fields)`)
        // guards nothing.
        let (guard, row) = if guard.is_some() && (when_true, when_false) == (None, None) {
            (None, None)
        } else {
            (guard, row)
        };
        // A branch runs when the lookup missed if the condition says so, or, when it does not say,
        // unless the other branch is the one that runs when it missed (`!row && flag`).
        let missed = |this: Option<bool>, other: Option<bool>| match this {
            Some(found) => !found,
            None => other != Some(false),
        };
        let missed_when_true = guard.clone().filter(|_| missed(when_true, when_false));
        let missed_when_false = guard.clone().filter(|_| missed(when_false, when_true));
        // Where the condition says the row was found.
        let found_when_true = row.clone().filter(|_| when_true == Some(true));
        let found_when_false = row.clone().filter(|_| when_false == Some(true));
        let saved_guard = self.guarded.clone();
        let saved_refused = self.refused;
        let saved_state = self.state_guard.clone();
        // (model, field, test, combined with `&&`/`||`, line)
        let state = self.state_test(cond, 0);
        let at = line(cond);
        let region = |runs: bool| {
            state.clone().and_then(|(model, field, test, combo)| {
                // `a && b` true says both hold; `a || b` false says neither does.
                let sure = match combo {
                    Some("&&") => runs,
                    Some(_) => !runs,
                    None => true,
                };
                sure.then(|| {
                    let r = crate::facts::state_runs(runs, combo.is_some());
                    (model, field, format!("{r}:{test}"), at)
                })
            })
        };
        let saved_found = self.found.clone();
        // `if (dto.email) { const u = await find(dto.email); if (u) throw ..; }`: when the
        // request supplies the value the guard holds after the block too.
        let presence = guard.is_none() && alternative.is_none() && self.presence_test(cond);
        self.block_guard = None;
        if guard.is_some() {
            self.guarded = missed_when_true.or_else(|| saved_guard.clone());
            self.found = with(&saved_found, &found_when_true);
        }
        if let Some(st) = region(true) {
            self.state_guard = crate::facts::nested_guard(&saved_state, st);
        }
        // `if (options?.upsert) {..}`: what runs there runs only where a caller passes a truthy
        // `upsert` (see `CallSite::param_gate`).
        let gate = self.param_test(cond, 0);
        let saved_gate = self.param_gate.clone();
        let gated = |truthy: bool| {
            saved_gate.clone().or_else(|| {
                gate.clone()
                    .map(|(function, index, path, tag, positive)| ParamGate {
                        function,
                        index,
                        path,
                        test: match tag {
                            Some(t) => ParamTest::Variant {
                                enum_name: String::new(),
                                names: vec![t],
                                is: positive == truthy,
                            },
                            None => ParamTest::Truthy(positive == truthy),
                        },
                        line: at,
                    })
            })
        };
        self.param_gate = gated(true);
        // After `if (req.method === 'DELETE') { ..; return }`, or in its `else`, the other methods.
        let mut others = None;
        let (scopes, mark) = (self.scope_count(), self.assigned.len());
        match check {
            Some((methods, false)) => {
                let leaves = consequence.is_some_and(|c| exits(c, self.src));
                self.record_check(&methods, line(cond), false, leaves);
                others = Some(self.methods_except(&methods));
                if let Some(c) = consequence {
                    self.walk_under(c, Some(methods));
                }
            }
            Some((methods, true)) => {
                let leaves = consequence.is_some_and(|c| exits(c, self.src));
                self.record_check(&methods, line(cond), true, leaves);
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
        self.claimed = match claim {
            Some((c, true)) => Some(c),
            _ => saved_claim,
        };
        // The other branch runs in the other state.
        self.state_guard = match region(false) {
            Some(st) => crate::facts::nested_guard(&saved_state, st),
            None => saved_state.clone(),
        };
        self.param_gate = gated(false);
        if let Some(a) = alternative {
            if guard.is_some() {
                self.guarded = missed_when_false.clone().or_else(|| saved_guard.clone());
                self.found = with(&saved_found, &found_when_false);
            }
            let split = self.assigned.len();
            self.walk_under(a, others.clone().or_else(|| self.branch.clone()));
            self.join_branches(scopes, mark, split);
        }
        if let Some(rest) = others.filter(|_| consequence.is_some_and(|c| exits(c, self.src))) {
            self.branch = Some(rest);
        }
        // `if (existing) return ..;` / `throw`: what follows runs only when the lookup missed;
        // after `if (!row) return ..;` only when it found the row; after `if (!claimed) return`,
        // only once. In a block, `break` leaves what follows as well, and so does `continue` in a
        // loop over a collection (`for (const p of payments) { if (!(await redis.set(k, 1, { NX:
        // true }))) continue; credit(..) }`); in `while (true)` or a counted loop it tries the
        // same claim again, and what follows runs once that succeeds.
        let in_block = node.parent().is_some_and(|p| p.kind() == "statement_block");
        let over_items = in_block && in_loop_over_items(node);
        let leaves = consequence.is_some_and(|c| {
            exits(c, self.src)
                || (in_block && ends_in(c, &["break_statement"], self.src))
                || (over_items && ends_in(c, &["continue_statement"], self.src))
        });
        // `if (res.changes !== 1) throw ..` in the function's own body: every run that loses
        // the claim fails the function, so its callers go on once.
        if let Some(((what, at), true)) = claim
            && consequence.is_some_and(|c| throws(c, self.src))
        {
            let f = self.cur_fn();
            let facts = &mut self.module.functions[f];
            if facts.body_block.is_some() && node.parent().map(|p| p.id()) == facts.body_block {
                facts.refuses_unless.get_or_insert((what, at));
            }
        }
        self.claimed = match claim {
            Some((c, true)) if leaves => Some(c),
            _ => saved_claim,
        };
        // `if (order.status !== 'pending') return`: what follows runs in the other state.
        self.state_guard = match region(false) {
            Some(st) if leaves => crate::facts::nested_guard(&saved_state, st),
            _ => saved_state,
        };
        self.param_gate = if leaves {
            gated(false)
        } else {
            saved_gate.clone()
        };
        // `if (found) throw ..` in the function's own body: every run that finds the row fails
        // the function, so its callers go on only when the lookup missed.
        if let Some(model) = &missed_when_false
            && leaves
            && consequence.is_some_and(|c| throws(c, self.src))
            && !model.starts_with(crate::program::HELPER_GUARD)
        {
            // (and every call reaches the test: no `return` before it)
            let mut before = node.prev_named_sibling();
            let mut returns_before = false;
            let mut seen = 0;
            while let Some(b) = before {
                seen += 1;
                if seen > 256 {
                    returns_before = true;
                    break;
                }
                // (`if (!name) return;` on a parameter: a caller that passes no value has no
                // row to look up, and one that passes it reaches the test)
                returns_before |= self.text(b).contains("return") && !self.returns_when_absent(b);
                before = b.prev_named_sibling();
            }
            let f = self.cur_fn();
            let facts = &mut self.module.functions[f];
            if !returns_before
                && facts.body_block.is_some()
                && node.parent().map(|p| p.id()) == facts.body_block
            {
                facts
                    .refuses_found
                    .get_or_insert((model.clone(), line(cond)));
            }
        }
        let inner_guard = self.block_guard.take().filter(|_| presence);
        self.refused = match &missed_when_false {
            Some(_) if leaves && consequence.is_some_and(|c| throws(c, self.src)) => {
                Some(line(cond))
            }
            Some(_) if leaves => None,
            _ => saved_refused,
        };
        // `if (existing) { if (existing.status === 'completed') return ..; }`: a retry finds
        // the row the first run completed and leaves, as after `if (existing && ..) return`.
        let leaves_when_found = leaves
            || (when_true == Some(true)
                && alternative.is_none()
                && consequence.is_some_and(|c| self.leaves_in_state(c, guard.as_deref())));
        self.guarded = match missed_when_false {
            Some(g) if leaves_when_found => Some(g),
            _ => saved_guard,
        };
        if self.guarded.is_none()
            && let Some((g, at)) = inner_guard
        {
            self.guarded = Some(g);
            self.refused = Some(at);
        }
        self.found = if leaves {
            with(&saved_found, &found_when_false)
        } else {
            saved_found
        };
    }

    /// A block that does nothing but leave when the row `model` found is in some state: `{ if
    /// (existing.status === 'completed') return res.json(existing); }`.
    fn leaves_in_state(&mut self, block: Node<'t>, model: Option<&str>) -> bool {
        let Some(model) = model else { return false };
        if block.kind() != "statement_block" {
            return false;
        }
        let mut cursor = block.walk();
        let stmts: Vec<Node> = block
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .collect();
        let [inner] = stmts.as_slice() else {
            return false;
        };
        inner.kind() == "if_statement"
            && inner.child_by_field_name("alternative").is_none()
            && inner
                .child_by_field_name("consequence")
                .is_some_and(|c| exits(c, self.src))
            && inner
                .child_by_field_name("condition")
                .and_then(|c| self.state_test(c, 0))
                .is_some_and(|(m, ..)| m == model)
    }

    /// A condition that tests a parameter (or a member of one) for truthiness: `options?.upsert`,
    /// `!notify`, `(flags.dryRun)`, or against a string tag (`command.type === 'pay'`): the
    /// function, the parameter, the members, the tag, and whether the condition holds when the
    /// value is truthy (is the tag). Only names and member accesses: nothing that calls.
    #[allow(clippy::type_complexity)]
    fn param_test(
        &mut self,
        n: Node<'t>,
        depth: usize,
    ) -> Option<(
        crate::program::FnId,
        usize,
        Vec<String>,
        Option<String>,
        bool,
    )> {
        if depth > 8 {
            return None;
        }
        match n.kind() {
            "parenthesized_expression" | "non_null_expression" => {
                self.param_test(n.named_child(0)?, depth + 1)
            }
            "unary_expression" if n.field("operator").is_some_and(|o| self.text(o) == "!") => {
                let (f, i, path, tag, positive) =
                    self.param_test(n.field("argument")?, depth + 1)?;
                if tag.is_some() {
                    return None;
                }
                Some((f, i, path, tag, !positive))
            }
            "binary_expression" => {
                let op = n.field("operator").map(|o| self.text(o))?;
                let positive = match op {
                    "===" | "==" => true,
                    "!==" | "!=" => false,
                    _ => return None,
                };
                let (l, r) = (n.field("left")?, n.field("right")?);
                let (side, lit) = if r.kind() == "string" {
                    (l, r)
                } else if l.kind() == "string" {
                    (r, l)
                } else {
                    return None;
                };
                let Val::Str(tag) = self.eval(lit) else {
                    return None;
                };
                let (f, i, path, None, true) = self.param_test(side, depth + 1)? else {
                    return None;
                };
                Some((f, i, path, Some(tag), positive))
            }
            "identifier" | "member_expression" => {
                let mut cur = n;
                while cur.kind() == "member_expression" {
                    if cur
                        .field("property")
                        .is_none_or(|p| p.kind() != "property_identifier")
                    {
                        return None;
                    }
                    cur = cur.field("object")?;
                }
                if cur.kind() != "identifier" {
                    return None;
                }
                let mut path = Vec::new();
                let mut v = self.eval(n);
                loop {
                    match v {
                        Val::Param(f, i) => {
                            path.reverse();
                            return Some((f, i, path, None, true));
                        }
                        Val::Member(inner, p) => {
                            path.push(p);
                            v = (*inner).clone();
                        }
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }

    /// A constant that holds a test (`const taken = (await prisma.user.count(..)) > 0`, `const
    /// exists = (await findFirst(..)) !== null`), tested later (`if (taken) throw ..`): the test
    /// it holds, read as if written in the condition.
    fn bound_test(&self, n: Node<'t>) -> Option<Node<'t>> {
        if n.kind() != "identifier" {
            return None;
        }
        let name = self.text(n);
        let scope = self.find(name)?;
        let super::eval::Decl::Var(decl) = self.decls.get(&(scope, name.to_string()))? else {
            return None;
        };
        // (a `const`: nothing assigns it after)
        let declaration = decl.parent()?;
        if declaration.kind() != "lexical_declaration"
            || declaration.child(0).map(|k| self.text(k)) != Some("const")
            || decl.child_by_field_name("name")?.kind() != "identifier"
        {
            return None;
        }
        let mut value = decl.child_by_field_name("value")?;
        while value.kind() == "parenthesized_expression" {
            value = value.named_child(0)?;
        }
        let test = match value.kind() {
            "binary_expression" => matches!(
                self.binary(value)?.0,
                "===" | "!==" | "==" | "!=" | ">" | "<" | ">=" | "<="
            ),
            "unary_expression" => {
                value.child_by_field_name("operator").map(|o| self.text(o)) == Some("!")
            }
            // `const valid = await bcrypt.compare(dto.oldPassword, user.password)`
            "await_expression" | "call_expression" => {
                let mut call = value;
                if call.kind() == "await_expression" {
                    call = call.named_child(0)?;
                }
                call.kind() == "call_expression" && secret_check_name(call, self.src).is_some()
            }
            _ => false,
        };
        test.then_some(value)
    }

    /// A check of a secret the request holds against a looked-up row's stored one
    /// (`bcrypt.compare(dto.oldPassword, user.password)`, `argon2.verify(user.passwordHash,
    /// body.current)`, `user.comparePassword(body.password)`): the model, the stored field, and
    /// the test as `Effect::state_guard` writes it, `hash:v:NAME` (the stored hash verifies the
    /// request's `NAME`). A request that writes a new secret into that field makes the check
    /// fail on its retry.
    fn secret_check(&mut self, call: Node<'t>) -> Option<(String, String, String)> {
        secret_check_name(call, self.src)?;
        let callee = call.child_by_field_name("function")?;
        let args: Vec<Node<'t>> = {
            let list = call.child_by_field_name("arguments")?;
            let mut c = list.walk();
            list.named_children(&mut c).collect()
        };
        // `user.comparePassword(plain)`: a method of the row, over its password.
        if callee.kind() == "member_expression"
            && let Some(obj) = callee.child_by_field_name("object")
            && obj.kind() == "identifier"
            && let Some((model, _)) = self.is_lookup_leaf(obj)
        {
            let [plain] = args.as_slice() else {
                return None;
            };
            let name =
                value_name(*plain, self.src).filter(|n| crate::text::names_current_secret(n))?;
            return Some((model, "password".into(), format!("hash:v:{name}")));
        }
        let mut stored = None;
        let mut plain = None;
        for a in &args {
            if a.kind() == "member_expression"
                && let Some(obj) = a.child_by_field_name("object")
                && obj.kind() == "identifier"
                && let Some(field) = a
                    .child_by_field_name("property")
                    .map(|p| self.text(p).to_string())
                && crate::text::names_secret_field(&field)
                && let Some((model, _)) = self.is_lookup_leaf(obj)
            {
                stored = Some((model, field));
            } else if plain.is_none() {
                plain = value_name(*a, self.src);
            }
        }
        let ((model, field), name) = (stored?, plain?);
        // (the current secret, sent to prove a change: not a sign-in's or a confirmation's)
        if !crate::text::names_current_secret(&name) {
            return None;
        }
        Some((model, field, format!("hash:v:{name}")))
    }

    /// A looked-up row itself (a binding of a lookup's result, or the lookup call): the model
    /// it read.
    pub(super) fn is_lookup_leaf(&mut self, n: Node<'t>) -> Option<(String, Val)> {
        self.read_leaf(n, Read::Lookup)
    }

    /// A count of rows tested for none (`if (count === 0)`, `if (n > 0) throw ..`, `if (!count)`)
    /// tests whether a row exists, as a lookup does: the model counted, and whether the
    /// condition holds when one was found. A count tested against anything else (`n >= 5`, a
    /// quota) says nothing of a row.
    fn count_test(&mut self, n: Node<'t>, depth: usize) -> Option<(String, bool)> {
        if depth > 8 {
            return None;
        }
        match n.kind() {
            "parenthesized_expression" | "await_expression" | "non_null_expression" => {
                self.count_test(n.named_child(0)?, depth + 1)
            }
            "unary_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o));
                if op != Some("!") {
                    return None;
                }
                let (model, found) =
                    self.count_test(n.child_by_field_name("argument")?, depth + 1)?;
                Some((model, !found))
            }
            "binary_expression" => {
                let (op, l, r) = self.binary(n)?;
                let (count, number, flipped) = if r.kind() == "number" {
                    (l, self.text(r), false)
                } else if l.kind() == "number" {
                    (r, self.text(l), true)
                } else {
                    return None;
                };
                // written `count OP number`: the condition holds when a row was found
                let op = match (flipped, op) {
                    (false, o) => o,
                    (true, ">") => "<",
                    (true, "<") => ">",
                    (true, ">=") => "<=",
                    (true, "<=") => ">=",
                    (true, o) => o,
                };
                let found = match (op, number) {
                    (">", "0") | (">=", "1") | ("!==" | "!=", "0") => true,
                    ("===" | "==", "0") | ("<", "1") | ("<=", "0") => false,
                    _ => return None,
                };
                // (`(await prisma.user.count(..)) > 0`: the count awaited in parentheses)
                let mut count = count;
                while matches!(
                    count.kind(),
                    "parenthesized_expression" | "await_expression" | "non_null_expression"
                ) {
                    count = count.named_child(0)?;
                }
                let (model, _) = self.counted(count)?;
                Some((model, found))
            }
            "identifier" if let Some(test) = self.bound_test(n) => self.count_test(test, depth + 1),
            _ => self.counted(n).map(|(model, _)| (model, true)),
        }
    }

    /// What a count test counts: a count read (`prisma.user.count(..)`, a raw `COUNT(*)`), or
    /// the length of the rows a read found (`rows.length` of `repo.find(..)`, `findMany`, a raw
    /// `SELECT`).
    fn counted(&mut self, n: Node<'t>) -> Option<(String, Val)> {
        if n.kind() == "member_expression"
            && n.child_by_field_name("property").map(|p| self.text(p)) == Some("length")
        {
            let rows = n.child_by_field_name("object")?;
            // the rows of a lookup (`findAll`, `findMany`) are tested as the lookup itself is
            if self
                .read_leaf(rows, Read::Lookup)
                .is_some_and(|(model, _)| !model.starts_with(HELPER_GUARD))
            {
                return None;
            }
            return self.read_leaf(rows, Read::List);
        }
        self.read_leaf(n, Read::Count)
    }

    /// A binding of a read's result, or the read call: the model it read (see [`Read`]).
    fn read_leaf(&mut self, n: Node<'t>, read: Read) -> Option<(String, Val)> {
        let count = read == Read::Count;
        let reads = |this: &Self, method: &str| match read {
            Read::Count => this.catalog.is_read(method) && method.starts_with("count"),
            Read::Lookup => this.catalog.is_lookup(method),
            Read::List => this.catalog.is_list_read(method),
        };
        match n.kind() {
            "identifier" => {
                let name = self.text(n).to_string();
                let row = self.lookup(&name);
                // A row reshaped into a literal (`return { ...user, avatarUrl: user.avatar_url
                // }` of a helper, seen where it is called): the row it spreads.
                let row = match &row {
                    Val::Obj(fields) => crate::program::spread_values(fields)
                        .find(|v| !matches!(v, Val::Param(..)))
                        .map_or(row.clone(), Val::clone),
                    _ => row,
                };
                // `const count = Number(rows[0].count)` after `const { rows } = await
                // pool.query('SELECT COUNT(*) AS count FROM ..')`: the rows a raw count found.
                if count && let Some(table) = raw_count(&row) {
                    return Some((table, row.clone()));
                }
                // Drizzle's `db.select().from(users)..`, its first row included: a lookup of
                // the table.
                let query = match &row {
                    Val::Member(inner, i) if i == "0" => inner.as_ref(),
                    v => v,
                };
                // node-postgres answers `{ rows }`: `(await pool.query(..)).rows[0]`.
                let query = match query {
                    Val::Member(inner, r) if r == "rows" => inner.as_ref(),
                    v => v,
                };
                // better-sqlite3's `db.prepare('SELECT ..').get(id)`: the statement prepared.
                let query = match query {
                    Val::Call(callee, _) => {
                        crate::program::prepared_statement(callee, &["get", "all"]).unwrap_or(query)
                    }
                    v => v,
                };
                if !count && let Some(table) = crate::program::drizzle_select_from(query) {
                    return Some((table, row.clone()));
                }
                if let Some(table) = from_select(query, read) {
                    return Some((table, row.clone()));
                }
                // A raw `SELECT … FROM account WHERE …` through a SQL tag or client
                // (`sql\`select id from account where email = ${email}\``, `pool.query('SELECT
                // ..', [..])`): a lookup of its table.
                if !count
                    && let Val::Call(_, args) = query
                    && let Some(text) = args.first().and_then(crate::program::sql_text)
                    && crate::link::calls::is_select(&text)
                    && !crate::link::calls::selects_count(&text)
                    && let Some(table) = crate::link::calls::sql_table(&text)
                {
                    return Some((table, row.clone()));
                }
                if let Val::Call(callee, _) = &row
                    && let Val::Member(model, method) = callee.as_ref()
                    && reads(self, method)
                {
                    // `knex('users').where(..).first()`, Kysely's
                    // `db.selectFrom('person').where(..).executeTakeFirst()`: the table the
                    // builder's chain names.
                    if let Some(table) = crate::program::chain_table(model) {
                        return Some((table, row.clone()));
                    }
                    // Objection's `Person.query().where(..).first()`: the model `query()` is
                    // called on, a class or a model handed out by an accessor.
                    if let Some(q) = crate::program::query_receiver(model) {
                        let name = match q {
                            Val::Class(c) | Val::Instance(c) | Val::This(Some(c)) => {
                                Some(self.module.classes[*c].name.clone())
                            }
                            v => v.name_it_goes_by(),
                        };
                        if let Some(name) = name {
                            return Some((name, row.clone()));
                        }
                    }
                    // TypeORM's `repo.createQueryBuilder('u').where(..).getOne()`: what the
                    // repository it was made from reads.
                    let model = match crate::program::query_builder_base(model) {
                        Some(Val::Class(c)) => {
                            return Some((self.module.classes[*c].name.clone(), row.clone()));
                        }
                        Some(base) => base,
                        None => model.as_ref(),
                    };
                    // `this.findOne(..)` in a model's static method reads that model.
                    if let Val::This(Some(c)) = model {
                        return Some((self.module.classes[*c].name.clone(), row.clone()));
                    }
                    // `this.users.findByEmail(..)` on a field declared by its type only: the
                    // type names it (the linker reads what that type's method looks up).
                    let name = match model {
                        Val::TypeRef(t) => t.name_it_goes_by(),
                        // TypeORM's `queryRunner.manager.findOne(Reaction, { where })`: the entity
                        m if m
                            .name_it_goes_by()
                            .is_some_and(|n| crate::program::entity_manager_name(&n))
                            && let Val::Call(_, args) = &row
                            && args.len() >= 2
                            && let Some(entity) = match &args[0] {
                                Val::Class(c) => Some(self.module.classes[*c].name.clone()),
                                a => a.name_it_goes_by(),
                            } =>
                        {
                            Some(entity)
                        }
                        // `dataSource.getRepository(Credential).findOneBy(..)`: the entity
                        Val::Call(getter, args)
                            if matches!(getter.as_ref(), Val::Member(_, g)
                                if crate::program::REPOSITORY_GETTERS.contains(&g.as_str())) =>
                        {
                            match args.first() {
                                Some(Val::Class(c)) => Some(self.module.classes[*c].name.clone()),
                                Some(a) => a.name_it_goes_by(),
                                None => None,
                            }
                        }
                        // MongoDB's `db.collection('settings').findOne(..)`: the collection
                        Val::Call(getter, args)
                            if matches!(getter.as_ref(), Val::Member(_, g) if g == "collection")
                                && args.first().and_then(Val::as_str).is_some() =>
                        {
                            args.first().and_then(Val::as_str).map(str::to_string)
                        }
                        m => m.name_it_goes_by(),
                    };
                    // (a module's function named like a read, `users.findAccount(..)` of a
                    // `require`d module, names no model: what it returned, below)
                    if let Some(m) = name {
                        return Some((m, row.clone()));
                    }
                }
                // What a project function returned (`const row = await selectByEmail(..)`),
                // or a field of it (`const { invitation } = await getInvitation(..)` of a
                // function that answers `{ invitation }`): the linker knows whether that
                // function only looks rows up.
                let (returned, field) = match &row {
                    Val::Member(inner, f) => (inner.as_ref(), Some(f)),
                    v => (v, None),
                };
                if !count && let Val::Call(callee, _) = returned {
                    // (a field only of a function's answer, not of a method chain's:
                    // `const { data } = await supabase.from(..).select()` is read above)
                    // and only as a lookup's row, not as rows counted (`validFormats.length`)
                    let counted = n.parent().is_some_and(|p| {
                        p.kind() == "member_expression"
                            && p.child_by_field_name("property").map(|x| self.text(x))
                                == Some("length")
                    });
                    if field.is_some()
                        && (read != Read::Lookup
                            || field.is_some_and(|f| NOT_A_ROW.contains(&f.as_str()))
                            || counted
                            || !matches!(callee.as_ref(), Val::Func(_) | Val::Import { .. }))
                    {
                        return None;
                    }
                    return self
                        .helper_named(callee)
                        .map(|h| (helper_field(h, field), row.clone()));
                }
                None
            }
            // `if (existing.data)` after `const existing = await supabase.from('t').select()
            // ..single()`: the row Supabase answers in `data`.
            "member_expression" => {
                let o = n.child_by_field_name("object")?;
                let p = n.child_by_field_name("property")?;
                if o.kind() != "identifier" {
                    return None;
                }
                // `if (result.invitation)` after `const result = await getInvitation(..)`: a
                // field of what a project function returned (as above)
                if self.text(p) != "data" {
                    let answer = self.lookup(self.text(o));
                    let field = self.text(p).to_string();
                    return match &answer {
                        Val::Call(callee, _)
                            if read == Read::Lookup
                                && !NOT_A_ROW.contains(&field.as_str())
                                && field != "length"
                                && matches!(callee.as_ref(), Val::Func(_) | Val::Import { .. }) =>
                        {
                            self.helper_named(callee).map(|h| {
                                let row =
                                    Val::Member(std::sync::Arc::new(answer.clone()), field.clone());
                                (helper_field(h, Some(&field)), row)
                            })
                        }
                        _ => None,
                    };
                }
                let answer = self.lookup(self.text(o));
                let row = Val::Member(std::sync::Arc::new(answer), "data".to_string());
                from_select(&row, read).map(|table| (table, row))
            }
            "call_expression" => {
                let f = n.child_by_field_name("function")?;
                let Some(p) = f.child_by_field_name("property") else {
                    // `if (await emailTaken(email))`: a function of the project, maybe
                    return (!count && f.kind() == "identifier")
                        .then(|| (format!("{HELPER_GUARD}{}", self.text(f)), Val::Unknown));
                };
                if !reads(self, self.text(p)) {
                    // `if (await this.selectByEmail(c, email))`, `users.emailTaken(..)`
                    return (!count)
                        .then(|| (format!("{HELPER_GUARD}{}", self.text(p)), Val::Unknown));
                }
                let o = f.child_by_field_name("object")?;
                // `helper.isValid(x)`, `validator.isEmail(x)`: a predicate of an imported
                // module or a global tests a value, it looks nothing up.
                if self.text(p).starts_with("is")
                    && o.kind() == "identifier"
                    && matches!(
                        self.lookup(self.text(o)),
                        Val::Import { .. } | Val::Global(_)
                    )
                {
                    return None;
                }
                // The call is evaluated with the condition: its row is not bound to a name here.
                if o.kind() == "this" {
                    let c = self.this_class()?;
                    return Some((self.module.classes[c].name.clone(), Val::Unknown));
                }
                let o = o.child_by_field_name("property").unwrap_or(o);
                matches!(o.kind(), "identifier" | "property_identifier")
                    .then(|| (self.text(o).to_string(), Val::Unknown))
            }
            _ => None,
        }
    }

    /// The guard name of a call's callee when it may be a function of the project (see
    /// [`HELPER_GUARD`]): a function in view, an import, a method.
    fn helper_named(&self, callee: &Val) -> Option<String> {
        let name = match callee {
            Val::Func(f) => Some(self.module.functions[*f].name.clone()),
            Val::Import { name: Some(n), .. } | Val::Member(_, n) | Val::Global(n) => {
                Some(n.clone())
            }
            _ => None,
        }?;
        (name != "anonymous" && name != "default").then(|| format!("{HELPER_GUARD}{name}"))
    }

    /// Whether the row was found when the condition is true, and when it is false (`None`: the
    /// condition does not say). `existing` → (found, missing); `!parent` → (missing, found);
    /// `!parent || parent.archived` is false only when the row was found.
    pub(super) fn lookup_polarity(
        &mut self,
        n: Node<'t>,
        depth: usize,
    ) -> (Option<bool>, Option<bool>) {
        fn both(a: Option<bool>, b: Option<bool>) -> Option<bool> {
            match (a, b) {
                (Some(x), Some(y)) => (x == y).then_some(x),
                (x, None) | (None, x) => x,
            }
        }
        if depth > 16 {
            return (None, None);
        }
        if let Some((_, found)) = self.count_test(n, 0) {
            return (Some(found), Some(!found));
        }
        if let Some(test) = self.bound_test(n) {
            return self.lookup_polarity(test, depth + 1);
        }
        match n.kind() {
            "parenthesized_expression" | "await_expression" | "non_null_expression" => {
                match n.named_child(0) {
                    Some(inner) => self.lookup_polarity(inner, depth + 1),
                    None => (None, None),
                }
            }
            "unary_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o));
                match (op, n.child_by_field_name("argument")) {
                    (Some("!"), Some(a)) => {
                        let (t, f) = self.lookup_polarity(a, depth + 1);
                        (f, t)
                    }
                    _ => (None, None),
                }
            }
            "binary_expression" => {
                let Some((op, l, r)) = self.binary(n) else {
                    return (None, None);
                };
                let nullish = |this: &Self, x: Node| {
                    matches!(x.kind(), "null" | "undefined") || this.text(x) == "undefined"
                };
                // `rows && rows.length > 0`, `!rows || rows.length === 0`: a test that the value
                // is there, before the test of what it holds, says no more than that test (a
                // list read answers `null` only when it failed).
                let (lt, lf) = self.lookup_polarity(l, depth + 1);
                let there = match (op, l.kind()) {
                    ("&&", "identifier") => Some(l),
                    ("||", "unary_expression")
                        if l.child_by_field_name("operator").map(|o| self.text(o)) == Some("!") =>
                    {
                        l.child_by_field_name("argument")
                            .filter(|a| a.kind() == "identifier")
                    }
                    _ => None,
                };
                if (lt, lf) == (None, None)
                    && let Some(x) = there
                {
                    let name = self.text(x);
                    let tested = self.text(r);
                    if [".", "?."]
                        .iter()
                        .any(|s| tested.starts_with(&format!("{name}{s}")))
                    {
                        return self.lookup_polarity(r, depth + 1);
                    }
                }
                // `rows.length > 0` of a lookup's rows (`findMany`, `findAll`): found when it
                // holds, as a count's test is.
                if let Some(found) = self.length_test(op, l, r) {
                    return (Some(found), Some(!found));
                }
                match op {
                    "&&" => {
                        let (rt, _) = self.lookup_polarity(r, depth + 1);
                        (both(lt, rt), None)
                    }
                    "||" => {
                        let (_, rf) = self.lookup_polarity(r, depth + 1);
                        (None, both(lf, rf))
                    }
                    "===" | "==" | "!==" | "!=" => {
                        let side = if nullish(self, r) {
                            l
                        } else if nullish(self, l) {
                            r
                        } else {
                            return (None, None);
                        };
                        let (t, f) = self.lookup_polarity(side, depth + 1);
                        if op.starts_with('!') { (t, f) } else { (f, t) }
                    }
                    _ => (None, None),
                }
            }
            _ if self.is_lookup_leaf(n).is_some() => (Some(true), Some(false)),
            _ => (None, None),
        }
    }

    /// `rows.length > 0` (`=== 0`, `>= 1`, `< 1`, either way round) of the rows a lookup
    /// found: whether the condition holds when a row was found.
    fn length_test(&mut self, op: &str, l: Node<'t>, r: Node<'t>) -> Option<bool> {
        let (len, number, flipped) = if r.kind() == "number" {
            (l, self.text(r), false)
        } else if l.kind() == "number" {
            (r, self.text(l), true)
        } else {
            return None;
        };
        if len.kind() != "member_expression"
            || len.child_by_field_name("property").map(|p| self.text(p)) != Some("length")
        {
            return None;
        }
        let rows = len.child_by_field_name("object")?;
        // node-postgres answers `{ rows }`: `existing.rows.length`
        let rows = match rows.child_by_field_name("property") {
            Some(p) if rows.kind() == "member_expression" && self.text(p) == "rows" => {
                rows.child_by_field_name("object")?
            }
            _ => rows,
        };
        self.is_lookup_leaf(rows)?;
        let op = match (flipped, op) {
            (true, ">") => "<",
            (true, "<") => ">",
            (true, ">=") => "<=",
            (true, "<=") => ">=",
            (_, o) => o,
        };
        match (op, number) {
            (">", "0") | (">=", "1") | ("!==" | "!=", "0") => Some(true),
            ("===" | "==", "0") | ("<", "1") | ("<=", "0") => Some(false),
            _ => None,
        }
    }

    /// A binary expression's operator and operands.
    fn binary(&self, n: Node<'t>) -> Option<(&'t str, Node<'t>, Node<'t>)> {
        Some((
            self.text(n.child_by_field_name("operator")?),
            n.child_by_field_name("left")?,
            n.child_by_field_name("right")?,
        ))
    }

    /// The condition tests a field of a looked-up row (`order.status !== 'pending'`,
    /// `user.emailVerified`, `!invite.acceptedAt`): the model, the field, the test
    /// (`truthy`, `falsy`, `eq:LITERAL`, `ne:LITERAL`) and the `&&`/`||` it is combined with.
    #[allow(clippy::type_complexity)]
    fn state_test(
        &mut self,
        n: Node<'t>,
        depth: usize,
    ) -> Option<(String, String, String, Option<&'static str>)> {
        if depth > 8 {
            return None;
        }
        match n.kind() {
            "parenthesized_expression" | "await_expression" | "non_null_expression" => {
                self.state_test(n.named_child(0)?, depth + 1)
            }
            "unary_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o));
                if op != Some("!") {
                    return None;
                }
                let (model, field, test, combo) =
                    self.state_test(n.child_by_field_name("argument")?, depth + 1)?;
                let test = match test.as_str() {
                    "truthy" => "falsy".to_string(),
                    "falsy" => "truthy".to_string(),
                    t => match t.split_once(':') {
                        Some(("eq", l)) => format!("ne:{l}"),
                        Some(("ne", l)) => format!("eq:{l}"),
                        Some(("hash", l)) => format!("nothash:{l}"),
                        Some(("nothash", l)) => format!("hash:{l}"),
                        _ => return None,
                    },
                };
                combo.is_none().then_some((model, field, test, None))
            }
            "binary_expression" => {
                let (op, l, r) = self.binary(n)?;
                match op {
                    "||" | "&&" => {
                        let combo = if op == "||" { "||" } else { "&&" };
                        let (a, b) = (self.state_test(l, depth + 1), self.state_test(r, depth + 1));
                        // One side a state test, the other anything that is none (`!row`).
                        match (a, b) {
                            (Some((m, f, t, None)), None) | (None, Some((m, f, t, None))) => {
                                Some((m, f, t, Some(combo)))
                            }
                            _ => None,
                        }
                    }
                    "===" | "!==" | "==" | "!=" => {
                        let literal = |this: &Self, x: Node<'t>| -> Option<String> {
                            match x.kind() {
                                "string" => Some(this.string_value(x)),
                                "null" | "undefined" => Some("null".into()),
                                "true" | "false" | "number" => Some(this.text(x).to_string()),
                                // `OrderStatus.Paid`, `constants.PAID`: an enum member
                                // stands for one value (`body.status` is what a request sent).
                                "member_expression" if enum_like(x, this.src) => {
                                    Some(this.text(x).to_string())
                                }
                                _ => None,
                            }
                        };
                        // Or a value the request holds (`ticket.priority !== priority`,
                        // `t.email !== body.email`), by its name: `v:priority`. A retry finds
                        // the row holding it when the request writes that value there.
                        let compared = |this: &mut Self, x: Node<'t>| -> Option<String> {
                            literal(this, x).or_else(|| {
                                if this.state_test(x, depth + 1).is_some() {
                                    return None;
                                }
                                value_name(x, this.src).map(|n| format!("v:{n}"))
                            })
                        };
                        let (side, lit) = match (self.state_test(l, depth + 1), compared(self, r)) {
                            (Some(s), Some(lit)) => (s, lit),
                            _ => (self.state_test(r, depth + 1)?, compared(self, l)?),
                        };
                        // (a combination only as tree-sitter reads `a && row!.f !== v`, see
                        // below: `a && (row.f !== v)`)
                        let (model, field, test, combo) = side;
                        if test != "truthy" {
                            return None;
                        }
                        let kind = if op.starts_with('!') { "ne" } else { "eq" };
                        Some((model, field, format!("{kind}:{lit}"), combo))
                    }
                    _ => None,
                }
            }
            "identifier" => {
                let test = self.bound_test(n)?;
                self.state_test(test, depth + 1)
            }
            "call_expression" => self.secret_check(n).map(|(m, f, t)| (m, f, t, None)),
            "member_expression" => {
                let mut obj = n.child_by_field_name("object")?;
                // (`issue!.priority`: the row, asserted present)
                let mut combo = None;
                if obj.kind() == "non_null_expression" {
                    obj = obj.named_child(0)?;
                    // tree-sitter-typescript reads `priority && issue!.priority` as `(priority &&
                    // issue)!.priority`: the row is the right operand, and the test is joined
                    // to the left one as written.
                    if obj.kind() == "binary_expression"
                        && let Some((op @ ("&&" | "||"), _, right)) = self.binary(obj)
                        && right.kind() == "identifier"
                    {
                        combo = Some(if op == "&&" { "&&" } else { "||" });
                        obj = right;
                    }
                }
                let field = self.text(n.child_by_field_name("property")?).to_string();
                // `row.status`, not `row.items.length`.
                if obj.kind() != "identifier" || field == "length" || field == "id" {
                    return None;
                }
                let (model, _) = self.is_lookup_leaf(obj)?;
                Some((model, field, "truthy".into(), combo))
            }
            _ => None,
        }
    }

    /// The condition only tests that a value of the request is there (`dto.email`,
    /// `body.email != null`): a member of a parameter, not a flag the client sets.
    fn presence_test(&mut self, cond: Node<'t>) -> bool {
        let mut n = cond;
        while n.kind() == "parenthesized_expression" {
            match n.named_child(0) {
                Some(c) => n = c,
                None => return false,
            }
        }
        if n.kind() == "binary_expression" {
            match self.binary(n) {
                Some(("!=" | "!==", l, r)) if matches!(r.kind(), "null" | "undefined") => n = l,
                _ => return false,
            }
        }
        if n.kind() != "member_expression" {
            return false;
        }
        let name = n
            .child_by_field_name("property")
            .map(|p| self.text(p).to_ascii_lowercase())
            .unwrap_or_default();
        // A switch the client turns on is no presence test.
        if name.starts_with("is") || name.starts_with("should") || name.starts_with("check") {
            return false;
        }
        let mut root = n;
        while let Some(o) = root.child_by_field_name("object") {
            root = o;
        }
        root.kind() == "identifier" && matches!(self.lookup(self.text(root)), Val::Param(..))
    }

    /// `if (!name) return;` (`if (name == null) return`, `if (!dto.email) { return }`): the
    /// statement returns nothing, and only when a value of a parameter is absent.
    fn returns_when_absent(&mut self, stmt: Node<'t>) -> bool {
        if stmt.kind() != "if_statement" || stmt.child_by_field_name("alternative").is_some() {
            return false;
        }
        let Some(mut cond) = stmt.child_by_field_name("condition") else {
            return false;
        };
        while cond.kind() == "parenthesized_expression" {
            match cond.named_child(0) {
                Some(c) => cond = c,
                None => return false,
            }
        }
        let value = match cond.kind() {
            "unary_expression"
                if cond.child_by_field_name("operator").map(|o| self.text(o)) == Some("!") =>
            {
                cond.child_by_field_name("argument")
            }
            "binary_expression" => match self.binary(cond) {
                Some(("==" | "===", l, r)) if matches!(r.kind(), "null" | "undefined") => Some(l),
                _ => None,
            },
            _ => None,
        };
        let Some(value) = value else { return false };
        let absent = match value.kind() {
            "identifier" => matches!(self.lookup(self.text(value)), Val::Param(..)),
            _ => self.presence_test(value),
        };
        // the consequence: `return;` alone, or in a block
        let bare = |n: Node<'t>| n.kind() == "return_statement" && n.named_child_count() == 0;
        absent
            && stmt.child_by_field_name("consequence").is_some_and(|c| {
                bare(c)
                    || c.kind() == "statement_block"
                        && c.named_child_count() == 1
                        && c.named_child(0).is_some_and(bare)
            })
    }

    /// The condition tests a row looked up earlier (`existing`, `!found`, `await X.findFirst(..)`):
    /// the model it read, and the row's value (`Unknown` for a call in the condition itself).
    pub(super) fn is_lookup_guard(&mut self, cond: Node<'t>) -> Option<(String, Val)> {
        if let Some((model, _)) = self.count_test(cond, 0) {
            return Some((model, Val::Unknown));
        }
        let mut stack = vec![cond];
        let mut budget = 64;
        let mut helper = None;
        let mut count = None;
        while let Some(n) = stack.pop() {
            budget -= 1;
            if budget == 0 {
                return count.or(helper);
            }
            if matches!(n.kind(), "arrow_function" | "function_expression") {
                continue;
            }
            // a count inside the condition (`rows && rows.length > 0`), taken when no lookup is
            // there
            if n != cond
                && n.kind() == "binary_expression"
                && count.is_none()
                && let Some((model, _)) = self.count_test(n, 0)
            {
                count = Some((model, Val::Unknown));
            }
            if let Some(test) = self.bound_test(n) {
                stack.push(test);
                continue;
            }
            if let Some(found) = self.is_lookup_leaf(n) {
                // a lookup the front end sees is taken before what a function returned
                if !found.0.starts_with(HELPER_GUARD) {
                    return Some(found);
                }
                helper.get_or_insert(found);
                continue;
            }
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor));
        }
        count.or(helper)
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
        // `switch (command.type) { case 'pay': .. }` on a parameter: each case runs only where
        // a caller's value carries its tag (see `CallSite::param_gate`).
        let tagged = match self.param_test(inner, 0) {
            Some((f, i, path, None, true)) if !on_method => Some((f, i, path)),
            _ => None,
        };
        let saved_gate = self.param_gate.clone();
        let mut cursor = body.walk();
        let cases: Vec<Node<'t>> = body.named_children(&mut cursor).collect();
        let mut pending: Vec<String> = Vec::new();
        // the tags of the cases so far, and those waiting for a body (`case 'a': case 'b': ..`)
        let mut tags: Vec<String> = Vec::new();
        let mut waiting: Vec<String> = Vec::new();
        let mut default = false;
        let mut open = false;
        for case in cases {
            let label = case
                .child_by_field_name("value")
                .and_then(|v| self.method_literal(v));
            if on_method && let Some(m) = &label {
                self.record_check(std::slice::from_ref(m), line(case), false, false);
                pending.push(m.clone());
            }
            let tag = match case.child_by_field_name("value") {
                Some(v) if v.kind() == "string" => match self.eval(v) {
                    Val::Str(s) => Some(Some(s)),
                    _ => None,
                },
                Some(_) => None,
                // `default:`
                None => Some(None),
            };
            match &tag {
                Some(Some(t)) => waiting.push(t.clone()),
                Some(None) => default = true,
                // a label that is no string literal (`case TYPES.GIFT:`): the body it reaches
                // runs for a tag not known
                None => open = true,
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
            // A case whose label is no string literal leaves its body ungated; a case's tag
            // says more than a test around the `switch`.
            self.param_gate = match (&tagged, &tag) {
                (Some((function, index, path)), Some(_)) if !open => Some(ParamGate {
                    function: *function,
                    index: *index,
                    path: path.clone(),
                    test: if default {
                        // not a tag of a case before, save those falling into it
                        ParamTest::Variant {
                            enum_name: String::new(),
                            names: tags
                                .iter()
                                .filter(|t| !waiting.contains(t))
                                .cloned()
                                .collect(),
                            is: false,
                        }
                    } else {
                        ParamTest::Variant {
                            enum_name: String::new(),
                            names: waiting.clone(),
                            is: true,
                        }
                    },
                    line: line(case),
                }),
                _ => saved_gate.clone(),
            };
            // A body that does not leave falls through: the next case's body runs for these
            // tags too.
            let falls = stmts.last().is_some_and(|st| {
                !matches!(
                    st.kind(),
                    "break_statement"
                        | "return_statement"
                        | "throw_statement"
                        | "continue_statement"
                ) && !exits(*st, self.src)
            });
            let these = waiting.clone();
            tags.append(&mut waiting);
            if falls {
                waiting = these;
            } else {
                default = false;
                open = false;
            }
            for st in stmts {
                self.walk_under(st, branch.clone());
            }
        }
        self.param_gate = saved_gate;
    }
}

/// `rows` with `row` added, when there is one.
fn with(rows: &[Found], row: &Option<Found>) -> Vec<Found> {
    let mut out = rows.to_vec();
    if let Some(r) = row
        && !out.contains(r)
    {
        out.push(r.clone());
    }
    out
}

/// A read of a table through a query builder's `.from('t')` and `.select(..)` (see
/// `program::from_select_read`) that answers what `read` asks: one row (Supabase's `.single()`,
/// answered in `data`) for a lookup, the rows for a list. Never a count.
fn from_select(v: &Val, read: Read) -> Option<String> {
    let (answer, in_data) = match v {
        Val::Member(inner, d) if d == "data" => (inner.as_ref(), true),
        v => (v, false),
    };
    let (table, single) = crate::program::from_select_read(answer)?;
    // Supabase answers `{ data, error }`, always there: its row is `data`; Knex's `.first()`
    // answers the row itself.
    let single = match single {
        Some(first) => first || in_data,
        None => false,
    };
    match read {
        Read::Lookup if single => Some(table),
        Read::List if !single => Some(table),
        _ => None,
    }
}

/// The statement is one of `kinds`, or a block whose last statement ends in one.
fn ends_in(node: Node, kinds: &[&str], src: &str) -> bool {
    match node.kind() {
        "statement_block" => {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .filter(|c| c.kind() != "comment")
                .last()
                .is_some_and(|last| ends_in(last, kinds, src))
        }
        // Koa's `ctx.throw(400, 'taken')` throws an HTTP error: it ends the request as a `throw`
        // statement does.
        "expression_statement" if kinds.contains(&"throw_statement") => node
            .named_child(0)
            .filter(|c| c.kind() == "call_expression")
            .and_then(|c| c.child_by_field_name("function"))
            .filter(|f| f.kind() == "member_expression")
            .and_then(|f| f.child_by_field_name("property"))
            .is_some_and(|p| src.get(p.byte_range()) == Some("throw")),
        k => kinds.contains(&k),
    }
}

/// The nearest loop around `node` (in its function) goes over the items of a collection
/// (`for (const x of xs)`, `for (const k in o)`), not around a condition or a counter.
fn in_loop_over_items(node: Node) -> bool {
    let mut cur = node.parent();
    while let Some(n) = cur {
        match n.kind() {
            "for_in_statement" => return true,
            "for_statement" | "while_statement" | "do_statement" => return false,
            "function_declaration"
            | "function_expression"
            | "arrow_function"
            | "method_definition"
            | "generator_function_declaration"
            | "generator_function" => return false,
            _ => {}
        }
        cur = n.parent();
    }
    false
}

/// A statement that leaves the function: `return`/`throw`, or a block ending in one.
fn exits(node: Node, src: &str) -> bool {
    ends_in(node, &["return_statement", "throw_statement"], src)
}

/// The statement ends by throwing: a request that takes it fails.
pub(super) fn throws(node: Node, src: &str) -> bool {
    ends_in(node, &["throw_statement"], src)
}

/// The table a raw `SELECT COUNT(*)` counts, read from its result as a number: `Number(rows[0].count)`,
/// `parseInt(result.rows[0].total)`, `rows[0].count` (node-postgres answers `{ rows }`).
fn raw_count(v: &Val) -> Option<String> {
    let mut v = v;
    if let Val::Call(callee, args) = v
        && matches!(callee.as_ref(), Val::Global(g) if g == "Number" || g == "parseInt" || g == "BigInt")
    {
        v = args.first()?;
    }
    let Val::Member(row, column) = v else {
        return None;
    };
    let column = column.to_ascii_lowercase();
    if !(column.contains("count") || column.contains("total")) {
        return None;
    }
    let Val::Member(rows, first) = row.as_ref() else {
        return None;
    };
    if first != "0" {
        return None;
    }
    let query = match rows.as_ref() {
        Val::Member(inner, r) if r == "rows" => inner.as_ref(),
        other => other,
    };
    let Val::Call(_, args) = query else {
        return None;
    };
    let text = args.first().and_then(crate::program::sql_text)?;
    (crate::link::calls::is_select(&text) && crate::link::calls::selects_count(&text))
        .then(|| crate::link::calls::sql_table(&text))
        .flatten()
}

/// The guard name of a field of what a project function returned (`fn:getInvitation.invitation`
/// for `const { invitation } = await getInvitation(..)`): the linker reads it as a lookup only
/// where that function answers an object literal with the field, named for what it looks up
/// (see `HELPER_GUARD`).
fn helper_field(guard: String, field: Option<&String>) -> String {
    match field {
        Some(f) => format!("{guard}.{f}"),
        None => guard,
    }
}

/// Fields of a function's answer that report on the call, not a row it found (`const { auth,
/// body, error } = await parseRequest(..); if (error) ..`): a test of one is no lookup guard.
const NOT_A_ROW: &[&str] = &[
    "error", "errors", "err", "success", "ok", "valid", "invalid", "status", "message", "auth",
    "body", "data", "result", "response", "headers", "query", "params", "count", "total",
];

/// The name of a secret check a call makes, if it makes one (see `text::names_secret_check`).
fn secret_check_name<'s>(call: Node, src: &'s str) -> Option<&'s str> {
    let callee = call.child_by_field_name("function")?;
    let name = match callee.kind() {
        "identifier" => callee,
        "member_expression" => callee.child_by_field_name("property")?,
        _ => return None,
    };
    let name = src.get(name.byte_range())?;
    crate::text::names_secret_check(name).then_some(name)
}

/// The name of a value a condition compares a row's field with, when it is one the request holds
/// (`priority`, `body.email`, `dto.assigneeId!`, `input?.status`): the identifier or the last
/// property. Not a call's result, nor `this`.
fn value_name(node: Node, src: &str) -> Option<String> {
    let mut n = node;
    for _ in 0..8 {
        match n.kind() {
            "parenthesized_expression" | "non_null_expression" => n = n.named_child(0)?,
            "identifier" => {
                let t = src.get(n.byte_range())?;
                return (t != "undefined").then(|| t.to_string());
            }
            "member_expression" => {
                let p = n.child_by_field_name("property")?;
                if p.kind() != "property_identifier" {
                    return None;
                }
                return src.get(p.byte_range()).map(str::to_string);
            }
            _ => return None,
        }
    }
    None
}

/// `OrderStatus.Paid`, `Role.ADMIN`, `constants.PAID`: a member of a capitalised object or a
/// constant-cased member, as an enum's or a constants module's.
fn enum_like(node: Node, src: &str) -> bool {
    let text = |n: Option<Node>| n.and_then(|n| src.get(n.byte_range())).unwrap_or("");
    let object = text(node.child_by_field_name("object"));
    let property = text(node.child_by_field_name("property"));
    let last_object = object.rsplit('.').next().unwrap_or("");
    last_object.starts_with(|c: char| c.is_ascii_uppercase())
        || (property.chars().any(|c| c.is_ascii_uppercase())
            && !property.chars().any(|c| c.is_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use crate::catalog::Catalog;
    use crate::discover::{Lang, SourceFile};

    /// The one `create` call in `body`, after a lookup bound to `row`.
    fn the_create(body: &str) -> crate::program::CallSite {
        let text = format!(
            "export async function f(db, id, name) {{\n  const row = await db.tag.findFirst({{ where: {{ id }} }});\n{body}\n}}\n"
        );
        let file = SourceFile {
            rel: "s.ts".into(),
            lang: Lang::TypeScript,
            text,
        };
        let (module, _) = super::super::analyze_file(&file, &Catalog::builtin().unwrap());
        let creates: Vec<_> = module
            .functions
            .iter()
            .flat_map(|f| f.calls.iter())
            .filter(|c| c.path.last().is_some_and(|p| p == "create"))
            .cloned()
            .collect();
        assert_eq!(creates.len(), 1, "{body}");
        creates[0].clone()
    }

    /// Whether the `create` call in `body` runs only when the lookup missed.
    fn guarded(body: &str) -> bool {
        match the_create(body).guarded {
            Some(model) => {
                assert_eq!(model, "tag", "{body}");
                true
            }
            None => false,
        }
    }

    /// The models the `create` call in `body` runs only when found.
    fn found(body: &str) -> Vec<String> {
        the_create(body)
            .found
            .into_iter()
            .map(|f| f.model)
            .collect()
    }

    #[test]
    fn a_call_after_a_hit_knows_the_row_was_found() {
        for body in [
            "  if (!row) return null;\n  return db.log.create({ data: { name } });",
            "  if (row) { await db.log.create({ data: { name } }); }",
            "  if (row === null) { throw new Error('gone'); }\n  await db.log.create({ data: { name } });",
            "  if (!row) { return; } else { await db.log.create({ data: { name } }); }",
            // Callbacks defined under the condition run there.
            "  if (row) { await db.$transaction(async (tx) => { await tx.log.create({ data: { name } }); }); }",
        ] {
            assert_eq!(found(body), vec!["tag".to_string()], "{body}");
        }
        for body in [
            "  if (row) return row;\n  return db.log.create({ data: { name } });",
            "  if (!row) { await db.log.create({ data: { name } }); }",
            "  if (row && name) { await db.tag.update({ where: { id }, data: { name } }); }\n  await db.log.create({ data: { name } });",
            "  await db.log.create({ data: { name } });",
            // An exit inside a block or a callback says nothing after it.
            "  try { if (!row) throw new Error('gone'); } catch (e) {}\n  await db.log.create({ data: { name } });",
            "  await Promise.all([1].map(async () => { if (!row) return; }));\n  await db.log.create({ data: { name } });",
        ] {
            assert!(found(body).is_empty(), "{body}");
        }
    }

    #[test]
    fn a_create_after_a_miss_is_guarded() {
        for body in [
            "  if (row) return row;\n  return db.tag.create({ data: { name } });",
            "  if (row) { return row; }\n  return db.tag.create({ data: { name } });",
            "  if (!row) { await db.tag.create({ data: { name } }); }",
            "  if (row) { await db.tag.update({ where: { id }, data: { name } }); } else { await db.tag.create({ data: { name } }); }",
            "  if (row !== null) return row;\n  return db.tag.create({ data: { name } });",
            "  if (row === null) { await db.tag.create({ data: { name } }); }",
            "  if (await db.tag.findFirst({ where: { name } })) return;\n  return db.tag.create({ data: { name } });",
            "  if (row || name === '') return row;\n  return db.tag.create({ data: { name } });",
            // The condition does not say which way: read as a guard, as before.
            "  if (row && row.active) return row;\n  return db.tag.create({ data: { name } });",
        ] {
            assert!(guarded(body), "{body}");
        }
    }

    #[test]
    fn a_create_after_a_hit_is_not_guarded() {
        for body in [
            "  if (!row) throw new Error('not found');\n  return db.tag.create({ data: { name, parentId: row.id } });",
            "  if (!row || row.archived) { throw new Error('not found'); }\n  return db.tag.create({ data: { name } });",
            "  if (row == null) throw new Error('not found');\n  return db.tag.create({ data: { name } });",
            "  if (row) { await db.tag.create({ data: { name, parentId: row.id } }); }",
            "  if (!row) { throw new Error('not found'); } else { await db.tag.create({ data: { name } }); }",
            "  if (!(await db.tag.findFirst({ where: { id } }))) throw new Error('gone');\n  return db.tag.create({ data: { name } });",
            // Leaves when the row is missing and the flag is set: what follows is not a miss.
            "  if (!row && name === '') return null;\n  return db.tag.create({ data: { name } });",
            "  return db.tag.create({ data: { name, depth: (row?.depth ?? 0) + 1 } });",
        ] {
            assert!(!guarded(body), "{body}");
        }
    }
}
