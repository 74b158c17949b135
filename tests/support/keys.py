"""API keys and stamps made by tests (P-256, secp256k1, Ed25519)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

SCHEMES = {
    "API_KEY_CURVE_P256": "SIGNATURE_SCHEME_TK_API_P256",
    "API_KEY_CURVE_SECP256K1": "SIGNATURE_SCHEME_TK_API_SECP256K1",
    "API_KEY_CURVE_ED25519": "SIGNATURE_SCHEME_TK_API_ED25519",
}


@dataclass
class TestKey:
    """A key pair in the wire forms clients use."""

    __test__ = False  # not a test class, whatever its name
    curve: str
    public_key: str
    private_key: str
    _key: object

    def sign(self, body: bytes) -> str:
        if isinstance(self._key, ed25519.Ed25519PrivateKey):
            return self._key.sign(body).hex()
        assert isinstance(self._key, ec.EllipticCurvePrivateKey)
        return self._key.sign(body, ec.ECDSA(hashes.SHA256())).hex()

    def stamp(self, body: bytes) -> str:
        """An ``X-Stamp`` header value over ``body``."""
        stamp = {"publicKey": self.public_key, "scheme": SCHEMES[self.curve],
                 "signature": self.sign(body)}
        return base64.urlsafe_b64encode(json.dumps(stamp).encode()).decode().rstrip("=")

    def api_key_params(self, name: str = "test key", expiration_seconds: str | None = None) -> dict:
        params = {"apiKeyName": name, "publicKey": self.public_key, "curveType": self.curve}
        if expiration_seconds:
            params["expirationSeconds"] = expiration_seconds
        return params


def make_key(curve: str = "API_KEY_CURVE_P256") -> TestKey:
    if curve == "API_KEY_CURVE_ED25519":
        ed = ed25519.Ed25519PrivateKey.generate()
        pub = ed.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()
        return TestKey(curve, pub, ed.private_bytes_raw().hex(), ed)
    ec_curve = ec.SECP256R1() if curve == "API_KEY_CURVE_P256" else ec.SECP256K1()
    key = ec.generate_private_key(ec_curve)
    pub = key.public_key().public_bytes(Encoding.X962, PublicFormat.CompressedPoint).hex()
    return TestKey(curve, pub, format(key.private_numbers().private_value, "064x"), key)


def load_p256_key(private_hex: str) -> TestKey:
    """The P-256 :class:`TestKey` of a hex private key (e.g. a root key file's)."""
    key = ec.derive_private_key(int(private_hex, 16), ec.SECP256R1())
    pub = key.public_key().public_bytes(Encoding.X962, PublicFormat.CompressedPoint).hex()
    return TestKey("API_KEY_CURVE_P256", pub, private_hex, key)


__all__ = ["TestKey", "load_p256_key", "make_key"]
