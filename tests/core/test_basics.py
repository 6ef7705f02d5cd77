from __future__ import annotations

from datetime import timedelta

import pytest

from intently import Actor, ActorKind, InvalidInput, ManualClock
from intently.core.clock import format_time, parse_duration, parse_time
from intently.core.ids import new_id, uuid7


def test_uuid7_is_time_ordered_and_version_7() -> None:
    clock = ManualClock("2026-01-01T00:00:00Z")
    ids = []
    for _ in range(50):
        ids.append(uuid7(clock.now()))
        clock.advance(timedelta(milliseconds=1))
    assert all(u.version == 7 for u in ids)
    assert [str(u) for u in ids] == sorted(str(u) for u in ids)
    same_ms = [new_id() for _ in range(200)]
    assert same_ms == sorted(same_ms)
    assert len(set(same_ms)) == 200


def test_times_are_rfc3339_utc_with_microseconds() -> None:
    when = parse_time("2026-03-02T10:00:00+01:00")
    assert format_time(when) == "2026-03-02T09:00:00.000000Z"
    with pytest.raises(InvalidInput, match="time"):
        parse_time("next tuesday")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("24h", timedelta(hours=24)),
        ("90d", timedelta(days=90)),
        ("1h30m", timedelta(minutes=90)),
        ("45", timedelta(seconds=45)),
        ("1500ms", timedelta(milliseconds=1500)),  # "m" then a stray "s" refused the documented unit
        ("1m30s250ms", timedelta(minutes=1, seconds=30, milliseconds=250)),
    ],
)
def test_durations(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


def test_bad_duration_names_the_field() -> None:
    with pytest.raises(InvalidInput, match="cooldown"):
        parse_duration("soon", where="cooldown")


def test_actor_parsing() -> None:
    assert Actor.parse("alice") == Actor(ActorKind.USER, "alice")
    assert str(Actor.parse("agent:claude")) == "agent:claude"
    with pytest.raises(InvalidInput, match="unknown actor kind"):
        Actor.parse("robot:x")
