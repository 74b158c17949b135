"""The hot path's statements on activities and votes, in SQLAlchemy Core, built once.

Accepting, claiming, settling and answering an activity run these instead of ORM flushes
and ORM result loading: each costs one round trip and little Python. The ORM objects the
lifecycle listeners receive (``infra.pipeline.lifecycle``) are attached to the session as
already stored (no flush); one a listener changes (the redaction of one-time codes) is
written at commit as usual.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final, cast

from sqlalchemy import JSON, Table, bindparam, insert, select, text, update
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Session, make_transient_to_detached
from sqlalchemy.orm.util import identity_key

from infra.audit.leaves import STAGED_COLUMNS, insert_held
from infra.db.models.activities import Activity, Vote
from infra.db.models.audit import AuditStaged
from infra.db.models.organizations import Organization, User
from infra.db.models.policies import PolicyEvaluation
from infra.db.prepared import Prepared

ACTIVITIES: Final = cast(Table, Activity.__table__)
VOTES: Final = cast(Table, Vote.__table__)
USERS: Final = cast(Table, User.__table__)
EVALUATIONS: Final = cast(Table, PolicyEvaluation.__table__)
STAGED: Final = cast(Table, AuditStaged.__table__)

ACTIVITY_COLUMNS: Final = tuple(c.name for c in ACTIVITIES.columns)
VOTE_COLUMNS: Final = tuple(c.name for c in VOTES.columns)
USER_COLUMNS: Final = tuple(c.name for c in USERS.columns)
EVALUATION_COLUMNS: Final = tuple(c.name for c in EVALUATIONS.columns)


def _type(column: Any) -> Any:
    # A nullable JSON column stores ``None`` as SQL NULL (as the ORM does), not JSON null.
    if isinstance(column.type, JSON) and column.nullable:
        return JSON(none_as_null=True)
    return column.type


def _binds(table: Any, prefix: str) -> dict[str, Any]:
    return {c.name: bindparam(prefix + c.name, type_=_type(c)) for c in table.columns}


# --- accept: the activity and its submitter's vote ------------------------------------------

_INSERT_ACTIVITY: Final = Prepared(insert(ACTIVITIES).values(_binds(ACTIVITIES, "a_")))
_INSERT_VOTE: Final = Prepared(insert(VOTES).values(_binds(VOTES, "v_")))
_NEW_ACTIVITY: Final = (insert(ACTIVITIES).values(_binds(ACTIVITIES, "a_"))
                        .returning(ACTIVITIES.c.id).cte("new_activity"))
#: PostgreSQL: both rows in one statement (a data-modifying CTE).
_INSERT_BOTH: Final = insert(VOTES).from_select(
    list(VOTE_COLUMNS),
    select(*[_NEW_ACTIVITY.c.id if name == "activity_id" else bind
             for name, bind in _binds(VOTES, "v_").items()]).select_from(_NEW_ACTIVITY))


#: An audit-log leaf (``infra.audit.leaves.held``) riding along with a statement.
_NEW_LEAF: Final = (insert(STAGED)
                    .values({name: bindparam("l_" + name, type_=STAGED.c[name].type)
                             for name in STAGED_COLUMNS})
                    .returning(STAGED.c.id).cte("new_leaf"))
#: PostgreSQL: the activity, its vote and a leaf: one statement, ``{leaf?: statement}``.
_INSERTS_BOTH: Final = {False: Prepared(_INSERT_BOTH), True: Prepared(_INSERT_BOTH.add_cte(_NEW_LEAF))}


def _with_leaf(session: Session, params: dict[str, Any],
               leaves: list[dict[str, Any]]) -> bool:
    """Whether the statement about to run carries the one held leaf (added to ``params``);
    otherwise the held leaves are inserted now, on their own and in order."""
    if len(leaves) == 1 and _is_postgresql(session):
        params.update({"l_" + k: v for k, v in leaves[0].items()})
        return True
    insert_held(session, leaves)
    return False


def store_activity(session: Session, activity: Mapping[str, Any], vote: Mapping[str, Any],
                   leaves: list[dict[str, Any]] | None = None) -> None:
    """Insert a new activity and its first vote, with the audit-log ``leaves`` held for them
    (one statement on PostgreSQL when there is at most one leaf).

    Raises:
        IntegrityError: the organization already holds an activity with this fingerprint.
    """
    params = {**{"a_" + k: v for k, v in activity.items()}, **{"v_" + k: v for k, v in vote.items()}}
    leaf = _with_leaf(session, params, leaves or [])
    if _is_postgresql(session):
        _INSERTS_BOTH[leaf].execute(session, params)
    else:
        _INSERT_ACTIVITY.execute(session, params)
        _INSERT_VOTE.execute(session, params)


def values_of(obj: Any, columns: tuple[str, ...]) -> dict[str, Any]:
    """The column values an object holds, by column name."""
    return {name: getattr(obj, name) for name in columns}


def attach(session: Session, obj: Any) -> Any:
    """``obj`` (built from values just stored) as a persistent, unchanged object of ``session``."""
    make_transient_to_detached(obj)
    session.add(obj)
    return obj


# --- claim: lock the PENDING activity and read its ballot ------------------------------------

def _labelled(table: Any, prefix: str) -> list[Any]:
    return [c.label(prefix + c.name) for c in table.columns]


_BALLOT_SELECT: Final = (*_labelled(VOTES, "v_"), *_labelled(USERS, "u_"),
                         Organization.root_quorum_threshold.label("threshold"))


def _ballot_joins(statement: Any) -> Any:
    return (statement
            .outerjoin(USERS, USERS.c.id == VOTES.c.user_id)
            .outerjoin(Organization.__table__, Organization.__table__.c.id == USERS.c.organization_id)
            .order_by(VOTES.c.created_at, VOTES.c.id))


#: PostgreSQL: the row lock and the ballot in one statement.
CLAIM_WITH_BALLOT: Final = (
    _ballot_joins(select(*_labelled(ACTIVITIES, "a_"), *_BALLOT_SELECT)
                  .select_from(ACTIVITIES)
                  .outerjoin(VOTES, VOTES.c.activity_id == ACTIVITIES.c.id))
    .where(ACTIVITIES.c.id == bindparam("activity_id"),
           ACTIVITIES.c.status == bindparam("expected"))
    .with_for_update(of=ACTIVITIES)
)
CLAIM_WITH_BALLOT_PREPARED: Final = Prepared(CLAIM_WITH_BALLOT)
#: Elsewhere the claim takes SQLite's write lock with an UPDATE that changes nothing visible.
TOUCH: Final = (update(ACTIVITIES)
                .where(ACTIVITIES.c.id == bindparam("activity_id"),
                       ACTIVITIES.c.status == bindparam("expected"))
                .values(updated_at=bindparam("now"))
                .returning(*_labelled(ACTIVITIES, "a_")))
#: The ballot of an activity already at hand.
BALLOT: Final = _ballot_joins(select(*_BALLOT_SELECT).select_from(VOTES)
                              .where(VOTES.c.activity_id == bindparam("activity_id")))
TOUCH_PREPARED: Final = Prepared(TOUCH)
BALLOT_PREPARED: Final = Prepared(BALLOT)


def unpack(row: Mapping[str, Any], prefix: str, names: tuple[str, ...]) -> dict[str, Any]:
    """The columns ``prefix + name`` of a labelled row (``Prepared``'s), by plain name."""
    return {name: row[prefix + name] for name in names}


def activity_of(session: Session, values: dict[str, Any]) -> Activity:
    """The claimed activity, attached to ``session`` as read (no flush will write it)."""
    activity: Activity = attach(session, Activity(**values))
    return activity


def vote_of(session: Session, values: dict[str, Any]) -> Vote:
    """A vote as read, attached to ``session`` (the one it holds already, if any: a ballot
    read again after the claim)."""
    return _attached(session, Vote, values)


def user_of(session: Session, values: dict[str, Any]) -> User:
    """A voter as read, attached to ``session`` (or the one it holds already)."""
    return _attached(session, User, values)


def _attached(session: Session, model: Any, values: dict[str, Any]) -> Any:
    held = session.identity_map.get(identity_key(model, values["id"]))
    return held if held is not None else attach(session, model(**values))


# --- settle: the new status, result and failure, and the stored evaluation ------------------

_SETTLE_VALUES: Final = {
    "status": bindparam("status"),
    "version": bindparam("version"),
    "updated_at": bindparam("updated_at", type_=ACTIVITIES.c.updated_at.type),
    "result": bindparam("result", type_=ACTIVITIES.c.result.type),
    "failure": bindparam("failure", type_=_type(ACTIVITIES.c.failure)),
}
SETTLE: Final = (update(ACTIVITIES).where(ACTIVITIES.c.id == bindparam("activity_id"))
                 .values(_SETTLE_VALUES))
INSERT_EVALUATION: Final = insert(EVALUATIONS).values(_binds(EVALUATIONS, "e_"))
_INSERT_EVALUATION: Final = Prepared(INSERT_EVALUATION)
#: PostgreSQL: the settle and the evaluation in one statement.
SETTLE_WITH_EVALUATION: Final = (
    update(ACTIVITIES)
    .where(ACTIVITIES.c.id == bindparam("activity_id"))
    .values(_SETTLE_VALUES)
    .add_cte(insert(EVALUATIONS).values(_binds(EVALUATIONS, "e_"))
             .returning(EVALUATIONS.c.id).cte("new_evaluation")))


def store_evaluation(session: Session, evaluation: dict[str, Any]) -> None:
    """Insert a policy evaluation on its own (the settle usually carries it)."""
    _INSERT_EVALUATION.execute(session, {"e_" + k: v for k, v in evaluation.items()})


#: ``AND`` this to a settle to send a NOTIFY with it (queued before the settled trigger's).
_NOTIFY: Final = text("(SELECT true FROM pg_notify(:notify_channel, :notify_payload)) IS NOT NULL")
SETTLE_NOTIFYING: Final = SETTLE.where(_NOTIFY)
SETTLE_WITH_EVALUATION_NOTIFYING: Final = SETTLE_WITH_EVALUATION.where(_NOTIFY)
_SETTLE: Final = Prepared(SETTLE)
#: PostgreSQL: ``{(evaluation?, notify?, leaf?): statement}``.
_SETTLES: Final = {
    (evaluation, notify, leaf): Prepared(statement.add_cte(_NEW_LEAF) if leaf else statement)
    for (evaluation, notify), statement in {
        (False, False): SETTLE, (False, True): SETTLE_NOTIFYING,
        (True, False): SETTLE_WITH_EVALUATION, (True, True): SETTLE_WITH_EVALUATION_NOTIFYING,
    }.items()
    for leaf in (False, True)
}
#: PostgreSQL's limit on a NOTIFY payload is 8000 bytes.
MAX_PAYLOAD: Final = 7900


def settle(session: Session, activity_id: str, values: dict[str, Any],
           evaluation: dict[str, Any] | None,
           notify: tuple[str, str] | None = None,
           leaves: list[dict[str, Any]] | None = None) -> None:
    """Write a claimed activity's new state, the policy evaluation that decided it and the
    audit-log ``leaves`` held for the change.

    On PostgreSQL, one statement (when there is at most one leaf), which also sends
    ``notify`` (channel, payload) when given and small enough for a NOTIFY; elsewhere
    ``notify`` is ignored.
    """
    params = {"activity_id": activity_id, **values}
    postgresql = _is_postgresql(session)
    if notify is not None and postgresql and len(notify[1].encode()) <= MAX_PAYLOAD:
        params.update(notify_channel=notify[0], notify_payload=notify[1])
    else:
        notify = None
    leaf = _with_leaf(session, params, leaves or [])
    if evaluation is not None:
        params.update({"e_" + k: v for k, v in evaluation.items()})
    if postgresql:
        _SETTLES[(evaluation is not None, notify is not None, leaf)].execute(session, params)
        return
    if evaluation is not None:
        _INSERT_EVALUATION.execute(session, params)
    _SETTLE.execute(session, params)


# --- answer: the settled activity with its votes and voters ---------------------------------

WITH_VOTES: Final = (
    select(*_labelled(ACTIVITIES, "a_"), *_labelled(VOTES, "v_"), *_labelled(USERS, "u_"))
    .select_from(ACTIVITIES)
    .outerjoin(VOTES, VOTES.c.activity_id == ACTIVITIES.c.id)
    .outerjoin(USERS, USERS.c.id == VOTES.c.user_id)
    .where(ACTIVITIES.c.id == bindparam("id"))
    .order_by(VOTES.c.created_at, VOTES.c.id)
)


WITH_VOTES_PREPARED: Final = Prepared(WITH_VOTES)


def _is_postgresql(session: Session) -> bool:
    dialect: Dialect = session.get_bind().dialect
    return dialect.name == "postgresql"


def stamp(moment: datetime) -> dict[str, datetime]:
    """``created_at`` and ``updated_at`` of a new row."""
    return {"created_at": moment, "updated_at": moment}
