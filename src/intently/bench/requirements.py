"""``python -m intently.bench requirements``: what a command costs at thousands of rules.

A home of ``--rules`` real rule files (2,000 by default) in a temporary folder, its parse
cache warm, then these figures, each the median CPU time of ``--runs`` runs beside a
baseline measured in the same run:

- drawing the ``req list`` table, one line per rule, against Rich drawing the same rows as
  a table of one cell per value (what the listing did, and what other lists still do), on a
  terminal 80 and 200 columns wide;
- ``intently req list --json`` and ``intently req list`` as new processes, against
  ``intently --version`` (Python's start-up and the CLI's imports, which every command pays).

CPU time, not wall time: the figures should not depend on what else the machine runs.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console

from .. import Intently
from ..cli import _common
from ..cli.req import _row
from ..requirements._files import render_new_requirement
from ..requirements._model import Frontmatter, Provenance, Scope

__all__ = ["main"]

_COLUMNS = ["ID", "STATUS", "SCOPE", "SOURCE", "STATEMENT"]
_WORDS = ["always", "never", "check", "the", "api", "handler", "database", "migration", "release", "tests"]
_WORDS += ["widget", "config", "logging", "errors", "retry", "timeout", "cache", "files", "must", "use", "prefer"]


def _write_rules(folder: Path, count: int) -> None:
    """``count`` rule files of varied scope and statement length, as a pull would bring them."""
    folder.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for n in range(count):
        rid = f"req-{n:012x}"
        when = start + timedelta(minutes=n)
        scope = (
            Scope(level="domain", domains=["api"], paths=[f"src/mod{n % 40}/**"] if n % 2 else []) if n % 3 else Scope()
        )
        meta = Frontmatter(
            id=rid, scope=scope, provenance=Provenance(kind="doc", ref="AGENTS.md"), created=when, updated=when
        )
        words = [_WORDS[(n * 7 + i * 3) % len(_WORDS)] for i in range(6 + n % 35)]
        statement = " ".join(words).capitalize() + f" (rule {n})."
        (folder / f"{rid}.md").write_text(render_new_requirement(meta, statement, "It broke once."), encoding="utf-8")


def _median_cpu(work: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times)


def _drawing(rows: list[list[Any]], width: int, *, one_line: bool) -> Callable[[], None]:
    def draw() -> None:
        _common.out = Console(file=io.StringIO(), width=width, force_terminal=True, soft_wrap=True)
        _common.table("requirements", _COLUMNS, rows, one_line=one_line)

    return draw


def _command_cpu(args: list[str], home: Path, runs: int) -> float:
    """Median CPU seconds (user + system) of ``intently ARGS`` as a new process."""
    env = {**os.environ, "INTENTLY_HOME": str(home), "INTENTLY_ACTOR": "user:bench", "NO_COLOR": "1"}
    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "intently", *args], env=env, stdout=subprocess.DEVNULL, check=True, timeout=600
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m intently.bench requirements", description="What a command costs at thousands of rules."
    )
    parser.add_argument("--rules", type=int, default=2000, help="rule files in the home (default 2000)")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure; the median is reported (default 5)")
    parser.add_argument("--no-commands", action="store_true", help="skip the figures of whole commands (new processes)")
    parser.add_argument("--json", action="store_true", help="machine output")
    args = parser.parse_args(argv)
    figures: dict[str, dict[str, float]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="intently-bench-req-") as tmp,
        Intently.init(Path(tmp), actor="user:bench", name="bench") as ix,
    ):
        _write_rules(ix.home.requirements_dir, args.rules)
        ix.requirements.list()  # parses every file once and fills the parse cache
        time.sleep(3.2)  # until the files are old enough for their stats to be kept
        reqs = ix.requirements.list()
        rows = [_row(r) for r in reqs]
        saved = _common.out
        try:
            for width in (80, 200):
                figures[f"drawing req list, {width} columns"] = {
                    "ours": _median_cpu(_drawing(rows, width, one_line=True), args.runs),
                    "baseline": _median_cpu(_drawing(rows, width, one_line=False), args.runs),
                }
        finally:
            _common.out = saved
        home = ix.home
        if not args.no_commands:
            start_up = _command_cpu(["--version"], home.path, args.runs)
            for command in (["req", "list", "--json"], ["req", "list"]):
                figures["intently " + " ".join(command)] = {
                    "ours": _command_cpu(command, home.path, args.runs),
                    "baseline": start_up,
                }
    if args.json:
        print(json.dumps({"rules": args.rules, "runs": args.runs, "cpu_seconds": figures}, indent=2))
        return 0
    print(f"{args.rules} rules, median CPU seconds of {args.runs} runs")
    print(f"{'':45s} {'ours':>8s} {'baseline':>9s}")
    for name, value in figures.items():
        print(f"{name:45s} {value['ours']:8.3f} {value['baseline']:9.3f}")
    print("baselines: drawing: one Rich cell per value; commands: intently --version")
    return 0
