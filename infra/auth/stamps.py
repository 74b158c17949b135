"""Reading the stamp headers of a request (X-Stamp; X-Stamp-Webauthn is added by webauthn.py).

A stamp only says *who claims* to have signed; :mod:`infra.auth.principal` looks the
credential up and verifies the signature against the raw body.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Final

from infra import safejson
from infra.errors import Unauthenticated

HEADER_API_KEY: Final = "X-Stamp"
HEADER_WEBAUTHN: Final = "X-Stamp-Webauthn"

MISSING = "cannot authenticate public API activity request without a stamp (X-Stamp/X-Stamp-Webauthn header)"
MALFORMED = "malformed activity stamp"


@dataclass(frozen=True)
class ApiKeyStamp:
    """The decoded X-Stamp header."""

    public_key: str
    scheme: str
    signature: str


def b64url_decode(value: str) -> bytes:
    """Decode base64url with or without padding (standard base64 accepted too)."""
    value = value.strip()
    padded = value + "=" * (-len(value) % 4)
    try:
        return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError) as ex:
        raise Unauthenticated(MALFORMED) from ex


def parse_api_key_stamp(header_value: str) -> ApiKeyStamp:
    """Decode an ``X-Stamp`` header value.

    Raises:
        Unauthenticated: The header is not base64url JSON with the three string fields
            (strings without NUL characters).
    """
    try:
        data = safejson.loads(b64url_decode(header_value))
    except safejson.MalformedJson as ex:  # not JSON, too deep, NUL characters, huge numbers
        raise Unauthenticated(MALFORMED) from ex
    if not isinstance(data, dict):
        raise Unauthenticated(MALFORMED)
    fields = [data.get(k) for k in ("publicKey", "scheme", "signature")]
    if not all(isinstance(f, str) and f for f in fields):
        raise Unauthenticated(MALFORMED)
    public_key, scheme, signature = (str(f) for f in fields)
    return ApiKeyStamp(public_key=public_key.lower(), scheme=scheme, signature=signature.lower())
