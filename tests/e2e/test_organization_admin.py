"""Organization administration end to end: user and private-key tags, invitations, smart
contract interfaces, organization features, get_organization, and tag limits in sub-orgs.
"""

from __future__ import annotations

import json

import pytest

from tests.support.deployment import Deployment, make_organization
from tests.support.raw_api import RawApi, create_sub_org

ETH = "SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM"
SOL = "SMART_CONTRACT_INTERFACE_TYPE_SOLANA"
ABI = json.dumps([{"type": "function", "name": "transfer", "stateMutability": "nonpayable",
                   "inputs": [{"name": "to", "type": "address"},
                              {"name": "amount", "type": "uint256"}],
                   "outputs": [{"name": "", "type": "bool"}]}])
IDL = json.dumps({"address": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
                  "metadata": {"name": "token", "version": "0.1.0", "spec": "0.1.0"},
                  "instructions": [{"name": "transfer", "discriminator": [1, 2, 3, 4, 5, 6, 7, 8],
                                    "accounts": [{"name": "from", "writable": True}],
                                    "args": [{"name": "amount", "type": "u64"}]}]})


@pytest.fixture
def org(deployment: Deployment) -> RawApi:
    key = make_organization(deployment, "admin org")
    return RawApi(deployment, key, key.organization_id)


def test_user_tags_lifecycle(org: RawApi) -> None:
    me = org.stamper.user_id  # type: ignore[union-attr]
    created = org.ok("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                     {"userTagName": "admins", "userIds": [me]})
    tag_id = created["userTagId"]
    assert created["userIds"] == [me]
    assert org.read("get_user", {"userId": me})["user"]["userTags"] == [tag_id]
    tags = org.read("list_user_tags")["userTags"]
    assert [(t["tagId"], t["tagName"], t["tagType"]) for t in tags] == [
        (tag_id, "admins", "TAG_TYPE_USER")]
    duplicate = org.submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                           {"userTagName": "admins", "userIds": []})
    assert duplicate.status_code == 409
    org.ok("update_user_tag", "ACTIVITY_TYPE_UPDATE_USER_TAG", {
        "userTagId": tag_id, "newUserTagName": "operators", "addUserIds": [],
        "removeUserIds": [me]})
    assert org.read("list_user_tags")["userTags"][0]["tagName"] == "operators"
    assert org.read("get_user", {"userId": me})["user"]["userTags"] == []
    org.ok("update_user_tag", "ACTIVITY_TYPE_UPDATE_USER_TAG", {
        "userTagId": tag_id, "addUserIds": [me], "removeUserIds": []})
    deleted = org.ok("delete_user_tags", "ACTIVITY_TYPE_DELETE_USER_TAGS",
                     {"userTagIds": [tag_id]})
    assert deleted == {"userTagIds": [tag_id], "userIds": [me]}
    assert org.read("list_user_tags")["userTags"] == []
    unknown = org.submit("delete_user_tags", "ACTIVITY_TYPE_DELETE_USER_TAGS",
                         {"userTagIds": [tag_id]})
    assert unknown.status_code == 404


def test_private_key_tags_lifecycle(org: RawApi) -> None:
    created = org.ok("create_private_keys", "ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2", {
        "privateKeys": [{"privateKeyName": "pk", "curve": "CURVE_SECP256K1",
                         "privateKeyTags": [], "addressFormats": ["ADDRESS_FORMAT_ETHEREUM"]}]})
    key_id = created["privateKeys"][0]["privateKeyId"]
    tag = org.ok("create_private_key_tag", "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG",
                 {"privateKeyTagName": "hot", "privateKeyIds": [key_id]})
    tag_id = tag["privateKeyTagId"]
    assert tag["privateKeyIds"] == [key_id]
    shown = org.read("get_private_key", {"privateKeyId": key_id})["privateKey"]
    assert shown["privateKeyTags"] == [tag_id]
    listed = org.read("list_private_key_tags")["privateKeyTags"]
    assert [(t["tagId"], t["tagType"]) for t in listed] == [(tag_id, "TAG_TYPE_PRIVATE_KEY")]
    org.ok("update_private_key_tag", "ACTIVITY_TYPE_UPDATE_PRIVATE_KEY_TAG", {
        "privateKeyTagId": tag_id, "newPrivateKeyTagName": "cold", "addPrivateKeyIds": [],
        "removePrivateKeyIds": [key_id]})
    assert org.read("get_private_key", {"privateKeyId": key_id})["privateKey"][
        "privateKeyTags"] == []
    org.ok("update_private_key_tag", "ACTIVITY_TYPE_UPDATE_PRIVATE_KEY_TAG", {
        "privateKeyTagId": tag_id, "addPrivateKeyIds": [key_id], "removePrivateKeyIds": []})
    deleted = org.ok("delete_private_key_tags", "ACTIVITY_TYPE_DELETE_PRIVATE_KEY_TAGS",
                     {"privateKeyTagIds": [tag_id]})
    assert deleted == {"privateKeyTagIds": [tag_id], "privateKeyIds": [key_id]}
    assert org.read("get_private_key", {"privateKeyId": key_id})["privateKey"][
        "privateKeyTags"] == []
    missing = org.submit("create_private_key_tag", "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG",
                         {"privateKeyTagName": "x", "privateKeyIds": ["nope"]})
    assert missing.status_code == 404


def test_invitations_are_created_listed_and_deleted(org: RawApi) -> None:
    me = org.stamper.user_id  # type: ignore[union-attr]
    created = org.ok("create_invitations", "ACTIVITY_TYPE_CREATE_INVITATIONS", {"invitations": [{
        "receiverUserName": "gina", "receiverUserEmail": "gina@example.com",
        "receiverUserTags": [], "accessType": "ACCESS_TYPE_WEB", "senderUserId": me}]})
    (invitation_id,) = created["invitationIds"]
    invitations = org.read("get_organization")["organizationData"]["invitations"]
    assert [(i["invitationId"], i["receiverEmail"]) for i in invitations] == [
        (invitation_id, "gina@example.com")]
    org.ok("delete_invitation", "ACTIVITY_TYPE_DELETE_INVITATION",
           {"invitationId": invitation_id})
    assert org.read("get_organization")["organizationData"]["invitations"] == []
    bad = org.submit("create_invitations", "ACTIVITY_TYPE_CREATE_INVITATIONS", {"invitations": [{
        "receiverUserName": "h", "receiverUserEmail": "nope", "receiverUserTags": [],
        "accessType": "ACCESS_TYPE_WEB", "senderUserId": me}]})
    assert bad.status_code == 400


@pytest.mark.parametrize(("kind", "address", "text"), [
    (ETH, "0x" + "ab" * 20, ABI),
    (SOL, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", IDL),
])
def test_smart_contract_interfaces(org: RawApi, kind: str, address: str, text: str) -> None:
    created = org.ok("create_smart_contract_interface",
                     "ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE", {
                         "smartContractAddress": address, "smartContractInterface": text,
                         "type": kind, "label": "token", "notes": "n"})
    sci_id = created["smartContractInterfaceId"]
    shown = org.read("get_smart_contract_interface",
                     {"smartContractInterfaceId": sci_id})["smartContractInterface"]
    assert (shown["smartContractAddress"], shown["type"], shown["smartContractInterface"]) == (
        address, kind, text)
    listed = org.read("list_smart_contract_interfaces")["smartContractInterfaces"]
    assert [s["smartContractInterfaceId"] for s in listed] == [sci_id]
    refs = org.read("get_organization")["organizationData"]["smartContractInterfaceReferences"]
    assert refs[0]["smartContractInterfaceId"] == sci_id
    org.ok("delete_smart_contract_interface", "ACTIVITY_TYPE_DELETE_SMART_CONTRACT_INTERFACE",
           {"smartContractInterfaceId": sci_id})
    gone = org.query("get_smart_contract_interface", {"smartContractInterfaceId": sci_id})
    assert gone.status_code == 404


@pytest.mark.parametrize(("kind", "text", "message"), [
    (ETH, json.dumps([{"type": "function", "name": "f",
                       "inputs": [{"name": "a", "type": "uint7"}]}]), "invalid type 'uint7'"),
    (SOL, json.dumps({"name": "p", "instructions": [{"name": "i", "accounts": [],
                                                     "args": [{"name": "a", "type": "u7"}]}]}),
     "unknown type 'u7'"),
    (ETH, "{not json", "not valid JSON"),
])
def test_invalid_interfaces_are_400s_that_say_why(org: RawApi, kind: str, text: str,
                                                 message: str) -> None:
    address = "0x" + "cd" * 20 if kind == ETH else "11111111111111111111111111111111"
    response = org.submit("create_smart_contract_interface",
                          "ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE", {
                              "smartContractAddress": address, "smartContractInterface": text,
                              "type": kind, "label": "bad"})
    assert response.status_code == 400
    assert message in response.json()["message"]


FEATURES = [
    ("FEATURE_NAME_ROOT_USER_EMAIL_RECOVERY", "true"),
    ("FEATURE_NAME_WEBAUTHN_ORIGINS", '["https://app.example"]'),
    ("FEATURE_NAME_EMAIL_AUTH", "true"),
    ("FEATURE_NAME_EMAIL_RECOVERY", "false"),
    ("FEATURE_NAME_WEBHOOK", "https://hooks.example/turnkey"),
    ("FEATURE_NAME_SMS_AUTH", "true"),
    ("FEATURE_NAME_OTP_EMAIL_AUTH", "true"),
    ("FEATURE_NAME_AUTH_PROXY", "true"),
    ("FEATURE_NAME_SOLANA_RENT_PREFUND_ENABLED", "true"),
    ("FEATURE_NAME_SWAP_CONFIG", '{"enabled": true}'),
    ("FEATURE_NAME_EARN_CONFIG", '{"enabled": false}'),
]


def test_every_feature_can_be_set_shown_and_removed(org: RawApi) -> None:
    for name, value in FEATURES:
        result = org.ok("set_organization_feature", "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
                        {"name": name, "value": value})
        assert {"name": name, "value": value} in result["features"]
    shown = org.read("get_organization")["organizationData"]["features"]
    assert sorted((f["name"], f["value"]) for f in shown) == sorted(FEATURES)
    configs = org.read("get_organization_configs")["configs"]
    assert len(configs["features"]) == len(FEATURES)
    assert configs["quorum"]["threshold"] == 1
    for name, _ in FEATURES:
        result = org.ok("remove_organization_feature",
                        "ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE", {"name": name})
        assert name not in {f["name"] for f in result["features"]}
    assert org.read("get_organization")["organizationData"]["features"] == []


@pytest.mark.parametrize(("name", "value"), [
    ("FEATURE_NAME_WEBHOOK", "not a url"),
    ("FEATURE_NAME_WEBAUTHN_ORIGINS", '["https://a.example/path"]'),
    ("FEATURE_NAME_EMAIL_AUTH", "maybe"),
    ("FEATURE_NAME_SWAP_CONFIG", "[]"),
    ("FEATURE_NAME_TIME_TRAVEL", "true"),
])
def test_feature_values_are_validated(org: RawApi, name: str, value: str) -> None:
    response = org.submit("set_organization_feature", "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
                          {"name": name, "value": value})
    assert response.status_code == 400, response.text


def test_get_organization_shows_users_root_quorum_tags_and_features(org: RawApi) -> None:
    org.ok("set_organization_feature", "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
           {"name": "FEATURE_NAME_SMS_AUTH", "value": ""})
    tag = org.ok("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                 {"userTagName": "t", "userIds": []})["userTagId"]
    data = org.read("get_organization")["organizationData"]
    me = org.stamper.user_id  # type: ignore[union-attr]
    assert data["rootQuorum"] == {"threshold": 1, "userIds": [me]}
    assert [u["userId"] for u in data["users"]] == [me]
    assert data["features"] == [{"name": "FEATURE_NAME_SMS_AUTH", "value": ""}]
    assert [t["tagId"] for t in data["tags"]] == [tag]


def test_sub_organizations_hold_at_most_ten_tags(org: RawApi) -> None:
    sub_id, key, _ = create_sub_org(org, "tag limited")
    sub = RawApi(org.dep, key, sub_id)
    for i in range(10):
        sub.ok("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
               {"userTagName": f"t{i}", "userIds": []})
    response = sub.submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                          {"userTagName": "t10", "userIds": []})
    assert response.status_code == 429
    assert response.json()["message"] == (
        "sub-organization has exceeded maximum number of tags (limit tags_per_organization: 10)")
