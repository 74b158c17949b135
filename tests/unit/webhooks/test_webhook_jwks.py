"""The JWKS document, read back the way a receiver would (cryptography + base64)."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from infra.webhooks import jwks, signing
from infra.webhooks.signing import InvalidWebhookSignature, WebhookKeyRing, WebhookSigningKey

NOW = 1_760_000_000_000


def test_jwks_entry_has_exactly_the_protocol_members() -> None:
    key = WebhookSigningKey.generate(key_id="k1")
    doc = jwks.jwks_document(WebhookKeyRing((key,)), now_ms=NOW)
    assert doc == {
        "keys": [
            {
                "kid": "k1",
                "kty": "OKP",
                "crv": "Ed25519",
                "alg": "EdDSA",
                "use": "sig",
                "x": doc["keys"][0]["x"],
                "turnkey_signature_algorithm": "ed25519",
                "turnkey_signature_version": "v1",
            }
        ]
    }
    x = doc["keys"][0]["x"]
    assert "=" not in x
    assert base64.urlsafe_b64decode(x + "=" * (-len(x) % 4)) == key.public_key


def test_cache_control_is_the_protocol_value() -> None:
    assert jwks.CACHE_CONTROL == "public, max-age=86400, s-maxage=86400, stale-if-error=604800"
    assert jwks.JWKS_PATH == "/public/v1/discovery/webhooks/jwks"


def test_published_key_verifies_a_delivery_under_cryptography() -> None:
    key = WebhookSigningKey.generate()
    doc = jwks.jwks_document(WebhookKeyRing((key,)), now_ms=NOW)
    body = b'{"id":"a"}'
    headers = signing.sign_delivery(
        key,
        body=body,
        event_id="e1",
        event_type="ACTIVITY_UPDATES",
        organization_id="o",
        timestamp_ms=NOW,
    )
    entry = next(k for k in doc["keys"] if k["kid"] == headers["X-Turnkey-Signature-Key-Id"])
    public = base64.urlsafe_b64decode(entry["x"] + "=" * (-len(entry["x"]) % 4))
    message = f"v1.ed25519.{entry['kid']}.{NOW}.e1.".encode() + body
    Ed25519PublicKey.from_public_bytes(public).verify(bytes.fromhex(headers["X-Turnkey-Signature"]), message)


def test_document_lists_upcoming_key_first_during_rotation() -> None:
    ring = WebhookKeyRing((WebhookSigningKey.generate(key_id="old"),))
    ring = ring.rotate(WebhookSigningKey.generate(key_id="new"), now_ms=NOW)
    assert [k["kid"] for k in jwks.jwks_document(ring, now_ms=NOW)["keys"]] == ["new", "old"]


def test_public_keys_round_trips_and_skips_foreign_entries() -> None:
    key = WebhookSigningKey.generate(key_id="k1")
    doc = jwks.jwks_document(WebhookKeyRing((key,)), now_ms=NOW)
    foreign = [
        {"kid": "rsa", "kty": "RSA"},
        "junk",
        {"kid": "v2", "kty": "OKP", "crv": "Ed25519", "x": "AA", "turnkey_signature_version": "v2"},
    ]
    assert jwks.public_keys({"keys": [*doc["keys"], *foreign]}) == {"k1": key.public_key}


@pytest.mark.parametrize(
    "doc",
    [
        {},
        {"keys": {}},
        {"keys": [{"kid": "a", "kty": "OKP", "crv": "Ed25519", "x": "AAAA"}]},
        {"keys": [{"kid": "a", "kty": "OKP", "crv": "Ed25519"}]},
    ],
)
def test_public_keys_rejects_malformed_documents(doc: dict[str, object]) -> None:
    with pytest.raises(InvalidWebhookSignature):
        jwks.public_keys(doc)


def test_jwk_refuses_a_wrong_length_key() -> None:
    with pytest.raises(ValueError):
        jwks.jwk("k", b"\x00" * 31)
