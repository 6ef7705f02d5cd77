"""``intently store copy --to postgresql://...``: a SQLite home moved into PostgreSQL, log verified."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from intently import Actor, Intently, ManualClock
from intently.access import Permission
from intently.cli.store import copy_home
from intently.store import Store, _base, open_store, register_migration
from tests._backends import PgCluster, use_database

CLOCK = "2026-03-02T09:00:00Z"


def intently(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command, in its own process."""
    return subprocess.run(
        [sys.executable, "-c", "from intently.cli import main; main()", "--actor", "user:alice", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def contents(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every table but schema_versions, rows sorted, for comparing two stores."""
    names = [name for name in store.tables() if name != "schema_versions"]
    with store.transaction(write=False) as tx:
        tables = {name: tx.query(f"SELECT * FROM {name}") for name in names}
    return {name: sorted((tuple(sorted(r.items())) for r in rows), key=repr) for name, rows in tables.items()}


@pytest.fixture
def sqlite_home(project: Path) -> Path:
    """A SQLite home with grants in two namespaces, checkpointed."""
    with Intently.init(project, actor="user:alice", name="proj", clock=ManualClock(CLOCK)) as ix:
        ix.access.grant(Actor.parse("user:bob"), Permission.WRITE)
        ix.access.grant(Actor.parse("agent:ci"), Permission.READ)
        ix.access.revoke(Actor.parse("agent:ci"), Permission.READ)
        ix.access.grant(Actor.parse("user:bob"), Permission.READ, namespace="other")
        return ix.home.path


def test_copy_moves_every_table_and_the_log_verifies_on_both_sides(sqlite_home: Path, pg_cluster: PgCluster) -> None:
    url = pg_cluster.create_database(template=None)  # empty: the copy migrates it
    done = intently("--home", str(sqlite_home), "store", "copy", "--to", url, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["verified"] is True
    assert result["streams"] == {"other": 1, "proj": 4}
    assert result["tables"]["log_ops"] == 5

    source = open_store(f"sqlite:///{sqlite_home / 'state' / 'intently.db'}")
    target = open_store(url)
    try:
        assert contents(target) == contents(source)
    finally:
        source.close()
        target.close()

    with Intently.open(sqlite_home, actor="user:alice", database_url=url) as ix:
        ix.access.grant(Actor.parse("user:carol"), Permission.READ)  # the copy is a live home
        assert ix.log.size("proj") == 5
        assert ix.log.read("proj")[-1].target == "user:carol"
    with Intently.open(sqlite_home, actor="user:alice", database_url=url) as ix:
        assert ix.log.verify().ok


def test_copy_refuses_a_target_that_holds_data(sqlite_home: Path, pg_database: str) -> None:
    assert intently("--home", str(sqlite_home), "store", "copy", "--to", pg_database).returncode == 0
    again = intently("--home", str(sqlite_home), "store", "copy", "--to", pg_database)
    assert again.returncode == 2
    assert "not empty" in again.stderr
    target = open_store(pg_database)
    try:
        assert len(contents(target)["log_ops"]) == 5  # nothing merged
    finally:
        target.close()


def test_copy_refuses_a_source_log_that_does_not_verify(sqlite_home: Path, pg_database: str) -> None:
    with sqlite3.connect(sqlite_home / "state" / "intently.db") as db:
        db.execute('UPDATE log_ops SET payload = \'{"actor":"user:mallory","permission":"admin"}\' WHERE seq = 2')
    done = intently("--home", str(sqlite_home), "store", "copy", "--to", pg_database)
    assert done.returncode == 8
    assert "source log does not verify" in done.stderr and "seq 2" in done.stderr
    target = open_store(pg_database)
    try:
        assert contents(target)["log_ops"] == []
    finally:
        target.close()


def test_copied_serial_ids_continue_after_the_copy(
    project: Path, pg_cluster: PgCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(_base._REGISTRY, "pgtest", {})
    register_migration("pgtest", 1, "CREATE TABLE pgtest_seq (id {serial} PRIMARY KEY, note TEXT NOT NULL)")
    url = pg_cluster.create_database(template=None)
    with Intently.init(project, actor="user:alice", name="proj", clock=ManualClock(CLOCK)) as ix:
        with ix.store.transaction() as tx:
            tx.executemany("INSERT INTO pgtest_seq (note) VALUES (?)", [("a",), ("b",), ("c",)])
        assert copy_home(ix, url)["tables"]["pgtest_seq"] == 3
    target = open_store(url)
    try:
        with target.transaction() as tx:
            row = tx.one("INSERT INTO pgtest_seq (note) VALUES (?) RETURNING id", ("d",))
        assert row == {"id": 4}
    finally:
        target.close()


def test_store_status_and_upgrade_work_on_the_copy(sqlite_home: Path, pg_database: str) -> None:
    assert intently("--home", str(sqlite_home), "store", "copy", "--to", pg_database).returncode == 0
    use_database(sqlite_home, pg_database)
    status = intently("--home", str(sqlite_home), "store", "status", "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["url"] == pg_database
    assert {c["component"] for c in data["components"]} >= {"access", "log"}
    assert all(c["pending"] == [] and c["current"] == c["latest"] for c in data["components"])
    upgrade = intently("--home", str(sqlite_home), "store", "upgrade", "--json")
    assert upgrade.returncode == 0, upgrade.stderr
    assert json.loads(upgrade.stdout) == {"applied": [], "adopted": 0}


def test_bytes_kept_by_repair_cross_as_escaped_text_and_the_copy_names_them(
    sqlite_home: Path, pg_cluster: PgCluster, tmp_path: Path
) -> None:
    """``log repair`` keeps a tampered row's text that is not UTF-8 as its very bytes (SQLite
    holds any value in any column). PostgreSQL text cannot hold them: the copy exited 0 and
    the column read ``\\x6d616c6cff``, the bytes' hex, indistinguishable from a real string.
    Now the value crosses with only its bad byte spelled, and the copy names the row."""
    with sqlite3.connect(sqlite_home / "state" / "intently.db") as db:
        db.execute(
            "INSERT INTO log_quarantine (stream, seq, id, time, actor, op, reason, voided_by) "
            "VALUES ('proj', '6', 'op-forged', '2026-03-02T09:30:00Z', X'6d616c6cff', 'GRANT', 'unsigned', 'op-v')"
        )
    url = pg_cluster.create_database(template=None)
    done = intently("--home", str(sqlite_home), "store", "copy", "--to", url, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["escaped"] == [
        {"table": "log_quarantine", "column": "actor", "row": 1, "id": "op-forged"}
    ]
    assert "log_quarantine row 1 (id op-forged) column actor" in done.stderr
    target = open_store(url)
    try:
        with target.transaction(write=False) as tx:
            assert tx.scalar("SELECT actor FROM log_quarantine WHERE id = 'op-forged'") == "mall\\xff"
    finally:
        target.close()

    # to another SQLite file the bytes cross as they are, and nothing is named
    copied = tmp_path / "copy.db"
    done = intently("--home", str(sqlite_home), "store", "copy", "--to", str(copied), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["escaped"] == []
    with closing(sqlite3.connect(copied)) as db:
        assert db.execute("SELECT actor FROM log_quarantine").fetchone() == (b"mall\xff",)
