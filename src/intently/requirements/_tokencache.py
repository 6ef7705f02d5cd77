"""What selection derives from each rule's text, kept between processes by content hash.

Every context block is a new process (a hook, ``req preview``), and at 2,000 rules it spent
about 0.3 s tokenising every rule text for BM25 and every statement for the contradiction
check, and 0.2 s counting the tokens of every candidate's line, all for texts that had not
changed. So ``index/requirements-tokens.json`` (runtime state, never committed) keeps, under
the SHA-256 of each text, its :func:`tokenize` words; and under the SHA-256 of the counter's
name, ratio and a line, the tokens the default counter gave that line. A text that changed
has another key and is worked out again.

Like the vector index beside it, the file is derived and disposable: unreadable, foreign or
from another version of intently (whose tokeniser may differ), it is ignored and rebuilt;
words no longer asked for are dropped when it is saved, counts once there are many more than rules; one that cannot be written (a
read-only home) is skipped. Only :class:`~intently.core.tokens.TokenCounter` counts are
kept (its name and ratio say exactly what it counts); any other counter counts every time.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.files import atomic_write
from ..core.tokens import TokenCounter, TokenCounting
from ..embed import content_hash
from ._bm25 import tokenize

__all__ = ["TOKENS_FILE", "TokenCache"]

TOKENS_FILE = "requirements-tokens.json"
#: Bumped whenever :func:`tokenize` or the counter changes what it yields; with the package
#: version in the file, what an older tokeniser gave is never used.
_FORMAT = 1


class TokenCache:
    """Words and token counts of texts under one home's index folder (``None``: memory only)."""

    def __init__(self, folder: Path | None) -> None:
        self._path = folder / TOKENS_FILE if folder is not None else None
        self._stamp: dict[str, Any] = {"format": _FORMAT, "intently": __version__}
        self._words: dict[str, str] = {}  # hash -> the words, space-separated (no word has a space)
        self._counts: dict[str, int] = {}
        if self._path is None:
            return
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self._path.read_bytes())
            if isinstance(data, dict) and all(data.get(k) == v for k, v in self._stamp.items()):
                words, counts = data.get("words"), data.get("counts")
                if isinstance(words, dict):
                    self._words = {k: v for k, v in words.items() if isinstance(v, str)}
                if isinstance(counts, dict):
                    self._counts = {k: v for k, v in counts.items() if type(v) is int and v >= 0}

    def tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """``tokenize(t)`` for each text, tokenising only texts not seen before; the words
        kept are then pruned to exactly these texts (and saved if anything changed)."""
        hashes = [content_hash(t) for t in texts]
        changed = False
        for h, t in zip(hashes, texts, strict=True):
            if h not in self._words:
                self._words[h] = " ".join(tokenize(t))
                changed = True
        if len(self._words) != len(set(hashes)):
            wanted = set(hashes)
            self._words = {h: v for h, v in self._words.items() if h in wanted}
            changed = True
        if changed:
            self._save()
        return [self._words[h].split() for h in hashes]

    def counts(self, lines: Sequence[str], counter: TokenCounting) -> list[int]:
        """``counter.count(line)`` for each line, counting (in one batch) only lines not seen
        before.

        Each task has other candidates, so the counts of earlier tasks' lines are kept too:
        up to twice as many as there are texts with words kept (four per rule), the ones
        least recently counted or asked for with a new line dropped first."""
        if type(counter) is not TokenCounter:
            return [counter.count(line) for line in lines]
        salt = f"{counter.name}\0{counter.ratio!r}\0"
        keys = [content_hash(salt + line) for line in lines]
        missing = sorted({k: line for k, line in zip(keys, lines, strict=True) if k not in self._counts}.items())
        if missing:
            fresh = counter.count_many([line for _, line in missing])
            for (k, line), n in zip(missing, fresh, strict=True):
                self._counts[k] = max(1, n) if line else 0  # as count() says: never 0 for a line
        out = [self._counts[k] for k in keys]
        if missing:
            for k in keys:  # most recently used last
                self._counts[k] = self._counts.pop(k)
            room = max(2 * len(self._words), 2 * len(keys), 64)
            if len(self._counts) > room:
                self._counts = dict(list(self._counts.items())[len(self._counts) - room :])
            self._save()
        return out

    def _save(self) -> None:
        if self._path is None:
            return
        payload = {**self._stamp, "words": self._words, "counts": self._counts}
        with contextlib.suppress(OSError):
            atomic_write(self._path, json.dumps(payload, separators=(",", ":")), durable=False)
