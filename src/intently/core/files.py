"""Replacing a file atomically: readers see the old bytes or the new, never half of either.

Every file intently rewrites in place (requirement files, the witness, the keyring, the trigger
snapshot, the hook queue and session records, Claude Code's settings, the vector index, the
record of verified model weights) goes through here: a uniquely named temporary file beside
the target, so two processes never write the same one, removed again if anything fails; the
target's permissions kept, or set when the caller names them (where the platform has POSIX
modes); then one rename.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["atomic_write"]

_NEW_FILE_MODE = 0o644  # what the hand-written replaces gave new files under the usual umask


def atomic_write(
    path: Path, data: str | bytes | Iterable[bytes], *, durable: bool = True, mode: int | None = None
) -> os.stat_result:
    """Write ``data`` (text as UTF-8 with ``\\n`` line ends, or chunks of bytes written one after
    another, so a large body need not be joined in memory first) to ``path`` in one rename.

    ``durable`` fsyncs the content before the rename, so a crash cannot leave an empty file
    behind the new name; callers on a per-call hot path whose file is rebuilt anyway pass
    ``False``.

    ``mode``: the permission bits the file gets whatever it had before (a private file, such as
    the record of verified weights that is trusted only while no one else can write it, or a
    per-user cache, is 0o600 however it was created); by default an existing file keeps its own.

    Returns the status of the file as written (taken from the open file, before the rename),
    so a caller that remembers what it wrote (size, mtime, inode) remembers this write and not
    one another process made meanwhile.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = _NEW_FILE_MODE
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in _chunks(data):
                fh.write(chunk)
            if hasattr(os, "fchmod"):  # Windows before Python 3.13 has none, and no mode bits to keep
                os.fchmod(fh.fileno(), mode)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
            written = os.fstat(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return written


def _chunks(data: str | bytes | Iterable[bytes]) -> Iterable[bytes]:
    if isinstance(data, str):
        return (data.encode("utf-8"),)
    if isinstance(data, bytes):
        return (data,)
    return data
