"""The hook benchmark runs end to end at a tiny size and keeps its JSON keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from intently.bench.__main__ import main as bench_main


def test_hook_benchmark_at_a_tiny_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["hook", "--events", "2", "--prompts", "3", "--prompt-words", "12", "--dir", str(tmp_path), "--json"]
    code = bench_main(argv)
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    timed = ("fast_hook", "cli_hook", "served_hook", "interpreter_start", "served_prompt", "oneshot_prompt")
    assert set(result) == {"benchmark", "events", "long_session", *timed}
    assert result["events"] == 2
    long = result["long_session"]
    assert set(long) == {"prompts", "prompt_words", "pre_tool_use", "reread_baseline"}
    assert (long["prompts"], long["prompt_words"]) == (3, 12)
    for row in (*(result[name] for name in timed), long["pre_tool_use"], long["reread_baseline"]):
        assert set(row) == {"p50_ms", "p95_ms", "mean_ms"}
        assert row["p50_ms"] > 0
    # the hook does more than start an interpreter: a figure under the floor would be a broken timer
    assert result["fast_hook"]["p50_ms"] > result["interpreter_start"]["p50_ms"]
    assert result["served_hook"]["p50_ms"] > result["interpreter_start"]["p50_ms"]
    assert result["oneshot_prompt"]["p50_ms"] > result["interpreter_start"]["p50_ms"]
    assert list(tmp_path.iterdir()) == []  # the temporary project is gone


def test_decide_benchmark_at_a_tiny_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The decided call after a long prompt and after a long session, beside a short prompt's."""
    argv = ["decide", "--events", "1", "--prompt-chars", "3000", "--prompts", "3", "--prompt-words", "12"]
    code = bench_main([*argv, "--dir", str(tmp_path), "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    timed = ("short_prompt", "long_prompt", "long_session", "interpreter_start")
    assert set(result) == {"benchmark", "events", "prompt_chars", "prompts", "prompt_words", *timed}
    assert (result["benchmark"], result["events"], result["prompt_chars"]) == ("decide", 1, 3000)
    assert (result["prompts"], result["prompt_words"]) == (3, 12)
    for name in timed:
        assert set(result[name]) == {"p50_ms", "p95_ms", "mean_ms", "cpu_p50_ms"}
        assert result[name]["p50_ms"] > 0
    for name in ("short_prompt", "long_prompt", "long_session"):  # a decision is more than an interpreter start
        assert result[name]["p50_ms"] > result["interpreter_start"]["p50_ms"]
    assert list(tmp_path.iterdir()) == []  # the temporary project is gone
