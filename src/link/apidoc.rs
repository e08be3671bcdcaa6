//! Links each endpoint to the operation of the repository's API documentation that describes it,
//! and finds the keyed endpoints that documentation leaves out.

use crate::facts::doc::ApiDocs;
use crate::facts::doc::{DocSource, KeyDoc, Unlisted};
use crate::facts::{Endpoint, MechanismKind, Protocol};
use std::collections::BTreeMap;
use std::path::Path;

/// The nearest folder of `file` (relative to `root`) that holds a `package.json` or a
/// `Cargo.toml`: the package, so the service, the file belongs to ("" for the root).
fn package_of(root: &Path, file: &str) -> String {
    let mut dir = Path::new(file).parent();
    while let Some(d) = dir {
        let here = root.join(d);
        if here.join("package.json").is_file() || here.join("Cargo.toml").is_file() {
            return d.to_string_lossy().replace('\\', "/");
        }
        dir = d.parent();
    }
    String::new()
}

/// A document, or one kind of code-first documentation (all of a project's utoipa paths make one
/// document).
fn document(source: DocSource, file: &str) -> String {
    match source {
        DocSource::Openapi | DocSource::Swagger => file.to_string(),
        DocSource::NestjsSwagger | DocSource::Utoipa => String::new(),
    }
}

pub fn apply(endpoints: &mut [Endpoint], docs: &ApiDocs, root: &Path) {
    if docs.is_empty() {
        return;
    }
    // (source, document) → (packages of the endpoints it documents, how many)
    let mut covered: BTreeMap<(DocSource, String), (Vec<String>, usize)> = BTreeMap::new();
    for ep in endpoints.iter_mut().filter(|e| e.is_mutation()) {
        if let Some(op) = docs.find(&ep.method, &ep.path, &ep.location) {
            ep.key_doc = Some(KeyDoc {
                source: op.source,
                location: op.location.clone(),
                header: op.key_header.clone(),
            });
            let c = covered
                .entry((op.source, document(op.source, &op.location.file)))
                .or_default();
            c.0.push(package_of(root, &ep.location.file));
            c.1 += 1;
        }
    }
    for ep in endpoints.iter_mut().filter(|e| {
        e.is_mutation()
            && e.key_doc.is_none()
            && e.protocol == Protocol::Rest
            && e.has_mechanism(MechanismKind::HeaderKey)
    }) {
        let package = package_of(root, &ep.location.file);
        let best = covered
            .iter()
            .filter(|(_, (packages, _))| packages.contains(&package))
            .max_by_key(|(_, (_, n))| *n);
        if let Some(((source, doc), (_, n))) = best {
            ep.key_doc_unlisted = Some(Unlisted {
                source: *source,
                document: doc.clone(),
                documented: *n,
            });
        }
    }
}
