"""Refusing clock times: "remind me Friday at 9" is a job for a scheduler, not an event trigger.

A standing intent fires when something comes up in conversation. An entry made only of
time words (weekdays, months, "tomorrow", "9am", "at 9:30", dates) would either never fire
or fire on any mention of Friday, so it is refused with a pointer to a scheduler.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from ..core.errors import InvalidInput

__all__ = ["SCHEDULER_HINT", "check_not_time_only", "mentions_clock_time"]

SCHEDULER_HINT = (
    "standing intents fire when an event comes up in conversation, not at a clock time; "
    "use a scheduler for this (cron, `at`, a calendar reminder or your agent's scheduled tasks)"
)

_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun"
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_RELATIVE = (
    "today tomorrow tonight yesterday morning afternoon evening night noon midnight midday week weekend weekday "
    "month year day days hour hours minute minutes min mins second seconds fortnight eod eow"
)
_FILLER = "at on in by next every each this the a an of from until till before after o'clock oclock am pm utc gmt around about"
_TIME_WORDS = frozenset(f"{_WEEKDAYS} {_MONTHS} {_RELATIVE} {_FILLER}".split())
_CLOCK_WORDS = frozenset(f"{_WEEKDAYS} {_MONTHS} today tomorrow tonight noon midnight".split())
_TIME_TOKEN = re.compile(
    r"^(?:\d{1,2}(?::\d{2})?(?:am|pm|h)?|\d{4}-\d{2}-\d{2}(?:t[\d:]+z?)?|\d{1,2}(?:st|nd|rd|th)|\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?)$"
)
_WORD = re.compile(r"[\w:/.'-]+")


def _words(text: str) -> list[str]:
    return [w.strip(".,;!?'\"").lower() for w in _WORD.findall(text)]


def _is_time_word(word: str) -> bool:
    return not word or word in _TIME_WORDS or bool(_TIME_TOKEN.match(word))


def check_not_time_only(entries: Iterable[Iterable[str]]) -> None:
    """Raise :class:`InvalidInput` if any trigger entry consists only of time words."""
    for i, entry in enumerate(entries):
        words = [w for term in entry for w in _words(term)]
        words = [w for w in words if w]
        if words and all(_is_time_word(w) for w in words):
            raise InvalidInput(f"{' '.join(entry)!r} is a clock time: {SCHEDULER_HINT}", where=f"when[{i}]")


def mentions_clock_time(text: str) -> bool:
    """Does free text name a weekday, month, day or time of day ("Friday at 9", "9am")?"""
    words = _words(text)
    if any(w in _CLOCK_WORDS for w in words):
        return True
    return any(prev in ("at", "by") and _TIME_TOKEN.match(w) for prev, w in itertools.pairwise(words)) or any(
        re.match(r"^\d{1,2}(?::\d{2})?(?:am|pm)$", w) for w in words
    )
