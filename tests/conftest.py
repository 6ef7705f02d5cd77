"""Shared fixtures: a real home in a temp dir, on a real SQLite file, with a manual clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from intently import Intently, ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock("2026-03-02T09:00:00Z")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.fixture
def ix(project: Path, clock: ManualClock) -> Iterator[Intently]:
    """A fresh home owned by user:alice in namespace 'proj'."""
    with Intently.init(project, actor="user:alice", name="proj", clock=clock) as handle:
        yield handle
