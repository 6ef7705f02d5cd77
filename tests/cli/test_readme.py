"""The README's quick start runs as written ("docs that cannot drift"): its shell blocks line by
line through a real shell in a real git project, and its Python example in the home they made,
printing what its comment says."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from intently import Intently

from .._git import git

pytestmark = pytest.mark.sqlite_only  # the README's home is the default one: SQLite

README = Path(__file__).resolve().parents[2] / "README.md"
AGENTS = "# Agent guide\n\n- Never commit secrets or API keys.\n- Always run `make test` before pushing.\n"
LONG_RUNNING = ("intently hook serve",)  # a server: started by hand, tested in tests/hooks/test_serve.py


def _block(heading: str, lang: str) -> str:
    """The first ``lang`` code block under the README section ``heading``."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    match = re.compile(rf"```{lang}\n(.*?)```", re.S).search(text, start)
    assert match is not None, f"README lost the {lang} block of '{heading}'"
    return match.group(1)


def _commands(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _shell(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update(
        {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",  # as README's `export PATH`
            "INTENTLY_ACTOR": "user:alice",
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "NO_COLOR": "1",
        }
    )
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_readme_quick_start_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "AGENTS.md").write_text(AGENTS, encoding="utf-8")
    git(project, "add", "AGENTS.md")
    git(project, "commit", "-q", "-m", "agent guide")

    quick_start = _commands(_block("Put intently in front of Claude Code", "sh"))
    assert [c.split("#")[0].strip() for c in quick_start[:2]] == ["intently init", "intently req scan"]
    for line in quick_start:
        if line.startswith(LONG_RUNNING):
            continue
        done = _shell(line, project)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    assert "hook claude" in (project / ".claude" / "settings.json").read_text(encoding="utf-8")

    with Intently.open(project / ".intently", actor="user:alice") as ix:
        assert {r.statement for r in ix.requirements.list(status="active")} == {
            "Never commit secrets or API keys.",
            "Always run `make test` before pushing.",
        }  # scanned, then accepted: what the block is for
        for n in range(42):  # the log block's `proof 42` needs an operation 42
            ix.goals.add(f"Goal {n}")

    example = _block("The engines", "python")
    monkeypatch.chdir(project)
    monkeypatch.setenv("INTENTLY_ACTOR", "user:alice")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(example, str(README), "exec"), {})
    lines = printed.getvalue().splitlines()
    assert lines[0].startswith('<intently-context namespace="project"')
    assert "Never commit secrets or API keys." in printed.getvalue()
    claimed = re.search(r"print\(decision\.level, decision\.rule_ids\)\s+# (.+?):", example)
    assert claimed is not None and lines[-1] == claimed.group(1)  # "allow ('requested-action',)"

    for line in _commands(_block("The log", "sh")):
        done = _shell(line, project)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    assert (project / "proof.json").is_file() and (project / "fresh.db").is_file()
