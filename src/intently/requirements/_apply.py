"""Crash-proof apply of a batch of requirement files (what a scan writes).

A scan changes many files at once (new requirements, status and evidence updates,
``domains.yaml``, ``scan-state.yaml``). Renaming one file is atomic; renaming ten is not,
so a hard kill between two renames would leave a half-applied scan. The batch is therefore
journaled, under the store's write lock:

1. **stage**: every new text is written and fsynced under ``state/req-apply/<batch>/new/``
   (the current contents are copied to ``old/`` for an in-process rollback);
2. **journal**: ``journal.json`` names every rename and every log operation, written to a
   temp file, fsynced and renamed: from now on the batch is complete and will be finished;
3. **rename** each staged file into place;
4. **log** the operations (one transaction; they update ``requirements_seen``);
5. **clean up**: delete the journal and the staging folder.

:func:`recover` runs before requirements load and before a scan applies: a batch folder
without a journal died while staging and is discarded (the old state stands); one with a
journal is rolled forward: the remaining renames are done and, unless ``requirements_seen``
already holds every new hash (the log committed before the kill), the operations are
logged. Either way the home is entirely old or entirely new, and the log matches it.

``INTENTLY_REQ_APPLY_CRASH`` (``staged``, ``journal``, ``rename:N``, ``renamed``,
``logged``) makes the process ``os._exit`` at that point; the tests kill real processes
with it, since a hard kill is the case no ``try``/``except`` can cover.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..access import Permission
from ..store import Transaction
from ._files import file_hash
from ._load import RequirementFileWarning
from ._store import POLICY_VERSION, Change, _seen, log_file_change

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["CRASH_ENV", "STAGING", "apply_changes", "recover"]

CRASH_ENV = "INTENTLY_REQ_APPLY_CRASH"
STAGING = "req-apply"  # under the home's state/ folder (git-ignored, same file system)
JOURNAL = "journal.json"


@dataclass(frozen=True)
class _Entry:
    """One rename of the batch: ``new/<n>`` onto ``file`` (home-relative)."""

    file: str
    staged: str
    backup: str | None  # ``old/<n>`` when the file existed
    new_hash: str


def _crash_point(name: str) -> None:
    if os.environ.get(CRASH_ENV) == name:
        os._exit(86)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # platforms without directory handles
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_synced(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _staging_root(rt: Runtime) -> Path:
    return rt.home.state_dir / STAGING


def apply_changes(
    rt: Runtime,
    changes: list[Change],
    *,
    summary: tuple[str, dict[str, Any]] | None = None,
    commit: tuple[Path, str] | None = None,
) -> None:
    """Write ``changes`` all-or-nothing, even across a hard kill, and log them afterwards.

    ``commit`` (project root, message) is recorded in the journal so that a rolled-forward
    batch is committed to git like an uninterrupted one; the caller commits in the normal case.
    An exception restores the previous files and logs nothing.
    """
    recover(rt)  # finish or discard what an earlier crash left before building on it
    home = rt.home.path
    batch = _staging_root(rt) / f"{time.time_ns():020d}-{os.getpid()}"
    with rt.store.transaction() as tx:
        rt.access.require(rt.actor, rt.namespace, Permission.WRITE, tx)
        entries: list[_Entry] = []
        journaled = False
        renamed: list[_Entry] = []
        try:
            for n, change in enumerate(changes):
                target = home / change.file
                data = change.text.encode("utf-8")
                _write_synced(batch / "new" / str(n), data)
                backup = None
                if target.is_file():
                    backup = f"old/{n}"
                    _write_synced(batch / backup, target.read_bytes())
                entries.append(_Entry(change.file, f"new/{n}", backup, file_hash(data)))
            _fsync_dir(batch / "new")
            _crash_point("staged")
            journal = {
                "version": 1,
                "namespace": rt.namespace,
                "actor": str(rt.actor),
                "entries": [asdict(e) for e in entries],
                "changes": [asdict(c) for c in changes],
                "summary": list(summary) if summary is not None else None,
                "commit": [str(commit[0]), commit[1]] if commit is not None else None,
            }
            tmp = batch / (JOURNAL + ".tmp")
            _write_synced(tmp, json.dumps(journal, sort_keys=True).encode("utf-8"))
            os.replace(tmp, batch / JOURNAL)
            _fsync_dir(batch)
            journaled = True
            _crash_point("journal")
            for i, entry in enumerate(entries, start=1):
                _rename_into_place(home, batch, entry)
                renamed.append(entry)
                _crash_point(f"rename:{i}")
            _crash_point("renamed")
            _log(rt, tx, rt.namespace, str(rt.actor), changes, summary)
        except BaseException:
            if journaled:
                _roll_back(home, batch, renamed)
            shutil.rmtree(batch, ignore_errors=True)
            raise
    _crash_point("logged")
    shutil.rmtree(batch, ignore_errors=True)


def _rename_into_place(home: Path, batch: Path, entry: _Entry) -> None:
    target = home / entry.file
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(batch / entry.staged, target)
    _fsync_dir(target.parent)


def _roll_back(home: Path, batch: Path, renamed: list[_Entry]) -> None:
    """Put back what the renamed entries replaced (an in-process failure, or a bad roll-forward)."""
    for entry in reversed(renamed):
        target = home / entry.file
        if entry.backup is None:
            target.unlink(missing_ok=True)
        else:
            tmp = target.with_name(f".{target.name}.restore.tmp")
            _write_synced(tmp, (batch / entry.backup).read_bytes())
            os.replace(tmp, target)
        _fsync_dir(target.parent)


def _log(
    rt: Runtime,
    tx: Transaction,
    namespace: str,
    actor: str,
    changes: list[Change],
    summary: tuple[str, dict[str, Any]] | None,
) -> None:
    seen = _seen(tx, namespace)
    for change in changes:
        log_file_change(rt, tx, change, seen, namespace=namespace, actor=actor)
    if summary is not None:
        rt.log.append(
            tx,
            namespace=namespace,
            actor=actor,
            op=summary[0],
            target=namespace,
            payload=summary[1],
            policy_version=POLICY_VERSION,
        )


def recover(rt: Runtime) -> list[str]:
    """Finish or discard every batch a killed process left; returns what was done, one line
    per batch (``rolled forward <batch>`` / ``discarded <batch>``). Cheap when nothing is left."""
    root = _staging_root(rt)
    if not root.is_dir() or not any(root.iterdir()):
        return []
    done: list[str] = []
    commits: list[tuple[Path, str]] = []
    with rt.store.transaction() as tx:  # the write lock: no live apply is mid-way now
        for batch in sorted(p for p in root.iterdir() if p.is_dir()):
            journal_path = batch / JOURNAL
            if not journal_path.is_file():
                shutil.rmtree(batch, ignore_errors=True)
                done.append(f"discarded {batch.name}")
                continue
            try:
                journal = json.loads(journal_path.read_text(encoding="utf-8"))
                entries = [_Entry(**e) for e in journal["entries"]]
                changes = [Change(**c) for c in journal["changes"]]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                warnings.warn(
                    f"skipped {journal_path}: unreadable apply journal ({exc}); left for a person to inspect",
                    RequirementFileWarning,
                    stacklevel=2,
                )
                continue
            if _roll_forward(rt, tx, batch, journal, entries, changes):
                done.append(f"rolled forward {batch.name}")
                if journal.get("commit"):
                    commits.append((Path(journal["commit"][0]), str(journal["commit"][1])))
            else:
                done.append(f"rolled back {batch.name}")
    for batch in sorted(p for p in root.iterdir() if p.is_dir() and (p / JOURNAL).is_file()):
        if any(batch.name in line for line in done):
            shutil.rmtree(batch, ignore_errors=True)
    if commits:
        from ._scan import _git_commit  # the scan owns the commit rule (only .intently/ paths)

        for project, message in commits:
            _git_commit(project, rt.home.path, message)
    return done


def _roll_forward(
    rt: Runtime, tx: Transaction, batch: Path, journal: dict[str, Any], entries: list[_Entry], changes: list[Change]
) -> bool:
    """Do the renames the journal names that are still staged, then log the batch unless the
    log already has it. A rename that cannot be done puts back every file and logs nothing."""
    home = rt.home.path
    renamed: list[_Entry] = []
    try:
        for entry in entries:
            if (batch / entry.staged).is_file():
                _rename_into_place(home, batch, entry)
            renamed.append(entry)
    except OSError as exc:
        _roll_back(home, batch, [e for e in renamed if e.backup is None or (batch / e.backup).is_file()])
        warnings.warn(
            f"could not finish an interrupted requirements apply ({exc}); the previous files were restored",
            RequirementFileWarning,
            stacklevel=3,
        )
        return False
    namespace = str(journal["namespace"])
    seen = _seen(tx, namespace)
    if not all(seen.get(e.file) == e.new_hash for e in entries):
        raw = journal.get("summary")
        summary = None
        if raw:
            summary = (str(raw[0]), {**dict(raw[1]), "recovered": True})
        _log(rt, tx, namespace, str(journal["actor"]), changes, summary)
    return True
