//! The declarative catalogue in `rules/*.toml`: sinks, key headers, known middleware.
//!
//! The data is embedded with `include_str!` and validated once at start; a mistake names the file,
//! line and field.

pub mod harm;

use crate::facts::{EffectKind, Impact};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

const SINKS: &str = include_str!("../../rules/sinks.toml");
const HEADERS: &str = include_str!("../../rules/headers.toml");
const MIDDLEWARE: &str = include_str!("../../rules/middleware.toml");
const WEBHOOKS: &str = include_str!("../../rules/webhooks.toml");

/// The language a catalogue entry is for (`lang = "ts"` or `lang = "rust"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// TypeScript and JavaScript.
    Ts,
    Rust,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sink {
    pub id: String,
    pub lang: Lang,
    pub kind: EffectKind,
    #[serde(default)]
    pub label: String,
    #[serde(default)]
    pub packages: Vec<String>,
    #[serde(default)]
    pub roots: Vec<String>,
    #[serde(default)]
    pub calls: Vec<String>,
    #[serde(default)]
    pub constructs: Vec<String>,
    #[serde(default)]
    pub upsert: bool,
    /// Options that make the write skip rows conflicting with existing ones (Prisma
    /// `createMany({ data, skipDuplicates: true })`, Sequelize `bulkCreate(rows, {
    /// ignoreDuplicates: true })`): given (and not `false`), the call is an upsert.
    #[serde(default)]
    pub upsert_option: Vec<String>,
    /// Options that make the write a claim rather than a write of state (Redis `SET key v NX`,
    /// ioredis's `'NX'` argument or node-redis's `{ NX: true }`): the claim is judged where the
    /// request tests it (`frontend::ts::claims`), and the call is no effect.
    #[serde(default)]
    pub claim_option: Vec<String>,
    /// A key-value write whose first argument is the key (`redis.set(key, value)`): a key made
    /// per call (`session:${randomUUID()}`) names a new record on every call, a create.
    #[serde(default)]
    pub keyed: bool,
    /// The root is an object whose methods are called (TypeORM's `manager`, `tx`), never a
    /// function: a chain whose root is called (Knex's `trx('users').insert(..)`) is not this
    /// sink's.
    #[serde(default)]
    pub root_is_object: bool,
    #[serde(default)]
    pub write_method: bool,
    /// The call sends a GraphQL document (graphql-request's `client.request(document,
    /// variables)`): it writes only when the document's operation is a `mutation`.
    #[serde(default)]
    pub graphql_mutation: bool,
    /// The call before the matched ones names the model it writes (prisma-client-rust's
    /// `client.user().create(..)`: `user`), when nothing else in the call names a table.
    #[serde(default)]
    pub model_call: bool,
    /// Only when the receiver was loaded by one of these calls (`find*`): `doc.save()` on a
    /// document read from the database updates it rather than creating one.
    #[serde(default)]
    pub receiver_from: Vec<String>,
    /// How the call takes an idempotency key (`idempotencyKey` in stripe-node's request
    /// options): when given, the key it passes downstream is checked (RS007).
    #[serde(default)]
    pub idempotency_option: Vec<String>,
    /// Options naming a message id the broker dedups on (Bull's `jobId`): a message given a
    /// stable one is not queued twice.
    #[serde(default)]
    pub dedup_option: Vec<String>,
    /// What a duplicate of this call does, when it is not the kind's default (see
    /// `rules/harm.toml`): an analytics capture is `bookkeeping`, a payout API `money`.
    #[serde(default)]
    pub impact: Option<Impact>,
    /// Matched on a value of any package by the called method's name alone (a wallet SDK's
    /// `withdraw`), for calls no other sink matches: the catalogue does not know the package,
    /// so the effect is speculative (at most medium) rather than nothing.
    #[serde(default)]
    pub any_package: bool,
    #[serde(skip)]
    roots_set: Option<GlobSet>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RelativeUpdate {
    #[serde(default)]
    pub keys: Vec<String>,
    #[serde(default)]
    pub calls: Vec<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SqlCalls {
    #[serde(default)]
    pub calls: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
}

/// Calls that read a model: a create after one is pre-checked.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Reads {
    #[serde(default)]
    pub calls: Vec<String>,
    /// Reads that answer a list of rows (`find`, `findMany`).
    #[serde(default)]
    pub lists: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct SinksFile {
    #[serde(default)]
    sink: Vec<Sink>,
    #[serde(default)]
    reads: Reads,
    #[serde(default)]
    relative_update: RelativeUpdate,
    #[serde(default)]
    sql: SqlCalls,
    #[serde(default)]
    served_methods: Vec<ServedMethods>,
    #[serde(default)]
    runs_only: Vec<RunsOnly>,
    #[serde(default)]
    handler_makers: Vec<HandlerMaker>,
    #[serde(default)]
    message_ids: MessageIds,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MessageIds {
    #[serde(default)]
    fields: Vec<String>,
}

/// A library handler that runs only for some HTTP methods (`NextAuth(req, res, opts)` serves
/// GET and POST): what is reached through it runs only for those.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServedMethods {
    pub id: String,
    pub packages: Vec<String>,
    /// The export called (`default` for a default import).
    pub exports: Vec<String>,
    pub methods: Vec<String>,
}

/// A package module whose import serves a webhook controller of the package's own, which checks
/// the provider's signature and runs the methods the project marks with the package's decorator
/// (`@golevelup/nestjs-stripe`: `StripeModule.forRoot(StripeModule, { webhookConfig })` serves
/// `POST /stripe/webhook` and runs each `@StripeWebhookHandler(type)` method). From
/// `rules/webhooks.toml` `[[controller]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackageController {
    pub id: String,
    pub package: String,
    /// The module's export (`StripeModule`) and the static calls that import it (`forRoot`).
    pub module: String,
    pub calls: Vec<String>,
    pub method: String,
    pub path: String,
    /// The option without which the package serves no webhooks (where the code shows the
    /// options).
    pub requires_option: String,
    /// The dotted path of the option that sets the controller's prefix, and its default.
    pub prefix_option: String,
    pub default_prefix: String,
    /// The method decorator (an export of the package) that marks the handlers it runs.
    pub handler_decorator: String,
    /// The receiver's signature check, as reports name it.
    pub label: String,
    pub docs: String,
}

/// A package export that makes a request handler from what it is given (better-auth's
/// `toNodeHandler(auth)`): calling the function it returns serves a request with those, and runs
/// the callbacks they were made from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandlerMaker {
    pub id: String,
    pub packages: Vec<String>,
    /// The export called (`default` for a default import).
    pub exports: Vec<String>,
}

/// A library call that runs only the callbacks at some field paths of the options it is given
/// (`getServerSession(req, res, authOptions)` runs `callbacks.session` and `callbacks.jwt`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunsOnly {
    pub id: String,
    pub packages: Vec<String>,
    /// The export called (`default` for a default import).
    pub exports: Vec<String>,
    /// Dotted field paths of the callbacks it runs.
    pub fields: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct HeadersFile {
    names: Vec<String>,
}

/// A known idempotency middleware package. The property flags are read by later rules.
#[derive(Debug, Clone, Deserialize)]
pub struct Middleware {
    pub id: String,
    pub lang: Lang,
    pub packages: Vec<String>,
    #[serde(default)]
    pub label: String,
    #[serde(default)]
    pub docs: String,
    /// What the library's own documentation or source shows of its default behaviour; a
    /// property left out was not verified and is not judged.
    #[serde(default)]
    pub stores_response: Option<bool>,
    #[serde(default)]
    pub hashes_request: Option<bool>,
    /// A different request under a reused key is detected (by a hash or a full comparison).
    #[serde(default)]
    pub compares_request: Option<bool>,
    #[serde(default)]
    pub expiry: Option<bool>,
    #[serde(default)]
    pub scoped_to_principal: Option<bool>,
    #[serde(default)]
    pub atomic_claim: Option<bool>,
    /// A request without the key header is refused (true) or let through (false).
    #[serde(default)]
    pub requires_key: Option<bool>,
    /// A failed (5xx or thrown) response is stored as the key's final answer.
    #[serde(default)]
    pub stores_failures: Option<bool>,
    /// The status a reused key with a different request gets.
    #[serde(default)]
    pub mismatch_status: Option<u16>,
    /// The status a duplicate gets while the first request still runs.
    #[serde(default)]
    pub in_progress_status: Option<u16>,
    /// The longest key accepted, when the library checks it.
    #[serde(default)]
    pub key_max_length: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct MiddlewareFile {
    #[serde(default)]
    middleware: Vec<Middleware>,
}

#[derive(Debug)]
pub struct Catalog {
    pub sinks: Vec<Sink>,
    pub reads: Reads,
    pub relative_update: RelativeUpdate,
    pub sql: SqlCalls,
    /// Lower-cased header names that carry an idempotency key.
    pub key_headers: Vec<String>,
    pub middleware: Vec<Middleware>,
    /// Lower-cased headers that carry a webhook provider's signature.
    pub signature_headers: Vec<String>,
    /// Models or tables where a receiver records the events it has processed.
    pub event_record_models: GlobSet,
    /// Every sink's `idempotency_option`.
    pub key_options: Vec<String>,
    pub served_methods: Vec<ServedMethods>,
    pub runs_only: Vec<RunsOnly>,
    pub handler_makers: Vec<HandlerMaker>,
    /// Webhook controllers packages serve (`rules/webhooks.toml` `[[controller]]`).
    pub controllers: Vec<PackageController>,
    /// Fields that carry a published message's id (`messageId`, `event_id`).
    pub message_id_fields: Vec<String>,
    /// The harm model (`rules/harm.toml`).
    pub harm: harm::Harm,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Names {
    #[serde(default)]
    names: Vec<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct DedupModels {
    #[serde(default)]
    models: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebhooksFile {
    #[serde(default)]
    provider: Vec<Sink>,
    #[serde(default)]
    controller: Vec<PackageController>,
    #[serde(default)]
    signature_headers: Names,
    #[serde(default)]
    dedup: DedupModels,
}

fn parse<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> Result<T, String> {
    toml::from_str(text).map_err(|e| format!("rules/{name}: {e}"))
}

impl Catalog {
    /// A method that reads rows (`findFirst`, `findByEmail`, `isEmailTaken`, `count`).
    pub fn is_read(&self, method: &str) -> bool {
        self.reads.calls.iter().any(|c| match c.strip_suffix('*') {
            Some(prefix) => method
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with(|ch: char| ch.is_ascii_uppercase())),
            None => c == method,
        })
    }

    /// A read that looks a row up (not a count): its result can guard a create.
    pub fn is_lookup(&self, method: &str) -> bool {
        self.is_read(method) && !method.starts_with("count")
    }

    /// A read that answers a list of rows (`repo.find(..)`, `findMany`): the list's length
    /// counts the rows found.
    pub fn is_list_read(&self, method: &str) -> bool {
        self.reads.lists.iter().any(|c| c == method)
    }

    /// The built-in catalogue. Its data ships with the binary, so an error here is a bug in it.
    pub fn builtin() -> Result<Catalog, String> {
        let sinks: SinksFile = parse("sinks.toml", SINKS)?;
        let headers: HeadersFile = parse("headers.toml", HEADERS)?;
        let middleware: MiddlewareFile = parse("middleware.toml", MIDDLEWARE)?;
        let webhooks: WebhooksFile = parse("webhooks.toml", WEBHOOKS)?;
        let mut providers = webhooks.provider;
        for p in &mut providers {
            p.kind = EffectKind::WebhookReceiver;
            p.prepare()
                .map_err(|e| format!("rules/webhooks.toml: {e}"))?;
        }
        let mut dedup = GlobSetBuilder::new();
        for m in &webhooks.dedup.models {
            dedup.add(
                GlobBuilder::new(m)
                    .case_insensitive(true)
                    .build()
                    .map_err(|e| format!("rules/webhooks.toml: dedup model `{m}`: {e}"))?,
            );
        }
        let mut catalog = Catalog {
            signature_headers: webhooks
                .signature_headers
                .names
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
            event_record_models: dedup
                .build()
                .map_err(|e| format!("rules/webhooks.toml: {e}"))?,
            sinks: sinks.sink,
            reads: sinks.reads,
            relative_update: sinks.relative_update,
            sql: sinks.sql,
            key_headers: headers
                .names
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
            middleware: middleware.middleware,
            key_options: Vec::new(),
            served_methods: sinks.served_methods,
            runs_only: sinks.runs_only,
            handler_makers: sinks.handler_makers,
            controllers: webhooks.controller,
            message_id_fields: sinks.message_ids.fields,
            harm: harm::Harm::builtin()?,
        };
        for sink in &mut catalog.sinks {
            sink.prepare()
                .map_err(|e| format!("rules/sinks.toml: {e}"))?;
        }
        // Signature checks are matched like sinks, after them.
        catalog.sinks.extend(providers);
        catalog.collect_key_options();
        Ok(catalog)
    }

    /// Adds a project's own entries (from `retrysafe.toml`, same shapes as `rules/*.toml`). They
    /// come first, so a project's sink wins over a built-in one that matches the same call.
    pub fn extend(
        &mut self,
        mut sinks: Vec<Sink>,
        key_headers: &[String],
        middleware: Vec<Middleware>,
    ) -> Result<(), String> {
        for sink in &mut sinks {
            sink.prepare()?;
        }
        sinks.append(&mut self.sinks);
        self.sinks = sinks;
        self.collect_key_options();
        for h in key_headers {
            let h = h.trim().to_ascii_lowercase();
            if !self.key_headers.contains(&h) {
                self.key_headers.push(h);
            }
        }
        let mut middleware = middleware;
        middleware.append(&mut self.middleware);
        self.middleware = middleware;
        Ok(())
    }

    fn collect_key_options(&mut self) {
        let mut options: Vec<String> = self
            .sinks
            .iter()
            .flat_map(|s| s.idempotency_option.iter().cloned())
            .collect();
        options.sort();
        options.dedup();
        self.key_options = options;
    }

    /// The webhook controller a call `module.call(..)` of package `spec` serves
    /// (`StripeModule.forRootAsync` of `@golevelup/nestjs-stripe`).
    pub fn package_controller(
        &self,
        spec: &str,
        module: &str,
        call: &str,
    ) -> Option<&PackageController> {
        self.controllers.iter().find(|c| {
            package_matches(&c.package, spec)
                && c.module == module
                && c.calls.iter().any(|x| x == call)
        })
    }

    /// The webhook controller whose handlers decorator `name` of package `spec` marks.
    pub fn controller_of_decorator(&self, spec: &str, name: &str) -> Option<&PackageController> {
        self.controllers
            .iter()
            .find(|c| package_matches(&c.package, spec) && c.handler_decorator == name)
    }

    /// The methods a library handler serves, when `export` of package `spec` is one that
    /// serves only some.
    pub fn served_methods(&self, spec: &str, export: &str) -> Option<&[String]> {
        self.served_methods
            .iter()
            .find(|s| exported_by(&s.packages, &s.exports, spec, export))
            .map(|s| s.methods.as_slice())
    }

    /// Does `export` of package `spec` make a request handler from what it is given?
    pub fn makes_handler(&self, spec: &str, export: &str) -> bool {
        self.handler_makers
            .iter()
            .any(|s| exported_by(&s.packages, &s.exports, spec, export))
    }

    /// The field paths of the callbacks a library call runs, when `export` of package `spec`
    /// is one that runs only some of those it is given.
    pub fn runs_only(&self, spec: &str, export: &str) -> Option<&[String]> {
        self.runs_only
            .iter()
            .find(|s| exported_by(&s.packages, &s.exports, spec, export))
            .map(|s| s.fields.as_slice())
    }

    pub fn is_signature_header(&self, name: &str) -> bool {
        let name = name.trim().to_ascii_lowercase();
        self.signature_headers.contains(&name)
    }

    /// Is `model` where a webhook receiver records processed event ids?
    pub fn is_event_record(&self, model: &str) -> bool {
        self.event_record_models.is_match(model)
    }

    /// A provider SDK's idempotency-key option (`idempotencyKey` of stripe-node), from the sinks'
    /// `idempotency_option`s.
    pub fn is_key_option(&self, name: &str) -> bool {
        self.key_options.iter().any(|o| o == name)
    }

    pub fn is_key_header(&self, name: &str) -> bool {
        let name = name.trim().to_ascii_lowercase();
        self.key_headers.contains(&name)
    }

    /// The known middleware whose package is `spec`, if any.
    pub fn middleware_for(&self, lang: Lang, spec: &str) -> Option<&Middleware> {
        self.middleware
            .iter()
            .find(|m| m.lang == lang && m.packages.iter().any(|p| package_matches(p, spec)))
    }
}

/// Method names that write where they are sent, whatever the package or crate (both languages'
/// spellings): a call of one on a package no sink covers is a write the audit does not know the
/// effect of (see [`Catalog::covers_package`]). Not `send` nor `execute`: a client runs any
/// command through them, reads as well as writes (`s3.send(new GetObjectCommand(..))`); nor
/// `insert`, `update`,
/// `save` or `capture`, which in-process values have too (a hasher's `update`, a CRDT's
/// `insert`, a session cookie's or a PDF's `save`, an analytics `capture`).
pub const PACKAGE_WRITES: &[&str] = &[
    "create",
    "createMany",
    "insertOne",
    "insertMany",
    "bulkCreate",
    "bulkWrite",
    "updateOne",
    "updateMany",
    "upsert",
    "destroy",
    "publish",
    "enqueue",
    "charge",
    "pay",
    "payout",
    "transfer",
    "refund",
    "mutate",
    "trigger",
    "sendEmail",
    "sendMail",
    "sendMessage",
    "sendSms",
    "post",
    "put",
    "patch",
    // Rust's spelling
    "send_email",
    "send_mail",
    "send_message",
    "send_sms",
];

/// Verbs a method named for a write of stored state begins with, followed by what it writes
/// (`createInvoice`, `insert_user`, `deleteMembers`, `publishEvent`), each with the last words of
/// names it begins that make or send a value in process instead (`createHash`,
/// `createQueryBuilder`, `sendStatus`, `removeListener`, Rust's `send_timeout`, `insert_str`):
/// see [`names_a_write`].
const WRITE_VERBS: &[(&str, &[&str])] = &[
    (
        "create",
        &[
            "element",
            "context",
            "hash",
            "hmac",
            "cipheriv",
            "decipheriv",
            "stream",
            "server",
            "logger",
            "client",
            "router",
            "app",
            "builder",
            "transport",
            "url",
            "urls",
            "schema",
            "error",
            "proxy",
            "caller",
            "connection",
            "pool",
            "instance",
            "reader",
            "writer",
            "parser",
            "handler",
            "factory",
            "queue",
            "worker",
            "token",
            "id",
            "slug",
            "sign",
            "verify",
            "key",
            "keypair",
            "jwt",
            "node",
            "interface",
            "gzip",
            "gunzip",
            "deflate",
            "inflate",
            "socket",
            "uuid",
            "counter",
            "gauge",
            "histogram",
            "summary",
            "metric",
            "span",
            "timer",
            "signal",
            "controller",
            "store",
            "slice",
            "selector",
            "action",
            "reducer",
            "machine",
            "theme",
            "styles",
            "component",
            "ref",
            "emitter",
            "channel",
            "config",
            "middleware",
            "plugin",
            "agent",
            "template",
            "environment",
            "document",
            "buffer",
            "canvas",
            "range",
            "request",
            "response",
            "headers",
            "adapter",
            "provider",
            "service",
            "repository",
            "module",
            "tracer",
            "meter",
            "loader",
            "resolver",
            "validator",
            // TypeORM's `createQueryRunner()`, `createEntityManager()`: a handle to run queries
            "runner",
            "manager",
        ],
    ),
    (
        "insert",
        &[
            "str", "entry", "before", "after", "html", "text", "node", "child", "row", "rule",
        ],
    ),
    ("update", &["in", "state", "ui", "view", "display"]),
    ("upsert", &[]),
    ("save", &["as", "state"]),
    ("persist", &[]),
    (
        "delete",
        &[
            "property", "in", "listener", "cookie", "header", "trailer", "item",
        ],
    ),
    (
        "remove",
        &[
            "listener",
            "listeners",
            "header",
            "trailer",
            "child",
            "attribute",
            "item",
            "queries",
            "entry",
            "if",
            "matches",
            "class",
            "cookie",
            "property",
        ],
    ),
    ("destroy", &[]),
    ("publish", &[]),
    ("enqueue", &[]),
    ("charge", &[]),
    ("refund", &[]),
    ("invite", &[]),
    (
        "send",
        &[
            "status", "file", "response", "json", "header", "headers", "error", "body", "beacon",
            "data", "to", "timeout", "async", "blocking", "modify", "modified", "replace", "all",
            "chunk", "redirect", "stream",
        ],
    ),
];

/// Is `name` a method named for a write of stored state, on a value the audit cannot see into
/// (`c.var.api.highlights.create(body)`, `collections.orders.insertOne(doc)`): one of
/// [`PACKAGE_WRITES`] but `destroy` (a stream's, a socket's, a session's), `enqueue` (a
/// `ReadableStream` controller's) and `publish` (an in-process pub/sub's), or a verb of
/// [`WRITE_VERBS`] followed by what it writes unless that is a value in process?
pub fn names_a_write(name: &str) -> bool {
    if PACKAGE_WRITES.contains(&name) {
        return !matches!(name, "destroy" | "enqueue" | "publish");
    }
    // `buildAndSendEmail`, `validate_and_create_user`: verbs joined by "and", one a write
    let joined: Vec<String> = if let Some((_, rest)) = name.split_once("_and_") {
        vec![rest.to_string()]
    } else {
        name.match_indices("And")
            .filter(|(i, _)| {
                name[..*i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_lowercase())
                    && name[i + 3..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_uppercase())
            })
            .map(|(i, _)| {
                let rest = &name[i + 3..];
                let mut part = rest[..1].to_ascii_lowercase();
                part.push_str(&rest[1..]);
                part
            })
            .collect()
    };
    if joined.iter().any(|part| names_a_write(part)) {
        return true;
    }
    WRITE_VERBS.iter().any(|(verb, in_process)| {
        let Some(rest) = name.strip_prefix(verb) else {
            return false;
        };
        // the verb is a word of its own: `createInvoice`, `insert_user`, not `created`
        let boundary = rest
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_uppercase() || c == '_');
        let last = crate::facts::key::words::split(rest).pop();
        boundary && last.is_some_and(|w| !in_process.contains(&w.as_str()))
    })
}

/// Is `name` a method named for creating a stored record (`create`, `insertOne`, `createUser`,
/// `insert_token`): one of [`names_a_write`] whose verb is `create` or `insert`.
pub fn names_a_create(name: &str) -> bool {
    names_a_write(name) && (name.starts_with("create") || name.starts_with("insert"))
}

/// A module of Node's own (`fs`, `node:crypto`, `fs/promises`): not a package the catalogue
/// would list.
pub fn node_builtin(spec: &str) -> bool {
    const BUILTINS: &[&str] = &[
        "assert",
        "buffer",
        "child_process",
        "cluster",
        "crypto",
        "dgram",
        "dns",
        "events",
        "fs",
        "http",
        "http2",
        "https",
        "net",
        "os",
        "path",
        "perf_hooks",
        "process",
        "querystring",
        "readline",
        "stream",
        "string_decoder",
        "timers",
        "tls",
        "url",
        "util",
        "v8",
        "vm",
        "worker_threads",
        "zlib",
    ];
    let spec = spec.strip_prefix("node:").unwrap_or(spec);
    let base = spec.split('/').next().unwrap_or(spec);
    BUILTINS.contains(&base)
}

/// A package of the web framework itself, or a subpath import of the project's own
/// (`#server/db`, from package.json `imports`): no SDK whose writes the catalogue would list.
pub fn framework_package(spec: &str) -> bool {
    spec.starts_with('#')
        || spec == "next"
        || spec.starts_with("next/")
        || spec.starts_with("@nestjs/")
        || spec.starts_with("@trpc/")
        || spec == "react"
        || spec.starts_with("react/")
        || spec.starts_with("react-dom")
}

impl Catalog {
    /// Does a sink of `lang` name package `spec`? A call of such a package that no sink matches
    /// is one the catalogue knows to write nothing worth reporting.
    pub fn covers_package(&self, lang: Lang, spec: &str) -> bool {
        self.sinks
            .iter()
            .any(|s| s.lang == lang && s.origin_matches(spec))
    }
}

impl Sink {
    /// Checks the entry and compiles its `roots` globs. The error names the sink and the field.
    pub fn prepare(&mut self) -> Result<(), String> {
        let mut set = GlobSetBuilder::new();
        for root in &self.roots {
            let glob = GlobBuilder::new(root)
                .case_insensitive(true)
                .build()
                .map_err(|e| format!("sink `{}`: root `{root}`: {e}", self.id))?;
            set.add(glob);
        }
        self.roots_set = Some(
            set.build()
                .map_err(|e| format!("sink `{}`: {e}", self.id))?,
        );
        if self.calls.is_empty() && self.constructs.is_empty() {
            return Err(format!(
                "sink `{}` has neither `calls` nor `constructs`",
                self.id
            ));
        }
        Ok(())
    }
    pub fn origin_matches(&self, spec: &str) -> bool {
        self.packages.iter().any(|p| package_matches(p, spec))
    }
    /// Does the receiver's origin path (the calls that produced it) satisfy `receiver_from`?
    pub fn receiver_matches(&self, origin_path: &[String]) -> bool {
        self.receiver_from.is_empty()
            || origin_path.iter().any(|seg| {
                self.receiver_from
                    .iter()
                    .any(|p| match p.strip_suffix('*') {
                        Some(prefix) => seg.starts_with(prefix),
                        None => seg == p,
                    })
            })
    }
    /// Does the receiver's name match `roots`? A private or internal field (`this.#db`,
    /// `this._db`) goes by its name without the mark.
    pub fn root_matches(&self, name: &str) -> bool {
        let name = name.trim_start_matches(['#', '_']);
        !name.is_empty() && self.roots_set.as_ref().is_some_and(|s| s.is_match(name))
    }
    /// Does the member path after the root match one of `calls`? `hops` are the path lengths at
    /// which the chain was called: the pattern may match the whole path or any suffix after a hop.
    pub fn call_matches(&self, path: &[String], hops: &[usize]) -> Option<&str> {
        let starts = std::iter::once(0).chain(hops.iter().copied());
        for start in starts {
            if start > path.len() {
                continue;
            }
            let tail = &path[start..];
            if let Some(p) = self.calls.iter().find(|p| pattern_matches(p, tail)) {
                return Some(p);
            }
        }
        None
    }
}

/// `export` of package `spec` is one of `exports` of one of `packages`.
fn exported_by(packages: &[String], exports: &[String], spec: &str, export: &str) -> bool {
    packages.iter().any(|p| package_matches(p, spec)) && exports.iter().any(|e| e == export)
}

/// `pkg` matches `spec` exactly or as a prefix on a `/` boundary.
pub fn package_matches(pkg: &str, spec: &str) -> bool {
    spec == pkg || (spec.starts_with(pkg) && spec.as_bytes().get(pkg.len()) == Some(&b'/'))
}

/// Segment pattern: `*` one segment, `**` any number, "" the empty path.
pub fn pattern_matches(pattern: &str, path: &[String]) -> bool {
    if pattern.is_empty() {
        return path.is_empty();
    }
    let pat: Vec<&str> = pattern.split('.').collect();
    fn go(pat: &[&str], path: &[String]) -> bool {
        match pat.first() {
            None => path.is_empty(),
            Some(&"**") => (0..=path.len()).any(|i| go(&pat[1..], &path[i..])),
            Some(p) => {
                !path.is_empty() && (*p == "*" || *p == path[0]) && go(&pat[1..], &path[1..])
            }
        }
    }
    go(&pat, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_names_of_values_not_seen() {
        for w in [
            "create",
            "upsert",
            "insertOne",
            "createInvoice",
            "insert_user",
            "deleteMembers",
            "sendWelcomeEmail",
            "publishEvent",
            "updateOrderStatus",
            "update_status",
            "deleteFile",
            "removeFile",
            "deleteToken",
            "createMilestone",
            "create_milestone",
            "charge",
            "pay",
            "post",
            "buildAndSendEmail",
            "validate_and_create_user",
            "checkAndChargeCard",
        ] {
            assert!(names_a_write(w), "{w}");
        }
        for n in [
            "destroy",
            "enqueue",
            "publish",
            "createHash",
            "createQueryBuilder",
            "createLogger",
            "sendStatus",
            "sendFile",
            "removeListener",
            "removeEventListener",
            "createReadStream",
            "create_read_stream",
            "create_signed_url",
            "create_access_token",
            "createJWT",
            "createSign",
            "createPrivateKey",
            "createTextNode",
            "removeChild",
            "insertBefore",
            "insertAdjacentHTML",
            "removeQueries",
            "updateIn",
            "createInterface",
            "createGzip",
            "createCounter",
            "saveAs",
            "send_timeout",
            "send_async",
            "send_to",
            "insert_str",
            "remove_entry",
            "remove_if",
            "send_modify",
            "created",
            "updated",
            "sender",
            "update",
            "insert",
            "save",
            "send",
            "remove",
            "delete",
            "buildAndSendStatus",
            "findAndCount",
            "getAndSet",
            "Andorra",
        ] {
            assert!(!names_a_write(n), "{n}");
        }
    }

    #[test]
    fn creates_are_the_writes_that_make_a_record() {
        for w in [
            "create",
            "createUser",
            "create_invoice",
            "insertOne",
            "insert_notification",
        ] {
            assert!(names_a_create(w), "{w}");
        }
        // a map's `insert`, a value made in process, and writes of another kind
        for n in [
            "insert",
            "createHash",
            "create_router",
            "updateUser",
            "save",
            "sendEmail",
        ] {
            assert!(!names_a_create(n), "{n}");
        }
    }

    fn p(s: &str) -> Vec<String> {
        if s.is_empty() {
            vec![]
        } else {
            s.split('.').map(String::from).collect()
        }
    }

    #[test]
    fn patterns() {
        assert!(pattern_matches(
            "paymentIntents.create",
            &p("paymentIntents.create")
        ));
        assert!(pattern_matches("*.create", &p("user.create")));
        assert!(!pattern_matches("*.create", &p("create")));
        assert!(pattern_matches("**.update", &p("where.andWhere.update")));
        assert!(pattern_matches("", &p("")));
        assert!(!pattern_matches("", &p("post")));
    }

    #[test]
    fn packages() {
        assert!(package_matches("drizzle-orm", "drizzle-orm/node-postgres"));
        assert!(!package_matches("drizzle", "drizzle-orm"));
    }

    #[test]
    fn builtin_loads() {
        let c = Catalog::builtin().unwrap();
        assert!(c.is_key_header("Idempotency-Key"));
        assert!(!c.sinks.is_empty());
    }
}
