"""The one small interface every extractor implements."""

from __future__ import annotations

from abc import ABC, abstractmethod

from ._models import Candidate, Turn

__all__ = ["Extractor"]


class Extractor(ABC):
    """Reads one turn, proposes candidates. Proposes only: nothing it returns is authoritative.

    Implementations must be safe to call with untrusted text and must return candidates whose
    span is an exact substring of ``turn.text``.
    """

    name: str = "extractor"

    @abstractmethod
    def extract(self, turn: Turn) -> list[Candidate]:
        """Return the candidates found in ``turn`` (an empty list when there are none)."""
        raise NotImplementedError

    def unread(self, turn: Turn) -> str | None:
        """Why this extractor cannot read ``turn`` (say, its language), or ``None`` when it can.

        An empty answer must not pass for "nothing was said": ``observe`` reports this reason
        with the result and in the log."""
        return None
