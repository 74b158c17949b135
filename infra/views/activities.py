"""Wire view of an activity (``v1Activity``) with its votes."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from infra.audit import boots
from infra.clock import wire_timestamp
from infra.db.activity_rows import ActivityRow, VoteRow
from infra.db.models.activities import Activity, Vote
from infra.db.models.organizations import User
from infra.pipeline import store
from infra.pipeline.votes import vote_rights
from infra.views.users import render_users

# Built once: every submit's answer renders its activity.
_VOTES: Final = (select(Vote).where(Vote.activity_id.in_(bindparam("ids", expanding=True)))
                 .order_by(Vote.created_at))
#: Refreshes users already in the session: their ``view_version`` may have moved in this
#: very transaction (a credential added by the activity being rendered).
_USERS: Final = (select(User).where(User.id.in_(bindparam("ids", expanding=True)))
                 .execution_options(populate_existing=True))


def render_activities(
    session: Session, activities: Sequence[Activity], viewer: str | None
) -> list[dict[str, Any]]:
    """``v1Activity`` for each activity, as ``viewer`` sees it."""
    ids = [a.id for a in activities]
    votes: dict[str, list[Vote]] = {i: [] for i in ids}
    if ids:
        for vote in session.scalars(_VOTES, {"ids": ids}):
            votes[vote.activity_id].append(vote)
    voter_ids = sorted({v.user_id for vs in votes.values() for v in vs})
    voters = session.scalars(_USERS, {"ids": voter_ids}).all() if voter_ids else []
    user_views = {u["userId"]: u for u in render_users(session, voters)}
    return [_view(session, a, votes[a.id], user_views, viewer) for a in activities]


def load_and_render(session: Session, activity_id: str,
                    viewer: str | None) -> tuple[ActivityRow, dict[str, Any]] | None:
    """The activity with ``activity_id`` and its ``v1Activity``, read in one statement by the
    activity store (``infra.pipeline.store.read_with_votes``; the voters' views are
    remembered, ``infra.views.users``); ``None`` if there is none."""
    found = store.read_with_votes(session, activity_id)
    if found is None:
        return None
    activity, votes, voters = found
    user_views = {u["userId"]: u for u in render_users(session, voters)}
    return activity, _view(session, activity, votes, user_views, viewer)


def render_change(session: Session, activity: ActivityRow,
                  votes: Sequence[VoteRow]) -> dict[str, Any]:
    """``v1Activity`` of an activity as a change leaves it (before the store writes it), with
    ``votes``, as any viewer without rights sees it (the webhook outbox's payload)."""
    voter_ids = sorted({v.user_id for v in votes})
    voters = session.scalars(_USERS, {"ids": voter_ids}).all() if voter_ids else []
    user_views = {u["userId"]: u for u in render_users(session, voters)}
    return _view(session, activity, list(votes), user_views, None)


def render_settled(session: Session, activity: ActivityRow, votes: Sequence[VoteRow],
                   voters: Sequence[User]) -> dict[str, Any]:
    """``v1Activity`` of an activity settling in this transaction, from the ballot its
    executor read (votes and voters), as any viewer sees it once it is terminal."""
    user_views = {u["userId"]: u for u in render_users(session, voters)}
    return _view(session, activity, list(votes), user_views, None)


def _view(session: Session, activity: Activity | ActivityRow, votes: Sequence[Vote | VoteRow],
          user_views: dict[str, dict[str, Any]], viewer: str | None) -> dict[str, Any]:
    can_approve, can_reject = vote_rights(session, activity, viewer, votes)
    view: dict[str, Any] = {
        "id": activity.id,
        "organizationId": activity.organization_id,
        "status": activity.status,
        "type": activity.type,
        "intent": activity.intent,
        "result": activity.result or {},
        "votes": [_render_vote(v, user_views) for v in votes],
        "fingerprint": activity.fingerprint,
        "canApprove": can_approve,
        "canReject": can_reject,
        "createdAt": wire_timestamp(activity.created_at),
        "updatedAt": wire_timestamp(activity.updated_at),
    }
    if activity.failure:
        view["failure"] = activity.failure
    if boots.wants_proofs(activity):  # one more read, only for activities that asked
        view["appProofs"] = boots.proofs_of(session, [activity.id]).get(activity.id, [])
    if activity.type in _TOKEN_ISSUING and viewer != activity.user_id and activity.result:
        view["result"] = _unbound_tokens_hidden(activity.result)
    return view


#: Activities whose result carries a verification token.
_TOKEN_ISSUING: Final = frozenset({"ACTIVITY_TYPE_VERIFY_OTP", "ACTIVITY_TYPE_VERIFY_OTP_V2"})


def _unbound_tokens_hidden(result: dict[str, Any]) -> dict[str, Any]:
    """The result as users other than the submitter see it: a verification token bound to no
    client key works for whoever holds it, so only its submitter reads it."""
    out: dict[str, Any] = {}
    for key, body in result.items():
        token = body.get("verificationToken") if isinstance(body, dict) else None
        if isinstance(token, str) and not _claims(token).get("public_key"):
            body = {**body, "verificationToken": "<redacted: readable by its submitter only>"}
        out[key] = body
    return out


def _claims(token: str) -> dict[str, Any]:
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return {}
    return claims if isinstance(claims, dict) else {}


def render_activity(session: Session, activity: Activity, viewer: str | None) -> dict[str, Any]:
    """``v1Activity`` for one activity."""
    return render_activities(session, [activity], viewer)[0]


def _render_vote(vote: Vote | VoteRow, users: dict[str, dict[str, Any]]) -> dict[str, Any]:
    user = users.get(vote.user_id) or {
        "userId": vote.user_id, "userName": "", "authenticators": [], "apiKeys": [],
        "userTags": [], "oauthProviders": [], "createdAt": wire_timestamp(vote.created_at),
        "updatedAt": wire_timestamp(vote.created_at), "mfaPolicies": [],
    }
    return {
        "id": vote.id,
        "userId": vote.user_id,
        "user": user,
        "activityId": vote.activity_id,
        "selection": vote.selection,
        "message": vote.message,
        "publicKey": vote.public_key,
        "signature": vote.signature,
        "scheme": vote.scheme,
        "createdAt": wire_timestamp(vote.created_at),
    }
