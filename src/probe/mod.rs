//! `retrysafe probe`: confirms what the audit says about each keyed endpoint by sending the draft
//! standard's requests (draft-ietf-httpapi-idempotency-key-header) to a running server.
//!
//! - [`target`]: the base URL, and the refusal of anything but a local or private server;
//! - [`plan`] and [`schema`]: which endpoints, and the body each request carries;
//! - [`http`]: the client (no redirects, no proxy) and the barrier for concurrent requests;
//! - [`checks`]: the five checks, judged from the responses;
//! - [`output`]: the results (a JSON contract) and their renderings;
//! - [`apply`]: the results fed back into the audit (`check --probe-results`).

pub mod apply;
pub mod checks;
pub mod http;
pub mod output;
pub mod plan;
pub mod schema;
pub mod target;

use output::{EndpointProbe, ProbeReport};
use plan::Planned;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

/// What `retrysafe probe` was asked.
pub struct ProbeArgs<'a> {
    pub base_url: &'a str,
    pub path: &'a Path,
    pub config: Option<&'a Path>,
    pub endpoints: &'a [String],
    /// `Name: value` as given.
    pub headers: &'a [String],
    pub body_file: Option<&'a Path>,
    pub concurrency: usize,
    pub yes: bool,
    pub allow_remote: bool,
    /// `--key-header`; else the API documentation's name for it, else `Idempotency-Key`.
    pub key_header: Option<&'a str>,
    pub timeout: Duration,
}

fn header(h: &str) -> Result<(String, String), String> {
    let (k, v) = h
        .split_once(':')
        .ok_or_else(|| format!("--header `{h}` is not `Name: value`"))?;
    let k = k.trim();
    if k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!("--header `{h}` has no valid name"));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

/// The plan, as the user reads it before anything is sent.
pub fn describe(planned: &[Planned], target: &target::Target, concurrency: usize) -> String {
    let mut out = format!(
        "retrysafe probe sends real requests to {}{} — mutations run for real: use a local or staging server.\n",
        target.origin, target.base_path
    );
    for p in planned {
        match p {
            Planned::Ready(p) => {
                let mut checks = Vec::new();
                if p.keyed {
                    checks.push(format!("concurrent ({concurrency})"));
                    checks.push("replay (2)".into());
                    checks.push("mismatch (2)".into());
                    if p.requires_key.is_some() {
                        checks.push("missing_key (1)".into());
                    }
                }
                if p.constraint.is_some() {
                    checks.push("duplicate_create (2)".into());
                }
                let key = if p.keyed {
                    format!("      key header: {}\n", p.key_header)
                } else {
                    String::new()
                };
                out.push_str(&format!(
                    "  {} {}\n      body: {}\n{key}      checks (requests): {}\n",
                    p.method,
                    p.url,
                    p.body_source,
                    checks.join(", ")
                ));
            }
            Planned::Skipped { endpoint, why, .. } => {
                out.push_str(&format!("  skip {endpoint}: {why}\n"));
            }
        }
    }
    out
}

/// Asks on the terminal; refuses when no one can answer.
fn confirm(plan_text: &str, yes: bool) -> Result<(), String> {
    eprint!("{plan_text}");
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err("standard input is not a terminal, so the probe cannot ask before sending: pass --yes to send the requests listed above".into());
    }
    eprint!("Send these requests? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| format!("cannot read the answer: {e}"))?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err("nothing sent: the probe was not confirmed".into())
    }
}

/// Runs the probe: audits `path`, plans, asks, sends, judges. Err is a refusal or a failure to
/// run (exit 2).
pub fn run(args: &ProbeArgs) -> Result<ProbeReport, String> {
    let target = target::check(args.base_url, args.allow_remote)?;
    if args.concurrency < 2 {
        return Err("--concurrency must be at least 2".into());
    }
    let headers = args
        .headers
        .iter()
        .map(|h| header(h))
        .collect::<Result<Vec<_>, _>>()?;
    let body_file = match args.body_file {
        Some(f) => {
            let text = std::fs::read_to_string(f)
                .map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| format!("{} is not JSON: {e}", f.display()))?;
            Some((f.display().to_string(), v))
        }
        None => None,
    };
    let config =
        crate::config::Config::discover(args.path, args.config).map_err(|e| e.to_string())?;
    let facts = crate::facts_with(args.path, &config).map_err(|e| e.to_string())?;
    let found =
        crate::discover::discover_with(args.path, config.ignore_matcher(args.path).as_ref());
    let index = schema::Index::build(&found);
    let wanted = plan::Wanted {
        endpoints: args.endpoints,
        body_file,
        key_header: args.key_header.map(str::to_string),
    };
    let planned = plan::plans(&facts, &index, args.path, &target, &wanted);
    if planned.is_empty() {
        return Err(format!(
            "no endpoint to probe: the audit of {} finds no mutation endpoint with an idempotency key or a unique constraint; name one with --endpoint 'POST /path'",
            args.path.display()
        ));
    }
    let ready = planned.iter().any(|p| matches!(p, Planned::Ready(_)));
    if ready {
        target::reachable(&target)?;
        confirm(&describe(&planned, &target, args.concurrency), args.yes)?;
    }
    let client = http::Client {
        headers,
        timeout: args.timeout,
    };
    let nonce: String = http::fresh_key().chars().take(8).collect();
    let endpoints = planned
        .iter()
        .map(|p| match p {
            Planned::Ready(p) => EndpointProbe {
                endpoint: p.endpoint.clone(),
                url: p.url.clone(),
                body_source: p.body_source.clone(),
                checks: checks::run(p, &client, args.concurrency, &nonce),
            },
            Planned::Skipped { endpoint, url, why } => EndpointProbe {
                endpoint: endpoint.clone(),
                url: url.clone(),
                body_source: String::new(),
                checks: output::CheckKind::ALL
                    .iter()
                    .map(|c| checks::skipped(*c, why.clone()))
                    .collect(),
            },
        })
        .collect();
    Ok(ProbeReport {
        schema_version: output::SCHEMA_VERSION,
        base_url: format!("{}{}", target.origin, target.base_path),
        endpoints,
    })
}
