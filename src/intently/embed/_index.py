"""A derived vector cache in ``.intently/index/``, keyed by content hash and model id.

Derived means disposable: a missing, corrupt or foreign-model file counts as empty and is
rebuilt; vectors whose text vanished are dropped on the next save. Writes are atomic
(temp file + rename) so a crash never leaves half a file.

A file is parsed once per process for as long as it is unchanged (same path, size, mtime and
inode: a rename by another process changes them): with 1,000 rules the file is a few MB of
JSON, and parsing it again for each selection took longer than the selection.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ._base import Embedder, Vector

__all__ = ["VectorIndex", "content_hash"]

_VERSION = 1

#: The parsed files of this process: path -> (what the file was when read, its vectors).
_PARSED: dict[Path, tuple[tuple[int, int, int], str, dict[str, Vector]]] = {}
_PARSED_MAX = 16


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorIndex:
    """Vectors for texts under one embedder, persisted in ``folder``."""

    def __init__(self, folder: Path | None, embedder: Embedder, *, name: str = "vectors") -> None:
        self.folder = folder
        self.embedder = embedder
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", embedder.model_id)
        self.path = folder / f"{name}-{safe}.json" if folder is not None else None
        self._vectors: dict[str, Vector] = self._read()
        self.embedded = 0  # how many texts the last call had to embed (0 when all were cached)

    def _read(self) -> dict[str, Vector]:
        if self.path is None or not self.path.is_file():
            return {}
        stamp = _stamp(self.path)
        cached = _PARSED.get(self.path)
        if stamp is not None and cached is not None and cached[0] == stamp and cached[1] == self.embedder.model_id:
            return dict(cached[2])  # a copy: this index adds and prunes its own
        vectors = self._parse()
        if stamp is not None and stamp == _stamp(self.path):  # not replaced while it was read
            self._remember(stamp, vectors)
        return vectors

    def _parse(self) -> dict[str, Vector]:
        assert self.path is not None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") != _VERSION or data.get("model_id") != self.embedder.model_id:
                return {}
            entries = data["entries"]
            return {
                str(k): [float(x) for x in v]
                for k, v in entries.items()
                if isinstance(v, list) and len(v) == self.embedder.dim
            }
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return {}  # corrupt: rebuild

    def _remember(self, stamp: tuple[int, int, int], vectors: dict[str, Vector]) -> None:
        assert self.path is not None
        if len(_PARSED) >= _PARSED_MAX and self.path not in _PARSED:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[self.path] = (stamp, self.embedder.model_id, dict(vectors))

    def vectors(self, texts: Sequence[str], *, keep_only: bool = True) -> list[Vector]:
        """Vectors for ``texts``, embedding (in one batch) only those not cached yet.

        With ``keep_only`` the cache is pruned to exactly these texts before it is saved.
        """
        hashes = [content_hash(t) for t in texts]
        missing = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in self._vectors}.items())
        self.embedded = len(missing)
        if missing:
            fresh = self.embedder.embed([t for _, t in missing])
            for (h, _), vec in zip(missing, fresh, strict=True):
                self._vectors[h] = vec
        changed = bool(missing)
        if keep_only:
            wanted = set(hashes)
            stale = [h for h in self._vectors if h not in wanted]
            for h in stale:
                del self._vectors[h]
            changed = changed or bool(stale)
        if changed:
            self._save()
        return [self._vectors[h] for h in hashes]

    def _save(self) -> None:
        if self.path is None or self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n", encoding="utf-8")
            payload = {"version": _VERSION, "model_id": self.embedder.model_id, "entries": self._vectors}
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".vectors-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(payload, fh, separators=(",", ":"))
                fh.flush()
                written = os.fstat(fh.fileno())
            os.replace(tmp, self.path)
            # What this process just wrote is what the next reader here would parse.
            self._remember((written.st_mtime_ns, written.st_size, written.st_ino), self._vectors)
        except OSError:
            # A read-only checkout still selects; the cache is only an optimisation.
            return
