//! OpenAPI 3.x and Swagger 2.0 documents, YAML or JSON, read with `serde_yaml_ng`/`serde_json`
//! into a JSON value; `$ref`s to the document's own components are followed.

use super::{ApiDocFile, ApiOperation, DocSource, KeyHeaderDoc, is_key_header, retention};
use crate::facts::{Diagnostic, Location};
use serde_json::Value;
use std::collections::HashMap;

const METHODS: &[&str] = &["post", "put", "patch", "delete"];

/// Extensions naming the controller a spec-first router runs an operation from (exegesis,
/// swagger-tools / oas3-tools, express-openapi-validator).
const CONTROLLER_KEYS: &[&str] = &[
    "x-exegesis-controller",
    "x-swagger-router-controller",
    "x-eov-operation-handler",
];

/// Reads one document. `Ok(None)` when the file is not an OpenAPI/Swagger document; an error
/// (a diagnostic) when it claims to be one but does not parse.
pub fn read(
    rel: &str,
    text: &str,
    key_headers: &[String],
) -> Result<Option<(ApiDocFile, Vec<ApiOperation>)>, Diagnostic> {
    // Cheap test before parsing: a document names its version at the top level.
    if !text.contains("openapi") && !text.contains("swagger") {
        return Ok(None);
    }
    let json = rel.to_ascii_lowercase().ends_with(".json");
    let parsed: Result<Value, String> = if json {
        serde_json::from_str(text).map_err(|e| e.to_string())
    } else {
        serde_yaml_ng::from_str(text).map_err(|e| e.to_string())
    };
    let doc = match parsed {
        Ok(v) => v,
        Err(e) => {
            let named = Location::new(rel, 1);
            let looks_like = is_named_spec(rel);
            return if looks_like {
                Err(Diagnostic::new(
                    named.file,
                    named.line,
                    format!("API document does not parse: {e}"),
                ))
            } else {
                Ok(None)
            };
        }
    };
    let (source, version) = match (doc.get("openapi"), doc.get("swagger")) {
        (Some(Value::String(v)), _) if v.starts_with('3') => (DocSource::Openapi, v.clone()),
        (_, Some(Value::String(v))) if v.starts_with('2') => (DocSource::Swagger, v.clone()),
        _ => return Ok(None),
    };
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return Ok(None);
    };
    let base = base_path(&doc, source);
    let lines: Vec<&str> = text.lines().collect();
    let lines = Lines::new(lines, json);
    let mut ops = Vec::new();
    for (path, item) in paths {
        let shared: Vec<&Value> = params(&doc, item);
        let path_line = line_of(&lines, 0, path, json).unwrap_or(1);
        for method in METHODS {
            let Some(op) = item.get(*method) else {
                continue;
            };
            let line = line_of(&lines, path_line as usize - 1, method, json).unwrap_or(path_line);
            let mut all = params(&doc, op);
            all.extend(shared.iter().copied());
            let key_header = all.iter().find_map(|p| {
                let name = p.get("name")?.as_str()?;
                let in_header = p.get("in").and_then(Value::as_str) == Some("header");
                if !in_header || !is_key_header(name, key_headers) {
                    return None;
                }
                let described = [
                    p.get("description"),
                    p.get("schema").and_then(|s| s.get("description")),
                ]
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ");
                let at = line_of(&lines, 0, name, json).unwrap_or(line);
                Some(KeyHeaderDoc {
                    name: name.to_string(),
                    required: p.get("required").and_then(Value::as_bool) == Some(true),
                    retention: retention(&described),
                    location: Location::new(rel, at),
                })
            });
            let controller = CONTROLLER_KEYS
                .iter()
                .find_map(|k| {
                    [op, item, &doc]
                        .into_iter()
                        .find_map(|v| v.get(*k).and_then(Value::as_str))
                })
                .map(str::to_string);
            ops.push(ApiOperation {
                operation_id: op
                    .get("operationId")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                controller,
                method: method.to_ascii_uppercase(),
                path: Some(join(&base, path)),
                bare_path: Some(path.clone()),
                source,
                location: Location::new(rel, line),
                route: None,
                key_header,
                examples: examples(&doc, op, source),
            });
        }
    }
    let file = ApiDocFile {
        file: rel.to_string(),
        source,
        version: Some(version),
        operations: ops.len(),
    };
    Ok(Some((file, ops)))
}

/// `openapi.yaml`, `swagger.json`, `api-spec.yml`: a name that says it is an API document.
fn is_named_spec(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_ascii_lowercase();
    name.starts_with("openapi") || name.starts_with("swagger")
}

/// Swagger's `basePath`; the path of OpenAPI's first server URL (its variables at their
/// defaults).
fn base_path(doc: &Value, source: DocSource) -> String {
    let raw = match source {
        DocSource::Swagger => doc
            .get("basePath")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        _ => {
            let Some(server) = doc
                .get("servers")
                .and_then(Value::as_array)
                .and_then(|s| s.first())
            else {
                return String::new();
            };
            let mut url = server
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if let Some(vars) = server.get("variables").and_then(Value::as_object) {
                for (name, v) in vars {
                    if let Some(d) = v.get("default").and_then(Value::as_str) {
                        url = url.replace(&format!("{{{name}}}"), d);
                    }
                }
            }
            match url.find("://") {
                Some(at) => url[at + 3..]
                    .find('/')
                    .map(|p| url[at + 3 + p..].to_string())
                    .unwrap_or_default(),
                None => url,
            }
        }
    };
    raw.trim_end_matches('/').to_string()
}

fn join(base: &str, path: &str) -> String {
    if base.is_empty() || base == "/" {
        path.to_string()
    } else {
        format!("{base}{path}")
    }
}

/// Follows a local `$ref` (`#/components/parameters/IdempotencyKey`), a few levels deep.
fn resolve<'a>(doc: &'a Value, mut v: &'a Value) -> &'a Value {
    for _ in 0..8 {
        let Some(r) = v.get("$ref").and_then(Value::as_str) else {
            return v;
        };
        let Some(pointer) = r.strip_prefix('#') else {
            return v;
        };
        match doc.pointer(pointer) {
            Some(target) => v = target,
            None => return v,
        }
    }
    v
}

/// The parameters of an operation or a path item, references followed.
fn params<'a>(doc: &'a Value, node: &'a Value) -> Vec<&'a Value> {
    node.get("parameters")
        .and_then(Value::as_array)
        .map(|ps| ps.iter().map(|p| resolve(doc, p)).collect())
        .unwrap_or_default()
}

/// The JSON request-body examples of an operation.
fn examples(doc: &Value, op: &Value, source: DocSource) -> Vec<Value> {
    let mut out = Vec::new();
    let from_schema = |schema: Option<&Value>, out: &mut Vec<Value>| {
        if let Some(s) = schema.map(|s| resolve(doc, s))
            && let Some(e) = s.get("example")
        {
            out.push(e.clone());
        }
    };
    match source {
        DocSource::Swagger => {
            for p in params(doc, op) {
                if p.get("in").and_then(Value::as_str) == Some("body") {
                    if let Some(e) = p.get("x-example") {
                        out.push(e.clone());
                    }
                    from_schema(p.get("schema"), &mut out);
                }
            }
        }
        _ => {
            let Some(body) = op.get("requestBody").map(|b| resolve(doc, b)) else {
                return out;
            };
            let Some(content) = body.get("content").and_then(Value::as_object) else {
                return out;
            };
            let media = content
                .iter()
                .find(|(k, _)| k.contains("json"))
                .map(|(_, v)| v);
            let Some(media) = media else { return out };
            if let Some(e) = media.get("example") {
                out.push(e.clone());
            }
            if let Some(all) = media.get("examples").and_then(Value::as_object) {
                for e in all.values() {
                    if let Some(v) = resolve(doc, e).get("value") {
                        out.push(v.clone());
                    }
                }
            }
            from_schema(media.get("schema"), &mut out);
        }
    }
    out
}

/// A document's lines, and for JSON, the lines that begin with each quoted string (after
/// indentation and `- `), so that finding where a key is written does not rescan the document.
struct Lines<'t> {
    lines: Vec<&'t str>,
    /// For JSON: the quoted string a line begins with → its (0-based) lines, ascending; one map
    /// for `"`, one for `'`.
    quoted: Option<[HashMap<&'t str, Vec<usize>>; 2]>,
}

impl<'t> Lines<'t> {
    fn new(lines: Vec<&'t str>, json: bool) -> Self {
        let quoted = json.then(|| {
            let mut maps: [HashMap<&'t str, Vec<usize>>; 2] = Default::default();
            for (i, l) in lines.iter().enumerate() {
                let t = l.trim_start().trim_start_matches("- ");
                for (q, map) in ['"', '\''].into_iter().zip(maps.iter_mut()) {
                    if let Some(rest) = t.strip_prefix(q)
                        && let Some(end) = rest.find(q)
                    {
                        map.entry(&rest[..end]).or_default().push(i);
                    }
                }
            }
            maps
        });
        Lines { lines, quoted }
    }
}

/// The 1-based line at or after `from` (0-based) where `key` is written as a mapping key.
fn line_of(lines: &Lines, from: usize, key: &str, json: bool) -> Option<u32> {
    // A line begins with `"key"` exactly when the first quoted string on it is `key` (a key
    // without the quote in it): the first such line at or after `from`, in either quoting.
    if json
        && let Some(maps) = &lines.quoted
        && !key.contains(['"', '\''])
    {
        return maps
            .iter()
            .filter_map(|m| {
                let at = m.get(key)?;
                at.get(at.partition_point(|&i| i < from)).copied()
            })
            .min()
            .map(|i| i as u32 + 1);
    }
    let lines = &lines.lines;
    let quoted = [format!("\"{key}\""), format!("'{key}'")];
    let colon = format!("{key}:");
    lines
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, l)| {
            let t = l.trim_start().trim_start_matches("- ");
            quoted.iter().any(|q| t.starts_with(q.as_str()))
                || (!json && (t.starts_with(colon.as_str()) || t == key))
                || (!json && t.starts_with("name:") && t.contains(key))
        })
        .map(|(i, _)| i as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers() -> Vec<String> {
        vec!["idempotency-key".into()]
    }

    const YAML: &str = r#"openapi: 3.0.3
info:
  title: Shop
  version: "1"
servers:
  - url: https://api.example.com/api
paths:
  /orders:
    post:
      parameters:
        - $ref: '#/components/parameters/IdempotencyKey'
      requestBody:
        content:
          application/json:
            example: { sku: "A-1", quantity: 2 }
      responses:
        201:
          description: created
  /refunds:
    post:
      responses:
        "201":
          description: created
components:
  parameters:
    IdempotencyKey:
      name: Idempotency-Key
      in: header
      required: true
      description: Keys are kept for 24 hours.
      schema: { type: string }
"#;

    #[test]
    fn reads_operations_headers_and_examples() {
        let (file, ops) = read("openapi.yaml", YAML, &headers()).unwrap().unwrap();
        assert_eq!(file.version.as_deref(), Some("3.0.3"));
        assert_eq!(ops.len(), 2);
        let orders = ops
            .iter()
            .find(|o| o.bare_path.as_deref() == Some("/orders"));
        let orders = orders.unwrap();
        assert_eq!(orders.path.as_deref(), Some("/api/orders"));
        assert_eq!(orders.location.line, 9);
        let key = orders.key_header.as_ref().unwrap();
        assert!(key.required);
        assert_eq!(key.retention.as_ref().unwrap().seconds, 86_400);
        assert_eq!(orders.examples[0]["quantity"], 2);
        let refunds = ops
            .iter()
            .find(|o| o.bare_path.as_deref() == Some("/refunds"));
        assert!(refunds.unwrap().key_header.is_none());
    }

    #[test]
    fn reads_swagger_json_and_ignores_other_files() {
        let json = r#"{"swagger": "2.0", "basePath": "/v1", "paths": {"/pay": {"post": {
            "parameters": [{"name": "Idempotency-Key", "in": "header", "type": "string"},
                           {"name": "body", "in": "body", "schema": {"example": {"amount": 5}}}]}}}}"#;
        let (_, ops) = read("swagger.json", json, &headers()).unwrap().unwrap();
        assert_eq!(ops[0].path.as_deref(), Some("/v1/pay"));
        assert!(ops[0].key_header.is_some());
        assert_eq!(ops[0].examples[0]["amount"], 5);
        assert!(
            read("config.yaml", "name: swagger-ui\n", &headers())
                .unwrap()
                .is_none()
        );
        assert!(read("openapi.yaml", "openapi: [", &headers()).is_err());
    }
}
