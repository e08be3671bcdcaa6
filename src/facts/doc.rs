//! What the repository's API documentation (an OpenAPI/Swagger document, or code-first
//! documentation) says about an endpoint's idempotency key.

use super::Location;
use serde::Serialize;

/// Where an operation's documentation comes from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DocSource {
    /// An OpenAPI 3.x document.
    Openapi,
    /// A Swagger 2.0 document.
    Swagger,
    /// `@nestjs/swagger` decorators on a controller.
    NestjsSwagger,
    /// utoipa's `#[utoipa::path(..)]` on a handler.
    Utoipa,
}

impl DocSource {
    pub fn as_str(self) -> &'static str {
        match self {
            DocSource::Openapi => "OpenAPI",
            DocSource::Swagger => "Swagger 2",
            DocSource::NestjsSwagger => "@nestjs/swagger",
            DocSource::Utoipa => "utoipa",
        }
    }
}

/// How long the documentation says keys are kept.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct Retention {
    pub seconds: u64,
    /// The words that state it (`24 hours`).
    pub text: String,
}

/// The idempotency-key header as an operation documents it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct KeyHeaderDoc {
    /// As documented (`Idempotency-Key`).
    pub name: String,
    pub required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retention: Option<Retention>,
    #[serde(flatten)]
    pub location: Location,
}

/// A document (or a file of code-first documentation) and how many operations it holds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct ApiDocFile {
    pub file: String,
    pub source: DocSource,
    /// `3.0.3`, `2.0` for documents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub operations: usize,
}

/// The documented operation of an endpoint, and what it says about the key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct KeyDoc {
    pub source: DocSource,
    /// The documented operation.
    #[serde(flatten)]
    pub location: Location,
    /// The key header, when the operation documents it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<KeyHeaderDoc>,
}

/// A keyed endpoint that its service's API documentation leaves out, while it documents others.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct Unlisted {
    pub source: DocSource,
    /// The document's file; empty for code-first documentation (spread over the handlers).
    pub document: String,
    /// How many endpoints it documents.
    pub documented: usize,
}

/// One documented operation.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiOperation {
    /// Upper case: `POST`.
    pub method: String,
    /// The documented path with the document's base path (Swagger `basePath`, the path of the
    /// first OpenAPI server URL) applied, parameters as `{name}`; `None` for code-first
    /// documentation matched by place (`route`).
    pub path: Option<String>,
    /// The path without the base path, for documents whose servers are not the app's mount.
    pub bare_path: Option<String>,
    pub source: DocSource,
    pub location: Location,
    /// Code-first documentation: the route lines it sits on (file, first line, last line).
    pub route: Option<(String, u32, u32)>,
    pub key_header: Option<KeyHeaderDoc>,
    /// Request-body examples (`example`, `examples.*.value`), JSON.
    pub examples: Vec<serde_json::Value>,
    /// The operation's `operationId`, and the controller a spec-first router runs it from
    /// (`x-exegesis-controller`, `x-swagger-router-controller`, `x-eov-operation-handler`, on the
    /// operation, its path or the document).
    pub operation_id: Option<String>,
    pub controller: Option<String>,
}

/// Everything read from the repository's API documentation.
#[derive(Debug, Clone, Default)]
pub struct ApiDocs {
    pub files: Vec<ApiDocFile>,
    pub operations: Vec<ApiOperation>,
}

impl ApiDocs {
    pub fn is_empty(&self) -> bool {
        self.operations.is_empty()
    }

    pub fn add(&mut self, file: ApiDocFile, ops: Vec<ApiOperation>) {
        if !ops.is_empty() {
            self.files.push(file);
            self.operations.extend(ops);
        }
    }

    /// The operation that documents `method path` whose route is at `route`: code-first
    /// documentation on the route's lines, else a document's operation with the same path
    /// (parameter names aside), with or without the document's base path, or ending the
    /// endpoint's path at a segment boundary (an app mounted below the documented base).
    pub fn find(&self, method: &str, path: &str, route: &Location) -> Option<&ApiOperation> {
        let by_place = self.operations.iter().find(|o| {
            o.method == method
                && o.route.as_ref().is_some_and(|(f, first, last)| {
                    *f == route.file && (*first..=*last).contains(&route.line)
                })
        });
        if by_place.is_some() {
            return by_place;
        }
        let want = shape(path);
        let same = |p: &Option<String>| p.as_deref().is_some_and(|p| shape(p) == want);
        let ends = |p: &Option<String>| {
            p.as_deref().is_some_and(|p| {
                let p = shape(p);
                p.len() > 1 && want.ends_with(&p) && want[..want.len() - p.len()].ends_with('/')
                    || p.len() > 1 && want.ends_with(&p) && want.len() == p.len()
            })
        };
        let methods = || self.operations.iter().filter(|o| o.method == method);
        methods()
            .find(|o| same(&o.path))
            .or_else(|| methods().find(|o| same(&o.bare_path)))
            .or_else(|| methods().find(|o| ends(&o.path) || ends(&o.bare_path)))
    }
}

/// A path with its parameter names dropped and no trailing slash: `/orders/{id}/` → `/orders/{}`.
pub fn shape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut depth = 0;
    for c in path.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    out.push_str("{}");
                }
            }
            '}' => depth -= 1,
            _ if depth > 0 => {}
            _ => out.push(c),
        }
    }
    while out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    if !out.starts_with('/') {
        out.insert(0, '/');
    }
    out
}

/// `86400` → `24 h`, for messages.
pub fn duration(seconds: u64) -> String {
    match seconds {
        s if s >= 86_400 && s % 86_400 == 0 && s / 86_400 > 1 && s % (7 * 86_400) != 0 => {
            format!("{} days", s / 86_400)
        }
        s if s >= 3600 && s % 3600 == 0 => format!("{} h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}
