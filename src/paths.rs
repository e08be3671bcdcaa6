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
