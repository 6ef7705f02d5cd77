"""Run the real ``intently`` console script in a subprocess, as a user or an agent would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from intently import Intently

INTENTLY = Path(sys.executable).with_name("intently")


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)

    def error_line(self) -> str:
        """The one diagnostic line a failing command prints; no traceback."""
        assert self.code != 0, self.stdout
        assert "Traceback" not in self.stderr, self.stderr
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, self.stderr
        return lines[0]


def run(*args: str, cwd: Path, env: dict[str, str] | None = None, actor: str | None = "alice") -> Result:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    environ.update({"NO_COLOR": "1", "COLUMNS": "200"})
    if actor is not None:
        environ["INTENTLY_ACTOR"] = actor
    environ.update(env or {})
    proc = subprocess.run([str(INTENTLY), *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=120)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A project folder with a fresh home owned by user:alice (namespace 'proj').

    Set-up goes through the library, which is quicker than a process per step; the command
    under test always runs as a real process.
    """
    root = tmp_path / "proj"
    root.mkdir()
    Intently.init(root, actor="user:alice", name="proj").close()
    return root


def library(root: Path, actor: str = "user:alice", namespace: str | None = None) -> Intently:
    """The same home through the library (for set-up and for checking effects)."""
    return Intently.open(root / ".intently", actor=actor, namespace=namespace)
