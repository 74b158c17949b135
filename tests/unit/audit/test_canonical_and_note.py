"""Canonical JSON and C2SP signed notes (pure)."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from infra.audit import note
from infra.audit.canonical import _normalise, canonical, digest


def test_canonical_json_sorts_by_utf16_and_keeps_utf8() -> None:
    # UTF-16 order: "a" < "b" < U+1F600 (surrogates D83D DE00) < U+FFFF
    assert canonical({"\uffff": 1, "b": 1, "a": [True, None, "é"], "\U0001f600": 0}) == \
        '{"a":[true,null,"é"],"b":1,"\U0001f600":0,"\uffff":1}'.encode()
    assert canonical({"x": 2.0, "y": 0.5}) == b'{"x":2,"y":0.5}'
    assert digest(None) is None
    assert digest({"a": 1}) == digest({"a": 1.0})


_KEYS = st.one_of(st.text(max_size=6), st.sampled_from(["a", "B", "_", "\uffff", "\U0001f600",
                                                          "\ue000", "é"]))
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False,
                                                                 allow_infinity=False),
              st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                            st.dictionaries(_KEYS, inner, max_size=5)),
    max_leaves=20)


@given(_VALUES)
def test_the_encoders_own_sort_is_used_only_where_it_gives_the_canonical_form(
        value: Any) -> None:
    slow = json.dumps(_normalise(value), ensure_ascii=False, separators=(",", ":")).encode()
    assert canonical(value) == slow


def test_non_ascii_names_and_integral_floats_still_take_the_normalised_form() -> None:
    # Code-point order would put U+FFFF before U+1F600; UTF-16 order puts it after.
    assert canonical({"\U0001f600": 1, "\uffff": 2}) == '{"\U0001f600":1,"\uffff":2}'.encode()
    assert canonical({"a": [1.0, {"b": 3.0}]}) == b'{"a":[1,{"b":3}]}'
    assert canonical({"b": 1, "a": {"d": None, "c": "\u00e9"}}) == '{"a":{"c":"é","d":null},"b":1}'.encode()


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
