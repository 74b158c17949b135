"""Policies compiled once per process: the cache never serves a stale or foreign compilation.

``compiled_policy`` keys every field of a policy, so an edited text, effect or id is compiled
anew; a parse error is kept as the policy's outcome but only reported at its turn, after the
expressions before it ran, exactly as when each expression was parsed on use.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from infra.activities import registry
from infra.pipeline.engine import (
    Outcome,
    Policy,
    Proposal,
    clear_compiled,
    compiled_policy,
    evaluate,
    evaluate_policy,
    variables_for,
)
from infra.policy.evaluator import compiled
from infra.policy.variables import user_variable

ALICE = user_variable("alice", tags=["ops"])
SIGN = "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2"
ENV = variables_for(Proposal(SIGN, {"signWith": "0xabc"}, "alice", [ALICE],
                             resource_action=registry().resource_action(SIGN)))


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    clear_compiled()
    yield
    clear_compiled()


def test_an_unchanged_policy_is_compiled_once() -> None:
    first = Policy("p1", "EFFECT_ALLOW", "activity.kind == 'SIGN_RAW_PAYLOAD'")
    again = Policy("p1", "EFFECT_ALLOW", "activity.kind == 'SIGN_RAW_PAYLOAD'")  # a new row
    assert compiled_policy(first) is compiled_policy(again)
    assert evaluate_policy(again, ENV).outcome is Outcome.ALLOW


def test_an_edited_condition_is_compiled_anew() -> None:
    before = Policy("p1", "EFFECT_ALLOW", "activity.kind == 'SIGN_RAW_PAYLOAD'")
    after = Policy("p1", "EFFECT_ALLOW", "activity.kind == 'CREATE_WALLET'")
    assert evaluate_policy(before, ENV).outcome is Outcome.ALLOW
    assert compiled_policy(before) is not compiled_policy(after)
    assert evaluate_policy(after, ENV).outcome is Outcome.DENY_IMPLICIT
    # The old text is still answered from its own entry.
    assert evaluate_policy(before, ENV).outcome is Outcome.ALLOW


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        (Policy("p1", "EFFECT_DENY", "true"), Outcome.DENY_EXPLICIT),
        (Policy("p1", "EFFECT_ALLOW", "true", "approvers.count() >= 2"), Outcome.REQUIRES_CONSENSUS),
        (Policy("p1", "EFFECT_ALLOW", "true", "", "time.now < Timestamp('2020-01-01T00:00:00Z')"),
         Outcome.TIME_INACTIVE),
        (Policy("p1", "EFFECT_MAYBE", "true"), Outcome.ERROR),
    ],
)  # fmt: skip
def test_every_field_is_part_of_the_key(changed: Policy, expected: Outcome) -> None:
    assert evaluate_policy(Policy("p1", "EFFECT_ALLOW", "true"), ENV).outcome is Outcome.ALLOW
    assert evaluate_policy(changed, ENV).outcome is expected


def test_the_same_text_in_two_policies_reports_each_policy_id() -> None:
    text = "activity.kind == 'SIGN_RAW_PAYLOAD'"
    decision = evaluate([Policy("a", "EFFECT_ALLOW", text), Policy("b", "EFFECT_DENY", text)],
                        Proposal(SIGN, {}, "alice", [ALICE],
                                 resource_action=registry().resource_action(SIGN)))
    assert [(o.policy_id, o.outcome) for o in decision.policy_outcomes] == [
        ("a", Outcome.ALLOW), ("b", Outcome.DENY_EXPLICIT)]
    assert decision.outcome is Outcome.DENY_EXPLICIT


def test_a_fixed_policy_text_replaces_its_parse_error() -> None:
    broken = Policy("p1", "EFFECT_ALLOW", "activity.kind ==")
    first, second = evaluate_policy(broken, ENV), evaluate_policy(broken, ENV)
    assert first.outcome is second.outcome is Outcome.ERROR
    assert first.detail == second.detail
    assert "invalid policy condition" in first.detail
    fixed = Policy("p1", "EFFECT_ALLOW", "activity.kind == 'SIGN_RAW_PAYLOAD'")
    assert evaluate_policy(fixed, ENV).outcome is Outcome.ALLOW


def test_a_parse_error_waits_for_an_inactive_time_window() -> None:
    policy = Policy("p1", "EFFECT_ALLOW", "activity.kind ==", "",
                    "time.now < Timestamp('2020-01-01T00:00:00Z')")
    assert evaluate_policy(policy, ENV).outcome is Outcome.TIME_INACTIVE


def test_an_evaluation_error_before_a_parse_error_is_the_one_reported() -> None:
    policy = Policy("p1", "EFFECT_ALLOW", "wallet.id == 'w'", "approvers.any(")
    outcome = evaluate_policy(policy, ENV)
    assert outcome.outcome is Outcome.ERROR
    assert outcome.detail.startswith("MissingField: 'wallet'")
    valid = Policy("p1", "EFFECT_ALLOW", "true", "approvers.any(")
    assert "invalid policy consensus" in evaluate_policy(valid, ENV).detail


def test_an_unknown_effect_is_reported_after_the_expressions_run() -> None:
    assert evaluate_policy(Policy("p1", "EFFECT_MAYBE", "true"), ENV).detail == \
        "unknown effect EFFECT_MAYBE"
    failing = evaluate_policy(Policy("p1", "EFFECT_MAYBE", "wallet.id == 'w'"), ENV)
    assert failing.detail.startswith("MissingField: 'wallet'")


def test_clear_compiled_forgets_policies_and_expressions() -> None:
    policy = Policy("p1", "EFFECT_ALLOW", "true")
    held = compiled_policy(policy)
    assert compiled.cache_info().currsize == 1
    clear_compiled()
    assert compiled.cache_info().currsize == 0
    assert compiled_policy(policy) is not held
