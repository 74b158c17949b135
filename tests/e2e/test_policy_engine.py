"""Policies, consensus and root quorum end to end, through the official ``turnkey-http`` client.

Runs on the embedded path and on the production path (PostgreSQL, RabbitMQ, separate worker
processes); the concurrent-votes test needs real PostgreSQL and runs on production only.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
import rlp
from eth_account import Account
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import (
    ApproveActivityBody,
    CreatePoliciesBody,
    CreatePolicyBody,
    CreateUsersBody,
    CreateUserTagBody,
    CreateWalletBody,
    DeletePoliciesBody,
    DeletePolicyBody,
    GetActivitiesBody,
    GetActivityBody,
    GetPoliciesBody,
    GetPolicyBody,
    GetPolicyEvaluationsBody,
    RejectActivityBody,
    SignRawPayloadBody,
    SignTransactionBody,
    UpdateOrganizationNameBody,
    UpdatePolicyBody,
    UpdateRootQuorumBody,
)
from turnkey_sdk_types.errors import TurnkeyActivityConsensusNeededError, TurnkeyActivityError

from tests.support.deployment import Deployment, Key, make_organization
from tests.support.keys import make_key

SEPOLIA = 11155111
ETH_ACCOUNT = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
               "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


def _user(dep: Deployment, root: Key, name: str) -> Key:
    key = make_key()
    created = dep.client(root).create_users(CreateUsersBody(users=[{
        "userName": name, "apiKeys": [key.api_key_params()], "authenticators": [],
        "oauthProviders": [], "userTags": []}]))
    return Key(root.organization_id, created.userIds[0], key.public_key, key.private_key)


def _wallet_address(dep: Deployment, root: Key) -> str:
    wallet = dep.client(root).create_wallet(CreateWalletBody(walletName="ops",
                                                             accounts=[ETH_ACCOUNT]))
    return str(wallet.addresses[0])


def _unsigned_tx(nonce: int = 0) -> str:
    """An unsigned EIP-155 legacy transfer on Sepolia."""
    fields = [nonce, 20 * 10**9, 21000, bytes.fromhex("35" * 20), 10**15, b"", SEPOLIA, 0, 0]
    return rlp.encode(fields).hex()


def _wait_status(dep: Deployment, key: Key, activity_id: str, wanted: str) -> Any:
    """Poll ``get_activity`` until ``wanted`` (bounded; fails the test if never reached)."""
    activity = None
    for _ in range(300):
        activity = dep.client(key).get_activity(GetActivityBody(activityId=activity_id)).activity
        if activity.status.value == wanted:
            return activity
        time.sleep(0.1)
    assert activity is not None
    runs = _outcomes(dep, key, activity_id)
    raise AssertionError(f"activity stayed {activity.status.value}, wanted {wanted}; votes "
                         f"{[(v.userId, v.selection) for v in activity.votes]}; runs {runs}")


def _organization(dep: Deployment, key: Key) -> dict[str, Any]:
    """``get_organization`` (the Python client has no method for it): a raw stamped POST."""
    body = json.dumps({"organizationId": key.organization_id})
    stamp = dep.client(key).stamper.stamp(body)
    response = dep.post("/public/v1/query/get_organization", body,
                        {stamp.stamp_header_name: stamp.stamp_header_value})
    assert response.status_code == 200, response.text
    return dict(response.json()["organizationData"])


def _submit_waiting(dep: Deployment, key: Key, fn: str, body: Any) -> Any:
    """Submit an activity that must wait for consensus; return it as ``key`` sees it."""
    with pytest.raises(TurnkeyActivityConsensusNeededError) as waiting:
        getattr(dep.client(key), fn)(body)
    activity_id = waiting.value.activity_id
    assert activity_id
    return dep.client(key).get_activity(GetActivityBody(activityId=activity_id)).activity


def _outcomes(dep: Deployment, key: Key, activity_id: str) -> list[list[tuple[str, str]]]:
    runs = dep.client(key).get_policy_evaluations(
        GetPolicyEvaluationsBody(activityId=activity_id)).policyEvaluations
    return [[(p.policyId, p.outcome.value) for p in run.policyEvaluations] for run in runs]


def test_two_of_three_approve_a_signature(deployment: Deployment) -> None:
    root = make_organization(deployment, "two-of-three")
    a, b, c = (_user(deployment, root, n) for n in ("alice", "bob", "carol"))
    address = _wallet_address(deployment, root)
    signers = ", ".join(f"'{u.user_id}'" for u in (a, b, c))
    policy = deployment.client(root).create_policy(CreatePolicyBody(
        policyName="two of three sign on sepolia", effect="EFFECT_ALLOW", notes="",
        condition=f"activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN' && "
                  f"eth.tx.chain_id == {SEPOLIA}",
        consensus=f"approvers.filter(user, user.id in [{signers}]).count() >= 2"))

    pending = _submit_waiting(deployment, a, "sign_transaction", SignTransactionBody(
        signWith=address, unsignedTransaction=_unsigned_tx(), type="TRANSACTION_TYPE_ETHEREUM"))
    assert pending.status.value == "ACTIVITY_STATUS_CONSENSUS_NEEDED"
    # Alice approved by submitting; she may still reject her own activity.
    assert (pending.canApprove, pending.canReject) == (False, True)
    seen_by_bob = deployment.client(b).get_activity(GetActivityBody(activityId=pending.id))
    assert (seen_by_bob.activity.canApprove, seen_by_bob.activity.canReject) == (True, True)

    approved = deployment.client(b).approve_activity(ApproveActivityBody(fingerprint=pending.fingerprint))
    # The approval answers with the target, so the co-signer gets the signature directly.
    assert approved.activity.id == pending.id
    assert approved.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    assert approved.activity.result.signTransactionResult.signedTransaction
    done = _wait_status(deployment, a, pending.id, "ACTIVITY_STATUS_COMPLETED")

    signed = done.result.signTransactionResult.signedTransaction
    assert Account.recover_transaction("0x" + signed).lower() == address.lower()
    assert [(v.userId, v.selection) for v in done.votes] == [
        (a.user_id, "VOTE_SELECTION_APPROVED"), (b.user_id, "VOTE_SELECTION_APPROVED")]
    bob_vote = done.votes[1]
    assert bob_vote.publicKey == b.public_key
    assert bob_vote.scheme == "SIGNATURE_SCHEME_TK_API_P256"
    assert pending.fingerprint in bob_vote.message and "APPROVE_ACTIVITY" in bob_vote.message
    assert _outcomes(deployment, a, pending.id) == [
        [(policy.policyId, "OUTCOME_REQUIRES_CONSENSUS")], [(policy.policyId, "OUTCOME_ALLOW")]]
    assert c.user_id not in {v.userId for v in done.votes}


def test_tagged_approvers_consensus_from_the_docs(deployment: Deployment) -> None:
    root = make_organization(deployment, "tags")
    a, b, c = (_user(deployment, root, n) for n in ("alice", "bob", "carol"))
    tag = deployment.client(root).create_user_tag(CreateUserTagBody(
        userTagName="policy admins", userIds=[a.user_id, b.user_id])).userTagId
    policy = deployment.client(root).create_policy(CreatePolicyBody(
        policyName="Require two users with user_tag to create policies", effect="EFFECT_ALLOW",
        notes="", condition="activity.resource == 'POLICY' && activity.action == 'CREATE'",
        consensus=f"approvers.filter(user, user.tags.contains('{tag}')).count() >= 2"))
    pending = _submit_waiting(deployment, a, "create_policy", CreatePolicyBody(
        policyName="made by two admins", effect="EFFECT_DENY", notes="", condition="false"))
    # Carol is neither root nor named by the consensus: she may not vote either way.
    seen_by_carol = deployment.client(c).get_activity(GetActivityBody(activityId=pending.id))
    assert (seen_by_carol.activity.canApprove, seen_by_carol.activity.canReject) == (False, False)
    for vote in ("approve_activity", "reject_activity"):
        body = (ApproveActivityBody if vote == "approve_activity" else RejectActivityBody)(
            fingerprint=pending.fingerprint)
        with pytest.raises(TurnkeyNetworkError) as refused:
            getattr(deployment.client(c), vote)(body)
        assert refused.value.status_code == 403
        assert "policy engine denied request implicitly" in str(refused.value)
    seen_by_b = deployment.client(b).get_activity(GetActivityBody(activityId=pending.id))
    assert (seen_by_b.activity.canApprove, seen_by_b.activity.canReject) == (True, True)
    still = _wait_status(deployment, a, pending.id, "ACTIVITY_STATUS_CONSENSUS_NEEDED")
    assert [v.userId for v in still.votes] == [a.user_id]
    deployment.client(b).approve_activity(ApproveActivityBody(fingerprint=pending.fingerprint))
    _wait_status(deployment, a, pending.id, "ACTIVITY_STATUS_COMPLETED")
    assert [run[0][1] for run in _outcomes(deployment, a, pending.id)] == [
        "OUTCOME_REQUIRES_CONSENSUS", "OUTCOME_ALLOW"]
    assert all(run == [run[0]] and run[0][0] == policy.policyId
               for run in _outcomes(deployment, a, pending.id))


MAIL: dict[str, Any] = {
    "types": {
        "EIP712Domain": [{"name": "name", "type": "string"}, {"name": "chainId", "type": "uint256"}],
        "Mail": [{"name": "to", "type": "address"}, {"name": "amount", "type": "uint256"}],
    },
    "primaryType": "Mail",
    "domain": {"name": "Ether Mail", "chainId": 1},
    "message": {"to": "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826", "amount": "1500"},
}


def test_signing_policies_see_wallet_and_eip712_payloads(deployment: Deployment) -> None:
    root = make_organization(deployment, "eip712")
    a = _user(deployment, root, "alice")
    wallet = deployment.client(root).create_wallet(CreateWalletBody(walletName="mail",
                                                                    accounts=[ETH_ACCOUNT]))
    deployment.client(root).create_policy(CreatePolicyBody(
        policyName="alice signs small Ether Mail from this wallet", effect="EFFECT_ALLOW",
        notes="", consensus=f"approvers.any(user, user.id == '{a.user_id}')",
        condition=f"activity.action == 'SIGN' && wallet.id == '{wallet.walletId}' && "
                  "eth.eip_712.domain.name == 'Ether Mail' && "
                  "eth.eip_712.primary_type == 'Mail' && "
                  "eth.eip_712.message['to'] == '0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826' && "
                  "eth.eip_712.message['amount'] < 2000"))

    def sign(message: dict[str, Any]) -> Any:
        return deployment.client(a).sign_raw_payload(SignRawPayloadBody(
            signWith=str(wallet.addresses[0]), payload=json.dumps({**MAIL, "message": message}),
            encoding="PAYLOAD_ENCODING_EIP712", hashFunction="HASH_FUNCTION_NO_OP"))

    signed = sign(MAIL["message"])
    assert len(signed.r) == len(signed.s) == 64
    with pytest.raises(TurnkeyNetworkError) as too_much:
        sign({**MAIL["message"], "amount": "2500"})
    assert too_much.value.status_code == 403
    assert "denied request implicitly" in str(too_much.value)


def test_a_reject_ends_the_activity_rejected(deployment: Deployment) -> None:
    root = make_organization(deployment, "reject")
    a, b = _user(deployment, root, "alice"), _user(deployment, root, "bob")
    deployment.client(root).create_policy(CreatePolicyBody(
        policyName="pairs create policies", effect="EFFECT_ALLOW", notes="",
        condition="activity.resource == 'POLICY'",
        consensus=f"approvers.any(u, u.id == '{a.user_id}') && "
                  f"approvers.any(u, u.id == '{b.user_id}')"))
    pending = _submit_waiting(deployment, a, "create_policy", CreatePolicyBody(
        policyName="never", effect="EFFECT_DENY", notes="", condition="true"))
    deployment.client(b).reject_activity(RejectActivityBody(fingerprint=pending.fingerprint))
    rejected = _wait_status(deployment, a, pending.id, "ACTIVITY_STATUS_REJECTED")
    assert rejected.votes[-1].selection == "VOTE_SELECTION_REJECTED"
    assert (rejected.canApprove, rejected.canReject) == (False, False)
    with pytest.raises((TurnkeyNetworkError, TurnkeyActivityError)) as late:
        deployment.client(b).approve_activity(ApproveActivityBody(fingerprint=pending.fingerprint))
    assert "not awaiting consensus" in str(late.value)
    names = [p.policyName for p in deployment.client(root).get_policies(GetPoliciesBody()).policies]
    assert "never" not in names


def test_approving_an_unknown_fingerprint_is_a_404(deployment: Deployment) -> None:
    root = make_organization(deployment, "unknown fingerprint")
    with pytest.raises((TurnkeyNetworkError, TurnkeyActivityError)) as missing:
        deployment.client(root).approve_activity(ApproveActivityBody(fingerprint="sha256:" + "0" * 64))
    assert "No activity found with fingerprint" in str(missing.value)


def test_denials_are_403_code_7_and_kept_in_the_audit_trail(deployment: Deployment) -> None:
    root = make_organization(deployment, "denials")
    a = _user(deployment, root, "alice")
    body = CreatePolicyBody(policyName="by alice", effect="EFFECT_ALLOW", notes="",
                            condition="true")
    with pytest.raises(TurnkeyNetworkError) as implicit:
        deployment.client(a).create_policy(body)
    assert implicit.value.status_code == 403
    assert "policy engine denied request implicitly" in str(implicit.value)
    # PROTOCOL.md §3.4: "Turnkey error 7: policy engine denied request … (Details: [])".
    assert json.loads(implicit.value.cause) == {
        "code": 7, "message": "policy engine denied request implicitly", "details": []}

    deployment.client(root).create_policies(CreatePoliciesBody(policies=[
        {"policyName": "alice may do anything", "effect": "EFFECT_ALLOW", "notes": "",
         "consensus": f"approvers.any(u, u.id == '{a.user_id}')"},
        {"policyName": "but never delete policies", "effect": "EFFECT_DENY", "notes": "",
         "condition": "activity.resource == 'POLICY' && activity.action == 'DELETE'"},
    ]))
    created = deployment.client(a).create_policy(body)
    with pytest.raises(TurnkeyNetworkError) as explicit:
        deployment.client(a).delete_policy(DeletePolicyBody(policyId=created.policyId))
    assert explicit.value.status_code == 403
    assert json.loads(explicit.value.cause) == {
        "code": 7, "message": "policy engine denied request explicitly", "details": []}

    failed = deployment.client(root).get_activities(GetActivitiesBody(
        filterByStatus=["ACTIVITY_STATUS_FAILED"])).activities
    types = sorted(f.type.value for f in failed)
    assert types == ["ACTIVITY_TYPE_CREATE_POLICY_V3", "ACTIVITY_TYPE_DELETE_POLICY"]
    assert all(f.failure and f.failure.code == 7 and f.failure.details == [] for f in failed)


def test_members_read_their_organization_whatever_the_policies(deployment: Deployment) -> None:
    """§8.4 default: users may read their own organization; policies govern activities only."""
    root = make_organization(deployment, "reads")
    a = _user(deployment, root, "alice")
    deployment.client(root).create_policy(CreatePolicyBody(
        policyName="deny everything", effect="EFFECT_DENY", notes="", condition="true"))
    org = _organization(deployment, a)
    assert org["organizationId"] == root.organization_id
    assert [p["policyName"] for p in org["policies"]] == ["deny everything"]
    listed = deployment.client(a).get_policies(GetPoliciesBody()).policies
    assert [p.policyName for p in listed] == ["deny everything"]
    with pytest.raises(TurnkeyNetworkError) as denied:
        deployment.client(a).create_wallet(CreateWalletBody(walletName="a", accounts=[ETH_ACCOUNT]))
    assert denied.value.status_code == 403


def test_a_policy_that_does_not_parse_is_refused_with_its_position(deployment: Deployment) -> None:
    root = make_organization(deployment, "syntax")
    with pytest.raises(TurnkeyNetworkError) as refused:
        deployment.client(root).create_policy(CreatePolicyBody(
            policyName="typo", effect="EFFECT_ALLOW", notes="",
            condition="activity.resource == 'WALLET' &&\n  activity.action = 'CREATE'"))
    assert refused.value.status_code == 400
    assert "invalid policy condition" in str(refused.value)
    assert "line 2, column 19" in str(refused.value)


def test_policy_crud_round_trip(deployment: Deployment) -> None:
    root = make_organization(deployment, "crud")
    client = deployment.client(root)
    ids = client.create_policies(CreatePoliciesBody(policies=[
        {"policyName": "one", "effect": "EFFECT_ALLOW", "notes": "n1",
         "condition": "activity.kind == 'CREATE_WALLET'"},
        {"policyName": "two", "effect": "EFFECT_DENY", "notes": "n2",
         "condition": "activity.action == 'EXPORT'",
         "time": "time.now < Timestamp('2100-01-01T00:00:00Z')"},
    ])).policyIds
    fetched = client.get_policy(GetPolicyBody(policyId=ids[1])).policy
    assert (fetched.policyName, fetched.effect.value, fetched.notes) == ("two", "EFFECT_DENY", "n2")
    assert fetched.time == "time.now < Timestamp('2100-01-01T00:00:00Z')"
    client.update_policy(UpdatePolicyBody(policyId=ids[0], policyName="one!",
                                          policyConsensus="approvers.count() >= 1"))
    updated = client.get_policy(GetPolicyBody(policyId=ids[0])).policy
    assert (updated.policyName, updated.consensus, updated.condition) == (
        "one!", "approvers.count() >= 1", "activity.kind == 'CREATE_WALLET'")
    client.delete_policy(DeletePolicyBody(policyId=ids[1]))
    listed = client.get_policies(GetPoliciesBody()).policies
    assert [p.policyId for p in listed] == [ids[0]]
    org = _organization(deployment, root)
    assert [p["policyId"] for p in org["policies"]] == [ids[0]]
    with pytest.raises(TurnkeyNetworkError) as gone:
        client.get_policy(GetPolicyBody(policyId=ids[1]))
    assert gone.value.status_code == 404


def test_delete_policies_and_update_organization_name(deployment: Deployment) -> None:
    root = make_organization(deployment, "bulk delete and rename")
    a = _user(deployment, root, "alice")
    client = deployment.client(root)
    ids = client.create_policies(CreatePoliciesBody(policies=[
        {"policyName": n, "effect": "EFFECT_ALLOW", "notes": "", "condition": "true"}
        for n in ("one", "two", "three")])).policyIds
    deleted = client.delete_policies(DeletePoliciesBody(policyIds=ids[:2]))
    assert deleted.policyIds == ids[:2]
    assert deleted.activity.type.value == "ACTIVITY_TYPE_DELETE_POLICIES"
    assert [p.policyId for p in client.get_policies(GetPoliciesBody()).policies] == [ids[2]]
    with pytest.raises(TurnkeyNetworkError) as unknown:
        client.delete_policies(DeletePoliciesBody(policyIds=[ids[2], ids[0]]))
    assert unknown.value.status_code == 404
    assert [p.policyId for p in client.get_policies(GetPoliciesBody()).policies] == [ids[2]]

    renamed = client.update_organization_name(UpdateOrganizationNameBody(organizationName="Acme"))
    assert (renamed.organizationId, renamed.organizationName) == (root.organization_id, "Acme")
    assert _organization(deployment, root)["name"] == "Acme"
    # Root-quorum only: the remaining allow-everything policy does not let alice rename it.
    with pytest.raises(TurnkeyNetworkError) as refused:
        deployment.client(a).update_organization_name(
            UpdateOrganizationNameBody(organizationName="Mine"))
    assert refused.value.status_code == 403
    assert _organization(deployment, root)["name"] == "Acme"


def test_root_quorum_of_two_makes_root_actions_wait(deployment: Deployment) -> None:
    root = make_organization(deployment, "quorum")
    a, c = _user(deployment, root, "alice"), _user(deployment, root, "carol")
    deployment.client(root).update_root_quorum(UpdateRootQuorumBody(
        threshold=2, userIds=[root.user_id, a.user_id]))
    quorum = _organization(deployment, root)["rootQuorum"]
    assert quorum["threshold"] == 2
    assert sorted(quorum["userIds"]) == sorted([root.user_id, a.user_id])

    pending = _submit_waiting(deployment, root, "create_policy", CreatePolicyBody(
        policyName="anyone may rename the org", effect="EFFECT_ALLOW", notes="",
        condition="true"))
    deployment.client(a).approve_activity(ApproveActivityBody(fingerprint=pending.fingerprint))
    _wait_status(deployment, root, pending.id, "ACTIVITY_STATUS_COMPLETED")
    # The allow-everything policy now exists, but root-quorum-only types ignore policies.
    with pytest.raises(TurnkeyNetworkError) as refused:
        deployment.client(c).update_root_quorum(UpdateRootQuorumBody(
            threshold=1, userIds=[c.user_id]))
    assert refused.value.status_code == 403

    # §8.4: no policy limits the root quorum. A deny makes a root's activity wait for the
    # other root instead of refusing it; a non-root is still refused.
    deployment.client(root).create_policy(CreatePolicyBody(
        policyName="deny everything", effect="EFFECT_DENY", notes="", condition="true"))
    with pytest.raises(TurnkeyNetworkError) as denied:
        deployment.client(c).create_wallet(CreateWalletBody(walletName="c", accounts=[ETH_ACCOUNT]))
    assert denied.value.status_code == 403
    assert "denied request explicitly" in str(denied.value)
    held = _submit_waiting(deployment, root, "create_wallet", CreateWalletBody(
        walletName="by the quorum", accounts=[ETH_ACCOUNT]))
    deployment.client(a).approve_activity(ApproveActivityBody(fingerprint=held.fingerprint))
    done = _wait_status(deployment, root, held.id, "ACTIVITY_STATUS_COMPLETED")
    assert done.result.createWalletResult.walletId


def _vote_concurrently(dep: Deployment, voters: list[Key], fingerprint: str) -> list[str]:
    """Every voter approves at the same moment; returns "ok" or the error per voter."""
    barrier = threading.Barrier(len(voters))
    outcomes: list[str] = []

    # Distinct timestamps: identical bodies would be one idempotent submission, not two votes.
    base_ms = int(time.time() * 1000)

    def vote(voter: Key, offset: int) -> None:
        body = ApproveActivityBody(fingerprint=fingerprint, timestampMs=str(base_ms + offset))
        barrier.wait()
        try:
            dep.client(voter).approve_activity(body)
            outcomes.append("ok")
        except (TurnkeyNetworkError, TurnkeyActivityError) as ex:
            outcomes.append(str(ex))

    threads = [threading.Thread(target=vote, args=(v, i)) for i, v in enumerate(voters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return outcomes


def test_concurrent_votes_never_run_the_activity_twice(production: Deployment) -> None:
    root = make_organization(production, "concurrent votes")
    submitter = _user(production, root, "submitter")
    voters = [_user(production, root, f"voter{i}") for i in range(4)]
    everyone = ", ".join(f"'{u.user_id}'" for u in [submitter, *voters])
    production.client(root).create_policy(CreatePolicyBody(
        policyName="three approvals", effect="EFFECT_ALLOW", notes="",
        condition="activity.resource == 'POLICY' && activity.action == 'CREATE'",
        consensus=f"approvers.filter(u, u.id in [{everyone}]).count() >= 3"))
    for round_no in range(3):
        name = f"created once {round_no}"
        pending = _submit_waiting(production, submitter, "create_policy", CreatePolicyBody(
            policyName=name, effect="EFFECT_ALLOW", notes="", condition="false"))
        outcomes = _vote_concurrently(production, voters, pending.fingerprint)
        done = _wait_status(production, submitter, pending.id, "ACTIVITY_STATUS_COMPLETED")
        assert outcomes.count("ok") >= 2, outcomes
        assert all(o == "ok" or "not awaiting consensus" in o for o in outcomes), outcomes
        voter_ids = [v.userId for v in done.votes]
        assert len(voter_ids) == len(set(voter_ids))
        policies = production.client(root).get_policies(GetPoliciesBody()).policies
        assert [p.policyName for p in policies].count(name) == 1
