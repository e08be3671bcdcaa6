//! Parity twins: a TypeScript app and a Rust app written to do the same things must get the same
//! judgement — effect kinds, impacts, mechanisms, classification, rules and severity — endpoint by
//! endpoint, through the binary. Paths are compared with their parameters reduced to `{}` (the
//! twins name them in each language's style).

mod common;

use serde_json::Value;
use std::collections::BTreeMap;

use common::{fixture, json_report};

type Verdict = (
    Vec<(String, String)>,
    Vec<String>,
    String,
    String,
    Vec<String>,
);

fn norm(path: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for ch in path.chars() {
        match ch {
            '{' => {
                depth += 1;
                out.push_str("{}");
            }
            '}' => depth -= 1,
            _ if depth > 0 => {}
            _ => out.push(ch),
        }
    }
    out
}

fn verdicts(name: &str) -> BTreeMap<String, Verdict> {
    let report = json_report(&fixture(name));
    let mut out = BTreeMap::new();
    for e in report["endpoints"].as_array().unwrap() {
        let label = format!(
            "{} {}",
            e["method"].as_str().unwrap(),
            norm(e["path"].as_str().unwrap())
        );
        let mut effects: Vec<(String, String)> = e["side_effects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["kind"].as_str().unwrap().into(),
                    s["impact"].as_str().unwrap().into(),
                )
            })
            .collect();
        effects.sort();
        effects.dedup();
        let mut mechanisms: Vec<String> = e["mechanisms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["kind"].as_str().unwrap().into())
            .collect();
        mechanisms.sort();
        mechanisms.dedup();
        let endpoint = format!(
            "{} {}",
            e["method"].as_str().unwrap(),
            e["path"].as_str().unwrap()
        );
        let mut rules: Vec<String> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["endpoint"] == Value::String(endpoint.clone()))
            .map(|f| {
                format!(
                    "{} {}",
                    f["rule"].as_str().unwrap(),
                    f["severity"].as_str().unwrap()
                )
            })
            .collect();
        rules.sort();
        out.insert(
            label,
            (
                effects,
                mechanisms,
                e["classification"].as_str().unwrap().into(),
                e["severity"].as_str().unwrap().into(),
                rules,
            ),
        );
    }
    out
}

fn assert_twins(ts: &str, rust: &str) {
    let a = verdicts(ts);
    let b = verdicts(rust);
    assert!(!a.is_empty(), "{ts} has no endpoints");
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "{ts} and {rust} list different endpoints"
    );
    for (label, va) in &a {
        assert_eq!(va, &b[label], "{label}: {ts} and {rust} disagree");
    }
}

#[test]
fn the_harm_model_judges_both_languages_alike() {
    assert_twins("express-harm", "axum-harm");
}

#[test]
fn what_a_sign_in_issues_is_the_callers_session_in_both_languages() {
    assert_twins("express-sign-in", "axum-sign-in");
}

#[test]
fn a_delete_behind_a_state_test_replaces_nothing_in_both_languages() {
    assert_twins("express-booking-tokens", "axum-booking-tokens");
}

#[test]
fn a_send_through_one_of_several_providers_is_judged_alike_in_both_languages() {
    assert_twins("nextjs-email-providers", "axum-email-providers");
}

#[test]
fn a_claim_stops_a_retry_in_both_languages() {
    assert_twins("express-claims", "axum-claims");
}

#[test]
fn api_documentation_is_judged_alike_from_a_document_and_from_code() {
    assert_twins("express-openapi-docs", "axum-openapi-docs");
}

#[test]
fn calls_through_abstract_classes_and_trait_objects_reach_their_implementations() {
    assert_twins("nestjs-abstract-repositories", "axum-trait-stores");
}

#[test]
fn a_service_locator_s_accessors_a_delete_s_claim_and_an_answering_helper() {
    assert_twins("express-service-locator", "axum-service-locator");
}

#[test]
fn a_shift_of_positions_past_a_point_keeps_their_order() {
    assert_twins("express-ordered-lists", "axum-ordered-lists");
}

#[test]
fn statements_built_at_run_time_are_writes_and_an_open_conflict_clause_is_unknown() {
    assert_twins("express-built-statements", "axum-built-statements");
}

#[test]
fn a_settings_row_made_once_and_an_invitation_stopped_on_its_email() {
    assert_twins("express-settings-rows", "axum-settings-rows");
}

/// A branch of shared code that runs only when its caller passes a truthy option or flag
/// (`if (options?.upsert)`, `if !notify { return }`) is not reached by callers that leave it off.
#[test]
fn a_branch_a_caller_turns_off_is_not_reached_in_both_languages() {
    assert_twins("nestjs-optional-branches", "axum-optional-branches");
}

/// A branch that runs only when the route's own path parameter is missing (`if (!id) create(..)`
/// under `@Param('id')`, `if let Some(Path(id)) = id { .. } create(..)` under
/// `Option<Path<Uuid>>`) never runs: the router matched the segment.
#[test]
fn a_branch_on_a_missing_path_parameter_never_runs_in_both_languages() {
    assert_twins("nestjs-path-param-branches", "axum-path-param-branches");
}

/// An update-or-insert behind a lookup the module wraps in a function of its own (`const row =
/// await this.findOne(formId, appId)`, `if let Some(row) = find_one(..).await?`): racy without a
/// unique key, closed by one.
#[test]
fn an_update_or_insert_behind_a_wrapped_lookup_in_both_languages() {
    assert_twins(
        "nestjs-mongoose-lookup-wrappers",
        "axum-sqlx-lookup-wrappers",
    );
}

/// A row counted, then updated or inserted by hand (`Number(rows[0].count)`, `try_get("count")`),
/// and a column flipped in SQL (`SET a = NOT a`, `CASE WHEN a ..`), a relative update.
#[test]
fn a_counted_row_and_a_flipped_column_in_both_languages() {
    assert_twins("express-pg-settings", "axum-sqlx-settings");
}

/// An insert whose columns are not in view is stopped by a natural key, never by the row's own
/// id alone (made per call); a log row alone is low.
#[test]
fn an_id_made_per_call_stops_no_repeat_in_both_languages() {
    assert_twins("express-knex-records", "axum-diesel-dsl");
}

/// A soft delete (`deletedAt: new Date()`, `.set(deleted.eq(true))`) before a create of the same
/// model replaces the set, as a delete does.
#[test]
fn a_soft_delete_then_a_create_replaces_in_both_languages() {
    assert_twins("express-soft-deletes", "axum-soft-deletes");
}

/// Rows retired (`status: 'inactive'`, `revokedAt: new Date()`) before a create of the same model
/// are rotated, as a soft delete replaces them; a flag that only ranks rows (`isDefault: false`)
/// retires nothing.
#[test]
fn a_retire_then_a_create_rotates_in_both_languages() {
    assert_twins("express-rotated-links", "axum-rotated-links");
}

#[test]
fn a_state_the_request_changes_guards_a_retry_in_both_languages() {
    assert_twins("express-state-guards", "axum-state-guards");
}

#[test]
fn a_state_set_through_a_helper_guards_what_a_nested_test_encloses_in_both_languages() {
    assert_twins("express-payout-callbacks", "axum-payout-callbacks");
}

#[test]
fn a_row_found_in_a_finished_state_ends_a_retry_in_both_languages() {
    assert_twins("express-transfer-keys", "axum-transfer-keys");
}

#[test]
fn a_key_on_the_tables_own_id_is_made_per_call_in_both_languages() {
    assert_twins("express-mysql-base-model", "axum-diesel-own-ids");
}

#[test]
fn a_lookup_that_refuses_a_repeat_is_judged_alike_in_both_languages() {
    assert_twins("nestjs-typeorm-guards", "axum-lookup-guards");
}

#[test]
fn a_row_the_request_consumes_is_judged_alike_in_both_languages() {
    assert_twins("express-one-time-tokens", "axum-one-time-tokens");
}

#[test]
fn the_records_of_seaorm_and_typeorm_are_guarded_alike() {
    assert_twins("express-typeorm-records", "axum-seaorm-guards");
}

#[test]
fn queued_jobs_deletes_and_webhook_ledgers_are_judged_by_harm_in_both_languages() {
    assert_twins("express-repeat-harm", "axum-repeat-harm");
}

#[test]
fn an_upsert_matched_on_a_value_made_per_call_is_judged_a_create_in_both_languages() {
    assert_twins("express-upsert-keys", "axum-upsert-keys");
}

#[test]
fn a_query_builders_table_and_values_are_read_alike_in_both_languages() {
    assert_twins("nestjs-kysely-pages", "axum-diesel-pages");
}

#[test]
fn a_field_written_from_its_own_read_value_is_relative_in_both_languages() {
    assert_twins("express-prisma-topups", "axum-sqlx-topups");
}

#[test]
fn a_count_tested_for_none_guards_like_a_lookup_in_both_languages() {
    assert_twins("express-count-guards", "axum-count-guards");
}

#[test]
fn what_runs_behind_a_missed_lookup_on_the_path_that_creates_its_row_is_judged_alike() {
    assert_twins("express-guarded-paths", "axum-guarded-paths");
}

#[test]
fn an_effect_every_implementation_reaches_is_certain_in_both_languages() {
    assert_twins("express-provider-interfaces", "axum-provider-traits");
}

#[test]
fn a_loaded_row_saved_back_is_an_update_in_both_languages() {
    assert_twins("express-typeorm-saves", "axum-seaorm-saves");
}

#[test]
fn a_guard_on_what_a_reading_function_returned_is_a_lookup_in_both_languages() {
    assert_twins("express-helper-lookups", "axum-helper-lookups");
}

/// The three divergences the single linker was asked to remove: a create inside a `WITH` query,
/// a receiver known by a signature header the catalogue does not list, and `call_depth` and
/// `[[mount]]` from retrysafe.toml.
#[test]
fn a_cte_insert_a_receiver_by_convention_and_the_configuration_are_judged_alike() {
    assert_twins("express-linker-parity", "axum-linker-parity");
}

#[test]
fn lightning_and_on_chain_payments_are_money_unless_the_node_refuses_a_repeat() {
    assert_twins("express-lightning", "axum-lightning");
}

#[test]
fn a_call_named_for_moving_money_on_an_unknown_package_is_a_speculative_payment_in_both_languages()
{
    assert_twins("express-wallet-sdk", "axum-wallet-sdk");
}

#[test]
fn a_signature_checked_by_the_routes_middleware_makes_a_receiver_in_both_languages() {
    assert_twins("express-webhook-middleware", "axum-webhook-middleware");
}

#[test]
fn prisma_queries_are_judged_alike_from_the_generated_rust_client_and_from_prisma_client_js() {
    assert_twins("express-prisma-client", "axum-prisma-client");
}

#[test]
fn sends_through_a_lightning_nodes_rest_api_are_money_in_both_languages() {
    assert_twins("express-lnd-rest", "axum-lnd-rest");
}

#[test]
fn redis_writes_are_judged_alike_from_ioredis_and_from_the_redis_crate() {
    assert_twins("express-redis-store", "axum-redis-store");
}

#[test]
fn a_dynamodb_conditional_put_claims_a_key_in_both_languages() {
    assert_twins("express-keys-dynamodb", "axum-keys-dynamodb");
}

#[test]
fn a_raw_sql_lookup_refuses_a_repeat_in_both_languages() {
    assert_twins("koa-postgres-members", "axum-postgres-members");
}

#[test]
fn a_record_built_then_saved_is_protected_by_its_unique_column_in_both_languages() {
    assert_twins("express-mongoose-documents", "axum-seaorm-documents");
}

#[test]
fn a_dispatcher_runs_the_branch_of_the_command_it_is_given_in_both_languages() {
    assert_twins("express-command-dispatch", "axum-command-dispatch");
}

#[test]
fn a_create_that_reaches_no_known_write_is_unknown_in_both_languages() {
    assert_twins("express-repository-stores", "axum-repository-stores");
}

#[test]
fn a_store_given_as_a_bounded_type_parameter_runs_its_implementations_in_both_languages() {
    assert_twins("express-generic-stores", "axum-generic-stores");
}

/// A schema written in code (`execute_batch("CREATE TABLE ..")`, `db.exec(`CREATE TABLE ..`)`)
/// gives its constraints as a migration file would.
#[test]
fn a_schema_written_in_code_constrains_alike_in_both_languages() {
    assert_twins("express-sqlite-schema", "axum-rusqlite-schema");
}

/// What is reached repeats harmlessly, but a call to a service the code does not show
/// (`req.app.locals.billing`, a trait no code in view implements) could not be followed: no
/// claim of safety in either language.
#[test]
fn an_unread_service_beside_an_absolute_update_is_unknown_in_both_languages() {
    assert_twins("express-unread-service", "axum-unread-service");
}

/// An update that sets a column from its own value (a flag turned over, a count added to)
/// repeats on a retry; one that sets the request's value does not.
#[test]
fn an_update_from_the_value_it_replaces_is_relative_in_both_languages() {
    assert_twins("express-prisma-relative-sets", "axum-diesel-relative-sets");
}

/// A key-value write under a key made per call (`paste:${randomUUID()}`, `format!("paste:{id}")`
/// with a new UUID) stores a new record on every call; under a key the request names, the same.
#[test]
fn a_write_under_a_key_made_per_call_is_a_create_in_both_languages() {
    assert_twins("express-redis-keys", "axum-redis-keys");
}

#[test]
fn a_duplicate_whose_failure_ends_the_handler_stops_what_follows_in_both_languages() {
    assert_twins(
        "express-prisma-rethrown-duplicates",
        "axum-sqlx-rethrown-duplicates",
    );
}

/// A change guard: the effect runs only when the row's field differs from the value the request
/// writes there (`ticket.priority !== priority`, then the update that sets it); a retry finds the
/// row holding it. Compared with a value the update does not write there, nothing is guarded.
#[test]
fn a_test_against_the_value_the_request_writes_guards_a_retry_in_both_languages() {
    assert_twins("express-change-guards", "axum-change-guards");
}

/// A lookup that refuses a repeat: a count kept in a variable and tested later, and helpers
/// that fail when the row exists, called one after the other before the create (a helper that may
/// return before its test, or a count against a limit, refuses nothing).
#[test]
fn a_helper_that_refuses_a_found_row_guards_what_follows_in_both_languages() {
    assert_twins(
        "express-prisma-refusing-lookups",
        "axum-sqlx-refusing-lookups",
    );
}

/// An insert that skips a row already there (`onConflictDoNothing().returning()`, diesel's
/// `on_conflict_do_nothing()`), its outcome tested before the email: only the request that wrote
/// the row goes on, in both languages; untested, the email repeats.
#[test]
fn a_tested_insert_that_skips_existing_rows_is_a_claim_in_both_languages() {
    assert_twins("express-drizzle-insert-claims", "axum-diesel-insert-claims");
}

/// A one-time row consumed by a delete that fails when the row is gone (Prisma's `delete`, `P2025`;
/// `DELETE .. RETURNING` read with sqlx's `fetch_one`, `RowNotFound`): what follows runs once in
/// both languages; a count-answering delete, or one whose failure is dropped, guards nothing.
#[test]
fn a_delete_that_fails_when_the_row_is_gone_consumes_it_in_both_languages() {
    assert_twins("express-prisma-consumed-rows", "axum-sqlx-consumed-rows");
}

/// A program run (`execFile` through `promisify`, execa, docker-cli-js, `spawn`; std's and tokio's
/// `Command`) is an external call of unknown impact in both languages, never "no side effect".
#[test]
fn a_program_run_is_an_effect_in_both_languages() {
    assert_twins("express-process-runs", "axum-process-runs");
}

/// Usage metering (a `saveUsage`/`save_usage` helper's Redis hash increments) and a rate limiter's
/// window counter (`incr` of a `ratelimit:` key) are bookkeeping in both languages; an increment
/// of a balance's hash field (`credits`) stays a record a person holds.
#[test]
fn usage_metering_and_rate_limit_counters_are_bookkeeping_in_both_languages() {
    assert_twins("express-usage-metering", "axum-usage-metering");
}

/// A secret the request proves it knows (the current password checked against the stored hash:
/// bcrypt's `compare`, the `bcrypt` crate's `verify`) and then replaces: a retry fails the check,
/// so the notice after it is guarded (racy: medium) in both languages; a check of a secret the
/// request does not change guards nothing.
#[test]
fn a_checked_secret_the_request_replaces_guards_what_follows_in_both_languages() {
    assert_twins(
        "express-prisma-password-change",
        "axum-sqlx-password-change",
    );
}

/// A record the caller builds from the request's body and hands on whole (`{ ...dto, archived:
/// false }` spread into a service's `create(data)`; `NewProject { archived: false, ..input }`
/// into a function's `insert_into(..).values(&new)`): the body's keys are the record's, so a
/// unique constraint on one of them stops the retry in both languages.
#[test]
fn a_record_built_from_the_body_by_the_caller_is_keyed_by_it_in_both_languages() {
    assert_twins("nestjs-caller-dto-spreads", "axum-diesel-struct-update");
}

/// A unique violation answered by leaving the handler (`if (error.code === 'P2002') throw ..` in
/// a `catch`; `if is_unique_violation(&e) { return Err(..) }` in an `if let Err(e)`), whatever
/// else is only logged, stops the email after the insert in both languages; the opposite test
/// lets the duplicate through.
#[test]
fn a_duplicate_answered_by_leaving_stops_what_follows_in_both_languages() {
    assert_twins(
        "express-prisma-invite-conflicts",
        "axum-sqlx-invite-conflicts",
    );
}

/// The id of a row the request's own value finds (`teams.findBySlug(slug)`, `find_by_slug(&db,
/// &slug)`) keys a create as the request's value does: a unique constraint on it stops the email
/// after the insert in both languages; the id of a row the request created keys nothing.
#[test]
fn the_id_of_a_row_the_request_finds_keys_a_create_in_both_languages() {
    assert_twins("express-prisma-looked-up-keys", "axum-sqlx-looked-up-keys");
}

#[test]
fn a_stripe_object_created_under_the_inbound_key_is_judged_alike_in_both_languages() {
    assert_twins("express-stripe-invoice-keys", "axum-stripe-invoice-keys");
}

#[test]
fn a_balance_computed_from_the_row_read_is_a_relative_update_in_both_languages() {
    assert_twins(
        "hono-drizzle-read-modify-write",
        "axum-sqlx-read-modify-write",
    );
}

#[test]
fn a_chat_message_through_a_messaging_sdk_is_a_message_to_a_person() {
    assert_twins("express-chat-messages", "axum-chat-messages");
}
