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
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import __version__
from ..core.files import atomic_write
from ._model import Frontmatter, Requirement

__all__ = ["CACHE_FILE", "ParseCache"]

CACHE_FILE = "requirements-parse.json"
#: Bumped when what a parse yields changes shape; with the package version in the file, an
#: upgrade never reads entries an older parser (or model) wrote.
_FORMAT = 1


class ParseCache:
    """The entries of one cache file; :meth:`save` keeps only those used since it was read."""

    def __init__(self, folder: Path) -> None:
        self._path = folder / CACHE_FILE
        self._stamp = {"format": _FORMAT, "intently": __version__}
        self._old: dict[str, Any] = {}
        self._used: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self._path.read_bytes())
            if isinstance(data, dict) and all(data.get(k) == v for k, v in self._stamp.items()):
                entries = data.get("entries")
                self._old = entries if isinstance(entries, dict) else {}

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
        self._used[self._key(name, req.content_hash)] = {
            "meta": req.meta.model_dump(mode="json"),
            "statement": req.statement,
            "rationale": req.rationale,
        }

    def save(self) -> None:
        """Write the entries this load used, if they differ from what was read."""
        if self._used.keys() == self._old.keys():
            return
        with contextlib.suppress(OSError):
            self._path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self._path, json.dumps({**self._stamp, "entries": self._used}, separators=(",", ":")))
