//! Judges a key mechanism from what the front ends saw in its code ([`KeyObs`]): where the keys
//! live, how a key is claimed, what is stored with it, what a retry gets back, when keys expire,
//! and what happens to a missing key, a mismatch, a duplicate in progress and a failure.
//!
//! Language-neutral: the TypeScript and Rust front ends produce the same observations. A property
//! that the observations do not show is left [`Prop::Unknown`], and no rule fires on it.

use crate::facts::key::{
    Answer, Cond, Ctx, KeyCheck, MissingKey, Obs, OpKind, Prop, StoreBackend, StoreOp, words,
};
use crate::facts::{Endpoint, KeyObs, KeyStore, Location, UniqueConstraint, model_key};

/// Judges every endpoint's key observations, once the unique constraints are known.
pub fn apply(endpoints: &mut [Endpoint], constraints: &[UniqueConstraint]) {
    for ep in endpoints.iter_mut() {
        if ep.key_obs.is_empty() {
            continue;
        }
        let first_read = ep.key_reads.first().cloned();
        if let Some(judged) = judge(&ep.key_obs, first_read.as_ref(), constraints) {
            // A store seen in code wins; what the key-reading code alone shows does not
            // replace a store already known (a catalogued library, a memory container).
            match &mut ep.key_store {
                Some(known) if !judged.visible() => {
                    if known.missing_key == MissingKey::Unknown {
                        known.missing_key = judged.missing_key;
                    }
                }
                _ => ep.key_store = Some(judged),
            }
        }
    }
}

/// The store of a known library, from what its catalogue entry says (`rules/middleware.toml`).
/// Every property points at the line where the library is applied; a property the entry leaves
/// out stays unknown.
pub fn from_catalogue(known: &crate::catalog::Middleware, at: &Location) -> KeyStore {
    let name = if known.label.is_empty() {
        known.id.clone()
    } else {
        known.label.clone()
    };
    let prop = |flag: Option<bool>, yes: &str, no: &str| match flag {
        Some(true) => Prop::yes(at.clone(), format!("{name}: {yes}")),
        Some(false) => Prop::no(at.clone(), format!("{name}: {no}")),
        None => Prop::Unknown,
    };
    let compares = known.compares_request.or(known.hashes_request);
    KeyStore {
        kind: StoreBackend::Library.as_str().into(),
        detail: format!("{name} (`{}`)", known.id),
        location: at.clone(),
        from_catalogue: true,
        atomic_claim: prop(
            known.atomic_claim,
            "claims the key with one atomic write",
            "reads the key and then writes it, so two concurrent requests can both pass",
        ),
        scoped: prop(
            known.scoped_to_principal,
            "scopes keys to the caller",
            "looks keys up by the header value alone, not by caller",
        ),
        hash_stored: prop(
            compares,
            "keeps the request to compare with a retry",
            "stores no fingerprint of the request",
        ),
        hash_compared: prop(
            compares,
            "compares a retry's request with the stored one",
            "does not compare a retry's request with the first one",
        ),
        response_stored: prop(
            known.stores_response,
            "stores the response",
            "does not store the response",
        ),
        response_replayed: prop(
            known.stores_response,
            "replays the stored response",
            "does not replay the response",
        ),
        expiry: prop(
            known.expiry,
            "expires keys",
            "never expires keys by default",
        ),
        missing_key: match known.requires_key {
            Some(true) => MissingKey::Rejected {
                code: 400,
                at: at.clone(),
            },
            Some(false) => MissingKey::Proceeds { at: at.clone() },
            None => MissingKey::Unknown,
        },
        mismatch: known.mismatch_status.map(|code| Answer {
            code,
            at: at.clone(),
        }),
        in_progress: known.in_progress_status.map(|code| Answer {
            code,
            at: at.clone(),
        }),
        bounded: match known.key_max_length {
            Some(n) => Prop::yes(
                at.clone(),
                format!("{name}: keys longer than {n} are refused"),
            ),
            None => Prop::Unknown,
        },
        failure_released: prop(
            known.stores_failures.map(|s| !s),
            "does not keep a failure as the final answer",
            "stores a failed (5xx) response as the key's final answer",
        ),
        ..KeyStore::default()
    }
}

fn is_write(k: OpKind) -> bool {
    matches!(k, OpKind::Claim | OpKind::Insert | OpKind::Write)
}

/// The unique constraint that stops a second insert of a key into `target`, if one is declared;
/// `Err(())` when the target's schema is visible but has none.
fn unique_on(target: &str, constraints: &[UniqueConstraint]) -> Result<Option<String>, ()> {
    let key = model_key(target);
    let on_target: Vec<&UniqueConstraint> = constraints
        .iter()
        .filter(|c| model_key(&c.model) == key || c.aliases.iter().any(|a| model_key(a) == key))
        .collect();
    if on_target.is_empty() {
        return Ok(None);
    }
    match on_target.iter().find(|c| !c.generated && !c.partial) {
        Some(c) => Ok(Some(c.describe())),
        None => Err(()),
    }
}

fn schema_of(target: &str, constraints: &[UniqueConstraint]) -> Option<Location> {
    let key = model_key(target);
    constraints
        .iter()
        .find(|c| model_key(&c.model) == key || c.aliases.iter().any(|a| model_key(a) == key))
        .map(|c| c.location.clone())
}

struct View<'a> {
    obs: &'a [KeyObs],
    /// The line (in the entry function) where the handler runs, when the mechanism wraps it.
    handler_at: Option<u32>,
}

impl<'a> View<'a> {
    fn ops(&self) -> impl Iterator<Item = (&'a KeyObs, &'a StoreOp)> + '_ {
        self.obs.iter().filter_map(|o| match &o.obs {
            Obs::Op(op) => Some((o, op)),
            _ => None,
        })
    }
    /// Runs before the handler.
    fn before(&self, o: &KeyObs) -> bool {
        o.ctx == Ctx::Main && self.handler_at.is_none_or(|h| o.order <= h)
    }
    /// Runs once the handler has answered.
    fn after(&self, o: &KeyObs) -> bool {
        o.ctx == Ctx::AfterHandler
            || (o.ctx == Ctx::Main && self.handler_at.is_some_and(|h| o.order > h))
    }
    fn has(&self, f: impl Fn(&Obs) -> bool) -> Option<&'a KeyObs> {
        self.obs.iter().find(|o| f(&o.obs))
    }
    fn status(&self, cond: Cond) -> Option<(u16, &'a KeyObs)> {
        self.obs.iter().find_map(|o| match o.obs {
            Obs::Status {
                code,
                cond: Some(c),
            } if c == cond => Some((code, o)),
            _ => None,
        })
    }
}

/// The judged store, or `None` when no operation on a key store was seen.
pub fn judge(
    obs: &[KeyObs],
    key_read: Option<&Location>,
    constraints: &[UniqueConstraint],
) -> Option<KeyStore> {
    // The last place the handler runs: an early `return next()` (a safe method, a replay) is not
    // where the protected request proceeds.
    let handler_at = obs
        .iter()
        .filter(|o| o.obs == Obs::RunsHandler && o.ctx == Ctx::Main)
        .map(|o| o.order)
        .max();
    let mut obs = obs.to_vec();
    merge_chained(&mut obs);
    let obs = obs.as_slice();
    let v = View { obs, handler_at };
    let mut ops: Vec<(&KeyObs, &StoreOp)> = v.ops().filter(|(o, _)| o.order != u32::MAX).collect();
    if ops.is_empty() {
        // No store in view: only what the key-reading code itself shows.
        let store = KeyStore {
            kind: "unknown".into(),
            detail: "no key store in the scanned code".into(),
            location: key_read.cloned().unwrap_or_default(),
            missing_key: missing_key(&v),
            ..KeyStore::default()
        };
        return (store.missing_key != MissingKey::Unknown).then_some(store);
    }
    ops.sort_by_key(|(o, _)| (o.order, o.at.line));
    let writes_before: Vec<&(&KeyObs, &StoreOp)> = ops
        .iter()
        .filter(|(o, op)| is_write(op.kind) && v.before(o))
        .collect();
    let writes_after: Vec<&(&KeyObs, &StoreOp)> = ops
        .iter()
        .filter(|(o, op)| is_write(op.kind) && v.after(o))
        .collect();
    let primary = writes_before
        .first()
        .or(writes_after.first())
        .copied()
        .unwrap_or(&ops[0]);
    let (p_obs, p_op) = *primary;
    let target = p_op.target.clone();
    let mut store = KeyStore {
        kind: p_op.backend.as_str().into(),
        detail: format!("`{target}` ({})", describe_backend(p_op.backend)),
        location: p_obs.at.clone(),
        target: Some(target.clone()),
        schema: matches!(p_op.backend, StoreBackend::Sql | StoreBackend::Orm)
            .then(|| schema_of(&target, constraints))
            .flatten(),
        ..KeyStore::default()
    };
    let reads: Vec<&(&KeyObs, &StoreOp)> = ops
        .iter()
        .filter(|(_, op)| op.kind == OpKind::Read)
        .collect();

    // How the key is claimed.
    store.atomic_claim = match writes_before.first() {
        Some((o, op)) => match op.kind {
            OpKind::Claim => Prop::yes(
                o.at.clone(),
                format!(
                    "the key is claimed with one insert-if-absent on `{}`",
                    op.target
                ),
            ),
            OpKind::Insert => match unique_on(&op.target, constraints) {
                Ok(Some(c)) => Prop::yes(
                    o.at.clone(),
                    format!(
                        "the key is inserted into `{}`, whose unique constraint {c} stops a second claim",
                        op.target
                    ),
                ),
                Err(()) => Prop::no(
                    o.at.clone(),
                    format!(
                        "the key is inserted into `{}`, which has no unique constraint on it: two concurrent requests both insert",
                        op.target
                    ),
                ),
                Ok(None) => Prop::Unknown,
            },
            // A container in the process checked and then written before the handler: the
            // window is two lock acquisitions, which a client retry or a double click does not
            // hit. The store's real flaw is that it is not shared (RS014 says so); whatever
            // replaces it must claim atomically. Not judged here.
            _ if op.backend == StoreBackend::Memory => Prop::Unknown,
            _ => {
                let read = reads.iter().find(|(r, _)| r.order <= o.order);
                let detail = match read {
                    Some((r, _)) => format!(
                        "the key is read ({}) and then written ({}) in two steps: two concurrent requests both pass the read",
                        r.at, o.at
                    ),
                    None => format!(
                        "the key is written with an overwrite ({}), which a concurrent duplicate also wins",
                        o.at
                    ),
                };
                Prop::no(o.at.clone(), detail)
            }
        },
        None => match writes_after.first() {
            Some((o, _)) => {
                let at = reads
                    .first()
                    .map(|(r, _)| r.at.clone())
                    .unwrap_or(o.at.clone());
                Prop::no(
                    at,
                    format!(
                        "the key is recorded only after the handler ran ({}): concurrent duplicates all run it",
                        o.at
                    ),
                )
            }
            None => Prop::Unknown,
        },
    };
    // Ordering: a claim that runs after the handler was already judged above.
    let claim_at = writes_before.first().map(|(o, _)| o.at.clone());

    // Scope.
    store.scoped = match v.has(|o| matches!(o, Obs::Scoped(_))) {
        Some(o) => {
            let Obs::Scoped(who) = &o.obs else {
                unreachable!()
            };
            Prop::yes(
                o.at.clone(),
                format!("the key is combined with the caller (`{who}`)"),
            )
        }
        None => match ops
            .iter()
            .filter(|(_, op)| op.kind != OpKind::Delete)
            .find_map(|(o, op)| {
                op.fields
                    .iter()
                    .find_map(|f| words::principal(f).map(|_| (o, f.clone())))
            }) {
            Some((o, f)) => Prop::yes(
                o.at.clone(),
                format!("`{}` is keyed by the caller too (`{f}`)", target),
            ),
            None => Prop::no(
                p_obs.at.clone(),
                format!("`{target}` is keyed by the key alone, with no user or tenant"),
            ),
        },
    };

    // Request fingerprint.
    let writes: Vec<&(&KeyObs, &StoreOp)> =
        ops.iter().filter(|(_, op)| is_write(op.kind)).collect();
    let write_at = writes
        .first()
        .map(|(o, _)| o.at.clone())
        .unwrap_or(p_obs.at.clone());
    let field_in = |f: &dyn Fn(&str) -> bool| {
        writes.iter().find_map(|(o, op)| {
            op.fields
                .iter()
                .find(|x| f(x))
                .map(|x| (o.at.clone(), x.clone()))
        })
    };
    store.hash_stored = match field_in(&words::hash) {
        Some((at, f)) => Prop::yes(at, format!("the request fingerprint is stored (`{f}`)")),
        None => Prop::no(
            write_at.clone(),
            format!("`{target}` stores no fingerprint of the request"),
        ),
    };
    store.hash_compared = match v.has(|o| *o == Obs::HashCompared) {
        Some(o) => Prop::yes(
            o.at.clone(),
            "the stored fingerprint is compared with the retry's",
        ),
        None => match store.hash_stored.present() {
            Some((at, _)) => Prop::no(
                at.clone(),
                "the fingerprint is stored but never compared with the retry's",
            ),
            None => Prop::no(write_at.clone(), "no fingerprint is compared on a retry"),
        },
    };

    // Response storage and replay.
    store.response_stored = match field_in(&words::response) {
        Some((at, f)) => Prop::yes(at, format!("the response is stored (`{f}`)")),
        // Where the request is marked finished is where the response belongs.
        None => Prop::no(
            writes_after
                .first()
                .map(|(o, _)| o.at.clone())
                .unwrap_or(write_at.clone()),
            format!("`{target}` keeps the key without the response status and body"),
        ),
    };
    let duplicate_at = v
        .status(Cond::Duplicate)
        .map(|(_, o)| o.at.clone())
        .or_else(|| reads.first().map(|(o, _)| o.at.clone()))
        .unwrap_or(write_at.clone());
    store.response_replayed = match v.has(|o| *o == Obs::Replay) {
        Some(o) => Prop::yes(o.at.clone(), "a retry gets the stored response back"),
        None => Prop::no(
            duplicate_at.clone(),
            "a retry is not answered with the stored response",
        ),
    };

    // Expiry.
    store.expiry = expiry(&v, &ops, &writes, &target, &write_at);

    store.missing_key = missing_key(&v);

    // Statuses for a mismatch and for a duplicate in progress.
    store.mismatch = v.status(Cond::HashMismatch).map(|(code, o)| Answer {
        code,
        at: o.at.clone(),
    });
    store.in_progress = v
        .status(Cond::InProgress)
        .or_else(|| {
            // Without a replay, the duplicate answer is also what a duplicate in progress gets.
            (!store.response_replayed.is_yes())
                .then(|| v.status(Cond::Duplicate))
                .flatten()
                .filter(|(c, _)| *c >= 400)
        })
        .map(|(code, o)| Answer {
            code,
            at: o.at.clone(),
        });
    store.claims_in_progress = match (&claim_at, v.has(|o| *o == Obs::InProgress)) {
        (_, Some(o)) => Prop::yes(
            o.at.clone(),
            "the key is marked in progress before the handler runs",
        ),
        (Some(at), None) => Prop::yes(at.clone(), "the key is claimed before the handler runs"),
        (None, None) => Prop::no(write_at.clone(), "nothing marks the key in progress"),
    };

    // Bounds on the key.
    store.bounded = match v.has(|o| {
        matches!(
            o,
            Obs::KeyCheck(KeyCheck::Length) | Obs::KeyCheck(KeyCheck::Charset)
        )
    }) {
        Some(o) => Prop::yes(o.at.clone(), "the key's length or format is checked"),
        None => match key_read {
            Some(at) => Prop::no(
                at.clone(),
                "the key is used as sent, with no length or format check",
            ),
            None => Prop::Unknown,
        },
    };

    store.logs_response = match v.has(|o| *o == Obs::LogsResponse) {
        Some(o) => Prop::yes(o.at.clone(), "the stored response is written to the log"),
        None => Prop::Unknown,
    };

    // Failures: not stored as final, and a claim released.
    let released = |ctxs: &[Ctx]| {
        ops.iter()
            .find(|(o, op)| op.kind == OpKind::Delete && !op.time_filter && ctxs.contains(&o.ctx))
            .map(|(o, _)| o.at.clone())
    };
    let on_failure = released(&[Ctx::Failure, Ctx::Finally]);
    let guard = v.has(|o| *o == Obs::StatusGuard).map(|o| o.at.clone());
    let stores_response = store.response_stored.is_yes() || !writes_after.is_empty();
    store.failure_released = match (guard, on_failure) {
        (Some(at), _) => Prop::yes(at, "the response status is checked before it is stored"),
        (None, Some(at)) => Prop::yes(at, "the claim is released when the handler fails"),
        (None, None) if stores_response => {
            let at = writes_after
                .first()
                .map(|(o, _)| o.at.clone())
                .or_else(|| store.response_stored.present().map(|(a, _)| a.clone()))
                .unwrap_or(write_at.clone());
            Prop::no(
                at,
                "the response is stored whatever its status: a 5xx becomes the key's final answer",
            )
        }
        (None, None) => match &claim_at {
            Some(at) => Prop::no(
                at.clone(),
                "the claim is never released when the handler fails: a retry after a 5xx is refused",
            ),
            None => Prop::Unknown,
        },
    };
    // What bounds the claim itself: a TTL on the claiming write, a cleanup or an expiry-aware
    // lookup (they cover in-progress rows too). A TTL set only on the final write does not.
    let claim_ttl = writes_before
        .first()
        .filter(|(_, op)| op.ttl)
        .map(|(o, _)| o.at.clone());
    let expires_all = store
        .expiry
        .present()
        .filter(|(_, d)| !d.contains("written with a TTL"))
        .map(|(a, _)| a.clone());
    store.claim_bounded_in_time = match &claim_at {
        None => Prop::Unknown,
        Some(at) => {
            if let Some(exp) = claim_ttl.or(expires_all) {
                Prop::yes(exp, "an abandoned claim expires")
            } else if let Some(r) = released(&[Ctx::Finally, Ctx::Cancel]) {
                Prop::yes(
                    r,
                    "the claim is released when the request ends, aborted or not",
                )
            } else {
                Prop::no(
                    at.clone(),
                    "the in-progress claim has no timeout and no release: a request that dies mid-way blocks the key forever",
                )
            }
        }
    };
    Some(store)
}

/// A table, model, key prefix or container named for idempotency keys (`idempotency_keys`,
/// `IdempotencyKey`, `idem:`, `dedup`).
pub fn is_key_target(name: &str) -> bool {
    words::split(name)
        .iter()
        .any(|w| w.starts_with("idem") || w == "dedup" || w == "deduplication")
}

const SQL_KEYWORDS: &[&str] = &[
    "select",
    "from",
    "where",
    "and",
    "or",
    "not",
    "insert",
    "into",
    "values",
    "update",
    "set",
    "delete",
    "on",
    "conflict",
    "do",
    "nothing",
    "returning",
    "null",
    "is",
    "now",
    "interval",
    "limit",
    "for",
    "as",
    "in",
    "exists",
    "ignore",
    "duplicate",
    "key",
    "default",
    "with",
    "current_timestamp",
    "true",
    "false",
    "coalesce",
    "excluded",
    "order",
    "by",
    "desc",
    "asc",
];

/// An SQL statement on the key table as a store operation: `SELECT` a read, `INSERT … ON
/// CONFLICT DO NOTHING` / `INSERT IGNORE` a claim, a plain `INSERT` an insert (atomic only under a
/// unique constraint), `UPDATE` or an upserting insert a write, `DELETE` a delete. Columns are
/// kept whole (`request_hash`, `user_id`); `key` is kept even though SQL reserves it.
pub fn sql_op(sql: &str, time_filter: bool) -> Option<StoreOp> {
    let table = crate::link::calls::sql_table(sql)?;
    if !is_key_target(&table) {
        return None;
    }
    let upper: String = sql
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    let first = upper
        .split(|c: char| !c.is_ascii_alphabetic())
        .find(|w| matches!(*w, "SELECT" | "INSERT" | "UPDATE" | "DELETE" | "REPLACE"))?;
    let kind = match first {
        "SELECT" => OpKind::Read,
        "INSERT" | "REPLACE" => {
            if upper.contains("DO NOTHING")
                || upper.contains("INSERT IGNORE")
                || upper.contains("INSERT OR IGNORE")
            {
                OpKind::Claim
            } else if upper.contains("ON CONFLICT")
                || upper.contains("ON DUPLICATE KEY")
                || first == "REPLACE"
            {
                OpKind::Write
            } else {
                OpKind::Insert
            }
        }
        "UPDATE" => OpKind::Write,
        _ => OpKind::Delete,
    };
    let mut fields: Vec<String> = sql
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
        .map(|w| w.to_ascii_lowercase())
        .filter(|w| w == "key" || !SQL_KEYWORDS.contains(&w.as_str()))
        .filter(|w| *w != table)
        .collect();
    fields.sort();
    fields.dedup();
    let lower = sql.to_ascii_lowercase();
    let compares_age =
        (lower.contains('<') || lower.contains('>')) && fields.iter().any(|f| words::age(f));
    Some(StoreOp {
        backend: StoreBackend::Sql,
        kind,
        target: table,
        fields,
        ttl: false,
        time_filter: time_filter || compares_age,
    })
}

/// One chained statement is one operation: `insert(t).values(v).onConflictDoNothing()` is a
/// claim, `where(k).del()` a delete, whatever each link looked like alone. Links share a place.
fn merge_chained(obs: &mut Vec<KeyObs>) {
    let rank = |k: OpKind| match k {
        OpKind::Claim => 5,
        OpKind::Insert => 4,
        OpKind::Write => 3,
        OpKind::Delete => 2,
        OpKind::Expire => 1,
        OpKind::Read => 0,
    };
    let mut merged: Vec<KeyObs> = Vec::with_capacity(obs.len());
    for o in obs.drain(..) {
        let Obs::Op(op) = &o.obs else {
            merged.push(o);
            continue;
        };
        let same = merged.iter_mut().find(|m| {
            m.at == o.at
                && m.ctx == o.ctx
                && matches!(&m.obs, Obs::Op(x) if x.backend == op.backend)
        });
        let Some(m) = same else {
            merged.push(o);
            continue;
        };
        let Obs::Op(into) = &mut m.obs else { continue };
        if rank(op.kind) > rank(into.kind) {
            into.kind = op.kind;
        }
        if !is_key_target(&into.target) && is_key_target(&op.target) {
            into.target = op.target.clone();
        }
        into.fields.extend(op.fields.iter().cloned());
        into.fields.sort();
        into.fields.dedup();
        into.ttl |= op.ttl;
        into.time_filter |= op.time_filter;
    }
    *obs = merged;
}

/// What a request without a key gets: a generated key, a 4xx, or the handler unprotected.
fn missing_key(v: &View) -> MissingKey {
    if let Some(o) = v.has(|o| *o == Obs::KeyGenerated) {
        MissingKey::Generated { at: o.at.clone() }
    } else if let Some((code, o)) = v
        .status(Cond::KeyMissing)
        .filter(|(c, _)| (400..500).contains(c))
    {
        MissingKey::Rejected {
            code,
            at: o.at.clone(),
        }
    } else if let Some(o) = v.has(|o| *o == Obs::KeyMissingProceeds) {
        MissingKey::Proceeds { at: o.at.clone() }
    } else {
        MissingKey::Unknown
    }
}

fn describe_backend(b: StoreBackend) -> &'static str {
    match b {
        StoreBackend::Sql => "an SQL table",
        StoreBackend::Orm => "an ORM model",
        StoreBackend::Redis => "Redis",
        StoreBackend::Memory => "process memory",
        StoreBackend::Library => "a library's store",
        StoreBackend::Dynamodb => "a DynamoDB table",
    }
}

fn expiry(
    v: &View,
    ops: &[(&KeyObs, &StoreOp)],
    writes: &[&(&KeyObs, &StoreOp)],
    target: &str,
    write_at: &Location,
) -> Prop {
    if let Some((o, _)) = writes.iter().find(|(_, op)| op.ttl) {
        return Prop::yes(o.at.clone(), "the key is written with a TTL");
    }
    if let Some((o, _)) = ops.iter().find(|(_, op)| op.kind == OpKind::Expire) {
        return Prop::yes(o.at.clone(), "a TTL is set on the key");
    }
    let same = |t: &str| model_key(t) == model_key(target);
    let files: Vec<&str> = ops.iter().map(|(o, _)| o.at.file.as_str()).collect();
    // A cleanup: anywhere in the project, a delete of old entries of this store (for a container
    // in memory, one in the same file).
    if let Some((o, _)) = v.ops().find(|(o, op)| {
        op.kind == OpKind::Delete
            && op.time_filter
            && (same(&op.target)
                || (op.backend == StoreBackend::Memory && files.contains(&o.at.file.as_str())))
    }) {
        return Prop::yes(o.at.clone(), "old entries are deleted by a cleanup");
    }
    if let Some((o, _)) = ops
        .iter()
        .find(|(_, op)| op.kind == OpKind::Read && op.time_filter)
    {
        return Prop::yes(o.at.clone(), "the lookup ignores expired keys");
    }
    let stored = writes
        .iter()
        .find_map(|(o, op)| op.fields.iter().find(|f| words::expiry(f)).map(|f| (o, f)));
    match stored {
        Some((o, f)) => Prop::no(
            o.at.clone(),
            format!("`{f}` is stored, but no lookup checks it and nothing deletes expired entries"),
        ),
        None => Prop::no(
            write_at.clone(),
            format!("`{target}` keeps keys forever: no TTL, no expiry column, no cleanup"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32) -> Location {
        Location::new("m.ts", line)
    }

    fn op(kind: OpKind, fields: &[&str], line: u32, ctx: Ctx) -> KeyObs {
        KeyObs {
            obs: Obs::Op(StoreOp {
                backend: StoreBackend::Sql,
                kind,
                target: "idempotency_keys".into(),
                fields: fields.iter().map(|s| s.to_string()).collect(),
                ttl: false,
                time_filter: false,
            }),
            at: at(line),
            ctx,
            order: line,
        }
    }

    fn seen(obs: Obs, line: u32) -> KeyObs {
        KeyObs {
            obs,
            at: at(line),
            ctx: Ctx::Main,
            order: line,
        }
    }

    #[test]
    fn a_textbook_store_is_right_on_every_property() {
        let obs = vec![
            seen(Obs::KeyCheck(KeyCheck::Length), 4),
            seen(
                Obs::Status {
                    code: 400,
                    cond: Some(Cond::KeyMissing),
                },
                3,
            ),
            op(
                OpKind::Claim,
                &["user_id", "key", "request_hash", "expires_at"],
                8,
                Ctx::Main,
            ),
            op(
                OpKind::Read,
                &["user_id", "key", "expires_at"],
                10,
                Ctx::Main,
            ),
            seen(Obs::HashCompared, 11),
            seen(
                Obs::Status {
                    code: 422,
                    cond: Some(Cond::HashMismatch),
                },
                12,
            ),
            seen(
                Obs::Status {
                    code: 409,
                    cond: Some(Cond::InProgress),
                },
                14,
            ),
            seen(Obs::Replay, 16),
            seen(Obs::RunsHandler, 30),
            op(
                OpKind::Write,
                &["response_status", "response_body"],
                24,
                Ctx::AfterHandler,
            ),
            op(OpKind::Delete, &["user_id", "key"], 22, Ctx::Failure),
            KeyObs {
                obs: Obs::Op(StoreOp {
                    backend: StoreBackend::Sql,
                    kind: OpKind::Delete,
                    target: "idempotency_keys".into(),
                    fields: vec!["expires_at".into()],
                    ttl: false,
                    time_filter: true,
                }),
                at: Location::new("jobs/cleanup.ts", 5),
                ctx: Ctx::Main,
                order: u32::MAX,
            },
        ];
        let s = judge(&obs, Some(&at(2)), &[]).unwrap();
        assert_eq!(s.kind, "sql");
        for p in [
            &s.atomic_claim,
            &s.scoped,
            &s.hash_stored,
            &s.hash_compared,
            &s.response_stored,
            &s.response_replayed,
            &s.expiry,
            &s.bounded,
            &s.failure_released,
            &s.claim_bounded_in_time,
        ] {
            assert!(p.is_yes(), "{p:?} in {s:#?}");
        }
        assert_eq!(s.expiry.present().unwrap().0.file, "jobs/cleanup.ts");
        assert!(matches!(
            s.missing_key,
            MissingKey::Rejected { code: 400, .. }
        ));
        assert_eq!(s.mismatch.as_ref().map(|a| a.code), Some(422));
        assert_eq!(s.in_progress.as_ref().map(|a| a.code), Some(409));
        assert_eq!(s.logs_response, Prop::Unknown);
    }

    #[test]
    fn read_then_write_is_not_atomic_and_a_late_record_is_not_a_claim() {
        let racy = vec![
            op(OpKind::Read, &["key"], 5, Ctx::Main),
            op(OpKind::Write, &["key"], 9, Ctx::Main),
            seen(Obs::RunsHandler, 12),
        ];
        let s = judge(&racy, None, &[]).unwrap();
        let (where_, why) = s.atomic_claim.missing().unwrap();
        assert_eq!(where_.line, 9);
        assert!(why.contains("two steps"), "{why}");
        assert!(s.scoped.missing().is_some());
        assert!(
            s.failure_released.missing().is_some(),
            "a claim never released"
        );
        assert!(s.claim_bounded_in_time.missing().is_some());

        let late = vec![
            op(OpKind::Read, &["key"], 5, Ctx::Main),
            seen(Obs::RunsHandler, 12),
            op(OpKind::Write, &["key", "body"], 9, Ctx::AfterHandler),
        ];
        let s = judge(&late, None, &[]).unwrap();
        let (where_, why) = s.atomic_claim.missing().unwrap();
        assert_eq!(where_.line, 5);
        assert!(why.contains("after the handler"), "{why}");
        assert!(
            s.failure_released.missing().is_some(),
            "any status is stored"
        );
        assert_eq!(s.claim_bounded_in_time, Prop::Unknown, "no claim to bound");
    }

    #[test]
    fn an_in_process_check_then_set_is_left_to_rs014() {
        let mut read = op(OpKind::Read, &["key"], 5, Ctx::Main);
        let mut write = op(OpKind::Write, &["key"], 9, Ctx::Main);
        for o in [&mut read, &mut write] {
            if let Obs::Op(op) = &mut o.obs {
                op.backend = StoreBackend::Memory;
            }
        }
        let s = judge(
            &[read.clone(), write, seen(Obs::RunsHandler, 12)],
            None,
            &[],
        )
        .unwrap();
        assert_eq!(s.kind, "memory");
        assert_eq!(s.atomic_claim, Prop::Unknown);
        // Recorded only after the handler: a window as long as the handler, judged.
        let mut late = op(OpKind::Write, &["key"], 20, Ctx::AfterHandler);
        if let Obs::Op(op) = &mut late.obs {
            op.backend = StoreBackend::Memory;
        }
        let s = judge(&[read, seen(Obs::RunsHandler, 12), late], None, &[]).unwrap();
        assert!(s.atomic_claim.missing().is_some());
    }

    #[test]
    fn an_insert_is_atomic_only_under_a_unique_constraint() {
        let obs = vec![op(OpKind::Insert, &["key"], 5, Ctx::Main)];
        assert_eq!(judge(&obs, None, &[]).unwrap().atomic_claim, Prop::Unknown);
        let unique = UniqueConstraint {
            defaulted: false,
            model: "IdempotencyKey".into(),
            aliases: vec!["idempotency_keys".into()],
            columns: vec!["key".into()],
            partial: false,
            generated: false,
            source: "prisma",
            location: Location::new("schema.prisma", 3),
        };
        assert!(
            judge(&obs, None, std::slice::from_ref(&unique))
                .unwrap()
                .atomic_claim
                .is_yes()
        );
        let only_id = UniqueConstraint {
            defaulted: false,
            generated: true,
            columns: vec!["id".into()],
            ..unique
        };
        assert!(
            judge(&obs, None, &[only_id])
                .unwrap()
                .atomic_claim
                .missing()
                .is_some()
        );
    }
}
