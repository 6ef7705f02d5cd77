"""``python -m intently.bench serve``: the HTTP API under load, on PostgreSQL and on SQLite.

One run starts its own throwaway PostgreSQL cluster (``initdb`` + ``pg_ctl`` in a temp dir, on
a free loopback port, PostgreSQL's durable defaults so the figures are fair to SQLite's
``synchronous=FULL``) and, per configuration, a fresh home, a real ``intently serve
--workers N`` process and a load generator on loopback: several threads, each with its own
HTTP connection, bounded by a request count and a time limit. It measures the context
endpoint and the gate-check endpoint for each PostgreSQL worker count asked for and for one
SQLite worker, as baseline. Every context request carries a turn that matches one standing
intent with a one-hour cooldown, so however many workers race on it, exactly one request may
fire it: the report counts the fires in the log and any double fire.

This module needs nothing from the tests folder (it copies the small cluster start/stop logic
of ``tests/_backends.py``); ``tests/scale`` uses :func:`start_server` to run real servers.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

__all__ = ["Cluster", "Server", "main", "start_cluster", "start_server"]

CONTEXT_TURN = "before we deploy production tonight, summarise the open work"
REMINDER = "Run the launch checklist before any production deploy"
GATE_BODY: dict[str, Any] = {
    "user_request": "summarise the README for me",
    "tool": "read_file",
    "args": {"path": "README.md"},
}
ENDPOINTS = ("context", "gate")


# -- a throwaway PostgreSQL cluster ------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pg_bin() -> Path:
    explicit = os.environ.get("INTENTLY_PG_BIN")
    candidates = [Path(explicit)] if explicit else sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found; set INTENTLY_PG_BIN")


def _as_postgres(argv: list[str]) -> list[str]:
    """initdb refuses to run as root: run the server as the ``postgres`` OS user then."""
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@dataclass
class Cluster:
    """A running throwaway PostgreSQL server; :meth:`stop` removes it and its files."""

    port: int
    root: Path
    bindir: Path
    _databases: int = 0

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A fresh empty database (the home applies its migrations on first open)."""
        import psycopg

        self._databases += 1
        name = f"bench{os.getpid()}_{self._databases}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(
                f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'".encode()
            )
        return self.url(name)

    def stop(self) -> None:
        if (self.root / "data" / "postmaster.pid").exists():
            cmd = [str(self.bindir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop"]
            subprocess.run(_as_postgres(cmd), capture_output=True, timeout=60, check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster(*, durable: bool = True) -> Cluster:
    """``initdb`` + ``pg_ctl start`` in a temp dir on a free port; RuntimeError with the reason."""
    bindir = _pg_bin()
    root = Path(tempfile.mkdtemp(prefix="intently-bench-pg-"))
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        os.chown(root, entry.pw_uid, entry.pw_gid)
    cluster = Cluster(free_port(), root, bindir)
    options = f"-p {cluster.port} -c listen_addresses=127.0.0.1 -k {root} -c max_connections=200"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    data = str(root / "data")
    initdb = [str(bindir / "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C"]
    start = [str(bindir / "pg_ctl"), "-D", data, "-l", str(root / "server.log"), "-o", options, "-w", "-t", "60"]
    steps = [[*initdb, "--no-sync"], [*start, "start"]]
    try:
        for argv in steps:
            proc = subprocess.run(_as_postgres(argv), capture_output=True, text=True, timeout=120, check=False)
            if proc.returncode != 0:
                raise RuntimeError(f"{Path(argv[0]).name} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    except BaseException:
        cluster.stop()
        raise
    return cluster


# -- a real ``intently serve`` process ---------------------------------------------------


@dataclass
class Server:
    """One ``intently serve`` process (its workers are its children)."""

    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def client(self, token: str, timeout: float = 60) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout)

    def stop(self) -> None:
        """SIGTERM (uvicorn stops its workers and each closes its home), SIGKILL if it hangs."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


def start_server(home: Path, *, workers: int, actor: str, env: dict[str, str] | None = None) -> Server:
    """Start ``intently serve --workers N`` on a free loopback port and wait until it answers."""
    port = free_port()
    log_path = home / f"serve-{port}.log"
    argv = [sys.executable, "-c", "from intently.cli import main; main()", "serve"]
    argv += ["--port", str(port), "--workers", str(workers)]
    full_env = {**os.environ, "INTENTLY_HOME": str(home), "INTENTLY_ACTOR": actor, **(env or {})}
    with log_path.open("wb") as sink:
        process = subprocess.Popen(argv, env=full_env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", process, log_path)
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"intently serve exited ({process.returncode}): {log_path.read_text(errors='replace')}")
        try:
            if httpx.get(f"{server.url}/v1/health", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"intently serve did not answer within 120 s: {log_path.read_text(errors='replace')}")
        time.sleep(0.1)


@contextmanager
def running(home: Path, *, workers: int, actor: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    server = start_server(home, workers=workers, actor=actor, env=env)
    try:
        yield server
    finally:
        server.stop()


# -- one configuration -------------------------------------------------------------------


@dataclass
class Fixture:
    """A fresh home with a token, a standing intent and a few goals for the load to read."""

    home: Path
    token: str
    trigger_id: str
    namespace: str


def make_home(root: Path, database_url: str | None) -> Fixture:
    from .._intently import Intently
    from ..server import TokenStore

    with Intently.init(root, actor="user:bench", name="bench", database_url=database_url) as ix:
        if database_url:
            _point_home_at(ix.home.config_path, database_url)
        intent = ix.triggers.add(REMINDER, when=["deploy production"], cooldown="1h", max_fires=10_000)
        for text in ("Ship the billing export by Friday", "Keep the public API backwards compatible"):
            ix.goals.add(text)
        token = TokenStore(ix).create("user:bench", label="bench").token
        return Fixture(ix.home.path, token, intent.id, ix.namespace)


def _point_home_at(config: Path, url: str) -> None:
    """Write ``[store] url`` so every worker process opens the same database."""
    text = config.read_text(encoding="utf-8")
    marker = 'url = ""'
    at = text.find(marker, text.index("[store]"))
    if at < 0:
        raise RuntimeError(f"no empty [store] url in {config}")
    config.write_text(text[:at] + f'url = "{url}"' + text[at + len(marker) :], encoding="utf-8")


@dataclass
class Load:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    shown: int = 0
    seconds: float = 0.0
    unaccepted: list[dict[str, Any]] = field(default_factory=list)


def generate(
    server: Server,
    token: str,
    path: str,
    body: dict[str, Any],
    *,
    requests: int,
    seconds: float,
    threads: int,
    check: Callable[[dict[str, Any]], bool] | None = None,
) -> Load:
    """``requests`` POSTs from ``threads`` threads (one connection each), stopping at ``seconds``.

    ``check`` counts the answers it accepts (the context answers that show the intent).
    """
    load = Load()
    lock = threading.Lock()
    issued = 0
    start = time.perf_counter()
    deadline = start + seconds

    def worker() -> None:
        nonlocal issued
        with server.client(token) as client:
            while True:
                with lock:
                    if issued >= requests or time.perf_counter() > deadline:
                        return
                    issued += 1
                began = time.perf_counter()
                try:
                    response = client.post(path, json=body)
                except httpx.HTTPError as exc:
                    with lock:
                        load.errors.append(type(exc).__name__)
                    continue
                took = time.perf_counter() - began
                with lock:
                    if response.status_code != 200:
                        load.errors.append(f"{response.status_code}: {response.text[:200]}")
                        continue
                    load.latencies.append(took)
                    if check is not None:
                        answer = response.json()
                        if check(answer):
                            load.shown += 1
                        elif len(load.unaccepted) < 3:
                            load.unaccepted.append(answer)

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, threads))]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    load.seconds = time.perf_counter() - start
    return load


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def shows(intent_id: str) -> Callable[[dict[str, Any]], bool]:
    def check(answer: dict[str, Any]) -> bool:
        return any(item.get("id") == intent_id for s in answer.get("sections", []) for item in s.get("included", []))

    return check


def allows(answer: dict[str, Any]) -> bool:
    """The benchmark's gate call (a read of README.md the user asked for) must be allowed.

    Without this check a gate that answered ``block`` on its fail-closed short path (no gate
    engine in the worker, a policy error) would still be timed as a 200, and win.
    """
    return answer.get("outcome") == "allow" and answer.get("gate_available") is not False


def fires_in_log(home: Path, database_url: str | None, intent_id: str) -> tuple[int, bool]:
    """TRIGGER_FIRE operations for the intent, and whether the whole log verifies gap-free."""
    from .._intently import Intently

    with Intently.open(home, actor="user:bench", database_url=database_url) as ix:
        fires = len(ix.log.read(ix.namespace, op="TRIGGER_FIRE", target=intent_id))
        ops = ix.log.read(ix.namespace)
        gap_free = [o.seq for o in ops] == list(range(1, len(ops) + 1))
        return fires, gap_free and ix.log.verify([ix.namespace]).ok


def measure(
    backend: str, workers: int, database_url: str | None, root: Path, args: argparse.Namespace
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    fixture = make_home(root, database_url)
    paths = {
        "context": f"/v1/namespaces/{fixture.namespace}/context",
        "gate": f"/v1/namespaces/{fixture.namespace}/gate/check",
    }
    bodies = {"context": {"query": CONTEXT_TURN}, "gate": GATE_BODY}
    runs: list[dict[str, Any]] = []
    with running(fixture.home, workers=workers, actor="user:bench") as server:
        with server.client(fixture.token) as client:  # warm every worker's caches (models, indexes)
            for _ in range(2 * workers):
                for endpoint in ENDPOINTS:
                    body = {"query": "warm up"} if endpoint == "context" else bodies[endpoint]
                    client.post(paths[endpoint], json=body).raise_for_status()
        load = {}
        for endpoint in ENDPOINTS:
            load[endpoint] = generate(
                server,
                fixture.token,
                paths[endpoint],
                bodies[endpoint],
                requests=args.requests,
                seconds=args.seconds,
                threads=args.threads,
                check=shows(fixture.trigger_id) if endpoint == "context" else allows,
            )
    gate = load["gate"]
    if gate.shown != len(gate.latencies):
        wrong = len(gate.latencies) - gate.shown
        raise RuntimeError(f"{backend} x{workers} gate: {wrong} answers were not 'allow': {gate.unaccepted[:1]}")
    for endpoint, got in load.items():
        if got.errors:
            raise RuntimeError(f"{backend} x{workers} {endpoint}: {len(got.errors)} failed requests: {got.errors[:3]}")
        done = len(got.latencies)
        runs.append(
            {
                "backend": backend,
                "workers": workers,
                "endpoint": endpoint,
                "requests": done,
                "seconds": round(got.seconds, 3),
                "rps": round(done / got.seconds, 1) if got.seconds else 0.0,
                "p50_ms": round(1000 * percentile(got.latencies, 0.50), 2),
                "p99_ms": round(1000 * percentile(got.latencies, 0.99), 2),
                "mean_ms": round(1000 * statistics.fmean(got.latencies), 2) if got.latencies else 0.0,
            }
        )
    fires, log_ok = fires_in_log(fixture.home, database_url, fixture.trigger_id)
    matched = len(load["context"].latencies)
    once = {
        "matches": matched,
        "shown": load["context"].shown,
        "fires": fires,
        "double_fires": max(0, fires - 1) + max(0, load["context"].shown - 1),
        "log_ok": int(log_ok),
    }
    return runs, once


def per_core(runs: list[dict[str, Any]], cores: int) -> dict[str, Any]:
    """Throughput per worker, and how much of the ideal speed-up more workers gave on this machine."""
    result: dict[str, Any] = {"cores": cores}
    for endpoint in ENDPOINTS:
        pg = {r["workers"]: r["rps"] for r in runs if r["backend"] == "postgresql" and r["endpoint"] == endpoint}
        if 1 not in pg:
            continue
        entry: dict[str, Any] = {"rps_per_worker": {str(w): round(rps / w, 1) for w, rps in sorted(pg.items())}}
        for w, rps in sorted(pg.items()):
            if w > 1 and pg[1]:
                speedup = rps / pg[1]
                entry[f"speedup_{w}_vs_1"] = round(speedup, 2)
                entry[f"efficiency_{w}"] = round(speedup / min(w, cores), 2)
        result[endpoint] = entry
    return result


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m intently.bench serve", description=__doc__.split("\n")[0])
    parser.add_argument("--workers", default="1,2", help="PostgreSQL worker counts, comma separated (default 1,2).")
    parser.add_argument("--requests", type=int, default=300, help="Requests per endpoint per configuration.")
    parser.add_argument("--seconds", type=float, default=20.0, help="Time limit per endpoint per configuration.")
    parser.add_argument("--threads", type=int, default=8, help="Client threads (one connection each).")
    parser.add_argument("--json", action="store_true", help="Print the result as JSON.")
    args = parser.parse_args(argv)
    try:
        args.worker_counts = sorted({int(w) for w in str(args.workers).split(",") if w.strip()})
    except ValueError:
        parser.error(f"--workers {args.workers!r}: comma separated whole numbers")
    if not args.worker_counts or min(args.worker_counts) < 1 or max(args.worker_counts) > 16:
        parser.error("--workers: between 1 and 16")
    if args.requests < 1 or args.seconds <= 0 or not 1 <= args.threads <= 64:
        parser.error("--requests >= 1, --seconds > 0, 1 <= --threads <= 64")
    return args


def run(args: argparse.Namespace) -> dict[str, Any]:
    os.environ.pop("INTENTLY_DATABASE_URL", None)  # each home names its own database
    root = Path(tempfile.mkdtemp(prefix="intently-bench-serve-"))
    cluster = start_cluster()
    runs: list[dict[str, Any]] = []
    totals = {"matches": 0, "shown": 0, "fires": 0, "double_fires": 0, "configurations": 0, "log_ok": 1}
    try:
        plan: list[tuple[str, int]] = [("postgresql", w) for w in args.worker_counts] + [("sqlite", 1)]
        for i, (backend, workers) in enumerate(plan):
            url = cluster.create_database() if backend == "postgresql" else None
            got, once = measure(backend, workers, url, root / f"run{i}", args)
            runs += got
            for key in ("matches", "shown", "fires", "double_fires"):
                totals[key] += once[key]
            totals["log_ok"] &= once["log_ok"]
            totals["configurations"] += 1
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    return {
        "runs": runs,
        "per_core": per_core(runs, os.cpu_count() or 1),
        "exactly_once": {**totals, "log_ok": bool(totals["log_ok"])},
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "threads": args.threads,
    }


def render(result: dict[str, Any]) -> None:
    print(f"{'backend':<11} {'workers':>7} {'endpoint':<8} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for r in result["runs"]:
        print(
            f"{r['backend']:<11} {r['workers']:>7} {r['endpoint']:<8} {r['requests']:>8} "
            f"{r['rps']:>8.1f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f}"
        )
    print("per core:", json.dumps(result["per_core"]))
    once = result["exactly_once"]
    print(
        f"exactly once: {once['matches']} matching turns over {once['configurations']} configurations, "
        f"{once['fires']} fires (one per configuration allowed), {once['double_fires']} double fires; "
        f"log {'verifies gap-free' if once['log_ok'] else 'FAILED verification'}"
    )
    print(f"load average at the end: {result['load_average']}, {result['threads']} client threads")


def main(argv: list[str]) -> int:
    args = _parse(argv)
    try:
        result = run(args)
    except RuntimeError as exc:
        print(f"serve benchmark failed: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        render(result)
    once = result["exactly_once"]
    fired_each = once["fires"] == once["configurations"]  # one fire per configuration: none missed, none doubled
    return 0 if once["double_fires"] == 0 and fired_each and once["log_ok"] else 1
