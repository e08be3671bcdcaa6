//! State guards: an effect that runs only while a looked-up row is in some state, on an endpoint
//! whose request changes that state (`if (order.status !== 'pending') return;` before the update
//! that marks the order paid, then the receipt email). A sequential retry finds the row in the
//! new state and takes the other branch; two concurrent retries can both pass the test, so the
//! guard is reported racy unless a claim (a conditional update) makes it atomic.
//!
//! The guard holds only when the value the update writes is a constant (a literal, the current
//! time, an enum member) that turns the test the other way: `if (!user.password) return` before
//! an update that sets a new password guards nothing. Or when the test compares the field with
//! a value the request holds and the update writes that same value there (`if (ticket.priority
//! !== priority) notify(..)` on an endpoint that sets `priority`; `data: dto` writes `dto.x`
//! into `x`): the retry finds the row already holding it.

use crate::facts::{EffectKind, Endpoint, Location, model_key};

/// Whether a row whose field holds `value` (as `update_keys` writes it) passes `test` (`truthy`,
/// `falsy`, `eq:LIT`, `ne:LIT`); `None` when it cannot be told.
fn holds(test: &str, value: &str) -> Option<bool> {
    let truthy = match value.split_once(':') {
        Some(("s", s)) => Some(!s.is_empty()),
        Some(("b", b)) => Some(b == "true"),
        Some(("m", _)) => Some(true),
        _ if value == "now" => Some(true),
        _ => None,
    };
    let equals = |lit: &str| -> Option<bool> {
        // A value the request holds equals only itself as far as the code shows: the same
        // name written where it was compared. Against a constant it may or may not.
        if lit.starts_with("v:") || value.starts_with("v:") {
            return (lit.eq_ignore_ascii_case(value)).then_some(true);
        }
        match value.split_once(':') {
            Some(("s", s)) => Some(s == lit),
            Some(("b", b)) => Some(b == lit),
            Some(("m", m)) => Some(m == lit),
            _ if value == "now" => Some(false),
            _ => None,
        }
    };
    // `hash:v:NAME`: the stored hash verifies the request's `NAME` (a current password checked
    // before a new one is written). Any other value written there, a new hash, fails it; the
    // same value written back (`NAME` itself) passes.
    let verifies = |lit: &str| -> Option<bool> { Some(lit.eq_ignore_ascii_case(value)) };
    match test.split_once(':') {
        None if test == "truthy" => truthy,
        None if test == "falsy" => truthy.map(|t| !t),
        Some(("eq", lit)) => equals(lit),
        Some(("ne", lit)) => equals(lit).map(|e| !e),
        Some(("hash", lit)) => verifies(lit),
        Some(("nothash", lit)) => verifies(lit).map(|v| !v),
        _ => None,
    }
}

pub fn apply(endpoints: &mut [Endpoint]) {
    for ep in endpoints.iter_mut() {
        // What each model's absolute updates set: (model, field, value, the update's call and
        // place, the tests joined with others that it runs under: `if (goal.active && goal.total
        // >= goal.amount) { update({ active: false }) }` sets the state only on the request that
        // meets the rest of its condition, unless the effect runs under that same test).
        type Set = (String, String, String, String, Vec<Location>);
        let sets: Vec<Set> = ep
            .side_effects
            .iter()
            .filter(|u| u.kind == EffectKind::DbUpdate)
            .filter_map(|u| Some((model_key(u.target.as_deref()?), u)))
            .flat_map(|(model, u)| {
                let partial: Vec<Location> = u
                    .state_guard
                    .iter()
                    .filter(|(.., test, _)| test.starts_with(['T', 'F']))
                    .map(|(.., at)| at.clone())
                    .collect();
                // (a value not known, a fresh hash: `?`, which only a secret check reads; of a
                // relative update, only the fields it sets to a constant: `status = 'delivered'`
                // beside `note = note || $2` still turns a test of the status)
                u.update_keys
                    .iter()
                    .filter(move |(k, v)| {
                        !u.relative
                            || (v.as_deref().is_some_and(|v| !v.starts_with("v:"))
                                && !u.relative_fields.iter().any(|m| m.eq_ignore_ascii_case(k)))
                    })
                    .map(move |(k, v)| {
                        (
                            model.clone(),
                            k.to_ascii_lowercase(),
                            v.clone().unwrap_or_else(|| "?".into()),
                            format!("`{}` at {}", u.callee, u.location),
                            partial.clone(),
                        )
                    })
            })
            .collect();
        if sets.is_empty() {
            continue;
        }
        for e in ep.side_effects.iter_mut() {
            // (of nested tests, the first one the request turns)
            let guarded = e.state_guard.iter().find_map(|(models, field, test, at)| {
                // `t:..`: the effect runs where the test is true (`T:..`, with others).
                let (runs, test) = test.split_once(':')?;
                let runs = runs.eq_ignore_ascii_case("t");
                let field_key = field.to_ascii_lowercase();
                let (model, _, _, update, _) = sets.iter().find(|(m, f, v, _, partial)| {
                    if !partial
                        .iter()
                        .all(|p| e.state_guard.iter().any(|(.., at)| at == p))
                    {
                        return false;
                    }
                    // (`*`: a whole value written, its field of this name into this column)
                    let v = if f == "*" {
                        format!("v:{field}")
                    } else if *f == field_key {
                        v.clone()
                    } else {
                        return false;
                    };
                    models.contains(m) && holds(test, &v) == Some(!runs)
                })?;
                Some(format!(
                    "`{field}` of the `{model}` row, tested at {at}, which the request sets ({update})"
                ))
            });
            if guarded.is_some() {
                e.state_guarded = guarded;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::holds;

    #[test]
    fn a_test_turns_only_on_a_constant_that_flips_it() {
        // `if (order.status !== 'paid') return` then `status: 'shipped'`: a retry returns.
        assert_eq!(holds("ne:paid", "s:shipped"), Some(true));
        // `if (invite.acceptedAt) throw` then `acceptedAt: new Date()`.
        assert_eq!(holds("truthy", "now"), Some(true));
        // `if (!user.password) return` then a new password: still set, same branch.
        assert_eq!(holds("falsy", "s:hash"), Some(false));
        assert_eq!(
            holds("eq:OrderStatus.Paid", "m:OrderStatus.Paid"),
            Some(true)
        );
        assert_eq!(holds("truthy", "x"), None);
        // `if (t.priority !== priority) notify` and `data: { priority }`: a retry skips it.
        assert_eq!(holds("ne:v:priority", "v:priority"), Some(false));
        // compared with what the request sent, written a constant: not known.
        assert_eq!(holds("eq:v:status", "s:closed"), None);
        assert_eq!(holds("ne:v:status", "v:state"), None);
        assert_eq!(holds("ne:closed", "v:status"), None);
        assert_eq!(holds("truthy", "v:status"), None);
        // `if (!(await compare(dto.oldPassword, user.password))) throw` then a new hash written
        // (a value not known): a retry's old password fails the check.
        assert_eq!(holds("nothash:v:oldPassword", "?"), Some(true));
        assert_eq!(holds("hash:v:oldPassword", "v:newPassword"), Some(false));
        // the same value written back still verifies
        assert_eq!(holds("hash:v:oldPassword", "v:oldPassword"), Some(true));
        // a value not known says nothing to any other test
        assert_eq!(holds("truthy", "?"), None);
        assert_eq!(holds("eq:paid", "?"), None);
    }
}
