//! Schema front ends: where unique constraints are declared. Prisma schemas and SQL migrations
//! here; ORM models written in TypeScript come from the TS front end's evaluation.

pub mod prisma;
pub mod sql;

use crate::discover::{Lang, SourceFile};
use crate::facts::{Diagnostic, UniqueConstraint};

/// Where the Prisma schemas generate their client (see [`prisma::client_outputs`]).
pub fn prisma_client_dirs(files: &[&SourceFile]) -> Vec<String> {
    let mut out: Vec<String> = files
        .iter()
        .filter(|f| f.lang == Lang::Prisma)
        .flat_map(|f| prisma::client_outputs(&f.rel, &f.text))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Every constraint the schema files declare, in a stable order.
pub fn analyze(files: &[SourceFile]) -> (Vec<UniqueConstraint>, Vec<Diagnostic>) {
    let mut constraints = Vec::new();
    let mut diagnostics = Vec::new();
    for f in files.iter().filter(|f| f.lang == Lang::Prisma) {
        if let Some((line, what)) = prisma::problem(&f.text) {
            diagnostics.push(Diagnostic::new(
                f.rel.clone(),
                line,
                format!(
                    "schema error: {what}; the unique constraints read from it may be incomplete"
                ),
            ));
        }
        constraints.extend(prisma::constraints(&f.rel, &f.text));
    }
    let migrations: Vec<&SourceFile> = files.iter().filter(|f| f.lang == Lang::Sql).collect();
    let (c, d) = sql::constraints(&migrations);
    constraints.extend(c);
    diagnostics.extend(d);
    constraints.sort();
    constraints.dedup();
    (constraints, diagnostics)
}
