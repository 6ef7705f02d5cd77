"""``python -m intently.bench requirements``: what a command costs at thousands of rules.

A home of ``--rules`` real rule files (2,000 by default) in a temporary folder, its parse
cache warm, then these figures, each the median CPU time of ``--runs`` runs beside a
baseline measured in the same run:

- drawing the ``req list`` table, one line per rule, against Rich drawing the same rows as
  a table of one cell per value (what the listing did, and what other lists still do), on a
  terminal 80 and 200 columns wide;
- ``intently req list --json`` and ``intently req list`` as new processes, against
  ``intently --version`` (Python's start-up and the CLI's imports, which every command pays);
- what a requirements block costs (``intently req preview``, ``intently context``: every
  model call of an agent pays one), each stage against what it replaced, timed on the same
  rules in the same run: reading the vector index from its binary file against parsing the
  JSON index earlier versions wrote; the similarity of every rule as one numpy pass against
  the per-rule Python dot product; the BM25 words of every rule from the token cache against
  tokenising every text; a whole selection and a whole context block in process as a new
  process would run them (nothing of an earlier call in memory), against loading the rules
  alone; and ``intently req preview`` and ``intently context`` as new processes, against
  ``intently --version``.

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
from ..embed import EMBEDDERS, Embedder, VectorIndex, content_hash, cosine, dot_scores
from ..embed import _index as _vector_index
from ..requirements._bm25 import tokenize
from ..requirements._files import render_new_requirement
from ..requirements._model import Frontmatter, Provenance, Scope
from ..requirements._select import requirement_text
from ..requirements._tokencache import TokenCache

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


def _command_cpu(args: list[str], home: Path, runs: int, *, embedder: str = "minilm") -> float:
    """Median CPU seconds (user + system) of ``intently ARGS`` as a new process."""
    env = {**os.environ, "INTENTLY_HOME": str(home), "INTENTLY_ACTOR": "user:bench", "NO_COLOR": "1"}
    env["INTENTLY_EMBEDDER"] = embedder
    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "intently", *args], env=env, stdout=subprocess.DEVNULL, check=True, timeout=600
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


_TASK = "fix the api handler retry timeout in src/mod3/client.py"


def _legacy_json(index: VectorIndex, texts: list[str]) -> bytes:
    """The index as earlier versions wrote it: JSON, one list of floats per content hash."""
    vectors = index.vectors(texts, keep_only=False)
    entries = {content_hash(t): v for t, v in zip(texts, vectors, strict=True)}
    return json.dumps({"version": 1, "model_id": index.embedder.model_id, "entries": entries}).encode()


def _legacy_read(raw: bytes, dim: int) -> Callable[[], Any]:
    """What reading that JSON index cost: its parse and the floats of every entry."""

    def read() -> Any:
        data = json.loads(raw)
        return {str(k): [float(x) for x in v] for k, v in data["entries"].items() if len(v) == dim}

    return read


def _fresh(work: Callable[[], Any]) -> Callable[[], Any]:
    """``work`` as a new process would run it: no vector index parsed earlier in memory."""

    def run() -> Any:
        _vector_index._PARSED.clear()
        return work()

    return run


def _block_figures(ix: Intently, runs: int, embedder: Embedder | None) -> dict[str, dict[str, float]]:
    """The stages of a requirements block, each beside what it replaced (see the module)."""
    figures: dict[str, dict[str, float]] = {}
    reqs = ix.requirements
    reqs.select(_TASK, record=False)  # embeds every rule once and fills every cache
    texts = [requirement_text(r) for r in reqs.list() if r.status == "active"]
    if embedder is not None:
        folder = ix.home.index_dir
        index = VectorIndex(folder, embedder, name="requirements")
        raw = _legacy_json(index, texts)
        figures[f"vector index read, {len(texts)} rows"] = {
            "ours": _median_cpu(_fresh(lambda: VectorIndex(folder, embedder, name="requirements")), runs),
            "baseline": _median_cpu(_legacy_read(raw, embedder.dim), runs),
        }
        matrix = index.matrix(texts, keep_only=False)
        rows = matrix.tolist()
        query = embedder.embed_one(_TASK)
        figures[f"similarity of {len(texts)} rules"] = {
            "ours": _median_cpu(lambda: dot_scores(matrix, query), runs),
            "baseline": _median_cpu(lambda: [cosine(query, v) for v in rows], runs),
        }
    figures[f"BM25 words of {len(texts)} rules"] = {
        "ours": _median_cpu(lambda: TokenCache(ix.home.index_dir).tokens(texts), runs),
        "baseline": _median_cpu(lambda: [tokenize(t) for t in texts], runs),
    }
    load = _median_cpu(reqs.list, runs)
    figures["requirements block (Requirements.select), in process"] = {
        "ours": _median_cpu(_fresh(lambda: reqs.select(_TASK, record=False)), runs),
        "baseline": load,
    }
    figures["context block (Intently.context), in process"] = {
        "ours": _median_cpu(_fresh(lambda: ix.context(_TASK, fire=False)), runs),
        "baseline": load,
    }
    return figures


def _figures(args: argparse.Namespace) -> dict[str, dict[str, float]]:
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
        figures.update(_block_figures(ix, args.runs, ix.requirements.embedder))
        home = ix.home
        if not args.no_commands:
            start_up = _command_cpu(["--version"], home.path, args.runs)
            for name, command in (
                ("intently req list --json", ["req", "list", "--json"]),
                ("intently req list", ["req", "list"]),
                ("intently req preview TASK", ["req", "preview", _TASK]),
                ("intently context TASK", ["context", _TASK, "--no-fire"]),
            ):
                figures[name] = {
                    "ours": _command_cpu(command, home.path, args.runs, embedder=args.embedder),
                    "baseline": start_up,
                }
    return figures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m intently.bench requirements", description="What a command costs at thousands of rules."
    )
    parser.add_argument("--rules", type=int, default=2000, help="rule files in the home (default 2000)")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure; the median is reported (default 5)")
    parser.add_argument("--no-commands", action="store_true", help="skip the figures of whole commands (new processes)")
    parser.add_argument("--json", action="store_true", help="machine output")
    parser.add_argument(
        "--embedder", default="minilm", choices=EMBEDDERS, help="the rules' embedder (default minilm, as a home's)"
    )
    args = parser.parse_args(argv)
    saved = os.environ.get("INTENTLY_EMBEDDER")
    os.environ["INTENTLY_EMBEDDER"] = args.embedder  # what the home's engines (and commands) use
    try:
        figures = _figures(args)
    finally:
        if saved is None:
            os.environ.pop("INTENTLY_EMBEDDER", None)
        else:
            os.environ["INTENTLY_EMBEDDER"] = saved
    if args.json:
        print(json.dumps({"rules": args.rules, "runs": args.runs, "cpu_seconds": figures}, indent=2))
        return 0
    print(f"{args.rules} rules, median CPU seconds of {args.runs} runs")
    print(f"{'':55s} {'ours':>8s} {'baseline':>9s}")
    for name, value in figures.items():
        print(f"{name:55s} {value['ours']:8.3f} {value['baseline']:9.3f}")
    print("baselines: drawing: one Rich cell per value; commands: intently --version;")
    print("  vector index: the JSON index it replaced; similarity: a Python dot product per rule;")
    print("  BM25 words: tokenising every rule; blocks in process: loading the rules alone")
    return 0
