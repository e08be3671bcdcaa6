//! State guards: an effect that runs only while a looked-up row is in some state, on an endpoint
//! whose request changes that state (`if (order.status !== 'pending') return;` before the update
//! that marks the order paid, then the receipt email). A sequential retry finds the row in the
//! new state and takes the other branch; two concurrent retries can both pass the test, so the
//! guard is reported racy unless a claim (a conditional update) makes it atomic.

use crate::facts::{EffectKind, Endpoint, model_key};

pub fn apply(endpoints: &mut [Endpoint]) {
    for ep in endpoints.iter_mut() {
        // The fields each model's absolute updates set: (model, field, update's call and place).
        let sets: Vec<(String, String, String)> = ep
            .side_effects
            .iter()
            .filter(|u| u.kind == EffectKind::DbUpdate && !u.relative)
            .filter_map(|u| Some((model_key(u.target.as_deref()?), u)))
            .flat_map(|(model, u)| {
                u.update_keys.iter().map(move |k| {
                    (
                        model.clone(),
                        k.to_ascii_lowercase(),
                        format!("`{}` at {}", u.callee, u.location),
                    )
                })
            })
            .collect();
        if sets.is_empty() {
            continue;
        }
        for e in ep.side_effects.iter_mut() {
            let Some((models, field, at)) = &e.state_guard else {
                continue;
            };
            let field_key = field.to_ascii_lowercase();
            if let Some((model, _, update)) = sets
                .iter()
                .find(|(m, f, _)| models.contains(m) && *f == field_key)
            {
                e.state_guarded = Some(format!(
                    "`{field}` of the `{model}` row, tested at {at}, which the request sets ({update})"
                ));
            }
        }
    }
}
