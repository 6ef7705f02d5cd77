"""The log benchmark runs end to end at a tiny size and keeps its JSON keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from intently.bench.__main__ import main as bench_main


def test_log_benchmark_at_a_tiny_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = bench_main(["log", "--ops", "12", "--verify-ops", "300", "--batch", "5", "--dir", str(tmp_path), "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"benchmark", "append_sync", "append_group_commit", "verify"}
    assert set(result["append_sync"]) == {"ops", "mode", "merkle_ops_per_s", "hash_chain_ops_per_s"}
    assert set(result["append_group_commit"]) == {"ops", "batch", "mode", "merkle_ops_per_s", "hash_chain_ops_per_s"}
    assert set(result["verify"]) == {
        "ops",
        "checks",
        "merkle_ops_per_s",
        "merkle_seconds",
        "hash_chain_ops_per_s",
        "hash_chain_seconds",
        "build_seconds",
    }
    assert (result["append_sync"]["ops"], result["append_group_commit"]["batch"], result["verify"]["ops"]) == (
        12,
        5,
        300,
    )
    for key in ("append_sync", "append_group_commit", "verify"):
        assert result[key]["merkle_ops_per_s"] > 0 and result[key]["hash_chain_ops_per_s"] > 0
    assert "synchronous=FULL" in result["append_sync"]["mode"]
    assert "synchronous=NORMAL" in result["append_group_commit"]["mode"]
    assert list(tmp_path.iterdir()) == []  # the temp databases are gone


def test_log_benchmark_table_for_people(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_main(["log", "--ops", "3", "--verify-ops", "50", "--batch", "2", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "(baseline)" in out and "(ours)" in out and "verify of 50 operations" in out


def test_appends_are_checked_after_timing_so_lost_work_cannot_win(tmp_path: Path) -> None:
    """The append figures used to be printed unchecked: a path that lost appends would only
    have looked faster. Both sides must now hold every operation, verified."""
    from intently.bench import log as bench
    from intently.core.clock import ManualClock

    clock = ManualClock("2026-01-01T00:00:00Z")
    merkle, chain = bench._open(tmp_path / "m.db", "NORMAL"), bench._open(tmp_path / "c.db", "NORMAL")
    log = bench._log(merkle, clock)
    try:
        for op in bench._operations(3, clock):
            with merkle.transaction() as tx:
                log.append(tx, namespace=bench.STREAM, actor=op.actor, op=op.op, target=op.target,
                           payload=json.loads(op.payload_json), policy_version=bench.POLICY)  # fmt: skip
            with chain.transaction() as tx:
                bench._chain_append(tx, op, clock)
        log.checkpoint()
        bench._check_appended(log, chain, 3)
        with pytest.raises(SystemExit, match="does not verify with 4"):
            bench._check_appended(log, chain, 4)
        with chain.transaction() as tx:
            tx.execute("DELETE FROM chain_ops WHERE seq = 3")
        with pytest.raises(SystemExit, match="hash chain"):
            bench._check_appended(log, chain, 3)
    finally:
        merkle.close()
        chain.close()


def test_a_missing_dir_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--dir`` naming no folder used to end in a FileNotFoundError traceback."""
    with pytest.raises(SystemExit) as stop:
        bench_main(["log", "--ops", "2", "--verify-ops", "5", "--dir", str(tmp_path / "nope")])
    assert stop.value.code == 2 and f"--dir {tmp_path / 'nope'}: no such folder" in capsys.readouterr().err
