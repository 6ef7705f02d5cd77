"""The SQLite backend and schema versions."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from intently import ConflictError, Intently, StoreError
from intently.core.errors import SchemaTooNew
from intently.store import SQLiteStore, register_migration, registered_migrations

pytestmark = pytest.mark.sqlite_only  # edits or copies the SQLite file directly


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def db_of(ix: Intently) -> Path:
    return ix.home.state_dir / "intently.db"


def test_connection_settings(ix: Intently) -> None:
    with ix.store.transaction(write=False) as tx:
        assert tx.scalar("PRAGMA journal_mode") == "wal"
        assert tx.scalar("PRAGMA foreign_keys") == 1
        assert tx.scalar("PRAGMA busy_timeout") >= 1000
        assert tx.scalar("PRAGMA synchronous") == 2  # FULL: a sync per committed operation


def test_database_newer_than_the_code_is_refused_and_left_untouched(ix: Intently) -> None:
    path = db_of(ix)
    ix.close()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE schema_versions SET version = 99 WHERE component = 'log'")
    before = digest(path)
    with pytest.raises(SchemaTooNew, match=r"'log' schema is version 99.*not touched"):
        Intently.open(ix.home.path, actor="user:alice")
    store = SQLiteStore(path)
    try:
        with pytest.raises(SchemaTooNew):
            store.upgrade()
    finally:
        store.close()
    assert digest(path) == before
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT version FROM schema_versions WHERE component = 'log'").fetchone() == (99,)


def test_upgrade_applies_what_is_missing_once(ix: Intently) -> None:
    path = db_of(ix)
    ix.close()
    with closing(sqlite3.connect(path)) as conn, conn:  # as an older intently without grants left it
        conn.execute("DROP TABLE access_grants")
        conn.execute("DELETE FROM schema_versions WHERE component = 'access'")
    store = SQLiteStore(path)
    try:
        pending = {s.component: s.pending for s in store.schema_status() if s.pending}
        assert pending == {"access": [1]}
        applied = store.upgrade()
        assert [(m.component, m.version) for m in applied] == [("access", 1)]
        assert "access_grants" in set(store.tables())
        assert store.upgrade() == []
        assert all(not s.pending for s in store.schema_status())
    finally:
        store.close()


def test_a_failing_migration_leaves_no_half_step(tmp_path: Path) -> None:
    register_migration("zz_test_broken", 1, "CREATE TABLE zz_ok (x INTEGER)", "CREATE TABLE zz_ok (x INTEGER)")
    store = SQLiteStore(tmp_path / "db.sqlite")
    try:
        with pytest.raises(StoreError):
            store.upgrade()
        assert "zz_ok" not in set(store.tables())
        assert {s.component: s.current for s in store.schema_status()}["zz_test_broken"] == 0
    finally:
        store.close()
        from intently.store import _base

        _base._REGISTRY.pop("zz_test_broken")
    assert "zz_test_broken" not in registered_migrations()


def test_two_different_migrations_for_one_version_are_refused() -> None:
    (log_v1, *_) = registered_migrations()["log"]
    register_migration("log", 1, *log_v1.statements, description=log_v1.description)  # same: fine
    with pytest.raises(StoreError, match="two different migrations"):
        register_migration("log", 1, "CREATE TABLE other (x INTEGER)")


def test_transactions_commit_together_or_not_at_all(ix: Intently) -> None:
    ran: list[str] = []
    with pytest.raises(RuntimeError), ix.store.transaction() as tx:
        ix.log.append(
            tx, namespace="proj", actor="user:alice", op="TEST_OP", target="a", payload={}, policy_version="t@1"
        )
        tx.on_commit(lambda: ran.append("rolled back"))
        raise RuntimeError("boom")
    assert ix.log.size("proj") == 1 and ran == []
    with ix.store.transaction() as tx:
        ix.log.append(
            tx, namespace="proj", actor="user:alice", op="TEST_OP", target="b", payload={}, policy_version="t@1"
        )
        tx.on_commit(lambda: ran.append("committed"))
        assert ran == []
    assert ix.log.size("proj") == 2 and ran == ["committed"]
    assert ix.log.verify().ok


def test_nested_transactions_are_refused(ix: Intently) -> None:
    with ix.store.transaction() as tx, pytest.raises(StoreError, match="nested"), ix.store.transaction():
        pass
    assert tx is not None


def test_constraint_and_sql_errors_are_mapped(ix: Intently) -> None:
    with pytest.raises(ConflictError), ix.store.transaction() as tx:
        tx.execute("INSERT INTO schema_versions (component, version) VALUES ('log', 1)")
    with pytest.raises(StoreError, match="sqlite"), ix.store.transaction(write=False) as tx:
        tx.query("SELECT * FROM no_such_table")


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database" * 100)
    store = SQLiteStore(path)
    try:
        with pytest.raises(StoreError):
            store.upgrade()
    finally:
        store.close()
