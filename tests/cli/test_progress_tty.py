"""Long commands show a bar on a terminal, and nothing at all off one. The command runs as a
real process whose stderr is a pseudo-terminal (what a person sees), stdout a pipe."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from .._pty import run_on_pty
from .conftest import INTENTLY, run

pytestmark = pytest.mark.sqlite_only

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def run_on_terminal(*args: str, cwd: Path) -> tuple[int, str, str]:
    """Run ``intently ARGS`` with stderr on a pty; returns (exit code, stdout, what the terminal showed)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_") and k != "NO_COLOR"}
    environ.update({"INTENTLY_ACTOR": "alice", "TERM": "xterm", "COLUMNS": "120"})
    code, shown, stdout = run_on_pty([str(INTENTLY), *args], cwd=cwd, env=environ, on_pty="stderr")
    return code, stdout, ANSI.sub(b"", shown).decode(errors="replace")


def test_req_scan_shows_its_progress_on_a_terminal(home: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=home, check=True)
    (home / "AGENTS.md").write_text("# Agents\n\n- Always run the linter before pushing.\n", encoding="utf-8")
    code, stdout, terminal = run_on_terminal("req", "scan", "--no-commit", cwd=home)
    assert code == 0, terminal
    assert stdout.startswith("intently scan: created 1")  # results stay on stdout, clean
    assert "scanning" in terminal and "1/1" in terminal  # was silent for the whole scan


def test_log_verify_bar_only_on_a_terminal(home: Path) -> None:
    code, stdout, terminal = run_on_terminal("log", "verify", cwd=home)
    assert code == 0 and "verifying" in terminal and "Log verification" in stdout
    piped = run("log", "verify", cwd=home)
    assert piped.code == 0 and piped.stderr == ""
