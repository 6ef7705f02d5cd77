"""Fixtures for the PostgreSQL tests: every test here runs on both backends, always.

The shared ``backend``/``database_url`` fixtures follow ``INTENTLY_TEST_BACKENDS``; the
store contract does not: it is the point of this folder to hold both backends to it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from intently.store import Store, open_store

if "tests._backends" not in sys.modules:  # until tests/conftest.py loads the plugin itself
    from tests._backends import pg_cluster, pg_database  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database on each backend: a SQLite file, or a migrated PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'contract.db'}"
    return str(request.getfixturevalue("pg_database"))


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    opened.upgrade()
    yield opened
    opened.close()


@pytest.fixture
def run_workers() -> Callable[[list[list[str]]], None]:
    """Run ``python -m tests.pg._workers ARGS`` for each argument list, all at once, as real processes."""

    def run(jobs: list[list[str]]) -> None:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.pg._workers", *job],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for job in jobs
        ]
        failures = []
        try:
            for proc in procs:
                _out, err = proc.communicate(timeout=120)
                if proc.returncode != 0:
                    failures.append(f"{proc.args!r} exited {proc.returncode}:\n{err[-2000:]}")
        finally:
            for proc in procs:  # a timeout must not leave workers behind
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        assert not failures, "\n".join(failures)

    return run
