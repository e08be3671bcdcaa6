//! RS012 unique-violation-unhandled.

use super::{Confidence, Hit, Rule, RuleMeta, Section, Severity, describe};
use crate::facts::{Effect, EffectKind, Endpoint};

const DOC: &str = r#"## What it does
Flags a create that only a unique constraint protects when nothing turns the constraint's
violation into an answer: no `catch` for the unique-violation code (Prisma `P2002`, Postgres
`23505`, MySQL `ER_DUP_ENTRY`/1062, SQLite `SQLITE_CONSTRAINT_UNIQUE`, Mongo 11000, Sequelize
`UniqueConstraintError`; in Rust no `match`, `if let` or `.map_err(..)` on the result naming
sea-orm's `SqlErr::UniqueConstraintViolation`, diesel's `UniqueViolation` or sqlx's
`is_unique_violation()`) and no read of the same model before the insert.

## Why is this bad?
The constraint does stop the duplicate row, but the retry's insert throws, and the client that
retried after a timeout gets a 500 for a request that in fact succeeded. It retries again, alerts
fire, and support sees "failed" orders that exist.

## Example
```ts
router.post('/tags', async (req, res) => {
  const tag = await prisma.tag.create({ data: { name: req.body.name, userId: req.user.id } });
  res.status(201).json(tag);
});
```

Use instead:
```ts
router.post('/tags', async (req, res) => {
  try {
    res.status(201).json(await prisma.tag.create({ data: { name: req.body.name, userId: req.user.id } }));
  } catch (e) {
    if (e.code !== 'P2002') throw e;
    res.status(200).json(await prisma.tag.findUnique({ where: { name_userId: { name: req.body.name, userId: req.user.id } } }));
  }
});
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() {
        return None;
    }
    let unhandled: Vec<&Effect> = ep
        .side_effects
        .iter()
        .filter(|e| {
            e.kind == EffectKind::DbCreate
                && e.constraint.is_some()
                && !e.unique_caught
                && !e.swallowed
                && !e.prechecked
                // made only when a lookup (or the statement itself) found no row: a retry
                // after a success takes the other way, only a concurrent one meets the constraint
                && !e.find_or_create
        })
        .collect();
    let first = unhandled.first()?;
    let constraint = first.constraint.clone().unwrap_or_default();
    // Without the written keys in view, the constraint is only assumed to cover the caller's
    // values (a server-generated column would not conflict on a retry).
    let confidence = if unhandled.iter().all(|e| e.data_keys.is_none()) {
        Confidence::Speculative
    } else {
        Confidence::of(&unhandled)
    };
    Some(Hit {
        confidence,
        message: format!(
            "The unique constraint {constraint} stops a duplicate of {}, but nothing handles its violation.",
            describe(first)
        ),
        change: format!(
            "Catch the unique-violation error around the create at {} and answer with the existing record (200) or 409, instead of letting it surface as a 500.",
            first.location
        ),
        impact: "A retried request that already succeeded gets a 500 instead of its result.".into(),
        at: None,
        cause: Some(first.location.clone()),
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS012",
            name: "unique-violation-unhandled",
            section: Section::ConstraintBased,
            severity: Severity::Medium,
            summary: "a create protected only by a unique constraint whose violation is not caught, so a retry gets a 500",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{effect, endpoint};

    fn create(caught: bool, prechecked: bool, constraint: bool, keys: bool) -> Endpoint {
        let e = Effect {
            unique_caught: caught,
            prechecked,
            constraint: constraint.then(|| "Tag(name, userId) at schema.prisma:3".into()),
            data_keys: keys.then(|| vec!["name".into(), "userId".into()]),
            ..effect(EffectKind::DbCreate)
        };
        endpoint("POST", vec![e], vec![])
    }

    #[test]
    fn fires_only_when_the_violation_is_unhandled() {
        assert!(check(&create(false, false, true, true)).is_some());
        assert!(check(&create(true, false, true, true)).is_none());
        assert!(check(&create(false, true, true, true)).is_none());
        assert!(check(&create(false, false, false, true)).is_none());
    }

    #[test]
    fn speculative_when_the_written_keys_are_not_in_view() {
        assert_eq!(
            check(&create(false, false, true, true)).unwrap().confidence,
            Confidence::Likely
        );
        assert_eq!(
            check(&create(false, false, true, false))
                .unwrap()
                .confidence,
            Confidence::Speculative
        );
    }
}
