//! SQL text read without parsing it, for both front ends and the linker: what a claim is (see
//! `frontend::ts::claims` and the Rust front end's `Gate`: a conditional write that only one
//! request wins), which columns an `INSERT` writes or an `UPDATE` sets, what a `WHERE` fixes.
//! Depends on nothing in the crate.

/// A statement on one line, its words one space apart.
fn flat(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An `UPDATE .. SET .. WHERE ..`, upper-cased on one line: its `SET` list and its `WHERE`.
fn update_parts(sql: &str) -> Option<(String, String)> {
    let upper = flat(sql).to_ascii_uppercase();
    let rest = upper.trim_start().strip_prefix("UPDATE ")?;
    let (set_at, where_at) = (rest.find(" SET ")?, rest.find(" WHERE ")?);
    (where_at > set_at).then(|| {
        (
            rest[set_at + 5..where_at].to_string(),
            rest[where_at + 7..].to_string(),
        )
    })
}

/// `UPDATE t SET a = .. WHERE .. a ..`: a column both set and tested.
pub fn sql_moves_state(sql: &str) -> bool {
    let Some((set_part, where_part)) = update_parts(sql) else {
        return false;
    };
    let (set_part, where_part) = (set_part.as_str(), where_part.as_str());
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let names = |text: &str, c: &str| {
        text.match_indices(c).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + c.len()..].chars().next();
            !before.is_some_and(word) && !after.is_some_and(word)
        })
    };
    // `c = ..` in the `WHERE`, not `c <= ..`, `c >= ..`, `c != ..`
    let equals = |text: &str, c: &str| {
        text.match_indices(c).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + c.len()..].trim_start();
            !before.is_some_and(word) && after.starts_with('=') && !after.starts_with("==")
        })
    };
    set_part
        .split(',')
        .filter_map(|a| a.split_once('='))
        .map(|(c, value)| (c.trim().trim_matches('"'), value))
        .filter(|(c, _)| !c.is_empty() && c.chars().all(word) && !matches!(*c, "ID" | "UPDATED_AT"))
        // `SET n = n + 1`: a counter, which may still match its bound after one run; unless
        // the `WHERE` holds it to one value (`WHERE tenant = $1` before `SET tenant = tenant ||
        // ..`), which the changed row no longer has.
        .filter(|(c, value)| !names(value, c) || equals(where_part, c))
        .any(|(c, _)| names(where_part, c))
}

/// `UPDATE t SET pos = pos + 10 WHERE parent = ? AND pos > ?`: every column the statement moves
/// by its own value is bounded in its `WHERE` by a range (`>`, `>=`, `<`, `<=`). It shifts the
/// rows past a point (to make room, or to close a gap): their order holds, however often it runs.
pub fn sql_shifts_range(sql: &str) -> bool {
    let Some((set_part, where_part)) = update_parts(sql) else {
        return false;
    };
    let (set_part, where_part) = (set_part.as_str(), where_part.as_str());
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    // `c + n` / `c - n`: the column moved by its own value
    let shifts = |c: &str, value: &str| {
        let v = value.trim().trim_matches('"');
        v.strip_prefix(c)
            .map(str::trim_start)
            .is_some_and(|after| after.starts_with('+') || after.starts_with('-'))
    };
    // A point: a bound value or a number, not another column (`usage < usage_limit` caps a
    // counter).
    let point = |v: &str| {
        let v = v.trim_start_matches(['(', ' ']);
        v.starts_with(['?', '$', ':', '@']) || v.starts_with(|c: char| c.is_ascii_digit())
    };
    // `text` bounds column `c` by a range (`>`, `>=`, `<`, `<=` a point)
    let bounded = |text: &str, c: &str| {
        text.match_indices(c).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = &text[i + c.len()..];
            if before.is_some_and(word) || after.chars().next().is_some_and(word) {
                return false;
            }
            let next = after.trim_start();
            let prev = text[..i].trim_end();
            let op = |t: &str| t.trim_start_matches(['<', '>', '=']).to_string();
            if next.starts_with('>') || (next.starts_with('<') && !next.starts_with("<>")) {
                point(&op(next))
            } else if prev.ends_with('<') || (prev.ends_with('>') && !prev.ends_with("<>")) {
                let lhs = prev.trim_end_matches(['<', '>', '=']).trim_end();
                point(lhs.rsplit(' ').next().unwrap_or(""))
            } else {
                false
            }
        })
    };
    let mut moved: Vec<&str> = Vec::new();
    // (`SET pos = CASE WHEN pos = $1 AND id = $2 THEN $3 WHEN $1 < $3 AND pos > $1 AND pos <=
    // $3 THEN pos - 1 .. ELSE pos END`: a move by cases, each case that shifts the column
    // bounding it by a range of its own)
    let mut by_cases = false;
    for (c, value) in set_part.split(',').filter_map(|a| a.split_once('=')) {
        let c = c.trim().trim_matches('"');
        if c.is_empty() || !c.chars().all(word) {
            continue;
        }
        let unquoted = value.replace('"', "");
        if let Some(body) = unquoted.trim().strip_prefix("CASE ") {
            let (body, otherwise) = body.rsplit_once(" ELSE ").unwrap_or((body, ""));
            // (every row no case names, shifted: bounded by nothing)
            if shifts(c, otherwise.trim().trim_end_matches("END")) {
                return false;
            }
            let arms: Vec<(&str, &str)> = body
                .split("WHEN ")
                .filter_map(|arm| arm.split_once(" THEN "))
                .collect();
            let shifting: Vec<&(&str, &str)> = arms
                .iter()
                .filter(|(_, v)| shifts(c, v.trim().trim_end_matches(" END")))
                .collect();
            if !shifting.is_empty() {
                if !shifting.iter().all(|(cond, _)| bounded(cond, c)) {
                    return false;
                }
                by_cases = true;
            }
        } else if shifts(c, value) {
            moved.push(c);
        }
    }
    // One row pinned by its id is moved, not a range shifted.
    let pinned = where_part.match_indices("ID").any(|(i, _)| {
        !where_part[..i].chars().next_back().is_some_and(word)
            && where_part[i + 2..]
                .trim_start_matches(['"', '`', ']'])
                .trim_start()
                .starts_with('=')
    });
    (!moved.is_empty() || by_cases) && !pinned && moved.iter().all(|c| bounded(where_part, c))
}

/// The columns an `UPDATE .. SET` writes, each with the value when it is a constant, as
/// `Effect::update_keys` has them: a string literal (`s:shipped`), a boolean (`b:true`), the
/// current time (`now`); a bound parameter or an expression is not known.
pub fn sql_set_values(sql: &str) -> Vec<(String, Option<String>)> {
    set_assignments(sql)
        .into_iter()
        .map(|(column, value)| (column, sql_constant(&value)))
        .collect()
}

/// The columns an `UPDATE .. SET` sets to a bound value alone (`balance = $1`, `name = ?1`,
/// `name = ?`), each with that value's index (from 0). Plain `?`s are counted only when each
/// one of the statement up to the `SET`'s end is a whole assignment's value.
pub fn sql_set_binds(sql: &str) -> Vec<(String, usize)> {
    let assignments = set_assignments(sql);
    let upper = flat(sql).to_ascii_uppercase();
    let before_set = upper.find(" SET ").map_or("", |i| &upper[..i]);
    let plain_ok = !before_set.contains('?')
        && assignments
            .iter()
            .all(|(_, v)| v.trim() == "?" || !v.contains('?'));
    let mut question = 0usize;
    assignments
        .into_iter()
        .filter_map(|(column, value)| {
            let v = value.trim();
            let numbered = v.strip_prefix('$').or_else(|| v.strip_prefix('?'));
            let at = match numbered {
                Some(n) if !n.is_empty() => n.parse::<usize>().ok()?.checked_sub(1)?,
                _ if v == "?" && plain_ok => {
                    question += 1;
                    question - 1
                }
                _ => return None,
            };
            Some((column, at))
        })
        .collect()
}

/// The assignments of an `UPDATE .. SET`: each column with its value as written.
fn set_assignments(sql: &str) -> Vec<(String, String)> {
    let flat = flat(sql);
    let upper = flat.to_ascii_uppercase();
    let Some(rest) = upper.trim_start().strip_prefix("UPDATE ") else {
        return vec![];
    };
    let offset = flat.len() - rest.len();
    let Some(set_at) = rest.find(" SET ") else {
        return vec![];
    };
    let end = [" WHERE ", " RETURNING ", " FROM "]
        .iter()
        .filter_map(|k| rest[set_at..].find(k).map(|i| set_at + i))
        .min()
        .unwrap_or(rest.len());
    // The assignments as written (string literals keep their case), split at top-level commas.
    let text = &flat[offset + set_at + 5..offset + end];
    let (mut parts, mut depth, mut quoted, mut from) = (Vec::new(), 0i32, false, 0);
    for (i, c) in text.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(&text[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[from..]);
    parts
        .into_iter()
        .filter_map(|a| a.split_once('='))
        .filter_map(|(column, value)| {
            let column = column.trim().trim_matches('"').trim_matches('`');
            let column = column.rsplit('.').next().unwrap_or(column);
            if column.is_empty() || !column.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return None;
            }
            Some((column.to_string(), value.to_string()))
        })
        .collect()
}

/// The columns an `INSERT INTO t (a, b) VALUES (..)` names, each with its value as written
/// (`$1`, `?`, `now()`, `'x'`); `None` when the statement is not of that form.
pub fn sql_insert_columns(sql: &str) -> Option<Vec<(String, String)>> {
    let flat = flat(sql);
    let upper = flat.to_ascii_uppercase();
    let at = upper.find("INSERT ")?;
    let open = at + flat[at..].find('(')?;
    let values = upper[open..].find(" VALUES")? + open;
    let close = flat[..values].rfind(')')?;
    if close < open {
        return None;
    }
    let columns: Vec<String> = flat[open + 1..close]
        .split(',')
        .map(|c| c.trim().trim_matches('"').trim_matches('`').to_string())
        .collect();
    let rest = &flat[values + 7..];
    let start = rest.find('(')?;
    let (mut items, mut depth, mut quoted, mut from) = (Vec::new(), 0i32, false, start + 1);
    for (i, c) in rest.char_indices().skip(start + 1) {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted && depth == 0 => {
                items.push(rest[from..i].trim().to_string());
                break;
            }
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                items.push(rest[from..i].trim().to_string());
                from = i + 1;
            }
            _ => {}
        }
    }
    (columns.len() == items.len()
        && columns
            .iter()
            .all(|c| !c.is_empty() && c.chars().all(|x| x.is_alphanumeric() || x == '_')))
    .then(|| columns.into_iter().zip(items).collect())
}

/// The bound parameters (0-based) whose values an upsert matches on: for
/// `INSERT INTO t (id, name) VALUES ($1, $2) ON CONFLICT (id) DO ..`, `[0]`; `?` placeholders
/// count in order. Empty when the statement names no conflict columns or binds none of them.
pub fn sql_conflict_binds(sql: &str) -> Vec<usize> {
    let upper = flat(sql).to_ascii_uppercase();
    let Some(at) = upper.find("ON CONFLICT") else {
        return vec![];
    };
    let rest = &upper[at + "ON CONFLICT".len()..];
    let rest = rest.trim_start();
    let Some(inner) = rest.strip_prefix('(').and_then(|r| r.split(')').next()) else {
        return vec![];
    };
    let conflict: Vec<String> = inner
        .split(',')
        .map(|c| {
            c.trim()
                .trim_matches('"')
                .trim_matches('`')
                .to_ascii_lowercase()
        })
        .collect();
    sql_insert_bound(sql)
        .unwrap_or_default()
        .into_iter()
        .filter(|(column, ..)| conflict.contains(&column.to_ascii_lowercase()))
        .filter_map(|(.., bound)| bound)
        .collect()
}

/// The named parameters of a statement (`:name`, as cornucopia and clorinde write them; not a
/// `::type` cast), in the order they first appear: the order of the generated `bind`'s values.
fn named_params(sql: &str) -> Vec<String> {
    let bytes = sql.as_bytes();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b':' && bytes.get(i + 1) != Some(&b':') && (i == 0 || bytes[i - 1] != b':') {
            let name: String = sql[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit()) {
                if !out.contains(&name) {
                    out.push(name.clone());
                }
                i += name.len();
            }
        }
        i += 1;
    }
    out
}

/// The columns of an `INSERT INTO t (a, b) VALUES (..)`, each with its value as written and the
/// index (from 0) of the bound parameter it takes, by `$n`, by the order of the `?`s, or by the
/// order named parameters first appear in (`:name`).
fn sql_insert_bound(sql: &str) -> Option<Vec<(String, String, Option<usize>)>> {
    let mut next = 0usize;
    let named = named_params(sql);
    Some(
        sql_insert_columns(sql)?
            .into_iter()
            .map(|(column, value)| {
                // `?` in order, `?1` (SQLite's numbered parameters); else the one parameter the
                // value is or is an expression over (`$1`, `:name`, `$1::uuid`,
                // `encode(digest(:api_key, 'sha256'), 'hex')`): a value made from it is made
                // when it is
                let inner = named_params(&value);
                let numbered: Vec<&str> = value
                    .split('$')
                    .skip(1)
                    .map(|r| r.split(|c: char| !c.is_ascii_digit()).next().unwrap_or(""))
                    .filter(|n| !n.is_empty())
                    .collect();
                let bound = if value == "?" {
                    next += 1;
                    Some(next - 1)
                } else if let Some(n) = value.strip_prefix('?').filter(|n| !n.is_empty()) {
                    n.parse::<usize>().ok().and_then(|n| n.checked_sub(1))
                } else {
                    match (inner.as_slice(), numbered.as_slice()) {
                        ([name], []) => named.iter().position(|n| n == name),
                        ([], [n]) => n.parse::<usize>().ok().and_then(|n| n.checked_sub(1)),
                        _ => None,
                    }
                };
                (column, value, bound)
            })
            .collect(),
    )
}

/// The claim an `INSERT` that skips an existing row makes, its row count tested.
pub const SKIPS_EXISTING: &str =
    "an `INSERT` that skips a row already there (`ON CONFLICT DO NOTHING`), its row count tested";

/// Does an `INSERT` skip a row that is already there (`ON CONFLICT .. DO NOTHING`, MySQL's
/// `INSERT IGNORE`, SQLite's `INSERT OR IGNORE`)? Its row count says whether this run wrote the
/// row: tested, it is a claim only one request wins, the constraint deciding atomically.
pub fn sql_skips_existing(sql: &str) -> bool {
    let upper = flat(sql).to_ascii_uppercase();
    let Some(at) = upper.find("INSERT ") else {
        return false;
    };
    let rest = &upper[at..];
    rest.starts_with("INSERT IGNORE ")
        || rest.starts_with("INSERT OR IGNORE ")
        || rest
            .find("ON CONFLICT")
            .is_some_and(|c| rest[c..].contains(" DO NOTHING"))
}

/// The claim a `DELETE` makes, its row count tested.
pub const DELETES_ROW: &str = "a `DELETE` whose row count says whether the row was still there";

/// Is the statement a `DELETE`? Its row count says whether this run removed the row: tested,
/// with the other runs refused, only one request gets past it.
pub fn sql_deletes(sql: &str) -> bool {
    flat(sql)
        .trim_start()
        .get(..7)
        .is_some_and(|w| w.eq_ignore_ascii_case("DELETE "))
}

/// How a statement built at run time is labelled when its conflict clause is filled in.
pub const OPEN_CONFLICT: &str = "raw SQL built at run time (its conflict clause filled in: whether a repeat writes a second row is not known)";

/// A statement built at run time, its holes written `$1`, `$2`, .. (a template's `${..}`, a
/// `format!`'s `{..}`), whose conflict clause is a hole: `INSERT ${replace ? 'OR REPLACE' :
/// ''} INTO ..`, `ON CONFLICT (${primaryKey}) DO UPDATE ..`. Whether a repeat writes the same
/// row or a second one is not known.
pub fn open_conflict(sql: &str) -> bool {
    let upper = flat(sql).to_ascii_uppercase();
    let Some(insert) = upper.find("INSERT") else {
        return false;
    };
    let between = upper[insert..]
        .find(" INTO")
        .is_some_and(|into| upper[insert..insert + into].contains('$'));
    let target = upper.find("ON CONFLICT").is_some_and(|c| {
        upper[c..]
            .split(" DO ")
            .next()
            .is_some_and(|t| t.contains('$'))
    });
    between || target
}

/// Does the text start with a write statement's keyword (`INSERT`, `UPDATE`, `DELETE`,
/// `REPLACE`)?
pub fn starts_with_write(text: &str) -> bool {
    text.split_whitespace().next().is_some_and(|first| {
        ["INSERT", "UPDATE", "DELETE", "REPLACE"]
            .iter()
            .any(|k| first.eq_ignore_ascii_case(k))
    })
}

/// The statements that change a schema, as their first words.
const SCHEMA_CHANGES: &[&str] = &[
    "CREATE TABLE ",
    "CREATE UNIQUE INDEX ",
    "CREATE INDEX ",
    "ALTER TABLE ",
    "DROP TABLE ",
    "DROP INDEX ",
];

/// Does a statement change the schema (`CREATE TABLE`, `CREATE [UNIQUE] INDEX`, `ALTER TABLE`, a
/// drop of a table or an index)? Leading `--` comments are skipped.
pub fn starts_with_schema_change(stmt: &str) -> bool {
    let mut rest = stmt.trim_start();
    while let Some(after) = rest.strip_prefix("--") {
        rest = after.split_once('\n').map_or("", |(_, r)| r).trim_start();
    }
    let upper = flat(rest).to_ascii_uppercase() + " ";
    SCHEMA_CHANGES.iter().any(|k| upper.starts_with(k))
}

/// Does the text hold a statement that changes the schema (see [`starts_with_schema_change`])?
/// A string written in code that does is read as a migration (see
/// `frontend::schema::sql::code_constraints`).
pub fn has_schema_statement(text: &str) -> bool {
    let upper = flat(text).to_ascii_uppercase();
    SCHEMA_CHANGES.iter().any(|k| {
        upper.starts_with(k) || upper.contains(&format!(" {k}")) || upper.contains(&format!(";{k}"))
    })
}

/// Is a function named for undoing a migration (`down`, `revert`, `rollback`, `undo`; a class's
/// method as `Class.down`)? What it runs is not the schema.
pub fn undoes_migration(name: &str) -> bool {
    let own = name.rsplit(['.', ':']).next().unwrap_or(name);
    matches!(own, "down" | "revert" | "rollback" | "undo")
}

/// Does an `INSERT` write only what is missing (`INSERT INTO t .. SELECT .. WHERE NOT EXISTS
/// (..)`)? A lookup inside the statement, not a constraint: two concurrent runs can both insert.
/// Also `INSERT INTO t .. SELECT .. LEFT JOIN t ON .. WHERE t.x IS NULL` (an anti-join on the
/// table it writes).
pub fn sql_inserts_if_absent(sql: &str) -> bool {
    let upper = flat(sql).to_ascii_uppercase();
    if !upper.contains("INSERT ") {
        return false;
    }
    if upper.contains("WHERE NOT EXISTS") {
        return true;
    }
    let table = upper
        .split_once(" INTO ")
        .and_then(|(_, rest)| rest.split([' ', '(']).next())
        .filter(|t| !t.is_empty());
    table.is_some_and(|t| {
        upper.contains(&format!("LEFT JOIN {t} "))
            && upper.contains(" IS NULL")
            && upper.contains(" SELECT ")
    })
}

/// Does a `SELECT` lock the rows it reads (`FOR UPDATE`, `FOR NO KEY UPDATE`, `FOR SHARE`)?
pub fn sql_locks(sql: &str) -> bool {
    let words: Vec<String> = sql
        .split_whitespace()
        .map(|w| w.trim_end_matches(';').to_ascii_uppercase())
        .collect();
    words
        .windows(2)
        .any(|w| w[0] == "FOR" && matches!(w[1].as_str(), "UPDATE" | "NO" | "SHARE" | "KEY"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_parameters_bind_in_the_order_they_first_appear() {
        let sql = "INSERT INTO api_keys (team_id, name, api_key) VALUES (:team_id, :name, \
                   encode(digest(:api_key, 'sha256'), 'hex')) RETURNING id::text";
        // (the key is the third value the generated `bind` takes; `::text` is a cast)
        assert_eq!(
            sql_inserted_keys(sql, |i| i == 2),
            Some(vec!["team_id".to_string(), "name".to_string()])
        );
        assert_eq!(named_params(sql), ["team_id", "name", "api_key"]);
    }

    #[test]
    fn an_anti_join_inserts_only_what_is_missing() {
        assert!(sql_inserts_if_absent(
            "INSERT INTO read_notifications (notification_id, user_id) SELECT notifications.id, ? FROM notifications LEFT JOIN read_notifications ON notifications.id = read_notifications.notification_id AND read_notifications.user_id = ? WHERE read_notifications.notification_id IS NULL"
        ));
        assert!(!sql_inserts_if_absent(
            "INSERT INTO audit (note) SELECT n.title FROM notes n LEFT JOIN users u ON u.id = n.user_id WHERE u.deleted_at IS NULL"
        ));
    }

    #[test]
    fn a_shift_of_the_positions_past_a_point() {
        assert!(sql_shifts_range(
            "UPDATE branches SET notePosition = notePosition + 10 WHERE parentNoteId = ? AND notePosition > ? AND isDeleted = 0"
        ));
        assert!(sql_shifts_range(
            "update items set position = position - 1 where list_id = $1 and position >= $2"
        ));
        // One row moved by one: a repeat moves it again.
        assert!(!sql_shifts_range(
            "UPDATE sections SET position = position - 1 WHERE id = ?"
        ));
        // A bound on another column.
        assert!(!sql_shifts_range(
            "UPDATE accounts SET credits = credits + 10 WHERE id = ? AND level > 2"
        ));
        assert!(!sql_shifts_range("UPDATE t SET a = 1 WHERE a > 2"));
        // A counter capped by another column, and one row pinned by its id: no shift.
        assert!(!sql_shifts_range(
            "UPDATE Project SET aiUsage = aiUsage + 1 WHERE id = $1 AND aiUsage < aiLimit"
        ));
        assert!(!sql_shifts_range(
            "UPDATE events SET seats = seats - 1 WHERE id = ? AND seats > 0"
        ));
        assert!(!sql_shifts_range(
            "UPDATE plans SET used = used + 1 WHERE used < quota"
        ));
        // A move by cases: each case that shifts the column bounds it by a range of its own.
        assert!(sql_shifts_range(
            "UPDATE list SET index = CASE WHEN index = $1 AND id = $2 THEN $3 WHEN $1 < $3 AND index > $1 AND index <= $3 THEN index - 1 WHEN $1 > $3 AND index >= $3 AND index < $1 THEN index + 1 ELSE index END WHERE \"boardId\" = $4"
        ));
        // (a case that shifts every row of the board, bounded by nothing)
        assert!(!sql_shifts_range(
            "UPDATE list SET index = CASE WHEN id = $1 THEN $2 ELSE index + 1 END WHERE board_id = $3"
        ));
        assert!(!sql_shifts_range(
            "UPDATE list SET index = CASE WHEN id = $1 THEN $2 WHEN kind = 'x' THEN index + 1 ELSE index END WHERE board_id = $3"
        ));
    }

    #[test]
    fn the_binds_an_upsert_matches_on() {
        assert_eq!(
            sql_conflict_binds(
                "INSERT INTO sets (id, name) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name"
            ),
            vec![0]
        );
        assert_eq!(
            sql_conflict_binds(
                "insert into tags (org, name, color) values (?, ?, ?) on conflict (org, name) do nothing"
            ),
            vec![0, 1]
        );
        assert!(
            sql_conflict_binds("INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING").is_empty()
        );
        assert!(sql_conflict_binds("INSERT INTO t (a) VALUES ($1)").is_empty());
    }

    #[test]
    fn inserts_that_skip_an_existing_row() {
        assert!(sql_skips_existing(
            "INSERT INTO waitlist (email)\n VALUES ($1)\n ON CONFLICT (email) DO NOTHING"
        ));
        assert!(sql_skips_existing("insert ignore into t (a) values (?)"));
        assert!(sql_skips_existing("INSERT OR IGNORE INTO t (a) VALUES (?)"));
        assert!(!sql_skips_existing(
            "INSERT INTO t (a) VALUES ($1) ON CONFLICT (a) DO UPDATE SET a = EXCLUDED.a"
        ));
        assert!(!sql_skips_existing("INSERT INTO t (a) VALUES ($1)"));
        assert!(!sql_skips_existing("UPDATE t SET a = 1 WHERE b = 2"));
    }

    #[test]
    fn the_values_an_update_sets() {
        assert_eq!(
            sql_set_values(
                "UPDATE orders SET status = 'Shipped', note = $2, paid = TRUE, at = now() WHERE id = $1"
            ),
            vec![
                ("status".to_string(), Some("s:Shipped".to_string())),
                ("note".to_string(), None),
                ("paid".to_string(), Some("b:true".to_string())),
                ("at".to_string(), Some("now".to_string())),
            ]
        );
        assert_eq!(
            sql_set_values("update t set a = coalesce($1, 'x, y'), \"b\" = 'z'"),
            vec![
                ("a".to_string(), None),
                ("b".to_string(), Some("s:z".to_string()))
            ]
        );
        assert!(sql_set_values("SELECT 1").is_empty());
    }

    #[test]
    fn the_bound_value_each_set_column_takes() {
        assert_eq!(
            sql_set_binds("UPDATE wallets SET balance = $1, note = 'x' WHERE id = $2"),
            vec![("balance".to_string(), 0)]
        );
        assert_eq!(
            sql_set_binds("UPDATE w SET a = ?, b = ? WHERE id = ?"),
            vec![("a".to_string(), 0), ("b".to_string(), 1)]
        );
        assert_eq!(
            sql_set_binds("update w set b = ?2, a = ?1"),
            vec![("b".to_string(), 1), ("a".to_string(), 0)]
        );
        // a `?` the assignments do not show alone: the plain ones cannot be counted
        assert!(sql_set_binds("UPDATE w SET a = coalesce(?, a), b = ? WHERE id = ?").is_empty());
        assert!(sql_set_binds("UPDATE w JOIN (SELECT ? AS x) s SET a = ?").is_empty());
        assert!(sql_inserts_if_absent(
            "insert into jobs (kind) select $1 where not exists (select 1 from jobs where kind = $1)"
        ));
        assert!(!sql_inserts_if_absent(
            "insert into jobs (kind) values ($1)"
        ));
        assert_eq!(
            sql_insert_columns(
                "INSERT INTO sessions (user_id, jti, at) VALUES ($1, $2, now()) RETURNING id"
            ),
            Some(vec![
                ("user_id".to_string(), "$1".to_string()),
                ("jti".to_string(), "$2".to_string()),
                ("at".to_string(), "now()".to_string()),
            ])
        );
        assert_eq!(sql_insert_columns("INSERT INTO t SELECT * FROM u"), None);
        assert!(sql_locks(
            "select * from jobs where id = $1 for update skip locked"
        ));
        assert!(!sql_locks("select * from jobs"));
    }

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

/// A field name as both front ends compare them: `status`, `Status` and `STATUS` alike,
/// `team_id` and `teamId` alike.
fn field_key(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// A constant as written in SQL, as `Effect::update_keys` has it: a string literal (`'x'` →
/// `s:x`), a boolean (`b:true`), the current time (`now`); `None` for a bound parameter or an
/// expression.
fn sql_constant(value: &str) -> Option<String> {
    let value = value.trim();
    if let Some(s) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        return Some(format!("s:{s}"));
    }
    match value.to_ascii_lowercase().as_str() {
        "true" | "false" => Some(format!("b:{}", value.to_ascii_lowercase())),
        "now()"
        | "current_timestamp"
        | "current_timestamp()"
        | "localtimestamp"
        | "current_date"
        | "clock_timestamp()"
        | "statement_timestamp()"
        | "transaction_timestamp()"
        | "utc_timestamp()"
        | "datetime('now')" => Some("now".into()),
        _ => None,
    }
}

/// The columns a `SELECT .. WHERE a = 'x' AND b = true ..` fixes to a constant (top-level `AND`
/// terms only), as (column, constant).
pub fn sql_where_constants(sql: &str) -> Vec<(String, String)> {
    let flat = flat(sql);
    let upper = flat.to_ascii_uppercase();
    if !upper.trim_start().starts_with("SELECT ") {
        return vec![];
    }
    let Some(at) = upper.find(" WHERE ") else {
        return vec![];
    };
    let end = [
        " ORDER ",
        " GROUP ",
        " LIMIT ",
        " FOR ",
        " RETURNING ",
        " HAVING ",
    ]
    .iter()
    .filter_map(|k| upper[at + 7..].find(k).map(|i| at + 7 + i))
    .min()
    .unwrap_or(flat.len());
    let text = &flat[at + 7..end];
    let upper_text = &upper[at + 7..end];
    if upper_text.contains(" OR ") || text.contains('(') {
        return vec![];
    }
    let mut out = Vec::new();
    let mut from = 0;
    let mut terms = Vec::new();
    for (i, _) in upper_text.match_indices(" AND ") {
        terms.push(&text[from..i]);
        from = i + 5;
    }
    terms.push(&text[from..]);
    for term in terms {
        let Some((column, value)) = term.split_once('=') else {
            continue;
        };
        let column = column.trim().trim_matches('"').trim_matches('`');
        let column = column.rsplit('.').next().unwrap_or(column);
        if column.is_empty()
            || !column.chars().all(|c| c.is_alphanumeric() || c == '_')
            || column.ends_with(['!', '<', '>'])
        {
            continue;
        }
        if let Some(c) = sql_constant(value) {
            out.push((column.to_string(), c));
        }
    }
    out
}

/// The placeholders (0-based, `$1` → 0, `?` in order) a statement compares a column to for
/// equality (`where key = $1`, `and email = ?`).
pub fn sql_equality_binds(sql: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut question = 0usize;
    for (i, ch) in sql.char_indices() {
        let placeholder = match ch {
            '$' => sql[i + 1..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| n.checked_sub(1)),
            // `?1` (SQLite's numbered parameters), else `?` in order
            '?' => match sql[i + 1..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse::<usize>().ok())
            {
                // (a bare `?` after `?N` is N + 1)
                Some(n) => {
                    question = question.max(n);
                    n.checked_sub(1)
                }
                None => {
                    question += 1;
                    Some(question - 1)
                }
            },
            _ => None,
        };
        let Some(at) = placeholder else { continue };
        let before = sql[..i].trim_end();
        let equality = before.ends_with('=')
            && !matches!(
                before.as_bytes().get(before.len().wrapping_sub(2)),
                Some(b'!' | b'<' | b'>')
            );
        if equality {
            out.push(at);
        }
    }
    out
}

/// The columns an `INSERT INTO t (a, b) VALUES ($1, ..)` writes with a bound value, each with
/// that value's index (from 0, by `$n` or by the order of the `?`s).
pub fn sql_insert_binds(sql: &str) -> Vec<(String, usize)> {
    sql_insert_bound(sql)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(column, _, bound)| Some((column, bound?)))
        .collect()
}

/// The columns an `INSERT INTO t (a, b) VALUES (..)` writes with a value a retry sends again:
/// not one the database makes (`gen_random_uuid()`, `now()`, `DEFAULT`), nor a bound parameter
/// `fresh` says is made per call (`fresh(i)`: the `i`-th bound value, from 0, by `$n` or by the
/// order of the `?`s). `None` without a column list.
pub fn sql_inserted_keys(sql: &str, fresh: impl Fn(usize) -> bool) -> Option<Vec<String>> {
    let mut keys = Vec::new();
    for (column, value, bound) in sql_insert_bound(sql)? {
        let lower = value.to_ascii_lowercase();
        let made_here = match bound {
            Some(i) => fresh(i),
            None => {
                lower.starts_with("gen_random_uuid")
                    || lower.starts_with("uuid_generate")
                    || lower.starts_with("now(")
                    || lower.starts_with("current_timestamp")
                    || lower.starts_with("nextval")
                    || lower == "default"
            }
        };
        if !made_here {
            keys.push(column);
        }
    }
    Some(keys)
}

/// The columns an `INSERT` gives a constant: written in the statement (`VALUES (1, 'default')`)
/// or bound to a value `constant` says is one. Every run writes them the same.
pub fn sql_insert_constants(sql: &str, constant: impl Fn(usize) -> bool) -> Vec<String> {
    sql_insert_bound(sql)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, value, bound)| match bound {
            Some(i) => constant(*i),
            None => {
                value.starts_with(|c: char| c.is_ascii_digit())
                    || (value.starts_with('\'') && value.ends_with('\'') && value.len() >= 2)
            }
        })
        .map(|(column, ..)| column)
        .collect()
}

/// The columns an `INSERT INTO t (a, b) VALUES (..)` writes, with the constant each gets when it
/// is one, as `Effect::update_keys` has them.
pub fn sql_insert_values(sql: &str) -> Vec<(String, Option<String>)> {
    sql_insert_columns(sql)
        .unwrap_or_default()
        .into_iter()
        .map(|(c, v)| (c, sql_constant(&v)))
        .collect()
}

/// Whether a row written with `written` (fields and the constants they get, as
/// `Effect::update_keys` has them) is not one a lookup filtered on `filter` (fields fixed to
/// constants) finds: a field both fix, to different constants (`status = 'pending'` looked up,
/// `status = 'approved'` written). A retry's lookup then misses the row the first run wrote, so
/// the lookup guards nothing.
pub fn written_outside_filter(
    filter: &[(String, String)],
    written: &[(String, Option<String>)],
) -> bool {
    filter.iter().any(|(f, want)| {
        written.iter().any(|(w, got)| {
            field_key(w) == field_key(f)
                && got
                    .as_ref()
                    .is_some_and(|g| g != want && !g.starts_with("v:"))
        })
    })
}

#[cfg(test)]
#[test]
fn lookups_by_a_constant_the_create_does_not_write() {
    let filter = sql_where_constants(
        "SELECT id FROM ticket_requests WHERE user_id = $1 AND status = 'pending' LIMIT 1",
    );
    assert_eq!(
        filter,
        vec![("status".to_string(), "s:pending".to_string())]
    );
    let approved =
        sql_insert_values("INSERT INTO ticket_requests (user_id, status) VALUES ($1, 'approved')");
    assert!(written_outside_filter(&filter, &approved));
    let pending =
        sql_insert_values("INSERT INTO ticket_requests (user_id, status) VALUES ($1, 'pending')");
    assert!(!written_outside_filter(&filter, &pending));
    // a status the create leaves to the request or the column's default: not known to differ
    let unknown =
        sql_insert_values("INSERT INTO ticket_requests (user_id, status) VALUES ($1, $2)");
    assert!(!written_outside_filter(&filter, &unknown));
    assert!(sql_where_constants("SELECT 1 FROM t WHERE a = 'x' OR b = 'y'").is_empty());
    assert!(written_outside_filter(
        &[("Status".into(), "m:Status.Pending".into())],
        &[("status".into(), Some("m:Status.Approved".into()))]
    ));
}

#[cfg(test)]
#[test]
fn placeholders_compared_for_equality() {
    assert_eq!(
        sql_equality_binds("select id from api_key where key = $1 and org_id=$2"),
        vec![0, 1]
    );
    assert_eq!(
        sql_equality_binds("select * from t where created_at >= $1 and name = $2 and n != $3"),
        vec![1]
    );
    assert_eq!(
        sql_equality_binds("select * from t where a = ? and b < ? and c = ?"),
        vec![0, 2]
    );
}

/// The functions and procedures a project's SQL defines (`CREATE [OR REPLACE] FUNCTION
/// [schema.]name(..) .. AS $$ body $$`, a `$tag$` or a single-quoted body), by lower-cased name
/// without its schema, each with its body. A later definition of a name replaces an earlier one
/// (migrations redefine functions in order).
pub fn database_functions<'t>(texts: impl Iterator<Item = &'t str>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for text in texts {
        let lower = text.to_ascii_lowercase();
        let mut from = 0;
        while let Some(at) = lower[from..].find("create").map(|i| from + i) {
            from = at + 6;
            let Some((name, body, end)) = function_at(text, &lower, from) else {
                continue;
            };
            from = end;
            out.retain(|(n, _)| *n != name);
            out.push((name, body));
            if out.len() >= 4096 {
                return out;
            }
        }
    }
    out.sort();
    out
}

/// After `CREATE`: `[OR REPLACE] FUNCTION|PROCEDURE name(..) .. AS <body>`: the name, the body
/// and where the body ends.
fn function_at(text: &str, lower: &str, from: usize) -> Option<(String, String, usize)> {
    let rest = lower[from..].trim_start();
    let rest = rest
        .strip_prefix("or replace")
        .map_or(rest, |r| r.trim_start());
    let rest = rest
        .strip_prefix("function")
        .or_else(|| rest.strip_prefix("procedure"))?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let name_at = lower.len() - rest.trim_start().len();
    let paren = name_at + lower[name_at..].find('(')?;
    let name = lower[name_at..paren]
        .trim()
        .rsplit('.')
        .next()?
        .trim_matches('"')
        .to_string();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    // The body: the first dollar-quoted string (`$$ .. $$`, `$body$ .. $body$`) or quoted
    // string after the signature, before the statement ends.
    let mut i = paren;
    let bytes = lower.as_bytes();
    while i < bytes.len() {
        match bytes[i] {
            b'$' => {
                let close = lower[i + 1..].find('$')? + i + 1;
                let tag = &text[i..=close];
                if !tag[1..tag.len() - 1]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    i += 1;
                    continue;
                }
                let start = close + 1;
                let end = start + text[start..].find(tag)?;
                return Some((name, text[start..end].to_string(), end + tag.len()));
            }
            b'\'' => {
                let start = i + 1;
                let end = start + text[start..].find('\'')?;
                return Some((name, text[start..end].to_string(), end + 1));
            }
            b';' => return None,
            _ => i += 1,
        }
    }
    None
}

/// The functions a statement calls (`SELECT top_up($1, $2)`, `CALL archive(..)`, `PERFORM
/// notify(..)`): each identifier followed by `(`, lower-cased, without its schema.
pub fn called_functions(sql: &str) -> Vec<String> {
    // (a table's name before its column list is no call: `INSERT INTO t (a)`, `REFERENCES t (id)`)
    const TABLE_BEFORE: &[&str] = &["into", "table", "references", "update", "on", "exists"];
    let mut out = Vec::new();
    let mut word = String::new();
    // the identifier just read, kept over the spaces after it, and the one before it
    let mut last: Option<String> = None;
    let mut before: Option<String> = None;
    for c in sql.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            if let Some(l) = last.take() {
                before = Some(l);
            }
            word.push(c.to_ascii_lowercase());
            continue;
        }
        if !word.is_empty() {
            last = Some(std::mem::take(&mut word));
        }
        if c.is_whitespace() {
            continue;
        }
        if c == '('
            && let Some(w) = last.take()
            && !before.as_deref().is_some_and(|b| TABLE_BEFORE.contains(&b))
        {
            let name = w.rsplit('.').next().unwrap_or(&w).to_string();
            if !name.is_empty() && !out.contains(&name) && out.len() < 32 {
                out.push(name);
            }
        }
        last = None;
        before = None;
    }
    out
}

#[cfg(test)]
mod function_tests {
    use super::*;

    #[test]
    fn reads_function_bodies() {
        let sql = "create or replace function public.top_up_usage_credits(p_org uuid, p_amount int)\n\
            returns void language plpgsql security definer as $$\n\
            begin\n  insert into usage_credit_grants (org_id, amount) values (p_org, p_amount);\nend;\n$$;\n\
            CREATE FUNCTION touch() RETURNS trigger AS $body$ BEGIN NEW.updated_at = now(); RETURN NEW; END; $body$ LANGUAGE plpgsql;\n\
            create function add(a int, b int) returns int as 'select a + b' language sql;\n\
            create table t (id int);";
        let fns = database_functions(std::iter::once(sql));
        let names: Vec<&str> = fns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["add", "top_up_usage_credits", "touch"]);
        assert!(fns[1].1.contains("insert into usage_credit_grants"));
        assert_eq!(fns[0].1, "select a + b");
        // a later definition replaces an earlier one
        let again = database_functions(
            [
                "create function f() returns void as $$ insert into a values (1) $$;",
                "create or replace function f() returns void as $$ update a set x = 1 $$;",
            ]
            .into_iter(),
        );
        assert_eq!(again.len(), 1);
        assert!(again[0].1.contains("update a"));
    }

    #[test]
    fn finds_called_functions() {
        assert_eq!(called_functions("SELECT public.top_up($1, $2)"), ["top_up"]);
        assert_eq!(
            called_functions("select * from grant_credits ($1)"),
            ["grant_credits"]
        );
        assert!(called_functions("SELECT id FROM users WHERE id = $1").is_empty());
        assert_eq!(
            called_functions("insert into grants (org, amount) values (grant_id($1), 2)"),
            ["values", "grant_id"]
        );
    }
}
