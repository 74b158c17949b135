"""The parser: every documented form parses; anything else fails with one error type."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infra.errors import InvalidRequest
from infra.policy import nodes
from infra.policy.parser import MAX_LENGTH, InvalidPolicyExpression, parse

# Every expression printed in PROTOCOL.md §8 and the policy docs it cites.
DOCUMENTED = [
    "true && false",
    "1 < 2",
    "'a' != 'b'",
    "1 in [1, 2, 3]",
    "[1,2,3][0] == 1",
    "'abc'[0] == 'a'",
    "[1,2,3][0..2] == [1, 2]",
    "'abc'[0..2] == 'ab'",
    "[1,1,1].all(x, x == 1)",
    "[1,2,3].any(x, x == 1)",
    "[1,2,3].contains(1)",
    "[1,2,3].count() == 3",
    "[1,2,3].filter(x, x == 1) == [1]",
    "approvers.any(user, user.id == '4b894565-fa11-42fc-b813-5bf4ea3d53f9')",
    "eth.tx.to == '<ALLOWED_ADDRESS>'",
    "approvers.filter(user, user.tags.contains('<TAG>')).count() >= 2",
    "tempo.tx.calls[0].input[34..74] == ''",
    "solana.tx.address_table_lookups.count() > 0",
    "wallet.id == '<wallet UUID>' || private_key.id == '<private key UUID>'",
    "activity.kind == 'SIGN_TRANSACTION'",
    "activity.resource == 'POLICY' && activity.action == 'CREATE'",
    "activity.resource in ['AUTH', 'OTP'] && activity.action in ['CREATE','VERIFY']",
    "credentials.any(credential, credential.type == 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR')",
    "activity.type == 'ACTIVITY_TYPE_DELETE_USERS' && activity.params.user_ids.count() == 1"
    " && '<USER_ID>' in activity.params.user_ids",
    "eth.tx.contract_call_args['calls'].all(call, call[0] == '<C>' && call[1] == 0)",
    "eth.eip_712.message['permitted'][0]['token'] == '0xa0b8'",
    "time.now >= Timestamp('2026-03-01T00:00:00Z')"
    " && time.now < Timestamp('2026-04-01T00:00:00Z')",
    "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')",
    "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')"
    " && time.now < Timestamp('2026-01-01T00:00:00Z')",
    "!CronSpan('0 2 * * *', '1h', 'UTC')",
    "eth.tx.value < 170141183460469231731687303715884105728",
    "{ id: 'abc' } == { id: 'abc' }",
]


@pytest.mark.parametrize("text", DOCUMENTED)
def test_parse_accepts_every_documented_expression(text: str) -> None:
    expression = parse(text)
    assert expression.source == text
    assert expression.root.depth >= 1


def test_parse_records_the_keywords_an_expression_uses() -> None:
    expression = parse("approvers.any(u, u.id == 'x') && activity.kind == 'SIGN_TRANSACTION'")
    assert expression.names == {"approvers", "activity"}


def test_parse_builds_left_associative_logic_with_and_binding_tighter() -> None:
    root = parse("true || false && false").root
    assert isinstance(root, nodes.Or)
    assert isinstance(root.right, nodes.And)


def test_parse_turns_timestamp_into_a_literal_at_parse_time() -> None:
    root = parse("time.now < Timestamp('2026-01-01T00:00:00-00:00')").root
    assert isinstance(root, nodes.Compare)
    assert isinstance(root.right, nodes.Literal)
    assert root.right.value.isoformat() == "2026-01-01T00:00:00+00:00"  # type: ignore[union-attr]


def test_parse_unescapes_single_quoted_strings() -> None:
    root = parse(r"'it\'s' == 'x'").root
    assert isinstance(root, nodes.Compare) and isinstance(root.left, nodes.Literal)
    assert root.left.value == "it's"


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("activity.type = 'x'", 1, 15, "unexpected character '='"),
        ('activity.type == "x"', 1, 18, "unexpected character"),
        ("a &&", 1, 5, "unexpected end"),
        ("activity.type ==\n  && true", 2, 3, "unexpected '&&'"),
        ("1 == 2 == 3", 1, 8, "unexpected '=='"),
        ("acitvity.type == 'x'", 1, 1, "unknown keyword 'acitvity'"),
        ("approvers.some(u, true)", 1, 11, "unknown function 'some'"),
        ("approvers.any('u', true)", 1, 11, "takes an item name"),
        ("[1].count(1) == 1", 1, 5, "count() takes no arguments"),
        ("Timestamp('2026-01-01T00:00:00+05:00') < time.now", 1, 1, "zero UTC offset"),
        ("CronSpan('*/5 * * * *', '8h', 'UTC')", 1, 1, "only numbers"),
        ("CronSpan('0 9 * * MON', '8h', 'UTC')", 1, 1, "only numbers"),
        ("CronSpan('0 9 * * 1', '8d', 'UTC')", 1, 1, "at most 7d"),
        ("CronSpan('0 9 * * 1', '1.5h', 'UTC')", 1, 1, "duration"),
        ("CronSpan('0 9 * * 1', '8h', 'Mars/Olympus')", 1, 1, "time zone"),
        ("Now() == 1", 1, 1, "unknown function 'Now'"),
        ("approvers.any(approvers, true)", 1, 11, "shadows a keyword"),
        ("1" + "0" * 80 + " > 0", 1, 1, "256 bits"),
        ("'unterminated", 1, 1, "unexpected character"),
        ("{a: 1, a: 2} == {a: 1}", 1, 1, "duplicate key"),
    ],
)
def test_parse_refuses_bad_input_pointing_at_the_position(
    text: str, line: int, column: int, fragment: str
) -> None:
    with pytest.raises(InvalidPolicyExpression) as caught:
        parse(text, field="condition")
    assert (caught.value.line, caught.value.column) == (line, column)
    assert fragment in caught.value.message
    assert f"line {line}, column {column}" in caught.value.message


def test_parse_error_is_a_400_naming_the_field() -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse("approvers.", field="consensus")
    body = caught.value.to_wire()
    assert body["code"] == 3
    assert body["message"].startswith("invalid policy consensus:")
    violations = [d for d in body["details"] if "fieldViolations" in d]
    assert violations[0]["fieldViolations"][0]["field"] == "consensus"


def test_parse_refuses_trees_nested_too_deeply() -> None:
    with pytest.raises(InvalidPolicyExpression, match="nested deeper"):
        parse("!" * 200 + "true")


def test_parse_refuses_overlong_input() -> None:
    with pytest.raises(InvalidPolicyExpression, match="longer than"):
        parse("true && " * (MAX_LENGTH // 8 + 1) + "true")


def test_parse_survives_deep_parentheses() -> None:
    assert isinstance(parse("(" * 500 + "true" + ")" * 500).root, nodes.Literal)
    with pytest.raises(InvalidPolicyExpression):
        parse("(" * 5000)


_TOKENS = st.sampled_from(
    [
        "&&", "||", "!", "==", "!=", "<", ">", "<=", ">=", "in", ".", "..", "[", "]", "(", ")",
        ",", "{", "}", ":", "-", "'", "\\", "true", "false", "0", "42", "'x'", "approvers",
        "activity", "user", "any", "all", "filter", "contains", "count", "Timestamp",
        "CronSpan", "'2026-01-01T00:00:00Z'", "'0 9 * * 1-5'", "'8h'", "'UTC'", " ", "\n",
    ]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_parse_raises_only_its_own_error_on_arbitrary_text(text: str) -> None:
    try:
        parse(text)
    except InvalidPolicyExpression as ex:
        assert ex.line >= 1 and ex.column >= 1


@settings(max_examples=200, deadline=None)
@given(st.lists(_TOKENS, max_size=40).map(" ".join))
def test_parse_raises_only_its_own_error_on_token_soup(text: str) -> None:
    try:
        parse(text)
    except InvalidPolicyExpression as ex:
        assert ex.line >= 1 and ex.column >= 1
