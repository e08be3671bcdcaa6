//! RS021 idempotency-undocumented.

use super::{Hit, Rule, RuleMeta, Section, Severity};
use crate::facts::doc::duration;
use crate::facts::doc::{DocSource, KeyDoc, KeyHeaderDoc, Unlisted};
use crate::facts::{Endpoint, MechanismKind};

const DOC: &str = r#"## What it does
Reads the API documentation in the repository: OpenAPI 3.x and Swagger 2 documents (YAML or
JSON: `openapi.yaml`, `swagger.json`, documents generated into the tree), `@nestjs/swagger`
(a `SwaggerModule` document lists every controller route; `@ApiHeader` documents a header) and
utoipa's `#[utoipa::path(params(("Idempotency-Key" = String,
Header)))]`. For each endpoint that handles an idempotency key, it flags an operation that does
not document the key header, and an endpoint the documentation leaves out while it documents
other endpoints of the same package (the folder with its `package.json` or `Cargo.toml`). Where the header's
description states how long keys are kept (`Keys are kept for 24 hours`), it checks that window
against the key store: a documented window over a store whose keys never expire is flagged too.

## Why is this bad?
Clients only send a key they know about. An SDK generated from the document has no parameter for
it, so every retry of a generated client runs the operation again, and the server's key mechanism
protects nobody. A retention window promised in the documentation but not implemented makes a
client that retries after the window expect a replay it may not get, or rely on a key being free
again when it is not.

## Example
```yaml
paths:
  /orders:
    post:
      requestBody: { $ref: '#/components/requestBodies/NewOrder' }
```

Use instead:
```yaml
paths:
  /orders:
    post:
      parameters:
        - name: Idempotency-Key
          in: header
          required: true
          description: A UUID per order; keys are kept for 24 hours. A retry with the same key gets the first response.
          schema: { type: string, maxLength: 255 }
      requestBody: { $ref: '#/components/requestBodies/NewOrder' }
```"#;

fn undocumented(ep: &Endpoint, doc: &KeyDoc) -> Hit {
    let store_line = ep
        .key_reads
        .first()
        .or(ep
            .mechanisms
            .iter()
            .find(|m| m.kind == MechanismKind::HeaderKey)
            .map(|m| &m.location))
        .map(|at| format!(" (read at {at})"))
        .unwrap_or_default();
    Hit {
        confidence: super::Confidence::Likely,
        message: format!(
            "The {} documentation of `{}` does not document the idempotency-key header the endpoint handles{store_line}.",
            doc.source.as_str(),
            ep.label()
        ),
        change: format!(
            "Document the `Idempotency-Key` request header on this operation at {}: required or optional, its format, how long keys are kept, and that a retry with the same key gets the first response (422 for a different body, 409 while the first is in flight).",
            doc.location
        ),
        impact: "Clients and generated SDKs do not send a key, so their retries run the operation again despite the server's key mechanism.".into(),
        at: Some(doc.location.clone()),
        cause: None,
    }
}

/// A keyed endpoint its service's documentation leaves out.
fn unlisted(ep: &Endpoint, u: &Unlisted) -> Hit {
    let (what, change) = match u.source {
        DocSource::Openapi | DocSource::Swagger => (
            format!("the {} document `{}`", u.source.as_str(), u.document),
            format!(
                "Add `{}` to `{}` with its `Idempotency-Key` request header: required or optional, its format, how long keys are kept, and that a retry with the same key gets the first response.",
                ep.label(),
                u.document
            ),
        ),
        DocSource::Utoipa => (
            "the utoipa documentation".to_string(),
            "Document the handler with `#[utoipa::path(..)]`, its `params((\"Idempotency-Key\" = String, Header, description = ..))` included, and list it in the `OpenApi` derive's `paths(..)`.".to_string(),
        ),
        DocSource::NestjsSwagger => (
            "the @nestjs/swagger documentation".to_string(),
            "Document the route with `@nestjs/swagger` decorators, `@ApiHeader({ name: 'Idempotency-Key', required: true, description: .. })` included.".to_string(),
        ),
    };
    Hit {
        confidence: super::Confidence::Likely,
        message: format!(
            "`{}` takes an idempotency key but is not in {what}, which documents {} other endpoint{} of this service.",
            ep.label(),
            u.documented,
            if u.documented == 1 { "" } else { "s" }
        ),
        change,
        impact: "Clients and generated SDKs do not know the endpoint, let alone its key, so their retries run the operation again despite the server's key mechanism.".into(),
        at: None,
        cause: None,
    }
}

/// A documented retention window over a store whose keys never expire.
fn window_not_kept(ep: &Endpoint, header: &KeyHeaderDoc) -> Option<Hit> {
    let window = header.retention.as_ref()?;
    let store = ep.key_store.as_ref()?;
    let (at, why) = store.expiry.missing()?;
    Some(Hit {
        confidence: super::store_confidence(store),
        message: format!(
            "The documentation says keys are kept for {} (\"{}\"), but the key store never expires them: {why} ({at}).",
            duration(window.seconds),
            window.text
        ),
        change: format!(
            "Expire keys after the documented {}: a TTL on the key's write or an `expires_at` the lookup honours, plus a cleanup; or document the window the store implements.",
            duration(window.seconds)
        ),
        impact: "Clients plan retries and key reuse around the documented window; a store that keeps keys forever refuses or replays requests the documentation says are new.".into(),
        at: Some(header.location.clone()),
        cause: None,
    })
}

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() || !ep.has_mechanism(MechanismKind::HeaderKey) {
        return None;
    }
    let Some(doc) = ep.key_doc.as_ref() else {
        return ep.key_doc_unlisted.as_ref().map(|u| unlisted(ep, u));
    };
    match &doc.header {
        None => Some(undocumented(ep, doc)),
        Some(header) => window_not_kept(ep, header),
    }
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS021",
            name: "idempotency-undocumented",
            section: Section::Documentation,
            severity: Severity::Low,
            summary: "a keyed endpoint whose API documentation (OpenAPI, Swagger, `@nestjs/swagger`, utoipa) omits the key header or the endpoint, or promises a retention window the key store does not keep",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Location;
    use crate::facts::doc::{DocSource, Retention};
    use crate::facts::key::Prop;
    use crate::rules::testing::{keyed, store};

    fn doc(header: Option<KeyHeaderDoc>) -> KeyDoc {
        KeyDoc {
            source: DocSource::Openapi,
            location: Location::new("openapi.yaml", 9),
            header,
        }
    }

    fn header(retention: Option<u64>) -> KeyHeaderDoc {
        KeyHeaderDoc {
            name: "Idempotency-Key".into(),
            required: true,
            retention: retention.map(|seconds| Retention {
                seconds,
                text: "24 hours".into(),
            }),
            location: Location::new("openapi.yaml", 30),
        }
    }

    #[test]
    fn fires_on_an_undocumented_header_and_a_window_not_kept() {
        let mut ep = keyed(store());
        assert!(check(&ep).is_none(), "no documentation, nothing to say");
        ep.key_doc = Some(doc(None));
        let hit = check(&ep).unwrap();
        assert_eq!(hit.at, Some(Location::new("openapi.yaml", 9)));
        assert!(hit.message.contains("OpenAPI"), "{}", hit.message);
        ep.key_doc = Some(doc(Some(header(None))));
        assert!(check(&ep).is_none());
        ep.key_doc = Some(doc(Some(header(Some(86_400)))));
        assert!(check(&ep).is_none(), "expiry unknown: nothing to compare");
        let mut s = store();
        s.expiry = Prop::no(Location::new("store.ts", 4), "no TTL");
        let mut forever = keyed(s);
        forever.key_doc = ep.key_doc.clone();
        let hit = check(&forever).unwrap();
        assert!(hit.message.contains("24 h"), "{}", hit.message);
        assert_eq!(hit.at, Some(Location::new("openapi.yaml", 30)));
        // Left out of a document that lists the service's other endpoints.
        let mut left_out = keyed(store());
        left_out.key_doc_unlisted = Some(Unlisted {
            source: DocSource::Openapi,
            document: "openapi.yaml".into(),
            documented: 2,
        });
        let hit = check(&left_out).unwrap();
        assert_eq!(hit.at, None, "on the route");
        assert!(
            hit.message.contains(
                "not in the OpenAPI document `openapi.yaml`, which documents 2 other endpoints"
            ),
            "{}",
            hit.message
        );
    }
}
