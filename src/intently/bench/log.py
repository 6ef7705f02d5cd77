"""``python -m intently.bench log``: what the tamper-evident log costs.

Three figures, each beside a plain SHA-256 hash chain over the very same canonical
operations, measured in the same run on the same machine and the same kind of SQLite file:

- appends per second with a sync per operation: one transaction per append, ``synchronous=FULL``
  (what every CLI command does by default);
- appends per second with group commit: ``--batch`` appends per transaction and
  ``synchronous=NORMAL`` (what ``[log] group_commit = true`` and batch importers get);
- verify throughput: the real :meth:`OperationLog.verify` (every leaf recomputed from the
  stored fields, every tree root and checkpoint signature checked) over ``--verify-ops``
  operations (1M by default), against re-walking the hash chain from its stored rows.

The verify log is built by bulk-inserting precomputed rows (appending a million operations
one transaction at a time would measure the disk, not the verifier); the build is checked by
the verify itself, and its time is reported separately.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.clock import ManualClock, format_time
from ..core.ids import new_id
from ..log import Frontier, KeyRing, OperationLog, canonical_json, canonical_operation, leaf_hash
from ..store import SQLiteStore, Transaction

__all__ = ["main"]

STREAM = "bench"
ORIGIN = "intently/bench"
POLICY = "access@1"

CHAIN_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS chain_head (stream TEXT PRIMARY KEY, size INTEGER NOT NULL, head TEXT NOT NULL)",
    # The same columns and indexes as log_ops, so the tables cost the same to write.
    "CREATE TABLE IF NOT EXISTS chain_ops (stream TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL UNIQUE, "
    "time TEXT NOT NULL, actor TEXT NOT NULL, op TEXT NOT NULL, target TEXT NOT NULL, payload TEXT NOT NULL, "
    "policy_version TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (stream, seq))",
    "CREATE INDEX IF NOT EXISTS chain_ops_target ON chain_ops (stream, target)",
)
_CHUNK = 5000
_GENESIS = "00" * 32


@dataclass(frozen=True)
class _Op:
    id: str
    time: str
    actor: str
    op: str
    target: str
    payload_json: str


def _operations(count: int, clock: ManualClock) -> Iterator[_Op]:
    """Representative operations: grants with a short JSON payload, a microsecond apart."""
    for i in range(count):
        now = clock.advance("0.001s")
        grantee = f"agent:worker-{i}"
        payload = canonical_json({"actor": grantee, "permission": ("read", "write", "admin")[i % 3]}).decode()
        yield _Op(new_id(now=now), format_time(now), "user:bench", "GRANT", grantee, payload)


def _open(path: Path, synchronous: str) -> SQLiteStore:
    from .. import access as _access  # noqa: F401  (registers the migrations a home has)

    store = SQLiteStore(path, synchronous=synchronous)
    store.upgrade()
    with store.transaction() as tx:
        for stmt in CHAIN_SCHEMA:
            tx.execute(stmt)
    return store


def _chain_append(tx: Transaction, op: _Op, clock: ManualClock) -> None:
    """The baseline: a hash chain, head = SHA-256(previous head || canonical operation).

    It does the same per-append work as :meth:`OperationLog.append` apart from the tree:
    a fresh id and time, the payload canonicalised, the head read and written.
    """
    row = tx.one("SELECT size, head FROM chain_head WHERE stream = ?", (STREAM,))
    size, head = (int(row["size"]), str(row["head"])) if row else (0, _GENESIS)
    seq = size + 1
    now = clock.now()
    op = _Op(
        new_id(now=now),
        format_time(now),
        op.actor,
        op.op,
        op.target,
        canonical_json(json.loads(op.payload_json)).decode(),
    )
    data = canonical_operation(STREAM, seq, op.id, op.time, op.actor, op.op, op.target, op.payload_json, POLICY)
    new_head = hashlib.sha256(bytes.fromhex(head) + data).hexdigest()
    tx.execute(
        "INSERT INTO chain_head (stream, size, head) VALUES (?, ?, ?) "
        "ON CONFLICT (stream) DO UPDATE SET size = excluded.size, head = excluded.head",
        (STREAM, seq, new_head),
    )
    tx.execute(
        "INSERT INTO chain_ops (stream, seq, id, time, actor, op, target, payload, policy_version, hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (STREAM, seq, op.id, op.time, op.actor, op.op, op.target, op.payload_json, POLICY, new_head),
    )


def _log(store: SQLiteStore, clock: ManualClock) -> OperationLog:
    ring = KeyRing([])
    ring.generate(format_time(clock.now()))
    log = OperationLog(store, clock=clock, keyring=ring, origin=ORIGIN)
    log.seal_batches = True  # as a `[log] group_commit = true` home signs (one transaction, one signature)
    return log


def _bench_appends(folder: Path, count: int, batch: int, synchronous: str) -> dict[str, float]:
    """Appends per second for the Merkle log and the hash chain, ``batch`` per transaction.

    The two take turns in rounds (alternating which goes first), so a burst of disk or CPU
    contention from elsewhere hits both alike.
    """
    clock = ManualClock("2026-01-01T00:00:00Z")
    ops = list(_operations(count, clock))
    stores = {
        kind: _open(folder / f"append-{kind}-{batch}-{synchronous}.db", synchronous) for kind in ("merkle", "chain")
    }
    log = _log(stores["merkle"], clock)
    elapsed = {"merkle": 0.0, "chain": 0.0}
    per_round = max(batch, -(-count // 8))
    try:
        for n, lo in enumerate(range(0, count, per_round)):
            order = ("merkle", "chain") if n % 2 == 0 else ("chain", "merkle")
            for kind in order:
                start = time.perf_counter()
                for b in range(lo, min(lo + per_round, count), batch):
                    with stores[kind].transaction() as tx:
                        for op in ops[b : min(b + batch, lo + per_round, count)]:
                            if kind == "merkle":
                                log.append(
                                    tx,
                                    namespace=STREAM,
                                    actor=op.actor,
                                    op=op.op,
                                    target=op.target,
                                    payload=json.loads(op.payload_json),
                                    policy_version=POLICY,
                                )
                            else:
                                _chain_append(tx, op, clock)
                if kind == "merkle":
                    log.checkpoint()  # a command signs once at its end: part of the cost
                elapsed[kind] += time.perf_counter() - start
        _check_appended(log, stores["chain"], count)
    finally:
        for store in stores.values():
            store.close()
    return {kind: count / seconds for kind, seconds in elapsed.items()}


def _check_appended(log: OperationLog, chain: SQLiteStore, count: int) -> None:
    """After timing, both sides must hold exactly ``count`` operations that verify.

    Untimed. Without it an append path that skipped or lost work (no leaf, a stale head)
    would simply look faster than the baseline.
    """
    report = log.verify()
    sizes = [s.size for s in report.streams]
    if not report.ok or sizes != [count]:
        raise SystemExit(f"the appended log does not verify with {count} operations: {report.to_json()}")
    chained = _verify_chain(chain)
    if chained != count:
        raise SystemExit(f"the hash chain holds {chained} operations, not {count}")


def _build_verify_log(path: Path, count: int) -> tuple[OperationLog, SQLiteStore, float]:
    """Bulk-insert ``count`` operations into both tables, precomputed, and sign the tree."""
    clock = ManualClock("2026-01-01T00:00:00Z")
    store = _open(path, "NORMAL")
    log = _log(store, clock)
    start = time.perf_counter()
    frontier = Frontier()
    head = bytes.fromhex(_GENESIS)
    merkle_rows: list[tuple[Any, ...]] = []
    chain_rows: list[tuple[Any, ...]] = []
    for seq, op in enumerate(_operations(count, clock), start=1):
        fields = (op.id, op.time, op.actor, op.op, op.target, op.payload_json, POLICY)
        data = canonical_operation(STREAM, seq, *fields)
        leaf = leaf_hash(data)
        frontier.append(leaf)
        head = hashlib.sha256(head + data).digest()
        merkle_rows.append((STREAM, seq, *fields, leaf.hex()))
        chain_rows.append((STREAM, seq, *fields, head.hex()))
        if len(merkle_rows) >= 50_000 or seq == count:
            with store.transaction() as tx:
                tx.executemany(
                    "INSERT INTO log_ops (stream, seq, id, time, actor, op, target, payload, policy_version, leaf) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    merkle_rows,
                )
                tx.executemany(
                    "INSERT INTO chain_ops (stream, seq, id, time, actor, op, target, payload, policy_version, hash) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    chain_rows,
                )
            merkle_rows, chain_rows = [], []
    with store.transaction() as tx:
        tx.execute(
            "INSERT INTO log_streams (stream, size, frontier) VALUES (?, ?, ?)",
            (STREAM, frontier.size, json.dumps(frontier.to_hex())),
        )
        tx.execute("INSERT INTO chain_head (stream, size, head) VALUES (?, ?, ?)", (STREAM, count, head.hex()))
    # Rows inserted in bulk carry no signature of their own: the bench vouches for what it
    # built, as an owner would with `intently log checkpoint --adopt` (one LOG_ADOPTED more).
    log.checkpoint(adopt="user:bench")
    return log, store, time.perf_counter() - start


def _verify_chain(store: SQLiteStore) -> int:
    """Re-walk the hash chain from its stored rows, the way ``verify`` walks the log."""
    head = bytes.fromhex(_GENESIS)
    after = 0
    checked = 0
    while True:
        with store.transaction(write=False) as tx:
            rows = tx.rows(
                "SELECT seq, id, time, actor, op, target, payload, policy_version, hash FROM chain_ops "
                "WHERE stream = ? AND seq > ? ORDER BY seq LIMIT ?",
                (STREAM, after, _CHUNK),
            )
        if not rows:
            break
        for seq, id_, time_, actor, op, target, payload, policy, stored in rows:
            head = hashlib.sha256(
                head + canonical_operation(STREAM, seq, id_, time_, actor, op, target, payload, policy)
            ).digest()
            if head.hex() != stored:
                raise SystemExit(f"hash chain broken at seq {seq}")
            checked += 1
        after = int(rows[-1][0])
    with store.transaction(write=False) as tx:
        if tx.scalar("SELECT head FROM chain_head WHERE stream = ?", (STREAM,)) != head.hex():
            raise SystemExit("hash chain head does not match")
    return checked


def run(ops: int, verify_ops: int, batch: int, folder: Path) -> dict[str, Any]:
    sync = _bench_appends(folder, ops, 1, "FULL")
    group = _bench_appends(folder, max(ops, batch), batch, "NORMAL")
    log, store, build = _build_verify_log(folder / "verify.db", verify_ops)
    try:
        start = time.perf_counter()
        report = log.verify()
        merkle_s = time.perf_counter() - start
        if not report.ok or report.streams[0].size != verify_ops + 1:  # + LOG_ADOPTED
            raise SystemExit(f"the built log does not verify: {report.to_json()}")
        start = time.perf_counter()
        chained = _verify_chain(store)
        chain_s = time.perf_counter() - start
    finally:
        store.close()
    return {
        "benchmark": "log",
        "append_sync": {
            "ops": ops,
            "mode": "one transaction per append, synchronous=FULL",
            "merkle_ops_per_s": round(sync["merkle"], 1),
            "hash_chain_ops_per_s": round(sync["chain"], 1),
        },
        "append_group_commit": {
            "ops": max(ops, batch),
            "batch": batch,
            "mode": f"{batch} appends per transaction, synchronous=NORMAL",
            "merkle_ops_per_s": round(group["merkle"], 1),
            "hash_chain_ops_per_s": round(group["chain"], 1),
        },
        "verify": {
            "ops": verify_ops,
            "checks": "every leaf, tree root at each checkpoint, checkpoint signatures",
            "merkle_ops_per_s": round(verify_ops / merkle_s, 1),
            "merkle_seconds": round(merkle_s, 3),
            "hash_chain_ops_per_s": round(chained / chain_s, 1),
            "hash_chain_seconds": round(chain_s, 3),
            "build_seconds": round(build, 3),
        },
    }


def _render(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Operation log benchmark (ops/s, higher is better)", title_justify="left")
    for col in ("measure", "ops", "Merkle log (ours)", "SHA-256 hash chain (baseline)", "ours / baseline"):
        table.add_column(col, justify="right" if col != "measure" else "left")
    for key, label in (
        ("append_sync", "append, sync per op (FULL)"),
        ("append_group_commit", f"append, group commit ({result['append_group_commit']['batch']}/tx, NORMAL)"),
        ("verify", "verify"),
    ):
        row = result[key]
        ours, base = row["merkle_ops_per_s"], row["hash_chain_ops_per_s"]
        table.add_row(label, f"{row['ops']:,}", f"{ours:,.0f}", f"{base:,.0f}", f"{ours / base:.2f}")
    console = Console()
    console.print(table)
    v = result["verify"]
    console.print(
        f"verify of {v['ops']:,} operations: {v['merkle_seconds']:.1f} s (hash chain {v['hash_chain_seconds']:.1f} s); "
        f"building the log by bulk insert took {v['build_seconds']:.1f} s"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m intently.bench log", description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000, help="operations per append measurement (default 2000)")
    parser.add_argument("--verify-ops", type=int, default=1_000_000, help="operations in the verified log (default 1M)")
    parser.add_argument("--batch", type=int, default=100, help="appends per transaction with group commit")
    parser.add_argument("--dir", type=Path, default=None, help="where to put the databases (default: a temp dir)")
    parser.add_argument("--json", action="store_true", help="machine output on stdout (stable keys)")
    args = parser.parse_args(argv)
    if args.ops < 1 or args.verify_ops < 1 or args.batch < 1:
        parser.error("--ops, --verify-ops and --batch must be positive")
    if args.dir is not None and not args.dir.is_dir():  # was a FileNotFoundError traceback
        parser.error(f"--dir {args.dir}: no such folder")
    with tempfile.TemporaryDirectory(prefix="intently-bench-log-", dir=args.dir) as tmp:
        result = run(args.ops, args.verify_ops, args.batch, Path(tmp))
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        _render(result)
    return 0
