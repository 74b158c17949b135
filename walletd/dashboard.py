"""``walletd dashboard-link``: a one-time sign-in link to the dashboard for the root user.

    walletd dashboard-link [--key-file root-api-key.json] [--minutes 15] [--user-id ID]

Made with the root key file: a fresh P-256 API key of the root user (or, with ``--user-id``,
of another user of the root organization, e.g. an approver), expiring after
``--minutes``, is created over the public API (``create_api_keys``, stamped with the root
key); its private half travels in the link's fragment (``#link=…``), which browsers never
send to a server. The page makes its own P-256 session key with WebCrypto, registers it
with ``stamp_login`` stamped by the link's key, then deletes the link's key with the new
session: the link works once.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any

import requests

from infra.authproxy.keys import stamp_with
from infra.clock import now_ms
from infra.crypto import hpke
from infra.identity.root import KEY_FILE
from infra.settings import Settings


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--key-file", help=f"the root key file (default: <data dir>/{KEY_FILE})")
    parser.add_argument("--data-dir")
    parser.add_argument("--minutes", type=int, default=15, help="how long the link works")
    parser.add_argument("--user-id", help="sign in as this user of the organization (default: root)")


def make_link(record: dict[str, Any], base_url: str, minutes: int) -> str:
    """Create the link's API key and return the sign-in URL."""
    root = hpke.private_key_from_bytes(bytes.fromhex(record["apiPrivateKey"]))
    link_key = hpke.generate_private_key()
    public_hex = hpke.compressed(link_key.public_key()).hex()
    body = json.dumps({
        "type": "ACTIVITY_TYPE_CREATE_API_KEYS_V2", "timestampMs": str(now_ms()),
        "organizationId": record["organizationId"],
        "parameters": {"userId": record["userId"], "apiKeys": [{
            "apiKeyName": "dashboard sign-in link", "publicKey": public_hex,
            "curveType": "API_KEY_CURVE_P256", "expirationSeconds": str(minutes * 60)}]},
    }, separators=(",", ":")).encode()
    response = requests.post(f"{base_url}/public/v1/submit/create_api_keys", data=body, timeout=30,
                             headers={"Content-Type": "application/json",
                                      "X-Stamp": stamp_with(root, body)})
    if response.status_code != 200:
        raise RuntimeError(f"the API refused the link key: {response.text}")
    activity = response.json()["activity"]
    (result,) = activity["result"].values()
    numbers = link_key.private_numbers()
    link = {"organizationId": record["organizationId"], "userId": record["userId"],
            "apiKeyId": result["apiKeyIds"][0], "publicKey": public_hex,
            "d": _b64url(numbers.private_value.to_bytes(32, "big")),
            "x": _b64url(numbers.public_numbers.x.to_bytes(32, "big")),
            "y": _b64url(numbers.public_numbers.y.to_bytes(32, "big"))}
    return f"{base_url}/dashboard#link={_b64url(json.dumps(link).encode())}"


def run(args: argparse.Namespace, settings: Settings) -> int:
    path = Path(args.key_file) if args.key_file else settings.data_dir / KEY_FILE
    if not path.exists():
        print(f"no root key file at {path}; pass --key-file", file=sys.stderr)
        return 2
    record = json.loads(path.read_text())
    if args.user_id:
        record = {**record, "userId": args.user_id}
    base_url = (settings.base_url or record.get("baseUrl") or settings.effective_base_url).rstrip("/")
    print(make_link(record, base_url, args.minutes))
    print(f"(works once, for {args.minutes} minutes)", file=sys.stderr)
    return 0


COMMAND = (configure, run)
