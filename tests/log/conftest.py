"""Helpers for the log tests: a home with a known history, and an attacker's view of its
SQLite file (plain sqlite3, the way someone with disk access would edit it)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from intently import Actor, Intently, ManualClock, Permission
from intently.log import Frontier, VerifyReport, canonical_operation, leaf_hash

STREAM = "proj"
GRANTEES = ["bob", "carol", "dave", "erin", "frank", "grace", "heidi"]


@dataclass
class LoggedHome:
    """A closed home whose 'proj' stream holds 8 operations, signed at sizes 1, 4 and 8;
    the witness file holds the checkpoint at size 8."""

    project: Path
    clock: ManualClock
    backup_at_4: Path

    @property
    def db(self) -> Path:
        return self.project / ".intently" / "state" / "intently.db"

    @property
    def witness(self) -> Path:
        return self.project / ".intently" / "checkpoints.json"

    def open(self) -> Intently:
        return Intently.open(self.project / ".intently", actor="user:alice", clock=self.clock)

    def verify(self) -> VerifyReport:
        with self.open() as ix:
            return ix.log.verify()

    @contextmanager
    def raw(self) -> Iterator[sqlite3.Connection]:
        """The attacker's connection: autocommit-free, committed on exit."""
        with closing(sqlite3.connect(self.db)) as conn:
            yield conn
            conn.commit()


@pytest.fixture(scope="session")
def logged_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """Built once per session (signing and syncing is the slow part); each test gets a copy."""
    base = tmp_path_factory.mktemp("logged-template")
    project, backup = base / "proj", base / "backup-at-4.db"
    project.mkdir()
    clock = ManualClock("2026-03-02T09:00:00Z")
    with Intently.init(project, actor="user:alice", name=STREAM, clock=clock) as ix:
        for i, name in enumerate(GRANTEES):
            clock.advance("1s")
            ix.access.grant(Actor.parse(name), list(Permission)[i % len(Permission)])
            if ix.log.size(STREAM) in (4, 8):
                ix.checkpoint()
            if ix.log.size(STREAM) == 4:  # an ordinary online backup, as an attacker might keep
                db = project / ".intently" / "state" / "intently.db"
                with closing(sqlite3.connect(db)) as src, closing(sqlite3.connect(backup)) as dst:
                    src.backup(dst)
    return project, backup, clock.now().isoformat()


@pytest.fixture
def logged(logged_template: tuple[Path, Path, str], tmp_path: Path) -> LoggedHome:
    project, backup, now = logged_template
    shutil.copytree(project, tmp_path / "proj")
    shutil.copyfile(backup, tmp_path / "backup-at-4.db")
    return LoggedHome(tmp_path / "proj", ManualClock(now), tmp_path / "backup-at-4.db")


def change_one(conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()) -> None:
    """Run an attacker's UPDATE/DELETE and make sure it really changed exactly one row."""
    assert conn.execute(sql, params).rowcount == 1, sql


def flip_bit(text: str, *, index: int | None = None, bit: int = 0) -> str:
    """Flip one bit of one character (the middle one by default); bit 0 keeps ASCII ASCII."""
    i = len(text) // 2 if index is None else index
    return text[:i] + chr(ord(text[i]) ^ (1 << bit)) + text[i + 1 :]


def rehash(conn: sqlite3.Connection, stream: str = STREAM) -> None:
    """What a knowing attacker does after editing rows: recompute every leaf and the
    stream header (size and frontier), so only signed checkpoints can give it away."""
    rows = conn.execute(
        "SELECT seq, id, time, actor, op, target, payload, policy_version FROM log_ops WHERE stream = ? ORDER BY seq",
        (stream,),
    ).fetchall()
    frontier = Frontier()
    for seq, *rest in rows:
        leaf = leaf_hash(canonical_operation(stream, seq, *rest))
        conn.execute("UPDATE log_ops SET leaf = ? WHERE stream = ? AND seq = ?", (leaf.hex(), stream, seq))
        frontier.append(leaf)
    conn.execute(
        "UPDATE log_streams SET size = ?, frontier = ? WHERE stream = ?",
        (frontier.size, json.dumps(frontier.to_hex()), stream),
    )


def only_failure(report: VerifyReport, stream: str = STREAM) -> tuple[str | None, int | None]:
    """(error type, first bad seq) of ``stream``; every other stream must verify."""
    by_name = {s.stream: s for s in report.streams}
    assert not by_name[stream].ok, f"{stream} verified although it was tampered with"
    others = [s for s in report.streams if s.stream != stream and not s.ok]
    assert not others, others
    return by_name[stream].error_type, by_name[stream].bad_seq
