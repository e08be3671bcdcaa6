//! The rule registry, the finding model and the classification of endpoints.
//!
//! Rules read only facts ([`Endpoint`]s); each lives in its own file with its documentation.

pub mod rs001_payment_without_idempotency;
pub mod rs002_webhook_without_dedup;
pub mod rs003_side_effect_without_idempotency;
pub mod rs004_non_atomic_key_claim;
pub mod rs005_key_not_scoped_to_principal;
pub mod rs006_client_key_per_attempt;
pub mod rs007_downstream_key_missing;
pub mod rs008_server_generated_key;
pub mod rs009_no_request_hash;
pub mod rs010_no_key_expiry;
pub mod rs011_optional_key_on_critical;
pub mod rs012_unique_violation_unhandled;
pub mod rs013_transient_failure_stored;
pub mod rs014_in_memory_key_store;
pub mod rs015_response_not_stored;
pub mod rs016_key_from_domain_id;
pub mod rs017_content_hash_as_key;
pub mod rs018_mismatch_status;
pub mod rs019_key_not_bounded;
pub mod rs020_no_idempotency_tests;
pub mod rs021_idempotency_undocumented;
pub mod rs022_stored_response_logged;
pub mod rs023_key_on_safe_method;
pub mod rs024_key_where_constraint_suffices;
pub mod rs025_cancellation_leaves_claim;

use crate::facts::{ClientRequest, Effect, Endpoint, Impact, KeyStore, Location, MechanismKind};
use serde::Serialize;
use sha2::{Digest, Sha256};

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
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    None,
    Inverse,
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::None => "none",
            Severity::Inverse => "inverse",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Speculative,
    Likely,
    Confirmed,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Speculative => "speculative",
            Confidence::Likely => "likely",
            Confidence::Confirmed => "confirmed",
        }
    }
    /// Likely when every effect behind a finding was seen through resolved calls.
    pub fn of(effects: &[&Effect]) -> Confidence {
        if !effects.is_empty() && effects.iter().all(|e| e.speculative) {
            Confidence::Speculative
        } else {
            Confidence::Likely
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Classification {
    IdempotentByNature,
    IdempotentWithKey,
    IdempotentByConstraint,
    NotIdempotent,
    /// Nothing was reached that a repeat harms, but a call on the handler's path could not be
    /// followed: the tool does not know what the endpoint does.
    Unknown,
}

impl Classification {
    pub fn as_str(self) -> &'static str {
        match self {
            Classification::IdempotentByNature => "idempotent_by_nature",
            Classification::IdempotentWithKey => "idempotent_with_key",
            Classification::IdempotentByConstraint => "idempotent_by_constraint",
            Classification::NotIdempotent => "not_idempotent",
            Classification::Unknown => "unknown",
        }
    }
}

pub fn classify(ep: &Endpoint) -> Classification {
    if ep.has_mechanism(MechanismKind::HeaderKey)
        || ep.has_mechanism(MechanismKind::WebhookEventDedup)
        || ep.has_mechanism(MechanismKind::ContentHash)
    {
        Classification::IdempotentWithKey
    } else if !ep.repeated_effects().is_empty()
        || ep.racy_effects().iter().any(|e| e.impact == Impact::Money)
    {
        // A constraint or an upsert protects its own write only: an email beside it repeats.
        Classification::NotIdempotent
    } else if ep.has_mechanism(MechanismKind::UniqueConstraint)
        || ep.has_mechanism(MechanismKind::Upsert)
        || ep.has_mechanism(MechanismKind::Claim)
    {
        // An upsert is also natural (it writes the values it is given); the constraint it
        // relies on is the more precise answer.
        Classification::IdempotentByConstraint
    } else if ep.has_mechanism(MechanismKind::Natural) {
        Classification::IdempotentByNature
    } else if ep.unfollowed.is_some() {
        Classification::Unknown
    } else {
        Classification::NotIdempotent
    }
}

/// A section of the Markdown report, in the order the methodology prescribes. A rule names the
/// section it reports into; the report derives each section's rules from the registry, so a rule
/// cannot fall out of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    IdempotencyMechanism,
    HeaderPattern,
    Storage,
    ClientGeneration,
    AtomicCheckInsert,
    ResponseStorage,
    RequestHash,
    Expiration,
    WebhookIdempotency,
    ConstraintBased,
    ErrorResponse,
    TestCoverage,
    Documentation,
    PerMutationProfile,
    Cancellation,
    OverBuilt,
    PositiveFindings,
}

impl Section {
    /// Every section, in report order.
    pub const ALL: [Section; 17] = [
        Section::IdempotencyMechanism,
        Section::HeaderPattern,
        Section::Storage,
        Section::ClientGeneration,
        Section::AtomicCheckInsert,
        Section::ResponseStorage,
        Section::RequestHash,
        Section::Expiration,
        Section::WebhookIdempotency,
        Section::ConstraintBased,
        Section::ErrorResponse,
        Section::TestCoverage,
        Section::Documentation,
        Section::PerMutationProfile,
        Section::Cancellation,
        Section::OverBuilt,
        Section::PositiveFindings,
    ];

    /// The section's heading (also the `section` of a finding in JSON and SARIF).
    pub fn title(self) -> &'static str {
        match self {
            Section::IdempotencyMechanism => "Idempotency Mechanism",
            Section::HeaderPattern => "Header Pattern",
            Section::Storage => "Storage",
            Section::ClientGeneration => "Client Generation",
            Section::AtomicCheckInsert => "Atomic Check-Insert",
            Section::ResponseStorage => "Response Storage",
            Section::RequestHash => "Request Hash",
            Section::Expiration => "Expiration",
            Section::WebhookIdempotency => "Webhook Idempotency",
            Section::ConstraintBased => "Constraint-Based",
            Section::ErrorResponse => "Error Response",
            Section::TestCoverage => "Test Coverage",
            Section::Documentation => "Documentation",
            Section::PerMutationProfile => "Per-Mutation Profile",
            Section::Cancellation => "Cancellation + Idempotency",
            Section::OverBuilt => "Over-Built",
            Section::PositiveFindings => "Positive Findings",
        }
    }
}

/// A rule's identity and documentation. `doc` follows the template: What it does / Why is this
/// bad? / Example / Use instead.
pub struct RuleMeta {
    pub id: &'static str,
    pub name: &'static str,
    pub section: Section,
    pub severity: Severity,
    pub summary: &'static str,
    pub doc: &'static str,
}

/// What a rule returns; the report adds the rule's identity, the location and the fingerprint.
pub struct Hit {
    pub confidence: Confidence,
    pub message: String,
    pub change: String,
    pub impact: String,
    /// Where the flaw is, when that is not the route line (the key store's code).
    pub at: Option<Location>,
    /// Where the flaw's cause lives when it is shared by other endpoints but reported on the route
    /// (the in-memory store, the helper whose create is unguarded): findings with one cause are
    /// rendered as one entry, and a suppression there covers them all.
    pub cause: Option<Location>,
}

pub struct Rule {
    pub meta: RuleMeta,
    pub check: fn(&Endpoint) -> Option<Hit>,
}

/// The only list of rules. README's table and `retrysafe rules` come from it.
pub fn registry() -> Vec<Rule> {
    vec![
        rs001_payment_without_idempotency::rule(),
        rs002_webhook_without_dedup::rule(),
        rs003_side_effect_without_idempotency::rule(),
        rs004_non_atomic_key_claim::rule(),
        rs005_key_not_scoped_to_principal::rule(),
        rs006_client_key_per_attempt::rule(),
        rs007_downstream_key_missing::rule(),
        rs008_server_generated_key::rule(),
        rs009_no_request_hash::rule(),
        rs010_no_key_expiry::rule(),
        rs011_optional_key_on_critical::rule(),
        rs012_unique_violation_unhandled::rule(),
        rs013_transient_failure_stored::rule(),
        rs014_in_memory_key_store::rule(),
        rs015_response_not_stored::rule(),
        rs016_key_from_domain_id::rule(),
        rs017_content_hash_as_key::rule(),
        rs018_mismatch_status::rule(),
        rs019_key_not_bounded::rule(),
        rs020_no_idempotency_tests::rule(),
        rs021_idempotency_undocumented::rule(),
        rs022_stored_response_logged::rule(),
        rs023_key_on_safe_method::rule(),
        rs024_key_where_constraint_suffices::rule(),
        rs025_cancellation_leaves_claim::rule(),
    ]
}

/// What project-level checks read: every endpoint and every client request.
pub struct Project<'a> {
    pub endpoints: &'a [Endpoint],
    pub clients: &'a [ClientRequest],
}

/// A finding a rule places itself: on a client request (which is no endpoint of this repository)
/// or at a severity other than its rule's default.
pub struct Placed {
    pub severity: Severity,
    /// `METHOD path`: the endpoint, or the client request's target.
    pub endpoint: String,
    pub location: Location,
    /// Tells this finding from others of its rule with the same endpoint and file (the client
    /// function's name), for the fingerprint.
    pub discriminator: String,
    pub hit: Hit,
}

/// A rule's check over the whole project.
pub type ProjectCheck = fn(&Project) -> Vec<Placed>;

/// Rules whose findings (some or all) are not one endpoint's at the rule's default severity,
/// by id: each returns the findings it places. The rule is still registered in [`registry`].
pub fn project_checks() -> Vec<(&'static str, ProjectCheck)> {
    vec![
        ("RS002", rs002_webhook_without_dedup::placed),
        ("RS006", rs006_client_key_per_attempt::placed),
        ("RS016", rs016_key_from_domain_id::placed),
        ("RS017", rs017_content_hash_as_key::placed),
    ]
}

/// Runs the project-level checks.
pub fn evaluate_project(project: &Project) -> Vec<Finding> {
    let rules = registry();
    let mut out = Vec::new();
    for (id, check) in project_checks() {
        let Some(rule) = rules.iter().find(|r| r.meta.id == id) else {
            continue;
        };
        for p in check(project) {
            out.push(Finding {
                route: p.location.clone(),
                rule: id.into(),
                name: rule.meta.name.into(),
                section: rule.meta.section.title().into(),
                severity: p.severity,
                confidence: p.hit.confidence,
                fingerprint: fingerprint(&[id, &p.endpoint, &p.location.file, &p.discriminator]),
                endpoint: p.endpoint,
                file: p.location.file,
                line: p.location.line,
                message: p.hit.message,
                change: p.hit.change,
                impact: p.hit.impact,
                suppressed: false,
                suppression_reason: None,
                baselined: false,
                also_endpoints: Vec::new(),
                also_routes: Vec::new(),
                cause: String::new(),
                cause_at: None,
                anchors: Vec::new(),
                probe: None,
            });
        }
    }
    for f in &mut out {
        f.cause = f.fingerprint.clone();
    }
    out
}

pub fn find(id: &str) -> Option<Rule> {
    registry()
        .into_iter()
        .find(|r| r.meta.id.eq_ignore_ascii_case(id) || r.meta.name == id)
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Finding {
    pub rule: String,
    pub name: String,
    pub section: String,
    pub severity: Severity,
    pub confidence: Confidence,
    pub endpoint: String,
    pub file: String,
    pub line: u32,
    pub message: String,
    pub change: String,
    pub impact: String,
    pub fingerprint: String,
    /// Silenced by a `retrysafe-ignore` comment with a reason: shown, never counted or gating.
    pub suppressed: bool,
    /// The reason written in the suppression comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suppression_reason: Option<String>,
    /// Known in the `--baseline` file: shown and counted, but not gating `--fail-on`.
    pub baselined: bool,
    /// The other endpoints the same flaw affects, when it is in code they share (one key store
    /// behind many routes is one finding, not one per route).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_endpoints: Vec<String>,
    /// Their route lines, in the same order.
    #[serde(skip)]
    #[schemars(skip)]
    pub also_routes: Vec<Location>,
    /// The endpoint's route line (`file`/`line` point at the flaw, which may be elsewhere).
    #[serde(skip)]
    #[schemars(skip)]
    pub route: Location,
    /// What the finding comes from: the same value on every finding whose flaw lives in one shared
    /// place (a key store, a middleware, a helper), which the terminal, Markdown and CI formats
    /// list once with the endpoints it affects; the finding's own fingerprint otherwise. Stable:
    /// the rule and the shared location.
    pub cause: String,
    /// The shared place behind `cause`, when there is one.
    #[serde(skip)]
    #[schemars(skip)]
    pub cause_at: Option<Location>,
    /// Other lines a `retrysafe-ignore` comment may sit on to accept this finding: the handler,
    /// the key mechanism (middleware, extractor).
    #[serde(skip)]
    #[schemars(skip)]
    pub anchors: Vec<Location>,
    /// What a running server did when `retrysafe probe` checked this (`check --probe-results`):
    /// the check that failed and both responses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<crate::facts::probe::ProbeEvidence>,
}

/// The `cause` of a flaw at a shared location.
pub fn cause_of(rule: &str, at: &Location) -> String {
    fingerprint(&["cause", rule, &at.file, &at.line.to_string()])
}

/// Stable across runs and line shifts: the rule, the endpoint and its file, not the line.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs every rule on every endpoint.
pub fn evaluate(endpoints: &[Endpoint]) -> Vec<Finding> {
    let rules = registry();
    let mut out = Vec::new();
    // Findings about shared key code, by (rule, file, line): merged once all are in.
    let mut shared: Vec<bool> = Vec::new();
    for ep in endpoints {
        for rule in &rules {
            let Some(hit) = (rule.check)(ep) else {
                continue;
            };
            let label = ep.label();
            shared.push(hit.at.is_some());
            let cause_at = hit.cause.or_else(|| hit.at.clone());
            let at = hit.at.unwrap_or_else(|| ep.location.clone());
            let confidence = tested(ep, hit.confidence);
            let fp = fingerprint(&[rule.meta.id, &label, &ep.location.file]);
            let mut anchors: Vec<Location> = ep.handler_location.iter().cloned().collect();
            anchors.extend(
                ep.mechanisms
                    .iter()
                    .filter(|m| m.kind == MechanismKind::HeaderKey)
                    .map(|m| m.location.clone()),
            );
            out.push(Finding {
                cause: cause_at
                    .as_ref()
                    .map(|c| cause_of(rule.meta.id, c))
                    .unwrap_or_else(|| fp.clone()),
                cause_at,
                anchors,
                route: ep.location.clone(),
                rule: rule.meta.id.into(),
                name: rule.meta.name.into(),
                section: rule.meta.section.title().into(),
                severity: capped(ep, rule.meta.id, rule.meta.severity, confidence),
                confidence,
                fingerprint: fp,
                endpoint: label,
                file: at.file,
                line: at.line,
                message: hit.message,
                change: hit.change,
                impact: hit.impact,
                suppressed: false,
                suppression_reason: None,
                baselined: false,
                also_endpoints: Vec::new(),
                also_routes: Vec::new(),
                probe: None,
            });
        }
    }
    merge_shared(out, &shared)
}

/// Severity is what a second run would do: the worst [`Impact`] a repeat reaches caps the
/// endpoint's findings (a webhook receiver's too). Messages and records: at most high; money that moves only if a person
/// completes it later, or a call whose effect the catalogue does not know: at most medium; bookkeeping or a repeat the endpoint is named for: at most
/// low (a webhook receiver's, at most medium: its provider retries on its own); a finding reached only through heuristics (a
/// method resolved by its name alone, a library's catalogue defaults) is at most medium.
pub fn capped(ep: &Endpoint, rule: &str, severity: Severity, confidence: Confidence) -> Severity {
    let mut s = severity;
    // Each repeated effect caps by its harm; one reached only by a heuristic (a method resolved
    // by its name alone, one of several overrides) at most medium. The loosest cap wins.
    let cap = ep
        .repeated_effects()
        .iter()
        .map(|e| {
            let c = impact_cap(e.impact, rule);
            if e.speculative {
                c.min(Severity::Medium)
            } else {
                c
            }
        })
        .max()
        .unwrap_or(Severity::Critical);
    s = s.min(cap);
    // RS003 on an endpoint nothing repeats on sequentially speaks of a racy guard: medium, high
    // when the race repeats a payment.
    if rule == "RS001"
        && !ep
            .repeated_effects()
            .iter()
            .any(|e| e.impact == Impact::Money)
    {
        s = s.min(Severity::High);
    }
    if rule == "RS003" && ep.repeated_effects().is_empty() {
        let racy = ep.racy_effects();
        let money = racy.iter().any(|e| e.impact == Impact::Money);
        let cap = racy
            .iter()
            .map(|e| impact_cap(e.impact, rule))
            .max()
            .unwrap_or(Severity::Medium);
        s = s.min(cap).min(if money {
            Severity::High
        } else {
            Severity::Medium
        });
    }
    if confidence == Confidence::Speculative {
        s = s.min(Severity::Medium);
    }
    s
}

/// The most a repeat of an effect with this harm can be.
fn impact_cap(impact: Impact, rule: &str) -> Severity {
    match impact {
        Impact::Money => Severity::Critical,
        // A receiver that repeats money on a redelivery is critical; one that repeats a message
        // or a record does what a client's retry of that message or record does: high. (A
        // receiver's payment booked into a ledger is money, see `link::harm`.)
        Impact::Message | Impact::Record => Severity::High,
        _ if rule == "RS002" => Severity::Medium,
        Impact::Pending | Impact::Unknown => Severity::Medium,
        _ => Severity::Low,
    }
}

/// One flaw in code many endpoints share (the key store, the key middleware) is one finding, on
/// the first endpoint by name, listing the others. Its confidence is the highest among them.
fn merge_shared(findings: Vec<Finding>, shared: &[bool]) -> Vec<Finding> {
    let mut groups: std::collections::BTreeMap<(String, String, u32), Vec<Finding>> =
        std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for (f, is_shared) in findings.into_iter().zip(shared) {
        if *is_shared {
            groups
                .entry((f.rule.clone(), f.file.clone(), f.line))
                .or_default()
                .push(f);
        } else {
            out.push(f);
        }
    }
    for ((rule, file, _), mut group) in groups {
        // Two apps of a monorepo may both have `POST /notes`: a route is its label and its line.
        let route = |f: &Finding| (f.endpoint.clone(), f.route.file.clone(), f.route.line);
        group.sort_by_key(route);
        group.dedup_by_key(|f| route(f));
        let rest = group.split_off(1);
        let mut kept = group.remove(0);
        if !rest.is_empty() {
            // Stable while endpoints come and go and lines shift: the rule, the file of the
            // flaw, and what it says without its numbers.
            let said: String = kept
                .message
                .chars()
                .filter(|c| !c.is_ascii_digit())
                .collect();
            kept.fingerprint = fingerprint(&[&rule, &file, &said]);
            kept.confidence = rest
                .iter()
                .map(|f| f.confidence)
                .fold(kept.confidence, Confidence::max);
            let names: Vec<&str> = rest.iter().map(|f| f.endpoint.as_str()).take(3).collect();
            let more = rest.len().saturating_sub(names.len());
            kept.message.push_str(&format!(
                " The same code serves {} other endpoint{}: {}{}.",
                rest.len(),
                if rest.len() == 1 { "" } else { "s" },
                names.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
            for f in rest {
                kept.also_endpoints.push(f.endpoint);
                kept.also_routes.push(f.route);
            }
        }
        out.push(kept);
    }
    out
}

/// The key store an endpoint depends on: a mutation protected by a key mechanism, with something
/// that would repeat on a retry (an endpoint idempotent by nature does not depend on its store).
pub fn depended_store(ep: &Endpoint) -> Option<&KeyStore> {
    if !ep.is_mutation()
        || !ep.has_mechanism(MechanismKind::HeaderKey)
        || ep.repeated_effects().is_empty()
    {
        return None;
    }
    ep.key_store.as_ref()
}

/// Seen in code: likely. Taken from the catalogue entry of a library: speculative, since the
/// project may configure the library past its defaults.
pub fn store_confidence(store: &KeyStore) -> Confidence {
    if store.from_catalogue {
        Confidence::Speculative
    } else {
        Confidence::Likely
    }
}

/// What a retry of `ep` would repeat, for impact sentences: "`stripe.charges.create` (file:line)".
pub fn repeated_summary(ep: &Endpoint) -> String {
    let effects = ep.repeated_effects();
    match effects.as_slice() {
        [] => "its side effects".into(),
        [one] => describe(one),
        [first, rest @ ..] => format!("{} and {} more", describe(first), rest.len()),
    }
}

/// A test in the repository that sends one key twice or concurrently to the endpoint confirms
/// what is found about it. Where the audit found no key mechanism, such a test points to one it
/// missed, so the findings there are only speculative.
fn tested(ep: &Endpoint, found: Confidence) -> Confidence {
    if ep.confirming_tests().next().is_none() {
        found
    } else if ep.has_mechanism(MechanismKind::HeaderKey) {
        Confidence::Confirmed
    } else {
        found.min(Confidence::Speculative)
    }
}

/// `callee` (file:line) for messages, with the calls that led there.
pub fn describe(e: &Effect) -> String {
    let via = if e.via.is_empty() {
        String::new()
    } else {
        format!(" via {}", e.via.join(" → "))
    };
    format!("`{}` ({}){via}", e.callee, e.location)
}

/// Inline code for messages, also when the code holds backticks (a template literal).
pub use crate::text::code;

/// The rule table of README.md, generated from the registry (a test keeps README in step).
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| id | name | default severity | section | detects |\n|---|---|---|---|---|\n",
    );
    for r in registry() {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            r.meta.id,
            r.meta.name,
            r.meta.severity.as_str(),
            r.meta.section.title(),
            r.meta.summary
        ));
    }
    out
}

/// Small builders for the rules' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use crate::facts::{
        ClientRequest, Effect, EffectKind, Endpoint, Impact, KeyOrigin, Location, Mechanism,
        MechanismKind,
    };

    /// An effect as the harm judgement leaves it when nothing more specific is known.
    pub fn effect(kind: EffectKind) -> Effect {
        Effect {
            kind,
            impact: Impact::of_kind(kind),
            callee: "x.create".into(),
            location: Location::new("s.ts", 7),
            ..Effect::default()
        }
    }

    pub fn endpoint(
        method: &str,
        side_effects: Vec<Effect>,
        mechanisms: Vec<Mechanism>,
    ) -> Endpoint {
        Endpoint {
            method: method.into(),
            path: "/x".into(),
            framework: "express".into(),
            location: Location::new("r.ts", 2),
            handler: "h".into(),
            side_effects,
            mechanisms,
            ..Endpoint::default()
        }
    }

    pub fn client(origin: KeyOrigin) -> ClientRequest {
        ClientRequest {
            method: "POST".into(),
            path: "/api/orders".into(),
            location: Location::new("web/api.ts", 9),
            function: "createOrder".into(),
            key_origin: origin,
            key_expression: "crypto.randomUUID()".into(),
            key_location: Location::new("web/api.ts", 8),
            key_function: "createOrder".into(),
            detail: "made by `crypto.randomUUID()` inside `createOrder`".into(),
            endpoint: None,
            endpoint_location: None,
        }
    }

    /// A POST creating a record under a key mechanism whose store is `store`.
    pub fn keyed(store: crate::facts::KeyStore) -> Endpoint {
        let mut ep = endpoint(
            "POST",
            vec![effect(EffectKind::DbCreate)],
            vec![mechanism(MechanismKind::HeaderKey)],
        );
        ep.key_store = Some(store);
        ep
    }

    /// A store seen in code, every property unknown.
    pub fn store() -> crate::facts::KeyStore {
        crate::facts::KeyStore {
            kind: "sql".into(),
            detail: "`idempotency_keys`".into(),
            location: Location::new("store.ts", 10),
            ..Default::default()
        }
    }

    pub fn mechanism(kind: MechanismKind) -> Mechanism {
        Mechanism {
            kind,
            detail: "idempotency middleware".into(),
            location: Location::new("m.ts", 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{effect, endpoint, mechanism};
    use super::*;
    use crate::facts::{EffectKind, KeyTest, Location};

    fn repeating_test(exact: bool) -> KeyTest {
        KeyTest {
            method: "POST".into(),
            path: Some("/x".into()),
            base: false,
            same_key_twice: true,
            concurrent: false,
            exact,
            location: Location::new("test/x.test.ts", 4),
        }
    }

    #[test]
    fn a_flaw_in_a_shared_key_store_is_one_finding_listing_its_endpoints() {
        let mut eps = Vec::new();
        let mut store = testing::store();
        store.hash_stored =
            crate::facts::key::Prop::no(Location::new("store.ts", 12), "no fingerprint stored");
        for (i, path) in ["/orders", "/refunds", "/carts"].iter().enumerate() {
            let mut ep = testing::keyed(store.clone());
            ep.path = path.to_string();
            ep.location = Location::new("r.ts", 10 + i as u32);
            eps.push(ep);
        }
        let findings = evaluate(&eps);
        let rs009: Vec<&Finding> = findings.iter().filter(|f| f.rule == "RS009").collect();
        assert_eq!(rs009.len(), 1, "one finding at the store");
        assert_eq!(rs009[0].endpoint, "POST /carts");
        assert_eq!(
            rs009[0].also_endpoints,
            vec!["POST /orders", "POST /refunds"]
        );
        assert_eq!(rs009[0].also_routes[1], Location::new("r.ts", 11));
        assert!(rs009[0].message.contains("serves 2 other endpoints"));
        // Two routes with one label (two apps of a monorepo) are both kept.
        let mut twin = eps[0].clone();
        twin.location = Location::new("other/r.ts", 3);
        eps.push(twin);
        let findings_with_twin = evaluate(&eps);
        let merged = findings_with_twin
            .iter()
            .find(|f| f.rule == "RS009")
            .unwrap();
        assert_eq!(merged.also_endpoints.len(), 3);
        assert_eq!(
            merged.fingerprint, rs009[0].fingerprint,
            "stable as endpoints are added"
        );
        // Findings at each route (RS020: no test sends a key twice) stay one per endpoint.
        assert_eq!(findings.iter().filter(|f| f.rule == "RS020").count(), 3);
    }

    /// The confidence of `rule`'s finding on the endpoint, if it has one.
    fn confidence(ep: &Endpoint, rule: &str) -> Option<Confidence> {
        evaluate(std::slice::from_ref(ep))
            .into_iter()
            .find(|f| f.rule == rule)
            .map(|f| f.confidence)
    }

    #[test]
    fn a_test_that_repeats_a_key_confirms_the_findings_of_a_keyed_endpoint() {
        let mut payment = effect(EffectKind::Payment);
        payment.downstream_key = Some(crate::facts::DownstreamKey::Missing);
        let mut ep = endpoint(
            "POST",
            vec![payment],
            vec![mechanism(MechanismKind::HeaderKey)],
        );
        assert_eq!(confidence(&ep, "RS007"), Some(Confidence::Likely));
        assert_eq!(confidence(&ep, "RS020"), Some(Confidence::Likely));
        // Only a test that may target it: nothing is confirmed, RS020 is unsure.
        ep.key_tests.push(repeating_test(false));
        assert_eq!(confidence(&ep, "RS007"), Some(Confidence::Likely));
        assert_eq!(confidence(&ep, "RS020"), Some(Confidence::Speculative));
        ep.key_tests.push(repeating_test(true));
        assert_eq!(confidence(&ep, "RS007"), Some(Confidence::Confirmed));
        assert_eq!(confidence(&ep, "RS020"), None);
        let all = evaluate(std::slice::from_ref(&ep));
        assert!(all.iter().all(|f| f.confidence == Confidence::Confirmed));
    }

    #[test]
    fn a_repeating_test_on_an_endpoint_without_a_key_makes_its_findings_speculative() {
        let mut ep = endpoint("POST", vec![effect(EffectKind::Payment)], vec![]);
        assert_eq!(confidence(&ep, "RS001"), Some(Confidence::Likely));
        ep.key_tests.push(repeating_test(true));
        assert_eq!(confidence(&ep, "RS001"), Some(Confidence::Speculative));
    }
}
