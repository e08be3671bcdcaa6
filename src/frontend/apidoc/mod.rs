//! API documentation: the operations an OpenAPI 3.x / Swagger 2 document in the repository
//! describes (YAML or JSON, parsed with a YAML/JSON parser), and the ones documented in code
//! (`@nestjs/swagger` decorators, utoipa's `#[utoipa::path]`), each with whether it documents the
//! idempotency-key header, the key's retention window when its description states one, and the
//! request-body examples it gives.

pub mod nest;
pub mod openapi;
pub mod utoipa;

use crate::facts::Diagnostic;
pub use crate::facts::doc::{
    ApiDocFile, ApiDocs, ApiOperation, DocSource, KeyHeaderDoc, Retention, duration, shape,
};

/// Whether `name` is an idempotency-key header (case-insensitive).
pub fn is_key_header(name: &str, key_headers: &[String]) -> bool {
    key_headers.iter().any(|h| h.eq_ignore_ascii_case(name))
}

/// The retention window a description states: `24 hours`, `7 days`, `24h`, `one day`,
/// `86400 seconds`. The first one said next to a word about keeping or expiring wins; else the
/// first one.
pub fn retention(description: &str) -> Option<Retention> {
    let lower = description.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let number = |w: &str| -> Option<u64> {
        w.parse().ok().or(match w {
            "a" | "an" | "one" => Some(1),
            "two" => Some(2),
            "seven" => Some(7),
            "thirty" => Some(30),
            _ => None,
        })
    };
    let unit = |w: &str| -> Option<u64> {
        match w {
            "s" | "sec" | "secs" | "second" | "seconds" => Some(1),
            "m" | "min" | "mins" | "minute" | "minutes" => Some(60),
            "h" | "hr" | "hrs" | "hour" | "hours" => Some(3600),
            "d" | "day" | "days" => Some(86_400),
            "week" | "weeks" => Some(7 * 86_400),
            _ => None,
        }
    };
    let mut found = Vec::new();
    for (i, w) in words.iter().enumerate() {
        // `24h`, `7d` written as one word
        let split = w.find(|c: char| !c.is_ascii_digit()).filter(|&at| at > 0);
        let (n, u) = match split {
            Some(at) => (number(&w[..at]), unit(&w[at..])),
            None => (number(w), words.get(i + 1).and_then(|u| unit(u))),
        };
        if let (Some(n), Some(u)) = (n, u) {
            let text = match split {
                Some(_) => w.to_string(),
                None => format!("{w} {}", words[i + 1]),
            };
            let near = words[i.saturating_sub(6)..i].iter().any(|w| {
                matches!(
                    *w,
                    "for" | "retained" | "kept" | "stored" | "expire" | "expires" | "after"
                ) || w.starts_with("retain")
                    || w.starts_with("expir")
            });
            found.push((
                near,
                Retention {
                    seconds: n * u,
                    text,
                },
            ));
        }
    }
    found
        .iter()
        .find(|(near, _)| *near)
        .or(found.first())
        .map(|(_, r)| r.clone())
}

/// Reads every document among `specs` (YAML/JSON files that may be OpenAPI documents) and the
/// code-first documentation in the TypeScript and Rust sources.
pub fn collect(
    specs: &[crate::discover::RustFile],
    ts: &[crate::discover::SourceFile],
    rust: &[crate::discover::RustFile],
    key_headers: &[String],
) -> (ApiDocs, Vec<Diagnostic>) {
    use rayon::prelude::*;
    let mut docs = ApiDocs::default();
    let mut diagnostics = Vec::new();
    // Each file is read on its own (in parallel); what they document is added in their order.
    let read: Vec<_> = specs
        .par_iter()
        .map(|f| openapi::read(&f.rel, &f.text, key_headers))
        .collect();
    for r in read {
        match r {
            Ok(Some((file, ops))) => docs.add(file, ops),
            Ok(None) => {}
            Err(d) => diagnostics.push(d),
        }
    }
    // `SwaggerModule.createDocument(app, ..)` documents every controller route, decorated or not.
    let swagger_module = ts
        .par_iter()
        .any(|f| f.lang.is_ts() && f.text.contains("SwaggerModule"));
    let code: Vec<_> = ts
        .par_iter()
        .filter(|f| f.lang.is_ts())
        .filter_map(|f| nest::read(f, key_headers, swagger_module))
        .chain(
            rust.par_iter()
                .filter_map(|f| utoipa::read(&f.rel, &f.text, key_headers)),
        )
        .collect();
    for (file, ops) in code {
        docs.add(file, ops);
    }
    docs.files.sort();
    (docs, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_is_read_from_words() {
        let r = retention("Keys are retained for 24 hours, then a new request runs.").unwrap();
        assert_eq!(r.seconds, 86_400);
        assert_eq!(r.text, "24 hours");
        assert_eq!(retention("expires after 7d").unwrap().seconds, 7 * 86_400);
        assert_eq!(retention("kept for one day").unwrap().seconds, 86_400);
        assert!(retention("A unique key per request, at most 255 characters.").is_none());
        assert_eq!(duration(86_400), "24 h");
        assert_eq!(duration(3 * 86_400), "3 days");
    }

    #[test]
    fn shapes_drop_parameter_names() {
        assert_eq!(shape("/orders/{id}/pay/"), "/orders/{}/pay");
        assert_eq!(shape("orders"), "/orders");
    }
}
