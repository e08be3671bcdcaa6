//! RS024 key-where-constraint-suffices.

use super::{Confidence, Hit, Rule, RuleMeta, Section, Severity};
use crate::facts::{EffectKind, Endpoint, MechanismKind};

const DOC: &str = r#"## What it does
Flags header-key machinery on an endpoint whose only lasting effect is a create already protected
by a natural, caller-keyed unique constraint (`(user_id, slug)`, `(workspace_id, email)`), with no
payment, message or external call that the constraint would not stop.

## Why is this bad?
The constraint already makes the retry harmless; the key store adds a write per request, a table
to expire and clean, and failure modes of its own (a stuck in-progress claim). The methodology
calls this over-building: keep the constraint, answer its violation with the existing item, and
drop the key requirement for this endpoint.

## Example
```ts
router.post('/workspaces/:id/members', idempotency(), async (req, res) => {
  // @@unique([workspaceId, email]) on Member
  res.status(201).json(await prisma.member.create({ data: { workspaceId: req.params.id, email: req.body.email } }));
});
```

Use instead:
```ts
router.post('/workspaces/:id/members', async (req, res) => {
  const member = await prisma.member.upsert({
    where: { workspaceId_email: { workspaceId: req.params.id, email: req.body.email } },
    create: { workspaceId: req.params.id, email: req.body.email },
    update: {},
  });
  res.status(201).json(member);
});
```"#;

fn check(ep: &Endpoint) -> Option<Hit> {
    if !ep.is_mutation() || !ep.has_mechanism(MechanismKind::HeaderKey) {
        return None;
    }
    let natural = |c: &str| !c.to_ascii_lowercase().contains("idempoten");
    let creates: Vec<_> = ep
        .side_effects
        .iter()
        .filter(|e| e.kind == EffectKind::DbCreate && !e.upsert)
        .collect();
    if creates.is_empty()
        || !creates
            .iter()
            .all(|e| e.constraint.as_deref().is_some_and(natural))
    {
        return None;
    }
    // Everything else must be harmless to repeat: the constraint does not stop a charge or an email.
    if ep
        .side_effects
        .iter()
        .any(|e| e.kind != EffectKind::DbCreate && e.repeats_on_retry())
    {
        return None;
    }
    let constraint = creates[0].constraint.clone().unwrap_or_default();
    Some(Hit {
        confidence: Confidence::Likely,
        message: format!(
            "The idempotency key duplicates what the unique constraint {constraint} already guarantees."
        ),
        change: format!(
            "Drop the key requirement on `{}` and answer the constraint's violation with the existing record.",
            ep.label()
        ),
        impact: "One less key store to run, expire and keep correct for this endpoint.".into(),
        at: None,
        cause: None,
    })
}

pub fn rule() -> Rule {
    Rule {
        meta: RuleMeta {
            id: "RS024",
            name: "key-where-constraint-suffices",
            section: Section::OverBuilt,
            severity: Severity::Inverse,
            summary: "header-key machinery on an endpoint already protected by a natural unique constraint",
            doc: DOC,
        },
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Effect;
    use crate::rules::testing::{effect, endpoint, mechanism};

    fn keyed(constraint: Option<&str>, email: bool) -> Endpoint {
        let create = Effect {
            unique_caught: true,
            constraint: constraint.map(String::from),
            ..effect(EffectKind::DbCreate)
        };
        let mut effects = vec![create];
        if email {
            effects.push(effect(EffectKind::Email));
        }
        endpoint("POST", effects, vec![mechanism(MechanismKind::HeaderKey)])
    }

    #[test]
    fn fires_when_the_constraint_covers_everything() {
        assert!(
            check(&keyed(
                Some("Member(workspaceId, email) at s.prisma:4"),
                false
            ))
            .is_some()
        );
        assert!(
            check(&keyed(
                Some("Member(workspaceId, email) at s.prisma:4"),
                true
            ))
            .is_none()
        );
        assert!(check(&keyed(None, false)).is_none());
        assert!(check(&keyed(Some("Key(idempotencyKey) at s.prisma:9"), false)).is_none());
    }
}
