"""The auth proxy on the production path under the shamir seal (issue 21 left it untested).

``walletd auth-proxy`` under gunicorn (two worker processes) beside gunicorn ingress and
separate workers on PostgreSQL, ``WALLETD_SEAL=shamir``. While sealed, a proxy request that
needs the proxy key answers a clear wire error (503, ``{code, message, details}``, "sealed"),
never a bare 500 or a hang; ``walletd operator unseal`` with 3 of the 5 shares reaches the
proxy's processes too, after which the proxy opens its sealed API key and the public API
accepts its stamp; ``walletd operator seal`` refuses it again, clearly.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from infra.authproxy.keys import ProxyKey
from infra.seal.wiring import build_state
from infra.settings import Settings
from tests.e2e.auth_proxy.conftest import Proxied, completed, start_production
from tests.support.deployment import ROOT, WALLETD, Deployment
from tests.support.raw_api import RawApi

#: A sealed answer must come at once: well below the client's 30 s timeout.
PROMPT_S = 10.0


def _operator(dep: Deployment, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALLETD, "operator", *args], env=dep.env, cwd=ROOT, text=True,
                          input=stdin, capture_output=True, timeout=120)


def _status(dep: Deployment) -> dict[str, Any]:
    done = _operator(dep, "status")
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


@pytest.fixture(scope="module")
def sealed_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    with start_production(tmp_path_factory.mktemp("proxy-sealed"), WALLETD_SEAL="shamir",
                          WALLETD_SYNC_WAIT_MS="1500",
                          WALLETD_EMAIL_FROM="Wallet App <login@wallet.example>") as proxied:
        yield proxied


def _proxy_processes(dep: Deployment, count: int = 2, timeout: float = 60,
                     besides: frozenset[int] = frozenset()) -> list[dict[str, Any]]:
    """The auth proxy's processes (other than the pids ``besides``) as ``walletd operator
    status`` lists them (gunicorn starts its workers, and so their admin sockets, a moment
    after ``/health`` answers)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [p for p in _status(dep)["processes"]
                 if p.get("process") == "auth-proxy" and p.get("pid") not in besides]
        if len(found) >= count:
            return found
        assert time.monotonic() < deadline, (found, dep.log("auth-proxy"))
        time.sleep(0.5)


def _assert_sealed_answer(response: requests.Response) -> None:
    assert response.elapsed.total_seconds() < PROMPT_S, response.elapsed
    assert response.status_code == 503, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"code", "message", "details"}, body
    assert body["code"] == 14 and "sealed" in body["message"], body
    assert isinstance(body["details"], list), body


def _otp_init(proxied: Proxied, config_id: str, contact: str) -> requests.Response:
    return proxied.call("otp_init", {"otpType": "OTP_TYPE_EMAIL", "contact": contact}, config_id)


def _all_refused_sealed(proxied: Proxied, config_id: str, contact: str) -> None:
    # Several requests: both gunicorn workers answer (one of them may hold the configuration
    # in its cache, the other must read it with the proxy key). A contact each: the per-contact
    # limit (3 in 180 s) counts before the handler runs.
    for n in range(6):
        _assert_sealed_answer(_otp_init(proxied, config_id, f"{n}.{contact}"))


def test_the_proxy_is_sealed_until_a_quorum_unseals_it(sealed_proxy: Proxied) -> None:
    dep = sealed_proxy.dep
    given = dep.seal_init["shares"]
    assert len(given) == 5 and dep.seal_init["threshold"] == 3

    # Sealed from the start: the proxy's processes are reached by `walletd operator`.
    proxies = _proxy_processes(dep)
    assert all(p["sealed"] and p["type"] == "shamir" for p in proxies), proxies
    # The proxy cannot even read a configuration (that read is stamped with the proxy key).
    _all_refused_sealed(sealed_proxy, str(uuid.uuid4()), "early@example.com")

    # A quorum of 3 of the 5 shares, one `walletd operator unseal` each.
    for i, share in enumerate((given[4], given[1], given[2]), 1):
        done = _operator(dep, "unseal", "-", stdin=share + "\n")
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["sealed"] == (i < 3), done.stdout
    assert not any(p["sealed"] for p in _proxy_processes(dep)), _status(dep)

    # The proxy enabled for the root organization; the proxy user's API key is sealed to the
    # proxy key by the worker that makes it.
    api = RawApi(dep, dep.root, dep.root.organization_id)
    completed(api, "enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})
    config_id = api.read("get_auth_proxy_config")["config"]["configId"]

    # End to end: the proxy reads the configuration with its key, opens the sealed API key,
    # stamps INIT_OTP with it, and the public API accepts that stamp.
    for n in range(3):
        contact = f"unsealed{n}@example.com"
        init = _otp_init(sealed_proxy, config_id, contact)
        assert init.status_code == 200, init.text
        assert init.json()["otpId"]
        assert sealed_proxy.mailbox.last_to(contact)

    # Sealed again by an operator: refused clearly by every proxy process.
    sealed = _operator(dep, "seal")
    assert sealed.returncode == 0 and json.loads(sealed.stdout)["sealed"], sealed.stdout
    assert all(p["sealed"] for p in _proxy_processes(dep)), _status(dep)
    _all_refused_sealed(sealed_proxy, config_id, "resealed@example.com")

    # A restart of the proxy (the routine case under shamir): its new processes start sealed,
    # with no configuration cached, and are the ones the next quorum reaches.
    old_pids = frozenset(p["pid"] for p in _proxy_processes(dep))
    dep.kill("auth-proxy", signal.SIGTERM)
    dep.start_auth_proxy(sealed_proxy.proxy_url)
    restarted = _proxy_processes(dep, besides=old_pids)
    assert all(p["sealed"] for p in restarted), restarted
    _all_refused_sealed(sealed_proxy, config_id, "restarted@example.com")

    # And a quorum opens it once more.
    for share in given[:3]:
        assert _operator(dep, "unseal", share).returncode == 0
    assert not any(p["sealed"] for p in _proxy_processes(dep, besides=old_pids))
    for n in range(3):
        init = _otp_init(sealed_proxy, config_id, f"again{n}@example.com")
        assert init.status_code == 200, init.text

    # No share, and not the proxy key, in any log of the deployment.
    logs = "".join(p.read_text(errors="replace") for p in dep.workdir.glob("*.log"))
    assert not any(share in logs for share in given)
    state = build_state(Settings.from_env(dep.env))
    for share in given[:3]:
        state.submit_share(share)
    proxy_private = ProxyKey(state=state).private().private_numbers().private_value
    assert format(proxy_private, "064x") not in logs.lower()
