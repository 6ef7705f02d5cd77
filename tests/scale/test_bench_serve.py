"""``python -m intently.bench serve`` at a tiny size: it runs end to end and reports sane figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "INTENTLY_DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "intently.bench", "serve", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


@pytest.mark.slow
def test_tiny_run_reports_every_configuration_and_no_double_fire() -> None:
    done = _bench("--workers", "1,2", "--requests", "4", "--threads", "2", "--seconds", "60", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)

    runs = result["runs"]
    configurations = {(r["backend"], r["workers"]) for r in runs}
    assert configurations == {("postgresql", 1), ("postgresql", 2), ("sqlite", 1)}
    assert {r["endpoint"] for r in runs} == {"context", "gate"} and len(runs) == 6
    for r in runs:
        assert r["requests"] == 4
        assert r["rps"] > 0 and 0 < r["p50_ms"] <= r["p99_ms"]

    assert result["per_core"]["cores"] == os.cpu_count()
    for endpoint in ("context", "gate"):
        assert set(result["per_core"][endpoint]) == {"rps_per_worker", "speedup_2_vs_1", "efficiency_2"}

    once = result["exactly_once"]
    assert once["matches"] == 12  # every context request carried the matching turn
    assert once["fires"] == 3 and once["shown"] == 3  # one per configuration (cooldown one hour)
    assert once["double_fires"] == 0 and once["log_ok"] is True


def test_bad_options_are_refused_before_anything_starts() -> None:
    done = _bench("--workers", "one")
    assert done.returncode == 2
    assert "--workers" in done.stderr


def test_gate_answers_other_than_allow_are_not_counted_as_done(tmp_path: Path) -> None:
    """The load generator used to accept any 200 from ``/gate/check``: a gate answering
    ``block`` on a short path would have been timed as a success. A real server on a SQLite
    home answers the benchmark's read with ``allow`` and an attacker-style command otherwise."""
    from intently.bench.serve import GATE_BODY, allows, generate, make_home, running

    fixture = make_home(tmp_path / "home", None)
    path = f"/v1/namespaces/{fixture.namespace}/gate/check"
    refused = {"user_request": "summarise the README for me", "tool": "Bash", "args": {"command": "rm -rf ~"}}
    with running(fixture.home, workers=1, actor="user:bench") as server:
        ok = generate(server, fixture.token, path, GATE_BODY, requests=3, seconds=60, threads=1, check=allows)
        bad = generate(server, fixture.token, path, refused, requests=3, seconds=60, threads=1, check=allows)
    assert not ok.errors and (len(ok.latencies), ok.shown, ok.unaccepted) == (3, 3, [])
    assert not bad.errors and len(bad.latencies) == 3 and bad.shown == 0
    assert bad.unaccepted and bad.unaccepted[0]["outcome"] != "allow"
