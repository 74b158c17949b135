"""Passkey registration and X-Stamp-Webauthn verification (infra.auth.webauthn)."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import cbor2
import pytest

from infra.auth import webauthn
from infra.auth.webauthn import (
    MSG_BAD_SIGNATURE,
    MSG_MALFORMED_STAMP,
    MSG_NO_STAMP,
    InvalidAttestation,
    parse_stamp,
    verify_assertion,
    verify_registration,
    verify_stamp,
)
from infra.errors import InvalidRequest, InvalidSignature, Unauthenticated
from tests.support.soft_authenticator import FLAG_UV, SoftAuthenticator, b64url

BODY = b'{"type":"ACTIVITY_TYPE_CREATE_POLICY_V3","organizationId":"o","parameters":{}}'


@pytest.fixture(scope="module", params=["ES256", "RS256"])
def authenticator(request: pytest.FixtureRequest) -> SoftAuthenticator:
    return SoftAuthenticator(algorithm=request.param)


def _tamper(params: dict[str, Any], **attestation: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(params))
    out["attestation"].update(attestation)
    return out


# --------------------------------------------------------------------------- challenge


def test_body_challenge_is_ascii_hex_of_sha256_as_in_protocol_example() -> None:
    challenge = webauthn.body_challenge(b'{"a":1}')
    assert challenge == b"015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
    assert b64url(challenge) == (
        "MDE1YWJkN2Y1Y2M1N2EyZGQ5NGI3NTkwZjA0YWQ4MDg0MjczOTA1ZWUzM2VjNWNlYmVhZTYyMjc2YTk3Zjg2Mg"
    )


def test_decode_b64_accepts_both_alphabets_with_and_without_padding() -> None:
    raw = bytes(range(250, 256)) + b"\xfb\xff"
    for text in (
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    ):
        assert webauthn.decode_b64(text) == raw


def test_decode_b64_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        webauthn.decode_b64("a")


# --------------------------------------------------------------------------- registration


@pytest.mark.parametrize("fmt", ["none", "packed", "packed-x5c"])
def test_registration_returns_credential_id_cose_key_and_format(
    authenticator: SoftAuthenticator, fmt: Any
) -> None:
    params = authenticator.registration("laptop", fmt=fmt)

    credential = verify_registration(params)

    assert credential.credential_id == authenticator.credential_id_b64
    assert credential.public_key == authenticator.cose_public_key_b64()
    assert credential.algorithm == authenticator.cose_alg
    assert credential.aaguid == b64url(bytes(16))
    assert credential.attestation_type == ("none" if fmt == "none" else "packed")
    assert credential.transports == ("AUTHENTICATOR_TRANSPORT_INTERNAL",)


def test_registration_es256_cose_key_starts_like_turnkeys_echo() -> None:
    credential = verify_registration(SoftAuthenticator().registration())
    # Canonical CBOR of an EC2/ES256 key: a5 01 02 03 26 20 01 21 58 20 ...
    assert credential.public_key.startswith("pQECAyYgASFYI")


def test_registration_accepts_standard_base64_fields() -> None:
    soft = SoftAuthenticator()
    params = soft.registration()
    att = params["attestation"]
    for name in ("clientDataJson", "attestationObject", "credentialId"):
        raw = webauthn.decode_b64(att[name])
        att[name] = base64.b64encode(raw).decode()
    assert verify_registration(params).credential_id == soft.credential_id_b64


def test_registration_rejects_a_challenge_that_was_not_signed() -> None:
    params = SoftAuthenticator().registration(challenge=b"a" * 32)
    params["challenge"] = b64url(b"b" * 32)
    with pytest.raises(InvalidAttestation, match="challenge does not match"):
        verify_registration(params)


def test_registration_rejects_assertion_client_data() -> None:
    soft = SoftAuthenticator()
    params = soft.registration()
    client_data = soft.registration_client_data(b"x" * 32, type_="webauthn.get")
    params["challenge"] = b64url(b"x" * 32)
    params["attestation"]["clientDataJson"] = b64url(client_data)
    with pytest.raises(InvalidAttestation, match=r"webauthn\.create"):
        verify_registration(params)


def test_registration_rejects_a_packed_signature_over_other_client_data() -> None:
    soft = SoftAuthenticator()
    challenge = b"c" * 32
    signed_for = soft.registration_client_data(b"d" * 32)
    sent = soft.registration_client_data(challenge)
    params = soft.registration(challenge=challenge)
    params["attestation"]["clientDataJson"] = b64url(sent)
    params["attestation"]["attestationObject"] = b64url(
        soft.attestation_object(signed_for, fmt="packed")
    )
    with pytest.raises(InvalidAttestation, match="packed attestation does not verify"):
        verify_registration(params)


def test_registration_rejects_mismatched_credential_id() -> None:
    params = _tamper(SoftAuthenticator().registration(), credentialId=b64url(b"other"))
    with pytest.raises(InvalidAttestation, match="credentialId does not match"):
        verify_registration(params)


def test_registration_rejects_none_format_with_a_statement() -> None:
    soft = SoftAuthenticator()
    params = soft.registration()
    obj = cbor2.loads(webauthn.decode_b64(params["attestation"]["attestationObject"]))
    obj["attStmt"] = {"alg": -7, "sig": b"\x00" * 8}
    params["attestation"]["attestationObject"] = b64url(cbor2.dumps(obj))
    with pytest.raises(InvalidAttestation, match="empty statement"):
        verify_registration(params)


def test_registration_rejects_other_attestation_formats() -> None:
    soft = SoftAuthenticator()
    params = soft.registration()
    obj = cbor2.loads(webauthn.decode_b64(params["attestation"]["attestationObject"]))
    obj["fmt"] = "fido-u2f"
    params["attestation"]["attestationObject"] = b64url(cbor2.dumps(obj))
    with pytest.raises(InvalidAttestation, match="unsupported attestation format"):
        verify_registration(params)


def test_registration_rejects_non_es256_rs256_keys() -> None:
    soft = SoftAuthenticator()
    params = soft.registration()
    obj = cbor2.loads(webauthn.decode_b64(params["attestation"]["attestationObject"]))
    cose = soft.cose_public_key()
    key = cbor2.loads(cose)
    key[3] = -35  # ES384 claimed on a P-256 key
    obj["authData"] = obj["authData"].replace(cose, cbor2.dumps(key, canonical=True))
    params["attestation"]["attestationObject"] = b64url(cbor2.dumps(obj))
    with pytest.raises(InvalidAttestation, match="unsupported credential algorithm"):
        verify_registration(params)


@pytest.mark.parametrize(
    ("attestation", "message"),
    [
        ({"clientDataJson": ""}, "attestation.clientDataJson is required"),
        ({"attestationObject": "!!!"}, "attestation.attestationObject is not base64url"),
        ({"attestationObject": b64url(b"\xff\x00")}, "not a valid CBOR attestation"),
        ({"clientDataJson": b64url(b"not json")}, "clientDataJson is not JSON"),
        ({"transports": ["AUTHENTICATOR_TRANSPORT_CARRIER_PIGEON"]}, "unknown authenticator"),
    ],
)
def test_registration_rejects_malformed_fields(attestation: dict[str, Any], message: str) -> None:
    params = _tamper(SoftAuthenticator().registration(), **attestation)
    with pytest.raises(InvalidAttestation, match=message) as info:
        verify_registration(params)
    assert isinstance(info.value, InvalidRequest)
    assert info.value.to_wire()["code"] == 3


def test_registration_rejects_missing_attestation() -> None:
    with pytest.raises(InvalidAttestation, match="attestation is required"):
        verify_registration({"authenticatorName": "x", "challenge": "abc"})


def test_registration_checks_origin_only_when_origins_are_configured() -> None:
    soft = SoftAuthenticator(origin="https://app.example.com")
    verify_registration(soft.registration(), allowed_origins=["https://app.example.com"])
    verify_registration(soft.registration(), allowed_origins=["*"])
    with pytest.raises(InvalidAttestation, match="not an allowed WebAuthn origin"):
        verify_registration(soft.registration(), allowed_origins=["https://other.example"])


# --------------------------------------------------------------------------- assertion


def test_assertion_verifies_json_stamp_over_raw_body(authenticator: SoftAuthenticator) -> None:
    key = verify_registration(authenticator.registration()).public_key
    result = verify_stamp(authenticator.stamp(BODY), BODY, key)
    assert result.credential_id == authenticator.credential_id_b64
    assert result.sign_count == authenticator.sign_count
    assert result.user_verified is True
    assert result.origin == authenticator.origin


def test_assertion_accepts_base64_encoded_stamp(authenticator: SoftAuthenticator) -> None:
    key = authenticator.cose_public_key()  # raw COSE bytes work as well as base64url
    verify_stamp(authenticator.stamp(BODY, encoding="base64"), BODY, key)


def test_assertion_without_user_verification_is_accepted_but_reported() -> None:
    soft = SoftAuthenticator()
    result = verify_stamp(soft.stamp(BODY, flags=0x01), BODY, soft.cose_public_key_b64())
    assert result.user_verified is False


@pytest.mark.parametrize(
    "kwargs",
    [
        {"type_": "webauthn.create"},
        {"challenge": hashlib.sha256(BODY).digest()},  # raw digest, not its ASCII hex
        {"challenge": hashlib.sha256(BODY).hexdigest().upper().encode()},
        {"flags": FLAG_UV},  # user not present
    ],
)
def test_assertion_rejects_wrong_client_data_or_flags(kwargs: dict[str, Any]) -> None:
    soft = SoftAuthenticator()
    with pytest.raises(InvalidSignature) as info:
        verify_stamp(soft.stamp(BODY, **kwargs), BODY, soft.cose_public_key_b64())
    assert info.value.message == MSG_BAD_SIGNATURE
    assert info.value.to_wire()["code"] == 16


def test_assertion_rejects_a_different_body(authenticator: SoftAuthenticator) -> None:
    stamp = authenticator.stamp(BODY)
    with pytest.raises(InvalidSignature, match=MSG_BAD_SIGNATURE):
        verify_stamp(stamp, BODY + b" ", authenticator.cose_public_key_b64())


def test_assertion_rejects_another_credentials_key(authenticator: SoftAuthenticator) -> None:
    other = SoftAuthenticator(algorithm=authenticator.algorithm)
    with pytest.raises(InvalidSignature, match=MSG_BAD_SIGNATURE):
        verify_stamp(authenticator.stamp(BODY), BODY, other.cose_public_key_b64())


def test_assertion_rejects_tampered_signature() -> None:
    soft = SoftAuthenticator()
    fields = soft.assertion(BODY)
    sig = bytearray(webauthn.decode_b64(fields["signature"]))
    sig[-1] ^= 1
    fields["signature"] = b64url(bytes(sig))
    with pytest.raises(InvalidSignature, match=MSG_BAD_SIGNATURE):
        verify_stamp(json.dumps(fields), BODY, soft.cose_public_key_b64())


def test_assertion_rejects_unusable_stored_key() -> None:
    soft = SoftAuthenticator()
    with pytest.raises(InvalidSignature, match=MSG_BAD_SIGNATURE):
        verify_stamp(soft.stamp(BODY), BODY, b64url(b"\xa0"))


def test_assertion_enforces_configured_origins() -> None:
    soft = SoftAuthenticator(origin="https://wallet.example")
    key = soft.cose_public_key_b64()
    verify_stamp(soft.stamp(BODY), BODY, key, allowed_origins=["https://wallet.example/"])
    with pytest.raises(InvalidSignature, match=MSG_BAD_SIGNATURE):
        verify_stamp(soft.stamp(BODY), BODY, key, allowed_origins=["https://evil.example"])


def test_assertion_rejects_short_authenticator_data() -> None:
    soft = SoftAuthenticator()
    fields = soft.assertion(BODY)
    fields["authenticatorData"] = b64url(b"\x00" * 10)
    stamp = parse_stamp(json.dumps(fields))
    with pytest.raises(InvalidSignature, match=MSG_BAD_SIGNATURE):
        verify_assertion(stamp, BODY, soft.cose_public_key_b64())


# --------------------------------------------------------------------------- parse_stamp


def test_parse_stamp_normalises_credential_id_to_base64url() -> None:
    soft = SoftAuthenticator(credential_id=b"\xfb\xff" * 8)
    fields = soft.assertion(BODY)
    fields["credentialId"] = base64.b64encode(soft.credential_id).decode()
    assert parse_stamp(json.dumps(fields)).credential_id == soft.credential_id_b64


@pytest.mark.parametrize("value", [None, "", "   "])
def test_parse_stamp_without_header_names_the_missing_stamp(value: str | None) -> None:
    with pytest.raises(Unauthenticated) as info:
        parse_stamp(value)
    assert info.value.message == MSG_NO_STAMP


@pytest.mark.parametrize(
    "value",
    [
        "{not json",
        "[]",
        json.dumps({"credentialId": "abc"}),
        json.dumps(
            {"credentialId": "", "authenticatorData": "a", "clientDataJson": "a", "signature": "a"}
        ),
        "%%%%",
        b64url(b"[1,2]"),
    ],
)
def test_parse_stamp_rejects_malformed_values(value: str) -> None:
    with pytest.raises(Unauthenticated) as info:
        parse_stamp(value)
    assert info.value.message == MSG_MALFORMED_STAMP
    assert not isinstance(info.value, InvalidSignature)
