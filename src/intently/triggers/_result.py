"""What a match returns: the hits, which are shown (and charged), the rendered block, why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.strings import quoted_line

__all__ = ["Hit", "MatchResult", "render_block", "render_line"]

BLOCK_TAG = "standing_intents"


def _quote(text: str) -> str:
    # Stored text is data: it must not be able to close or open the block's tags, nor carry
    # ANSI escapes, zero-width or bidi characters into the prompt (:func:`quoted_line`).
    return quoted_line(text)


def render_line(created_at: str, event: str, reminder: str) -> str:
    day = created_at[:10]
    about = f", about: {_quote(event)}" if event else ""
    return f"Standing intent (created {day}{about}): {_quote(reminder)}"


def render_block(lines: list[str]) -> str:
    if not lines:
        return ""
    return f"<{BLOCK_TAG}>\n" + "\n".join(lines) + f"\n</{BLOCK_TAG}>"


@dataclass(frozen=True)
class Hit:
    """One intent a turn matched, with the entry and forms that matched and what became of it."""

    id: str
    reminder: str
    event: str
    entry: int
    entry_terms: tuple[str, ...]
    matched: tuple[str, ...]
    words: int
    rarity: float
    created_at: str
    state: str
    text: str
    eligible: bool
    shown: bool = False
    fired: bool = False
    reason: str = ""

    @property
    def why(self) -> str:
        """A sentence a person can check: which entry, which forms, what happened."""
        terms = " + ".join(self.entry_terms)
        forms = ", ".join(self.matched)
        verdict = "fires" if self.fired else ("would fire" if self.shown else f"not shown: {self.reason}")
        return f"entry {self.entry + 1} [{terms}] matched as [{forms}]; {verdict}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "reminder": self.reminder,
            "event": self.event,
            "text": self.text,
            "entry": self.entry,
            "entry_terms": list(self.entry_terms),
            "matched": list(self.matched),
            "specificity": {"words": self.words, "rarity": round(self.rarity, 4)},
            "created_at": self.created_at,
            "intent_state": self.state,
            "eligible": self.eligible,
            "shown": self.shown,
            "fired": self.fired,
            "reason": self.reason,
            "why": self.why,
        }


@dataclass(frozen=True)
class MatchResult:
    """``hits``: every matching intent, ranked; ``shown``: those in ``block`` (charged a fire if fired)."""

    hits: tuple[Hit, ...] = ()
    fired: bool = False
    problems: tuple[str, ...] = field(default=())

    @property
    def shown(self) -> list[Hit]:
        return [h for h in self.hits if h.shown]

    @property
    def omitted(self) -> int:
        return sum(1 for h in self.hits if h.eligible and not h.shown)

    @property
    def block(self) -> str:
        return render_block([h.text for h in self.shown])

    @property
    def text(self) -> str:
        return self.block

    def to_json(self) -> dict[str, Any]:
        return {
            "fired": self.fired,
            "block": self.block,
            "shown": [h.to_json() for h in self.shown],
            "omitted": self.omitted,
            "hits": [h.to_json() for h in self.hits],
            "problems": list(self.problems),
        }
