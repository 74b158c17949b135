"""X-Stamp parsing and signature checks, against published vectors (PROTOCOL.md appendix A)."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from infra.auth.stamps import parse_api_key_stamp
from infra.crypto.stamp import (
    SCHEME_ED25519,
    SCHEME_P256,
    SCHEME_SECP256K1,
    normalize_public_key,
    parse_der_signature,
    verify_stamp_signature,
)
from infra.errors import InvalidSignature, Unauthenticated
from tests.support.keys import make_key

# A.1: the docs' X-Stamp example (stamps.mdx), P-256.
A1_BODY = b'{"payload": "hello from TKHQ"}'
A1_KEY = "0327a50032e6f0631d5605b6ada32b779074f346e81b68e12801640f1c9ee03dae"
A1_SIG = ("304402203623defd618eb3e219970496407ebe92447317dad75e412bd4a6267c3b5e22230220245b740848"
          "a72d08b60d6c84f339737b63db3bcbadb3bd0dcb1bfb865715d8b5")

# A.2: a real Turnkey vote from the rust-sdk fixture; its S is above n/2 (high-S).
A2_BODY = (b'{"type":"ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION","timestampMs":"1754952030221",'
           b'"organizationId":"35e5c619-ba95-417c-bb48-b16f1543aea0",'
           b'"parameters":{"deleteWithoutExport":true}}')
A2_KEY = "020404a8505f87edc73f7a8f7a6dca61eb1b0b3617720c7161fab7970ce31c4e12"
A2_SIG = ("3046022100d8188e89ef1330881fc2d951f2284467a462840acafc80115ae871847f6a1f93022100a07fca"
          "cd0614e2ea729fc7f5e7378a108a8267a18fa1551845487acabcd97403")
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def test_docs_stamp_vector_verifies() -> None:
    verify_stamp_signature(SCHEME_P256, A1_KEY, A1_SIG, A1_BODY)


def test_docs_stamp_vector_fails_on_a_changed_body() -> None:
    with pytest.raises(InvalidSignature):
        verify_stamp_signature(SCHEME_P256, A1_KEY, A1_SIG, A1_BODY + b" ")


def test_real_high_s_vote_is_accepted() -> None:
    _, s = decode_dss_signature(bytes.fromhex(A2_SIG))
    assert s > P256_N // 2
    verify_stamp_signature(SCHEME_P256, A2_KEY, A2_SIG, A2_BODY)


def test_fingerprint_of_the_real_activity_matches_turnkey() -> None:
    from infra.submit_body import fingerprint

    assert fingerprint(A2_BODY) == (
        "sha256:143e777f907453d71c5a3213059d641f54b28737276c4bc6b405ef06831876cb")


def _non_minimal_der(sig_hex: str) -> str:
    r, s = decode_dss_signature(bytes.fromhex(sig_hex))
    rb, sb = b"\x00\x00" + r.to_bytes(32, "big"), b"\x00" + s.to_bytes(32, "big")
    inner = b"\x02" + bytes([len(rb)]) + rb + b"\x02" + bytes([len(sb)]) + sb
    return (b"\x30\x81" + bytes([len(inner)]) + inner).hex()  # long-form length too


def test_lenient_der_with_padded_integers_and_long_length_verifies() -> None:
    lenient = _non_minimal_der(A1_SIG)
    assert parse_der_signature(bytes.fromhex(lenient)) == decode_dss_signature(bytes.fromhex(A1_SIG))
    verify_stamp_signature(SCHEME_P256, A1_KEY, lenient, A1_BODY)


@pytest.mark.parametrize("scheme, curve", [(SCHEME_P256, "API_KEY_CURVE_P256"),
                                           (SCHEME_SECP256K1, "API_KEY_CURVE_SECP256K1"),
                                           (SCHEME_ED25519, "API_KEY_CURVE_ED25519")])
def test_each_scheme_verifies_its_own_signatures_only(scheme: str, curve: str) -> None:
    key, other = make_key(curve), make_key(curve)
    body = b'{"organizationId": "x"}'
    verify_stamp_signature(scheme, key.public_key, key.sign(body), body)
    with pytest.raises(InvalidSignature):
        verify_stamp_signature(scheme, other.public_key, key.sign(body), body)


@pytest.mark.parametrize("garbage", ["", "zz", "3000", "30060201010201", "00" * 64])
def test_garbage_signatures_raise_invalid_signature(garbage: str) -> None:
    with pytest.raises(InvalidSignature):
        verify_stamp_signature(SCHEME_P256, A1_KEY, garbage, A1_BODY)


def test_secp256k1_high_s_is_accepted() -> None:
    key = make_key("API_KEY_CURVE_SECP256K1")
    body = b"{}"
    r, s = decode_dss_signature(bytes.fromhex(key.sign(body)))
    n = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
    high = n - s if s < n // 2 else s
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    verify_stamp_signature(SCHEME_SECP256K1, key.public_key, encode_dss_signature(r, high).hex(), body)


@pytest.mark.parametrize("pad", [True, False])
def test_stamp_header_parses_with_or_without_padding(pad: bool) -> None:
    raw = json.dumps({"publicKey": A1_KEY.upper(), "scheme": SCHEME_P256, "signature": A1_SIG})
    value = base64.urlsafe_b64encode(raw.encode()).decode()
    stamp = parse_api_key_stamp(value if pad else value.rstrip("="))
    assert stamp.public_key == A1_KEY and stamp.signature == A1_SIG


@pytest.mark.parametrize("value", ["", "!!!", base64.urlsafe_b64encode(b"[]").decode(),
                                   base64.urlsafe_b64encode(b'{"publicKey": 1}').decode()])
def test_malformed_stamp_headers_are_unauthenticated(value: str) -> None:
    with pytest.raises(Unauthenticated):
        parse_api_key_stamp(value)


def test_uncompressed_keys_are_stored_compressed() -> None:
    key = make_key()
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    point = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), bytes.fromhex(key.public_key))
    uncompressed = point.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint).hex()
    assert normalize_public_key("API_KEY_CURVE_P256", uncompressed) == key.public_key
    with pytest.raises(ValueError):
        normalize_public_key("API_KEY_CURVE_P256", "04" + "00" * 64)
