"""Who sent a request: credential lookup plus signature verification.

``authenticate`` is called by the ingress for every submit and query, before the body is
parsed for anything but its ``organizationId``. It answers only who is asking; what they may
ask is decided next by ``infra.access.guard.authorize`` (docs/ACCESS.md), called by the same
two callers with the request as their route parsed it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from sqlalchemy import ColumnElement, bindparam, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from infra.auth.stamps import HEADER_API_KEY, HEADER_WEBAUTHN, MISSING, parse_api_key_stamp
from infra.clock import as_utc
from infra.crypto.stamp import CURVE_OF_SCHEME, verify_stamp_signature
from infra.db.announced import AnnouncedCache
from infra.db.models.organizations import ApiKey, Organization
from infra.errors import NotFound, Unauthenticated
from infra.identity import verified
from infra.identity.ancestry import organization_chain


@dataclass(frozen=True)
class Principal:
    """The authenticated sender of one request.

    Attributes:
        user_id: The user the credential belongs to.
        organization_id: The organization that credential lives in (the request's
            organization or an ancestor of it).
        credential_id: API key id or authenticator id.
        public_key / scheme / signature: The stamp, kept for the vote record.
    """

    user_id: str
    organization_id: str
    credential_id: str
    credential_type: str
    public_key: str
    scheme: str
    signature: str
    #: The session profile a login credential was issued under (``infra.access``).
    session_profile_id: str | None = None


#: The organization the current request authenticated for (``None`` until it did). The
#: ingress's rate limiter resets it per request and counts per-organization budgets only
#: for authenticated requests (``ingress.middleware.RateLimit``).
AUTHENTICATED: ContextVar[str | None] = ContextVar("walletd_authenticated", default=None)

#: A verifier of one stamp header besides ``X-Stamp``: gets ``(session, header_value, body,
#: candidate_org_ids, now)`` and returns a Principal.
StampVerifier = Callable[[Session, str, bytes, list[str], datetime], Principal]


@dataclass(frozen=True)
class CredentialLocator:
    """Where a stamp's credential lives, for downward resolution (PROTOCOL.md §1.4).

    Attributes:
        organization: The column holding a credential row's organization id.
        matches: ``header_value`` -> the condition selecting the stamp's credential rows.
        noun: What identifies the credential, for the ambiguity message
            (``public key``, ``credential ID``).
    """

    organization: InstrumentedAttribute[str]
    matches: Callable[[str], ColumnElement[bool]]
    noun: str
    #: ``(session, header_value, organization_id) -> sub-organization id``: the one
    #: sub-organization a credential held by neither the organization nor its parent
    #: resolves to (``infra.identity.verified``: verified holders only, the first verified
    #: wins). ``None``: exactly one sub-organization may hold it.
    winner: Callable[[Session, str, str], str | None] | None = None


@dataclass(frozen=True)
class Stamps:
    """The stamp headers a process accepts (wired in ``infra.bootstrap``).

    Attributes:
        verifiers: Verifiers of the headers besides ``X-Stamp`` (always verified first), by
            header name, tried in order.
        locators: Where each header's credential lives, by header name, tried in order
            (downward resolution, PROTOCOL.md §1.4).
    """

    verifiers: Mapping[str, StampVerifier]
    locators: Mapping[str, CredentialLocator]


def _not_found(organization_id: str) -> NotFound:
    return NotFound(f"organization not found: {organization_id}",
                    details=[{"@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
                              "turnkeyErrorCode": "ORGANIZATION_NOT_FOUND"}])


def authenticate(
    session: Session,
    headers: Mapping[str, str],
    body: bytes,
    organization_id: str,
    now: datetime,
    *,
    stamps: Stamps,
    resolve_sub_organizations: bool = False,
) -> Principal:
    """Verify the request's stamp and return who sent it.

    The credential must live in ``organization_id`` or its parent (PROTOCOL.md §1.4). With
    ``resolve_sub_organizations`` (``whoami``-style requests addressed to a parent), a
    credential found in neither but held by exactly one sub-organization of
    ``organization_id`` resolves to that sub-organization: the principal's
    ``organization_id`` is the sub-organization's.

    Raises:
        Unauthenticated: No stamp, unknown key, bad signature or expired key; or, when
            resolving downwards, a credential held by more than one sub-organization.
        NotFound: The organization does not exist.
    """
    chain = organization_chain(session, organization_id)
    if not chain:
        raise _not_found(organization_id)
    try:
        principal = _verify(session, stamps, headers, body, organization_id, chain[:2], now,
                            resolve_sub_organizations)
        AUTHENTICATED.set(organization_id)
    except Unauthenticated:
        # The chain may be remembered from before the organization was deleted.
        if session.get(Organization, organization_id) is None:
            raise _not_found(organization_id) from None
        raise
    return principal


def _verify(session: Session, stamps: Stamps, headers: Mapping[str, str], body: bytes,
            organization_id: str, candidates: list[str], now: datetime,
            resolve_sub_organizations: bool) -> Principal:
    lowered = {k.lower(): v for k, v in headers.items()}
    if resolve_sub_organizations:
        candidates = _resolve_downwards(session, stamps, lowered, candidates, organization_id)
    api_stamp = lowered.get(HEADER_API_KEY.lower())
    if api_stamp:
        return _authenticate_api_key(session, api_stamp, body, candidates, now)
    for name, verifier in stamps.verifiers.items():
        value = lowered.get(name.lower())
        if value:
            return verifier(session, value, body, candidates, now)
    if lowered.get(HEADER_WEBAUTHN.lower()):
        raise Unauthenticated("could not extract webauthn stamp")
    raise Unauthenticated(MISSING)


def _resolve_downwards(session: Session, stamps: Stamps, lowered: Mapping[str, str],
                       candidates: list[str], organization_id: str) -> list[str]:
    """The organizations to verify the stamp against, looking into sub-organizations.

    The organization itself and its parent keep precedence; only a credential held by
    neither is looked for in the sub-organizations of ``organization_id``.
    """
    for name, locator in stamps.locators.items():
        value = lowered.get(name.lower())
        if not value:
            continue
        column = locator.organization
        children = select(Organization.id).where(Organization.parent_id == organization_id)
        holders = list(session.scalars(select(column).distinct().where(
            locator.matches(value), or_(column.in_(candidates), column.in_(children)))))
        if locator.winner is not None:
            if any(h in candidates for h in holders):
                return candidates
            found = locator.winner(session, value, organization_id)
            return [found] if found else candidates
        if not holders or any(h in candidates for h in holders):
            return candidates
        if len(holders) > 1:
            raise Unauthenticated(f"more than one suborg associated with a {locator.noun}")
        return holders
    return candidates


def _login_key_winner(session: Session, header_value: str, organization_id: str) -> str | None:
    """The sub-organization a wallet/API-key login addressed to a parent lands in."""
    found = verified.winner(session, organization_id, "public_key",
                            parse_api_key_stamp(header_value).public_key, include_self=False)
    return found[0] if found else None


#: Where an ``X-Stamp`` credential (an API key) lives.
API_KEY_LOCATOR: Final = CredentialLocator(
    ApiKey.organization_id,
    lambda header_value: ApiKey.public_key == parse_api_key_stamp(header_value).public_key,
    "public key", _login_key_winner)


#: Built once: every stamped request looks its key up (plain rows: no ORM objects).
_API_KEYS_BY_PUBLIC_KEY: Final = select(
    ApiKey.id, ApiKey.user_id, ApiKey.organization_id, ApiKey.curve, ApiKey.credential_type,
    ApiKey.public_key, ApiKey.expires_at, ApiKey.session_profile_id,
).where(
    ApiKey.public_key == bindparam("public_key"),
    ApiKey.organization_id.in_(bindparam("candidates", expanding=True)))


@dataclass(frozen=True)
class _KeyRow:
    id: str
    user_id: str
    organization_id: str
    curve: str
    credential_type: str
    public_key: str
    expires_at: datetime | None
    session_profile_id: str | None


#: (public key, candidate organizations) -> the API keys found, per process; forgotten when
#: ``api_keys`` changes (deleted keys, users and organizations cascade into it).
KEYS: Final[AnnouncedCache[tuple[str, tuple[str, ...]], tuple[_KeyRow, ...]]] = AnnouncedCache(
    "principals", ("api_keys",))


def _keys(session: Session, public_key: str, candidates: list[str]) -> tuple[_KeyRow, ...]:
    cache_key = (public_key, tuple(candidates))
    known = KEYS.get(cache_key)
    if known is not None:
        return known
    token = KEYS.token()
    rows = tuple(_KeyRow(*row) for row in session.execute(
        _API_KEYS_BY_PUBLIC_KEY, {"public_key": public_key, "candidates": candidates}))
    if rows:
        KEYS.put(cache_key, rows, token)
    return rows


def _authenticate_api_key(
    session: Session, header_value: str, body: bytes, candidates: list[str], now: datetime
) -> Principal:
    stamp = parse_api_key_stamp(header_value)
    if stamp.scheme not in CURVE_OF_SCHEME:
        raise Unauthenticated(f"unsupported stamp scheme {stamp.scheme!r}")
    keys = list(_keys(session, stamp.public_key, candidates))
    if not keys:
        raise Unauthenticated("could not find public key in organization or its parent organization")
    # Prefer the request's own organization over its parent.
    keys = sorted(keys, key=lambda k: candidates.index(k.organization_id))
    key = next((k for k in keys if k.curve == CURVE_OF_SCHEME[stamp.scheme]), None)
    if key is None:
        raise Unauthenticated("could not verify api key signature")
    verify_stamp_signature(stamp.scheme, key.public_key, stamp.signature, body)
    if key.expires_at is not None and as_utc(key.expires_at) <= now:
        raise Unauthenticated("expired api key",
                              details=[{"@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
                                        "turnkeyErrorCode": "API_KEY_EXPIRED"}])
    return Principal(
        user_id=key.user_id,
        organization_id=key.organization_id,
        credential_id=key.id,
        credential_type=key.credential_type,
        public_key=stamp.public_key,
        scheme=stamp.scheme,
        signature=stamp.signature,
        session_profile_id=key.session_profile_id,
    )
