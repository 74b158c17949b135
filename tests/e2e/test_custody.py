"""Custody end to end: key rotation under load, and no plaintext secrets at rest or in logs."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Iterator
from json import loads
from pathlib import Path

import base58
import coincurve
import nacl.signing
import pytest
import requests
from eth_keys import keys as eth_keys
from eth_utils import keccak
from sqlalchemy import inspect, select, text
from turnkey_sdk_types import (
    CreateOauth2CredentialBody,
    CreatePrivateKeysBody,
    CreateWalletBody,
    ExportPrivateKeyBody,
    ExportWalletBody,
    GetPrivateKeyBody,
    ImportPrivateKeyBody,
    ImportWalletBody,
    InitImportPrivateKeyBody,
    InitImportWalletBody,
    SignRawPayloadBody,
)

from infra.crypto import bundles, hd, hpke, quorum
from infra.crypto.addresses import Curve
from infra.crypto.envelope import EnvelopeCipher
from infra.db.engine import make_engine, make_session_factory
from infra.db.models.wallets import ImportTarget, ServiceKey
from infra.errors import InvalidRequest
from infra.seal.holders import custody_of_seal
from infra.wallets.custody import row_context, sealed_rows
from tests.support import services
from tests.support.deployment import ROOT, WALLETD, Deployment, database_url
from tests.support.seal import keyring_of, root_key_of, unsealed_state

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


@pytest.fixture(scope="module")
def debug_production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """A private production deployment (gunicorn, workers, PostgreSQL, RabbitMQ) at DEBUG."""
    pg_url, amqp_url = services.create_database(), services.create_vhost()
    dep = Deployment.production(tmp_path_factory.mktemp("custody-prod"), pg_url, amqp_url,
                                extra_env={"WALLETD_LOG_LEVEL": "DEBUG"})
    yield dep
    dep.stop()
    services.drop_database(pg_url)
    services.delete_vhost(amqp_url)


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
    before = keyring_of(deployment.env).master.current
    out = _keys_cli(deployment, "rotate")
    assert f"master key version {before + 1} is current" in out
    assert _wrapped_versions(deployment) == {str(before + 1)}
    _sign_and_check(deployment, address)  # workers re-read the ring on the unknown version
    assert f"version {before}: active, wraps 0 rows" in _keys_cli(deployment, "status")
    _keys_cli(deployment, "retire", str(before))
    assert keyring_of(deployment.env).master.keys[before].retired
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


def _encodings(name: str, secret: bytes) -> dict[str, str]:
    """The textual forms a secret could leak in: hex, base64, base64url and base58.

    Base64 forms are cut to whole 3-byte groups so they also match when the secret is the
    start of a longer encoded value (a Solana-style 64-byte keypair, a seed with more after it).
    """
    whole = len(secret) // 3 * 4
    return {f"{name} (hex)": secret.hex(),
            f"{name} (base64)": base64.b64encode(secret).decode()[:whole],
            f"{name} (base64url)": base64.urlsafe_b64encode(secret).decode()[:whole],
            f"{name} (base58)": base58.b58encode(secret).decode()}


def _submit_raw(dep: Deployment, path: str, activity_type: str,
                parameters: dict[str, object]) -> requests.Response:
    """A stamped submit whose raw response body the test keeps (error bodies included)."""
    body = json.dumps({"type": activity_type, "timestampMs": str(int(time.time() * 1000)),
                       "organizationId": dep.root.organization_id, "parameters": parameters})
    stamp = dep.client().stamper.stamp(body)
    return dep.post(f"/public/v1/submit/{path}", body,
                    {stamp.stamp_header_name: stamp.stamp_header_value})


def _sealed_custody_rows(dep: Deployment) -> dict[str, bytes]:
    """Open the service signer and import-target rows with the worker-side custody code."""
    custody = custody_of_seal(unsealed_state(dep.env))
    engine = make_engine(database_url(dep), pool_size=1)
    try:
        with make_session_factory(engine)() as session:
            opened = {f"service key {row.name}": custody.open_row(row)
                      for row in session.scalars(select(ServiceKey))}
            opened.update({f"import target {row.kind} {row.id}": custody.open_row(row)
                           for row in session.scalars(select(ImportTarget))})
            return opened
    finally:
        engine.dispose()


def _data_keys(dep: Deployment) -> dict[str, bytes]:
    """Every row's data key, unwrapped with the worker-side custody code."""
    custody = custody_of_seal(unsealed_state(dep.env))
    engine = make_engine(database_url(dep), pool_size=1)
    try:
        with make_session_factory(engine)() as session:
            return {f"data key {row_context(row).decode()}": EnvelopeCipher(custody.keyring)
                    .unwrap_data_key(row.wrapped_key, row_context(row))
                    for row in sealed_rows(session)}
    finally:
        engine.dispose()


def _data_dir_files(dep: Deployment) -> bytes:
    """Every file under the data dir, raw (the SQLite database, the sealed keyring, ...)."""
    data = Path(dep.env["WALLETD_DATA_DIR"])
    return b"\n".join(p.read_bytes() for p in sorted(data.rglob("*"))
                      if p.is_file() and not p.is_socket())


def _invalid_mnemonic() -> str:
    """Real BIP-39 words whose checksum fails (what a user mistyping a backup sends)."""
    while True:
        candidate = " ".join(reversed(hd.generate_mnemonic(12).split()))
        try:
            hd.normalize_mnemonic(candidate)
        except InvalidRequest:
            return candidate


def _export_key(dep: Deployment, private_key_id: str) -> bytes:
    embedded = hpke.generate_private_key()
    exported = dep.client().export_private_key(ExportPrivateKeyBody(
        privateKeyId=private_key_id,
        targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))
    signer_key = loads(exported.exportBundle)["enclaveQuorumPublic"]
    return bundles.open_export_bundle(exported.exportBundle, embedded,
                                      signer_public_key_hex=signer_key,
                                      organization_id=dep.root.organization_id)


@pytest.mark.parametrize("which", ["debug_embedded", "debug_production"])
def test_no_plaintext_key_material_in_database_or_logs(
    request: pytest.FixtureRequest, which: str
) -> None:
    dep: Deployment = request.getfixturevalue(which)
    client = dep.client()
    user_id = dep.root.user_id
    texts: dict[str, str] = {}  # searched as they are (and encoded, below)
    raw: dict[str, bytes] = {}  # searched in every encoding
    error_bodies: list[str] = []

    # Created wallet: learn its mnemonic through export.
    created = client.create_wallet(CreateWalletBody(walletName="leak", accounts=[ETH, SOL]))
    embedded = hpke.generate_private_key()
    exported = client.export_wallet(ExportWalletBody(
        walletId=created.walletId, targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))
    signer_key = loads(exported.exportBundle)["enclaveQuorumPublic"]
    created_mnemonic = bundles.open_export_bundle(
        exported.exportBundle, embedded, signer_public_key_hex=signer_key,
        organization_id=dep.root.organization_id).decode()

    # Imported wallet with a passphrase; first a rejected import of a mistyped mnemonic.
    imported_mnemonic = hd.generate_mnemonic(24)
    passphrase = "correct-horse-" + hpke.private_key_to_bytes(embedded)[:4].hex()
    init = client.init_import_wallet(InitImportWalletBody(userId=user_id))
    raw.update(_sealed_custody_rows(dep))  # the wallet import target, before import consumes it
    target = loads(bytes.fromhex(loads(init.importBundle)["data"]))["targetPublic"]
    rejected_mnemonic = _invalid_mnemonic()
    bad_import = _submit_raw(dep, "import_wallet", "ACTIVITY_TYPE_IMPORT_WALLET", {
        "userId": user_id, "walletName": "bad", "accounts": [],
        "encryptedBundle": bundles.encrypt_to_bundle(rejected_mnemonic.encode(), target)})
    assert bad_import.status_code == 400 and "invalid mnemonic" in bad_import.text
    error_bodies.append(bad_import.text)
    imported = client.import_wallet(ImportWalletBody(
        userId=user_id, walletName="leak2", accounts=[ETH],
        encryptedBundle=bundles.encrypt_to_bundle(
            bundles.join_wallet_plaintext(imported_mnemonic, passphrase), target)))

    # Imported standalone key (a known one); first a rejected 33-byte key.
    init_pk = client.init_import_private_key(InitImportPrivateKeyBody(userId=user_id))
    raw.update(_sealed_custody_rows(dep))
    pk_target = bundles.verify_signed_bundle(init_pk.importBundle, signer_key)["targetPublic"]
    rejected_key = coincurve.PrivateKey().secret + b"\x01"
    bad_key = _submit_raw(dep, "import_private_key", "ACTIVITY_TYPE_IMPORT_PRIVATE_KEY", {
        "userId": user_id, "privateKeyName": "bad", "curve": "CURVE_SECP256K1",
        "addressFormats": ["ADDRESS_FORMAT_ETHEREUM"],
        "encryptedBundle": bundles.encrypt_to_bundle(rejected_key, pk_target)})
    assert bad_key.status_code == 400 and "32-byte" in bad_key.text
    error_bodies.append(bad_key.text)
    raw["rejected private key"] = rejected_key[:32]
    known_key = coincurve.PrivateKey().secret
    imported_pk = client.import_private_key(ImportPrivateKeyBody(
        userId=user_id, privateKeyName="leak-imported", curve="CURVE_SECP256K1",
        addressFormats=["ADDRESS_FORMAT_ETHEREUM"],
        encryptedBundle=bundles.encrypt_to_bundle(known_key, pk_target)))
    raw["imported private key"] = known_key
    assert _export_key(dep, imported_pk.privateKeyId) == known_key

    # Created standalone keys: learn their secrets through export.
    made = client.create_private_keys(CreatePrivateKeysBody(privateKeys=[
        {"privateKeyName": "leak-pk", "curve": "CURVE_SECP256K1", "privateKeyTags": [],
         "addressFormats": []},
        {"privateKeyName": "leak-pk-ed", "curve": "CURVE_ED25519", "privateKeyTags": [],
         "addressFormats": []}])).privateKeys
    raw["leak-pk"] = _export_key(dep, made[0].privateKeyId)
    raw["leak-pk-ed"] = ed_secret = _export_key(dep, made[1].privateKeyId)
    raw["leak-pk-ed keypair"] = ed_secret + bytes(nacl.signing.SigningKey(ed_secret).verify_key)

    # An OAuth 2.0 client secret, encrypted to the service key as encryptOauth2ClientSecret does.
    encryption_key = requests.get(dep.base_url + "/public/v1/discovery/keys",
                                  timeout=10).json()["encryptionPublicKey"]
    oauth_secret = "oauth-client-secret-" + hpke.private_key_to_bytes(embedded)[4:12].hex()
    client.create_oauth2_credential(CreateOauth2CredentialBody(
        provider="OAUTH2_PROVIDER_X", clientId="leak-client", encryptedClientSecret=quorum.encrypt(
            hpke.load_public_key(encryption_key), oauth_secret.encode())))
    texts["oauth client secret"] = oauth_secret
    raw["oauth client secret"] = oauth_secret.encode()

    # A pending import left in the database at dump time.
    client.init_import_private_key(InitImportPrivateKeyBody(userId=user_id))
    raw.update(_sealed_custody_rows(dep))

    for address in (created.addresses[0], created.addresses[1], imported.addresses[0]):
        client.sign_raw_payload(SignRawPayloadBody(
            signWith=address, payload="deadbeef", encoding="PAYLOAD_ENCODING_HEXADECIMAL",
            hashFunction="HASH_FUNCTION_KECCAK256" if address.startswith("0x")
            else "HASH_FUNCTION_NOT_APPLICABLE"))
    for key_id, hash_function in ((made[0].privateKeyId, "HASH_FUNCTION_KECCAK256"),
                                  (made[1].privateKeyId, "HASH_FUNCTION_NOT_APPLICABLE"),
                                  (imported_pk.privateKeyId, "HASH_FUNCTION_SHA256")):
        client.sign_raw_payload(SignRawPayloadBody(
            signWith=key_id, payload="deadbeef", encoding="PAYLOAD_ENCODING_HEXADECIMAL",
            hashFunction=hash_function))
    for payload, hash_function in (("zz", "HASH_FUNCTION_KECCAK256"),
                                   ("deadbeef", "HASH_FUNCTION_NO_OP")):
        bad_sign = _submit_raw(dep, "sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
            "signWith": made[0].privateKeyId, "payload": payload,
            "encoding": "PAYLOAD_ENCODING_HEXADECIMAL", "hashFunction": hash_function})
        assert bad_sign.status_code == 400, bad_sign.text
        error_bodies.append(bad_sign.text)

    for name, mnemonic, pw in (("created", created_mnemonic, ""),
                               ("imported", imported_mnemonic, passphrase)):
        seed = hd.mnemonic_to_seed(mnemonic, pw)
        texts[f"{name} mnemonic"] = mnemonic
        texts[f"{name} first words"] = " ".join(mnemonic.split()[:4])
        raw[f"{name} mnemonic"] = mnemonic.encode()
        raw[f"{name} seed"] = seed
        raw[f"{name} eth key"] = hd.derive_key(seed, Curve.SECP256K1, ETH["path"]).private_key_secret
        sol_key = hd.derive_key(seed, Curve.ED25519, SOL["path"])
        raw[f"{name} sol key"] = sol_key.private_key_secret
        raw[f"{name} sol keypair"] = sol_key.private_key_secret + sol_key.public_key
    texts["rejected mnemonic"] = rejected_mnemonic
    texts["rejected first words"] = " ".join(rejected_mnemonic.split()[:4])
    raw["rejected mnemonic"] = rejected_mnemonic.encode()
    texts["passphrase"] = passphrase
    keyring = keyring_of(dep.env).master
    for version, key in keyring.keys.items():
        raw[f"master key v{version}"] = key.key_secret
    raw["root key"] = root_key_of(dep.env)
    raw.update(_data_keys(dep))
    assert sum(name.startswith("data key") for name in raw) >= 8

    # The test learned every secret it searches for.
    assert len(raw["service key bundle-signer"]) == 32
    assert {name.split()[2] for name in raw if name.startswith("import target")} == {
        "wallet", "private_key"}, sorted(raw)
    assert sum(name.startswith("import target") for name in raw) == 3
    for name, secret in raw.items():
        assert len(secret) >= 32, name
    for name, text_secret in texts.items():
        assert len(text_secret) >= 12, name
    for name in ("leak-pk", "leak-pk-ed", "imported private key", "created eth key",
                 "created sol key", "imported eth key", "imported sol key"):
        assert len(raw[name]) == 32 and any(raw[name]), name
    assert len(error_bodies) == 4
    for body in error_bodies:
        assert {"code", "message", "details"} <= set(loads(body)), body

    needles = dict(texts)
    for name, secret in raw.items():
        needles.update(_encodings(name, secret))
    haystacks = {"database": _dump_database(dep).lower(), "logs": _logs(dep).lower(),
                 "error responses": "\n".join(error_bodies).lower()}
    # The dump covers the sealed tables and the logs were captured (public halves are there).
    assert created.walletId.lower() in haystacks["database"]
    assert signer_key.lower() in haystacks["database"]
    leak_pk = client.get_private_key(GetPrivateKeyBody(privateKeyId=made[0].privateKeyId))
    assert leak_pk.privateKey.publicKey.lower() in haystacks["database"]
    assert len(haystacks["logs"]) > 1000
    for where, haystack in haystacks.items():
        for what, needle in needles.items():
            assert needle.lower() not in haystack, f"{what} found in {where}"
    # The data dir, raw and in every encoding: no master, root or data key under any seal
    # (the static seal's own key file is there, but it is neither of them).
    files = _data_dir_files(dep)
    assert b"walletd-sealed-keyring/1" in files
    for name, secret in raw.items():
        assert secret not in files, f"{name} found raw in the data dir"
    lowered = files.lower()
    for what, needle in needles.items():
        assert needle.lower().encode() not in lowered, f"{what} found in the data dir"
