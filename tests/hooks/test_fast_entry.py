"""``python -m intently.hooks hook claude`` answers exactly like ``intently hook claude``, and fails closed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from intently import Intently

from .conftest import Handler, HookRunner, event, run_command


def _fast(payload: dict[str, Any] | str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    argv = list(args) or ["hook", "claude"]
    return run_command([sys.executable, "-m", "intently.hooks", *argv], payload, cwd=cwd)


def test_same_answer_as_the_cli(ix: Intently, project: Path, run_hook: HookRunner) -> None:
    payload = event(
        "PreToolUse",
        project,
        tool_name="Bash",
        tool_input={"command": "rm -rf build", "description": "clean"},
        tool_use_id="toolu_01ABC",
    )
    fast, cli = _fast(payload), run_hook(payload)
    assert fast.returncode == cli.returncode == 0, fast.stderr
    a = json.loads(fast.stdout)["hookSpecificOutput"]
    b = json.loads(cli.stdout)["hookSpecificOutput"]
    assert a["permissionDecision"] == b["permissionDecision"] == "deny"
    assert (
        a["permissionDecisionReason"].split(" (decision ")[0] == b["permissionDecisionReason"].split(" (decision ")[0]
    )
    assert len(ix.log.read("proj", op="GATE_DECIDED")) == 2


def test_broken_input_and_a_wrong_command_line_block(ix: Intently, project: Path) -> None:
    broken = _fast('{"hook_event_name": "PreToolUse", "tool_name": ', cwd=project)
    assert broken.returncode == 2 and "not JSON" in broken.stderr
    wrong = _fast(event("Stop", project), "hook", "cursor", cwd=project)
    assert wrong.returncode == 2 and "usage" in wrong.stderr


def test_an_event_missing_a_field_or_with_one_of_the_wrong_type_blocks_naming_it(
    project: Path, handle: Handler
) -> None:
    """The event is checked field by field (without pydantic, which the hook no longer
    imports): a field missing or of the wrong type blocks the call with its name and what is
    wrong, as before; a field intently does not know (Claude Code adds some) is no problem."""
    call = event("PreToolUse", project, tool_name="Bash", tool_input={"command": "ls"})
    bad = [
        ({k: v for k, v in call.items() if k != "tool_name"}, "tool_name: Field required"),
        ({**call, "tool_input": "ls"}, "tool_input: Input should be a valid dictionary"),
        ({**call, "session_id": 7}, "session_id: Input should be a valid string"),
        ({**call, "cwd": ["/"]}, "cwd: Input should be a valid string"),
        ({**call, "tool_use_id": 1}, "tool_use_id: Input should be a valid string"),
    ]
    for payload, problem in bad:
        done = handle(payload)
        assert done.exit_code == 2 and f"PreToolUse input invalid at {problem}" in done.stderr, (payload, done)
    prompt = {k: v for k, v in event("UserPromptSubmit", project).items() if k != "prompt"}
    assert "UserPromptSubmit input invalid at prompt: Field required" in handle(prompt).stderr
    fine = handle({**call, "cwd": None, "tool_use_id": None, "agent_id": "a-1", "effort": {"level": "high"}})
    assert fine.exit_code == 0, fine.stderr
