"""The seal types: what wraps the root key at rest.

Every seal turns the 32-byte root key into a string stored in the sealed keyring
(``wrap``) and back (``unwrap``), binding the deployment id so a wrapped root of another
deployment is refused:

- ``static``: AES-256-GCM under a key file next to the data (development only: whoever copies
  the data dir has everything).
- ``shamir``: AES-256-GCM under a key-encryption key that exists only as SLIP-39 shares
  held by people; built with the combined key (:class:`ShamirSeal`).
- ``transit``: OpenBao/Vault transit ``encrypt``/``decrypt`` (the key never leaves the server).
- ``pkcs11``: a non-extractable AES-256 key in a PKCS#11 token, AES-GCM (``CKM_AES_GCM``) with
  fixed associated data.
- ``awskms``: AWS KMS ``Encrypt``/``Decrypt`` with an encryption context naming the deployment.

An auto-unseal seal that cannot be reached raises :class:`SealUnavailable` (the process stays
sealed and retries); a wrapped root that does not open raises :class:`Sealed`.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
from pathlib import Path
from typing import Any, Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from infra.seal.config import TYPES, SealConfig
from infra.seal.errors import Sealed, SealMismatch, SealUnavailable
from infra.seal.sealed_file import b64u, unb64u

_NONCE = 12


def _aad(kind: str, deployment: str) -> bytes:
    return f"walletd/root-key/v1|{kind}|{deployment}".encode()


def _gcm_wrap(key: bytes, root: bytes, aad: bytes) -> str:
    nonce = os.urandom(_NONCE)
    return b64u(nonce + AESGCM(key).encrypt(nonce, root, aad))


def _gcm_unwrap(key: bytes, wrapped: str, aad: bytes, what: str) -> bytes:
    try:
        blob = unb64u(wrapped)
        return AESGCM(key).decrypt(blob[:_NONCE], blob[_NONCE:], aad)
    except (InvalidTag, ValueError, binascii.Error):
        raise Sealed(f"the root key does not unwrap with {what} (wrong key, or the sealed "
                     "keyring was tampered with)") from None


class Seal(Protocol):
    """Wraps the root key at rest."""

    type: str
    auto: bool

    def describe(self) -> dict[str, Any]:
        """Non-secret parameters recorded in the sealed keyring (``seal`` object)."""

    def wrap(self, root: bytes, deployment: str) -> str:
        """The root key wrapped (stored in the file)."""

    def unwrap(self, wrapped: str, deployment: str) -> bytes:
        """The root key back."""


def _read_secret_file(path: str, what: str) -> str:
    p = Path(path)
    try:
        if p.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise SealUnavailable(f"{what} {p} is accessible by group or others; chmod 600 it")
        return p.read_text(encoding="utf-8").strip()
    except OSError as ex:
        raise SealUnavailable(f"cannot read {what} {p}: {ex.strerror}") from None


class StaticSeal:
    """A key file beside the data: development only."""

    type = "static"
    auto = True

    def __init__(self, key_file: str) -> None:
        self.key_file = key_file

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "key_file": self.key_file}

    def _key(self, create: bool) -> bytes:
        p = Path(self.key_file)
        if create and not p.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "w") as fh:
                    fh.write(base64.b64encode(os.urandom(32)).decode() + "\n")
        try:
            key = base64.b64decode(_read_secret_file(self.key_file, "the static seal key"),
                                   validate=True)
        except (ValueError, binascii.Error):
            raise SealUnavailable(f"the static seal key {p} is malformed") from None
        if len(key) != 32:
            raise SealUnavailable(f"the static seal key {p} is not 32 bytes")
        return key

    def wrap(self, root: bytes, deployment: str) -> str:
        return _gcm_wrap(self._key(create=True), root, _aad(self.type, deployment))

    def unwrap(self, wrapped: str, deployment: str) -> bytes:
        return _gcm_unwrap(self._key(create=False), wrapped, _aad(self.type, deployment),
                           "the static seal key")


class ShamirSeal:
    """The key-encryption key combined from shares (or freshly made at init/rekey)."""

    type = "shamir"
    auto = False

    def __init__(self, kek: bytes, shares: int = 0, threshold: int = 0) -> None:
        self._kek = kek
        self.shares = shares
        self.threshold = threshold

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "shares": self.shares, "threshold": self.threshold}

    def wrap(self, root: bytes, deployment: str) -> str:
        return _gcm_wrap(self._kek, root, _aad(self.type, deployment))

    def unwrap(self, wrapped: str, deployment: str) -> bytes:
        return _gcm_unwrap(self._kek, wrapped, _aad(self.type, deployment),
                           "these shares (they combine to another key)")


class TransitSeal:
    """OpenBao / Vault transit: ``POST <mount>/encrypt/<key>`` and ``<mount>/decrypt/<key>``.

    The token needs only ``update`` on those two paths (docs/CUSTODY.md has the policy).
    """

    type = "transit"
    auto = True

    def __init__(self, config: SealConfig) -> None:
        if not config.transit_address:
            raise SealMismatch("WALLETD_SEAL=transit needs WALLETD_SEAL_TRANSIT_ADDRESS")
        self.config = config

    def describe(self) -> dict[str, Any]:
        c = self.config
        return {"type": self.type, "address": c.transit_address, "mount": c.transit_mount,
                "key_name": c.transit_key_name}

    def _token(self) -> str:
        c = self.config
        if c.transit_token:
            return c.transit_token
        if c.transit_token_file:
            return _read_secret_file(c.transit_token_file, "the transit token file")
        raise SealUnavailable("WALLETD_SEAL=transit needs WALLETD_SEAL_TRANSIT_TOKEN or "
                              "WALLETD_SEAL_TRANSIT_TOKEN_FILE")

    def _call(self, op: str, body: dict[str, str]) -> dict[str, Any]:
        import requests

        c = self.config
        url = f"{c.transit_address}/v1/{c.transit_mount}/{op}/{c.transit_key_name}"
        verify: bool | str = False if c.transit_tls_skip_verify else (c.transit_ca_cert or True)
        cert = (c.transit_client_cert, c.transit_client_key) if c.transit_client_cert else None
        try:
            answer = requests.post(url, json=body, headers={"X-Vault-Token": self._token()},
                                   timeout=c.transit_timeout_s, verify=verify, cert=cert)
        except requests.RequestException as ex:
            raise SealUnavailable(f"transit at {c.transit_address} is unreachable "
                                  f"({type(ex).__name__})") from None
        if answer.status_code in (401, 403):
            raise SealUnavailable(f"transit refused the token ({answer.status_code}): it needs "
                                  f"update on {c.transit_mount}/{op}/{c.transit_key_name}")
        if answer.status_code == 400 and op == "decrypt":
            raise Sealed("transit could not decrypt the wrapped root key (another key, or the "
                         "sealed keyring was tampered with)")
        if answer.status_code != 200:
            raise SealUnavailable(f"transit answered {answer.status_code} to {op}")
        data = answer.json().get("data")
        if not isinstance(data, dict):
            raise SealUnavailable(f"transit's {op} answer has no data")
        return data

    def wrap(self, root: bytes, deployment: str) -> str:
        del deployment  # the keyring's own AAD binds the deployment; transit keys are not derived
        data = self._call("encrypt", {"plaintext": base64.b64encode(root).decode()})
        return str(data["ciphertext"])

    def unwrap(self, wrapped: str, deployment: str) -> bytes:
        del deployment
        data = self._call("decrypt", {"ciphertext": wrapped})
        try:
            return base64.b64decode(data["plaintext"], validate=True)
        except (KeyError, ValueError, binascii.Error):
            raise SealUnavailable("transit's decrypt answer has no plaintext") from None


class Pkcs11Seal:
    """A pre-created, non-extractable AES-256 key (by label) in a PKCS#11 token."""

    type = "pkcs11"
    auto = True

    def __init__(self, config: SealConfig) -> None:
        if not (config.pkcs11_library and config.pkcs11_token_label):
            raise SealMismatch("WALLETD_SEAL=pkcs11 needs WALLETD_SEAL_PKCS11_LIBRARY and "
                               "WALLETD_SEAL_PKCS11_TOKEN_LABEL")
        if config.pkcs11_mechanism != "aes-gcm":
            raise SealMismatch("WALLETD_SEAL_PKCS11_MECHANISM: only aes-gcm (CKM_AES_GCM with "
                               "fixed associated data) is supported")
        self.config = config

    def describe(self) -> dict[str, Any]:
        c = self.config
        return {"type": self.type, "token_label": c.pkcs11_token_label,
                "key_label": c.pkcs11_key_label, "mechanism": c.pkcs11_mechanism}

    def _pin(self) -> str:
        c = self.config
        if c.pkcs11_pin:
            return c.pkcs11_pin
        if c.pkcs11_pin_file:
            return _read_secret_file(c.pkcs11_pin_file, "the PKCS#11 PIN file")
        raise SealUnavailable("WALLETD_SEAL=pkcs11 needs WALLETD_SEAL_PKCS11_PIN or _PIN_FILE")

    def _with_key(self, use: Any) -> Any:
        import pkcs11
        from pkcs11 import KeyType, ObjectClass
        from pkcs11.exceptions import NoSuchToken, PKCS11Error

        c = self.config
        try:
            lib = pkcs11.lib(c.pkcs11_library)
            try:
                token = lib.get_token(token_label=c.pkcs11_token_label)
            except NoSuchToken:  # plugged in (or created) after the library was loaded
                lib.reinitialize()
                token = lib.get_token(token_label=c.pkcs11_token_label)
            with token.open(user_pin=self._pin()) as session:
                key = session.get_key(object_class=ObjectClass.SECRET_KEY, key_type=KeyType.AES,
                                      label=c.pkcs11_key_label)
                return use(key)
        except (PKCS11Error, RuntimeError, OSError) as ex:
            raise SealUnavailable(f"the PKCS#11 token {c.pkcs11_token_label!r} cannot be used "
                                  f"({type(ex).__name__})") from None

    def wrap(self, root: bytes, deployment: str) -> str:
        from pkcs11 import Mechanism
        from pkcs11.mechanisms import GCMParams

        nonce = os.urandom(_NONCE)
        blob = self._with_key(lambda key: key.encrypt(
            root, mechanism=Mechanism.AES_GCM,
            mechanism_param=GCMParams(nonce, _aad(self.type, deployment))))
        return "gcm:" + b64u(nonce + bytes(blob))

    def unwrap(self, wrapped: str, deployment: str) -> bytes:
        from pkcs11 import Mechanism
        from pkcs11.exceptions import PKCS11Error
        from pkcs11.mechanisms import GCMParams

        kind, _, body = wrapped.partition(":")
        try:
            if kind != "gcm":
                raise ValueError(kind)
            blob = unb64u(body)
        except (ValueError, binascii.Error):
            raise Sealed("the wrapped root key is malformed") from None

        def decrypt(key: Any) -> bytes:
            try:
                return bytes(key.decrypt(blob[_NONCE:], mechanism=Mechanism.AES_GCM,
                                         mechanism_param=GCMParams(blob[:_NONCE],
                                                                   _aad(self.type, deployment))))
            except PKCS11Error:
                raise Sealed("the root key does not unwrap with the PKCS#11 key (another key, "
                             "or the sealed keyring was tampered with)") from None

        return bytes(self._with_key(decrypt))


class AwsKmsSeal:
    """AWS KMS ``Encrypt``/``Decrypt`` with ``{"walletd:deployment": <name>}`` as context."""

    type = "awskms"
    auto = True

    def __init__(self, config: SealConfig) -> None:
        if not config.awskms_key_id:
            raise SealMismatch("WALLETD_SEAL=awskms needs WALLETD_SEAL_AWSKMS_KEY_ID")
        self.config = config

    def describe(self) -> dict[str, Any]:
        c = self.config
        return {"type": self.type, "key_id": c.awskms_key_id, "region": c.awskms_region}

    def _context(self, deployment: str) -> dict[str, str]:
        return {"walletd:deployment": self.config.awskms_context or deployment}

    def _client(self) -> Any:
        import boto3
        from botocore.config import Config

        c = self.config
        return boto3.client("kms", region_name=c.awskms_region or "us-east-1",
                            endpoint_url=c.awskms_endpoint or None,
                            config=Config(retries={"max_attempts": 2}, connect_timeout=5,
                                          read_timeout=10))

    def wrap(self, root: bytes, deployment: str) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            answer = self._client().encrypt(KeyId=self.config.awskms_key_id, Plaintext=root,
                                            EncryptionContext=self._context(deployment))
        except (BotoCoreError, ClientError) as ex:
            raise SealUnavailable(f"AWS KMS cannot encrypt ({type(ex).__name__})") from None
        return b64u(answer["CiphertextBlob"])

    def unwrap(self, wrapped: str, deployment: str) -> bytes:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            blob = unb64u(wrapped)
        except (ValueError, binascii.Error):
            raise Sealed("the wrapped root key is malformed") from None
        try:
            answer = self._client().decrypt(CiphertextBlob=blob, KeyId=self.config.awskms_key_id,
                                            EncryptionContext=self._context(deployment))
        except ClientError as ex:
            code = ex.response.get("Error", {}).get("Code", "")
            if code in ("InvalidCiphertextException", "IncorrectKeyException"):
                raise Sealed("AWS KMS refused the wrapped root key (another key or context, or "
                             "the sealed keyring was tampered with)") from None
            raise SealUnavailable(f"AWS KMS cannot decrypt ({code or 'error'})") from None
        except BotoCoreError as ex:
            raise SealUnavailable(f"AWS KMS is unreachable ({type(ex).__name__})") from None
        return bytes(answer["Plaintext"])


def auto_seal(kind: str, config: SealConfig) -> Seal:
    """The auto-unseal seal of ``kind`` built from ``config``."""
    if kind == "static":
        return StaticSeal(config.static_key_file)
    if kind == "transit":
        return TransitSeal(config)
    if kind == "pkcs11":
        return Pkcs11Seal(config)
    if kind == "awskms":
        return AwsKmsSeal(config)
    if kind == "shamir":
        raise SealMismatch("the shamir seal is opened with shares, not configuration")
    raise SealMismatch(f"unknown seal type {kind!r}; one of {', '.join(TYPES)}")
