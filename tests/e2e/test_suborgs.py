"""Sub-organizations end to end: create (V7 via the official client, older versions raw),
root quorum validation, wallets, every list_suborgs filter, deletion, and the tenancy matrix.
"""

from __future__ import annotations

import base64
import json

import pytest
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import CreateSubOrganizationBody, GetSubOrgIdsBody

from tests.support.deployment import Deployment, Key, make_organization
from tests.support.keys import make_key
from tests.support.raw_api import RawApi, create_sub_org, root_user_params
from tests.support.soft_authenticator import SoftAuthenticator


def _root(dep: Deployment) -> RawApi:
    return RawApi(dep, dep.root, dep.root.organization_id)


def _jwt(claims: dict[str, str]) -> str:
    def part(data: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2ln"


def test_official_client_creates_a_sub_organization_v7(deployment: Deployment) -> None:
    key = make_key()
    response = deployment.client().create_sub_organization(CreateSubOrganizationBody(
        subOrganizationName="client sub-org",
        rootUsers=[root_user_params("client root", key, userEmail="root@example.com")],
        rootQuorumThreshold=1))
    assert response.activity.type == "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7"
    assert response.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    sub_id = response.subOrganizationId
    assert response.rootUserIds and len(response.rootUserIds) == 1
    sub = RawApi(deployment, key, sub_id)
    org = sub.read("get_organization")["organizationData"]
    assert org["organizationId"] == sub_id
    assert org["name"] == "client sub-org"
    assert org["rootQuorum"] == {"threshold": 1, "userIds": response.rootUserIds}
    assert org["users"][0]["userEmail"] == "root@example.com"
    ids = deployment.client().get_sub_org_ids(GetSubOrgIdsBody()).organizationIds
    assert sub_id in ids


@pytest.mark.parametrize("version", ["V8", "V6", "V5", "V4"])
def test_other_versions_real_clients_send_are_accepted(deployment: Deployment,
                                                       version: str) -> None:
    response = _root(deployment).submit(
        "create_sub_organization", f"ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_{version}",
        {"subOrganizationName": f"sub {version}", "rootUsers": [root_user_params("r")],
         "rootQuorumThreshold": 1})
    assert response.status_code == 200, response.text
    activity = response.json()["activity"]
    assert f"createSubOrganizationIntent{version}" in activity["intent"]
    assert activity["result"][f"createSubOrganizationResult{version}"]["subOrganizationId"]


@pytest.mark.parametrize("threshold", [0, 3, -1])
def test_root_quorum_threshold_outside_one_to_root_users_is_a_400(deployment: Deployment,
                                                                   threshold: int) -> None:
    response = _root(deployment).submit(
        "create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
        {"subOrganizationName": "bad quorum",
         "rootUsers": [root_user_params("a"), root_user_params("b")],
         "rootQuorumThreshold": threshold})
    assert response.status_code == 400, response.text
    assert "rootQuorumThreshold" in response.json()["message"]


def test_root_user_phone_numbers_must_be_e164(deployment: Deployment) -> None:
    response = _root(deployment).submit(
        "create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
        {"subOrganizationName": "bad phone",
         "rootUsers": [root_user_params("a", userPhoneNumber="555-0100")],
         "rootQuorumThreshold": 1})
    assert response.status_code == 400, response.text
    assert "E.164" in response.json()["message"]


def test_two_root_users_with_threshold_two(deployment: Deployment) -> None:
    sub_id, _, result = create_sub_org(
        _root(deployment), "two roots",
        users=[root_user_params("a"), root_user_params("b")], threshold=2)
    assert len(result["rootUserIds"]) == 2
    org = _root(deployment).read("get_organization", organization_id=sub_id)
    assert org["organizationData"]["rootQuorum"]["threshold"] == 2


def test_sub_organization_with_a_wallet(deployment: Deployment) -> None:
    sub_id, _, result = create_sub_org(_root(deployment), "with wallet", wallet={
        "walletName": "main", "accounts": [{
            "curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
            "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]})
    wallet = result["wallet"]
    assert wallet["walletId"] and len(wallet["addresses"]) == 1
    assert wallet["addresses"][0].startswith("0x")
    found = _root(deployment).read("list_suborgs", {
        "filterType": "WALLET_ACCOUNT_ADDRESS", "filterValue": wallet["addresses"][0]})
    assert found["organizationIds"] == [sub_id]


def test_list_suborgs_every_filter_type(deployment: Deployment) -> None:
    root = _root(deployment)
    passkey = SoftAuthenticator()
    key = make_key()
    token = _jwt({"iss": "https://accounts.example", "sub": "user-123", "aud": "app-1"})
    user = root_user_params("filter-user", key, userEmail="Filter.User@Example.com",
                            userPhoneNumber="+14155550199")
    user["authenticators"] = [passkey.registration("laptop")]
    user["oauthProviders"] = [{"providerName": "google", "oidcToken": token}]
    sub_id, _, _ = create_sub_org(root, "filter-target-name", users=[user])
    create_sub_org(root, "filter-decoy")
    cases = {
        "NAME": "filter-target-name",
        "USERNAME": "filter-user",
        "EMAIL": "filter.user@example.com",
        "PHONE_NUMBER": "+14155550199",
        "CREDENTIAL_ID": passkey.credential_id_b64,
        "PUBLIC_KEY": key.public_key,
        "OIDC_TOKEN": token,
    }
    for filter_type, value in cases.items():
        found = root.read("list_suborgs", {"filterType": filter_type, "filterValue": value})
        assert found["organizationIds"] == [sub_id], filter_type
    none = root.read("list_suborgs", {"filterType": "NAME", "filterValue": "no such org"})
    assert none["organizationIds"] == []
    bad = root.query("list_suborgs", {"filterType": "SHOE_SIZE", "filterValue": "42"})
    assert bad.status_code == 400


def test_list_suborgs_paginates(deployment: Deployment) -> None:
    parent = make_organization(deployment, "pagination parent")
    api = RawApi(deployment, parent, parent.organization_id)
    ids = [create_sub_org(api, f"page {i}")[0] for i in range(3)]
    first = api.read("list_suborgs", {"paginationOptions": {"limit": "2"}})["organizationIds"]
    assert first == ids[:2]
    rest = api.read("list_suborgs", {"paginationOptions": {"limit": "2", "after": ids[1]}})
    assert rest["organizationIds"] == ids[2:]


def test_sub_organizations_cannot_create_sub_organizations(deployment: Deployment) -> None:
    sub_id, key, _ = create_sub_org(_root(deployment), "no grandchildren")
    response = RawApi(deployment, key, sub_id).submit(
        "create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
        {"subOrganizationName": "grandchild", "rootUsers": [root_user_params("g")],
         "rootQuorumThreshold": 1})
    assert response.status_code == 429, response.text
    assert "sub_organizations_per_organization" in response.json()["message"]


def test_delete_sub_organization_removes_its_credentials(deployment: Deployment) -> None:
    root = _root(deployment)
    sub_id, key, _ = create_sub_org(root, "to delete")
    sub = RawApi(deployment, key, sub_id)
    result = sub.ok("delete_sub_organization", "ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION",
                    {"deleteWithoutExport": True})
    assert result == {"subOrganizationUuid": sub_id}
    assert sub.query("whoami").status_code == 401
    listed = root.read("list_suborgs", {"filterType": "NAME", "filterValue": "to delete"})
    assert listed["organizationIds"] == []


def test_delete_sub_organization_with_wallets_needs_delete_without_export(
        deployment: Deployment) -> None:
    sub_id, key, _ = create_sub_org(_root(deployment), "keeps keys", wallet={
        "walletName": "w", "accounts": [{
            "curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
            "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]})
    sub = RawApi(deployment, key, sub_id)
    refused = sub.submit("delete_sub_organization", "ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION", {})
    assert refused.status_code == 400, refused.text
    assert "deleteWithoutExport" in refused.json()["message"]


# --------------------------------------------------------------------------- tenancy matrix


@pytest.fixture(scope="module")
def family(embedded: Deployment) -> dict[str, tuple[Key | object, str]]:
    """A parent with two sub-organizations, plus an unrelated organization."""
    dep = embedded
    parent = make_organization(dep, "tenancy parent")
    api = RawApi(dep, parent, parent.organization_id)
    target_id, target_key, _ = create_sub_org(api, "tenancy target")
    sibling_id, sibling_key, _ = create_sub_org(api, "tenancy sibling")
    unrelated = make_organization(dep, "tenancy unrelated")
    return {"parent": (parent, parent.organization_id), "target": (target_key, target_id),
            "sibling": (sibling_key, sibling_id),
            "unrelated": (unrelated, unrelated.organization_id)}


SUBMIT = ("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG")
# who -> expected status acting on the target sub-organization
MATRIX = {
    "target": (200, 200),
    "parent": (200, 403),  # parents read sub-organizations but do not act in them
    "sibling": (401, 401),
    "unrelated": (401, 401),
}


@pytest.mark.parametrize("who", list(MATRIX))
def test_tenancy_matrix_on_a_sub_organization(embedded: Deployment, family: dict, who: str) -> None:
    stamper, _ = family[who]
    _, target_id = family["target"]
    api = RawApi(embedded, stamper, target_id)  # type: ignore[arg-type]
    expected_query, expected_submit = MATRIX[who]
    for path in ("get_organization", "list_users", "list_user_tags", "list_suborgs"):
        assert api.query(path).status_code == expected_query, (who, path)
    response = api.submit(SUBMIT[0], SUBMIT[1], {"userTagName": f"tag by {who}", "userIds": []})
    assert response.status_code == expected_submit, (who, response.text)
    if expected_submit == 401:
        assert "could not find public key" in response.json()["message"]


@pytest.mark.parametrize("who", ["target", "sibling"])
def test_a_sub_organization_sees_nothing_of_its_parent(embedded: Deployment, family: dict,
                                                       who: str) -> None:
    stamper, _ = family[who]
    _, parent_id = family["parent"]
    api = RawApi(embedded, stamper, parent_id)  # type: ignore[arg-type]
    for path in ("get_organization", "list_users", "list_suborgs"):
        assert api.query(path).status_code == 401, path
    response = api.submit(SUBMIT[0], SUBMIT[1], {"userTagName": "from child", "userIds": []})
    assert response.status_code == 401


def test_parent_may_list_only_its_own_sub_organizations(embedded: Deployment,
                                                        family: dict) -> None:
    parent, parent_id = family["parent"]
    ids = RawApi(embedded, parent, parent_id).read("list_suborgs")["organizationIds"]  # type: ignore[arg-type]
    assert set(ids) == {family["target"][1], family["sibling"][1]}
    unrelated, unrelated_id = family["unrelated"]
    assert RawApi(embedded, unrelated, unrelated_id).read("list_suborgs")["organizationIds"] == []  # type: ignore[arg-type]


def test_official_client_error_for_parent_submitting_in_sub_org(embedded: Deployment,
                                                               family: dict) -> None:
    parent, _ = family["parent"]
    _, target_id = family["target"]
    with pytest.raises(TurnkeyNetworkError) as err:
        embedded.client(parent, target_id).create_sub_organization(  # type: ignore[arg-type]
            CreateSubOrganizationBody(subOrganizationName="x", rootUsers=[root_user_params("x")],
                                      rootQuorumThreshold=1))
    assert err.value.status_code == 403
