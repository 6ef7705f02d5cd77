"""``intently eval requirements`` on a tiny slice of the dev data (the full run is by hand)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from intently.cli._app import main

from ..conftest import SHARED

DEV = SHARED / "datasets" / "requirements"
REPO = "phoenixframework__phoenix"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    if not (DEV / REPO).is_dir():
        pytest.fail(f"dev data not found at {DEV}")
    data = tmp_path / "data"
    shutil.copytree(DEV / REPO, data / REPO)
    path = data / REPO / f"{REPO}.json"
    gold = json.loads(path.read_text())
    gold["tasks"] = [t for t in gold["tasks"] if t["id"] in ("t6", "t11", "t16")]
    path.write_text(json.dumps(gold))
    return data


def test_eval_prints_selection_beside_baselines_and_extraction(tiny: Path) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["eval", "requirements", "--data", str(tiny), "--budget", "2000", "--json"])
    result = json.loads(out.getvalue())
    assert set(result["selection"]) == {"intently", "raw_files", "inject_all", "glob_only", "keyword"}
    for figures in result["selection"].values():
        assert set(figures) == {"recall_specific", "recall_critical", "precision", "mean_tokens"}
        assert 0.0 <= figures["recall_specific"] <= 1.0 and figures["mean_tokens"] <= 2000
    ours, everything = result["selection"]["intently"], result["selection"]["inject_all"]
    assert ours["mean_tokens"] < everything["mean_tokens"]
    assert ours["recall_critical"] == 1.0  # t6's and t11's critical rules are path-scoped or project-level
    assert 0.0 < result["extraction"]["recall"] <= 1.0 and 0.0 < result["extraction"]["precision"] <= 1.0
    assert result["extraction"]["judge"].startswith("minilm cosine >= 0.6")  # the documented judge, named
    assert result["tasks"] == 3


def test_raw_files_baseline_only_shows_quotes_inside_the_cut(tiny: Path) -> None:
    from intently.eval.requirements import run

    small = run(tiny, budget=300, embedder="none", extraction=False)["selection"]["raw_files"]
    large = run(tiny, budget=4000, embedder="none", extraction=False)["selection"]["raw_files"]
    assert small["mean_tokens"] <= 300 < large["mean_tokens"]
    assert small["recall_specific"] < large["recall_specific"]


def test_a_run_reports_its_progress_per_repository_step(tiny: Path) -> None:
    """A full run takes about a minute: the command's bar is told each repository's selection
    and scan before it starts, out of the right total."""
    from intently.eval.requirements import run

    seen: list[tuple[int, int, str]] = []
    run(tiny, budget=300, embedder="none", progress=lambda done, total, what: seen.append((done, total, what)))
    assert seen == [(0, 2, f"{REPO}: selection"), (1, 2, f"{REPO}: scan")]


@pytest.mark.parametrize("kind", ["missing", "file", "bad-json", "no-tasks"])
def test_bad_data_paths_are_named_not_internal_errors(tmp_path: Path, kind: str) -> None:
    """A wrong ``--data`` (missing, a file) or a broken gold file used to end in an internal
    error (FileNotFoundError, NotADirectoryError, JSONDecodeError, KeyError) naming no path."""
    import subprocess
    import sys

    data, named = tmp_path / "nowhere", tmp_path / "nowhere"
    if kind == "file":
        data = named = tmp_path / "gold.json"
        data.write_text("{}", encoding="utf-8")
    elif kind in ("bad-json", "no-tasks"):
        data = tmp_path / "data"
        (data / "acme__app").mkdir(parents=True)
        named = data / "acme__app" / "acme__app.json"
        named.write_text('{"requirements": [' if kind == "bad-json" else '{"requirements": []}', encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "intently", "eval", "requirements", "--data", str(data), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert str(named) in proc.stderr


def test_a_budget_below_one_is_refused_before_the_run() -> None:
    """``--budget 0`` or ``-5`` used to run the whole evaluation and print zeros for every method."""
    import subprocess
    import sys

    for value in ("0", "-5"):
        proc = subprocess.run(
            [sys.executable, "-m", "intently", "eval", "requirements", "--data", str(DEV), "--budget", value],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2 and "--budget" in proc.stderr, proc.stderr
