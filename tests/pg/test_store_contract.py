"""The Store contract engines rely on, held on SQLite and PostgreSQL alike."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import psycopg
import pytest

from intently import ConflictError, StoreError
from intently.store import Store

TABLE = (
    "CREATE TABLE pgtest_items (id {serial} PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
    "big {bigint}, ratio {real}, data {blob}, flag INTEGER)"
)


@pytest.fixture
def items(store: Store) -> Store:
    with store.transaction() as tx:
        tx.execute(TABLE)
    return store


def names(store: Store) -> list[str]:
    with store.transaction(write=False) as tx:
        return [str(r["name"]) for r in tx.query("SELECT name FROM pgtest_items ORDER BY name")]


def test_commit_publishes_and_exception_rolls_back_everything(items: Store) -> None:
    committed: list[str] = []
    with items.transaction() as tx:
        tx.execute("INSERT INTO pgtest_items (name) VALUES (?)", ("kept",))
        tx.on_commit(lambda: committed.append("kept"))
    with pytest.raises(RuntimeError, match="boom"), items.transaction() as tx:
        tx.execute("INSERT INTO pgtest_items (name) VALUES (?)", ("lost",))
        tx.on_commit(lambda: committed.append("lost"))
        raise RuntimeError("boom")
    assert names(items) == ["kept"]
    assert committed == ["kept"]


def test_unique_violation_is_a_conflict_and_the_transaction_stays_usable(items: Store) -> None:
    with items.transaction() as tx:
        tx.execute("INSERT INTO pgtest_items (name) VALUES (?)", ("a",))
        with pytest.raises(ConflictError, match="constraint") as caught:
            tx.execute("INSERT INTO pgtest_items (name) VALUES (?)", ("a",))
        assert isinstance(caught.value.__cause__, sqlite3.IntegrityError | psycopg.IntegrityError)
        tx.execute("INSERT INTO pgtest_items (name) VALUES (?)", ("b",))
    assert names(items) == ["a", "b"]


def test_a_conflicting_insert_returning_can_be_caught_and_the_transaction_goes_on(items: Store) -> None:
    insert = "INSERT INTO pgtest_items (name) VALUES (?) RETURNING id"
    with items.transaction() as tx:
        first = tx.one(insert, ("a",))
        with pytest.raises(ConflictError):
            tx.one(insert, ("a",))
        updated = tx.one("UPDATE pgtest_items SET big = 1 WHERE name = ? RETURNING id", ("a",))
    assert first == updated == {"id": 1}


def test_other_database_errors_are_store_errors(items: Store) -> None:
    with pytest.raises(StoreError) as caught, items.transaction() as tx:
        tx.query("SELECT no_such_column FROM pgtest_items")
    assert isinstance(caught.value.__cause__, sqlite3.Error | psycopg.Error)
    with pytest.raises(ConflictError), items.transaction() as tx:
        tx.executemany("INSERT INTO pgtest_items (name) VALUES (?)", [("x",), ("x",)])
    assert names(items) == []


def test_nested_transactions_are_refused(items: Store) -> None:
    with items.transaction(write=False), pytest.raises(StoreError, match="nested"), items.transaction():
        pass
    with items.transaction() as tx:  # the refusal left nothing open
        tx.execute("INSERT INTO pgtest_items (name) VALUES (?)", ("after",))
    assert names(items) == ["after"]


def test_portable_types_round_trip_with_sqlite_values(items: Store) -> None:
    big = 2**62 + 7
    with items.transaction() as tx:
        tx.execute(
            "INSERT INTO pgtest_items (name, big, ratio, data, flag) VALUES (?, ?, ?, ?, ?)",
            ("first", big, 0.1 + 0.2, b"\x00\xffbytes", True),
        )
        tx.execute("INSERT INTO pgtest_items (name, big, flag) VALUES (?, ?, ?)", ("second", 5, False))
        rows = tx.query("SELECT * FROM pgtest_items ORDER BY id")
        total = tx.scalar("SELECT SUM(big) FROM pgtest_items")
    assert [r["id"] for r in rows] == [1, 2]
    assert rows[0] == {"id": 1, "name": "first", "big": big, "ratio": 0.1 + 0.2, "data": b"\x00\xffbytes", "flag": 1}
    assert rows[1]["flag"] == 0
    assert total == big + 5 and isinstance(total, int)


def test_placeholders_are_translated_outside_literals_only(items: Store) -> None:
    with items.transaction() as tx:
        tx.execute("INSERT INTO pgtest_items (name, big) VALUES ('what? 100%', ?)", (1,))
        tx.execute("INSERT INTO pgtest_items (name, big) VALUES (:name, :big)", {"name": "it''s", "big": 2})
        tx.execute("INSERT INTO pgtest_items (name, big) VALUES (?, ?)", ("Mixed Case", 3))
        literal = tx.query("SELECT big FROM pgtest_items WHERE name = 'what? 100%' AND big = ?", (1,))
        pattern = tx.query("SELECT name FROM pgtest_items WHERE name LIKE ? ORDER BY name", ("mixed%",))
        percent = tx.query("SELECT name FROM pgtest_items WHERE name LIKE '%100\\%%' ESCAPE '\\'")
    assert literal == [{"big": 1}]
    assert pattern == [{"name": "Mixed Case"}]  # SQLite's LIKE ignores ASCII case; so does ours
    assert percent == [{"name": "what? 100%"}]
    assert names(items) == ["Mixed Case", "it''s", "what? 100%"]


def test_upsert_and_update_returning_as_the_log_uses_them(items: Store) -> None:
    upsert = "INSERT INTO pgtest_items (name, big) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET big = excluded.big"
    with items.transaction() as tx:
        tx.execute(upsert, ("n", 1))
        tx.execute(upsert, ("n", 2))
        tx.execute("INSERT INTO pgtest_items (name, big) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", ("n", 9))
        row = tx.one("UPDATE pgtest_items SET big = big + 1 WHERE name = ? RETURNING big, name", ("n",))
        missing = tx.one("UPDATE pgtest_items SET big = big + 1 WHERE name = ? RETURNING big", ("absent",))
        changed = tx.execute("UPDATE pgtest_items SET flag = 1")
    assert row == {"big": 3, "name": "n"}
    assert missing is None
    assert changed == 1


def test_rows_come_back_as_tuples_in_column_order(items: Store) -> None:
    with items.transaction() as tx:
        tx.executemany("INSERT INTO pgtest_items (name, big) VALUES (?, ?)", [("a", 1), ("b", 2)])
        assert tx.rows("SELECT name, big FROM pgtest_items ORDER BY name") == [("a", 1), ("b", 2)]


def test_tables_lists_engine_tables_sorted(items: Store) -> None:
    tables = list(items.tables())
    assert tables == sorted(tables)
    assert {"log_ops", "log_streams", "log_checkpoints", "schema_versions", "pgtest_items"} <= set(tables)


def test_write_transactions_serialise_across_processes(
    store: Store, store_url: str, run_workers: Callable[[list[list[str]]], None]
) -> None:
    """Four processes each do a read-then-write 15 times; no increment may be lost."""
    with store.transaction() as tx:
        tx.execute("CREATE TABLE pgtest_counter (id INTEGER PRIMARY KEY, value {bigint} NOT NULL)")
        tx.execute("INSERT INTO pgtest_counter (id, value) VALUES (1, 0)")
    run_workers([["counter", store_url, "15"] for _ in range(4)])
    with store.transaction(write=False) as tx:
        assert tx.scalar("SELECT value FROM pgtest_counter WHERE id = 1") == 60


def test_read_transactions_see_one_snapshot(store: Store, store_url: str) -> None:
    """A reader keeps seeing the state as of its first read while a writer commits."""
    with store.transaction() as tx:
        tx.execute("CREATE TABLE pgtest_counter (id INTEGER PRIMARY KEY, value {bigint} NOT NULL)")
        tx.execute("INSERT INTO pgtest_counter (id, value) VALUES (1, 0)")
    from intently.store import open_store

    other = open_store(store_url)
    try:
        with store.transaction(write=False) as reader:
            assert reader.scalar("SELECT value FROM pgtest_counter") == 0
            with other.transaction() as writer:
                writer.execute("UPDATE pgtest_counter SET value = 1")
            assert reader.scalar("SELECT value FROM pgtest_counter") == 0
        with store.transaction(write=False) as reader:
            assert reader.scalar("SELECT value FROM pgtest_counter") == 1
    finally:
        other.close()
