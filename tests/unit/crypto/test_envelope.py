"""EnvelopeCipher encryption and the versioned master keyring (infra.crypto.envelope/keyring)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from infra.crypto import keyring as kr
from infra.crypto.envelope import EnvelopeCipher, SealedSecret, wrapped_key_version
from infra.errors import InvalidCiphertext, KeyVersionRetired

SEED = b"\x5a" * 64
CTX = b"wallet:1234"


def test_sealed_secret_round_trips_and_hides_the_plaintext() -> None:
    env = EnvelopeCipher(kr.MasterKeyring.generate())
    sealed = env.seal(SEED, CTX)
    assert sealed.wrapped_key.startswith("wk1.1.")
    assert sealed.ciphertext.startswith("ed1.")
    assert SEED.hex() not in sealed.ciphertext and SEED not in sealed.ciphertext.encode()
    assert env.open(sealed, CTX) == SEED


def test_each_seal_uses_a_fresh_data_key_and_nonce() -> None:
    env = EnvelopeCipher(kr.MasterKeyring.generate())
    a, b = env.seal(SEED, CTX), env.seal(SEED, CTX)
    assert a.wrapped_key != b.wrapped_key
    assert a.ciphertext != b.ciphertext


def test_ciphertext_moved_to_another_row_does_not_decrypt() -> None:
    env = EnvelopeCipher(kr.MasterKeyring.generate())
    sealed = env.seal(SEED, CTX)
    with pytest.raises(InvalidCiphertext):
        env.open(sealed, b"wallet:other")


def test_tampering_is_invalid_ciphertext() -> None:
    env = EnvelopeCipher(kr.MasterKeyring.generate())
    sealed = env.seal(SEED, CTX)
    flipped = (
        sealed.ciphertext[:-2]
        + ("A" if sealed.ciphertext[-2] != "A" else "B")
        + sealed.ciphertext[-1]
    )
    with pytest.raises(InvalidCiphertext):
        env.open(SealedSecret(sealed.wrapped_key, flipped), CTX)
    for bad in ("", "wk1.x.abc", "wk2.1.abc", "garbage"):
        with pytest.raises(InvalidCiphertext):
            env.open(SealedSecret(bad, sealed.ciphertext), CTX)
    with pytest.raises(InvalidCiphertext):
        env.open(SealedSecret(sealed.wrapped_key, "xx1.abc"), CTX)


def test_data_key_is_wrapped_with_aes_gcm_under_the_master_key() -> None:
    ring = kr.MasterKeyring.generate()
    env = EnvelopeCipher(ring)
    data_key, wrapped = env.new_data_key(CTX)
    body = wrapped.split(".", 2)[2]
    import base64

    blob = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    master = ring.current_key().key_secret
    assert AESGCM(master).decrypt(blob[:12], blob[12:], b"walletd/data-key/v1|" + CTX) == data_key


def test_rotation_rewraps_and_old_versions_keep_decrypting_until_retired() -> None:
    ring1 = kr.MasterKeyring.generate()
    sealed = EnvelopeCipher(ring1).seal(SEED, CTX)
    ring2 = ring1.with_new_version()
    env2 = EnvelopeCipher(ring2)
    assert ring2.current == 2
    # Old version still unwraps before rewrap.
    assert env2.open(sealed, CTX) == SEED
    assert env2.needs_rewrap(sealed.wrapped_key)
    rewrapped = env2.rewrap(sealed.wrapped_key, CTX)
    assert wrapped_key_version(rewrapped) == 2
    assert env2.rewrap(rewrapped, CTX) == rewrapped  # idempotent
    ring3 = ring2.with_retired(1)
    env3 = EnvelopeCipher(ring3)
    assert env3.open(SealedSecret(rewrapped, sealed.ciphertext), CTX) == SEED
    with pytest.raises(KeyVersionRetired):
        env3.open(sealed, CTX)


def test_current_version_cannot_be_retired_and_unknown_versions_are_reported() -> None:
    ring = kr.MasterKeyring.generate()
    with pytest.raises(kr.KeyringUnavailable):
        ring.with_retired(1)
    with pytest.raises(kr.UnknownKeyVersion):
        ring.key_for_unwrap(7)
    sealed = EnvelopeCipher(ring.with_new_version()).seal(SEED, CTX)
    with pytest.raises(kr.UnknownKeyVersion):
        EnvelopeCipher(ring).open(sealed, CTX)


def test_keyring_file_is_created_0600_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "data" / kr.KEYRING_FILENAME
    ring = kr.init_keyring_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert kr.load_keyring_file(path).current_key() == ring.current_key()
    assert kr.init_keyring_file(path).current_key() == ring.current_key()  # not regenerated


def test_rotate_and_retire_persist_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / kr.KEYRING_FILENAME
    first = kr.init_keyring_file(path)
    sealed = EnvelopeCipher(first).seal(SEED, CTX)
    rotated = kr.rotate_keyring_file(path)
    assert rotated.current == 2
    assert kr.load_keyring_file(path).active_versions() == [1, 2]
    assert EnvelopeCipher(kr.load_keyring_file(path)).open(sealed, CTX) == SEED
    kr.retire_keyring_version(path, 1)
    assert kr.load_keyring_file(path).active_versions() == [2]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_group_readable_keyring_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / kr.KEYRING_FILENAME
    kr.init_keyring_file(path)
    os.chmod(path, 0o640)
    with pytest.raises(kr.KeyringUnavailable, match="chmod 600"):
        kr.load_keyring_file(path)


def test_missing_keyring_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(kr.KeyringUnavailable):
        kr.load_keyring_file(tmp_path / "nope.json")


def test_keyring_value_loads_from_an_environment_string() -> None:
    ring = kr.MasterKeyring.generate().with_new_version()
    loaded = kr.load_keyring_value(ring.to_json())
    assert loaded.current == 2
    assert loaded.keys[1].key_secret == ring.keys[1].key_secret


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "{}",
        json.dumps({"format": "other", "current": 1, "keys": []}),
        json.dumps(
            {"format": kr.KEYRING_FORMAT, "current": 2, "keys": [{"version": 1, "key": "AAAA"}]}
        ),
        json.dumps(
            {"format": kr.KEYRING_FORMAT, "current": 1, "keys": [{"version": 1, "key": "AAAA"}]}
        ),
        json.dumps(
            {"format": kr.KEYRING_FORMAT, "current": 1, "keys": [{"version": 1, "key": "!!"}]}
        ),
    ],
)
def test_malformed_keyring_values_never_echo_their_content(bad: str) -> None:
    with pytest.raises(kr.KeyringUnavailable) as err:
        kr.load_keyring_value(bad)
    assert "AAAA" not in err.value.message


def test_keyring_repr_does_not_leak_key_material() -> None:
    ring = kr.MasterKeyring.generate()
    assert ring.current_key().key_secret.hex() not in repr(ring)
    assert repr(ring.current_key().key_secret) not in repr(ring)
