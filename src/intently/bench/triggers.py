"""``python -m intently.bench triggers --intents N [--turns M] [--json]``: per-turn match latency.

Setup (after shared/research/offline-deps.md section 4): N armed intents, each one entry of
1-3 words (mean 2.25) drawn uniformly from a 50k-word synthetic vocabulary; M turns of 50
Zipf-sampled words, each with the words of 2 planted intents inserted. A planted intent
not found is a *missed fire*.

- **intently**: the engine's :class:`~intently.triggers.Matcher` (normalisation, synonyms,
  negation guard, anchor index); timed per turn, match only.
- **fts5_baseline**: OpenClaw's prefilter as documented (seed research part 1, section 1.7):
  an external-content FTS5 table (``unicode61 remove_diacritics 2``) over the JSON keyword
  array, queried with every unique turn token quoted and OR-ed, joined to the rows with the
  status/expiry/budget/scope conditions, oldest first in keyset pages of 32, stopping at 256
  scanned rows or a short page; each candidate verified (all entry tokens in the turn). The
  3-fire block limit is not applied, so both sides are asked for every match.
- **fire**: ``Triggers.match(fire=True)`` on a real home (SQLite file, signed log), i.e.
  maintenance, sync, recheck of the stored rows and the fire operation, timed separately.

``--cold-start`` measures instead what a new process pays before its first match, on a real
home holding N armed intents (rows written with one bulk SQL insert, since a million signed
operations would take hours; every reader goes through the engine): a full rebuild from the
rows (no snapshot), the snapshot write that follows, then in another new process the
snapshot load plus the ``--changes`` rows changed since, made through the API.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]

_WARMUP = 20
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
_TOKEN = re.compile(r"(?:[^\W]|-)+")


def _count(text: str) -> int:
    raw = text.strip().lower().replace("_", "")
    scale = {"k": 1_000, "m": 1_000_000}.get(raw[-1:], 1)
    return int(float(raw[:-1] if scale > 1 else raw) * scale)


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _workload(n: int, turns: int, seed: int) -> tuple[list[str], list[str], list[tuple[int, int]]]:
    rng = random.Random(seed)
    vocab = _vocabulary(rng, 50_000)
    triggers: list[str] = []
    seen: set[str] = set()
    while len(triggers) < n:
        k = rng.choices((1, 2, 3), weights=(1, 1, 2))[0]
        trig = " ".join(rng.sample(vocab, k))
        if trig not in seen:
            seen.add(trig)
            triggers.append(trig)
    weights = [1.0 / (rank + 1) ** 1.1 for rank in range(len(vocab))]
    texts: list[str] = []
    planted: list[tuple[int, int]] = []
    for _ in range(turns):
        words = rng.choices(vocab, weights=weights, k=50)
        pair = (rng.randrange(n), rng.randrange(n))
        for idx in pair:
            for w in triggers[idx].split():
                words.insert(rng.randrange(len(words) + 1), w)
        texts.append(" ".join(words).capitalize() + ".")
        planted.append(pair)
    return triggers, texts, planted


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _stats(samples_ns: Sequence[int], cpu_ns: Sequence[int] = ()) -> dict[str, float]:
    """Wall-clock percentiles, and CPU-time ones (immune to the machine's other load)."""
    us = [s / 1000 for s in samples_ns]
    out = {
        "p50_us": round(_pct(us, 0.50), 1),
        "p99_us": round(_pct(us, 0.99), 1),
        "mean_us": round(statistics.fmean(us), 1),
    }
    if cpu_ns:
        cpu = [c / 1000 for c in cpu_ns]
        out.update(cpu_p50_us=round(_pct(cpu, 0.50), 1), cpu_p99_us=round(_pct(cpu, 0.99), 1))
    return out


def _bench_intently(triggers: list[str], texts: list[str], planted: list[tuple[int, int]]) -> dict[str, Any]:
    from ..triggers import Matcher

    matcher = Matcher()
    t0 = time.perf_counter()
    for i, trig in enumerate(triggers):
        matcher.index.upsert(matcher.compile(str(i), [[trig]], created_at=f"{i:012d}"))
    build = time.perf_counter() - t0
    for text in texts[:_WARMUP]:
        matcher.match(text)
    samples: list[int] = []
    cpu: list[int] = []
    missed = 0
    for text, pair in zip(texts, planted, strict=True):
        start, cstart = time.perf_counter_ns(), time.thread_time_ns()
        hits = matcher.match(text)
        cpu.append(time.thread_time_ns() - cstart)
        samples.append(time.perf_counter_ns() - start)
        found = {h.intent.id for h in hits}
        missed += sum(1 for idx in set(pair) if str(idx) not in found)
    return {**_stats(samples, cpu), "missed_fires": missed, "build_s": round(build, 2)}


_PAGE_SQL = (
    "SELECT s.intent_key, s.trigger_keywords, s.created_at FROM standing_intents_fts CROSS "
    "JOIN standing_intents s ON s.intent_key = standing_intents_fts.rowid "
    "WHERE standing_intents_fts MATCH ? AND s.status = 'armed' AND s.creator_sender IS NOT NULL "
    "AND s.expires_at > ? AND s.fire_count < s.max_fires AND s.channel_scope IS NULL "
    "AND s.sender_scope IS NULL AND (s.created_at, s.intent_key) > (?, ?) "
    "ORDER BY s.created_at, s.intent_key LIMIT 32"
)


def _fts_turn(db: sqlite3.Connection, text: str) -> set[int]:
    """One turn through the reference prefilter: pages of 32, at most 256 rows scanned."""
    tokens = {t.lower() for t in _TOKEN.findall(text)}
    query = " OR ".join('"' + t.replace('"', '""') + '"' for t in sorted(tokens))
    found: set[int] = set()
    scanned = 0
    last: tuple[int, int] = (-1, -1)
    while scanned < 256:
        rows = db.execute(_PAGE_SQL, (query, 10**12, *last)).fetchall()
        for key, keywords, created in rows:
            scanned += 1
            if any(all(w in tokens for w in _TOKEN.findall(k.lower())) for k in json.loads(keywords)):
                found.add(int(key))
            last = (int(created), int(key))
            if scanned >= 256:
                break
        if len(rows) < 32:
            break
    return found


def _bench_fts5(triggers: list[str], texts: list[str], planted: list[tuple[int, int]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite3.connect(Path(tmp) / "fts.sqlite", isolation_level=None)
        db.executescript(
            """
            CREATE TABLE standing_intents (intent_key INTEGER PRIMARY KEY, id TEXT UNIQUE, trigger_keywords TEXT,
              channel_scope TEXT, sender_scope TEXT, creator_sender TEXT, status TEXT, expires_at INTEGER,
              max_fires INTEGER, fire_count INTEGER, cooldown_seconds INTEGER, last_fired_at INTEGER,
              created_at INTEGER) STRICT;
            CREATE INDEX si_status ON standing_intents (status, expires_at, last_fired_at);
            CREATE INDEX si_scope ON standing_intents (status, channel_scope, sender_scope);
            CREATE VIRTUAL TABLE standing_intents_fts USING fts5(trigger_keywords, content='standing_intents',
              content_rowid='intent_key', tokenize='unicode61 remove_diacritics 2');
            """
        )
        t0 = time.perf_counter()
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO standing_intents VALUES (?, ?, ?, NULL, NULL, 'user:alice', 'armed', ?, 3, 0, 86400, NULL, ?)",
            ((i, str(i), json.dumps([t]), 10**13, i) for i, t in enumerate(triggers)),
        )
        db.execute("INSERT INTO standing_intents_fts (standing_intents_fts) VALUES ('rebuild')")
        db.execute("COMMIT")
        build = time.perf_counter() - t0
        for text in texts[:_WARMUP]:
            _fts_turn(db, text)
        samples: list[int] = []
        cpu: list[int] = []
        missed = 0
        for text, pair in zip(texts, planted, strict=True):
            start, cstart = time.perf_counter_ns(), time.thread_time_ns()
            found = _fts_turn(db, text)
            cpu.append(time.thread_time_ns() - cstart)
            samples.append(time.perf_counter_ns() - start)
            missed += sum(1 for idx in set(pair) if idx not in found)
        db.close()
    return {**_stats(samples, cpu), "missed_fires": missed, "build_s": round(build, 2)}


def _bench_fire(turns: int, seed: int, intents: int = 200) -> dict[str, Any]:
    """The fire transaction on a real home, its intents created through the API."""
    from .._intently import Intently

    triggers, texts, _planted = _workload(intents, turns, seed + 1)
    samples: list[int] = []
    with tempfile.TemporaryDirectory() as tmp, Intently.init(Path(tmp), actor="user:bench", name="bench") as ix:
        for trig in triggers:
            ix.triggers.add("bench reminder", when=[trig], cooldown=0, max_fires=10**6)
        fired = 0
        for text in texts:
            start = time.perf_counter_ns()
            result = ix.triggers.match(text, fire=True)
            samples.append(time.perf_counter_ns() - start)
            fired += sum(1 for h in result.hits if h.fired)
    stats = _stats(samples)
    return {"fire_p50_us": stats["p50_us"], "fire_p99_us": stats["p99_us"], "fire_intents": intents, "fires": fired}


_COLD_PROBE = """
import json, sys, time
from intently import Intently
with Intently.open(sys.argv[1], actor="user:bench") as ix:
    live = ix.triggers._live()
    start, cpu = time.perf_counter(), time.process_time()
    with ix.store.transaction(write=False) as tx:
        live.sync(tx)
    synced, sync_cpu = time.perf_counter(), time.process_time() - cpu
    wrote = live.save_pending_snapshot()
    saved = time.perf_counter()
    hits = len(ix.triggers.test(sys.argv[2]).hits)
    print(json.dumps({"origin": live.origin, "intents": len(live.matcher.index), "sync_s": synced - start,
                      "sync_cpu_s": sync_cpu,
                      "write_s": saved - synced if wrote else None, "hits": hits,
                      "snapshot_bytes": live.snapshot_file.stat().st_size}))
"""


def _cold_probe(home: Path, text: str) -> dict[str, Any]:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", _COLD_PROBE, str(home), text], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"cold-start probe failed: {proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _check_cold(rebuilt: dict[str, Any], loaded: dict[str, Any], n: int, changes: int, planted: int) -> None:
    """Refuse figures from a cold start that did not do the work it is timed for.

    A snapshot load is only worth comparing with a rebuild if it came from the snapshot and
    holds every intent: an ignored snapshot would time a second rebuild, and a load that lost
    rows would be fast because it is wrong. Both probes must also answer the same turn alike
    and find the intents planted in it.
    """
    problems = []
    if rebuilt.get("origin") != "store":
        problems.append(f"the rebuild came from {rebuilt.get('origin')!r}, not the store")
    if loaded.get("origin") != "snapshot":
        problems.append(f"the second process built its index from {loaded.get('origin')!r}, not the snapshot")
    if rebuilt.get("intents") != n:
        problems.append(f"the rebuild holds {rebuilt.get('intents')} intents, not {n}")
    if loaded.get("intents") != n + changes:
        problems.append(f"the snapshot load holds {loaded.get('intents')} intents, not {n + changes}")
    if rebuilt.get("hits") != loaded.get("hits") or int(rebuilt.get("hits") or 0) < planted:
        problems.append(
            f"the probe turn matched {rebuilt.get('hits')} intents after the rebuild and {loaded.get('hits')} "
            f"after the snapshot load ({planted} planted)"
        )
    if problems:
        raise RuntimeError("cold-start figures refused: " + "; ".join(problems))


def run_cold(n: int, changes: int = 100, seed: int = 7) -> dict[str, Any]:
    """Rebuild vs snapshot load in new processes, on a home holding ``n`` armed intents."""
    from .._intently import Intently

    triggers, texts, planted = _workload(n, 1, seed)
    with tempfile.TemporaryDirectory() as tmp, Intently.init(Path(tmp), actor="user:bench", name="bench") as ix:
        home = ix.home.path
        snapshot = Path(ix.triggers.index_status()["snapshot"])  # creates the tables
        ns = ix.namespace
        t0 = time.perf_counter()
        with ix.store.transaction() as tx:
            tx.executemany(
                "INSERT INTO triggers_intents (id, namespace, reminder, event, entries, exclusions, negation_guard, "
                "state, expires_at, max_fires, fire_count, cooldown_seconds, creator, source, created_at, "
                "updated_at, confirmed_by, change_seq) VALUES (?, ?, 'bench reminder', '', ?, '[]', 1, 'armed', "
                "'2099-01-01T00:00:00Z', 3, 0, 86400, 'user:bench', 'user', ?, ?, 'user:bench', ?)",
                [
                    (f"bench-{i:08d}", ns, json.dumps([[trig]]), f"2026-01-01T00:00:00.{i:06d}Z"[:27], "2026", i + 1)
                    for i, trig in enumerate(triggers)
                ],
            )
            tx.execute(
                "INSERT INTO triggers_sequence (namespace, seq) VALUES (?, ?) "
                "ON CONFLICT (namespace) DO UPDATE SET seq = excluded.seq",
                (ns, n),
            )
        insert_s = time.perf_counter() - t0
        snapshot.unlink(missing_ok=True)  # the one written before the rows existed
        text = texts[0]
        rebuilt = _cold_probe(home, text)
        for i in range(changes):
            ix.triggers.add("later reminder", when=[f"later change {i}"], expires="2099-01-01")
        loaded = _cold_probe(home, text)
    _check_cold(rebuilt, loaded, n, changes, len(set(planted[0])))
    return {
        "n_intents": n,
        "insert_s": round(insert_s, 2),
        "rebuild": {k: round(v, 3) if isinstance(v, float) else v for k, v in rebuilt.items()},
        "snapshot_load": {k: round(v, 3) if isinstance(v, float) else v for k, v in loaded.items()},
        "changes_since_snapshot": changes,
        "planted_hits_expected": len(set(planted[0])),
    }


def run(n: int, turns: int, seed: int = 7, *, fire_turns: int = 200, fire_intents: int = 200) -> dict[str, Any]:
    triggers, texts, planted = _workload(n, turns, seed)
    ours = _bench_intently(triggers, texts, planted)
    if fire_turns:
        ours.update(_bench_fire(fire_turns, seed, fire_intents))
    base = _bench_fts5(triggers, texts, planted)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"n_intents": n, "turns": turns, "intently": ours, "fts5_baseline": base, "load_avg_1m": load}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m intently.bench triggers", description=__doc__.split("\n")[0])
    parser.add_argument("--intents", default="100k", help="armed intents: 1k, 100k, 1M (default 100k)")
    parser.add_argument("--turns", type=int, default=1000, help="turns to match (default 1000)")
    parser.add_argument("--fire-turns", type=int, default=200, help="turns for the fire timing (0 skips it)")
    parser.add_argument("--fire-intents", type=int, default=200, help="intents in the home for the fire timing")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="machine output")
    parser.add_argument("--cold-start", action="store_true", help="time a new process: rebuild vs snapshot load")
    parser.add_argument("--changes", type=int, default=100, help="with --cold-start: rows changed after the snapshot")
    args = parser.parse_args(argv)
    try:
        intents = _count(args.intents)
    except ValueError:
        intents = 0
    if intents < 1:
        parser.error(f"--intents {args.intents!r}: a positive count such as 300, 100k or 1M")
    if args.turns < 1 or args.fire_turns < 0 or args.fire_intents < 1 or args.changes < 0:
        parser.error("--turns and --fire-intents must be positive, --fire-turns and --changes not negative")
    if args.cold_start:
        try:
            cold = run_cold(intents, args.changes, args.seed)
        except RuntimeError as exc:
            print(f"triggers benchmark failed: {exc}", file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps(cold, indent=2))
        else:
            r, s = cold["rebuild"], cold["snapshot_load"]
            print(f"standing-intent cold start, {cold['n_intents']} armed intents")
            print(
                f"  rebuild from rows  {r['sync_s']:>8} s (CPU {r['sync_cpu_s']} s), then snapshot write {r['write_s']} s"
            )
            print(
                f"  snapshot load      {s['sync_s']:>8} s (CPU {s['sync_cpu_s']} s), "
                f"+{cold['changes_since_snapshot']} changes applied"
            )
            print(f"  snapshot size       {s['snapshot_bytes'] / 1e6:.1f} MB   origin {s['origin']}")
        return 0
    result = run(intents, args.turns, args.seed, fire_turns=args.fire_turns, fire_intents=args.fire_intents)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        ours, base = result["intently"], result["fts5_baseline"]
        print(f"standing-intent matching, {result['n_intents']} armed intents, {result['turns']} turns")
        for name, d in (("intently      ", ours), ("fts5 (cap 256)", base)):
            print(
                f"  {name} p50 {d['p50_us']:>9} us  p99 {d['p99_us']:>9} us  "
                f"(cpu p50 {d['cpu_p50_us']} us, p99 {d['cpu_p99_us']} us)  missed {d['missed_fires']}"
            )
        if "fire_p50_us" in ours:
            print(f"  fire transaction p50 {ours['fire_p50_us']} us  p99 {ours['fire_p99_us']} us")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
