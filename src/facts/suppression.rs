//! A `retrysafe-ignore` comment, as the scanner in `suppress` finds it.

/// One `retrysafe-ignore` comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    /// Relative to the scanned root, `/`-separated.
    pub file: String,
    /// The comment's own line (1-based).
    pub line: u32,
    /// The line whose findings it silences: its own line when code precedes the comment, else the
    /// first line below that is not a comment.
    pub target: u32,
    /// Rule ids as written (upper-cased).
    pub rules: Vec<String>,
    /// `None` when missing or empty.
    pub reason: Option<String>,
    /// `retrysafe-ignore-file`: every finding in the file.
    pub file_wide: bool,
}
