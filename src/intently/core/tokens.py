"""The one shared :class:`TokenCounter` every engine budgets with.

The default counts with a real tokenizer that ships inside the package (the WordPiece
vocabulary of all-MiniLM-L6-v2, run by the ``tokenizers`` library), so budgets mean the
same thing in every engine, offline. Counts are close to, not equal to, a chat model's
own tokenizer; ``TokenCounter(ratio=...)`` scales them, and ``WordCounter`` is a cheap,
dependency-free stand-in when the exact count does not matter.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

__all__ = ["TokenCounter", "TokenCounting", "WordCounter", "default_counter"]

_TOKENIZER_PATH = Path(__file__).parent / "data" / "minilm-tokenizer.json"


class TokenCounting(Protocol):
    name: str

    def count(self, text: str) -> int: ...


#: Characters per token charged for one ``[UNK]`` that stands for a long run of text.
UNK_CHARS_PER_TOKEN = 3
_ASCII_INVISIBLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: Categories the tokenizer's normaliser drops without a token (controls, format characters
#: such as zero-width and bidi marks) or folds into the previous piece (combining marks).
_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Mn", "Me"})


def _unseen(text: str) -> int:
    """Characters of ``text`` the WordPiece normaliser removes or absorbs: each is one token.

    A chat model's tokenizer pays for every zero-width, bidi or control character and every
    combining mark, while WordPiece drops them (``clean_text``) or glues them to the letter
    before. Left uncounted, a hostile item made of them costs nothing against a budget.
    """
    if text.isascii():
        return len(_ASCII_INVISIBLE.findall(text))
    return sum(1 for ch in text if ch not in "\t\n\r" and unicodedata.category(ch) in _UNSEEN_CATEGORIES)


class TokenCounter:
    """Counts tokens with the vendored WordPiece tokenizer (no special tokens, no truncation).

    WordPiece turns any word longer than 100 characters into one ``[UNK]`` and silently
    drops invisible characters, so a 200,000-character line counted as one token and a
    block "within budget" could be any size. Such text is charged what a model would pay:
    an ``[UNK]`` spanning a run counts one token per :data:`UNK_CHARS_PER_TOKEN` ASCII
    characters and one per other character (an emoji or a rare symbol costs a model at
    least that), and every dropped character counts one. Ordinary prose has neither, so
    its counts are unchanged.
    """

    name = "minilm-wordpiece"

    def __init__(self, *, ratio: float = 1.0) -> None:
        self.ratio = ratio
        self._tok = _load_tokenizer()
        self._unk = self._tok.token_to_id(self._tok.model.unk_token)
        self._lock = threading.Lock()

    def _raw(self, text: str, encoding: Any) -> int:
        """Tokens of one encoding, with long ``[UNK]`` runs and dropped characters charged."""
        ids = encoding.ids
        n = len(ids)
        if self._unk in ids:
            for token_id, (start, end) in zip(ids, encoding.offsets, strict=True):
                if token_id == self._unk and end - start > 1:
                    run = text[start:end]
                    ascii_chars = sum(1 for ch in run if ch.isascii())
                    others = len(run) - ascii_chars - _unseen(run)  # those are charged below
                    n += math.ceil(ascii_chars / UNK_CHARS_PER_TOKEN) + others - 1
        return n + _unseen(text)

    def count(self, text: str) -> int:
        if not text:
            return 0
        with self._lock:
            encoding = self._tok.encode(text, add_special_tokens=False)
        return max(1, round(self._raw(text, encoding) * self.ratio))

    def count_many(self, texts: list[str]) -> list[int]:
        with self._lock:
            encodings = self._tok.encode_batch(texts, add_special_tokens=False)
        return [round(self._raw(t, e) * self.ratio) if t else 0 for e, t in zip(encodings, texts, strict=True)]


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
