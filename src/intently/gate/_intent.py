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

from ._values import EMAIL, IBAN, URL, atoms_of, words
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
    # Who the user said to leave out ("don't send anything to Bob", "everyone except eve@x.com"):
    # addresses as normalised atoms, people by their names in lower case.
    excluded_values: frozenset[str] = field(default_factory=frozenset)
    excluded_names: frozenset[str] = field(default_factory=frozenset)

    def to_json(self) -> dict[str, object]:
        return {
            "intents": sorted(self.intents),
            "negated": sorted(self.negated),
            "delegated": self.delegated,
            "objects": sorted(self.objects),
            "unplaced": list(self.unplaced),
            "proposed": sorted(self.proposed),
            "plural": self.plural,
            "excluded": sorted(self.excluded_values | self.excluded_names),
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
    excluded_values, excluded_names = _excluded(request, vocabulary)
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
        excluded_values=excluded_values,
        excluded_names=excluded_names,
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


# A token of the request: an address or link whole, else a word (its case kept, for names).
_TOKEN = re.compile(rf"{EMAIL.pattern}|{URL.pattern}|[A-Za-z0-9]+(?:['’][a-z]+)?")
# Where an exclusion's reach ends: a sentence or clause mark, or a comma before a lower-case
# word ("don't email Bob, email Alice"), but not a comma in a list of names ("except Bob, Carol").
_SCOPE_END = re.compile(r"[.;:!?()]|,\s*[a-z]")
# "anyone outside Acme": what follows says who may be involved, not who is left out.
_SCOPE_CLOSERS = frozenset({"outside", "beyond"})
# Words that open a sentence in capitals without naming anyone (a scope never opens a clause, so
# a capitalised first word counts only as a mention outside one).
_NOT_NAMES = frozenset({"i", "please", "also", "the", "a", "an", "my", "our", "your", "this", "that"})


def _excluded(request: str, vocab: Vocabulary) -> tuple[frozenset[str], frozenset[str]]:
    """The addresses and names the request rules out, minus any it also names outside such a scope.

    A scope opens after a negated action ("don't send ... to Bob", "no need to cc Bob"), after
    an exclusion word ("except", "other than"), or at a negator right before a name or address
    ("to Alice, not Bob"); it runs to the end of the clause. "I don't know Bob's address" rules
    nobody out: "know" is no action.
    """
    in_scope: set[tuple[str, str]] = set()
    outside: set[tuple[str, str]] = set()
    for raw in _CLAUSE_SPLIT.split(request):
        if not raw or not raw.strip():
            continue
        tokens = list(_TOKEN.finditer(raw))
        stems = stem_all([t.group(0).lower() for t in tokens])
        open_at: int | None = None
        i = 0
        while i < len(tokens):
            if open_at is not None and (
                (i > open_at and _ends_scope(raw, tokens, i)) or tokens[i].group(0).lower() in _SCOPE_CLOSERS
            ):
                open_at = None
            opener = _scope_opener(raw, tokens, stems, i, vocab)
            if opener:
                open_at = i + opener
                i += opener
                continue
            mention = _mention(tokens[i].group(0))
            if mention is not None:
                (in_scope if open_at is not None else outside).add(mention)
            i += 1
    ruled_out = in_scope - outside
    return (
        frozenset(v for kind, v in ruled_out if kind == "value"),
        frozenset(v for kind, v in ruled_out if kind == "name"),
    )


def _ends_scope(raw: str, tokens: list[re.Match[str]], i: int) -> bool:
    """Whether the text between token ``i - 1`` and token ``i`` closes a scope."""
    return _SCOPE_END.search(raw, tokens[i - 1].end(), tokens[i].start() + 1) is not None


def _scope_opener(raw: str, tokens: list[re.Match[str]], stems: tuple[str, ...], i: int, vocab: Vocabulary) -> int:
    """How many tokens at ``i`` open an exclusion scope (0: none)."""
    for phrase in vocab.exclusions:
        if tuple(stems[i : i + len(phrase)]) == phrase:
            return len(phrase)
    neg = _negator_at(stems, i, vocab)
    if not neg or (i + neg < len(stems) and stems[i + neg] in vocab.cancellers):
        return 0
    after = i + neg
    nxt = after + 1 if after < len(stems) and stems[after] in ("to", "for", "cc", "bcc") else after
    if nxt < len(tokens) and _mention(tokens[nxt].group(0)) is not None:
        return neg  # "not Bob", "not to eve@x.com"
    for j in range(after, min(after + 4, len(stems))):  # a negated action, as the kinds read it
        if j > after and _ends_scope(raw, tokens, j):  # "never mind, send it to Bob"
            break
        hits = [n for _, n in vocab.kinds_at(stems, j) if not vocab.is_noun_use(stems, j, n)]
        if hits:
            return j + max(hits) - i
    return 0


def _mention(token: str) -> tuple[str, str] | None:
    """("value", atom) for an address, link or IBAN; ("name", lower case) for a capitalised word."""
    if EMAIL.fullmatch(token) or URL.fullmatch(token) or IBAN.fullmatch(token.upper()):
        found = atoms_of(token)
        return ("value", next(iter(sorted(found)))) if found else None
    name = re.sub(r"['’]s$", "", token).lower()  # "Bob's manager": Bob
    if token[:1].isupper() and token[1:2].islower() and name not in _NOT_NAMES:
        return ("name", name)
    return None
