"""Schema migrations on both backends: each step once, all or nothing, newer databases refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from intently import Intently, ManualClock, StoreError
from intently.core.errors import SchemaTooNew
from intently.store import Store, _base, open_store, register_migration


@pytest.fixture
def scratch_component(monkeypatch: pytest.MonkeyPatch) -> str:
    """A test-only component whose migrations vanish from the registry after the test."""
    monkeypatch.setitem(_base._REGISTRY, "pgtest", {})
    return "pgtest"


def versions(store: Store) -> dict[str, int]:
    return {s.component: s.current for s in store.schema_status()}


def test_upgrade_applies_each_step_once_in_order(store: Store, store_url: str, scratch_component: str) -> None:
    register_migration(scratch_component, 1, "CREATE TABLE pgtest_notes (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
    register_migration(scratch_component, 2, "ALTER TABLE pgtest_notes ADD COLUMN score {real}")
    applied = store.upgrade()
    assert [(m.component, m.version) for m in applied] == [("pgtest", 1), ("pgtest", 2)]
    assert store.upgrade() == []
    assert versions(store)["pgtest"] == 2
    with store.transaction() as tx:
        tx.execute("INSERT INTO pgtest_notes (id, body, score) VALUES (?, ?, ?)", ("n1", "hello", 0.5))
    again = open_store(store_url)  # a second process-like opener finds nothing pending
    try:
        assert again.upgrade() == []
        assert [s.pending for s in again.schema_status() if s.component == "pgtest"] == [[]]
    finally:
        again.close()


def test_a_failing_step_leaves_no_trace(store: Store, scratch_component: str) -> None:
    register_migration(
        scratch_component,
        1,
        "CREATE TABLE pgtest_half (id TEXT PRIMARY KEY)",
        "CREATE TABLE pgtest_half (id TEXT PRIMARY KEY)",  # fails: the table exists
    )
    with pytest.raises(StoreError):
        store.upgrade()
    assert "pgtest_half" not in set(store.tables())
    assert versions(store).get("pgtest", 0) == 0


def test_newer_database_is_refused_and_left_untouched(project: Path, store_url: str, store: Store) -> None:
    url = store_url
    with Intently.init(
        project, actor="user:alice", name="proj", clock=ManualClock("2026-03-02T09:00:00Z"), database_url=url
    ) as ix:
        size = ix.log.size("proj")
    with store.transaction() as tx:
        tx.execute("UPDATE schema_versions SET version = 99 WHERE component = 'log'")
    with pytest.raises(SchemaTooNew, match="'log' schema is version 99"):
        store.check_not_newer()
    with pytest.raises(SchemaTooNew):
        Intently.open(project, actor="user:alice", database_url=url)
    with pytest.raises(SchemaTooNew):
        store.upgrade()
    assert versions(store)["log"] == 99
    with store.transaction(write=False) as tx:
        assert tx.scalar("SELECT size FROM log_streams WHERE stream = 'proj'") == size
