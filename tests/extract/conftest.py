"""Helpers for extraction tests: a turn builder pinned to a known Wednesday."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from intently.extract import Candidate, CandidateType, RuleExtractor, Turn
from intently.extract._model import SentenceModel

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


def model_rating_all(bias: float) -> SentenceModel:
    """With a positive ``bias``, a model that rates every sentence as every type (only the hard-case
    vetoes stand in its way); with a negative one, a model that rates nothing."""
    kinds = (CandidateType.COMMITMENT, CandidateType.OPEN_QUESTION, CandidateType.RISK, CandidateType.DECISION)
    return SentenceModel(
        threshold=0.5, bias=dict.fromkeys(kinds, bias), weights={k: {} for k in kinds}, trained_on={}, settings={}
    )
