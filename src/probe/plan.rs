//! What the probe sends to each endpoint: which endpoints (the audit's keyed and
//! constraint-protected ones, or those named with `--endpoint`), their URLs, and the request body
//! (`--body-file`, an example of the API documentation, or a minimal body built from a
//! validation schema).

use super::schema::{Index, Schema, Spec, build};
use super::target::Target;
use crate::facts::doc::shape;
use crate::facts::key::MissingKey;
use crate::facts::{Endpoint, Facts, MechanismKind, Protocol};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Schemas by name, shared by the bodies built from them.
type Schemas = Arc<HashMap<String, Schema>>;

/// A request body, made anew for each request.
#[derive(Debug, Clone)]
pub enum Body {
    /// Sent as given (a file, a documented example).
    Fixed(Value),
    /// Built from a validation schema; plain strings and emails made unique per request, so a
    /// repeated run does not collide with the records of the last.
    Schema { spec: Spec, index: Schemas },
    /// No body (a `DELETE`).
    Empty,
}

impl Body {
    fn value(&self, unique: &str) -> Option<Value> {
        match self {
            Body::Fixed(v) => Some(v.clone()),
            Body::Schema { spec, index } => build(spec, index, unique).ok(),
            Body::Empty => None,
        }
    }

    /// The JSON text of the body for one check (`unique` tells checks apart).
    pub fn text(&self, unique: &str) -> String {
        self.value(unique)
            .map(|v| v.to_string())
            .unwrap_or_default()
    }

    /// The body with one value changed, keeping it valid where possible: the first number one
    /// more, else the first plain string (not an email, URL, UUID or date) with `-changed`, else
    /// the first boolean flipped, else a field added.
    pub fn different(&self, unique: &str) -> String {
        fn plain(s: &str) -> bool {
            let uuid = s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4;
            let date = s.len() >= 10
                && s.as_bytes()[4] == b'-'
                && s[..4].chars().all(|c| c.is_ascii_digit());
            !s.contains('@') && !s.contains("://") && !uuid && !date
        }
        let mut v = self.value(unique).unwrap_or(Value::Null);
        let mut changed = false;
        if let Value::Object(m) = &mut v {
            let key = m
                .iter()
                .find(|(_, x)| x.is_number())
                .or_else(|| m.iter().find(|(_, x)| x.as_str().is_some_and(plain)))
                .or_else(|| m.iter().find(|(_, x)| x.is_boolean()))
                .map(|(k, _)| k.clone());
            if let Some(x) = key.and_then(|k| m.get_mut(&k)) {
                changed = true;
                let next = match &*x {
                    Value::Number(n) => match n.as_i64() {
                        Some(i) => Value::from(i + 1),
                        None => Value::from(n.as_f64().unwrap_or(0.0) + 1.0),
                    },
                    Value::String(s) => Value::String(format!("{s}-changed")),
                    Value::Bool(b) => Value::Bool(!*b),
                    other => other.clone(),
                };
                *x = next;
            }
        }
        if !changed {
            match &mut v {
                Value::Object(m) => {
                    m.insert("probe_mismatch".into(), Value::Bool(true));
                }
                _ => v = serde_json::json!({ "probe_mismatch": true }),
            }
        }
        v.to_string()
    }
}

/// One endpoint ready to probe.
#[derive(Debug, Clone)]
pub struct Plan {
    /// `METHOD path`, as the audit names it.
    pub endpoint: String,
    pub method: String,
    pub url: String,
    pub body: Body,
    pub body_source: String,
    /// The header the key is sent in: `--key-header`, else the one the API documentation names,
    /// else `Idempotency-Key`.
    pub key_header: String,
    /// The audit found an idempotency-key mechanism (or the user named the endpoint).
    pub keyed: bool,
    /// Why the endpoint is known to require a key (for the missing-key check).
    pub requires_key: Option<String>,
    /// The unique constraint that protects its create (for the duplicate-create check).
    pub constraint: Option<String>,
}

/// An endpoint and what will happen to it.
#[derive(Debug, Clone)]
pub enum Planned {
    Ready(Plan),
    Skipped {
        endpoint: String,
        url: String,
        why: String,
    },
}

/// What the user asked for.
pub struct Wanted<'a> {
    /// `--endpoint 'POST /api/orders'` (a path with values for its parameters, or as audited).
    pub endpoints: &'a [String],
    /// `--body-file`: its name and its JSON.
    pub body_file: Option<(String, Value)>,
    /// `--key-header`.
    pub key_header: Option<String>,
}

fn constraint(ep: &Endpoint) -> Option<String> {
    ep.side_effects
        .iter()
        .find_map(|e| e.constraint.clone())
        .or_else(|| {
            ep.mechanisms
                .iter()
                .find(|m| m.kind == MechanismKind::UniqueConstraint)
                .map(|m| m.detail.clone())
        })
}

fn requires_key(ep: &Endpoint) -> Option<String> {
    if let Some(MissingKey::Rejected { code, at }) = ep.key_store.as_ref().map(|k| &k.missing_key) {
        return Some(format!(
            "the audit sees a missing key answered {code} at {at}"
        ));
    }
    ep.key_doc
        .as_ref()
        .and_then(|d| d.header.as_ref())
        .filter(|h| h.required)
        .map(|h| {
            format!(
                "the API documentation marks `{}` required at {}",
                h.name, h.location
            )
        })
}

/// Lines `from..from + count` (1-based) of a file under `root`.
fn lines(root: &Path, file: &str, from: u32, count: usize) -> String {
    std::fs::read_to_string(root.join(file))
        .map(|t| {
            t.lines()
                .skip(from.saturating_sub(1) as usize)
                .take(count)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The body an endpoint gets, and where it comes from; Err says why there is none.
fn body(
    ep: Option<&Endpoint>,
    method: &str,
    facts: &Facts,
    index: &Index,
    shared: &(Schemas, Schemas),
    root: &Path,
    wanted: &Wanted,
) -> Result<(Body, String), String> {
    if let Some((name, v)) = &wanted.body_file {
        return Ok((Body::Fixed(v.clone()), format!("--body-file {name}")));
    }
    let Some(ep) = ep else {
        return Err("the audit does not know this endpoint: give its body with --body-file".into());
    };
    if let Some(op) = facts.api_docs.find(&ep.method, &ep.path, &ep.location)
        && let Some(example) = op.examples.first()
    {
        return Ok((
            Body::Fixed(example.clone()),
            format!("the {} example at {}", op.source.as_str(), op.location),
        ));
    }
    let rust = ep.location.file.ends_with(".rs");
    let handler = ep
        .handler_location
        .clone()
        .unwrap_or_else(|| ep.location.clone());
    let code = format!(
        "{}\n{}",
        lines(root, &ep.location.file, ep.location.line, 3),
        lines(root, &handler.file, handler.line, 30)
    );
    if let Some(schema) = index.named_in(&code, rust) {
        let map = if rust { &shared.1 } else { &shared.0 };
        return match build(&schema.spec, map, "") {
            Ok(_) => Ok((
                Body::Schema {
                    spec: schema.spec.clone(),
                    index: Arc::clone(map),
                },
                format!("{} `{}` ({})", schema.kind, schema.name, schema.location),
            )),
            Err(why) => Err(format!(
                "its body's {} `{}` ({}): {why}; give a body with --body-file",
                schema.kind, schema.name, schema.location
            )),
        };
    }
    if method == "DELETE" {
        return Ok((Body::Empty, "no body (DELETE)".into()));
    }
    Err("no request body: give one with --body-file, add an example to the API document, or validate the body with a schema the audit reads (zod, class-validator, serde)".into())
}

/// `POST /orders/42` names `POST /orders/{id}`.
fn names(wanted: &str, ep: &Endpoint) -> bool {
    let Some((method, path)) = wanted.trim().split_once(' ') else {
        return false;
    };
    if !method.eq_ignore_ascii_case(&ep.method) {
        return false;
    }
    let path = path.trim();
    if path == ep.path {
        return true;
    }
    let want: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let have: Vec<&str> = ep.path.trim_end_matches('/').split('/').collect();
    want.len() == have.len()
        && want
            .iter()
            .zip(&have)
            .all(|(w, h)| w == h || (h.starts_with('{') && h.ends_with('}') && !w.is_empty()))
}

/// The endpoints to probe and how, in a stable order.
pub fn plans(
    facts: &Facts,
    index: &Index,
    root: &Path,
    target: &Target,
    wanted: &Wanted,
) -> Vec<Planned> {
    let shared = (Arc::new(index.ts.clone()), Arc::new(index.rust.clone()));
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    // (endpoint as audited, the path to request)
    let mut chosen: Vec<(Option<&Endpoint>, String, String)> = Vec::new();
    if wanted.endpoints.is_empty() {
        let mut eps: Vec<&Endpoint> = facts
            .endpoints
            .iter()
            .filter(|e| e.is_mutation())
            .filter(|e| e.has_mechanism(MechanismKind::HeaderKey) || constraint(e).is_some())
            .collect();
        eps.sort_by(|a, b| {
            (&a.path, &a.method, &a.location).cmp(&(&b.path, &b.method, &b.location))
        });
        for e in eps {
            chosen.push((Some(e), e.method.clone(), e.path.clone()));
        }
    } else {
        for w in wanted.endpoints {
            let (method, path) = w
                .trim()
                .split_once(' ')
                .map(|(m, p)| (m.to_ascii_uppercase(), p.trim().to_string()))
                .unwrap_or_else(|| ("POST".into(), w.trim().to_string()));
            let ep = facts.endpoints.iter().find(|e| names(w, e));
            chosen.push((ep, method, path));
        }
    }
    for (ep, method, path) in chosen {
        let endpoint = ep
            .map(Endpoint::label)
            .unwrap_or_else(|| format!("{method} {path}"));
        if !seen.insert(format!("{method} {path}")) {
            continue;
        }
        let url = target.url(&path);
        let skip = |why: String| Planned::Skipped {
            endpoint: endpoint.clone(),
            url: url.clone(),
            why,
        };
        if let Some(e) = ep {
            if e.protocol != Protocol::Rest && e.protocol != Protocol::FormAction {
                out.push(skip(format!(
                    "a {} endpoint: the probe sends REST requests",
                    e.protocol.as_str()
                )));
                continue;
            }
            if !e.path_complete {
                out.push(skip("part of its path is not statically known: name it with --endpoint 'METHOD /full/path'".into()));
                continue;
            }
        }
        if shape(&path).contains("{}") {
            out.push(skip(format!(
                "its path has parameters: name it with values, e.g. --endpoint '{method} {}'",
                path.replace('{', "<").replace('}', ">")
            )));
            continue;
        }
        match body(ep, &method, facts, index, &shared, root, wanted) {
            Err(why) => out.push(skip(why)),
            Ok((body, body_source)) => out.push(Planned::Ready(Plan {
                endpoint,
                method: method.clone(),
                url,
                body,
                body_source,
                key_header: wanted
                    .key_header
                    .clone()
                    .or_else(|| {
                        ep.and_then(|e| e.key_doc.as_ref())
                            .and_then(|d| d.header.as_ref())
                            .map(|h| h.name.clone())
                    })
                    .unwrap_or_else(|| "Idempotency-Key".into()),
                keyed: ep.is_none_or(|e| e.has_mechanism(MechanismKind::HeaderKey)),
                requires_key: ep.and_then(requires_key),
                constraint: ep.and_then(constraint),
            })),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_different_body_changes_one_value() {
        let b = Body::Fixed(serde_json::json!({"quantity": 2, "sku": "A-1"}));
        let d: Value = serde_json::from_str(&b.different("")).unwrap();
        assert_eq!(d, serde_json::json!({"quantity": 3, "sku": "A-1"}));
        let b = Body::Fixed(
            serde_json::json!({"email": "a@b.c", "id": "7f3c9a52-5b1e-4c8d-9e2a-0d4b6f1a3c5e", "sku": "A-1"}),
        );
        let d: Value = serde_json::from_str(&b.different("")).unwrap();
        assert_eq!(d["sku"], "A-1-changed");
        assert_eq!(d["email"], "a@b.c");
        let b = Body::Fixed(serde_json::json!({}));
        assert_eq!(b.different(""), r#"{"probe_mismatch":true}"#);
    }

    #[test]
    fn a_named_endpoint_may_give_values_for_parameters() {
        let ep = Endpoint {
            method: "POST".into(),
            path: "/orders/{id}/pay".into(),
            ..Endpoint::default()
        };
        assert!(names("POST /orders/42/pay", &ep));
        assert!(names("post /orders/{id}/pay", &ep));
        assert!(!names("POST /orders/42", &ep));
        assert!(!names("PUT /orders/42/pay", &ep));
    }
}
