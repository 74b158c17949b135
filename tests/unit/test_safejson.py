"""Untrusted JSON: every hostile input is a MalformedJson (so a 4xx), never a crash."""

from __future__ import annotations

import subprocess
import sys

import pytest

from infra import safejson
from infra.auth.stamps import parse_api_key_stamp
from infra.errors import InvalidRequest, Unauthenticated
from infra.submit_body import parse_envelope, parse_json_object


@pytest.mark.parametrize("raw, needle", [
    (b"[" * 100_000, "deeper"),
    (b'{"a": ' + b"1" * 5000 + b"}", "not valid JSON"),
    (b'{"a": ' + b"[" * 65 + b"]" * 65 + b"}", "deeper"),
    (b'{"a": "x\\u0000"}', "NUL"),
    (b'{"a\\u0000": 1}', "NUL"),
    (b'{"a": ["\\udc00"]}', "surrogate"),
    (b"\xff", "not valid JSON"),
])
def test_hostile_json_is_malformed(raw: bytes, needle: str) -> None:
    with pytest.raises(safejson.MalformedJson, match=needle):
        safejson.loads(raw)


def test_the_offending_field_is_named() -> None:
    with pytest.raises(safejson.MalformedJson) as info:
        safejson.loads(b'{"parameters": {"apiKeys": [{"apiKeyName": "a\\u0000"}]}}')
    assert info.value.field == "parameters.apiKeys[0].apiKeyName"


def test_ordinary_json_passes() -> None:
    data = b'{"a": [[[1]]], "e": "\\ud83d\\ude00", "n": 12345678901234567890}'
    assert safejson.loads(data) == {"a": [[[1]]], "e": "\U0001f600", "n": 12345678901234567890}


def test_body_and_stamp_parsers_answer_4xx() -> None:
    with pytest.raises(InvalidRequest):
        parse_json_object(b"[" * 100_000)
    with pytest.raises(Unauthenticated):
        import base64

        parse_api_key_stamp(base64.urlsafe_b64encode(b"[" * 5000).decode())


def test_timestamp_is_stored_without_zero_padding() -> None:
    env = parse_envelope({"type": "T", "organizationId": "o", "timestampMs": "0" * 40 + "17",
                          "parameters": {}})
    assert env.timestamp_ms == "17"
    for bad in ("9" * 20, "\u0661\u0662", "-1", "1.5"):
        with pytest.raises(InvalidRequest):
            parse_envelope({"type": "T", "organizationId": "o", "timestampMs": bad, "parameters": {}})


def test_importing_the_services_keeps_the_default_recursion_limit() -> None:
    # py_ecc (via eth_account) raises it to 100000, where deep input segfaults the process.
    code = ("import sys; import consensus.actors, workers.actors, ingress.app, walletd.cli, "
            "infra.chains, infra.crypto.signing; print(sys.getrecursionlimit())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) <= 1000
