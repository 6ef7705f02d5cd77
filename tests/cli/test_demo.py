"""``intently demo``'s foundation chapters: the log verifies, and a tampered copy does not."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from intently.demo import run


def test_demo_verifies_and_shows_tampering_caught() -> None:
    buffer = io.StringIO()
    assert run(Console(file=buffer, width=200)) == 0
    text = buffer.getvalue()
    assert "verifies" in text
    assert "LeafMismatch: stream 'sample' at seq" in text


def test_demo_runs_without_git_on_the_path(tmp_path: Path) -> None:
    """A fresh container may have Python and no git: the demo still walks every engine (the
    scan reads the sample folder without history). It was an internal error (FileNotFoundError)."""
    assert shutil.which("git", path=str(Path(sys.executable).parent)) is None
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update({"PATH": str(Path(sys.executable).parent), "NO_COLOR": "1", "COLUMNS": "200"})
    done = subprocess.run(
        [sys.executable, "-m", "intently", "demo"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "Scanned AGENTS.md (git is not installed, so no history): intently scan: created 4" in done.stdout
    assert "verifies" in done.stdout and "LeafMismatch: stream 'sample' at seq" in done.stdout
