"""``intently log ...`` through a real subprocess: verify's exit codes and message after
tampering with the SQLite file, proofs, replay, key rotation, public-key-only checks."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from intently import Actor, Permission
from intently.log import Checkpoint, canonical_json, inclusion_proof, leaf_hash, root_hash

from .conftest import library, run

pytestmark = pytest.mark.sqlite_only  # edits or copies the SQLite file directly

STREAM_KEYS = {
    "stream",
    "ok",
    "size",
    "checkpoints",
    "witnessed_size",
    "unsigned_tail",
    "error",
    "error_type",
    "bad_seq",
    "bad_id",
    "unattributed",
    "repairs",
    "misplaced",
}


@pytest.fixture
def busy_home(home: Path) -> Path:
    """'proj' holds 6 operations, all signed."""
    with library(home) as ix:
        for name in ("bob", "carol", "dave", "erin", "frank"):
            ix.access.grant(Actor.parse(name), Permission.READ)
    return home


def test_verify_passes_on_a_clean_log_and_names_the_first_bad_seq_after_tampering(busy_home: Path) -> None:
    clean = run("log", "verify", "--json", cwd=busy_home)
    assert clean.code == 0, clean.stderr
    data = clean.json
    assert set(data) == {"ok", "database", "streams", "other_databases"} and data["ok"] is True
    assert data["other_databases"] == [] and data["database"]
    (stream,) = data["streams"]
    assert set(stream) == STREAM_KEYS
    assert (stream["stream"], stream["size"], stream["witnessed_size"], stream["bad_seq"], stream["bad_id"]) == (
        "proj",
        6,
        6,
        None,
        None,
    )
    db = busy_home / ".intently" / "state" / "intently.db"
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE log_ops SET payload = replace(payload, 'read', 'admin') WHERE stream = 'proj' AND seq = 4")
    tampered = run("log", "verify", cwd=busy_home)
    assert tampered.code == 8
    line = tampered.error_line()
    assert line.startswith("error: log does not verify (LeafMismatch): stream 'proj' at seq 4:"), line
    with closing(sqlite3.connect(db)) as conn:
        (op_id,) = conn.execute("SELECT id FROM log_ops WHERE stream = 'proj' AND seq = 4").fetchone()
    assert line.endswith(f"(operation {op_id!r})"), line  # the row, by the id an auditor looks up
    assert "NO" in tampered.stdout  # the table still shows every stream
    as_json = run("log", "verify", "--json", cwd=busy_home)
    assert as_json.code == 8
    (bad,) = as_json.json["streams"]
    assert (bad["ok"], bad["error_type"], bad["bad_seq"], bad["bad_id"]) == (False, "LeafMismatch", 4, op_id)


def test_verify_strict_fails_on_unsigned_operations(busy_home: Path) -> None:
    db = busy_home / ".intently" / "state" / "intently.db"
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("DELETE FROM log_checkpoints WHERE size = 6")  # signed at 1 (init) and 6; witness says 6
    stale = run("log", "verify", cwd=busy_home)
    assert stale.error_line().startswith("error: log does not verify (StaleCheckpoint): stream 'proj' at seq 2:")
    (busy_home / ".intently" / "checkpoints.json").unlink()  # no witness: only unsigned operations remain
    assert run("log", "verify", cwd=busy_home).code == 0
    strict = run("log", "verify", "--strict", cwd=busy_home)
    assert strict.error_line() == "error: stream 'proj': 5 operation(s) after seq 1 no checkpoint covers"


def test_show_proof_and_consistency(busy_home: Path) -> None:
    shown = run("log", "show", "--limit", "2", "--json", cwd=busy_home).json
    assert [o["seq"] for o in shown] == [6, 5]
    assert set(shown[0]) == {"namespace", "seq", "id", "time", "actor", "op", "target", "payload", "policy_version"}
    proof = run("log", "proof", "3", "--json", cwd=busy_home).json
    assert {
        "stream",
        "seq",
        "leaf_index",
        "tree_size",
        "leaf_hash",
        "root",
        "proof",
        "operation",
        "verified",
        "checkpoint",
    } == set(proof)
    assert (proof["seq"], proof["leaf_index"], proof["tree_size"], proof["verified"]) == (3, 2, 6, True)
    assert proof["checkpoint"]["root"] == proof["root"]
    from intently.log import verify_inclusion_proof

    verify_inclusion_proof(proof)  # anyone can check the printed document
    consistency = run("log", "consistency", "2", "--json", cwd=busy_home).json
    assert (consistency["old_size"], consistency["new_size"], consistency["verified"]) == (2, 6, True)
    missing = run("log", "proof", "99", cwd=busy_home)
    assert "no operation 99" in missing.error_line()


def test_replay_reproduces_the_access_grants_table(busy_home: Path, tmp_path: Path) -> None:
    with library(busy_home) as ix:
        ix.access.revoke(Actor.parse("carol"), Permission.READ)
        ix.in_namespace("other").access.grant(Actor.parse("bob"), Permission.ADMIN)
    target = tmp_path / "rebuilt.db"
    result = run("log", "replay", "--to", str(target), "--json", cwd=busy_home)
    assert result.code == 0, result.stderr
    assert result.json == {"replayed": 8, "to": f"sqlite:///{target}"}
    query = "SELECT namespace, actor, permission, granted_by, granted_at FROM access_grants ORDER BY 1, 2, 3"
    with (
        closing(sqlite3.connect(target)) as rebuilt,
        closing(sqlite3.connect(busy_home / ".intently" / "state" / "intently.db")) as live,
    ):
        assert rebuilt.execute(query).fetchall() == live.execute(query).fetchall()
        assert len(rebuilt.execute(query).fetchall()) == 5
    again = run("log", "replay", "--to", str(target), cwd=busy_home)
    assert "fresh store" in again.error_line()


def test_rotate_key_then_verify_with_the_public_keyring_only(busy_home: Path, tmp_path: Path) -> None:
    witness = busy_home / ".intently" / "checkpoints.json"
    old_checkpoint = tmp_path / "old.json"
    (entry,) = (v for k, v in json.loads(witness.read_text()).items() if k.startswith("db:"))
    old_checkpoint.write_text(json.dumps(entry["streams"]["proj"]))
    rotated = run("log", "rotate-key", "--json", cwd=busy_home).json
    assert set(rotated) == {"retired", "key_id"} and rotated["retired"] != rotated["key_id"]
    assert run("log", "verify", cwd=busy_home).code == 0
    public = busy_home / ".intently" / "keys" / "public.json"
    ok = run("log", "verify-checkpoint", str(old_checkpoint), "--keys", str(public), "--json", cwd=tmp_path, actor=None)
    assert ok.json == {"ok": True, "stream": "proj", "size": 6, "key_id": rotated["retired"]}
    forged = json.loads(old_checkpoint.read_text())
    forged["size"] = 7
    old_checkpoint.write_text(json.dumps(forged))
    bad = run("log", "verify-checkpoint", str(old_checkpoint), "--keys", str(public), cwd=tmp_path, actor=None)
    assert bad.error_line().startswith("error: stream 'proj' at seq 7: checkpoint signature does not verify")
    assert bad.code == 8
    old_checkpoint.write_text("{not json")
    assert (
        "not a checkpoint"
        in run("log", "verify-checkpoint", str(old_checkpoint), "--keys", str(public), cwd=tmp_path).error_line()
    )


def _rotate_keeping_the_old_key(home: Path) -> tuple[Ed25519PrivateKey, dict[str, Any]]:
    """The thief's position: the private key as it was before a rotation (leaked), and the
    stream's checkpoint that key last signed, from the tracked witness file; then the rotation."""
    pem = (home / ".intently" / "keys" / "private" / "log-ed25519.pem").read_bytes()
    old_key = serialization.load_pem_private_key(pem, password=None)
    assert isinstance(old_key, Ed25519PrivateKey)
    witness = home / ".intently" / "checkpoints.json"
    (entry,) = (v for k, v in json.loads(witness.read_text()).items() if k.startswith("db:"))
    signed: dict[str, Any] = entry["streams"]["proj"]
    assert run("log", "rotate-key", cwd=home).code == 0
    return old_key, signed


def test_verify_checkpoint_refuses_a_retired_keys_backdated_checkpoint_of_a_newer_tree(
    busy_home: Path, tmp_path: Path
) -> None:
    """An auditor with only the public keyring: a checkpoint the leaked, since-retired key signed
    over a tree larger than it ever signed, dated before its retirement, was reported ok."""
    old_key, signed = _rotate_keeping_the_old_key(busy_home)
    forged = Checkpoint("intently/proj", "proj", signed["size"] + 1, bytes(32), signed["time"], signed["key_id"], b"")
    forged = replace(forged, signature=old_key.sign(forged.signed_body()))
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged.to_json()))
    public = busy_home / ".intently" / "keys" / "public.json"
    result = run("log", "verify-checkpoint", str(path), "--keys", str(public), cwd=tmp_path, actor=None)
    assert result.code == 8
    assert result.error_line().startswith(f"error: stream 'proj' at seq {signed['size'] + 1}: checkpoint at size")
    assert "retired" in result.error_line()
    path.write_text(json.dumps(signed))  # what the key really signed still checks
    assert run("log", "verify-checkpoint", str(path), "--keys", str(public), cwd=tmp_path, actor=None).code == 0


def test_verify_checkpoint_refuses_a_retired_keys_checkpoint_of_another_tree_of_a_size_it_signed(
    busy_home: Path, tmp_path: Path
) -> None:
    """The same thief, staying within the size the key had signed: a tree of that very size but
    other content, dated before the retirement, was reported ok. The rotation recorded the
    root the key last signed; only that tree is its own."""
    old_key, signed = _rotate_keeping_the_old_key(busy_home)
    forged = Checkpoint("intently/proj", "proj", signed["size"], bytes(32), signed["time"], signed["key_id"], b"")
    forged = replace(forged, signature=old_key.sign(forged.signed_body()))
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged.to_json()))
    public = busy_home / ".intently" / "keys" / "public.json"
    result = run("log", "verify-checkpoint", str(path), "--keys", str(public), cwd=tmp_path, actor=None)
    assert result.code == 8, result.stdout
    assert result.error_line().startswith(f"error: stream 'proj' at seq {signed['size']}: checkpoint at size")
    assert "not this tree" in result.error_line()
    path.write_text(json.dumps(signed))
    assert run("log", "verify-checkpoint", str(path), "--keys", str(public), cwd=tmp_path, actor=None).code == 0
    assert run("log", "verify", cwd=busy_home).code == 0


def test_non_owners_verify_the_streams_they_may_read(busy_home: Path) -> None:
    with library(busy_home, namespace="other") as ix:
        ix.access.grant(Actor.parse("carol"), Permission.READ)
    db = busy_home / ".intently" / "state" / "intently.db"
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE log_ops SET target = 'user:mallory' WHERE stream = 'other' AND seq = 1")
    bob = run("log", "verify", "--json", cwd=busy_home, actor="bob")  # bob reads 'proj' only
    assert bob.code == 0, bob.stderr
    assert [s["stream"] for s in bob.json["streams"]] == ["proj"]
    owner = run("log", "verify", cwd=busy_home)
    assert owner.error_line().startswith("error: log does not verify (LeafMismatch): stream 'other' at seq 1:")


def test_verify_proof_checks_proofs_offline_with_the_public_keyring_only(busy_home: Path, tmp_path: Path) -> None:
    """The documented way for someone without the database: print the proof, hand it over with
    keys/public.json, check it anywhere. Before, only the Python API could check a proof, and
    nothing tied the proof's root to a signature unless the auditor wired that up themselves."""
    public = busy_home / ".intently" / "keys" / "public.json"
    inclusion, consistency = tmp_path / "inclusion.json", tmp_path / "consistency.json"
    inclusion.write_text(run("log", "proof", "3", "--json", cwd=busy_home).stdout)
    consistency_doc = run("log", "consistency", "1", "--json", cwd=busy_home).json
    assert consistency_doc["old_checkpoint"]["size"] == 1 and consistency_doc["new_checkpoint"]["size"] == 6
    consistency.write_text(json.dumps(consistency_doc))
    ok = run("log", "verify-proof", str(inclusion), "--keys", str(public), "--json", cwd=tmp_path, actor=None)
    assert ok.code == 0, ok.stderr
    assert (ok.json["kind"], [c["size"] for c in ok.json["checkpoints"]]) == ("inclusion", [6])
    ok = run("log", "verify-proof", str(consistency), "--keys", str(public), cwd=tmp_path, actor=None)
    assert ok.code == 0, ok.stderr
    doc = json.loads(inclusion.read_text())
    doc["operation"]["payload"]["permission"] = "admin"  # a lie, with the path rebuilt around it
    leaves = [bytes([i]) * 32 for i in range(6)]
    leaves[2] = leaf_hash(canonical_json(doc["operation"]))
    doc.update(
        leaf_hash=leaves[2].hex(),
        root=root_hash(leaves).hex(),
        proof=[h.hex() for h in inclusion_proof(leaves, 2)],
    )
    inclusion.write_text(json.dumps(doc))
    bad = run("log", "verify-proof", str(inclusion), "--keys", str(public), cwd=tmp_path, actor=None)
    assert bad.code == 8
    assert (
        bad.error_line() == "error: stream 'proj' at seq 6: the signed checkpoint's root at size 6 is not the proof's"
    )
