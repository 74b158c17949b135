"""Deciding whether an activity may run (the consensus worker's job).

``decide`` loads what the decision needs and returns a :class:`Decision`. The default here
allows activities submitted by a user of the organization itself; the policy engine
replaces it with the full evaluation (root quorum, policies, consensus).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy.orm import Session

from infra.activities.spec import ActivitySpec
from infra.db.models.activities import Activity
from infra.db.models.organizations import User

Outcome = Literal["allow", "deny", "consensus_needed"]


@dataclass(frozen=True)
class Decision:
    """The verdict on one activity, with the reason when it is not ``allow``."""

    outcome: Outcome
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def decide(session: Session, activity: Activity, spec: ActivitySpec) -> Decision:
    """Allow activities submitted by a user of the activity's own organization."""
    user = session.get(User, activity.user_id) if activity.user_id else None
    if user is None:
        return Decision("deny", "policy engine denied request implicitly: unknown submitter")
    if user.organization_id != activity.organization_id and not spec.parent_may_submit:
        return Decision("deny", "policy engine denied request implicitly")
    return Decision("allow")
