"""Policies as stored rows: validation, wire views, and the organization's policies section.

Shared by the policy activities (``create_policy``, ``create_policies``, ``update_policy``,
``delete_policy``) and queries (``get_policy``, ``list_policies``, ``get_policy_evaluations``).
:func:`organization_section` is the ``policies`` of ``get_organization``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from infra.clock import wire_timestamp
from infra.db.models.organizations import Organization
from infra.db.models.policies import Policy, PolicyEvaluation
from infra.errors import NotFound
from infra.policy.parser import parse
from infra.validation.limits import POLICIES
from infra.wiremodel import WireModel

Effect = Literal["EFFECT_ALLOW", "EFFECT_DENY"]


class PolicyParams(WireModel):
    """``v1CreatePolicyIntentV3`` (also each item of ``create_policies``)."""

    policy_name: str = Field(max_length=256)
    effect: Effect
    condition: str | None = None
    consensus: str | None = None
    notes: str
    time: str | None = None


def validate_expressions(
    condition: str | None, consensus: str | None, time: str | None, prefix: str = ""
) -> None:
    """Parse every present expression; a syntax error is a 400 naming field and position."""
    for field, text in (("condition", condition), ("consensus", consensus), ("time", time)):
        if text:
            parse(text, field=f"{prefix}{field}")


def check_room(session: Session, organization_id: str, adding: int) -> None:
    """Refuse going over the per-organization policy limit (429)."""
    org = session.get(Organization, organization_id)
    current = session.scalar(
        select(func.count()).select_from(Policy).where(Policy.organization_id == organization_id)
    )
    POLICIES.check(
        int(current or 0), adding=adding, is_sub_organization=bool(org is not None and org.parent_id)
    )


def add_policy(session: Session, organization_id: str, params: PolicyParams) -> Policy:
    """Insert one validated policy."""
    policy = Policy(
        organization_id=organization_id,
        name=params.policy_name,
        effect=params.effect,
        condition=params.condition or "",
        consensus=params.consensus or "",
        time_expression=params.time or "",
        notes=params.notes,
    )
    session.add(policy)
    session.flush()
    return policy


def policy_in_org(session: Session, organization_id: str, policy_id: str) -> Policy:
    """The policy ``policy_id`` of ``organization_id``, or a 404."""
    policy = session.get(Policy, policy_id)
    if policy is None or policy.organization_id != organization_id:
        raise NotFound(f"policy not found: {policy_id}")
    return policy


def org_policies(session: Session, organization_id: str) -> list[Policy]:
    """Every policy of the organization, oldest first."""
    return list(
        session.scalars(
            select(Policy)
            .where(Policy.organization_id == organization_id)
            .order_by(Policy.created_at, Policy.id)
        )
    )


def render_policy(policy: Policy) -> dict[str, Any]:
    """``v1Policy``."""
    view: dict[str, Any] = {
        "policyId": policy.id,
        "policyName": policy.name,
        "effect": policy.effect,
        "createdAt": wire_timestamp(policy.created_at),
        "updatedAt": wire_timestamp(policy.updated_at),
        "notes": policy.notes,
        "consensus": policy.consensus,
        "condition": policy.condition,
    }
    if policy.time_expression:
        view["time"] = policy.time_expression
    return view


def render_evaluation(evaluation: PolicyEvaluation) -> dict[str, Any]:
    """``externalactivityv1PolicyEvaluation``."""
    return {
        "id": evaluation.id,
        "activityId": evaluation.activity_id,
        "organizationId": evaluation.organization_id,
        "voteId": evaluation.vote_id,
        "policyEvaluations": list(evaluation.evaluations),
        "createdAt": wire_timestamp(evaluation.created_at),
    }


def organization_section(session: Session, organization_id: str) -> dict[str, Any]:
    """``policies`` of ``v1OrganizationData`` (``infra.queries.get_organization``)."""
    return {"policies": [render_policy(p) for p in org_policies(session, organization_id)]}
