"""What a leaf holds, and staging it in the transaction of the change it records.

Every activity change passes through the activity store (``infra.pipeline.store``), whose
listeners it tells inside the transaction that makes the change; :func:`on_activity_change` is
the listener that answers with the change's leaf, which the store writes with the change (in
its statement on PostgreSQL; no ORM unit of work, no tree work). Votes and redactions are
written by the store with the leaf :func:`vote_leaf` / :func:`redaction_leaf` make; other
recorded events stage one leaf each at the point they happen (:func:`record_key_event`:
master-key and service-key rotation; the boot records, ``infra.audit.boots``). The sequencer
gives staged leaves their index and the ``prev`` pointer (the activity's previous leaf) later
(``infra.audit.sequencer``): committed together with the change or not at all, and no counter
row serialises the writers.

A leaf holds digests and identifiers, never a secret: intents and results appear only as
``sha256:`` digests of their canonical JSON (``infra.audit.canonical``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from sqlalchemy import bindparam, insert
from sqlalchemy.orm import Session

from infra.audit.canonical import canonical, digest
from infra.clock import now
from infra.db.activity_rows import APPROVED, ActivityRow, EvaluationRow, LeafRow, VoteRow
from infra.db.changes import Change, Effects
from infra.db.models.audit import AuditStaged, table
from infra.db.prepared import Prepared
from infra.db.unit_of_work import UnitOfWork

#: Leaf format version (``v`` in every leaf).
FORMAT: Final = 1
ACTIVITY: Final = "activity"
VOTE: Final = "vote"
KEY: Final = "key"
BOOT: Final = "boot"
REDACTION: Final = "redaction"
#: Leaf kinds that state what the activity row holds at that point (its newest such leaf
#: must agree with the row).
ROW_KINDS: Final = frozenset({ACTIVITY, VOTE, REDACTION})

#: The columns of a staged row (its ``id`` is the database's).
STAGED_COLUMNS: Final = ("organization_id", "activity_id", "entry", "created_at")
_INSERT: Final = Prepared(insert(table(AuditStaged)).values(
    {name: bindparam(name, type_=table(AuditStaged).c[name].type) for name in STAGED_COLUMNS}))


def timestamp() -> str:
    """The time a leaf records (UTC, milliseconds)."""
    return now().isoformat(timespec="milliseconds").replace("+00:00", "Z")


def leaf(entry: dict[str, Any]) -> LeafRow:
    """The staged row of ``entry`` (a leaf without ``index``/``prev``)."""
    entry = {"v": FORMAT, **entry}
    return LeafRow(organization_id=entry.get("organizationId"),
                   activity_id=entry.get("activityId"),
                   entry=canonical(entry).decode(), created_at=now())


def stage(session: Session, entry: dict[str, Any]) -> str:
    """Insert ``entry`` (a leaf without ``index``/``prev``) in the caller's transaction now;
    returns its canonical JSON. (Leaves of activity changes, votes and redactions are written
    by the activity store with the change instead.)"""
    row = leaf(entry)
    _INSERT.execute(session, row.columns())
    return row.entry


def decision_of(evaluation: EvaluationRow, votes: Iterable[VoteRow]) -> dict[str, Any]:
    """What a leaf records of the policy decision stored with its change."""
    return {
        "outcome": evaluation.outcome,
        "digest": digest({"outcome": evaluation.outcome, "reason": evaluation.reason,
                          "evaluations": evaluation.evaluations}),
        "approvers": _approved(votes),
    }


def _approved(votes: Iterable[VoteRow]) -> list[str]:
    return sorted({v.user_id for v in votes if v.selection == APPROVED})


def row_fields(activity: ActivityRow) -> dict[str, Any]:
    """What a leaf states about the activity row as it is now."""
    return {
        "organizationId": activity.organization_id,
        "activityId": activity.id,
        "fingerprint": activity.fingerprint,
        "type": activity.type,
        "status": activity.status,
        "version": activity.version,
        "intentDigest": digest(activity.intent or None),
        "resultDigest": digest(activity.result or None),
        "failureDigest": digest(activity.failure or None),
    }


def activity_entry(activity: ActivityRow, previous: str | None, *, approvers: list[str],
                   decision: dict[str, Any] | None, at: str) -> dict[str, Any]:
    """The leaf of one activity change (``previous`` status ``None``: its creation)."""
    return {
        "kind": ACTIVITY,
        **row_fields(activity),
        "previousStatus": previous,
        "approvers": approvers,
        "policyOutcome": decision["outcome"] if decision else None,
        "decisionDigest": decision["digest"] if decision else None,
        "time": at,
    }


def on_activity_change(uow: UnitOfWork, change: Change) -> Effects:
    """Activity listener (``infra.bootstrap.ACTIVITY_LISTENERS``): the change's leaf.

    Approvers: on creation, the submitter; with a policy decision, the approvals of the
    ballot it judged; otherwise the approvals among the activity's votes."""
    activity, previous = change.after, change.previous
    decision = (decision_of(change.evaluation, change.votes or ())
                if change.evaluation is not None and previous is not None else None)
    if decision is not None:
        approvers = list(decision["approvers"])
    elif previous is None:
        approvers = [activity.user_id] if activity.user_id else []
    else:
        approvers = _approved(change.votes or ())
    entry = activity_entry(activity, previous, decision=decision, at=timestamp(),
                           approvers=approvers)
    return Effects(leaves=(leaf(entry),))


def vote_leaf(target: ActivityRow, vote: VoteRow, vote_activity_id: str) -> LeafRow:
    """The leaf of a vote cast on ``target`` (by the activity ``vote_activity_id``); it also
    states the target row as the vote left it (the vote moves its version)."""
    return leaf({
        "kind": VOTE,
        **row_fields(target),
        "voter": vote.user_id,
        "selection": vote.selection,
        "voteActivityId": vote_activity_id,
        "voteDigest": digest({"publicKey": vote.public_key, "scheme": vote.scheme,
                              "signature": vote.signature}),
        "time": timestamp(),
    })


def redaction_leaf(activity: ActivityRow, reason: str) -> LeafRow:
    """The leaf of a settled activity's stored secret being redacted (no status change): its
    new digests, and why."""
    return leaf({"kind": REDACTION, **row_fields(activity), "reason": reason,
                 "time": timestamp()})


def record_key_event(session: Session, event: str, details: dict[str, Any]) -> None:
    """Stage the leaf of a key-hierarchy event (public identifiers and digests only)."""
    stage(session, {"kind": KEY, "event": event, "details": details, "time": timestamp()})
