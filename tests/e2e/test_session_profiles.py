"""Session profiles through the official ``turnkey-http`` client, on both paths.

A profile created in the parent organization is visible to a sub-organization; a
``stamp_login`` naming it issues a session whose JWT names the profile, whose lifetime the
profile bounds, and whose every request is evaluated against the profile's scope.
"""

from __future__ import annotations

import base64
import json
import time

import pytest
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import (
    CreateApiKeysBody,
    CreateSessionProfileBody,
    CreateWalletBody,
    GetSessionProfileBody,
    GetSessionProfilesBody,
    GetWhoamiBody,
    StampLoginBody,
)

from tests.support.deployment import Deployment, Key
from tests.support.keys import make_key
from tests.support.raw_api import RawApi, create_sub_org, root_user_params

ACCOUNTS = [{"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
             "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]
WALLETS_ONLY = "activity.action == 'READ' || (activity.resource == 'WALLET' && activity.action == 'CREATE')"


def _claims(token: str) -> dict[str, object]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


def _profile(dep: Deployment, name: str, scope: str, expiration: str | None = None) -> str:
    response = dep.client().create_session_profile(CreateSessionProfileBody(
        sessionProfileName=name, scope=scope, expirationSeconds=expiration, notes="e2e"))
    return response.sessionProfileId  # type: ignore[no-any-return]


def _end_user(dep: Deployment, name: str) -> tuple[Key, str]:
    owner = make_key()
    api = RawApi(dep, dep.root, dep.root.organization_id)
    sub_id, _, result = create_sub_org(api, name, users=[root_user_params(f"{name} user", owner)])
    user_id = result["rootUserIds"][0]
    return Key(sub_id, user_id, owner.public_key, owner.private_key), sub_id


def _login(dep: Deployment, owner: Key, profile_id: str, expiration: str) -> tuple[Key, dict[str, object]]:
    session_key = make_key()
    response = dep.client(owner).stamp_login(StampLoginBody(
        publicKey=session_key.public_key, expirationSeconds=expiration, sessionProfileId=profile_id))
    claims = _claims(response.session)
    return Key(owner.organization_id, owner.user_id, session_key.public_key,
               session_key.private_key), claims


def test_a_session_under_a_profile_is_refused_outside_its_scope(deployment: Deployment) -> None:
    profile_id = _profile(deployment, f"wallets only {time.time_ns()}", WALLETS_ONLY)
    owner, _ = _end_user(deployment, "scoped")
    # Visible to the sub-organization, as created by the parent.
    listed = deployment.client(owner).get_session_profiles(GetSessionProfilesBody())
    assert profile_id in [p.sessionProfileId for p in listed.sessionProfiles]
    got = deployment.client(owner).get_session_profile(
        GetSessionProfileBody(sessionProfileId=profile_id)).sessionProfile
    assert got.scope == WALLETS_ONLY and got.notes == "e2e"
    session, claims = _login(deployment, owner, profile_id, "600")
    assert claims["session_profile_id"] == profile_id
    assert str(claims["session_type"]).startswith("wallets only")
    client = deployment.client(session)
    assert client.get_whoami(GetWhoamiBody()).userId == owner.user_id
    wallet = client.create_wallet(CreateWalletBody(walletName="scoped wallet", accounts=ACCOUNTS))
    assert wallet.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    with pytest.raises(TurnkeyNetworkError) as caught:
        client.create_api_keys(CreateApiKeysBody(
            userId=owner.user_id, apiKeys=[make_key().api_key_params("escalate")]))
    assert caught.value.status_code == 403
    assert "outside the scope of session profile" in str(caught.value)
    # The user's own key (no profile) is not limited.
    deployment.client(owner).create_api_keys(CreateApiKeysBody(
        userId=owner.user_id, apiKeys=[make_key().api_key_params("unscoped")]))


def test_a_session_expires_at_the_profile_bound(deployment: Deployment) -> None:
    profile_id = _profile(deployment, f"short {time.time_ns()}", "true", expiration="3")
    owner, _ = _end_user(deployment, "short lived")
    before = int(time.time())
    session, claims = _login(deployment, owner, profile_id, "900")
    assert int(claims["exp"]) <= int(time.time()) + 3  # type: ignore[call-overload]
    assert int(claims["exp"]) >= before + 3 - 1  # type: ignore[call-overload]
    client = deployment.client(session)
    while time.time() < int(claims["exp"]) + 1:  # type: ignore[call-overload]
        time.sleep(0.5)
    with pytest.raises(TurnkeyNetworkError) as caught:
        client.get_whoami(GetWhoamiBody())
    assert caught.value.status_code == 401


def test_profiles_are_validated_and_unknown_ones_refused(deployment: Deployment) -> None:
    with pytest.raises(TurnkeyNetworkError) as caught:
        deployment.client().create_session_profile(CreateSessionProfileBody(
            sessionProfileName="broken", scope="activity.resource ==", expirationSeconds=None))
    assert caught.value.status_code == 400
    owner, _ = _end_user(deployment, "unknown profile")
    with pytest.raises(Exception) as failed:
        deployment.client(owner).stamp_login(StampLoginBody(
            publicKey=make_key().public_key, sessionProfileId="00000000-0000-0000-0000-000000000000"))
    assert "session profile not found" in str(failed.value)
