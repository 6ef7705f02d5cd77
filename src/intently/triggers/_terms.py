"""Parsing what a user types as a trigger entry into :class:`Term` objects.

An entry is text such as ``launch checklist``: two words, each must come up, in any
order. Quoted parts (``"launch checklist"``) are phrases whose words must be adjacent.
Function words ("the", "of") are dropped from unquoted entries that have other words,
since a reminder should not depend on them. Exclusions are a separate list of terms.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ._normalise import _SCAN, Term, compound_stem, raw_segments
from ._synonyms import SynonymTable

__all__ = ["MAX_TERM_CHARS", "clauses", "compile_entry", "compile_term_texts", "entry_words", "phrase_variant"]

MAX_TERM_CHARS = 120
_MAX_COMPOUND = 12  # "roll back" may be written "rollback"; "launch checklist" is never one word
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|'([^']+)'(?!\w)")
_FUNCTION = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "for",
        "in",
        "on",
        "at",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "be",
        "this",
        "that",
        "it",
        "its",
        "when",
        "if",
    ]
)


def entry_words(text: str) -> list[tuple[str, bool]]:
    """Split an entry into (text, is_phrase) pieces: quoted phrases and single words."""
    pieces: list[tuple[str, bool]] = []
    pos = 0
    for m in _QUOTED.finditer(text):
        pieces.extend((w, False) for w in text[pos : m.start()].split())
        phrase = next(g for g in m.groups() if g is not None).strip()
        if phrase:
            pieces.append((phrase, True))
        pos = m.end()
    pieces.extend((w, False) for w in text[pos:].split())
    words = [p for p in pieces if p[1] or p[0].strip("\"'“”")]
    plain = [p for p in words if not p[1]]
    if len(words) > 1 and any(p[0].lower() not in _FUNCTION for p in plain):
        keep = [p for p in words if p[1] or p[0].lower() not in _FUNCTION]
        if keep:
            words = keep
    return words


def _term(text: str, phrase: bool, synonyms: SynonymTable) -> Term | None:
    """A term, shared between intents that use the same words (the table caches it)."""
    cache = synonyms.term_cache
    key = (text, phrase)
    if key in cache:
        return cache[key]
    term = _build_term(text, phrase, synonyms)
    if len(cache) < 2_000_000:
        cache[key] = term
    return term


def _build_term(text: str, phrase: bool, synonyms: SynonymTable) -> Term | None:
    words = [w for seg in raw_segments(text) for w in seg]
    if not words:
        return None
    seq = tuple(p for w in words for p in w.parts)
    alternatives: list[tuple[str, ...]] = [seq]
    if len(words) == 1:
        alternatives.extend((j,) for j in words[0].joined)
    elif len(words) == 2 and all(len(w.parts) == 1 for w in words):
        # "roll back" may be written "rollback": the joined stems, and the joined word
        # stemmed whole as a turn's one-word form is ("on call" -> "oncal", like "oncall").
        alternatives.append((words[0].parts[0] + words[1].parts[0],))
        alternatives.append((compound_stem(words[0].folded[0], words[1].folded[0]),))
    canon = synonyms.canonical_of(seq)
    if canon is not None:
        alternatives.insert(0, canon)
    unique = tuple(dict.fromkeys(alternatives))
    return Term(text=text, alternatives=unique, phrase=phrase or len(seq) > 1)


def clauses(piece: str) -> list[str]:
    """``piece`` cut where a turn ends a clause: ``1:1`` is ``1`` and ``1``, ``foo::bar`` is
    ``foo`` and ``bar``, ``"deploy, then"`` is ``deploy`` and ``then``; one part for most.

    A turn never matches words adjacent across a clause break (":", "@", "=", ","), so a
    term holding one, taken as one phrase, could never fire, not even on its own text: a
    trigger ``1:1`` or ``std::vector`` was stored, listed and silent for ever. Each part is a
    term of its own instead (all must come up, as for the words of an entry)."""
    segments = raw_segments(piece)
    if len(segments) <= 1:
        return [piece] if segments else []
    text = unicodedata.normalize("NFKC", piece)
    parts: list[str] = []
    start = 0
    for m in _SCAN.finditer(text):
        if m.group("word") is None:  # a clause break
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return [p.strip() for p in parts if raw_segments(p)]


def compile_entry(terms: Sequence[str], synonyms: SynonymTable) -> list[Term]:
    """Terms of one entry given as the user's strings (each may hold several words or quotes)."""
    out: list[Term] = []
    for text in terms:
        for piece, phrase in entry_words(text):
            # An unquoted word may still be several tokens (``roll-back``, ``targetFeature``).
            for part in clauses(piece):
                term = _term(part, phrase, synonyms)
                if term is not None:
                    out.append(term)
    seen: set[tuple[tuple[str, ...], ...]] = set()
    unique: list[Term] = []
    for term in out:
        if term.alternatives not in seen:
            seen.add(term.alternatives)
            unique.append(term)
    return unique


def phrase_variant(terms: Sequence[str], synonyms: SynonymTable) -> list[Term] | None:
    """The entry again with some unquoted word groups taken as one phrase term.

    A group is a known synonym form ("pull request", so that "PR" satisfies it; also a
    whole entry typed word by word, ``["breaking", "change"]``, which "breakage" satisfies)
    or two words short enough to be written as one ("roll back", so that "rollback" does).
    ``None`` when there is no such group. It is an extra alternative: the words-anywhere
    reading of the entry still applies."""
    if len(terms) > 1 and all(len(t.split()) == 1 and '"' not in t for t in terms):
        # The entry typed as separate words (["breaking", "change"]) may itself be a form.
        seq = tuple(p for t in terms for seg in raw_segments(t) for w in seg for p in w.parts)
        if synonyms.is_known_form(seq):
            whole = _term(" ".join(terms), True, synonyms)
            if whole is not None:
                return [whole]
    out: list[Term] = []
    changed = False
    for text in terms:
        if '"' not in text and len(text.split()) > 1:
            seq = tuple(p for seg in raw_segments(text) for w in seg for p in w.parts)
            compound = len(text.split()) == 2 and len("".join(seq)) <= _MAX_COMPOUND
            if compound or synonyms.is_known_form(seq):
                whole = _term(text.strip(), True, synonyms)
                if whole is not None:
                    out.append(whole)
                    changed = True
                    continue
        out.extend(compile_entry([text], synonyms))
    return out if changed else None


def compile_term_texts(texts: Sequence[str], synonyms: SynonymTable) -> list[Term]:
    """Exclusion terms: each string is one term (a word or a phrase)."""
    out: list[Term] = []
    for text in texts:
        term = _term(text.strip().strip('"“”'), True, synonyms)
        if term is not None:
            out.append(term)
    return out
