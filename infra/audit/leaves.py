"""What a leaf holds, and staging it in the transaction of the change it records.

Every activity change passes through ``infra.pipeline.lifecycle`` (``record_created``,
``transition``), whose listeners run inside the transaction that makes the change;
:func:`on_activity_change` is the listener that stages the change's leaf there, with ONE Core
``INSERT`` into ``audit_staged`` (no ORM unit of work, no tree work). Other recorded events
call one function each at the point they happen: :func:`record_vote` (``cast_vote``),
:func:`record_key_event` (master-key and service-key rotation), the boot records
(``infra.audit.boots``). The sequencer gives staged leaves their index and the ``prev``
pointer (the activity's previous leaf) later (``infra.audit.sequencer``): committed together
with the change or not at all, and no counter row serialises the writers.

A leaf holds digests and identifiers, never a secret: intents and results appear only as
``sha256:`` digests of their canonical JSON (``infra.audit.canonical``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from sqlalchemy import bindparam, insert
from sqlalchemy.orm import Session

from infra.audit.canonical import canonical, digest
from infra.clock import now
from infra.db.models.activities import Activity, Vote
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

_DECISIONS: Final = "walletd.audit.decisions"
_STAGED: Final = "walletd.audit.staged"
_DEFERRED: Final = "walletd.audit.deferred"
#: The columns of a staged row (its ``id`` is the database's).
STAGED_COLUMNS: Final = ("organization_id", "activity_id", "entry", "created_at")
_INSERT: Final = Prepared(insert(table(AuditStaged)).values(
    {name: bindparam(name, type_=table(AuditStaged).c[name].type) for name in STAGED_COLUMNS}))
_APPROVED: Final = "VOTE_SELECTION_APPROVED"


def timestamp() -> str:
    """The time a leaf records (UTC, milliseconds)."""
    return now().isoformat(timespec="milliseconds").replace("+00:00", "Z")


def stage(session: Session, entry: dict[str, Any]) -> str:
    """Insert ``entry`` (a leaf without ``index``/``prev``) in the caller's transaction.

    Inside :func:`held` the row is handed to the caller's statement instead of being
    inserted at once. Returns its canonical JSON (what app proofs commit to, by digest)."""
    entry = {"v": FORMAT, **entry}
    data = canonical(entry).decode()
    row = {"organization_id": entry.get("organizationId"), "activity_id": entry.get("activityId"),
           "entry": data, "created_at": now()}
    waiting: list[dict[str, Any]] | None = session.info.get(_DEFERRED)
    if waiting is not None:
        waiting.append(row)
    else:
        _INSERT.execute(session, row)
    session.info.setdefault(_STAGED, {})[entry.get("activityId")] = data
    return data


@contextmanager
def held(session: Session) -> Iterator[list[dict[str, Any]]]:
    """Hold the leaves staged inside the block (as ``audit_staged`` rows, in order) so the
    statement that makes the change they record can insert them in the same round trip
    (``infra.pipeline.rows``). The caller must pass every held row to such a statement or to
    :func:`insert_held` before its transaction commits."""
    waiting: list[dict[str, Any]] = []
    outer = session.info.get(_DEFERRED)
    session.info[_DEFERRED] = waiting
    try:
        yield waiting
    finally:
        if outer is None:
            session.info.pop(_DEFERRED, None)
        else:
            session.info[_DEFERRED] = outer


def insert_held(session: Session, rows: Iterable[dict[str, Any]]) -> None:
    """Insert held leaves on their own, in order."""
    for row in rows:
        _INSERT.execute(session, row)


def staged_entry(session: Session, activity_id: str) -> str | None:
    """The entry this transaction staged last for ``activity_id`` (``None`` if none)."""
    staged: dict[str | None, str] = session.info.get(_STAGED) or {}
    return staged.get(activity_id)


def note_decision(session: Session, activity_id: str, outcome: str, reason: str,
                  evaluations: list[dict[str, Any]], approvers: Iterable[str]) -> None:
    """Remember the policy decision of ``activity_id`` for the leaf of the change it causes.

    Called where the engine's verdict is stored (``infra.pipeline.decide``)."""
    session.info.setdefault(_DECISIONS, {})[activity_id] = {
        "outcome": outcome,
        "digest": digest({"outcome": outcome, "reason": reason, "evaluations": evaluations}),
        "approvers": sorted(set(approvers)),
    }


def _approvers(session: Session, activity: Activity, previous: str | None,
               decision: dict[str, Any] | None) -> list[str]:
    if decision is not None:
        return list(decision["approvers"])
    if previous is None:
        return [activity.user_id] if activity.user_id else []
    votes = [o for o in [*session.identity_map.values(), *session.new]
             if isinstance(o, Vote) and o.activity_id == activity.id]
    return sorted({v.user_id for v in votes if v.selection == _APPROVED})


def row_fields(activity: Activity) -> dict[str, Any]:
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


def activity_entry(activity: Activity, previous: str | None, *, approvers: list[str],
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


def on_activity_change(uow: UnitOfWork, activity: Activity, previous: str | None) -> None:
    """Activity listener (``infra.bootstrap.ACTIVITY_LISTENERS``): stage the change's leaf."""
    session = uow.session
    decisions: dict[str, Any] = session.info.get(_DECISIONS) or {}
    decision = decisions.pop(activity.id, None) if previous is not None else None
    entry = activity_entry(activity, previous, decision=decision, at=timestamp(),
                           approvers=_approvers(session, activity, previous, decision))
    stage(session, entry)


def record_vote(session: Session, target: Activity, vote: Vote, vote_activity_id: str) -> None:
    """Stage the leaf of a vote cast on ``target`` (by the activity ``vote_activity_id``);
    it also states the target row as the vote left it (the vote moves its version)."""
    stage(session, {
        "kind": VOTE,
        **row_fields(target),
        "voter": vote.user_id,
        "selection": vote.selection,
        "voteActivityId": vote_activity_id,
        "voteDigest": digest({"publicKey": vote.public_key, "scheme": vote.scheme,
                              "signature": vote.signature}),
        "time": timestamp(),
    })


def record_redaction(session: Session, activity: Activity, reason: str) -> None:
    """Stage the leaf of a settled activity's stored secret being redacted (no status change):
    its new digests, and why."""
    stage(session, {"kind": REDACTION, **row_fields(activity), "reason": reason,
                    "time": timestamp()})


def record_key_event(session: Session, event: str, details: dict[str, Any]) -> None:
    """Stage the leaf of a key-hierarchy event (public identifiers and digests only)."""
    stage(session, {"kind": KEY, "event": event, "details": details, "time": timestamp()})
