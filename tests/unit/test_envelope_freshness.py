"""``timestampMs`` freshness: under an hour old, at most five minutes ahead."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from infra.errors import InvalidRequest
from infra.submit_body import check_fresh

NOW = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)


def _ms(moment: datetime) -> str:
    return str(int(moment.timestamp() * 1000))


@pytest.mark.parametrize("offset", [
    -timedelta(minutes=59, seconds=59),
    timedelta(0),
    timedelta(minutes=4, seconds=59),
])
def test_fresh_timestamps_are_accepted(offset: timedelta) -> None:
    check_fresh(_ms(NOW + offset), NOW)


@pytest.mark.parametrize("offset, needle", [
    (-timedelta(hours=1, seconds=1), "too old"),
    (timedelta(minutes=5, seconds=1), "in the future"),
])
def test_stale_or_future_timestamps_are_refused(offset: timedelta, needle: str) -> None:
    with pytest.raises(InvalidRequest, match=needle) as info:
        check_fresh(_ms(NOW + offset), NOW)
    wire = info.value.to_wire()
    assert wire["code"] == 3
    assert wire["details"][0]["fieldViolations"][0]["field"] == "timestampMs"


@pytest.mark.parametrize("value", ["9" * 19, "99999999999999999999999"])
def test_out_of_range_timestamps_are_refused(value: str) -> None:
    with pytest.raises(InvalidRequest, match="timestampMs"):
        check_fresh(value, NOW)
