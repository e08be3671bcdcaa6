//! The docs cannot drift from the code: README's rule table comes from the registry, and each
//! rule's documentation follows the template.

#[test]
fn readme_rule_table_matches_the_registry() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find("<!-- rules:start -->\n")
        .expect("rules:start marker")
        + "<!-- rules:start -->\n".len();
    let end = readme.find("<!-- rules:end -->").expect("rules:end marker");
    assert_eq!(
        &readme[start..end],
        retrysafe::rules::markdown_table(),
        "regenerate README's rule table"
    );
}

#[test]
fn every_rule_doc_follows_the_template() {
    for r in retrysafe::rules::registry() {
        let doc = r.meta.doc;
        let sections = [
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "Use instead:",
        ];
        let mut last = 0;
        for s in sections {
            let at = doc[last..]
                .find(s)
                .unwrap_or_else(|| panic!("{}: `{s}` missing or out of order", r.meta.id));
            last += at;
        }
        assert!(
            r.meta.id.starts_with("RS") && r.meta.id.len() == 5,
            "{}",
            r.meta.id
        );
        assert!(
            r.meta
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '-'),
            "{}",
            r.meta.name
        );
    }
}
