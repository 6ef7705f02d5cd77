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
