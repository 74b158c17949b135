"""The arithmetic of bounded replacement (``infra.broadcast.bounds``) and its settings.

End to end, against anvil and a hostile JSON-RPC peer: tests/e2e/abuse/test_broadcast_fees.py.
"""

from __future__ import annotations

import pytest

from infra.broadcast.bounds import GWEI, Fees, GiveUp, Limits, Replacement, replacement
from infra.settings import Settings

FIRST = Fees(max_fee=20 * GWEI, tip=GWEI)


def _limits(**env: str) -> Limits:
    return Limits.of(Settings.from_env(env), FIRST)


def test_the_defaults_are_five_replacements_three_times_the_first_fees_and_1000_gwei() -> None:
    limits = _limits()
    assert limits.max_replacements == 5
    assert (limits.max_fee, limits.max_tip) == (60 * GWEI, 3 * GWEI)
    assert limits.suggestion_limit == 60 * GWEI  # never above the transaction's ceiling


def test_a_replacement_bumps_both_fees_by_one_eighth() -> None:
    found = replacement(FIRST, None, 0, _limits())
    assert found == Replacement(Fees(20 * GWEI * 9 // 8 + 1, GWEI * 9 // 8 + 1))


def test_a_sane_higher_suggestion_is_used() -> None:
    found = replacement(FIRST, Fees(40 * GWEI, 2 * GWEI), 0, _limits())
    assert found == Replacement(Fees(40 * GWEI, 2 * GWEI))


@pytest.mark.parametrize("suggestion", [
    Fees(10**6 * GWEI, 10**6 * GWEI),  # a hostile tip
    Fees(2 * 10**6 * GWEI, GWEI),      # a hostile base fee
    Fees(40 * GWEI, 5 * GWEI),         # a tip above the transaction's tip ceiling (3 gwei)
])
def test_an_insane_suggestion_is_ignored_for_the_own_bump(suggestion: Fees) -> None:
    found = replacement(FIRST, suggestion, 0, _limits())
    assert isinstance(found, Replacement)
    assert found.fees == Fees(20 * GWEI * 9 // 8 + 1, GWEI * 9 // 8 + 1)
    assert "above the limit" in found.ignored


def test_the_operator_bound_on_suggestions_applies_below_the_ceiling() -> None:
    found = replacement(FIRST, Fees(50 * GWEI, 2 * GWEI), 0,
                        _limits(WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI="30"))
    assert isinstance(found, Replacement) and found.ignored
    assert found.fees.max_fee < 30 * GWEI


def test_the_count_is_bounded() -> None:
    limits = _limits(WALLETD_BROADCAST_MAX_REPLACEMENTS="2")
    assert isinstance(replacement(FIRST, None, 1, limits), Replacement)
    stop = replacement(FIRST, None, 2, limits)
    assert isinstance(stop, GiveUp)
    assert stop.rule == "WALLETD_BROADCAST_MAX_REPLACEMENTS"
    assert "WALLETD_BROADCAST_MAX_REPLACEMENTS=2" in stop.reason


def test_the_fee_is_bounded_whatever_the_count_allows() -> None:
    limits = _limits(WALLETD_BROADCAST_MAX_REPLACEMENTS="100")
    current, steps = FIRST, 0
    while isinstance(found := replacement(current, None, steps, limits), Replacement):
        current, steps = found.fees, steps + 1
        assert current.max_fee <= 60 * GWEI and current.tip <= 3 * GWEI
    assert found.rule == "WALLETD_BROADCAST_FEE_CAP_MULTIPLE"
    assert steps == 9  # 1.125 ** 9 = 2.89 <= 3 < 1.125 ** 10


def test_no_replacement_at_all_when_the_multiple_is_one() -> None:
    stop = replacement(FIRST, None, 0, _limits(WALLETD_BROADCAST_FEE_CAP_MULTIPLE="1"))
    assert isinstance(stop, GiveUp) and "ceiling" in stop.reason


@pytest.mark.parametrize(("name", "value"), [
    ("WALLETD_BROADCAST_MAX_REPLACEMENTS", "-1"),
    ("WALLETD_BROADCAST_MAX_REPLACEMENTS", "101"),
    ("WALLETD_BROADCAST_MAX_REPLACEMENTS", "many"),
    ("WALLETD_BROADCAST_FEE_CAP_MULTIPLE", "0.9"),
    ("WALLETD_BROADCAST_FEE_CAP_MULTIPLE", "nan"),
    ("WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI", "0"),
    ("WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI", "-5"),
])
def test_a_bad_setting_is_a_startup_error_naming_it(name: str, value: str) -> None:
    with pytest.raises(ValueError, match=name):
        Settings.from_env({name: value})


def test_stored_fees_round_trip() -> None:
    assert Fees.stored(FIRST.to_stored()) == FIRST
    assert Fees.stored(None) is None
