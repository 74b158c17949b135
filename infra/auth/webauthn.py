"""Passkeys: registering a WebAuthn credential and verifying ``X-Stamp-Webauthn``.

Two halves, both pure (no database, no HTTP):

* :func:`verify_registration` checks a ``v1AuthenticatorParamsV2`` (the attestation a client
  sends in ``create_users``, ``create_sub_organization``, ``create_authenticators`` or
  ``recover_user``) and returns the credential to store: id, COSE public key (base64url, as
  Turnkey echoes it), AAGUID and attestation format. ``none`` and ``packed`` (self or x5c)
  attestations are accepted; the attestation statement itself is checked by the ``webauthn``
  library (py_webauthn).
* :func:`parse_stamp` and :func:`verify_assertion` check an ``X-Stamp-Webauthn`` header against
  the raw request body (PROTOCOL.md §2.1-2.3): challenge = ASCII lowercase hex SHA-256 of the
  body, ``type == "webauthn.get"``, signature over ``authenticatorData ‖ SHA-256(clientDataJSON)``
  with the stored COSE key, ES256 or RS256 only.

The relying-party id is chosen by each client application, so neither half pins it (as
Turnkey does not, PROTOCOL.md §2.3 step 5). Origins are only checked when the caller passes
the organization's ``FEATURE_NAME_WEBAUTHN_ORIGINS`` list.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature as CryptoInvalidSignature
from webauthn.helpers import (
    decode_credential_public_key,
    decoded_public_key_to_cryptography,
    parse_attestation_object,
    parse_authenticator_data,
    verify_signature,
)
from webauthn.helpers.cose import COSEAlgorithmIdentifier
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import AttestationFormat
from webauthn.registration.formats.packed import verify_packed

from infra import safejson
from infra.errors import InvalidRequest, InvalidSignature, Unauthenticated

# Error messages clients and docs know (PROTOCOL.md §1.4, §2.3). Do not reword.
MSG_NO_STAMP = (
    "cannot authenticate public API activity request without a stamp "
    "(X-Stamp/X-Stamp-Webauthn header)"
)
MSG_MALFORMED_STAMP = "could not extract webauthn stamp"
MSG_BAD_SIGNATURE = "could not verify WebAuthN signature"
MSG_CREDENTIAL_NOT_FOUND = (
    "credential ID could not be found in organization or its parent organization"
)
MSG_AUTHENTICATOR_NOT_FOUND = (
    "webauthn authenticator not found in organization (or parent organization)"
)

#: COSE algorithms a passkey may use: ES256 and RS256 only (PROTOCOL.md §2.3 step 4).
SUPPORTED_ALGORITHMS: frozenset[int] = frozenset(
    {COSEAlgorithmIdentifier.ECDSA_SHA_256, COSEAlgorithmIdentifier.RSASSA_PKCS1_v1_5_SHA_256}
)

#: ``v1AuthenticatorTransport`` values accepted in an attestation.
TRANSPORTS: frozenset[str] = frozenset(
    {
        "AUTHENTICATOR_TRANSPORT_BLE",
        "AUTHENTICATOR_TRANSPORT_INTERNAL",
        "AUTHENTICATOR_TRANSPORT_NFC",
        "AUTHENTICATOR_TRANSPORT_USB",
        "AUTHENTICATOR_TRANSPORT_HYBRID",
    }
)

_ACCEPTED_FORMATS = frozenset({AttestationFormat.NONE.value, AttestationFormat.PACKED.value})
_FLAG_USER_PRESENT = 0x01
_FLAG_USER_VERIFIED = 0x04
_MIN_AUTHENTICATOR_DATA = 37  # rpIdHash(32) ‖ flags(1) ‖ signCount(4)


class InvalidAttestation(InvalidRequest):
    """A passkey registration (attestation) is malformed or does not verify (400)."""

    code = "invalid_attestation"


@dataclass(frozen=True)
class RegisteredCredential:
    """A verified passkey, ready to store on a user.

    Attributes:
        credential_id: base64url (no padding) of the raw credential id.
        public_key: base64url (no padding) of the COSE_Key bytes, as Turnkey echoes it in
            ``v1Authenticator.credential.publicKey``.
        algorithm: COSE algorithm of the key (-7 ES256 or -257 RS256).
        aaguid: base64url (no padding) of the 16-byte AAGUID.
        attestation_type: the attestation statement format (``"none"`` or ``"packed"``).
        sign_count: the authenticator's signature counter at registration.
        transports: the ``AUTHENTICATOR_TRANSPORT_*`` values the client reported.
    """

    credential_id: str
    public_key: str
    algorithm: int
    aaguid: str
    attestation_type: str
    sign_count: int
    transports: tuple[str, ...]


@dataclass(frozen=True)
class WebauthnStamp:
    """The four decoded fields of an ``X-Stamp-Webauthn`` header.

    ``credential_id`` is normalised to base64url without padding so it can be compared with
    :attr:`RegisteredCredential.credential_id`.
    """

    credential_id: str
    authenticator_data: bytes
    client_data_json: bytes
    signature: bytes


@dataclass(frozen=True)
class VerifiedAssertion:
    """What a verified assertion tells about the authenticator."""

    credential_id: str
    sign_count: int
    user_verified: bool
    origin: str


# --------------------------------------------------------------------------- encodings


def b64url(data: bytes) -> str:
    """base64url without padding, the encoding every WebAuthn field uses on the wire."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def decode_b64(value: str) -> bytes:
    """Decode base64url or standard base64, with or without padding.

    Raises:
        ValueError: ``value`` is not base64 in either alphabet.
    """
    if not isinstance(value, str):
        raise ValueError("not a string")
    text = value.strip().rstrip("=").replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError) as ex:
        raise ValueError("not base64") from ex


def normalize_credential_id(value: str) -> str:
    """The canonical (base64url, unpadded) spelling of a credential id in either alphabet.

    Raises:
        ValueError: ``value`` is not base64.
    """
    return b64url(decode_b64(value))


def body_challenge(body: bytes) -> bytes:
    """The challenge a passkey stamp signs: ASCII lowercase hex SHA-256 of the raw body."""
    return hashlib.sha256(body).hexdigest().encode("ascii")


# --------------------------------------------------------------------------- registration


def verify_registration(
    params: Mapping[str, Any], *, allowed_origins: Sequence[str] | None = None
) -> RegisteredCredential:
    """Verify a ``v1AuthenticatorParamsV2`` and return the credential to store.

    Checks: the client data is a ``webauthn.create`` over the stated ``challenge``; the
    attestation object carries attested credential data whose id matches
    ``attestation.credentialId``; the key is ES256 or RS256; the attestation statement
    verifies (``none`` must be empty; ``packed`` is checked by py_webauthn).

    Parameters:
        params: ``{authenticatorName, challenge, attestation{credentialId, clientDataJson,
            attestationObject, transports}}`` as received.
        allowed_origins: the organization's WebAuthn origins, if that feature is set.

    Raises:
        InvalidAttestation: anything malformed or unverifiable, with a message naming why.
    """
    attestation = params.get("attestation")
    if not isinstance(attestation, Mapping):
        raise InvalidAttestation("attestation is required", field="attestation")
    client_data_json = _field_bytes(attestation, "clientDataJson")
    attestation_object = _field_bytes(attestation, "attestationObject")
    stated_id = _field_bytes(attestation, "credentialId")
    transports = _transports(attestation.get("transports"))

    client_data = _client_data(client_data_json, InvalidAttestation)
    if client_data.get("type") != "webauthn.create":
        raise InvalidAttestation("clientDataJson type must be webauthn.create")
    _check_challenge(params.get("challenge"), client_data)
    _check_origin(client_data, allowed_origins, InvalidAttestation)

    try:
        parsed = parse_attestation_object(attestation_object)
    except (WebAuthnException, ValueError, TypeError, KeyError, IndexError) as ex:
        raise InvalidAttestation("attestationObject is not a valid CBOR attestation") from ex
    attested = parsed.auth_data.attested_credential_data
    if attested is None or not attested.credential_id or not attested.credential_public_key:
        raise InvalidAttestation("attestationObject carries no attested credential data")
    if attested.credential_id != stated_id:
        raise InvalidAttestation("attestation credentialId does not match the attestationObject")
    algorithm = _credential_algorithm(attested.credential_public_key)

    _check_statement(parsed, attestation_object, client_data_json, attested.credential_public_key)
    return RegisteredCredential(
        credential_id=b64url(attested.credential_id),
        public_key=b64url(attested.credential_public_key),
        algorithm=algorithm,
        aaguid=b64url(attested.aaguid),
        attestation_type=_format_name(parsed.fmt),
        sign_count=parsed.auth_data.sign_count,
        transports=transports,
    )


def _field_bytes(source: Mapping[str, Any], name: str) -> bytes:
    value = source.get(name)
    if not isinstance(value, str) or not value:
        raise InvalidAttestation(f"attestation.{name} is required", field=f"attestation.{name}")
    try:
        return decode_b64(value)
    except ValueError as ex:
        raise InvalidAttestation(
            f"attestation.{name} is not base64url", field=f"attestation.{name}"
        ) from ex


def _transports(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise InvalidAttestation("attestation.transports must be a list of strings")
    unknown = [t for t in value if t not in TRANSPORTS]
    if unknown:
        raise InvalidAttestation(
            f"unknown authenticator transport {unknown[0]!r}", field="attestation.transports"
        )
    return tuple(value)


def _client_data(raw: bytes, error: type[InvalidRequest] | type[Unauthenticated]) -> dict[str, Any]:
    try:
        data = safejson.loads(raw)
    except safejson.MalformedJson as ex:  # not JSON, too deep, NUL characters, huge numbers
        raise _error(error, f"clientDataJson is not JSON we accept: {ex.message}") from ex
    if not isinstance(data, dict):
        raise _error(error, "clientDataJson is not a JSON object")
    return data


def _error(cls: type[InvalidRequest] | type[Unauthenticated], message: str) -> Exception:
    """Registration errors carry the reason; assertion errors the one fixed wire message."""
    if issubclass(cls, Unauthenticated):
        return InvalidSignature(MSG_BAD_SIGNATURE)
    return cls(message)


def _check_challenge(stated: Any, client_data: Mapping[str, Any]) -> None:
    if not isinstance(stated, str) or not stated:
        raise InvalidAttestation("challenge is required", field="challenge")
    signed = client_data.get("challenge")
    if not isinstance(signed, str):
        raise InvalidAttestation("clientDataJson has no challenge")
    if signed.rstrip("=") == stated.rstrip("="):
        return
    try:
        if decode_b64(signed) == decode_b64(stated):
            return
    except ValueError:
        pass
    raise InvalidAttestation("clientDataJson challenge does not match the stated challenge")


def _check_origin(
    client_data: Mapping[str, Any],
    allowed_origins: Sequence[str] | None,
    error: type[InvalidRequest] | type[Unauthenticated],
) -> None:
    if allowed_origins is None or "*" in allowed_origins:
        return
    origin = client_data.get("origin")
    if not isinstance(origin, str) or origin.rstrip("/") not in {
        o.rstrip("/") for o in allowed_origins
    }:
        raise _error(error, f"origin {origin!r} is not an allowed WebAuthn origin")


def _credential_algorithm(cose_key: bytes) -> int:
    try:
        decoded = decode_credential_public_key(cose_key)
        decoded_public_key_to_cryptography(decoded)
    except (WebAuthnException, ValueError, TypeError, KeyError, IndexError) as ex:
        raise InvalidAttestation("credential public key is not a valid COSE key") from ex
    if int(decoded.alg) not in SUPPORTED_ALGORITHMS:
        raise InvalidAttestation(
            f"unsupported credential algorithm {int(decoded.alg)}; only ES256 (-7) and "
            "RS256 (-257) passkeys are accepted"
        )
    return int(decoded.alg)


def _format_name(fmt: Any) -> str:
    """The format as its wire string, whether py_webauthn gives the enum or the raw text."""
    return str(fmt.value) if isinstance(fmt, AttestationFormat) else str(fmt)


def _check_statement(
    parsed: Any, attestation_object: bytes, client_data_json: bytes, cose_key: bytes
) -> None:
    fmt = _format_name(parsed.fmt)
    if fmt not in _ACCEPTED_FORMATS:
        raise InvalidAttestation(f"unsupported attestation format {fmt!r}; use 'none' or 'packed'")
    statement = parsed.att_stmt
    if fmt == AttestationFormat.NONE.value:
        if statement is not None and any(
            getattr(statement, f) is not None for f in ("sig", "x5c", "alg", "ver", "cert_info")
        ):
            raise InvalidAttestation("none attestation must have an empty statement")
        return
    if statement is None:
        raise InvalidAttestation("packed attestation has no statement")
    try:
        verify_packed(
            attestation_statement=statement,
            attestation_object=attestation_object,
            client_data_json=client_data_json,
            credential_public_key=cose_key,
            pem_root_certs_bytes=[],
        )
    except (WebAuthnException, ValueError, TypeError) as ex:
        raise InvalidAttestation(f"packed attestation does not verify: {ex}") from ex


# --------------------------------------------------------------------------- assertion


def parse_stamp(header_value: str | None) -> WebauthnStamp:
    """Decode an ``X-Stamp-Webauthn`` value: plain JSON, or that JSON base64(url)-encoded.

    Raises:
        Unauthenticated: the header is missing (:data:`MSG_NO_STAMP`) or malformed
            (:data:`MSG_MALFORMED_STAMP`).
    """
    if header_value is None or not header_value.strip():
        raise Unauthenticated(MSG_NO_STAMP)
    text = header_value.strip()
    try:
        if not text.startswith("{"):
            text = decode_b64(text).decode("utf-8")
        fields = safejson.loads(text)  # MalformedJson is a ValueError
        if not isinstance(fields, dict):
            raise ValueError("stamp is not a JSON object")
        return WebauthnStamp(
            credential_id=normalize_credential_id(_required_str(fields, "credentialId")),
            authenticator_data=decode_b64(_required_str(fields, "authenticatorData")),
            client_data_json=decode_b64(_required_str(fields, "clientDataJson")),
            signature=decode_b64(_required_str(fields, "signature")),
        )
    except (ValueError, UnicodeDecodeError) as ex:
        raise Unauthenticated(MSG_MALFORMED_STAMP) from ex


def _required_str(fields: Mapping[str, Any], name: str) -> str:
    value = fields.get(name)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} missing")
    return value


def verify_assertion(
    stamp: WebauthnStamp,
    body: bytes,
    cose_public_key: str | bytes,
    *,
    allowed_origins: Sequence[str] | None = None,
) -> VerifiedAssertion:
    """Verify a passkey stamp over the raw request body with the stored COSE key.

    Parameters:
        stamp: the parsed header (:func:`parse_stamp`).
        body: the raw HTTP body bytes exactly as received.
        cose_public_key: the stored key, base64url text or raw COSE bytes.
        allowed_origins: the organization's WebAuthn origins, if that feature is set.

    Raises:
        InvalidSignature: with :data:`MSG_BAD_SIGNATURE` for every verification failure
            (wrong type, challenge, origin, flags, algorithm or signature).
    """
    client_data = _client_data(stamp.client_data_json, Unauthenticated)
    if client_data.get("type") != "webauthn.get":
        raise InvalidSignature(MSG_BAD_SIGNATURE)
    signed_challenge = client_data.get("challenge")
    try:
        challenge_ok = isinstance(signed_challenge, str) and (
            decode_b64(signed_challenge) == body_challenge(body)
        )
    except ValueError:
        challenge_ok = False
    if not challenge_ok:
        raise InvalidSignature(MSG_BAD_SIGNATURE)
    _check_origin(client_data, allowed_origins, Unauthenticated)

    if len(stamp.authenticator_data) < _MIN_AUTHENTICATOR_DATA:
        raise InvalidSignature(MSG_BAD_SIGNATURE)
    try:
        auth_data = parse_authenticator_data(stamp.authenticator_data)
    except (WebAuthnException, ValueError, TypeError, KeyError, IndexError) as ex:
        raise InvalidSignature(MSG_BAD_SIGNATURE) from ex
    flags = stamp.authenticator_data[32]
    if not flags & _FLAG_USER_PRESENT:
        raise InvalidSignature(MSG_BAD_SIGNATURE)

    _verify_signature(
        cose_public_key,
        stamp.signature,
        stamp.authenticator_data + hashlib.sha256(stamp.client_data_json).digest(),
    )
    return VerifiedAssertion(
        credential_id=stamp.credential_id,
        sign_count=auth_data.sign_count,
        user_verified=bool(flags & _FLAG_USER_VERIFIED),
        origin=str(client_data.get("origin", "")),
    )


def _verify_signature(cose_public_key: str | bytes, signature: bytes, data: bytes) -> None:
    try:
        key_bytes = (
            decode_b64(cose_public_key) if isinstance(cose_public_key, str) else cose_public_key
        )
        decoded = decode_credential_public_key(key_bytes)
        if int(decoded.alg) not in SUPPORTED_ALGORITHMS:
            raise InvalidSignature(MSG_BAD_SIGNATURE)
        public_key = decoded_public_key_to_cryptography(decoded)
        verify_signature(
            public_key=public_key,
            signature_alg=COSEAlgorithmIdentifier(int(decoded.alg)),
            signature=signature,
            data=data,
        )
    except InvalidSignature:
        raise
    except (
        CryptoInvalidSignature,
        WebAuthnException,
        ValueError,
        TypeError,
        KeyError,
        IndexError,
    ) as ex:
        raise InvalidSignature(MSG_BAD_SIGNATURE) from ex


def verify_stamp(
    header_value: str | None,
    body: bytes,
    cose_public_key: str | bytes,
    *,
    allowed_origins: Sequence[str] | None = None,
) -> VerifiedAssertion:
    """:func:`parse_stamp` then :func:`verify_assertion`, for callers holding the key already."""
    return verify_assertion(
        parse_stamp(header_value), body, cose_public_key, allowed_origins=allowed_origins
    )
