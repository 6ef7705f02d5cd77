"""Each prompt of a Claude Code session enters the log once.

The gate run opened for each prompt logged the whole conversation so far as its ``request``
(and the phrases the resolver could not place, most of a pasted text, as text again): a session
of N prompts wrote O(N^2) bytes of prompt text to the tamper-evident log. Now each prompt is
logged once (``GATE_PROMPT_LOGGED``, by content hash) and a run's opening names the prompts it
read, in order. The log alone still says exactly which text every decision was made on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from intently import Intently
from intently.core.errors import TableMismatch
from intently.gate import opening_read
from tests.gate.conftest import assert_replay_rebuilds

from .conftest import Handler, event


def _prompt(i: int) -> str:
    """About 2 KB: an order, then pasted text the resolver cannot place, with a marker of its own."""
    filler = " ".join(f"lorem{i}x{j} ipsum dolor sit amet" for j in range(70))
    return f"Fix the failing test in tests/test_api_{i}.py, do not edit src/app/config.py.\n\n{filler} marker{i}zq."


def _session(ix: Intently, project: Path, handle: Handler, n: int) -> list[str]:
    prompts = [_prompt(i) for i in range(n)]
    for i, text in enumerate(prompts):
        assert handle(event("UserPromptSubmit", project, prompt=text)).exit_code == 0
        read = {"file_path": str(project / f"tests/test_api_{i}.py")}
        assert handle(event("PreToolUse", project, tool_name="Read", tool_input=read)).exit_code == 0
    return prompts


def _payload_bytes(ix: Intently) -> int:
    return sum(len(json.dumps(op.payload)) for op in ix.log.read(ix.namespace))


def test_each_prompt_enters_the_log_once_and_every_run_reads_back_exactly(
    ix: Intently, project: Path, handle: Handler, tmp_path: Path
) -> None:
    prompts = _session(ix, project, handle, 12)
    ops = ix.log.read(ix.namespace)
    # Each prompt's own text (its marker) is in exactly one operation of the log.
    for i in range(len(prompts)):
        holding = [op.op for op in ops if f"marker{i}zq" in json.dumps(op.payload)]
        assert holding == ["GATE_PROMPT_LOGGED"], (i, holding)
    # The log grows with the prompts, not with their square: 12 prompts of 2 KB used to be
    # twice 78 prompts' worth (each run's request and its unplaced phrases).
    assert _payload_bytes(ix) < 2 * sum(map(len, prompts)) + 4_000 * len(ops)

    # A reader of the log alone rebuilds each run's request: the prompts so far, joined.
    opened = [op for op in ops if op.op == "GATE_SESSION_OPENED"]
    assert len(opened) == len(prompts)
    for k, op in enumerate(opened, 1):
        request, resolved = opening_read(ix.log, op)
        assert request == "\n\n".join(prompts[:k])
        assert f"marker{k - 1}zq." in " ".join(resolved["unplaced"])  # the reading, unplaced phrases and all
        assert "request" not in op.payload and len(op.payload["prompts"]) == k
        explained = ix.gate.explain(op.target)
        assert explained["text"].startswith(f"Request: {request}\n")
        assert ix.gate.run(op.target)["session"]["resolved"] == resolved
    assert ix.log.verify().ok
    assert_replay_rebuilds(ix, tmp_path)  # every gate table, the request of each run included

    # A signed export holds the prompts its run names (logged by earlier runs), and verifies.
    from intently.gate import verify_trace

    last = opened[-1].target
    bundle = ix.gate.export_run(last)
    logged = [op for op in bundle["operations"] if op["op"] == "GATE_PROMPT_LOGGED"]
    assert [op["payload"]["text"] for op in logged] == prompts
    assert verify_trace(bundle, ix.log.keyring)["ok"]


def test_a_prompt_said_twice_is_logged_once_and_named_twice(ix: Intently, project: Path, handle: Handler) -> None:
    for text in ("Run the tests.", "yes", "Fix tests/test_api.py", "yes"):
        assert handle(event("UserPromptSubmit", project, prompt=text)).exit_code == 0
    logged = [op.payload["text"] for op in ix.log.read(ix.namespace, op="GATE_PROMPT_LOGGED")]
    assert sorted(logged) == sorted(["Run the tests.", "yes", "Fix tests/test_api.py"])
    last = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")[-1]
    assert opening_read(ix.log, last)[0] == "Run the tests.\n\nyes\n\nFix tests/test_api.py\n\nyes"


def test_a_run_logged_in_the_old_shape_still_reads(ix: Intently, tmp_path: Path) -> None:
    """A run opened on one request (the API, or a log written before prompts were logged by
    hash) logs its request in its opening, as before; explain, verify and replay read it."""
    session = ix.gate.session([], user_request="Summarise the notes; do not email anyone.")
    (opened,) = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")
    assert opened.payload["request"] == "Summarise the notes; do not email anyone."
    assert opening_read(ix.log, opened)[0] == opened.payload["request"]
    assert ix.gate.explain(str(session.id))["text"].startswith("Request: Summarise the notes;")
    assert ix.log.verify().ok
    assert_replay_rebuilds(ix, tmp_path)


def test_a_request_changed_in_the_table_is_caught(ix: Intently, project: Path, handle: Handler) -> None:
    """What explain prints as the request is proven to be the log's: a row rewritten behind the
    log's back (a prompt's "do not" dropped) is a table mismatch, not an explanation."""
    _session(ix, project, handle, 2)
    run = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")[-1].target
    with ix.store.transaction() as tx:
        tx.execute("UPDATE gate_prompts SET text = REPLACE(text, 'do not edit', 'edit')")
    with pytest.raises(TableMismatch, match="request of run"):
        ix.gate.explain(run)


def _gate_bytes(ix: Intently) -> int:
    """What the gate's tables hold of the runs and their prompts, in bytes (on either backend)."""
    with ix.store.transaction(write=False) as tx:
        rows = [*tx.query("SELECT * FROM gate_sessions"), *tx.query("SELECT * FROM gate_prompts")]
    return sum(len(str(v)) for row in rows for v in dict(row).values() if v is not None)


def test_the_gate_tables_grow_with_the_prompts_not_their_square(
    ix: Intently, project: Path, handle: Handler, tmp_path: Path
) -> None:
    """Each run of a session keeps the numbers of its prompts, not the conversation joined
    again (and its unplaced phrases a second time): twice the prompts is about twice the bytes.
    Storing each run's joined request made 30 prompts of 2 KB take 3.8 times what 15 did."""
    prompts = _session(ix, project, handle, 15)
    at_n = _gate_bytes(ix)
    prompts += [_prompt(i) for i in range(15, 30)]
    for text in prompts[15:]:
        assert handle(event("UserPromptSubmit", project, prompt=text)).exit_code == 0
    at_2n = _gate_bytes(ix)
    assert at_2n < 2.2 * at_n, (at_n, at_2n)
    assert at_2n < 2 * sum(map(len, prompts))  # each prompt's text once, and little else
    # Every reader still shows each run's whole request, exactly.
    runs = ix.gate.runs(limit=100)
    assert [r["request"] for r in reversed(runs)] == ["\n\n".join(prompts[:k]) for k in range(1, 31)]
    last = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")[-1]
    assert ix.gate.run(last.target)["session"]["request"] == "\n\n".join(prompts)
    assert "prompts" not in ix.gate.run(last.target)["session"]  # the storage columns are not shown
    assert "marker29zq." in " ".join(ix.gate.run(last.target)["session"]["resolved"]["unplaced"])
    assert_replay_rebuilds(ix, tmp_path)


def test_a_home_migrated_from_the_joined_rows_reads_and_numbers_its_prompts_in_log_order(
    ix: Intently, project: Path, handle: Handler
) -> None:
    """Gate migration 4 numbers the prompts a home already kept in the order the log holds them
    (what a replay gives them), and a run's row written before it (its request literal, no
    prompt numbers) still reads, explains and checks against the log."""
    from intently.store import registered_migrations

    prompts = _session(ix, project, handle, 3)
    (step,) = [m for m in registered_migrations()["gate"] if m.version == 4]
    last = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")[-1].target
    row = ix.gate.run(last)["session"]
    with ix.store.transaction() as tx:
        before = [dict(r) for r in tx.query("SELECT sha256, n FROM gate_prompts ORDER BY n")]
        tx.execute("UPDATE gate_prompts SET n = NULL")
        tx.execute(step.statements[1])  # the numbering, as the migration ran it
        after = [dict(r) for r in tx.query("SELECT sha256, n FROM gate_prompts ORDER BY n")]
        tx.execute(
            "UPDATE gate_sessions SET request = ?, resolved = ?, prompts = NULL, unplaced_at = NULL WHERE id = ?",
            (row["request"], json.dumps(row["resolved"], sort_keys=True), last),
        )
    assert after == before and [r["n"] for r in after] == [1, 2, 3]
    assert ix.gate.run(last)["session"]["request"] == "\n\n".join(prompts)
    assert ix.gate.explain(last)["text"].startswith(f"Request: {prompts[0]}")
