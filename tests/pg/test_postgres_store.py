"""What only the PostgreSQL backend has to get right: opening, URLs, SQL translation."""

from __future__ import annotations

import time

import pytest

from intently import StoreError
from intently.store import open_store
from intently.store._postgres import translate_sql
from tests._backends import PgCluster


def test_a_database_with_a_linguistic_collation_is_refused(pg_cluster: PgCluster) -> None:
    pg_cluster.admin(
        "CREATE DATABASE pgtest_icu TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'"
    )
    try:
        with pytest.raises(StoreError, match=r"linguistic collation.*LC_COLLATE 'C'"):
            open_store(pg_cluster.url("pgtest_icu"))
    finally:
        pg_cluster.admin("DROP DATABASE pgtest_icu WITH (FORCE)")


def test_a_missing_database_fails_at_once_with_the_servers_reason(pg_cluster: PgCluster) -> None:
    started = time.monotonic()
    with pytest.raises(StoreError, match='database "pgtest_absent" does not exist'):
        open_store(pg_cluster.url("pgtest_absent"))
    assert time.monotonic() - started < 5  # not the pool's retry-until-timeout


def test_passwords_never_appear_in_errors_or_the_store_url(pg_database: str) -> None:
    with pytest.raises(StoreError) as caught:
        open_store("postgresql://alice:s3cret@127.0.0.1:1/intently")
    assert "s3cret" not in str(caught.value)
    assert "alice:***@127.0.0.1:1" in str(caught.value)
    with pytest.raises(StoreError) as caught:
        open_store("postgresql://127.0.0.1:1/intently?password=s3cret&connect_timeout=2")
    assert "s3cret" not in str(caught.value)
    with_password = pg_database.replace("postgres@", "postgres:hunter2@")  # trust auth ignores it
    store = open_store(with_password)
    try:
        assert "hunter2" not in store.url and "hunter2" not in repr(store)
    finally:
        store.close()


@pytest.mark.parametrize(
    ("sqlite", "postgres"),
    [
        ("SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = %s AND b = %s"),
        ("SELECT '?', \"col?\" FROM t -- why?\nWHERE x = ?", "SELECT '?', \"col?\" FROM t -- why?\nWHERE x = %s"),
        ("SELECT 'it''s 5%' /* 100% ? */, ?", "SELECT 'it''s 5%%' /* 100%% ? */, %s"),
        ("UPDATE t SET a = :a WHERE b = :b_2", "UPDATE t SET a = %(a)s WHERE b = %(b_2)s"),
        ("SELECT x::text, ':no' FROM t", "SELECT x::text, ':no' FROM t"),
        ("WHERE name LIKE ? AND other NOT like 'LIKE'", "WHERE name ILIKE %s AND other NOT ILIKE 'LIKE'"),
        ("SELECT unlikely, likes FROM t", "SELECT unlikely, likes FROM t"),
        (
            "CREATE TABLE t (id {serial} PRIMARY KEY, n {bigint}, r {real}, b {blob}, j TEXT DEFAULT '{real}')",
            "CREATE TABLE t (id BIGSERIAL PRIMARY KEY, n BIGINT, r DOUBLE PRECISION, b BYTEA, j TEXT DEFAULT '{real}')",
        ),
    ],
)
def test_translation_rewrites_sql_but_never_literals(sqlite: str, postgres: str) -> None:
    assert translate_sql(sqlite) == postgres
