"""Tampering with the real SQLite file, as someone with disk access would, is caught by
``OperationLog.verify`` with a specific error naming the stream and the first bad seq.

In the spirit of the transparency-dev / RFC 6962 test vectors: one test per way of lying.
The history is 8 operations in stream 'proj', signed at sizes 1, 4 and 8 (see conftest).
"""

from __future__ import annotations

import base64
import json
import shutil
import sqlite3

import pytest

from intently import Actor, Permission
from intently.core.errors import LeafMismatch, RolledBack, RootMismatch, UnattributedOperation
from intently.log import canonical_operation, leaf_hash

from .conftest import STREAM, LoggedHome, change_one, flip_bit, only_failure, rehash

FIELDS = ["actor", "op", "target", "payload", "time", "policy_version", "id", "leaf"]


def test_untouched_history_verifies(logged: LoggedHome) -> None:
    report = logged.verify()
    assert report.ok, report.to_json()
    (stream,) = report.streams
    assert (stream.stream, stream.size, stream.checkpoints, stream.witnessed_size) == (STREAM, 8, 3, 8)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("seq", [1, 6])
def test_flipped_bit_in_a_stored_field_is_a_leaf_mismatch(logged: LoggedHome, field: str, seq: int) -> None:
    with logged.raw() as db:
        (value,) = db.execute(f"SELECT {field} FROM log_ops WHERE stream = ? AND seq = ?", (STREAM, seq)).fetchone()
        change_one(db, f"UPDATE log_ops SET {field} = ? WHERE stream = ? AND seq = ?", (flip_bit(value), STREAM, seq))
    assert only_failure(logged.verify()) == ("LeafMismatch", seq)


@pytest.mark.parametrize("field", [f for f in FIELDS if f != "leaf"])
def test_flipped_bit_with_recomputed_leaves_breaks_the_signed_root(logged: LoggedHome, field: str) -> None:
    with logged.raw() as db:
        (value,) = db.execute(f"SELECT {field} FROM log_ops WHERE stream = ? AND seq = 3", (STREAM,)).fetchone()
        change_one(db, f"UPDATE log_ops SET {field} = ? WHERE stream = ? AND seq = 3", (flip_bit(value), STREAM))
        rehash(db)
    assert only_failure(logged.verify()) == ("RootMismatch", 4)  # the first checkpoint covering seq 3


def test_payload_made_unparsable_is_reported_not_crashed_on(logged: LoggedHome) -> None:
    with logged.raw() as db:
        (payload,) = db.execute("SELECT payload FROM log_ops WHERE stream = ? AND seq = 5", (STREAM,)).fetchone()
        assert payload.startswith("{")
        change_one(
            db, "UPDATE log_ops SET payload = ? WHERE stream = ? AND seq = 5", (flip_bit(payload, index=0), STREAM)
        )
    assert only_failure(logged.verify()) == ("LeafMismatch", 5)
    with logged.open() as ix, pytest.raises(LeafMismatch) as caught:
        ix.log.read(STREAM)
    assert (caught.value.stream, caught.value.seq) == (STREAM, 5)


def test_invalid_utf8_written_into_a_text_column_is_a_leaf_mismatch(logged: LoggedHome) -> None:
    with logged.raw() as db:
        (target,) = db.execute("SELECT target FROM log_ops WHERE stream = ? AND seq = 2", (STREAM,)).fetchone()
        raw = bytearray(target.encode())
        raw[0] ^= 0x80  # a lone continuation byte: not UTF-8 any more
        change_one(db, "UPDATE log_ops SET target = CAST(? AS TEXT) WHERE stream = ? AND seq = 2", (bytes(raw), STREAM))
    assert only_failure(logged.verify()) == ("LeafMismatch", 2)


def test_flipped_seq_leaves_a_gap(logged: LoggedHome) -> None:
    with logged.raw() as db:
        # 8 ^ 1 = 9: flipping the lowest bit of the last seq
        change_one(db, "UPDATE log_ops SET seq = 9 WHERE stream = ? AND seq = 8", (STREAM,))
    assert only_failure(logged.verify()) == ("SequenceGap", 8)


def test_row_moved_to_another_stream_is_found(logged: LoggedHome) -> None:
    with logged.raw() as db:
        change_one(db, "UPDATE log_ops SET stream = ? WHERE stream = ? AND seq = 6", (flip_bit(STREAM), STREAM))
    report = logged.verify()
    by_name = {s.stream: s for s in report.streams}
    assert (by_name[STREAM].error_type, by_name[STREAM].bad_seq) == ("SequenceGap", 6)
    assert (by_name[flip_bit(STREAM)].error_type, by_name[flip_bit(STREAM)].bad_seq) == ("SequenceGap", 1)


def test_dropped_operation_is_a_gap(logged: LoggedHome) -> None:
    with logged.raw() as db:
        change_one(db, "DELETE FROM log_ops WHERE stream = ? AND seq = 3", (STREAM,))
    assert only_failure(logged.verify()) == ("SequenceGap", 3)


def test_dropped_operation_with_renumbering_and_rehash_breaks_the_signed_root(logged: LoggedHome) -> None:
    with logged.raw() as db:
        change_one(db, "DELETE FROM log_ops WHERE stream = ? AND seq = 3", (STREAM,))
        db.execute("UPDATE log_ops SET seq = seq - 1 WHERE stream = ? AND seq > 3", (STREAM,))
        rehash(db)
    assert only_failure(logged.verify()) == ("RootMismatch", 4)


def test_dropped_last_operation_is_caught_by_the_header_then_by_the_checkpoint(logged: LoggedHome) -> None:
    with logged.raw() as db:
        change_one(db, "DELETE FROM log_ops WHERE stream = ? AND seq = 8", (STREAM,))
    assert only_failure(logged.verify()) == ("SequenceGap", 8)
    with logged.raw() as db:
        rehash(db)  # header now says 7
    assert only_failure(logged.verify()) == ("RolledBack", 8)


def test_reordered_operations_are_a_leaf_mismatch(logged: LoggedHome) -> None:
    with logged.raw() as db:
        change_one(db, "UPDATE log_ops SET seq = -1 WHERE stream = ? AND seq = 6", (STREAM,))
        change_one(db, "UPDATE log_ops SET seq = 6 WHERE stream = ? AND seq = 7", (STREAM,))
        change_one(db, "UPDATE log_ops SET seq = 7 WHERE stream = ? AND seq = -1", (STREAM,))
    assert only_failure(logged.verify()) == ("LeafMismatch", 6)


def test_reordered_operations_with_rehash_break_the_signed_root(logged: LoggedHome) -> None:
    with logged.raw() as db:
        change_one(db, "UPDATE log_ops SET seq = -1 WHERE stream = ? AND seq = 2", (STREAM,))
        change_one(db, "UPDATE log_ops SET seq = 2 WHERE stream = ? AND seq = 3", (STREAM,))
        change_one(db, "UPDATE log_ops SET seq = 3 WHERE stream = ? AND seq = -1", (STREAM,))
        rehash(db)
    assert only_failure(logged.verify()) == ("RootMismatch", 4)


def _insert_forged(db: sqlite3.Connection, seq: int) -> None:
    row = db.execute("SELECT * FROM log_ops WHERE stream = ? AND seq = 2", (STREAM,)).fetchone()
    names = [d[0] for d in db.execute("SELECT * FROM log_ops LIMIT 0").description]
    forged = dict(zip(names, row, strict=True))
    forged.update(seq=seq, id="0190aaaa-0000-7000-8000-000000000000", target="user:mallory")
    forged["payload"] = '{"actor":"user:mallory","permission":"admin"}'
    forged["leaf"] = leaf_hash(
        canonical_operation(
            STREAM, seq, *(forged[k] for k in ("id", "time", "actor", "op", "target", "payload", "policy_version"))
        )
    ).hex()
    db.execute(
        f"INSERT INTO log_ops ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", list(forged.values())
    )


def test_operation_appended_behind_the_logs_back_is_caught_by_the_header(logged: LoggedHome) -> None:
    with logged.raw() as db:
        _insert_forged(db, 9)
    assert only_failure(logged.verify()) == ("SequenceGap", 9)


def test_operation_inserted_in_the_middle_breaks_the_next_signed_root(logged: LoggedHome) -> None:
    with logged.raw() as db:
        db.execute("UPDATE log_ops SET seq = seq + 100 WHERE stream = ? AND seq >= 5", (STREAM,))
        db.execute("UPDATE log_ops SET seq = seq - 99 WHERE stream = ? AND seq >= 100", (STREAM,))
        _insert_forged(db, 5)
    assert only_failure(logged.verify()) == ("LeafMismatch", 6)  # the shifted rows no longer match their leaves
    with logged.raw() as db:
        rehash(db)
    assert only_failure(logged.verify()) == ("RootMismatch", 8)


def test_operation_appended_with_rehash_is_unattributed_and_never_signed(logged: LoggedHome) -> None:
    """Without the key an attacker can only append operations no key signed. They used to
    pass as an unsigned tail, and the next honest checkpoint signed them into history; now
    verify names the operation, and the next command's checkpoint stops before it."""
    with logged.raw() as db:
        _insert_forged(db, 9)  # with row 2's signature: there, but not over this leaf
        rehash(db)
    report = logged.verify()
    assert only_failure(report) == ("UnattributedOperation", 9)
    assert report.streams[0].bad_id == "0190aaaa-0000-7000-8000-000000000000"
    assert report.streams[0].unattributed == 1
    with logged.open() as ix:
        ix.access.grant(Actor.parse("ivan"), Permission.READ)
        with pytest.raises(UnattributedOperation) as caught:
            ix.checkpoint()
        assert (caught.value.stream, caught.value.seq) == (STREAM, 9)
        assert max(cp.size for cp in ix.log.latest_checkpoints().values()) == 8
    with logged.raw() as db:
        db.execute("UPDATE log_ops SET key_id = NULL, signature = NULL WHERE stream = ? AND seq = 9", (STREAM,))
    assert only_failure(logged.verify()) == ("UnattributedOperation", 9)  # no signature at all: the same


# -- checkpoints ------------------------------------------------------------------------


@pytest.mark.parametrize("index", [0, 5, 43, 87])  # 88 base64 characters, the last ones padding
def test_forged_checkpoint_signature(logged: LoggedHome, index: int) -> None:
    with logged.raw() as db:
        (sig,) = db.execute("SELECT signature FROM log_checkpoints WHERE stream = ? AND size = 4", (STREAM,)).fetchone()
        change_one(
            db,
            "UPDATE log_checkpoints SET signature = ? WHERE stream = ? AND size = 4",
            (flip_bit(sig, index=index), STREAM),
        )
    assert only_failure(logged.verify()) == ("BadSignature", 4)


@pytest.mark.parametrize(
    ("column", "expected"), [("root", "BadSignature"), ("time", "BadSignature"), ("origin", "BadSignature")]
)
def test_flipped_bit_in_a_checkpoint_field(logged: LoggedHome, column: str, expected: str) -> None:
    with logged.raw() as db:
        (value,) = db.execute(
            f"SELECT {column} FROM log_checkpoints WHERE stream = ? AND size = 4", (STREAM,)
        ).fetchone()
        change_one(
            db, f"UPDATE log_checkpoints SET {column} = ? WHERE stream = ? AND size = 4", (flip_bit(value), STREAM)
        )
    assert only_failure(logged.verify()) == (expected, 4)


def test_checkpoint_moved_to_another_size_fails_its_signature(logged: LoggedHome) -> None:
    with logged.raw() as db:
        change_one(db, "UPDATE log_checkpoints SET size = 5 WHERE stream = ? AND size = 4", (STREAM,))
    assert only_failure(logged.verify()) == ("BadSignature", 5)


def test_checkpoint_signed_by_an_unknown_key(logged: LoggedHome) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from intently.log import Checkpoint, key_id_of

    rogue = Ed25519PrivateKey.generate()
    with logged.raw() as db:
        origin, root, time = db.execute(
            "SELECT origin, root, time FROM log_checkpoints WHERE stream = ? AND size = 4", (STREAM,)
        ).fetchone()
        body = Checkpoint.body(origin, STREAM, 4, bytes.fromhex(root), time)
        change_one(
            db,
            "UPDATE log_checkpoints SET key_id = ?, signature = ? WHERE stream = ? AND size = 4",
            (key_id_of(rogue.public_key()), base64.b64encode(rogue.sign(body)).decode(), STREAM),
        )
    assert only_failure(logged.verify()) == ("UnknownKey", 4)


def test_old_checkpoint_put_back_is_stale(logged: LoggedHome) -> None:
    """The database's newest checkpoint (4) is older than the witnessed one (8)."""
    with logged.raw() as db:
        change_one(db, "DELETE FROM log_checkpoints WHERE stream = ? AND size = 8", (STREAM,))
    assert only_failure(logged.verify()) == ("StaleCheckpoint", 5)


def test_database_rolled_back_behind_the_witness(logged: LoggedHome) -> None:
    """Restore the copy of the SQLite file taken at size 4, after the witness saw size 8."""
    for suffix in ("-wal", "-shm"):
        logged.db.with_name(logged.db.name + suffix).unlink(missing_ok=True)
    shutil.copyfile(logged.backup_at_4, logged.db)
    assert only_failure(logged.verify()) == ("RolledBack", 5)


def test_work_on_a_rolled_back_database_is_refused_before_anything_is_written(logged: LoggedHome) -> None:
    """A change on a database restored behind the witness used to be committed, and only the
    checkpoint after it failed ("this command's change was saved ... do not retry it"): every
    retry saved the change again, each one past the witness and unprovable. Now the first
    append finds the disagreement under the write lock and the command changes nothing."""
    shutil.copyfile(logged.backup_at_4, logged.db)
    before = logged.witness.read_text()
    mallory = Actor.parse("mallory")
    for _ in range(3):  # retrying does not launder the history either
        with logged.open() as ix:
            with pytest.raises(RolledBack) as caught:
                ix.access.grant(mallory, Permission.ADMIN)
            assert (caught.value.stream, caught.value.seq) == (STREAM, 5)
            assert "nothing was written" in str(caught.value)
            assert ix.log.size(STREAM) == 4
            assert Permission.ADMIN not in ix.access.permissions(mallory, STREAM)
    assert logged.witness.read_text() == before
    assert only_failure(logged.verify()) == ("RolledBack", 5)

    # Carrying on from this database is a deliberate act: its entry leaves the witness file.
    data = json.loads(before)
    for key in [k for k in data if k.startswith("db:")]:
        del data[key]
    logged.witness.write_text(json.dumps(data))
    with logged.open() as ix:
        ix.access.grant(mallory, Permission.READ)
        assert ix.log.size(STREAM) == 5
    assert logged.verify().ok


def test_work_on_a_rewritten_history_is_refused_before_anything_is_written(logged: LoggedHome) -> None:
    """The database reaches the witnessed size but not with the witnessed root (its history was
    replaced, and its checkpoints with it): no change is added on top of it."""
    with logged.raw() as db:
        change_one(db, "UPDATE log_ops SET target = 'user:mallory' WHERE stream = ? AND seq = 3", (STREAM,))
        rehash(db)
        db.execute("DELETE FROM log_checkpoints")
    with logged.open() as ix:
        with pytest.raises(RootMismatch) as caught:
            ix.access.grant(Actor.parse("mallory"), Permission.ADMIN)
        assert (caught.value.stream, caught.value.seq) == (STREAM, 8)
        assert ix.log.size(STREAM) == 8


def test_full_rewrite_resigned_with_the_stolen_key_is_caught_by_the_witness(logged: LoggedHome) -> None:
    """With the private key an attacker can rewrite history and re-sign every checkpoint;
    only the tracked witness (and git history of it) still remembers the real root."""
    with logged.raw() as db:
        change_one(db, "UPDATE log_ops SET target = 'user:mallory' WHERE stream = ? AND seq = 3", (STREAM,))
        rehash(db)
        db.execute("DELETE FROM log_checkpoints")
    with logged.open() as ix:
        with pytest.raises(UnattributedOperation) as caught:
            # Signs only the untouched prefix: the rehashed operation 3's own signature is
            # over its old leaf (re-signing it needs the key, the next test's attacker).
            ix.log.checkpoint()
        assert (caught.value.stream, caught.value.seq) == (STREAM, 3)
        assert max(cp.size for cp in ix.log.latest_checkpoints().values()) == 2
    assert only_failure(logged.verify()) == ("RootMismatch", 8)  # the witness remembers the real root


@pytest.mark.parametrize("index", [0, 5, 43, 87])
def test_witness_checkpoint_with_forged_signature(logged: LoggedHome, index: int) -> None:
    data = json.loads(logged.witness.read_text())
    (entry,) = (v for k, v in data.items() if k.startswith("db:"))  # the one database of this home
    entry["streams"][STREAM]["signature"] = flip_bit(entry["streams"][STREAM]["signature"], index=index)
    logged.witness.write_text(json.dumps(data))
    assert only_failure(logged.verify()) == ("BadSignature", 8)


def test_header_frontier_tamper_does_not_fool_the_next_checkpoint(logged: LoggedHome) -> None:
    """A forged frontier would make the next checkpoint sign a wrong root; verify, which
    recomputes the tree from the leaves, names the checkpoint."""
    with logged.raw() as db:
        change_one(db, "UPDATE log_streams SET frontier = ? WHERE stream = ?", (json.dumps(["00" * 32]), STREAM))
    assert only_failure(logged.verify()) == ("RootMismatch", 8)  # the header is checked too
    with logged.open() as ix:
        ix.access.grant(Actor.parse("ivan"), Permission.READ)
        with pytest.raises(RootMismatch, match="header"):  # builds its tree from the operations
            ix.checkpoint()
        assert max(cp.size for cp in ix.log.latest_checkpoints().values()) == 8
    assert only_failure(logged.verify()) == ("RootMismatch", 9)


def test_deleted_stream_header(logged: LoggedHome) -> None:
    with logged.raw() as db:
        change_one(db, "DELETE FROM log_streams WHERE stream = ?", (STREAM,))
    assert only_failure(logged.verify()) == ("SequenceGap", 1)


def test_checkpoint_of_impossible_size(logged: LoggedHome) -> None:
    with logged.raw() as db:
        change_one(db, "UPDATE log_checkpoints SET size = 0 WHERE stream = ? AND size = 1", (STREAM,))
    assert only_failure(logged.verify()) == ("BadSignature", 0)


def test_checkpoints_deleted_and_witness_gone_leaves_an_unsigned_log(logged: LoggedHome) -> None:
    """Without any signed head left the log still hashes consistently: verify passes but
    reports every operation unsigned, which ``log verify --strict`` refuses."""
    with logged.raw() as db:
        db.execute("DELETE FROM log_checkpoints")
    logged.witness.unlink()
    report = logged.verify()
    assert report.ok and report.streams[0].unsigned_tail == 8
