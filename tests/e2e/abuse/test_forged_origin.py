"""IP allow-lists against a client that writes its own address headers, on both paths.

The attacker holds a valid API key of an organization whose allow-list admits only
127.0.0.2, and connects from 127.0.0.9 to an ingress with no trusted proxy in front
(``WALLETD_RATE_LIMIT_FORWARDED_HOPS`` unset: 0). They claim the allowed address in every
header a proxy might write (``X-Forwarded-For``, ``Forwarded``, ``X-Real-IP``, also as an
IPv4-mapped IPv6 address), on a query and on a submit. Only the socket's peer counts: each
is refused, and the refused submit stores nothing. The honest client at 127.0.0.2 passes.
"""

from __future__ import annotations

import json
import time

import requests
from sqlalchemy import func, select

from infra.db.engine import make_engine, make_session_factory
from infra.db.models.organizations import ApiKey
from tests.support.deployment import Deployment, Key, database_url, make_organization
from tests.support.keys import make_key
from tests.support.raw_api import envelope, stamp_headers
from tests.support.source_address import from_address

ALLOWED = "127.0.0.2"
ATTACKER = "127.0.0.9"
FORGED = [{"X-Forwarded-For": ALLOWED}, {"X-Forwarded-For": f"::ffff:{ALLOWED}"},
          {"X-Forwarded-For": f"{ALLOWED}, {ALLOWED}"}, {"Forwarded": f"for={ALLOWED}"},
          {"Forwarded": f'for="[::ffff:{ALLOWED}]"'}, {"X-Real-IP": ALLOWED}]
#: A list change reaches every production process with its database notification, just
#: after the commit: an expected answer is waited for (bounded), never assumed at once.
SETTLE_S = 10.0


def _whoami(dep: Deployment, key: Key, host: str, extra: dict[str, str]) -> requests.Response:
    body = json.dumps({"organizationId": key.organization_id}).encode()
    with from_address(host):
        return dep.post("/public/v1/query/whoami", body, {**stamp_headers(dep, key, body), **extra})


def _until(dep: Deployment, key: Key, host: str, status: int) -> None:
    deadline = time.monotonic() + SETTLE_S
    while _whoami(dep, key, host, {}).status_code != status:
        assert time.monotonic() < deadline, f"whoami from {host} never answered {status}"
        time.sleep(0.1)


def _keys(dep: Deployment, organization_id: str) -> int:
    engine = make_engine(database_url(dep), pool_size=1)
    try:
        with make_session_factory(engine)() as session:
            return int(session.scalar(select(func.count()).select_from(ApiKey).where(
                ApiKey.organization_id == organization_id)) or 0)
    finally:
        engine.dispose()


def test_forged_address_headers_do_not_pass_an_allow_list(deployment: Deployment) -> None:
    org = make_organization(deployment, f"forged origin {time.time_ns()}")
    body = envelope("ACTIVITY_TYPE_SET_IP_ALLOWLIST", org.organization_id, {
        "enabled": True, "rules": [{"cidr": f"{ALLOWED}/32"}]})
    with from_address(ALLOWED):
        response = deployment.post("/public/v1/submit/set_ip_allowlist", body,
                                   stamp_headers(deployment, org, body))
    assert response.status_code == 200, response.text
    _until(deployment, org, ALLOWED, 200)
    _until(deployment, org, ATTACKER, 403)
    stored = _keys(deployment, org.organization_id)
    for headers in FORGED:
        refused = _whoami(deployment, org, ATTACKER, headers)
        assert refused.status_code == 403, (headers, refused.text)
        assert ATTACKER in refused.json()["message"], refused.text
        assert refused.json()["details"][0]["turnkeyErrorCode"] == "IP_NOT_ALLOWED"
        submit = envelope("ACTIVITY_TYPE_CREATE_API_KEYS_V2", org.organization_id, {
            "userId": org.user_id, "apiKeys": [make_key().api_key_params("smuggled")]})
        with from_address(ATTACKER):
            refused = deployment.post("/public/v1/submit/create_api_keys", submit,
                                      {**stamp_headers(deployment, org, submit), **headers})
        assert refused.status_code == 403, (headers, refused.text)
    assert _keys(deployment, org.organization_id) == stored
    # Honest: the allowed address, with or without a header of its own, passes.
    assert _whoami(deployment, org, ALLOWED, {}).status_code == 200
    assert _whoami(deployment, org, ALLOWED, {"X-Forwarded-For": ATTACKER}).status_code == 200
