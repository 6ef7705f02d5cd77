"""Deterministic intent resolution: a user's request becomes the set of authorised action kinds.

The resolver reads the request clause by clause, finds action phrases from the vocabulary
on word boundaries (after stemming), honours negation ("don't email the client", but not
"don't forget to invite Mark"), notices delegation ("do the actions in the email from X")
and records the clauses it could not place, so the vocabulary can grow as reviewed data.
A model may *propose* intents (see :class:`Proposer`); proposals are validated against the
vocabulary and never authorise anything on their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from ._values import words
from ._vocabulary import Vocabulary, stem_all

__all__ = ["Clause", "Proposer", "ResolvedRequest", "resolve"]

_CLAUSE_SPLIT = re.compile(
    r"(?<=[.!?;])\s+|\n+|,\s*(?:and|then|but)\s+|\s+(?:and then|then|but|and also)\s+|\s*\d+\.\s+"
)


@dataclass(frozen=True)
class Clause:
    text: str
    kinds: frozenset[str]
    negated: frozenset[str]
    objects: frozenset[str]
    placed: bool


@dataclass(frozen=True)
class ResolvedRequest:
    """What the user asked for, as data the policy can check calls against."""

    text: str
    intents: frozenset[str]
    negated: frozenset[str]
    delegated: bool
    objects: frozenset[str]
    clauses: tuple[Clause, ...]
    unplaced: tuple[str, ...]
    proposed: frozenset[str] = field(default_factory=frozenset)
    vocabulary_version: str = ""
    stems: frozenset[str] = field(default_factory=frozenset)
    plural: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "intents": sorted(self.intents),
            "negated": sorted(self.negated),
            "delegated": self.delegated,
            "objects": sorted(self.objects),
            "unplaced": list(self.unplaced),
            "proposed": sorted(self.proposed),
            "plural": self.plural,
            "vocabulary_version": self.vocabulary_version,
        }


class Proposer(Protocol):
    """An optional model that proposes action kinds for a request (never authoritative)."""

    def propose(self, request: str, kinds: dict[str, str]) -> list[str]:
        """Return kind names from ``kinds``; anything else is dropped by the resolver."""
        ...


def resolve(request: str, vocabulary: Vocabulary, proposer: Proposer | None = None) -> ResolvedRequest:
    clauses: list[Clause] = []
    for raw in _CLAUSE_SPLIT.split(request):
        if raw and raw.strip():
            clauses.append(_clause(raw.strip(), vocabulary))
    all_stems = stem_all(words(request))
    delegated = any(tuple(all_stems[i : i + len(p)]) == p for p in vocabulary.delegation for i in range(len(all_stems)))
    positive = frozenset(k for c in clauses for k in c.kinds)
    negated = frozenset(k for c in clauses for k in c.negated) - positive
    proposed: frozenset[str] = frozenset()
    if proposer is not None:
        try:
            raw_kinds = proposer.propose(request, dict(vocabulary.descriptions))
        except Exception:  # a failing model proposes nothing; the resolver still decides
            raw_kinds = []
        proposed = frozenset(k for k in raw_kinds if isinstance(k, str) and k in vocabulary.kinds) - positive - negated
    return ResolvedRequest(
        text=request,
        intents=positive,
        negated=negated,
        delegated=delegated,
        objects=frozenset(o for c in clauses for o in c.objects),
        clauses=tuple(clauses),
        unplaced=tuple(c.text for c in clauses if not c.placed),
        proposed=proposed,
        vocabulary_version=vocabulary.version,
        stems=frozenset(all_stems),
        plural=bool(set(all_stems) & vocabulary.quantifiers) or _counted_plural(request),
    )


def _clause(text: str, vocab: Vocabulary) -> Clause:
    tokens = words(text)
    stems = stem_all(tokens)
    kinds: set[str] = set()
    negated: set[str] = set()
    neg_until = -1
    i = 0
    while i < len(stems):
        neg = _negator_at(stems, i, vocab)
        if neg:
            after = i + neg
            if after < len(stems) and stems[after] in vocab.cancellers:
                i = after + 1
                continue
            neg_until = after + 3
            i = after
            continue
        hits = [(k, n) for k, n in vocab.kinds_at(stems, i) if not vocab.is_noun_use(stems, i, n)]
        if hits:
            target = negated if i <= neg_until else kinds
            for k, _ in hits:
                target.add(k)
            i += max(n for _, n in hits)
            continue
        i += 1
    placed = bool(kinds or negated) or any(
        tuple(stems[j : j + len(p)]) == p for p in vocab.read_verbs for j in range(len(stems))
    )
    return Clause(text, frozenset(kinds), frozenset(negated - kinds), frozenset(vocab.objects_in(stems)), placed)


_COUNTED = re.compile(r"(?<![\w.:/-])(\d{1,3})\s+(?:[A-Za-z]+\s+)?[A-Za-z]+s\b")


def _counted_plural(text: str) -> bool:
    """ "3 files", "12 emails": a count above one before a plural noun (not dates or list numbers)."""
    return any(int(m.group(1)) > 1 for m in _COUNTED.finditer(text))


def _negator_at(stems: tuple[str, ...], i: int, vocab: Vocabulary) -> int:
    for p in vocab.negators:
        if tuple(stems[i : i + len(p)]) == p:
            return len(p)
    return 0
