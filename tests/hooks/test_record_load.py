"""A large session record is parsed without the garbage collector's passes, and read back whole.

After a pasted log the record holds megabytes of nested lists (each kept clause of the prompt's
reading is one), and the collections their number set off (343 in this test's record) doubled
the parse in every tool call's process. Checked by the collector's own callbacks, never by
timing: at most the one collection the new objects set off once the collector is back on.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from intently.hooks._record import read_session_record, session_record


def _big_record(state: Path) -> dict[str, Any]:
    clauses = [[f"clause {n}", ["edit"], [], [f"file{n}.py"], True] for n in range(60_000)]
    with session_record(state, "s") as record:
        record.requests = ["Fix the parser. Here is the log:\n" + "line\n" * 1000]
        record.readings = {"3:v:abc": {"clauses": clauses}}
        record.agreed = ["yes, go ahead"]
    return {"clauses": clauses}


def _collections_during(read: Any) -> tuple[Any, int]:
    seen: list[str] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(phase)

    gc.callbacks.append(note)
    try:
        got = read()
    finally:
        gc.callbacks.remove(note)
    return got, len(seen)


def test_a_large_record_loads_without_collections_and_whole(tmp_path: Path) -> None:
    kept = _big_record(tmp_path)
    assert gc.isenabled()
    record, collections = _collections_during(lambda: read_session_record(tmp_path, "s"))
    assert collections <= 1, collections  # the one the objects made set off once it is back on
    assert gc.isenabled()  # switched back on
    assert record.readings == {"3:v:abc": kept}
    assert record.agreed == ["yes, go ahead"] and record.requests[0].startswith("Fix the parser.")


def test_the_collector_stays_off_when_it_was_off(tmp_path: Path) -> None:
    _big_record(tmp_path)
    gc.disable()
    try:
        read_session_record(tmp_path, "s")
        assert not gc.isenabled()
    finally:
        gc.enable()
