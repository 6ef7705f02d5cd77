"""The quick-start of docs/goals.md runs as written (on the real clock, so its target date must
not be one that will one day have passed)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from intently import Intently
from tests._backends import use_database

DOC = Path(__file__).resolve().parents[2] / "docs" / "goals.md"


def test_the_quick_start_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database_url: str | None
) -> None:
    match = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert match is not None, "docs/goals.md lost its quick-start example"
    with Intently.init(tmp_path, database_url=database_url) as ix:
        if database_url:
            use_database(ix.home.path, database_url)  # the example's Intently.open() finds it there
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(match.group(1), str(DOC), "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines[0] == "<active_goals>" and lines[-1] == "</active_goals>"
    assert 'priority="HIGH" state="ACTIVE"' in lines[1] and lines[1].endswith(">Ship the API</goal>")
    assert lines[2].endswith(">Write the API docs</goal>")
