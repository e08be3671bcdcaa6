//! Links each endpoint to the operation of the repository's API documentation that describes it.

use crate::facts::Endpoint;
use crate::facts::doc::KeyDoc;
use crate::frontend::apidoc::ApiDocs;

pub fn apply(endpoints: &mut [Endpoint], docs: &ApiDocs) {
    if docs.is_empty() {
        return;
    }
    for ep in endpoints.iter_mut().filter(|e| e.is_mutation()) {
        if let Some(op) = docs.find(&ep.method, &ep.path, &ep.location) {
            ep.key_doc = Some(KeyDoc {
                source: op.source,
                location: op.location.clone(),
                header: op.key_header.clone(),
            });
        }
    }
}
