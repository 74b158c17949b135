"""IP allow-lists through the official ``turnkey-http`` client, on both paths.

Requests leave from loopback source addresses 127.0.0.x (``tests.support.source_address``);
IPv6 and unparseable addresses arrive the way a trusted proxy reports them, in
X-Forwarded-For, with ``WALLETD_RATE_LIMIT_FORWARDED_HOPS=1`` (the rate limiter's setting,
which the allow-lists share). Each test works in an organization of its own, so the lists
never touch another test.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import (
    CreateApiKeysBody,
    GetIpAllowlistBody,
    GetWhoamiBody,
    RemoveIpAllowlistBody,
    SetIpAllowlistBody,
)

from tests.support import services
from tests.support.auth_proxy import proxy_api_key
from tests.support.deployment import Deployment, Key, make_organization
from tests.support.keys import TestKey, make_key
from tests.support.raw_api import RawApi, stamp_headers
from tests.support.source_address import from_address

HOPS = {"WALLETD_RATE_LIMIT_FORWARDED_HOPS": "1"}


@pytest.fixture(scope="module", params=["embedded", "production"])
def dep(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    workdir = tmp_path_factory.mktemp(f"allowlists-{request.param}")
    if request.param == "embedded":
        made = Deployment.embedded(workdir, HOPS)
    else:
        # A database and vhost of its own: the session's ``production`` deployment has
        # bootstrapped ``pg_url`` already.
        services.require("PostgreSQL", "127.0.0.1", 5432)
        services.require("RabbitMQ", "127.0.0.1", 5672)
        database, vhost = services.create_database(), services.create_vhost()
        made = Deployment.production(workdir, database, vhost, HOPS)
    yield made
    made.stop()
    if request.param == "production":
        services.drop_database(database)
        services.delete_vhost(vhost)


#: A change reaches every process (production: each gunicorn worker) with its database
#: notification, milliseconds after the commit the activity answered after: requests right
#: after a change may be answered by a process that has not seen it yet, so an expected
#: answer is waited for (bounded), never assumed at once.
SETTLE_S = 10.0


def _whoami(dep: Deployment, key: Key, host: str) -> str:
    deadline = time.monotonic() + SETTLE_S
    while True:
        try:
            with from_address(host):
                return dep.client(key).get_whoami(GetWhoamiBody()).userId  # type: ignore[no-any-return]
        except TurnkeyNetworkError as ex:
            if ex.status_code != 403 or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _refused(dep: Deployment, key: Key, host: str) -> str:
    deadline = time.monotonic() + SETTLE_S
    while True:
        try:
            with from_address(host):
                dep.client(key).get_whoami(GetWhoamiBody())
        except TurnkeyNetworkError as ex:
            assert ex.status_code == 403, ex
            return str(ex)
        assert time.monotonic() < deadline, f"a request from {host} was not refused"
        time.sleep(0.1)


def _set(dep: Deployment, key: Key, host: str, **fields: object) -> None:
    with from_address(host):
        dep.client(key).set_ip_allowlist(SetIpAllowlistBody(**fields))


def _second_key(dep: Deployment, root: Key) -> Key:
    extra = make_key()
    dep.client(root).create_api_keys(CreateApiKeysBody(
        userId=root.user_id, apiKeys=[extra.api_key_params("second")]))
    return Key(root.organization_id, root.user_id, extra.public_key, extra.private_key)


def test_organization_list_allows_and_refuses_by_source_address(dep: Deployment) -> None:
    org = make_organization(dep, "allowlist org")
    assert _whoami(dep, org, "127.0.0.5") == org.user_id  # no list: everyone
    _set(dep, org, "127.0.0.1", enabled=True, onEvaluationError="DENY",
         rules=[{"cidr": "127.0.0.2/32", "label": "office"}, {"cidr": "127.0.0.2"},
                {"cidr": "127.0.1.9/24"}])
    with from_address("127.0.0.2"):
        listed = dep.client(org).get_ip_allowlist(GetIpAllowlistBody()).allowlist
    assert [r.cidr for r in listed.rules] == ["127.0.0.2/32", "127.0.1.0/24"]
    assert listed.rules[0].label == "office" and listed.enabled is True
    assert _whoami(dep, org, "127.0.0.2") == org.user_id
    message = _refused(dep, org, "127.0.0.3")
    assert "IP allowlist of organization" in message and "127.0.0.3" in message
    # Submits are refused too, before anything is stored.
    with from_address("127.0.0.3"), pytest.raises(TurnkeyNetworkError) as caught:
        dep.client(org).create_api_keys(CreateApiKeysBody(
            userId=org.user_id, apiKeys=[make_key().api_key_params("blocked")]))
    assert caught.value.status_code == 403
    # Disabled: nothing is enforced.
    _set(dep, org, "127.0.0.2", enabled=False, rules=[{"cidr": "127.0.0.2/32"}])
    assert _whoami(dep, org, "127.0.0.3") == org.user_id


def test_key_level_list_overrides_and_falls_back(dep: Deployment) -> None:
    org = make_organization(dep, "key override org")
    second = _second_key(dep, org)
    _set(dep, org, "127.0.0.1", publicKey=second.public_key, rules=[{"cidr": "127.0.0.3/32"}])
    # The organization's list is not there: the key's list is not enforced yet.
    assert _whoami(dep, second, "127.0.0.9") == org.user_id
    _set(dep, org, "127.0.0.1", enabled=True, rules=[{"cidr": "127.0.0.2/32"}])
    assert _whoami(dep, second, "127.0.0.3") == org.user_id  # the key's own list
    assert "IP allowlist of API key" in _refused(dep, second, "127.0.0.2")  # overrides the org's
    assert _whoami(dep, org, "127.0.0.2") == org.user_id  # the other key: the org's list
    _refused(dep, org, "127.0.0.3")
    # A key-level list without rules falls back to the organization's.
    _set(dep, org, "127.0.0.2", publicKey=second.public_key, rules=[])
    assert _whoami(dep, second, "127.0.0.2") == org.user_id
    assert "IP allowlist of organization" in _refused(dep, second, "127.0.0.3")
    with from_address("127.0.0.2"):
        dep.client(org).remove_ip_allowlist(RemoveIpAllowlistBody())
    assert _whoami(dep, second, "127.0.0.3") == org.user_id


def _forwarded(dep: Deployment, key: Key, forwarded_for: str, expected: int) -> int:
    """``get_whoami`` as a trusted proxy relays it for ``forwarded_for``; the status (waited
    for, bounded, to become ``expected``: see ``SETTLE_S``)."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        body = json.dumps({"organizationId": key.organization_id}).encode()
        headers = {**stamp_headers(dep, key, body), "X-Forwarded-For": forwarded_for}
        response = dep.post("/public/v1/query/whoami", body, headers)
        if response.status_code == expected or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if response.status_code != 200:
        assert response.status_code == 403, response.text
        assert set(response.json()) == {"code", "message", "details"}
    return response.status_code


def test_ipv6_rules_and_evaluation_errors(dep: Deployment) -> None:
    org = make_organization(dep, "ipv6 org")
    _set(dep, org, "127.0.0.1", enabled=True,
         rules=[{"cidr": "2001:db8::1/64"}, {"cidr": "::1"}, {"cidr": "127.0.0.1/32"}])
    assert _forwarded(dep, org, "::1", 200) == 200
    assert _forwarded(dep, org, "2001:db8::abcd", 200) == 200
    assert _forwarded(dep, org, "2001:db9::1", 403) == 403
    # An address that cannot be evaluated: DENY by default, ALLOW when asked for.
    assert _forwarded(dep, org, "not-an-address", 403) == 403
    _set(dep, org, "127.0.0.1", enabled=True, onEvaluationError="ALLOW",
         rules=[{"cidr": "::1/128"}])
    assert _forwarded(dep, org, "not-an-address", 200) == 200
    assert _forwarded(dep, org, "2001:db9::1", 403) == 403


def test_invalid_rules_are_refused_with_their_index(dep: Deployment) -> None:
    org = make_organization(dep, "invalid rules org")
    cases = [([{"cidr": "10.0.0.0/8"}, {"cidr": "300.1.2.3/24"}], "rules[1]"),
             ([{"cidr": "0.0.0.0/0"}], "rules[0]"),
             ([{"cidr": "2001:db8::/8"}], "rules[0]"),
             ([{"cidr": f"10.0.{i // 256}.{i % 256}/32"} for i in range(101)], "at most 100")]
    for rules, expected in cases:
        with pytest.raises(TurnkeyNetworkError) as caught:
            dep.client(org).set_ip_allowlist(SetIpAllowlistBody(enabled=True, rules=rules))
        assert caught.value.status_code == 400 and expected in str(caught.value), caught.value
    with pytest.raises(TurnkeyNetworkError) as caught:
        dep.client(org).set_ip_allowlist(SetIpAllowlistBody(
            enabled=True, onEvaluationError="MAYBE", rules=[]))
    assert caught.value.status_code == 400
    # Nothing was stored by any of them.
    assert dep.client(org).get_ip_allowlist(GetIpAllowlistBody()).allowlist.rules == []


def test_requests_signed_by_the_auth_proxy_are_exempt(dep: Deployment) -> None:
    org = make_organization(dep, "proxy org")
    api = RawApi(dep, org, org.organization_id)
    api.ok("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})
    config_id = api.read("get_auth_proxy_config")["config"]["configId"]
    proxy: TestKey = proxy_api_key(dep, config_id)
    _set(dep, org, "127.0.0.1", enabled=True, rules=[{"cidr": "127.0.0.2/32"}])
    with from_address("127.0.0.9"):
        as_proxy = RawApi(dep, proxy, org.organization_id).query("whoami")
        as_root = RawApi(dep, org, org.organization_id).query("whoami")
    assert as_proxy.status_code == 200, as_proxy.text
    assert as_root.status_code == 403, as_root.text


def test_sub_organizations_have_no_list(dep: Deployment) -> None:
    parent = make_organization(dep, "parent org")
    child = make_organization(dep, "child org", parent_id=parent.organization_id)
    with pytest.raises(TurnkeyNetworkError) as caught:
        dep.client(child).set_ip_allowlist(SetIpAllowlistBody(enabled=True, rules=[]))
    assert caught.value.status_code == 400 and "parent organization only" in str(caught.value)
    _set(dep, parent, "127.0.0.1", enabled=True, rules=[{"cidr": "127.0.0.2/32"}])
    assert _whoami(dep, child, "127.0.0.9") == child.user_id  # its own credential: not evaluated
