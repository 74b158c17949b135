"""Frozen values of the activity store's rows: activities, votes, policy evaluations, leaves.

The activity store (``infra.pipeline.store``) reads and writes these tables through these
values, never through ORM objects: a value is what a row holds (or will hold once the store
writes it), and changing it means making a new one (``dataclasses.replace``). Field names are
the column names, so a value and a row of ``Activity`` / ``Vote`` read alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Final

from infra.db.models.activities import Activity, Vote

#: ``v1VoteSelection``: what a vote says (the one definition; every module reads these).
APPROVED: Final = "VOTE_SELECTION_APPROVED"
REJECTED: Final = "VOTE_SELECTION_REJECTED"


@dataclass(frozen=True, slots=True)
class ActivityRow:
    """One ``activities`` row."""

    id: str
    organization_id: str
    type: str
    status: str
    fingerprint: str
    body: str
    timestamp_ms: str
    intent: dict[str, Any]
    result: dict[str, Any]
    failure: dict[str, Any] | None
    user_id: str | None
    version: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, activity: Activity) -> ActivityRow:
        """The value of an ORM-loaded activity (read elsewhere, e.g. a listing)."""
        return cls(**{name: getattr(activity, name) for name in ACTIVITY_FIELDS})

    @classmethod
    def from_columns(cls, values: Mapping[str, Any]) -> ActivityRow:
        """The value of a row read by column name."""
        return cls(**{name: values[name] for name in ACTIVITY_FIELDS})

    def columns(self) -> dict[str, Any]:
        """The row's values by column name."""
        return {name: getattr(self, name) for name in ACTIVITY_FIELDS}


@dataclass(frozen=True, slots=True)
class VoteRow:
    """One ``votes`` row: an approval or rejection and the stamp that proved it."""

    id: str
    activity_id: str
    user_id: str
    selection: str
    message: str
    public_key: str
    signature: str
    scheme: str
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, vote: Vote) -> VoteRow:
        """The value of an ORM-loaded vote."""
        return cls(**{name: getattr(vote, name) for name in VOTE_FIELDS})

    @classmethod
    def from_columns(cls, values: Mapping[str, Any]) -> VoteRow:
        """The value of a row read by column name."""
        return cls(**{name: values[name] for name in VOTE_FIELDS})

    def columns(self) -> dict[str, Any]:
        """The row's values by column name."""
        return {name: getattr(self, name) for name in VOTE_FIELDS}


@dataclass(frozen=True, slots=True)
class EvaluationRow:
    """One ``policy_evaluations`` row: the policy engine's verdict that decided a change."""

    id: str
    organization_id: str
    activity_id: str
    vote_id: str
    outcome: str
    reason: str
    evaluations: list[dict[str, Any]]
    created_at: datetime
    updated_at: datetime

    def columns(self) -> dict[str, Any]:
        """The row's values by column name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class LeafRow:
    """One ``audit_staged`` row: an audit-log leaf staged by the transaction of its change
    (``entry`` is its canonical JSON; the database gives it its id)."""

    organization_id: str | None
    activity_id: str | None
    entry: str
    created_at: datetime

    def columns(self) -> dict[str, Any]:
        """The row's values by column name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


ACTIVITY_FIELDS: Final = tuple(f.name for f in fields(ActivityRow))
VOTE_FIELDS: Final = tuple(f.name for f in fields(VoteRow))
EVALUATION_FIELDS: Final = tuple(f.name for f in fields(EvaluationRow))
LEAF_FIELDS: Final = tuple(f.name for f in fields(LeafRow))

#: An activity or a vote as read: a value of the activity store, or an ORM-loaded row (the
#: listings of views and queries read those); code that only reads takes either.
AnyActivity = Activity | ActivityRow
AnyVote = Vote | VoteRow
