"""The operation log: one append-only, gap-free stream per namespace, each an RFC 9162
Merkle tree, with signed checkpoints and a tracked witness file.

Engines call :meth:`OperationLog.append` inside the same transaction as their state change,
so a change and its record commit together or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.clock import Clock, format_time
from ..core.errors import (
    BadSignature,
    InvalidInput,
    LeafMismatch,
    LogIntegrityError,
    NotFound,
    RolledBack,
    RootMismatch,
    SequenceGap,
    StaleCheckpoint,
)
from ..core.ids import new_id
from ..store import Store, Transaction, register_migration
from ._checkpoint import Checkpoint
from ._keys import KeyRing
from ._merkle import Frontier, consistency_proof, inclusion_proof, leaf_hash, root_hash
from ._operation import Operation, canonical_json

__all__ = ["OperationLog", "StreamReport", "VerifyReport"]

register_migration(
    "log",
    1,
    "CREATE TABLE log_streams (stream TEXT PRIMARY KEY, size {bigint} NOT NULL, frontier TEXT NOT NULL)",
    "CREATE TABLE log_ops (stream TEXT NOT NULL, seq {bigint} NOT NULL, id TEXT NOT NULL UNIQUE, "
    "time TEXT NOT NULL, actor TEXT NOT NULL, op TEXT NOT NULL, target TEXT NOT NULL, payload TEXT NOT NULL, "
    "policy_version TEXT NOT NULL, leaf TEXT NOT NULL, PRIMARY KEY (stream, seq))",
    "CREATE INDEX log_ops_target ON log_ops (stream, target)",
    "CREATE TABLE log_checkpoints (stream TEXT NOT NULL, size {bigint} NOT NULL, root TEXT NOT NULL, "
    "time TEXT NOT NULL, origin TEXT NOT NULL, key_id TEXT NOT NULL, signature TEXT NOT NULL, "
    "PRIMARY KEY (stream, size))",
    description="operation log, Merkle frontier per stream, signed checkpoints",
)

_CHUNK = 5000


@dataclass
class StreamReport:
    stream: str
    size: int = 0
    checkpoints: int = 0
    witnessed_size: int | None = None
    unsigned_tail: int = 0
    error: str | None = None
    error_type: str | None = None
    bad_seq: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        return {
            "stream": self.stream,
            "ok": self.ok,
            "size": self.size,
            "checkpoints": self.checkpoints,
            "witnessed_size": self.witnessed_size,
            "unsigned_tail": self.unsigned_tail,
            "error": self.error,
            "error_type": self.error_type,
            "bad_seq": self.bad_seq,
        }


@dataclass
class VerifyReport:
    streams: list[StreamReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.streams)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "streams": [s.to_json() for s in self.streams]}


class OperationLog:
    """Append, read, checkpoint, prove and verify."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock,
        keyring: KeyRing,
        origin: str,
        witness_path: Path | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.keyring = keyring
        self.origin = origin
        self.witness_path = witness_path
        self._dirty: set[str] = set()

    # -- writing --------------------------------------------------------------

    def append(
        self,
        tx: Transaction,
        *,
        namespace: str,
        actor: str,
        op: str,
        target: str,
        payload: dict[str, Any],
        policy_version: str,
    ) -> Operation:
        """Append one operation to the namespace's stream, inside the caller's transaction."""
        if not op or not op.replace("_", "").isalnum() or op.upper() != op:
            raise InvalidInput(f"op type {op!r} must be UPPER_SNAKE_CASE", where="op")
        payload_json = canonical_json(payload).decode("utf-8")
        row = tx.one("UPDATE log_streams SET size = size + 1 WHERE stream = ? RETURNING size, frontier", (namespace,))
        if row is None:
            tx.execute(
                "INSERT INTO log_streams (stream, size, frontier) VALUES (?, 0, '[]') ON CONFLICT (stream) DO NOTHING",
                (namespace,),
            )
            row = tx.one(
                "UPDATE log_streams SET size = size + 1 WHERE stream = ? RETURNING size, frontier", (namespace,)
            )
            assert row is not None
        seq = int(row["size"])
        frontier = Frontier.from_hex(seq - 1, json.loads(str(row["frontier"])))
        now = self.clock.now()
        operation = Operation(
            stream=namespace,
            seq=seq,
            id=new_id(now=now),
            time=format_time(now),
            actor=actor,
            op=op,
            target=target,
            payload_json=payload_json,
            policy_version=policy_version,
            payload=payload,
        )
        leaf = leaf_hash(operation.canonical())
        frontier.append(leaf)
        tx.execute("UPDATE log_streams SET frontier = ? WHERE stream = ?", (json.dumps(frontier.to_hex()), namespace))
        tx.execute(
            "INSERT INTO log_ops (stream, seq, id, time, actor, op, target, payload, policy_version, leaf) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                namespace,
                seq,
                operation.id,
                operation.time,
                actor,
                op,
                target,
                payload_json,
                policy_version,
                leaf.hex(),
            ),
        )
        tx.on_commit(lambda: self._dirty.add(namespace))
        return operation

    def copy_operation(self, tx: Transaction, operation: Operation) -> None:
        """Append an operation verbatim (replay and store copy), checking its sequence number."""
        row = tx.one("SELECT size, frontier FROM log_streams WHERE stream = ?", (operation.stream,))
        size = int(row["size"]) if row else 0
        if operation.seq != size + 1:
            raise SequenceGap(
                f"expected seq {size + 1}, got {operation.seq}", stream=operation.stream, seq=operation.seq
            )
        frontier = Frontier.from_hex(size, json.loads(str(row["frontier"])) if row else [])
        leaf = leaf_hash(operation.canonical())
        frontier.append(leaf)
        tx.execute(
            "INSERT INTO log_streams (stream, size, frontier) VALUES (?, ?, ?) "
            "ON CONFLICT (stream) DO UPDATE SET size = excluded.size, frontier = excluded.frontier",
            (operation.stream, frontier.size, json.dumps(frontier.to_hex())),
        )
        tx.execute(
            "INSERT INTO log_ops (stream, seq, id, time, actor, op, target, payload, policy_version, leaf) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                operation.stream,
                operation.seq,
                operation.id,
                operation.time,
                operation.actor,
                operation.op,
                operation.target,
                operation.payload_json,
                operation.policy_version,
                leaf.hex(),
            ),
        )
        tx.on_commit(lambda: self._dirty.add(operation.stream))

    # -- checkpoints ----------------------------------------------------------

    def checkpoint(self, streams: Iterable[str] | None = None) -> list[Checkpoint]:
        """Sign a checkpoint for every stream that grew since its last one, then update the
        tracked witness file. Called at the end of every command that appended."""
        if not self.keyring.can_sign:
            return []
        wanted = set(streams) if streams is not None else None
        made: list[Checkpoint] = []
        with self.store.transaction(write=True) as tx:
            rows = tx.query(
                "SELECT s.stream, s.size, s.frontier, (SELECT MAX(c.size) FROM log_checkpoints c "
                "WHERE c.stream = s.stream) AS signed FROM log_streams s ORDER BY s.stream"
            )
            for row in rows:
                stream = str(row["stream"])
                if wanted is not None and stream not in wanted:
                    continue
                size = int(row["size"])
                if size == 0 or (row["signed"] is not None and int(row["signed"]) >= size):
                    continue
                root = Frontier.from_hex(size, json.loads(str(row["frontier"]))).root()
                now = format_time(self.clock.now())
                body = Checkpoint.body(self.origin, stream, size, root, now)
                key_id, signature = self.keyring.sign(body, now)
                cp = Checkpoint(self.origin, stream, size, root, now, key_id, signature)
                tx.execute(
                    "INSERT INTO log_checkpoints (stream, size, root, time, origin, key_id, signature) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (stream, size, root.hex(), now, self.origin, key_id, cp.to_json()["signature"]),
                )
                made.append(cp)
        self._dirty.clear()
        if made:
            self.write_witness()
        return made

    def checkpoint_dirty(self) -> list[Checkpoint]:
        """Checkpoint only the streams this process appended to."""
        if not self._dirty:
            return []
        return self.checkpoint(set(self._dirty))

    def latest_checkpoints(self) -> dict[str, Checkpoint]:
        with self.store.transaction(write=False) as tx:
            rows = tx.query(
                "SELECT c.* FROM log_checkpoints c JOIN (SELECT stream, MAX(size) AS size FROM log_checkpoints "
                "GROUP BY stream) m ON c.stream = m.stream AND c.size = m.size ORDER BY c.stream"
            )
        return {str(r["stream"]): _checkpoint_from_row(r) for r in rows}

    def write_witness(self) -> None:
        """Write the latest checkpoint of every stream to the tracked witness file."""
        if self.witness_path is None:
            return
        data = {"streams": {s: cp.to_json() for s, cp in self.latest_checkpoints().items()}}
        tmp = self.witness_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(self.witness_path)

    def read_witness(self) -> dict[str, Checkpoint]:
        if self.witness_path is None or not self.witness_path.exists():
            return {}
        try:
            data = json.loads(self.witness_path.read_text(encoding="utf-8"))
            return {s: Checkpoint.from_json(cp) for s, cp in data.get("streams", {}).items()}
        except (json.JSONDecodeError, KeyError, ValueError) as exc:
            raise InvalidInput(f"witness file unreadable: {exc}", where=str(self.witness_path)) from exc

    # -- reading --------------------------------------------------------------

    def streams(self) -> list[str]:
        with self.store.transaction(write=False) as tx:
            return [str(r["stream"]) for r in tx.query("SELECT stream FROM log_streams ORDER BY stream")]

    def size(self, stream: str) -> int:
        with self.store.transaction(write=False) as tx:
            value = tx.scalar("SELECT size FROM log_streams WHERE stream = ?", (stream,))
        return int(value or 0)

    def read(
        self,
        stream: str,
        *,
        after: int = 0,
        limit: int | None = None,
        op: str | None = None,
        target: str | None = None,
        newest_first: bool = False,
    ) -> list[Operation]:
        sql = "SELECT * FROM log_ops WHERE stream = ? AND seq > ?"
        params: list[Any] = [stream, after]
        if op:
            sql += " AND op = ?"
            params.append(op)
        if target:
            sql += " AND target = ?"
            params.append(target)
        sql += " ORDER BY seq DESC" if newest_first else " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self.store.transaction(write=False) as tx:
            rows = tx.query(sql, params)
        return [Operation.from_row(r) for r in rows]

    def iter_stream(self, stream: str) -> Iterator[tuple[Operation, str]]:
        """Every operation of a stream in order, with its stored leaf hash, in chunks."""
        after = 0
        while True:
            with self.store.transaction(write=False) as tx:
                rows = tx.query(
                    "SELECT * FROM log_ops WHERE stream = ? AND seq > ? ORDER BY seq LIMIT ?", (stream, after, _CHUNK)
                )
            if not rows:
                return
            for row in rows:
                yield Operation.from_row(row), str(row["leaf"])
            after = int(rows[-1]["seq"])

    def get(self, stream: str, seq: int) -> Operation:
        with self.store.transaction(write=False) as tx:
            row = tx.one("SELECT * FROM log_ops WHERE stream = ? AND seq = ?", (stream, seq))
        if row is None:
            raise NotFound(f"no operation {seq} in stream {stream!r}")
        return Operation.from_row(row)

    def _leaves(self, stream: str, size: int) -> list[bytes]:
        with self.store.transaction(write=False) as tx:
            rows = tx.query("SELECT leaf FROM log_ops WHERE stream = ? AND seq <= ? ORDER BY seq", (stream, size))
        return [bytes.fromhex(str(r["leaf"])) for r in rows]

    # -- proofs ---------------------------------------------------------------

    def inclusion_proof(self, stream: str, seq: int, size: int | None = None) -> dict[str, Any]:
        """An inclusion proof of operation ``seq`` in the tree of ``size`` (default: the latest checkpoint)."""
        if size is None:
            cp = self.latest_checkpoints().get(stream)
            size = cp.size if cp else self.size(stream)
        if not 1 <= seq <= size:
            raise NotFound(f"no operation {seq} in stream {stream!r} at size {size}")
        leaves = self._leaves(stream, size)
        operation = self.get(stream, seq)
        return {
            "stream": stream,
            "seq": seq,
            "leaf_index": seq - 1,
            "tree_size": size,
            "leaf_hash": leaf_hash(operation.canonical()).hex(),
            "root": root_hash(leaves).hex(),
            "proof": [h.hex() for h in inclusion_proof(leaves, seq - 1)],
            "operation": operation.to_json(),
        }

    def consistency_proof(self, stream: str, old_size: int, new_size: int | None = None) -> dict[str, Any]:
        new = new_size if new_size is not None else self.size(stream)
        leaves = self._leaves(stream, new)
        return {
            "stream": stream,
            "old_size": old_size,
            "new_size": new,
            "old_root": root_hash(leaves[:old_size]).hex(),
            "new_root": root_hash(leaves).hex(),
            "proof": [h.hex() for h in consistency_proof(leaves, old_size)],
        }

    # -- verification ---------------------------------------------------------

    def verify(
        self, streams: Iterable[str] | None = None, *, progress: Callable[[int], None] | None = None
    ) -> VerifyReport:
        """Recompute every leaf and tree, check every checkpoint and the witness file.

        Never raises for integrity problems: each stream's report names the first error,
        its type and the first bad sequence number.
        """
        report = VerifyReport()
        witness = self.read_witness()
        names = sorted(set(self.streams()) | set(witness)) if streams is None else sorted(set(streams))
        for stream in names:
            rep = StreamReport(stream)
            try:
                self._verify_stream(stream, witness.get(stream), rep, progress)
            except LogIntegrityError as exc:
                rep.error = str(exc)
                rep.error_type = type(exc).__name__
                rep.bad_seq = exc.seq
            report.streams.append(rep)
        return report

    def _verify_stream(
        self,
        stream: str,
        witnessed: Checkpoint | None,
        rep: StreamReport,
        progress: Callable[[int], None] | None,
    ) -> None:
        with self.store.transaction(write=False) as tx:
            cps = [
                _checkpoint_from_row(r)
                for r in tx.query("SELECT * FROM log_checkpoints WHERE stream = ? ORDER BY size", (stream,))
            ]
            recorded_size = int(tx.scalar("SELECT size FROM log_streams WHERE stream = ?", (stream,)) or 0)
        rep.checkpoints = len(cps)
        for cp in cps:
            self._verify_signature(cp)
        roots_wanted = {cp.size: cp for cp in cps}
        if witnessed is not None:
            self._verify_signature(witnessed)
            rep.witnessed_size = witnessed.size
        frontier = Frontier()
        expected = 1
        for operation, stored_leaf in self.iter_stream(stream):
            if operation.seq != expected:
                kind = "missing" if operation.seq > expected else "repeated or out of order"
                raise SequenceGap(
                    f"operation {expected} is {kind} (found {operation.seq})", stream=stream, seq=expected
                )
            leaf = leaf_hash(operation.canonical())
            if leaf.hex() != stored_leaf:
                raise LeafMismatch("stored operation does not hash to its recorded leaf", stream=stream, seq=expected)
            frontier.append(leaf)
            signed = roots_wanted.get(frontier.size)
            if signed is not None and signed.root != frontier.root():
                raise RootMismatch(
                    f"checkpoint at size {signed.size} does not match the tree (history was changed at or before here)",
                    stream=stream,
                    seq=expected,
                )
            if witnessed is not None and frontier.size == witnessed.size and witnessed.root != frontier.root():
                raise RootMismatch(
                    f"witnessed checkpoint at size {witnessed.size} does not match the tree (history was rewritten)",
                    stream=stream,
                    seq=expected,
                )
            expected += 1
            if progress is not None:
                progress(1)
        size = frontier.size
        rep.size = size
        if recorded_size != size:
            raise SequenceGap(
                f"stream header says {recorded_size} operations but {size} are stored",
                stream=stream,
                seq=min(recorded_size, size) + 1,
            )
        for cp in cps:
            if cp.size > size:
                raise RolledBack(
                    f"a signed checkpoint covers {cp.size} operations but only {size} are stored",
                    stream=stream,
                    seq=size + 1,
                )
        if witnessed is not None:
            if witnessed.size > size:
                raise RolledBack(
                    f"the witnessed checkpoint covers {witnessed.size} operations but the database holds {size} "
                    "(database rolled back or truncated)",
                    stream=stream,
                    seq=size + 1,
                )
            newest = cps[-1].size if cps else 0
            if newest < witnessed.size:
                raise StaleCheckpoint(
                    f"the database's newest checkpoint covers {newest} operations, older than the witnessed "
                    f"{witnessed.size} (an old checkpoint was put back)",
                    stream=stream,
                    seq=newest + 1,
                )
        rep.unsigned_tail = size - (cps[-1].size if cps else 0)

    def _verify_signature(self, cp: Checkpoint) -> None:
        self.keyring.verify(cp.key_id, cp.signed_body(), cp.signature, stream=cp.stream)
        entry = self.keyring.entries[cp.key_id]
        if entry.retired is not None and cp.time > entry.retired:
            raise BadSignature(
                f"checkpoint at size {cp.size} signed by key {cp.key_id} after it was retired", stream=cp.stream
            )
        if cp.origin != self.origin:
            raise BadSignature(f"checkpoint origin {cp.origin!r} is not this log's {self.origin!r}", stream=cp.stream)


def _checkpoint_from_row(row: dict[str, Any]) -> Checkpoint:
    return Checkpoint.from_json(
        {
            "origin": row["origin"],
            "stream": row["stream"],
            "size": row["size"],
            "root": row["root"],
            "time": row["time"],
            "key_id": row["key_id"],
            "signature": row["signature"],
        }
    )
