"""``X-Stamp-Attested`` (PROTOCOL.md §2.5): a token-bound client key stamps the body.

The header is base64url JSON (plain JSON accepted too) of ``{publicKeyAttestation, scheme,
publicKey, signature}``: ``publicKeyAttestation`` is a verification token
(``STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN``) or an OIDC ID token
(``STAMP_ATTESTED_SCHEME_P256_OIDC``) that binds ``publicKey``; ``signature`` is the DER hex
ECDSA-P256-SHA256 signature over the raw body.

Each scheme is one :class:`AttestedScheme` (``infra.sessions.attested`` for verification
tokens, ``infra.sessions.attested_oidc`` for OIDC); ``infra.bootstrap`` builds
:class:`AttestedStamps` over them. The scheme verifies the token, its binding and the body
signature, and finds the user; ``holders`` names the organizations that may hold the attested
identity, so a login addressed to a parent finds the user's sub-organization (its
``locator``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final

from sqlalchemy import ColumnElement, Select, false
from sqlalchemy.orm import Session

from infra import safejson
from infra.auth.principal import CredentialLocator, Principal
from infra.auth.stamps import b64url_decode
from infra.db.models.organizations import Organization
from infra.errors import Unauthenticated

HEADER_ATTESTED: Final = "X-Stamp-Attested"
MALFORMED: Final = ("malformed X-Stamp-Attested stamp: send base64url JSON with "
                    "publicKeyAttestation, scheme, publicKey and signature")


@dataclass(frozen=True)
class AttestedStamp:
    """The decoded header."""

    attestation: str
    scheme: str
    public_key: str
    signature: str


@dataclass(frozen=True)
class AttestedScheme:
    """One ``STAMP_ATTESTED_SCHEME_*``.

    Attributes:
        verify: ``(session, stamp, body, candidate_org_ids, now) -> Principal``; raises
            ``Unauthenticated`` for anything wrong.
        holders: ``stamp -> select(organization ids)`` that hold the attested identity,
            read from the token without verifying it (only to choose where to verify).
    """

    verify: Callable[[Session, AttestedStamp, bytes, list[str], datetime], Principal]
    holders: Callable[[AttestedStamp], Select[Any]]


def parse_attested_stamp(header_value: str) -> AttestedStamp:
    """Decode the header (base64url JSON, or plain JSON).

    Raises:
        Unauthenticated: not the four string fields.
    """
    text = header_value.strip()
    try:
        data = safejson.loads(text.encode() if text.startswith("{") else b64url_decode(text))
    except (safejson.MalformedJson, Unauthenticated):
        raise Unauthenticated(MALFORMED) from None
    if not isinstance(data, dict):
        raise Unauthenticated(MALFORMED)
    fields = [data.get(k) for k in ("publicKeyAttestation", "scheme", "publicKey", "signature")]
    if not all(isinstance(f, str) and f for f in fields):
        raise Unauthenticated(MALFORMED)
    attestation, scheme, public_key, signature = (str(f) for f in fields)
    return AttestedStamp(attestation, scheme, public_key.lower(), signature.lower())


def body_type(body: bytes) -> str:
    """The ``type`` of a submit body (empty for queries or malformed bodies)."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    return str(data.get("type", "")) if isinstance(data, dict) else ""


class AttestedStamps:
    """``X-Stamp-Attested``: the verifier and credential locator over ``schemes`` (by name,
    one entry per scheme; wired in ``infra.bootstrap``)."""

    def __init__(self, schemes: Mapping[str, AttestedScheme]) -> None:
        self.schemes: Mapping[str, AttestedScheme] = MappingProxyType(dict(schemes))
        self.locator = CredentialLocator(Organization.id, self._holders, "attested identity")

    def _scheme(self, stamp: AttestedStamp) -> AttestedScheme:
        scheme = self.schemes.get(stamp.scheme)
        if scheme is None:
            raise Unauthenticated(
                f"unsupported X-Stamp-Attested scheme {stamp.scheme!r}; use one "
                f"of {', '.join(sorted(self.schemes)) or 'none configured'}")
        return scheme

    def verify(self, session: Session, header_value: str, body: bytes, candidates: list[str],
               now: datetime) -> Principal:
        """The ``X-Stamp-Attested`` stamp verifier."""
        stamp = parse_attested_stamp(header_value)
        return self._scheme(stamp).verify(session, stamp, body, candidates, now)

    def _holders(self, header_value: str) -> ColumnElement[bool]:
        try:
            stamp = parse_attested_stamp(header_value)
            return Organization.id.in_(self._scheme(stamp).holders(stamp).scalar_subquery())
        except Unauthenticated:
            return false()
