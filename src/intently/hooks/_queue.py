"""The queue of finished transcripts waiting for an incremental requirements scan.

Stop and SessionEnd hooks must return fast, so they only append to
``.intently/state/scan-queue.jsonl``. :meth:`ScanQueue.drain` runs the scan under an
exclusive, non-blocking lock on ``scan.lock``: a second drain of the same project while
one runs returns ``busy`` at once instead of scanning twice. Entries leave the queue only
after the scan returned, so a crash mid-scan loses nothing; and only the entries that scan
read: a transcript queued again while it runs (``Stop`` fires after every reply, so the
file grew after the scan read it) stays queued for the next one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import locks
from ..core.errors import InvalidInput
from ..core.files import atomic_write

__all__ = ["DrainReport", "ScanQueue"]


@dataclass(frozen=True)
class DrainReport:
    status: str  # "scanned", "empty", "busy", "unavailable"
    transcripts: tuple[str, ...] = ()
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "transcripts": list(self.transcripts), "detail": self.detail}


class ScanQueue:
    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "scan-queue.jsonl"
        self.lock_path = state_dir / "scan.lock"
        self._append_lock = state_dir / "scan-queue.lock"

    def enqueue(self, *, session_id: str, transcript_path: str, event: str, queued_at: str) -> bool:
        """Add a transcript unless it is already waiting; returns whether it was added."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self._append_lock, "a+") as lock:
            locks.lock(lock)
            waiting = any(e["transcript_path"] == transcript_path for e in self.entries())
            if waiting and not self._scanning():
                return False
            entry = {
                "session_id": session_id,
                "transcript_path": transcript_path,
                "event": event,
                "queued_at": queued_at,
            }
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
            return True

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        found: list[dict[str, Any]] = []
        for lineno, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                found.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"queue entry is not JSON: {exc}", where=f"{self.path}:{lineno}") from exc
        return found

    def drain(self, scan: Callable[[list[str]], Any] | None) -> DrainReport:
        """Scan every waiting transcript, one scan per project at a time."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "a+") as lock:
            if not locks.try_lock(lock):
                return DrainReport("busy", detail="another scan of this project is running")
            try:
                taken = self.entries()
                waiting = list(dict.fromkeys(str(e["transcript_path"]) for e in taken))
                if not waiting:
                    return DrainReport("empty")
                if scan is None:
                    return DrainReport(
                        "unavailable",
                        tuple(waiting),
                        "the requirements engine cannot be handed transcripts to scan in this build; they stay queued",
                    )
                scan(waiting)
                self._remove_first(len(taken))
                return DrainReport("scanned", tuple(waiting))
            finally:
                locks.unlock(lock)

    def _scanning(self) -> bool:
        """Whether a drain holds the scan lock right now (in any process)."""
        if not self.lock_path.exists():
            return False
        with open(self.lock_path, "a+") as probe:
            if not locks.try_lock(probe):
                return True
            locks.unlock(probe)
            return False

    def _remove_first(self, count: int) -> None:
        """Drop the entries a scan read: the first ``count`` (others only ever append)."""
        with open(self._append_lock, "a+") as lock:
            locks.lock(lock)
            keep = self.entries()[count:]
            atomic_write(self.path, "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in keep))
