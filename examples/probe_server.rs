//! A small server to try `retrysafe probe` on: the app of `tests/data/probe-shop`, keys done
//! right, or (`--racy`) with a check-then-insert race, no fingerprint and a 500 on a duplicate.
//!
//! ```sh
//! cargo run --example probe_server -- --racy 3000
//! retrysafe probe tests/data/probe-shop --base-url http://127.0.0.1:3000
//! ```

#[path = "../tests/common/probe_server.rs"]
#[allow(dead_code)]
mod probe_server;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let racy = args.iter().any(|a| a == "--racy");
    let port = args.iter().find_map(|a| a.parse().ok()).unwrap_or(3000);
    let server = probe_server::start(!racy, port);
    println!(
        "listening on {} ({})",
        server.base,
        if racy { "racy keys" } else { "keys done right" }
    );
    loop {
        std::thread::park();
    }
}
