"""Drive ``intently hook claude`` through a real subprocess, as Claude Code does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from intently import Intently
from intently.hooks import HookResult, handle_claude_event

INTENTLY = str(Path(sys.executable).parent / "intently")

HookRunner = Callable[..., subprocess.CompletedProcess[str]]
Handler = Callable[[dict[str, Any]], HookResult]


def event(name: str, cwd: Path, **extra: Any) -> dict[str, Any]:
    """The common fields every Claude Code hook event carries (docs: hooks, 'Common input fields')."""
    return {
        "session_id": "8a2f7c1e-5b0d-4f2a-9c3e-1d2b3c4d5e6f",
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": name,
        **extra,
    }


@pytest.fixture
def handle(ix: Intently) -> Handler:
    """The same handler in this process (a fresh handle per event, as each hook process opens one).

    Multi-step gate flows use it to keep the suite fast; the protocol itself (stdin, stdout,
    exit codes) is driven through real subprocesses by ``run_hook``.
    """

    def run(payload: dict[str, Any]) -> HookResult:
        return handle_claude_event(json.dumps(payload), lambda cwd: Intently.open(ix.home.path, actor="user:alice"))

    return run


def run_command(
    argv: list[str], payload: dict[str, Any] | str, *, actor: str = "user:alice", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a hook command as Claude Code does: the event on stdin, no ``INTENTLY_*`` but the actor."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env["INTENTLY_ACTOR"] = actor
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(argv, input=raw, capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


@pytest.fixture
def run_hook() -> HookRunner:
    def run(payload: dict[str, Any] | str, *, actor: str = "user:alice", cwd: Path | None = None) -> Any:
        return run_command([INTENTLY, "hook", "claude"], payload, actor=actor, cwd=cwd)

    return run
