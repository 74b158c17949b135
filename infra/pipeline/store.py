"""The activity store: every write (and the hot path's reads) of activities, votes, policy
evaluations and audit-log leaves, through frozen row values (``infra.db.activity_rows``).

Accepting, claiming, settling, moving, voting on and redacting an activity happen here, in
SQLAlchemy Core statements built once at import and compiled once per dialect
(``infra.db.prepared``): no ORM flush, no ORM loading, no object pretending to be stored.
Every creation and status change is told to the unit of work's listeners first
(``infra.db.changes``: the activity before and after, immutable); each answers with the
effects to write with the change (the activity and its new votes as they must rest, the
audit-log leaf, rows of its own tables, whom to hand the answer), and the store writes the
change and its effects itself, the same way whatever a listener did. On PostgreSQL the
change, its vote, its evaluation, one leaf and the answer's NOTIFY go in one statement.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, cast

from sqlalchemy import JSON, Table, bindparam, insert, literal_column, select, text, update
from sqlalchemy.orm import Session

from infra.clock import now
from infra.db.activity_rows import (
    ACTIVITY_FIELDS,
    LEAF_FIELDS,
    VOTE_FIELDS,
    ActivityRow,
    EvaluationRow,
    LeafRow,
    VoteRow,
)
from infra.db.changes import Change, Effects
from infra.db.models.activities import Activity, Vote
from infra.db.models.audit import AuditStaged
from infra.db.models.organizations import Organization, User
from infra.db.models.policies import PolicyEvaluation
from infra.db.prepared import Prepared
from infra.db.unit_of_work import UnitOfWork
from infra.pipeline.lifecycle import ANSWER_CHANNEL

ACTIVITIES: Final = cast(Table, Activity.__table__)
VOTES: Final = cast(Table, Vote.__table__)
USERS: Final = cast(Table, User.__table__)
EVALUATIONS: Final = cast(Table, PolicyEvaluation.__table__)
STAGED: Final = cast(Table, AuditStaged.__table__)
ORGANIZATIONS: Final = cast(Table, Organization.__table__)
USER_COLUMNS: Final = tuple(c.name for c in USERS.columns)

#: PostgreSQL's limit on a NOTIFY payload is 8000 bytes.
MAX_PAYLOAD: Final = 7900


def _type(column: Any) -> Any:
    # A nullable JSON column stores ``None`` as SQL NULL (as the ORM does), not JSON null.
    if isinstance(column.type, JSON) and column.nullable:
        return JSON(none_as_null=True)
    return column.type


def _binds(table: Table, prefix: str, names: Iterable[str] | None = None) -> dict[str, Any]:
    wanted = set(names) if names is not None else None
    return {c.name: bindparam(prefix + c.name, type_=_type(c)) for c in table.columns
            if wanted is None or c.name in wanted}


def _labelled(table: Table, prefix: str) -> list[Any]:
    return [c.label(prefix + c.name) for c in table.columns]


def _prefixed(prefix: str, values: dict[str, Any]) -> dict[str, Any]:
    return {prefix + k: v for k, v in values.items()}


class _Labelled:
    """Reads one table's columns out of a joined row whose labels carry ``prefix``."""

    def __init__(self, prefix: str, names: Sequence[str]) -> None:
        self.labels = tuple((prefix + name, name) for name in names)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        return {name: row[label] for label, name in self.labels}


_ACTIVITY: Final = _Labelled("a_", ACTIVITY_FIELDS)
_VOTE: Final = _Labelled("v_", VOTE_FIELDS)
_USER: Final = _Labelled("u_", USER_COLUMNS)


# --- the statements, built once ---------------------------------------------------------------

_INSERT_ACTIVITY: Final = Prepared(insert(ACTIVITIES).values(_binds(ACTIVITIES, "a_")))
_INSERT_VOTE: Final = Prepared(insert(VOTES).values(_binds(VOTES, "v_")))
_INSERT_LEAF: Final = Prepared(insert(STAGED).values(_binds(STAGED, "l_", LEAF_FIELDS)))
_INSERT_EVALUATION: Final = Prepared(insert(EVALUATIONS).values(_binds(EVALUATIONS, "e_")))
#: A leaf riding along with a statement (PostgreSQL: a data-modifying CTE).
_NEW_LEAF: Final = (insert(STAGED).values(_binds(STAGED, "l_", LEAF_FIELDS))
                    .returning(STAGED.c.id).cte("new_leaf"))
_NEW_ACTIVITY: Final = (insert(ACTIVITIES).values(_binds(ACTIVITIES, "a_"))
                        .returning(ACTIVITIES.c.id).cte("new_activity"))
#: PostgreSQL: an activity and its first vote in one statement.
_INSERT_BOTH: Final = insert(VOTES).from_select(
    [c.name for c in VOTES.columns],
    select(*[_NEW_ACTIVITY.c.id if name == "activity_id" else bind
             for name, bind in _binds(VOTES, "v_").items()]).select_from(_NEW_ACTIVITY))
#: ``{leaf?: statement}``.
_INSERTS_BOTH: Final = {False: Prepared(_INSERT_BOTH), True: Prepared(_INSERT_BOTH.add_cte(_NEW_LEAF))}
_INSERT_ALONE: Final = {False: _INSERT_ACTIVITY,
                        True: Prepared(insert(ACTIVITIES).values(_binds(ACTIVITIES, "a_"))
                                       .add_cte(_NEW_LEAF))}
_INSERT_VOTE_ALONE: Final = {False: _INSERT_VOTE,
                             True: Prepared(insert(VOTES).values(_binds(VOTES, "v_"))
                                            .add_cte(_NEW_LEAF))}

_BALLOT_SELECT: Final = (*_labelled(VOTES, "v_"), *_labelled(USERS, "u_"),
                         ORGANIZATIONS.c.root_quorum_threshold.label("threshold"))


def _ballot_joins(statement: Any) -> Any:
    return (statement
            .outerjoin(USERS, USERS.c.id == VOTES.c.user_id)
            .outerjoin(ORGANIZATIONS, ORGANIZATIONS.c.id == USERS.c.organization_id)
            .order_by(VOTES.c.created_at, VOTES.c.id))


#: PostgreSQL: the row lock and the ballot in one statement.
_CLAIM_WITH_BALLOT: Final = Prepared(
    _ballot_joins(select(*_labelled(ACTIVITIES, "a_"), *_BALLOT_SELECT)
                  .select_from(ACTIVITIES)
                  .outerjoin(VOTES, VOTES.c.activity_id == ACTIVITIES.c.id))
    .where(ACTIVITIES.c.id == bindparam("activity_id"),
           ACTIVITIES.c.status == bindparam("expected"))
    .with_for_update(of=ACTIVITIES))
#: Elsewhere the claim takes SQLite's write lock with an UPDATE that changes nothing visible.
_TOUCH: Final = Prepared(update(ACTIVITIES)
                         .where(ACTIVITIES.c.id == bindparam("activity_id"),
                                ACTIVITIES.c.status == bindparam("expected"))
                         .values(updated_at=bindparam("now"))
                         .returning(*_labelled(ACTIVITIES, "a_")))
#: The ballot of an activity already at hand.
_BALLOT: Final = Prepared(_ballot_joins(select(*_BALLOT_SELECT).select_from(VOTES)
                                        .where(VOTES.c.activity_id == bindparam("activity_id"))))
#: The claim of an activity outside the hot path: its version moves (a write lock, and
#: ``updated_at`` for the sweeper's grace).
_CLAIM: Final = Prepared(update(ACTIVITIES)
                         .where(ACTIVITIES.c.id == bindparam("activity_id"),
                                ACTIVITIES.c.status == bindparam("expected"))
                         .values(version=ACTIVITIES.c.version + literal_column("1"),
                                 updated_at=bindparam("now"))
                         .returning(*_labelled(ACTIVITIES, "a_")))
#: A vote's target, locked: its version moves, so votes and the target's decision serialize.
_LOCK: Final = Prepared(update(ACTIVITIES)
                        .where(ACTIVITIES.c.id == bindparam("activity_id"))
                        .values(version=ACTIVITIES.c.version + literal_column("1"),
                                updated_at=bindparam("now"))
                        .returning(*_labelled(ACTIVITIES, "a_")))
_READ: Final = Prepared(select(*_labelled(ACTIVITIES, "a_"))
                        .where(ACTIVITIES.c.id == bindparam("activity_id")))
_BY_FINGERPRINT: Final = Prepared(select(*_labelled(ACTIVITIES, "a_"))
                                  .where(ACTIVITIES.c.organization_id == bindparam("organization_id"),
                                         ACTIVITIES.c.fingerprint == bindparam("fingerprint")))
_VOTES: Final = Prepared(select(*_labelled(VOTES, "v_"))
                         .where(VOTES.c.activity_id == bindparam("activity_id"))
                         .order_by(VOTES.c.created_at, VOTES.c.id))
#: The settled activity with its votes and voters (the answer's read).
_WITH_VOTES: Final = Prepared(
    select(*_labelled(ACTIVITIES, "a_"), *_labelled(VOTES, "v_"), *_labelled(USERS, "u_"))
    .select_from(ACTIVITIES)
    .outerjoin(VOTES, VOTES.c.activity_id == ACTIVITIES.c.id)
    .outerjoin(USERS, USERS.c.id == VOTES.c.user_id)
    .where(ACTIVITIES.c.id == bindparam("id"))
    .order_by(VOTES.c.created_at, VOTES.c.id))

_CHANGED: Final = ("status", "version", "updated_at", "result", "failure")
_REWRITTEN: Final = ("body", "intent")
#: ``AND`` this to an update to send a NOTIFY with it (queued before the settled trigger's).
_NOTIFY: Final = text("(SELECT true FROM pg_notify(:notify_channel, :notify_payload)) IS NOT NULL")


def _update(rewrite: bool) -> Any:
    names = (*_CHANGED, *(_REWRITTEN if rewrite else ()))
    return (update(ACTIVITIES).where(ACTIVITIES.c.id == bindparam("a_id"))
            .values({name: bindparam("a_" + name, type_=_type(ACTIVITIES.c[name]))
                     for name in names}))


def _update_variant(rewrite: bool, evaluation: bool, notify: bool, leaf: bool) -> Prepared:
    statement = _update(rewrite)
    if evaluation:
        statement = statement.add_cte(insert(EVALUATIONS).values(_binds(EVALUATIONS, "e_"))
                                      .returning(EVALUATIONS.c.id).cte("new_evaluation"))
    if notify:
        statement = statement.where(_NOTIFY)
    if leaf:
        statement = statement.add_cte(_NEW_LEAF)
    return Prepared(statement)


#: PostgreSQL: ``{(rewrite?, evaluation?, notify?, leaf?): statement}``.
_UPDATES: Final = {(r, e, n, lf): _update_variant(r, e, n, lf)
                   for r in (False, True) for e in (False, True)
                   for n in (False, True) for lf in (False, True)}
#: Elsewhere: ``{rewrite?: statement}`` (evaluation and leaves on their own; no NOTIFY).
_PLAIN_UPDATES: Final = {False: _UPDATES[(False, False, False, False)],
                         True: _UPDATES[(True, False, False, False)]}


# --- what a change is written with --------------------------------------------------------------

@dataclass
class _Told:
    """The change as the listeners left it, and what they asked to be written with it."""

    change: Change
    leaves: list[LeafRow]
    effects: list[Effects]

    def answered(self, payload: str) -> None:
        for effects in self.effects:
            if effects.on_answer is not None:
                effects.on_answer(payload)

    def write_rest(self, session: Session, leaf_rode: bool) -> None:
        """Insert what did not ride with the change's statement: leaves, then own rows."""
        insert_leaves(session, self.leaves[1:] if leaf_rode else self.leaves)
        for effects in self.effects:
            for row in effects.inserts:
                session.execute(insert(row.table), [dict(row.values)])


def _tell(uow: UnitOfWork, change: Change) -> _Told:
    """Tell ``uow``'s listeners of ``change``, in order; each sees it as the ones before left it."""
    effects: list[Effects] = []
    for listener in uow.listeners:
        found = listener(uow, change)
        if found is not None:
            effects.append(found)
            change = change.with_effects(found)
    return _Told(change, list(change.leaves), effects)


def _is_postgresql(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _ride(session: Session, params: dict[str, Any], leaves: list[LeafRow]) -> bool:
    """Whether the first held leaf rides with the statement about to run (added to
    ``params``; PostgreSQL only)."""
    if leaves and _is_postgresql(session):
        params.update(_prefixed("l_", leaves[0].columns()))
        return True
    return False


def insert_leaves(session: Session, leaves: Iterable[LeafRow]) -> None:
    """Insert audit-log leaves on their own, in order."""
    for leaf in leaves:
        _INSERT_LEAF.execute(session, _prefixed("l_", leaf.columns()))


def stamp(moment: datetime) -> dict[str, datetime]:
    """``created_at`` and ``updated_at`` of a new row."""
    return {"created_at": moment, "updated_at": moment}


# --- accept ---------------------------------------------------------------------------------

def accept(uow: UnitOfWork, activity: ActivityRow, vote: VoteRow | None = None) -> ActivityRow:
    """Store a new activity and its submitter's vote, told to the listeners first (so the
    first of them, the redaction, seals secrets before anything is written); return the
    activity as stored. On PostgreSQL the activity, its vote and its leaf are one statement.

    Raises:
        IntegrityError: the organization already holds an activity with this fingerprint.
    """
    session = uow.session
    told = _tell(uow, Change(None, activity, (vote,) if vote is not None else ()))
    stored = told.change.after
    votes = told.change.votes or ()
    params = _prefixed("a_", stored.columns())
    leaf = _ride(session, params, told.leaves)
    if votes and _is_postgresql(session):
        params.update(_prefixed("v_", votes[0].columns()))
        _INSERTS_BOTH[leaf].execute(session, params)
        rest: Sequence[VoteRow] = votes[1:]
    else:
        _INSERT_ALONE[leaf].execute(session, params)
        rest = votes
    for more in rest:
        _INSERT_VOTE.execute(session, _prefixed("v_", more.columns()))
    told.write_rest(session, leaf)
    return stored


# --- claim ----------------------------------------------------------------------------------

@dataclass
class Ballot:
    """A claimed activity with its votes and voters, as the decision reads them.

    ``voters`` maps user id to the voting user (users deleted since are absent; values, not
    attached to any session); ``thresholds`` maps each voter's organization id to its
    root-quorum threshold.
    """

    activity: ActivityRow
    votes: list[VoteRow]
    voters: dict[str, User]
    thresholds: dict[str, int]
    #: Read by the statement that took the lock: votes committed while it waited are not
    #: in it (PostgreSQL rechecks the locked row, not the rows joined to it).
    read_with_lock: bool = False

    @property
    def submitter(self) -> User | None:
        """The submitting user, if they still exist."""
        return self.voters.get(self.activity.user_id or "")


def _ballot(activity: ActivityRow, found: list[dict[str, Any]]) -> Ballot:
    votes: list[VoteRow] = []
    voters: dict[str, User] = {}
    thresholds: dict[str, int] = {}
    for row in found:
        if row["v_id"] is None:
            continue
        votes.append(VoteRow.from_columns(_VOTE(row)))
        user_id = row["u_id"]
        if user_id is not None:
            if user_id not in voters:
                voters[user_id] = User(**_USER(row))
            thresholds[row["u_organization_id"]] = row["threshold"]
    return Ballot(activity, votes, voters, thresholds)


def claim(session: Session, activity_id: str, expected: str) -> Ballot | None:
    """Lock ``activity_id`` for this transaction if its status is ``expected``, with its ballot.

    One statement on PostgreSQL (the row lock and the ballot). A second executor of the same
    (redelivered) message waits for the lock, then finds the status moved and gets ``None``.
    """
    params = {"activity_id": activity_id, "expected": expected}
    if _is_postgresql(session):
        found = _CLAIM_WITH_BALLOT.execute(session, params)
        if not found:
            return None
        ballot = _ballot(ActivityRow.from_columns(_ACTIVITY(found[0])), found)
        ballot.read_with_lock = True
        return ballot
    touched = _TOUCH.execute(session, {**params, "now": now()})
    if not touched:
        return None
    return ballot_of(session, ActivityRow.from_columns(_ACTIVITY(touched[0])))


def ballot_of(session: Session, activity: ActivityRow) -> Ballot:
    """The ballot of an activity already at hand (read without a lock)."""
    return _ballot(activity, _BALLOT.execute(session, {"activity_id": activity.id}))


def claim_status(session: Session, activity_id: str, expected: str) -> ActivityRow | None:
    """Lock ``activity_id`` if its status is ``expected`` (its version moves); ``None`` if not.

    The conditional UPDATE takes the row lock on PostgreSQL and the write lock on SQLite, so
    two writers of the same change serialize and the second finds the status moved."""
    found = _CLAIM.execute(session, {"activity_id": activity_id, "expected": expected,
                                     "now": now()})
    return ActivityRow.from_columns(_ACTIVITY(found[0])) if found else None


def lock(session: Session, activity_id: str) -> ActivityRow:
    """Lock ``activity_id`` whatever its status (its version moves): votes on it and its
    decision serialize."""
    found = _LOCK.execute(session, {"activity_id": activity_id, "now": now()})
    assert found, f"activity {activity_id} vanished"
    return ActivityRow.from_columns(_ACTIVITY(found[0]))


# --- reads ------------------------------------------------------------------------------------

def read(session: Session, activity_id: str) -> ActivityRow | None:
    """The activity ``activity_id`` as stored (``None``: none)."""
    found = _READ.execute(session, {"activity_id": activity_id})
    return ActivityRow.from_columns(_ACTIVITY(found[0])) if found else None


def find(session: Session, organization_id: str, fingerprint: str) -> ActivityRow | None:
    """The organization's activity with ``fingerprint`` (``None``: none)."""
    found = _BY_FINGERPRINT.execute(session, {"organization_id": organization_id,
                                              "fingerprint": fingerprint})
    return ActivityRow.from_columns(_ACTIVITY(found[0])) if found else None


def votes_of(session: Session, activity_id: str) -> list[VoteRow]:
    """The votes on ``activity_id``, oldest first."""
    return [VoteRow.from_columns(_VOTE(row))
            for row in _VOTES.execute(session, {"activity_id": activity_id})]


def read_with_votes(session: Session, activity_id: str
                    ) -> tuple[ActivityRow, list[VoteRow], list[User]] | None:
    """The activity with its votes and voters (values) in one statement; ``None``: none."""
    found = _WITH_VOTES.execute(session, {"id": activity_id})
    if not found:
        return None
    activity = ActivityRow.from_columns(_ACTIVITY(found[0]))
    votes = [VoteRow.from_columns(_VOTE(row)) for row in found if row["v_id"] is not None]
    voters: dict[str, User] = {}
    for row in found:
        user_id = row["u_id"]
        if user_id is not None and user_id not in voters:
            voters[user_id] = User(**_USER(row))
    return activity, votes, list(voters.values())


# --- transitions -------------------------------------------------------------------------------

def transition(
    uow: UnitOfWork,
    activity: ActivityRow,
    status: str,
    *,
    result: dict[str, Any] | None = None,
    failure: dict[str, Any] | None = None,
    votes: Sequence[VoteRow] | None = None,
    evaluation: EvaluationRow | None = None,
    answer: Callable[[ActivityRow], str | None] | None = None,
) -> ActivityRow:
    """Move an activity locked in this transaction to ``status``; return it as stored.

    Every change bumps ``version``, so ``(status, version)`` names one transition: entering a
    status a second time is told apart from the first (webhook event ids), while a retried
    transaction, starting from the same committed version, names the same one. The listeners
    see the change first (``votes``: the activity's votes as the caller holds them, read when
    not given). Written with, in one statement on PostgreSQL: the policy ``evaluation`` that
    decided it, the first leaf its listeners returned, and ``answer`` (the settled activity's
    rendering as the listeners left it, sent with ``NOTIFY`` on ``notify_channel`` and
    handed to the listeners that asked for it) that spares the waiting ingress its read.
    """
    session = uow.session
    after = dataclasses.replace(
        activity, status=status, version=activity.version + 1, updated_at=now(),
        result=result if result is not None else activity.result,
        failure=failure if failure is not None else activity.failure)
    if votes is None:
        votes = votes_of(session, activity.id)
    told = _tell(uow, Change(activity, after, tuple(votes), evaluation))
    stored = told.change.after
    # A rendering travels only when nothing but the change is written (a listener's own rows,
    # webhook deliveries or an app proof, would be missing from it or change it).
    inserts = any(effects.inserts for effects in told.effects)
    payload = answer(stored) if answer is not None and not inserts else None
    postgresql = _is_postgresql(session)
    rewrite = stored.body is not activity.body or stored.intent is not activity.intent
    params = _prefixed("a_", {name: getattr(stored, name)
                              for name in (*_CHANGED, *(_REWRITTEN if rewrite else ()), "id")})
    if not postgresql:
        if evaluation is not None:
            _INSERT_EVALUATION.execute(session, _prefixed("e_", evaluation.columns()))
        _PLAIN_UPDATES[rewrite].execute(session, params)
        told.write_rest(session, False)
    else:
        notify = payload is not None and len(payload.encode()) <= MAX_PAYLOAD
        if notify:
            params.update(notify_channel=ANSWER_CHANNEL, notify_payload=payload)
        if evaluation is not None:
            params.update(_prefixed("e_", evaluation.columns()))
        leaf = _ride(session, params, told.leaves)
        _UPDATES[(rewrite, evaluation is not None, notify, leaf)].execute(session, params)
        told.write_rest(session, leaf)
    if payload is not None:
        told.answered(payload)
    return stored


def store_evaluation(session: Session, evaluation: EvaluationRow) -> None:
    """Insert a policy evaluation on its own (a transition usually carries it)."""
    _INSERT_EVALUATION.execute(session, _prefixed("e_", evaluation.columns()))


# --- votes and redactions (no status change) ----------------------------------------------------

def cast_vote(session: Session, vote: VoteRow, leaf: LeafRow | None) -> None:
    """Insert a vote on an activity locked in this transaction, with its leaf (one statement
    on PostgreSQL)."""
    params = _prefixed("v_", vote.columns())
    rides = _ride(session, params, [leaf] if leaf is not None else [])
    _INSERT_VOTE_ALONE[rides].execute(session, params)
    if leaf is not None and not rides:
        insert_leaves(session, [leaf])


def redact(session: Session, activity: ActivityRow, leaf: Callable[[ActivityRow], LeafRow],
           *, result: dict[str, Any]) -> ActivityRow:
    """Rewrite a settled activity's ``result`` without a status change (a spent secret), with
    the leaf ``leaf`` makes of the row as it then rests."""
    redacted = dataclasses.replace(activity, result=result, updated_at=now())
    params = _prefixed("a_", {name: getattr(redacted, name) for name in (*_CHANGED, "id")})
    entry = leaf(redacted)
    rides = _ride(session, params, [entry])
    if rides:
        _UPDATES[(False, False, False, True)].execute(session, params)
    else:
        _PLAIN_UPDATES[False].execute(session, params)
        insert_leaves(session, [entry])
    return redacted
