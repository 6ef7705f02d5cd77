"""Extraction's operations replay: the turn and rejection records are record-only, and what
they led to (intents, decisions) rebuilds exactly from the log."""

from __future__ import annotations

from pathlib import Path

from intently import Intently
from intently.log import OperationLog, replay
from intently.store import SQLiteStore, Store


def _rows(store: Store, sql: str) -> list[dict[str, object]]:
    with store.transaction(write=False) as tx:
        return tx.query(sql)


def test_replay_rebuilds_what_observe_did(ix: Intently, tmp_path: Path) -> None:
    ix.extraction.observe(
        {"speaker": "bob", "text": "Michael to close the issue. We agreed to ship v2.", "time": "2026-03-04T10:00:00Z"}
    )
    ix.checkpoint()
    store = SQLiteStore(tmp_path / "rebuilt.db")
    store.upgrade()
    target = OperationLog(store, clock=ix.runtime.clock, keyring=ix.log.keyring, origin=ix.log.origin)
    try:
        assert replay(ix.log, target) == ix.log.size(ix.namespace)
        for sql in (
            "SELECT * FROM log_ops ORDER BY stream, seq",
            "SELECT * FROM goals_intents ORDER BY id",
            "SELECT * FROM goals_decisions ORDER BY id",
        ):
            assert _rows(store, sql) == _rows(ix.store, sql)
        assert [o.op for o in target.read(ix.namespace, op="TURN_OBSERVED")] == ["TURN_OBSERVED"]
    finally:
        store.close()
