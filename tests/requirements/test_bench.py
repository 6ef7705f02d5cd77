"""The requirements benchmark runs end to end at a tiny size and keeps its JSON keys."""

from __future__ import annotations

import json

import pytest

from intently.bench.__main__ import main as bench_main
from intently.cli import _common

pytestmark = pytest.mark.sqlite_only


def test_requirements_benchmark_at_a_tiny_size(capsys: pytest.CaptureFixture[str]) -> None:
    before = _common.out
    args = ["requirements", "--rules", "12", "--runs", "1", "--no-commands", "--json", "--embedder", "hashing"]
    assert bench_main(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["rules"], result["runs"]) == (12, 1)
    assert set(result["cpu_seconds"]) == {
        "drawing req list, 80 columns",
        "drawing req list, 200 columns",
        "vector index read, 12 rows",
        "similarity of 12 rules",
        "BM25 words of 12 rules",
        "requirements block (Requirements.select), in process",
        "context block (Intently.context), in process",
    }
    for figure in result["cpu_seconds"].values():
        assert set(figure) == {"ours", "baseline"} and figure["ours"] >= 0 and figure["baseline"] >= 0
    assert _common.out is before  # the CLI's console is put back
