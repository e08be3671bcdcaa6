//! utoipa code-first documentation: `#[utoipa::path(post, path = "/orders", params(
//! ("Idempotency-Key" = String, Header, description = "..")), request_body(content = X,
//! example = json!({..})))]` on a handler.

use super::{ApiDocFile, ApiOperation, DocSource, KeyHeaderDoc, is_key_header, retention};
use crate::facts::Location;
use proc_macro2::{Delimiter, TokenStream, TokenTree};

pub fn read(
    rel: &str,
    text: &str,
    key_headers: &[String],
) -> Option<(ApiDocFile, Vec<ApiOperation>)> {
    if !text.contains("utoipa") {
        return None;
    }
    let file = syn::parse_file(text).ok()?;
    let mut ops = Vec::new();
    walk(&file.items, rel, key_headers, &mut ops);
    proc_macro2::extra::invalidate_current_thread_spans();
    let doc = ApiDocFile {
        file: rel.to_string(),
        source: DocSource::Utoipa,
        version: None,
        operations: ops.len(),
    };
    Some((doc, ops))
}

fn walk(items: &[syn::Item], rel: &str, key_headers: &[String], ops: &mut Vec<ApiOperation>) {
    for item in items {
        match item {
            syn::Item::Fn(f) => attrs(&f.attrs, rel, key_headers, ops),
            syn::Item::Impl(i) => {
                for it in &i.items {
                    if let syn::ImplItem::Fn(f) = it {
                        attrs(&f.attrs, rel, key_headers, ops);
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    walk(inner, rel, key_headers, ops);
                }
            }
            _ => {}
        }
    }
}

/// Splits a token stream at its top-level commas.
fn split(tokens: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut parts: Vec<Vec<TokenTree>> = vec![vec![]];
    for t in tokens {
        match &t {
            TokenTree::Punct(p) if p.as_char() == ',' => parts.push(vec![]),
            _ => parts.last_mut().expect("never empty").push(t),
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}

fn string(t: &TokenTree) -> Option<String> {
    match t {
        TokenTree::Literal(l) => match syn::parse_str::<syn::Lit>(&l.to_string()) {
            Ok(syn::Lit::Str(s)) => Some(s.value()),
            _ => None,
        },
        _ => None,
    }
}

/// `key = "value"` among `parts`.
fn pair(parts: &[Vec<TokenTree>], key: &str) -> Option<String> {
    parts.iter().find_map(|p| match p.as_slice() {
        [TokenTree::Ident(k), TokenTree::Punct(eq), v] if k == key && eq.as_char() == '=' => {
            string(v)
        }
        _ => None,
    })
}

/// `name(..)` among `parts`: its inner tokens.
fn group(parts: &[Vec<TokenTree>], name: &str) -> Option<TokenStream> {
    parts.iter().find_map(|p| match p.as_slice() {
        [TokenTree::Ident(k), TokenTree::Group(g)]
            if k == name && g.delimiter() == Delimiter::Parenthesis =>
        {
            Some(g.stream())
        }
        _ => None,
    })
}

fn attrs(attrs: &[syn::Attribute], rel: &str, key_headers: &[String], ops: &mut Vec<ApiOperation>) {
    for a in attrs {
        let segs: Vec<String> = a
            .path()
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        if segs != ["utoipa", "path"] {
            continue;
        }
        let syn::Meta::List(list) = &a.meta else {
            continue;
        };
        let line = a.pound_token.span.start().line as u32;
        let parts = split(list.tokens.clone());
        let mut methods: Vec<String> = parts
            .iter()
            .filter_map(|p| match p.as_slice() {
                [TokenTree::Ident(i)] => Some(i.to_string()),
                _ => None,
            })
            .collect();
        if let Some(m) = group(&parts, "method") {
            methods.extend(m.into_iter().filter_map(|t| match t {
                TokenTree::Ident(i) => Some(i.to_string()),
                _ => None,
            }));
        }
        let Some(path) = pair(&parts, "path") else {
            continue;
        };
        let key_header = group(&parts, "params").and_then(|params| {
            split(params).into_iter().find_map(|p| {
                let [TokenTree::Group(g)] = p.as_slice() else {
                    return None;
                };
                let inner = split(g.stream());
                let first = inner.first()?;
                let name = string(first.first()?)?;
                let in_header = inner
                    .iter()
                    .any(|q| matches!(q.as_slice(), [TokenTree::Ident(i)] if i == "Header"));
                if !in_header || !is_key_header(&name, key_headers) {
                    return None;
                }
                let description = pair(&inner, "description").unwrap_or_default();
                let optional = first
                    .iter()
                    .any(|t| matches!(t, TokenTree::Ident(i) if i == "Option"));
                Some(KeyHeaderDoc {
                    name,
                    required: !optional,
                    retention: retention(&description),
                    location: Location::new(rel, line),
                })
            })
        });
        let examples: Vec<serde_json::Value> = group(&parts, "request_body")
            .map(split)
            .into_iter()
            .flatten()
            .filter_map(|p| match p.as_slice() {
                // `example = json!({ .. })`: json!'s syntax is JSON's for literal examples
                [
                    TokenTree::Ident(k),
                    TokenTree::Punct(_),
                    TokenTree::Ident(m),
                    TokenTree::Punct(_),
                    TokenTree::Group(g),
                ] if k == "example" && m == "json" => {
                    serde_json::from_str(&g.stream().to_string()).ok()
                }
                _ => None,
            })
            .collect();
        for m in methods {
            let method = m.to_ascii_uppercase();
            if !crate::facts::is_mutation_method(&method) {
                continue;
            }
            ops.push(ApiOperation {
                method,
                path: Some(path.clone()),
                bare_path: None,
                source: DocSource::Utoipa,
                location: Location::new(rel, line),
                route: None,
                key_header: key_header.clone(),
                examples: examples.clone(),
                operation_id: None,
                controller: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_params_and_examples() {
        let text = r#"
#[utoipa::path(
    post,
    path = "/orders",
    params(("Idempotency-Key" = String, Header, description = "Kept for 24 hours")),
    request_body(content = NewOrder, example = json!({"sku": "A-1", "quantity": 2})),
    responses((status = 201, body = Order))
)]
async fn create() {}

#[utoipa::path(post, path = "/refunds", responses((status = 201)))]
async fn refund() {}
"#;
        let (_, ops) = read("src/api.rs", text, &["idempotency-key".into()]).unwrap();
        assert_eq!(ops.len(), 2);
        assert_eq!(ops[0].path.as_deref(), Some("/orders"));
        assert_eq!(ops[0].location.line, 2);
        let key = ops[0].key_header.as_ref().unwrap();
        assert_eq!(key.retention.as_ref().unwrap().seconds, 86_400);
        assert_eq!(ops[0].examples[0]["quantity"], 2);
        assert!(ops[1].key_header.is_none());
    }
}
