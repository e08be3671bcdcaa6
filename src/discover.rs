//! Finding the files to analyse: gitignore-aware, vendored and build folders skipped, oversized,
//! binary, non-UTF-8 and minified files reported instead of read, symlinks never followed.

use crate::facts::Diagnostic;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Files larger than this are skipped with a diagnostic.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// More NUL bytes than this make a file binary; fewer are stray ones in a text (see `read_text`).
const MAX_STRAY_NULS: usize = 8;

/// Folders that only ever hold vendored code, tool caches or build output, never the
/// application's source: skipped wherever they are (unless `include` names them).
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "bower_components",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".git",
    "coverage",
];

/// Folders whose names build tools write to, and the manifest beside which they are build output:
/// `target` next to a `Cargo.toml`, `dist`/`build`/`out` next to a `package.json`. A folder of the
/// same name elsewhere (`src/build/`, a `dist` module of a library) is source and is read; one that
/// a `.gitignore` lists is skipped by the walk itself.
const BUILD_OUTPUT_DIRS: &[(&str, &str)] = &[
    ("target", "Cargo.toml"),
    ("dist", "package.json"),
    ("build", "package.json"),
    ("out", "package.json"),
];

/// Whether a folder is build output: one of [`BUILD_OUTPUT_DIRS`] with its manifest beside it.
pub fn is_build_output(dir: &Path) -> bool {
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    BUILD_OUTPUT_DIRS
        .iter()
        .any(|(d, manifest)| *d == name && dir.parent().is_some_and(|p| p.join(manifest).is_file()))
}

/// The manifests whose dependencies say which web frameworks a tree uses.
const MANIFESTS: &[&str] = &["package.json", "Cargo.toml"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lang {
    TypeScript,
    Tsx,
    JavaScript,
    /// Prisma schema (`.prisma`).
    Prisma,
    /// SQL migrations and schema dumps.
    Sql,
    /// `.http` / `.rest` request files (VS Code REST Client, JetBrains HTTP Client).
    Http,
}

impl Lang {
    pub fn is_ts(self) -> bool {
        matches!(self, Lang::TypeScript | Lang::Tsx | Lang::JavaScript)
    }
}

impl Lang {
    pub fn from_path(path: &Path) -> Option<Lang> {
        let name = path.file_name()?.to_str()?;
        if name.ends_with(".d.ts") || name.ends_with(".d.mts") || name.ends_with(".d.cts") {
            return None;
        }
        if name.ends_with(".min.js") || name.ends_with(".bundle.js") {
            return None;
        }
        match path.extension()?.to_str()? {
            "ts" | "mts" | "cts" => Some(Lang::TypeScript),
            "tsx" => Some(Lang::Tsx),
            "js" | "jsx" | "mjs" | "cjs" => Some(Lang::JavaScript),
            "prisma" => Some(Lang::Prisma),
            "sql" => Some(Lang::Sql),
            "http" | "rest" => Some(Lang::Http),
            // Single-file components: their `<script>` blocks (see `component_script`).
            "vue" | "svelte" => Some(Lang::TypeScript),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Relative to the scanned root, `/`-separated.
    pub rel: String,
    pub lang: Lang,
    pub text: String,
}

/// A Rust source file (read with the same caps as the others).
#[derive(Debug)]
pub struct RustFile {
    /// Relative to the scanned root, `/`-separated.
    pub rel: String,
    pub text: String,
}

pub struct Discovered {
    /// TypeScript, JavaScript, schema and `.http` files.
    pub files: Vec<SourceFile>,
    /// `.rs` files, for the Rust front end.
    pub rust_files: Vec<RustFile>,
    /// YAML and JSON files that may be API documents (OpenAPI, Swagger): they name one of them.
    pub spec_files: Vec<RustFile>,
    pub diagnostics: Vec<Diagnostic>,
    /// `package.json` and `Cargo.toml` files found on the walk, as (relative path, text).
    pub manifests: Vec<(String, String)>,
}

fn is_rust(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "rs")
}

pub fn rel_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Walks `root` and reads every source file in parallel. Output is sorted by path.
pub fn discover(root: &Path) -> Discovered {
    discover_with(root, None)
}

/// As [`discover`], also skipping what `ignore` (the project's `ignore`/`exclude` patterns)
/// matches. A whitelist match (`!pattern`, or an `include` pattern) keeps a path even where a
/// built-in rule would skip it.
pub fn discover_with(root: &Path, ignore: Option<&ignore::gitignore::Gitignore>) -> Discovered {
    discover_opts(root, ignore, WalkOptions::default())
}

/// Which ignore files the walk obeys besides the tree's own `.gitignore`/`.ignore` files.
#[derive(Debug, Clone, Copy, Default)]
pub struct WalkOptions {
    /// Also the ignore files in the folders above the root and the user's global git excludes
    /// (off by default: what is audited depends on the tree alone).
    pub respect_parent_ignores: bool,
}

/// As [`discover_with`], with [`WalkOptions`].
pub fn discover_opts(
    root: &Path,
    ignore: Option<&ignore::gitignore::Gitignore>,
    opts: WalkOptions,
) -> Discovered {
    let mut diagnostics = Vec::new();
    let mut candidates: Vec<(PathBuf, Lang)> = Vec::new();
    let ignore = ignore.cloned();
    let mut rust_candidates: Vec<PathBuf> = Vec::new();
    let mut manifest_paths: Vec<PathBuf> = Vec::new();
    let mut spec_candidates: Vec<PathBuf> = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .require_git(false)
        .parents(opts.respect_parent_ignores)
        .git_global(opts.respect_parent_ignores)
        .follow_links(false)
        .filter_entry(move |e| {
            if e.depth() == 0 {
                return true;
            }
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let configured = ignore
                .as_ref()
                .map(|g| g.matched(e.path(), is_dir))
                .unwrap_or(ignore::Match::None);
            if configured.is_whitelist() {
                return true;
            }
            if configured.is_ignore() {
                return false;
            }
            !(is_dir
                && (e
                    .file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n))
                    || is_build_output(e.path())))
        })
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                diagnostics.push(Diagnostic::new("", 0, format!("could not walk: {err}")));
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            if let Some(why) = special_source(root, &entry) {
                let rel = rel_path(root, entry.path());
                diagnostics.push(Diagnostic::new(rel, 0, format!("skipped: {why}")));
            }
            continue;
        }
        let name = entry.file_name().to_str().unwrap_or("");
        if MANIFESTS.contains(&name) {
            manifest_paths.push(entry.into_path());
        } else if let Some(lang) = Lang::from_path(entry.path()) {
            candidates.push((entry.into_path(), lang));
        } else if is_rust(entry.path()) {
            rust_candidates.push(entry.into_path());
        } else if entry
            .file_name()
            .to_str()
            .is_some_and(api_document_candidate)
        {
            spec_candidates.push(entry.into_path());
        }
    }
    candidates.sort();
    rust_candidates.sort();
    spec_candidates.sort();
    let read: Vec<Result<SourceFile, Diagnostic>> = candidates
        .par_iter()
        .map(|(path, lang)| read_source(root, path, *lang))
        .collect();
    let mut files = Vec::new();
    for r in read {
        match r {
            Ok(f) => files.push(f),
            Err(d) => diagnostics.push(d),
        }
    }
    let read: Vec<Result<RustFile, Diagnostic>> = rust_candidates
        .par_iter()
        .map(|path| read_text(root, path).map(|(rel, text)| RustFile { rel, text }))
        .collect();
    let mut rust_files = Vec::new();
    for r in read {
        match r {
            Ok(f) => rust_files.push(f),
            Err(d) => diagnostics.push(d),
        }
    }
    manifest_paths.sort();
    let manifests = manifest_paths
        .iter()
        .filter_map(|p| read_text(root, p).ok())
        .collect();
    // An API document names its format; other YAML/JSON files are dropped unread further, and
    // one that cannot be read is not worth a diagnostic.
    let spec_files: Vec<RustFile> = spec_candidates
        .par_iter()
        .filter_map(|path| read_text(root, path).ok())
        .filter(|(_, text)| text.contains("openapi") || text.contains("swagger"))
        .map(|(rel, text)| RustFile { rel, text })
        .collect();
    Discovered {
        files,
        rust_files,
        spec_files,
        diagnostics,
        manifests,
    }
}

/// Why a source file's name that is not a regular file is not read: a FIFO, a device, a socket,
/// or a symlink that leads out of the root or to something other than a file. None for a
/// folder, or a symlink to a file of the tree (read where it is).
fn special_source(root: &Path, entry: &ignore::DirEntry) -> Option<&'static str> {
    let t = entry.file_type()?;
    let path = entry.path();
    if t.is_dir() || (Lang::from_path(path).is_none() && !is_rust(path)) {
        return None;
    }
    if !t.is_symlink() {
        return Some("not a regular file");
    }
    let Ok(target) = std::fs::canonicalize(path) else {
        return Some("a broken symlink");
    };
    if !std::fs::canonicalize(root).is_ok_and(|r| target.starts_with(r)) {
        return Some("a symlink out of the scanned folder (not followed)");
    }
    if !std::fs::metadata(&target).is_ok_and(|m| m.is_file()) {
        return Some("a symlink to something that is not a regular file (not followed)");
    }
    None
}

fn read_source(root: &Path, path: &Path, lang: Lang) -> Result<SourceFile, Diagnostic> {
    let (rel, text) = read_text(root, path)?;
    let text = match path.extension().and_then(|e| e.to_str()) {
        Some("vue" | "svelte") => component_script(&text),
        _ => text,
    };
    Ok(SourceFile { rel, lang, text })
}

/// The code of a Vue or Svelte single-file component: what its `<script>` blocks hold, at the
/// lines where they hold it; everything else (template, style) becomes blank lines, so lines in
/// findings are the component's own.
pub fn component_script(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let blank = |s: &str| -> String { s.chars().filter(|&c| c == '\n').collect() };
    while let Some(open) = lower[at..].find("<script").map(|i| i + at) {
        let Some(body) = lower[open..].find('>').map(|i| i + open + 1) else {
            break;
        };
        let end = lower[body..]
            .find("</script")
            .map(|i| i + body)
            .unwrap_or(text.len());
        out.push_str(&blank(&text[at..body]));
        out.push_str(&text[body..end]);
        at = end;
    }
    out.push_str(&blank(&text[at..]));
    out
}

/// Reads a file as text, or says why it was skipped.
fn read_text(root: &Path, path: &Path) -> Result<(String, String), Diagnostic> {
    let rel = rel_path(root, path);
    let skip = |why: String| Diagnostic::new(rel.clone(), 0, why);
    // the walk saw a regular file; it may have been swapped for a FIFO or a symlink since
    let meta =
        std::fs::symlink_metadata(path).map_err(|e| skip(format!("skipped: cannot read ({e})")))?;
    if !meta.is_file() {
        return Err(skip("skipped: not a regular file".into()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(skip(format!(
            "skipped: {} bytes is over the {} MiB size cap",
            meta.len(),
            MAX_FILE_BYTES / (1024 * 1024)
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    {
        use std::io::Read;
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_FILE_BYTES).read_to_end(&mut bytes))
            .map_err(|e| skip(format!("skipped: cannot read ({e})")))?;
    }
    // A binary file has NUL bytes throughout; a source file may have a stray one (a comment
    // that quotes a NUL, `(ID3 tags pad with \0)`), which is read as a space: the parsers end
    // their input at a NUL, and the offsets and lines stay where they were.
    if bytes.iter().filter(|&&b| b == 0).count() > MAX_STRAY_NULS {
        return Err(skip("skipped: binary file".into()));
    }
    for b in bytes.iter_mut().filter(|b| **b == 0) {
        *b = b' ';
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        skip(format!(
            "skipped: not valid UTF-8 (at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    if looks_minified(&text) {
        return Err(skip("skipped: looks minified (very long lines)".into()));
    }
    Ok((rel, text))
}

/// A bundle or minified file: long, with lines far longer than hand-written code has.
fn looks_minified(text: &str) -> bool {
    if text.len() < 16 * 1024 {
        return false;
    }
    let lines = text.lines().count().max(1);
    text.len() / lines > 400 || text.lines().any(|l| l.len() > 50_000)
}

/// Whether a file name may hold an API document worth reading: a YAML or JSON file that is not a
/// known configuration or lock file.
fn api_document_candidate(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let is_doc = [".yaml", ".yml", ".json"]
        .iter()
        .any(|e| lower.ends_with(e));
    let skipped = lower == "package.json"
        || lower.ends_with("-lock.json")
        || lower.ends_with(".lock.json")
        || lower.starts_with("tsconfig")
        || lower.starts_with("jsconfig")
        || lower == "composer.json"
        || lower.starts_with(".eslintrc")
        || lower == "pnpm-lock.yaml"
        || lower.ends_with("expected.json");
    is_doc && !skipped
}

#[cfg(test)]
mod tests {
    use super::component_script;

    #[test]
    fn a_component_keeps_its_script_at_its_own_lines() {
        let sfc = "<template>\n  <button @click=\"pay\">Pay</button>\n</template>\n\n<script setup lang=\"ts\">\nconst key = crypto.randomUUID();\n</script>\n<style>\n.a { color: red }\n</style>\n";
        let code = component_script(sfc);
        let lines: Vec<&str> = code.split('\n').collect();
        assert_eq!(lines[5], "const key = crypto.randomUUID();");
        assert_eq!(code.matches('\n').count(), sfc.matches('\n').count());
        assert!(!code.contains("color"));
        // No script, or one never closed: blank lines, then what follows the tag.
        assert_eq!(component_script("<div>\n</div>\n"), "\n\n");
        assert!(component_script("<script>\nlet a = 1;").ends_with("let a = 1;"));
    }
}
