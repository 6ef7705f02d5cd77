"""Shared fixtures: a real home in a temp dir, on a real SQLite file, with a manual clock."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from intently import Intently, ManualClock

pytest.register_assert_rewrite("tests._backends")
from tests._backends import use_database  # noqa: E402

pytest_plugins = ["tests._backends"]

# The tests, and every process they start, keep per-user caches (the record of verified model
# weights) in a folder of their own, never in the ~/.cache of whoever runs them.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="intently-tests-cache-")

# CI clones the repository into some folder with a copy of shared/ beside it.
SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The team's shared/ folder (datasets, research). Missing data fails; it never skips."""
    if not (SHARED / "datasets").is_dir():
        pytest.fail(f"shared data not found at {SHARED}; the tests need the shared/ folder beside the checkout")
    return SHARED


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock("2026-03-02T09:00:00Z")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.fixture
def ix(project: Path, clock: ManualClock, database_url: str | None) -> Iterator[Intently]:
    """A fresh home owned by user:alice in namespace 'proj', on each backend under test
    (``INTENTLY_TEST_BACKENDS``: SQLite always, PostgreSQL in ``make test``)."""
    with Intently.init(project, actor="user:alice", name="proj", clock=clock, database_url=database_url) as handle:
        if database_url:
            use_database(handle.home.path, database_url)  # CLI subprocesses open the same database
        yield handle
