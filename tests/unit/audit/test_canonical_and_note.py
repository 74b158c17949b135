"""Canonical JSON and C2SP signed notes (pure)."""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from infra.audit import note
from infra.audit.canonical import canonical, digest


def test_canonical_json_sorts_by_utf16_and_keeps_utf8() -> None:
    # UTF-16 order: "a" < "b" < U+1F600 (surrogates D83D DE00) < U+FFFF
    assert canonical({"\uffff": 1, "b": 1, "a": [True, None, "é"], "\U0001f600": 0}) == \
        '{"a":[true,null,"é"],"b":1,"\U0001f600":0,"\uffff":1}'.encode()
    assert canonical({"x": 2.0, "y": 0.5}) == b'{"x":2,"y":0.5}'
    assert digest(None) is None
    assert digest({"a": 1}) == digest({"a": 1.0})


def test_signed_checkpoint_round_trip_and_tampering() -> None:
    key = Ed25519PrivateKey.generate()
    public = note.raw_public(key.public_key())
    for name in ("walletd-audit/0011223344556677", "example.com/log"):
        verifier = note.Verifier.parse(note.verifier_key(name, public))
        body = note.Checkpoint(name, 42, bytes(range(32))).text()
        signed = note.sign(body, name, key)
        assert signed.startswith(body + "\n\u2014 " + name + " ")
        opened = note.open_checkpoint(signed, verifier)
        assert (opened.origin, opened.size, opened.root) == (name, 42, bytes(range(32)))
        with pytest.raises(note.NoteError):
            note.open_checkpoint(signed.replace("\n42\n", "\n43\n"), verifier)
        other = Ed25519PrivateKey.generate()
        with pytest.raises(note.NoteError):
            note.open_checkpoint(note.sign(body, name, other), verifier)


def test_verifier_keys_with_plus_signs_in_base64_parse() -> None:
    for _ in range(64):
        public = note.raw_public(Ed25519PrivateKey.generate().public_key())
        text = note.verifier_key("walletd-audit/x", public)
        assert note.Verifier.parse(text).public == public
        if "+" in text.split("+", 2)[2]:
            return
    raise AssertionError("no key with '+' in its base64 in 64 tries")


def test_key_hash_is_the_signed_note_one() -> None:
    public = bytes(32)
    text = note.verifier_key("n", public)
    name, hash_hex, encoded = text.split("+", 2)
    assert name == "n" and base64.b64decode(encoded) == b"\x01" + public
    assert bytes.fromhex(hash_hex) == note.key_hash("n", public)
    assert hashlib.sha256(b"n\n\x01" + public).digest()[:4] == note.key_hash("n", public)
