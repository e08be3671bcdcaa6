//! What the file-based routers share: the projects a framework's manifest or configuration file
//! marks, configuration values read from a module's export, and URL segments written with
//! brackets (`[id]`, `[...rest]`, `[[optional]]`, `[id=matcher]`).

use super::mounts::RawRoute;
use super::resolve::{ModId, Resolved, Resolver};
use crate::facts::{Diagnostic, Protocol};
use crate::program::Val;

const CONFIG_EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "ts", "mts", "cts"];

/// The folders holding a project of one framework: a package.json depending on one of `deps`, or
/// one of the configuration files `<stem>.<ext>` for `stem` in `configs` (`svelte.config`).
/// Sorted, deepest last.
pub fn project_roots(res: &Resolver, deps: &[&str], configs: &[&str]) -> Vec<String> {
    let mut roots: Vec<String> = res
        .manifests()
        .filter(|(_, d)| deps.iter().any(|dep| d.iter().any(|x| x == dep)))
        .map(|(dir, _)| dir.to_string())
        .collect();
    for module in res.modules {
        let (dir, name) = module
            .file
            .rsplit_once('/')
            .unwrap_or(("", module.file.as_str()));
        if configs.iter().any(|stem| {
            name.strip_prefix(stem)
                .and_then(|r| r.strip_prefix('.'))
                .is_some_and(|ext| CONFIG_EXTENSIONS.contains(&ext))
        }) {
            roots.push(dir.to_string());
        }
    }
    roots.sort();
    roots.dedup();
    roots
}

/// What follows `dir/` in `file` (`dir` empty: the tree's root).
pub fn under<'f>(file: &'f str, dir: &str) -> Option<&'f str> {
    if dir.is_empty() {
        return Some(file);
    }
    file.strip_prefix(dir)?.strip_prefix('/')
}

/// The project a file belongs to: the deepest of `roots` holding it.
pub fn project_of<'r>(roots: &'r [String], file: &str) -> Option<&'r str> {
    roots
        .iter()
        .filter(|r| under(file, r).is_some())
        .max_by_key(|r| r.len())
        .map(|r| r.as_str())
}

/// `dir/rel`, or `rel` at the tree's root.
pub fn in_dir(dir: &str, rel: &str) -> String {
    crate::paths::join(dir, rel).unwrap_or_else(|| rel.to_string())
}

/// The configuration module `<root>/<stem>.<ext>`, the first extension found.
pub fn config_module(res: &Resolver, root: &str, stem: &str) -> Option<ModId> {
    CONFIG_EXTENSIONS
        .iter()
        .find_map(|ext| res.module_of(&in_dir(root, &format!("{stem}.{ext}"))))
}

/// The object a configuration module exports: its default export or `module.exports`, through a
/// `defineConfig({ .. })`-style wrapper. None when it is not an object this tree shows.
pub fn config_object(res: &Resolver, m: ModId) -> Option<(ModId, Vec<(String, Val)>)> {
    let module = &res.modules[m];
    let v = module
        .export("default")
        .or(module.cjs_whole.as_ref())?
        .clone();
    object_of(res, m, &v, 0)
}

fn object_of(
    res: &Resolver,
    m: ModId,
    v: &Val,
    depth: usize,
) -> Option<(ModId, Vec<(String, Val)>)> {
    if depth > 4 {
        return None;
    }
    match res.resolve(m, v) {
        Resolved::Obj(om, fields) => Some((om, fields)),
        // `defineConfig({ .. })`, `defineNuxtConfig({ .. })`: the options are the configuration.
        _ => match v {
            Val::Call(_, args) => object_of(res, m, args.first()?, depth + 1),
            Val::Import { .. } | Val::Member(..) => None,
            _ => None,
        },
    }
}

/// A configuration value that is a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigStr {
    /// Not set: the framework's default applies.
    Absent,
    Literal(String),
    /// Read from the environment at run time, with the code's literal default.
    EnvDefault {
        value: String,
        var: String,
    },
    /// Set to something this tree does not show as a string.
    Unreadable,
}

/// The string at `path` (`["kit", "paths", "base"]`) in a configuration object.
pub fn config_str(res: &Resolver, m: ModId, fields: &[(String, Val)], path: &[&str]) -> ConfigStr {
    let Some((first, rest)) = path.split_first() else {
        return ConfigStr::Unreadable;
    };
    let Some((_, v)) = fields.iter().rev().find(|(k, _)| k == first) else {
        return ConfigStr::Absent;
    };
    if rest.is_empty() {
        return match res.resolve(m, v) {
            Resolved::Str(s) => ConfigStr::Literal(s),
            Resolved::Default { value, var, .. } => ConfigStr::EnvDefault { value, var },
            _ => ConfigStr::Unreadable,
        };
    }
    match object_of(res, m, v, 0) {
        Some((om, inner)) => config_str(res, om, &inner, rest),
        None => ConfigStr::Unreadable,
    }
}

/// The string at `path` as [`config_str`] reads it, saying in a diagnostic on `file` when it
/// comes from the environment (its default is used) or cannot be read (`None`: the caller's
/// `default` applies). `None` too when the key is absent.
pub fn config_value(
    res: &Resolver,
    m: ModId,
    fields: &[(String, Val)],
    path: &[&str],
    file: &str,
    default: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let name = path.join(".");
    match config_str(res, m, fields, path) {
        ConfigStr::Absent => None,
        ConfigStr::Literal(s) => Some(s),
        ConfigStr::EnvDefault { value, var } => {
            diagnostics.push(Diagnostic::new(
                file.to_string(),
                0,
                format!("`{name}` comes from `{var}` at run time: its default `{value}` is used"),
            ));
            Some(value)
        }
        ConfigStr::Unreadable => {
            diagnostics.push(Diagnostic::new(
                file.to_string(),
                0,
                format!("`{name}` is not a string this audit can read: `{default}` is used"),
            ));
            None
        }
    }
}

/// The value as written: an import followed to the export it names (through re-exports), with the
/// module it is written in.
pub fn written(res: &Resolver, m: ModId, v: &Val) -> (ModId, Val) {
    let (mut m, mut v) = (m, v.clone());
    for _ in 0..8 {
        let Val::Import {
            spec,
            name: Some(name),
        } = &v
        else {
            break;
        };
        let Some(target) = res.resolve_spec(m, spec) else {
            break;
        };
        let Some(next) = res.modules[target].export(name) else {
            break;
        };
        (m, v) = (target, next.clone());
    }
    (m, v)
}

/// The file's name without its last extension.
pub fn strip_ext(file: &str) -> &str {
    file.rsplit_once('.').map(|(s, _)| s).unwrap_or(file)
}

/// One URL segment written with brackets: every `[name]`, `[...name]`, `[[name]]`,
/// `[[...name]]` and `[name=matcher]` in it becomes `{name}` (an unnamed `[...]` is `{_}`), and
/// the character escapes `[x+2f]` and `[u+0023]` become their characters.
pub fn bracket_segment(seg: &str) -> String {
    let mut out = String::new();
    let mut rest = seg;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        let (skip, close) = if after.starts_with("[[") {
            (2, after.find("]]").map(|i| (i, 2)))
        } else {
            (1, after.find(']').map(|i| (i, 1)))
        };
        let Some((at, len)) = close else {
            out.push_str(after);
            return out;
        };
        let inner = &after[skip..at];
        match escape(inner) {
            Some(text) => out.push_str(&text),
            None => {
                let name = inner.trim_start_matches("...");
                let name = name.split('=').next().unwrap_or(name);
                let name = if name.is_empty() { "_" } else { name };
                out.push('{');
                out.push_str(name);
                out.push('}');
            }
        }
        rest = &after[at + len..];
    }
    out.push_str(rest);
    out
}

/// `x+2f` → `/`, `u+0023` → `#`, `u+d83e-dd2a` style sequences joined by `-`.
fn escape(inner: &str) -> Option<String> {
    if let Some(hex) = inner.strip_prefix("x+") {
        let b = u8::from_str_radix(hex, 16).ok()?;
        return Some(char::from(b).to_string());
    }
    let codes = inner.strip_prefix("u+")?;
    let units: Option<Vec<u16>> = codes
        .split('-')
        .map(|h| u16::from_str_radix(h, 16).ok())
        .collect();
    String::from_utf16(&units?).ok()
}

/// Route groups `(name)`: folders that organise routes without a URL segment.
pub fn is_group(dir: &str) -> bool {
    dir.len() > 2 && dir.starts_with('(') && dir.ends_with(')')
}

/// The methods a file route may export.
const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/// A route of a file router, run by `handler` of module `m`.
pub fn route(
    framework: &'static str,
    m: ModId,
    method: &str,
    path: String,
    line: u32,
    handler: Val,
    protocol: Protocol,
) -> RawRoute {
    RawRoute {
        method: method.to_string(),
        path,
        framework,
        module: m,
        line,
        handler,
        handler_module: m,
        middleware: vec![],
        branch: None,
        protocol,
        handler_name: None,
        path_complete: true,
        steps: vec![],
        file: None,
    }
}

/// A file route's method exports (`export const POST`), and its catch-all export (`fallback`,
/// `ALL`) for each mutation method it does not export itself.
pub fn method_exports(
    framework: &'static str,
    res: &Resolver,
    m: ModId,
    path: &str,
    catch_all: &str,
    out: &mut Vec<RawRoute>,
) {
    let module = &res.modules[m];
    for method in METHODS {
        if let Some(h) = module.export(method) {
            let line = module.export_line(method).unwrap_or(1);
            out.push(route(
                framework,
                m,
                method,
                path.to_string(),
                line,
                h.clone(),
                Protocol::Rest,
            ));
        }
    }
    // The catch-all answers the methods without their own export: under the mutation methods
    // it tells apart, or else once, under the first mutation method it answers.
    if let Some(h) = module.export(catch_all) {
        let line = module.export_line(catch_all).unwrap_or(1);
        let free = |method: &str| module.export(method).is_none();
        let served = super::next::any_method_served(res, m, h, line);
        let told_apart = served.iter().any(|s| s.branch.is_some() || s.line != line);
        let methods: Vec<String> = if told_apart {
            served
                .into_iter()
                .map(|s| s.method)
                .filter(|x| free(x))
                .collect()
        } else if served.is_empty() {
            vec![]
        } else {
            super::next::MUTATIONS
                .iter()
                .find(|x| free(x))
                .map(|x| vec![x.to_string()])
                .unwrap_or_default()
        };
        for method in methods {
            out.push(route(
                framework,
                m,
                &method,
                path.to_string(),
                line,
                h.clone(),
                Protocol::Rest,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracket_segments() {
        for (seg, want) in [
            ("[id]", "{id}"),
            ("[...rest]", "{rest}"),
            ("[[optional]]", "{optional}"),
            ("[[...slug]]", "{slug}"),
            ("[id=integer]", "{id}"),
            ("[...]", "{_}"),
            ("[a]-[b]", "{a}-{b}"),
            ("[...path].json", "{path}.json"),
            ("sitemap[x+2e]xml", "sitemap.xml"),
            ("[u+0023]hash", "#hash"),
            ("plain", "plain"),
            ("broken[", "broken["),
        ] {
            assert_eq!(bracket_segment(seg), want, "{seg}");
        }
    }
}
