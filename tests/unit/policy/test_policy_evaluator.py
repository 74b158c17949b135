"""The evaluator: documented semantics, strict types, no short circuit, errors not crashes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infra.policy.evaluator import PolicyEvaluationFailed, evaluate
from infra.policy.parser import InvalidPolicyExpression, parse

ENV: dict[str, Any] = {
    "approvers": [
        {"id": "u1", "tags": ["ops"], "email": "a@example.com", "alias": "a"},
        {"id": "u2", "tags": ["ops", "fin"], "email": "", "alias": ""},
    ],
    "activity": {
        "type": "ACTIVITY_TYPE_SIGN_TRANSACTION_V2",
        "kind": "SIGN_TRANSACTION",
        "resource": "PRIVATE_KEY",
        "action": "SIGN",
        "params": {"type": "TRANSACTION_TYPE_ETHEREUM"},
    },
    "wallet": {"id": "w1", "imported": False, "exported": False, "label": "main"},
    "eth": {
        "tx": {
            "to": "0x08d2b0a37f869ff76bacb5bab3278e26ab7067b7",
            "data": "0xa9059cbb000000000000000000000000",
            "value": 10**18,
            "chain_id": 11155111,
            "nonce": 3,
            "contract_call_args": {"calls": [["0xc0", 0], ["0xc0", 0]], "wad": 5},
        }
    },
    "tempo": {"tx": {"calls": [{"input": "0x" + "ab" * 40}]}},
    "time": {"now": datetime(2026, 3, 10, 15, 0, tzinfo=UTC)},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The grammar table of the policy language docs.
        ("true && false", False),
        ("1 < 2", True),
        ("'a' != 'b'", True),
        ("1 in [1, 2, 3]", True),
        ("[1,2,3][0] == 1", True),
        ("'abc'[0] == 'a'", True),
        ("[1,2,3][0..2] == [1, 2]", True),
        ("'abc'[0..2] == 'ab'", True),
        ("[1,1,1].all(x, x == 1)", True),
        ("[1,2,3].any(x, x == 1)", True),
        ("[1,2,3].contains(1)", True),
        ("[1,2,3].count() == 3", True),
        ("[1,2,3].filter(x, x == 1) == [1]", True),
        ("[].all(x, x == 1)", True),
        ("[].any(x, x == 1)", False),
        # Keywords.
        ("approvers.any(user, user.id == 'u1')", True),
        ("approvers.all(user, user.tags.contains('ops'))", True),
        ("approvers.filter(user, user.tags.contains('fin')).count() >= 2", False),
        ("approvers.filter(user, user.tags.contains('ops')).count() >= 2", True),
        ("activity.kind == 'SIGN_TRANSACTION' && activity.action == 'SIGN'", True),
        ("activity.params.type == 'TRANSACTION_TYPE_ETHEREUM'", True),
        ("eth.tx.data[0..10] == '0xa9059cbb'", True),
        ("eth.tx.chain_id == 11155111 && eth.tx.nonce <= 3", True),
        ("eth.tx.value < 1000000000000000000", False),
        ("eth.tx.contract_call_args['calls'].all(c, c[0] == '0xc0' && c[1] == 0)", True),
        ("eth.tx.contract_call_args['calls'].count() <= 2", True),
        ("eth.tx.contract_call_args['wad'] < 10", True),
        ("tempo.tx.calls[0].input[34..74] == '" + ("ab" * 40)[32:72] + "'", True),
        ("wallet.label == 'main' && !wallet.imported", True),
        ("time.now >= Timestamp('2026-03-01T00:00:00Z')", True),
        ("time.now < Timestamp('2026-03-10T15:00:00Z')", False),
        ("CronSpan('0 9 * * 1-5', '8h', 'America/New_York')", True),  # Tue 11:00 New York
        ("CronSpan('0 22 * * *', '8h', 'America/New_York')", False),
        ("-1 < 0", True),
        ("'ab' in ['ab', 'cd'] && !('x' in ['ab'])", True),
        ("'abcdef'.contains('cd')", True),
        ("{ id: 'w1' } == { id: wallet.id }", True),
        ("[1, 'a'] == [1, 'a'] && [1] != [1, 2]", True),
        ("1 in ['1']", False),
    ],
)
def test_evaluate_follows_the_documented_semantics(text: str, expected: bool) -> None:
    assert evaluate(parse(text), ENV) is expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        # The documented "always errors" example: one clause can never be evaluated.
        ("wallet.id == 'w1' || private_key.id == 'k1'", "MissingField: 'private_key'"),
        ("activity.params.hash_function == 'HASH_FUNCTION_NO_OP'", "MissingField"),
        ("true || activity.params.nope == 'x'", "MissingField"),  # no short circuit
        ("false && [1][5] == 1", "out of range"),
        ("'a' == 1", "cannot compare"),
        ("'a' < 'b'", "needs ints or timestamps"),
        ("true < false", "needs ints or timestamps"),
        ("1", "not a bool"),
        ("approvers", "not a bool"),
        ("approvers.any(u, u.id)", "predicate must be a bool"),
        ("wallet.id.count() == 1", "count() target must be a list"),
        ("1 in wallet", "right side of 'in' must be a list"),
        ("eth.tx.data[10..2] == ''", "slice 10..2 out of range"),
        ("wallet['x'] == 1", "MissingField: 'x'"),
        ("wallet[0] == 1", "map key must be a string"),
        ("eth.tx.value[0] == 1", "cannot index a int"),
        ("!1", "operand of ! must be a bool"),
        ("1 && true", "left side of &&"),
        ("approvers[0].tags.count == 2", "list has no field 'count'"),
        ("wallet.id.x == 'a'", "has no field 'x'"),
        ("solana.tx.address_table_lookups.count() > 0", "MissingField: 'solana'"),
    ],
)
def test_evaluate_raises_evaluation_failure_for_every_problem(text: str, fragment: str) -> None:
    with pytest.raises(PolicyEvaluationFailed) as caught:
        evaluate(parse(text), ENV)
    assert fragment in caught.value.message


def test_evaluation_failure_points_at_the_failing_clause() -> None:
    with pytest.raises(PolicyEvaluationFailed) as caught:
        evaluate(parse("wallet.id == 'w1' &&\n  private_key.id == 'k'"), ENV)
    assert caught.value.pos is not None
    assert (caught.value.pos.line, caught.value.pos.column) == (2, 3)


def test_cron_span_without_time_is_an_evaluation_failure() -> None:
    with pytest.raises(PolicyEvaluationFailed, match="MissingField"):
        evaluate(parse("CronSpan('0 9 * * *', '1h', 'UTC')"), {})


def test_a_broken_variable_value_is_an_evaluation_failure_not_a_crash() -> None:
    class Exploding(dict[str, Any]):
        def get(self, key: str, default: Any = None) -> Any:
            raise RuntimeError("boom")

    with pytest.raises(PolicyEvaluationFailed, match="RuntimeError"):
        evaluate(parse("wallet.id == 'x'"), {"wallet": Exploding()})


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=10,
)
_EXPRESSIONS = st.sampled_from(
    [
        "wallet.id == 'x'", "approvers.any(u, u.id == 'x')", "eth.tx.data[0..10] == '0x'",
        "activity.params.user_ids.count() == 1 && 'x' in activity.params.user_ids",
        "wallets.filter(w, w.imported).count() > 0", "eth.tx.value <= 5 || eth.tx.to == 'a'",
        "private_key.tags.contains('t')", "time.now < Timestamp('2026-01-01T00:00:00Z')",
        "CronSpan('0 9 * * 1-5', '8h', 'UTC')", "tempo.tx.calls[0].input[2..4] == 'ab'",
    ]
)  # fmt: skip
_KEYS = st.sampled_from(
    ["wallet", "wallets", "approvers", "eth", "activity", "private_key", "time", "tempo"]
)


@settings(max_examples=200, deadline=None)
@given(_EXPRESSIONS, st.dictionaries(_KEYS, _JSON, max_size=6))
def test_evaluate_returns_a_bool_or_raises_its_own_error_on_arbitrary_data(
    text: str, env: dict[str, Any]
) -> None:
    try:
        assert evaluate(parse(text), env) in (True, False)
    except PolicyEvaluationFailed as ex:
        assert ex.message


def test_invalid_expression_never_reaches_the_evaluator() -> None:
    with pytest.raises(InvalidPolicyExpression):
        evaluate(parse("wallet.id =="), ENV)
