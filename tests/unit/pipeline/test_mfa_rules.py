"""The pure rules of MFA against a stolen credential (``infra.pipeline.mfa``) and the engine's
root-quorum flag for changes to another user's credentials (``infra.pipeline.engine``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from infra.activities import registry
from infra.pipeline import engine, mfa
from infra.pipeline.mfa import Method, guarded_targets, refusal

CREATED = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
BEFORE = CREATED - timedelta(days=1)
AFTER = CREATED + timedelta(seconds=1)


def key(credential_id: str, since: datetime = BEFORE, lineage: str = "",
        kind: str = mfa.SESSION) -> Method:
    return Method(kind, "", credential_id, since, lineage or credential_id, "session")


@pytest.mark.parametrize(("activity_type", "params", "targets"), [
    ("ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {"userId": "u1"}, {"u1"}),
    ("ACTIVITY_TYPE_CREATE_API_KEYS_V2", {"userId": "u1"}, {"u1"}),
    ("ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS", {"userId": "u1"}, {"u1"}),
    ("ACTIVITY_TYPE_UPDATE_USER_EMAIL", {"userId": "u1"}, {"u1"}),
    ("ACTIVITY_TYPE_DELETE_MFA_POLICY", {"userId": "u1", "mfaPolicyId": "p"}, {"u1"}),
    ("ACTIVITY_TYPE_UPDATE_USER", {"userId": "u1", "userPhoneNumber": "+15555550100"}, {"u1"}),
    ("ACTIVITY_TYPE_UPDATE_USER", {"userId": "u1", "userName": "new name"}, set()),
    ("ACTIVITY_TYPE_EXPORT_WALLET", {"walletId": "w"}, set()),
    ("ACTIVITY_TYPE_STAMP_LOGIN", {"publicKey": "02ab"}, set()),
    ("ACTIVITY_TYPE_CREATE_API_KEYS_V2", {"userId": ["u1"]}, set()),
])
def test_guarded_activities_name_their_target_user(activity_type: str, params: dict[str, object],
                                                   targets: set[str]) -> None:
    assert guarded_targets(activity_type, params) == targets


def test_a_credential_older_than_the_activity_satisfies_a_step() -> None:
    assert refusal(key("k2"), key("k1"), "a1", CREATED) is None


def test_a_credential_made_after_the_activity_does_not() -> None:
    why = refusal(key("k2", since=AFTER), key("k1"), "a1", CREATED)
    assert why == "this session was created after activity a1"
    assert refusal(key("k2", since=CREATED), key("k1"), "a1", CREATED) is not None


def test_the_proposing_credential_does_not() -> None:
    why = refusal(key("k1"), key("k1"), "a1", CREATED)
    assert why == "this is the credential that proposed activity a1"
    passkey = Method(mfa.PASSKEY, "p1", "p1", BEFORE, noun="passkey")
    assert refusal(passkey, passkey, "a1", CREATED) is not None


@pytest.mark.parametrize(("approver", "proposer"), [
    (key("s2", lineage="s1"), key("s1")),                 # refreshed from the proposer
    (key("s1"), key("s2", lineage="s1")),                 # the proposer's root
    (key("s3", lineage="root"), key("s2", lineage="root")),  # siblings of one root
    (key("s3", lineage="s2"), key("s2", lineage="root")),  # a lineage recorded mid-chain
])
def test_a_credential_of_the_proposers_lineage_does_not(approver: Method, proposer: Method) -> None:
    assert "same lineage" in (refusal(approver, proposer, "a1", CREATED) or "")


def test_a_passkey_approves_what_a_session_made_from_it_proposed() -> None:
    passkey = Method(mfa.PASSKEY, "p1", "p1", BEFORE, noun="passkey")
    assert refusal(passkey, key("s1"), "a1", CREATED) is None
    assert refusal(key("s2"), key("s1"), "a1", CREATED) is None  # independent logins


@pytest.mark.parametrize("kind", [mfa.EMAIL_OTP, mfa.SMS_OTP, mfa.OAUTH])
def test_an_attested_factor_counts_from_when_the_user_proved_it(kind: str) -> None:
    assert refusal(Method(kind, "t", since=BEFORE), key("s1"), "a1", CREATED) is None
    for since in (AFTER, None):  # verified after the activity, or not the user's contact
        why = refusal(Method(kind, "t", since=since), key("s1"), "a1", CREATED)
        assert why is not None and "before activity a1 was created" in why


def _proposal(kind: str, flagged: bool, approvers: tuple[str, ...] = ("helpdesk",)) -> engine.Proposal:
    return engine.Proposal(activity_type=kind, parameters={"userId": "victim"},
                           requester_id="helpdesk", root_quorum_only=flagged,
                           approvers=[{"id": a} for a in approvers],
                           resource_action=registry().resource_action(kind))


def test_another_users_credentials_are_for_the_root_quorum_only() -> None:
    allow = [engine.Policy("p1", "EFFECT_ALLOW", "true")]
    quorum = engine.RootQuorum(1, frozenset({"root"}))
    kind = "ACTIVITY_TYPE_CREATE_API_KEYS_V2"
    assert engine.evaluate(allow, _proposal(kind, False), quorum).allowed
    denied = engine.evaluate(allow, _proposal(kind, True), quorum)
    assert denied.denied and denied.message == engine.MFA_GUARD_MESSAGE
    assert engine.evaluate(allow, _proposal(kind, True, ("root",)), quorum).allowed
    waiting = engine.evaluate(allow, _proposal(kind, True, ("root",)),
                              engine.RootQuorum(2, frozenset({"root", "root2"})))
    assert waiting.needs_consensus
