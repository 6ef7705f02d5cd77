"""When Claude Code ends a session, the hook closes the gate runs the session opened, so a trace
exported from then on proves it holds every operation of its run (``complete``), instead of
"complete up to operation N; the run was open" for every run a hook ever made."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from intently import Intently
from intently.gate import verify_trace
from intently.log import KeyRing

from .conftest import Handler, HookRunner, event


def _verified(ix: Intently, run: str) -> dict[str, object]:
    ring = KeyRing.load_public(ix.home.keys_dir / "public.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return verify_trace(json.loads(json.dumps(ix.gate.export_run(run))), ring)


def test_session_end_closes_the_sessions_runs_so_their_traces_prove_complete(
    ix: Intently, project: Path, handle: Handler, run_hook: HookRunner
) -> None:
    read = {"file_path": str(project / "README.md")}
    runs = []
    for prompt in ("Read the README and summarise it", "Now fix the typo in tests/test_api.py"):
        assert handle(event("UserPromptSubmit", project, prompt=prompt)).exit_code == 0
        assert handle(event("PreToolUse", project, tool_name="Read", tool_input=read)).exit_code == 0
        runs.append(ix.log.read("proj", op="GATE_SESSION_OPENED")[-1].target)
    assert len(set(runs)) == 2, "each prompt opens its own run"
    before = _verified(ix, runs[0])
    assert before["ok"] is True and before["complete"] is False and before["closed"] is False

    ended = run_hook(event("SessionEnd", project, reason="logout"))  # a real hook process

    assert ended.returncode == 0, ended.stderr
    assert "could not close" not in ended.stderr
    closings = ix.log.read("proj", op="GATE_RUN_CLOSED")
    assert sorted(op.target for op in closings) == sorted(runs)
    for run in runs:
        after = _verified(ix, run)
        assert after["ok"] is True and after["complete"] is True and after["closed"] is True, after
    # Ending again (Claude Code may send it twice, or Stop then SessionEnd) closes nothing twice.
    again = run_hook(event("SessionEnd", project, reason="other"))
    assert again.returncode == 0 and "could not close" not in again.stderr
    assert len(ix.log.read("proj", op="GATE_RUN_CLOSED")) == 2


def test_stop_leaves_the_runs_open(ix: Intently, project: Path, handle: Handler) -> None:
    """Stop fires after every reply, and the user may go on: only the session's end closes."""
    assert handle(event("UserPromptSubmit", project, prompt="Read the README")).exit_code == 0
    read = {"file_path": str(project / "README.md")}
    assert handle(event("PreToolUse", project, tool_name="Read", tool_input=read)).exit_code == 0
    assert handle(event("Stop", project, stop_hook_active=False)).exit_code == 0
    assert ix.log.read("proj", op="GATE_RUN_CLOSED") == []


def test_session_end_of_a_session_that_made_no_run_closes_nothing(ix: Intently, project: Path, handle: Handler) -> None:
    done = handle(event("SessionEnd", project, reason="logout"))
    assert done.exit_code == 0, done.stderr
    assert "could not close" not in done.stderr
    assert ix.log.read("proj", op="GATE_RUN_CLOSED") == []
