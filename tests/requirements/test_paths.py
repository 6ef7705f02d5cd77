"""A path-scoped rule reaches the task however the agent names the file: relative, absolute
(as Claude Code's tools and most prompts do), or with Windows separators."""

from __future__ import annotations

from pathlib import Path

import pytest

from intently import Intently

from .conftest import run_main


@pytest.fixture
def rix(backend_rix: Intently) -> Intently:
    """This module's tests run on each backend under test (``INTENTLY_TEST_BACKENDS``)."""
    return backend_rix


def test_absolute_and_windows_paths_meet_project_relative_globs(repo: Path, rix: Intently) -> None:
    gui = rix.requirements.add("Do not read model state synchronously after Refresh.", paths=["pkg/gui/**"])
    other = rix.requirements.add("Keep translations in english.go only.", paths=["pkg/i18n/**"])
    target = repo / "pkg" / "gui" / "refresh.go"

    def ids(task: str, paths: list[str]) -> list[str]:
        return rix.requirements.select(task, paths=paths, record=False).ids

    assert ids("Fix the race", ["pkg/gui/refresh.go"]) == [gui.id]
    assert ids("Fix the race", [str(target)]) == [gui.id]  # was []: the rule for that file missed
    assert ids("Fix the race", [str(repo.resolve() / "pkg/gui/../gui/refresh.go")]) == [gui.id]
    assert ids("Fix the race", ["pkg\\gui\\refresh.go"]) == [gui.id]
    assert ids(f"Fix the race in {target}.", []) == [gui.id]
    # A file outside the project is not governed by its path rules.
    assert ids("Fix the race", ["/somewhere/else/pkg/gui/refresh.go"]) == []
    assert other.id not in ids(f"Fix the race in {target}", [])
    code, out, err = run_main(rix.home.path, "req", "preview", "--task", "Fix the race", "--paths", str(target))
    assert code == 0 and gui.id in out, err
