"""Requirements scans run off the request, one at a time per namespace, and report as they go.

A scan can take long (git history, documents, transcripts), so "Scan now" starts it in a
background thread and answers at once with the job's page; the page polls the job (or,
without JavaScript, reloads itself) until the scan is done. The job only reports: the
scan writes through the engine and the log as ``intently req scan`` does.

Under ``serve --workers N`` each request may land on another process, so a job that lived
only in the memory of the process that started it answered "no scan" (404) to every poll
the other workers received, and a second worker started a second scan. A registry given a
folder (the console's: ``.intently/state/console-scans/``) therefore writes each job's state
there as it changes (atomically, one small JSON file per job, progress at most a few times
a second) and reads a job it does not hold from there; a job still marked running whose
process is gone is reported failed, not running forever. Looking for a running job and
recording a new one happen under one lock file in that folder, so two workers pressed at
the same instant start one scan, not two.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..core import locks
from ..core.errors import IntentlyError
from ..core.files import atomic_write

__all__ = ["SCAN_JOBS", "ScanJob", "ScanJobs"]

_log = logging.getLogger("intently.console")
SCAN_JOBS = "console-scans"  # the folder, under the home's git-ignored state/
CLAIM_LOCK = ".claim.lock"  # in the folder: who starts the next scan is decided under it
KEEP = 20  # finished jobs remembered, newest first out last
SAVE_EVERY = 0.25  # seconds between two progress writes of a running job
_ID = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")

#: ``scan(progress)``: runs the scan, calling ``progress(done, total, ref)`` as it reads.
Progress = Callable[[int, int, str], None]


@dataclass
class ScanJob:
    """One scan: ``running`` then ``done`` (with the report's counts) or ``failed`` (why)."""

    id: str
    namespace: str
    actor: str
    started: float = field(default_factory=time.time)  # wall clock: other processes read it
    state: str = "running"
    step: str = "collecting and reconciling sources"
    finished: float | None = None
    summary: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    error: str = ""
    done: int = 0  # sources read so far, of ``total``
    total: int = 0
    pid: int = field(default_factory=os.getpid)

    @property
    def elapsed(self) -> float:
        return max(0.0, (self.finished or time.time()) - self.started)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "state": self.state,
            "step": self.step,
            "elapsed": round(self.elapsed, 1),
            "summary": self.summary,
            "counts": self.counts,
            "error": self.error,
            "done": self.done,
            "total": self.total,
        }


class ScanJobs:
    """The scans of a home; at most one running per namespace.

    ``folder``: where jobs are shared with the other processes serving the same home
    (``serve --workers``); without it a job is known only to this process."""

    def __init__(self, folder: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._jobs: OrderedDict[str, ScanJob] = OrderedDict()
        self._folder = folder
        self._saved: dict[str, float] = {}

    def start(self, namespace: str, actor: str, scan: Callable[[Progress], Any], after: Callable[[], Any]) -> ScanJob:
        """Start ``scan`` (then ``after``, e.g. a checkpoint) unless one already runs, here or
        in another process of this home: then that job is the answer."""
        with self._lock, self._claim():
            for job in self._jobs.values():
                if job.namespace == namespace and job.state == "running":
                    return job
            elsewhere = self._running_elsewhere(namespace)
            if elsewhere is not None:
                return elsewhere
            job = ScanJob(secrets.token_urlsafe(12), namespace, actor)
            self._jobs[job.id] = job
            while len(self._jobs) > KEEP:
                oldest = next(iter(self._jobs))
                if self._jobs[oldest].state == "running":
                    break
                del self._jobs[oldest]
            self._save(job, force=True)
            self._prune()
        threading.Thread(target=self._run, args=(job, scan, after), name=f"scan-{job.id}", daemon=True).start()
        return job

    def get(self, namespace: str, job_id: str) -> ScanJob | None:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            job = self._load(job_id)
        return job if job is not None and job.namespace == namespace else None

    # -- shared state ----------------------------------------------------------------

    @contextlib.contextmanager
    def _claim(self) -> Iterator[None]:
        """Hold the home's scan-claim lock: looking for a running job and recording a new one
        is one step for every process of the home. Without it two workers pressed at the same
        instant each found none and each started a scan. An exclusive lock (:mod:`..core.locks`) on a file
        in the shared folder, held only that long (released by the system if the process dies)."""
        if self._folder is None:
            yield
            return
        self._folder.mkdir(parents=True, exist_ok=True)
        with open(self._folder / CLAIM_LOCK, "a+b") as fh:
            locks.lock(fh)
            try:
                yield
            finally:
                locks.unlock(fh)

    def _path(self, job_id: str) -> Path | None:
        if self._folder is None or not job_id or not set(job_id) <= _ID:
            return None  # a job id from a URL never names a file outside the folder
        return self._folder / f"{job_id}.json"

    def _save(self, job: ScanJob, *, force: bool = False) -> None:
        path = self._path(job.id)
        if path is None:
            return
        now = time.monotonic()
        if not force and now - self._saved.get(job.id, 0.0) < SAVE_EVERY:
            return
        self._saved[job.id] = now
        try:
            atomic_write(path, json.dumps(asdict(job), sort_keys=True), durable=False)
        except OSError:
            _log.exception("console: cannot record scan %s in %s", job.id, path.parent)

    def _load(self, job_id: str) -> ScanJob | None:
        path = self._path(job_id)
        if path is None:
            return None
        try:
            job = ScanJob(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None
        if job.state == "running" and not _alive(job.pid):
            job.state = job.step = "failed"
            job.error = "the server process running this scan stopped before it finished"
            job.finished = path.stat().st_mtime
        return job

    def _running_elsewhere(self, namespace: str) -> ScanJob | None:
        if self._folder is None or not self._folder.is_dir():
            return None
        for path in sorted(self._folder.glob("*.json")):
            job = self._load(path.stem)
            if job is not None and job.namespace == namespace and job.state == "running":
                return job
        return None

    def _prune(self) -> None:
        """Keep the newest :data:`KEEP` finished jobs' files (and every running one's)."""
        if self._folder is None or not self._folder.is_dir():
            return
        files = sorted(self._folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for path in files[KEEP:]:
            job = self._load(path.stem)
            if job is None or job.state != "running":
                with contextlib.suppress(OSError):
                    path.unlink()

    # -- running ---------------------------------------------------------------------

    def _run(self, job: ScanJob, scan: Callable[[Progress], Any], after: Callable[[], Any]) -> None:
        def progress(done: int, total: int, ref: str) -> None:
            job.done, job.total = done, total
            job.step = f"read {done} of {total} sources" + (f"; now {ref}" if ref else "")
            self._save(job, force=done == total)

        try:
            report = scan(progress)
            counts = {
                "created": len(report.created),
                "awaiting review": len(report.proposed),
                "merged": len(report.merged),
                "superseded": len(report.superseded),
                "dropped": int(report.dropped),
                "domains added": len(report.domains_added),
            }
            summary = str(report.summary())
            job.step = "signing a checkpoint"
            self._save(job, force=True)
            after()
        except IntentlyError as exc:
            self._finish(job, "failed", error=f"{type(exc).__name__}: {exc}")
        except Exception:
            # Anything unexpected (in the scan, its report or the checkpoint) still ends the
            # job: a job left "running" would be polled, and block new scans, for ever.
            _log.exception("console: scan %s failed", job.id)
            self._finish(job, "failed", error="the scan failed; see the server log")
        else:
            self._finish(job, "done", summary=summary, counts=counts)

    def _finish(self, job: ScanJob, state: str, **result: Any) -> None:
        with self._lock:
            for key, value in result.items():
                setattr(job, key, value)
            job.step = state
            job.finished = time.time()
            job.state = state
            self._save(job, force=True)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` (on this machine: workers share it) still runs."""
    if sys.platform == "win32":
        # Never os.kill there: signal 0 is CTRL_C_EVENT, sent to every process of the console.
        return _alive_windows(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


if sys.platform == "win32":

    def _alive_windows(pid: int) -> bool:
        """``pid`` runs: it opens for a query and has no exit code yet (not run here: no Windows CI)."""
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return ctypes.get_last_error() == 5  # ERROR_ACCESS_DENIED: it exists, someone else's
        try:
            code = wintypes.DWORD()
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return True  # cannot tell: reported running, as for another user's process
            return code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
