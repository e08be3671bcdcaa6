//! The harm model's data (`rules/harm.toml`): model names, URLs, provider semantics and intent
//! words that refine what a duplicate of an effect would do. Loaded and validated like the other
//! catalogue files; the judgement that reads it is `link::harm`.

use crate::facts::Impact;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

pub const HARM: &str = include_str!("../../rules/harm.toml");

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Models {
    #[serde(default)]
    record: Vec<String>,
    #[serde(default)]
    bookkeeping: Vec<String>,
    #[serde(default)]
    ledger: Vec<String>,
    #[serde(default)]
    job: Vec<String>,
    #[serde(default)]
    issued: Vec<String>,
}

/// URLs an HTTP call may be made to, or fields of the request it sends, and what a repeat of it
/// does.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Http {
    pub id: String,
    /// Globs over the URL as written; none: any URL.
    #[serde(default)]
    pub urls: Vec<String>,
    /// Conditions on the call's arguments and request body, one of which must hold (a field
    /// the request sends: `body.grant_type`); none: any request.
    #[serde(default)]
    pub any: Vec<Cond>,
    pub impact: Impact,
    pub detail: String,
    /// The service accepts what the request sends once (a captcha token, an OAuth
    /// authorization code): a retry of the same request is refused there, so the effects that
    /// run after the call do not run again.
    #[serde(default)]
    pub single_use: bool,
    #[serde(skip)]
    set: Option<GlobSet>,
}

/// One condition on a provider call's arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cond {
    /// The field, dotted one level deep; alternatives separated by `|`.
    pub arg: String,
    #[serde(default)]
    pub equals: Vec<String>,
    #[serde(default)]
    pub present: bool,
    #[serde(default)]
    pub absent: bool,
    /// With `present`: the value must come from the request, not be made by a call in it (an
    /// invoice the client sends is paid once; one the request fetches afresh is a new invoice
    /// on every retry).
    #[serde(default)]
    pub from_request: bool,
}

/// A provider call whose arguments decide what a repeat does.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    pub id: String,
    /// Suffixes of the call as written, on `.` boundaries.
    pub calls: Vec<String>,
    #[serde(default)]
    pub all: Vec<Cond>,
    #[serde(default)]
    pub any: Vec<Cond>,
    pub impact: Impact,
    pub detail: String,
    /// As [`Http::single_use`]: the provider accepts what the call sends once (Stripe Connect's
    /// authorization code), so what runs after the call runs once.
    #[serde(default)]
    pub single_use: bool,
    /// Calls that complete what this call made when the same request makes them too (a
    /// PaymentIntent confirmed by the request that created it): then the entry does not hold.
    #[serde(default)]
    pub unless_request_calls: Vec<String>,
}

/// Functions by name: a write made on behalf of one of these is bookkeeping; a publish made
/// through one named for re-deriving state is bookkeeping; a message sent through one named for
/// a one-time credential is asked for.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Functions {
    #[serde(default)]
    bookkeeping: Vec<String>,
    #[serde(default)]
    derived: Vec<String>,
    #[serde(default)]
    metering: Vec<String>,
    #[serde(default)]
    credential: Vec<String>,
    #[serde(default)]
    message: Vec<String>,
}

/// Name globs, compiled, each kept with its text to cite.
#[derive(Debug, Default)]
pub struct Patterns {
    list: Vec<String>,
    set: GlobSet,
}

impl Patterns {
    fn new(patterns: &[String], what: &str) -> Result<Patterns, String> {
        let globs: Vec<(String, Glob)> = patterns
            .iter()
            .map(|p| Ok((p.clone(), glob(&p.to_ascii_lowercase(), what)?)))
            .collect::<Result<_, String>>()?;
        Ok(Patterns {
            list: patterns.to_vec(),
            set: set(&globs)?,
        })
    }

    /// The first pattern a name (in its normal form, see [`model_name`]) matches.
    fn first(&self, name: &str) -> Option<&str> {
        let first = *self.set.matches(model_name(name)).first()?;
        Some(self.list[first].as_str())
    }

    /// The first pattern any form of a model's name matches (see [`model_forms`]).
    fn first_model(&self, name: &str) -> Option<&str> {
        model_forms(name).iter().find_map(|n| {
            let first = *self.set.matches(n).first()?;
            Some(self.list[first].as_str())
        })
    }
}

/// HTTP methods whose repeat leaves the state the first call left.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct HttpMethods {
    #[serde(default)]
    idempotent: Vec<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Intent {
    #[serde(default)]
    repeat: Vec<String>,
    #[serde(default)]
    message: Vec<String>,
    #[serde(default)]
    session: Vec<String>,
}

/// Fields a relative update changes, by name: counters are bookkeeping, values are not.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Fields {
    #[serde(default)]
    value: Vec<String>,
    #[serde(default)]
    counter: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HarmFile {
    #[serde(default)]
    models: Models,
    #[serde(default)]
    fields: Fields,
    #[serde(default)]
    functions: Functions,
    #[serde(default)]
    http: Vec<Http>,
    #[serde(default)]
    http_methods: HttpMethods,
    #[serde(default)]
    provider: Vec<Provider>,
    #[serde(default)]
    intent: Intent,
}

/// The compiled harm catalogue.
#[derive(Debug, Default)]
pub struct Harm {
    record_models: Vec<(String, Glob)>,
    bookkeeping_models: Vec<(String, Glob)>,
    record_set: GlobSet,
    bookkeeping_set: GlobSet,
    bookkeeping_functions: Patterns,
    /// Usage metering: a counter incremented through one of these counts what was used.
    metering_functions: Patterns,
    /// Matched on a function's own name (`index_pending_collab`, not its type's).
    derived_functions: Patterns,
    credential_functions: Patterns,
    /// Matched on a function's own name and on a queue's name: a job published through or to
    /// one of these is a message to a person (`sendWelcomeEmail → queue.add`, `emailQueue`).
    message_functions: Patterns,
    /// Models a provider's payment is booked into (`transaction`, `*ledger*`).
    ledger_models: Patterns,
    /// Job tables of a queue kept in the application's database (`background_jobs`).
    job_models: Patterns,
    /// Rows a sign-in issues to the caller (`token`, `*challenge`): bookkeeping when a sign-in
    /// writes them, records (an API token) otherwise.
    issued_models: Patterns,
    value_fields: Patterns,
    counter_fields: Patterns,
    pub http: Vec<Http>,
    /// Upper-case HTTP methods idempotent by definition (`PUT`, `DELETE`).
    pub idempotent_methods: Vec<String>,
    pub providers: Vec<Provider>,
    /// Words naming an explicit repeat (`resend`, `test`).
    pub repeat_words: Vec<String>,
    /// Words naming a request whose message is sent each time it is asked (`login`, `forgot`).
    pub message_words: Vec<String>,
    /// Words naming a sign-in or a session's refresh (`login`, `authrefresh`).
    pub session_words: Vec<String>,
}

fn glob(p: &str, what: &str) -> Result<Glob, String> {
    GlobBuilder::new(p)
        .case_insensitive(true)
        .literal_separator(false)
        .build()
        .map_err(|e| format!("{what} `{p}`: {e}"))
}

fn set(globs: &[(String, Glob)]) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for (_, g) in globs {
        b.add(g.clone());
    }
    b.build().map_err(|e| e.to_string())
}

/// A model or table name as the model patterns see it: lower case, letters and digits only.
pub fn model_name(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Words that name where a model's rows are kept, not the model: `sessionRepository`,
/// `authorModel`, `users_table` are the `session`, `author` and `users` models.
const HOLDER_SUFFIXES: &[&str] = &[
    "repository",
    "repositories",
    "repo",
    "repos",
    "model",
    "models",
    "collection",
    "table",
    "dao",
    "entity",
    "entities",
];

/// The forms of a model's name the model patterns are tried on, in order: the whole name
/// ([`model_name`]); the name without a schema or namespace (`iam.token` → `token`,
/// `public.orders` → `orders`); each without a word naming where the rows are kept
/// (`ephemeralSessionRepository` → `ephemeralsession`).
pub fn model_forms(name: &str) -> Vec<String> {
    let mut out = vec![model_name(name)];
    let own = model_name(name.rsplit(['.', ':']).next().unwrap_or(name));
    if !own.is_empty() && !out.contains(&own) {
        out.push(own);
    }
    for i in 0..out.len() {
        let stripped = HOLDER_SUFFIXES
            .iter()
            .find_map(|s| out[i].strip_suffix(s).filter(|r| r.len() >= 3));
        if let Some(r) = stripped
            && !out.iter().any(|o| o == r)
        {
            out.push(r.to_string());
        }
    }
    out
}

impl Harm {
    pub fn builtin() -> Result<Harm, String> {
        Harm::parse(HARM).map_err(|e| format!("rules/harm.toml: {e}"))
    }

    fn parse(text: &str) -> Result<Harm, String> {
        let file: HarmFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut harm = Harm {
            http: file.http,
            idempotent_methods: file
                .http_methods
                .idempotent
                .iter()
                .map(|m| m.to_ascii_uppercase())
                .collect(),
            providers: file.provider,
            repeat_words: file.intent.repeat,
            message_words: file.intent.message,
            session_words: file.intent.session,
            ..Harm::default()
        };
        harm.add_models(&file.models.record, &file.models.bookkeeping)?;
        harm.bookkeeping_functions =
            Patterns::new(&file.functions.bookkeeping, "bookkeeping function")?;
        harm.derived_functions = Patterns::new(&file.functions.derived, "derived function")?;
        harm.metering_functions = Patterns::new(&file.functions.metering, "metering function")?;
        harm.credential_functions =
            Patterns::new(&file.functions.credential, "credential function")?;
        harm.message_functions = Patterns::new(&file.functions.message, "message function")?;
        harm.ledger_models = Patterns::new(&file.models.ledger, "ledger model")?;
        harm.job_models = Patterns::new(&file.models.job, "job model")?;
        harm.issued_models = Patterns::new(&file.models.issued, "issued model")?;
        harm.value_fields = Patterns::new(&file.fields.value, "value field")?;
        harm.counter_fields = Patterns::new(&file.fields.counter, "counter field")?;
        for h in &mut harm.http {
            if h.urls.is_empty() && h.any.is_empty() {
                return Err(format!("http `{}` has neither `urls` nor `any`", h.id));
            }
            Cond::check_all(&h.any, &format!("http `{}`", h.id))?;
            let globs: Vec<(String, Glob)> = h
                .urls
                .iter()
                .map(|u| Ok((u.clone(), glob(u, &format!("http `{}`: url", h.id))?)))
                .collect::<Result<_, String>>()?;
            h.set = Some(set(&globs)?);
        }
        for p in &harm.providers {
            if p.calls.is_empty() {
                return Err(format!("provider `{}` has no `calls`", p.id));
            }
            Cond::check_all(p.all.iter().chain(&p.any), &format!("provider `{}`", p.id))?;
        }
        Ok(harm)
    }

    /// Adds model patterns (a project's `[harm]` in `retrysafe.toml`); a project's `record`
    /// patterns also win over the built-in `bookkeeping` ones.
    pub fn add_models(&mut self, record: &[String], bookkeeping: &[String]) -> Result<(), String> {
        for p in record {
            self.record_models
                .push((p.clone(), glob(&p.to_ascii_lowercase(), "record model")?));
        }
        for p in bookkeeping {
            self.bookkeeping_models.push((
                p.clone(),
                glob(&p.to_ascii_lowercase(), "bookkeeping model")?,
            ));
        }
        self.record_set = set(&self.record_models)?;
        self.bookkeeping_set = set(&self.bookkeeping_models)?;
        Ok(())
    }

    /// The bookkeeping pattern a model's name matches, unless a record pattern claims it.
    pub fn bookkeeping_model(&self, name: &str) -> Option<&str> {
        let forms = model_forms(name);
        if forms[0].is_empty() || forms.iter().any(|n| self.record_set.is_match(n)) {
            return None;
        }
        let first = forms
            .iter()
            .find_map(|n| self.bookkeeping_set.matches(n).first().copied())?;
        Some(self.bookkeeping_models[first].0.as_str())
    }

    /// The pattern a model's name matches when it holds what a sign-in issues to the caller
    /// (a session's tokens, a sign-in challenge), unless a record pattern claims it.
    pub fn issued_model(&self, name: &str) -> Option<&str> {
        if model_forms(name)
            .iter()
            .any(|n| self.record_set.is_match(n))
        {
            return None;
        }
        self.issued_models.first_model(name)
    }

    /// The bookkeeping pattern a function's name matches (`flushAuditEvents`, `log_activity`).
    pub fn bookkeeping_function(&self, name: &str) -> Option<&str> {
        self.bookkeeping_functions.first(name)
    }

    /// The metering pattern a function's name matches (`saveAiUsage`, `record_api_usage`).
    pub fn metering_function(&self, name: &str) -> Option<&str> {
        self.metering_functions.first(name)
    }

    /// The pattern a function's own name matches when it re-derives state from rows that are
    /// already written (`index_pending_collab`, `reindexDocument`, `generateEmbeddings`).
    pub fn derived_function(&self, name: &str) -> Option<&str> {
        self.derived_functions.first(own_name(name))
    }

    /// The pattern a function's own name matches when it sends a one-time credential: a
    /// verification or confirmation link, a reset link, a sign-in code (`sendVerificationEmail`,
    /// `MailService.confirmNewEmail`).
    pub fn credential_function(&self, name: &str) -> Option<&str> {
        self.credential_functions.first(own_name(name))
    }

    /// The pattern a function's own name, or a queue's name, matches when a job published
    /// through or to it is a message to a person (`sendInvoiceEmail`, `notificationQueue`).
    pub fn message_function(&self, name: &str) -> Option<&str> {
        self.message_functions.first(own_name(name))
    }

    /// The pattern a model's name matches when it is a ledger money is booked into
    /// (`Transaction`, `ledger_entries`).
    pub fn ledger_model(&self, name: &str) -> Option<&str> {
        self.ledger_models.first_model(name)
    }

    /// The pattern a model's name matches when it is the job table of a queue kept in the
    /// application's database (`background_jobs`, `delayed_jobs`).
    pub fn job_model(&self, name: &str) -> Option<&str> {
        self.job_models.first_model(name)
    }

    /// The value pattern the first of `fields` that is a value a person holds matches
    /// (`credits`, `balance`).
    pub fn value_fields(&self, fields: &[String]) -> Option<&str> {
        fields.iter().find_map(|f| self.value_fields.first(f))
    }

    /// The counter pattern of each field a relative update changes, when every one is a
    /// counter and none a value a person holds (`useCount`, `nameHistory`; not `credits`).
    pub fn counter_fields(&self, fields: &[String]) -> Option<Vec<&str>> {
        if fields.is_empty() {
            return None;
        }
        fields
            .iter()
            .map(|f| {
                if self.value_fields.first(f).is_some() {
                    None
                } else {
                    self.counter_fields.first(f)
                }
            })
            .collect()
    }

    /// The first `[[http]]` entry an HTTP call matches: by its URL as written (an entry with
    /// URL patterns needs a URL that matches one) and by the fields it sends.
    pub fn http_for(&self, url: Option<&str>, args: &[(String, Option<String>)]) -> Option<&Http> {
        let url = url.map(str::to_ascii_lowercase);
        self.http.iter().find(|h| {
            let by_url = h.urls.is_empty()
                || url
                    .as_deref()
                    .is_some_and(|u| h.set.as_ref().is_some_and(|s| s.is_match(u)));
            by_url && (h.any.is_empty() || h.any.iter().any(|c| c.holds(args)))
        })
    }

    /// The HTTP method an outbound call is made with: its options' `method` literal
    /// (`fetch(url, { method: 'PUT' })`), else the verb the client's chain names
    /// (`axios.put(..)`, `client.delete(url).send()`).
    pub fn http_method(callee: &str, args: &[(String, Option<String>)]) -> Option<String> {
        if let Some((_, Some(m))) = args.iter().find(|(k, _)| k == "method") {
            return Some(m.to_ascii_uppercase());
        }
        call_path(callee)
            .split('.')
            .skip(1)
            .find(|s| matches!(*s, "get" | "post" | "put" | "patch" | "delete"))
            .map(|s| s.to_ascii_uppercase())
    }

    /// Whether an outbound call's HTTP method is idempotent by definition.
    pub fn idempotent_method(
        &self,
        callee: &str,
        args: &[(String, Option<String>)],
    ) -> Option<String> {
        Self::http_method(callee, args).filter(|m| self.idempotent_methods.contains(m))
    }

    /// The first `[[provider]]` entry whose call and conditions hold; `request_calls` are the
    /// other calls the same request makes (see [`Provider::unless_request_calls`]), each as
    /// [`call_path`] gives it.
    pub fn provider_for(
        &self,
        callee: &str,
        args: &[(String, Option<String>)],
        made: &[String],
        request_calls: &[String],
    ) -> Option<&Provider> {
        // The pattern is a run of the call's segments: a chain may go on after the call
        // (`Refund::create(..).map_err(..)`, `.then(..)`).
        let runs = |path: &str, c: &str| format!(".{path}.").contains(&format!(".{c}."));
        let path = call_path(callee);
        self.providers.iter().find(|p| {
            p.calls.iter().any(|c| runs(&path, c))
                && p.all.iter().all(|c| c.holds_made(args, made))
                && (p.any.is_empty() || p.any.iter().any(|c| c.holds_made(args, made)))
                && !p
                    .unless_request_calls
                    .iter()
                    .any(|c| request_calls.iter().any(|r| runs(r, c)))
        })
    }
}

/// A function's own name: `confirmNewEmail` of `MailService.confirmNewEmail`, `add` of
/// `store::add`.
fn own_name(name: &str) -> &str {
    name.rsplit(['.', ':']).next().unwrap_or(name)
}

/// A form-encoded string's fields (`grant_type=client_credentials&scope=a`), when the whole
/// string is one: a request body sent as a string, read as the fields it sends.
pub fn form_fields(s: &str) -> Option<Vec<(String, String)>> {
    if s.is_empty() || s.contains([' ', '\n', '/', '{', '"']) {
        return None;
    }
    s.split('&')
        .map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let name = !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']'));
            name.then(|| (k.to_string(), v.to_string()))
        })
        .collect()
}

/// A call as written, reduced to its member path in either language: arguments dropped, `::`
/// read as `.`, `?` and `.await` dropped (`PaymentIntent::create(&c, p).await?` →
/// `PaymentIntent.create`, `stripe.checkout.sessions.create({..})` →
/// `stripe.checkout.sessions.create`).
pub fn call_path(callee: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for ch in callee.chars() {
        match ch {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            '?' | ' ' | '\n' => {}
            _ => out.push(ch),
        }
    }
    out.replace("::", ".")
        .replace(".await", "")
        .trim_matches('.')
        .to_string()
}

impl Cond {
    /// Each condition names exactly one test.
    fn check_all<'c>(conds: impl IntoIterator<Item = &'c Cond>, owner: &str) -> Result<(), String> {
        for c in conds {
            let kinds =
                usize::from(!c.equals.is_empty()) + usize::from(c.present) + usize::from(c.absent);
            if kinds != 1 {
                return Err(format!(
                    "{owner}: condition on `{}` needs exactly one of `equals`, `present`, `absent`",
                    c.arg
                ));
            }
        }
        Ok(())
    }

    fn holds(&self, args: &[(String, Option<String>)]) -> bool {
        self.holds_made(args, &[])
    }

    /// [`Cond::holds`], where `made` names the fields whose value a call in the request made.
    fn holds_made(&self, args: &[(String, Option<String>)], made: &[String]) -> bool {
        if self.present
            && self.from_request
            && self
                .arg
                .split('|')
                .map(str::trim)
                .all(|n| made.iter().any(|m| m == n) || !args.iter().any(|(k, _)| k == n))
        {
            return false;
        }
        let names: Vec<&str> = self.arg.split('|').map(str::trim).collect();
        let found: Vec<&Option<String>> = args
            .iter()
            .filter(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v)
            .collect();
        if self.absent {
            return found.is_empty();
        }
        if self.present {
            return !found.is_empty();
        }
        found.iter().any(|v| {
            v.as_ref()
                .is_some_and(|v| self.equals.iter().any(|e| e.eq_ignore_ascii_case(v)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect()
    }

    #[test]
    fn the_builtin_harm_catalogue_loads() {
        let h = Harm::builtin().unwrap();
        assert!(!h.http.is_empty() && !h.providers.is_empty());
    }

    #[test]
    fn model_names_without_their_schema_or_holder() {
        assert_eq!(model_forms("iam.token"), vec!["iamtoken", "token"]);
        assert_eq!(
            model_forms("ephemeralSessionRepository"),
            vec!["ephemeralsessionrepository", "ephemeralsession"]
        );
        assert_eq!(
            model_forms("Database.authorModel"),
            vec![
                "databaseauthormodel",
                "authormodel",
                "databaseauthor",
                "author"
            ]
        );
        // A suffix that is the whole name is the name.
        assert_eq!(model_forms("Model"), vec!["model"]);
        let h = Harm::builtin().unwrap();
        assert!(h.bookkeeping_model("revokedSessionRepository").is_some());
        assert!(h.bookkeeping_model("blogRepository").is_none());
        assert!(h.ledger_model("public.orders").is_some());
        assert!(h.job_model("app.background_jobs").is_some());
        assert!(h.job_model("queue_jobs").is_some());
        // A queue library's own table, with its schema (pg-boss, Graphile Worker)
        assert!(h.job_model("pgboss.job").is_some());
        assert!(h.job_model("graphile_worker.jobs").is_some());
        assert!(h.job_model("job").is_none());
        // What a sign-in issues, and what it does not (an API token is a record).
        assert!(h.issued_model("auth.token").is_some());
        assert!(h.issued_model("assertion_challenges").is_some());
        assert!(h.issued_model("apiTokenRepository").is_none());
        assert!(h.issued_model("invoice").is_none());
    }

    #[test]
    fn models_by_name_with_records_first() {
        let h = Harm::builtin().unwrap();
        assert!(h.bookkeeping_model("AuditLog").is_some());
        assert!(h.bookkeeping_model("audit_logs").is_some());
        assert!(h.bookkeeping_model("Session").is_some());
        assert!(h.bookkeeping_model("Event").is_some());
        assert!(h.bookkeeping_model("Order").is_none());
        assert!(h.bookkeeping_model("Invite").is_none());
        assert!(h.bookkeeping_model("EventType").is_none());
        assert!(h.bookkeeping_model("ApiKey").is_none());
        assert!(h.bookkeeping_model("JourneyChange").is_some());
        assert!(h.bookkeeping_model("order_status_history").is_some());
        assert!(h.bookkeeping_model("CurrencyExchange").is_none());
        assert!(h.bookkeeping_model("EmailVerification").is_some());
        assert!(h.bookkeeping_model("activation_codes").is_some());
        assert!(h.bookkeeping_model("VerificationCode").is_some());
        assert!(h.credential_function("send_activation_code").is_some());
        assert!(h.credential_function("sendActivationEmail").is_some());
        assert!(h.bookkeeping_function("flushAuditEvents").is_some());
        assert!(h.bookkeeping_function("record_failed_attempt").is_some());
        assert!(h.bookkeeping_function("trackSignupConversion").is_some());
        assert!(h.bookkeeping_function("login").is_none());
        assert!(h.bookkeeping_function("logWorkout").is_none());
        assert!(h.bookkeeping_function("createSession").is_none());
        assert!(h.bookkeeping_function("trackShipment").is_none());
        assert!(h.bookkeeping_function("bulkCreateTrackerEntries").is_none());
        assert!(h.metering_function("saveAiUsage").is_some());
        assert!(h.metering_function("record_api_usage").is_some());
        assert!(h.metering_function("getUsageLimits").is_none());
        assert!(h.bookkeeping_function("saveAiUsage").is_none());
    }

    #[test]
    fn idempotent_http_methods() {
        let h = Harm::builtin().unwrap();
        let put = args(&[("method", Some("put")), ("body", None)]);
        assert_eq!(h.idempotent_method("fetch", &put).as_deref(), Some("PUT"));
        assert_eq!(
            h.idempotent_method("axios.delete", &[]).as_deref(),
            Some("DELETE")
        );
        assert_eq!(
            h.idempotent_method("state.http.put().json().send()", &[])
                .as_deref(),
            Some("PUT")
        );
        assert!(
            h.idempotent_method("fetch", &args(&[("method", Some("POST"))]))
                .is_none()
        );
        assert!(
            h.idempotent_method("reqwest::Client::new.post().send()", &[])
                .is_none()
        );
        // The verb is a segment after the root: a client named `put` is not a PUT.
        assert!(h.idempotent_method("put.create", &[]).is_none());
    }

    #[test]
    fn urls_and_provider_arguments() {
        let h = Harm::builtin().unwrap();
        let verify = h
            .http_for(Some("https://www.google.com/recaptcha/api/siteverify"), &[])
            .unwrap();
        assert_eq!(verify.impact, Impact::Read);
        assert_eq!(
            h.http_for(
                Some("https://api.transferwise.com/v3/profiles/${id}/batch-groups/${g}/payments"),
                &[]
            )
            .unwrap()
            .impact,
            Impact::Money
        );
        assert!(
            h.http_for(Some("https://api.example.com/orders"), &[])
                .is_none()
        );
        // A token request shows in the fields it sends, whatever the URL (RFC 6749, 4.1.3).
        let grant = args(&[
            ("method", Some("POST")),
            ("body.grant_type", Some("refresh_token")),
        ]);
        assert_eq!(h.http_for(None, &grant).unwrap().id, "oauth-token-request");
        assert_eq!(
            h.http_for(Some("${}/connect"), &args(&[("form.grant_type", None)]))
                .unwrap()
                .id,
            "oauth-token-request"
        );
        assert!(h.http_for(None, &args(&[("body.grant", None)])).is_none());
        // GitHub's exchange sends the code without a grant: still a code, accepted once.
        let github = Some("https://github.com/login/oauth/access_token");
        let by_code = h.http_for(github, &args(&[("body.code", None)])).unwrap();
        assert_eq!(by_code.id, "oauth-code-exchange-by-code");
        assert!(by_code.single_use);
        let no_code = h
            .http_for(github, &args(&[("body.refresh_token", None)]))
            .unwrap();
        assert_eq!(no_code.id, "oauth-token");
        assert!(!no_code.single_use);
        let connect = h
            .provider_for(
                "stripe.oauth.token",
                &args(&[("grant_type", Some("authorization_code"))]),
                &[],
                &[],
            )
            .unwrap();
        assert!(connect.single_use);
        let setup = args(&[("mode", Some("setup")), ("customer", None)]);
        assert_eq!(
            h.provider_for("stripe.checkout.sessions.create", &setup, &[], &[])
                .unwrap()
                .id,
            "stripe-checkout-setup"
        );
        let pay = args(&[("mode", Some("payment"))]);
        assert_eq!(
            h.provider_for("stripe.checkout.sessions.create", &pay, &[], &[])
                .unwrap()
                .impact,
            Impact::Pending
        );
        assert!(
            h.provider_for("stripe.paymentIntents.create", &pay, &[], &[])
                .is_none()
        );
        let full = args(&[("charge", None)]);
        assert_eq!(
            h.provider_for("stripe.refunds.create", &full, &[], &[])
                .unwrap()
                .impact,
            Impact::Read
        );
        let partial = args(&[("charge", None), ("amount", None)]);
        assert!(
            h.provider_for("stripe.refunds.create", &partial, &[], &[])
                .is_none()
        );
    }

    #[test]
    fn calls_in_either_language_reduce_to_a_member_path() {
        assert_eq!(
            call_path("PaymentIntent::create(&client, params).await?"),
            "PaymentIntent.create"
        );
        assert_eq!(
            call_path("stripe.checkout.sessions.create({ mode: 'setup' })"),
            "stripe.checkout.sessions.create"
        );
        let h = Harm::builtin().unwrap();
        let full = args(&[("payment_intent", None)]);
        assert!(
            h.provider_for("Refund::create(&client, params)", &full, &[], &[])
                .is_some()
        );
    }

    #[test]
    fn an_invoice_the_request_fetched_is_not_the_one_the_client_sent() {
        let h = Harm::builtin().unwrap();
        let sent = args(&[("lnd", None), ("request", None)]);
        let paid = h.provider_for("pay({ lnd, request })", &sent, &[], &[]);
        assert_eq!(paid.map(|p| p.impact.as_str()), Some("read"));
        let fetched = h.provider_for(
            "pay({ lnd, request })",
            &sent,
            &["request".to_string()],
            &[],
        );
        assert!(fetched.is_none());
        let keysend = args(&[("lnd", None), ("destination", None)]);
        assert!(
            h.provider_for("pay({ lnd, destination })", &keysend, &[], &[])
                .is_none()
        );
    }

    #[test]
    fn names_ending_in_log_that_are_no_logs() {
        let h = Harm::builtin().unwrap();
        assert!(h.bookkeeping_model("logs").is_some());
        assert!(h.bookkeeping_model("audit_log").is_some());
        // a changelog of something is its change history
        assert!(h.bookkeeping_model("user_edit_change_logs").is_some());
        assert!(h.bookkeeping_model("CalendarObjectChangelog").is_some());
        for record in [
            "blog",
            "BlogPost",
            "catalog",
            "changelog",
            "changelog_entries",
            "product_catalogs",
            "worklog",
            "dialog",
        ] {
            assert!(h.bookkeeping_model(record).is_none(), "{record}");
        }
    }

    #[test]
    fn counters_by_name_with_values_first() {
        let h = Harm::builtin().unwrap();
        let f = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert!(h.counter_fields(&f(&["failures"])).is_some());
        assert!(
            h.counter_fields(&f(&["loginAttempts", "ratelimit"]))
                .is_some()
        );
        // a balance stays a value, whatever else the update counts
        assert!(h.counter_fields(&f(&["credits", "failures"])).is_none());
    }

    #[test]
    fn derived_and_credential_functions_by_their_own_name() {
        let h = Harm::builtin().unwrap();
        assert_eq!(
            h.derived_function("index_pending_collab_one"),
            Some("index?*")
        );
        assert!(h.derived_function("SearchService.reindexAll").is_some());
        // A controller named `Index` is no indexing job.
        assert!(h.derived_function("IndexController.create").is_none());
        assert!(h.derived_function("index").is_none());
        assert!(
            h.credential_function("MailService.confirmNewEmail")
                .is_some()
        );
        assert!(h.credential_function("send_verification_email").is_some());
        assert!(
            h.credential_function("mailer::send_password_reset")
                .is_some()
        );
        assert!(h.credential_function("sendFootprintReport").is_none());
        assert!(
            h.credential_function("sendOrderConfirmationEmail")
                .is_none()
        );
    }

    #[test]
    fn a_condition_needs_one_test() {
        let bad = "[[provider]]\nid = \"x\"\ncalls = [\"a\"]\nall = [{ arg = \"m\" }]\nimpact = \"read\"\ndetail = \"d\"\n";
        assert!(Harm::parse(bad).unwrap_err().contains("exactly one"));
        let neither = "[[http]]\nid = \"x\"\nimpact = \"read\"\ndetail = \"d\"\n";
        assert!(Harm::parse(neither).unwrap_err().contains("neither"));
    }
}
