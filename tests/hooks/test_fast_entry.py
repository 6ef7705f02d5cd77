"""``python -m intently.hooks hook claude`` answers exactly like ``intently hook claude``, and fails closed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from intently import Intently

from .conftest import HookRunner, event, run_command


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
