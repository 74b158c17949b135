"""Custody end to end: key rotation under load, and no plaintext secrets at rest or in logs."""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Iterator
from json import loads
from pathlib import Path

import pytest
from eth_keys import keys as eth_keys
from eth_utils import keccak
from sqlalchemy import inspect, text
from turnkey_sdk_types import (
    CreatePrivateKeysBody,
    CreateWalletBody,
    ExportWalletBody,
    ImportWalletBody,
    InitImportWalletBody,
    SignRawPayloadBody,
)

from infra.crypto import bundles, hd, hpke
from infra.crypto.addresses import Curve
from infra.crypto.keyring import load_keyring_file
from infra.db.engine import make_engine
from infra.settings import Settings
from tests.support.deployment import ROOT, WALLETD, Deployment, database_url

ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}
SOL = {"curve": "CURVE_ED25519", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/501'/0'/0'", "addressFormat": "ADDRESS_FORMAT_SOLANA"}


@pytest.fixture(scope="module")
def debug_embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """A private embedded deployment logging at DEBUG (so the log search sees everything)."""
    dep = Deployment.embedded(tmp_path_factory.mktemp("custody"),
                              extra_env={"WALLETD_LOG_LEVEL": "DEBUG"})
    yield dep
    dep.stop()


def _keys_cli(dep: Deployment, *args: str) -> str:
    done = subprocess.run([*WALLETD, "keys", *args], env=dep.env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _sign_and_check(dep: Deployment, address: str) -> None:
    digest = keccak(b"after rotation")
    sig = dep.client().sign_raw_payload(SignRawPayloadBody(
        signWith=address, payload=digest.hex(), encoding="PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction="HASH_FUNCTION_NO_OP"))
    raw = bytes.fromhex(sig.r + sig.s) + bytes([int(sig.v, 16)])
    signer = eth_keys.Signature(raw).recover_public_key_from_msg_hash(digest)
    assert signer.to_checksum_address() == address


def _wrapped_versions(dep: Deployment) -> set[str]:
    engine = make_engine(database_url(dep), pool_size=1)
    try:
        with engine.connect() as conn:
            versions = set()
            for table in ("wallets", "private_keys", "import_targets", "service_keys"):
                for (wrapped,) in conn.execute(text(f"SELECT wrapped_key FROM {table}")):
                    versions.add(wrapped.split(".")[1])
            return versions
    finally:
        engine.dispose()


def test_rotate_rewraps_every_row_and_running_workers_keep_signing(
    deployment: Deployment,
) -> None:
    created = deployment.client().create_wallet(CreateWalletBody(walletName="rot",
                                                                 accounts=[ETH]))
    address = created.addresses[0]
    _sign_and_check(deployment, address)
    keyring_file = Settings.from_env(deployment.env).master_key_file
    before = load_keyring_file(keyring_file).current
    out = _keys_cli(deployment, "rotate")
    assert f"master key version {before + 1} is current" in out
    assert _wrapped_versions(deployment) == {str(before + 1)}
    _sign_and_check(deployment, address)  # workers re-read the ring on the unknown version
    assert f"version {before}: active, wraps 0 rows" in _keys_cli(deployment, "status")
    _keys_cli(deployment, "retire", str(before))
    assert load_keyring_file(keyring_file).keys[before].retired
    _sign_and_check(deployment, address)


def _dump_database(dep: Deployment) -> str:
    engine = make_engine(database_url(dep), pool_size=1)
    try:
        parts = []
        with engine.connect() as conn:
            for table in inspect(conn).get_table_names():
                for row in conn.execute(text(f'SELECT * FROM "{table}"')):
                    parts.append(repr(tuple(row)))
        return "\n".join(parts)
    finally:
        engine.dispose()


def _logs(dep: Deployment) -> str:
    return "\n".join(p.read_text(errors="replace") for p in Path(dep.workdir).glob("*.log"))


@pytest.mark.parametrize("which", ["debug_embedded", "production"])
def test_no_plaintext_key_material_in_database_or_logs(
    request: pytest.FixtureRequest, which: str
) -> None:
    dep: Deployment = request.getfixturevalue(which)
    client = dep.client()
    user_id = dep.root.user_id
    secrets: dict[str, str] = {}

    # Created wallet: learn its mnemonic through export.
    created = client.create_wallet(CreateWalletBody(walletName="leak", accounts=[ETH, SOL]))
    embedded = hpke.generate_private_key()
    exported = client.export_wallet(ExportWalletBody(
        walletId=created.walletId, targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))
    signer_key = loads(exported.exportBundle)["enclaveQuorumPublic"]
    created_mnemonic = bundles.open_export_bundle(
        exported.exportBundle, embedded, signer_public_key_hex=signer_key,
        organization_id=dep.root.organization_id).decode()
    # Imported wallet with a passphrase.
    imported_mnemonic = hd.generate_mnemonic(24)
    passphrase = "correct-horse-" + hpke.private_key_to_bytes(embedded)[:4].hex()
    init = client.init_import_wallet(InitImportWalletBody(userId=user_id))
    target = loads(bytes.fromhex(loads(init.importBundle)["data"]))["targetPublic"]
    imported = client.import_wallet(ImportWalletBody(
        userId=user_id, walletName="leak2", accounts=[ETH],
        encryptedBundle=bundles.encrypt_to_bundle(
            bundles.join_wallet_plaintext(imported_mnemonic, passphrase), target)))
    client.create_private_keys(CreatePrivateKeysBody(privateKeys=[{
        "privateKeyName": "leak-pk", "curve": "CURVE_SECP256K1", "privateKeyTags": [],
        "addressFormats": []}]))
    for address in (created.addresses[0], created.addresses[1], imported.addresses[0]):
        client.sign_raw_payload(SignRawPayloadBody(
            signWith=address, payload="deadbeef", encoding="PAYLOAD_ENCODING_HEXADECIMAL",
            hashFunction="HASH_FUNCTION_KECCAK256" if address.startswith("0x")
            else "HASH_FUNCTION_NOT_APPLICABLE"))

    for name, mnemonic, pw in (("created", created_mnemonic, ""),
                               ("imported", imported_mnemonic, passphrase)):
        seed = hd.mnemonic_to_seed(mnemonic, pw)
        secrets[f"{name} mnemonic"] = mnemonic
        secrets[f"{name} first words"] = " ".join(mnemonic.split()[:4])
        secrets[f"{name} seed"] = seed.hex()
        eth_key = hd.derive_key(seed, Curve.SECP256K1, ETH["path"])
        sol_key = hd.derive_key(seed, Curve.ED25519, SOL["path"])
        secrets[f"{name} eth key"] = eth_key.private_key_secret.hex()
        secrets[f"{name} sol key"] = sol_key.private_key_secret.hex()
    secrets["passphrase"] = passphrase
    keyring = load_keyring_file(Settings.from_env(dep.env).master_key_file)
    for version, key in keyring.keys.items():
        secrets[f"master key v{version}"] = key.key_secret.hex()
        secrets[f"master key v{version} b64"] = base64.b64encode(key.key_secret).decode()

    haystacks = {"database": _dump_database(dep).lower(), "logs": _logs(dep).lower()}
    assert "wallets" in haystacks["database"] or created.walletId in haystacks["database"]
    for where, haystack in haystacks.items():
        for what, secret in secrets.items():
            assert secret.lower() not in haystack, f"{what} found in {where}"
