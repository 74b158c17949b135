"""Policies and the stored record of every policy evaluation."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class Policy(Timestamped, Base):
    """One policy of an organization (PROTOCOL.md §8.1); empty expressions mean absent."""

    __tablename__ = "policies"
    __table_args__ = (Index("ix_policies_org_created", "organization_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    name: Mapped[str] = mapped_column(String(256))
    effect: Mapped[str] = mapped_column(String(32))
    condition: Mapped[str] = mapped_column(Text, default="")
    consensus: Mapped[str] = mapped_column(Text, default="")
    time_expression: Mapped[str] = mapped_column(Text, default="")
    notes: Mapped[str] = mapped_column(Text, default="")
    version: Mapped[int] = mapped_column(Integer, default=1)


class PolicyEvaluation(Timestamped, Base):
    """One run of the engine on an activity: the decision and every policy's outcome.

    ``evaluations`` is the wire list ``[{policyId, outcome}]``; ``vote_id`` is the vote that
    triggered the run (the submitter's first approval, or a later approve vote).
    """

    __tablename__ = "policy_evaluations"
    __table_args__ = (Index("ix_policy_evaluations_activity", "activity_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    activity_id: Mapped[str] = mapped_column(ForeignKey("activities.id", ondelete="CASCADE"))
    vote_id: Mapped[str] = mapped_column(String(36), default="")
    outcome: Mapped[str] = mapped_column(String(40))
    reason: Mapped[str] = mapped_column(Text, default="")
    evaluations: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
