//! Paths inside the scanned tree, `/`-separated and relative to its root. Depends on nothing in
//! the crate, so every layer may use it.

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
