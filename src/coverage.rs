//! What an audit actually read: files per language, routes found, and the server frameworks the
//! manifests name. A run that audited nothing must not look like a clean one.

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
    ("@overnightjs/core", "overnightjs"),
    ("elysia", "elysia"),
    ("h3", "h3"),
    ("@trpc/server", "trpc"),
    ("@orpc/server", "orpc"),
    ("axum", "axum"),
    ("actix-web", "actix-web"),
    ("rocket", "rocket"),
    ("poem", "poem"),
    ("salvo", "salvo"),
    ("loco-rs", "loco"),
    ("warp", "warp"),
];

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
}
