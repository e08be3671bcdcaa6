//! The server a probe may talk to: the `--base-url` the user gives, and only a local or private
//! one unless `--allow-remote`.

use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// A checked base URL.
#[derive(Debug, Clone)]
pub struct Target {
    /// `http://127.0.0.1:3000`, without a trailing slash.
    pub origin: String,
    /// The base URL's own path (`/v1`), prepended to every endpoint's path; empty for none.
    pub base_path: String,
    pub addresses: Vec<SocketAddr>,
}

impl Target {
    /// The URL of `path` (an endpoint's path, `/`-rooted) on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}{}", self.origin, self.base_path, path)
    }
}

/// Whether an address is one a probe may reach without `--allow-remote`: loopback, private
/// (RFC 1918, IPv6 unique local `fc00::/7`) or link-local.
pub fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_local(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback() || (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80
        }
    }
}

/// Parses and resolves `base_url`; refuses a scheme this build cannot speak, and (unless
/// `allow_remote`) a host any of whose addresses is neither loopback, private nor link-local.
pub fn check(base_url: &str, allow_remote: bool) -> Result<Target, String> {
    let uri: ureq::http::Uri = base_url
        .parse()
        .map_err(|e| format!("--base-url `{base_url}` is not a URL: {e}"))?;
    let scheme = uri.scheme_str().unwrap_or("");
    let default_port = match scheme {
        "http" => 80,
        "https" if cfg!(feature = "tls") => 443,
        "https" => {
            return Err(format!(
                "--base-url `{base_url}`: this build speaks plain HTTP only (build with `--features tls` for https), as a local server does"
            ));
        }
        _ => {
            return Err(format!(
                "--base-url `{base_url}` must start with http:// (a local or staging server)"
            ));
        }
    };
    let host = uri
        .host()
        .ok_or_else(|| format!("--base-url `{base_url}` has no host"))?;
    if uri.query().is_some() {
        return Err(format!("--base-url `{base_url}` must not have a query"));
    }
    let port = uri.port_u16().unwrap_or(default_port);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = (bare, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve `{host}`: {e}"))?
        .collect();
    if addresses.is_empty() {
        return Err(format!("`{host}` resolves to no address"));
    }
    if !allow_remote && let Some(remote) = addresses.iter().find(|a| !is_local(a.ip())) {
        return Err(format!(
            "`{host}` resolves to {}, which is not a loopback, private or link-local address: probe sends real mutations, so point it at a local or staging server, or pass --allow-remote if you mean it",
            remote.ip()
        ));
    }
    let origin = match uri.port_u16() {
        Some(p) => format!("{scheme}://{host}:{p}"),
        None => format!("{scheme}://{host}"),
    };
    Ok(Target {
        origin,
        base_path: uri.path().trim_end_matches('/').to_string(),
        addresses,
    })
}

/// Connects (TCP only, nothing sent) to see that a server listens there.
pub fn reachable(target: &Target) -> Result<(), String> {
    let mut last = String::new();
    for a in &target.addresses {
        match TcpStream::connect_timeout(a, Duration::from_secs(3)) {
            Ok(_) => return Ok(()),
            Err(e) => last = format!("{a}: {e}"),
        }
    }
    Err(format!(
        "nothing answers at {} ({last}); start the server first",
        target.origin
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_addresses_pass_without_allow_remote() {
        for ok in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.9",
            "172.16.5.5",
            "169.254.1.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_local(ok.parse().unwrap()), "{ok}");
        }
        for no in [
            "8.8.8.8",
            "172.32.0.1",
            "2001:db8::1",
            "0.0.0.0",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_local(no.parse().unwrap()), "{no}");
        }
    }

    #[test]
    fn base_urls_are_checked() {
        let t = check("http://127.0.0.1:3000/v1/", false).unwrap();
        assert_eq!(t.url("/orders"), "http://127.0.0.1:3000/v1/orders");
        let t = check("http://[::1]:8080", false).unwrap();
        assert_eq!(t.url("/x"), "http://[::1]:8080/x");
        assert!(
            check("http://8.8.8.8/", false)
                .unwrap_err()
                .contains("--allow-remote")
        );
        assert!(check("http://8.8.8.8/", true).is_ok());
        assert!(check("ftp://127.0.0.1/", false).is_err());
        assert!(check("127.0.0.1:3000", false).is_err());
    }
}
