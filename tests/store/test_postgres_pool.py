"""The PostgreSQL pool after the server dropped its connections (a restart, an idle timeout)."""

from __future__ import annotations

import pytest

from intently import Intently


def test_connections_the_server_dropped_are_replaced_not_failed(ix: Intently, database_url: str | None) -> None:
    """After a restart every pooled connection is dead; the next request on one of them failed
    (503 from the server) until the pool noticed. The pool now checks a connection as it hands
    it out."""
    if database_url is None:
        pytest.skip("PostgreSQL only: SQLite has no server connections to lose")
    import psycopg

    ix.goals.add("Before the restart", type="GOAL")
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    ix.goals.add("After the restart", type="GOAL")
    assert sorted(i.value for i in ix.goals.list_intents()) == ["After the restart", "Before the restart"]
