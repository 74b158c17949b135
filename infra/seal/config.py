"""The seal's configuration: ``WALLETD_SEAL`` and its type's ``WALLETD_SEAL_*`` variables.

The settings keep the raw ``WALLETD_SEAL*`` values (``Settings.seal_env``); the ingress
role's settings carry none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

TYPES = ("static", "shamir", "transit", "pkcs11", "awskms")
AUTO_TYPES = ("static", "transit", "pkcs11", "awskms")


@dataclass(frozen=True)
class SealConfig:
    """Everything a seal needs besides what the sealed keyring file records."""

    type: str = ""  # empty: the type the sealed keyring records (or the role's default)
    keyring_file: str = ""
    socket_dir: str = ""
    static_key_file: str = ""
    #: ``WALLETD_SEAL_ALLOW_STATIC``: a production process (``walletd worker``, ``auth-proxy``)
    #: accepts the static seal only with it (``infra.seal.wiring.refuse_static``).
    allow_static: bool = False
    unseal_timeout_s: float = 600.0
    retry_s: float = 5.0
    transit_address: str = ""
    transit_token: str = field(default="", repr=False)
    transit_token_file: str = ""
    transit_key_name: str = "walletd-seal"
    transit_mount: str = "transit"
    transit_ca_cert: str = ""
    transit_client_cert: str = ""
    transit_client_key: str = ""
    transit_tls_skip_verify: bool = False
    transit_timeout_s: float = 5.0
    pkcs11_library: str = ""
    pkcs11_token_label: str = ""
    pkcs11_pin: str = field(default="", repr=False)
    pkcs11_pin_file: str = ""
    pkcs11_key_label: str = "walletd-seal"
    pkcs11_mechanism: str = "aes-gcm"
    awskms_key_id: str = ""
    awskms_region: str = ""
    awskms_endpoint: str = ""
    awskms_context: str = ""

    @classmethod
    def from_env(cls, env: dict[str, str], data_dir: Path, keyring_file: str) -> SealConfig:
        def get(name: str, default: str = "") -> str:
            return env.get(f"WALLETD_SEAL_{name}", default)

        return cls(
            type=env.get("WALLETD_SEAL", "").strip().lower(),
            keyring_file=keyring_file,
            socket_dir=get("SOCKET_DIR", str(data_dir / "run")),
            static_key_file=get("STATIC_KEY_FILE", str(data_dir / "static-seal.key")),
            allow_static=get("ALLOW_STATIC").strip().lower() in ("1", "true", "yes"),
            unseal_timeout_s=float(get("UNSEAL_TIMEOUT_S", "600")),
            retry_s=float(get("RETRY_S", "5")),
            transit_address=get("TRANSIT_ADDRESS").rstrip("/"),
            transit_token=get("TRANSIT_TOKEN"),
            transit_token_file=get("TRANSIT_TOKEN_FILE"),
            transit_key_name=get("TRANSIT_KEY_NAME", "walletd-seal"),
            transit_mount=get("TRANSIT_MOUNT", "transit").strip("/"),
            transit_ca_cert=get("TRANSIT_CA_CERT"),
            transit_client_cert=get("TRANSIT_CLIENT_CERT"),
            transit_client_key=get("TRANSIT_CLIENT_KEY"),
            transit_tls_skip_verify=get("TRANSIT_TLS_SKIP_VERIFY").lower() in ("1", "true", "yes"),
            transit_timeout_s=float(get("TRANSIT_TIMEOUT_S", "5")),
            pkcs11_library=get("PKCS11_LIBRARY"),
            pkcs11_token_label=get("PKCS11_TOKEN_LABEL"),
            pkcs11_pin=get("PKCS11_PIN"),
            pkcs11_pin_file=get("PKCS11_PIN_FILE"),
            pkcs11_key_label=get("PKCS11_KEY_LABEL", "walletd-seal"),
            pkcs11_mechanism=get("PKCS11_MECHANISM", "aes-gcm").lower(),
            awskms_key_id=get("AWSKMS_KEY_ID"),
            awskms_region=get("AWSKMS_REGION", env.get("AWS_REGION", "")),
            awskms_endpoint=get("AWSKMS_ENDPOINT"),
            awskms_context=get("AWSKMS_CONTEXT"),
        )
