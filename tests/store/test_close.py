"""Closing a home while another thread works in it: no crash, and no writes after close."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from intently import Intently, ManualClock
from intently.core.errors import StoreError


def test_close_waits_for_a_transaction_in_flight_and_refuses_new_ones(project: Path, clock: ManualClock) -> None:
    """A harness that shuts down while a worker thread is mid-call used to crash the interpreter
    (a connection closed under another thread's feet); now close waits, and the worker is told."""
    ix = Intently.init(project, actor="user:alice", name="proj", clock=clock)
    ix.goals.add("Ship the importer", type="GOAL")
    errors: list[BaseException] = []
    started = threading.Event()

    def work() -> None:
        try:
            while True:
                ix.goals.list_intents()
                started.set()
        except StoreError as exc:
            errors.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    started.wait(10)
    ix.close()
    worker.join(10)
    assert not worker.is_alive() and len(errors) == 1 and "closed" in str(errors[0])


def test_a_closed_home_refuses_writes_that_no_checkpoint_would_cover(project: Path, clock: ManualClock) -> None:
    ix = Intently.init(project, actor="user:alice", name="proj", clock=clock)
    ix.close()
    ix.close()  # closing twice is harmless
    with pytest.raises(StoreError, match="closed"):
        ix.goals.add("Written after close", type="GOAL")
    with Intently.open(project, actor="user:alice") as again:
        assert again.goals.list_intents() == []
