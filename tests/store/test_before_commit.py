"""``Transaction.before_commit``: what the callback writes commits with the transaction, and an
error from it rolls the whole transaction back (the log signs a batch of appends there)."""

from __future__ import annotations

import pytest

from intently import Intently


def _meta(ix: Intently, key: str) -> object:
    with ix.store.transaction(write=False) as tx:
        return tx.scalar("SELECT value FROM log_meta WHERE key = ?", (key,))


def test_a_before_commit_write_commits_with_the_transaction(ix: Intently) -> None:
    order: list[str] = []
    with ix.store.transaction(write=True) as tx:
        tx.execute("INSERT INTO log_meta (key, value) VALUES ('body', 'b')")
        tx.before_commit(
            lambda: (order.append("before"), tx.execute("INSERT INTO log_meta (key, value) VALUES ('sealed', 's')"))
        )
        tx.on_commit(lambda: order.append("after"))
    assert order == ["before", "after"]
    assert (_meta(ix, "body"), _meta(ix, "sealed")) == ("b", "s")


def test_an_error_before_commit_rolls_everything_back(ix: Intently) -> None:
    committed: list[bool] = []

    def fail() -> None:
        raise RuntimeError("cannot sign")

    with pytest.raises(RuntimeError, match="cannot sign"), ix.store.transaction(write=True) as tx:
        tx.execute("INSERT INTO log_meta (key, value) VALUES ('body', 'b')")
        tx.before_commit(fail)
        tx.on_commit(lambda: committed.append(True))
    assert _meta(ix, "body") is None and committed == []
    with ix.store.transaction(write=True) as tx:  # the store is usable after it
        tx.execute("INSERT INTO log_meta (key, value) VALUES ('next', 'n')")
    assert _meta(ix, "next") == "n"
