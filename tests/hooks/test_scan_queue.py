"""Two scans of one project never run at once; queued transcripts survive until scanned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from intently import Intently, IntentlyError, InvalidInput
from intently.hooks import ScanQueue
from intently.requirements._scan import run_scan

from .conftest import INTENTLY, Handler, event


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


def _session_transcript(path: Path, rule: str) -> Path:
    """A two-message Claude Code transcript in the documented JSONL shape."""
    lines = [
        {"type": "summary", "summary": "Tidy up", "leafUuid": "u0"},
        {
            "type": "user",
            "sessionId": path.stem,
            "uuid": "u1",
            "timestamp": "2026-03-02T09:00:00.000Z",
            "message": {"role": "user", "content": rule},
        },
        {
            "type": "assistant",
            "sessionId": path.stem,
            "uuid": "u2",
            "timestamp": "2026-03-02T09:00:05.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]},
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_queued_transcripts_are_scanned_then_drained(ix: Intently, project: Path, handle: Handler) -> None:
    transcript = _session_transcript(project / "s1.jsonl", "From now on, never touch the generated/ folder.")
    done = handle({**event("Stop", project, stop_hook_active=False), "transcript_path": str(transcript)})
    assert done.exit_code == 0
    queue = ScanQueue(ix.home.state_dir)

    def scan(paths: list[str]) -> Any:
        return run_scan(ix.requirements, ix.runtime, full=False, commit=False, project=None, transcripts=list(paths))

    report = queue.drain(scan)
    assert report.status == "scanned" and report.transcripts == (str(transcript),)
    assert queue.entries() == []
    statements = [r.statement for r in ix.requirements.list()]
    assert "Never touch the generated/ folder." in statements


def test_the_queue_survives_a_scan_that_fails_on_the_store(ix: Intently, project: Path) -> None:
    transcript = _session_transcript(project / "s2.jsonl", "Always run the linter before committing.")
    queue = ScanQueue(ix.home.state_dir)
    queue.enqueue(session_id="s2", transcript_path=str(transcript), event="Stop", queued_at="2026-03-02T09:00Z")
    denied = Intently.open(ix.home.path, actor="user:mallory")  # no write permission: the scan fails
    try:
        with pytest.raises(IntentlyError):
            queue.drain(
                lambda paths: run_scan(
                    denied.requirements, denied.runtime, full=False, commit=False, project=None, transcripts=paths
                )
            )
    finally:
        denied.close()
    assert [e["transcript_path"] for e in queue.entries()] == [str(transcript)]


def test_scan_queue_command_mines_the_queue(ix: Intently, project: Path) -> None:
    transcript = _session_transcript(project / "s3.jsonl", "Going forward, always squash commits before merging.")
    ScanQueue(ix.home.state_dir).enqueue(
        session_id="s3", transcript_path=str(transcript), event="SessionEnd", queued_at="2026-03-02T09:00Z"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env["INTENTLY_ACTOR"] = "user:alice"
    done = subprocess.run(
        [INTENTLY, "hook", "scan-queue", "--json"], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "scanned"
    assert ScanQueue(ix.home.state_dir).entries() == []
    with Intently.open(ix.home.path, actor="user:alice") as fresh:
        assert "Always squash commits before merging." in [r.statement for r in fresh.requirements.list()]


def test_a_transcript_queued_again_during_its_scan_stays_for_the_next(ix: Intently) -> None:
    queue = ScanQueue(ix.home.state_dir)
    _queue_two(queue)
    requeued: list[bool] = []

    def scan(paths: list[str]) -> None:
        # Stop fires again while the scan runs: the file grew after the scan read it.
        requeued.append(
            queue.enqueue(session_id="s1", transcript_path="/t/1.jsonl", event="Stop", queued_at="2026-03-02T09:05Z")
        )

    assert queue.drain(scan).status == "scanned"
    assert requeued == [True]
    assert [(e["transcript_path"], e["queued_at"]) for e in queue.entries()] == [("/t/1.jsonl", "2026-03-02T09:05Z")]
    # Outside a scan, a transcript already waiting is not queued twice.
    assert not queue.enqueue(session_id="s1", transcript_path="/t/1.jsonl", event="Stop", queued_at="2026-03-02T09:06Z")
