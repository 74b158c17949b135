"""Wallet operations against a real (SQLite) schema: sealing, derivation, signWith, caching."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from infra.crypto import hd
from infra.crypto.keyring import init_keyring_file
from infra.db.base import Base
from infra.db.engine import make_engine, make_session_factory
from infra.db.models.organizations import Organization
from infra.db.models.wallets import WalletAccount
from infra.errors import AlreadyExists, InvalidRequest, NotFound
from infra.wallets import store
from infra.wallets.custody import Custody, load_custody

ABANDON = "abandon " * 11 + "about"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
ETH = store.AccountParams(curve="CURVE_SECP256K1", path="m/44'/60'/0'/0/0",
                          address_format="ADDRESS_FORMAT_ETHEREUM")
SOL = store.AccountParams(curve="CURVE_ED25519", path="m/44'/501'/0'/0'",
                          address_format="ADDRESS_FORMAT_SOLANA")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}", pool_size=1)
    Base.metadata.create_all(engine)
    with make_session_factory(engine)() as s:
        s.add(Organization(id="org", name="org"))
        s.commit()
        yield s
    engine.dispose()


@pytest.fixture
def custody(tmp_path: Path) -> Custody:
    path = str(tmp_path / "master-keys.json")
    init_keyring_file(path)
    return load_custody(path)


def test_wallet_mnemonic_is_sealed_and_reopens(session: Session, custody: Custody) -> None:
    wallet = store.create_wallet(session, custody, "org", "w", ABANDON, "pw")
    session.commit()
    assert "abandon" not in wallet.ciphertext
    assert store.open_wallet(custody, wallet) == (ABANDON, "pw")


def test_accounts_derive_published_addresses(session: Session, custody: Custody) -> None:
    wallet = store.create_wallet(session, custody, "org", "w", ABANDON)
    specs = store.validate_accounts([ETH, SOL])
    accounts = store.derive_accounts(session, wallet, ABANDON, "", specs, NOW)
    assert accounts[0].address == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
    assert accounts[1].address == "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
    assert accounts[0].created_at < accounts[1].created_at


def test_the_same_derivation_twice_is_a_conflict(session: Session, custody: Custody) -> None:
    wallet = store.create_wallet(session, custody, "org", "w", ABANDON)
    specs = store.validate_accounts([ETH])
    store.derive_accounts(session, wallet, ABANDON, "", specs, NOW)
    with pytest.raises(AlreadyExists):
        store.derive_accounts(session, wallet, ABANDON, "", specs, NOW)


@pytest.mark.parametrize(
    ("account", "hint"),
    [
        ({"curve": "CURVE_X"}, "CURVE_SECP256K1"),
        ({"curve": "CURVE_P256"}, "CURVE_SECP256K1 or CURVE_ED25519"),
        ({"path_format": "PATH_FORMAT_X"}, "PATH_FORMAT_BIP32"),
        ({"path": "44'/60'"}, "must start with 'm/'"),
        ({"address_format": "ADDRESS_FORMAT_SOLANA"}, "CURVE_ED25519"),
    ],
)
def test_invalid_account_parameters_say_what_to_send(account: dict[str, str], hint: str) -> None:
    params = ETH.model_copy(update=account)
    with pytest.raises(InvalidRequest) as err:
        store.validate_accounts([params])
    assert hint in err.value.message


def test_sign_with_resolves_accounts_case_insensitively_and_keys_by_id_or_address(
    session: Session, custody: Custody
) -> None:
    wallet = store.create_wallet(session, custody, "org", "w", ABANDON)
    store.derive_accounts(session, wallet, ABANDON, "", store.validate_accounts([ETH]), NOW)
    target = store.resolve_sign_with(session, "org", "0x9858effd232b4033e47d90003d41ec34ecaeda94")
    assert isinstance(target.account, WalletAccount)
    key = store.create_private_key(
        session, custody, "org",
        store.PrivateKeyParams(private_key_name="k", curve="CURVE_SECP256K1",
                               address_formats=["ADDRESS_FORMAT_ETHEREUM"]),
        bytes.fromhex("46" * 32))
    assert store.resolve_sign_with(session, "org", key.id).private_key is key
    by_address = store.resolve_sign_with(session, "org", "0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f")
    assert by_address.private_key is key
    assert store.signing_secret(custody, by_address) == bytes.fromhex("46" * 32)
    with pytest.raises(NotFound):
        store.resolve_sign_with(session, "org", "0x" + "11" * 20)
    with pytest.raises(NotFound):
        store.resolve_sign_with(session, "other-org", key.id)


def test_repeated_signing_never_reruns_pbkdf2(
    session: Session, custody: Custody, monkeypatch: pytest.MonkeyPatch
) -> None:
    hd.clear_caches()
    mnemonic = hd.generate_mnemonic()
    wallet = store.create_wallet(session, custody, "org", "w", mnemonic)
    store.derive_accounts(session, wallet, mnemonic, "", store.validate_accounts([ETH]), NOW)
    session.commit()
    calls: list[object] = []
    real = hd.Bip39SeedGenerator

    def counting(*args: object) -> object:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(hd, "Bip39SeedGenerator", counting)
    address = session.query(WalletAccount).one().address
    first = store.signing_secret(custody, store.resolve_sign_with(session, "org", address))
    for _ in range(5):
        again = store.signing_secret(custody, store.resolve_sign_with(session, "org", address))
        assert again == first
    assert calls == []  # derive_accounts already warmed the cache; signing never ran PBKDF2


def test_wallet_limit_is_enforced(session: Session, custody: Custody,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from infra.validation import limits

    monkeypatch.setattr(store, "WALLETS", limits.ResourceLimit(
        "wallets_per_organization", "HD wallets", limits.Scope.ORGANIZATION, 1, 1))
    store.create_wallet(session, custody, "org", "one", ABANDON)
    with pytest.raises(limits.ResourceLimitExceeded):
        store.create_wallet(session, custody, "org", "two", ABANDON)
