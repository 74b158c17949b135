"""walletd's own queries behind the operator's console (docs/CONSOLE.md), over HTTP on the
embedded path: ``evaluate_policy_draft`` parses with the server's parser and decides without
storing, ``describe_activity`` answers the variables the engine decides with,
``get_service_status`` what the service is."""

from __future__ import annotations

from importlib import metadata

import requests

from tests.support.deployment import Deployment, make_organization
from tests.support.keys import make_key
from tests.support.raw_api import RawApi

ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32", "path": "m/44'/60'/0'/0/0",
       "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


def _org(dep: Deployment) -> tuple[RawApi, RawApi, str]:
    """A fresh organization, its root, a member with no policy, and the member's refused
    ``create_wallet``."""
    root_key = make_organization(dep, "console queries")
    root = RawApi(dep, root_key, root_key.organization_id)
    key = make_key()
    user_id = root.ok("create_users", "ACTIVITY_TYPE_CREATE_USERS_V3", {"users": [{
        "userName": "member", "apiKeys": [key.api_key_params()], "authenticators": [],
        "oauthProviders": [], "userTags": []}]})["userIds"][0]
    member = RawApi(dep, key, root_key.organization_id)
    assert member.submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                         {"walletName": "m", "accounts": [ETH]}).status_code == 403
    (refused,) = [a for a in root.read("list_activities")["activities"]
                  if a["type"] == "ACTIVITY_TYPE_CREATE_WALLET" and a["votes"][0]["userId"] == user_id]
    return root, member, refused["id"]


def test_a_draft_is_parsed_and_decided_without_being_stored(embedded: Deployment) -> None:
    root, member, activity_id = _org(embedded)
    broken = root.read("evaluate_policy_draft", {
        "effect": "EFFECT_ALLOW", "condition": "true", "consensus": "approvers.count() >=",
        "activityId": activity_id})
    assert [(e["field"], e["line"]) for e in broken["errors"]] == [("consensus", 1)]
    assert "evaluation" not in broken
    allow = {"effect": "EFFECT_ALLOW",
             "condition": "activity.resource == 'WALLET' && activity.action == 'CREATE'"}
    answer = member.read("evaluate_policy_draft", {**allow, "activityId": activity_id})
    evaluation = answer["evaluation"]
    assert (evaluation["draftOutcome"], evaluation["outcome"]) == ("OUTCOME_ALLOW", "OUTCOME_ALLOW")
    assert evaluation["policyEvaluations"] == [{"policyId": "draft", "outcome": "OUTCOME_ALLOW"}]
    assert evaluation["settledBeforePolicies"] is False
    # A stored deny, then a draft standing for it: the draft decides, not the stored policy.
    deny = root.ok("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        "policyName": "no wallets", "effect": "EFFECT_DENY", "notes": "",
        "condition": "activity.resource == 'WALLET'"})["policyId"]
    with_deny = root.read("evaluate_policy_draft", {**allow, "activityId": activity_id})
    assert with_deny["evaluation"]["outcome"] == "OUTCOME_DENY_EXPLICIT"
    replaced = root.read("evaluate_policy_draft", {**allow, "activityId": activity_id,
                                                   "replacesPolicyId": deny})
    assert replaced["evaluation"]["outcome"] == "OUTCOME_ALLOW"
    # Nothing stored: one policy, the one evaluation of the original refusal.
    assert [p["policyId"] for p in root.read("list_policies")["policies"]] == [deny]
    assert len(root.read("get_policy_evaluations", {"activityId": activity_id})[
        "policyEvaluations"]) == 1
    # Malformed input is a 400, an unknown activity a 404, never a 500.
    assert root.query("evaluate_policy_draft", {"effect": "EFFECT_MAYBE"}).status_code == 400
    assert root.query("evaluate_policy_draft", {"effect": "EFFECT_ALLOW",
                                                "activityId": "nope"}).status_code == 404


def test_describe_activity_and_service_status(embedded: Deployment) -> None:
    root, _, activity_id = _org(embedded)
    described = root.read("describe_activity", {"activityId": activity_id})
    assert described["type"] == "ACTIVITY_TYPE_CREATE_WALLET"
    assert described["variables"]["activity"]["resource"] == "WALLET"
    assert root.query("describe_activity", {"activityId": "nope"}).status_code == 404
    status = root.read("get_service_status")
    assert status["walletdVersion"] == metadata.version("walletd")
    assert (status["databaseDialect"], status["broker"]) == ("sqlite", "memory")
    assert status["databaseRevision"]
    document = requests.get(embedded.base_url + "/public/v1/openapi.json", timeout=10).json()
    seal = root.read("get_seal_status")
    assert seal["sealed"] is False and seal["sealType"] == "static", seal
    assert seal["processes"] and all(not p["sealed"] for p in seal["processes"])
    assert set(seal["processes"][0]) == {"role", "sealed", "progress", "reportedAt"}
    for name in ("describe_activity", "evaluate_policy_draft", "get_service_status",
                 "get_seal_status"):
        assert f"/public/v1/query/{name}" in document["x-walletd-undocumented-operations"]
