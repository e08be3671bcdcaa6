//! Paths inside the scanned tree, `/`-separated and relative to its root. Depends on nothing in
//! the crate, so every layer may use it.

use std::path::Path;

/// Joins and normalises `a/b/../c` style paths; None if it climbs above the root.
pub fn join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if dir.is_empty() {
        vec![]
    } else {
        dir.split('/').collect()
    };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Manifests, configurations and schemas are read at most this large.
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// Reads `rel` under `root` as a manifest or configuration: only a regular file inside the root
/// (a symlink may point elsewhere in the tree, not out of it; a FIFO, a device or a directory is
/// refused), at most [`MAX_CONFIG_BYTES`], as UTF-8. `Ok(None)` when there is no such file; the
/// error says why a file that is there was not read, without quoting it.
pub fn read_in_root(root: &std::path::Path, rel: &str) -> Result<Option<String>, String> {
    use std::io::Read;
    let path = root.join(rel);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot be read ({e})")),
    };
    if meta.file_type().is_symlink() {
        let target =
            std::fs::canonicalize(&path).map_err(|e| format!("is a broken symlink ({e})"))?;
        let inside = std::fs::canonicalize(root).is_ok_and(|r| target.starts_with(r));
        if !inside {
            return Err("is a symlink out of the scanned folder: not read".into());
        }
    }
    let meta = std::fs::metadata(&path).map_err(|e| format!("cannot be read ({e})"))?;
    if !meta.is_file() {
        return Err("is not a regular file: not read".into());
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(format!(
            "is larger than {} MiB: not read",
            MAX_CONFIG_BYTES / (1024 * 1024)
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot be read ({e})"))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "is not UTF-8: not read".into())
}

/// `path` relative to `base`, `/`-separated, with `..` where it lies outside; both are made
/// absolute first (canonical where they exist). `None` when they share no root (Windows drives).
pub fn relative_to(path: &Path, base: &Path) -> Option<String> {
    let abs = |p: &Path| {
        p.canonicalize()
            .ok()
            .or_else(|| std::env::current_dir().ok().map(|d| d.join(p)))
    };
    let (path, base) = (abs(path)?, abs(base)?);
    let p: Vec<_> = path.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return None;
    }
    let mut parts: Vec<String> = vec!["..".to_string(); b.len() - common];
    parts.extend(
        p[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    Some(parts.join("/"))
}

/// The repository (a folder holding `.git`) that `path` is in, if any.
pub fn repository_root(path: &Path) -> Option<std::path::PathBuf> {
    let start = path.canonicalize().ok()?;
    start
        .ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// What to put before a report's root-relative `file` so the path resolves from `base`: `""` when
/// the scanned root is `base` itself, else the root relative to it with a trailing `/`.
pub fn prefix_from(root: &Path, base: &Path) -> String {
    match relative_to(root, base) {
        Some(rel) if rel.is_empty() => String::new(),
        Some(rel) => format!("{rel}/"),
        None => typed_prefix(root),
    }
}

/// The scanned root as the user typed it, as a prefix: `services/api/` for `./services/api`,
/// `""` for `.`.
pub fn typed_prefix(root: &Path) -> String {
    let s = root.to_string_lossy().replace('\\', "/");
    let mut s = s.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    let s = s.trim_end_matches('/');
    if s.is_empty() || s == "." {
        String::new()
    } else {
        format!("{s}/")
    }
}
