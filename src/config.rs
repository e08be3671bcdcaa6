//! `retrysafe.toml`: a project teaches retrysafe its own wrappers and policy.
//!
//! ```toml
//! ignore = ["legacy/**", "*.spec.ts"]     # gitignore-style, relative to the scanned root
//! exclude = ["scripts/", "!scripts/api/"] # the same (`!` re-includes)
//! include = ["packages/web/build/"]       # audited even where a built-in rule skips it
//! call_depth = 8                          # how many calls deep to follow from a handler
//!
//! [rules.RS003]                           # by id or name
//! severity = "medium"
//! [rules.RS023]
//! enabled = false
//!
//! [headers]                               # as rules/headers.toml
//! names = ["x-client-request-key"]
//!
//! [[sink]]                                # as rules/sinks.toml
//! id = "billing-client"
//! lang = "ts"
//! kind = "payment"
//! packages = ["@acme/billing"]
//! calls = ["charge"]
//!
//! [[middleware]]                          # as rules/middleware.toml
//! id = "acme-idempotency"
//! lang = "ts"
//! packages = ["@acme/idempotency"]
//!
//! [harm]                                  # model names whose duplicates harm nobody, or do
//! bookkeeping = ["*_journal"]             # globs over the name lower-cased, letters and digits
//! record = ["eventlog"]                   # (a record pattern wins over a bookkeeping one)
//!
//! [[per-path]]                            # rules turned off under some paths (globs over the
//! paths = ["scripts/**", "src/admin/**"]  # finding's file or its route's file)
//! ignore = ["RS020", "key-on-safe-method"]
//!
//! [[mount]]                               # a router mounted under a prefix only known at run time
//! file = "src/app.ts"
//! expression = "process.env.ADMIN_PREFIX" # or line = 12
//! prefix = "/admin"
//! ```
//!
//! A mistake is reported with the file, line and column (miette, from toml's spans) and exits 2.

use crate::catalog::{Catalog, Middleware, Sink};
use crate::rules::{self, Finding, Severity};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode, SourceSpan};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The file looked for at the scanned root when `--config` is not given.
pub const FILE_NAME: &str = "retrysafe.toml";

/// The deepest `call_depth` accepted.
pub const MAX_CALL_DEPTH: i64 = 64;

/// A rule's project setting.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSetting {
    pub severity: Option<Severity>,
    pub enabled: Option<bool>,
}

/// A prefix for a router mounted at a path the linker cannot read statically
/// (`app.use(process.env.ADMIN_PREFIX, admin)`): matched by file and either the mount's line or
/// the prefix expression as written.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct MountPrefix {
    pub file: String,
    pub line: Option<u32>,
    pub expression: Option<String>,
    pub prefix: String,
}

/// `[[per-path]]`: rules turned off for findings under some paths.
#[derive(Debug, Clone)]
pub struct PerPath {
    pub paths: Vec<String>,
    /// Rule ids.
    pub ignore: Vec<String>,
    matcher: globset::GlobSet,
}

impl PerPath {
    fn covers(&self, f: &Finding) -> bool {
        self.ignore.contains(&f.rule)
            && (self.matcher.is_match(&f.file) || self.matcher.is_match(&f.route.file))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPerPath {
    paths: Vec<Spanned<String>>,
    ignore: Vec<Spanned<String>>,
}

/// Which rules and findings a run reports: `--select`, `--extend-select`, `--ignore` (rule ids,
/// names, id prefixes such as `RS01`, or `ALL`) and `--min-confidence`.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `None`: every rule.
    pub select: Option<Vec<String>>,
    pub ignore: Vec<String>,
    pub min_confidence: Option<rules::Confidence>,
}

impl Selection {
    /// Resolves the selectors to rule ids; an unknown one is an error naming it.
    pub fn new(
        select: &[String],
        extend_select: &[String],
        ignore: &[String],
        min_confidence: Option<rules::Confidence>,
    ) -> Result<Selection, String> {
        let resolve = |sel: &[String]| -> Result<Vec<String>, String> {
            let ids: Vec<&'static str> = rules::registry().iter().map(|r| r.meta.id).collect();
            let mut out = Vec::new();
            for s in sel.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
                if s.eq_ignore_ascii_case("ALL") {
                    out.extend(ids.iter().map(|i| i.to_string()));
                } else if let Some(r) = rules::find(s) {
                    out.push(r.meta.id.to_string());
                } else {
                    let prefix = s.to_ascii_uppercase();
                    let matched: Vec<String> = ids
                        .iter()
                        .filter(|i| prefix.starts_with("RS") && i.starts_with(&prefix))
                        .map(|i| i.to_string())
                        .collect();
                    if matched.is_empty() {
                        return Err(format!(
                            "unknown rule `{s}` (`retrysafe rules` lists the ids and names)"
                        ));
                    }
                    out.extend(matched);
                }
            }
            Ok(out)
        };
        let select = if select.is_empty() && extend_select.is_empty() {
            None
        } else {
            let mut base = if select.is_empty() {
                resolve(&["ALL".to_string()])?
            } else {
                resolve(select)?
            };
            base.extend(resolve(extend_select)?);
            Some(base)
        };
        Ok(Selection {
            select,
            ignore: resolve(ignore)?,
            min_confidence,
        })
    }

    pub fn rule_selected(&self, id: &str) -> bool {
        self.select
            .as_ref()
            .is_none_or(|s| s.iter().any(|x| x == id))
            && !self.ignore.iter().any(|x| x == id)
    }
}

/// The loaded configuration. `Config::default()` is "no retrysafe.toml".
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Where it was read from, if anywhere.
    pub source: Option<PathBuf>,
    /// Gitignore-style patterns, relative to the scanned root (`ignore` and `exclude`, in order).
    pub ignore: Vec<String>,
    /// Gitignore-style patterns of paths audited even where a built-in rule (a `build` folder
    /// beside a `package.json`, …) or an `exclude` pattern would skip them.
    pub include: Vec<String>,
    /// How many calls deep to follow from a handler (`None`: the built-in bound).
    pub call_depth: Option<u32>,
    /// Keyed by rule id.
    pub rules: BTreeMap<String, RuleSetting>,
    pub sinks: Vec<Sink>,
    pub key_headers: Vec<String>,
    pub middleware: Vec<Middleware>,
    pub mounts: Vec<MountPrefix>,
    /// `[harm]`: model patterns added to `rules/harm.toml`'s.
    pub harm: HarmModels,
    /// `[[per-path]]` rule settings.
    pub per_path: Vec<PerPath>,
    /// The command line's rule selection (not read from the file).
    pub selection: Selection,
    /// Obey ignore files above the root and the global git excludes (`--respect-parent-ignores`;
    /// not read from `retrysafe.toml`).
    pub respect_parent_ignores: bool,
}

/// `[harm]` in `retrysafe.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarmModels {
    #[serde(default)]
    pub bookkeeping: Vec<String>,
    #[serde(default)]
    pub record: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    ignore: Vec<Spanned<String>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    include: Vec<Spanned<String>>,
    #[serde(default)]
    call_depth: Option<Spanned<i64>>,
    #[serde(default)]
    rules: BTreeMap<Spanned<String>, RuleSetting>,
    #[serde(default)]
    headers: Option<RawHeaders>,
    #[serde(default)]
    sink: Vec<Spanned<Sink>>,
    #[serde(default)]
    middleware: Vec<Middleware>,
    #[serde(default)]
    mount: Vec<Spanned<MountPrefix>>,
    /// Webhook signature checks, in the shape of `[[provider]]` in rules/webhooks.toml.
    #[serde(default)]
    webhook: Vec<Spanned<Sink>>,
    #[serde(default)]
    harm: Option<Spanned<HarmModels>>,
    #[serde(default, rename = "per-path")]
    per_path: Vec<RawPerPath>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeaders {
    names: Vec<Spanned<String>>,
}

/// A configuration that cannot be used: where, what, and how to fix it.
#[derive(Debug)]
pub struct ConfigError(Box<ErrorDetail>);

#[derive(Debug)]
struct ErrorDetail {
    message: String,
    src: Option<NamedSource<String>>,
    label: Option<(Range<usize>, String)>,
    help: Option<String>,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for ConfigError {}

impl Diagnostic for ConfigError {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new("retrysafe::config"))
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.0.src.as_ref().map(|s| s as &dyn SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (span, text) = self.0.label.as_ref()?;
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(text.clone()),
            SourceSpan::from(span.clone()),
        ))))
    }
    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.0
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

struct Source<'a> {
    name: &'a str,
    text: &'a str,
}

impl Source<'_> {
    fn error(
        &self,
        span: Range<usize>,
        what: impl Into<String>,
        help: Option<&str>,
    ) -> ConfigError {
        let (line, col) = line_col(self.text, span.start);
        ConfigError(Box::new(ErrorDetail {
            message: format!("invalid configuration at {}:{line}:{col}", self.name),
            src: Some(NamedSource::new(self.name, self.text.to_string())),
            label: Some((span, what.into())),
            help: help.map(String::from),
        }))
    }
}

impl Config {
    /// `explicit` (from `--config`) must exist; otherwise `root/retrysafe.toml` is read if present.
    pub fn discover(root: &Path, explicit: Option<&Path>) -> Result<Config, ConfigError> {
        match explicit {
            Some(path) => Config::load(path),
            // the root's own file: only a regular file inside the root is read, so a symlink out
            // of it (or a FIFO) is neither read nor quoted in the error
            None => match crate::paths::read_in_root(root, FILE_NAME) {
                Ok(None) => Ok(Config::default()),
                Ok(Some(text)) => {
                    let path = root.join(FILE_NAME);
                    let mut config = Config::parse(&path.display().to_string(), &text)?;
                    config.source = Some(path);
                    Ok(config)
                }
                Err(why) => Err(ConfigError(Box::new(ErrorDetail {
                    message: format!("{FILE_NAME} {why}"),
                    src: None,
                    label: None,
                    help: None,
                }))),
            },
        }
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let too_big = std::fs::metadata(path)
            .is_ok_and(|m| !m.is_file() || m.len() > crate::paths::MAX_CONFIG_BYTES);
        if too_big {
            return Err(ConfigError(Box::new(ErrorDetail {
                message: format!(
                    "configuration {} is not a regular file of at most {} MiB",
                    path.display(),
                    crate::paths::MAX_CONFIG_BYTES / (1024 * 1024)
                ),
                src: None,
                label: None,
                help: None,
            })));
        }
        let text = std::fs::read_to_string(path).map_err(|e| {
            ConfigError(Box::new(ErrorDetail {
                message: format!("cannot read configuration {}: {e}", path.display()),
                src: None,
                label: None,
                help: None,
            }))
        })?;
        let mut config = Config::parse(&path.display().to_string(), &text)?;
        config.source = Some(path.to_path_buf());
        Ok(config)
    }

    /// Parses and validates a configuration's text; `name` is how errors name the file.
    pub fn parse(name: &str, text: &str) -> Result<Config, ConfigError> {
        let src = Source { name, text };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            src.error(
                span,
                e.message().trim().to_string(),
                Some("the keys are described in docs/configuration.md"),
            )
        })?;
        let mut config = Config::default();

        let mut check = GitignoreBuilder::new("/");
        for pattern in raw.ignore.into_iter().chain(raw.exclude) {
            if let Err(e) = check.add_line(None, pattern.get_ref()) {
                return Err(src.error(pattern.span(), format!("not a valid pattern: {e}"), None));
            }
            config.ignore.push(pattern.into_inner());
        }
        for pattern in raw.include {
            let p = pattern.get_ref().trim();
            if p.is_empty() || p.starts_with('!') {
                return Err(src.error(
                    pattern.span(),
                    "an `include` pattern names a path to audit (without `!`)",
                    None,
                ));
            }
            if let Err(e) = check.add_line(None, &format!("!{p}")) {
                return Err(src.error(pattern.span(), format!("not a valid pattern: {e}"), None));
            }
            config.include.push(p.to_string());
        }
        if let Err(e) = check.build() {
            return Err(src.error(0..0, format!("ignore patterns: {e}"), None));
        }

        if let Some(depth) = raw.call_depth {
            let d = *depth.get_ref();
            if !(1..=MAX_CALL_DEPTH).contains(&d) {
                return Err(src.error(
                    depth.span(),
                    format!("call_depth must be between 1 and {MAX_CALL_DEPTH}"),
                    None,
                ));
            }
            config.call_depth = Some(d as u32);
        }

        for (key, setting) in raw.rules {
            let Some(rule) = rules::find(key.get_ref()) else {
                return Err(src.error(
                    key.span(),
                    format!("unknown rule `{}`", key.get_ref()),
                    Some("`retrysafe rules` lists the ids and names"),
                ));
            };
            if setting.severity == Some(Severity::None) {
                return Err(src.error(
                    key.span(),
                    "a rule cannot have severity `none`",
                    Some("write `enabled = false` to turn a rule off"),
                ));
            }
            config.rules.insert(rule.meta.id.to_string(), setting);
        }

        if let Some(headers) = raw.headers {
            for name in headers.names {
                if name.get_ref().trim().is_empty() {
                    return Err(src.error(name.span(), "a header name cannot be empty", None));
                }
                config.key_headers.push(name.into_inner());
            }
        }

        for sink in raw.sink {
            let span = sink.span();
            let mut s = sink.into_inner();
            if let Err(e) = s.prepare() {
                return Err(src.error(span, e, Some("the fields are those of rules/sinks.toml")));
            }
            config.sinks.push(s);
        }
        for hook in raw.webhook {
            let span = hook.span();
            let mut s = hook.into_inner();
            if s.kind != crate::facts::EffectKind::WebhookReceiver {
                return Err(src.error(
                    span,
                    "a webhook provider's kind is `webhook_receiver`",
                    None,
                ));
            }
            if let Err(e) = s.prepare() {
                return Err(src.error(
                    span,
                    e,
                    Some("the fields are those of [[provider]] in rules/webhooks.toml"),
                ));
            }
            config.sinks.push(s);
        }
        config.middleware = raw.middleware;

        for mount in raw.mount {
            let span = mount.span();
            let m = mount.into_inner();
            if !m.prefix.starts_with('/') {
                return Err(src.error(span, "`prefix` must start with `/`", None));
            }
            if m.line.is_none() && m.expression.is_none() {
                return Err(src.error(
                    span,
                    "a mount needs `line` or `expression` to say which mount it is",
                    Some("copy them from the diagnostic \"router mounted at `…`, a prefix that is not statically known\""),
                ));
            }
            config.mounts.push(m);
        }
        for pp in raw.per_path {
            let mut globs = globset::GlobSetBuilder::new();
            let mut paths = Vec::new();
            for p in &pp.paths {
                match globset::GlobBuilder::new(p.get_ref())
                    .literal_separator(false)
                    .build()
                {
                    Ok(g) => {
                        globs.add(g);
                        paths.push(p.get_ref().clone());
                    }
                    Err(e) => {
                        return Err(src.error(p.span(), format!("not a valid glob: {e}"), None));
                    }
                }
            }
            let mut ignore = Vec::new();
            for r in &pp.ignore {
                match rules::find(r.get_ref()) {
                    Some(rule) => ignore.push(rule.meta.id.to_string()),
                    None => {
                        return Err(src.error(
                            r.span(),
                            format!("unknown rule `{}`", r.get_ref()),
                            Some("`retrysafe rules` lists the ids and names"),
                        ));
                    }
                }
            }
            let matcher = globs
                .build()
                .map_err(|e| src.error(0..0, format!("per-path globs: {e}"), None))?;
            config.per_path.push(PerPath {
                paths,
                ignore,
                matcher,
            });
        }
        if let Some(harm) = raw.harm {
            let span = harm.span();
            let harm = harm.into_inner();
            let mut check = crate::catalog::harm::Harm::default();
            if let Err(e) = check.add_models(&harm.record, &harm.bookkeeping) {
                return Err(src.error(span, e, None));
            }
            config.harm = harm;
        }
        Ok(config)
    }

    /// The built-in catalogue with this project's sinks, headers and middleware added.
    pub fn catalog(&self) -> Result<Catalog, String> {
        let mut catalog = Catalog::builtin()?;
        catalog.extend(
            self.sinks.clone(),
            &self.key_headers,
            self.middleware.clone(),
        )?;
        catalog
            .harm
            .add_models(&self.harm.record, &self.harm.bookkeeping)?;
        Ok(catalog)
    }

    /// The ignore patterns as a matcher rooted at `root`; `None` when there are none.
    /// `include` patterns come last, as `!pattern` lines, so they win.
    pub fn ignore_matcher(&self, root: &Path) -> Option<Gitignore> {
        if self.ignore.is_empty() && self.include.is_empty() {
            return None;
        }
        let mut b = GitignoreBuilder::new(root);
        for p in &self.ignore {
            let _ = b.add_line(None, p);
        }
        for p in &self.include {
            let _ = b.add_line(None, &format!("!{p}"));
        }
        b.build().ok()
    }

    pub fn rule_enabled(&self, id: &str) -> bool {
        self.rules.get(id).and_then(|s| s.enabled).unwrap_or(true)
            && self.selection.rule_selected(id)
    }

    /// Drops the findings of disabled, unselected or per-path ignored rules and those below
    /// `--min-confidence`, and applies severity overrides.
    pub fn apply_to_findings(&self, findings: &mut Vec<Finding>) {
        findings.retain(|f| {
            self.rule_enabled(&f.rule)
                && self
                    .selection
                    .min_confidence
                    .is_none_or(|c| f.confidence >= c)
                && !self.per_path.iter().any(|p| p.covers(f))
        });
        for f in findings {
            if let Some(sev) = self.rules.get(&f.rule).and_then(|s| s.severity) {
                f.severity = sev;
            }
        }
    }

    /// The configured prefix of a router mounted at `expression` on `file:line`, if any.
    /// For the linker: where it reports "a prefix that is not statically known".
    pub fn mount_prefix(&self, file: &str, line: u32, expression: &str) -> Option<&str> {
        self.mounts
            .iter()
            .find(|m| {
                m.file == file
                    && m.line.is_none_or(|l| l == line)
                    && m.expression
                        .as_deref()
                        .is_none_or(|e| e.trim() == expression.trim())
            })
            .map(|m| m.prefix.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_section() {
        let c = Config::parse(
            "retrysafe.toml",
            r#"
ignore = ["legacy/**"]
call_depth = 8
[rules.RS003]
severity = "medium"
[rules.key-on-safe-method]
enabled = false
[headers]
names = ["X-Client-Key"]
[[sink]]
id = "billing"
lang = "ts"
kind = "payment"
packages = ["@acme/billing"]
calls = ["charge"]
[[mount]]
file = "src/app.ts"
expression = "process.env.ADMIN"
prefix = "/admin"
"#,
        )
        .unwrap();
        assert_eq!(c.ignore, vec!["legacy/**"]);
        assert_eq!(c.call_depth, Some(8));
        assert_eq!(c.rules["RS003"].severity, Some(Severity::Medium));
        assert!(!c.rule_enabled("RS023"));
        assert_eq!(
            c.mount_prefix("src/app.ts", 3, "process.env.ADMIN"),
            Some("/admin")
        );
        assert_eq!(c.mount_prefix("src/app.ts", 3, "other"), None);
        let cat = c.catalog().unwrap();
        assert_eq!(cat.sinks[0].id, "billing");
        assert!(cat.is_key_header("x-client-key"));
    }

    #[test]
    fn errors_carry_line_and_column() {
        let e = Config::parse(
            "r.toml",
            "ignore = []\n[rules.RS999]\nseverity = \"high\"\n",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "invalid configuration at r.toml:2:8");
        let e = Config::parse("r.toml", "[rules.RS001]\nseverity = \"severe\"\n").unwrap_err();
        assert_eq!(e.to_string(), "invalid configuration at r.toml:2:12");
    }
}
