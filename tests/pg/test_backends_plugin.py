"""The test machinery itself: fresh migrated databases, and homes pointed at them for every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from intently import Intently, ManualClock
from intently.store import open_store
from tests._backends import BACKENDS_ENV, PgCluster, selected_backends, use_database


def test_each_test_gets_a_fresh_fully_migrated_database(pg_cluster: PgCluster) -> None:
    first, second = pg_cluster.create_database(), pg_cluster.create_database()
    assert first != second
    store = open_store(first)
    try:
        assert all(not s.pending for s in store.schema_status())
        with store.transaction() as tx:
            tx.execute("INSERT INTO log_streams (stream, size, frontier) VALUES ('x', 0, '[]')")
    finally:
        store.close()
    other = open_store(second)
    try:
        with other.transaction(write=False) as tx:
            assert tx.scalar("SELECT COUNT(*) FROM log_streams") == 0
    finally:
        other.close()
    pg_cluster.drop_database(first)
    pg_cluster.drop_database(second)


def test_a_home_pointed_at_postgres_is_used_by_cli_processes_with_a_clean_environment(
    project: Path, pg_database: str
) -> None:
    with Intently.init(project, actor="user:alice", name="proj", clock=ManualClock(), database_url=pg_database) as ix:
        use_database(ix.home.path, pg_database)
        home = ix.home
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from intently.cli import main; main()",
            "--actor",
            "user:alice",
            "log",
            "verify",
            "--json",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["streams"][0]["size"] == 1
    assert not (home.state_dir / "intently.db").exists()  # SQLite was never touched


def test_backend_selection_defaults_to_sqlite_and_rejects_unknown_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BACKENDS_ENV, raising=False)
    assert selected_backends() == ["sqlite"]
    monkeypatch.setenv(BACKENDS_ENV, " SQLite, postgresql ")
    assert selected_backends() == ["sqlite", "postgresql"]
    monkeypatch.setenv(BACKENDS_ENV, "sqlite,mysql")
    with pytest.raises(pytest.UsageError, match="mysql"):
        selected_backends()
