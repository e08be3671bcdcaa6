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
