"""Embedders shared by every engine: a small interface, a local default, a derived index.

``default_embedder()`` is all-MiniLM-L6-v2 (int8) on onnxruntime: offline, no torch,
deterministic. ``WordLlamaEmbedder`` is the cheap alternative; ``HashingEmbedder`` the
dependency-free stand-in. ``VectorIndex`` caches vectors by content hash and model id.

The index module needs numpy, which costs a tenth of a second or more to import; a hook's
process per prompt imports this package (goals and requirements name the interface) but ranks
nothing by meaning unless a rule is active, so :mod:`._index` loads on the first use of one of
its names (module ``__getattr__``), not with the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports
from ._base import Embedder, HashingEmbedder, Vector, content_hash, cosine
from ._minilm import MINILM_SHA256, MiniLMEmbedder
from ._resolve import EMBEDDERS, NoEmbedderWarning, default_embedder, get_embedder
from ._st import SentenceTransformerEmbedder
from ._wordllama import WordLlamaEmbedder

if TYPE_CHECKING:
    from ._index import VectorIndex, VectorIndexWarning, dot_scores

_WHERE: dict[str, str] = dict.fromkeys(("VectorIndex", "VectorIndexWarning", "dot_scores"), "._index")

__all__ = [
    "EMBEDDERS",
    "MINILM_SHA256",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "NoEmbedderWarning",
    "SentenceTransformerEmbedder",
    "Vector",
    "VectorIndex",
    "VectorIndexWarning",
    "WordLlamaEmbedder",
    "content_hash",
    "cosine",
    "default_embedder",
    "dot_scores",
    "get_embedder",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals(), __all__)
