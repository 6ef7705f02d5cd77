"""The operation log under concurrent appends from real processes, on both backends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from intently import Intently, ManualClock
from intently.log import verify_inclusion

WORKERS = 4
ROUNDS = 12


def test_concurrent_appends_form_one_gap_free_verifiable_stream(
    project: Path, store_url: str, run_workers: Callable[[list[list[str]]], None]
) -> None:
    clock = ManualClock("2026-03-02T09:00:00Z")
    with Intently.init(project, actor="user:alice", name="proj", clock=clock, database_url=store_url) as ix:
        home = str(ix.home.path)
    run_workers([["append", home, store_url, f"w{n}", str(ROUNDS)] for n in range(WORKERS)])

    with Intently.open(home, actor="user:alice", database_url=store_url) as ix:
        ops = ix.log.read("proj")
        assert [op.seq for op in ops] == list(range(1, 2 + WORKERS * ROUNDS))
        appended = sorted((op.payload["worker"], op.payload["i"]) for op in ops if op.op == "PGTEST_APPEND")
        assert appended == sorted((f"w{n}", i) for n in range(WORKERS) for i in range(ROUNDS))

        report = ix.log.verify()
        assert report.ok, report.to_json()
        (stream,) = report.streams
        assert stream.size == 1 + WORKERS * ROUNDS
        assert stream.unsigned_tail == 0  # every worker signed what it appended

        checkpoint = ix.log.latest_checkpoints()["proj"]
        assert checkpoint.size == stream.size
        for seq in (1, 2, stream.size // 2, stream.size):
            proof = ix.log.inclusion_proof("proj", seq)
            assert proof["root"] == checkpoint.root.hex()
            verify_inclusion(
                bytes.fromhex(proof["leaf_hash"]),
                proof["leaf_index"],
                proof["tree_size"],
                [bytes.fromhex(h) for h in proof["proof"]],
                checkpoint.root,
            )
