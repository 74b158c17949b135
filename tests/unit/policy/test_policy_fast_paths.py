"""The evaluator's exact-type fast paths answer exactly as its general checks do.

Every expression runs twice: against plain data (``dict``, ``list``, ``str``, ``int``: the
fast paths) and against the same data in other types the language accepts (read-only
mappings, tuples, ``str``/``int`` subclasses: the general paths). Results and error messages
must be identical, and match the expected value.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import pytest

from infra.policy.evaluator import PolicyEvaluationFailed, compiled


class Text(str):
    """A ``str`` that is not exactly ``str``."""


class Number(int):
    """An ``int`` that is not exactly ``int``."""


PLAIN: dict[str, Any] = {
    "activity": {"kind": "SIGN_TRANSACTION", "action": "SIGN", "params": {"flag": True}},
    "approvers": [{"id": "u1", "tags": ["ops"]}, {"id": "u2", "tags": ["ops", "fin"]}],
    "eth": {"tx": {"to": "0xab", "value": 5, "chain_id": 1, "data": "0xa9059cbb00"}},
    "time": {"now": datetime(2026, 3, 10, 15, 0, tzinfo=UTC)},
}


def _general(value: Any) -> Any:
    """The same data in types that skip every fast path."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _general(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_general(v) for v in value)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return value
    return Text(value) if isinstance(value, str) else Number(value)


GENERAL = _general(PLAIN)

CASES: list[tuple[str, bool | str]] = [
    ("activity.kind == 'SIGN_TRANSACTION'", True),
    ("activity.kind != 'SIGN_TRANSACTION'", False),
    ("eth.tx.value == 5 && eth.tx.chain_id != 2", True),
    ("eth.tx.value < 6 && eth.tx.value >= 5 && !(eth.tx.value > 5) && 4 <= eth.tx.value", True),
    ("eth.tx.value == '5'", "cannot compare int == string"),
    ("activity.params.flag == 1", "cannot compare bool == int"),
    ("activity.params.flag < 2", "cannot compare bool < int"),
    ("activity.kind < 'z'", "< needs ints or timestamps, not string"),
    ("eth.tx.value < eth.tx.chain_id || eth.tx.value > eth.tx.chain_id", True),
    ("time.now > Timestamp('2026-01-01T00:00:00Z')", True),
    ("wallet.id == 'w'", "MissingField: 'wallet'"),
    ("activity.resource == 'WALLET'", "MissingField: 'resource'"),
    ("activity.kind.length == 1", "MissingField: string has no field 'length'"),
    ("eth.tx.to in ['0xab', '0xcd']", True),
    ("eth.tx.value in [true, '5']", False),
    ("eth.tx.value in [true, 5]", True),
    ("activity.params.flag in [1, true]", True),
    ("approvers.any(u, u.id == 'u2')", True),
    ("approvers.all(u, u.tags.contains('ops'))", True),
    ("approvers.filter(u, u.tags.contains('fin')).count() == 1", True),
    ("approvers.filter(u, u.tags.contains('fin'))[0].id == 'u2'", True),
    ("approvers.any(u, u.id)", "any() predicate must be a bool, not string"),
    ("approvers.any(u, u.email == 'x')", "MissingField: 'email'"),
    ("approvers.count() == 2", True),
    ("activity.kind.count() == 2", "count() target must be a list, not string"),
    ("activity.kind.contains('SIGN')", True),
    ("approvers[0].tags.contains(1)", False),
    ("eth.tx.data[0..10] == '0xa9059cbb'", True),
    ("activity.kind", "expression evaluates to a string, not a bool"),
    ("eth.tx.value == 5 || activity.kind", "right side of || must be a bool, not string"),
    ("activity.kind && eth.tx.value == 5", "left side of && must be a bool, not string"),
]


def _outcome(text: str, env: Mapping[str, Any]) -> bool | str:
    try:
        return compiled(text, "condition")(env)
    except PolicyEvaluationFailed as ex:
        return ex.message


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_fast_and_general_paths_agree(text: str, expected: bool | str) -> None:
    fast, general = _outcome(text, PLAIN), _outcome(text, GENERAL)
    assert fast == general
    if isinstance(expected, bool):
        assert fast is expected
    else:
        assert isinstance(fast, str) and fast.startswith(expected)


def test_the_general_data_really_is_general() -> None:
    assert type(GENERAL["activity"]) is MappingProxyType
    assert type(GENERAL["approvers"]) is tuple
    assert type(GENERAL["activity"]["kind"]) is Text
    assert type(GENERAL["eth"]["tx"]["value"]) is Number
    assert GENERAL["activity"]["params"]["flag"] is True
