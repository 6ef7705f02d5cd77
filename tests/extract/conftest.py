"""Helpers for extraction tests: a turn builder pinned to a known Wednesday."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from intently.extract import Candidate, RuleExtractor, Turn

# Wednesday 2026-03-04 10:00 UTC: "by Friday" is 2026-03-06, "next week" ends 2026-03-13.
WEDNESDAY = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def rules() -> RuleExtractor:
    return RuleExtractor()


@pytest.fixture
def extract(rules: RuleExtractor) -> Callable[..., list[Candidate]]:
    def run(text: str, speaker: str | None = "bob", when: datetime = WEDNESDAY) -> list[Candidate]:
        return rules.extract(Turn(speaker=speaker, text=text, time=when, channel="test"))

    return run
