"""Parsed requirement files kept on disk between processes, keyed by file name and content.

Round-trip YAML costs about ten milliseconds a file, and every command loads every rule
file: with 2,000 rules ``intently req list`` took 45 s, ``req add`` 50 s and a context
block (``req preview``, every prompt a hook answers) nearly a minute, each a new process
re-parsing files that had not changed; the in-process parse cache only helps a server.
So a load keeps, in ``index/requirements-parse.json`` (runtime state, never committed),
the validated front matter and body of each good file under its home-relative name and
the SHA-256 of its exact bytes. A file whose bytes changed has another key and is parsed
again; a file that did not parse is never kept (its error is re-derived, with its line).
The cache only ever answers with what the parser produced for those same bytes, so it is
a cache like the vector index beside it: delete it and the next load rebuilds it. An
unreadable or foreign cache file is ignored, and one that cannot be written (a read-only
home) is skipped: loading never fails because of it.

Reading and hashing every file still cost each command most of a second at 2,000 rules,
so the cache also keeps each file's stat as git's index does: size, mtime, ctime and inode,
with the hash of the bytes read under that stat. A file whose stat is the same is not read
again. Any write changes the ctime (even one that puts the old mtime back, and a same-size
edit in place), and a ``git checkout`` or an atomic rename a new inode. Two guards keep a
write that lands in the same timestamp tick as the read from hiding behind an equal stat
(racy timestamps): a stat is kept only for a file last changed :data:`SETTLED_NS` before
the load began (coarser than any file system's timestamps), and a file whose mtime or ctime
is not older than the cache file's own write is hashed again whatever its stat.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import __version__
from ..core.files import atomic_write
from ._model import Frontmatter, Requirement

__all__ = ["CACHE_FILE", "SETTLED_NS", "ParseCache"]

CACHE_FILE = "requirements-parse.json"
#: Bumped when what a parse yields changes shape; with the package version in the file, an
#: upgrade never reads entries an older parser (or model) wrote.
_FORMAT = 2
#: How long ago a file must have last changed for its stat to be trusted next time: more than
#: the coarsest timestamps a home may sit on (2 s on FAT), so no later write can share its mtime.
SETTLED_NS = 3_000_000_000


class ParseCache:
    """The entries of one cache file; :meth:`save` keeps only those used since it was read."""

    def __init__(self, folder: Path) -> None:
        self._path = folder / CACHE_FILE
        self._stamp = {"format": _FORMAT, "intently": __version__}
        self._old: dict[str, Any] = {}
        self._used: dict[str, Any] = {}
        self._stats_old: dict[str, Any] = {}
        self._stats: dict[str, list[int | str]] = {}
        self._written_ns = 0  # the cache file's mtime: when the stats in it were taken, at the latest
        self._settled_before = time.time_ns() - SETTLED_NS
        with contextlib.suppress(OSError, ValueError), open(self._path, "rb") as fh:
            written = os.fstat(fh.fileno()).st_mtime_ns
            data = json.loads(fh.read())
            if isinstance(data, dict) and all(data.get(k) == v for k, v in self._stamp.items()):
                entries, stats = data.get("entries"), data.get("stats")
                self._old = entries if isinstance(entries, dict) else {}
                self._stats_old = stats if isinstance(stats, dict) else {}
                self._written_ns = written

    @staticmethod
    def _signature(st: os.stat_result) -> list[int | str]:
        return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]

    def known_hash(self, name: str, st: os.stat_result) -> str | None:
        """The content hash of ``name`` read when it had exactly the stat ``st``, when that
        stat can be trusted to mean the same bytes; else ``None`` (read and hash the file)."""
        entry = self._stats_old.get(name)
        sig = self._signature(st)
        if not isinstance(entry, list) or len(entry) != len(sig) + 1 or entry[:-1] != sig:
            return None
        if max(st.st_mtime_ns, st.st_ctime_ns) >= self._written_ns:
            return None  # racy: changed in the tick the cache was written; the bytes decide
        return str(entry[-1])

    def note(self, name: str, st: os.stat_result, content_hash: str) -> None:
        """Remember that ``name`` held the bytes hashing to ``content_hash`` under the stat
        ``st`` (taken before they were read), unless it changed too recently to trust."""
        if max(st.st_mtime_ns, st.st_ctime_ns) < self._settled_before:
            self._stats[name] = [*self._signature(st), content_hash]

    @staticmethod
    def _key(name: str, content_hash: str) -> str:
        return f"{name}\n{content_hash}"

    def get(self, name: str, content_hash: str, path: Path) -> Requirement | None:
        """The requirement parsed before from exactly these bytes under this name, or ``None``."""
        key = self._key(name, content_hash)
        entry = self._old.get(key)
        if not isinstance(entry, dict):
            return None
        try:
            meta = Frontmatter.model_validate(entry["meta"])
            statement, rationale = str(entry["statement"]), str(entry["rationale"])
        except (KeyError, TypeError, ValidationError):
            return None
        self._used[key] = entry
        return Requirement(meta=meta, statement=statement, rationale=rationale, path=path, content_hash=content_hash)

    def put(self, name: str, req: Requirement) -> None:
        key = self._key(name, req.content_hash)
        if key in self._used:
            return  # served by :meth:`get`: the entry read is the one to keep (dumping it again cost 0.5 s)
        self._used[key] = {
            "meta": req.meta.model_dump(mode="json"),
            "statement": req.statement,
            "rationale": req.rationale,
        }

    def save(self) -> None:
        """Write the entries and stats this load used, if they differ from what was read."""
        if self._used.keys() == self._old.keys() and self._stats == self._stats_old:
            return
        with contextlib.suppress(OSError):
            self._path.parent.mkdir(parents=True, exist_ok=True)
            data = {**self._stamp, "entries": self._used, "stats": self._stats}
            atomic_write(self._path, json.dumps(data, separators=(",", ":")))
