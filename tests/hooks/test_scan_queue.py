"""Two scans of one project never run at once; queued transcripts survive until scanned."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from intently import Intently, InvalidInput
from intently.hooks import ScanQueue


def _queue_two(queue: ScanQueue) -> None:
    for n in (1, 2):
        queue.enqueue(session_id=f"s{n}", transcript_path=f"/t/{n}.jsonl", event="Stop", queued_at="2026-03-02T09:00Z")


def test_second_scan_is_refused_while_one_runs(ix: Intently) -> None:
    queue = ScanQueue(ix.home.state_dir)
    _queue_two(queue)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import fcntl, sys
                fh = open({str(queue.lock_path)!r}, "a+")
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
                print("locked", flush=True)
                sys.stdin.readline()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        scanned: list[list[str]] = []
        report = queue.drain(scanned.append)
        assert report.status == "busy"
        assert scanned == []
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=10)
    report = queue.drain(scanned.append)
    assert report.status == "scanned"
    assert scanned == [["/t/1.jsonl", "/t/2.jsonl"]]
    assert queue.entries() == []


def test_without_a_scanner_transcripts_stay_queued(ix: Intently) -> None:
    queue = ScanQueue(ix.home.state_dir)
    _queue_two(queue)
    report = queue.drain(None)
    assert report.status == "unavailable"
    assert len(queue.entries()) == 2


def test_a_failing_scan_keeps_the_queue(ix: Intently) -> None:
    queue = ScanQueue(ix.home.state_dir)
    _queue_two(queue)

    def broken(paths: list[str]) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError):
        queue.drain(broken)
    assert [e["transcript_path"] for e in queue.entries()] == ["/t/1.jsonl", "/t/2.jsonl"]


def test_queue_file_with_a_bad_line_names_it(ix: Intently) -> None:
    queue = ScanQueue(ix.home.state_dir)
    _queue_two(queue)
    with open(queue.path, "a") as fh:
        fh.write("{oops\n")
    with pytest.raises(InvalidInput, match=r"scan-queue\.jsonl:3"):
        queue.entries()
