"""The HTTP server and the tracked witness file: signed at every write, written at intervals."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from intently import Intently
from intently.access import Permission
from intently.core.errors import RolledBack

from .conftest import serve


def _git(project: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=project,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _committed(project: Path) -> None:
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "init")


def test_writes_over_http_leave_the_git_tree_clean_and_the_witness_catches_up_at_shutdown(ix: Intently) -> None:
    """Every write request rewrote .intently/checkpoints.json: a second write transaction and a
    file rewrite per request, and `git status` showed it modified all the time a server (or
    the console) was in use. The writes are still signed at once; the file catches up when
    the server stops (and every interval while it runs)."""
    project = ix.home.project_root
    _committed(project)
    signed_before = ix.log.latest_checkpoints()["proj"].size
    with serve(ix) as api, api.client(api.token("user:alice")) as client:
        for n in range(5):
            answer = client.post("/v1/namespaces/proj/goals", json={"text": f"Ship feature {n} by Friday"})
            assert answer.status_code == 201, answer.text
        signed = ix.log.latest_checkpoints()["proj"].size
        assert signed > signed_before  # each request was signed before it answered
        assert _git(project, "status", "--porcelain") == ""
    assert ix.log.read_witness()["proj"].size == signed  # caught up at shutdown
    assert _git(project, "status", "--porcelain").split() == ["M", ".intently/checkpoints.json"]
    assert ix.log.verify().ok


def test_the_witness_catches_up_every_interval_while_serving(ix: Intently) -> None:
    with serve(ix, witness_interval=0.2) as api, api.client(api.token("user:alice")) as client:
        answer = client.post("/v1/namespaces/proj/goals", json={"text": "Ship the importer by Friday"})
        assert answer.status_code == 201, answer.text
        signed = ix.log.latest_checkpoints()["proj"].size
        deadline = time.monotonic() + 10
        while ix.log.read_witness()["proj"].size != signed:
            assert time.monotonic() < deadline, "the witness did not catch up while serving"
            time.sleep(0.05)


def test_interval_zero_writes_the_witness_at_every_write(ix: Intently) -> None:
    with serve(ix, witness_interval=0) as api, api.client(api.token("user:alice")) as client:
        answer = client.post("/v1/namespaces/proj/goals", json={"text": "Ship the importer by Friday"})
        assert answer.status_code == 201, answer.text
        assert ix.log.read_witness()["proj"].size == ix.log.latest_checkpoints()["proj"].size


def test_a_negative_interval_is_refused(ix: Intently) -> None:
    from intently.server import create_app

    with pytest.raises(ValueError, match="witness interval"):
        create_app(ix, witness_interval=-1)


def test_a_database_rolled_back_behind_what_the_server_wrote_is_still_caught(tmp_path: Path) -> None:
    """Rollback detection is not weakened: the server's writes reach the witness (here at
    shutdown), so a database restored from a copy taken before them is refused at the next
    write, before anything is written. A real SQLite file, copied as a backup would be."""
    project = tmp_path / "proj"
    project.mkdir()
    with Intently.init(project, actor="user:alice", name="proj") as ix:
        ix.checkpoint()
        db = ix.home.path / "state" / "intently.db"
        assert db.is_file()
        backup = tmp_path / "backup.db"
        source, copy = sqlite3.connect(db), sqlite3.connect(backup)
        source.backup(copy)  # a consistent copy, as a backup tool makes
        source.close()
        copy.close()
        with serve(ix) as api, api.client(api.token("user:alice")) as client:
            answer = client.post("/v1/namespaces/proj/goals", json={"text": "Ship the importer by Friday"})
            assert answer.status_code == 201, answer.text
        witnessed = ix.log.read_witness()["proj"].size
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    shutil.copyfile(backup, db)
    with Intently.open(project, actor="user:alice") as ix:
        assert ix.log.size("proj") < witnessed
        with pytest.raises(RolledBack):
            ix.access.grant("user:bob", Permission.READ)
