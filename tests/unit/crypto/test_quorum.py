"""The QOS P-256 envelope of ``encryptOauth2ClientSecret`` (layout, round trip, tampering).

Interop with ``@turnkey/crypto`` itself is in tests/e2e/test_oauth.py.
"""

from __future__ import annotations

import struct

import pytest

from infra.crypto import hpke, quorum


def test_round_trip_and_layout() -> None:
    receiver = hpke.generate_private_key()
    envelope = quorum.encrypt(receiver.public_key(), b"client-secret")
    raw = bytes.fromhex(envelope)
    assert raw[12] == 0x04  # the ephemeral key, uncompressed, after the 12-byte nonce
    (length,) = struct.unpack("<I", raw[77:81])
    assert length == len(b"client-secret") + 16 == len(raw) - 81
    assert quorum.decrypt(receiver, envelope) == b"client-secret"


@pytest.mark.parametrize("damage", ["other key", "flip ciphertext", "flip nonce", "length",
                                    "truncated", "not hex", "bad point"])
def test_damaged_envelopes_do_not_open(damage: str) -> None:
    receiver = hpke.generate_private_key()
    raw = bytearray(bytes.fromhex(quorum.encrypt(receiver.public_key(), b"s3cret")))
    key = receiver
    if damage == "other key":
        key = hpke.generate_private_key()
    elif damage == "flip ciphertext":
        raw[-1] ^= 1
    elif damage == "flip nonce":
        raw[0] ^= 1
    elif damage == "length":
        raw[77] += 1
    elif damage == "truncated":
        del raw[40:]
    elif damage == "bad point":
        raw[13:45] = b"\xff" * 32
    text = "zz" + raw.hex() if damage == "not hex" else raw.hex()
    with pytest.raises(quorum.QuorumDecryptError):
        quorum.decrypt(key, text)
