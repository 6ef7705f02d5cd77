"""Which embedder a home uses: the default MiniLM, wordllama, or none (lexical only)."""

from __future__ import annotations

import threading
import warnings

from ..core.errors import IntentlyError, InvalidInput
from ._base import Embedder, HashingEmbedder

__all__ = ["EMBEDDERS", "NoEmbedderWarning", "default_embedder", "get_embedder"]

EMBEDDERS: tuple[str, ...] = ("minilm", "wordllama", "hashing", "none")

_cache: dict[str, Embedder | None] = {}
_lock = threading.Lock()
_warned = False


class NoEmbedderWarning(UserWarning):
    """Issued once per process when no embedder loads and ranking falls back to BM25."""


def _build(name: str) -> Embedder | None:
    if name == "minilm":
        from ._minilm import MiniLMEmbedder

        emb: Embedder = MiniLMEmbedder()
    elif name == "wordllama":
        from ._wordllama import WordLlamaEmbedder

        emb = WordLlamaEmbedder()
    elif name == "hashing":
        emb = HashingEmbedder()
    elif name == "none":
        return None
    else:
        raise InvalidInput(f"unknown embedder {name!r} (one of {', '.join(EMBEDDERS)})", where="embedder")
    emb.embed(["probe"])  # load now, so failure is seen here and not mid-selection
    return emb


def get_embedder(name: str = "minilm") -> Embedder | None:
    """The named embedder, shared per process; ``None`` (with a one-time warning) if it cannot load."""
    global _warned
    with _lock:
        if name not in _cache:
            try:
                _cache[name] = _build(name)
            except (ImportError, OSError, IntentlyError) as exc:
                if isinstance(exc, InvalidInput):
                    raise
                _cache[name] = None
                if not _warned:
                    _warned = True
                    warnings.warn(
                        f"embedder {name!r} unavailable ({exc}); selection uses scope and BM25 only",
                        NoEmbedderWarning,
                        stacklevel=2,
                    )
        return _cache[name]


def default_embedder() -> Embedder | None:
    """MiniLM int8 (chosen by retrieval quality on the dev data; see docs/requirements.md)."""
    return get_embedder("minilm")
