"""MFA policies through the official ``turnkey-http`` client, on both paths.

A user whose policy asks, for signatures, an email one-time code and then a passkey: the
signature waits in ``ACTIVITY_STATUS_AUTHENTICATORS_NEEDED``; ``get_mfa_status`` reports each
step; ``approve_activity`` stamped with an ``X-Stamp-Attested`` verification token satisfies the
email step and one stamped by the passkey (``X-Stamp-Webauthn``, software authenticator) the
passkey step, which completes the signature. An approval with the wrong kind of credential (the
user's API key for the email step; a session made from the passkey for the passkey step) is
refused and leaves the step open, and so is one by the credential that proposed the activity.
What a stolen credential tries against MFA is in ``tests/e2e/abuse/test_mfa_bypass.py``.
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import (
    CreateMfaPolicyBody,
    CreateWebhookEndpointBody,
    DeleteMfaPolicyBody,
    GetMfaPoliciesBody,
    GetMfaPolicyBody,
    GetMfaStatusBody,
    UpdateMfaPolicyBody,
    v1WebhookSubscriptionParams,
)

from tests.support import services
from tests.support.deployment import Deployment, Key
from tests.support.interop import INTEROP, node_with
from tests.support.keys import TestKey, make_key
from tests.support.mailboxes import Mailbox, start_smtp
from tests.support.mfa import attested_approve, verification_token
from tests.support.raw_api import RawApi, create_sub_org, root_user_params
from tests.support.soft_authenticator import SoftAuthenticator
from tests.support.webhook_receiver import WebhookReceiver

ACCOUNTS = [{"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
             "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]
SIGNING = "activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'"
EMAIL_THEN_PASSKEY = [{"any": [{"type": "AUTHENTICATION_TYPE_EMAIL_OTP"}]},
                      {"any": [{"type": "AUTHENTICATION_TYPE_PASSKEY"}]}]
WAITING = "ACTIVITY_STATUS_AUTHENTICATORS_NEEDED"


def smtp_mailbox() -> Iterator[tuple[Mailbox, dict[str, str]]]:
    """A loopback SMTP server and the settings that send a deployment's mail to it."""
    controller, box, port = start_smtp()
    yield box, {"WALLETD_SMTP_URL": f"smtp://127.0.0.1:{port}",
                "WALLETD_EMAIL_FROM": "Wallet App <login@wallet.example>",
                "WALLETD_WEBHOOK_ALLOW": "127.0.0.1"}
    controller.stop()


def deployment(kind: str, tmp_path_factory: pytest.TempPathFactory,
               env: dict[str, str]) -> Iterator[Deployment]:
    """``walletd up`` (``embedded``) or the production roles over a database of their own."""
    workdir = tmp_path_factory.mktemp(f"mfa-{kind}")
    if kind == "embedded":
        made = Deployment.embedded(workdir, env)
    else:
        # A database and vhost of its own: the session's ``production`` deployment has
        # bootstrapped ``pg_url`` already.
        services.require("PostgreSQL", "127.0.0.1", 5432)
        services.require("RabbitMQ", "127.0.0.1", 5672)
        database, vhost = services.create_database(), services.create_vhost()
        made = Deployment.production(workdir, database, vhost, env)
    yield made
    made.stop()
    if kind == "production":
        services.drop_database(database)
        services.delete_vhost(vhost)


@pytest.fixture(scope="module")
def mailbox() -> Iterator[tuple[Mailbox, dict[str, str]]]:
    yield from smtp_mailbox()


@pytest.fixture(scope="module", params=["embedded", "production"])
def dep(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
        mailbox: tuple[Mailbox, dict[str, str]]) -> Iterator[Deployment]:
    yield from deployment(request.param, tmp_path_factory, mailbox[1])


class User:
    """A sub-organization's root user with an email, an API key and a passkey; with
    ``admin``, a second root user (quorum 1) who administers it."""

    def __init__(self, dep: Deployment, name: str, admin: bool = False) -> None:
        self.dep = dep
        self.email = f"{name.replace(' ', '.')}@example.com"
        self.key = make_key()
        self.passkey = SoftAuthenticator()
        self.admin_key = make_key()
        parent = RawApi(dep, dep.root, dep.root.organization_id)
        self.org, _, result = create_sub_org(parent, name, users=[root_user_params(
            name, self.key, userEmail=self.email,
            authenticators=[self.passkey.registration("mfa passkey")]),
            *([root_user_params(f"{name} admin", self.admin_key)] if admin else [])])
        self.user_id: str = result["rootUserIds"][0]
        self.admin_id: str = result["rootUserIds"][-1]
        self.api = RawApi(dep, self.key, self.org)
        self.admin: Any = (dep.client(Key(self.org, result["rootUserIds"][1], self.admin_key.public_key,
                                     self.admin_key.private_key)) if admin else None)
        self.as_key = Key(self.org, self.user_id, self.key.public_key, self.key.private_key)

    def client(self) -> Any:
        return self.dep.client(self.as_key)

    def approve(self, stamper: Any, fingerprint: str, attested: str | None = None) -> requests.Response:
        if attested is not None:
            return attested_approve(self.dep, self.org, stamper, attested, fingerprint)
        return RawApi(self.dep, stamper, self.org).submit(
            "approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", {"fingerprint": fingerprint})

    def email_token(self, box: Mailbox, client_key: TestKey) -> str:
        """init_otp → the emailed code → verify_otp (bundle bound to ``client_key``)."""
        return verification_token(self.dep, self.client(), box, self.email, client_key)


def _policy(user: User, condition: str = SIGNING, steps: list[dict[str, Any]] | None = None,
            order: int = 0) -> str:
    return user.client().create_mfa_policy(CreateMfaPolicyBody(  # type: ignore[no-any-return]
        userId=user.user_id, mfaPolicyName="sign with email and passkey", condition=condition,
        requiredAuthenticationMethods=steps or EMAIL_THEN_PASSKEY, order=order)).mfaPolicyId


def _wallet_address(user: User) -> str:
    result = user.api.ok("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                         {"walletName": "mfa wallet", "accounts": ACCOUNTS})
    return result["addresses"][0]  # type: ignore[no-any-return]


#: A policy change reaches every worker process with its database notification, milliseconds
#: after the commit the activity answered after: a signature submitted right after a change
#: may be decided by a process that has not seen it yet. Tests wait (bounded) for the expected
#: outcome with fresh payloads rather than assume it at once.
SETTLE_S = 10.0


def _sign_once(api: RawApi, address: str, n: int) -> dict[str, Any]:
    response = api.submit("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
        "signWith": address, "payload": f"{n:064x}", "encoding": "PAYLOAD_ENCODING_HEXADECIMAL",
        "hashFunction": "HASH_FUNCTION_NO_OP"})
    assert response.status_code == 200, response.text
    return response.json()["activity"]  # type: ignore[no-any-return]


def _sign(user: User | None, address: str, n: int = 1, expected: str = WAITING,
          api: RawApi | None = None) -> dict[str, Any]:
    """A signature ending in ``expected`` (each attempt signs another payload)."""
    deadline = time.monotonic() + SETTLE_S
    attempt = 0
    while True:
        activity = _sign_once(api or user.api, address, n * 1000 + attempt)  # type: ignore[union-attr]
        if activity["status"] == expected or time.monotonic() > deadline:
            return activity
        attempt += 1
        time.sleep(0.1)


def _status(user: User, activity_id: str) -> dict[str, Any]:
    statuses = user.client().get_mfa_status(GetMfaStatusBody(activityId=activity_id)).mfaStatuses
    (only,) = statuses
    return only.model_dump(by_alias=True, exclude_none=True, mode="json")  # type: ignore[no-any-return]


def test_a_signature_completes_after_an_email_step_and_a_passkey_step(
        dep: Deployment, mailbox: tuple[Mailbox, dict[str, str]]) -> None:
    user = User(dep, "mfa signer")
    address = _wallet_address(user)  # wallets are not covered by the policy: no wait
    receiver = WebhookReceiver().start()
    user.client().create_webhook_endpoint(CreateWebhookEndpointBody(
        url=receiver.url, name="mfa hooks",
        subscriptions=[v1WebhookSubscriptionParams(eventType="ACTIVITY_UPDATES")]))
    policy_id = _policy(user)
    waiting = _sign(user, address)
    assert waiting["status"] == WAITING, waiting
    status = _status(user, waiting["id"])
    assert status["mfaPolicyId"] == policy_id and status["userId"] == user.user_id
    assert status["satisfied"] is False and status["satisfiedMethods"] == []
    assert [s["any"][0]["type"] for s in status["requiredMethods"]] == [
        "AUTHENTICATION_TYPE_EMAIL_OTP", "AUTHENTICATION_TYPE_PASSKEY"]

    # Step 1 wants an email code: the user's API key is refused, the step stays open.
    wrong = user.approve(user.key, waiting["fingerprint"])
    assert wrong.status_code == 403, wrong.text
    assert "AUTHENTICATION_TYPE_EMAIL_OTP" in wrong.json()["message"]
    assert _status(user, waiting["id"])["satisfiedMethods"] == []

    client_key = make_key()
    token = user.email_token(mailbox[0], client_key)
    step1 = user.approve(client_key, waiting["fingerprint"], attested=token)
    assert step1.status_code == 200, step1.text
    assert step1.json()["activity"]["status"] == WAITING
    assert _status(user, waiting["id"])["satisfiedMethods"] == [
        {"type": "AUTHENTICATION_TYPE_EMAIL_OTP", "id": json.loads(base64.urlsafe_b64decode(
            token.split(".")[1] + "==="))["id"]}]

    # Step 2 wants the passkey itself: a session made from the passkey is not it.
    session_key = make_key()
    login = RawApi(dep, user.passkey, user.org).ok(
        "stamp_login", "ACTIVITY_TYPE_STAMP_LOGIN", {"publicKey": session_key.public_key})
    assert login["session"]
    from_session = user.approve(session_key, waiting["fingerprint"])
    assert from_session.status_code == 403, from_session.text
    assert "AUTHENTICATION_TYPE_SESSION" in from_session.json()["message"]

    done = user.approve(user.passkey, waiting["fingerprint"])
    assert done.status_code == 200, done.text
    completed = done.json()["activity"]
    assert completed["id"] == waiting["id"] and completed["status"] == "ACTIVITY_STATUS_COMPLETED"
    assert completed["result"]["signRawPayloadResult"]["r"]
    final = _status(user, waiting["id"])
    assert final["satisfied"] is True
    assert [m["type"] for m in final["satisfiedMethods"]] == [
        "AUTHENTICATION_TYPE_EMAIL_OTP", "AUTHENTICATION_TYPE_PASSKEY"]
    # Webhooks carried the new status on its way (PENDING, AUTHENTICATORS_NEEDED, PENDING, ...).
    try:
        deadline = time.monotonic() + 60
        seen: list[str] = []
        while "ACTIVITY_STATUS_COMPLETED" not in seen and time.monotonic() < deadline:
            seen = [r.json()["status"] for r in receiver.accepted()
                    if r.json().get("id") == waiting["id"]]
            time.sleep(0.2)
        assert WAITING in seen and "ACTIVITY_STATUS_COMPLETED" in seen, seen
    finally:
        receiver.stop()


def test_the_proposer_ends_a_wait_by_rejecting_it(dep: Deployment) -> None:
    """An MFA wait does not expire by itself (docs/ACCESS.md): the proposer's rejection, an
    ordinary vote that no MFA step gates, ends it."""
    user = User(dep, "mfa rejecter")
    address = _wallet_address(user)
    _policy(user)
    waiting = _sign(user, address)
    assert waiting["status"] == WAITING, waiting
    rejected = user.api.submit("reject_activity", "ACTIVITY_TYPE_REJECT_ACTIVITY",
                               {"fingerprint": waiting["fingerprint"]})
    assert rejected.status_code == 200, rejected.text
    target = user.api.read("get_activity", {"activityId": waiting["id"]})["activity"]
    assert target["status"] == "ACTIVITY_STATUS_REJECTED", target
    assert "signRawPayloadResult" not in json.dumps(target.get("result") or {})


def test_policies_are_ordered_updated_and_deleted(dep: Deployment) -> None:
    """An administrator (another root user, quorum 1) manages the user's policies: once the
    user has one, changing them is for the root quorum (the user's own changes wait for
    their MFA: tests/e2e/abuse/test_mfa_bypass.py)."""
    user = User(dep, "mfa admin", admin=True)
    address = _wallet_address(user)

    admin = user.admin

    def admin_policy(condition: str, steps: list[dict[str, Any]], order: int) -> str:
        return admin.create_mfa_policy(CreateMfaPolicyBody(  # type: ignore[no-any-return]
            userId=user.user_id, mfaPolicyName=f"policy {order}", condition=condition,
            requiredAuthenticationMethods=steps, order=order)).mfaPolicyId

    never = admin_policy("false", EMAIL_THEN_PASSKEY, 0)
    passkey_only = admin_policy(SIGNING, [{"any": [{"type": "AUTHENTICATION_TYPE_PASSKEY"},
                                                   {"type": "AUTHENTICATION_TYPE_API_KEY"}]}], 1)
    listed = user.client().get_mfa_policies(GetMfaPoliciesBody(userId=user.user_id)).mfaPolicies
    assert [p.mfaPolicyId for p in listed] == [never, passkey_only]
    shown = user.api.read("get_user", {"userId": user.user_id})["user"]["mfaPolicies"]
    assert [p["mfaPolicyId"] for p in shown] == [never, passkey_only]
    # "false" never matches: the second policy applies; its one step takes either method,
    # but not the key that proposed the signature.
    waiting = _sign(user, address)
    assert waiting["status"] == WAITING
    assert _status(user, waiting["id"])["mfaPolicyId"] == passkey_only
    proposing = user.approve(user.key, waiting["fingerprint"])
    assert proposing.status_code == 403, proposing.text
    assert "credential that proposed" in proposing.json()["message"]
    done = user.approve(user.passkey, waiting["fingerprint"])
    assert done.json()["activity"]["status"] == "ACTIVITY_STATUS_COMPLETED", done.text
    # Make the first one match everything signed; then delete both: no more waiting.
    admin.update_mfa_policy(UpdateMfaPolicyBody(
        userId=user.user_id, mfaPolicyId=never, condition=SIGNING))
    got = user.client().get_mfa_policy(GetMfaPolicyBody(userId=user.user_id, mfaPolicyId=never))
    assert got.mfaPolicy.condition == SIGNING
    deadline = time.monotonic() + SETTLE_S
    while True:  # the update reaches the worker with its notification (SETTLE_S)
        which = _status(user, _sign(user, address, 2)["id"])["mfaPolicyId"]
        if which == never or time.monotonic() > deadline:
            break
    assert which == never
    for policy_id in (never, passkey_only):
        admin.delete_mfa_policy(DeleteMfaPolicyBody(userId=user.user_id, mfaPolicyId=policy_id))
    assert _sign(user, address, 3, "ACTIVITY_STATUS_COMPLETED")["status"] == \
        "ACTIVITY_STATUS_COMPLETED"
    assert user.api.read("get_user", {"userId": user.user_id})["user"]["mfaPolicies"] == []


def test_invalid_policies_are_refused(dep: Deployment) -> None:
    user = User(dep, "mfa invalid")
    cases = [("activity.resource ==", EMAIL_THEN_PASSKEY),
             (SIGNING, [{"any": [{"type": "AUTHENTICATION_TYPE_FINGERPRINT"}]}]),
             (SIGNING, [{"any": []}])]
    with pytest.raises(TurnkeyNetworkError) as caught:
        _policy(user, condition=cases[0][0], steps=cases[0][1])
    assert caught.value.status_code == 400, caught.value
    for condition, steps in cases[1:]:  # the official client refuses these before sending
        response = user.api.submit("create_mfa_policy", "ACTIVITY_TYPE_CREATE_MFA_POLICY", {
            "userId": user.user_id, "mfaPolicyName": "bad", "condition": condition,
            "requiredAuthenticationMethods": steps, "order": 0})
        assert response.status_code == 400, response.text
        assert "requiredAuthenticationMethods[0]" in response.text


def test_an_attested_stamp_approves_only_as_an_mfa_step(
        dep: Deployment, mailbox: tuple[Mailbox, dict[str, str]]) -> None:
    user = User(dep, "mfa attested")
    address = _wallet_address(user)
    _policy(user, steps=[{"any": [{"type": "AUTHENTICATION_TYPE_PASSKEY"}]}])
    waiting = _sign(user, address)
    client_key = make_key()
    token = user.email_token(mailbox[0], client_key)
    refused = user.approve(client_key, waiting["fingerprint"], attested=token)
    assert refused.status_code == 403, refused.text
    assert "AUTHENTICATION_TYPE_PASSKEY" in refused.json()["message"]


def test_with_consensus_the_proposer_first_then_each_approver_before_the_vote_counts(
        dep: Deployment) -> None:
    """Two root users, quorum 2: each has a passkey-only MFA policy for signatures."""
    keys = {name: make_key() for name in ("proposer", "approver")}
    passkeys = {name: SoftAuthenticator() for name in keys}
    parent = RawApi(dep, dep.root, dep.root.organization_id)
    org, _, result = create_sub_org(parent, "mfa quorum", threshold=2, users=[
        root_user_params(name, keys[name], authenticators=[passkeys[name].registration(name)])
        for name in keys])
    ids = dict(zip(keys, result["rootUserIds"], strict=True))
    proposer, approver = (RawApi(dep, keys[n], org) for n in keys)

    def quorum(response: requests.Response) -> dict[str, Any]:
        assert response.status_code == 200, response.text
        activity = response.json()["activity"]
        if activity["status"] == "ACTIVITY_STATUS_CONSENSUS_NEEDED":
            voted = approver.submit("approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY",
                                    {"fingerprint": activity["fingerprint"]})
            assert voted.status_code == 200, voted.text
            activity = voted.json()["activity"]
        assert activity["status"] == "ACTIVITY_STATUS_COMPLETED", activity
        return activity  # type: ignore[no-any-return]

    for name in keys:
        quorum(proposer.submit("create_mfa_policy", "ACTIVITY_TYPE_CREATE_MFA_POLICY", {
            "userId": ids[name], "mfaPolicyName": f"{name} passkey", "condition": SIGNING,
            "requiredAuthenticationMethods": [{"any": [{"type": "AUTHENTICATION_TYPE_PASSKEY"}]}],
            "order": 0}))
    wallet = quorum(proposer.submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                                    {"walletName": "quorum wallet", "accounts": ACCOUNTS}))
    address = wallet["result"]["createWalletResult"]["addresses"][0]

    signing = _sign(None, address, 7, api=proposer)
    assert signing["status"] == WAITING
    fingerprint = signing["fingerprint"]

    def approve(user: str, stamper: Any) -> requests.Response:
        return RawApi(dep, stamper, org).submit(
            "approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", {"fingerprint": fingerprint})

    early = approve("approver", passkeys["approver"])  # the proposer's MFA comes first
    assert early.status_code == 400 and "proposer's MFA first" in early.text, early.text
    after_proposer = approve("proposer", passkeys["proposer"])
    assert after_proposer.json()["activity"]["status"] == "ACTIVITY_STATUS_CONSENSUS_NEEDED"
    # The approver's key is not the passkey their policy asks: refused, and no vote counted.
    wrong = approve("approver", keys["approver"])
    assert wrong.status_code == 403 and "AUTHENTICATION_TYPE_PASSKEY" in wrong.text, wrong.text
    votes = RawApi(dep, keys["proposer"], org).read("get_activity", {"activityId": signing["id"]})
    assert [v["userId"] for v in votes["activity"]["votes"]] == [ids["proposer"]]
    done = approve("approver", passkeys["approver"])
    assert done.status_code == 200, done.text
    completed = done.json()["activity"]
    assert completed["status"] == "ACTIVITY_STATUS_COMPLETED", completed
    assert sorted(v["userId"] for v in completed["votes"]) == sorted(ids.values())
    statuses = proposer.read("get_mfa_status", {"activityId": signing["id"]})["mfaStatuses"]
    assert {(s["userId"], s["satisfied"]) for s in statuses} == {(i, True) for i in ids.values()}


def test_turnkey_http_mfa_polling_returns_the_signature_after_the_passkey_step(
        dep: Deployment) -> None:
    """``turnkey-http`` with ``mfa_polling`` waits while the signature needs its passkey step;
    the passkey the user already had approves it (not the proposing key); the client's call
    then returns the signature."""
    from concurrent.futures import ThreadPoolExecutor

    from turnkey_http.generated.client import PollingConfig
    from turnkey_sdk_types import SignRawPayloadBody

    user = User(dep, "http mfa polling")
    address = _wallet_address(user)
    _policy(user, steps=[{"any": [{"type": "AUTHENTICATION_TYPE_PASSKEY"}]}])
    assert _sign(user, address)["status"] == WAITING  # every worker knows the policy now
    client = dep.client(user.as_key, mfa_polling=PollingConfig(interval_ms=100, timeout_ms=60_000))
    with ThreadPoolExecutor(1) as pool:
        signing = pool.submit(client.sign_raw_payload, SignRawPayloadBody(
            signWith=address, payload="ef" * 32, encoding="PAYLOAD_ENCODING_HEXADECIMAL",
            hashFunction="HASH_FUNCTION_NO_OP"))
        deadline = time.monotonic() + 60
        waiting: list[dict[str, Any]] = []
        while not waiting and time.monotonic() < deadline:
            found = user.api.read("list_activities", {"filterByStatus": [WAITING]})["activities"]
            waiting = [a for a in found if a["type"] == "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2"
                       and "ef" * 32 in json.dumps(a["intent"])]
            time.sleep(0.1)
        assert len(waiting) == 1, waiting
        assert user.approve(user.key, waiting[0]["fingerprint"]).status_code == 403
        approved = user.approve(user.passkey, waiting[0]["fingerprint"])
        assert approved.status_code == 200, approved.text
        signed = signing.result(timeout=60)
    assert signed.activity.id == waiting[0]["id"]
    assert signed.activity.status == "ACTIVITY_STATUS_COMPLETED" and signed.r and signed.s


def test_turnkey_core_on_mfa_required_completes_the_signature(
        dep: Deployment, mailbox: tuple[Mailbox, dict[str, str]]) -> None:
    """``@turnkey/core`` (npm, tests/interop/mfa_core.mjs) signs; its ``onMfaRequired`` gets the
    context from ``get_mfa_status``; the approvals happen meanwhile; core's polling then
    returns the completed signature."""
    node = node_with("@turnkey/core", "@turnkey/api-key-stamper")
    user = User(dep, "core mfa")
    address = _wallet_address(user)
    policy_id = _policy(user)
    assert _sign(user, address)["status"] == WAITING  # every worker knows the policy now
    proc = subprocess.Popen([node, str(INTEROP / "mfa_core.mjs")], cwd=INTEROP, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps({
            "apiBaseUrl": dep.base_url, "organizationId": user.org,
            "publicKey": user.key.public_key, "privateKey": user.key.private_key,
            "signWith": address, "payload": "cd" * 32}) + "\n")
        proc.stdin.flush()
        event = json.loads(proc.stdout.readline())
        assert event["event"] == "mfa", event
        context = event["context"]
        assert context["activityStatus"] == WAITING and context["organizationId"] == user.org
        (status,) = context["mfaStatuses"]
        assert status["mfaPolicyId"] == policy_id and status["satisfied"] is False
        client_key = make_key()
        token = user.email_token(mailbox[0], client_key)
        first = user.approve(client_key, context["fingerprint"], attested=token)
        assert first.status_code == 200, first.text
        second = user.approve(user.passkey, context["fingerprint"])
        assert second.status_code == 200, second.text
        proc.stdin.write("approved\n")
        proc.stdin.flush()
        done = json.loads(proc.stdout.readline())
        assert done == {"event": "done", "status": "ACTIVITY_STATUS_COMPLETED",
                        "r": done.get("r")} and done["r"], done
    finally:
        proc.kill()
        proc.wait(10)
