"""Votes on activities: which count, who may cast one, and casting one.

Approvals expire 24 hours after the first one (PROTOCOL.md §3.4).

An activity waiting for consensus never expires itself; its approvals do. The window opens at
the first approval (the submission counts as the submitter's first approval); approvals that
arrive after it closed open a new window, and everything older is dropped. Rejections do not
expire. Importing this module (listed in ``infra.extensions``) installs :func:`vote_rights`
as the ``canApprove``/``canReject`` rule.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import event, select, update
from sqlalchemy.orm import Session

from infra.activities.lifecycle import CONSENSUS_NEEDED, PENDING, transition
from infra.activities.lifecycle import REJECTED as ACTIVITY_REJECTED
from infra.activities.spec import ActivityContext
from infra.clock import as_utc, now
from infra.db.models.activities import Activity, Vote
from infra.db.models.organizations import User
from infra.errors import FailedPrecondition, InvalidRequest, NotFound
from infra.messaging.contracts import send_evaluate_activity
from infra.views.activities import VOTE_RIGHTS

log = logging.getLogger(__name__)

APPROVAL_WINDOW = timedelta(hours=24)
APPROVED = "VOTE_SELECTION_APPROVED"
REJECTED = "VOTE_SELECTION_REJECTED"


@dataclass(frozen=True)
class Ballot:
    """One recorded vote as far as counting is concerned."""

    user_id: str
    selection: str
    created_at: datetime


def live_approvals(
    ballots: Iterable[Ballot], now: datetime, window: timedelta = APPROVAL_WINDOW
) -> list[Ballot]:
    """The approvals still counting at ``now``, oldest first, one per user."""
    approvals = sorted((b for b in ballots if b.selection == APPROVED), key=lambda b: b.created_at)
    current: list[Ballot] = []
    for ballot in approvals:
        if current and ballot.created_at >= current[0].created_at + window:
            current = []
        current.append(ballot)
    if not current or now >= current[0].created_at + window:
        return []
    first: dict[str, Ballot] = {}
    for ballot in current:
        first.setdefault(ballot.user_id, ballot)
    return list(first.values())


def rejecters(ballots: Sequence[Ballot]) -> list[str]:
    """Users who rejected, in vote order, each once."""
    out: list[str] = []
    for ballot in sorted(ballots, key=lambda b: b.created_at):
        if ballot.selection == REJECTED and ballot.user_id not in out:
            out.append(ballot.user_id)
    return out


def ballots_of(votes: Iterable[Vote]) -> list[Ballot]:
    """Counting view of stored vote rows."""
    return [Ballot(v.user_id, v.selection, as_utc(v.created_at)) for v in votes]


def activity_votes(session: Session, activity_id: str) -> list[Vote]:
    """Every vote on ``activity_id``, oldest first."""
    return list(
        session.scalars(
            select(Vote).where(Vote.activity_id == activity_id).order_by(Vote.created_at, Vote.id)
        )
    )


def vote_rights(
    session: Session, activity: Activity, viewer: str | None, votes: Sequence[Vote]
) -> tuple[bool, bool]:
    """``(canApprove, canReject)`` for ``viewer``.

    Only an activity awaiting consensus can be voted on, only by a user of its organization,
    and not twice: a live approval or any rejection by the viewer rules both out (an
    approval that expired may be given again).
    """
    if activity.status != CONSENSUS_NEEDED or viewer is None:
        return False, False
    user = session.get(User, viewer)
    if user is None or user.organization_id != activity.organization_id:
        return False, False
    ballots = ballots_of(votes)
    if viewer in rejecters(ballots):
        return False, False
    live = {b.user_id for b in live_approvals(ballots, now())}
    return viewer not in live, viewer not in live


class TargetNotFound(NotFound):
    """``approve_activity`` / ``reject_activity`` named no activity of the organization."""

    code = "activity_not_found"


NO_TARGET = (
    "No activity found with fingerprint. Consensus activities must target an existing activity by fingerprint"
)


def find_target(session: Session, organization_id: str, fingerprint: str) -> str:
    """The id of the organization's activity with ``fingerprint``, or a 404."""
    target_id = session.scalar(
        select(Activity.id).where(
            Activity.organization_id == organization_id, Activity.fingerprint == fingerprint
        )
    )
    if target_id is None:
        raise TargetNotFound(NO_TARGET)
    return str(target_id)


def _lock_target(session: Session, organization_id: str, fingerprint: str) -> Activity:
    target_id = find_target(session, organization_id, fingerprint)
    # A write on the row: PostgreSQL row lock / SQLite write lock until commit, so votes and
    # the consensus evaluation of the target serialize.
    session.execute(
        update(Activity)
        .where(Activity.id == target_id)
        .values(version=Activity.version + 1)
        .execution_options(synchronize_session=False)
    )
    target = session.get(Activity, target_id, populate_existing=True)
    assert target is not None
    return target


def cast_vote(ctx: ActivityContext, fingerprint: str, selection: str) -> Activity:
    """Record the caller's vote on the activity with ``fingerprint`` and act on it.

    The vote carries the stamp of the vote request itself (user, public key, scheme,
    signature, stamped message). A rejection ends the target REJECTED; an approval of a
    target waiting for consensus sends it back to PENDING and asks consensus to re-evaluate
    it after commit (the executor's status guard makes it run once however many votes race).
    """
    session, voter = ctx.session, ctx.user_id
    if voter is None:
        raise FailedPrecondition("votes need an authenticated user")
    if fingerprint == ctx.activity.fingerprint:
        raise InvalidRequest("an activity cannot vote on itself", field="parameters.fingerprint")
    target = _lock_target(session, ctx.organization_id, fingerprint)
    if target.status not in (CONSENSUS_NEEDED, PENDING):
        raise FailedPrecondition(f"activity {target.id} is not awaiting consensus (status {target.status})")
    ballots = ballots_of(activity_votes(session, target.id))
    if voter in rejecters(ballots) or voter in {b.user_id for b in live_approvals(ballots, ctx.now)}:
        raise FailedPrecondition(f"user {voter} has already voted on activity {target.id}")
    stamp = next((v for v in activity_votes(session, ctx.activity.id) if v.user_id == voter), None)
    if stamp is None:
        raise FailedPrecondition("the vote request carries no stamp")
    session.add(
        Vote(
            activity_id=target.id,
            user_id=voter,
            selection=selection,
            message=stamp.message,
            public_key=stamp.public_key,
            signature=stamp.signature,
            scheme=stamp.scheme,
        )
    )
    session.flush()
    if selection == REJECTED:
        transition(session, target, ACTIVITY_REJECTED)
    elif target.status == CONSENSUS_NEEDED:
        transition(session, target, PENDING)
        _evaluate_after_commit(ctx, target.id)
    return target


def _evaluate_after_commit(ctx: ActivityContext, activity_id: str) -> None:
    broker = ctx.services.broker

    def send(_session: Session) -> None:
        try:
            send_evaluate_activity(broker, activity_id)
        except Exception:  # the sweeper re-sends for activities left PENDING
            log.exception("could not send evaluate_activity for %s", activity_id)

    event.listen(ctx.session, "after_commit", send, once=True)


if vote_rights not in VOTE_RIGHTS:
    VOTE_RIGHTS.append(vote_rights)
