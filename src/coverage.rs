//! What an audit actually read: files per language, routes found, and the server frameworks the
//! manifests name. A run that audited nothing must not look like a clean one.

use serde::Serialize;
use std::collections::BTreeMap;

/// Server frameworks retrysafe reads routes of, by the dependency that names them: (package or
/// crate, framework). Full-stack frameworks (Next.js, Nuxt, SvelteKit, Remix, Astro) are left out:
/// a site built with one may well have no endpoint at all.
const SERVER_FRAMEWORKS: &[(&str, &str)] = &[
    ("express", "express"),
    ("fastify", "fastify"),
    ("koa", "koa"),
    ("@koa/router", "koa"),
    ("koa-router", "koa"),
    ("hono", "hono"),
    ("@nestjs/core", "nestjs"),
    ("elysia", "elysia"),
    ("h3", "h3"),
    ("@trpc/server", "trpc"),
    ("axum", "axum"),
    ("actix-web", "actix-web"),
    ("rocket", "rocket"),
    ("poem", "poem"),
    ("salvo", "salvo"),
    ("loco-rs", "loco"),
    ("warp", "warp"),
];

/// What was read and found, for the summary and for "nothing audited".
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Coverage {
    /// Source files read, by language (`typescript`, `javascript`, `rust`, `prisma`, `sql`,
    /// `http`).
    pub files_by_language: BTreeMap<String, usize>,
    /// Routes found, every method included (`mutation_endpoints` counts the mutations only).
    pub routes_found: usize,
    /// Server frameworks named as dependencies in the tree's `package.json`/`Cargo.toml` files.
    pub frameworks_declared: Vec<String>,
}

impl Coverage {
    /// TypeScript, JavaScript and Rust files read: the code routes are found in.
    pub fn code_files(&self) -> usize {
        ["typescript", "javascript", "rust"]
            .iter()
            .filter_map(|l| self.files_by_language.get(*l))
            .sum()
    }

    /// Why this audit audited nothing, if it did: no TypeScript, JavaScript or Rust source, or
    /// manifests naming a server framework and not one route found.
    pub fn nothing_audited(&self) -> Option<String> {
        if self.code_files() == 0 {
            return Some(
                "no TypeScript, JavaScript or Rust source was found (is the path right? are the sources excluded?)"
                    .into(),
            );
        }
        if self.routes_found == 0 && !self.frameworks_declared.is_empty() {
            return Some(format!(
                "the manifests name {} but no route was found in {} source files (routes registered in a way retrysafe does not read?)",
                self.frameworks_declared.join(", "),
                self.code_files()
            ));
        }
        None
    }
}

/// The server frameworks a manifest's dependencies name.
pub fn declared_frameworks(file: &str, text: &str) -> Vec<&'static str> {
    let mut deps: Vec<String> = Vec::new();
    if file.ends_with("package.json") {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
            return Vec::new();
        };
        for section in ["dependencies", "peerDependencies"] {
            if let Some(o) = v.get(section).and_then(|d| d.as_object()) {
                deps.extend(o.keys().cloned());
            }
        }
    } else if file.ends_with("Cargo.toml") {
        let Ok(v) = toml::from_str::<toml::Table>(text) else {
            return Vec::new();
        };
        let mut tables = Vec::new();
        tables.extend(v.get("dependencies"));
        if let Some(ws) = v.get("workspace") {
            tables.extend(ws.get("dependencies"));
        }
        for t in tables.into_iter().filter_map(|t| t.as_table()) {
            deps.extend(t.keys().cloned());
        }
    }
    let mut out: Vec<&'static str> = SERVER_FRAMEWORKS
        .iter()
        .filter(|(dep, _)| deps.iter().any(|d| d == dep))
        .map(|(_, fw)| *fw)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The language name a file is counted under.
pub fn language_name(lang: crate::discover::Lang) -> &'static str {
    use crate::discover::Lang;
    match lang {
        Lang::TypeScript | Lang::Tsx => "typescript",
        Lang::JavaScript => "javascript",
        Lang::Prisma => "prisma",
        Lang::Sql => "sql",
        Lang::Http => "http",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_name_server_frameworks_only() {
        let pkg =
            r#"{"dependencies": {"express": "^4", "next": "14"}, "devDependencies": {"koa": "2"}}"#;
        assert_eq!(
            declared_frameworks("api/package.json", pkg),
            vec!["express"]
        );
        let cargo = "[package]\nname = \"x\"\n[dependencies]\nactix-web = \"4\"\nserde = \"1\"\n";
        assert_eq!(declared_frameworks("Cargo.toml", cargo), vec!["actix-web"]);
        assert!(declared_frameworks("package.json", "{ not json").is_empty());
    }

    #[test]
    fn nothing_audited_says_why() {
        let mut c = Coverage::default();
        assert!(c.nothing_audited().unwrap().contains("no TypeScript"));
        c.files_by_language.insert("typescript".into(), 3);
        assert_eq!(c.nothing_audited(), None);
        c.frameworks_declared = vec!["express".into()];
        assert!(c.nothing_audited().unwrap().contains("name express"));
        c.routes_found = 1;
        assert_eq!(c.nothing_audited(), None);
    }
}
