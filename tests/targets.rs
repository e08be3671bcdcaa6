//! The model or table each write names, as the JSON reports it: what constraints link to.

mod common;

use common::{fixture, json_report};

fn targets(fx: &str, method: &str, path: &str) -> Vec<String> {
    let report = json_report(&fixture(fx));
    let ep = report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["method"] == method && e["path"] == path)
        .unwrap_or_else(|| panic!("{fx}: no {method} {path}"));
    ep["side_effects"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["target"].as_str().map(String::from))
        .collect()
}

#[test]
fn drizzle_writes_name_the_table_value_they_are_given() {
    // `db.insert(snippets).values(..)`: the table, not the `db` handle.
    assert_eq!(
        targets("constraints-drizzle", "POST", "/api/snippets"),
        ["snippets"]
    );
    // `db.insert(stars).values(..).onConflictDoNothing()`: one upsert on `stars`.
    assert_eq!(
        targets(
            "constraints-drizzle",
            "POST",
            "/api/snippets/{snippetId}/star"
        ),
        ["stars"]
    );
    assert_eq!(
        targets("constraints-drizzle", "PATCH", "/api/tags/{tagId}"),
        ["tags"]
    );
}
