//! Prints README's rule table from the registry: `cargo run --example rule_table`.
fn main() {
    print!("{}", retrysafe::rules::markdown_table());
}
