//! The key mechanism behind an `Idempotency-Key` header, in two layers:
//!
//! - [`KeyObs`]: what a front end saw in the code that handles the key (a store operation, a
//!   status answered under a condition, a check on the key, a hash compared), each with its place
//!   and the context it runs in (before the handler, after it, on failure, on cancellation);
//! - [`KeyStore`]: the mechanism judged from those observations (or from the catalogue, for a
//!   known library), one property at a time, each with the `Location` that proves it.
//!
//! Both are language-neutral: the TypeScript and Rust front ends produce the same observations,
//! and the rules read only the judged store.

use super::Location;
use serde::Serialize;

/// Where a key mechanism keeps its keys.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum StoreBackend {
    /// A table written with SQL (a raw query, sqlx, a query builder).
    Sql,
    /// An ORM model (Prisma, TypeORM, Sequelize, Mongoose, diesel, sea-orm).
    Orm,
    /// Redis or another shared key-value store.
    Redis,
    /// A `Map`, `Set`, LRU or `HashMap` in the process.
    Memory,
    /// A catalogued idempotency library whose store is not in the scanned code.
    Library,
    /// A DynamoDB table (the AWS SDKs' item operations).
    Dynamodb,
}

impl StoreBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            StoreBackend::Sql => "sql",
            StoreBackend::Orm => "orm",
            StoreBackend::Redis => "redis",
            StoreBackend::Memory => "memory",
            StoreBackend::Library => "library",
            StoreBackend::Dynamodb => "dynamodb",
        }
    }
}

/// A DynamoDB item operation as an operation on a key store, from its name in any SDK
/// (`PutCommand`, `put`, `putItem`, `put_item`, `PutItemCommand`). A put or an update whose
/// `ConditionExpression` requires `attribute_not_exists(..)` (`if_absent`) writes only when no
/// item has the key: an insert-if-absent in one step, as `SET NX` is.
pub fn dynamo_kind(op: &str, if_absent: bool) -> Option<OpKind> {
    let op = op.to_ascii_lowercase().replace('_', "");
    let op = op.strip_suffix("command").unwrap_or(&op);
    Some(match op.strip_suffix("item").unwrap_or(op) {
        "put" | "update" if if_absent => OpKind::Claim,
        "put" | "update" => OpKind::Write,
        "get" | "query" | "batchget" => OpKind::Read,
        "delete" => OpKind::Delete,
        _ => return None,
    })
}

/// What one store operation does to a key.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A lookup (`SELECT`, `findUnique`, `GET`, `has`, `contains`).
    Read,
    /// A plain insert of a new record: atomic only when a unique constraint covers the key.
    Insert,
    /// An insert-if-absent in one step (`ON CONFLICT DO NOTHING`, `SET NX`, `setnx`, a set
    /// insert whose result decides): two concurrent claims cannot both win.
    Claim,
    /// An overwrite or update (`UPDATE`, `SET` without `NX`, `Map.set`, an upsert).
    Write,
    /// A delete of one key, or of many (a cleanup).
    Delete,
    /// A TTL set on a key already written (`EXPIRE`).
    Expire,
}

/// One operation on the key store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StoreOp {
    pub backend: StoreBackend,
    pub kind: OpKind,
    /// The table, model, key prefix or container, as written.
    pub target: String,
    /// Columns, record fields and key-string parts the operation names, lower-cased.
    pub fields: Vec<String>,
    /// The write sets an expiry itself (`EX`/`PX`, a `ttl` option, an `expires_at` value).
    pub ttl: bool,
    /// Limited by age (`WHERE expires_at < now()`, `created < …`, `retain(|e| e.created > …)`):
    /// a cleanup when it deletes, an expiry check when it reads.
    pub time_filter: bool,
}

/// When an observed piece of key code runs, relative to the handler it protects.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Ctx {
    /// Before (or around) the handler: where a claim belongs.
    #[default]
    Main,
    /// Once the handler has answered: a finish hook, a response override, after `await next()`.
    AfterHandler,
    /// A failure path: a `catch`, an `Err` arm, a 5xx branch.
    Failure,
    /// A `finally`: every outcome, failures and aborts included.
    Finally,
    /// A close/abort handler: the client went away.
    Cancel,
}

/// The condition a status or an operation sits under.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Cond {
    /// The key is absent (`!key`, `is_none()`).
    KeyMissing,
    /// The key is present (`if (key)`, `if let Some(key)`): the other path runs without one.
    KeyPresent,
    /// The key failed a length/charset check.
    KeyInvalid,
    /// The stored request fingerprint differs from this request's.
    HashMismatch,
    /// The stored entry is still in progress (no response yet).
    InProgress,
    /// An entry for the key exists (or the claim lost).
    Duplicate,
    /// The response is a server error (`status >= 500`).
    ServerError,
}

impl Cond {
    /// Of `a && b`, the more specific condition: the one the branch is about.
    pub fn more_specific(a: Cond, b: Cond) -> Cond {
        let rank = |c: Cond| match c {
            Cond::HashMismatch => 7,
            Cond::InProgress => 6,
            Cond::KeyMissing => 5,
            Cond::KeyInvalid => 4,
            Cond::ServerError => 3,
            Cond::Duplicate => 2,
            Cond::KeyPresent => 1,
        };
        if rank(a) >= rank(b) { a } else { b }
    }
}

/// A check made on the key itself.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KeyCheck {
    Empty,
    Length,
    Charset,
}

/// One thing seen in key-handling code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Obs {
    Op(StoreOp),
    /// An HTTP status answered, under the condition it sits in.
    Status {
        code: u16,
        cond: Option<Cond>,
    },
    KeyCheck(KeyCheck),
    /// A missing key replaced by a generated one (`key ?? uuid()`).
    KeyGenerated,
    /// A missing key lets the request through (`if (!key) return next()`).
    KeyMissingProceeds,
    /// The key is combined with the caller (named here) before it is stored or looked up.
    Scoped(String),
    /// A hash of the request is computed.
    HashComputed,
    /// A stored request hash is compared with this request's.
    HashCompared,
    /// The key is marked in progress (`state: 'in_progress'`).
    InProgress,
    /// A stored status/body is sent back.
    Replay,
    /// The response status is checked before it is stored (`statusCode < 500`).
    StatusGuard,
    /// A stored or captured response body is logged.
    LogsResponse,
    /// The protected handler runs here (`next()`, `service.call(req)`, `next.handle()`).
    RunsHandler,
}

/// An observation with its place, its context, and its position in the mechanism's entry
/// function (`order`: the line there, or the line of the call that led to it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct KeyObs {
    pub obs: Obs,
    #[serde(flatten)]
    pub at: Location,
    pub ctx: Ctx,
    pub order: u32,
}

/// A judged property: seen right, seen wrong, or not visible. The location proves it: where the
/// property is implemented, or the line that shows it missing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Prop {
    Yes {
        #[serde(flatten)]
        at: Location,
        detail: String,
    },
    No {
        #[serde(flatten)]
        at: Location,
        detail: String,
    },
    #[default]
    Unknown,
}

impl Prop {
    pub fn yes(at: Location, detail: impl Into<String>) -> Prop {
        Prop::Yes {
            at,
            detail: detail.into(),
        }
    }
    pub fn no(at: Location, detail: impl Into<String>) -> Prop {
        Prop::No {
            at,
            detail: detail.into(),
        }
    }
    pub fn is_yes(&self) -> bool {
        matches!(self, Prop::Yes { .. })
    }
    /// Where and why the property is missing, when it was seen missing.
    pub fn missing(&self) -> Option<(&Location, &str)> {
        match self {
            Prop::No { at, detail } => Some((at, detail)),
            _ => None,
        }
    }
    pub fn present(&self) -> Option<(&Location, &str)> {
        match self {
            Prop::Yes { at, detail } => Some((at, detail)),
            _ => None,
        }
    }
}

/// What happens to a request that carries no key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum MissingKey {
    /// Answered with a 4xx (`code`).
    Rejected {
        code: u16,
        #[serde(flatten)]
        at: Location,
    },
    /// Let through without idempotency.
    Proceeds {
        #[serde(flatten)]
        at: Location,
    },
    /// Replaced by a key the server makes up.
    Generated {
        #[serde(flatten)]
        at: Location,
    },
    #[default]
    Unknown,
}

/// A status answered in one situation, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Answer {
    pub code: u16,
    #[serde(flatten)]
    pub at: Location,
}

/// The key store behind an endpoint's key mechanism, judged property by property.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct KeyStore {
    /// `memory`, `sql`, `orm`, `redis`, `dynamodb` or `library` (see [`StoreBackend`]); `unknown` when only
    /// the code reading the key was seen.
    pub kind: String,
    pub detail: String,
    #[serde(flatten)]
    pub location: Location,
    /// The properties come from the catalogue entry of a known library (`rules/middleware.toml`),
    /// not from code seen.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_catalogue: bool,
    /// The table, model or key prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Where the table or model is declared (schema, migration), when visible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Location>,
    /// The key is claimed in one atomic step before the handler runs.
    pub atomic_claim: Prop,
    /// The lookup and the claim include the caller (user, tenant, account).
    pub scoped: Prop,
    /// A request fingerprint is stored with the key.
    pub hash_stored: Prop,
    /// The stored fingerprint is compared with the retry's.
    pub hash_compared: Prop,
    /// The response status and body are stored.
    pub response_stored: Prop,
    /// A retry gets the stored response back.
    pub response_replayed: Prop,
    /// Keys expire (a TTL, an `expires_at` honoured, or a cleanup of old rows).
    pub expiry: Prop,
    pub missing_key: MissingKey,
    /// The answer to the same key with a different request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mismatch: Option<Answer>,
    /// The answer to a duplicate while the first request is still running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_progress: Option<Answer>,
    /// The key is held in progress before the handler runs (a claim, an in-progress state).
    pub claims_in_progress: Prop,
    /// The key's length or charset is checked.
    pub bounded: Prop,
    /// The stored response is logged (Yes is the flaw).
    pub logs_response: Prop,
    /// A failure (5xx, exception) is not kept as the key's final answer: the status is checked
    /// before storing, or the claim is released on failure.
    pub failure_released: Prop,
    /// An in-progress claim cannot outlive an aborted request: it expires, or a `finally`/close
    /// handler releases it.
    pub claim_bounded_in_time: Prop,
}

impl KeyStore {
    /// A store the audit only knows the kind of (the memory detection of RS014).
    pub fn of_kind(kind: &str, detail: String, location: Location) -> KeyStore {
        KeyStore {
            kind: kind.into(),
            detail,
            location,
            ..KeyStore::default()
        }
    }

    /// The store itself was seen (in code or in the catalogue), not only the key-reading code.
    pub fn visible(&self) -> bool {
        self.kind != "unknown"
    }

    /// Every property the mechanism gets right, for the Positive Findings section.
    pub fn positives(&self) -> Vec<Positive> {
        let mut out = Vec::new();
        let mut add = |property: &'static str, p: &Prop| {
            if let Some((at, detail)) = p.present() {
                out.push(Positive {
                    property,
                    detail: detail.to_string(),
                    location: at.clone(),
                });
            }
        };
        if self.visible() && self.kind != "memory" && !self.from_catalogue {
            let shared = Prop::yes(
                self.location.clone(),
                format!("keys are kept in a shared store ({})", self.detail),
            );
            add("shared_store", &shared);
        }
        add("atomic_claim", &self.atomic_claim);
        add("scoped_to_principal", &self.scoped);
        add("request_hash_stored", &self.hash_stored);
        add("request_hash_compared", &self.hash_compared);
        add("response_stored", &self.response_stored);
        add("response_replayed", &self.response_replayed);
        add("key_expiry", &self.expiry);
        add("key_bounded", &self.bounded);
        add("failure_released", &self.failure_released);
        add("claim_bounded_in_time", &self.claim_bounded_in_time);
        if let MissingKey::Rejected { code, at } = &self.missing_key {
            out.push(Positive {
                property: "missing_key_rejected",
                detail: format!("a request without a key is answered {code}"),
                location: at.clone(),
            });
        }
        if let Some(a) = self.mismatch.as_ref().filter(|a| a.code == 422) {
            out.push(Positive {
                property: "mismatch_422",
                detail: "the same key with a different request is answered 422".into(),
                location: a.at.clone(),
            });
        }
        if let Some(a) = self.in_progress.as_ref().filter(|a| a.code == 409) {
            out.push(Positive {
                property: "in_progress_409",
                detail: "a duplicate while the first request runs is answered 409".into(),
                location: a.at.clone(),
            });
        }
        out
    }
}

/// Something the key mechanism gets right, with the line that shows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct Positive {
    /// `atomic_claim`, `scoped_to_principal`, `request_hash_stored`, `key_expiry`, …
    pub property: &'static str,
    pub detail: String,
    #[serde(flatten)]
    pub location: Location,
}

/// The vocabulary key code is read with: identifiers, columns and key strings are split into
/// lower-case words (`requestHash`, `request_hash`, `idem:${userId}` → `request hash`, …) and
/// matched on whole words, so `forget` is not an `org` and `useragent` not a `user`.
pub mod words {
    /// Lower-case words of an identifier, a column list or a template: camelCase humps,
    /// snake_case and any punctuation split.
    pub fn split(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut prev_lower = false;
        for c in text.chars() {
            if c.is_ascii_alphanumeric() {
                if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
                cur.push(c.to_ascii_lowercase());
            } else {
                prev_lower = false;
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    fn any_word(text: &str, set: &[&str]) -> Option<String> {
        split(text).into_iter().find(|w| set.contains(&w.as_str()))
    }

    /// Names the caller: `userId`, `tenant_id`, `req.user.id`, `LocalUserId`, `orgId`. Not
    /// `client`: that is as often the Redis or HTTP client as the caller.
    pub fn principal(text: &str) -> Option<String> {
        const P: &[&str] = &[
            "user",
            "users",
            "userid",
            "tenant",
            "tenantid",
            "account",
            "accountid",
            "org",
            "orgid",
            "organization",
            "organisation",
            "workspace",
            "customer",
            "merchant",
            "owner",
            "principal",
            "team",
            "member",
            "company",
            "actor",
            "subject",
            "sub",
        ];
        any_word(text, P)
    }

    /// A request fingerprint: `requestHash`, `body_hash`, `fingerprint`, `digest`.
    pub fn hash(text: &str) -> bool {
        any_word(
            text,
            &[
                "hash",
                "fingerprint",
                "digest",
                "checksum",
                "sha256",
                "fingerprints",
            ],
        )
        .is_some()
    }

    /// The stored answer: `response`, `responseBody`, `status_code`, `result`; a body or status
    /// that is not the request's.
    pub fn response(text: &str) -> bool {
        let w = split(text);
        let has = |x: &str| w.iter().any(|y| y == x);
        if has("request") || has("req") {
            return has("response");
        }
        has("response")
            || has("responses")
            || has("result")
            || has("body")
            || (has("status") && has("code"))
            || has("statuscode")
    }

    /// An expiry: `expires_at`, `expiresAt`, `ttl`, `expiry`, `locked_until`.
    pub fn expiry(text: &str) -> bool {
        any_word(
            text,
            &[
                "expires",
                "expire",
                "expiry",
                "expiration",
                "expired",
                "ttl",
                "until",
                "expiresat",
            ],
        )
        .is_some()
    }

    /// A time column a cleanup filters on: an expiry or a creation time.
    pub fn age(text: &str) -> bool {
        expiry(text)
            || any_word(
                text,
                &[
                    "created",
                    "createdat",
                    "inserted",
                    "timestamp",
                    "updated",
                    "age",
                    "older",
                ],
            )
            .is_some()
    }

    /// A value that marks a key in progress: `'in_progress'`, `PROCESSING`, `State::InProgress`.
    pub fn in_progress(text: &str) -> bool {
        let w = split(text);
        let has = |x: &str| w.iter().any(|y| y == x);
        (has("in") && has("progress"))
            || has("inprogress")
            || has("processing")
            || has("pending")
            || has("started")
            || has("locked")
            || has("inflight")
            || (has("in") && has("flight"))
    }

    /// The name of a variable or parameter holding the inbound key.
    /// A helper named for building a storage key from the key (`buildStorageKey`,
    /// `make_idempotency_key`, `scopeKey`): what it returns is the key, not a lookup.
    pub fn builds_key(function: &str) -> bool {
        let w = split(function);
        w.first().is_some_and(|f| {
            matches!(
                f.as_str(),
                "build" | "make" | "compute" | "derive" | "format" | "compose" | "scope"
            )
        }) && w.iter().any(|x| x == "key")
    }

    pub fn key_name(name: &str) -> bool {
        let w = split(name);
        match w.as_slice() {
            [k] => matches!(k.as_str(), "key" | "ikey" | "idempotencykey" | "idemkey"),
            _ => w.last().is_some_and(|l| l == "key") && w.iter().any(|x| x.starts_with("idem")),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn words_are_split_and_matched_whole() {
            assert_eq!(split("requestHash"), vec!["request", "hash"]);
            assert_eq!(
                split("idem:${req.user.id}:${key}"),
                vec!["idem", "req", "user", "id", "key"]
            );
            assert_eq!(split("LocalUserId"), vec!["local", "user", "id"]);
            assert_eq!(principal("tenant_id").as_deref(), Some("tenant"));
            assert!(principal("forgetKey").is_none());
            assert!(principal("userAgent").is_some(), "user is a word of it");
            assert!(hash("request_hash") && hash("bodyFingerprint") && !hash("hashtag"));
            assert!(
                response("responseBody") && response("status_code") && !response("requestBody")
            );
            assert!(!response("status"), "a bare status is the state column");
            assert!(expiry("expires_at") && expiry("lockedUntil") && !expiry("expected"));
            assert!(
                in_progress("'in_progress'")
                    && in_progress("State::InProgress")
                    && !in_progress("completed")
            );
            assert!(key_name("idempotencyKey") && key_name("key") && key_name("idem_key"));
            assert!(!key_name("apiKey") && !key_name("keys"));
            assert!(builds_key("buildIdempotencyStorageKey") && builds_key("make_key"));
            assert!(!builds_key("getKey") && !builds_key("buildReport"));
        }
    }
}

/// The state values a literal holds: itself when it is one word (`'in_progress'`), else the
/// quoted values inside it (`… VALUES ($1, 'in_progress')`). A sentence is not a state.
pub fn state_literals(t: &str) -> impl Iterator<Item = &str> {
    let whole = (!t.trim().contains(char::is_whitespace) && t.len() <= 40).then_some(t);
    let quoted = t
        .contains(char::is_whitespace)
        .then(|| t.split('\'').skip(1).step_by(2))
        .into_iter()
        .flatten()
        .filter(|q| !q.contains(char::is_whitespace) && q.len() <= 40);
    whole.into_iter().chain(quoted)
}

/// The status a name stands for, in either language's spelling: `StatusCode::CONFLICT`,
/// `HttpResponse::UnprocessableEntity`, `ErrorConflict` (actix), `HttpStatus.CONFLICT`,
/// `StatusCodes.UNPROCESSABLE_ENTITY`, `ConflictException` (NestJS).
pub fn named_status(name: &str) -> Option<u16> {
    let n: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    let n = n.strip_prefix("error").unwrap_or(&n);
    let n = n.strip_suffix("exception").unwrap_or(n);
    let n = n.strip_suffix("error").unwrap_or(n);
    Some(match n {
        "badrequest" => 400,
        "unauthorized" => 401,
        "forbidden" => 403,
        "notfound" => 404,
        "conflict" => 409,
        "preconditionfailed" => 412,
        "payloadtoolarge" => 413,
        "unprocessableentity" | "unprocessablecontent" | "unprocessable" => 422,
        "preconditionrequired" => 428,
        "toomanyrequests" => 429,
        "internalservererror" | "internalserver" => 500,
        "serviceunavailable" => 503,
        _ => return None,
    })
}
