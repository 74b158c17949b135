"""BIP-39 / BIP-32 / SLIP-10 derivation (infra.crypto.hd) against published vectors."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from bip_utils import Bip32Secp256k1

from infra.crypto import hd
from infra.crypto.addresses import Curve
from infra.errors import InvalidRequest
from tests.unit.crypto.vectors import load_vector

BIP39 = load_vector("bip39.json")
BIP32 = load_vector("bip32.json")
SLIP10 = load_vector("slip10-ed25519.json")
SEP5 = load_vector("stellar-sep0005.json")


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    hd.clear_caches()


@pytest.mark.parametrize("vector", BIP39["vectors"], ids=lambda v: v["mnemonic"][:24])
def test_mnemonic_to_seed_matches_the_trezor_vectors(vector: dict[str, str]) -> None:
    seed = hd.mnemonic_to_seed(vector["mnemonic"], BIP39["passphrase"])
    assert seed.hex() == vector["seed"]


@pytest.mark.parametrize("vector", BIP39["vectors"], ids=lambda v: v["mnemonic"][:24])
def test_mnemonic_seed_matches_an_independent_pbkdf2(vector: dict[str, str]) -> None:
    expected = hashlib.pbkdf2_hmac(
        "sha512", vector["mnemonic"].encode(), b"mnemonic" + BIP39["passphrase"].encode(), 2048
    )
    assert hd.mnemonic_to_seed(vector["mnemonic"], BIP39["passphrase"]) == expected


@pytest.mark.parametrize(
    "vector", [v for v in BIP39["vectors"] if "xprv" in v], ids=lambda v: v["mnemonic"][:24]
)
def test_root_key_of_the_seed_matches_the_published_xprv(vector: dict[str, str]) -> None:
    seed = hd.mnemonic_to_seed(vector["mnemonic"], BIP39["passphrase"])
    root = hd.derive_key(seed, Curve.SECP256K1, "m")
    published = Bip32Secp256k1.FromExtendedKey(vector["xprv"])
    assert root.private_key_secret == published.PrivateKey().Raw().ToBytes()


@pytest.mark.parametrize(
    ("seed", "path", "xprv"),
    [(tv["seed"], c["path"], c["xprv"]) for tv in BIP32["vectors"] for c in tv["chains"]],
)
def test_secp256k1_derivation_matches_bip32_test_vectors(seed: str, path: str, xprv: str) -> None:
    key = hd.derive_key(bytes.fromhex(seed), Curve.SECP256K1, path)
    published = Bip32Secp256k1.FromExtendedKey(xprv)
    assert key.private_key_secret == published.PrivateKey().Raw().ToBytes()
    assert key.public_key == published.PublicKey().RawCompressed().ToBytes()


@pytest.mark.parametrize(
    ("seed", "chain"),
    [(tv["seed"], c) for tv in SLIP10["vectors"] for c in tv["chains"]],
    ids=lambda x: x["path"] if isinstance(x, dict) else "",
)
def test_ed25519_derivation_matches_slip10_test_vectors(seed: str, chain: dict[str, str]) -> None:
    key = hd.derive_key(bytes.fromhex(seed), Curve.ED25519, chain["path"])
    assert key.private_key_secret.hex() == chain["private"]
    assert "00" + key.public_key.hex() == chain["public"]


@pytest.mark.parametrize(
    ("mnemonic", "key"),
    [(tv["mnemonic"], k) for tv in SEP5["vectors"] for k in tv["keys"]],
    ids=lambda x: x["path"] if isinstance(x, dict) else "",
)
def test_stellar_sep5_secret_keys_derive_from_the_mnemonic(
    mnemonic: str, key: dict[str, str]
) -> None:
    derived = hd.derive_from_mnemonic(mnemonic, Curve.ED25519, key["path"])
    # StrKey: base32(version byte 'S' = 18 << 3, 32-byte seed, CRC16).
    raw = base64.b32decode(key["secret"])
    assert raw[0] == 18 << 3
    assert derived.private_key_secret == raw[1:33]


def test_non_hardened_ed25519_component_is_a_clear_400() -> None:
    with pytest.raises(InvalidRequest) as err:
        hd.derive_key(b"\x01" * 64, Curve.ED25519, "m/44'/784'/0'/0/0")
    assert "hardened" in err.value.message
    assert "0'" in err.value.message


@pytest.mark.parametrize("path", ["", "44'/0'", "m/abc", "m/44''", "m/2147483648", "m//1"])
def test_malformed_paths_are_rejected_with_an_example(path: str) -> None:
    with pytest.raises(InvalidRequest):
        hd.parse_path(path, Curve.SECP256K1)


def test_parse_path_accepts_h_and_apostrophe_for_hardened() -> None:
    assert hd.parse_path("m/44'/60h/0H/1") == (
        44 + hd.HARDENED,
        60 + hd.HARDENED,
        hd.HARDENED,
        1,
    )


@pytest.mark.parametrize("length", hd.MNEMONIC_LENGTHS)
def test_generated_mnemonics_have_the_requested_length_and_validate(length: int) -> None:
    mnemonic = hd.generate_mnemonic(length)
    assert len(mnemonic.split()) == length
    assert hd.normalize_mnemonic(mnemonic) == mnemonic


@pytest.mark.parametrize("value", [11, 13, 25, 0, "twelve", True, 12.5])
def test_unsupported_mnemonic_lengths_name_the_accepted_values(value: object) -> None:
    with pytest.raises(InvalidRequest) as err:
        hd.parse_mnemonic_length(value)
    assert "12, 15, 18, 21, 24" in err.value.message


def test_mnemonic_length_defaults_to_twelve() -> None:
    assert hd.parse_mnemonic_length(None) == 12


def test_invalid_checksum_says_invalid_mnemonic_without_echoing_words() -> None:
    bad = "abandon " * 11 + "abandon"
    with pytest.raises(InvalidRequest) as err:
        hd.mnemonic_to_seed(bad)
    assert "invalid mnemonic" in err.value.message
    assert "abandon" not in err.value.message


def test_unknown_word_is_an_invalid_mnemonic() -> None:
    with pytest.raises(InvalidRequest, match="invalid mnemonic"):
        hd.normalize_mnemonic("walletd " * 12)


def test_mnemonic_is_normalised_before_use() -> None:
    canonical = BIP39["vectors"][0]["mnemonic"]
    messy = "  " + canonical.upper().replace(" ", "   ") + "\n"
    assert hd.mnemonic_to_seed(messy, "TREZOR") == bytes.fromhex(BIP39["vectors"][0]["seed"])


def test_repeated_derivation_never_reruns_pbkdf2(monkeypatch: pytest.MonkeyPatch) -> None:
    mnemonic = BIP39["vectors"][1]["mnemonic"]
    first = hd.derive_from_mnemonic(mnemonic, Curve.SECP256K1, "m/44'/60'/0'/0/0")
    calls: list[object] = []
    monkeypatch.setattr(hd, "Bip39SeedGenerator", lambda *a: calls.append(a))
    again = hd.derive_from_mnemonic(mnemonic, Curve.SECP256K1, "m/44'/60'/0'/0/0")
    assert again == first
    assert calls == []
    assert hd.cache_stats()["seed_hits"] >= 1


def test_sibling_accounts_reuse_the_cached_parent_node() -> None:
    seed = b"\x07" * 64
    hd.derive_key(seed, Curve.SECP256K1, "m/44'/60'/0'/0/0")
    misses = hd.cache_stats()["node_misses"]
    hd.derive_key(seed, Curve.SECP256K1, "m/44'/60'/0'/0/1")
    # Only the new leaf is computed: one miss for the leaf, the parent is a hit.
    assert hd.cache_stats()["node_misses"] == misses + 1


def test_caches_are_keyed_by_digest_not_by_secret() -> None:
    mnemonic = BIP39["vectors"][2]["mnemonic"]
    seed = hd.mnemonic_to_seed(mnemonic)
    hd.derive_key(seed, Curve.ED25519, "m/44'/501'/0'/0'")
    for key in list(hd._SEEDS._data) + [k[0] for k in hd._NODES._data]:
        assert mnemonic.encode() not in key
        assert seed not in key
        assert len(key) == 32


def test_lru_cache_evicts_the_least_recently_used_entry() -> None:
    cache: hd.LruCache[str, int] = hd.LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)
    assert cache.get("b") is None
    assert cache.get("a") == 1
    assert len(cache) == 2


def test_p256_is_not_an_hd_curve() -> None:
    with pytest.raises(InvalidRequest, match="CURVE_SECP256K1 and CURVE_ED25519"):
        hd.derive_key(b"\x01" * 64, Curve.P256, "m/0'")


def test_same_secret_compares_in_constant_time_semantics() -> None:
    assert hd.same_secret(b"abc", b"abc")
    assert not hd.same_secret(b"abc", b"abd")
    assert hmac.compare_digest(b"x", b"x")
