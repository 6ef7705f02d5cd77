"""Two requirements that contradict each other ("use X" and "never use X").

An injected block that holds both gives the agent no rule at all, so selection keeps one
and reports the other; ``intently req validate`` warns about every such pair of files.

The test is the scan's negation-aware comparison (:func:`._scan._reconcile`): opposite
polarity and a similarity at or above ``RELATED`` (embedding cosine; BM25-token Jaccard
without an embedder). Selection is stricter than reconciliation, because here a false
alarm hides a rule from the agent: the two statements must also be about the same thing,
that is, their content words (stemmed, with stopwords and polarity words removed) overlap
with a Jaccard of at least ``SUBJECT_OVERLAP``. On the dev data the similarity test alone
flags non-contradicting pairs such as "run commands with ./bin/brew, not a system brew"
beside "compose brew commands by shelling out via HOMEBREW_BREW_FILE" (cosine 0.77, one
shared word); with the subject test no gold pair is flagged.

Which one stays: a rule a person edited (``user_edited``) over one a scan wrote, then the
more recently updated, then the more recently created, then the larger id (stable).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..embed import Embedder, cosine
from ._bm25 import tokenize
from ._load import RequirementFileWarning
from ._model import Requirement

__all__ = [
    "JACCARD_RELATED",
    "RELATED",
    "SUBJECT_OVERLAP",
    "Conflict",
    "RequirementConflictWarning",
    "contradicts",
    "find_conflicts",
    "resolve_conflicts",
]

#: Same subject: a contradiction if the polarity differs (embedding cosine; BM25-token
#: Jaccard without an embedder). A scan's reconciliation uses them too; they live here so
#: every command that loads the rules (and so this module) does not import the scan and
#: what it brings (sources, extractors, the LLM client): 50 ms of each command's start-up.
RELATED = 0.7
JACCARD_RELATED = 0.4
_NEG = re.compile(r"\b(never|not|no|don't|do not|avoid|must not|mustn't|cannot|can't|without)\b", re.IGNORECASE)
SUBJECT_OVERLAP = 0.5
_POLARITY_WORDS = frozenset(
    tokenize("never not no don't do does avoid must mustn't cannot can't without always only should shall")
) | {"never", "not", "no", "don", "t", "do", "avoid", "must", "always", "only", "should", "without"}


class RequirementConflictWarning(RequirementFileWarning):
    """Two active requirement files contradict each other; both still load."""


@dataclass(frozen=True)
class Conflict:
    """``dropped`` contradicts ``kept``; ``why`` says which rule made ``kept`` win."""

    kept: str
    dropped: str
    why: str  # "user-edited" | "newer" | "tie: same time, larger id"
    similarity: float
    kept_file: str = ""
    dropped_file: str = ""

    def message(self) -> str:
        return (
            f"{self.dropped_file or self.dropped} conflicts with {self.kept_file or self.kept} "
            f"(similarity {self.similarity:.2f}, opposite polarity); selection keeps {self.kept} ({self.why})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kept": self.kept,
            "dropped": self.dropped,
            "why": self.why,
            "similarity": round(self.similarity, 4),
            "kept_file": self.kept_file,
            "dropped_file": self.dropped_file,
        }


def _negative(text: str) -> bool:
    return bool(_NEG.search(text))


def _subject(text: str) -> set[str]:
    return {t for t in tokenize(text) if t not in _POLARITY_WORDS}


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _preference(req: Requirement) -> tuple[bool, Any, Any, str]:
    return (req.meta.user_edited, req.meta.updated, req.meta.created, req.id)


def _why(winner: Requirement, loser: Requirement) -> str:
    """Which preference decided: a user edit, a later time, or (same second) only the id order."""
    if winner.meta.user_edited and not loser.meta.user_edited:
        return "user-edited"
    if (winner.meta.updated, winner.meta.created) != (loser.meta.updated, loser.meta.created):
        return "newer"
    return "tie: same time, larger id"


def contradicts(a: str, b: str, *, embedder: Embedder | None = None) -> float | None:
    """The similarity of two statements that contradict each other, or ``None``."""
    return _Checker([a, b], embedder).check(0, 1)


class _Checker:
    """Pairwise test over a fixed list of statements; embeds only pairs that pass the cheap tests."""

    def __init__(
        self, statements: Sequence[str], embedder: Embedder | None, tokens: Sequence[Sequence[str]] | None = None
    ) -> None:
        self.statements = list(statements)
        self.embedder = embedder
        self.negative = [_negative(s) for s in self.statements]
        if tokens is None:
            self.subjects = [_subject(s) for s in self.statements]
        else:  # ``tokenize`` of each statement, kept by the caller
            self.subjects = [{t for t in words if t not in _POLARITY_WORDS} for words in tokens]
        self.vectors: dict[int, Any] = {}

    def _vector(self, i: int) -> Any:
        if i not in self.vectors:
            assert self.embedder is not None
            self.vectors[i] = self.embedder.embed_one(self.statements[i])
        return self.vectors[i]

    def check(self, i: int, j: int) -> float | None:
        if self.negative[i] == self.negative[j]:
            return None
        overlap = _jaccard(self.subjects[i], self.subjects[j])
        if overlap < SUBJECT_OVERLAP:
            return None
        if self.embedder is None:
            return overlap if overlap >= JACCARD_RELATED else None
        score = cosine(self._vector(i), self._vector(j))
        return score if score >= RELATED else None


def resolve_conflicts(
    reqs: Sequence[Requirement],
    *,
    embedder: Embedder | None = None,
    tokens: Sequence[Sequence[str]] | None = None,
) -> tuple[list[Requirement], list[Conflict]]:
    """Keep, of every contradicting pair, the preferred rule: ``(kept, conflicts)``.

    Rules are visited from the most preferred down; one that contradicts a rule already kept
    is dropped, so a chain A-B-C never drops a rule because of one that was itself dropped.
    ``kept`` is in the input order. ``tokens``: ``tokenize`` of each statement, when the
    caller kept them (see :mod:`._tokencache`).
    """
    order = sorted(range(len(reqs)), key=lambda i: _preference(reqs[i]), reverse=True)
    checker = _Checker([r.statement for r in reqs], embedder, tokens)
    kept: list[int] = []
    # Kept rules by polarity, each in the order kept: only a rule of the other polarity can
    # contradict (``check`` says no to any other), so a rule is checked against those alone
    # and the first hit is the one the whole list gave. At 2,000 rules that halves 240,000
    # checks that each context block made.
    by_polarity: dict[bool, list[int]] = {True: [], False: []}
    conflicts: list[Conflict] = []
    for i in order:
        opposite = by_polarity[not checker.negative[i]]
        hit = next(((k, s) for k in opposite if (s := checker.check(k, i)) is not None), None)
        if hit is None:
            kept.append(i)
            by_polarity[checker.negative[i]].append(i)
            continue
        k, score = hit
        winner, loser = reqs[k], reqs[i]
        conflicts.append(Conflict(winner.id, loser.id, _why(winner, loser), score))
    keep = set(kept)
    return [r for i, r in enumerate(reqs) if i in keep], conflicts


def find_conflicts(reqs: Sequence[Requirement], *, embedder: Embedder | None = None) -> list[Conflict]:
    """Every contradicting pair among ``reqs`` (for ``validate``), each named by both files."""
    checker = _Checker([r.statement for r in reqs], embedder)
    found: list[Conflict] = []
    for i, j in itertools.combinations(range(len(reqs)), 2):
        score = checker.check(i, j)
        if score is None:
            continue
        a, b = reqs[i], reqs[j]
        winner, loser = (a, b) if _preference(a) >= _preference(b) else (b, a)
        found.append(Conflict(winner.id, loser.id, _why(winner, loser), score))
    return found
