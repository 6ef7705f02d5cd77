"""Check a weights file against its pinned SHA-256 once per file version, not once per process.

Every Claude Code prompt starts a new hook process, and each one that ranks rules by meaning
used to read and hash the 23 MB MiniLM file before loading it. The hash is still checked
before the first load of every version of the file, and the first load after any change to it;
what is remembered, in a small state file of the user's own, is only that the file at this
path with this size, modification time, inode, device and status-change time (``ctime``) was
found to have the pinned digest.

Why that is safe enough: ``ctime`` cannot be set by a user-space program, and it moves on any
write, rename over or permission change, so a replaced or edited file no longer matches and is
hashed again (and refused if its digest differs). Whoever can replace the weights without
moving any of those can also replace this code, which the digest does not protect either.
The state file is trusted only when it is a regular file owned by this user that nobody else
may write; otherwise, or when it cannot be read or written, the file is simply hashed, as
before: the memo can make a load cheaper, never let a different file through.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..core.files import atomic_write

__all__ = ["STATE_NAME", "read_verified", "state_dir"]

STATE_NAME = "verified-weights.json"


def state_dir() -> Path:
    """``$XDG_CACHE_HOME/intently`` (``~/.cache/intently`` by default): per user, not per home,
    since the weights are installed once for every home."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "intently"


def _key(st: os.stat_result) -> str:
    return f"{st.st_size}|{st.st_mtime_ns}|{st.st_ino}|{st.st_dev}|{st.st_ctime_ns}"


def _trusted(state: Path) -> dict[str, str]:
    """The remembered digests, or nothing when the file is missing, unreadable or could have
    been written by someone else."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # Windows: owner and mode say nothing here, so nothing is taken as verified
        return {}
    try:
        with open(state, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not (st.st_mode & 0o170000 == 0o100000 and st.st_uid == getuid() and not st.st_mode & 0o022):
                return {}
            data = json.loads(fh.read())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _remember(state: Path, path: Path, key: str, digest: str) -> None:
    """Remember one verified version per path (atomically: a reader sees the old state file or
    the new one)."""
    try:
        state.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        known = _trusted(state)
        known[str(path)] = f"{key}|{digest}"
        # 0o600 whatever the old file's mode: _trusted refuses a file others can write. No
        # fsync: a torn memo is read as no memo, and the weights are hashed again.
        atomic_write(state, json.dumps(known), durable=False, mode=0o600)
    except OSError:
        return  # no memo: the next process hashes the file again, as before


def read_verified(path: Path, pinned: str) -> tuple[bytes, str]:
    """The file's bytes and their SHA-256, from one read: what is checked is what is loaded.

    The digest is ``pinned`` without hashing when this very version of the file was found to
    have it before, here judged by the open file's own status before
    and after the read (unchanged meanwhile); else the bytes read are hashed, and the digest
    remembered when it is ``pinned``. Hashing a path and then handing the path to a loader
    read the 23 MB weights twice on a first load, and a file replaced between the two reads
    would have been loaded unchecked."""
    resolved = path.resolve()
    with open(resolved, "rb") as fh:
        key = _key(os.fstat(fh.fileno()))
        data = fh.read()
        unchanged = _key(os.fstat(fh.fileno())) == key
    state = state_dir() / STATE_NAME
    if unchanged and _trusted(state).get(str(resolved)) == f"{key}|{pinned}":
        return data, pinned
    hexdigest = hashlib.sha256(data).hexdigest()
    if hexdigest == pinned and unchanged:
        _remember(state, resolved, key, hexdigest)
    return data, hexdigest
