"""Webhook signatures, checked with ``cryptography`` (the signer uses PyNaCl)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidSignature as CryptoInvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from infra.webhooks import signing
from infra.webhooks.signing import (
    InvalidWebhookSignature,
    WebhookKeyInvalid,
    WebhookKeyRing,
    WebhookSigningKey,
)

NOW = 1_760_000_000_000
DAY = 86_400_000
BODY = b'{"id":"act-1","status":"ACTIVITY_STATUS_COMPLETED"}'
EVENT = "0f9c2b5e-3e55-5b0f-8a4b-0c1d2e3f4a5b"

# RFC 8032 §7.1 TEST 1: the seed, public key and signature of the empty message.
RFC8032_SEED = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
RFC8032_PUBLIC = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
RFC8032_SIG = bytes.fromhex(
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
)


def _headers(key: WebhookSigningKey, *, ts: int = NOW, body: bytes = BODY) -> dict[str, str]:
    return signing.sign_delivery(
        key,
        body=body,
        event_id=EVENT,
        event_type="ACTIVITY_UPDATES",
        organization_id="org-1",
        timestamp_ms=ts,
    )


def _crypto_verify(public: bytes, headers: dict[str, str], body: bytes) -> None:
    """Verify the way a receiver following PROTOCOL.md §9 would, without walletd code."""
    message = (
        f"v1.ed25519.{headers['X-Turnkey-Signature-Key-Id']}."
        f"{headers['X-Turnkey-Timestamp']}.{headers['X-Turnkey-Event-Id']}."
    ).encode() + body
    Ed25519PublicKey.from_public_bytes(public).verify(bytes.fromhex(headers["X-Turnkey-Signature"]), message)


def test_key_matches_rfc8032_vector_under_cryptography() -> None:
    key = WebhookSigningKey("rfc8032", RFC8032_SEED)
    assert key.public_key == RFC8032_PUBLIC
    assert key.sign(b"") == RFC8032_SIG
    Ed25519PublicKey.from_public_bytes(key.public_key).verify(RFC8032_SIG, b"")


def test_sign_delivery_sends_exactly_the_nine_protocol_headers() -> None:
    key = WebhookSigningKey.generate()
    headers = _headers(key)
    assert headers == {
        "X-Turnkey-Organization-Id": "org-1",
        "X-Turnkey-Event-Type": "ACTIVITY_UPDATES",
        "X-Turnkey-Timestamp": str(NOW),
        "X-Turnkey-Webhook-Version": "1",
        "X-Turnkey-Event-Id": EVENT,
        "X-Turnkey-Signature-Key-Id": key.key_id,
        "X-Turnkey-Signature-Algorithm": "ed25519",
        "X-Turnkey-Signature-Version": "v1",
        "X-Turnkey-Signature": headers["X-Turnkey-Signature"],
    }
    assert len(bytes.fromhex(headers["X-Turnkey-Signature"])) == 64
    assert headers["X-Turnkey-Signature"] == headers["X-Turnkey-Signature"].lower()


def test_signature_verifies_with_an_independent_ed25519_implementation() -> None:
    key = WebhookSigningKey.generate()
    headers = _headers(key)
    _crypto_verify(key.public_key, headers, BODY)


def test_signature_does_not_verify_for_a_changed_body_under_cryptography() -> None:
    key = WebhookSigningKey.generate()
    headers = _headers(key)
    with pytest.raises(CryptoInvalidSignature):
        _crypto_verify(key.public_key, headers, BODY + b" ")


def test_signed_message_is_prefix_then_raw_body() -> None:
    assert signing.signed_message("k1", 12, "e-1", b"{}") == b"v1.ed25519.k1.12.e-1.{}"


def test_retries_get_fresh_timestamp_and_signature_but_same_event_id() -> None:
    key = WebhookSigningKey.generate()
    first, second = _headers(key, ts=NOW), _headers(key, ts=NOW + 5000)
    assert first["X-Turnkey-Event-Id"] == second["X-Turnkey-Event-Id"]
    assert first["X-Turnkey-Signature"] != second["X-Turnkey-Signature"]
    _crypto_verify(key.public_key, second, BODY)


@pytest.mark.parametrize("bad", ["has.dot", "", "sp ace", "x" * 129])
def test_signed_message_refuses_ids_that_would_break_the_dot_format(bad: str) -> None:
    with pytest.raises(WebhookKeyInvalid):
        signing.signed_message("k1", 1, bad, b"")


def test_verify_delivery_accepts_own_signature_and_returns_event_id() -> None:
    key = WebhookSigningKey.generate()
    lowered = {k.lower(): v for k, v in _headers(key).items()}
    assert signing.verify_delivery(lowered, BODY, {key.key_id: key.public_key}, now_ms=NOW) == EVENT


@pytest.mark.parametrize(
    ("change", "value"),
    [
        ("X-Turnkey-Signature-Version", "v2"),
        ("X-Turnkey-Signature-Algorithm", "hmac"),
        ("X-Turnkey-Timestamp", "soon"),
        ("X-Turnkey-Timestamp", str(NOW - 301_000)),
        ("X-Turnkey-Signature-Key-Id", "unknown"),
        ("X-Turnkey-Event-Id", "other-event"),
        ("X-Turnkey-Signature", "00" * 64),
        ("X-Turnkey-Signature", "zz"),
        ("X-Turnkey-Event-Id", ""),
    ],
)
def test_verify_delivery_rejects_tampered_headers(change: str, value: str) -> None:
    key = WebhookSigningKey.generate()
    headers = _headers(key)
    headers[change] = value
    with pytest.raises(InvalidWebhookSignature):
        signing.verify_delivery(headers, BODY, {key.key_id: key.public_key}, now_ms=NOW)


def test_rotation_publishes_new_key_before_it_signs_and_keeps_old_key_after() -> None:
    old = WebhookSigningKey.generate(activates_at_ms=0)
    ring = WebhookKeyRing((old,))
    new = WebhookSigningKey.generate()
    rotated = ring.rotate(new, now_ms=NOW, overlap_ms=DAY)

    assert rotated.signing_key(NOW).key_id == old.key_id
    assert {k.key_id for k in rotated.published(NOW)} == {old.key_id, new.key_id}
    assert rotated.signing_key(NOW + DAY).key_id == new.key_id
    assert {k.key_id for k in rotated.published(NOW + DAY)} == {old.key_id, new.key_id}
    assert [k.key_id for k in rotated.published(NOW + 2 * DAY)] == [new.key_id]


def test_emergency_rotation_switches_and_unpublishes_at_once() -> None:
    old = WebhookSigningKey.generate(activates_at_ms=0)
    new = WebhookSigningKey.generate()
    rotated = WebhookKeyRing((old,)).rotate(new, now_ms=NOW, overlap_ms=0)
    assert rotated.signing_key(NOW).key_id == new.key_id
    assert [k.key_id for k in rotated.published(NOW)] == [new.key_id]


def test_rotating_twice_drops_retired_keys() -> None:
    ring = WebhookKeyRing((WebhookSigningKey.generate(key_id="a"),))
    ring = ring.rotate(WebhookSigningKey.generate(key_id="b"), now_ms=NOW, overlap_ms=DAY)
    ring = ring.rotate(WebhookSigningKey.generate(key_id="c"), now_ms=NOW + 3 * DAY)
    assert [k.key_id for k in ring.keys] == ["b", "c"]


def test_ring_without_active_key_refuses_to_sign() -> None:
    ring = WebhookKeyRing((WebhookSigningKey.generate(activates_at_ms=NOW + 1),))
    with pytest.raises(WebhookKeyInvalid):
        ring.signing_key(NOW)


def test_ring_refuses_duplicate_key_ids() -> None:
    with pytest.raises(WebhookKeyInvalid):
        WebhookKeyRing((WebhookSigningKey.generate(key_id="a"), WebhookSigningKey.generate(key_id="a")))


def test_key_repr_does_not_show_the_seed() -> None:
    key = WebhookSigningKey("k", RFC8032_SEED)
    assert RFC8032_SEED.hex() not in repr(key)


def test_save_then_load_round_trips_and_is_owner_only(tmp_path: Path) -> None:
    ring = WebhookKeyRing((WebhookSigningKey.generate(key_id="a", activates_at_ms=5),))
    ring = ring.rotate(WebhookSigningKey.generate(key_id="b"), now_ms=NOW)
    path = tmp_path / "keys" / "webhooks.json"
    signing.save_keyring(ring, path)
    assert signing.load_keyring(path) == ring
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_load_or_create_creates_once_and_then_reads(tmp_path: Path) -> None:
    path = tmp_path / "webhooks.json"
    first = signing.load_or_create_keyring(path, now_ms=NOW)
    second = signing.load_or_create_keyring(path, now_ms=NOW + 1)
    assert first == second
    assert first.signing_key(NOW).key_id.startswith("whk_")


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[]",
        json.dumps({"keys": "x"}),
        json.dumps({"keys": [{"kid": "a"}]}),
        json.dumps({"keys": [{"kid": "a", "seed": "00"}]}),
        json.dumps({"keys": [{"kid": "a.b", "seed": "00" * 32}]}),
    ],
)
def test_load_keyring_rejects_malformed_files(tmp_path: Path, content: str) -> None:
    path = tmp_path / "k.json"
    path.write_text(content)
    with pytest.raises(WebhookKeyInvalid):
        signing.load_keyring(path)


def test_load_keyring_reports_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WebhookKeyInvalid):
        signing.load_keyring(tmp_path / "absent.json")
