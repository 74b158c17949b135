"""What an approver sees is what is approved: policy text that hides what it says (issue 31).

Mallory is a member of the organization who may propose policy changes; an approver must
co-sign them, and judges each change by the console's diff. She holds her own API key. She
proposes a DENY policy whose condition looks like the one in force but is not (a zero-width
space or a Cyrillic a in the string the engine compares, a bidi override), so the approver
signs off on a diff that shows nothing, and the DENY never matches. What must stop her: the
API refuses unreadable policy text (``infra.policy.text``) when it is proposed, with a 400
naming the position and the code point, before anything is stored; the same holds for MFA
policy conditions and session-profile scopes, which share the parser. Honest text (ASCII
conditions, notes in one non-Latin script) is still accepted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.deployment import Deployment
from tests.support.raw_api import RawApi

DENY_EXPORTS = "activity.resource == 'WALLET' && activity.action == 'EXPORT'"


@pytest.fixture
def root(embedded: Deployment) -> Iterator[RawApi]:
    yield RawApi(embedded, embedded.root, embedded.root.organization_id)


def _stored(root: RawApi) -> tuple[list[Any], int]:
    """(policies, activity count): what a refused proposal must leave as it was."""
    return (root.read("list_policies")["policies"],
            len(root.read("list_activities", {}).get("activities") or []))


def _refused(root: RawApi, path: str, type_: str, parameters: dict[str, Any]) -> str:
    before = _stored(root)
    response = root.submit(path, type_, parameters)
    assert response.status_code == 400, response.text
    error = response.json()
    assert set(error) >= {"code", "message", "details"}
    assert _stored(root) == before
    return str(error["message"])


@pytest.mark.parametrize(("hidden", "named", "index"), [
    ("activity.resource == 'WALLET' && activity.action == 'EXP\u200bORT'",
     "U+200B (ZERO WIDTH SPACE)", 56),
    ("activity.resource == 'W\u0410LLET' && activity.action == 'EXPORT'",
     "U+0410 (CYRILLIC CAPITAL LETTER A)", 23),
    ("activity.resource == 'WALLET' \u202e&& activity.action == 'EXPORT'",
     "U+202E (RIGHT-TO-LEFT OVERRIDE)", 30),
])
def test_a_deny_policy_that_reads_as_another_is_refused(
        root: RawApi, hidden: str, named: str, index: int) -> None:
    # The honest policy in force.
    policy_id = root.ok("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        "policyName": "no exports", "effect": "EFFECT_DENY", "condition": DENY_EXPORTS,
        "notes": "Запрет экспорта ключей"})["policyId"]  # notes in one (Cyrillic) script
    # Mallory's change: the console's diff would show nothing.
    message = _refused(root, "update_policy", "ACTIVITY_TYPE_UPDATE_POLICY_V2", {
        "policyId": policy_id, "policyCondition": hidden})
    assert named in message and f"at index {index}" in message
    assert message.startswith("invalid policy policyCondition:")
    policy = root.read("get_policy", {"policyId": policy_id})["policy"]
    assert policy["condition"] == DENY_EXPORTS  # unchanged
    # The same text as a new policy, in a batch, or hidden in the name or notes.
    message = _refused(root, "create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        "policyName": "no exports 2", "effect": "EFFECT_DENY", "condition": hidden, "notes": ""})
    assert named in message and "line 1, column" in message
    message = _refused(root, "create_policies", "ACTIVITY_TYPE_CREATE_POLICIES", {"policies": [
        {"policyName": "fine", "effect": "EFFECT_ALLOW", "condition": "true", "notes": ""},
        {"policyName": "no exports 3", "effect": "EFFECT_DENY", "consensus": hidden,
         "notes": ""}]})
    assert named in message and "invalid policy consensus" in message
    message = _refused(root, "update_policy", "ACTIVITY_TYPE_UPDATE_POLICY_V2", {
        "policyId": policy_id, "policyName": "no exp\u200borts"})
    assert "U+200B" in message and "policyName" in message


def test_an_mfa_condition_and_a_session_scope_share_the_rule(root: RawApi) -> None:
    me = root.read("whoami")["userId"]
    message = _refused(root, "create_mfa_policy", "ACTIVITY_TYPE_CREATE_MFA_POLICY", {
        "userId": me, "mfaPolicyName": "exports need a passkey",
        "condition": "activity.action == 'EXP\u200bORT'", "order": 0,
        "requiredAuthenticationMethods": [{"any": [{"type": "AUTHENTICATION_TYPE_PASSKEY"}]}]})
    assert "U+200B (ZERO WIDTH SPACE)" in message and "at index 23" in message
    message = _refused(root, "create_session_profile", "ACTIVITY_TYPE_CREATE_SESSION_PROFILE", {
        "sessionProfileName": "wallets only",
        "scope": "activity.resource == 'W\u0410LLET'"})
    assert "U+0410 (CYRILLIC CAPITAL LETTER A)" in message and "mixes scripts" in message


def test_readable_policies_are_still_accepted(root: RawApi) -> None:
    policy_id = root.ok("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        "policyName": "出金ポリシー", "effect": "EFFECT_ALLOW",
        "condition": "activity.resource == 'WALLET' && activity.action == 'CREATE'",
        "notes": "Политика казначейства ⚠️"})["policyId"]
    root.ok("update_policy", "ACTIVITY_TYPE_UPDATE_POLICY_V2", {
        "policyId": policy_id, "policyNotes": "Σύνοψη πολιτικής",
        "policyCondition": "activity.resource == 'WALLET'\n  && activity.action == 'CREATE'"})
    policy = root.read("get_policy", {"policyId": policy_id})["policy"]
    assert (policy["policyName"], policy["notes"]) == ("出金ポリシー", "Σύνοψη πολιτικής")
