"""Auth proxy helpers for tests: read a configuration as the proxy does, open its key."""

from __future__ import annotations

import json
import time
from typing import Any

import requests

from infra.authproxy.keys import ProxyKey
from infra.crypto import hpke
from tests.support.deployment import Deployment
from tests.support.keys import TestKey
from tests.support.seal import unsealed_state


def proxy_key(dep: Deployment) -> ProxyKey:
    """The deployment's auth proxy key (from its sealed keyring, as the proxy opens it)."""
    return ProxyKey(state=unsealed_state(dep.env))


def config_body(config_id: str) -> bytes:
    return json.dumps({"configId": config_id,
                       "timestampMs": str(time.time_ns() // 1_000_000)}).encode()


def read_config(dep: Deployment, config_id: str) -> requests.Response:
    """``POST /public/v1/auth_proxy/config`` stamped with the proxy key."""
    body = config_body(config_id)
    return dep.post("/public/v1/auth_proxy/config", body,
                    {"X-Stamp": proxy_key(dep).stamp(body), "Content-Type": "application/json"})


def proxy_api_key(dep: Deployment, config_id: str) -> TestKey:
    """The proxy user's API key, opened with the proxy key (what the proxy signs with)."""
    response = read_config(dep, config_id)
    assert response.status_code == 200, response.text
    config: dict[str, Any] = response.json()["config"]
    with proxy_key(dep).api_key(config["sealedApiKey"]) as private:
        public = hpke.compressed(private.public_key()).hex()
        assert public == config["apiPublicKey"]
        return TestKey("API_KEY_CURVE_P256", public,
                       format(private.private_numbers().private_value, "064x"), private)


def client_signature(key: TestKey, message: dict[str, Any]) -> dict[str, str]:
    """``v1ClientSignature`` as ``@turnkey/core`` makes it: raw r‖s over the JSON message."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    text = json.dumps(message, separators=(",", ":"))
    private = hpke.private_key_from_bytes(bytes.fromhex(key.private_key))
    r, s = decode_dss_signature(private.sign(text.encode(), ec.ECDSA(hashes.SHA256())))
    return {"publicKey": key.public_key, "scheme": "CLIENT_SIGNATURE_SCHEME_API_P256",
            "message": text, "signature": (r.to_bytes(32, "big") + s.to_bytes(32, "big")).hex()}


def token_claims(token: str) -> dict[str, Any]:
    """The unverified claims of a JWT (as ``decodeVerificationToken`` reads them)."""
    import base64

    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]
