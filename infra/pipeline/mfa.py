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

A stolen credential must not be able to satisfy the MFA that guards against it
(:func:`refusal`): a step is satisfied only by a factor that existed before the activity was
created (a passkey or key created before it; a contact verified, or an OAuth identity bound,
before it), never by the credential that proposed the activity, and never by a credential
of the proposer's lineage (``api_keys.lineage_root_id``: a session refreshed from the
proposing one). And the credential cannot remove or widen its own MFA (:func:`guarded_targets`):
activities that change a user's credentials, contacts, OAuth providers or MFA policies
wait for ALL of the proposer's policies when the proposer is their target
(:func:`required_policies`), and need the root quorum when another user with policies is
(:func:`needs_target_quorum`), whatever the policies' conditions say.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from infra.access import changes
from infra.activities import registry
from infra.activities.spec import ActivityContext
from infra.clock import as_utc
from infra.clock import now as clock_now
from infra.db.activity_rows import APPROVED, ActivityRow, AnyActivity, AnyVote
from infra.db.models.access import MfaPolicy, MfaProgress
from infra.db.models.activities import Vote
from infra.db.models.identity import Authenticator, OauthProvider
from infra.db.models.oauth import OidcTokenUse
from infra.db.models.organizations import ApiKey, User
from infra.db.models.sessions import VerificationToken
from infra.errors import FailedPrecondition, InvalidRequest, PermissionDenied
from infra.identity import passkeys
from infra.pipeline import lifecycle
from infra.policy.evaluator import PolicyEvaluationFailed, compiled
from infra.policy.variables import activity_kind, activity_variable, variables

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
#: Activities under their target user's MFA whatever a policy's condition says: they add or
#: change what authenticates the user (credentials, contacts, OAuth identities) or the MFA
#: itself. Their target is the ``userId`` they name. Sessions (``stamp_login``,
#: ``create_read_write_session``) are not here: ``@turnkey/core`` refreshes sessions with
#: ``stamp_login`` and a passkey-stamped login must keep working; the lineage rule keeps a
#: refreshed session from approving what its ancestor proposed. Logins that carry their own
#: proof (``otp_login``, ``oauth_login``, ``email_auth``, ``recover_user``, sign-ups) are
#: another factor, not the stolen credential.
GUARDED_KINDS: Final = frozenset({
    "CREATE_AUTHENTICATORS", "DELETE_AUTHENTICATORS", "CREATE_API_KEYS", "DELETE_API_KEYS",
    "CREATE_OAUTH_PROVIDERS", "DELETE_OAUTH_PROVIDERS", "UPDATE_USER_EMAIL",
    "UPDATE_USER_PHONE_NUMBER", "CREATE_MFA_POLICY", "UPDATE_MFA_POLICY", "DELETE_MFA_POLICY",
})
#: ``update_user`` is guarded when it carries one of these (a contact change).
UPDATE_USER_CONTACTS: Final = ("userEmail", "userPhoneNumber")


@dataclass(frozen=True)
class Policy:
    """A policy as matching reads it (``steps``: tuple of ``((type, id), ...)``)."""

    id: str
    user_id: str
    condition: str
    steps: tuple[tuple[tuple[str, str], ...], ...]


@dataclass(frozen=True)
class Method:
    """How one approval was stamped, and what its factor is (for :func:`refusal`)."""

    type: str
    id: str
    #: The stamping ``Authenticator`` / ``ApiKey`` row ("" for attested stamps).
    credential_id: str = ""
    #: When the factor came to exist: the credential's creation, the contact's verification,
    #: the latest binding of the user's OAuth identities (``None``: not a factor of the user).
    since: datetime | None = None
    #: API-key-type credentials: the root of their lineage (``lineage_root_id`` or own id).
    lineage: str = ""
    #: What the factor is, for messages ("passkey", "API key", "session", "email", ...).
    noun: str = ""


def _params(activity: AnyActivity) -> dict[str, Any]:
    return next(iter(activity.intent.values()), {}) if activity.intent else {}


# --- what a stolen credential may not do ----------------------------------------------------

def guarded_targets(activity_type: str, params: dict[str, Any]) -> frozenset[str]:
    """The users whose credentials, contacts or MFA an activity changes (empty: not guarded)."""
    kind = activity_kind(activity_type)
    if kind not in GUARDED_KINDS and not (
            kind == "UPDATE_USER" and any(f in params for f in UPDATE_USER_CONTACTS)):
        return frozenset()
    user_id = params.get("userId")
    return frozenset({user_id}) if isinstance(user_id, str) and user_id else frozenset()


def refusal(method: Method, proposer: Method | None, activity_id: str,
            created_at: datetime) -> str | None:
    """Why ``method`` may not satisfy a step of activity ``activity_id`` (``None``: it may).

    ``proposer`` is the credential that proposed the activity (``None``: unknown).
    """
    if proposer is not None and method.credential_id:
        if method.credential_id == proposer.credential_id:
            return f"this is the credential that proposed activity {activity_id}"
        if method.lineage and proposer.lineage and proposer.credential_id and (
                method.lineage in (proposer.lineage, proposer.credential_id)
                or proposer.lineage == method.credential_id):
            return (f"this {method.noun} was issued from the credential that proposed activity "
                    f"{activity_id} (same lineage)")
    if method.since is None or as_utc(method.since) >= as_utc(created_at):
        what = {EMAIL_OTP: "was not the user's verified email",
                SMS_OTP: "was not the user's verified phone number",
                OAUTH: "is not an OAuth identity the user had bound"}.get(method.type)
        if what is not None:
            return f"what this approval proves {what} before activity {activity_id} was created"
        return f"this {method.noun or 'credential'} was created after activity {activity_id}"
    return None


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
#: Policies per organization and user (``infra.access.changes``; attached to the
#: announcements in bootstrap).
CACHE: Final[changes.OrganizationCache[dict[str, tuple[Policy, ...]]]] = changes.OrganizationCache(
    "mfa policies", ("mfa_policies",))


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


def matching(session: Session, user: User, activity: AnyActivity,
             moment: datetime | None = None) -> Policy | None:
    """The first of ``user``'s policies whose condition is ``true`` for ``activity``."""
    policies = policies_of(session, user.organization_id, user.id)
    if not policies:
        return None
    env = variables(activity=activity_variable(activity.type, _params(activity),
                                               registry().resource_action(activity.type)),
                    now=moment or clock_now())
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


def required_policies(session: Session, user: User, activity: AnyActivity) -> tuple[Policy, ...]:
    """The policies ``user`` must satisfy as the proposer of ``activity``, in order: all of
    them when the activity changes the user's own credentials, contacts or MFA (a weak
    policy's factor must not add a credential that defeats a strong one); otherwise the
    first that matches, if any."""
    policies = policies_of(session, user.organization_id, user.id)
    if not policies:
        return ()
    if user.id in guarded_targets(activity.type, _params(activity)):
        return policies
    found = matching(session, user, activity)
    return (found,) if found is not None else ()


def needs_target_quorum(session: Session, activity: AnyActivity, proposer_id: str) -> bool:
    """Whether ``activity`` changes the credentials, contacts or MFA of another user who has
    MFA policies: then only the root quorum decides it (``infra.pipeline.decide``)."""
    targets = guarded_targets(activity.type, _params(activity)) - {proposer_id}
    return any(policies_of(session, activity.organization_id, t) for t in targets)


def _pending(session: Session, activity_id: str, user_id: str,
             policies: tuple[Policy, ...]) -> Policy | None:
    """The first of ``policies`` whose steps ``user_id`` has not all satisfied."""
    for policy in policies:
        if len(_satisfied(session, activity_id, user_id, policy.id)) < len(policy.steps):
            return policy
    return None


def proposer_waiting(session: Session, activity: AnyActivity, submitter: User | None,
                     is_vote: bool) -> bool:
    """Whether ``activity`` must wait for its proposer's MFA (executor, before deciding)."""
    if is_vote or submitter is None:
        return False
    policies = required_policies(session, submitter, activity)
    return bool(policies) and _pending(session, activity.id, submitter.id, policies) is not None


# --- how an approval was stamped ----------------------------------------------------------

def method_of(session: Session, vote_activity: AnyActivity, stamp: AnyVote) -> Method | None:
    """The authentication method of the approval ``vote_activity`` (its stamp ``stamp``).

    Attested stamps are recognised by the token the stamp spent on this very request (the
    body's fingerprint), before the key is looked up: a token's key may also be a session key.
    """
    attested = _attested_method(session, vote_activity, stamp)
    if attested is not None:
        return attested
    return credential_method(session, stamp)


def credential_method(session: Session, stamp: AnyVote) -> Method | None:
    """The passkey or API-key-type credential that made ``stamp`` (``None``: neither)."""
    if stamp.scheme == passkeys.SCHEME:
        passkey = session.scalar(select(Authenticator).where(
            Authenticator.user_id == stamp.user_id,
            (Authenticator.public_key == stamp.public_key)
            | (Authenticator.credential_id == stamp.public_key)))
        if passkey is None:
            return None
        return Method(PASSKEY, passkey.id, passkey.id, passkey.created_at, noun="passkey")
    key = session.scalar(select(ApiKey).where(ApiKey.user_id == stamp.user_id,
                                              ApiKey.public_key == stamp.public_key))
    if key is None:
        return None
    lineage = key.lineage_root_id or key.id
    if key.credential_type.startswith(LONG_LIVED_KEY_TYPES):
        return Method(API_KEY, key.id, key.id, key.created_at, lineage, "API key")
    # Every other credential type is one a login created (sessions, OTP/OAuth/email keys).
    return Method(SESSION, key.session_profile_id or "", key.id, key.created_at, lineage,
                  "session")


def _attested_method(session: Session, vote_activity: AnyActivity, stamp: AnyVote) -> Method | None:
    """The method of an ``X-Stamp-Attested`` approval: the token this very body spent.

    Its factor is the contact the token proves, counted from when the user's current
    contact was verified if it is that contact; for an OIDC token (only its hash is kept),
    from the latest binding of the user's verified OAuth identities.
    """
    fingerprint = vote_activity.fingerprint
    token = session.scalar(select(VerificationToken).where(
        VerificationToken.login_fingerprint == fingerprint))
    user = session.get(User, stamp.user_id)
    if token is not None:
        sms = token.verification_type == "OTP_TYPE_SMS"
        since = None
        if user is not None and sms and user.phone_number == token.contact:
            since = user.phone_verified_at
        elif user is not None and not sms and (user.email or "").strip().lower() \
                == token.contact.strip().lower():
            since = user.email_verified_at
        return Method(SMS_OTP if sms else EMAIL_OTP, token.id, since=since,
                      noun="phone number" if sms else "email")
    if session.scalar(select(OidcTokenUse.token_hash).where(
            OidcTokenUse.fingerprint == fingerprint, OidcTokenUse.usage == "login")) is not None:
        bound = [as_utc(at) for at in session.scalars(select(OauthProvider.verified_at).where(
            OauthProvider.user_id == stamp.user_id, OauthProvider.verified_at.is_not(None)))
            if at is not None]
        return Method(OAUTH, "", since=max(bound) if bound else None, noun="OAuth identity")
    return None


def _proposer_method(session: Session, target: AnyActivity) -> Method | None:
    """The credential that proposed ``target``: the stamp of its first vote (the submission)."""
    first = session.scalar(select(Vote).where(Vote.activity_id == target.id)
                           .order_by(Vote.created_at, Vote.id).limit(1))
    if first is None or first.user_id != target.user_id:
        return None
    return credential_method(session, first)


def _fits(method: Method, step: tuple[tuple[str, str], ...]) -> bool:
    return any(method.type == kind and (not ident or ident == method.id) for kind, ident in step)


def _describe(step: tuple[tuple[str, str], ...]) -> str:
    return " or ".join(f"{kind}" + (f" ({ident})" if ident else "") for kind, ident in step)


def _take_step(ctx: ActivityContext, target: AnyActivity, user_id: str, policy: Policy,
               stamp: AnyVote) -> bool:
    """Record the approval as the user's next step; whether that completed the policy.

    Raises:
        PermissionDenied: the approval's credential is not one the next step accepts, or is
            one a stolen credential could have supplied (:func:`refusal`).
    """
    done = _satisfied(ctx.session, target.id, user_id, policy.id)
    if len(done) >= len(policy.steps):
        return True
    step = policy.steps[len(done)]
    method = method_of(ctx.session, ctx.activity, stamp)
    which = f"MFA step {len(done) + 1} of {len(policy.steps)} (policy {policy.id})"
    if method is None or not _fits(method, step):
        used = method.type if method is not None else "an unknown credential"
        raise PermissionDenied(f"{which} needs {_describe(step)}; this approval was stamped "
                               f"with {used}")
    why = refusal(method, _proposer_method(ctx.session, target), target.id, target.created_at)
    if why is not None:
        raise PermissionDenied(f"{which} needs a {method.type} that existed before activity "
                               f"{target.id} was created and is not the proposing credential "
                               f"or one issued from it; {why}")
    # ``step`` numbers the user's steps on the activity across policies (one row per step,
    # unique per activity and user): the next after every step taken so far.
    taken = ctx.session.scalar(select(func.count()).select_from(MfaProgress).where(
        MfaProgress.activity_id == target.id, MfaProgress.user_id == user_id)) or 0
    ctx.session.add(MfaProgress(activity_id=target.id, user_id=user_id, mfa_policy_id=policy.id,
                                step=taken, method_type=method.type, method_id=method.id))
    ctx.session.flush()
    return len(done) + 1 >= len(policy.steps)


def on_vote(ctx: ActivityContext, target: ActivityRow, voter: User, selection: str,
            stamp: AnyVote,
            to_pending: Callable[[ActivityRow], object]) -> bool:
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
        policies = required_policies(ctx.session, voter, target)
        policy = _pending(ctx.session, target.id, voter.id, policies)
        if policy is None or (_take_step(ctx, target, voter.id, policy, stamp)
                              and _pending(ctx.session, target.id, voter.id, policies) is None):
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


def _attested_only(session: Session, vote_activity: AnyActivity, stamp: AnyVote) -> bool:
    """Whether the approval was stamped ``X-Stamp-Attested`` (a token spent by this body)."""
    if stamp.scheme == passkeys.SCHEME:
        return False
    found = _attested_method(session, vote_activity, stamp)
    return found is not None


# --- get_mfa_status -------------------------------------------------------------------------

def status(session: Session, activity: AnyActivity, user_id: str | None) -> list[dict[str, Any]]:
    """``v1MfaStatus`` of the activity's proposer (each policy :func:`required_policies`
    names) and of voters with a matching policy."""
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
        if uid == activity.user_id:
            policies = required_policies(session, user, activity)
        else:
            found = matching(session, user, activity)
            policies = (found,) if found is not None else ()
        for policy in policies:
            done = _satisfied(session, activity.id, uid, policy.id)
            row = session.get(MfaPolicy, policy.id)
            out.append({
                "mfaPolicyId": policy.id, "userId": uid,
                "satisfied": len(done) >= len(policy.steps),
                "satisfiedMethods": [{"type": d.method_type,
                                      **({"id": d.method_id} if d.method_id else {})}
                                     for d in done],
                "requiredMethods": list(row.required_methods or []) if row is not None else [],
            })
    return out
