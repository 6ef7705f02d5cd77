"""A context block (and a requirements selection) is built with Python's cyclic collector
paused: at 2,000 rules the collector's rescans of the rules being loaded and scored were
0.22-0.29 s of the 2.5-3.3 s of CPU of an ``intently context`` process. The collector must
come back on afterwards whatever happens (a server that builds blocks on several threads
must never be left without it), and stay off for a caller that turned it off itself."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from intently import Intently
from intently.core.errors import InvalidInput
from intently.core.gcpause import gc_paused

from ..requirements.test_selection_caches import add_varied_rules

_TASK = "fix the retry timeout of the api handler in src/api/client.py"


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generation of every cyclic collection that runs while the test does."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(int(info["generation"]))

    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)


def test_a_block_and_a_selection_run_no_cyclic_collection(
    ix: Intently, collections: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTENTLY_EMBEDDER", "hashing")
    add_varied_rules(ix, 120)
    ix.context(_TASK, fire=False)  # embeds and caches every rule once
    assert gc.isenabled()
    collections.clear()
    block = ix.context(_TASK, fire=False)
    assert collections == []  # without the pause: several, at 2,000 rules hundreds and two full ones
    assert "retry request" in block.text
    chosen = ix.requirements.select(_TASK, record=False)
    assert chosen.items
    assert gc.isenabled()


def test_the_collector_is_back_on_after_a_block_that_fails(ix: Intently) -> None:
    with pytest.raises(InvalidInput, match="budget"):
        ix.context(_TASK, budget=499.5)  # type: ignore[arg-type]
    assert gc.isenabled()
    ix.context(_TASK, fire=False)
    assert gc.isenabled()


def test_a_caller_that_turned_the_collector_off_keeps_it_off(ix: Intently) -> None:
    gc.disable()
    try:
        ix.context(_TASK, fire=False)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_pauses_on_two_threads_turn_it_back_on_once_both_closed() -> None:
    """Thread A opens a pause, B opens one, A closes first: B's work must still run paused,
    and the collector is on again only when B closes (a plain save-and-restore per call
    either turned it on under B or left it off for good)."""
    a_open, b_open, a_closed = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with gc_paused():
            a_open.set()
            b_open.wait(5)
        a_closed.set()

    def second() -> None:
        a_open.wait(5)
        with gc_paused():
            b_open.set()
            a_closed.wait(5)
            seen["under B after A closed"] = gc.isenabled()
        seen["after both"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"under B after A closed": False, "after both": True}
    assert gc.isenabled()
