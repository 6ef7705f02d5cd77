"""What extraction reads and proposes: a conversational :class:`Turn` and its :class:`Candidate` s.

Both are pydantic models because both cross a trust boundary: turns come from users, hooks and
servers; candidates may come from an LLM reply. Validation happens here, once.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["Candidate", "CandidateType", "Turn"]


class CandidateType(StrEnum):
    """The six RFC-0013 intent types, plus DECISION (a decision made: a record, not an intent)."""

    COMMITMENT = "COMMITMENT"
    GOAL = "GOAL"
    OPEN_QUESTION = "OPEN_QUESTION"
    DECISION_IN_PROGRESS = "DECISION_IN_PROGRESS"
    RISK = "RISK"
    FOLLOW_UP = "FOLLOW_UP"
    DECISION = "DECISION"

    @property
    def coarse(self) -> CandidateType:
        """The type the labelled data and its evaluation count this as: the finer RFC types
        DECISION_IN_PROGRESS and FOLLOW_UP are an open question and a commitment there."""
        if self is CandidateType.DECISION_IN_PROGRESS:
            return CandidateType.OPEN_QUESTION
        if self is CandidateType.FOLLOW_UP:
            return CandidateType.COMMITMENT
        return self


class Turn(BaseModel):
    """One conversational turn. ``time`` anchors relative dates ("by Friday")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    speaker: str | None = Field(default=None, description="Who spoke; owner of first-person candidates.")
    text: str = Field(description="What was said, verbatim.")
    time: datetime = Field(description="When it was said (aware; naive means UTC).")
    channel: str = Field(default="", description="Where: chat, meeting_minutes, a thread id...")
    message_id: str | None = Field(default=None, description="The source's own message id, if any.")

    @field_validator("time")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        from datetime import UTC

        # The offset is kept: "tomorrow" said at 23:30 in California is the speaker's tomorrow,
        # not the day after UTC's (due dates resolve in the turn's own zone, then are stored in UTC).
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value


class Candidate(BaseModel):
    """One proposed intent (or decision) found in a turn. Never authoritative: it waits for review."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: CandidateType
    span: str = Field(min_length=1, description="Exact substring of the turn's text carrying the candidate.")
    start: int = Field(ge=0, description="Offset of span in the turn's text.")
    end: int = Field(ge=1, description="End offset (exclusive) of span in the turn's text.")
    owner: str | None = Field(default=None, description="Who is responsible, when the text states it.")
    due: datetime | None = Field(default=None, description="Due date resolved against the turn's time.")
    due_text: str | None = Field(default=None, description="The words that stated the due date.")
    confidence: float = Field(ge=0.0, le=1.0, description="How sure the extractor is (for ordering only).")
    rule: str = Field(default="", description="Which rule or extractor produced it (for explanations).")

    @model_validator(mode="after")
    def _offsets(self) -> Candidate:
        if self.end <= self.start or self.end - self.start != len(self.span):
            raise ValueError(f"offsets {self.start}..{self.end} do not match the span length {len(self.span)}")
        return self

    def check_against(self, text: str) -> None:
        """Raise ``ValueError`` unless ``span`` sits at ``start..end`` in ``text``."""
        if text[self.start : self.end] != self.span:
            raise ValueError(f"span {self.span!r} is not text[{self.start}:{self.end}]")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
