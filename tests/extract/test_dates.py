"""Due dates are resolved against the turn's own time, not the wall clock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from intently.extract import find_due

from .conftest import WEDNESDAY


def _end(day: str) -> datetime:
    return datetime.fromisoformat(f"{day}T23:59:59+00:00")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ship it by Friday", "2026-03-06"),
        ("report back next week", "2026-03-13"),
        ("due 2026-03-01", "2026-03-01"),
        ("need it by EOD", "2026-03-04"),
        ("send it tomorrow", "2026-03-05"),
        ("close it by end of month", "2026-03-31"),
        ("land it by the end of the week", "2026-03-06"),
        ("merge it on March 10", "2026-03-10"),
        ("release it on 2 Feb", "2027-02-02"),
        ("in 2 weeks", "2026-03-18"),
        ("next Monday", "2026-03-09"),
        ("by end of Q1", "2026-03-31"),
        ("by Q1", "2026-03-31"),
        ("by Q4 2027", "2027-12-31"),
        ("this quarter", "2026-03-31"),
        ("next quarter", "2026-06-30"),
        ("in two months", "2026-05-04"),
    ],
)
def test_resolves(text: str, expected: str) -> None:
    due = find_due(text, 0, len(text), WEDNESDAY)
    assert due is not None and due.when == _end(expected)
    assert text[due.start : due.end] == due.text


def test_vague_times_keep_their_words_without_a_date() -> None:
    text = "present it at the next meeting"
    due = find_due(text, 0, len(text), WEDNESDAY)
    assert due is not None and due.when is None and due.text == "next meeting"


def test_no_date_means_none() -> None:
    assert find_due("nothing scheduled here", 0, 22, WEDNESDAY) is None


def test_friday_said_on_a_friday_is_the_next_one() -> None:
    friday = datetime(2026, 3, 6, 9, tzinfo=UTC)
    due = find_due("by Friday", 0, 9, friday)
    assert due is not None and due.when == _end("2026-03-13")


@pytest.mark.parametrize(("text", "expected"), [("by this Friday", "2026-03-06"), ("next Friday", "2026-03-13")])
def test_this_friday_said_on_a_friday_is_today(text: str, expected: str) -> None:
    """ "This Friday" names the current week's Friday: said on that Friday, it is today."""
    friday = datetime(2026, 3, 6, 9, tzinfo=UTC)
    due = find_due(text, 0, len(text), friday)
    assert due is not None and due.when == _end(expected)


def test_a_quarter_already_over_is_next_years() -> None:
    november = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    due = find_due("by Q1", 0, 5, november)
    assert due is not None and due.when == _end("2027-03-31")


def test_a_month_ahead_ends_on_a_short_months_last_day() -> None:
    january = datetime(2026, 1, 31, 12, 0, tzinfo=UTC)
    due = find_due("in a month", 0, 10, january)
    assert due is not None and due.when == _end("2026-02-28")


@pytest.mark.parametrize(
    ("said_at", "text", "due"),
    [
        # 23:30 on Tuesday in California: tomorrow is Wednesday there, still Tuesday night nowhere else
        ("2026-12-01T23:30:00-08:00", "I'll send the invoice tomorrow.", "2026-12-03T07:59:59+00:00"),
        ("2026-12-04T20:00:00-05:00", "I'll send it tomorrow.", "2026-12-06T04:59:59+00:00"),  # Saturday in New York
        ("2026-12-02T01:00:00+09:00", "I will send it by EOD.", "2026-12-02T14:59:59+00:00"),  # Tokyo's end of day
        ("2026-12-01T10:00:00Z", "I will send it by Friday.", "2026-12-04T23:59:59+00:00"),
    ],
)
def test_due_dates_resolve_in_the_speakers_own_zone(said_at: str, text: str, due: str) -> None:
    from intently.extract import RuleExtractor, Turn

    (candidate,) = RuleExtractor().extract(Turn(speaker="ann", text=text, time=said_at))
    assert candidate.due is not None and candidate.due.isoformat() == due
