"""BM25 over requirement texts that keeps negations.

The reference's keyword fallback dropped "never", "must", "not" and "no" as stopwords, so
"never X" ranked like "X". Here negations survive tokenising, identifiers and paths are
split into words (``refresh_helper.go`` → refresh, helper, go; ``camelCase`` → camel,
case), and words are stemmed with PyStemmer when it is installed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

__all__ = ["BM25", "tokenize"]

_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "by",
        "for",
        "from",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "our",
        "so",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "which",
        "while",
        "will",
        "with",
        "you",
        "your",
    ]
)
_NEGATIONS = {"dont": "not", "don't": "not", "doesnt": "not", "shouldnt": "not", "cannot": "not", "cant": "not"}
_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+|[a-z]+")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    try:
        import Stemmer

        return Stemmer.Stemmer("english")
    except ImportError:  # pragma: no cover - PyStemmer is a dependency
        return None


def tokenize(text: str) -> list[str]:
    """Lower-case stems, negations kept (``don't`` becomes ``not``), stopwords dropped."""
    words: list[str] = []
    for raw in re.split(r"[^A-Za-z0-9']+", text):
        if not raw:
            continue
        low = raw.lower().replace("'", "")
        if low in _NEGATIONS:
            words.append(_NEGATIONS[low])
            continue
        for part in _WORD.findall(raw.replace("'", "")):
            p = part.lower()
            if p and p not in _STOP and len(p) > 1:
                words.append(p)
    stem = _stemmer()
    return list(stem.stemWords(words)) if stem is not None and words else words


class BM25:
    """Okapi BM25 (k1=1.2, b=0.75) over a fixed set of documents."""

    def __init__(
        self,
        documents: Sequence[str],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        tokenized: Sequence[Sequence[str]] | None = None,
    ) -> None:
        """``tokenized``: ``tokenize(d)`` of each document, when the caller kept them (see
        :mod:`._tokencache`); ``documents`` are then not tokenised again."""
        self.k1 = k1
        self.b = b
        if tokenized is not None and len(tokenized) != len(documents):
            raise ValueError(f"{len(tokenized)} token lists for {len(documents)} documents")
        self.docs = (
            [Counter(t) for t in tokenized] if tokenized is not None else [Counter(tokenize(d)) for d in documents]
        )
        self.lengths = [sum(c.values()) for c in self.docs]
        self.avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: str) -> list[float]:
        terms = set(tokenize(query))
        out: list[float] = []
        for doc, length in zip(self.docs, self.lengths, strict=True):
            s = 0.0
            for t in terms:
                tf = doc.get(t, 0)
                if tf:
                    norm = tf + self.k1 * (1 - self.b + self.b * length / (self.avg or 1.0))
                    s += self.idf[t] * tf * (self.k1 + 1) / norm
            out.append(s)
        return out
