"""``intently log repair``: a damaged unsigned tail is set aside, on the record, and the stream
goes on being checkpointed.

Someone with write access to the database (the SQLite file, or a PostgreSQL role) adds a row
no key signed, then deletes one honest operation after it and edits another, each through
the driver alone (``sqlite3`` / ``psycopg``), on every backend under test. Before the repair
every command in the stream saves its change and exits 8, for good; after it ``log verify``
passes, shows the repair, and every operation nobody touched is still where it was.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from intently import Actor, Intently, ManualClock, Permission
from intently.core.errors import LeafMismatch
from intently.store import Store
from tests._backends import use_database
from tests.cli.conftest import run
from tests.log.test_unattributed import FORGED_ID, STREAM, forge_append, newest_checkpoint


class Attacker:
    """A raw connection to the home's database, outside intently: ``?`` placeholders."""

    def __init__(self, conn: Any, *, pg: bool) -> None:
        self.conn, self.pg = conn, pg

    def change_one(self, sql: str, params: tuple[object, ...]) -> None:
        cur = self.conn.execute(sql.replace("?", "%s") if self.pg else sql, params)
        assert cur.rowcount == 1, sql


@contextmanager
def attacker(project: Path, database_url: str | None) -> Iterator[Attacker]:
    if database_url is None:
        with closing(sqlite3.connect(project / ".intently" / "state" / "intently.db")) as conn:
            yield Attacker(conn, pg=False)
            conn.commit()
    else:
        import psycopg

        with psycopg.connect(database_url) as pg:  # commits on a clean exit
            yield Attacker(pg, pg=True)


@pytest.fixture
def home(project: Path, clock: ManualClock, database_url: str | None) -> Path:
    """A home with a few signed, checkpointed operations, closed; on each backend under test."""
    with Intently.init(project, actor="user:alice", name=STREAM, clock=clock, database_url=database_url) as ix:
        if database_url:
            use_database(ix.home.path, database_url)
        for name in ("bob", "carol"):
            ix.access.grant(Actor.parse(name), Permission.READ)
    return project


def rows(store: Store, table: str = "log_ops") -> list[dict[str, Any]]:
    with store.transaction(write=False) as tx:
        return tx.query(f"SELECT * FROM {table} ORDER BY seq")


def test_a_damaged_tail_is_set_aside_on_the_record_and_the_stream_goes_on(
    home: Path, clock: ManualClock, database_url: str | None
) -> None:
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        signed = newest_checkpoint(ix.store)
        forged = forge_append(ix.store)  # no signature: checkpoints stop before it
    for name in ("dave", "erin", "frank"):  # honest commands: each saves its change, and exits 8
        stuck = run("grant", name, "read", cwd=home)
        assert stuck.code == 8 and f"at seq {forged}" in stuck.error_line(), stuck.stderr
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        before = rows(ix.store)
        assert newest_checkpoint(ix.store) == signed
    deleted, edited, untouched = forged + 1, forged + 2, forged + 3
    with attacker(home, database_url) as db:
        db.change_one("DELETE FROM log_ops WHERE stream = ? AND seq = ?", (STREAM, deleted))
        db.change_one(  # erin's grant made admin, its leaf (and so its signature) left as it was
            "UPDATE log_ops SET payload = ? WHERE stream = ? AND seq = ?",
            ('{"actor":"user:erin","permission":"admin"}', STREAM, edited),
        )
    assert run("log", "verify", cwd=home).code == 8

    dry = run("log", "repair", "--dry-run", "--json", cwd=home)
    assert dry.code == 0, dry.stderr
    (plan,) = dry.json
    assert [(v["seq"], v["missing"]) for v in plan["voided"]] == [(forged, False), (deleted, True), (edited, False)]
    assert plan["voided"][0]["id"] == FORGED_ID and "no signature" in plan["voided"][0]["reason"]
    assert "do not hash" in plan["voided"][2]["reason"]
    assert (plan["kept"], plan["checkpoint"], plan["repair_id"]) == (1, signed, None)
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        assert len(rows(ix.store)) == len(before) - 1 and not rows(ix.store, "log_quarantine")

    done = run("log", "repair", "--json", cwd=home)
    assert done.code == 0, done.stderr
    (rep,) = done.json
    assert [v["seq"] for v in rep["voided"]] == [forged, deleted, edited]
    assert rep["repair_seq"] == untouched + 1 == rep["signed_size"]

    verify = run("log", "verify", "--strict", "--json", cwd=home)
    assert verify.code == 0, verify.stderr
    (stream,) = verify.json["streams"]
    assert (stream["ok"], stream["repairs"], stream["size"]) == (True, 1, untouched + 1)
    assert "1 repair(s)" in run("log", "verify", cwd=home).stdout

    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        after = {r["seq"]: r for r in rows(ix.store)}
        # Nothing else was lost: every operation nobody touched keeps its seq, id, leaf and signature.
        for row in before:
            if row["seq"] not in (forged, deleted, edited):
                assert after[row["seq"]] == row
        # Each bad place holds a signed record naming what was there.
        for seq, row_id in ((forged, FORGED_ID), (deleted, None), (edited, before[edited - 1]["id"])):
            placeholder = after[seq]
            assert placeholder["op"] == "LOG_QUARANTINED" and placeholder["signature"] is not None
            assert json.loads(placeholder["payload"])["id"] == row_id
        (record,) = ix.log.read(STREAM, op="LOG_REPAIRED")
        assert record.actor == "user:alice" and [v["seq"] for v in record.payload["voided"]] == [
            forged,
            deleted,
            edited,
        ]
        # The rows set aside are kept as they were stored, each naming its placeholder.
        kept = {r["id"]: r for r in rows(ix.store, "log_quarantine")}
        assert set(kept) == {FORGED_ID, before[edited - 1]["id"]}
        assert kept[FORGED_ID]["actor"] == "user:mallory" and kept[FORGED_ID]["voided_by"] == after[forged]["id"]
        assert '"admin"' in kept[before[edited - 1]["id"]]["payload"]

    # Commands are checkpointed again.
    assert run("grant", "grace", "read", cwd=home).code == 0
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        assert newest_checkpoint(ix.store) == untouched + 2 == ix.log.size(STREAM)
    assert run("log", "repair", "--json", cwd=home).json == []


def test_log_quarantine_lists_each_row_set_aside_with_where_when_who_and_why(
    home: Path, clock: ManualClock, database_url: str | None
) -> None:
    """The rows a repair moves to ``log_quarantine`` are kept, but no command showed them:
    finding what was set aside meant SQL against the database. ``intently log quarantine``
    lists each, tied to the signed records of the repair that moved it."""
    empty = run("log", "quarantine", "--json", cwd=home)
    assert (empty.code, empty.json) == (0, []), empty.stderr
    assert "Nothing quarantined" in run("log", "quarantine", cwd=home).stdout
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        forged = forge_append(ix.store)
    assert run("log", "repair", cwd=home).code == 0

    listed = run("log", "quarantine", "--json", cwd=home)
    assert listed.code == 0, listed.stderr
    (entry,) = listed.json
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        (record,) = ix.log.read(STREAM, op="LOG_REPAIRED")
        placeholder = ix.log.get(STREAM, forged)
    assert placeholder.op == "LOG_QUARANTINED"
    assert (entry["stream"], entry["seq"], entry["id"]) == (STREAM, str(forged), FORGED_ID)
    assert (entry["op"], entry["actor"], entry["target"]) == ("ACCESS_GRANTED", "user:mallory", "user:mallory")
    assert json.loads(entry["payload"]) == {"actor": "user:mallory", "permission": "admin"}
    assert "no signature" in entry["reason"]
    assert (entry["voided_by"], entry["placeholder_seq"]) == (placeholder.id, forged)
    assert (entry["repair_id"], entry["repair_seq"]) == (record.id, record.seq)
    assert (entry["set_aside_at"], entry["set_aside_by"]) == (record.time, "user:alice")

    shown = run("log", "quarantine", cwd=home)
    assert shown.code == 0, shown.stderr
    assert FORGED_ID in shown.stdout and "user:mallory" in shown.stdout and record.time in shown.stdout
    assert run("log", "quarantine", "--stream", STREAM, "--json", cwd=home).json == listed.json
    # Someone who may not read the stream is shown none of it, and refused when naming it.
    assert run("log", "quarantine", "--json", cwd=home, actor="zed").json == []
    assert run("log", "quarantine", "--stream", STREAM, cwd=home, actor="zed").code != 0


def test_an_edited_tail_row_is_not_signed_into_history_and_can_be_repaired(
    home: Path, clock: ManualClock, database_url: str | None
) -> None:
    """A row whose fields were edited but whose leaf (and so signature) was left alone: the
    checkpoint used to check only the signature and sign it, turning the edit into damage in
    signed history that nothing can mend (and verify reported for ever)."""
    ix = Intently.open(home, actor="user:alice", clock=clock)
    try:
        ix.access.grant(Actor.parse("dave"), Permission.READ)
        seq = ix.log.size(STREAM)
        signed = newest_checkpoint(ix.store)
        with attacker(home, database_url) as db:
            db.change_one(
                "UPDATE log_ops SET payload = ? WHERE stream = ? AND seq = ?",
                ('{"actor":"user:dave","permission":"admin"}', STREAM, seq),
            )
    finally:
        with pytest.raises(LeafMismatch) as caught:
            ix.close()  # its checkpoint
    assert caught.value.seq == seq
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        assert newest_checkpoint(ix.store) == signed  # not signed
        (rep,) = ix.log.verify().streams
        assert (rep.error_type, rep.bad_seq) == ("LeafMismatch", seq)
    repaired = run("log", "repair", "--json", cwd=home)
    assert repaired.code == 0, repaired.stderr
    assert [v["seq"] for v in repaired.json[0]["voided"]] == [seq]
    assert run("log", "verify", "--strict", cwd=home).code == 0


def test_damage_in_signed_history_is_refused_and_nothing_changes(
    home: Path, clock: ManualClock, database_url: str | None
) -> None:
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        before = rows(ix.store)
    with attacker(home, database_url) as db:  # operation 2 is under a checkpoint
        db.change_one("UPDATE log_ops SET actor = ? WHERE stream = ? AND seq = ?", ("user:mallory", STREAM, 2))
    for args in (("log", "repair", "--dry-run"), ("log", "repair")):
        refused = run(*args, cwd=home)
        assert refused.code == 8 and "cannot be repaired" in refused.error_line(), refused.stderr
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        assert [r["id"] for r in rows(ix.store)] == [r["id"] for r in before]
        assert not rows(ix.store, "log_quarantine")
        assert ix.log.verify().streams[0].error_type == "LeafMismatch"


def test_repair_needs_admin(home: Path, clock: ManualClock) -> None:
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        forge_append(ix.store)
    denied = run("log", "repair", cwd=home, actor="bob")  # bob may read
    assert denied.code == 4, denied.stderr
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        assert not rows(ix.store, "log_quarantine") and not ix.log.read(STREAM, op="LOG_REPAIRED")


def test_a_repaired_log_replays_without_the_operations_set_aside(
    home: Path, clock: ManualClock, tmp_path: Path
) -> None:
    """The forged grant stays in the live tables (a repair changes no state); the state
    rebuilt from the repaired log does not hold it."""
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        forge_append(ix.store)
        with ix.store.transaction() as tx:  # the forger's state change beside the row
            tx.execute(
                "INSERT INTO access_grants (namespace, actor, permission, granted_by, granted_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (STREAM, "user:mallory", "admin", "user:mallory", "2026-03-02T09:30:00Z"),
            )
    assert run("log", "repair", cwd=home).code == 0
    target = tmp_path / "replayed.db"
    replayed = run("log", "replay", "--to", str(target), "--json", cwd=home)
    assert replayed.code == 0, replayed.stderr
    with closing(sqlite3.connect(target)) as conn:
        actors = {a for (a,) in conn.execute("SELECT actor FROM access_grants WHERE namespace = ?", (STREAM,))}
    assert "user:bob" in actors and "user:mallory" not in actors


def test_a_row_of_bytes_that_are_not_utf8_is_kept_as_it_was(home: Path, clock: ManualClock, backend: str) -> None:
    """Only on SQLite (PostgreSQL refuses such text): the set-aside row keeps its very bytes,
    and the signed record shows them escaped."""
    if backend != "sqlite":
        pytest.skip("PostgreSQL stores only valid UTF-8")
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        forged = forge_append(ix.store)
    with attacker(home, None) as db:
        db.change_one(
            "UPDATE log_ops SET actor = CAST(X'6d616c6cff' AS TEXT) WHERE stream = ? AND seq = ?", (STREAM, forged)
        )
    done = run("log", "repair", "--json", cwd=home)
    assert done.code == 0, done.stderr
    assert run("log", "verify", "--strict", cwd=home).code == 0
    with closing(sqlite3.connect(home / ".intently" / "state" / "intently.db")) as conn:
        (actor,) = conn.execute("SELECT actor FROM log_quarantine WHERE id = ?", (FORGED_ID,)).fetchone()
    assert actor == b"mall\xff"


_APPENDER = """
import sys
import time
from intently import Actor, Intently, Permission
from intently.core.errors import LogIntegrityError
project, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
ix = Intently.open(project, actor="user:alice")
for i in range(count):
    ix.access.grant(Actor.parse(f"w{worker}-{i}"), Permission.READ)
    try:
        ix.checkpoint()
    except LogIntegrityError:  # before the repair: the change is saved, the checkpoint stops
        pass
    time.sleep(0.1)  # spread over the repair's run
try:
    ix.close()
except LogIntegrityError:
    pass
"""


def test_a_repair_while_other_processes_append_loses_none_of_their_operations(home: Path) -> None:
    """The repair works under the store's write lock: operations appended (and signed) by
    other processes before or after it are kept where they are, and all are checkpointed."""
    with Intently.open(home, actor="user:alice") as ix:
        forged = forge_append(ix.store)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"), env.get("PYTHONPATH", "")])
    procs = [
        subprocess.Popen([sys.executable, "-c", _APPENDER, str(home), str(w), "20"], env=env, stderr=subprocess.PIPE)
        for w in range(2)
    ]
    repaired = run("log", "repair", "--json", cwd=home)
    outcomes = [(p.wait(timeout=300), p.stderr.read().decode() if p.stderr else "") for p in procs]
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    assert repaired.code == 0, repaired.stderr
    assert [v["seq"] for v in repaired.json[0]["voided"]] == [forged]
    with Intently.open(home, actor="user:alice") as ix:
        ix.log.checkpoint()
        report = ix.log.verify()
        assert report.ok and report.streams[0].unsigned_tail == 0, report.to_json()
        granted = {op.payload["actor"] for op in ix.log.read(STREAM, op="GRANT")}
        assert {f"user:w{w}-{i}" for w in range(2) for i in range(20)} <= granted


def _quarantined(home: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(home / ".intently" / "state" / "intently.db")) as conn:
        conn.text_factory = bytes  # the very bytes, whatever they are
        return conn.execute("SELECT seq, typeof(seq), id, payload, typeof(payload) FROM log_quarantine").fetchall()


@pytest.mark.parametrize(
    ("value", "stored", "problem"),
    [
        # kept as a blob of its very bytes, as other text that is not UTF-8 is
        ("CAST(X'31ff' AS TEXT)", (b"1\xff", b"blob"), "text that is not valid UTF-8"),
        ("X'31ff'", (b"1\xff", b"blob"), "bytes (a blob)"),
        ("'four'", (b"four", b"text"), "is text, not a number"),
        ("3.5", (b"3.5", b"text"), "a real number"),
    ],
)
def test_a_row_whose_seq_is_not_a_number_is_named_by_rowid_and_set_aside(
    home: Path, clock: ManualClock, backend: str, value: str, stored: tuple[bytes, bytes], problem: str
) -> None:
    """Only on SQLite (PostgreSQL's seq is a bigint): a tail row whose seq was overwritten
    with text, bytes or a real is at no place in the tree. Verify named nothing but crashed
    (exit 70) on text and bytes, and so did repair and `log show`; now verify names the row by
    its rowid, `log show` shows the log's places, and repair sets the row aside with its seq
    kept as it was stored."""
    if backend != "sqlite":
        pytest.skip("PostgreSQL's seq is a bigint: it holds only whole numbers")
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        forged = forge_append(ix.store)
    with attacker(home, None) as db:
        db.change_one(f"UPDATE log_ops SET seq = {value} WHERE stream = ? AND seq = ?", (STREAM, forged))
        (rowid,) = db.conn.execute("SELECT rowid FROM log_ops WHERE id = ?", (FORGED_ID,)).fetchone()
    checked = run("log", "verify", "--json", cwd=home)
    assert checked.code == 8, checked.stderr
    (stream,) = json.loads(checked.stdout)["streams"]
    assert stream["error_type"] == "SequenceGap" and stream["bad_seq"] == forged
    assert [m["rowid"] for m in stream["misplaced"]] == [rowid]
    assert problem in stream["misplaced"][0]["problem"]
    assert f"rowid {rowid} " in stream["error"] and problem in stream["error"]
    shown = run("log", "show", "--json", cwd=home)
    assert shown.code == 0, shown.stderr
    assert FORGED_ID not in shown.stdout and "HOME_INIT" in shown.stdout
    done = run("log", "repair", "--json", cwd=home)
    assert done.code == 0, done.stderr
    (repaired,) = json.loads(done.stdout)
    assert [v["id"] for v in repaired["voided"] if not v["missing"]] == [FORGED_ID]
    assert [v["seq"] for v in repaired["voided"] if v["missing"]] == [forged]
    assert run("log", "verify", "--strict", cwd=home).code == 0
    ((seq, seq_type, op_id, _payload, _), *_) = _quarantined(home)
    assert (seq, seq_type) == stored and op_id == FORGED_ID.encode()
    (entry,) = run("log", "quarantine", "--json", cwd=home).json  # tied to its repair by what the record names
    assert entry["id"] == FORGED_ID and entry["placeholder_seq"] is None and entry["repair_seq"] is not None


def test_a_row_added_at_no_place_fails_verification_by_rowid_and_is_set_aside(
    home: Path, clock: ManualClock, backend: str
) -> None:
    """A row added with a seq that is no number leaves every place intact: verify still fails
    (rows lie outside the stream), naming it, and repair sets it aside."""
    if backend != "sqlite":
        pytest.skip("PostgreSQL's seq is a bigint: it holds only whole numbers")
    with attacker(home, None) as db:
        db.conn.execute(
            "INSERT INTO log_ops (stream, seq, id, time, actor, op, target, payload, policy_version, leaf) "
            "SELECT stream, X'ff', ?, time, actor, op, target, payload, policy_version, leaf FROM log_ops "
            "WHERE stream = ? AND seq = 1",
            (FORGED_ID, STREAM),
        )
        (rowid,) = db.conn.execute("SELECT rowid FROM log_ops WHERE id = ?", (FORGED_ID,)).fetchone()
    checked = run("log", "verify", "--json", cwd=home)
    assert checked.code == 8, checked.stderr
    (stream,) = json.loads(checked.stdout)["streams"]
    assert stream["error_type"] == "SequenceGap" and f"rowid {rowid} " in stream["error"]
    assert stream["bad_seq"] == stream["size"] + 1
    assert run("log", "repair", cwd=home).code == 0
    assert run("log", "verify", "--strict", cwd=home).code == 0
    assert [(seq, op_id) for seq, _, op_id, _, _ in _quarantined(home)] == [(b"\xff", FORGED_ID.encode())]
    listed = run("log", "quarantine", "--json", cwd=home)
    assert listed.code == 0, listed.stderr
    (entry,) = listed.json  # stood at no place: no placeholder, its repair found by what it names
    assert (entry["seq"], entry["id"], entry["placeholder_seq"]) == ("x'ff'", FORGED_ID, None)
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        (record,) = ix.log.read(STREAM, op="LOG_REPAIRED")
    assert (entry["repair_id"], entry["set_aside_at"], entry["set_aside_by"]) == (record.id, record.time, "user:alice")
    assert "x'ff' (no place)" in run("log", "quarantine", cwd=home).stdout


def test_a_payload_of_bytes_is_kept_as_those_bytes(home: Path, clock: ManualClock, backend: str) -> None:
    """A tail row whose payload was overwritten with a blob is set aside with that blob, not
    with Python's picture of it (``"b'{}'"``, as before)."""
    if backend != "sqlite":
        pytest.skip("PostgreSQL's payload is text: it holds no bytes")
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        forged = forge_append(ix.store)
    with attacker(home, None) as db:
        db.change_one("UPDATE log_ops SET payload = X'7b7d' WHERE stream = ? AND seq = ?", (STREAM, forged))
    checked = run("log", "verify", "--json", cwd=home)
    assert checked.code == 8 and json.loads(checked.stdout)["streams"][0]["error_type"] == "LeafMismatch"
    assert run("log", "repair", cwd=home).code == 0
    assert [(payload, kind) for *_, payload, kind in _quarantined(home)] == [(b"{}", b"blob")]
