"""Meaning-based relevance for MEDIUM intents, when an embedder is configured.

The lexical entity rule stays first; the embedder only adds ACTIVE MEDIUM intents whose text is
close in meaning to the query (cosine >= ``threshold``), looking at the ``limit`` most recently
changed candidates so a bundle stays cheap however many intents exist. A local deterministic
model may rank candidates; it never decides state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..embed import Embedder, Vector, cosine
from ._model import Intent

__all__ = ["SemanticMatcher"]


class SemanticMatcher:
    """Scores intents against a query, caching vectors by text hash for the process's lifetime."""

    def __init__(self, embedder: Embedder, *, threshold: float = 0.65, limit: int = 200) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.limit = limit
        self._cache: dict[str, Vector] = {}

    def _vectors(self, texts: Sequence[str]) -> list[Vector]:
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self._cache}.items())
        if missing:
            for (key, _), vec in zip(missing, self.embedder.embed([t for _, t in missing]), strict=True):
                self._cache[key] = vec
        return [self._cache[k] for k in keys]

    def matches(self, query: str, intents: Sequence[Intent]) -> list[tuple[Intent, float]]:
        """Intents at or above the threshold, best first (ties by id, so the order is stable)."""
        if not query.strip() or not intents:
            return []
        qvec, *vecs = self._vectors([query, *(i.value for i in intents)])
        scored = [(i, cosine(qvec, v)) for i, v in zip(intents, vecs, strict=True)]
        kept = [(i, s) for i, s in scored if s >= self.threshold]
        kept.sort(key=lambda pair: (-pair[1], pair[0].id))
        return kept
