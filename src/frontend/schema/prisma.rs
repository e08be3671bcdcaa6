//! Prisma schemas: `@unique`, `@@unique`, and `@id` / `@@id` on fields the caller supplies.
//!
//! The Prisma schema language has no maintained Rust parser on crates.io (the engine's `psl`
//! crate is not published), so this reads the few constructs that matter, block by block.

use crate::facts::{Location, UniqueConstraint};

/// Defaults that generate the value at insert: the column protects nothing against a retry.
const GENERATED: &[&str] = &[
    "autoincrement(",
    "uuid(",
    "cuid(",
    "nanoid(",
    "ulid(",
    "dbgenerated(",
    "now(",
    "sequence(",
];

fn strip_comment(line: &str) -> &str {
    line.split("//").next().unwrap_or(line).trim()
}

/// The names inside `[a, b]` (optionally `fields: [a(sort: Desc), b]`).
fn field_list(attr: &str) -> Vec<String> {
    let Some(open) = attr.find('[') else {
        return vec![];
    };
    let Some(close) = attr[open..].find(']') else {
        return vec![];
    };
    attr[open + 1..open + close]
        .split(',')
        .map(|f| f.split('(').next().unwrap_or("").trim().to_string())
        .filter(|f| !f.is_empty())
        .collect()
}

fn quoted(s: &str) -> Option<String> {
    let start = s.find('"')? + 1;
    let end = s[start..].find('"')? + start;
    Some(s[start..end].to_string())
}

/// The first place where a schema is not well formed, as far as this reader can tell: a block
/// never closed, a `}` with no block open, a bracket or a string left open on a line. Its line
/// (1-based) and what is wrong; the constraints read from such a schema may be incomplete.
pub fn problem(text: &str) -> Option<(u32, String)> {
    let mut open_block: Option<(u32, String)> = None;
    // brackets open across lines (an attribute's arguments may span several)
    let mut depth = 0i32;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        let mut in_str = false;
        let mut escaped = false;
        let mut code = String::new();
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if in_str {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_str = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '/' if chars.peek() == Some(&'/') => break,
                '"' => in_str = true,
                '[' | '(' => depth += 1,
                ']' | ')' => depth -= 1,
                _ => code.push(c),
            }
        }
        if in_str {
            return Some((line_no, "a string is not closed on its line".into()));
        }
        if depth < 0 {
            return Some((line_no, "a bracket closes nothing".into()));
        }
        let code = code.trim();
        if code.ends_with('{') && depth == 0 {
            if let Some((at, what)) = &open_block {
                return Some((*at, format!("`{what}` is not closed before the next block")));
            }
            let what = code.trim_end_matches('{').trim().to_string();
            open_block = Some((line_no, what));
        } else if code.starts_with('}') {
            if depth != 0 {
                return Some((line_no, "a bracket is not closed".into()));
            }
            if open_block.take().is_none() {
                return Some((line_no, "`}` closes no block".into()));
            }
        }
    }
    if depth != 0 {
        return Some((
            text.lines().count() as u32,
            "a bracket is not closed".into(),
        ));
    }
    open_block.map(|(at, what)| (at, format!("`{what}` is never closed")))
}

/// Where the schema's `generator` blocks write the Prisma client (`output = "../src/generated/prisma"`),
/// as folders relative to the scanned root: code importing from there holds a Prisma client just
/// as code importing `@prisma/client` does.
pub fn client_outputs(file: &str, text: &str) -> Vec<String> {
    let dir = file.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let mut out = Vec::new();
    let mut in_generator = false;
    for raw in text.lines() {
        let line = strip_comment(raw);
        let mut words = line.split_whitespace();
        match words.next() {
            Some("generator") => in_generator = true,
            Some(w) if in_generator && w.starts_with('}') => in_generator = false,
            Some("output") if in_generator => {
                if let Some(path) = quoted(line)
                    && let Some(joined) = crate::paths::join(dir, &path)
                {
                    out.push(joined);
                }
            }
            _ => {}
        }
    }
    out
}

pub fn constraints(file: &str, text: &str) -> Vec<UniqueConstraint> {
    let mut out = Vec::new();
    let mut model: Option<(String, u32)> = None;
    let mut body: Vec<(u32, String)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = strip_comment(raw);
        let n = i as u32 + 1;
        match &model {
            None => {
                let mut words = line.split_whitespace();
                if words.next() == Some("model")
                    && let Some(name) = words.next()
                {
                    model = Some((name.trim_end_matches('{').to_string(), n));
                    body.clear();
                }
            }
            Some(_) if line.starts_with('}') => {
                let (name, _) = model.take().unwrap_or_default();
                out.extend(model_constraints(file, &name, &body));
            }
            Some(_) => body.push((n, line.to_string())),
        }
    }
    out
}

/// Defaults the insert may override with a value of its own (a client-chosen id): the column
/// protects a create only when the request supplies the value.
const OVERRIDABLE: &[&str] = &["uuid(", "cuid(", "nanoid(", "ulid("];

fn model_constraints(file: &str, model: &str, body: &[(u32, String)]) -> Vec<UniqueConstraint> {
    let mut generated: Vec<String> = Vec::new();
    let mut overridable: Vec<String> = Vec::new();
    let mut found: Vec<(Vec<String>, u32)> = Vec::new();
    let mut aliases = Vec::new();
    for (n, line) in body {
        if let Some(rest) = line.strip_prefix("@@") {
            if rest.starts_with("unique") || rest.starts_with("id") {
                found.push((field_list(rest), *n));
            } else if rest.starts_with("map") {
                aliases.extend(quoted(rest));
            }
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(field), Some(_ty)) = (words.next(), words.next()) else {
            continue;
        };
        let attrs = &line[line.find(_ty).map(|p| p + _ty.len()).unwrap_or(line.len())..];
        let is_generated = attrs
            .find("@default(")
            .is_some_and(|p| GENERATED.iter().any(|g| attrs[p + 9..].starts_with(g)))
            || attrs.contains("@updatedAt");
        if is_generated {
            generated.push(field.to_string());
        }
        if attrs
            .find("@default(")
            .is_some_and(|p| OVERRIDABLE.iter().any(|g| attrs[p + 9..].starts_with(g)))
        {
            overridable.push(field.to_string());
        }
        let has = |a: &str| {
            attrs
                .split_whitespace()
                .any(|w| w == a || w.starts_with(&format!("{a}(")))
        };
        if has("@unique") || has("@id") {
            found.push((vec![field.to_string()], *n));
        }
    }
    found
        .into_iter()
        .filter(|(cols, _)| !cols.is_empty())
        .map(|(columns, line)| UniqueConstraint {
            defaulted: columns.iter().all(|c| overridable.contains(c)),
            model: model.to_string(),
            aliases: aliases.clone(),
            generated: columns.iter().all(|c| generated.contains(c)),
            columns,
            partial: false,
            source: "prisma",
            location: Location::new(file, line),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn generator_outputs_relative_to_the_schema() {
        let text = "generator client {\n  provider = \"prisma-client-js\"\n  output   = \"../src/generated/prisma\" // here\n}\nmodel A {\n  id Int @id\n}\n";
        assert_eq!(
            super::client_outputs("prisma/schema.prisma", text),
            vec!["src/generated/prisma".to_string()]
        );
        assert!(
            super::client_outputs("schema.prisma", "model A {\n output String\n}\n").is_empty()
        );
    }

    use super::*;

    const SCHEMA: &str = r#"
model User {
  id        Int      @id @default(autoincrement())
  email     String   @unique // sign-in
  username  String   @unique
  createdAt DateTime @default(now())
  @@map("users")
}

model Tag {
  id     String @id @default(uuid())
  name   String
  userId String
  @@unique([name, userId], name: "tag_per_user")
}

model Setting {
  key   String @id
  value String
}
"#;

    #[test]
    fn reads_uniques_ids_and_generated_keys() {
        let c = constraints("schema.prisma", SCHEMA);
        let summary: Vec<(String, Vec<String>, bool, u32)> = c
            .iter()
            .map(|c| {
                (
                    c.model.clone(),
                    c.columns.clone(),
                    c.generated,
                    c.location.line,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("User".into(), vec!["id".into()], true, 3),
                ("User".into(), vec!["email".into()], false, 4),
                ("User".into(), vec!["username".into()], false, 5),
                ("Tag".into(), vec!["id".into()], true, 11),
                (
                    "Tag".into(),
                    vec!["name".into(), "userId".into()],
                    false,
                    14
                ),
                ("Setting".into(), vec!["key".into()], false, 18),
            ]
        );
        assert_eq!(c[0].aliases, vec!["users".to_string()]);
    }
}
