"""Creating and removing API-key credentials (shared by several activity types)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field, field_validator
from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.crypto.stamp import normalize_public_key
from infra.db.models.organizations import ApiKey
from infra.db.uniqueness import add_unique
from infra.errors import AlreadyExists, InvalidRequest
from infra.wiremodel import WireModel

ApiKeyCurve = Literal["API_KEY_CURVE_P256", "API_KEY_CURVE_SECP256K1", "API_KEY_CURVE_ED25519"]

#: Longest accepted ``expirationSeconds``: 100 years (a later expiry overflows dates).
MAX_EXPIRATION_SECONDS = 100 * 365 * 24 * 3600
#: Column sizes of ``api_keys.name`` and ``api_keys.public_key``.
NAME_MAX_LENGTH = 256
PUBLIC_KEY_MAX_LENGTH = 160

CREDENTIAL_TYPE_OF_CURVE = {
    "API_KEY_CURVE_P256": "CREDENTIAL_TYPE_API_KEY_P256",
    "API_KEY_CURVE_SECP256K1": "CREDENTIAL_TYPE_API_KEY_SECP256K1",
    "API_KEY_CURVE_ED25519": "CREDENTIAL_TYPE_API_KEY_ED25519",
}


class ApiKeyParams(WireModel):
    """``v1ApiKeyParamsV2``."""

    api_key_name: str = Field(max_length=NAME_MAX_LENGTH)
    public_key: str = Field(max_length=PUBLIC_KEY_MAX_LENGTH)
    curve_type: ApiKeyCurve = "API_KEY_CURVE_P256"
    expiration_seconds: str | None = None

    @field_validator("expiration_seconds", mode="before")
    @classmethod
    def _seconds(cls, value: object) -> object:
        if value is None or value == "":
            return None
        text = str(value) if isinstance(value, int | str) and not isinstance(value, bool) else ""
        digits = text.lstrip("0")
        if (not text.isascii() or not text.isdigit() or not digits
                or len(digits) > len(str(MAX_EXPIRATION_SECONDS))
                or int(digits) > MAX_EXPIRATION_SECONDS):
            raise ValueError("expirationSeconds must be a whole number of seconds from 1 to "
                             f"{MAX_EXPIRATION_SECONDS} (100 years)")
        return digits


def canonical_public_key(params: ApiKeyParams, field: str) -> str:
    """The key in the form it is stored and stamped with, or a 400 saying what to send."""
    try:
        return normalize_public_key(params.curve_type, params.public_key)
    except ValueError as ex:
        expected = ("32-byte Ed25519 public key hex" if params.curve_type == "API_KEY_CURVE_ED25519"
                    else "compressed (33-byte, 02/03…) SEC1 public key hex")
        raise InvalidRequest(
            f"publicKey is not a valid {params.curve_type} key: send a {expected}",
            field=field) from ex


def add_api_key(session: Session, organization_id: str, user_id: str, params: ApiKeyParams,
                now: datetime, field: str = "apiKeys") -> ApiKey:
    """Create an API key for ``user_id`` (duplicate key in the org is a conflict)."""
    public_key = canonical_public_key(params, field)

    expires_at = (now + timedelta(seconds=int(params.expiration_seconds))
                  if params.expiration_seconds else None)
    key = ApiKey(
        organization_id=organization_id,
        user_id=user_id,
        name=params.api_key_name,
        public_key=public_key,
        curve=params.curve_type,
        credential_type=CREDENTIAL_TYPE_OF_CURVE[params.curve_type],
        expiration_seconds=params.expiration_seconds,
        expires_at=expires_at,
    )
    add_unique(
        session, key,
        select(ApiKey.id).where(ApiKey.organization_id == organization_id,
                                ApiKey.public_key == public_key),
        AlreadyExists("an API key with this public key already exists in the organization",
                      details=[{"@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
                                "turnkeyErrorCode": "CREDENTIAL_CONFLICT"}]))
    return key
