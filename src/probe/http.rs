//! Sending the probe's requests: a blocking HTTP/1.1 client (`ureq`) that follows no redirect
//! and uses no proxy, so requests go to the base URL and nowhere else; concurrent requests leave
//! together from threads held at a barrier, each on its own connection.

use super::output::ProbeResponse;
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// The body of a response kept in the results.
const KEPT_BODY: usize = 4096;

/// One request to send.
#[derive(Debug, Clone)]
pub struct Request {
    /// Which request of its check (`first`, `concurrent 1 of 2`).
    pub label: String,
    pub method: String,
    pub url: String,
    pub key: Option<String>,
    /// The header the key goes in.
    pub key_header: String,
    /// JSON text; empty for none.
    pub body: String,
}

/// What every request carries: the user's `--header`s, the timeout.
#[derive(Debug, Clone)]
pub struct Client {
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
}

impl Client {
    fn agent(&self) -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .proxy(None)
            .timeout_global(Some(self.timeout))
            .user_agent(concat!("retrysafe-probe/", env!("CARGO_PKG_VERSION")))
            .build()
            .into()
    }

    /// Sends one request on a connection of its own.
    pub fn send(&self, r: &Request) -> ProbeResponse {
        self.send_with(&self.agent(), r)
    }

    fn send_with(&self, agent: &ureq::Agent, r: &Request) -> ProbeResponse {
        let mut builder = ureq::http::Request::builder()
            .method(r.method.as_str())
            .uri(r.url.as_str())
            .header("accept", "application/json");
        for (k, v) in &self.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        if let Some(key) = &r.key {
            builder = builder.header(r.key_header.as_str(), key.as_str());
        }
        let result = if r.body.is_empty() {
            builder
                .body(())
                .map_err(|e| e.to_string())
                .and_then(|req| agent.run(req).map_err(|e| e.to_string()))
        } else {
            builder
                .header("content-type", "application/json")
                .body(r.body.clone().into_bytes())
                .map_err(|e| e.to_string())
                .and_then(|req| agent.run(req).map_err(|e| e.to_string()))
        };
        let mut out = ProbeResponse {
            request: r.label.clone(),
            key: r.key.clone(),
            sent: r.body.clone(),
            status: 0,
            body: String::new(),
            error: None,
        };
        match result {
            Ok(mut resp) => {
                out.status = resp.status().as_u16();
                match resp.body_mut().read_to_vec() {
                    Ok(bytes) => {
                        let mut text = String::from_utf8_lossy(&bytes).into_owned();
                        if text.len() > KEPT_BODY {
                            let mut cut = KEPT_BODY;
                            while !text.is_char_boundary(cut) {
                                cut -= 1;
                            }
                            text.truncate(cut);
                            text.push('…');
                        }
                        out.body = text;
                    }
                    Err(e) => out.error = Some(format!("reading the body: {e}")),
                }
            }
            Err(e) => out.error = Some(e),
        }
        out
    }

    /// Sends `requests` at once: one thread and one connection each, released together by a
    /// barrier once every connection's agent is ready.
    pub fn send_together(&self, requests: &[Request]) -> Vec<ProbeResponse> {
        let barrier = Arc::new(Barrier::new(requests.len()));
        std::thread::scope(|scope| {
            let handles: Vec<_> = requests
                .iter()
                .map(|r| {
                    let barrier = Arc::clone(&barrier);
                    scope.spawn(move || {
                        let agent = self.agent();
                        barrier.wait();
                        self.send_with(&agent, r)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a probe thread does not panic"))
                .collect()
        })
    }
}

/// A fresh idempotency key: a version-4-shaped UUID from the clock, the process and a counter,
/// hashed (unique per request; no randomness crate needed).
pub fn fresh_key() -> String {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = Sha256::new();
    h.update(now.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let b = h.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&b[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn keys_are_fresh_uuids() {
        let a = super::fresh_key();
        let b = super::fresh_key();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
    }
}
