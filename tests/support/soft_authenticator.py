"""A software WebAuthn authenticator for tests.

It does what a browser plus a platform authenticator do, with real bytes: CBOR attestation
objects (``none``, ``packed`` self-attestation, ``packed`` with an x5c certificate) and real
assertions over a request body, in ES256 (P-256) or RS256 (RSA-2048). The outputs are the exact
wire shapes clients send: ``v1AuthenticatorParamsV2`` for registration and the
``X-Stamp-Webauthn`` header value for a stamped request.

It is independent of the production verifier in :mod:`infra.auth.webauthn`: it builds bytes
with ``cbor2`` and ``cryptography`` only.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Literal

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import NameOID

Algorithm = Literal["ES256", "RS256"]
AttestationFmt = Literal["none", "packed", "packed-x5c"]

COSE_ES256 = -7
COSE_RS256 = -257
FLAG_UP = 0x01
FLAG_UV = 0x04
FLAG_AT = 0x40


def b64url(data: bytes) -> str:
    """base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def body_challenge(body: bytes) -> bytes:
    """The 64 ASCII bytes of the lowercase hex SHA-256 of ``body`` (PROTOCOL.md §2.2)."""
    return hashlib.sha256(body).hexdigest().encode("ascii")


@dataclass
class SoftAuthenticator:
    """One passkey credential held in software.

    Attributes:
        algorithm: ``"ES256"`` or ``"RS256"``.
        rp_id: relying-party id hashed into authenticator data.
        origin: the origin written into client data.
        credential_id: raw credential id bytes (random by default).
        aaguid: 16-byte AAGUID (all zeros by default, as ``none`` attestations report).
        sign_count: counter, incremented by every assertion.
    """

    algorithm: Algorithm = "ES256"
    rp_id: str = "localhost"
    origin: str = "http://localhost:3000"
    credential_id: bytes = field(default_factory=lambda: os.urandom(32))
    aaguid: bytes = bytes(16)
    sign_count: int = 0
    _key: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.algorithm == "ES256":
            self._key = ec.generate_private_key(ec.SECP256R1())
        elif self.algorithm == "RS256":
            self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:  # pragma: no cover - guarded by the Literal type
            raise ValueError(f"unsupported algorithm {self.algorithm}")

    # ------------------------------------------------------------------ keys

    @property
    def credential_id_b64(self) -> str:
        """The credential id as clients send it (base64url, no padding)."""
        return b64url(self.credential_id)

    @property
    def cose_alg(self) -> int:
        """The COSE algorithm identifier of this credential."""
        return COSE_ES256 if self.algorithm == "ES256" else COSE_RS256

    def cose_public_key(self) -> bytes:
        """The credential public key as a COSE_Key (canonical CBOR)."""
        public = self._key.public_key()
        if self.algorithm == "ES256":
            numbers = public.public_numbers()
            cose: dict[int, Any] = {
                1: 2,  # kty EC2
                3: COSE_ES256,
                -1: 1,  # crv P-256
                -2: numbers.x.to_bytes(32, "big"),
                -3: numbers.y.to_bytes(32, "big"),
            }
        else:
            numbers = public.public_numbers()
            cose = {
                1: 3,  # kty RSA
                3: COSE_RS256,
                -1: numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big"),
                -2: numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big"),
            }
        return cbor2.dumps(cose, canonical=True)

    def cose_public_key_b64(self) -> str:
        """The COSE key as Turnkey echoes it (base64url, no padding)."""
        return b64url(self.cose_public_key())

    def sign(self, data: bytes) -> bytes:
        """Sign ``data`` the way the authenticator does (DER ECDSA or PKCS#1 v1.5)."""
        if self.algorithm == "ES256":
            return bytes(self._key.sign(data, ec.ECDSA(hashes.SHA256())))
        return bytes(self._key.sign(data, padding.PKCS1v15(), hashes.SHA256()))

    # ------------------------------------------------------------------ registration

    def authenticator_data(self, *, flags: int, attested: bool) -> bytes:
        """rpIdHash ‖ flags ‖ signCount [‖ aaguid ‖ len ‖ credentialId ‖ COSE key]."""
        data = hashlib.sha256(self.rp_id.encode()).digest()
        data += bytes([flags]) + struct.pack(">I", self.sign_count)
        if attested:
            data += self.aaguid + struct.pack(">H", len(self.credential_id))
            data += self.credential_id + self.cose_public_key()
        return data

    def registration_client_data(
        self, challenge: bytes, *, type_: str = "webauthn.create"
    ) -> bytes:
        """clientDataJSON of a ``navigator.credentials.create`` call."""
        return json.dumps(
            {
                "type": type_,
                "challenge": b64url(challenge),
                "origin": self.origin,
                "crossOrigin": False,
            },
            separators=(",", ":"),
        ).encode()

    def attestation_object(
        self, client_data_json: bytes, *, fmt: AttestationFmt = "none", flags: int | None = None
    ) -> bytes:
        """A real CBOR attestation object over ``client_data_json``."""
        auth_data = self.authenticator_data(
            flags=FLAG_UP | FLAG_UV | FLAG_AT if flags is None else flags, attested=True
        )
        signed = auth_data + hashlib.sha256(client_data_json).digest()
        statement: dict[str, Any]
        if fmt == "none":
            statement = {}
        elif fmt == "packed":
            statement = {"alg": self.cose_alg, "sig": self.sign(signed)}
        elif fmt == "packed-x5c":
            cert_key = ec.generate_private_key(ec.SECP256R1())
            statement = {
                "alg": COSE_ES256,
                "sig": cert_key.sign(signed, ec.ECDSA(hashes.SHA256())),
                "x5c": [_attestation_certificate(cert_key)],
            }
        else:  # pragma: no cover - guarded by the Literal type
            raise ValueError(fmt)
        wire_fmt = "packed" if fmt.startswith("packed") else fmt
        return cbor2.dumps({"fmt": wire_fmt, "attStmt": statement, "authData": auth_data})

    def registration(
        self,
        name: str = "test passkey",
        *,
        challenge: bytes | None = None,
        fmt: AttestationFmt = "none",
        transports: tuple[str, ...] = ("AUTHENTICATOR_TRANSPORT_INTERNAL",),
    ) -> dict[str, Any]:
        """A ``v1AuthenticatorParamsV2`` as a client builds it after ``credentials.create``."""
        challenge = os.urandom(32) if challenge is None else challenge
        client_data = self.registration_client_data(challenge)
        return {
            "authenticatorName": name,
            "challenge": b64url(challenge),
            "attestation": {
                "credentialId": self.credential_id_b64,
                "clientDataJson": b64url(client_data),
                "attestationObject": b64url(self.attestation_object(client_data, fmt=fmt)),
                "transports": list(transports),
            },
        }

    # ------------------------------------------------------------------ assertion

    def assertion(
        self,
        body: bytes,
        *,
        type_: str = "webauthn.get",
        challenge: bytes | None = None,
        flags: int = FLAG_UP | FLAG_UV,
        origin: str | None = None,
    ) -> dict[str, str]:
        """The four assertion fields (base64url) over ``body``, as ``toJSON()`` gives them."""
        self.sign_count += 1
        auth_data = self.authenticator_data(flags=flags, attested=False)
        client_data = json.dumps(
            {
                "type": type_,
                "challenge": b64url(body_challenge(body) if challenge is None else challenge),
                "origin": self.origin if origin is None else origin,
                "crossOrigin": False,
            },
            separators=(",", ":"),
        ).encode()
        signature = self.sign(auth_data + hashlib.sha256(client_data).digest())
        return {
            "authenticatorData": b64url(auth_data),
            "clientDataJson": b64url(client_data),
            "credentialId": self.credential_id_b64,
            "signature": b64url(signature),
        }

    def stamp(self, body: bytes, *, encoding: Literal["json", "base64"] = "json", **kw: Any) -> str:
        """The ``X-Stamp-Webauthn`` header value for ``body``.

        ``encoding="json"`` is what every client sends; ``"base64"`` is the proto comment's
        JSON-then-base64url form, which the server also accepts.
        """
        text = json.dumps(self.assertion(body, **kw), separators=(",", ":"))
        if encoding == "base64":
            return b64url(text.encode())
        return text


def _attestation_certificate(key: ec.EllipticCurvePrivateKey) -> bytes:
    """A self-signed packed-attestation certificate (DER) for ``key``."""
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "walletd tests"),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Authenticator Attestation"),
            x509.NameAttribute(NameOID.COMMON_NAME, "soft authenticator"),
        ]
    )
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.DER)
