"""MFA policies: activities that wait until their users authenticate again, step by step.

A user's MFA policies are ordered (``order``, then creation); for an activity the user
proposes or approves, the first policy whose ``condition`` (policy language, with
``activity`` as policies see it and ``time``) evaluates to ``true`` applies; a condition
that cannot be evaluated does not match. Its ``requiredAuthenticationMethods`` are steps
satisfied in order, each by ONE ``approve_activity`` of that user stamped with a credential
of one of the step's ``any`` methods (``{type, id?}``; ``id`` names a particular
authenticator, API key or, for ``AUTHENTICATION_TYPE_SESSION``, a session profile):

* ``PASSKEY`` — an ``X-Stamp-Webauthn`` stamp (a session made from a passkey is a SESSION);
* ``API_KEY`` — an ``X-Stamp`` stamp by a long-lived API key;
* ``SESSION`` — an ``X-Stamp`` stamp by a login credential (its profile is its id);
* ``EMAIL_OTP`` / ``SMS_OTP`` — an ``X-Stamp-Attested`` stamp by a verification token of
  that kind (the token is spent);
* ``OAUTH`` — an ``X-Stamp-Attested`` stamp by an OIDC token (spent).

The proposer's MFA comes first: the activity waits in ``ACTIVITY_STATUS_AUTHENTICATORS_NEEDED``
(:func:`proposer_waiting`, asked by the executor before the policy decision) and goes back to
PENDING when the last step is satisfied. Then, with consensus, an approver with a matching
policy satisfies their steps with their approvals; their vote is recorded, and counts, only
with the last step (:func:`on_vote`). A credential of the wrong type is refused (403) and the
step stays open. Approvals and rejections themselves are never subject to MFA, and attested
stamps approve only as MFA steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from infra.access import changes
from infra.activities.spec import ActivityContext
from infra.clock import now as clock_now
from infra.db.models.access import MfaPolicy, MfaProgress
from infra.db.models.activities import Activity, Vote
from infra.db.models.identity import Authenticator
from infra.db.models.oauth import OidcTokenUse
from infra.db.models.organizations import ApiKey, User
from infra.db.models.sessions import VerificationToken
from infra.errors import FailedPrecondition, InvalidRequest, PermissionDenied
from infra.identity import passkeys
from infra.pipeline import lifecycle
from infra.policy.evaluator import PolicyEvaluationFailed, compiled
from infra.policy.variables import activity_variable, variables

EMAIL_OTP: Final = "AUTHENTICATION_TYPE_EMAIL_OTP"
SMS_OTP: Final = "AUTHENTICATION_TYPE_SMS_OTP"
PASSKEY: Final = "AUTHENTICATION_TYPE_PASSKEY"
API_KEY: Final = "AUTHENTICATION_TYPE_API_KEY"
OAUTH: Final = "AUTHENTICATION_TYPE_OAUTH"
SESSION: Final = "AUTHENTICATION_TYPE_SESSION"
TYPES: Final = (EMAIL_OTP, SMS_OTP, PASSKEY, API_KEY, OAUTH, SESSION)
#: Methods only an ``X-Stamp-Attested`` stamp proves.
ATTESTED: Final = frozenset({EMAIL_OTP, SMS_OTP, OAUTH})
#: API keys created as such (``CREDENTIAL_TYPE_API_KEY_P256`` / ``_SECP256K1`` / ``_ED25519``).
LONG_LIVED_KEY_TYPES: Final = "CREDENTIAL_TYPE_API_KEY_"
MAX_STEPS: Final = 10
MAX_METHODS: Final = 10
APPROVED: Final = "VOTE_SELECTION_APPROVED"


@dataclass(frozen=True)
class Policy:
    """A policy as matching reads it (``steps``: tuple of ``((type, id), ...)``)."""

    id: str
    user_id: str
    condition: str
    steps: tuple[tuple[tuple[str, str], ...], ...]


@dataclass(frozen=True)
class Method:
    """How one approval was stamped."""

    type: str
    id: str


# --- validation ---------------------------------------------------------------------------

def check_condition(condition: str) -> None:
    """A 400 when ``condition`` is not a policy-language expression."""
    compiled(condition, "parameters.condition")


def normalise_steps(steps: list[Any]) -> list[dict[str, Any]]:
    """The wire ``requiredAuthenticationMethods`` as stored, or a 400 naming the step."""
    if not steps:
        raise InvalidRequest("requiredAuthenticationMethods needs at least one step",
                             field="parameters.requiredAuthenticationMethods")
    if len(steps) > MAX_STEPS:
        raise InvalidRequest(f"at most {MAX_STEPS} steps", field="parameters.requiredAuthenticationMethods")
    out: list[dict[str, Any]] = []
    for index, step in enumerate(steps):
        field = f"parameters.requiredAuthenticationMethods[{index}].any"
        methods = list(getattr(step, "any", None) or [])
        if not methods or len(methods) > MAX_METHODS:
            raise InvalidRequest(f"step {index} needs 1 to {MAX_METHODS} methods in any",
                                 field=field)
        wire = []
        for number, method in enumerate(methods):
            kind = str(getattr(method, "type", ""))
            if kind not in TYPES:
                raise InvalidRequest(f"step {index}, method {number}: type must be one of "
                                     f"{', '.join(TYPES)}", field=f"{field}[{number}].type")
            ident = getattr(method, "id", None)
            wire.append({"type": kind, **({"id": str(ident)} if ident else {})})
        out.append({"any": wire})
    return out


# --- which policy applies -----------------------------------------------------------------

_BY_ORGANIZATION: Final = (select(MfaPolicy)
                           .where(MfaPolicy.organization_id == bindparam("organization_id"))
                           .order_by(MfaPolicy.order, MfaPolicy.created_at, MfaPolicy.id))
#: Policies per organization and user (``infra.access.changes``; watched from bootstrap).
CACHE: Final[changes.OrganizationCache[dict[str, tuple[Policy, ...]]]] = changes.OrganizationCache()


def _policy(row: MfaPolicy) -> Policy:
    steps = tuple(tuple((str(m.get("type", "")), str(m.get("id", "") or ""))
                        for m in step.get("any", [])) for step in (row.required_methods or []))
    return Policy(row.id, row.user_id, row.condition, steps)


def _load(session: Session, organization_id: str) -> dict[str, tuple[Policy, ...]]:
    found: dict[str, list[Policy]] = {}
    for row in session.scalars(_BY_ORGANIZATION, {"organization_id": organization_id}):
        found.setdefault(row.user_id, []).append(_policy(row))
    return {user: tuple(policies) for user, policies in found.items()}


def policies_of(session: Session, organization_id: str, user_id: str) -> tuple[Policy, ...]:
    """The user's policies in evaluation order (remembered per organization and process)."""
    by_user = CACHE.get(organization_id, lambda: _load(session, organization_id))
    return by_user.get(user_id, ())


def matching(session: Session, user: User, activity: Activity,
             moment: datetime | None = None) -> Policy | None:
    """The first of ``user``'s policies whose condition is ``true`` for ``activity``."""
    policies = policies_of(session, user.organization_id, user.id)
    if not policies:
        return None
    params: dict[str, Any] = next(iter(activity.intent.values()), {}) if activity.intent else {}
    env = variables(activity=activity_variable(activity.type, params), now=moment or clock_now())
    for policy in policies:
        try:
            if compiled(policy.condition, "condition")(env) is True:
                return policy
        except (PolicyEvaluationFailed, InvalidRequest):
            continue
    return None


def _satisfied(session: Session, activity_id: str, user_id: str, policy_id: str) -> list[MfaProgress]:
    return list(session.scalars(select(MfaProgress).where(
        MfaProgress.activity_id == activity_id, MfaProgress.user_id == user_id,
        MfaProgress.mfa_policy_id == policy_id).order_by(MfaProgress.step)))


def proposer_waiting(session: Session, activity: Activity, submitter: User | None,
                     is_vote: bool) -> bool:
    """Whether ``activity`` must wait for its proposer's MFA (executor, before deciding)."""
    if is_vote or submitter is None:
        return False
    policy = matching(session, submitter, activity)
    if policy is None:
        return False
    return len(_satisfied(session, activity.id, submitter.id, policy.id)) < len(policy.steps)


# --- how an approval was stamped ----------------------------------------------------------

def method_of(session: Session, vote_activity: Activity, stamp: Vote) -> Method | None:
    """The authentication method of the approval ``vote_activity`` (its stamp ``stamp``).

    Attested stamps are recognised by the token the stamp spent on this very request (the
    body's fingerprint), before the key is looked up: a token's key may also be a session key.
    """
    attested = _attested_method(session, vote_activity, stamp)
    if attested is not None:
        return attested
    if stamp.scheme == passkeys.SCHEME:
        passkey = session.scalar(select(Authenticator).where(
            Authenticator.user_id == stamp.user_id,
            (Authenticator.public_key == stamp.public_key)
            | (Authenticator.credential_id == stamp.public_key)))
        return Method(PASSKEY, passkey.id) if passkey is not None else None
    key = session.scalar(select(ApiKey).where(ApiKey.user_id == stamp.user_id,
                                              ApiKey.public_key == stamp.public_key))
    if key is None:
        return None
    if key.credential_type.startswith(LONG_LIVED_KEY_TYPES):
        return Method(API_KEY, key.id)
    # Every other credential type is one a login created (sessions, OTP/OAuth/email keys).
    return Method(SESSION, key.session_profile_id or "")


def _attested_method(session: Session, vote_activity: Activity, stamp: Vote) -> Method | None:
    """The method of an ``X-Stamp-Attested`` approval: the token this very body spent."""
    fingerprint = vote_activity.fingerprint
    token = session.scalar(select(VerificationToken).where(
        VerificationToken.login_fingerprint == fingerprint))
    if token is not None:
        return Method(EMAIL_OTP if token.verification_type == "OTP_TYPE_EMAIL" else SMS_OTP,
                      token.id)
    if session.scalar(select(OidcTokenUse.token_hash).where(
            OidcTokenUse.fingerprint == fingerprint, OidcTokenUse.usage == "login")) is not None:
        return Method(OAUTH, "")
    return None


def _fits(method: Method, step: tuple[tuple[str, str], ...]) -> bool:
    return any(method.type == kind and (not ident or ident == method.id) for kind, ident in step)


def _describe(step: tuple[tuple[str, str], ...]) -> str:
    return " or ".join(f"{kind}" + (f" ({ident})" if ident else "") for kind, ident in step)


def _take_step(ctx: ActivityContext, target: Activity, user_id: str, policy: Policy,
               stamp: Vote) -> bool:
    """Record the approval as the user's next step; whether that completed the policy.

    Raises:
        PermissionDenied: the approval's credential is not one the next step accepts.
    """
    done = _satisfied(ctx.session, target.id, user_id, policy.id)
    if len(done) >= len(policy.steps):
        return True
    step = policy.steps[len(done)]
    method = method_of(ctx.session, ctx.activity, stamp)
    if method is None or not _fits(method, step):
        used = method.type if method is not None else "an unknown credential"
        raise PermissionDenied(
            f"MFA step {len(done) + 1} of {len(policy.steps)} (policy {policy.id}) needs "
            f"{_describe(step)}; this approval was stamped with {used}")
    ctx.session.add(MfaProgress(activity_id=target.id, user_id=user_id, mfa_policy_id=policy.id,
                                step=len(done), method_type=method.type, method_id=method.id))
    ctx.session.flush()
    return len(done) + 1 >= len(policy.steps)


def on_vote(ctx: ActivityContext, target: Activity, voter: User, selection: str, stamp: Vote,
            to_pending: Callable[[Activity], None]) -> bool:
    """MFA's part in a vote on ``target`` (called with the target locked).

    Returns ``True`` when the vote was taken as an MFA step and must not be recorded as a
    vote (yet), ``False`` when it goes on as an ordinary vote. ``to_pending`` moves the
    target back to PENDING and hands it to its pool after commit.
    """
    if target.status == lifecycle.AUTHENTICATORS_NEEDED:
        if voter.id != target.user_id:
            raise FailedPrecondition(f"activity {target.id} waits for its proposer's MFA first")
        if selection != APPROVED:
            return False
        submitter = voter
        policy = matching(ctx.session, submitter, target)
        if policy is None or _take_step(ctx, target, voter.id, policy, stamp):
            to_pending(target)
        return True
    if selection == APPROVED and voter.id != target.user_id:
        policy = matching(ctx.session, voter, target)
        if policy is not None and len(_satisfied(ctx.session, target.id, voter.id, policy.id)) \
                < len(policy.steps):
            # The vote counts with the last step, not before.
            return not _take_step(ctx, target, voter.id, policy, stamp)
    if _attested_only(ctx.session, ctx.activity, stamp):
        raise PermissionDenied("an approval stamped with a one-time code or an OAuth token "
                               "counts only as an MFA step; stamp it with a passkey or a key")
    return False


def _attested_only(session: Session, vote_activity: Activity, stamp: Vote) -> bool:
    """Whether the approval was stamped ``X-Stamp-Attested`` (a token spent by this body)."""
    if stamp.scheme == passkeys.SCHEME:
        return False
    found = _attested_method(session, vote_activity, stamp)
    return found is not None


# --- get_mfa_status -------------------------------------------------------------------------

def status(session: Session, activity: Activity, user_id: str | None) -> list[dict[str, Any]]:
    """``v1MfaStatus`` of the activity's proposer and voters with a matching policy."""
    users = [activity.user_id] if activity.user_id else []
    users += [v.user_id for v in session.scalars(select(Vote).where(
        Vote.activity_id == activity.id).order_by(Vote.created_at)) if v.user_id not in users]
    users += [u for u in session.scalars(select(MfaProgress.user_id).where(
        MfaProgress.activity_id == activity.id)) if u not in users]
    out: list[dict[str, Any]] = []
    for uid in users:
        if user_id and uid != user_id:
            continue
        user = session.get(User, uid)
        if user is None:
            continue
        policy = matching(session, user, activity)
        if policy is None:
            continue
        done = _satisfied(session, activity.id, uid, policy.id)
        row = session.get(MfaPolicy, policy.id)
        out.append({
            "mfaPolicyId": policy.id, "userId": uid,
            "satisfied": len(done) >= len(policy.steps),
            "satisfiedMethods": [{"type": d.method_type, **({"id": d.method_id} if d.method_id else {})}
                                 for d in done],
            "requiredMethods": list(row.required_methods or []) if row is not None else [],
        })
    return out
