"""Loading the requirement files of a home: every good file, every problem, nothing silent."""

from __future__ import annotations

import contextlib
import os
import stat
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.config import Home
from ._files import FileError, file_hash, parse_domains, parse_requirement
from ._model import Domain, Requirement
from ._parsecache import ParseCache

__all__ = ["DOMAINS_FILE", "SCAN_STATE_FILE", "LoadResult", "RequirementFileWarning", "load_home", "rel"]

DOMAINS_FILE = "domains.yaml"
SCAN_STATE_FILE = "scan-state.yaml"


class RequirementFileWarning(UserWarning):
    """A requirement file or domains.yaml was skipped; the rest still load."""


@dataclass
class LoadResult:
    requirements: list[Requirement] = field(default_factory=list)
    domains: list[Domain] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    hashes: dict[str, tuple[str, str]] = field(default_factory=dict)  # home-relative file -> (hash, status)
    domains_data: Any = None
    # Rules a person reviewed in the file (proposed -> the status here) that no logged review
    # has recorded yet: shown as still proposed (never injected) until one does.
    held: dict[str, str] = field(default_factory=dict)

    def by_id(self) -> dict[str, Requirement]:
        return {r.id: r for r in self.requirements}


def rel(home: Home, path: Path) -> str:
    return path.resolve().relative_to(home.path).as_posix()


def _rule_files(folder: Path) -> list[tuple[Path, os.stat_result | None]]:
    """Each ``req-*.md`` entry of ``folder`` in name order, with its ``lstat`` when the listing
    had it (``None``: :func:`_stat` asks again and names the problem).

    One ``scandir`` instead of ``glob`` then a sort of paths and an ``lstat`` per path: at
    2,000 rules 30 ms of every command instead of 47-52 ms. The names are those that
    ``glob("req-*.md")`` matched (case-sensitive, any entry: a folder or a symlink is still
    reported by :func:`_stat`), and name order is the order sorted paths of one folder had.
    """
    entries: list[tuple[str, os.stat_result | None]] = []
    with os.scandir(folder) as listing:
        for entry in listing:
            name = entry.name
            if name.startswith("req-") and name.endswith(".md"):
                try:
                    st: os.stat_result | None = entry.stat(follow_symlinks=False)
                except OSError:
                    st = None
                entries.append((name, st))
    entries.sort(key=lambda e: e[0])
    return [(folder / name, st) for name, st in entries]


def _stat(path: Path, name: str, errors: list[FileError]) -> os.stat_result | None:
    """The stat of one plain file, or ``None`` with an error naming it. A folder or a symlink
    where a file belongs is one bad entry: it must not stop every other rule from loading (it
    did: the whole command failed with an internal error). A symlink is refused whatever its
    target: the file's name is its id, every write replaces it in place, and one pointing
    outside the home has no home-relative name to log."""
    try:
        st = path.lstat()
    except OSError as exc:
        errors.append(FileError(name, None, None, f"cannot be read: {exc.strerror or exc}"))
        return None
    if not stat.S_ISREG(st.st_mode):
        kind = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        errors.append(FileError(name, None, None, f"{kind}; it must be a plain file inside the home"))
        return None
    return st


def _read(path: Path, name: str, errors: list[FileError]) -> bytes | None:
    """The bytes of one plain file, or ``None`` with an error naming it (see :func:`_stat`)."""
    if _stat(path, name, errors) is None:
        return None
    try:
        return path.read_bytes()
    except OSError as exc:
        errors.append(FileError(name, None, None, f"cannot be read: {exc.strerror or exc}"))
        return None


def load_home(home: Home, *, warn: bool = True) -> LoadResult:
    """Parse ``requirements/req-*.md`` and ``domains.yaml``; bad files become errors (and a warning)."""
    result = LoadResult()
    folder = home.requirements_dir
    loaded: list[Requirement] = []
    if folder.is_dir():
        prefix = rel(home, folder)
        cache = ParseCache(home.index_dir)
        for path, listed in _rule_files(folder):
            name = f"{prefix}/{path.name}"
            st = listed if listed is not None and stat.S_ISREG(listed.st_mode) else _stat(path, name, result.errors)
            if st is None:
                continue
            # Unchanged since the last load (same stat): its parse, without reading it.
            known = cache.known_hash(name, st)
            parsed = cache.get(name, known, path) if known else None
            if parsed is None:
                raw = _read(path, name, result.errors)
                if raw is None:
                    continue
                digest = file_hash(raw)
                fresh = cache.get(name, digest, path) or parse_requirement(path, raw, display=name)
                if isinstance(fresh, FileError):
                    result.errors.append(fresh)
                    result.hashes[name] = (digest, "invalid")
                    continue
                parsed = fresh
            cache.put(name, parsed)
            cache.note(name, st, parsed.content_hash)
            loaded.append(parsed)
            result.hashes[name] = (parsed.content_hash, parsed.status)
        cache.save()
    ids: dict[str, Requirement] = {}
    for req in loaded:
        if req.id in ids:
            result.errors.append(FileError(rel(home, req.path), None, "id", f"duplicate id {req.id}"))
            continue
        ids[req.id] = req
    ordered = sorted(ids.values(), key=lambda r: (r.meta.created, r.id))
    result.requirements = [replace(r, order=i) for i, r in enumerate(ordered)]
    dom_path = home.path / DOMAINS_FILE
    raw = _read(dom_path, DOMAINS_FILE, result.errors) if dom_path.exists() or dom_path.is_symlink() else None
    if raw is not None:
        domains, data, error = parse_domains(dom_path, raw)
        result.domains, result.domains_data = domains, data
        result.hashes[DOMAINS_FILE] = (file_hash(raw), "invalid" if error else "ok")
        if error is not None:
            result.errors.append(FileError(DOMAINS_FILE, error.line, error.field, error.message))
    state = home.path / SCAN_STATE_FILE
    if state.is_file():
        with contextlib.suppress(OSError):  # unreadable: the scan that needs it says so
            result.hashes[SCAN_STATE_FILE] = (file_hash(state.read_bytes()), "ok")
    if warn:
        for error in result.errors:
            warnings.warn(f"skipped {error}", RequirementFileWarning, stacklevel=3)
    return result
