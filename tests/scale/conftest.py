"""Homes on a fresh PostgreSQL database, real ``intently serve`` processes, racing workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from intently import Intently
from intently.bench.serve import Server, start_server
from intently.server import TokenStore
from tests._backends import use_database

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def pg_home(tmp_path: Path, pg_database: str) -> Iterator[Intently]:
    """A home owned by user:alice whose ``[store] url`` names a fresh PostgreSQL database,
    so every process that opens it (servers, workers) shares that database."""
    with Intently.init(tmp_path / "proj", actor="user:alice", name="proj", database_url=pg_database) as ix:
        use_database(ix.home.path, pg_database)
        yield ix


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    """Servers the test starts with :func:`start_server`; all stopped at the end."""
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()


def serve(started: list[Server], ix: Intently, workers: int) -> Server:
    server = start_server(ix.home.path, workers=workers, actor="user:alice", env={"INTENTLY_DATABASE_URL": ""})
    started.append(server)
    return server


def admin_token(ix: Intently) -> str:
    return TokenStore(ix).create("user:alice").token


def race(kind: str, home: Path, args_per_worker: list[list[str]], timeout: float = 120) -> list[dict[str, Any]]:
    """Start one worker process per argument list, release them together, collect their JSON."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("INTENTLY_DATABASE_URL", None)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.scale._workers", kind, str(home), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=env,
        )
        for args in args_per_worker
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            assert line == "ready", f"worker did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            out, errors = proc.communicate(timeout=timeout)
            assert proc.returncode == 0, errors
            results.append(json.loads(out.strip().splitlines()[-1]))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def assert_log_gap_free(ix: Intently) -> list[Any]:
    """The namespace's stream is one sequence 1..n that verifies; returns its operations."""
    ops = ix.log.read(ix.namespace)
    assert [o.seq for o in ops] == list(range(1, len(ops) + 1))
    report = ix.log.verify([ix.namespace])
    assert report.ok, report.to_json()
    return ops
