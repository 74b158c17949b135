"""The full tenancy matrix (PROTOCOL.md §1.4), generated from the registries.

Every registered submit path and every registered query path is sent against a
sub-organization with a credential of its parent, of a sibling sub-organization and of an
unrelated organization, and every path is sent against the parent with the sub-organization's
own credential. A new activity or query type is covered as soon as it is registered.

- sibling / unrelated → 401 (code 16) everywhere;
- parent → 403 (code 7) on every submit not designed to be parent-initiated, and never an
  auth error on queries (a 400/404 for the dummy body is fine);
- child → parent → 401 everywhere, except queries that resolve a sub-organization's
  credential downwards (``whoami``), which answer as the sub-organization.

Downward resolution itself (PROTOCOL.md §1.4) is tested at the end, through the official client.
"""

from __future__ import annotations

from typing import Any

import pytest
from turnkey_sdk_types import GetWhoamiBody

from infra.activities import registry as activity_registry
from infra.queries import registry as query_registry
from infra.queries.spec import QuerySpec
from tests.support import keys
from tests.support.deployment import Deployment, Key, make_organization
from tests.support.raw_api import RawApi, Stamper, create_sub_org, root_user_params
from tests.support.soft_authenticator import SoftAuthenticator

GRPC_PERMISSION_DENIED = 7
GRPC_UNAUTHENTICATED = 16

SUBMITS = [(spec.path, spec.versions[0].type, spec.parent_may_submit)
           for spec in activity_registry().all()]
QUERIES = sorted(query_registry().items())
OUTSIDERS = ["sibling", "unrelated"]


class Family:
    """A parent with two sub-organizations (target, sibling) and an unrelated organization."""

    def __init__(self, dep: Deployment) -> None:
        self.dep = dep
        self.parent = make_organization(dep, "matrix parent")
        api = RawApi(dep, self.parent, self.parent.organization_id)
        self.target_id, self.target_key, _ = create_sub_org(api, "matrix target")
        self.passkey = SoftAuthenticator()
        sibling_user = root_user_params("matrix sibling root")
        sibling_user["authenticators"] = [self.passkey.registration("sibling passkey")]
        self.sibling_id, self.sibling_key, _ = create_sub_org(api, "matrix sibling",
                                                              users=[sibling_user])
        self.unrelated = make_organization(dep, "matrix unrelated")

    def stamper(self, who: str) -> Stamper:
        stampers: dict[str, Stamper] = {"parent": self.parent, "target": self.target_key,
                                        "sibling": self.sibling_key, "unrelated": self.unrelated,
                                        "sibling passkey": self.passkey}
        return stampers[who]


@pytest.fixture(scope="module")
def family(embedded: Deployment) -> Family:
    return Family(embedded)


def _submit(dep: Deployment, stamper: Stamper, path: str, type_: str, organization_id: str,
            parameters: dict[str, Any] | None = None) -> Any:
    return RawApi(dep, stamper, organization_id).submit(path, type_, parameters or {})


def _query(dep: Deployment, stamper: Stamper, path: str, organization_id: str) -> Any:
    return RawApi(dep, stamper, organization_id).query(path)


def _assert_error(response: Any, status: int, code: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()
    assert set(error) == {"code", "message", "details"}, error
    assert error["code"] == code, error
    return error  # type: ignore[no-any-return]


@pytest.mark.parametrize("who", OUTSIDERS)
@pytest.mark.parametrize(("path", "type_"), [(p, t) for p, t, _ in SUBMITS])
def test_outsiders_submitting_in_a_sub_organization_are_unauthenticated(
        embedded: Deployment, family: Family, path: str, type_: str, who: str) -> None:
    response = _submit(embedded, family.stamper(who), path, type_, family.target_id)
    error = _assert_error(response, 401, GRPC_UNAUTHENTICATED)
    assert "could not find public key" in error["message"]


@pytest.mark.parametrize("who", OUTSIDERS)
@pytest.mark.parametrize("path", [p for p, _ in QUERIES])
def test_outsiders_reading_a_sub_organization_are_unauthenticated(
        embedded: Deployment, family: Family, path: str, who: str) -> None:
    response = _query(embedded, family.stamper(who), path, family.target_id)
    error = _assert_error(response, 401, GRPC_UNAUTHENTICATED)
    assert "could not find public key" in error["message"]


@pytest.mark.parametrize(("path", "type_", "parent_initiated"), SUBMITS)
def test_parent_submitting_in_a_sub_organization_is_forbidden(
        embedded: Deployment, family: Family, path: str, type_: str,
        parent_initiated: bool) -> None:
    response = _submit(embedded, family.parent, path, type_, family.target_id)
    if parent_initiated:  # designed to be initiated by the parent (§1.4): no auth error
        assert response.status_code not in (401, 403), response.text
        return
    error = _assert_error(response, 403, GRPC_PERMISSION_DENIED)
    assert "may read a sub-organization but not act in it" in error["message"]


@pytest.mark.parametrize("path", [p for p, _ in QUERIES])
def test_parent_reading_a_sub_organization_is_never_an_auth_error(
        embedded: Deployment, family: Family, path: str) -> None:
    response = _query(embedded, family.parent, path, family.target_id)
    assert response.status_code in (200, 400, 404), (path, response.text)
    if response.status_code != 200:
        assert set(response.json()) == {"code", "message", "details"}


#: Logins addressed to a parent resolve the user's sub-organization (PROTOCOL.md §6).
LOGINS = {spec.path for spec in activity_registry().all() if spec.extra.get("login")}


@pytest.mark.parametrize(("path", "type_"), [(p, t) for p, t, _ in SUBMITS if p not in LOGINS])
def test_sub_organization_cannot_submit_in_its_parent(
        embedded: Deployment, family: Family, path: str, type_: str) -> None:
    response = _submit(embedded, family.target_key, path, type_, family.parent.organization_id)
    _assert_error(response, 401, GRPC_UNAUTHENTICATED)


@pytest.mark.parametrize(("path", "spec"), QUERIES)
def test_sub_organization_cannot_read_its_parent(
        embedded: Deployment, family: Family, path: str, spec: QuerySpec) -> None:
    response = _query(embedded, family.target_key, path, family.parent.organization_id)
    if spec.sub_organization_credentials:  # resolves downwards: answers as the sub-org
        assert response.status_code == 200, response.text
        assert response.json()["organizationId"] == family.target_id
        return
    _assert_error(response, 401, GRPC_UNAUTHENTICATED)


def test_parent_is_forbidden_whatever_the_body(embedded: Deployment, family: Family) -> None:
    """Tenancy comes before parameter validation: nonsense parameters still get a 403."""
    response = _submit(embedded, family.parent, "create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                       family.target_id, {"userTagName": 42, "nonsense": [1, 2]})
    _assert_error(response, 403, GRPC_PERMISSION_DENIED)


def test_sibling_passkey_is_unauthenticated(embedded: Deployment, family: Family) -> None:
    stamper = family.stamper("sibling passkey")
    # The passkey works in its own sub-organization...
    own = _query(embedded, stamper, "whoami", family.sibling_id)
    assert own.status_code == 200, own.text
    assert own.json()["organizationId"] == family.sibling_id
    # ...and nowhere in its sibling.
    submitted = _submit(embedded, stamper, "create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                        family.target_id, {"userTagName": "by sibling passkey", "userIds": []})
    _assert_error(submitted, 401, GRPC_UNAUTHENTICATED)
    read = _query(embedded, stamper, "get_organization", family.target_id)
    _assert_error(read, 401, GRPC_UNAUTHENTICATED)


def test_nothing_was_stored_by_the_matrix(embedded: Deployment, family: Family) -> None:
    """Runs last: no request of the matrix stored an activity in the target or the parent."""
    target = RawApi(embedded, family.target_key, family.target_id)
    assert target.read("list_activities")["activities"] == []
    parent = RawApi(embedded, family.parent, family.parent.organization_id)
    types = {a["type"] for a in parent.read("list_activities")["activities"]}
    assert types == {"ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7"}


# --------------------------------------------------------------------------- downward resolution


def _client_key(key: keys.TestKey, organization_id: str) -> Key:
    return Key(organization_id, "", key.public_key, key.private_key)


def test_whoami_for_the_parent_resolves_a_sub_organization_credential(
        embedded: Deployment, family: Family) -> None:
    client = embedded.client(_client_key(family.target_key, family.parent.organization_id))
    answer = client.get_whoami(GetWhoamiBody(organizationId=family.parent.organization_id))
    own = RawApi(embedded, family.target_key, family.target_id).read("whoami")
    assert answer.organizationId == family.target_id
    assert answer.userId == own["userId"]
    assert answer.organizationName == "matrix target"


def test_whoami_for_the_parent_resolves_a_sub_organization_passkey(
        embedded: Deployment, family: Family) -> None:
    response = _query(embedded, family.passkey, "whoami", family.parent.organization_id)
    assert response.status_code == 200, response.text
    assert response.json()["organizationId"] == family.sibling_id


def test_the_parent_own_credential_keeps_precedence(embedded: Deployment,
                                                    family: Family) -> None:
    answer = embedded.client(family.parent).get_whoami()
    assert answer.organizationId == family.parent.organization_id
    assert answer.userId == family.parent.user_id


def test_a_key_in_two_sub_organizations_resolves_to_the_first_bound(
        embedded: Deployment) -> None:
    """One key held by two sub-organizations is not an error (nobody can lock a key's holder
    out by copying it): the binding verified first wins (docs/SECURITY.md §2)."""
    parent = make_organization(embedded, "ambiguous parent")
    api = RawApi(embedded, parent, parent.organization_id)
    shared = keys.make_key()
    first, second = (create_sub_org(api, name, users=[root_user_params(f"{name} root", shared)])[0]
                     for name in ("ambiguous one", "ambiguous two"))
    client = embedded.client(_client_key(shared, parent.organization_id))
    assert client.get_whoami(GetWhoamiBody(
        organizationId=parent.organization_id)).organizationId == first
    response = _query(embedded, shared, "whoami", parent.organization_id)
    assert response.status_code == 200 and response.json()["organizationId"] == first
    assert second != first


def test_downward_resolution_stops_at_the_organization_addressed(
        embedded: Deployment, family: Family) -> None:
    """An unrelated organization's id does not find the sub-organization's credential."""
    response = _query(embedded, family.target_key, "whoami", family.unrelated.organization_id)
    _assert_error(response, 401, GRPC_UNAUTHENTICATED)


def test_a_login_addressed_to_the_parent_lands_in_the_sub_organization(
        embedded: Deployment, family: Family) -> None:
    assert {"stamp_login"} == LOGINS
    session_key = keys.make_key()
    response = _submit(embedded, family.target_key, "stamp_login", "ACTIVITY_TYPE_STAMP_LOGIN",
                       family.parent.organization_id, {"publicKey": session_key.public_key})
    assert response.status_code == 200, response.text
    activity = response.json()["activity"]
    assert activity["organizationId"] == family.target_id
    assert activity["status"] == "ACTIVITY_STATUS_COMPLETED"
