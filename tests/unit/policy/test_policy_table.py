"""One policy table: what ``activity.resource`` / ``activity.action`` say of an activity type is
stated by its spec alone, in values of the documented enums, and policies see exactly that.

The documented table is Turnkey's ``features/policies/language.mdx`` ("Activity types by
resource and action", tkhq/docs c8289df2, 2026-08-18); :data:`DOCUMENTED` copies the rows of
the types walletd serves.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from infra.activities import registry
from infra.activities.spec import ActivitySpec
from infra.pipeline.engine import Outcome, Policy, Proposal, evaluate
from infra.policy.variables import (
    ACTIONS,
    RESOURCES,
    ROOT_QUORUM_KINDS,
    ResourceAction,
    activity_kind,
    activity_variable,
)

SERVED = sorted(registry().by_type)

#: The documented rows (kind → resource, action) of kinds walletd serves.
DOCUMENTED = {
    "CREATE_SUB_ORGANIZATION": ("ORGANIZATION", "CREATE"),
    "DELETE_SUB_ORGANIZATION": ("ORGANIZATION", "DELETE"),
    "CREATE_INVITATIONS": ("INVITATION", "CREATE"), "DELETE_INVITATION": ("INVITATION", "DELETE"),
    "CREATE_POLICY": ("POLICY", "CREATE"), "CREATE_POLICIES": ("POLICY", "CREATE"),
    "UPDATE_POLICY": ("POLICY", "UPDATE"), "DELETE_POLICY": ("POLICY", "DELETE"),
    "DELETE_POLICIES": ("POLICY", "DELETE"),
    "CREATE_SMART_CONTRACT_INTERFACE": ("SMART_CONTRACT_INTERFACE", "CREATE"),
    "DELETE_SMART_CONTRACT_INTERFACE": ("SMART_CONTRACT_INTERFACE", "DELETE"),
    "CREATE_WALLET": ("WALLET", "CREATE"), "CREATE_WALLET_ACCOUNTS": ("WALLET", "CREATE"),
    "EXPORT_WALLET": ("WALLET", "EXPORT"), "EXPORT_WALLET_ACCOUNT": ("WALLET", "EXPORT"),
    "INIT_IMPORT_WALLET": ("WALLET", "IMPORT"), "IMPORT_WALLET": ("WALLET", "IMPORT"),
    "DELETE_WALLETS": ("WALLET", "DELETE"), "UPDATE_WALLET": ("WALLET", "UPDATE"),
    "DELETE_WALLET_ACCOUNTS": ("WALLET", "DELETE"),
    "CREATE_PRIVATE_KEYS": ("PRIVATE_KEY", "CREATE"),
    "CREATE_PRIVATE_KEY_TAG": ("PRIVATE_KEY", "CREATE"),
    "UPDATE_PRIVATE_KEY_TAG": ("PRIVATE_KEY", "UPDATE"),
    "DELETE_PRIVATE_KEY_TAGS": ("PRIVATE_KEY", "DELETE"),
    "DELETE_PRIVATE_KEYS": ("PRIVATE_KEY", "DELETE"),
    "EXPORT_PRIVATE_KEY": ("PRIVATE_KEY", "EXPORT"),
    "INIT_IMPORT_PRIVATE_KEY": ("PRIVATE_KEY", "IMPORT"),
    "IMPORT_PRIVATE_KEY": ("PRIVATE_KEY", "IMPORT"),
    "SIGN_RAW_PAYLOAD": ("PRIVATE_KEY", "SIGN"), "SIGN_RAW_PAYLOADS": ("PRIVATE_KEY", "SIGN"),
    "SIGN_TRANSACTION": ("PRIVATE_KEY", "SIGN"), "ETH_SEND_TRANSACTION": ("PRIVATE_KEY", "SIGN"),
    "SOL_SEND_TRANSACTION": ("PRIVATE_KEY", "SIGN"),
    "CREATE_USERS": ("USER", "CREATE"), "CREATE_USER_TAG": ("USER", "CREATE"),
    "UPDATE_USER": ("USER", "UPDATE"), "UPDATE_USER_NAME": ("USER", "UPDATE"),
    "UPDATE_USER_EMAIL": ("USER", "UPDATE"), "UPDATE_USER_PHONE_NUMBER": ("USER", "UPDATE"),
    "UPDATE_USER_TAG": ("USER", "UPDATE"), "DELETE_USERS": ("USER", "DELETE"),
    "DELETE_USER_TAGS": ("USER", "DELETE"),
    "CREATE_API_KEYS": ("CREDENTIAL", "CREATE"), "CREATE_AUTHENTICATORS": ("CREDENTIAL", "CREATE"),
    "DELETE_API_KEYS": ("CREDENTIAL", "DELETE"), "DELETE_AUTHENTICATORS": ("CREDENTIAL", "DELETE"),
    "CREATE_OAUTH_PROVIDERS": ("CREDENTIAL", "CREATE"),
    "DELETE_OAUTH_PROVIDERS": ("CREDENTIAL", "DELETE"),
    "INIT_USER_EMAIL_RECOVERY": ("RECOVERY", "CREATE"),
    "EMAIL_AUTH": ("AUTH", "CREATE"), "INIT_OTP_AUTH": ("AUTH", "CREATE"),
    "OTP_AUTH": ("AUTH", "CREATE"), "OAUTH": ("AUTH", "CREATE"), "OAUTH_LOGIN": ("AUTH", "CREATE"),
    "OTP_LOGIN": ("AUTH", "CREATE"), "STAMP_LOGIN": ("AUTH", "CREATE"),
    "CREATE_READ_WRITE_SESSION": ("AUTH", "CREATE"),
    # The three OAuth2-credential activities: AUTH, not CREDENTIAL (the specs said CREDENTIAL,
    # the old second table AUTH; the docs' table settles it).
    "CREATE_OAUTH2_CREDENTIAL": ("AUTH", "CREATE"), "DELETE_OAUTH2_CREDENTIAL": ("AUTH", "DELETE"),
    "UPDATE_OAUTH2_CREDENTIAL": ("AUTH", "UPDATE"),
    "OAUTH2_AUTHENTICATE": ("AUTH", "CREATE"),
    "INIT_OTP": ("OTP", "CREATE"), "VERIFY_OTP": ("OTP", "VERIFY"),
    "ENABLE_AUTH_PROXY": ("AUTH_PROXY", "CREATE"), "DISABLE_AUTH_PROXY": ("AUTH_PROXY", "DELETE"),
    "UPDATE_AUTH_PROXY_CONFIG": ("AUTH_PROXY", "UPDATE"),
    "CREATE_WEBHOOK_ENDPOINT": ("WEBHOOK_ENDPOINT", "CREATE"),
    "UPDATE_WEBHOOK_ENDPOINT": ("WEBHOOK_ENDPOINT", "UPDATE"),
    "DELETE_WEBHOOK_ENDPOINT": ("WEBHOOK_ENDPOINT", "DELETE"),
}  # fmt: skip


def _spec(activity_type: str) -> ActivitySpec:
    return registry().by_type[activity_type][0]


def _governed(activity_type: str) -> bool:
    """Decided by policies: not a root-quorum type, not a vote."""
    return activity_kind(activity_type) not in ROOT_QUORUM_KINDS and \
        not _spec(activity_type).consensus_vote


@pytest.mark.parametrize("activity_type", SERVED)
def test_every_served_type_states_a_documented_resource_and_action(activity_type: str) -> None:
    spec = _spec(activity_type)
    if spec.consensus_vote:
        # Votes: the docs list no pair; policies name them by kind (docs/POLICY_ENGINE.md).
        assert spec.resource_action is None
        return
    assert spec.resource in RESOURCES and spec.action in ACTIONS
    assert registry().resource_action(activity_type) == ResourceAction(spec.resource, spec.action)


@pytest.mark.parametrize("activity_type", SERVED)
def test_the_documented_rows_are_what_the_specs_state(activity_type: str) -> None:
    kind = activity_kind(activity_type)
    if kind in DOCUMENTED:
        assert registry().resource_action(activity_type) == ResourceAction(*DOCUMENTED[kind])


@pytest.mark.parametrize("activity_type", [t for t in SERVED if _governed(t)])
def test_a_policy_on_its_resource_and_action_decides_every_governed_type(
        activity_type: str) -> None:
    pair = registry().resource_action(activity_type)
    assert pair is not None
    matching = f"activity.resource == '{pair.resource}' && activity.action == '{pair.action}'"
    # Imports must target the submitter (a hard gate); elsewhere another user, so no default
    # (a user's own credentials) allows it without a policy.
    user = "alice" if "IMPORT" in activity_type else "bob"
    proposal = Proposal(activity_type, {"userId": user}, "alice", [{"id": "alice"}],
                        resource_action=pair)
    assert evaluate([Policy("p", "EFFECT_ALLOW", matching)], proposal).outcome is Outcome.ALLOW
    assert evaluate([Policy("p", "EFFECT_ALLOW", "true"), Policy("d", "EFFECT_DENY", matching)],
                    proposal).outcome is Outcome.DENY_EXPLICIT
    other = "activity.resource == 'TVC_APP'"
    assert evaluate([Policy("p", "EFFECT_ALLOW", other)], proposal).outcome is \
        Outcome.DENY_IMPLICIT


@pytest.mark.parametrize("activity_type", [t for t in SERVED
                                           if activity_kind(t) in ROOT_QUORUM_KINDS])
def test_root_quorum_types_show_policies_no_resource(activity_type: str) -> None:
    """Not policy-governed (the docs give them no kind): their spec's pair stays out of the
    variable, so no policy on a resource reaches them."""
    variable = activity_variable(activity_type, {}, registry().resource_action(activity_type))
    assert "resource" not in variable and "action" not in variable and "kind" not in variable


def test_a_value_outside_the_documented_enums_is_refused_when_the_spec_is_declared() -> None:
    spec = _spec("ACTIVITY_TYPE_CREATE_WALLET")
    with pytest.raises(ValueError, match=r"activity\.resource 'WALLETS' is not one the docs list"):
        replace(spec, resource="WALLETS")
    with pytest.raises(ValueError, match=r"activity\.action 'RENAME' is not one the docs list"):
        replace(spec, action="RENAME")
    with pytest.raises(ValueError, match="resource and action are given together"):
        replace(spec, action=None)


def test_policies_read_the_pair_they_are_given_not_a_table_of_their_own() -> None:
    """The variable carries whatever the spec states (a new activity's included)."""
    variable = activity_variable("ACTIVITY_TYPE_NOT_SERVED", {}, ResourceAction("WALLET", "UPDATE"))
    assert (variable["resource"], variable["action"]) == ("WALLET", "UPDATE")
    assert "resource" not in activity_variable("ACTIVITY_TYPE_NOT_SERVED", {}, None)
