"""Claude Code hooks leave the project's tracked witness file alone (a clean git tree)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from intently import Intently

from .conftest import Handler, event


def _git(project: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=project,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_a_session_of_hook_events_leaves_the_git_tree_clean(ix: Intently, handle: Handler) -> None:
    """Each hook event appends and signs a checkpoint; the witness file used to be rewritten
    with it, so `git status` showed .intently/checkpoints.json modified after every tool call
    (and an agent's `git commit -a` swept it in). The checkpoints are signed in the database;
    the witness catches up at the user's next checkpoint of every stream."""
    project = ix.home.project_root
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "init")
    witness = ix.home.witness_path.read_text(encoding="utf-8")

    target = str(project / "README.md")
    for payload in (
        event("UserPromptSubmit", project, prompt="Read the README and fix its typo"),
        event("PreToolUse", project, tool_name="Read", tool_input={"file_path": target}, tool_use_id="t1"),
        event("PostToolUse", project, tool_name="Read", tool_input={"file_path": target}, tool_response="# Title"),
        event("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf /"}, tool_use_id="t2"),
    ):
        assert handle(payload).exit_code == 0
    assert _git(project, "status", "--porcelain") == ""
    with Intently.open(ix.home.path, actor="user:alice") as other:
        signed = {cp.stream: cp.size for cp in other.log.latest_checkpoints().values()}
        assert signed["proj"] > 1  # the hook events were signed all the same

        other.log.checkpoint()  # `intently log checkpoint`: nothing new to sign, the witness catches up
        assert ix.home.witness_path.read_text(encoding="utf-8") != witness
        assert other.log.read_witness()["proj"].size == signed["proj"]
        assert other.log.verify().ok
    assert _git(project, "status", "--porcelain").split() == ["M", ".intently/checkpoints.json"]
