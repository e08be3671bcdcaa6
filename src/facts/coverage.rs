//! What an audit actually read: files per language, routes found, and the server frameworks the
//! manifests name. A run that audited nothing must not look like a clean one.

use serde::Serialize;
use std::collections::BTreeMap;

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

#[cfg(test)]
mod tests {
    use super::*;

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
