"""The matcher: normalisation, synonyms, the negation guard and the index, wired together.

It is pure (no store, no clock), so the evaluation and the benchmark measure exactly the
code the engine runs, and tests can check matching without a home.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ._index import CompiledIntent, EntryHit, MatchIndex, TurnGrams, turn_grams
from ._negation import NegationRule
from ._normalise import Term, TurnText, normalise_turn
from ._synonyms import SynonymTable, load_synonyms
from ._terms import compile_entry, compile_term_texts, phrase_variant

__all__ = ["Matcher"]


class Matcher:
    """Compiles intents into an index and matches turns against it."""

    def __init__(self, synonyms: SynonymTable | None = None) -> None:
        self.synonyms = synonyms if synonyms is not None else load_synonyms()
        self.negation = NegationRule()
        self.index = MatchIndex()

    @classmethod
    def for_home(cls, home_dir: Path | None) -> Matcher:
        return cls(load_synonyms(home_dir / "synonyms.yaml" if home_dir is not None else None))

    def compile(
        self,
        intent_id: str,
        entries: Sequence[Sequence[str]],
        *,
        exclusions: Sequence[str] = (),
        negation_guard: bool = True,
        created_at: str = "",
        channel: str | None = None,
        conversation: str | None = None,
        sender: str | None = None,
    ) -> CompiledIntent:
        compiled: list[tuple[Term, ...]] = []
        source: list[int] = []
        for number, entry in enumerate(entries):
            for variant in (compile_entry(entry, self.synonyms), phrase_variant(entry, self.synonyms)):
                if variant:
                    compiled.append(tuple(variant))
                    source.append(number)
        return CompiledIntent(
            id=intent_id,
            entries=tuple(compiled),
            source=tuple(source),
            exclusions=tuple(compile_term_texts(exclusions, self.synonyms)),
            negation_guard=negation_guard,
            created_at=created_at,
            channel=channel,
            conversation=conversation,
            sender=sender,
            fast=CompiledIntent.fast_keys(tuple(compiled)),
            words=tuple(sum(len(t.alternatives[0]) for t in entry) for entry in compiled),
        )

    def matchable(self, entry: Sequence[str]) -> bool:
        """Does the entry keep any word to match once normalised ("the of" keeps none)?"""
        return bool(self.compile("", [entry]).entries)

    def normalise(self, text: str) -> TurnText:
        return normalise_turn(text, self.negation, self.synonyms)

    def grams(self, text: str) -> TurnGrams:
        return turn_grams(self.normalise(text), self.index.lengths)

    def match(self, text: str) -> list[EntryHit]:
        """Entries the text satisfies, most specific first (more words, rarer terms, newer)."""
        hits = self.index.match(self.grams(text))
        return rank(hits)


def rank(hits: list[EntryHit]) -> list[EntryHit]:
    """More words first, then rarer terms, then newer (then the larger id, to be total)."""
    return sorted(hits, key=lambda h: (h.words, round(h.rarity, 9), h.intent.created_at, h.intent.id), reverse=True)
