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
