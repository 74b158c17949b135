"""Session JWTs and credential bundles as the official clients read them."""

from __future__ import annotations

import base64
import hashlib
import json

import jwt
import pytest
from bip_utils import Base58Decoder
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from infra.crypto import hpke
from infra.errors import InvalidRequest
from infra.sessions.tokens import credential_bundle, new_session_key, sign_session_jwt


def _b64(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def test_session_jwt_verifies_over_the_double_sha256_only() -> None:
    key = hpke.generate_private_key()
    claims = {"exp": 1748876837, "public_key": "03" + "ab" * 32,
              "session_type": "SESSION_TYPE_READ_WRITE", "user_id": "u", "organization_id": "o"}
    token = sign_session_jwt(key, claims)
    header, payload, signature = token.split(".")
    assert json.loads(_b64(header)) == {"alg": "ES256", "typ": "JWT"}
    assert list(json.loads(_b64(payload))) == list(claims)  # Turnkey's claim order
    raw = _b64(signature)
    assert len(raw) == 64
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    digest = hashlib.sha256(f"{header}.{payload}".encode()).digest()
    key.public_key().verify(der, digest, ec.ECDSA(hashes.SHA256()))
    with pytest.raises(InvalidSignature):  # a plain ES256 check must fail
        key.public_key().verify(der, f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(token, key.public_key(), algorithms=["ES256"], options={"verify_exp": False})


def test_credential_bundle_opens_with_the_embedded_key() -> None:
    embedded = hpke.generate_private_key()
    public_hex, private_bytes = new_session_key()
    bundle = credential_bundle(hpke.uncompressed(embedded.public_key()).hex(), private_bytes)
    raw = Base58Decoder.CheckDecode(bundle)
    assert len(raw) == 33 + 32 + 16 and raw[0] in (2, 3)
    assert hpke.open_sealed(raw[:33], raw[33:], embedded) == private_bytes
    derived = hpke.compressed(hpke.private_key_from_bytes(private_bytes).public_key()).hex()
    assert derived == public_hex


def test_credential_bundle_to_a_non_key_says_what_to_send() -> None:
    with pytest.raises(InvalidRequest, match="uncompressed"):
        credential_bundle("04zz", b"\x01" * 32)
