"""``replay`` rebuilds state from a verified log into a fresh store."""

from __future__ import annotations

from pathlib import Path

import pytest

from intently import Actor, Intently, InvalidInput, LogIntegrityError, Permission
from intently.log import OperationLog, replay
from intently.store import SQLiteStore, Store

from .conftest import STREAM, LoggedHome, change_one, flip_bit


def fresh_target(ix: Intently, path: Path) -> OperationLog:
    store = SQLiteStore(path)
    store.upgrade()
    return OperationLog(store, clock=ix.runtime.clock, keyring=ix.log.keyring, origin=ix.log.origin)


def table(store: Store, sql: str) -> list[dict[str, object]]:
    with store.transaction(write=False) as tx:
        return tx.query(sql)


def test_replay_reproduces_grants_and_the_log(logged: LoggedHome, tmp_path: Path) -> None:
    with logged.open() as ix:
        ix.access.revoke(Actor.parse("carol"), Permission.WRITE)
        ix.in_namespace("other").access.grant(Actor.parse("bob"), Permission.ADMIN)
        ix.checkpoint()
        target = fresh_target(ix, tmp_path / "rebuilt.db")
        try:
            count = replay(ix.log, target)
            assert count == ix.log.size(STREAM) + ix.log.size("other") == 9 + 1
            grants = "SELECT * FROM access_grants ORDER BY namespace, actor, permission"
            assert table(target.store, grants) == table(ix.store, grants)
            assert table(target.store, "SELECT * FROM log_ops ORDER BY stream, seq") == table(
                ix.store, "SELECT * FROM log_ops ORDER BY stream, seq"
            )
            assert {s: cp.root for s, cp in target.latest_checkpoints().items()} == {
                s: cp.root for s, cp in ix.log.latest_checkpoints().items()
            }
            assert target.verify().ok
            with pytest.raises(InvalidInput, match="fresh store"):
                replay(ix.log, target)
        finally:
            target.store.close()


def test_replay_refuses_a_log_that_does_not_verify(logged: LoggedHome, tmp_path: Path) -> None:
    with logged.raw() as db:
        (actor,) = db.execute("SELECT actor FROM log_ops WHERE stream = ? AND seq = 3", (STREAM,)).fetchone()
        change_one(db, "UPDATE log_ops SET actor = ? WHERE stream = ? AND seq = 3", (flip_bit(actor), STREAM))
    with logged.open() as ix:
        target = fresh_target(ix, tmp_path / "rebuilt.db")
        try:
            with pytest.raises(LogIntegrityError) as caught:
                replay(ix.log, target)
            assert (caught.value.stream, caught.value.seq) == (STREAM, 3)
            assert target.size(STREAM) == 0
        finally:
            target.store.close()


def test_an_op_without_an_applier_cannot_be_replayed(ix: Intently, tmp_path: Path) -> None:
    with ix.store.transaction() as tx:
        ix.log.append(
            tx,
            namespace="proj",
            actor="user:alice",
            op="NOBODY_APPLIES_THIS",
            target="x",
            payload={},
            policy_version="t@1",
        )
    target = fresh_target(ix, tmp_path / "rebuilt.db")
    try:
        with pytest.raises(LogIntegrityError, match="no applier") as caught:
            replay(ix.log, target)
        assert (caught.value.stream, caught.value.seq) == ("proj", 2)
    finally:
        target.store.close()


def test_replay_reports_progress_over_verifying_and_applying(logged: LoggedHome, tmp_path: Path) -> None:
    """`intently log replay` draws a bar from these calls: the log is read twice (verified,
    then applied), so the steps add up to twice the operations replayed."""
    with logged.open() as ix:
        target = fresh_target(ix, tmp_path / "rebuilt.db")
        steps: list[int] = []
        try:
            count = replay(ix.log, target, progress=steps.append)
        finally:
            target.store.close()
    assert count == 8
    assert steps and all(n > 0 for n in steps)
    assert sum(steps) == 2 * count
