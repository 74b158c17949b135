"""MFA against the credential it exists to contain, on ``walletd up`` and the production roles.

The attacker holds one stolen credential of the victim (a session the victim made from their
passkey, or the victim's API key) and nothing else: not the passkey, not the mailbox. The
victim's policy says "exports need <a factor>". Each test tries one way to make the stolen
credential satisfy or remove that factor, shows what stops it (the export stays
``ACTIVITY_STATUS_AUTHENTICATORS_NEEDED``, the change waits or is refused, nothing is stored),
and beside it the honest flow that must keep working (docs/ACCESS.md, "MFA policies").
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from turnkey_sdk_types import CreateMfaPolicyBody

from infra.crypto import hpke
from tests.e2e.test_mfa_policies import SETTLE_S, WAITING, User, deployment, smtp_mailbox
from tests.support.deployment import Deployment, Key
from tests.support.keys import TestKey, make_key
from tests.support.mailboxes import Mailbox
from tests.support.mfa import verification_token
from tests.support.raw_api import RawApi
from tests.support.soft_authenticator import SoftAuthenticator

EXPORTS = "activity.resource == 'WALLET' && activity.action == 'EXPORT'"
SIGNING = "activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'"
COMPLETED = "ACTIVITY_STATUS_COMPLETED"
ACCOUNTS = [{"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
             "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]


def step(*types: str) -> list[dict[str, Any]]:
    return [{"any": [{"type": f"AUTHENTICATION_TYPE_{t}"} for t in types]}]


@pytest.fixture(scope="module")
def mailbox() -> Iterator[tuple[Mailbox, dict[str, str]]]:
    yield from smtp_mailbox()


@pytest.fixture(scope="module", params=["embedded", "production"])
def dep(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
        mailbox: tuple[Mailbox, dict[str, str]]) -> Iterator[Deployment]:
    yield from deployment(request.param, tmp_path_factory, mailbox[1])


class Victim(User):
    """A root user (quorum 1) with a wallet, an API key, a passkey and an email, and a session
    made from the passkey: the credential the attacker stole (unless a test says otherwise)."""

    def __init__(self, dep: Deployment, name: str, condition: str, steps: list[dict[str, Any]],
                 admin: bool = False) -> None:
        super().__init__(dep, name, admin=admin)
        self.wallet_id: str = self.api.ok("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", {
            "walletName": "savings", "accounts": ACCOUNTS})["walletId"]
        self.policy_id: str = self.api.ok("create_mfa_policy", "ACTIVITY_TYPE_CREATE_MFA_POLICY", {
            "userId": self.user_id, "mfaPolicyName": "exports", "condition": condition,
            "requiredAuthenticationMethods": steps, "order": 0})["mfaPolicyId"]
        self.session = self.login(self.passkey)
        self.stolen = RawApi(dep, self.session, self.org)

    def login(self, stamper: Any) -> TestKey:
        """A session (``stamp_login``) stamped by ``stamper``; its key."""
        key = make_key()
        RawApi(self.dep, stamper, self.org).ok("stamp_login", "ACTIVITY_TYPE_STAMP_LOGIN",
                                               {"publicKey": key.public_key})
        return key

    def key_of(self, key: TestKey) -> Key:
        return Key(self.org, self.user_id, key.public_key, key.private_key)

    def activity(self, activity_id: str) -> dict[str, Any]:
        return self.api.read("get_activity", {"activityId": activity_id})["activity"]  # type: ignore[no-any-return]

    def authenticators(self) -> list[str]:
        found = self.api.read("get_authenticators", {"userId": self.user_id})["authenticators"]
        return sorted(a["authenticatorId"] for a in found)

    def api_keys(self) -> list[str]:
        found = self.api.read("get_api_keys", {"userId": self.user_id})["apiKeys"]
        return sorted(k["credential"]["publicKey"] for k in found)


def export(api: RawApi, victim: Victim, expected: str = WAITING) -> dict[str, Any]:
    """``export_wallet`` of the victim's wallet by ``api``, ending in ``expected`` (a policy
    reaches every worker with its notification: retried within SETTLE_S)."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        target = hpke.uncompressed(hpke.generate_private_key().public_key()).hex()
        response = api.submit("export_wallet", "ACTIVITY_TYPE_EXPORT_WALLET",
                              {"walletId": victim.wallet_id, "targetPublicKey": target})
        assert response.status_code == 200, response.text
        activity: dict[str, Any] = response.json()["activity"]
        if activity["status"] == expected or time.monotonic() > deadline:
            assert activity["status"] == expected, activity
            return activity
        time.sleep(0.1)


def submitted(response: requests.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return response.json()["activity"]  # type: ignore[no-any-return]


def refused(response: requests.Response, *words: str) -> None:
    assert 400 <= response.status_code < 500, response.text
    body = response.json()
    assert {"code", "message", "details"} <= set(body), body
    for word in words:
        assert word in body["message"], body


def still_waiting(victim: Victim, activity: dict[str, Any]) -> None:
    found = victim.activity(activity["id"])
    assert found["status"] == WAITING, found
    assert not found.get("result", {}).get("exportWalletResult"), found


def test_a_passkey_enrolled_after_the_proposal_does_not_satisfy_it(dep: Deployment) -> None:
    """Attacker: the stolen session, and a passkey of their own that an administrator was
    talked into enrolling for the victim after the export was proposed. Stopped by: a step is
    satisfied only by a passkey that existed before the activity."""
    victim = Victim(dep, "mfa late passkey", EXPORTS, step("PASSKEY"), admin=True)
    waiting = export(victim.stolen, victim)
    mallory = SoftAuthenticator()
    admin = RawApi(dep, victim.admin_key, victim.org)
    admin.ok("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
        "userId": victim.user_id, "authenticators": [mallory.registration("mallory")]})
    refused(victim.approve(mallory, waiting["fingerprint"]),
            "AUTHENTICATION_TYPE_PASSKEY", "was created after activity")
    still_waiting(victim, waiting)
    # The honest flow: the passkey the victim already had approves it.
    done = submitted(victim.approve(victim.passkey, waiting["fingerprint"]))
    assert done["status"] == COMPLETED and done["id"] == waiting["id"], done


def test_a_stolen_session_cannot_enroll_a_passkey_for_its_own_user(dep: Deployment) -> None:
    """Attacker: the stolen session; tries ``create_authenticators`` for the victim (allowed by
    default for one's own user) to approve the export with it. Stopped by: adding a
    credential is under the user's MFA whatever the policy's condition says."""
    victim = Victim(dep, "mfa enroll", EXPORTS, step("PASSKEY"))
    before = victim.authenticators()
    waiting = export(victim.stolen, victim)
    mallory = SoftAuthenticator()
    enrolling = submitted(victim.stolen.submit(
        "create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
        {"userId": victim.user_id, "authenticators": [mallory.registration("mallory")]}))
    assert enrolling["status"] == WAITING, enrolling
    assert victim.authenticators() == before
    refused(victim.approve(mallory, waiting["fingerprint"]))
    still_waiting(victim, waiting)
    # The honest flow: the victim enrolls a second passkey, approving with their first one.
    second = SoftAuthenticator()
    own = submitted(RawApi(dep, victim.login(victim.passkey), victim.org).submit(
        "create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
        {"userId": victim.user_id, "authenticators": [second.registration("second")]}))
    assert own["status"] == WAITING, own
    done = submitted(victim.approve(victim.passkey, own["fingerprint"]))
    assert done["status"] == COMPLETED, done
    assert len(victim.authenticators()) == len(before) + 1


def test_a_stolen_session_cannot_add_an_api_key_for_an_api_key_step(dep: Deployment) -> None:
    """Attacker: the stolen session; tries ``create_api_keys`` for the victim to satisfy an
    API_KEY step. Stopped by: the key creation waits for the victim's MFA."""
    victim = Victim(dep, "mfa new key", EXPORTS, step("API_KEY"))
    before = victim.api_keys()
    waiting = export(victim.stolen, victim)
    mallory = make_key()
    adding = submitted(victim.stolen.submit(
        "create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
        {"userId": victim.user_id, "apiKeys": [mallory.api_key_params("mallory")]}))
    assert adding["status"] == WAITING, adding
    assert victim.api_keys() == before
    refused(victim.approve(mallory, waiting["fingerprint"]))
    still_waiting(victim, waiting)
    # The honest flow: the victim's own API key (older than the export) approves it.
    done = submitted(victim.approve(victim.key, waiting["fingerprint"]))
    assert done["status"] == COMPLETED, done


def test_a_contact_the_attacker_sets_does_not_satisfy_an_email_step(
        dep: Deployment, mailbox: tuple[Mailbox, dict[str, str]]) -> None:
    """Attacker: the stolen session and their own mailbox; tries ``update_user_email`` to their
    address (with a token proving it) and an OTP to it for the EMAIL_OTP step. Stopped by: the
    contact change waits for the victim's MFA, and a code counts only for the contact the
    user had verified before the activity."""
    victim = Victim(dep, "mfa email", EXPORTS, step("EMAIL_OTP"))
    waiting = export(victim.stolen, victim)
    attacker_email = "mallory.mfa@example.net"
    stolen_client = dep.client(victim.key_of(victim.session))
    proof = verification_token(dep, stolen_client, mailbox[0], attacker_email, make_key())
    changing = submitted(victim.stolen.submit(
        "update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
        {"userId": victim.user_id, "userEmail": attacker_email, "verificationToken": proof}))
    assert changing["status"] == WAITING, changing
    user = victim.api.read("get_user", {"userId": victim.user_id})["user"]
    assert user["userEmail"] == victim.email, user
    client_key = make_key()
    token = verification_token(dep, stolen_client, mailbox[0], attacker_email, client_key)
    refused(victim.approve(client_key, waiting["fingerprint"], attested=token))
    still_waiting(victim, waiting)
    # The honest flow: a code sent to the victim's own (verified) email approves it.
    honest_key = make_key()
    token = verification_token(dep, victim.client(), mailbox[0], victim.email, honest_key)
    done = submitted(victim.approve(honest_key, waiting["fingerprint"], attested=token))
    assert done["status"] == COMPLETED, done


def test_the_proposing_credential_cannot_approve_its_own_proposal(dep: Deployment) -> None:
    """Attacker: the victim's stolen API key, under a policy whose step takes a session or an
    API key; approves the export it proposed with itself. Stopped by: never the credential
    that proposed the activity."""
    victim = Victim(dep, "mfa self approval", EXPORTS, step("API_KEY", "SESSION"))
    waiting = export(victim.api, victim)
    refused(victim.approve(victim.key, waiting["fingerprint"]),
            "credential that proposed activity")
    still_waiting(victim, waiting)
    # The honest flow: another credential the victim already held (the passkey's session).
    done = submitted(victim.approve(victim.session, waiting["fingerprint"]))
    assert done["status"] == COMPLETED, done


def test_a_stolen_root_credential_cannot_remove_or_loosen_its_mfa(dep: Deployment) -> None:
    """Attacker: the stolen session of a root user, root quorum 1 (so the root quorum is
    theirs); tries ``delete_mfa_policy`` and ``update_mfa_policy`` (condition "false") on the
    victim's own policies. Stopped by: both wait for the steps of ALL the victim's policies."""
    victim = Victim(dep, "mfa remove", EXPORTS, step("PASSKEY"))
    delete = submitted(victim.stolen.submit("delete_mfa_policy", "ACTIVITY_TYPE_DELETE_MFA_POLICY",
                                            {"userId": victim.user_id,
                                             "mfaPolicyId": victim.policy_id}))
    assert delete["status"] == WAITING, delete
    loosen = submitted(victim.stolen.submit("update_mfa_policy", "ACTIVITY_TYPE_UPDATE_MFA_POLICY",
                                            {"userId": victim.user_id,
                                             "mfaPolicyId": victim.policy_id,
                                             "condition": "false"}))
    assert loosen["status"] == WAITING, loosen
    shown = victim.api.read("get_mfa_policy", {"userId": victim.user_id,
                                               "mfaPolicyId": victim.policy_id})["mfaPolicy"]
    assert shown["condition"] == EXPORTS, shown
    still_waiting(victim, export(victim.stolen, victim))
    # The honest flow: the victim changes their policy with the factor it names.
    own = submitted(victim.api.submit("update_mfa_policy", "ACTIVITY_TYPE_UPDATE_MFA_POLICY",
                                      {"userId": victim.user_id, "mfaPolicyId": victim.policy_id,
                                       "mfaPolicyName": "exports, renamed"}))
    assert own["status"] == WAITING, own
    statuses = victim.api.read("get_mfa_status", {"activityId": own["id"]})["mfaStatuses"]
    assert [(s["mfaPolicyId"], s["satisfied"]) for s in statuses] == [(victim.policy_id, False)]
    done = submitted(victim.approve(victim.passkey, own["fingerprint"]))
    assert done["status"] == COMPLETED, done


def test_all_of_the_proposers_policies_guard_a_credential_change(dep: Deployment) -> None:
    """Attacker: the stolen session and the victim's API key, the factor of a weak policy
    (signatures need an API key); tries to add a passkey that would defeat the strong one
    (exports need a passkey). Stopped by: a credential change needs every policy's steps."""
    victim = Victim(dep, "mfa weak policy", EXPORTS, step("PASSKEY"), admin=True)
    weak = victim.admin.create_mfa_policy(CreateMfaPolicyBody(
        userId=victim.user_id, mfaPolicyName="signing", condition=SIGNING,
        requiredAuthenticationMethods=step("API_KEY"), order=1)).mfaPolicyId
    policies = [victim.policy_id, weak]
    mallory = SoftAuthenticator()
    adding = submitted(victim.stolen.submit(
        "create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
        {"userId": victim.user_id, "authenticators": [mallory.registration("mallory")]}))
    assert adding["status"] == WAITING, adding
    statuses = victim.api.read("get_mfa_status", {"activityId": adding["id"]})["mfaStatuses"]
    assert [(s["mfaPolicyId"], s["satisfied"]) for s in statuses] == [(p, False) for p in policies]
    # The API key is offered for the first open step, the strong policy's passkey: refused.
    refused(victim.approve(victim.key, adding["fingerprint"]), "AUTHENTICATION_TYPE_PASSKEY")
    assert victim.activity(adding["id"])["status"] == WAITING
    # The honest flow: the victim's own change, approved with the passkey, then the API key.
    own = submitted(RawApi(dep, victim.login(victim.passkey), victim.org).submit(
        "create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
        {"userId": victim.user_id, "authenticators": [SoftAuthenticator().registration("2nd")]}))
    assert own["status"] == WAITING, own
    first = submitted(victim.approve(victim.passkey, own["fingerprint"]))
    assert first["status"] == WAITING, first
    done = submitted(victim.approve(victim.key, own["fingerprint"]))
    assert done["status"] == COMPLETED, done


def test_changing_another_users_credentials_needs_the_root_quorum(dep: Deployment) -> None:
    """Attacker: a non-root "helpdesk" user whom a policy lets create API keys; tries to add a
    key to the victim (who has an MFA policy). Stopped by: another user's credentials, while
    they have MFA policies, are for the root quorum only."""
    victim = Victim(dep, "mfa helpdesk", EXPORTS, step("PASSKEY"), admin=True)
    admin = RawApi(dep, victim.admin_key, victim.org)
    helpdesk_key = make_key()
    helpdesk_id = admin.ok("create_users", "ACTIVITY_TYPE_CREATE_USERS_V3", {"users": [{
        "userName": "helpdesk", "userTags": [], "authenticators": [], "oauthProviders": [],
        "apiKeys": [helpdesk_key.api_key_params("helpdesk")]}]})["userIds"][0]
    admin.ok("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        "policyName": "helpdesk adds API keys", "effect": "EFFECT_ALLOW", "notes": "",
        "condition": "activity.resource == 'CREDENTIAL' && activity.action == 'CREATE'",
        "consensus": f"approvers.any(user, user.id == '{helpdesk_id}')"})
    helpdesk = RawApi(dep, helpdesk_key, victim.org)
    before = victim.api_keys()
    mallory = make_key()
    response = helpdesk.submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": victim.user_id, "apiKeys": [mallory.api_key_params("mallory")]})
    refused(response, "only the root quorum may change the credentials")
    assert victim.api_keys() == before
    # The honest flows: the policy still works for a user without MFA policies, and the
    # root quorum (the administrator, quorum 1) may add a key to the victim.
    done = submitted(helpdesk.submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": victim.admin_id, "apiKeys": [make_key().api_key_params("spare")]}))
    assert done["status"] == COMPLETED, done
    admin.ok("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": victim.user_id, "apiKeys": [make_key().api_key_params("from the admin")]})
    assert len(victim.api_keys()) == len(before) + 1


def test_a_session_refreshed_from_the_stolen_one_cannot_approve_its_proposal(
        dep: Deployment) -> None:
    """Attacker: the stolen session, which refreshes itself with ``stamp_login`` into a second
    session before proposing, then approves a SESSION step with that one. Stopped by: a
    credential of the proposer's lineage never satisfies a step."""
    victim = Victim(dep, "mfa lineage", EXPORTS, step("SESSION"))
    refreshed = victim.login(victim.session)
    other = victim.login(victim.passkey)  # the victim's own, independent login
    waiting = export(victim.stolen, victim)
    refused(victim.approve(refreshed, waiting["fingerprint"]), "same lineage")
    still_waiting(victim, waiting)
    # The honest flow: a session the victim made from their passkey approves it.
    done = submitted(victim.approve(other, waiting["fingerprint"]))
    assert done["status"] == COMPLETED, done
