"""A real delivery verified by ``@turnkey/crypto``'s ``verifyTurnkeyWebhookSignature``.

Needs ``node`` and the npm package ``@turnkey/crypto`` (>= 2.10) resolvable from ``NODE_PATH``
or ``./node_modules`` (``npm install @turnkey/crypto``); skipped otherwise. The verification key
is taken from the JWKS the service publishes, as a receiver would.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import select

from infra.clock import now_ms
from infra.db.models.webhooks import WebhookDelivery
from infra.webhooks.keystore import jwks_from_database
from notifier.actors import deliver_webhook
from tests.support.webhook_receiver import WebhookReceiver
from tests.support.webhook_world import World

ROOT = Path(__file__).resolve().parents[3]
VERIFY = """
const { verifyTurnkeyWebhookSignature } = require("@turnkey/crypto");
let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const p = JSON.parse(input);
  const result = verifyTurnkeyWebhookSignature({
    headers: p.headers,
    body: Buffer.from(p.body, "base64"),
    verificationKeys: p.keys,
    maxTimestampAgeMs: 300000,
    nowMs: p.nowMs,
  });
  process.stdout.write(JSON.stringify(result));
});
"""


def _node_env() -> dict[str, str] | None:
    node = shutil.which("node")
    if node is None:
        return None
    env = dict(os.environ)
    # `make install-test` installs the official package under tests/interop (package.json).
    paths = (env.get("NODE_PATH", ""), str(ROOT / "tests" / "interop" / "node_modules"),
             str(ROOT / "node_modules"))
    env["NODE_PATH"] = os.pathsep.join(p for p in paths if p)
    probe = subprocess.run([node, "-e", "require.resolve('@turnkey/crypto')"], env=env, capture_output=True)
    return env if probe.returncode == 0 else None


def _verify(payload: dict[str, object]) -> dict[str, object]:
    env = _node_env()
    if env is None:
        message = "node with @turnkey/crypto is not available (run `make install-test`)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + "; CI=true requires it")
        pytest.skip(message)
    out = subprocess.run(
        ["node", "-e", VERIFY],
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        check=True,
        timeout=60,
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def _delivered(world: World, receiver: WebhookReceiver) -> dict[str, object]:
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    with world.services.session_factory() as session:
        (delivery_id,) = session.scalars(select(WebhookDelivery.id)).all()
        jwks = jwks_from_database(session, now_ms=now_ms())
    assert deliver_webhook(world.notifier, delivery_id) == "SUCCEEDED"
    (got,) = receiver.wait_for(1)
    keys = [
        {
            "keyId": k["kid"],
            "publicKey": base64.urlsafe_b64decode(k["x"] + "=" * (-len(k["x"]) % 4)).hex(),
            "algorithm": "ed25519",
        }
        for k in jwks["keys"]
    ]
    return {
        "headers": got.headers,
        "body": base64.b64encode(got.body).decode(),
        "keys": keys,
        "nowMs": int(got.header("X-Turnkey-Timestamp") or 0) + 1000,
    }


def test_turnkey_sdk_accepts_our_signature(world: World, receiver: WebhookReceiver) -> None:
    payload = _delivered(world, receiver)
    result = _verify(payload)
    assert result["ok"] is True, result
    headers = payload["headers"]
    assert isinstance(headers, dict)
    assert result["eventId"] == headers.get("X-Turnkey-Event-Id")


def test_turnkey_sdk_rejects_a_tampered_body(world: World, receiver: WebhookReceiver) -> None:
    payload = _delivered(world, receiver)
    payload["body"] = base64.b64encode(b'{"tampered":true}').decode()
    result = _verify(payload)
    assert result == {"ok": False, "reason": "invalid_signature"}
