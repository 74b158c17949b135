"""The activity pipeline end to end, through the official ``turnkey-http`` client.

Every test runs on the embedded path (``walletd up``) and on the production path (gunicorn,
PostgreSQL, RabbitMQ, separate worker processes).
"""

from __future__ import annotations

import json
import time

import pytest
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import (
    CreateApiKeysBody,
    CreateUsersBody,
    DeleteApiKeysBody,
    GetActivitiesBody,
    GetActivityBody,
    GetApiKeyBody,
    GetApiKeysBody,
    GetUserBody,
    GetUsersBody,
    GetWhoamiBody,
    UpdateUserNameBody,
)

from tests.support.deployment import Deployment, Key, make_organization
from tests.support.keys import make_key

# Keys made by these tests expire in an hour: a user may hold 10 long-lived keys, while
# expiring keys beyond 10 evict the oldest (PROTOCOL.md §10), so a long session never fills up.
TTL = "3600"


def _create_key(dep: Deployment, user_id: str, curve: str = "API_KEY_CURVE_P256",
                expiration: str | None = TTL) -> tuple[Key, str]:
    test_key = make_key(curve)
    response = dep.client().create_api_keys(CreateApiKeysBody(
        userId=user_id, apiKeys=[test_key.api_key_params("k", expiration)]))
    assert response.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    key = Key(dep.root.organization_id, user_id, test_key.public_key, test_key.private_key)
    return key, response.apiKeyIds[0]


def test_whoami_names_the_root_user(deployment: Deployment) -> None:
    me = deployment.client().get_whoami(GetWhoamiBody())
    assert me.organizationId == deployment.root.organization_id
    assert me.userId == deployment.root.user_id
    assert me.username == "root"


def test_create_api_key_completes_inline_and_the_new_key_works(deployment: Deployment) -> None:
    key, key_id = _create_key(deployment, deployment.root.user_id)
    fetched = deployment.client().get_api_key(GetApiKeyBody(apiKeyId=key_id))
    assert fetched.apiKey.credential.publicKey == key.public_key
    assert fetched.apiKey.credential.type.value == "CREDENTIAL_TYPE_API_KEY_P256"
    me = deployment.client(key).get_whoami(GetWhoamiBody())
    assert me.userId == deployment.root.user_id


def test_completed_activity_has_every_required_field(deployment: Deployment) -> None:
    key = make_key()
    response = deployment.client().create_api_keys(CreateApiKeysBody(
        userId=deployment.root.user_id, apiKeys=[key.api_key_params(expiration_seconds=TTL)]))
    activity = response.activity
    assert activity.fingerprint.startswith("sha256:") and len(activity.fingerprint) == 71
    assert activity.votes[0].selection == "VOTE_SELECTION_APPROVED"
    assert activity.votes[0].userId == deployment.root.user_id
    assert activity.result.createApiKeysResult.apiKeyIds == response.apiKeyIds
    assert activity.intent.createApiKeysIntentV2.userId == deployment.root.user_id
    assert int(activity.createdAt.seconds) > 1_700_000_000
    polled = deployment.client().get_activity(GetActivityBody(activityId=activity.id))
    assert polled.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    assert polled.activity.fingerprint == activity.fingerprint


def test_delete_api_keys_revokes_the_key(deployment: Deployment) -> None:
    key, key_id = _create_key(deployment, deployment.root.user_id)
    deployment.client().delete_api_keys(DeleteApiKeysBody(
        userId=deployment.root.user_id, apiKeyIds=[key_id]))
    keys = deployment.client().get_api_keys(GetApiKeysBody(userId=deployment.root.user_id))
    assert key_id not in {k.apiKeyId for k in keys.apiKeys}
    with pytest.raises(TurnkeyNetworkError) as err:
        deployment.client(key).get_whoami(GetWhoamiBody())
    assert err.value.status_code == 401


@pytest.mark.parametrize("curve", ["API_KEY_CURVE_SECP256K1", "API_KEY_CURVE_ED25519"])
def test_other_curves_stamp_through_raw_requests(deployment: Deployment, curve: str) -> None:
    test_key = make_key(curve)
    deployment.client().create_api_keys(CreateApiKeysBody(
        userId=deployment.root.user_id, apiKeys=[test_key.api_key_params(expiration_seconds=TTL)]))
    body = json.dumps({"organizationId": deployment.root.organization_id}).encode()
    response = deployment.post("/public/v1/query/whoami", body,
                               {"X-Stamp": test_key.stamp(body)})
    assert response.status_code == 200, response.text
    assert response.json()["userId"] == deployment.root.user_id


def test_second_user_can_be_created_renamed_and_authenticates(deployment: Deployment) -> None:
    test_key = make_key()
    created = deployment.client().create_users(CreateUsersBody(users=[{
        "userName": "alice", "userEmail": "alice@example.com", "apiKeys": [test_key.api_key_params()],
        "authenticators": [], "oauthProviders": [], "userTags": []}]))
    user_id = created.userIds[0]
    alice = Key(deployment.root.organization_id, user_id, test_key.public_key, test_key.private_key)
    assert deployment.client(alice).get_whoami(GetWhoamiBody()).userId == user_id
    deployment.client().update_user_name(UpdateUserNameBody(userId=user_id, userName="alice2"))
    user = deployment.client().get_user(GetUserBody(userId=user_id)).user
    assert user.userName == "alice2"
    assert user.userEmail == "alice@example.com"
    users = deployment.client().get_users(GetUsersBody()).users
    assert {u.userId for u in users} >= {deployment.root.user_id, user_id}


def test_identical_body_returns_the_same_activity_once(deployment: Deployment) -> None:
    client = deployment.client()
    key = make_key()
    signed = client.stamp_create_api_keys(CreateApiKeysBody(
        userId=deployment.root.user_id, apiKeys=[key.api_key_params("replayed", TTL)]))
    headers = {signed.stamp.stamp_header_name: signed.stamp.stamp_header_value,
               "Content-Type": "application/json"}
    path = "/public/v1/submit/create_api_keys"
    first = deployment.post(path, signed.body, headers)
    second = deployment.post(path, signed.body, headers)
    assert first.status_code == second.status_code == 200
    assert first.json()["activity"]["id"] == second.json()["activity"]["id"]
    keys = client.get_api_keys(GetApiKeysBody(userId=deployment.root.user_id)).apiKeys
    assert [k.credential.publicKey for k in keys].count(key.public_key) == 1


def _signed_raw(
    dep: Deployment, stamper: Key | None = None, **overrides: object
) -> tuple[bytes, dict[str, str]]:
    envelope = {"type": "ACTIVITY_TYPE_CREATE_API_KEYS_V2", "timestampMs": str(int(time.time() * 1000)),
                "organizationId": dep.root.organization_id,
                "parameters": {"userId": dep.root.user_id,
                               "apiKeys": [make_key().api_key_params(expiration_seconds=TTL)]}}
    envelope.update(overrides)
    body = json.dumps(envelope).encode()
    client = dep.client(stamper)
    stamp = client.stamper.stamp(body.decode())
    return body, {stamp.stamp_header_name: stamp.stamp_header_value}


def test_stale_timestamp_is_refused(deployment: Deployment) -> None:
    stale = str(int((time.time() - 2 * 3600) * 1000))
    body, headers = _signed_raw(deployment, timestampMs=stale)
    response = deployment.post("/public/v1/submit/create_api_keys", body, headers)
    assert response.status_code == 400
    assert response.json()["code"] == 3
    assert "too old" in response.json()["message"]


def test_future_timestamp_is_refused(deployment: Deployment) -> None:
    future = str(int((time.time() + 3600) * 1000))
    body, headers = _signed_raw(deployment, timestampMs=future)
    response = deployment.post("/public/v1/submit/create_api_keys", body, headers)
    assert response.status_code == 400
    assert "future" in response.json()["message"]


def test_unknown_key_is_unauthenticated(deployment: Deployment) -> None:
    stranger = make_key()
    key = Key(deployment.root.organization_id, "", stranger.public_key, stranger.private_key)
    with pytest.raises(TurnkeyNetworkError) as err:
        deployment.client(key).get_whoami(GetWhoamiBody())
    assert err.value.status_code == 401
    assert "could not find public key" in str(err.value)


def test_tampered_body_fails_signature_check(deployment: Deployment) -> None:
    body, headers = _signed_raw(deployment)
    tampered = body.replace(b'"test key"', b'"evil key"')
    assert tampered != body
    response = deployment.post("/public/v1/submit/create_api_keys", tampered, headers)
    assert response.status_code == 401
    assert response.json() == {"code": 16, "message": "could not verify api key signature",
                               "details": response.json()["details"]}


def test_key_from_another_organization_is_refused(deployment: Deployment) -> None:
    other = make_organization(deployment, "unrelated")
    # The other organization's own key works in its own organization ...
    assert deployment.client(other).get_whoami(GetWhoamiBody()).organizationId == other.organization_id
    # ... but not in ours, for reads or writes.
    intruder = Key(deployment.root.organization_id, other.user_id, other.public_key, other.private_key)
    with pytest.raises(TurnkeyNetworkError) as err:
        deployment.client(intruder).get_whoami(GetWhoamiBody())
    assert err.value.status_code == 401
    body, headers = _signed_raw(deployment, stamper=intruder)
    response = deployment.post("/public/v1/submit/create_api_keys", body, headers)
    assert response.status_code == 401


def test_parent_credentials_may_read_but_not_act_in_a_sub_organization(deployment: Deployment) -> None:
    child = make_organization(deployment, "child", parent_id=deployment.root.organization_id)
    parent_in_child = Key(child.organization_id, deployment.root.user_id,
                          deployment.root.public_key, deployment.root.private_key)
    users = deployment.client(parent_in_child).get_users(GetUsersBody()).users
    assert [u.userId for u in users] == [child.user_id]
    body, headers = _signed_raw(deployment, stamper=parent_in_child,
                                organizationId=child.organization_id,
                                parameters={"userId": child.user_id,
                                            "apiKeys": [make_key().api_key_params(expiration_seconds=TTL)]})
    response = deployment.post("/public/v1/submit/create_api_keys", body, headers)
    assert response.status_code == 403
    assert response.json()["code"] == 7


def test_expired_key_stops_working(deployment: Deployment) -> None:
    key, _ = _create_key(deployment, deployment.root.user_id, expiration="1")
    time.sleep(1.5)
    with pytest.raises(TurnkeyNetworkError) as err:
        deployment.client(key).get_whoami(GetWhoamiBody())
    assert err.value.status_code == 401
    assert "expired api key" in str(err.value)


def test_list_activities_filters_and_paginates(deployment: Deployment) -> None:
    client = deployment.client()
    for _ in range(3):
        _create_key(deployment, deployment.root.user_id)
    page = client.get_activities(GetActivitiesBody(
        filterByType=["ACTIVITY_TYPE_CREATE_API_KEYS_V2"],
        filterByStatus=["ACTIVITY_STATUS_COMPLETED"], paginationOptions={"limit": "2"}))
    assert len(page.activities) == 2
    assert all(a.type.value == "ACTIVITY_TYPE_CREATE_API_KEYS_V2" for a in page.activities)
    newest = [int(a.createdAt.seconds) * 10**9 + int(a.createdAt.nanos) for a in page.activities]
    assert newest == sorted(newest, reverse=True)
    after = client.get_activities(GetActivitiesBody(
        filterByType=["ACTIVITY_TYPE_CREATE_API_KEYS_V2"],
        paginationOptions={"limit": "2", "after": page.activities[-1].id}))
    assert after.activities and after.activities[0].id not in {a.id for a in page.activities}
    before = client.get_activities(GetActivitiesBody(
        filterByType=["ACTIVITY_TYPE_CREATE_API_KEYS_V2"],
        paginationOptions={"limit": "2", "before": after.activities[0].id}))
    assert [a.id for a in before.activities] == [a.id for a in page.activities]
    none = client.get_activities(GetActivitiesBody(filterByStatus=["ACTIVITY_STATUS_REJECTED"]))
    assert none.activities == []


def test_identical_body_from_another_user_is_a_conflict_not_a_merge(deployment: Deployment) -> None:
    test_key = make_key()
    created = deployment.client().create_users(CreateUsersBody(users=[{
        "userName": "bob", "apiKeys": [test_key.api_key_params()], "authenticators": [],
        "oauthProviders": [], "userTags": []}]))
    bob = Key(deployment.root.organization_id, created.userIds[0], test_key.public_key,
              test_key.private_key)
    body, root_headers = _signed_raw(deployment)
    bob_stamp = deployment.client(bob).stamper.stamp(body.decode())
    first = deployment.post("/public/v1/submit/create_api_keys", body, root_headers)
    assert first.status_code == 200
    second = deployment.post("/public/v1/submit/create_api_keys", body,
                             {bob_stamp.stamp_header_name: bob_stamp.stamp_header_value})
    assert second.status_code == 409
    assert second.json()["code"] == 6 and "timestampMs" in second.json()["message"]


def test_concurrent_identical_bodies_store_one_activity(deployment: Deployment) -> None:
    from concurrent.futures import ThreadPoolExecutor

    body, headers = _signed_raw(deployment)
    with ThreadPoolExecutor(6) as pool:
        responses = list(pool.map(
            lambda _: deployment.post("/public/v1/submit/create_api_keys", body, headers), range(6)))
    assert [r.status_code for r in responses] == [200] * 6
    assert len({r.json()["activity"]["id"] for r in responses}) == 1
