"""Clocks. Everything that depends on time takes a :class:`Clock`, so tests move time
instead of sleeping, and every timestamp is RFC 3339 UTC with microseconds."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Protocol

from .errors import InvalidInput

__all__ = ["Clock", "ManualClock", "SystemClock", "format_time", "parse_duration", "parse_time"]


class Clock(Protocol):
    """Anything with ``now()`` returning an aware UTC datetime."""

    def now(self) -> datetime: ...


class SystemClock:
    """The wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock tests set and advance by hand."""

    def __init__(self, start: datetime | str = "2026-01-05T09:00:00Z") -> None:
        self._now = parse_time(start) if isinstance(start, str) else start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta | str) -> datetime:
        self._now += parse_duration(delta) if isinstance(delta, str) else delta
        return self._now

    def set(self, when: datetime | str) -> None:
        self._now = parse_time(when) if isinstance(when, str) else when.astimezone(UTC)


def format_time(when: datetime) -> str:
    """RFC 3339 in UTC with microseconds: ``2026-01-05T09:00:00.000000Z``."""
    if when.tzinfo is None:
        raise InvalidInput("naive datetime; intently stores aware UTC times only", where="time")
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str, *, where: str = "time") -> datetime:
    """Parse RFC 3339 / ISO 8601; a date alone means midnight UTC; naive times are UTC."""
    raw = text.strip()
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        # Say which forms are read: "tomorrow" or "Friday" is what a person types first.
        raise InvalidInput(
            f"not an RFC 3339 time: {text!r} (give a date such as 2026-03-31, or a time such as 2026-03-31T17:00:00Z)",
            where=where,
        ) from exc
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


# "ms" before "m": the first alternative that matches wins, and "m" then "s" refused "500ms".
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|w|d|h|m|s)")


def parse_duration(text: str, *, where: str = "duration") -> timedelta:
    """Parse ``90d``, ``24h``, ``1h30m``, ``45s``, ``2w``; a bare number means seconds."""
    raw = text.strip().lower().replace(" ", "")
    if re.fullmatch(r"\d+(\.\d+)?", raw):
        return timedelta(seconds=float(raw))
    pos = 0
    total = timedelta()
    units = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes", "s": "seconds", "ms": "milliseconds"}
    for match in _DURATION.finditer(raw):
        if match.start() != pos:
            break
        total += timedelta(**{units[match.group(2)]: float(match.group(1))})
        pos = match.end()
    if pos != len(raw) or not raw:
        raise InvalidInput(f"not a duration: {text!r} (use e.g. 24h, 90d, 1h30m)", where=where)
    return total
