"""Requirements scans run off the request, one at a time per namespace, and report as they go.

A scan can take long (git history, documents, transcripts), so "Scan now" starts it in a
background thread and answers at once with the job's page; the page polls the job (or,
without JavaScript, reloads itself) until the scan is done. The job only reports: the
scan writes through the engine and the log as ``intently req scan`` does. Jobs live in the
serving process (a restart forgets them; the scan's ``REQ_SCAN`` operation does not).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import IntentlyError

__all__ = ["ScanJob", "ScanJobs"]

_log = logging.getLogger("intently.console")
KEEP = 20  # finished jobs remembered, newest first out last


@dataclass
class ScanJob:
    """One scan: ``running`` then ``done`` (with the report's counts) or ``failed`` (why)."""

    id: str
    namespace: str
    actor: str
    started: float = field(default_factory=time.monotonic)
    state: str = "running"
    step: str = "collecting and reconciling sources"
    finished: float | None = None
    summary: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    error: str = ""

    @property
    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "state": self.state,
            "step": self.step,
            "elapsed": round(self.elapsed, 1),
            "summary": self.summary,
            "counts": self.counts,
            "error": self.error,
        }


class ScanJobs:
    """The scans this process started; at most one running per namespace."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: OrderedDict[str, ScanJob] = OrderedDict()

    def start(self, namespace: str, actor: str, scan: Callable[[], Any], after: Callable[[], Any]) -> ScanJob:
        """Start ``scan`` (then ``after``, e.g. a checkpoint) unless one already runs here."""
        with self._lock:
            for job in self._jobs.values():
                if job.namespace == namespace and job.state == "running":
                    return job
            job = ScanJob(secrets.token_urlsafe(12), namespace, actor)
            self._jobs[job.id] = job
            while len(self._jobs) > KEEP:
                oldest = next(iter(self._jobs))
                if self._jobs[oldest].state == "running":
                    break
                del self._jobs[oldest]
        threading.Thread(target=self._run, args=(job, scan, after), name=f"scan-{job.id}", daemon=True).start()
        return job

    def get(self, namespace: str, job_id: str) -> ScanJob | None:
        with self._lock:
            job = self._jobs.get(job_id)
        return job if job is not None and job.namespace == namespace else None

    def _run(self, job: ScanJob, scan: Callable[[], Any], after: Callable[[], Any]) -> None:
        try:
            report = scan()
            job.step = "signing a checkpoint"
            after()
        except IntentlyError as exc:
            self._finish(job, "failed", error=f"{type(exc).__name__}: {exc}")
        except Exception:
            _log.exception("console: scan %s failed", job.id)
            self._finish(job, "failed", error="the scan failed; see the server log")
        else:
            counts = {
                "created": len(report.created),
                "merged": len(report.merged),
                "superseded": len(report.superseded),
                "dropped": int(report.dropped),
                "domains added": len(report.domains_added),
            }
            self._finish(job, "done", summary=str(report.summary()), counts=counts)

    def _finish(self, job: ScanJob, state: str, **result: Any) -> None:
        with self._lock:
            for key, value in result.items():
                setattr(job, key, value)
            job.step = state
            job.finished = time.monotonic()
            job.state = state
