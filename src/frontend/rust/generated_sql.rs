//! Queries written in SQL files that a build step turns into Rust functions (cornucopia, clorinde):
//! `queries/teams.sql` holds `--! insert_team` followed by its statement, and the crate calls the
//! generated `queries::teams::insert_team().bind(&client, ..)`, whose code is in no source in view.
//! Each query's statement, by the file's stem and the query's name, is what such a call runs.

use crate::discover::{Lang, SourceFile};
use std::collections::HashMap;

/// A query's statement, by (file stem, query name).
pub type Queries = HashMap<(String, String), String>;

/// The annotated queries of the SQL files: a file counts when it holds a `--! name` line (the
/// annotation cornucopia and clorinde read).
pub fn collect(files: &[&SourceFile]) -> Queries {
    let mut out = Queries::new();
    for f in files.iter().filter(|f| f.lang == Lang::Sql) {
        let stem = f
            .rel
            .rsplit('/')
            .next()
            .and_then(|n| n.strip_suffix(".sql"))
            .unwrap_or("");
        if stem.is_empty() {
            continue;
        }
        for (name, text) in annotated(&f.text) {
            out.entry((stem.to_string(), name)).or_insert(text);
        }
    }
    out
}

/// The queries of one file: each `--! name` (with cornucopia's optional `(params?)` and `: Type`
/// annotations after it), and the statement up to the next annotation, its comments left out.
fn annotated(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("--!") {
            if let Some(q) = current.take() {
                out.push(q);
            }
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                current = Some((name, String::new()));
            }
            continue;
        }
        if trimmed.starts_with("--") {
            continue;
        }
        if let Some((_, stmt)) = &mut current {
            stmt.push_str(line);
            stmt.push('\n');
        }
    }
    out.extend(current);
    out.into_iter()
        .map(|(n, s)| (n, s.trim().to_string()))
        .filter(|(_, s)| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_annotation_names_the_statement_after_it() {
        let text = "--! insert_team : (name?)\nINSERT INTO teams (name)\nVALUES (:name)\nRETURNING id;\n\n-- a comment\n--! team_by_id\nSELECT * FROM teams WHERE id = :id;\n";
        let q = annotated(text);
        assert_eq!(q.len(), 2);
        assert_eq!(q[0].0, "insert_team");
        assert!(q[0].1.starts_with("INSERT INTO teams"));
        assert_eq!(q[1].0, "team_by_id");
        assert_eq!(q[1].1, "SELECT * FROM teams WHERE id = :id;");
    }

    #[test]
    fn a_file_without_annotations_holds_no_queries() {
        assert!(annotated("CREATE TABLE teams (id serial primary key);").is_empty());
    }
}
