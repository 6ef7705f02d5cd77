"""The log's view of the requirement files: what it last saw, and every change it made or noticed.

The files are the source of truth; the table ``requirements_seen`` only remembers the
content hash of each file as last written or observed, so that a file edited by hand or
pulled with git is recorded as ``REQ_OUTSIDE_CHANGE`` (old and new hash) the next time
requirements load. Every write goes through :func:`write_file`: the log operation, the
table update and the file replacement happen in one transaction.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..access import Permission
from ..core.actors import SYSTEM
from ..core.errors import ConflictError
from ..log import Operation, register_applier
from ..store import Transaction, register_migration
from ._files import FileError, atomic_write, file_hash, parse_requirement

if TYPE_CHECKING:
    from .._runtime import Runtime
    from ._model import Requirement

__all__ = [
    "POLICY_VERSION",
    "Change",
    "hand_edited",
    "hand_reviewed",
    "observe",
    "record",
    "subject_hash",
    "write_files",
]

POLICY_VERSION = "requirements@1"

register_migration(
    "requirements",
    1,
    "CREATE TABLE requirements_seen (namespace TEXT NOT NULL, file TEXT NOT NULL, content_hash TEXT NOT NULL, "
    "status TEXT NOT NULL, seen_at TEXT NOT NULL, PRIMARY KEY (namespace, file))",
    description="content hash of each requirement file as last written or observed",
)
register_migration(
    "requirements",
    2,
    "ALTER TABLE requirements_seen ADD COLUMN subject_hash TEXT NOT NULL DEFAULT ''",
    description="hash of the statement and scope intently last wrote, to tell a person's edit of them",
)


@dataclass(frozen=True)
class Change:
    """One file to write: its path relative to the home, new text, and what the op records."""

    file: str
    text: str
    op: str  # REQ_CREATE | REQ_UPDATE | REQ_STATUS | DOMAINS_UPDATE | SCAN_STATE
    target: str
    status: str = ""
    detail: dict[str, Any] | None = None
    # The content hash of the file this text was built from. When set and the file on disk
    # no longer has it, another writer got there first: the batch is refused, not merged.
    base: str | None = None


def _seen(tx: Transaction, namespace: str) -> dict[str, str]:
    rows = tx.query("SELECT file, content_hash FROM requirements_seen WHERE namespace = ?", (namespace,))
    return {str(r["file"]): str(r["content_hash"]) for r in rows}


def observe(rt: Runtime, current: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """Log every tracked file whose hash differs from what the store last saw.

    ``current`` maps a home-relative file name to ``(content_hash, status)``. Files that
    vanished are logged with ``new_hash: null``. Returns the recorded changes.
    """
    with rt.store.transaction(write=False) as tx:
        seen = _seen(tx, rt.namespace)
    if all(seen.get(f) == h for f, (h, _) in current.items()) and set(seen) <= set(current):
        return []
    changes: list[dict[str, Any]] = []
    with rt.store.transaction() as tx:
        seen = _seen(tx, rt.namespace)  # again, under the write lock
        for name in sorted(set(current) | set(seen)):
            new = current.get(name)
            old = seen.get(name)
            if new is not None and new[0] == old:
                continue
            payload = {
                "file": name,
                "old_hash": old,
                "new_hash": new[0] if new else None,
                "status": new[1] if new else "",
                "observed_by": str(rt.actor),
            }
            op = rt.log.append(
                tx,
                namespace=rt.namespace,
                actor=str(SYSTEM),
                op="REQ_OUTSIDE_CHANGE",
                target=name,
                payload=payload,
                policy_version=POLICY_VERSION,
            )
            _apply_seen(tx, op)
            changes.append(payload)
    return changes


def subject_hash(req: Requirement) -> str:
    """A hash of what ``user_edited`` protects: the statement and the scope."""
    scope = json.dumps(req.scope.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(f"{req.statement}\0{scope}".encode()).hexdigest()


def _text_subject(file: str, text: str) -> str:
    if not file.rsplit("/", 1)[-1].startswith("req-"):
        return ""
    parsed = parse_requirement(Path(file), text.encode("utf-8"), display=file)
    return "" if isinstance(parsed, FileError) else subject_hash(parsed)


def hand_edited(rt: Runtime, reqs: dict[str, Requirement]) -> list[str]:
    """The files (home-relative names, keys of ``reqs``) of requirements not yet
    ``user_edited`` whose statement or scope differs from what intently last wrote there: a
    person changed them in an editor (or pulled such a change). A file intently never wrote
    with a known subject (an older log) is not guessed at."""
    with rt.store.transaction(write=False) as tx:
        rows = tx.query("SELECT file, subject_hash FROM requirements_seen WHERE namespace = ?", (rt.namespace,))
    known = {str(r["file"]): str(r["subject_hash"] or "") for r in rows}
    return [
        name
        for name, req in reqs.items()
        if not req.meta.user_edited and known.get(name) and known[name] != subject_hash(req)
    ]


def hand_reviewed(rt: Runtime, reqs: dict[str, Requirement]) -> list[str]:
    """The files (home-relative names, keys of ``reqs``) of rules intently last wrote as
    ``proposed`` whose file now says otherwise: a review made in the file itself (an editor,
    or pulled with git) that no logged review has recorded yet. ``requirements_seen.status``
    keeps what intently last wrote (an outside change does not move it), so the proposal is
    still known as one however many loads observed the edit meanwhile."""
    with rt.store.transaction(write=False) as tx:
        rows = tx.query(
            "SELECT file FROM requirements_seen WHERE namespace = ? AND status = 'proposed'", (rt.namespace,)
        )
    proposed = {str(r["file"]) for r in rows}
    return [name for name, req in reqs.items() if name in proposed and req.status != "proposed"]


def write_files(rt: Runtime, changes: list[Change], *, summary: tuple[str, dict[str, Any]] | None = None) -> None:
    """Write every change and log it, all in one transaction.

    Each new text goes to a temp file first; only when every op is appended are the temp
    files moved into place, and a failure before the commit restores the old contents, so
    an interrupted batch leaves the previous state.
    """
    home = rt.home.path
    originals: dict[Path, bytes | None] = {}
    with rt.store.transaction() as tx:
        rt.access.require(rt.actor, rt.namespace, Permission.WRITE, tx)
        seen = _seen(tx, rt.namespace)
        try:
            for change in changes:
                path = home / change.file
                old_raw = path.read_bytes() if path.exists() else None
                if change.base is not None and (old_raw is None or file_hash(old_raw) != change.base):
                    raise ConflictError(
                        f"{change.file}: changed after it was read (by another writer or by hand); re-read it and retry"
                    )
                originals.setdefault(path, old_raw)
                log_file_change(rt, tx, change, seen, namespace=rt.namespace, actor=str(rt.actor))
                atomic_write(path, change.text)
            if summary is not None:
                record(rt, tx, summary[0], target=rt.namespace, payload=summary[1])
        except BaseException:
            for path, raw in originals.items():
                if raw is None:
                    path.unlink(missing_ok=True)
                else:
                    atomic_write(path, raw.decode("utf-8"))
            raise


def log_file_change(
    rt: Runtime, tx: Transaction, change: Change, seen: dict[str, str], *, namespace: str, actor: str
) -> None:
    """Append the operation for one requirement-file change (old and new content hash) and
    apply it to ``requirements_seen``; ``seen`` is updated so a second change of the same file
    in one batch names the right old hash."""
    new_hash = file_hash(change.text.encode("utf-8"))
    payload: dict[str, Any] = {
        "file": change.file,
        "old_hash": seen.get(change.file),
        "new_hash": new_hash,
        "status": change.status,
    }
    if change.op in ("REQ_CREATE", "REQ_UPDATE", "REQ_STATUS"):
        subject = _text_subject(change.file, change.text)
        if subject:
            payload["subject_hash"] = subject
    if change.detail:
        payload["detail"] = change.detail
    op = rt.log.append(
        tx,
        namespace=namespace,
        actor=actor,
        op=change.op,
        target=change.target,
        payload=payload,
        policy_version=POLICY_VERSION,
    )
    _apply_seen(tx, op)
    seen[change.file] = new_hash


def record(rt: Runtime, tx: Transaction, op: str, *, target: str, payload: dict[str, Any]) -> Operation:
    """Append a record-only operation (injections, scan summaries)."""
    return rt.log.append(
        tx,
        namespace=rt.namespace,
        actor=str(rt.actor),
        op=op,
        target=target,
        payload=payload,
        policy_version=POLICY_VERSION,
    )


def _apply_seen(tx: Transaction, op: Operation) -> None:
    new_hash = op.payload.get("new_hash")
    if new_hash is None:
        tx.execute("DELETE FROM requirements_seen WHERE namespace = ? AND file = ?", (op.stream, op.payload["file"]))
        return
    # An outside change keeps the subject and the status intently last wrote, so a person's
    # edit of the statement or scope (see hand_edited), or of a proposal's status (see
    # hand_reviewed), stays visible until intently records it. A file first seen from outside
    # (pulled with git) has nothing to keep: its own status is the one known.
    outside = op.op == "REQ_OUTSIDE_CHANGE"
    subject = "" if outside else str(op.payload.get("subject_hash") or "")
    keep = "requirements_seen.subject_hash" if outside else "excluded.subject_hash"
    keep_status = "requirements_seen.status" if outside else "excluded.status"
    tx.execute(
        "INSERT INTO requirements_seen (namespace, file, content_hash, status, seen_at, subject_hash) "
        "VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (namespace, file) DO UPDATE SET content_hash = excluded.content_hash, "
        f"status = {keep_status}, seen_at = excluded.seen_at, subject_hash = {keep}",
        (op.stream, op.payload["file"], new_hash, op.payload.get("status") or "", op.time, subject),
    )


for _op in ("REQ_CREATE", "REQ_UPDATE", "REQ_STATUS", "REQ_OUTSIDE_CHANGE", "DOMAINS_UPDATE", "SCAN_STATE"):
    register_applier(_op, _apply_seen)
register_applier("REQ_INJECTED", None)
register_applier("REQ_SCAN", None)
