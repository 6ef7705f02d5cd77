"""The one shared :class:`TokenCounter` every engine budgets with.

The default counts with a real tokenizer that ships inside the package (the WordPiece
vocabulary of all-MiniLM-L6-v2, run by the ``tokenizers`` library), so budgets mean the
same thing in every engine, offline. Counts are close to, not equal to, a chat model's
own tokenizer; ``TokenCounter(ratio=...)`` scales them, and ``WordCounter`` is a cheap,
dependency-free stand-in when the exact count does not matter.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

__all__ = ["TokenCounter", "TokenCounting", "WordCounter", "default_counter"]

_TOKENIZER_PATH = Path(__file__).parent / "data" / "minilm-tokenizer.json"


class TokenCounting(Protocol):
    name: str

    def count(self, text: str) -> int: ...


class TokenCounter:
    """Counts tokens with the vendored WordPiece tokenizer (no special tokens, no truncation)."""

    name = "minilm-wordpiece"

    def __init__(self, *, ratio: float = 1.0) -> None:
        self.ratio = ratio
        self._tok = _load_tokenizer()
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        if not text:
            return 0
        with self._lock:
            n = len(self._tok.encode(text, add_special_tokens=False).ids)
        return max(1, round(n * self.ratio))

    def count_many(self, texts: list[str]) -> list[int]:
        with self._lock:
            encodings = self._tok.encode_batch(texts, add_special_tokens=False)
        return [round(len(e.ids) * self.ratio) if t else 0 for e, t in zip(encodings, texts, strict=True)]


@lru_cache(maxsize=1)
def _load_tokenizer() -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(_TOKENIZER_PATH))
    tok.no_truncation()
    tok.no_padding()
    return tok


_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class WordCounter:
    """Words and punctuation marks: a dependency-free approximation."""

    name = "words"

    def count(self, text: str) -> int:
        return len(_WORD.findall(text))


_default: TokenCounter | None = None


def default_counter() -> TokenCounter:
    """The process-wide counter (loading the tokenizer once)."""
    global _default
    if _default is None:
        _default = TokenCounter()
    return _default
