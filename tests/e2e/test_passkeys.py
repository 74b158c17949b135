"""Passkeys end to end with a software authenticator: registration (``none`` / ``packed``,
ES256 / RS256), X-Stamp-Webauthn on queries and submits, recovery, deletion, origins.
"""

from __future__ import annotations

import json

import pytest

from tests.support.deployment import Deployment, make_organization
from tests.support.raw_api import RawApi, create_sub_org, root_user_params
from tests.support.soft_authenticator import SoftAuthenticator


@pytest.fixture
def org(deployment: Deployment) -> RawApi:
    """A fresh organization (so features and limits do not leak between tests)."""
    key = make_organization(deployment, "passkey org")
    return RawApi(deployment, key, key.organization_id)


def _register(api: RawApi, user_id: str, *passkeys: SoftAuthenticator,
              fmt: str = "none") -> list[str]:
    result = api.ok("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
        "userId": user_id,
        "authenticators": [p.registration(f"passkey {i}", fmt=fmt)  # type: ignore[arg-type]
                           for i, p in enumerate(passkeys)]})
    return result["authenticatorIds"]  # type: ignore[no-any-return]


def _as(api: RawApi, passkey: SoftAuthenticator) -> RawApi:
    return RawApi(api.dep, passkey, api.organization_id)


@pytest.mark.parametrize(("algorithm", "fmt"),
                         [("ES256", "none"), ("ES256", "packed"), ("RS256", "packed"),
                          ("RS256", "none")])
def test_registered_passkey_is_shown_and_stamps_requests(org: RawApi, algorithm: str,
                                                         fmt: str) -> None:
    passkey = SoftAuthenticator(algorithm=algorithm)  # type: ignore[arg-type]
    user_id = org.stamper.user_id  # type: ignore[union-attr]
    (authenticator_id,) = _register(org, user_id, passkey, fmt=fmt)
    shown = org.read("get_authenticator", {"authenticatorId": authenticator_id})["authenticator"]
    assert shown["credentialId"] == passkey.credential_id_b64
    assert shown["credential"] == {"publicKey": passkey.cose_public_key_b64(),
                                   "type": "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR"}
    assert shown["attestationType"] == fmt
    assert shown["transports"] == ["AUTHENTICATOR_TRANSPORT_INTERNAL"]
    listed = org.read("get_authenticators", {"userId": user_id})["authenticators"]
    assert [a["authenticatorId"] for a in listed] == [authenticator_id]
    user = org.read("get_user", {"userId": user_id})["user"]
    assert [a["authenticatorId"] for a in user["authenticators"]] == [authenticator_id]

    as_passkey = _as(org, passkey)
    assert as_passkey.read("whoami")["userId"] == user_id
    result = as_passkey.ok("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                           {"userTagName": f"by passkey {algorithm} {fmt}", "userIds": []})
    assert result["userTagId"]


def test_base64_form_of_the_header_is_accepted(org: RawApi) -> None:
    passkey = SoftAuthenticator()
    _register(org, org.stamper.user_id, passkey)  # type: ignore[union-attr]
    body = json.dumps({"organizationId": org.organization_id}).encode()
    response = org.dep.post("/public/v1/query/whoami", body,
                            {"X-Stamp-Webauthn": passkey.stamp(body, encoding="base64")})
    assert response.status_code == 200, response.text


def test_stamp_over_another_body_is_rejected_with_the_wire_message(org: RawApi) -> None:
    passkey = SoftAuthenticator()
    _register(org, org.stamper.user_id, passkey)  # type: ignore[union-attr]
    body = json.dumps({"organizationId": org.organization_id}).encode()
    headers = {"X-Stamp-Webauthn": passkey.stamp(body + b" ")}
    response = org.dep.post("/public/v1/query/whoami", body, headers)
    assert response.status_code == 401
    assert response.json()["message"] == "could not verify WebAuthN signature"


def test_unknown_credential_and_malformed_stamp(org: RawApi) -> None:
    stranger = _as(org, SoftAuthenticator())
    response = stranger.query("whoami")
    assert response.status_code == 401
    assert response.json()["message"] == (
        "credential ID could not be found in organization or its parent organization")
    body = json.dumps({"organizationId": org.organization_id}).encode()
    garbled = org.dep.post("/public/v1/query/whoami", body, {"X-Stamp-Webauthn": "{nope"})
    assert garbled.status_code == 401
    assert garbled.json()["message"] == "could not extract webauthn stamp"


def test_attestation_that_does_not_verify_is_a_400(org: RawApi) -> None:
    params = SoftAuthenticator().registration("bad")
    params["challenge"] = "c29tZXRoaW5nIGVsc2U"
    response = org.submit("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
                          {"userId": org.stamper.user_id, "authenticators": [params]})  # type: ignore[union-attr]
    assert response.status_code == 400
    assert "challenge does not match" in response.json()["message"]


def test_same_credential_twice_is_a_conflict(org: RawApi) -> None:
    passkey = SoftAuthenticator()
    _register(org, org.stamper.user_id, passkey)  # type: ignore[union-attr]
    response = org.submit("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
        "userId": org.stamper.user_id, "authenticators": [passkey.registration()]})  # type: ignore[union-attr]
    assert response.status_code == 409, response.text


def test_deleted_passkey_stops_working(org: RawApi) -> None:
    passkey = SoftAuthenticator()
    (authenticator_id,) = _register(org, org.stamper.user_id, passkey)  # type: ignore[union-attr]
    assert _as(org, passkey).query("whoami").status_code == 200
    result = org.ok("delete_authenticators", "ACTIVITY_TYPE_DELETE_AUTHENTICATORS", {
        "userId": org.stamper.user_id, "authenticatorIds": [authenticator_id]})  # type: ignore[union-attr]
    assert result == {"authenticatorIds": [authenticator_id]}
    assert _as(org, passkey).query("whoami").status_code == 401
    assert org.query("get_authenticator", {"authenticatorId": authenticator_id}).status_code == 404


def test_recover_user_adds_a_passkey(org: RawApi) -> None:
    passkey = SoftAuthenticator(algorithm="RS256")
    result = org.ok("recover_user", "ACTIVITY_TYPE_RECOVER_USER", {
        "userId": org.stamper.user_id, "authenticator": passkey.registration("recovered")})  # type: ignore[union-attr]
    (authenticator_id,) = result["authenticatorId"]
    assert _as(org, passkey).read("whoami")["userId"] == org.stamper.user_id  # type: ignore[union-attr]
    shown = org.read("get_authenticator", {"authenticatorId": authenticator_id})
    assert shown["authenticator"]["authenticatorName"] == "recovered"


def test_sub_organization_root_user_with_only_a_passkey(deployment: Deployment) -> None:
    root = RawApi(deployment, deployment.root, deployment.root.organization_id)
    passkey = SoftAuthenticator()
    user = root_user_params("passkey root")
    user["apiKeys"] = []
    user["authenticators"] = [passkey.registration("phone", fmt="packed")]
    sub_id, _, _ = create_sub_org(root, "passkey-only sub", users=[user])
    sub = RawApi(deployment, passkey, sub_id)
    assert sub.read("whoami")["organizationId"] == sub_id
    tag = sub.ok("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                 {"userTagName": "made with a passkey", "userIds": []})
    assert tag["userTagId"]


def test_webauthn_origins_feature_is_enforced(org: RawApi) -> None:
    good = SoftAuthenticator(origin="https://wallet.example")
    other = SoftAuthenticator(origin="https://evil.example")
    _register(org, org.stamper.user_id, good, other)  # type: ignore[union-attr]
    org.ok("set_organization_feature", "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
           {"name": "FEATURE_NAME_WEBAUTHN_ORIGINS", "value": '["https://wallet.example"]'})
    assert _as(org, good).query("whoami").status_code == 200
    assert _as(org, other).query("whoami").status_code == 401
    refused = org.submit("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
        "userId": org.stamper.user_id,  # type: ignore[union-attr]
        "authenticators": [SoftAuthenticator(origin="https://evil.example").registration()]})
    assert refused.status_code == 400


def test_passkey_votes_record_the_webauthn_stamp(org: RawApi) -> None:
    passkey = SoftAuthenticator()
    _register(org, org.stamper.user_id, passkey)  # type: ignore[union-attr]
    body_api = _as(org, passkey)
    response = body_api.submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                               {"userTagName": "voted", "userIds": []})
    vote = response.json()["activity"]["votes"][0]
    assert vote["userId"] == org.stamper.user_id  # type: ignore[union-attr]
    assert vote["publicKey"] == passkey.cose_public_key_b64()


def test_too_many_passkeys_on_one_user_is_a_429(org: RawApi) -> None:
    user_id = org.stamper.user_id  # type: ignore[union-attr]
    _register(org, user_id, *[SoftAuthenticator() for _ in range(10)])
    response = org.submit("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
        "userId": user_id, "authenticators": [SoftAuthenticator().registration()]})
    assert response.status_code == 429, response.text
    assert "authenticators_per_user" in response.json()["message"]



def test_parent_webauthn_origins_apply_to_sub_organizations(deployment: Deployment) -> None:
    parent_key = make_organization(deployment, "origins parent")
    parent = RawApi(deployment, parent_key, parent_key.organization_id)
    parent.ok("set_organization_feature", "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
              {"name": "FEATURE_NAME_WEBAUTHN_ORIGINS", "value": "https://app.example"})
    allowed = SoftAuthenticator(origin="https://app.example")
    user = root_user_params("origin root")
    user["authenticators"] = [allowed.registration()]
    sub_id, _, _ = create_sub_org(parent, "origins child", users=[user])
    assert RawApi(deployment, allowed, sub_id).query("whoami").status_code == 200
    refused = user.copy()
    refused["userName"] = "other root"
    refused["apiKeys"] = []
    refused["authenticators"] = [SoftAuthenticator(origin="https://other.example").registration()]
    response = parent.submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
                             {"subOrganizationName": "origins child 2", "rootUsers": [refused],
                              "rootQuorumThreshold": 1})
    assert response.status_code == 400
    assert "not an allowed WebAuthn origin" in response.json()["message"]
