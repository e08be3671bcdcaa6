//! The language-neutral model every front end produces and every rule reads.
//!
//! Nothing here knows about syntax: a route found by tree-sitter in an Express app and one found
//! by syn in an axum service become the same [`Endpoint`].

mod coverage;
pub mod doc;
pub mod key;
pub mod probe;
mod suppression;

pub use coverage::Coverage;
pub use suppression::Suppression;

pub use key::{KeyObs, KeyStore};
use serde::Serialize;

/// A place in the scanned tree: `file` relative to the root, `/`-separated; `line` 1-based.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
pub struct Location {
    pub file: String,
    pub line: u32,
}

impl Location {
    pub fn new(file: impl Into<String>, line: u32) -> Self {
        Location {
            file: file.into(),
            line,
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What a side effect does, in the report's vocabulary.
#[derive(
    Default,
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EffectKind {
    #[default]
    Payment,
    Email,
    Sms,
    QueuePublish,
    ExternalCall,
    DbCreate,
    DbUpdate,
    DbDelete,
    FileWrite,
    WebhookReceiver,
}

/// The kinds of effect every one of several candidate callees reaches (each given by the kinds
/// it reaches): when which candidate runs is a guess (an interface's implementations, a trait
/// object's impls), these run whichever does, so they are not speculative. Database writes
/// stay speculative: candidates that each write rows are usually one per database (a MySQL and
/// a SQLite store), and which one runs decides which schema's constraints protect the write.
pub fn reached_by_all<C, K>(candidates: C) -> std::collections::HashSet<EffectKind>
where
    C: IntoIterator<Item = K>,
    K: IntoIterator<Item = EffectKind>,
{
    let mut common: Option<std::collections::HashSet<EffectKind>> = None;
    for kinds in candidates {
        let here: std::collections::HashSet<EffectKind> = kinds
            .into_iter()
            .filter(|k| {
                !matches!(
                    k,
                    EffectKind::DbCreate | EffectKind::DbUpdate | EffectKind::DbDelete
                )
            })
            .collect();
        common = Some(match common {
            None => here,
            Some(k) => k.intersection(&here).copied().collect(),
        });
    }
    common.unwrap_or_default()
}

impl EffectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EffectKind::Payment => "payment",
            EffectKind::Email => "email",
            EffectKind::Sms => "sms",
            EffectKind::QueuePublish => "queue_publish",
            EffectKind::ExternalCall => "external_call",
            EffectKind::DbCreate => "db_create",
            EffectKind::DbUpdate => "db_update",
            EffectKind::DbDelete => "db_delete",
            EffectKind::FileWrite => "file_write",
            EffectKind::WebhookReceiver => "webhook_receiver",
        }
    }
}

/// What a duplicate of an effect would do to a person or to money: the harm model that decides
/// severity (worst first). Each effect gets one from the catalogue (`rules/harm.toml`), the
/// written model's name, the URL called, the provider call's arguments and the endpoint's intent.
#[derive(
    Default,
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Impact {
    /// Money moves again: a charge, a refund, a transfer, a payout.
    Money,
    /// A message reaches a person again: an email, an SMS, a push.
    Message,
    /// A record a user sees twice (content, orders, invites, members, keys, webhooks, teams), or
    /// an external write whose duplicate is not known to be harmless.
    #[default]
    Record,
    /// An outbound call to a service whose semantics the catalogue does not know (a plain HTTP
    /// client to a URL no pattern names): a repeat may create something there again or only ask
    /// it something again. Not known to be a duplicate, nor known to be harmless.
    Unknown,
    /// Money would move only if a person completes it later (a hosted checkout session, an order
    /// the buyer must approve): a duplicate is an open session, unless someone completes it too.
    Pending,
    /// A duplicate harms nobody: logs, audit rows, sessions, analytics, metrics, caches.
    Bookkeeping,
    /// It runs only when the request fails (reached from a `catch` or an `Err` arm): a retry of
    /// a request that succeeded does not reach it, and one that fails again reports its failure.
    Failure,
    /// The repeat is what the request asks for (resend, send a test, a sign-in email).
    Requested,
    /// Nothing is written: a call that only reads or verifies (a captcha check, a token exchange,
    /// a search over POST), or one the provider refuses to repeat.
    Read,
}

impl Impact {
    pub fn as_str(self) -> &'static str {
        match self {
            Impact::Money => "money",
            Impact::Message => "message",
            Impact::Record => "record",
            Impact::Unknown => "unknown",
            Impact::Pending => "pending",
            Impact::Bookkeeping => "bookkeeping",
            Impact::Failure => "failure",
            Impact::Requested => "requested",
            Impact::Read => "read",
        }
    }
    /// The harm of an effect of this kind before anything more specific is known.
    pub fn of_kind(kind: EffectKind) -> Impact {
        match kind {
            EffectKind::Payment => Impact::Money,
            EffectKind::Email | EffectKind::Sms => Impact::Message,
            _ => Impact::Record,
        }
    }
}

/// A side effect reached from an endpoint's handler.
#[derive(
    Default, Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
pub struct Effect {
    pub kind: EffectKind,
    /// The call as written, e.g. `stripe.paymentIntents.create`.
    pub callee: String,
    /// Catalogue label, e.g. "Stripe payment".
    pub label: String,
    #[serde(flatten)]
    pub location: Location,
    /// An upsert / find-or-create: a create that a duplicate cannot repeat.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub upsert: bool,
    /// Link facts: an upsert matched on the caller's value, or on one made per call when the
    /// caller sends none (`where: { id: body.id || uuidv4() }`): no upsert for a create, whose
    /// client sends no id; an upsert for a `PUT`, `PATCH` or `DELETE`, whose client names the row.
    #[serde(skip)]
    pub upsert_unless_missing: bool,
    /// Link facts: an upsert the ORM makes by reading the row first and then inserting or
    /// updating it (TypeORM's `save` of an entity given its key): not atomic, so behind a lookup
    /// it is a find-or-create like a plain create.
    #[serde(skip)]
    pub reads_then_writes: bool,
    /// A create done only when a lookup of the same model finds nothing (find-or-create by
    /// hand): a sequential retry finds the row, two concurrent ones can both create.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub find_or_create: bool,
    /// A relative update (`increment`, `$inc`, `SET x = x + 1`): running it twice changes the result.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub relative: bool,
    /// Link facts: for a relative update, the fields it changes by their old value (the keys of
    /// MongoDB's `$inc`/`$push`, Prisma's `{ views: { increment: 1 } }`), when the call shows them.
    #[serde(skip)]
    pub relative_fields: Vec<String>,
    /// Link facts: a relative update that shifts the rows past a point by a range its `WHERE`
    /// bounds (`SET pos = pos + 10 WHERE .. pos > ?`, see `crate::sql::sql_shifts_range`): their
    /// order holds however often it runs.
    #[serde(skip)]
    pub shifts_range: bool,
    /// Link facts: a key-value increment whose key the same function gives a time to live
    /// (`incr(key)` then `expire(key, 60)`): a window counter (a rate limit, a throttle), which
    /// counts requests.
    #[serde(skip)]
    pub window: bool,
    /// Link facts: columns a create gives a constant (`VALUES (1)`): every retry writes the same
    /// value, as if the client sent it.
    #[serde(skip)]
    pub fixed_keys: Vec<String>,
    /// A create that follows a delete of the same model in the same function: the set is
    /// replaced, so a repeat leaves the same rows.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub replaces: bool,
    /// The model or table written, when the call names it (`prisma.order.create` → `order`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Calls from the handler to this effect, outermost first (`createOrder`, `chargeCard`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<String>,
    /// Reached only through a heuristic (a method resolved by its name alone).
    #[serde(skip)]
    pub speculative: bool,
    /// Link facts for constraints: the keys of the data written, when the call shows them.
    #[serde(skip)]
    pub data_keys: Option<Vec<String>>,
    /// Inside a `try` (or `.catch`) whose handler names a unique-violation code.
    #[serde(skip)]
    pub unique_caught: bool,
    /// A read of the same model comes first in the same function (find, then create).
    #[serde(skip)]
    pub prechecked: bool,
    /// Reached only on a failure path: from a `catch` clause or `.catch(..)` handler, an `Err`
    /// arm, `if let Err(..)`, or a `map_err`/`or_else` closure.
    #[serde(skip)]
    pub on_failure: bool,
    /// A webhook receiver's record of the provider's event ids (a create on a `processed_events`
    /// model or table).
    #[serde(skip)]
    pub event_record: bool,
    /// The call as its package names it, where the code calls it by another name (`import {
    /// payViaPaymentRequest as pay }`): what provider semantics are matched on besides `callee`.
    #[serde(skip)]
    pub package_call: Option<String>,
    /// For a provider call that accepts one: the idempotency key it passes downstream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub downstream_key: Option<DownstreamKey>,
    /// That key as written, shortened (`order.id`, `` `${key}:charge` ``).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub downstream_key_expression: Option<String>,
    /// A message given a stable id its broker dedups on (Bull `jobId`): a retry queues nothing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deduplicated: bool,
    /// Link facts: where the id would come from when a parameter of the function decides it,
    /// judged at each caller (see [`DedupParam`]).
    #[serde(skip)]
    pub dedup_param: Option<DedupParam>,
    /// Runs only after a claim succeeded: a conditional write (an update that moves the row out of
    /// the state it filters on, a Redis `SET NX`) whose outcome is tested before it goes on. A
    /// retry finds the row or key claimed and stops. What the claim is, and where it is tested.
    #[serde(skip)]
    pub claimed: Option<(String, Location)>,
    /// Link facts: a failure of this call fails the function it was reached from, up to the
    /// level the effect has been followed to (no `try`, `.catch(..)`, `let _ =` or `.ok()`
    /// swallows it): a create that throws on a duplicate ends the request there.
    #[serde(skip)]
    pub fails_request: bool,
    /// The call's error is dropped where it is made: a `try` whose `catch` neither throws nor
    /// returns, `.catch(..)` on it, `let _ =` or `.ok()`. A unique violation there reaches no
    /// client.
    #[serde(skip)]
    pub swallowed: bool,
    /// Link facts: creates whose failure fails the request, and outbound HTTP calls, that run
    /// before this effect whenever it runs (earlier in an enclosing block of the same function;
    /// see [`Effect::orders_what_follows`]).
    #[serde(skip)]
    pub after_creates: Vec<Location>,
    /// A create made only when a lookup found nothing, after a test that throws when it found
    /// the row (`if (existing) throw ..`): where that test is. A repeat fails there, so what
    /// runs after this create does not run again either.
    #[serde(skip)]
    pub refused_by: Option<Location>,
    /// The lookup that guards this create locks what it reads (`lock: transaction.LOCK.UPDATE`,
    /// `.forUpdate()`, `.setLock('pessimistic_write')`): the check and the create are atomic.
    #[serde(skip)]
    pub lookup_locked: bool,
    /// Link facts: runs only while looked-up rows are in some states: for each test around it
    /// (nested ones outermost first, see [`nested_guard`]), the model, the field tested, and where.
    #[serde(skip)]
    /// The test is as `CallSite::state_guard` of the TypeScript front end writes it
    /// (`f:ne:pending`: the effect runs where `row.status !== 'pending'` is false).
    pub state_guard: Vec<(Vec<String>, String, String, Location)>,
    /// Link facts: for an update, the fields it sets (`data`, `$set`, the values object), each
    /// with the value written when it is a constant (`s:paid`, `b:true`, `now`, `m:Status.Paid`)
    /// or a value the request holds, by its name (`v:priority` for `body.priority`); `*` with
    /// `v:*` when a whole value is written (`data: dto`: each field into its column).
    #[serde(skip)]
    pub update_keys: Vec<(String, Option<String>)>,
    /// Runs only while a row is in a state this request changes (`if (order.status !==
    /// 'pending') return` before the update that marks it paid): a sequential retry takes the
    /// other branch. What the state is and where it is tested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_guarded: Option<String>,
    /// Runs only where a lookup of a model found nothing, on a path that also creates that
    /// model's row (`if (!user) { create user; send the welcome email }`): a sequential retry
    /// finds the row and skips it; two concurrent ones can both pass the lookup. The lookup
    /// and the create that defeats it on a repeat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookup_guarded: Option<String>,
    /// Runs only after a create that a caller-keyed unique constraint stops on a repeat: the
    /// duplicate request fails there, before this effect. The constraint and the create.
    #[serde(skip)]
    pub stopped_by: Option<String>,
    /// Runs only while a row of this model exists that the same request deletes (a one-time
    /// token consumed, the row being removed): a sequential retry finds nothing and skips it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumes: Option<String>,
    /// Link facts: the message's id (`messageId`, `event_id`) comes from this parameter of the
    /// function reached, at these fields (closed: not followed past them); the caller's argument
    /// decides (the request's event id, or a fresh one).
    #[serde(skip)]
    pub id_param: Option<(usize, Vec<String>, bool)>,
    /// Link facts: a call on the `this` of the method that makes it (`this.create(..)` in a
    /// static method of a model class): its model is the class the caller calls the method on.
    #[serde(skip)]
    pub on_this: bool,
    /// Link facts: `this.save()` in a model's method, an update of a loaded row unless the
    /// caller calls the method on an instance it just built.
    #[serde(skip)]
    pub saves_this: bool,
    /// Link facts: the record a create writes is (a member of) a parameter of a function
    /// (`values` in `createWithCtx(ctx, values)`): the caller's argument shows its keys.
    #[serde(skip)]
    pub data_param: Option<ParamRef>,
    /// Link facts: keys the record writes with a value made per call (`{ ...args.data, id:
    /// cuid() }`): what the spread parameter's fields bring does not give them back.
    #[serde(skip)]
    pub made_keys: Vec<String>,
    /// Link facts: what an update writes is a parameter of a function (`updateUser(filter,
    /// update)` running `User.updateOne(filter, update)`, or `data: update`): the caller's
    /// argument may be relative (`{ $inc: { credits: 5 } }`).
    #[serde(skip)]
    pub update_param: Option<ParamRef>,
    /// Link facts: the columns an update sets to a parameter of a function it is reached
    /// through (`data: { status }` in `setStatus(id, status)`): what the caller passes is what
    /// [`Effect::update_keys`] holds there.
    #[serde(skip)]
    pub written_params: Vec<(String, ParamRef)>,
    /// Link facts: a parameter the sink's argument object spreads (`pay({ lnd, ...options })`):
    /// the caller's argument shows the keys `args` lacks.
    #[serde(skip)]
    pub spread_param: Option<Box<ParamRef>>,
    /// Link facts: the URL of an HTTP call is (a member of) a parameter of a function
    /// (`axios.post(options.url, ..)` in `request.post = (options) => ..`): the caller's argument
    /// shows it.
    #[serde(skip)]
    pub url_param: Option<Box<ParamRef>>,
    /// Link facts: the HTTP method of a generic request call (`axios.request(config)`) is (a
    /// member of) a parameter of a function (`call(options, method)`): the write stands only
    /// where a caller passes a mutation method (`request.post = (o) => call(o, 'POST')`), and
    /// is dropped where one passes another or none.
    #[serde(skip)]
    pub method_param: Option<Box<ParamRef>>,
    /// Link facts: the effect runs only where a parameter (or a member of one) of a function
    /// it is reached through passes a test (see [`ParamTest`]): truthy or falsy (`if
    /// (options?.upsert) create(..)`), or one of an enum's variants (`match request {
    /// Request::Pay { .. } => .. }`): a caller whose argument fails the test does not reach it.
    #[serde(skip)]
    pub param_gate: Option<Box<(ParamRef, ParamTest)>>,
    /// Link facts: a write through a function generic over its table (diesel's
    /// `insert_into(<T as HasTable>::table()).values(values)`): the parameter whose argument
    /// names the table (a row of a `#[diesel(table_name = ..)]` struct, a column of the table's
    /// `dsl`), read at each call until one shows it.
    #[serde(skip)]
    pub target_param: Option<Box<ParamRef>>,
    /// Link facts: the fields of `args` whose value a call in the request made (an invoice
    /// fetched from a service), not one the client sent (see `Cond::from_request`).
    #[serde(skip)]
    pub made_args: Box<[String]>,
    /// Link facts: keys of the record whose values are (members of) a parameter of a function
    /// (`{ id: props.id }`).
    #[serde(skip)]
    pub key_params: Vec<(String, ParamRef)>,
    /// Link facts: keys of the record whose values the endpoint's request supplies (they come
    /// from the handler's parameters through every call).
    #[serde(skip)]
    pub request_keys: Vec<String>,
    /// The caller-keyed unique constraint that stops a duplicate of this create.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraint: Option<String>,
    /// What a duplicate would do (see [`Impact`]); set by the harm judgement once per audit.
    pub impact: Impact,
    /// Why the impact is not the kind's default (the pattern, argument or intent that decided).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impact_detail: Option<String>,
    /// The harm the matched catalogue sink declares, when it declares one.
    #[serde(skip)]
    pub sink_impact: Option<Impact>,
    /// Front-end facts for the harm judgement: the fields of the call's object or struct
    /// arguments, dotted one level deep (`mode`, `subscription_data.trial_period_days`), with
    /// their literal value when it is one (`setup`), else `None`.
    #[serde(skip)]
    pub args: Vec<(String, Option<String>)>,
    /// The URL an HTTP call is made to, as written (a template keeps its `${..}` holes).
    #[serde(skip)]
    pub url: Option<String>,
}

/// A message id that a parameter of the publishing function decides: the parameter's index, the
/// fields within it, and whether those fields lead to the id itself (`{ jobId: options.jobId }`)
/// or to an object of options that carries it (`queue.add(name, data, opts)`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DedupParam {
    pub index: usize,
    pub fields: Vec<String>,
    pub is_id: bool,
}

impl Effect {
    /// Sorts effects and keeps one per (kind, location): the same call reached on several paths.
    /// The path kept is the one a retry is most exposed on, so the effect's flags and its `via`
    /// (the evidence a finding cites) come from the path that decides its severity: a path with
    /// no protection beats one that runs only when the request fails, which beats one behind a
    /// claim.
    pub fn dedup(effects: &mut Vec<Effect>) {
        fn exposure(e: &Effect) -> u8 {
            if e.claimed.is_some() || e.stopped_by.is_some() {
                0
            } else if e.on_failure {
                1
            } else {
                2
            }
        }
        // (A base repository's one `save` writes each model a subclass names: one effect per
        // model written.)
        fn model(e: &Effect) -> Option<&String> {
            matches!(
                e.kind,
                EffectKind::DbCreate | EffectKind::DbUpdate | EffectKind::DbDelete
            )
            .then_some(e.target.as_ref())
            .flatten()
        }
        effects.sort_by(|a, b| {
            (a.kind, &a.location, model(a))
                .cmp(&(b.kind, &b.location, model(b)))
                .then_with(|| a.cmp(b))
        });
        effects.dedup_by(|later, kept| {
            let same = later.kind == kept.kind
                && later.location == kept.location
                && model(later) == model(kept);
            if same {
                if exposure(later) > exposure(kept) {
                    std::mem::swap(later, kept);
                }
                // A create stops what follows it only if it precedes it on every path.
                kept.after_creates
                    .retain(|at| later.after_creates.contains(at));
                kept.fails_request &= later.fails_request;
                // Reached under two parameter tests: it runs where either passes.
                kept.param_gate = join_gates(kept.param_gate.take(), later.param_gate.take());
            }
            same
        });
        effects.sort();
    }

    /// Records that this effect runs after these creates, whenever it runs (both front ends).
    pub fn runs_after(&mut self, creates: &[Location]) {
        for at in creates {
            if self.after_creates.len() < 16 && !self.after_creates.contains(at) {
                self.after_creates.push(at.clone());
            }
        }
    }

    /// A create whose error leaves the function it was followed to: a duplicate it refuses ends
    /// the request there, before what comes after it.
    pub fn ends_a_duplicate(&self) -> bool {
        self.kind == EffectKind::DbCreate
            && self.fails_request
            && (!self.upsert || self.refused_by.is_some())
            && !self.on_failure
    }

    /// What the effects after it run behind, when it precedes them on every path: a create that
    /// ends the request on a duplicate, or an outbound HTTP call (a verification whose refusal
    /// the caller tests, see `link::harm`'s single-use checks).
    pub fn orders_what_follows(&self) -> bool {
        self.ends_a_duplicate() || (self.kind == EffectKind::ExternalCall && !self.on_failure)
    }

    /// A create made only when a lookup found nothing, with no unique constraint behind the
    /// lookup: a sequential retry finds the row, two concurrent ones can both create.
    pub fn racy_guard(&self) -> bool {
        // (`upsert` with `find_or_create` is an update-or-insert by hand: an atomic upsert is
        // never a find-or-create)
        self.kind == EffectKind::DbCreate
            && self.find_or_create
            // A create that replaces the rows a delete of the same model removed first.
            && !self.replaces
            && self.constraint.is_none()
            && self.claimed.is_none()
            && self.consumes.is_none()
            // A caught unique violation says a constraint closes the race; a locked lookup
            // makes the check atomic.
            && !self.unique_caught
            && !self.lookup_locked
    }

    /// Creates, messages and money: what a duplicate execution repeats.
    pub fn repeats_on_retry(&self) -> bool {
        if self.consumes.is_some()
            || self.claimed.is_some()
            || self.stopped_by.is_some()
            || self.state_guarded.is_some()
            || self.lookup_guarded.is_some()
        {
            return false;
        }
        match self.kind {
            EffectKind::DbCreate => {
                !self.upsert && !self.replaces && !self.find_or_create && self.constraint.is_none()
            }
            _ if self.impact == Impact::Read => false,
            EffectKind::DbUpdate => self.relative,
            EffectKind::DbDelete | EffectKind::FileWrite | EffectKind::WebhookReceiver => false,
            // A message with a stable id its broker dedups on; a provider call with a stable
            // idempotency key the provider dedups on.
            _ => !self.deduplicated,
        }
    }
}

/// The gate of an effect reached under either of two gates (see `Effect::dedup`): the variants
/// both name when both test one parameter for variants, the one gate when they are the same,
/// else none (it may run whatever the parameter).
#[allow(clippy::type_complexity)]
fn join_gates(
    a: Option<Box<(ParamRef, ParamTest)>>,
    b: Option<Box<(ParamRef, ParamTest)>>,
) -> Option<Box<(ParamRef, ParamTest)>> {
    let (mut a, b) = (a?, b?);
    if a.0 != b.0 {
        return None;
    }
    if a.1 == b.1 {
        return Some(a);
    }
    match (&mut a.1, b.1) {
        (
            ParamTest::Variant {
                enum_name,
                names,
                is: true,
            },
            ParamTest::Variant {
                enum_name: e2,
                names: n2,
                is: true,
            },
        ) if *enum_name == e2 => {
            for n in n2 {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
            names.sort();
            Some(a)
        }
        _ => None,
    }
}

/// What a gate on a parameter tests (see `Effect::param_gate`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ParamTest {
    /// The argument is truthy (`true`) or falsy (`false`).
    Truthy(bool),
    /// The argument is one of the variants `names` of the enum `enum_name` (`is`), or none of
    /// them (`!is`: a catch-all arm after arms that name them).
    Variant {
        enum_name: String,
        names: Vec<String>,
        is: bool,
    },
}

/// Link facts: parameter `index` of function `function` of module `module`, or the member at
/// `path` in it (`props.id` → path `["id"]`).
#[derive(Default, Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ParamRef {
    pub module: usize,
    pub function: usize,
    pub index: usize,
    pub path: Vec<String>,
}

/// The idempotency key a provider call passes (`{ idempotencyKey }`, an `Idempotency-Key` header).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DownstreamKey {
    /// No key: the provider cannot tell our retry from a new request.
    Missing,
    /// A key made at call time (`uuid()`): every retry sends a new one.
    Random,
    /// A key from something stable that is neither of the others (a key passed in, a value
    /// computed elsewhere).
    Derived,
    /// A stable domain id (`order.id`): a second real intent on the same object is swallowed.
    DomainId,
    /// Derived from the inbound key and a purpose (`sha256(key + ":charge")`): the fix.
    FromInboundKey,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MechanismKind {
    HeaderKey,
    UniqueConstraint,
    Upsert,
    WebhookEventDedup,
    ContentHash,
    /// A claim the request must win before its effects (a conditional update of the row's state,
    /// a Redis `SET NX`): one run gets past it, atomically.
    Claim,
    Natural,
}

impl MechanismKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MechanismKind::HeaderKey => "header_key",
            MechanismKind::UniqueConstraint => "unique_constraint",
            MechanismKind::Upsert => "upsert",
            MechanismKind::WebhookEventDedup => "webhook_event_dedup",
            MechanismKind::ContentHash => "content_hash",
            MechanismKind::Claim => "claim",
            MechanismKind::Natural => "natural",
        }
    }
}

/// Something that protects an endpoint against a duplicate execution.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct Mechanism {
    pub kind: MechanismKind,
    pub detail: String,
    #[serde(flatten)]
    pub location: Location,
}

impl Mechanism {
    /// The handler itself reads the idempotency-key header (first read at `at`).
    pub fn handler_reads_key(at: Location) -> Mechanism {
        Mechanism {
            kind: MechanismKind::HeaderKey,
            detail: "the handler reads the idempotency-key header".into(),
            location: at,
        }
    }
}

/// How a client reaches an endpoint: what its `method` and `path` stand for.
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
pub enum Protocol {
    /// A plain HTTP route: the method and the URL path are the route's own.
    #[default]
    Rest,
    /// A GraphQL mutation field: `POST <graphql path>#<field>`.
    Graphql,
    /// A tRPC procedure: `POST <adapter endpoint>/<dotted.procedure.path>`, or
    /// `POST trpc:<dotted.procedure.path>` when the adapter's endpoint is not known.
    Trpc,
    /// A Next.js server action (`'use server'`): `POST action:<name>`, it has no URL of its own.
    ServerAction,
    /// A form action of a page (SvelteKit, Remix): the page's URL, posted by its form.
    FormAction,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Rest => "rest",
            Protocol::Graphql => "graphql",
            Protocol::Trpc => "trpc",
            Protocol::ServerAction => "server_action",
            Protocol::FormAction => "form_action",
        }
    }
}

/// An HTTP route as the front end found it, with everything its handler reaches.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Endpoint {
    pub method: String,
    pub path: String,
    /// False when part of `path` could not be read: a router nothing mounts, a prefix that is not
    /// statically known, an adapter or GraphQL server whose path is a guess. `path` is then the
    /// part that is known, and a diagnostic says what is missing.
    pub path_complete: bool,
    pub framework: String,
    pub protocol: Protocol,
    #[serde(flatten)]
    pub location: Location,
    pub handler: String,
    pub side_effects: Vec<Effect>,
    pub mechanisms: Vec<Mechanism>,
    /// Where the handler or its middleware reads the idempotency-key header.
    #[serde(skip)]
    pub key_reads: Vec<Location>,
    /// The handler's own definition, when known.
    #[serde(skip)]
    pub handler_location: Option<Location>,
    /// Where the key mechanism keeps its keys, when that is visible, judged property by property.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_store: Option<KeyStore>,
    /// What the front end saw in the code that handles the key; judged into `key_store` once
    /// the schema's constraints are known.
    #[serde(skip)]
    pub key_obs: Vec<KeyObs>,
    /// Ids the handler makes deterministically from its input (`uuid.v5`).
    #[serde(skip)]
    pub derived_ids: Vec<Location>,
    /// Test requests that send an idempotency key to this endpoint (see [`KeyTest`]).
    #[serde(skip)]
    pub key_tests: Vec<KeyTest>,
    /// The first call on the handler's path that could not be followed (a callee computed at run
    /// time, a handler that resolves to nothing): when nothing else is reached, what the endpoint
    /// does is unknown, not "no side effect".
    #[serde(skip)]
    pub unfollowed: Option<(String, Location)>,
    /// The operation of the repository's API documentation that describes this endpoint.
    #[serde(skip)]
    pub key_doc: Option<doc::KeyDoc>,
    /// No operation describes this keyed endpoint, while the documentation of its package
    /// describes others.
    #[serde(skip)]
    pub key_doc_unlisted: Option<doc::Unlisted>,
}

impl Endpoint {
    pub fn is_mutation(&self) -> bool {
        is_mutation_method(&self.method)
    }
    pub fn label(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
    /// What a retry of this endpoint would do again.
    pub fn repeated_effects(&self) -> Vec<&Effect> {
        self.side_effects
            .iter()
            .filter(|e| e.repeats_on_retry())
            .collect()
    }
    /// What only a lookup with nothing atomic behind it keeps from repeating: each create made
    /// when the lookup found nothing ([`Effect::racy_guard`]), and what runs only after such a
    /// create refused a repeat. Two concurrent retries both pass the lookup and repeat them.
    pub fn racy_effects(&self) -> Vec<&Effect> {
        let racy: Vec<&Location> = self
            .side_effects
            .iter()
            .filter(|e| e.racy_guard())
            .map(|e| &e.location)
            .collect();
        self.side_effects
            .iter()
            .filter(|e| {
                e.racy_guard()
                    || ((e.state_guarded.is_some() || e.lookup_guarded.is_some())
                        && e.claimed.is_none()
                        && e.consumes.is_none()
                        && e.stopped_by.is_none()
                        && {
                            let mut unguarded = (*e).clone();
                            unguarded.state_guarded = None;
                            unguarded.lookup_guarded = None;
                            unguarded.repeats_on_retry()
                        })
                    || (e.stopped_by.is_some()
                        && e.claimed.is_none()
                        && e.consumes.is_none()
                        && e.after_creates.iter().any(|at| racy.contains(&at)))
            })
            .collect()
    }
    /// Receives a provider's webhooks: it checks a provider signature (a verification call or a
    /// signature header). A path alone is not enough: `/settings/webhooks` configures them.
    pub fn is_webhook_receiver(&self) -> bool {
        self.side_effects
            .iter()
            .any(|e| e.kind == EffectKind::WebhookReceiver)
    }
    pub fn has_mechanism(&self, kind: MechanismKind) -> bool {
        self.mechanisms.iter().any(|m| m.kind == kind)
    }
    /// The linked tests that send one key twice or concurrently to exactly this endpoint.
    pub fn confirming_tests(&self) -> impl Iterator<Item = &KeyTest> {
        self.key_tests.iter().filter(|t| t.exact && t.repeats())
    }
}

/// The HTTP methods that mutate, upper case: the one list every layer uses.
pub const MUTATION_METHODS: [&str; 4] = ["POST", "PUT", "PATCH", "DELETE"];

/// Is `method` (upper case) a mutation?
pub fn is_mutation_method(method: &str) -> bool {
    MUTATION_METHODS.contains(&method)
}

/// A request in the repository's tests (a supertest chain, an axum `oneshot`, a `.http` file entry)
/// that sends an idempotency-key header, as the test front ends found it. One per test and target:
/// several sends of one key to one URL in one test make one `KeyTest` that repeats.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct KeyTest {
    /// Upper case: `POST`.
    pub method: String,
    /// The URL path as the test writes it, parameters as `{}` (`/orders/{}/pay`); `None` when the
    /// URL cannot be read statically.
    pub path: Option<String>,
    /// The URL starts with a base the audit cannot read (`${baseUrl}/orders`, `{{host}}/orders`):
    /// `path` is its tail.
    pub base: bool,
    /// The test sends the same key to this URL at least twice, one after the other.
    pub same_key_twice: bool,
    /// The test sends the same key to this URL concurrently (`Promise.all`, `join!`).
    pub concurrent: bool,
    /// Set by the linker: the URL names this endpoint alone. `false` when the test's URL could not
    /// be read and this endpoint is only one it may target.
    #[serde(skip)]
    pub exact: bool,
    #[serde(flatten)]
    pub location: Location,
}

impl KeyTest {
    /// The test exercises the key mechanism: one key, sent twice or concurrently.
    pub fn repeats(&self) -> bool {
        self.same_key_twice || self.concurrent
    }
    /// "sends one key twice and concurrently" for messages.
    pub fn describe(&self) -> &'static str {
        match (self.same_key_twice, self.concurrent) {
            (true, true) => "sends one key twice in sequence and concurrently",
            (true, false) => "sends one key twice",
            (false, true) => "sends one key concurrently",
            (false, false) => "sends a key, never one key twice",
        }
    }
}

/// A schema statement written in code (a string a migration or a start-up routine runs):
/// where it is and its text as written, `${..}` holes included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaSql {
    pub location: Location,
    pub text: String,
}

/// A unique constraint declared in a schema, an ORM model or a migration.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct UniqueConstraint {
    /// The model or table as declared (`User`, `users`).
    pub model: String,
    /// Other names of the same model (a Prisma `@@map`, a TypeORM table name).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    pub columns: Vec<String>,
    /// A partial index (`WHERE …`): it does not stop every duplicate.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// Every column is generated at insert (a sequence, a fresh UUID): it protects nothing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub generated: bool,
    /// Generated by a column default (`@Default(DataType.UUIDV4)`) that an insert may override:
    /// it protects a create whose request supplies the value.
    #[serde(skip)]
    pub defaulted: bool,
    /// prisma, sql, typeorm, sequelize, mongoose, drizzle, knex, …
    pub source: &'static str,
    #[serde(flatten)]
    pub location: Location,
}

impl UniqueConstraint {
    pub fn describe(&self) -> String {
        let partial = if self.partial { ", partial" } else { "" };
        format!(
            "{}({}){partial} at {}",
            self.model,
            self.columns.join(", "),
            self.location
        )
    }
}

/// The state tests around an effect once one more encloses it (`inner`, inside `outer`): an
/// effect under `if (!matches!(tx.state, Pending)) return` and then inside `if tx.intent ==
/// Payout {..}` runs only while both hold, and either may be the one the request turns. At most
/// four are kept, the outermost.
pub fn nested_guard<T: PartialEq + Clone>(outer: &[T], inner: T) -> Vec<T> {
    let mut out = outer.to_vec();
    if out.len() < 4 && !out.contains(&inner) {
        out.push(inner);
    }
    out
}

/// How a state test marks where an effect runs: `t` where the condition is true, `f` where it is
/// false; upper case when the condition joins the test with others by `&&`/`||`, so that what
/// runs there needs more than this test (see `link::guards`).
pub fn state_runs(runs: bool, joined: bool) -> &'static str {
    match (runs, joined) {
        (true, false) => "t",
        (true, true) => "T",
        (false, false) => "f",
        (false, true) => "F",
    }
}

/// `guards` (tests already around an effect, outermost first) inside one more test, `outer`.
pub fn enclose<T: PartialEq + Clone>(guards: &mut Vec<T>, outer: T) {
    let inner = std::mem::take(guards);
    *guards = inner
        .into_iter()
        .fold(vec![outer], |all, g| nested_guard(&all, g));
}

/// A model or table name reduced for matching across sources: `Users`, `user`, `user_s` → `user`.
pub fn model_key(name: &str) -> String {
    let n: String = name
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    let n = n.strip_suffix("ies").map(|s| format!("{s}y")).unwrap_or(n);
    match n.strip_suffix('s') {
        Some(s) if !s.ends_with('s') && !s.is_empty() => s.to_string(),
        _ => n,
    }
}

/// A problem with the input that did not stop the audit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct Diagnostic {
    pub file: String,
    pub line: u32,
    pub message: String,
}

/// The longest diagnostic message kept: a parser's error may quote a whole statement (a PL/pgSQL
/// body) or file, which no report needs.
pub const MAX_DIAGNOSTIC_CHARS: usize = 500;

impl Diagnostic {
    /// The message is kept to one line of at most [`MAX_DIAGNOSTIC_CHARS`] characters.
    pub fn new(file: impl Into<String>, line: u32, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.into(),
            line,
            message: one_line(&message.into(), MAX_DIAGNOSTIC_CHARS),
        }
    }
}

/// `text` on one line (line breaks and runs of spaces folded), cut at `max` characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max {
        return folded;
    }
    let mut out: String = folded.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Where a key that code sends comes from: judged against "once per intent, reused by every retry".
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KeyOrigin {
    /// Made inside a retry loop or a retry callback: every attempt sends a new key.
    PerAttempt,
    /// Made by the function that sends the request (an HTTP helper, an interceptor): every call,
    /// so every retry by its caller, sends a new key.
    PerCall,
    /// From the clock or `Math.random()`: a new one on every attempt, and collisions between clients.
    Clock,
    /// A stable domain id (an order id, a user id, a request id) rather than the intent.
    DomainId,
    /// A hash of the request body: two real intents with the same body collapse into one.
    ContentHash,
    /// Made once per intent: in the submit handler, or once before the retry loop that reuses it.
    OncePerIntent,
    /// A parameter: the caller makes it (and the callers in view make it once).
    PassedIn,
    /// Kept across calls: component state, a ref, a memo, a field.
    Held,
    /// Read from storage: survives a reload or a restart.
    Persisted,
    /// Derived from the inbound key and a purpose (a service's downstream key).
    FromInboundKey,
    /// Not visible from the code.
    Unknown,
}

impl KeyOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyOrigin::PerAttempt => "per_attempt",
            KeyOrigin::PerCall => "per_call",
            KeyOrigin::Clock => "clock",
            KeyOrigin::DomainId => "domain_id",
            KeyOrigin::ContentHash => "content_hash",
            KeyOrigin::OncePerIntent => "once_per_intent",
            KeyOrigin::PassedIn => "passed_in",
            KeyOrigin::Held => "held",
            KeyOrigin::Persisted => "persisted",
            KeyOrigin::FromInboundKey => "from_inbound_key",
            KeyOrigin::Unknown => "unknown",
        }
    }
    /// Made once per intent and reused by its retries.
    pub fn is_sound(self) -> bool {
        matches!(
            self,
            KeyOrigin::OncePerIntent
                | KeyOrigin::PassedIn
                | KeyOrigin::Held
                | KeyOrigin::Persisted
                | KeyOrigin::FromInboundKey
        )
    }
}

/// A request that client code (code no endpoint of this repository reaches: a React component,
/// an API client, a CLI) sends with an idempotency-key header, and where that key comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct ClientRequest {
    /// `POST`, …; `ANY` when the code does not show it (a header set on every request).
    pub method: String,
    /// The request's URL path as far as the code shows it, parameters as `{name}`; `{url}` when
    /// not visible.
    pub path: String,
    /// The request (or the statement that sets the header).
    #[serde(flatten)]
    pub location: Location,
    /// The function that sends it.
    pub function: String,
    pub key_origin: KeyOrigin,
    /// The key as written, shortened (`crypto.randomUUID()`).
    pub key_expression: String,
    /// Where the key is made (or read).
    pub key_location: Location,
    /// The function that makes it (where a fix goes).
    pub key_function: String,
    /// Why the origin is what it is, in a sentence.
    pub detail: String,
    /// The endpoint of this repository it calls, when its method and path match one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint_location: Option<Location>,
}

impl ClientRequest {
    /// `METHOD path` for a finding: the endpoint it calls, or the request as written.
    pub fn label(&self) -> String {
        self.endpoint
            .clone()
            .unwrap_or_else(|| format!("{} {}", self.method, self.path))
    }
}

/// Everything the front ends and the linker found in one scanned tree.
#[derive(Debug, Default)]
pub struct Facts {
    pub files_scanned: usize,
    pub constraints: Vec<UniqueConstraint>,
    /// Every route, safe methods included (RS023 needs the GETs).
    pub endpoints: Vec<Endpoint>,
    pub diagnostics: Vec<Diagnostic>,
    /// `retrysafe-ignore` comments found in the scanned files.
    pub suppressions: Vec<Suppression>,
    /// Requests that client code sends with an idempotency key.
    pub clients: Vec<ClientRequest>,
    /// Requests with an idempotency key found in the repository's tests and `.http` files.
    pub key_tests: Vec<KeyTest>,
    /// What was read: files per language, routes, frameworks the manifests name.
    pub coverage: Coverage,
    /// The API documents (and code-first documentation) found, with their operations.
    pub api_docs: doc::ApiDocs,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn email(via: &str, on_failure: bool, claimed: bool, after: &[u32]) -> Effect {
        let at = |line| Location {
            file: "a.ts".into(),
            line,
        };
        Effect {
            kind: EffectKind::Email,
            location: at(9),
            via: vec![via.into()],
            on_failure,
            claimed: claimed.then(|| ("a claim".to_string(), at(3))),
            after_creates: after.iter().map(|l| at(*l)).collect(),
            ..Effect::default()
        }
    }

    /// One effect on several paths keeps the path a retry is most exposed on, with its `via`.
    #[test]
    fn dedup_keeps_the_most_exposed_path() {
        let mut effects = vec![
            email("notify", false, true, &[]),
            email("onError", true, false, &[]),
        ];
        Effect::dedup(&mut effects);
        assert_eq!(effects.len(), 1);
        assert!(effects[0].on_failure && effects[0].claimed.is_none());
        assert_eq!(effects[0].via, vec!["onError".to_string()]);
        let mut effects = vec![
            email("onError", true, false, &[]),
            email("plain", false, false, &[]),
        ];
        Effect::dedup(&mut effects);
        assert!(!effects[0].on_failure);
        assert_eq!(effects[0].via, vec!["plain".to_string()]);
        // A create stops what follows it only if it precedes it on every path.
        let mut effects = vec![
            email("a", false, false, &[4, 5]),
            email("b", false, false, &[5]),
        ];
        Effect::dedup(&mut effects);
        assert_eq!(effects[0].after_creates.len(), 1);
        assert_eq!(effects[0].after_creates[0].line, 5);
    }
}
