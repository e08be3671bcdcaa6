//! tRPC in one file: `initTRPC.context<typeof createContext>()` names the context creator in a
//! type argument; it is kept as the call's argument so the linker can read the context it makes.
//! Routers, procedures and adapters are values the linker reads (`link::trpc`).

use super::eval::{Chain, Evaluator};
use crate::program::Val;
use tree_sitter::Node;

fn is_init(v: &Val) -> bool {
    matches!(v, Val::Import { spec, name: Some(n) }
        if (spec == "@trpc/server" || spec.starts_with("@trpc/server/")) && n == "initTRPC")
}

impl<'t> Evaluator<'t, '_> {
    /// `initTRPC.context<typeof createContext>()` (or a local type alias of
    /// `Awaited<ReturnType<typeof createContext>>`): the value named by `typeof`.
    pub(super) fn trpc_context_type(
        &mut self,
        c: &Chain,
        args: &[Val],
        node: Node<'t>,
    ) -> Option<Val> {
        if !args.is_empty() || c.path.last().is_none_or(|p| p != "context") || !is_init(&c.root) {
            return None;
        }
        let types = node.child_by_field_name("type_arguments")?;
        let name = self.typeof_name(types, 0)?;
        Some(self.lookup(&name))
    }

    /// The identifier a `typeof X` inside a type names, looking through local type aliases.
    fn typeof_name(&self, ty: Node<'t>, depth: usize) -> Option<String> {
        if depth > 4 {
            return None;
        }
        let mut stack = vec![ty];
        let mut aliases = Vec::new();
        while let Some(n) = stack.pop() {
            match n.kind() {
                "type_query" => {
                    let target = n.named_child(0)?;
                    let text = self.text(target);
                    let first = text.split(['.', '(', '<']).next().unwrap_or(text).trim();
                    return (!first.is_empty()).then(|| first.to_string());
                }
                "type_identifier" => aliases.push(self.text(n).to_string()),
                _ => {
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
            }
        }
        let root = {
            let mut r = ty;
            while let Some(p) = r.parent() {
                r = p;
            }
            r
        };
        for alias in aliases {
            let mut cursor = root.walk();
            for stmt in root.named_children(&mut cursor) {
                let decl = match stmt.kind() {
                    "export_statement" => stmt.child_by_field_name("declaration"),
                    _ => Some(stmt),
                };
                let Some(decl) = decl.filter(|d| d.kind() == "type_alias_declaration") else {
                    continue;
                };
                if decl
                    .child_by_field_name("name")
                    .is_some_and(|n| self.text(n) == alias)
                    && let Some(value) = decl.child_by_field_name("value")
                    && let Some(found) = self.typeof_name(value, depth + 1)
                {
                    return Some(found);
                }
            }
        }
        None
    }
}
