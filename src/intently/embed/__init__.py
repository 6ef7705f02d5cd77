"""Embedders shared by every engine: a small interface, a local default, a derived index.

``default_embedder()`` is all-MiniLM-L6-v2 (int8) on onnxruntime: offline, no torch,
deterministic. ``WordLlamaEmbedder`` is the cheap alternative; ``HashingEmbedder`` the
dependency-free stand-in. ``VectorIndex`` caches vectors by content hash and model id.
"""

from __future__ import annotations

from ._base import Embedder, HashingEmbedder, Vector, cosine
from ._index import VectorIndex, VectorIndexWarning, content_hash, dot_scores
from ._minilm import MINILM_SHA256, MiniLMEmbedder
from ._resolve import EMBEDDERS, NoEmbedderWarning, default_embedder, get_embedder
from ._st import SentenceTransformerEmbedder
from ._wordllama import WordLlamaEmbedder

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
