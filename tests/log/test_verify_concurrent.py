"""``log verify`` while others write: a healthy log never raises a tamper alarm."""

from __future__ import annotations

import threading
from pathlib import Path

from intently import Intently, ManualClock
from tests._backends import use_database


def test_verify_during_appends_reports_no_gap(project: Path, clock: ManualClock, database_url: str | None) -> None:
    """The stream header and the operations were read in separate transactions, so an append
    landing between them looked like a missing or extra operation (a false tamper alarm)."""
    with Intently.init(project, actor="user:alice", name="proj", clock=clock, database_url=database_url) as home:
        if database_url:
            use_database(home.home.path, database_url)  # the handles below open the same database
    stop = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        try:
            with Intently.open(project, actor="user:alice", clock=clock) as writer:
                n = 0
                while not stop.is_set():
                    n += 1
                    writer.goals.add(f"Goal number {n}", type="GOAL")
        except BaseException as exc:  # surfaced below: a writer that dies proves nothing
            failures.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    try:
        with Intently.open(project, actor="user:alice", clock=clock) as reader:
            reports = [reader.log.verify() for _ in range(40)]
    finally:
        stop.set()
        thread.join(30)
    assert failures == []
    assert [r.ok for r in reports] == [True] * 40, next(r for r in reports if not r.ok)
    with Intently.open(project, actor="user:alice", clock=clock) as after:
        assert after.log.verify().ok
