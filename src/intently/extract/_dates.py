"""Due dates stated in a turn, resolved against the turn's own time.

"by Friday" said on Wednesday 2026-03-04 means 2026-03-06 (end of that day in the speaker's zone,
the turn time's offset, stored in UTC); "next week" means the end of next week; "EOD" the end of
the turn's day. An expression that names a time
without a calendar date ("at the next meeting") keeps its words and gets no date.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

__all__ = ["DueDate", "find_due"]

_WEEKDAYS = {
    name: i for i, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
}
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7}
_MONTH_UNITS = ("month", "months")
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "a": 1, "an": 1, "a couple of": 2}

_DUE = re.compile(
    r"\b(?P<prep>by|before|until|till|no later than|due|on|for)?\s*(?:the\s+)?(?:"
    r"(?P<iso>\d{4}-\d{2}-\d{2})"
    r"|(?P<eod>eod|cob|end of (?:the )?(?:day|today))"
    r"|(?P<eow>eow|end of (?:the |this )?week)"
    r"|(?P<eom>eom|end of (?:the |this )?month)"
    r"|(?P<eoy>end of (?:the |this )?year)"
    r"|(?P<eoq>eoq|end of (?:the |this )?quarter|this quarter)"
    r"|(?P<nextq>next quarter)"
    r"|(?P<quarter>(?:(?:the )?end of )?q[1-4](?:,? \d{4})?)"
    r"|(?P<tomorrow>tomorrow)"
    r"|(?P<today>today|tonight)"
    r"|(?P<nextunit>next (?:week|month))"
    r"|(?P<thisweek>this week)"
    r"|(?P<wd>(?:next |this )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))"
    rf"|(?P<md>(?:{_MONTH_RE})\.? \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?)"
    rf"|(?P<dm>\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTH_RE})(?:,? \d{{4}})?)"
    r"|(?P<inn>in (?:\d+|one|two|three|four|five|six|a|an|a couple of) (?:days?|weeks?|months?))"
    r"|(?P<vague>(?:(?:the|my|our|your) )?next (?:meeting|call|plenary|release|sprint|cycle|presentation|session"
    r"|iteration|milestone|update|sync|standup)|this cycle|after [a-z]+ation|in the future)"
    r")\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class DueDate:
    """The words stating a due date, where they are, and the date they resolve to (if any)."""

    text: str
    start: int
    end: int
    when: datetime | None


def _end_of(day: datetime) -> datetime:
    """The last second of ``day`` in its own zone (the speaker's), as a UTC time."""
    return datetime.combine(day.date(), time(23, 59, 59), tzinfo=day.tzinfo or UTC).astimezone(UTC)


def _resolve(match: re.Match[str], now: datetime) -> datetime | None:
    kind = match.lastgroup
    raw = match.group(kind or 0).lower()
    if kind == "iso":
        try:
            return _end_of(datetime.fromisoformat(raw).replace(tzinfo=now.tzinfo or UTC))
        except ValueError:
            return None
    if kind in ("eod", "today"):
        return _end_of(now)
    if kind == "tomorrow":
        return _end_of(now + timedelta(days=1))
    if kind in ("eow", "thisweek"):
        return _end_of(now + timedelta(days=4 - now.weekday() if now.weekday() <= 4 else 6 - now.weekday()))
    if kind == "eom":
        return _end_of(now.replace(day=calendar.monthrange(now.year, now.month)[1]))
    if kind == "eoy":
        return _end_of(now.replace(month=12, day=31))
    if kind in ("eoq", "nextq"):
        quarter = (now.month - 1) // 3 + (2 if kind == "nextq" else 1)
        return _end_of_quarter(now.year + (quarter - 1) // 4, (quarter - 1) % 4 + 1, now)
    if kind == "quarter":
        named = re.search(r"q([1-4])", raw)
        quarter = int(named.group(1)) if named else 4
        year_match = re.search(r"\d{4}", raw)
        year = int(year_match.group()) if year_match else now.year
        if year_match is None and _end_of_quarter(year, quarter, now) < now:
            year += 1  # "by Q1" said in November means next year's
        return _end_of_quarter(year, quarter, now)
    if kind == "nextunit":
        if raw.endswith("week"):
            return _end_of(now + timedelta(days=11 - now.weekday()))
        year, month = (now.year + 1, 1) if now.month == 12 else (now.year, now.month + 1)
        return _end_of(now.replace(year=year, month=month, day=calendar.monthrange(year, month)[1]))
    if kind == "wd":
        words = raw.split()
        ahead = (_WEEKDAYS[words[-1]] - now.weekday()) % 7 or 7
        if words[0] == "this" and ahead == 7:  # "this Friday" said on a Friday is today, not in a week
            ahead = 0
        if words[0] == "next" and ahead < 7 and now.weekday() < _WEEKDAYS[words[-1]]:
            ahead += 7
        return _end_of(now + timedelta(days=ahead))
    if kind in ("md", "dm"):
        return _month_day(raw, now)
    if kind == "inn":
        parts = raw.split()
        unit = parts[-1]
        count_word = " ".join(parts[1:-1])
        count = int(count_word) if count_word.isdigit() else _NUMBERS.get(count_word, 1)
        if unit in _MONTH_UNITS:
            return _end_of(_add_months(now, count))
        return _end_of(now + timedelta(days=count * _UNITS[unit]))
    return None


def _end_of_quarter(year: int, quarter: int, now: datetime) -> datetime:
    month = quarter * 3
    return _end_of(datetime(year, month, calendar.monthrange(year, month)[1], tzinfo=now.tzinfo or UTC))


def _add_months(day: datetime, count: int) -> datetime:
    """The same day ``count`` months on, or the month's last day when it is shorter ("in a month"
    said on 31 January is 28 or 29 February)."""
    month_index = day.month - 1 + count
    year, month = day.year + month_index // 12, month_index % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1]))


def _month_day(raw: str, now: datetime) -> datetime | None:
    month = next((num for name, num in sorted(_MONTHS.items(), key=lambda kv: -len(kv[0])) if name in raw), None)
    numbers = [int(n) for n in re.findall(r"\d+", raw)]
    if month is None or not numbers:
        return None
    day = next(n for n in numbers if n <= 31)
    year = next((n for n in numbers if n > 31), None)
    try:
        when = datetime(year or now.year, month, day, tzinfo=now.tzinfo or UTC)
    except ValueError:
        return None
    if year is None and when.date() < now.date():
        when = when.replace(year=now.year + 1)
    return _end_of(when)


def find_due(text: str, start: int, end: int, now: datetime) -> DueDate | None:
    """The first due-date expression in ``text[start:end]`` (offsets into ``text``)."""
    for match in _DUE.finditer(text, start, end):
        kind = match.lastgroup
        if kind is None:
            continue
        prep = (match.group("prep") or "").lower()
        if kind == "wd" and prep not in ("by", "before", "until", "till", "no later than", "due", "on", "for", ""):
            continue
        begin = match.start("prep") if prep else match.start(kind)
        return DueDate(text[begin : match.end(kind)], begin, match.end(kind), _resolve(match, now))
    return None
