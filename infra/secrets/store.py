"""The secret store: import targets, sealed rows, metadata views and bounds.

A secret travels only as HPKE ciphertext (``TRANSPORT_ENCRYPTION_SUITE_ENCLAVE_ENCRYPT_V1``,
the suite ``@turnkey/crypto``'s ``encryptSecretToBundle`` / ``decryptSecretBundle`` speak):
in, sealed to a one-use target key returned by ``init_import_secrets``; out, sealed to the
requester's key. At rest it is an envelope pair like every other key (``secret:<id>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import Field
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from infra.clock import new_id
from infra.crypto import bundles, hpke
from infra.db.models.secrets import Secret
from infra.db.models.wallets import ImportTarget
from infra.errors import AlreadyExists, FailedPrecondition, InvalidRequest, NotFound
from infra.wallets.custody import Custody
from infra.wiremodel import WireModel

#: The one transport suite of the wire contract (``v1TransportEncryptionSuite``).
SUITE = "TRANSPORT_ENCRYPTION_SUITE_ENCLAVE_ENCRYPT_V1"
#: Import targets are ``import_targets`` rows of this kind, one per announced secret.
TARGET_KIND = "secret"
#: Secrets per request (init, import, export): bounded so one request is bounded work.
MAX_PER_REQUEST = 100
#: A secret's plaintext, in bytes: API tokens, passwords, certificates; not files.
MAX_SECRET_BYTES = 64 * 1024
MAX_PROPERTIES = 32
MAX_PROPERTY_KEY = 64
MAX_PROPERTY_VALUE = 256


class KeyValue(WireModel):
    """``v1KeyValue``: a policy-visible property bound to a secret at import."""

    key: str = Field(min_length=1, max_length=MAX_PROPERTY_KEY)
    value: str = Field(max_length=MAX_PROPERTY_VALUE)


def check_suite(suite: str, field: str) -> None:
    """Refuse any transport suite but the one walletd speaks."""
    if suite != SUITE:
        raise InvalidRequest(f"encryptionSuite must be {SUITE}", field=field)


def check_count(count: int, field: str) -> None:
    """Refuse an empty or oversized batch before anything is stored."""
    if not 1 <= count <= MAX_PER_REQUEST:
        raise InvalidRequest(f"{field} must name between 1 and {MAX_PER_REQUEST} secrets",
                             field=field)


def check_properties(properties: Sequence[KeyValue], field: str) -> list[dict[str, str]]:
    """The properties as stored: at most ``MAX_PROPERTIES``, keys unique."""
    if len(properties) > MAX_PROPERTIES:
        raise InvalidRequest(f"at most {MAX_PROPERTIES} staticProperties per secret", field=field)
    keys = [p.key for p in properties]
    if len(set(keys)) != len(keys):
        raise InvalidRequest("staticProperties keys must be unique", field=field)
    return [{"key": p.key, "value": p.value} for p in properties]


def target_public_hex(public_key: str, field: str) -> str:
    """A target key as stored: uncompressed P-256 hex (a 400 naming ``field`` otherwise)."""
    try:
        return hpke.uncompressed(hpke.load_public_key(public_key)).hex()
    except InvalidRequest:
        raise InvalidRequest("not a P-256 public key (hex, compressed or uncompressed)",
                             field=field) from None


def new_targets(session: Session, custody: Custody, *, organization_id: str, user_id: str,
                count: int, now: datetime) -> list[str]:
    """Replace the user's secret import targets with ``count`` fresh ones.

    Returns one signed target message per secret (``ServerTargetMsgV1``: the signed bundle
    whose data names the organization, the user and the target key).
    """
    session.execute(delete(ImportTarget).where(
        ImportTarget.organization_id == organization_id, ImportTarget.user_id == user_id,
        ImportTarget.kind == TARGET_KIND))
    signer = custody.signer()
    messages = []
    for _ in range(count):
        key = hpke.generate_private_key()
        public = hpke.uncompressed(key.public_key())
        target = ImportTarget(id=new_id(), organization_id=organization_id, user_id=user_id,
                              kind=TARGET_KIND, public_key=public.hex(), created_at=now)
        custody.seal_row(target, hpke.private_key_to_bytes(key))
        session.add(target)
        messages.append(bundles.build_import_bundle(
            signer, organization_id=organization_id, user_id=user_id, target_public_key=public))
    session.flush()
    return messages


def targets_of(session: Session, organization_id: str, user_id: str,
               public_keys: Sequence[str]) -> dict[str, ImportTarget]:
    """The user's pending targets by uncompressed public key; a 400 naming a missing one."""
    rows = session.scalars(select(ImportTarget).where(
        ImportTarget.organization_id == organization_id, ImportTarget.user_id == user_id,
        ImportTarget.kind == TARGET_KIND, ImportTarget.public_key.in_(public_keys))).all()
    found = {row.public_key: row for row in rows}
    for index, public in enumerate(public_keys):
        if public not in found:
            raise FailedPrecondition(
                f"secrets[{index}].targetPublicKey names no pending import target of yours; "
                "call init_import_secrets and encrypt each secret to one of its "
                "enclaveTargetMessages (each target takes one secret)")
    return found


def open_payload(custody: Custody, target: ImportTarget, payload: str, field: str) -> bytes:
    """Decrypt one ``secretPayload`` with its target key; bounded in size."""
    plaintext = bundles.open_encrypted_bundle(payload, hpke.private_key_from_bytes(
        custody.open_row(target)))
    if len(plaintext) > MAX_SECRET_BYTES:
        raise InvalidRequest(f"a secret is at most {MAX_SECRET_BYTES} bytes", field=field)
    return plaintext


def check_names_free(session: Session, organization_id: str, names: Sequence[str | None]) -> None:
    """Names are unique within the organization (and within the request)."""
    given = [n for n in names if n]
    if len(set(given)) != len(given):
        raise InvalidRequest("secret names must be unique within the request", field="secrets")
    if not given:
        return
    taken = sorted(str(name) for name in session.scalars(select(Secret.name).where(
        Secret.organization_id == organization_id, Secret.name.in_(given))))
    if taken:
        raise AlreadyExists(f"a secret with this name already exists: {taken[0]}")


def create_secret(session: Session, custody: Custody, *, organization_id: str,
                  name: str | None, properties: list[dict[str, str]], value: bytes,
                  now: datetime) -> Secret:
    """Store one secret, sealed."""
    row = Secret(id=new_id(), organization_id=organization_id, name=name or None,
                 static_properties=properties, created_at=now, updated_at=now)
    custody.seal_row(row, value)
    session.add(row)
    return row


def secrets_in_org(session: Session, organization_id: str, ids: Sequence[str]) -> list[Secret]:
    """The rows of ``ids`` in request order; a 404 naming any that is not the organization's."""
    rows = {s.id: s for s in session.scalars(select(Secret).where(
        Secret.organization_id == organization_id, Secret.id.in_(set(ids))))}
    missing = [i for i in ids if i not in rows]
    if missing:
        raise NotFound(f"secret not found in organization: {missing[0]}")
    return [rows[i] for i in ids]


def render_metadata(row: Secret) -> dict[str, Any]:
    """``v1SecretMetadata`` (never the value)."""
    body: dict[str, Any] = {
        "secretId": row.id,
        "staticProperties": list(row.static_properties or []),
        "createdAtUnixMs": str(int(row.created_at.timestamp() * 1000)),
    }
    if row.name:
        body["name"] = row.name
    return body


def policy_variable(row: Secret) -> dict[str, Any]:
    """One element of the ``secrets`` condition variable: ``{id, name, properties}``."""
    return {"id": row.id, "name": row.name or "",
            "properties": {p["key"]: p["value"] for p in row.static_properties or []}}
