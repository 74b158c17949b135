"""Session-profile escapes (issue 31 items 2 and 3), tried from the attacker's side on both
the embedded and the production path.

The attacker holds one session issued under a profile (a session key lifted from a browser):
its private key, nothing else. The profile scopes it (no exports, or wallet creation only)
and bounds it (300 s). The attacker tries to read through a query whose body claims to be an
activity the scope allows, to mint a session or an API key without the profile or its bound,
and to bind a passkey or a contact that would log in without the profile. The user's own key
and their unscoped sessions keep working beside each attempt.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import requests
from sqlalchemy import func, select

from infra.crypto import hpke
from infra.db.engine import make_engine, make_session_factory
from infra.db.models.activities import Activity
from infra.db.models.organizations import ApiKey
from tests.support.deployment import Deployment, database_url
from tests.support.keys import TestKey, make_key
from tests.support.raw_api import RawApi, Stamper, create_sub_org, root_user_params
from tests.support.soft_authenticator import SoftAuthenticator

NO_EXPORTS = "activity.action != 'EXPORT'"
WALLETS_ONLY_NO_READS = "activity.resource == 'WALLET' && activity.action == 'CREATE'"
ACCOUNTS = [{"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
             "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]
A_YEAR = "31536000"
BOUND = 300
#: Slack for the clocks of the test and the service (never a timing assertion: a bound).
SLACK = 60


@dataclass
class Victim:
    """An end user in a sub-organization, holding their own API key."""

    dep: Deployment
    owner: TestKey
    organization_id: str
    user_id: str

    def api(self, stamper: Stamper) -> RawApi:
        return RawApi(self.dep, stamper, self.organization_id)


def _victim(dep: Deployment, name: str) -> Victim:
    owner = make_key()
    root = RawApi(dep, dep.root, dep.root.organization_id)
    sub_id, _, result = create_sub_org(root, f"{name} {time.time_ns()}",
                                       users=[root_user_params(f"{name} user", owner)])
    return Victim(dep, owner, sub_id, result["rootUserIds"][0])


def _profile(dep: Deployment, scope: str, expiration: int | None = BOUND) -> str:
    root = RawApi(dep, dep.root, dep.root.organization_id)
    params: dict[str, Any] = {"sessionProfileName": f"scoped {time.time_ns()}", "scope": scope}
    if expiration is not None:
        params["expirationSeconds"] = str(expiration)
    created = root.ok("create_session_profile", "ACTIVITY_TYPE_CREATE_SESSION_PROFILE", params)
    return str(created["sessionProfileId"])


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


def _stamp_login(api: RawApi, key: TestKey, *, profile_id: str | None = None,
                 expiration: str = "900") -> requests.Response:
    params = {"publicKey": key.public_key, "expirationSeconds": expiration}
    if profile_id:
        params["sessionProfileId"] = profile_id
    return api.submit("stamp_login", "ACTIVITY_TYPE_STAMP_LOGIN", params)


def _session(victim: Victim, stamper: Stamper, *, profile_id: str | None = None,
             expiration: str = "900") -> tuple[TestKey, dict[str, Any]]:
    key = make_key()
    response = _stamp_login(victim.api(stamper), key, profile_id=profile_id, expiration=expiration)
    assert response.status_code == 200, response.text
    activity = response.json()["activity"]
    assert activity["status"] == "ACTIVITY_STATUS_COMPLETED", activity
    return key, _claims(activity["result"]["stampLoginResult"]["session"])


def _row(dep: Deployment, public_key: str) -> ApiKey:
    engine = make_engine(database_url(dep), pool_size=1)
    try:
        with make_session_factory(engine)() as session:
            row = session.scalar(select(ApiKey).where(ApiKey.public_key == public_key))
            assert row is not None, f"no api key {public_key}"
            session.expunge(row)
            return row
    finally:
        engine.dispose()


def _stored(dep: Deployment, organization_id: str, activity_type: str) -> int:
    engine = make_engine(database_url(dep), pool_size=1)
    try:
        with make_session_factory(engine)() as session:
            return int(session.scalar(select(func.count()).select_from(Activity).where(
                Activity.organization_id == organization_id, Activity.type == activity_type)) or 0)
    finally:
        engine.dispose()


def _lives(row: ApiKey) -> float:
    """Seconds from now until the key expires."""
    assert row.expires_at is not None
    expires = row.expires_at if row.expires_at.tzinfo else row.expires_at.replace(tzinfo=UTC)
    return (expires - datetime.now(UTC)).total_seconds()


def _refused(response: requests.Response, *phrases: str) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert set(body) >= {"code", "message", "details"}, body
    for phrase in phrases:
        assert phrase in body["message"], body["message"]


def _wallet(victim: Victim) -> str:
    created = victim.api(victim.owner).ok("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", {
        "walletName": f"wallet {time.time_ns()}", "accounts": ACCOUNTS})
    return str(created["walletId"])


def _export(api: RawApi, wallet_id: str) -> requests.Response:
    target = hpke.uncompressed(hpke.generate_private_key().public_key()).hex()
    return api.submit("export_wallet", "ACTIVITY_TYPE_EXPORT_WALLET",
                      {"walletId": wallet_id, "targetPublicKey": target})


# --- item 2: the scope is judged by the route ---------------------------------------------


def test_a_query_whose_body_names_an_allowed_activity_is_judged_as_a_query(
        deployment: Deployment) -> None:
    victim = _victim(deployment, "query disguise")
    profile_id = _profile(deployment, WALLETS_ONLY_NO_READS)
    stolen, _ = _session(victim, victim.owner, profile_id=profile_id)
    # Honest: the session does what its scope allows.
    victim.api(stolen).ok("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                          {"walletName": "allowed", "accounts": ACCOUNTS})
    # Attacker: a query body dressed as the activity the scope allows.
    disguise = {"type": "ACTIVITY_TYPE_CREATE_WALLET",
                "parameters": {"walletName": "x", "accounts": ACCOUNTS}}
    for path in ("list_users", "get_api_keys", "list_wallets", "list_activities"):
        body = {**disguise, "userId": victim.user_id} if path == "get_api_keys" else disguise
        _refused(victim.api(stolen).query(path, body), "outside the scope of session profile")
    _refused(victim.api(stolen).query("list_wallets"), "outside the scope of session profile")
    # Honest: the user's own key reads.
    assert victim.api(victim.owner).read("list_wallets")["wallets"]


# --- item 3: credentials minted by a profiled session -------------------------------------


def test_stamp_login_from_a_profiled_session_inherits_its_profile_and_bound(
        deployment: Deployment) -> None:
    victim = _victim(deployment, "login escape")
    profile_id = _profile(deployment, NO_EXPORTS)
    wallet_id = _wallet(victim)
    stolen, _ = _session(victim, victim.owner, profile_id=profile_id)
    _refused(_export(victim.api(stolen), wallet_id), "outside the scope of session profile")

    # Attacker: a fresh one-year session with no profile, stamped by the stolen one.
    minted, claims = _session(victim, stolen, expiration=A_YEAR)
    assert claims["session_profile_id"] == profile_id
    assert int(claims["exp"]) <= time.time() + BOUND + SLACK
    row = _row(deployment, minted.public_key)
    assert row.session_profile_id == profile_id
    assert _lives(row) <= BOUND + SLACK
    _refused(_export(victim.api(minted), wallet_id), "outside the scope of session profile")
    # Lineage: the minted session descends from the owner's key, through the stolen session.
    owner_key = _row(deployment, victim.owner.public_key)
    assert _row(deployment, stolen.public_key).lineage_root_id == owner_key.id
    assert row.lineage_root_id == owner_key.id

    # Attacker: naming a wider profile is refused before anything is stored.
    wide = _profile(deployment, "true", expiration=None)
    before = _stored(deployment, victim.organization_id, "ACTIVITY_TYPE_STAMP_LOGIN")
    _refused(_stamp_login(victim.api(stolen), make_key(), profile_id=wide),
             "ACTIVITY_TYPE_STAMP_LOGIN names another session profile", profile_id)
    assert _stored(deployment, victim.organization_id, "ACTIVITY_TYPE_STAMP_LOGIN") == before
    # Naming its own profile is a refresh.
    _, refreshed = _session(victim, stolen, profile_id=profile_id)
    assert refreshed["session_profile_id"] == profile_id

    # Honest: the owner's own key exports.
    exported = _export(victim.api(victim.owner), wallet_id)
    assert exported.status_code == 200, exported.text
    assert exported.json()["activity"]["status"] == "ACTIVITY_STATUS_COMPLETED"


def test_a_re_login_of_the_same_key_keeps_its_profile(deployment: Deployment) -> None:
    victim = _victim(deployment, "same key")
    profile_id = _profile(deployment, NO_EXPORTS)
    stolen, _ = _session(victim, victim.owner, profile_id=profile_id)
    lineage = _row(deployment, stolen.public_key).lineage_root_id
    # Attacker: the stolen key logs itself in again, for a year, without the profile.
    response = _stamp_login(victim.api(stolen), stolen, expiration=A_YEAR)
    assert response.status_code == 200, response.text
    claims = _claims(response.json()["activity"]["result"]["stampLoginResult"]["session"])
    assert claims["session_profile_id"] == profile_id
    row = _row(deployment, stolen.public_key)
    assert row.session_profile_id == profile_id
    assert _lives(row) <= BOUND + SLACK
    assert row.lineage_root_id == lineage
    # Even the owner's own key, re-logging that key without a profile, does not drop it.
    response = _stamp_login(victim.api(victim.owner), stolen, expiration=A_YEAR)
    assert response.status_code == 200, response.text
    row = _row(deployment, stolen.public_key)
    assert row.session_profile_id == profile_id
    assert _lives(row) <= BOUND + SLACK


def test_create_api_keys_from_a_profiled_session_inherits_its_profile_and_bound(
        deployment: Deployment) -> None:
    victim = _victim(deployment, "key escape")
    profile_id = _profile(deployment, NO_EXPORTS)
    wallet_id = _wallet(victim)
    stolen, _ = _session(victim, victim.owner, profile_id=profile_id)
    owner_key = _row(deployment, victim.owner.public_key)

    # Attacker: a lasting API key, made by the stolen session.
    lasting = make_key()
    victim.api(stolen).ok("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": victim.user_id, "apiKeys": [lasting.api_key_params("lasting")]})
    row = _row(deployment, lasting.public_key)
    assert row.session_profile_id == profile_id
    assert row.expires_at is not None and _lives(row) <= BOUND + SLACK
    assert row.lineage_root_id == owner_key.id
    _refused(_export(victim.api(lasting), wallet_id), "outside the scope of session profile")

    # Honest: the owner's key makes a lasting key, with no profile, descending from it.
    honest = make_key()
    victim.api(victim.owner).ok("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": victim.user_id, "apiKeys": [honest.api_key_params("honest")]})
    row = _row(deployment, honest.public_key)
    assert (row.session_profile_id, row.expires_at) == (None, None)
    assert row.lineage_root_id == owner_key.id


def test_an_unscoped_session_still_refreshes_and_makes_api_keys(deployment: Deployment) -> None:
    victim = _victim(deployment, "unscoped")
    owner_key = _row(deployment, victim.owner.public_key)
    session, claims = _session(victim, victim.owner, expiration=A_YEAR)
    assert "session_profile_id" not in claims
    # A refresh: a new session stamped by the old one, as long as asked.
    refreshed, claims = _session(victim, session, expiration=A_YEAR)
    assert "session_profile_id" not in claims
    row = _row(deployment, refreshed.public_key)
    assert row.session_profile_id is None
    assert _lives(row) > int(A_YEAR) - SLACK
    assert row.lineage_root_id == owner_key.id
    key = make_key()
    victim.api(refreshed).ok("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": victim.user_id, "apiKeys": [key.api_key_params("from a session")]})
    row = _row(deployment, key.public_key)
    assert (row.session_profile_id, row.expires_at) == (None, None)
    assert row.lineage_root_id == owner_key.id
    # A passkey issues a session of its own lineage (none).
    passkey = SoftAuthenticator()
    victim.api(victim.owner).ok("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
        "userId": victim.user_id, "authenticators": [passkey.registration("own")]})
    by_passkey, _ = _session(victim, passkey)
    assert _row(deployment, by_passkey.public_key).lineage_root_id is None


# --- activities whose credentials no profile follows --------------------------------------


def test_unfollowed_activities_are_refused_unless_the_scope_names_them(
        deployment: Deployment) -> None:
    victim = _victim(deployment, "unfollowed")
    stolen, _ = _session(victim, victim.owner, profile_id=_profile(deployment, NO_EXPORTS))
    api = victim.api(stolen)
    # Attacker: a passkey of their own (it stamps with no profile), then a contact.
    tries = [
        ("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
            "userId": victim.user_id,
            "authenticators": [SoftAuthenticator().registration("mallory")]}),
        ("update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL", {
            "userId": victim.user_id, "userEmail": "mallory@example.com"}),
        ("update_user", "ACTIVITY_TYPE_UPDATE_USER", {
            "userId": victim.user_id, "userPhoneNumber": "+15550001234"}),
    ]
    for path, type_, params in tries:
        _refused(api.submit(path, type_, params), type_, "binds a credential or identity",
                 f"may do only when its scope names {type_!r}")
        assert _stored(deployment, victim.organization_id, type_) == 0
    # Honest: what the deny-list scope allows and binds nothing still runs.
    api.ok("update_user", "ACTIVITY_TYPE_UPDATE_USER",
           {"userId": victim.user_id, "userName": "renamed"})

    # A scope that names the activity allows it.
    naming = _profile(deployment, "activity.type == 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2'")
    allowed, _ = _session(victim, victim.owner, profile_id=naming)
    created = victim.api(allowed).ok(
        "create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
            "userId": victim.user_id,
            "authenticators": [SoftAuthenticator().registration("named")]})
    assert len(created["authenticatorIds"]) == 1
