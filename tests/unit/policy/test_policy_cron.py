"""CronSpan windows: fires plus a duration, zone-aware, DOM/DOW OR'd."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from infra.policy.cron import CronSpan, InvalidCronSpan, parse_duration


def utc(year: int, month: int, day: int, hour: int, minute: int) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


BUSINESS = CronSpan.parse("0 9 * * 1-5", "8h", "America/New_York")


@pytest.mark.parametrize(
    ("instant", "inside"),
    [
        (utc(2026, 3, 10, 13, 0), True),  # Tue 09:00 EDT: the fire itself is inside
        (utc(2026, 3, 10, 12, 59), False),  # 08:59
        (utc(2026, 3, 10, 20, 59), True),  # 16:59
        (utc(2026, 3, 10, 21, 0), False),  # 17:00: end is exclusive
        (utc(2026, 3, 14, 15, 0), False),  # Saturday
        (utc(2026, 1, 13, 14, 0), True),  # Tue 09:00 EST (UTC-5 in winter)
        (utc(2026, 1, 13, 13, 30), False),  # 08:30 EST
    ],
)
def test_business_hours_span(instant: datetime, inside: bool) -> None:
    assert BUSINESS.contains(instant) is inside


def test_overnight_window_crosses_midnight_and_dst_moves_its_end() -> None:
    span = CronSpan.parse("0 22 * * *", "8h", "America/New_York")
    assert span.contains(utc(2026, 1, 13, 10, 59))  # 05:59 EST next morning
    assert not span.contains(utc(2026, 1, 13, 11, 0))  # 06:00 EST
    # Spring forward (8 Mar 2026): 22:00 EST Saturday + 8h elapsed = 07:00 EDT Sunday.
    assert span.contains(utc(2026, 3, 8, 10, 59))
    assert not span.contains(utc(2026, 3, 8, 11, 0))


def test_day_of_month_and_day_of_week_are_ored() -> None:
    span = CronSpan.parse("0 9 1 * 1", "1h", "UTC")
    assert span.contains(utc(2026, 4, 1, 9, 30))  # the 1st, a Wednesday
    assert span.contains(utc(2026, 4, 6, 9, 30))  # a Monday, the 6th
    assert not span.contains(utc(2026, 4, 7, 9, 30))  # neither


def test_restricted_month_and_lists() -> None:
    span = CronSpan.parse("15,45 0 * 2 *", "10m", "UTC")
    assert span.contains(utc(2026, 2, 3, 0, 50))
    assert not span.contains(utc(2026, 2, 3, 0, 56))
    assert not span.contains(utc(2026, 3, 3, 0, 50))


def test_a_week_long_window_is_found_from_its_last_minute() -> None:
    span = CronSpan.parse("0 0 * * 0", "7d", "UTC")  # every Sunday, a full week
    assert span.contains(utc(2026, 3, 14, 23, 59))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8h", timedelta(hours=8)),
        ("90m", timedelta(minutes=90)),
        ("1d12h", timedelta(hours=36)),
        ("7d", timedelta(days=7)),
    ],
)
def test_parse_duration(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "0m", "8", "1.5h", "8s", "7d1m", "h", "12h1d"])
def test_parse_duration_refuses(text: str) -> None:
    with pytest.raises(InvalidCronSpan):
        parse_duration(text)


@pytest.mark.parametrize(
    "cron",
    [
        "* * * *",
        "*/5 * * * *",
        "0 9 * * MON",
        "@daily",
        "60 * * * *",
        "0 24 * * *",
        "0 0 0 * *",
        "0 0 * 13 *",
        "0 0 * * 7",
        "5-1 * * * *",
        "0  9 * * *",
    ],
)
def test_parse_refuses_unsupported_cron(cron: str) -> None:
    with pytest.raises(InvalidCronSpan):
        CronSpan.parse(cron, "1h", "UTC")


@pytest.mark.parametrize("zone", ["Mars/Olympus", "../etc/passwd", "", "/UTC", "America/"])
def test_parse_refuses_unknown_zones(zone: str) -> None:
    with pytest.raises(InvalidCronSpan):
        CronSpan.parse("0 9 * * *", "1h", zone)
