"""The hook benchmark runs end to end at a tiny size and keeps its JSON keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from intently.bench.__main__ import main as bench_main


def test_hook_benchmark_at_a_tiny_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = bench_main(["hook", "--events", "2", "--dir", str(tmp_path), "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    timed = ("fast_hook", "cli_hook", "served_hook", "interpreter_start", "served_prompt")
    assert set(result) == {"benchmark", "events", *timed}
    assert result["events"] == 2
    for name in timed:
        assert set(result[name]) == {"p50_ms", "p95_ms", "mean_ms"}
        assert result[name]["p50_ms"] > 0
    # the hook does more than start an interpreter: a figure under the floor would be a broken timer
    assert result["fast_hook"]["p50_ms"] > result["interpreter_start"]["p50_ms"]
    assert result["served_hook"]["p50_ms"] > result["interpreter_start"]["p50_ms"]
    assert list(tmp_path.iterdir()) == []  # the temporary project is gone
