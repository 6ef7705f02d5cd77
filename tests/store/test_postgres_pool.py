"""The PostgreSQL pool after the server dropped its connections (a restart, an idle timeout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from intently import Intently, InvalidInput


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


def test_a_second_home_is_not_initialised_in_a_database_that_holds_one(
    ix: Intently, database_url: str | None, tmp_path: Path
) -> None:
    """Two HOME_INITs in one shared database made two owners of the same rows, each signing
    with a key the other's keyring lacks (both logs then failed to verify)."""
    if database_url is None:
        pytest.skip("PostgreSQL only: a new SQLite home has a database of its own")
    other = tmp_path / "other-project"
    other.mkdir()
    with pytest.raises(InvalidInput, match="already holds the home 'proj'") as info:
        Intently.init(other, actor="user:carol", name="other", database_url=database_url)
    assert info.value.where == "database_url"
    assert not (other / ".intently").exists()
    assert ix.log.verify().ok and ix.log.read("proj", op="HOME_INIT")[0].actor == "user:alice"
