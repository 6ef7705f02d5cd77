"""A derived vector cache in ``.intently/index/``, keyed by content hash and model id.

Derived means disposable: a missing, truncated, corrupt or foreign-model file counts as empty
and is rebuilt (with a :class:`VectorIndexWarning` saying why, so a rebuild that costs
minutes of embedding is never a mystery); vectors whose text vanished are dropped on the next
save. Writes are atomic (temp file + rename) so a crash never leaves half a file.

The file is binary, not JSON: a selection at 2,000 rules spent 0.7 s parsing 13 MB of JSON
floats, in every process (each hook call and each ``req preview`` is a new one). Now it is a
small JSON header (model id, dimension, element type, the content hash of each row, and the
SHA-256 of the rows) after a magic line, then the rows as little-endian floats, read with one
``numpy.frombuffer``. Rows are float32 when every value survives float32 exactly (MiniLM's
and wordllama's do: they are float32 to begin with) and float64 otherwise (the hashing
embedder's), so a reload gives back bit-for-bit the vectors that were embedded and a
selection is the same whether its index is fresh or reloaded. The checksum catches a file
that was cut short or damaged in place; wrong vectors are never used.

A file is parsed once per process for as long as it is unchanged (same path, size, mtime and
inode: a rename by another process changes them).

Two processes may embed into one index at once (two hooks of two sessions, a ``req add`` beside
a ``req preview``). Each saves the whole file, so the later save used to drop the rows the
other had added since both read it: never a wrong vector (rows are keyed by the hash of their
text), but those texts were embedded again by the next process. So a save takes an exclusive
lock on a lock file beside the index, and when the file changed since this process read it,
keeps the rows the other writer added (those this process never saw; a row this process read
and dropped stays dropped) before it writes. Where no file lock exists the save goes ahead
without it: the index is only a cache. The JSON index of earlier versions is read
once, if there is no binary file yet, so an upgrade does not embed every rule again; it is
removed once the binary file is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.files import atomic_write
from ..core.locks import LockUnavailable, lock
from ._base import Embedder, Vector, content_hash

__all__ = ["VectorIndex", "VectorIndexWarning", "content_hash", "dot_scores"]

Matrix = npt.NDArray[np.float64]

_MAGIC = b"intently-vectors\n"
_VERSION = 2
_LEGACY_VERSION = 1  # the JSON file, read once for migration
_DTYPES: dict[str, np.dtype[Any]] = {"f4": np.dtype("<f4"), "f8": np.dtype("<f8")}
_HEADER_MAX = 64 * 1024 * 1024
#: The index file's permission bits: a per-user cache, readable by its owner only.
_FILE_MODE = 0o600

#: The parsed files of this process: path -> (what the file was when read, model id, rows, row of each hash).
_PARSED: dict[Path, tuple[tuple[int, int, int], str, Matrix, dict[str, int]]] = {}
_PARSED_MAX = 16


class VectorIndexWarning(UserWarning):
    """A vector index file could not be used (truncated, corrupt, another model) and is rebuilt."""


class _Unusable(ValueError):
    """Why a file on disk cannot be used; the message names what is wrong."""


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def dot_scores(matrix: Matrix, query: Sequence[float]) -> list[float]:
    """The dot product of ``query`` with each row, exactly as :func:`~intently.embed.cosine`
    computes it: products summed left to right in float64.

    A BLAS matrix-vector product would be a little faster but sums in another order, so a
    score could move in its last bit and a tie or a floor decide differently than before;
    ``add.accumulate`` along a row is strictly sequential, so every score is bit-for-bit the
    one the pure-Python loop gave (and 2,000 rows still take a few milliseconds, not 0.2 s)."""
    if matrix.shape[0] == 0:
        return []
    q = np.asarray(query, dtype=np.float64)
    sums = np.add.accumulate(matrix * q, axis=1)[:, -1]
    return [float(x) for x in sums]


def _encode(model_id: str, dim: int, hashes: list[str], matrix: Matrix) -> bytes:
    """The file's bytes: magic, header length, header, rows."""
    narrow = matrix.astype("<f4")
    kind = "f4" if np.array_equal(narrow.astype(np.float64), matrix) else "f8"
    body = (narrow if kind == "f4" else matrix.astype("<f8")).tobytes()
    header = {
        "version": _VERSION,
        "model_id": model_id,
        "dim": dim,
        "dtype": kind,
        "ids": hashes,
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return _MAGIC + len(head).to_bytes(8, "little") + head + body


def _decode(raw: bytes, model_id: str, dim: int) -> tuple[Matrix, dict[str, int]]:
    """Rows and the row of each hash; :class:`_Unusable` naming the fault otherwise."""
    if not raw.startswith(_MAGIC):
        raise _Unusable("not a vector index (no magic line)")
    at = len(_MAGIC)
    if len(raw) < at + 8:
        raise _Unusable("truncated before its header")
    size = int.from_bytes(raw[at : at + 8], "little")
    at += 8
    if size > _HEADER_MAX or len(raw) < at + size:
        raise _Unusable("truncated in its header")
    try:
        header = json.loads(raw[at : at + size])
    except ValueError as exc:
        raise _Unusable(f"header is not JSON ({exc})") from None
    if not isinstance(header, dict) or header.get("version") != _VERSION:
        raise _Unusable(f"format version {header.get('version') if isinstance(header, dict) else None!r}")
    if header.get("model_id") != model_id or header.get("dim") != dim:
        raise _Unusable(f"built by model {header.get('model_id')!r} (dim {header.get('dim')!r}), not {model_id!r}")
    ids, kind = header.get("ids"), header.get("dtype")
    if kind not in _DTYPES or not isinstance(ids, list) or not all(isinstance(h, str) for h in ids):
        raise _Unusable("header lacks its element type or row ids")
    if len(set(ids)) != len(ids):
        raise _Unusable("a row id appears twice")
    body = raw[at + size :]
    dtype = _DTYPES[kind]
    if len(body) != len(ids) * dim * dtype.itemsize:
        raise _Unusable(f"{len(body)} bytes of rows, expected {len(ids) * dim * dtype.itemsize} (truncated?)")
    if hashlib.sha256(body).hexdigest() != header.get("sha256"):
        raise _Unusable("rows do not match their checksum")
    matrix = np.frombuffer(body, dtype=dtype).reshape(len(ids), dim).astype(np.float64)
    matrix.flags.writeable = False
    return matrix, {h: i for i, h in enumerate(ids)}


class VectorIndex:
    """Vectors for texts under one embedder, persisted in ``folder``."""

    def __init__(self, folder: Path | None, embedder: Embedder, *, name: str = "vectors") -> None:
        self.folder = folder
        self.embedder = embedder
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", embedder.model_id)
        self.path = folder / f"{name}-{safe}.vec" if folder is not None else None
        self.legacy_path = folder / f"{name}-{safe}.json" if folder is not None else None
        self._matrix: Matrix = np.zeros((0, embedder.dim))
        self._rows: dict[str, int] = {}  # hash -> row of _matrix
        self._fresh: dict[str, Vector] = {}  # embedded since the read, not in _matrix
        self._dropped: set[str] = set()  # rows of _matrix no longer wanted
        self._seen: tuple[int, int, int] | None = None  # the file this process read (or last wrote)
        self._known: set[str] = set()  # the rows it held: any other row on disk, another writer added
        self._read()
        self.embedded = 0  # how many texts the last call had to embed (0 when all were cached)

    # -- reading -------------------------------------------------------------------

    def _read(self) -> None:
        if self.path is None:
            return
        stamp = _stamp(self.path)
        if stamp is None:
            self._migrate()
            return
        cached = _PARSED.get(self.path)
        if cached is not None and cached[0] == stamp and cached[1] == self.embedder.model_id:
            self._matrix, self._rows = cached[2], dict(cached[3])
            self._seen, self._known = stamp, set(self._rows)
            return
        try:
            with open(self.path, "rb") as fh:
                before = os.fstat(fh.fileno())
                raw = fh.read()
        except OSError:
            return
        try:
            self._matrix, self._rows = _decode(raw, self.embedder.model_id, self.embedder.dim)
        except _Unusable as why:
            warnings.warn(f"{self.path}: {why}; its vectors are rebuilt", VectorIndexWarning, stacklevel=3)
            return
        self._seen, self._known = (before.st_mtime_ns, before.st_size, before.st_ino), set(self._rows)
        self._remember(self._seen)

    def _migrate(self) -> None:
        """Take the vectors of the JSON index earlier versions wrote, if it is sound."""
        assert self.legacy_path is not None
        try:
            data = json.loads(self.legacy_path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            return  # unreadable: simply rebuilt (and removed at the next save)
        if not isinstance(data, dict) or data.get("version") != _LEGACY_VERSION:
            return
        if data.get("model_id") != self.embedder.model_id or not isinstance(data.get("entries"), dict):
            return
        dim = self.embedder.dim
        good = {
            str(k): v
            for k, v in data["entries"].items()
            if isinstance(v, list) and len(v) == dim and all(isinstance(x, (int, float)) for x in v)
        }
        self._fresh = {k: [float(x) for x in v] for k, v in good.items()}

    def _remember(self, stamp: tuple[int, int, int]) -> None:
        assert self.path is not None
        if len(_PARSED) >= _PARSED_MAX and self.path not in _PARSED:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[self.path] = (stamp, self.embedder.model_id, self._matrix, dict(self._rows))

    # -- answering -----------------------------------------------------------------

    def _has(self, h: str) -> bool:
        return h in self._fresh or (h in self._rows and h not in self._dropped)

    def matrix(self, texts: Sequence[str], *, keep_only: bool = True) -> Matrix:
        """The vectors of ``texts`` as rows of one float64 matrix, embedding (in one batch)
        only the texts not cached yet. With ``keep_only`` the cache is pruned to exactly these
        texts before it is saved."""
        hashes = [content_hash(t) for t in texts]
        missing = sorted({h: t for h, t in zip(hashes, texts, strict=True) if not self._has(h)}.items())
        self.embedded = len(missing)
        if missing:
            fresh = self.embedder.embed([t for _, t in missing])
            for (h, _), vec in zip(missing, fresh, strict=True):
                self._fresh[h] = [float(x) for x in vec]
        changed = bool(missing) or bool(self._fresh) or (self.legacy_path is not None and self.legacy_path.exists())
        if keep_only:
            wanted = set(hashes)
            stale = [h for h in self._rows if h not in wanted and h not in self._dropped]
            self._dropped.update(stale)
            gone = [h for h in self._fresh if h not in wanted]
            for h in gone:
                del self._fresh[h]
            changed = changed or bool(stale) or bool(gone)
        if changed:
            self._compact()
            self._save()
        rows = [self._rows[h] for h in hashes]
        out: Matrix = self._matrix[rows] if rows else np.zeros((0, self.embedder.dim))
        return out

    def vectors(self, texts: Sequence[str], *, keep_only: bool = True) -> list[Vector]:
        """:meth:`matrix` as lists of floats, one per text."""
        rows: list[Vector] = self.matrix(texts, keep_only=keep_only).tolist()
        return rows

    def _compact(self) -> None:
        """Fold the fresh vectors in and the dropped rows out: one matrix again."""
        keep = [h for h in self._rows if h not in self._dropped]
        hashes = sorted(set(keep) | set(self._fresh))
        dim = self.embedder.dim
        matrix = np.zeros((len(hashes), dim), dtype=np.float64)
        for i, h in enumerate(hashes):
            matrix[i] = self._fresh[h] if h in self._fresh else self._matrix[self._rows[h]]
        matrix.flags.writeable = False
        self._matrix, self._rows = matrix, {h: i for i, h in enumerate(hashes)}
        self._fresh, self._dropped = {}, set()

    # -- writing -------------------------------------------------------------------

    def _merge_other_writers(self) -> None:
        """Keep the rows another process saved since this one read the file (see the module)."""
        assert self.path is not None
        stamp = _stamp(self.path)
        if stamp is None or stamp == self._seen:
            return
        try:
            matrix, rows = _decode(self.path.read_bytes(), self.embedder.model_id, self.embedder.dim)
        except (OSError, _Unusable):
            return  # nothing usable to keep: this save replaces it
        added = [h for h in rows if h not in self._known and h not in self._rows]
        if added:
            self._fresh = {h: [float(x) for x in matrix[rows[h]]] for h in added}
            self._compact()

    def _save(self) -> None:
        if self.path is None or self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n", encoding="utf-8")
            # Held until the new file is in place: one writer at a time merges and replaces.
            with open(self.path.with_suffix(".lock"), "ab") as guard:
                with contextlib.suppress(LockUnavailable):
                    lock(guard)
                self._merge_other_writers()
                hashes = sorted(self._rows, key=self._rows.__getitem__)
                data = _encode(self.embedder.model_id, self.embedder.dim, hashes, self._matrix)
                # A cache, rebuilt from the texts if lost: no fsync. Private to its user (0o600),
                # as the temporary file it has always been renamed from was.
                written = atomic_write(self.path, data, durable=False, mode=_FILE_MODE)
            # What this process just wrote is what the next reader here would parse.
            self._seen, self._known = (written.st_mtime_ns, written.st_size, written.st_ino), set(self._rows)
            self._remember(self._seen)
            if self.legacy_path is not None:
                self.legacy_path.unlink(missing_ok=True)  # migrated: the binary file replaces it
        except OSError:
            # A read-only checkout still selects; the cache is only an optimisation.
            return
