"""Votes on activities: which count, who may cast one, and casting one.

Approvals expire 24 hours after the first one (PROTOCOL.md §3.4).

An activity waiting for consensus never expires itself; its approvals do. The window opens at
the first approval (the submission counts as the submitter's first approval); approvals that
arrive after it closed open a new window, and everything older is dropped. Rejections do not
expire. :func:`vote_rights` is the ``canApprove``/``canReject`` rule of activity views
(``infra.views.activities`` imports it).

Who may vote (:func:`may_vote`, used both for ``canApprove``/``canReject`` and by the policy
engine's default for approve/reject activities): the target's submitter, a root user of the
organization whose root quorum governs it, and a user its pending consensus names: for some
``EFFECT_ALLOW`` policy that applied at the target's last evaluation, either adding the user
(and their credentials) to ``approvers`` changes what the consensus expression evaluates to,
or the expression names the user by a string literal (their id, a tag id of theirs, or their
email), as in ``user.id in [...]`` or ``user.tags.contains('<tag>')``. Anyone else needs a
policy that allows them to vote.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from infra.activities import registry
from infra.activities.spec import ActivityContext
from infra.audit import leaves as audit
from infra.clock import as_utc, new_id, now
from infra.db.activity_rows import APPROVED, REJECTED, ActivityRow, AnyActivity, AnyVote, VoteRow
from infra.db.models.identity import Authenticator, UserTagAssignment
from infra.db.models.organizations import ApiKey, Organization, User
from infra.db.models.policies import Policy, PolicyEvaluation
from infra.errors import FailedPrecondition, InvalidRequest, NotFound
from infra.messaging.actor_messages import send_execute_activity
from infra.pipeline import mfa, store
from infra.pipeline.lifecycle import AUTHENTICATORS_NEEDED, CONSENSUS_NEEDED, PENDING
from infra.pipeline.lifecycle import REJECTED as ACTIVITY_REJECTED
from infra.policy import nodes
from infra.policy.evaluator import PolicyEvaluationFailed, compiled
from infra.policy.parser import InvalidPolicyExpression
from infra.policy.variables import activity_variable, credential_variable, user_variable, variables

log = logging.getLogger(__name__)

APPROVAL_WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class CountedVote:
    """One recorded vote as far as counting is concerned."""

    user_id: str
    selection: str
    created_at: datetime


def live_approvals(
    ballots: Iterable[CountedVote], now: datetime, window: timedelta = APPROVAL_WINDOW
) -> list[CountedVote]:
    """The approvals still counting at ``now``, oldest first, one per user."""
    approvals = sorted((b for b in ballots if b.selection == APPROVED), key=lambda b: b.created_at)
    current: list[CountedVote] = []
    for ballot in approvals:
        if current and ballot.created_at >= current[0].created_at + window:
            current = []
        current.append(ballot)
    if not current or now >= current[0].created_at + window:
        return []
    first: dict[str, CountedVote] = {}
    for ballot in current:
        first.setdefault(ballot.user_id, ballot)
    return list(first.values())


def rejecters(ballots: Sequence[CountedVote]) -> list[str]:
    """Users who rejected, in vote order, each once."""
    out: list[str] = []
    for ballot in sorted(ballots, key=lambda b: b.created_at):
        if ballot.selection == REJECTED and ballot.user_id not in out:
            out.append(ballot.user_id)
    return out


def ballots_of(votes: Iterable[AnyVote]) -> list[CountedVote]:
    """Counting view of stored vote rows."""
    return [CountedVote(v.user_id, v.selection, as_utc(v.created_at)) for v in votes]


def activity_votes(session: Session, activity_id: str) -> list[VoteRow]:
    """Every vote on ``activity_id``, oldest first (``infra.pipeline.store.votes_of``)."""
    return store.votes_of(session, activity_id)


def approver_variables(session: Session, user_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The ``approvers`` variable: id, tag ids, email and alias of each user, in order."""
    if not user_ids:
        return []
    users = {u.id: u for u in session.scalars(select(User).where(User.id.in_(user_ids)))}
    tags: dict[str, list[str]] = {i: [] for i in user_ids}
    for user_id, tag_id in session.execute(
        select(UserTagAssignment.user_id, UserTagAssignment.tag_id)
        .where(UserTagAssignment.user_id.in_(user_ids)).order_by(UserTagAssignment.tag_id)
    ):
        tags[user_id].append(tag_id)
    return [user_variable(u.id, tags=tags[u.id], email=u.email or "", alias=u.name)
            for u in (users.get(i) for i in user_ids) if u is not None]


def _api_key_variable(key: ApiKey) -> dict[str, Any]:
    return credential_variable(key.id, user_id=key.user_id, credential_type=key.credential_type,
                               public_key=key.public_key)


def _passkey_variable(passkey: Authenticator) -> dict[str, Any]:
    return credential_variable(
        passkey.id,
        user_id=passkey.user_id,
        credential_type="CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR",
        public_key=passkey.public_key,
        authenticator_credential_id=passkey.credential_id,
    )


def credential_variables(session: Session, votes: Sequence[AnyVote]) -> list[dict[str, Any]]:
    """The ``credentials`` variable: the API key or passkey that stamped each vote."""
    out = []
    for vote in votes:
        key = session.scalars(
            select(ApiKey).where(ApiKey.user_id == vote.user_id, ApiKey.public_key == vote.public_key)
        ).first()
        if key is not None:
            out.append(_api_key_variable(key))
            continue
        passkey = session.scalars(
            select(Authenticator).where(
                Authenticator.user_id == vote.user_id,
                or_(
                    Authenticator.public_key == vote.public_key,
                    Authenticator.credential_id == vote.public_key,
                ),
            )
        ).first()
        if passkey is not None:
            out.append(_passkey_variable(passkey))
    return out


def _user_credentials(session: Session, user_id: str) -> list[dict[str, Any]]:
    """Every credential ``user_id`` could stamp a vote with."""
    keys = session.scalars(select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.id))
    passkeys = session.scalars(
        select(Authenticator).where(Authenticator.user_id == user_id).order_by(Authenticator.id)
    )
    return [*(_api_key_variable(k) for k in keys), *(_passkey_variable(p) for p in passkeys)]


def _string_literals(node: Any) -> Iterator[str]:
    """Every string literal of a parsed expression."""
    if isinstance(node, nodes.Literal):
        if isinstance(node.value, str):
            yield node.value
        return
    if isinstance(node, tuple):
        for item in node:
            yield from _string_literals(item)
        return
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            yield from _string_literals(getattr(node, f.name))


def _consensus(text: str, env: dict[str, Any]) -> bool | None:
    """A consensus expression's value, ``None`` when it cannot be evaluated."""
    try:
        return compiled(text, "consensus")(env)
    except (PolicyEvaluationFailed, InvalidPolicyExpression):
        return None


def _pending_consensus(session: Session, target: AnyActivity) -> list[Policy]:
    """ALLOW policies with a consensus that applied when ``target`` was last evaluated."""
    latest = session.scalars(
        select(PolicyEvaluation)
        .where(PolicyEvaluation.activity_id == target.id)
        .order_by(PolicyEvaluation.created_at.desc(), PolicyEvaluation.id.desc())
        .limit(1)
    ).first()
    if latest is None:
        return []
    ids = [str(e.get("policyId")) for e in latest.evaluations
           if e.get("outcome") in ("OUTCOME_ALLOW", "OUTCOME_REQUIRES_CONSENSUS")]
    if not ids:
        return []
    return list(session.scalars(
        select(Policy).where(Policy.id.in_(ids), Policy.effect == "EFFECT_ALLOW",
                             Policy.consensus != "").order_by(Policy.created_at, Policy.id)
    ))


def _literals(consensus: str) -> set[str]:
    """The string literals of a consensus expression (none if it does not parse)."""
    try:
        return set(_string_literals(compiled(consensus, "consensus").expression))
    except InvalidPolicyExpression:
        return set()


def _named_by_consensus(
    session: Session, target: AnyActivity, user: User, votes: Sequence[AnyVote], moment: datetime
) -> bool:
    policies = _pending_consensus(session, target)
    if not policies:
        return False
    me = approver_variables(session, [user.id])
    names = {user.id, *(me[0]["tags"] if me else ()), *([user.email] if user.email else ())}
    # Named by a literal needs no approvers or credentials: check it before loading them.
    if any(_literals(policy.consensus) & names for policy in policies):
        return True
    live = [b.user_id for b in live_approvals(ballots_of(votes), moment) if b.user_id != user.id]
    live_ids = set(live)
    live_votes = [v for v in votes if v.user_id in live_ids and v.selection == APPROVED]
    approvers = approver_variables(session, live)
    credentials = credential_variables(session, live_votes)
    params: dict[str, Any] = next(iter(target.intent.values()), {}) if target.intent else {}
    activity = activity_variable(target.type, params, registry().resource_action(target.type))
    without = variables(activity=activity, approvers=approvers, credentials=credentials,
                        now=moment)
    with_me = variables(activity=activity, approvers=[*approvers, *me],
                        credentials=[*credentials, *_user_credentials(session, user.id)],
                        now=moment)
    return any(_consensus(policy.consensus, without) != _consensus(policy.consensus, with_me)
               for policy in policies)


def may_vote(
    session: Session, target: AnyActivity, user_id: str, votes: Sequence[AnyVote] | None = None
) -> bool:
    """Whether ``user_id`` may approve or reject ``target`` without a policy allowing it.

    The submitter may (an approval that expired may be renewed; a reject withdraws it); a
    root user of the governing organization (the submitter's: a parent organization acting
    for a sub-organization is governed by its own root quorum) may, since the root quorum
    counts them; and a user the target's pending consensus names may (module docstring).
    Status and earlier votes are not considered here (see :func:`vote_rights`).
    """
    if user_id == target.user_id:
        return True
    user = session.get(User, user_id)
    submitter = session.get(User, target.user_id) if target.user_id else None
    governing = submitter.organization_id if submitter is not None else target.organization_id
    if user is None or user.organization_id not in (target.organization_id, governing):
        return False
    if user.is_root and user.organization_id == governing:
        organization = session.get(Organization, governing)
        if organization is not None and organization.root_quorum_threshold > 0:
            return True
    found = activity_votes(session, target.id) if votes is None else votes
    return _named_by_consensus(session, target, user, found, now())


def vote_rights(
    session: Session, activity: AnyActivity, viewer: str | None, votes: Sequence[AnyVote]
) -> tuple[bool, bool]:
    """``(canApprove, canReject)`` for ``viewer``.

    Only an activity awaiting consensus can be voted on, only by a user :func:`may_vote`
    admits, and not twice: a rejection by the viewer rules both out, a live approval rules
    out approving again (an approval that expired may be given again) but not rejecting (a
    submitter may reject their own activity, an approver may change their mind).
    """
    if activity.status != CONSENSUS_NEEDED or viewer is None:
        return False, False
    ballots = ballots_of(votes)
    if viewer in rejecters(ballots) or not may_vote(session, activity, viewer, votes):
        return False, False
    approved = viewer in {b.user_id for b in live_approvals(ballots, now())}
    return not approved, True


class TargetNotFound(NotFound):
    """``approve_activity`` / ``reject_activity`` named no activity of the organization."""

    code = "activity_not_found"


NO_TARGET = (
    "No activity found with fingerprint. Consensus activities must target an existing activity by fingerprint"
)


def find_target(session: Session, organization_id: str, fingerprint: str) -> str:
    """The id of the organization's activity with ``fingerprint``, or a 404."""
    target = store.find(session, organization_id, fingerprint)
    if target is None:
        raise TargetNotFound(NO_TARGET)
    return target.id


def cast_vote(ctx: ActivityContext, fingerprint: str, selection: str) -> ActivityRow:
    """Record the caller's vote on the activity with ``fingerprint`` and act on it.

    The vote carries the stamp of the vote request itself (user, public key, scheme,
    signature, stamped message). Who may vote is the policy engine's decision on the vote
    activity (:func:`may_vote` by default); here a user may not approve twice while their
    approval is live, nor vote after rejecting. A rejection ends the target REJECTED; an
    approval of a target waiting for consensus sends it back to PENDING and, after commit,
    hands it to its own pool, which decides it again (the executor's status guard makes it
    run once however many votes race). The target is locked first (its version moves), so
    votes and the target's decision serialize.
    """
    session, voter = ctx.session, ctx.user_id
    if voter is None:
        raise FailedPrecondition("votes need an authenticated user")
    if fingerprint == ctx.activity.fingerprint:
        raise InvalidRequest("an activity cannot vote on itself", field="parameters.fingerprint")
    target = store.lock(session, find_target(session, ctx.organization_id, fingerprint))
    stamp = next((v for v in activity_votes(session, ctx.activity.id) if v.user_id == voter), None)
    if stamp is None:
        raise FailedPrecondition("the vote request carries no stamp")
    voting_user = session.get(User, voter)
    if voting_user is not None and mfa.on_vote(ctx, target, voting_user, selection, stamp,
                                               lambda t: _to_pending(ctx, t)):
        return target  # taken as an MFA step (infra.pipeline.mfa)
    if target.status not in (CONSENSUS_NEEDED, PENDING, AUTHENTICATORS_NEEDED):
        raise FailedPrecondition(f"activity {target.id} is not awaiting consensus (status {target.status})")
    votes = activity_votes(session, target.id)
    ballots = ballots_of(votes)
    approved = voter in {b.user_id for b in live_approvals(ballots, ctx.now)}
    if voter in rejecters(ballots) or (selection == APPROVED and approved):
        raise FailedPrecondition(f"user {voter} has already voted on activity {target.id}")
    moment = now()
    vote = VoteRow(id=new_id(), activity_id=target.id, user_id=voter, selection=selection,
                   message=stamp.message, public_key=stamp.public_key,
                   signature=stamp.signature, scheme=stamp.scheme,
                   created_at=moment, updated_at=moment)
    store.cast_vote(session, vote, audit.vote_leaf(target, vote, ctx.activity.id))
    votes.append(vote)
    if selection == REJECTED:
        return store.transition(ctx.uow, target, ACTIVITY_REJECTED, votes=votes)
    if target.status == CONSENSUS_NEEDED:
        return _to_pending(ctx, target, votes)
    return target


def _to_pending(ctx: ActivityContext, target: ActivityRow,
                votes: Sequence[VoteRow] | None = None) -> ActivityRow:
    """Send ``target`` back to PENDING; its pool decides it again after commit."""
    moved = store.transition(ctx.uow, target, PENDING, votes=votes)
    _evaluate_after_commit(ctx, target)
    return moved


def _evaluate_after_commit(ctx: ActivityContext, target: ActivityRow) -> None:
    """Hand ``target`` back to its pool after commit; the pool decides it again."""
    broker, activity_id = ctx.services.broker, target.id
    pool = registry().by_type[target.type][0].pool

    def send() -> None:
        try:
            send_execute_activity(broker, activity_id, pool)
        except Exception:  # the sweeper re-sends for activities left PENDING
            log.exception("could not hand activity %s back to its pool", activity_id)

    ctx.uow.after_commit(send)
