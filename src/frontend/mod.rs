//! Front ends: source to facts. Only they know syntax.

pub mod rust;
pub mod schema;
pub mod ts;
