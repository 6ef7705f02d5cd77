"""A console scan under ``serve --workers``: each request may reach another process, and each
process has its own memory, so the job's state is shared through the home's state folder."""

from __future__ import annotations

import json
import multiprocessing
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from intently.console._scan_jobs import SCAN_JOBS, ScanJobs
from intently.requirements._scan import ScanReport

from .conftest import Served, serve

AGENTS_MD = """# Agent guide

## Payments

- Never log full card numbers; mask all but the last four digits.
- Always retry webhook deliveries with exponential backoff.
"""


def _csrf(page: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page)
    assert found, "the page carries no CSRF token"
    return found.group(1)


def test_a_scan_started_by_one_worker_is_followed_on_another(fresh: Served) -> None:
    (fresh.ix.home.project_root / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8")
    other_url, other = serve(fresh.ix)  # a second worker: its own app, console and job registry
    try:
        with fresh.login("user:alice") as alice:
            csrf = _csrf(alice.get("/ns/proj/requirements").text)
            started = alice.post("/ns/proj/requirements/scan", data={"csrf": csrf})
            assert started.status_code == 303
            job_page = started.headers["location"]
            with httpx.Client(base_url=other_url, cookies=alice.cookies, timeout=30) as worker2:
                polled = worker2.get(job_page + "/status")
                assert polled.status_code == 200, polled.text  # was 404: "no scan in this server's memory"
                status = polled.json()
                deadline = time.monotonic() + 60
                while status["state"] == "running" and time.monotonic() < deadline:
                    time.sleep(0.1)
                    status = worker2.get(job_page + "/status").json()
                assert status["state"] == "done", status
                assert status["counts"]["created"] == status["counts"]["awaiting review"] == 2
                assert status["total"] >= 1 and status["done"] == status["total"]
                shown = worker2.get(job_page).text
                assert "Done in" in shown and "<dt>awaiting review</dt><dd>2</dd>" in shown
    finally:
        other.stop()


def test_one_scan_per_namespace_across_workers(tmp_path: Path) -> None:
    folder = tmp_path / SCAN_JOBS
    first, second = ScanJobs(folder), ScanJobs(folder)  # two processes' registries
    release = threading.Event()

    def slow(progress: object) -> object:
        release.wait(10)
        raise RuntimeError("stopped by the test")

    running = first.start("proj", "user:alice", slow, lambda: None)
    try:
        joined = second.start("proj", "user:bob", slow, lambda: None)
        assert joined.id == running.id  # the other worker's scan is the answer, not a second scan
        seen = second.get("proj", running.id)
        assert seen is not None and seen.state == "running"
        assert second.get("other-namespace", running.id) is None
        assert second.get("proj", "../../etc/passwd") is None
    finally:
        release.set()
    deadline = time.monotonic() + 10
    while (job := second.get("proj", running.id)) is not None and job.state == "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert job is not None and job.state == "failed"


def test_a_scan_whose_worker_died_is_reported_failed(tmp_path: Path) -> None:
    folder = tmp_path / SCAN_JOBS
    folder.mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    job = {
        "id": "abc123",
        "namespace": "proj",
        "actor": "user:alice",
        "started": time.time() - 5,
        "state": "running",
        "step": "read 3 of 9 sources",
        "finished": None,
        "summary": "",
        "counts": {},
        "error": "",
        "done": 3,
        "total": 9,
        "pid": int(gone.stdout),
    }
    (folder / "abc123.json").write_text(json.dumps(job))
    seen = ScanJobs(folder).get("proj", "abc123")
    assert seen is not None and seen.state == "failed" and "stopped" in seen.error
    # ... and it does not block a new scan of the namespace.
    fresh = ScanJobs(folder).start("proj", "user:alice", lambda progress: ScanReport(), lambda: None)
    assert fresh.id != "abc123"


def _press_scan_now(folder: str, release: str, barrier: Any, ids: Any) -> None:
    """One worker process: wait for the others, press "Scan now", report the job it got."""
    registry = ScanJobs(Path(folder))

    def slow(progress: object) -> object:
        while not Path(release).exists():
            time.sleep(0.01)
        raise RuntimeError("stopped by the test")

    barrier.wait()
    job = registry.start("proj", "user:alice", slow, lambda: None)
    ids.put(job.id)
    deadline = time.monotonic() + 30
    while (registry.get("proj", job.id) or job).state == "running" and time.monotonic() < deadline:
        time.sleep(0.01)


def test_workers_pressing_scan_now_at_the_same_instant_start_one_scan(tmp_path: Path) -> None:
    """Each worker checked for a running scan, then wrote its own: two pressing at once both
    found none and both scanned (two writers of the same files). Claiming is now atomic
    across the processes of the home."""
    context = multiprocessing.get_context("fork")
    workers = 4
    for round_ in range(6):
        release = tmp_path / f"release-{round_}"
        barrier, ids = context.Barrier(workers), context.Queue()
        procs = [
            context.Process(target=_press_scan_now, args=(str(tmp_path / SCAN_JOBS), str(release), barrier, ids))
            for _ in range(workers)
        ]
        for proc in procs:
            proc.start()
        got = {ids.get(timeout=30) for _ in procs}
        release.touch()
        for proc in procs:
            proc.join(30)
        assert len(got) == 1, f"round {round_}: {len(got)} scans started at once"
