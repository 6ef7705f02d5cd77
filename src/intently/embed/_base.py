"""The one small interface every embedder implements, plus an in-memory fake for tests."""

from __future__ import annotations

import hashlib
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence

__all__ = ["Embedder", "HashingEmbedder", "Vector", "content_hash", "cosine"]

Vector = list[float]


def content_hash(text: str) -> str:
    """The key a text's vector is cached under (here, beside the interface, so that a module
    that only hashes texts does not import numpy through :mod:`._index`)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Embedder(ABC):
    """Turns texts into unit vectors, deterministically: the same text always gives the same
    vector, so rankings are reproducible and an index keyed by ``model_id`` stays valid."""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """Names model and weights; an index built by another model id is rebuilt."""

    @property
    @abstractmethod
    def dim(self) -> int:
        """Length of every vector."""

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One L2-normalised vector per text, in order."""

    def embed_one(self, text: str) -> Vector:
        return self.embed([text])[0]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Dot product; equals the cosine because every embedder returns unit vectors."""
    return float(sum(x * y for x, y in zip(a, b, strict=True)))


def normalise(values: Sequence[float]) -> Vector:
    norm = math.sqrt(sum(v * v for v in values))
    if norm == 0.0:
        return [0.0 for _ in values]
    return [float(v) / norm for v in values]


_TOKEN = re.compile(r"[a-z0-9]+")


class HashingEmbedder(Embedder):
    """Bag of words hashed into ``dim`` signed buckets: no model, no meaning beyond shared
    words. The in-memory stand-in (like httpx's ``MockTransport``) for callers that need an
    :class:`Embedder` without loading weights; negation words are kept, unlike the reference."""

    def __init__(self, dim: int = 256) -> None:
        self._dim = dim

    @property
    def model_id(self) -> str:
        return f"hashing:v1:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        out: list[Vector] = []
        for text in texts:
            acc = [0.0] * self._dim
            for token in _TOKEN.findall(text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "big") % self._dim
                acc[slot] += 1.0 if digest[4] & 1 else -1.0
            out.append(normalise(acc))
        return out
