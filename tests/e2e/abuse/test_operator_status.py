"""What the service says about itself is the operator's (issue 31 item 5).

The attacker signs up anonymously through a tenant's auth proxy with an API key of their own:
they hold a sub-organization's credential. They ask ``get_seal_status`` (seal type, live
unseal progress: when the service is sealed and a restart is under way) and
``get_service_status`` (walletd's exact version and schema revision: which advisory applies).
Both must answer 403 naming the rule, for their own sub-organization and for its parent's id;
the operator (a top-level organization's credential: the deployment's root, or the tenant)
still reads both.
"""

from __future__ import annotations

import pytest

from tests.e2e.abuse.conftest import World, as_user, signed_up, signup
from tests.e2e.auth_proxy.conftest import Tenant
from tests.support.keys import make_key
from tests.support.raw_api import RawApi

QUERIES = ("get_seal_status", "get_service_status")


@pytest.mark.parametrize("query", QUERIES)
def test_a_signed_up_sub_organization_cannot_read_the_service_state(
        world: World, tenant: Tenant, query: str) -> None:
    key = make_key()
    org, _ = signed_up(signup(world, tenant, api_keys=[key.api_key_params("mallory")]))
    mallory = as_user(world, org, key)
    assert mallory.read("whoami")["organizationId"] == org  # the credential works

    refused = mallory.query(query)
    assert refused.status_code == 403, refused.text
    body = refused.json()
    assert set(body) == {"code", "message", "details"} and body["code"] == 7
    assert query in body["message"] and "top-level organization" in body["message"]
    assert "sealType" not in refused.text and "walletdVersion" not in refused.text

    # Naming the parent does not help: a sub-organization's credential does not reach it.
    upward = mallory.query(query, organization_id=tenant.api.organization_id)
    assert upward.status_code in (401, 403), upward.text
    assert "sealType" not in upward.text and "walletdVersion" not in upward.text


@pytest.mark.parametrize("query", QUERIES)
def test_the_operator_still_reads_the_service_state(world: World, tenant: Tenant,
                                                    query: str) -> None:
    root = RawApi(world.dep, world.dep.root, world.dep.root.organization_id)
    key = make_key()
    org, _ = signed_up(signup(world, tenant, api_keys=[key.api_key_params("alice")]))
    for api, organization_id in ((root, None), (tenant.api, None),
                                 (tenant.api, org)):  # a parent reading its sub-organization
        answer = api.read(query, organization_id=organization_id)
        assert ("sealType" in answer) if query == "get_seal_status" else (
            answer["walletdVersion"] and answer["databaseRevision"])
