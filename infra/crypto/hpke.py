"""HPKE with the Turnkey profile (PROTOCOL.md §5.1, CRYPTO.md §5).

RFC 9180 base mode, DHKEM(P-256, HKDF-SHA256) / HKDF-SHA256 / AES-256-GCM, single-shot,
``info = "turnkey_hpke"`` and the non-standard AAD ``enc (65 B uncompressed) ‖ receiver
public key (65 B uncompressed)``. The HPKE arithmetic is pyhpke's; keys are handled with
``cryptography`` (pyhpke's private-key export is not used, CRYPTO.md §5).

Any failure to open a ciphertext raises :class:`InvalidCiphertext` with no detail.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pyhpke import AEADId, CipherSuite, KDFId, KEMId, KEMKey, KEMKeyPair

from infra.errors import InvalidCiphertext, InvalidRequest

TURNKEY_HPKE_INFO = b"turnkey_hpke"

_SUITE_AES256 = CipherSuite.new(KEMId.DHKEM_P256_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES256_GCM)


@dataclass(frozen=True)
class HpkeCiphertext:
    """A sealed message: the encapsulated key (uncompressed) and AES-GCM output (ct‖tag)."""

    encapped_public: bytes
    ciphertext: bytes


def generate_private_key() -> ec.EllipticCurvePrivateKey:
    """A fresh P-256 key (HPKE target keys, the service signer)."""
    return ec.generate_private_key(ec.SECP256R1())


def private_key_from_bytes(private_key_secret: bytes) -> ec.EllipticCurvePrivateKey:
    """Load a P-256 private key from its 32-byte scalar."""
    if len(private_key_secret) != 32:
        raise InvalidRequest("a P-256 private key is 32 bytes")
    return ec.derive_private_key(int.from_bytes(private_key_secret, "big"), ec.SECP256R1())


def private_key_to_bytes(private_key: ec.EllipticCurvePrivateKey) -> bytes:
    """The 32-byte scalar of a P-256 private key."""
    return private_key.private_numbers().private_value.to_bytes(32, "big")


def load_public_key(public_key: bytes | str) -> ec.EllipticCurvePublicKey:
    """Load a P-256 public key from compressed/uncompressed bytes or hex.

    Raises:
        InvalidRequest: when the value is not a P-256 point.
    """
    try:
        raw = bytes.fromhex(public_key) if isinstance(public_key, str) else bytes(public_key)
        return ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw)
    except ValueError:
        raise InvalidRequest(
            "not a P-256 public key; send the uncompressed (04…, 130 hex chars) or compressed "
            "(02…/03…, 66 hex chars) SEC1 encoding",
            field="targetPublicKey",
        ) from None


def uncompressed(public_key: ec.EllipticCurvePublicKey) -> bytes:
    """65-byte ``04‖x‖y`` encoding."""
    return public_key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)


def compressed(public_key: ec.EllipticCurvePublicKey) -> bytes:
    """33-byte ``02/03‖x`` encoding."""
    return public_key.public_bytes(Encoding.X962, PublicFormat.CompressedPoint)


def seal_base(
    plaintext: bytes,
    receiver_public_key: ec.EllipticCurvePublicKey,
    *,
    info: bytes,
    aad: bytes,
    aead: AEADId = AEADId.AES256_GCM,
    ephemeral_private_key: ec.EllipticCurvePrivateKey | None = None,
) -> HpkeCiphertext:
    """RFC 9180 base-mode single-shot seal with DHKEM(P-256)/HKDF-SHA256 and ``aead``."""
    suite = (
        _SUITE_AES256
        if aead is AEADId.AES256_GCM
        else CipherSuite.new(KEMId.DHKEM_P256_HKDF_SHA256, KDFId.HKDF_SHA256, aead)
    )
    eks = None
    if ephemeral_private_key is not None:
        eks = KEMKeyPair(
            KEMKey.from_pyca_cryptography_key(ephemeral_private_key),
            KEMKey.from_pyca_cryptography_key(ephemeral_private_key.public_key()),
        )
    enc, context = suite.create_sender_context(
        KEMKey.from_pyca_cryptography_key(receiver_public_key), info, eks=eks
    )
    ciphertext = context.seal(plaintext, aad)
    return HpkeCiphertext(encapped_public=bytes(enc), ciphertext=bytes(ciphertext))


def open_base(
    sealed: HpkeCiphertext,
    receiver_private_key: ec.EllipticCurvePrivateKey,
    *,
    info: bytes,
    aad: bytes,
    aead: AEADId = AEADId.AES256_GCM,
) -> bytes:
    """RFC 9180 base-mode single-shot open (counterpart of :func:`seal_base`).

    Raises:
        InvalidCiphertext: on any failure.
    """
    suite = (
        _SUITE_AES256
        if aead is AEADId.AES256_GCM
        else CipherSuite.new(KEMId.DHKEM_P256_HKDF_SHA256, KDFId.HKDF_SHA256, aead)
    )
    try:
        context = suite.create_recipient_context(
            sealed.encapped_public,
            KEMKey.from_pyca_cryptography_key(receiver_private_key),
            info,
        )
        return bytes(context.open(sealed.ciphertext, aad))
    except Exception:
        raise InvalidCiphertext("the encrypted bundle could not be decrypted") from None


def seal(
    plaintext: bytes,
    receiver_public_key: bytes | str | ec.EllipticCurvePublicKey,
    *,
    ephemeral_private_key: ec.EllipticCurvePrivateKey | None = None,
) -> HpkeCiphertext:
    """HPKE-seal ``plaintext`` to ``receiver_public_key`` with the Turnkey profile.

    Args:
        plaintext: bytes to encrypt.
        receiver_public_key: P-256 key (object, SEC1 bytes or hex).
        ephemeral_private_key: fixed ephemeral key, for deterministic tests only.

    Returns:
        The uncompressed encapsulated key and the AES-256-GCM output.
    """
    receiver = (
        receiver_public_key
        if isinstance(receiver_public_key, ec.EllipticCurvePublicKey)
        else load_public_key(receiver_public_key)
    )
    if ephemeral_private_key is None:
        ephemeral_private_key = generate_private_key()
    enc = uncompressed(ephemeral_private_key.public_key())
    return seal_base(
        plaintext,
        receiver,
        info=TURNKEY_HPKE_INFO,
        aad=enc + uncompressed(receiver),
        ephemeral_private_key=ephemeral_private_key,
    )


def open_sealed(
    encapped_public: bytes,
    ciphertext: bytes,
    receiver_private_key: ec.EllipticCurvePrivateKey,
) -> bytes:
    """Open a Turnkey-profile HPKE ciphertext.

    Args:
        encapped_public: the sender's ephemeral key (compressed or uncompressed).
        ciphertext: AES-GCM ciphertext‖tag.
        receiver_private_key: the P-256 key the message was sealed to.

    Raises:
        InvalidCiphertext: on any failure (bad point, wrong key, tampering).
    """
    try:
        enc = uncompressed(load_public_key(bytes(encapped_public)))
    except InvalidRequest:
        raise InvalidCiphertext("the encrypted bundle could not be decrypted") from None
    receiver_raw = uncompressed(receiver_private_key.public_key())
    return open_base(
        HpkeCiphertext(enc, bytes(ciphertext)),
        receiver_private_key,
        info=TURNKEY_HPKE_INFO,
        aad=enc + receiver_raw,
    )
