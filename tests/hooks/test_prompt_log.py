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
        assert "request" not in op.payload
        if k == 1:
            assert len(op.payload["prompts"]) == 1
        else:  # it continues the run before it, naming only the prompt added since
            assert "prompts" not in op.payload and len(op.payload["added"]) == 1 and op.payload["count"] == k
            assert op.payload["after"] == {"seq": opened[k - 2].seq, "run": opened[k - 2].target}
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


def _openings_bytes(ix: Intently) -> int:
    """What the log holds of the runs' openings (their payloads), in bytes."""
    return sum(len(json.dumps(op.payload)) for op in ix.log.read(ix.namespace, op="GATE_SESSION_OPENED"))


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
    at_n, log_at_n, openings_at_n = _gate_bytes(ix), _payload_bytes(ix), _openings_bytes(ix)
    prompts += [_prompt(i) for i in range(15, 30)]
    for text in prompts[15:]:
        assert handle(event("UserPromptSubmit", project, prompt=text)).exit_code == 0
    at_2n = _gate_bytes(ix)
    assert at_2n < 2.2 * at_n, (at_n, at_2n)
    # The log too: each run's opening names the run it continues and the prompts added since,
    # not every prompt's hash again (which made 30 prompts' openings 2.75 times 15's, and
    # 200 prompts of 2 KB log 2.8 MB where 100 logged 0.96 MB).
    assert _openings_bytes(ix) < 2.2 * openings_at_n, (openings_at_n, _openings_bytes(ix))
    assert _payload_bytes(ix) < 2.2 * log_at_n, (log_at_n, _payload_bytes(ix))
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


def _log_old_runs(ix: Intently, prompts: list[str]) -> list[str]:
    """Runs opened the way the log held them before openings were chained: each prompt logged
    once, and each run's opening listing every prompt's hash so far. Written directly to the
    log (and applied, as the journal does), as an older intently wrote them."""
    from intently.gate._engine import _apply_prompt, _apply_session
    from intently.gate._prompts import prompt_hash

    runs = []
    with ix.store.transaction() as tx:
        for k, text in enumerate(prompts, 1):
            digest = prompt_hash(text)
            common = {"namespace": ix.namespace, "actor": str(ix.actor), "policy_version": "gate@1;old"}
            _apply_prompt(
                tx,
                ix.log.append(
                    tx, op="GATE_PROMPT_LOGGED", target=digest, payload={"sha256": digest, "text": text}, **common
                ),
            )
            opening = {
                "prompts": [prompt_hash(p) for p in prompts[:k]],
                "resolved": {"intents": [], "negated": [], "unplaced": []},
                "unplaced_at": [],
                "bundle": "old",
            }
            runs.append(f"run_old{k}")
            _apply_session(tx, ix.log.append(tx, op="GATE_SESSION_OPENED", target=runs[-1], payload=opening, **common))
    return runs


def test_openings_that_list_every_prompt_still_read_and_a_new_run_continues_them(ix: Intently, tmp_path: Path) -> None:
    """A log written before openings were chained (every run listing all its prompts' hashes)
    reads, explains, exports, verifies and replays as before; the next run of that conversation
    continues the last of those runs, naming only its new prompt, and reads back whole."""
    from intently.gate import verify_trace

    prompts = ["Fix the failing test in tests/test_api.py.", "Do not edit src/app/config.py.", "yes"]
    runs = _log_old_runs(ix, prompts)
    old = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")
    for k, (run, op) in enumerate(zip(runs, old, strict=True), 1):
        assert len(op.payload["prompts"]) == k
        assert opening_read(ix.log, op)[0] == "\n\n".join(prompts[:k])
        assert ix.gate.explain(run)["text"].startswith(f"Request: {prompts[0]}")
    assert ix.gate.run(runs[-1])["session"]["request"] == "\n\n".join(prompts)
    assert verify_trace(ix.gate.export_run(runs[-1]), ix.log.keyring)["ok"]

    more = [*prompts, "Now update the changelog too."]
    session = ix.gate.session([], user_request="\n\n".join(more), request_parts=more)
    new = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")[-1]
    assert new.target == str(session.id)
    assert new.payload["after"] == {"seq": old[-1].seq, "run": runs[-1]}
    assert len(new.payload["added"]) == 1 and new.payload["count"] == 4
    assert opening_read(ix.log, new)[0] == "\n\n".join(more)
    assert ix.gate.explain(str(session.id))["text"].startswith(f"Request: {prompts[0]}")
    bundle = ix.gate.export_run(str(session.id))
    assert [op["target"] for op in bundle["operations"] if op["op"] == "GATE_SESSION_OPENED"] == [runs[-1], new.target]
    assert verify_trace(bundle, ix.log.keyring)["ok"]
    assert ix.log.verify().ok
    assert_replay_rebuilds(ix, tmp_path)


def test_an_export_late_in_a_session_carries_its_chain_and_proves_its_request(
    ix: Intently, project: Path, handle: Handler
) -> None:
    """A run late in a session names the run before it, which names the one before that: its
    export carries every opening of that chain and every prompt, so the bundle alone rebuilds
    the request, and verifying it proves the request the run shows is the one it was made on."""
    from intently.core.errors import TableMismatch as Mismatch
    from intently.gate import verify_trace

    prompts = _session(ix, project, handle, 8)
    opened = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")
    bundle = ix.gate.export_run(opened[-1].target)
    ops = bundle["operations"]
    assert [op["target"] for op in ops if op["op"] == "GATE_SESSION_OPENED"] == [op.target for op in opened]
    assert [op["payload"]["text"] for op in ops if op["op"] == "GATE_PROMPT_LOGGED"] == prompts
    assert bundle["run"]["session"]["request"] == "\n\n".join(prompts)
    assert verify_trace(bundle, ix.log.keyring)["ok"]

    # A bundle whose run shows another request, or that lacks a link of the chain, does not verify.
    shown = json.loads(json.dumps(bundle))
    shown["run"]["session"]["request"] = shown["run"]["session"]["request"].replace("do not edit", "edit")
    with pytest.raises(Mismatch, match="request of the trace's run"):
        verify_trace(shown, ix.log.keyring)
    cut = json.loads(json.dumps(bundle))
    cut["operations"] = [op for op in cut["operations"] if op.get("target") != opened[3].target]
    with pytest.raises(Mismatch, match="cannot be rebuilt"):
        verify_trace(cut, ix.log.keyring)


def test_an_opening_that_continues_no_run_of_the_log_is_refused(ix: Intently, project: Path, handle: Handler) -> None:
    """A chained opening must name an earlier opening of its stream, of the run it says: one
    naming a prompt's operation, or a later place, cannot say what its run was made on, and
    is refused when written and when read (never read as some other run's prompts)."""
    from intently.core.errors import LogIntegrityError
    from intently.gate._engine import _apply_session

    _session(ix, project, handle, 2)
    last = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")[-1]
    prompt = ix.log.read(ix.namespace, op="GATE_PROMPT_LOGGED")[0]
    common = {"namespace": ix.namespace, "actor": str(ix.actor), "policy_version": last.policy_version}
    for after in ({"seq": prompt.seq, "run": last.target}, {"seq": last.seq + 5, "run": last.target}):
        forged = {**last.payload, "after": after}
        with pytest.raises(LogIntegrityError, match="continues run"), ix.store.transaction() as tx:
            _apply_session(
                tx, ix.log.append(tx, op="GATE_SESSION_OPENED", target="run_forged", payload=forged, **common)
            )
    wrong_count = {**last.payload, "count": 7}
    with pytest.raises(LogIntegrityError, match="says it read 7 prompts"), ix.store.transaction() as tx:
        _apply_session(
            tx, ix.log.append(tx, op="GATE_SESSION_OPENED", target="run_forged", payload=wrong_count, **common)
        )
    # Read from the log alone: an opening pointing at the prompt's operation (written behind the gate's back).
    with ix.store.transaction() as tx:
        op = ix.log.append(
            tx,
            op="GATE_SESSION_OPENED",
            target="run_forged",
            payload={**last.payload, "after": {"seq": prompt.seq, "run": last.target}},
            **common,
        )
    with pytest.raises(LogIntegrityError, match="continues run"):
        opening_read(ix.log, ix.log.get(ix.namespace, op.seq))
