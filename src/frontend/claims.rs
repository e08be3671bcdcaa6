//! What both front ends recognise as a claim (see `frontend::ts::claims` and the Rust front end's
//! `Gate`): the forms of a conditional write that only one request wins.

/// `UPDATE t SET a = .. WHERE .. a ..`: a column both set and tested.
pub fn sql_moves_state(sql: &str) -> bool {
    let upper = sql
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    let Some(rest) = upper.trim_start().strip_prefix("UPDATE ") else {
        return false;
    };
    let (Some(set_at), Some(where_at)) = (rest.find(" SET "), rest.find(" WHERE ")) else {
        return false;
    };
    if where_at < set_at {
        return false;
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let set_part = &rest[set_at + 5..where_at];
    let where_part = &rest[where_at + 7..];
    let names = |text: &str, c: &str| {
        text.match_indices(c).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + c.len()..].chars().next();
            !before.is_some_and(word) && !after.is_some_and(word)
        })
    };
    set_part
        .split(',')
        .filter_map(|a| a.split_once('='))
        .map(|(c, value)| (c.trim().trim_matches('"'), value))
        .filter(|(c, _)| !c.is_empty() && c.chars().all(word) && !matches!(*c, "ID" | "UPDATED_AT"))
        // `SET n = n + 1`: a counter, which may still match its bound after one run.
        .filter(|(c, value)| !names(value, c))
        .any(|(c, _)| names(where_part, c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_of_the_state_its_where_tests() {
        assert!(sql_moves_state(
            "UPDATE jobs SET status = 'running' WHERE id = $1 AND status = 'pending'"
        ));
        assert!(sql_moves_state(
            "update invoices set sent_at = now() where id = $1 and sent_at is null"
        ));
        assert!(!sql_moves_state(
            "UPDATE jobs SET status = $2 WHERE id = $1"
        ));
        assert!(!sql_moves_state(
            "UPDATE jobs SET last_status = $2 WHERE id = $1 AND status = 'x'"
        ));
        assert!(!sql_moves_state(
            "SELECT status FROM jobs WHERE status = 'x'"
        ));
        assert!(!sql_moves_state(
            "UPDATE quotas SET used = used + 1 WHERE id = $1 AND used < 10"
        ));
    }
}
