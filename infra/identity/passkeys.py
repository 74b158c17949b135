"""Passkeys stored on users: registration, the ``v1Authenticator`` view, X-Stamp-Webauthn.

Registration (``create_users``, ``create_sub_organization`` root users,
``create_authenticators``, ``recover_user``) verifies the attestation with
:func:`infra.auth.webauthn.verify_registration` and stores the COSE key. The stamp verifier
(:func:`verify_webauthn_stamp`, wired in ``infra.bootstrap``) finds the authenticator by credential id
in the request's organization or its parent (PROTOCOL.md §1.4, §2.3) and verifies the
assertion over the raw body.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from infra.auth import webauthn
from infra.auth.principal import CredentialLocator, Principal
from infra.clock import wire_timestamp
from infra.db.models.identity import Authenticator
from infra.db.models.organizations import Organization, OrganizationFeature
from infra.db.uniqueness import add_unique
from infra.errors import AlreadyExists, InvalidRequest, Unauthenticated
from infra.validation.features import FeatureName, webauthn_origins
from infra.validation.names import required_name

CREDENTIAL_TYPE = "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR"
#: ``Principal.scheme`` (and so ``v1Vote.scheme``) of a passkey-stamped request.
SCHEME = "SIGNATURE_SCHEME_TK_WEBAUTHN"
#: AAGUIDs of common platform authenticators -> ``v1Authenticator.model`` (facts, FIDO MDS).
MODELS = {
    "AAAAAAAAAAAAAAAAAAAAAA": "Passkey",
    "-_wwBxVOTsyMC24CBVfXvQ": "iCloud Keychain",
    "6u-_aN3_Sh-z56CmuZuL4g": "Google Password Manager",
    "CJ2fQSBbSXGltzWswKgG6g": "Windows Hello",
}


def allowed_origins(session: Session, organization_id: str) -> list[str] | None:
    """The WebAuthn origins in force: the organization's own, else its parent's, else all."""
    org = session.get(Organization, organization_id)
    for org_id in (organization_id, org.parent_id if org else None):
        if not org_id:
            continue
        feature = session.get(OrganizationFeature, (org_id, FeatureName.WEBAUTHN_ORIGINS.value))
        if feature is not None:
            return webauthn_origins(feature.value)
    return None


def verify_authenticator(
    session: Session, organization_id: str, params: Mapping[str, Any], field: str
) -> webauthn.RegisteredCredential:
    """Check a ``v1AuthenticatorParamsV2`` for ``organization_id`` without storing anything.

    Raises:
        InvalidRequest: missing name, or the attestation does not verify (with why).
    """
    required_name(params, "authenticatorName", field)
    try:
        return webauthn.verify_registration(
            params, allowed_origins=allowed_origins(session, organization_id)
        )
    except InvalidRequest as ex:
        raise type(ex)(f"{field}: {ex.message}", details=ex.details) from ex


def add_authenticator(
    session: Session,
    organization_id: str,
    user_id: str,
    params: dict[str, Any],
    now: datetime,
    field: str = "authenticators[0]",
) -> Authenticator:
    """Verify a ``v1AuthenticatorParamsV2`` and store it on ``user_id``.

    Raises:
        InvalidRequest: missing name, or the attestation does not verify (with why).
        AlreadyExists: the credential is already registered in the organization.
    """
    credential = verify_authenticator(session, organization_id, params, field)
    name = str(params["authenticatorName"])

    row = Authenticator(
        organization_id=organization_id,
        user_id=user_id,
        name=name,
        credential_id=credential.credential_id,
        public_key=credential.public_key,
        algorithm=credential.algorithm,
        aaguid=credential.aaguid,
        attestation_type=credential.attestation_type,
        model=MODELS.get(credential.aaguid, "Passkey"),
        transports=list(credential.transports),
        sign_count=credential.sign_count,
        created_at=now,
        updated_at=now,
    )
    add_unique(
        session,
        row,
        select(Authenticator.id).where(
            Authenticator.organization_id == organization_id,
            Authenticator.credential_id == credential.credential_id,
        ),
        AlreadyExists(
            "an authenticator with this credential ID already exists in the organization",
            details=[
                {
                    "@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
                    "turnkeyErrorCode": "CREDENTIAL_CONFLICT",
                }
            ],
        ),
    )
    return row


def render_authenticator(row: Authenticator) -> dict[str, Any]:
    """``v1Authenticator``."""
    return {
        "transports": list(row.transports or []),
        "attestationType": row.attestation_type,
        "aaguid": row.aaguid,
        "credentialId": row.credential_id,
        "model": row.model,
        "credential": {"publicKey": row.public_key, "type": CREDENTIAL_TYPE},
        "authenticatorId": row.id,
        "authenticatorName": row.name,
        "createdAt": wire_timestamp(row.created_at),
        "updatedAt": wire_timestamp(row.updated_at),
    }


#: Built once: every rendered user runs it.
_AUTHENTICATORS_OF: Final = (
    select(Authenticator)
    .where(Authenticator.user_id.in_(bindparam("ids", expanding=True)))
    .order_by(Authenticator.created_at, Authenticator.id)
)


def authenticators_section(session: Session, user_ids: Sequence[str]) -> dict[str, dict[str, list[Any]]]:
    """``USER_SECTIONS`` entry: each user's ``authenticators``."""
    out: dict[str, dict[str, list[Any]]] = {u: {"authenticators": []} for u in user_ids}
    if user_ids:
        for row in session.scalars(_AUTHENTICATORS_OF, {"ids": list(user_ids)}):
            out[row.user_id]["authenticators"].append(render_authenticator(row))
    return out


def vote_public_key(cose_key: str) -> str:
    """The passkey's key as recorded on a vote: the COSE key, or its digest when too long.

    Vote rows keep at most 160 characters; RS256 COSE keys are longer.
    """
    if len(cose_key) <= 160:
        return cose_key
    return "sha256:" + hashlib.sha256(cose_key.encode()).hexdigest()


def verify_webauthn_stamp(
    session: Session, header_value: str, body: bytes, candidates: list[str], now: datetime
) -> Principal:
    """``EXTRA_VERIFIERS`` entry for ``X-Stamp-Webauthn`` (PROTOCOL.md §2.3).

    Raises:
        Unauthenticated: malformed stamp, unknown credential, or a signature that does not
            verify (messages as PROTOCOL.md lists them).
    """
    stamp = webauthn.parse_stamp(header_value)
    rows = session.scalars(
        select(Authenticator).where(
            Authenticator.credential_id == stamp.credential_id,
            Authenticator.organization_id.in_(candidates),
        )
    ).all()
    if not rows:
        raise Unauthenticated(webauthn.MSG_CREDENTIAL_NOT_FOUND)
    row = sorted(rows, key=lambda r: candidates.index(r.organization_id))[0]
    webauthn.verify_assertion(
        stamp, body, row.public_key, allowed_origins=allowed_origins(session, row.organization_id)
    )
    return Principal(
        user_id=row.user_id,
        organization_id=row.organization_id,
        credential_id=row.id,
        credential_type=CREDENTIAL_TYPE,
        public_key=vote_public_key(row.public_key),
        scheme=SCHEME,
        signature=stamp.signature.hex(),
    )


#: Where an ``X-Stamp-Webauthn`` credential (an authenticator) lives.
LOCATOR = CredentialLocator(
    Authenticator.organization_id,
    lambda header_value: Authenticator.credential_id
    == webauthn.parse_stamp(header_value).credential_id,
    "credential ID",
)
