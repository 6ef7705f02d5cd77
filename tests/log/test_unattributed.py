"""Rows appended behind the log's back: someone who can write the database (SQLite file or
PostgreSQL role) but holds no signing key appends an operation, with a correct leaf and
stream header. Before each operation carried its appender's signature, ``log verify`` passed
it as an unsigned tail and the next command's checkpoint signed it into history.

The attacker here writes through the store's own connection with plain SQL, on each backend
under test: the log code is not involved in the forgery.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from intently import Actor, Intently, ManualClock, Permission
from intently.core.errors import BadSignature, UnattributedOperation
from intently.log import Frontier, canonical_operation, leaf_hash
from intently.store import Store
from tests._backends import use_database

STREAM = "proj"
FORGED_ID = "0190aaaa-0000-7000-8000-000000000000"


def forge_append(store: Store, *, signature: tuple[str, str] | None = None, op_id: str = FORGED_ID) -> int:
    """Append one operation the way an attacker with only the database would: a correct leaf,
    the stream header moved on, and no signature (or one copied from another row)."""
    with store.transaction(write=True) as tx:
        head = tx.one("SELECT size, frontier FROM log_streams WHERE stream = ?", (STREAM,))
        assert head is not None
        seq = int(head["size"]) + 1
        fields = (
            op_id,
            "2026-03-02T09:30:00.000000Z",
            "user:mallory",
            "ACCESS_GRANTED",
            "user:mallory",
            '{"actor":"user:mallory","permission":"admin"}',
            "intently@access",
        )
        leaf = leaf_hash(canonical_operation(STREAM, seq, *fields))
        frontier = Frontier.from_hex(seq - 1, json.loads(str(head["frontier"])))
        frontier.append(leaf)
        columns = "stream, seq, id, time, actor, op, target, payload, policy_version, leaf"
        values: tuple[object, ...] = (STREAM, seq, *fields, leaf.hex())
        if signature is not None:
            columns, values = columns + ", key_id, signature", (*values, *signature)
        tx.execute(f"INSERT INTO log_ops ({columns}) VALUES ({', '.join('?' * len(values))})", values)
        tx.execute(
            "UPDATE log_streams SET size = ?, frontier = ? WHERE stream = ?",
            (seq, json.dumps(frontier.to_hex()), STREAM),
        )
    return seq


def newest_checkpoint(store: Store) -> int:
    with store.transaction(write=False) as tx:
        return int(tx.scalar("SELECT MAX(size) FROM log_checkpoints WHERE stream = ?", (STREAM,)) or 0)


@pytest.fixture
def home(project: Path, clock: ManualClock, database_url: str | None) -> Path:
    """A home with a few signed operations, closed; on each backend under test."""
    with Intently.init(project, actor="user:alice", name=STREAM, clock=clock, database_url=database_url) as ix:
        if database_url:
            use_database(ix.home.path, database_url)
        for name in ("bob", "carol"):
            ix.access.grant(Actor.parse(name), Permission.READ)
    return project


def test_a_row_appended_behind_the_logs_back_is_reported_and_never_signed(home: Path, clock: ManualClock) -> None:
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        signed_before = newest_checkpoint(ix.store)
        forged = forge_append(ix.store)
        assert forged == signed_before + 1

        report = ix.log.verify()
        (rep,) = report.streams
        assert not report.ok
        assert (rep.error_type, rep.bad_seq, rep.bad_id, rep.unattributed) == (
            "UnattributedOperation",
            forged,
            FORGED_ID,
            1,
        )
        assert STREAM in (rep.error or "") and FORGED_ID in (rep.error or "")

        # The next ordinary command's change is saved, but its checkpoint stops before the
        # forged row and says which one it is: the forgery is never laundered into history.
        ix.access.grant(Actor.parse("dave"), Permission.READ)
        with pytest.raises(UnattributedOperation) as caught:
            ix.checkpoint()
        assert (caught.value.stream, caught.value.seq) == (STREAM, forged)
        assert FORGED_ID in str(caught.value)
        assert newest_checkpoint(ix.store) == signed_before
        assert ix.log.size(STREAM) == forged + 1

    # A later process (a fresh handle, no memory of what it signed) refuses the same way.
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        with pytest.raises(UnattributedOperation):
            ix.log.checkpoint()
        assert newest_checkpoint(ix.store) == signed_before
        report = ix.log.verify()
        assert (report.streams[0].error_type, report.streams[0].bad_seq) == ("UnattributedOperation", forged)
        # The honest operation after it is signed by its appender, so only the forgery counts.
        assert report.streams[0].unattributed == 1


def test_adopting_signs_unsigned_rows_on_purpose_and_records_who_did(home: Path, clock: ManualClock) -> None:
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        forged = forge_append(ix.store)
        made = ix.log.checkpoint(adopt="user:alice")
        (adopted,) = ix.log.read(STREAM, op="LOG_ADOPTED")
        assert adopted.seq == forged + 1 and adopted.actor == "user:alice"
        assert adopted.payload == {"first_seq": forged, "last_seq": forged, "count": 1, "first_id": FORGED_ID}
        assert [cp.size for cp in made] == [forged + 1]
        assert ix.log.verify().ok


def test_a_row_with_a_copied_signature_is_never_adopted(home: Path, clock: ManualClock) -> None:
    """A signature that is there but fails is evidence of forgery, not a missing key."""
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        with ix.store.transaction(write=False) as tx:
            row = tx.one("SELECT key_id, signature FROM log_ops WHERE stream = ? AND seq = 1", (STREAM,))
        assert row is not None and row["signature"]
        signed_before = newest_checkpoint(ix.store)
        forged = forge_append(ix.store, signature=(str(row["key_id"]), str(row["signature"])))
        with pytest.raises(UnattributedOperation, match="does not verify"):
            ix.log.checkpoint(adopt="user:alice")
        assert newest_checkpoint(ix.store) == signed_before
        report = ix.log.verify()
        assert (report.streams[0].error_type, report.streams[0].bad_seq) == ("UnattributedOperation", forged)


def test_a_checkpoint_row_put_in_by_hand_is_not_extended(home: Path, clock: ManualClock) -> None:
    """Covering the forged row with a made-up checkpoint row would otherwise let the next
    honest checkpoint start from it, as if it had been signed."""
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        forged = forge_append(ix.store)
        with ix.store.transaction(write=True) as tx:
            frontier = tx.scalar("SELECT frontier FROM log_streams WHERE stream = ?", (STREAM,))
            root = Frontier.from_hex(forged, json.loads(str(frontier))).root()
            last = tx.one("SELECT * FROM log_checkpoints WHERE stream = ? ORDER BY size DESC LIMIT 1", (STREAM,))
            assert last is not None
            tx.execute(
                "INSERT INTO log_checkpoints (stream, size, root, time, origin, key_id, signature) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (STREAM, forged, root.hex(), last["time"], last["origin"], last["key_id"], last["signature"]),
            )
        ix.access.grant(Actor.parse("dave"), Permission.READ)
        with pytest.raises(BadSignature):
            ix.checkpoint()
        assert newest_checkpoint(ix.store) == forged  # only the hand-made row; nothing signed past it


def test_operations_before_the_upgrade_keep_verifying_and_extending(home: Path, clock: ManualClock) -> None:
    """A log written before operations were signed: rows without signatures under checkpoints
    without stored frontiers. It verifies, and the next checkpoint extends it."""
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        with ix.store.transaction(write=True) as tx:
            tx.execute("UPDATE log_ops SET key_id = NULL, signature = NULL")
            tx.execute("UPDATE log_checkpoints SET frontier = NULL")
        size = ix.log.size(STREAM)
        assert newest_checkpoint(ix.store) == size
        assert ix.log.verify().ok
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        ix.access.grant(Actor.parse("dave"), Permission.READ)
        assert ix.checkpoint() == 1
        assert newest_checkpoint(ix.store) == size + 1
        report = ix.log.verify()
        assert report.ok and report.streams[0].unsigned_tail == 0


_APPENDER = """
import sys
from intently import Intently
project, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Intently.open(project, actor="user:alice") as ix:
    for i in range(count):
        ix.goals.add(f"Goal {i} of worker {worker}", type="GOAL")
        ix.checkpoint()
"""


def test_concurrent_appenders_in_separate_processes_sign_every_operation(home: Path) -> None:
    """Processes holding the key append and checkpoint at the same time: each checkpoint
    covers operations the others appended, checked by their signatures; none is refused."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"), env.get("PYTHONPATH", "")])
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _APPENDER, str(home), str(w), "8"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for w in range(3)
    ]
    outcomes: list[Any] = [(p.wait(timeout=300), p.stderr.read().decode() if p.stderr else "") for p in procs]
    assert [code for code, _ in outcomes] == [0, 0, 0], outcomes
    with Intently.open(home, actor="user:alice") as ix:
        report = ix.log.verify()
        assert report.ok, report.to_json()
        sizes = {s.stream: s for s in report.streams}
        goals = [s for name, s in sizes.items() if name != STREAM and s.size] or [sizes[STREAM]]
        for rep in goals:
            assert rep.unsigned_tail == 0 and rep.unattributed == 0
        with ix.store.transaction(write=False) as tx:
            unsigned = tx.scalar("SELECT COUNT(*) FROM log_ops WHERE signature IS NULL")
        assert unsigned == 0


def test_cli_verify_names_the_row_and_checkpoint_adopt_signs_it(home: Path, clock: ManualClock) -> None:
    """``intently log verify`` exits 8 naming stream, seq and id (``--json`` adds
    ``unattributed``); ``intently log checkpoint --adopt`` is the one way to sign such a row."""
    from tests.cli.conftest import run

    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        forged = forge_append(ix.store)
    verify = run("log", "verify", cwd=home)
    assert verify.code == 8
    line = verify.error_line()
    assert "(UnattributedOperation)" in line and f"stream {STREAM!r} at seq {forged}" in line, line
    assert FORGED_ID in line, line
    as_json = run("log", "verify", "--json", cwd=home)
    assert as_json.code == 8
    (stream,) = as_json.json["streams"]
    assert (stream["error_type"], stream["bad_seq"], stream["bad_id"], stream["unattributed"]) == (
        "UnattributedOperation",
        forged,
        FORGED_ID,
        1,
    )
    plain = run("log", "checkpoint", cwd=home)
    assert plain.code == 8 and "--adopt" in plain.error_line(), plain.stderr
    adopted = run("log", "checkpoint", "--adopt", "--json", cwd=home)
    assert adopted.code == 0, adopted.stderr
    assert [cp["size"] for cp in adopted.json] == [forged + 1]
    assert run("log", "verify", "--strict", cwd=home).code == 0


def _left_by_an_older_intently(home: Path, clock: ManualClock, *, edit: bool = False) -> int:
    """The database as an intently older than operation signatures (``log`` schema v2) leaves it
    when a command is killed between its change and its checkpoint (a hook that timed out, a
    Ctrl-C): rows with no signature columns past the last checkpoint. Returns that last seq."""
    ix = Intently.open(home, actor="user:alice", clock=clock)
    ix.access.grant(Actor.parse("dave"), Permission.READ)
    with ix.store.transaction(write=True) as tx:
        if edit:  # ...and someone edited its row since, its leaf left alone
            tx.execute(
                "UPDATE log_ops SET target = 'user:mallory' WHERE stream = ? AND target = 'user:dave'", (STREAM,)
            )
        tx.execute("DROP TABLE log_quarantine")
        tx.execute("ALTER TABLE log_ops DROP COLUMN key_id")
        tx.execute("ALTER TABLE log_ops DROP COLUMN signature")
        tx.execute("ALTER TABLE log_checkpoints DROP COLUMN frontier")
        tx.execute("UPDATE schema_versions SET version = 2 WHERE component = 'log'")
        size = int(tx.scalar("SELECT size FROM log_streams WHERE stream = ?", (STREAM,)))
    ix.runtime.store.close()  # killed before its checkpoint
    return size


def test_an_upgrade_signs_what_an_older_intently_left_without_a_checkpoint(
    home: Path, clock: ManualClock, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every command after such an upgrade saved its change and exited 8 until someone ran
    `intently log checkpoint --adopt`. The process that makes operations carry signatures now
    signs the rows that were there before, on the record, and only those."""
    size = _left_by_an_older_intently(home, clock)
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        assert "1 operation(s) an older intently appended" in capsys.readouterr().err
        (adopted,) = ix.log.read(STREAM, op="LOG_ADOPTED")
        assert adopted.seq == size + 1 and adopted.actor == "user:alice"
        assert adopted.payload["reason"] == "upgrade"
        assert (adopted.payload["first_seq"], adopted.payload["last_seq"]) == (size, size)
        assert newest_checkpoint(ix.store) == size + 1
        ix.access.grant(Actor.parse("erin"), Permission.READ)  # the next command just works
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        report = ix.log.verify()
        assert report.ok, report.to_json()
        assert report.streams[0].unsigned_tail == 0
        assert len(ix.log.read(STREAM, op="LOG_ADOPTED")) == 1  # once, at the upgrade
        forged = forge_append(ix.store)  # behind the log's back after the upgrade: never adopted
        with pytest.raises(UnattributedOperation) as caught:
            ix.log.checkpoint()
        assert caught.value.seq == forged


def test_store_upgrade_signs_what_an_older_intently_left_as_the_automatic_upgrade_does(
    home: Path, clock: ManualClock
) -> None:
    """A home with ``auto_upgrade = false`` is upgraded by ``intently store upgrade``. That
    command opened only the store: it applied the migrations but loaded no key and adopted
    nothing, so the rows an older intently left unsigned stayed unattributed and every later
    command exited 8 until someone ran ``log checkpoint --adopt``. It goes through the same
    path as the automatic upgrade now: the same rows are signed, on the record."""
    from tests.cli.conftest import run

    size = _left_by_an_older_intently(home, clock)
    config = home / ".intently" / "intently.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("auto_upgrade = true", "auto_upgrade = false"), encoding="utf-8")
    refused = run("whoami", cwd=home)
    assert "run `intently store upgrade`" in refused.error_line()
    upgraded = run("store", "upgrade", "--json", cwd=home)
    assert upgraded.code == 0, upgraded.stderr
    assert {"component": "log", "version": 3} in upgraded.json["applied"]
    assert upgraded.json["adopted"] == 1
    assert "1 operation(s) an older intently appended" in upgraded.stderr
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        (adopted,) = ix.log.read(STREAM, op="LOG_ADOPTED")
        assert adopted.seq == size + 1 and adopted.actor == "user:alice"
        assert adopted.payload["reason"] == "upgrade"
        assert (adopted.payload["first_seq"], adopted.payload["last_seq"]) == (size, size)
        assert newest_checkpoint(ix.store) == size + 1
    assert run("log", "verify", "--strict", cwd=home).code == 0
    again = run("store", "upgrade", "--json", cwd=home)
    assert again.json == {"applied": [], "adopted": 0}, again.stderr


def test_an_upgrade_never_adopts_an_edited_row_nor_without_a_key(
    home: Path, clock: ManualClock, capsys: pytest.CaptureFixture[str]
) -> None:
    size = _left_by_an_older_intently(home, clock, edit=True)
    with Intently.open(home, actor="user:alice", clock=clock) as ix:  # opening still works
        assert "not adopted" in capsys.readouterr().err
        assert ix.log.read(STREAM, op="LOG_ADOPTED") == []
        report = ix.log.verify()
        assert (report.streams[0].error_type, report.streams[0].bad_seq) == ("LeafMismatch", size)


def test_an_upgrade_without_the_key_adopts_nothing_and_names_the_command(home: Path, clock: ManualClock) -> None:
    size = _left_by_an_older_intently(home, clock)
    private = home / ".intently" / "keys" / "private" / "log-ed25519.pem"
    kept = private.read_bytes()
    private.unlink()
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        assert ix.log.read(STREAM, op="LOG_ADOPTED") == []
    private.write_bytes(kept)
    with Intently.open(home, actor="user:alice", clock=clock) as ix:  # the key is back: the message says what to run
        report = ix.log.verify()
        assert (report.streams[0].error_type, report.streams[0].bad_seq) == ("UnattributedOperation", size)
        assert "older than operation signatures" in (report.streams[0].error or "")
        assert "intently log checkpoint --adopt" in (report.streams[0].error or "")


def _group_commit(home: Path) -> None:
    config = home / ".intently" / "intently.toml"
    text = config.read_text(encoding="utf-8")
    assert "group_commit = false" in text
    config.write_text(text.replace("group_commit = false", "group_commit = true"), encoding="utf-8")


def _append_notes(ix: Intently, count: int) -> None:
    with ix.store.transaction(write=True) as tx:
        for n in range(count):
            ix.log.append(
                tx,
                namespace=STREAM,
                actor="user:alice",
                op="NOTE_ADDED",
                target=f"note-{n}",
                payload={"n": n},
                policy_version="test@1",
            )


def test_group_commit_signs_a_transactions_appends_with_one_checkpoint_committed_with_them(
    home: Path, clock: ManualClock
) -> None:
    """With group commit a transaction of many appends cost one Ed25519 signature per
    operation and a checkpoint after it, about half the throughput of the log before operations
    were signed. One checkpoint now signs them inside their transaction: it commits with them,
    so even a process killed before its end-of-command checkpoint leaves nothing unsigned."""
    _group_commit(home)
    ix = Intently.open(home, actor="user:alice", clock=clock)
    before = newest_checkpoint(ix.store)
    _append_notes(ix, 20)
    with ix.store.transaction(write=False) as tx:
        made = tx.query("SELECT size FROM log_checkpoints WHERE stream = ? AND size > ?", (STREAM, before))
        signed_rows = tx.scalar("SELECT COUNT(*) FROM log_ops WHERE stream = ? AND seq > ?", (STREAM, before))
        own = tx.scalar(
            "SELECT COUNT(*) FROM log_ops WHERE stream = ? AND seq > ? AND signature IS NOT NULL", (STREAM, before)
        )
    assert [int(r["size"]) for r in made] == [before + 20]  # committed with them, before any close
    assert (signed_rows, own) == (20, 0)  # under that checkpoint, as rows under a checkpoint always were
    ix.runtime.store.close()  # killed before its end-of-command checkpoint
    with Intently.open(home, actor="user:alice", clock=clock) as again:
        report = again.log.verify()
        assert report.ok, report.to_json()
        assert report.streams[0].unsigned_tail == 0
        _append_notes(again, 3)  # and a clean close brings the witness file up to it
    with Intently.open(home, actor="user:alice", clock=clock) as again:
        assert again.log.read_witness()[STREAM].size == before + 23
        assert again.log.verify().ok


def test_group_commit_signs_each_append_when_others_are_pending(home: Path, clock: ManualClock) -> None:
    """A row nobody vouched for is pending before the transaction: no checkpoint may sign past
    it, so this transaction's appends are signed one by one, as without group commit."""
    _group_commit(home)
    with Intently.open(home, actor="user:alice", clock=clock) as ix:
        forged = forge_append(ix.store)
        _append_notes(ix, 5)
        with ix.store.transaction(write=False) as tx:
            own = tx.scalar(
                "SELECT COUNT(*) FROM log_ops WHERE stream = ? AND seq > ? AND signature IS NOT NULL",
                (STREAM, forged),
            )
        assert own == 5 and newest_checkpoint(ix.store) == forged - 1
        with pytest.raises(UnattributedOperation):
            ix.log.checkpoint()
        ix.log.checkpoint(adopt="user:alice")
        assert ix.log.verify().ok
