//! `.http` / `.rest` request files (VS Code REST Client, JetBrains HTTP Client): two requests with
//! one method, URL and key value form a test that sends the key twice.
//!
//! No maintained Rust crate parses this format, and the part needed here is small: requests
//! separated by `###`, a request line `METHOD URL [HTTP/x]`, header lines up to the first blank
//! line, `@name = value` file variables and `{{name}}` references (`{{$uuid}}`, `{{$guid}}`,
//! `{{$random.uuid}}` and the other `$` variables are made anew on every request). So this is a
//! line-based reader.

use super::{FileScan, Key, Repeat, Send, TestScope, UrlSpec};
use crate::catalog::Catalog;
use std::collections::HashMap;

const HOLE: char = '\0';
const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// The keyed requests of one file; the whole file is one test.
pub fn scan(rel: &str, text: &str, catalog: &Catalog) -> FileScan {
    let mut vars: HashMap<String, String> = HashMap::new();
    let mut sends = Vec::new();
    // (method, url, line) of the request being read, and whether its headers are over.
    let mut request: Option<(String, String, u32)> = None;
    let mut in_headers = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with("###") {
            request = None;
            in_headers = false;
            continue;
        }
        if let Some(def) = line.strip_prefix('@')
            && let Some((name, value)) = def.split_once('=')
            && request.is_none()
        {
            vars.insert(name.trim().to_string(), value.trim().to_string());
            continue;
        }
        if line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        match &request {
            None => {
                if line.is_empty() {
                    continue;
                }
                let mut words = line.split_whitespace();
                let first = words.next().unwrap_or("");
                let (method, url) = if METHODS.contains(&first.to_ascii_uppercase().as_str()) {
                    (
                        first.to_ascii_uppercase(),
                        words.next().unwrap_or("").to_string(),
                    )
                } else {
                    ("GET".to_string(), first.to_string())
                };
                request = Some((method, url, i as u32 + 1));
                in_headers = true;
            }
            Some((method, url, at)) if in_headers => {
                if line.is_empty() {
                    in_headers = false;
                    continue;
                }
                if line.starts_with('?') || line.starts_with('&') {
                    continue;
                }
                let Some((name, value)) = line.split_once(':') else {
                    continue;
                };
                if !catalog.is_key_header(&substitute(name.trim(), &vars, false, &mut 256)) {
                    continue;
                }
                let value = substitute(value.trim(), &vars, false, &mut 256);
                let key = if value.contains("{{$") {
                    Key::Fresh
                } else {
                    Key::Const(value)
                };
                let url = substitute(url, &vars, true, &mut 256);
                sends.push(Send {
                    method: method.clone(),
                    url: UrlSpec::Known(super::parse_url(&url, HOLE)),
                    key,
                    line: *at,
                    repeat: Repeat::Once,
                    together: None,
                });
            }
            Some(_) => {}
        }
    }
    FileScan {
        file: rel.to_string(),
        tests: vec![TestScope {
            sends,
            calls: Vec::new(),
        }],
        helpers: Vec::new(),
    }
}

/// Replaces `{{name}}` with the file variable's value. Unknown names stay as written, or become
/// a hole in a URL; `$` variables always stay (they are made per request). At most `budget`
/// variables are replaced, so a cycle (`@a = {{a}}`) ends.
fn substitute(text: &str, vars: &HashMap<String, String>, url: bool, budget: &mut usize) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let name = rest[start + 2..start + len].trim();
        match vars.get(name) {
            Some(v) if *budget > 0 => {
                *budget -= 1;
                out.push_str(&substitute(v, vars, url, budget));
            }
            _ if url => out.push(HOLE),
            _ => out.push_str(&rest[start..start + len + 2]),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_requests_with_one_key_repeat_and_dynamic_keys_do_not() {
        let catalog = Catalog::builtin().unwrap();
        let text = "@host = http://localhost:3000\n@key = 4f1c\n\n### first\nPOST {{host}}/api/orders HTTP/1.1\nContent-Type: application/json\nIdempotency-Key: {{key}}\n\n{\"sku\": \"a\"}\n\n### replay\nPOST {{host}}/api/orders HTTP/1.1\nIdempotency-Key: {{key}}\n\n{\"sku\": \"a\"}\n\n###\nPOST {{baseUrl}}/api/refunds\nIdempotency-Key: {{$guid}}\n\n###\nPOST {{baseUrl}}/api/refunds\nIdempotency-Key: {{$guid}}\n";
        let got = super::super::resolve(&[scan("api.http", text, &catalog)]);
        assert_eq!(got.len(), 2);
        let orders = got
            .iter()
            .find(|t| t.path.as_deref() == Some("/api/orders"))
            .unwrap();
        assert!(orders.same_key_twice && !orders.base);
        assert_eq!(orders.location.line, 5);
        let refunds = got
            .iter()
            .find(|t| t.path.as_deref() == Some("/api/refunds"))
            .unwrap();
        assert!(!refunds.repeats() && refunds.base);
    }
}
