"""Verifying OIDC ID tokens (Google, Apple, Facebook, any configured issuer, and our own).

A token is accepted when:

* its issuer is one of ``WALLETD_OIDC_ISSUERS`` (``accounts.google.com`` matches
  ``https://accounts.google.com``), or walletd itself (tokens ``oauth2_authenticate`` issues
  for OAuth 2.0-only providers, signed by the verification-token service key);
* its signature verifies with the issuer's key named by ``kid``: the JWKS is found by OIDC
  discovery (``<issuer>/.well-known/openid-configuration`` → ``jwks_uri``) and cached for
  :data:`JWKS_TTL_S`; an unknown ``kid`` refetches it (key rotation), at most once every
  :data:`REFETCH_INTERVAL_S` per issuer, so a flood of made-up ``kid`` values cannot turn
  into a flood of requests to the issuer;
* ``exp`` is in the future, ``iss``/``sub``/``aud`` are present, and the algorithm is an
  asymmetric one the key's type supports (never ``none`` or HMAC);
* when a client key is given, ``nonce`` (or ``tknonce``) is the SHA-256 hex of that key's
  hex string (PROTOCOL.md §7.4), which binds the token to the key that will stamp;
* its ``aud`` is one of the client ids the organization registered
  (:func:`accepted_audiences`; the callers check it once they know the organization).

Egress to issuers follows the webhooks' destination rules (:mod:`infra.sessions.egress`).
PyJWT does all JOSE work; nothing here parses signatures by hand.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import jwt
from jwt.exceptions import (
    ExpiredSignatureError,
    ImmatureSignatureError,
    InvalidTokenError,
    MissingRequiredClaimError,
    PyJWKError,
)
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from infra.db.models.auth_proxy import AuthProxyConfig
from infra.db.models.identity import OauthProvider
from infra.db.models.oauth import Oauth2Credential
from infra.db.models.organizations import Organization
from infra.errors import InvalidRequest
from infra.sessions.egress import Egress, UpstreamUnavailable

#: How long a fetched JWKS is trusted before it is fetched again.
JWKS_TTL_S: Final = 3600.0
#: Shortest time between two fetches for one issuer (unknown ``kid`` refetches).
REFETCH_INTERVAL_S: Final = 30.0
#: Tokens longer than this are refused before any parsing.
MAX_TOKEN_LENGTH: Final = 16 * 1024
#: Clock skew tolerated on ``exp`` / ``nbf`` / ``iat``.
LEEWAY_S: Final = 30
#: Asymmetric JWS algorithms accepted (``none`` and HMAC never are).
ALGORITHMS: Final = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                               "ES256", "ES384", "ES512", "EdDSA"})


class InvalidOidcToken(InvalidRequest):
    """The OIDC token is not acceptable (400, ``INVALID_OIDC_TOKEN``)."""

    code = "invalid_oidc_token"
    turnkey_code = "INVALID_OIDC_TOKEN"


def nonce_for(public_key_hex: str) -> str:
    """The ``nonce`` that binds an ID token to a client key: SHA-256 hex of its hex string."""
    return hashlib.sha256(public_key_hex.encode("ascii", "replace")).hexdigest()


def token_hash(token: str) -> str:
    """SHA-256 hex of a token: what is stored about it (never the token itself)."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True)
class OidcIdentity:
    """A verified ID token.

    Attributes:
        issuer / subject: ``iss`` and ``sub``.
        audiences: ``aud`` (a string or list in the token) as a tuple.
        claims: Every claim (for email and the like; never logged).
        token_hash: :func:`token_hash` of the token (its single-use record key).
    """

    issuer: str
    subject: str
    audiences: tuple[str, ...]
    claims: dict[str, Any]
    token_hash: str

    def audience_in(self, accepted: Iterable[str]) -> str:
        """The first of the token's audiences that ``accepted`` holds.

        Raises:
            InvalidOidcToken: none is (the organization registered no such client id).
        """
        allowed = set(accepted)
        for aud in self.audiences:
            if aud in allowed:
                return aud
        raise InvalidOidcToken(
            "OIDC token audience (aud) is not a client id this organization registered: "
            "add it with create_oauth2_credential or bind the user with create_oauth_providers",
            field="oidcToken")


# --- accepted audiences -------------------------------------------------------------------

#: A source of the client ids an organization accepts: ``source(session, organization_ids)``
#: yields client ids registered in any of those organizations.
AudienceSource = Callable[[Session, Sequence[str]], Iterable[str]]


def _provider_audiences(session: Session, organization_ids: Sequence[str]) -> Iterable[str]:
    """Audiences of the OAuth providers of the organizations and of their sub-organizations
    (an app's users sign up into sub-organizations of the app's organization)."""
    children = select(Organization.id).where(Organization.parent_id.in_(list(organization_ids)))
    return session.scalars(select(OauthProvider.audience).distinct().where(or_(
        OauthProvider.organization_id.in_(list(organization_ids)),
        OauthProvider.organization_id.in_(children))))


def _credential_client_ids(session: Session, organization_ids: Sequence[str]) -> Iterable[str]:
    return session.scalars(select(Oauth2Credential.client_id).distinct().where(
        Oauth2Credential.organization_id.in_(list(organization_ids))))


def _proxy_client_ids(session: Session, organization_ids: Sequence[str]) -> Iterable[str]:
    """The ``walletKitSettings.oauthClientIds`` of the enabled auth proxy configurations."""
    rows = session.scalars(select(AuthProxyConfig.settings).where(
        AuthProxyConfig.organization_id.in_(list(organization_ids)),
        AuthProxyConfig.enabled.is_(True)))
    for settings in rows:
        ids = ((settings or {}).get("walletKitSettings") or {}).get("oauthClientIds") or {}
        yield from (v for v in ids.values() if isinstance(v, str) and v)


#: Where accepted audiences come from: OAuth providers, OAuth 2.0 credentials, auth proxies.
AUDIENCE_SOURCES: Final[tuple[AudienceSource, ...]] = (
    _provider_audiences, _credential_client_ids, _proxy_client_ids)


def accepted_audiences(session: Session, organization_ids: Sequence[str]) -> set[str]:
    """Every client id registered in ``organization_ids`` (an organization and its parent):
    its users' OAuth providers (its sub-organizations' too) and its OAuth 2.0 credentials."""
    out: set[str] = set()
    for source in AUDIENCE_SOURCES:
        out.update(source(session, organization_ids))
    return out


# --- issuers and their keys ---------------------------------------------------------------


def _bare(issuer: str) -> str:
    return issuer.rstrip("/").removeprefix("https://")


def issuer_forms(issuer: str) -> tuple[str, ...]:
    """The spellings of one issuer a stored identity may carry: Google writes ``iss`` as
    ``https://accounts.google.com`` or ``accounts.google.com``, so both name one user."""
    bare = _bare(issuer)
    return (issuer,) if "://" in bare else tuple(dict.fromkeys((issuer, bare, f"https://{bare}")))


@dataclass
class _IssuerKeys:
    keys: dict[str, jwt.PyJWK] = field(default_factory=dict)
    unnamed: list[jwt.PyJWK] = field(default_factory=list)
    fetched_at: float = -1e18
    tried_at: float = -1e18
    #: Held while this issuer's keys are fetched (other issuers are not held up).
    lock: threading.Lock = field(default_factory=threading.Lock)


class JwksCache:
    """Per-process cache of issuers' signing keys, refetched on rotation (bounded)."""

    def __init__(self, egress: Egress, clock: Callable[[], float] = time.monotonic) -> None:
        self._egress = egress
        self._clock = clock
        self._lock = threading.Lock()
        self._issuers: dict[str, _IssuerKeys] = {}
        self.fetches = 0

    def keys_for(self, issuer: str, kid: str | None) -> list[jwt.PyJWK]:
        """The keys that may have signed a token of ``issuer`` with ``kid``.

        Raises:
            InvalidOidcToken: the issuer publishes no key with this ``kid``.
            UpstreamUnavailable: discovery or the JWKS could not be fetched.
        """
        with self._lock:
            state = self._issuers.setdefault(issuer, _IssuerKeys())
        with state.lock:
            now = self._clock()
            stale = now - state.fetched_at > JWKS_TTL_S
            unknown = kid is not None and kid not in state.keys
            if (stale or unknown) and now - state.tried_at >= REFETCH_INTERVAL_S:
                state.tried_at = now
                try:
                    keys, unnamed = self._fetch(issuer)
                    state.keys, state.unnamed, state.fetched_at = keys, unnamed, now
                except UpstreamUnavailable:
                    if not (state.keys or state.unnamed):
                        raise  # nothing cached to fall back on
            if kid is None:
                found = list(state.keys.values()) + state.unnamed
            else:
                found = [state.keys[kid]] if kid in state.keys else list(state.unnamed)
        if not found:
            raise InvalidOidcToken(
                f"OIDC token is signed with a key ({kid!r}) its issuer does not publish",
                field="oidcToken")
        return found

    def _fetch(self, issuer: str) -> tuple[dict[str, jwt.PyJWK], list[jwt.PyJWK]]:
        self.fetches += 1
        where = issuer.rstrip("/") + "/.well-known/openid-configuration"
        answer = self._egress.request("GET", where, f"OIDC discovery of {issuer}")
        if answer.status != 200:  # some issuers (Facebook) serve it with a trailing slash only
            answer = self._egress.request("GET", where + "/", f"OIDC discovery of {issuer}")
        doc = answer.json(f"OIDC discovery of {issuer}") if answer.status == 200 else None
        if not isinstance(doc, dict) or not isinstance(doc.get("jwks_uri"), str):
            raise UpstreamUnavailable(f"OIDC discovery of {issuer} gave no jwks_uri "
                                      f"(HTTP {answer.status})")
        if _bare(str(doc.get("issuer", ""))) != _bare(issuer):
            raise UpstreamUnavailable(f"OIDC discovery of {issuer} names another issuer")
        answer = self._egress.request("GET", doc["jwks_uri"], f"JWKS of {issuer}")
        jwks = answer.json(f"JWKS of {issuer}") if answer.status == 200 else None
        if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
            raise UpstreamUnavailable(f"JWKS of {issuer} is not a key set (HTTP {answer.status})")
        keys: dict[str, jwt.PyJWK] = {}
        unnamed: list[jwt.PyJWK] = []
        for entry in jwks["keys"]:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK(entry)
            except (PyJWKError, InvalidTokenError, ValueError, TypeError, KeyError):
                continue  # a key type this process cannot use; others may still verify
            if isinstance(entry.get("kid"), str):
                keys[entry["kid"]] = key
            else:
                unnamed.append(key)
        return keys, unnamed


# --- the verifier -------------------------------------------------------------------------


@dataclass(frozen=True)
class SelfIssuer:
    """walletd as an issuer (``oauth2_authenticate``): its ``iss`` and verifying keys."""

    issuer: str
    keys: Callable[[], Sequence[Any]]


class OidcVerifier:
    """Verifies ID tokens of the configured issuers (one per process and configuration)."""

    def __init__(self, issuers: Sequence[str], egress: Egress) -> None:
        self.issuers = tuple(i.rstrip("/") for i in issuers)
        self.cache = JwksCache(egress)

    def _configured(self, iss: str) -> str | None:
        for issuer in self.issuers:
            if _bare(issuer) == _bare(iss):
                return issuer
        return None

    def verify(self, token: str, *, public_key_hex: str | None = None,
               self_issuer: SelfIssuer | None = None) -> OidcIdentity:
        """Verify ``token``; with ``public_key_hex``, also its nonce binding to that key.

        Raises:
            InvalidOidcToken: malformed, unknown issuer, bad signature or ``kid``, expired,
                missing claims, or a nonce that does not bind ``public_key_hex``.
            UpstreamUnavailable: the issuer's keys could not be fetched.
        """
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
            raise InvalidOidcToken("oidcToken must be an ID token (a JWT) of at most "
                                   f"{MAX_TOKEN_LENGTH} characters", field="oidcToken")
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except InvalidTokenError as ex:
            raise InvalidOidcToken(f"oidcToken is not a JWT: {ex}", field="oidcToken") from None
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            raise InvalidOidcToken(f"OIDC token algorithm {alg!r} is not accepted; it must be one "
                                   f"of {', '.join(sorted(ALGORITHMS))}", field="oidcToken")
        iss = unverified.get("iss")
        if not isinstance(iss, str) or not iss:
            raise InvalidOidcToken("OIDC token has no issuer (iss)", field="oidcToken")
        kid = header.get("kid") if isinstance(header.get("kid"), str) else None
        if self_issuer is not None and iss == self_issuer.issuer:
            candidates: Sequence[Any] = self_issuer.keys()
        else:
            issuer = self._configured(iss)
            if issuer is None:
                raise InvalidOidcToken(
                    f"OIDC issuer {iss!r} is not accepted; the operator lists accepted issuers "
                    "in WALLETD_OIDC_ISSUERS", field="oidcToken")
            candidates = self.cache.keys_for(issuer, kid)
        claims = self._decode(token, alg, iss, candidates)
        if public_key_hex is not None:
            self._check_nonce(claims, public_key_hex)
        aud = claims["aud"]
        audiences = (aud,) if isinstance(aud, str) else tuple(a for a in aud if isinstance(a, str))
        if not audiences or not isinstance(claims.get("sub"), str) or not claims["sub"]:
            raise InvalidOidcToken("OIDC token needs a subject (sub) and an audience (aud)",
                                   field="oidcToken")
        return OidcIdentity(iss, claims["sub"], audiences, claims, token_hash(token))

    @staticmethod
    def _decode(token: str, alg: str, iss: str, candidates: Sequence[Any]) -> dict[str, Any]:
        last: Exception | None = None
        for key in candidates:
            try:
                claims: dict[str, Any] = jwt.decode(
                    token, key, algorithms=[alg], issuer=iss, leeway=LEEWAY_S,
                    options={"require": ["exp", "iss", "sub", "aud"], "verify_aud": False})
                return claims
            except ExpiredSignatureError:
                raise InvalidOidcToken("OIDC token has expired; sign in again for a fresh one",
                                       field="oidcToken") from None
            except ImmatureSignatureError:
                raise InvalidOidcToken("OIDC token is not valid yet (nbf/iat in the future)",
                                       field="oidcToken") from None
            except MissingRequiredClaimError as ex:
                raise InvalidOidcToken(f"OIDC token lacks the {ex.claim!r} claim",
                                       field="oidcToken") from None
            except (InvalidTokenError, PyJWKError, ValueError, TypeError) as ex:
                last = ex
        raise InvalidOidcToken("OIDC token signature does not verify with its issuer's keys"
                               + (f" ({type(last).__name__})" if last else ""),
                               field="oidcToken")

    @staticmethod
    def _check_nonce(claims: dict[str, Any], public_key_hex: str) -> None:
        expected = {nonce_for(public_key_hex), nonce_for(public_key_hex.lower())}
        if claims.get("nonce") not in expected and claims.get("tknonce") not in expected:
            raise InvalidOidcToken(
                "OIDC token nonce does not bind the public key: the nonce must be the "
                "SHA-256 hex of the public key's hex string", field="oidcToken")


_VERIFIERS: dict[tuple[Any, ...], OidcVerifier] = {}
_VERIFIERS_LOCK = threading.Lock()


def verifier(settings: Any) -> OidcVerifier:
    """The process's verifier for ``settings`` (its JWKS cache lives as long as the process)."""
    key = (tuple(settings.oidc_issuers), tuple(settings.oidc_allow))
    with _VERIFIERS_LOCK:
        found = _VERIFIERS.get(key)
        if found is None:
            found = _VERIFIERS[key] = OidcVerifier(settings.oidc_issuers,
                                                   Egress.from_settings(settings))
        return found
