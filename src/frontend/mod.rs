//! Front ends: source to facts. Only they know syntax.

pub mod apidoc;
pub mod key_tests;
pub mod rust;
pub mod schema;
pub mod ts;
