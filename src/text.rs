//! Strings and names any layer may read: inline code for messages, a URL reduced to its path,
//! and the name heuristics both front ends share (a domain id, a user's intent, a unique-violation
//! code). Depends on nothing in the crate.

/// Inline code that may itself hold backticks (a template literal).
pub fn code(s: &str) -> String {
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

/// The counter a key-value key names: its last segment with a letter in it, segments split at
/// `:`, `.`, `/` and at the holes of a template (`\0`): `views:\0` and `user:\0:views` are
/// `views`, `ratelimit:\0` is `ratelimit`. Both front ends read a Redis increment's key so.
pub fn key_counter_name(key: &str) -> Option<String> {
    key.split([':', '.', '/', '\0'])
        .rev()
        .find(|seg| seg.chars().any(|c| c.is_ascii_alphabetic()))
        .map(String::from)
}

/// Functions and methods that check a secret against its stored hash: bcrypt's `compare` and
/// `verify`, argon2's `verify`, and the names projects give such helpers (`comparePassword`,
/// `verify_password`), in either spelling: lower case, underscores dropped.
const SECRET_CHECKS: &[&str] = &[
    "compare",
    "comparesync",
    "verify",
    "verifysync",
    "comparepassword",
    "comparepasswords",
    "comparepasswordhash",
    "comparehash",
    "verifypassword",
    "verifypasswordhash",
    "verifyhash",
    "checkpassword",
    "validatepassword",
    "ispasswordvalid",
    "isvalidpassword",
    "ispasswordcorrect",
    "passwordmatches",
    "matchpassword",
    "matchespassword",
];

/// Is `name` (a function's or method's) one that checks a secret against its stored hash?
pub fn names_secret_check(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(|c| *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    SECRET_CHECKS.contains(&n.as_str())
}

/// Does the name of what a request sent name the secret it holds now, as a change of it sends
/// it (`oldPassword`, `current_password`, `existingPin`): the proof a change replaces. A plain
/// `password` is also what a sign-in or a confirmation of another change sends.
pub fn names_current_secret(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["old", "current", "existing", "previous"]
        .iter()
        .any(|w| n.contains(w))
}

/// Does a field's name name a stored secret (`password`, `passwordHash`, `encrypted_password`,
/// `hashed_secret`, `pin_hash`)?
pub fn names_secret_field(field: &str) -> bool {
    let f = field.to_ascii_lowercase();
    ["password", "passwd", "hash", "secret", "pin"]
        .iter()
        .any(|w| f.contains(w))
}

/// A URL as the code writes it, reduced to its path: `https://api.x.com/v1/orders?x=1` →
/// `/v1/orders`, `` `${API}/orders/${order.id}` `` → `{API}/orders/{id}`.
pub fn url_path(raw: &str) -> String {
    let mut out = String::new();
    let b = raw.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1) == Some(&b'{') {
            let mut depth = 0;
            let mut j = i + 1;
            while j < b.len() {
                match b[j] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            let inner = raw.get(i + 2..j.min(b.len())).unwrap_or("");
            out.push('{');
            out.push_str(&last_ident(inner));
            out.push('}');
            i = j + 1;
            continue;
        }
        let ch = raw[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    let mut path = out.as_str();
    if let Some(rest) = path
        .strip_prefix("https://")
        .or_else(|| path.strip_prefix("http://"))
    {
        path = rest.find('/').map(|i| &rest[i..]).unwrap_or("/");
    }
    let path = path.split(['?', '#']).next().unwrap_or("");
    if path.is_empty() {
        "/".into()
    } else if path.starts_with('/') || path.starts_with('{') {
        path.into()
    } else {
        format!("/{path}")
    }
}

/// The last identifier of an expression's text: `order.id` → `id`, `encodeURIComponent(slug)` →
/// `slug`.
pub fn last_ident(text: &str) -> String {
    let t = text.trim().trim_end_matches(')').trim_end_matches('!');
    let start = t
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .map(|i| i + 1)
        .unwrap_or(0);
    let id = &t[start..];
    if id.is_empty() {
        "param".into()
    } else {
        id.into()
    }
}

/// `orderId`, `order.id`, `user_id`, `cartUuid`: a stable id of a domain object.
pub fn domain_id_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if [
        "idempot", "key", "intent", "nonce", "attempt", "token", "hash", "secret",
    ]
    .iter()
    .any(|w| lower.contains(w))
    {
        return false;
    }
    lower == "id"
        || lower == "uuid"
        || name.ends_with("Id")
        || name.ends_with("ID")
        || name.ends_with("Uuid")
        || lower.ends_with("_id")
        || lower.ends_with("_uuid")
}

/// A function named like the user's intent: `onSubmit`, `handleCheckout`, `submitOrder`,
/// `confirmPayment`.
pub fn intent_name(name: &str) -> bool {
    let name = name.rsplit('.').next().unwrap_or(name);
    let after = |p: &str| {
        name.strip_prefix(p)
            .and_then(|r| r.chars().next())
            .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
    };
    let lower = name.to_ascii_lowercase();
    after("on") || after("handle") || lower.contains("submit") || lower.contains("confirm")
}

/// Does a catch handler's source name a unique-violation code or error class?
pub fn names_unique_violation(text: &str) -> bool {
    const CODES: &[&str] = &[
        "P2002",
        "23505",
        "ER_DUP_ENTRY",
        "1062",
        "SQLITE_CONSTRAINT",
        "11000",
        "E11000",
        "UniqueConstraintError",
        "UniqueViolation",
        "unique_violation",
        "isUniqueViolation",
        "duplicate key",
    ];
    CODES.iter().any(|c| text.contains(c))
}

/// A header named like a signature or a shared secret (`x-signature`, `x-postmark-secret`,
/// `x-webhook-hmac`) that the catalogue does not list.
pub fn named_like_signature(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["signature", "secret", "hmac"]
        .iter()
        .any(|w| name.contains(w))
}

/// A column whose value a create makes up for its row by its nature: an id, a token, a secret,
/// an API key.
pub fn names_a_made_value(col: &str) -> bool {
    matches!(
        col.replace(['_', '-'], "").to_ascii_lowercase().as_str(),
        "id" | "uuid"
            | "guid"
            | "token"
            | "tokenhash"
            | "secret"
            | "secrethash"
            | "keyhash"
            | "nonce"
            | "salt"
            | "apikey"
            | "accesstoken"
            | "refreshtoken"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_reduce_to_paths() {
        assert_eq!(url_path("/api/orders"), "/api/orders");
        assert_eq!(
            url_path("https://api.example.com/v1/charges?x=1"),
            "/v1/charges"
        );
        assert_eq!(
            url_path("${API_URL}/orders/${order.id}/pay"),
            "{API_URL}/orders/{id}/pay"
        );
        assert_eq!(url_path("orders"), "/orders");
        assert_eq!(url_path("https://example.com"), "/");
    }

    #[test]
    fn names() {
        assert!(domain_id_name("orderId"));
        assert!(domain_id_name("id"));
        assert!(domain_id_name("cart_id"));
        assert!(!domain_id_name("idempotencyKey"));
        assert!(!domain_id_name("android"));
        assert!(intent_name("onSubmit"));
        assert!(intent_name("CheckoutForm.handleSubmit"));
        assert!(intent_name("submitOrder"));
        assert!(!intent_name("createOrder"));
        assert!(!intent_name("once"));
    }
}

/// The variables an example environment file (`.env.example`) sets, in order: `KEY=value` lines,
/// `export KEY=value`, values in single or double quotes, a `#` comment after an unquoted value.
/// A value that refers to another (`${BASE}/api`) or is empty is left out: what it expands to
/// would depend on the machine's environment, and an audit's output must not. (Not the
/// `dotenvy` crate: it expands references from the process's environment.)
pub fn dotenv(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines().take(10_000) {
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        if line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let value = value.trim();
        let value = match value.chars().next() {
            Some(q @ ('"' | '\'')) => match value[1..].find(q) {
                Some(end) => &value[1..1 + end],
                None => continue,
            },
            _ => value.split(" #").next().unwrap_or("").trim(),
        };
        if value.is_empty() || value.contains('$') {
            continue;
        }
        match out.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_string(),
            None => out.push((key.to_string(), value.to_string())),
        }
    }
    out
}

#[cfg(test)]
#[test]
fn reads_an_example_environment_file() {
    let vars = dotenv(
        "# API\nAPI_PREFIX=/api\nexport API_VERSION=\"/v1\" \nEMPTY=\nBASE=${HOST}/x\nNAME='a b' # c\nPORT=3000 # the port\nAPI_PREFIX=/api2\n",
    );
    assert_eq!(
        vars,
        vec![
            ("API_PREFIX".to_string(), "/api2".to_string()),
            ("API_VERSION".to_string(), "/v1".to_string()),
            ("NAME".to_string(), "a b".to_string()),
            ("PORT".to_string(), "3000".to_string()),
        ]
    );
}
