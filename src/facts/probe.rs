//! What a probe of a running server found, as a finding carries it (`check --probe-results`):
//! the draft standard's checks, their outcomes and the requests sent. The probe itself, and the
//! rest of its report, live in `probe`.

use serde::{Deserialize, Serialize};

/// One of the draft standard's checks (draft-ietf-httpapi-idempotency-key-header).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// Concurrent requests with one fresh key and the same body: exactly one is processed, the
    /// others get the same status and body, or 409 while the first is in flight.
    Concurrent,
    /// A sequential retry with the same key: the stored status and body, verbatim.
    Replay,
    /// The same key with a different body: 422.
    Mismatch,
    /// No key on an endpoint that requires one: 400.
    MissingKey,
    /// The same body twice on an endpoint a unique constraint protects: the existing record or
    /// 409, never a 500.
    DuplicateCreate,
}

impl CheckKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::Concurrent => "concurrent",
            CheckKind::Replay => "replay",
            CheckKind::Mismatch => "mismatch",
            CheckKind::MissingKey => "missing_key",
            CheckKind::DuplicateCreate => "duplicate_create",
        }
    }
    pub const ALL: [CheckKind; 5] = [
        CheckKind::Concurrent,
        CheckKind::Replay,
        CheckKind::Mismatch,
        CheckKind::MissingKey,
        CheckKind::DuplicateCreate,
    ];
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    Skipped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
        }
    }
}

/// One request sent and the answer it got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeResponse {
    /// Which request of the check: `first`, `second`, `concurrent 1 of 2`, …
    pub request: String,
    /// The idempotency key sent, if one was.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub key: Option<String>,
    /// The request body sent (as sent, JSON text).
    pub sent: String,
    /// The HTTP status; 0 when no answer came (`error` says why).
    pub status: u16,
    /// The response body (cut at 4 KiB).
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// The probe evidence a finding carries in the report (`check --probe-results`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeEvidence {
    pub base_url: String,
    pub check: CheckKind,
    pub outcome: Outcome,
    pub detail: String,
    pub responses: Vec<ProbeResponse>,
}
