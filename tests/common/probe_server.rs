//! The servers `retrysafe probe` is tested against (tests/probe.rs) and demonstrated on
//! (`cargo run --example probe_server`), on 127.0.0.1. Both serve the app of
//! `tests/data/probe-shop`: `POST /api/orders` with an `Idempotency-Key`, `POST /api/users` with a
//! unique email. `correct` implements keys as the draft standard says (atomic claim, fingerprint,
//! 409 in flight, verbatim replay) and answers a duplicate user 409; otherwise the key is checked,
//! then stored after the work (a race), with no fingerprint, and a duplicate user is a 500.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone)]
pub struct Stored {
    hash: String,
    /// None while the first request is in flight.
    response: Option<(u16, String)>,
}

#[derive(Default)]
pub struct State {
    keys: Mutex<HashMap<String, Stored>>,
    users: Mutex<HashMap<String, String>>,
    ids: AtomicU64,
    pub requests: AtomicUsize,
}

/// A running test server and how many requests it has received.
pub struct Server {
    pub base: String,
    pub state: Arc<State>,
}

fn respond(req: tiny_http::Request, status: u16, body: &str) {
    let header = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
    let _ = req.respond(
        tiny_http::Response::from_string(body)
            .with_status_code(status)
            .with_header(header),
    );
}

fn valid_order(body: &str) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return false;
    };
    v["sku"].as_str().is_some_and(|s| s.len() >= 2)
        && v["quantity"].as_i64().is_some_and(|q| q >= 1)
        && v["email"].as_str().is_some_and(|e| e.contains('@'))
}

/// Creates the order: slow enough that two concurrent requests overlap.
fn create_order(state: &State, body: &str) -> (u16, String) {
    std::thread::sleep(Duration::from_millis(300));
    let id = state.ids.fetch_add(1, Ordering::SeqCst) + 1;
    let mut order: Value = serde_json::from_str(body).unwrap();
    order["id"] = json!(id);
    (201, order.to_string())
}

fn orders(state: &State, key: Option<String>, body: String, correct: bool) -> (u16, String) {
    let Some(key) = key else {
        return (
            400,
            r#"{"error":"Idempotency-Key header is required"}"#.into(),
        );
    };
    if !valid_order(&body) {
        return (400, r#"{"error":"invalid order"}"#.into());
    }
    if correct {
        // claimed atomically, fingerprinted, 409 while in flight, replayed verbatim
        {
            let mut keys = state.keys.lock().unwrap();
            if let Some(s) = keys.get(&key) {
                return match &s.response {
                    _ if s.hash != body => (
                        422,
                        r#"{"error":"Idempotency-Key was used with a different request"}"#.into(),
                    ),
                    None => (409, r#"{"error":"in progress"}"#.into()),
                    Some(r) => r.clone(),
                };
            }
            keys.insert(
                key.clone(),
                Stored {
                    hash: body.clone(),
                    response: None,
                },
            );
        }
        let response = create_order(state, &body);
        state.keys.lock().unwrap().get_mut(&key).unwrap().response = Some(response.clone());
        response
    } else {
        // check, then insert after the work: two concurrent requests both run; no fingerprint
        let existing = state.keys.lock().unwrap().get(&key).cloned();
        if let Some(Stored {
            response: Some(r), ..
        }) = existing
        {
            return r;
        }
        let response = create_order(state, &body);
        state.keys.lock().unwrap().insert(
            key,
            Stored {
                hash: String::new(),
                response: Some(response.clone()),
            },
        );
        response
    }
}

fn users(state: &State, body: String, correct: bool) -> (u16, String) {
    let Ok(v) = serde_json::from_str::<Value>(&body) else {
        return (400, "{}".into());
    };
    let (Some(email), Some(_)) = (v["email"].as_str(), v["name"].as_str()) else {
        return (400, r#"{"error":"email and name are required"}"#.into());
    };
    let mut users = state.users.lock().unwrap();
    if users.contains_key(email) {
        return if correct {
            (409, r#"{"error":"a user with this email exists"}"#.into())
        } else {
            (
                500,
                r#"{"error":"duplicate key value violates unique constraint \"User_email_key\""}"#
                    .into(),
            )
        };
    }
    let id = state.ids.fetch_add(1, Ordering::SeqCst) + 1;
    let user = json!({"id": id, "email": email}).to_string();
    users.insert(email.to_string(), user.clone());
    (201, user)
}

pub fn start(correct: bool, port: u16) -> Server {
    let server = Arc::new(tiny_http::Server::http(("127.0.0.1", port)).unwrap());
    let port = server.server_addr().to_ip().unwrap().port();
    let state = Arc::new(State::default());
    for _ in 0..4 {
        let server = Arc::clone(&server);
        let state = Arc::clone(&state);
        std::thread::spawn(move || {
            for mut req in server.incoming_requests() {
                state.requests.fetch_add(1, Ordering::SeqCst);
                let mut body = String::new();
                let _ = req.as_reader().read_to_string(&mut body);
                let key = req
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Idempotency-Key"))
                    .map(|h| h.value.to_string());
                let (status, out) = match (req.method().as_str(), req.url()) {
                    ("POST", "/api/orders") => orders(&state, key, body, correct),
                    ("POST", "/api/users") => users(&state, body, correct),
                    _ => (404, "{}".into()),
                };
                respond(req, status, &out);
            }
        });
    }
    Server {
        base: format!("http://127.0.0.1:{port}"),
        state,
    }
}
