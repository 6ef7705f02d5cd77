"""A gate trace proves it holds all of its run, not only that what it holds is in the log.

Each operation of a run records its place in the run (``payload.chain``: its number, and the
seq of the run's operation before it), and closing a run logs its last operation. The places
are in the operations' leaves, which the trace's inclusion proofs bind to a signed checkpoint:
an exporter holding the home's key who leaves a decision out, or drops the tail, and re-signs
the trace cannot hide the cut.
"""

from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from typer.testing import CliRunner

from intently import Intently
from intently.cli._app import app
from intently.core.errors import InvalidTransition, TableMismatch
from intently.gate import IncompleteTraceWarning, UnboundTraceWarning, verify_trace
from intently.log import KeyRing, canonical_json, key_id_of
from tests.cli.conftest import run as run_cli

from .conftest import assert_replay_rebuilds, offsite_run


def _cli(home: Path, *args: str) -> Any:
    return CliRunner().invoke(app, ["--home", str(home), "--actor", "user:alice", *args])


def _ring(ix: Intently) -> KeyRing:
    return KeyRing.load_public(ix.home.keys_dir / "public.json")


def _home_key(ix: Intently) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(
        (ix.home.keys_dir / "private" / "log-ed25519.pem").read_bytes(), password=None
    )
    assert isinstance(key, Ed25519PrivateKey)
    return key


def _cut(doc: dict[str, Any], key: Ed25519PrivateKey, leave_out: Any) -> dict[str, Any]:
    """``doc`` without the operations ``leave_out`` picks (their proofs and the run's decisions
    they record too, so the file is consistent) and signed again with ``key``: the dishonest
    exporter who holds the home's key."""
    cut = json.loads(json.dumps(doc))
    keep = [n for n, op in enumerate(cut["operations"]) if not leave_out(op)]
    dropped = {op["target"] for n, op in enumerate(cut["operations"]) if n not in keep and op["op"] == "GATE_DECIDED"}
    cut["operations"] = [cut["operations"][n] for n in keep]
    cut["inclusion"]["proofs"] = [cut["inclusion"]["proofs"][n] for n in keep]
    cut["run"]["decisions"] = [d for d in cut["run"]["decisions"] if d["id"] not in dropped]
    body = {k: cut[k] for k in ("format", "run", "operations", "origin", "signed_at")}
    cut["key_id"] = key_id_of(key.public_key())
    cut["signature"] = base64.b64encode(key.sign(canonical_json(body))).decode()
    return cut


def test_an_honest_trace_of_a_closed_run_proves_it_is_complete(
    ix: Intently, tools: list[dict[str, Any]], tmp_path: Path
) -> None:
    s, _ = offsite_run(ix, tools)
    closed = ix.gate.close_run(s.id)
    assert closed["run"] == s.id and closed["operations"] == 6 and closed["closed_at"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about
        result = verify_trace(ix.gate.export_run(s.id), _ring(ix))
    assert (result["complete"], result["closed"], result["run_operations"], result["warnings"]) == (True, True, 6, [])
    assert result["completeness"].startswith(f"the trace holds all 6 operation(s) of run {s.id}, which was closed")
    assert_replay_rebuilds(ix, tmp_path)  # the chain's columns are the log's projection


def test_a_closed_run_takes_nothing_more(ix: Intently, tools: list[dict[str, Any]]) -> None:
    """What makes the closing the tail: the run's later calls are refused, not logged into it
    (as a used approval is, the journal's refusal stops the check), and closing twice is refused."""
    s, _ = offsite_run(ix, tools)
    ix.gate.close_run(s.id)
    with pytest.raises(InvalidTransition, match=f"run {s.id} was closed at .*; open a new run"):
        s.check("search_emails", {"query": "anything"})
    assert [op.op for op in ix.log.read("proj")][-1] == "GATE_RUN_CLOSED"
    with pytest.raises(InvalidTransition, match="gate run cannot move from closed"):
        ix.gate.close_run(s.id)
    assert verify_trace(ix.gate.export_run(s.id), _ring(ix))["complete"] is True


def test_an_honest_trace_of_an_open_run_says_how_far_it_is_complete(ix: Intently, tools: list[dict[str, Any]]) -> None:
    s, _ = offsite_run(ix, tools)
    doc = ix.gate.export_run(s.id)
    last = max(op["seq"] for op in doc["operations"])
    result = verify_trace(doc, _ring(ix))
    assert (result["ok"], result["complete"], result["closed"], result["run_operations"]) == (True, False, False, 5)
    assert result["completeness"].startswith(f"complete up to operation 5 (seq {last}) at export; the run was open")
    assert result["warnings"] == []  # an open run is a state, not a defect: said in `completeness`


def test_a_trace_cut_in_the_middle_and_re_signed_is_refused(ix: Intently, tools: list[dict[str, Any]]) -> None:
    """The exporter leaves out the one decision that looks bad (the blocked send), its run's entry
    too, and re-signs with the home's key: signature and proofs all hold, the chain does not."""
    s, decisions = offsite_run(ix, tools)
    ix.gate.close_run(s.id)
    doc = ix.gate.export_run(s.id)
    blocked = decisions[1]
    assert str(blocked.level) == "block"
    cut = _cut(doc, _home_key(ix), lambda op: op["target"] == blocked.id)
    assert len(cut["operations"]) == len(doc["operations"]) - 1 and len(cut["run"]["decisions"]) == 2
    with pytest.raises(TableMismatch, match=rf"run {s.id} leaves out operation 4 of the run: operation 5 \(seq"):
        verify_trace(cut, _ring(ix))


def test_a_trace_cut_at_the_tail_and_re_signed_is_not_complete(ix: Intently, tools: list[dict[str, Any]]) -> None:
    """Dropping the closing and the last decision leaves what an open run's trace looks like: it
    verifies, but says it is complete only up to the operation it ends on, never ``complete``."""
    s, decisions = offsite_run(ix, tools)
    ix.gate.close_run(s.id)
    doc = ix.gate.export_run(s.id)
    key = _home_key(ix)
    for leave_out in (
        lambda op: op["op"] == "GATE_RUN_CLOSED",
        lambda op: op["op"] == "GATE_RUN_CLOSED" or op["target"] == decisions[2].id,
    ):
        result = verify_trace(_cut(doc, key, leave_out), _ring(ix))
        assert (result["complete"], result["closed"]) == (False, False)
        assert "the run was open" in result["completeness"]
    # Nor can a cut trace be passed off as one without proofs: then nothing is proven.
    unbound = {k: v for k, v in _cut(doc, key, lambda op: op["op"] == "GATE_RUN_CLOSED").items() if k != "inclusion"}
    with (
        pytest.warns(UnboundTraceWarning, match="no inclusion proofs"),
        pytest.warns(IncompleteTraceWarning, match="completeness not proven: .* signature alone"),
    ):
        assert verify_trace(unbound, _ring(ix))["complete"] is False
    # Even unbound, a gap in the middle is a gap.
    cut = _cut(doc, key, lambda op: op["target"] == decisions[0].id)
    with pytest.raises(TableMismatch, match="leaves out operation 3"):
        verify_trace({k: v for k, v in cut.items() if k != "inclusion"}, _ring(ix))


def _log_old_run(ix: Intently) -> str:
    """A run as an older intently logged it: its operations record no place in the run. Written
    to the log directly and applied, as that journal did."""
    from intently.gate import Gate
    from intently.gate._engine import _apply_decided, _apply_session

    s = Gate.from_tools([]).session(user_request="Summarise the notes")  # in memory: a decision's shape only
    decision = s.check("frobnicate", {"x": "1"}).to_json()
    decision = {**decision, "id": "dec_old1", "session_id": "run_old1"}
    common = {"namespace": ix.namespace, "actor": str(ix.actor), "policy_version": "gate@1;old"}
    opening = {"request": "Summarise the notes", "resolved": {"intents": [], "negated": []}, "bundle": "old"}
    with ix.store.transaction() as tx:
        _apply_session(tx, ix.log.append(tx, op="GATE_SESSION_OPENED", target="run_old1", payload=opening, **common))
        _apply_decided(
            tx, ix.log.append(tx, op="GATE_DECIDED", target="dec_old1", payload={"decision": decision}, **common)
        )
    return "run_old1"


def test_a_home_upgraded_from_unchained_runs_verifies_them_saying_completeness_is_not_proven(
    ix: Intently, tools: list[dict[str, Any]], tmp_path: Path
) -> None:
    """Gate migration 5 carries a home made before it: its runs' rows have no chain (their
    operations record no place), their traces still verify with a warning that completeness is
    not proven, and runs opened after the upgrade are chained and close."""
    from intently import _engines
    from intently.store import registered_migrations

    old = _log_old_run(ix)
    (step,) = [m for m in registered_migrations()["gate"] if m.version == 5]
    with ix.store.transaction() as tx:  # the home as gate migration 4 left it
        for column in ("chain_n", "chain_last", "closed_at"):
            tx.execute(f"ALTER TABLE gate_sessions DROP COLUMN {column}")
        tx.execute("UPDATE schema_versions SET version = 4 WHERE component = 'gate'")
    assert step in ix.store.upgrade()
    assert ix.store.current_versions() == _engines.SCHEMA_VERSIONS
    with pytest.warns(IncompleteTraceWarning, match=f"completeness not proven: run {old} was logged before"):
        result = verify_trace(ix.gate.export_run(old), _ring(ix))
    assert (result["ok"], result["bound"], result["complete"], result["run_operations"]) == (True, True, False, None)
    assert result["warnings"] == [f"completeness not proven: {result['completeness']}"]
    s, _ = offsite_run(ix, tools)
    ix.gate.close_run(s.id)
    assert verify_trace(ix.gate.export_run(s.id), _ring(ix))["complete"] is True
    assert ix.log.verify().ok
    assert_replay_rebuilds(ix, tmp_path)


def test_the_cli_closes_a_run_and_verify_trace_says_it_is_complete(
    ix: Intently, tools: list[dict[str, Any]], tmp_path: Path
) -> None:
    """``gate close`` closes the run; ``verify-trace`` (a process of its own, offline, with the
    public keyring only) says ``complete`` false for the open run's trace and true once closed."""
    s, _ = offsite_run(ix, tools)
    home, keys, trace = ix.home.path, str(ix.home.keys_dir / "public.json"), tmp_path / "trace.json"
    ix.checkpoint()
    assert _cli(home, "gate", "export", s.id, "--out", str(trace)).exit_code == 0
    opened = run_cli("gate", "verify-trace", str(trace), "--keys", keys, "--json", cwd=tmp_path, actor=None)
    assert opened.code == 0, opened.stderr
    answer = json.loads(opened.stdout)
    assert (answer["ok"], answer["complete"], answer["closed"], answer["run_operations"]) == (True, False, False, 5)
    closed = _cli(home, "gate", "close", s.id, "--json")
    assert closed.exit_code == 0, closed.output
    assert json.loads(closed.stdout)["operations"] == 6
    assert _cli(home, "gate", "export", s.id, "--out", str(trace)).exit_code == 0
    plain = run_cli("gate", "verify-trace", str(trace), "--keys", keys, cwd=tmp_path, actor=None)
    assert plain.code == 0, plain.stderr
    assert "complete: True" in plain.stdout and "which was closed" in plain.stdout
    again = run_cli("--home", str(home), "gate", "close", s.id, cwd=tmp_path, actor="user:alice")
    assert again.code == 2 and again.error_line().startswith("error: gate run cannot move from closed"), again.stderr
