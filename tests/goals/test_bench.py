"""The cycles benchmark runs (tiny) and reports what the RFC asks for."""

from __future__ import annotations

import json

import pytest

from intently.bench import cycles


def test_rfc_mode_refuses_every_cycle_and_no_legal_edge(capsys: pytest.CaptureFixture[str]) -> None:
    assert cycles.main(["--json", "--nodes", "40", "--edges", "120", "--cyclic", "12"]) == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("nodes", "edges", "cyclic_attempts", "rejected", "false_rejections", "p50_us", "p99_us"):
        assert key in result
    assert result["nodes"] == 40 and result["edges"] == 120
    assert result["cyclic_attempts"] == 12 and result["rejected"] == 12
    assert result["false_rejections"] == 0
    assert 0 < result["p50_us"] <= result["p99_us"]
    assert result["baseline_p99_us"] > 0 and result["check_p99_us"] > 0


def test_scale_mode_reports_ours_beside_the_naive_search(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--json", "--scale", "--intents", "300", "--scale-edges", "900", "--cluster", "50", "--samples", "6"]
    assert cycles.main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["intents"] == 300 and result["edges"] >= 850
    assert result["insert_rejections"] == 0  # every timed insert really added its edge
    for key in ("edge_insert_p99_us", "naive_edge_check_p99_us", "bundle_p99_us", "naive_bundle_p99_us"):
        assert result[key] > 0


def test_sizes_with_nothing_to_time_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """``--nodes 0`` or ``--edges 0`` used to end in an IndexError traceback mid-run."""
    for argv in (["--nodes", "0"], ["--nodes", "5", "--edges", "0"], ["--scale", "--samples", "0"]):
        with pytest.raises(SystemExit) as stop:
            cycles.main(["--json", *argv])
        assert stop.value.code == 2
        assert "--" in capsys.readouterr().err
