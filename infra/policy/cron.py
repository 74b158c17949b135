"""``CronSpan``: recurring activity windows for a policy's ``time`` field.

``CronSpan('<cron>', '<duration>', '<tz>')`` is true when an instant falls inside any window
``[fire, fire + duration)``, where the fires come from a strict 5-field cron expression
(``minute hour day-of-month month day-of-week``, numbers, ranges ``a-b``, lists and ``*`` only;
day-of-week 0-6 with 0 = Sunday; day-of-month and day-of-week are OR'd when both are
restricted) interpreted as wall-clock time in an IANA zone. The duration is whole ``d``/``h``/``m``
units, more than zero and at most seven days (PROTOCOL.md §8.2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

MAX_DURATION = timedelta(days=7)
_DURATION = re.compile(r"(?:(\d{1,4})d)?(?:(\d{1,5})h)?(?:(\d{1,6})m)?")
_ZONE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+)*")
# (name, lowest, highest) of the five cron fields, in order.
_FIELDS = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day-of-month", 1, 31),
    ("month", 1, 12),
    ("day-of-week", 0, 6),
)


class InvalidCronSpan(ValueError):
    """A ``CronSpan`` argument is malformed; the message says which and why."""


def _parse_field(text: str, name: str, low: int, high: int) -> frozenset[int] | None:
    """One cron field → the set of allowed values, or ``None`` for ``*``."""
    if text == "*":
        return None
    values: set[int] = set()
    for item in text.split(","):
        match = re.fullmatch(r"(\d{1,2})(?:-(\d{1,2}))?", item)
        if not match:
            raise InvalidCronSpan(f"cron {name} field {text!r}: only numbers, ranges and lists")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if not low <= first <= last <= high:
            raise InvalidCronSpan(f"cron {name} field {text!r}: values must be {low}-{high}")
        values.update(range(first, last + 1))
    return frozenset(values)


def parse_duration(text: str) -> timedelta:
    """``'1d12h'`` → ``timedelta``; more than zero and at most seven days."""
    match = _DURATION.fullmatch(text)
    if not text or not match:
        raise InvalidCronSpan(f"duration {text!r}: expected whole d/h/m units such as '8h'")
    days, hours, minutes = (int(g) if g else 0 for g in match.groups())
    duration = timedelta(days=days, hours=hours, minutes=minutes)
    if not timedelta(0) < duration <= MAX_DURATION:
        raise InvalidCronSpan(f"duration {text!r}: must be more than zero and at most 7d")
    return duration


def load_zone(name: str) -> ZoneInfo:
    """An IANA zone by name; anything that is not a known zone name is refused."""
    if not _ZONE_NAME.fullmatch(name) or len(name) > 64:
        raise InvalidCronSpan(f"time zone {name!r}: not an IANA time zone name")
    try:
        return ZoneInfo(name)
    except Exception as ex:  # ZoneInfoNotFoundError, ValueError, OSError for odd paths
        raise InvalidCronSpan(f"time zone {name!r}: not an IANA time zone name") from ex


@dataclass(frozen=True)
class CronSpan:
    """A compiled ``CronSpan``: fire schedule, window length and zone."""

    minutes: frozenset[int] | None
    hours: frozenset[int] | None
    days_of_month: frozenset[int] | None
    months: frozenset[int] | None
    days_of_week: frozenset[int] | None
    duration: timedelta
    zone: ZoneInfo

    @classmethod
    def parse(cls, cron: str, duration: str, zone: str) -> CronSpan:
        """Validate and compile the three arguments; raises :class:`InvalidCronSpan`."""
        parts = cron.split(" ")
        if len(parts) != 5:
            raise InvalidCronSpan(f"cron {cron!r}: expected 5 fields separated by single spaces")
        minutes, hours, days, months, weekdays = (
            _parse_field(p, *spec) for p, spec in zip(parts, _FIELDS, strict=True)
        )
        return cls(
            minutes, hours, days, months, weekdays, parse_duration(duration), load_zone(zone)
        )

    def _day_matches(self, day: date) -> bool:
        if self.months is not None and day.month not in self.months:
            return False
        dom_ok = self.days_of_month is None or day.day in self.days_of_month
        dow_ok = self.days_of_week is None or (day.weekday() + 1) % 7 in self.days_of_week
        if self.days_of_month is not None and self.days_of_week is not None:
            return dom_ok or dow_ok
        return dom_ok and dow_ok

    def _fires_on(self, day: date) -> list[datetime]:
        """The fire instants (UTC) of one local day; wall times skipped by DST never fire."""
        fires = []
        for hour in sorted(self.hours) if self.hours is not None else range(24):
            for minute in sorted(self.minutes) if self.minutes is not None else range(60):
                local = datetime.combine(day, time(hour, minute), tzinfo=self.zone)
                instant = local.astimezone(UTC)
                if instant.astimezone(self.zone).replace(tzinfo=None) == local.replace(tzinfo=None):
                    fires.append(instant)
        return fires

    def contains(self, instant: datetime) -> bool:
        """Whether ``instant`` (timezone-aware) lies inside any window."""
        earliest = instant - self.duration
        day = earliest.astimezone(self.zone).date() - timedelta(days=1)
        last = instant.astimezone(self.zone).date()
        while day <= last:
            if self._day_matches(day):
                for fire in self._fires_on(day):
                    if earliest < fire <= instant:
                        return True
            day += timedelta(days=1)
        return False
