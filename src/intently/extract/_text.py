"""Text normalisation with an offset map, and sentence / clause segmentation.

Transcripts arrive with typographic quotes, tokenised punctuation ("I ' m sure .") and
bullet markup. Rules are written against a normalised form; every normalised character
remembers its offset in the original, so a candidate's span is always an exact substring
of what was said.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property

__all__ = ["Clause", "Normalized", "Sentence", "normalize", "sentences"]

_CHAR_MAP = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2014": "-", "\u2013": "-"})
# "I'II": capital i for l, as OCR and some transcripts spell "I'll" (DailyDialog has it).
_CAPITAL_I_LL = re.compile(r"\b(I|[Ww]e|[Yy]ou|[Hh]e|[Ss]he|[Tt]hey|[Ii]t|[Tt]hat)'II\b")
# Spaces that tokenised transcripts put inside contractions ("I ' m", "don ' t") and before punctuation.
_CONTRACTION_GAP = re.compile(r"(?<=\w)(\s*)'(\s*)(?=(?:m|s|re|ve|ll|d|t)\b)", re.IGNORECASE)
_PUNCT_GAP = re.compile(r"(?<=\w)(\s+)(?=[.,!?;:](?:\s|$))")
# Chat drops the apostrophe of a first-person contraction at the start of a sentence ("Ill debug
# it", "Im on it"): restored, so "Ill" reads as "I'll". "Im" and "Ive" are no English words; "Ill"
# is, so it is read as "I'll" only before a verb the caller names ("Ill health" stays as it is).
_DROPPED_APOSTROPHE = re.compile(r"(?:^|(?<=[.!?:\"]\s)|(?<=\s\s)|(?<=\n))I(?=(?P<rest>ll|m|ve)\s+(?P<next>[a-z]+))")
_MAYBE_DROPPED = re.compile(r"I(?:ll|m|ve)\s")  # a cheap test before the pattern above
# Markdown emphasis in minutes ("**Action item:** Rich to ..."): markup, not words.
_EMPHASIS = re.compile(r"(\*\*|__)")
# A list marker opening a line ("- Myles will ...", "* Matteo to ...", "2. Rich to ..."): the
# sentence, and any name that opens it, starts after the marker.
_LIST_MARKER = re.compile(r"(?:[-*+\u2022]|\d{1,2}[.)])\s+")
# A single line break followed by indentation continues a hard-wrapped line of minutes
# ("need help to get 8.x caught up. Volunteer\n    to pair"), unless a list item starts there.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n(?![ \t]{2,}(?![-*+\u2022]\s)\S)\n*|(?<=[a-z]{2}[.!?])(?=[A-Z][a-z])")
_QUESTION_END = re.compile(r"\?\s*(?:\([^()]*\)\s*)?$")
# Chat often leaves the "?" off a question its word order already asks ("do we need #770 for epbs").
_INVERTED_OPENING = re.compile(
    r"(?:are|is|do|does|did|will|would|can|could|should|shall)\s+(?:we|you|they|it|there|i)\b", re.IGNORECASE
)
# A comma or colon between two digits is part of a number or a time ("1,200", "[10:32]").
_CLAUSE_BOUNDARY = re.compile(
    r"\s*(?:[;()]|[,:](?!\d)|(?<!\d)[,:])\s*|\s+-\s+|\s+(?=(?:but|so|because|although|though|whereas|while|since|which)\b)",
    re.IGNORECASE,
)
# "may take a while", "all the while": the noun, not the conjunction that opens a clause.
_NOUN_WHILE = re.compile(r"(?:^|\s)(?:a|the)$", re.IGNORECASE)


@dataclass(frozen=True)
class Normalized:
    """``text`` is the normalised form; ``src[i]`` is the original offset of ``text[i]``."""

    original: str
    text: str
    src: tuple[int, ...]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """Map a normalised ``[start, end)`` back to the original text."""
        return self.src[start], self.src[end - 1] + 1


def normalize(original: str, verbs: Collection[str] = ()) -> Normalized:
    """Map quotes and dashes one to one, drop the gaps tokenisers leave, and restore the apostrophe
    chat drops from "I'm", "I've" and, before one of ``verbs``, "I'll"."""
    mapped = original.translate(_CHAR_MAP)
    if "'II" in mapped:  # same length, so the offsets stay one to one
        mapped = _CAPITAL_I_LL.sub(r"\1'll", mapped)
    drop: set[int] = set()
    for pattern in (_CONTRACTION_GAP, _PUNCT_GAP, _EMPHASIS):
        for match in pattern.finditer(mapped):
            for group in (1, 2):
                if pattern.groups >= group:
                    drop.update(range(match.start(group), match.end(group)))
    restore = (
        [m.start() for m in _DROPPED_APOSTROPHE.finditer(mapped) if m.group("rest") != "ll" or m.group("next") in verbs]
        if _MAYBE_DROPPED.search(mapped)
        else []
    )
    if not drop and not restore:
        return Normalized(original, mapped, tuple(range(len(mapped))))
    keep = [i for i in range(len(mapped)) if i not in drop]
    chars = [mapped[i] for i in keep]
    for at in reversed(restore):  # the inserted apostrophe stands for the "I" it follows
        pos = keep.index(at) + 1
        keep.insert(pos, at)
        chars.insert(pos, "'")
    return Normalized(original, "".join(chars), tuple(keep))


@dataclass(frozen=True)
class Clause:
    """A stretch of a sentence between clause boundaries (commas, conjunctions, dashes)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Sentence:
    """A sentence of the normalised text with its clauses; offsets are into the normalised text."""

    start: int
    end: int
    text: str
    clauses: tuple[Clause, ...]

    @cached_property
    def is_question(self) -> bool:
        """Ends with "?", possibly followed by a parenthetical ("... a scope? (too late for http2)"),
        or opens with an auxiliary before its subject and ends with no stop ("are we gonna DOS the builders")."""
        if _QUESTION_END.search(self.text) is not None:
            return True
        return self.text[-1] not in ".!" and _INVERTED_OPENING.match(self.text) is not None

    def clause_at(self, offset: int) -> Clause:
        """The clause holding absolute offset ``offset`` (the last one if it falls in a gap)."""
        for clause in self.clauses:
            if clause.start <= offset < clause.end:
                return clause
        before = [c for c in self.clauses if c.start <= offset]
        return before[-1] if before else self.clauses[0]


def _clauses(text: str, base: int) -> tuple[Clause, ...]:
    out: list[Clause] = []
    pos = 0
    for match in _CLAUSE_BOUNDARY.finditer(text):
        if text.startswith("while", match.end()) and _NOUN_WHILE.search(text, 0, match.start()):
            continue
        if match.start() > pos:
            out.append(Clause(base + pos, base + match.start(), text[pos : match.start()]))
        pos = match.end()
    if pos < len(text):
        out.append(Clause(base + pos, base + len(text), text[pos:]))
    return tuple(out) or (Clause(base, base + len(text), text),)


def sentences(norm: Normalized, start: int = 0) -> list[Sentence]:
    """Split the normalised text from ``start`` on into sentences (``.!?;`` and line breaks), each
    into clauses. ``start`` is a hard boundary: where a quoted reply ends, the speaker's own words
    begin a sentence even on the quote's line."""
    text = norm.text
    out: list[Sentence] = []
    pos = start
    bounds = [(m.start(), m.end()) for m in _SENTENCE_END.finditer(text) if m.start() >= start]
    bounds.append((len(text), len(text)))
    for cut, nxt in bounds:
        chunk = text[pos:cut]
        marker = _LIST_MARKER.match(chunk.lstrip())
        if marker is not None and chunk.lstrip()[marker.end() :].strip():
            chunk = chunk.lstrip()[marker.end() :]
            pos = cut - len(chunk)
        stripped = chunk.strip()
        if stripped:
            lead = len(chunk) - len(chunk.lstrip())
            start = pos + lead
            out.append(Sentence(start, start + len(stripped), stripped, _clauses(stripped, start)))
        pos = nxt
    return out
