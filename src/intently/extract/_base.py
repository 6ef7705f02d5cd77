"""The one small interface every extractor implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Literal

from ..core.errors import IntentlyError
from ._models import Candidate, Turn

__all__ = ["ExtractionRejected", "Extractor"]


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

    def warm(self) -> None:
        """Pay now any one-off cost the first turns would (compiling word lists): called before
        a timed run starts its clock. Reading is the same with or without it; an extractor with
        nothing to prepare (the LLM's) keeps this default."""
        return None

    def unread(self, turn: Turn) -> str | None:
        """Why this extractor cannot read ``turn`` (say, its language), or ``None`` when it can.

        An empty answer must not pass for "nothing was said": ``observe`` reports this reason
        with the result and in the log."""
        return None


class ExtractionRejected(IntentlyError):
    """The extractor's answer could not be trusted (malformed, or the endpoint failed).

    Defined here, beside the interface, because ``observe`` and the scorer catch it whatever
    the extractor: importing it from the LLM extractor's module built that module's reply
    models in every process, a hook's included, that reads with the rules alone.

    ``kind`` is ``malformed`` or ``unavailable``; nothing is created from a rejected answer.
    """

    def __init__(self, message: str, *, kind: Literal["malformed", "unavailable"], extractor: str) -> None:
        self.kind = kind
        self.extractor = extractor
        super().__init__(f"{extractor}: {message}")
