"""``python -m intently.bench cycles [--json] [--scale]``: dependency cycle detection (RFC-0013 section 12).

Default (the RFC's benchmark): a layered dependency graph of 1000 intents and 5000 legal edges
(depth <= 10, fan-in <= 20), each edge added through ``Goals.depend`` and timed; then 100
additions that would each close a cycle. Prints ``nodes, edges, cyclic_attempts, rejected,
false_rejections, p50_us, p99_us`` for edge insertion, beside a naive baseline measured in
the same run (load every edge, depth-first search from the new prerequisite).

``--scale``: 100k intents and 500k edges (in clusters of ``--cluster`` intents, as projects
are), then edge-insert p99 and DEFAULT-bundle p99, each beside the naive full-graph version
(load the whole edge table / every intent and filter in Python). Sizes are options so the
test suite runs both modes tiny.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from functools import partial
from pathlib import Path
from typing import Any

from .._intently import Intently
from ..core.errors import IntentlyError
from ..goals import MAX_DEPTH, MAX_FAN_IN, DependencyCycle, Goals, check_new_edge

__all__ = ["main"]


def _pct(samples: list[float], q: float) -> float:
    if not samples:
        return 0.0
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _layered_edges(rng: random.Random, ids: list[str], count: int, fan_in: dict[str, int]) -> list[tuple[str, str]]:
    """``count`` legal edges among ``ids``: each node gets a layer 0..MAX_DEPTH and may depend only on
    lower layers (so no cycle and no chain longer than MAX_DEPTH), with fan-in capped."""
    layers = MAX_DEPTH + 1
    n = len(ids)
    layer = {ids[i]: i * layers // n for i in range(n)}
    upper = [i for i in ids if layer[i] > 0]
    edges: set[tuple[str, str]] = set()
    attempts = 0
    while len(edges) < count and attempts < count * 50:
        attempts += 1
        dependent = rng.choice(upper)
        pool_end = _first_of_layer(ids, layer, layer[dependent])
        prerequisite = ids[rng.randrange(pool_end)]
        if (dependent, prerequisite) in edges or fan_in.get(prerequisite, 0) >= MAX_FAN_IN:
            continue
        edges.add((dependent, prerequisite))
        fan_in[prerequisite] = fan_in.get(prerequisite, 0) + 1
    return sorted(edges, key=lambda e: rng.random())


def _first_of_layer(ids: list[str], layer: dict[str, int], target: int) -> int:
    lo, hi = 0, len(ids)
    while lo < hi:
        mid = (lo + hi) // 2
        if layer[ids[mid]] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _timed(fn: Callable[[], Any]) -> tuple[float, BaseException | None]:
    start = time.perf_counter()
    try:
        fn()
    except IntentlyError as exc:
        return (time.perf_counter() - start) * 1e6, exc
    return (time.perf_counter() - start) * 1e6, None


def _naive_cycle_check(ix: Intently, dependent: str, prerequisite: str) -> bool:
    """The baseline: read every edge, then search the whole graph from the prerequisite."""
    with ix.store.transaction(write=False) as tx:
        rows = tx.query("SELECT dependent, prerequisite FROM goals_edges")
    adj: dict[str, list[str]] = {}
    for r in rows:
        adj.setdefault(r["dependent"], []).append(r["prerequisite"])
    stack, seen = [prerequisite], {prerequisite}
    while stack:
        node = stack.pop()
        if node == dependent:
            return True
        for nxt in adj.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def _check_only(ix: Intently, dependent: str, prerequisite: str) -> float:
    """Our write-time check alone (no commit), timed like the baseline."""
    start = time.perf_counter()
    with ix.store.transaction(write=False) as tx, suppress(IntentlyError):
        check_new_edge(tx, dependent, prerequisite)
    return (time.perf_counter() - start) * 1e6


def _open(workdir: Path) -> Intently:
    return Intently.init(workdir / "bench", actor="user:bench", name="bench")


def _make_nodes(goals: Goals, n: int, rng: random.Random, chunk: int = 2000) -> list[str]:
    priorities = ["LOW"] * 30 + ["MEDIUM"] * 50 + ["HIGH"] * 15 + ["CRITICAL"] * 5
    types = ["GOAL", "COMMITMENT", "OPEN_QUESTION", "DECISION_IN_PROGRESS", "RISK", "FOLLOW_UP"]
    verbs = ["ship", "review", "migrate", "document", "decide", "fix", "test", "deploy", "design", "measure"]
    things = ["api", "billing", "schema", "login", "cache", "search", "exporter", "dashboard", "queue", "auth"]
    ids: list[str] = []
    for start in range(0, n, chunk):
        items = []
        for k in range(start, min(n, start + chunk)):
            text = f"{rng.choice(verbs).capitalize()} the {rng.choice(things)} for project-{k // 100} ticket PRJ-{k}"
            items.append({"text": text, "priority": rng.choice(priorities), "type": rng.choice(types)})
        ids.extend(goals.add_many(items))
    return ids


def run_rfc(nodes: int, edges: int, cyclic: int, seed: int, workdir: Path) -> dict[str, Any]:
    rng = random.Random(seed)
    with _open(workdir) as ix:
        goals = ix.goals
        ids = _make_nodes(goals, nodes, rng)
        legal = _layered_edges(rng, ids, edges, {})
        insert_us: list[float] = []
        baseline_us: list[float] = []
        check_us: list[float] = []
        false_rejections = 0
        adjacency: dict[str, list[str]] = {}
        for n, (dependent, prerequisite) in enumerate(legal):
            if n % max(1, len(legal) // 100) == 0:
                start = time.perf_counter()
                _naive_cycle_check(ix, dependent, prerequisite)
                baseline_us.append((time.perf_counter() - start) * 1e6)
                check_us.append(_check_only(ix, dependent, prerequisite))
            took, error = _timed(partial(goals.depend, dependent, prerequisite))
            insert_us.append(took)
            if error is not None:
                false_rejections += 1
            else:
                adjacency.setdefault(dependent, []).append(prerequisite)
        rejected = 0
        cyclic_us: list[float] = []
        starts = [i for i in adjacency if adjacency[i]]
        for _ in range(cyclic):
            top = rng.choice(starts)
            node = top
            for _step in range(rng.randint(1, MAX_DEPTH)):
                nxt = adjacency.get(node)
                if not nxt:
                    break
                node = rng.choice(nxt)
            # ``top`` depends (transitively) on ``node``: making ``node`` depend on ``top`` closes a cycle.
            took, error = _timed(partial(goals.depend, node, top))
            cyclic_us.append(took)
            if isinstance(error, DependencyCycle):
                rejected += 1
    return {
        "nodes": nodes,
        "edges": len(legal) - false_rejections,
        "cyclic_attempts": cyclic,
        "rejected": rejected,
        "false_rejections": false_rejections,
        "p50_us": round(_pct(insert_us, 0.50), 1),
        "p99_us": round(_pct(insert_us, 0.99), 1),
        "cyclic_p99_us": round(_pct(cyclic_us, 0.99), 1),
        "check_p50_us": round(_pct(check_us, 0.50), 1),
        "check_p99_us": round(_pct(check_us, 0.99), 1),
        "baseline": "naive full-graph DFS per insert (read every edge); compare with check_*",
        "baseline_p50_us": round(_pct(baseline_us, 0.50), 1),
        "baseline_p99_us": round(_pct(baseline_us, 0.99), 1),
    }


def _naive_bundle(ix: Intently, query_terms: set[str]) -> int:
    """The baseline: read every intent and filter in Python (no index, no paging)."""
    with ix.store.transaction(write=False) as tx:
        rows = tx.query("SELECT id, value, priority, state FROM goals_intents WHERE namespace = ?", (ix.namespace,))
    picked = [
        r
        for r in rows
        if r["state"] == "ACTIVE"
        and (r["priority"] in ("HIGH", "CRITICAL") or (r["priority"] == "MEDIUM" and query_terms & set(r["value"].lower().split())))
    ]  # fmt: skip
    picked.sort(key=lambda r: r["priority"])
    return len(picked)


def run_scale(intents: int, edges: int, cluster: int, samples: int, seed: int, workdir: Path) -> dict[str, Any]:
    rng = random.Random(seed)
    built = time.perf_counter()
    with _open(workdir) as ix:
        goals = ix.goals
        ids = _make_nodes(goals, intents, rng)
        per_cluster = max(1, edges * cluster // max(1, intents))
        fan_in: dict[str, int] = {}
        spare: list[tuple[str, str]] = []
        for first in range(0, len(ids), cluster):
            group = ids[first : first + cluster]
            if len(group) < 2:
                continue
            planned = _layered_edges(rng, group, per_cluster + 2, fan_in)
            goals.depend_many(planned[:per_cluster])
            spare.extend(planned[per_cluster:])
        build_s = time.perf_counter() - built
        with ix.store.transaction(write=False) as tx:
            edge_count = int(tx.scalar("SELECT COUNT(*) FROM goals_edges"))
        insert_us: list[float] = []
        naive_insert_us: list[float] = []
        # Every sampled edge is legal (a lower layer, fan-in counted when planned): a refusal
        # is a fault, and its fast error path must not pass for a fast insert unnoticed.
        insert_rejections = 0
        rng.shuffle(spare)
        for n, (dependent, prerequisite) in enumerate(spare[:samples]):
            if n < max(1, samples // 10):
                start = time.perf_counter()
                _naive_cycle_check(ix, dependent, prerequisite)
                naive_insert_us.append((time.perf_counter() - start) * 1e6)
            took, error = _timed(partial(goals.depend, dependent, prerequisite))
            insert_us.append(took)
            insert_rejections += error is not None
        bundle_us: list[float] = []
        naive_bundle_us: list[float] = []
        for n in range(samples):
            query = f"status of project-{rng.randrange(max(1, intents // 100))} PRJ-{rng.randrange(intents)}"
            start = time.perf_counter()
            goals.bundle(query, budget=800)
            bundle_us.append((time.perf_counter() - start) * 1e6)
            if n < max(1, samples // 10):
                start = time.perf_counter()
                _naive_bundle(ix, set(query.lower().split()))
                naive_bundle_us.append((time.perf_counter() - start) * 1e6)
    return {
        "mode": "scale",
        "intents": intents,
        "edges": edge_count,
        "cluster": cluster,
        "build_s": round(build_s, 1),
        "edge_insert_p50_us": round(_pct(insert_us, 0.50), 1),
        "edge_insert_p99_us": round(_pct(insert_us, 0.99), 1),
        "insert_rejections": insert_rejections,
        "naive_edge_check_p99_us": round(_pct(naive_insert_us, 0.99), 1),
        "bundle_p50_us": round(_pct(bundle_us, 0.50), 1),
        "bundle_p99_us": round(_pct(bundle_us, 0.99), 1),
        "naive_bundle_p99_us": round(_pct(naive_bundle_us, 0.99), 1),
        "samples": len(insert_us),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m intently.bench cycles", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--edges", type=int, default=5000)
    parser.add_argument("--cyclic", type=int, default=100)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--scale", action="store_true", help="the 100k-intent / 500k-edge run")
    parser.add_argument("--intents", type=int, default=100_000, help="--scale: number of intents")
    parser.add_argument("--scale-edges", type=int, default=500_000, help="--scale: number of edges")
    parser.add_argument("--cluster", type=int, default=100, help="--scale: intents per project cluster")
    parser.add_argument("--samples", type=int, default=200, help="--scale: timed inserts and bundles")
    args = parser.parse_args(argv)
    # Sizes that leave no edge to time or no chain to close ended in an IndexError traceback.
    if args.nodes < 2 or args.edges < 1 or args.cyclic < 0:
        parser.error("--nodes >= 2, --edges >= 1, --cyclic >= 0")
    if args.intents < 2 or args.scale_edges < 1 or args.cluster < 2 or args.samples < 1:
        parser.error("--intents >= 2, --scale-edges >= 1, --cluster >= 2, --samples >= 1")
    with tempfile.TemporaryDirectory(prefix="intently-bench-cycles-") as tmp:
        if args.scale:
            result = run_scale(args.intents, args.scale_edges, args.cluster, args.samples, args.seed, Path(tmp))
        else:
            result = run_rfc(args.nodes, args.edges, args.cyclic, args.seed, Path(tmp))
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>24}: {value}")
    return 0
