"""Log append throughput, PostgreSQL beside SQLite, in one run: ``python -m tests.pg.append_throughput``.

Each append is one write transaction holding one :meth:`OperationLog.append` (what every
engine write does). Both backends are durable: SQLite ``synchronous=FULL`` on a local file,
PostgreSQL with its default ``fsync=on``/``synchronous_commit=on`` on a throwaway cluster on
loopback. Figures: sequential appends per second and p50/p99 latency from one process, then
total appends per second from ``--procs`` processes appending to the same stream at once.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from intently import Intently, ManualClock
from tests._backends import TEMPLATE_DB, build_template, start_cluster

ROOT = Path(__file__).resolve().parents[2]


def _append_loop(home: str, url: str, count: int, gate: Path | None = None) -> tuple[list[float], float, float]:
    """Append ``count`` operations, one transaction each.

    Returns each append's latency and the wall-clock start and end of the loop. With
    ``gate``, announce readiness (``gate``.ready.PID) and wait for ``gate`` to appear, so
    concurrent workers start appending together, after their interpreter start-up.
    """
    latencies: list[float] = []
    with Intently.open(home, actor="user:alice", database_url=url or None) as ix:
        if gate is not None:
            gate.with_name(f"{gate.name}.ready.{os.getpid()}").touch()
            while not gate.exists():
                time.sleep(0.005)
        began = time.time()
        for i in range(count):
            start = time.perf_counter()
            with ix.store.transaction() as tx:
                ix.log.append(
                    tx,
                    namespace=ix.namespace,
                    actor="user:alice",
                    op="BENCH_APPEND",
                    target=f"t{i}",
                    payload={"i": i, "text": "remember to rotate the staging keys before the release"},
                    policy_version="bench@1",
                )
            latencies.append(time.perf_counter() - start)
        ended = time.time()
    return latencies, began, ended


def _measure(home: str, url: str, count: int, procs: int) -> dict[str, Any]:
    latencies, _, _ = _append_loop(home, url, count)
    ordered = sorted(latencies)
    gate = Path(home) / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.pg.append_throughput", "--worker", home, url, str(count), str(gate)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(procs)
    ]
    while len(list(gate.parent.glob("go.ready.*"))) < procs and all(w.poll() is None for w in workers):
        time.sleep(0.01)
    gate.touch()
    outputs = [w.communicate(timeout=600)[0] for w in workers]
    if any(w.returncode for w in workers):
        raise SystemExit(f"a worker failed: exit codes {[w.returncode for w in workers]}")
    windows = [json.loads(out) for out in outputs]
    span = max(w["end"] for w in windows) - min(w["start"] for w in windows)
    with Intently.open(home, actor="user:alice", database_url=url or None) as ix:
        report = ix.log.verify()
        size = ix.log.size(ix.namespace)
    return {
        "sequential_ops_per_s": round(count / sum(latencies), 1),
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
        "parallel_procs": procs,
        "parallel_ops_per_s": round(procs * count / span, 1),
        "log_size": size,
        "verified": report.ok,
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        _, began, ended = _append_loop(argv[1], argv[2], int(argv[3]), Path(argv[4]))
        print(json.dumps({"start": began, "end": ended}))
        return 0
    parser = argparse.ArgumentParser(prog="python -m tests.pg.append_throughput")
    parser.add_argument("--ops", type=int, default=500, help="appends per process")
    parser.add_argument("--procs", type=int, default=4, help="processes appending at once")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    cluster = start_cluster(durable=True)
    try:
        build_template(cluster)
        with tempfile.TemporaryDirectory() as tmp:
            for backend in ("sqlite", "postgresql"):
                url = cluster.create_database(template=TEMPLATE_DB) if backend == "postgresql" else ""
                project = Path(tmp) / backend
                project.mkdir()
                init = Intently.init(
                    project, actor="user:alice", name="bench", clock=ManualClock(), database_url=url or None
                )
                init.close()
                results[backend] = _measure(str(project), url, args.ops, args.procs)
    finally:
        cluster.stop()
    print(json.dumps({"ops_per_process": args.ops, **results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
