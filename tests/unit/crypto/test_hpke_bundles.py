"""HPKE (RFC 9180 + Turnkey profile) and the import/export bundle formats."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from pyhpke import AEADId

from infra.crypto import bundles, hpke
from infra.errors import InvalidCiphertext, InvalidRequest, InvalidSignature
from tests.unit.crypto.vectors import load_vector

RFC = load_vector("hpke-rfc9180.json")
PROFILE = RFC["turnkey_profile"]
A3 = load_vector("turnkey-profile-extra.json")["credential_bundle_A3"]
MNEMONIC = "abandon " * 11 + "about"


def _key(hex_scalar: str) -> ec.EllipticCurvePrivateKey:
    return hpke.private_key_from_bytes(bytes.fromhex(hex_scalar))


# --- RFC 9180 ---------------------------------------------------------------------------


@pytest.mark.parametrize("enc_vec", RFC["rfc9180_A_3_1"]["encryptions"][:1])
def test_seal_reproduces_rfc9180_a31(enc_vec: dict[str, str]) -> None:
    a31 = RFC["rfc9180_A_3_1"]
    sealed = hpke.seal_base(
        bytes.fromhex(enc_vec["pt"]),
        hpke.load_public_key(a31["pkRm"]),
        info=bytes.fromhex(a31["info"]),
        aad=bytes.fromhex(enc_vec["aad"]),
        aead=AEADId.AES128_GCM,
        ephemeral_private_key=_key(a31["skEm"]),
    )
    assert sealed.encapped_public.hex() == a31["enc"]
    assert sealed.ciphertext.hex() == enc_vec["ct"]


def test_open_reproduces_rfc9180_a31() -> None:
    a31 = RFC["rfc9180_A_3_1"]
    first = a31["encryptions"][0]
    plaintext = hpke.open_base(
        hpke.HpkeCiphertext(bytes.fromhex(a31["enc"]), bytes.fromhex(first["ct"])),
        _key(a31["skRm"]),
        info=bytes.fromhex(a31["info"]),
        aad=bytes.fromhex(first["aad"]),
        aead=AEADId.AES128_GCM,
    )
    assert plaintext.hex() == first["pt"]


# --- Turnkey profile ------------------------------------------------------------------


def test_turnkey_profile_reproduces_the_protocol_credential_bundle_vector() -> None:
    sealed = hpke.seal(
        bytes.fromhex(A3["plaintext"]),
        A3["receiver_public_uncompressed"],
        ephemeral_private_key=_key(A3["ephemeral_private"]),
    )
    assert sealed.encapped_public.hex() == A3["enc_uncompressed"]
    assert sealed.ciphertext.hex() == A3["ciphertext"]


def test_turnkey_profile_opens_with_the_compressed_encapped_key() -> None:
    plaintext = hpke.open_sealed(
        bytes.fromhex(A3["enc_compressed"]),
        bytes.fromhex(A3["ciphertext"]),
        _key(A3["receiver_private"]),
    )
    assert plaintext.hex() == A3["plaintext"]


def _labeled_extract(suite: bytes, salt: bytes, label: bytes, ikm: bytes) -> bytes:
    return hmac.new(salt, b"HPKE-v1" + suite + label + ikm, hashlib.sha256).digest()


def _expand(prk: bytes, info: bytes, length: int) -> bytes:
    out, block, i = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([i]), hashlib.sha256).digest()
        out += block
        i += 1
    return out[:length]


def test_turnkey_profile_matches_the_sdk_aes_key_info_constant() -> None:
    """Independent re-derivation with hmac/ECDH and the SDK's AES_KEY_INFO constant."""
    receiver = hpke.generate_private_key()
    ephemeral = hpke.generate_private_key()
    sealed = hpke.seal(b"secret words", receiver.public_key(), ephemeral_private_key=ephemeral)
    enc = sealed.encapped_public
    pk_r = hpke.uncompressed(receiver.public_key())
    dh = ephemeral.exchange(ec.ECDH(), receiver.public_key())
    kem_suite = b"KEM\x00\x10"
    eae_prk = _labeled_extract(kem_suite, b"", b"eae_prk", dh)
    shared = _expand(
        eae_prk,
        (32).to_bytes(2, "big") + b"HPKE-v1" + kem_suite + b"shared_secret" + enc + pk_r,
        32,
    )
    hpke_suite = b"HPKE\x00\x10\x00\x01\x00\x02"
    secret = _labeled_extract(hpke_suite, shared, b"secret", b"")
    key_info = bytes.fromhex(PROFILE["AES_KEY_INFO_hex"])
    key = _expand(secret, key_info, 32)
    context = key_info[len(b"\x00\x20HPKE-v1" + hpke_suite + b"key") :]
    nonce_info = (12).to_bytes(2, "big") + b"HPKE-v1" + hpke_suite + b"base_nonce" + context
    nonce = _expand(secret, nonce_info, 12)
    assert AESGCM(key).decrypt(nonce, sealed.ciphertext, enc + pk_r) == b"secret words"


def test_tampered_ciphertext_is_an_opaque_invalid_ciphertext() -> None:
    receiver = hpke.generate_private_key()
    sealed = hpke.seal(b"x" * 40, receiver.public_key())
    tampered = sealed.ciphertext[:-1] + bytes([sealed.ciphertext[-1] ^ 1])
    with pytest.raises(InvalidCiphertext) as err:
        hpke.open_sealed(sealed.encapped_public, tampered, receiver)
    assert "x" * 5 not in err.value.message


def test_wrong_receiver_and_bad_points_are_invalid_ciphertext() -> None:
    sealed = hpke.seal(b"data", hpke.generate_private_key().public_key())
    with pytest.raises(InvalidCiphertext):
        hpke.open_sealed(sealed.encapped_public, sealed.ciphertext, hpke.generate_private_key())
    with pytest.raises(InvalidCiphertext):
        hpke.open_sealed(b"\x04" + b"\x00" * 64, sealed.ciphertext, hpke.generate_private_key())


def test_bad_target_key_is_invalid_request_saying_what_to_send() -> None:
    with pytest.raises(InvalidRequest, match="uncompressed"):
        hpke.load_public_key("04abcd")


# --- bundles --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def signer() -> bundles.ServiceSigner:
    return bundles.ServiceSigner.generate()


def test_import_bundle_has_the_v1_shape_and_a_verifiable_signature(
    signer: bundles.ServiceSigner,
) -> None:
    target = hpke.generate_private_key()
    bundle = bundles.build_import_bundle(
        signer,
        organization_id="org-1",
        user_id="user-1",
        target_public_key=hpke.compressed(target.public_key()),
    )
    wrapper = json.loads(bundle)
    assert set(wrapper) == {"version", "data", "dataSignature", "enclaveQuorumPublic"}
    assert wrapper["version"] == "v1.0.0"
    assert wrapper["enclaveQuorumPublic"] == signer.public_key_hex
    assert len(signer.public_key_hex) == 130 and signer.public_key_hex.startswith("04")
    data = bundles.verify_signed_bundle(bundle, signer.public_key_hex)
    assert data == {
        "organizationId": "org-1",
        "userId": "user-1",
        "targetPublic": hpke.uncompressed(target.public_key()).hex(),
    }
    # The signature is DER ECDSA-P256-SHA256 over the hex-decoded data bytes.
    signer.private_key.public_key().verify(
        bytes.fromhex(wrapper["dataSignature"]),
        bytes.fromhex(wrapper["data"]),
        ec.ECDSA(hashes.SHA256()),
    )


def test_import_round_trip_with_a_passphrase(signer: bundles.ServiceSigner) -> None:
    target = hpke.generate_private_key()
    bundle = bundles.build_import_bundle(
        signer,
        organization_id="o",
        user_id="u",
        target_public_key=hpke.uncompressed(target.public_key()),
    )
    target_public = bundles.verify_signed_bundle(bundle, signer.public_key_hex)["targetPublic"]
    encrypted = bundles.encrypt_to_bundle(
        bundles.join_wallet_plaintext(MNEMONIC, "pw"), target_public
    )
    assert set(json.loads(encrypted)) == {"encappedPublic", "ciphertext"}
    plaintext = bundles.open_encrypted_bundle(encrypted, target)
    assert bundles.split_wallet_plaintext(plaintext) == (MNEMONIC, "pw")


def test_plaintext_without_passphrase_splits_to_an_empty_passphrase() -> None:
    assert bundles.split_wallet_plaintext(MNEMONIC.encode() + b"\n") == (MNEMONIC, "")
    with pytest.raises(InvalidRequest, match="invalid mnemonic"):
        bundles.split_wallet_plaintext(b"\xff\xfe")


@pytest.mark.parametrize(
    "bad", ["", "not json", "{}", '{"encappedPublic": "zz", "ciphertext": ""}']
)
def test_malformed_encrypted_bundles_are_invalid_ciphertext(bad: str) -> None:
    with pytest.raises(InvalidCiphertext):
        bundles.open_encrypted_bundle(bad, hpke.generate_private_key())


def test_export_round_trip_through_the_client_side_decryptor(signer: bundles.ServiceSigner) -> None:
    embedded = hpke.generate_private_key()
    bundle = bundles.build_export_bundle(
        signer,
        organization_id="org-9",
        plaintext=MNEMONIC.encode(),
        target_public_key=hpke.uncompressed(embedded.public_key()).hex(),
    )
    data = json.loads(bytes.fromhex(json.loads(bundle)["data"]))
    assert set(data) == {"organizationId", "encappedPublic", "ciphertext"}
    assert len(data["encappedPublic"]) == 130
    plaintext = bundles.open_export_bundle(
        bundle, embedded, signer_public_key_hex=signer.public_key_hex, organization_id="org-9"
    )
    assert plaintext.decode() == MNEMONIC


def test_export_bundle_checks_signer_org_and_signature(signer: bundles.ServiceSigner) -> None:
    embedded = hpke.generate_private_key()
    bundle = bundles.build_export_bundle(
        signer,
        organization_id="org-9",
        plaintext=b"k" * 32,
        target_public_key=hpke.compressed(embedded.public_key()).hex(),
    )
    other = bundles.ServiceSigner.generate()
    with pytest.raises(InvalidSignature):
        bundles.open_export_bundle(
            bundle, embedded, signer_public_key_hex=other.public_key_hex, organization_id="org-9"
        )
    with pytest.raises(InvalidRequest, match="organization"):
        bundles.open_export_bundle(
            bundle, embedded, signer_public_key_hex=signer.public_key_hex, organization_id="x"
        )
    wrapper = json.loads(bundle)
    data = json.loads(bytes.fromhex(wrapper["data"]))
    data["organizationId"] = "org-evil"
    wrapper["data"] = json.dumps(data).encode().hex()
    with pytest.raises(InvalidSignature):
        bundles.verify_signed_bundle(json.dumps(wrapper), signer.public_key_hex)


def test_export_to_a_non_p256_target_is_a_clear_400(signer: bundles.ServiceSigner) -> None:
    with pytest.raises(InvalidRequest, match="P-256"):
        bundles.build_export_bundle(
            signer, organization_id="o", plaintext=b"x", target_public_key="05" + "11" * 32
        )


def test_service_signer_round_trips_through_its_scalar() -> None:
    signer = bundles.ServiceSigner.generate()
    again = bundles.ServiceSigner.from_bytes(hpke.private_key_to_bytes(signer.private_key))
    assert again.public_key_hex == signer.public_key_hex
