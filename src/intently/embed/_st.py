"""sentence-transformers (the ``st`` extra): any local ST model folder, for those who have torch.

Not the default: torch makes the install about 1.5 GB and start-up about 6 s. The model must
already be on disk (a folder path); nothing is downloaded at run time.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.errors import StoreError
from ..core.extras import MissingExtra
from ._base import Embedder, Vector, normalise

__all__ = ["SentenceTransformerEmbedder"]


class SentenceTransformerEmbedder(Embedder):
    """Wraps ``sentence_transformers.SentenceTransformer`` loaded from a local folder."""

    def __init__(self, model_dir: str | Path, *, dim: int = 384) -> None:
        self._dir = Path(model_dir)
        self._dim = dim
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"st:{self._dir.name}:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _load(self) -> Any:
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found,unused-ignore]
            except ImportError as exc:
                raise MissingExtra("the sentence-transformers embedder", "st", "sentence_transformers") from exc
            if not self._dir.is_dir():
                raise StoreError(f"{self._dir}: no local sentence-transformers model folder (nothing is downloaded)")
            self._model = SentenceTransformer(str(self._dir), device="cpu", local_files_only=True)
        return self._model

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        with self._lock:
            rows = self._load().encode(list(texts), normalize_embeddings=True)
        return [normalise([float(x) for x in row]) for row in rows]
