"""Normalised terms and entities: how a query "touches" an intent, and when two texts say
the same thing.

Normalisation is NFKC, case folding, and Snowball (English) stemming of word tokens, so
"Deploying" and "deploy", "Ｓarah" and "sarah" meet. An *entity* is a term a query can be
about rather than a word it is phrased with: a ticket (``ABC-123``, ``#42``), a file or
path (``api/server.py``, ``README.md``), a code identifier (``snake_case``, ``CamelCase``,
``dotted.name``), an ``@mention``, a quoted phrase's words, or a capitalised word that is not
the first word of its sentence (names and project names: "Review Sarah's PR"). Every
entity is also split into its word parts, so ``api/server.py`` touches "server".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import Stemmer

from ..core.strings import printable

__all__ = ["Terms", "escape_text", "near_duplicate", "normalise", "terms_of"]

# Words that carry no subject: never entities, never matched on.
_STOP_TEXT = """a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing done down during each either few for from further get
got had has have having he her here hers herself him himself his how i if in into is it its itself
just let me more most my myself need needs no nor not now of off on once only or other our ours
ourselves out over own please same shall she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were what when
where which while who whom why will with would you your yours yourself yourselves also make sure
going want wants todo task tasks thing things via per"""
_STOP = frozenset(_STOP_TEXT.split())

_CONTRACTION = re.compile(r"['’](?:ll|re|ve|d|m|s|t)\b")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_TICKET = re.compile(r"(?<![\w-])(?:[A-Za-z][A-Za-z0-9]{1,9}-\d+|#\d+)(?![\w-])")
_PATHLIKE = re.compile(r"(?<![\w/.-])(?:[\w-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/])|(?:[\w.-]+/)+[\w.-]+")
_IDENT = re.compile(r"\b(?:[a-z]+(?:_[a-z0-9]+)+|[A-Z]?[a-z]+(?:[A-Z][a-z0-9]+)+|[a-z_]+(?:\.[a-z_]+){2,})\b")
_MENTION = re.compile(r"@([\w.-]+)")
_QUOTED = re.compile(r"[\"“”']([^\"“”']{2,80})[\"“”']")
_CAPITAL = re.compile(r"\b[A-Z][\w'’-]*")


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _stem(word: str) -> str:
    stemmed: str = _stemmer().stemWord(word)
    return stemmed


def _words(text: str) -> list[str]:
    """Content words of ``text``, normalised and stemmed, in order, stopwords removed."""
    out: list[str] = []
    for match in _WORD.finditer(_CONTRACTION.sub("", normalise(text))):
        word = match.group(0)
        if word in _STOP or (len(word) < 2 and not word.isdigit()):
            continue
        out.append(_stem(word))
    return out


@dataclass(frozen=True)
class Terms:
    """The normalised words of a text and the subset that names entities."""

    words: frozenset[str]
    entities: frozenset[str]
    key: str

    def touches(self, other: Terms) -> bool:
        """True when one side's entities appear among the other's words (either direction)."""
        return bool(self.entities & other.words) or bool(other.entities & self.words)


def _entity_parts(kind: str, span: str) -> set[str]:
    """The normalised forms an entity is matched by: tickets and identifiers whole; a path whole,
    by its file name and by that name's stem; a name, mention or quoted phrase by its words."""
    norm = normalise(span).strip("'’-")
    if not norm:
        return set()
    if kind in {"ticket", "ident"}:
        return {norm}
    if kind == "path":
        name = norm.rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0]
        return {norm, name, *_words(stem)}
    return set(_words(norm))


def _starts_sentence(raw: str, at: int) -> bool:
    """Whether position ``at`` begins a sentence, line or list item (constant time, looking back)."""
    before = raw[max(0, at - 64) : at]
    stripped = before.rstrip()
    if not stripped:
        return at - len(before) == 0 or "\n" in before
    gap = before[len(stripped) :]
    return bool(gap) and ("\n" in gap or stripped[-1] in ".!?:;-*•")


def _entity_spans(raw: str) -> list[tuple[str, str]]:
    spans: list[tuple[str, str]] = []
    covered: list[tuple[int, int]] = []
    for kind, rx in (("ticket", _TICKET), ("path", _PATHLIKE), ("ident", _IDENT)):
        for m in rx.finditer(raw):
            spans.append((kind, m.group(0)))
            covered.append(m.span())
    spans.extend(("name", m.group(1)) for m in _MENTION.finditer(raw))
    spans.extend(("name", m.group(1)) for m in _QUOTED.finditer(raw))
    for match in _CAPITAL.finditer(raw):
        if any(a < match.end() and match.start() < b for a, b in covered):
            continue  # already taken whole as a ticket, path or identifier
        if _starts_sentence(raw, match.start()):
            continue  # the first word of a sentence is capitalised by grammar, not by being a name
        spans.append(("name", match.group(0)))
    return spans


def terms_of(*texts: str | None) -> Terms:
    """The :class:`Terms` of one or more texts (an intent's text, note, criteria, people)."""
    words: list[str] = []
    entities: set[str] = set()
    for text in texts:
        if not text:
            continue
        raw = unicodedata.normalize("NFKC", text)
        words.extend(_words(raw))
        for kind, span in _entity_spans(raw):
            parts = {p for p in _entity_parts(kind, span) if not p.isdigit()}
            entities.update(parts)
            words.extend(parts)
    return Terms(words=frozenset(words), entities=frozenset(entities), key=" ".join(_words(texts[0] or "")))


def near_duplicate(a: Terms, b: Terms) -> bool:
    """The restatement rule: same normalised words, or Jaccard overlap of the stemmed content
    words at least 0.8 (so "I will ship the API by Friday" restates "Ship the API by Friday!",
    while "Ship the API" and "Ship the billing API" stay distinct)."""
    if a.key and a.key == b.key:
        return True
    wa, wb = set(a.key.split()), set(b.key.split())
    if not wa or not wb:
        return False
    return len(wa & wb) / len(wa | wb) >= 0.8


def escape_text(text: str) -> str:
    """Text safe inside the rendered block: markup characters escaped, control characters and
    line breaks flattened, so an intent's own text can never close or forge a tag."""
    flat = " ".join(printable(text).split())
    return flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
