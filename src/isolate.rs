//! A bug of ours on one file, or in one linking step, becomes a diagnostic instead of costing the
//! rest of the audit. Used by the front ends and the linker alike.

use crate::facts::Diagnostic;

/// What a caught panic said, for a diagnostic.
pub fn panic_reason(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Runs a per-file analysis so that a bug of ours on one file becomes a diagnostic on that file
/// instead of costing the rest of the audit. `empty` is what the file contributes then.
pub fn guarded<T>(
    rel: &str,
    analyse: impl FnOnce() -> (T, Vec<Diagnostic>),
    empty: impl FnOnce() -> T,
) -> (T, Vec<Diagnostic>) {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(analyse)) {
        Ok(r) => r,
        Err(e) => {
            let why = panic_reason(e.as_ref());
            let d = Diagnostic::new(
                rel,
                0,
                format!(
                    "internal error while analysing this file ({why}); it is left out, please report it"
                ),
            );
            (empty(), vec![d])
        }
    }
}
