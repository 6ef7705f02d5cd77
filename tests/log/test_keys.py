"""Signing keys: rotation keeps old checkpoints verifiable with only the tracked public
keyring; a retired key cannot sign new checkpoints; a bad keyring is refused."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from intently import Actor, Intently, InvalidInput, Permission
from intently.core.errors import BadSignature, UnattributedOperation, UnknownKey
from intently.log import (
    Checkpoint,
    Frontier,
    KeyRing,
    canonical_json,
    inclusion_proof,
    key_id_of,
    leaf_hash,
    root_hash,
    verify_anchored_proof,
    verify_inclusion_proof,
)

from .conftest import STREAM, LoggedHome, change_one, only_failure, rehash


def private_key(project: Path) -> Ed25519PrivateKey:
    loaded = serialization.load_pem_private_key(
        (project / ".intently" / "keys" / "private" / "log-ed25519.pem").read_bytes(), password=None
    )
    assert isinstance(loaded, Ed25519PrivateKey)
    return loaded


def keys_of(ring: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for k, v in ring.items() if k.startswith("key:")]


def test_key_id_is_the_first_16_hex_of_the_public_keys_sha256(logged: LoggedHome) -> None:
    import hashlib

    public = private_key(logged.project).public_key()
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    ring = json.loads((logged.project / ".intently" / "keys" / "public.json").read_text())
    (entry,) = keys_of(ring)
    assert entry["key_id"] == key_id_of(public) == hashlib.sha256(raw).hexdigest()[:16]
    assert base64.b64decode(entry["public_key"]) == raw


def test_rotation_keeps_old_checkpoints_verifiable(logged: LoggedHome) -> None:
    old_key = private_key(logged.project)
    with logged.open() as ix:
        logged.clock.advance("1h")
        retired, new = ix.log.rotate_key(ix.home.keys_dir, namespace=ix.namespace, actor=str(ix.actor))
        logged.clock.advance("1h")
        ix.access.grant(Actor.parse("judy"), Permission.READ)
    assert retired == key_id_of(old_key.public_key()) != new
    ring = json.loads((logged.project / ".intently" / "keys" / "public.json").read_text())
    by_id = {k["key_id"]: k for k in keys_of(ring)}
    assert by_id[retired]["retired"] is not None and by_id[new]["retired"] is None
    assert by_id[retired]["first_signed"] <= by_id[retired]["last_signed"] <= by_id[retired]["retired"]
    assert by_id[new]["first_signed"] is not None  # the new key signed the rotation at once
    report = logged.verify()
    assert report.ok, report.to_json()
    with logged.open() as ix:
        keys = [cp.key_id for cp in _all_checkpoints(logged)]
        assert keys[:3] == [retired] * 3 and set(keys[3:]) == {new}
        payload = ix.log.read(STREAM, op="KEY_ROTATED")[0].payload
        assert (payload["retired"], payload["key_id"]) == (retired, new)
    # Anyone holding only the public keyring verifies both generations.
    public_only = KeyRing.load_public(logged.project / ".intently" / "keys" / "public.json")
    for cp in _all_checkpoints(logged):
        public_only.verify(cp.key_id, cp.signed_body(), cp.signature, stream=cp.stream, seq=cp.size)


def _all_checkpoints(logged: LoggedHome) -> list[Checkpoint]:
    with logged.raw() as db:
        rows = db.execute(
            "SELECT origin, stream, size, root, time, key_id, signature FROM log_checkpoints ORDER BY size"
        )
        names = [d[0] for d in rows.description]
        return [Checkpoint.from_json(dict(zip(names, r, strict=True))) for r in rows.fetchall()]


def test_checkpoint_signed_by_a_retired_key_after_its_retirement_fails(logged: LoggedHome) -> None:
    old_key = private_key(logged.project)
    with logged.open() as ix:
        logged.clock.advance("1h")
        ix.log.rotate_key(ix.home.keys_dir, namespace=ix.namespace, actor=str(ix.actor))
        logged.clock.advance("1h")
        ix.access.grant(Actor.parse("judy"), Permission.READ)  # size 10, signed by the new key
    with logged.raw() as db:
        origin, root, time = db.execute(
            "SELECT origin, root, time FROM log_checkpoints WHERE stream = ? AND size = 10", (STREAM,)
        ).fetchone()
        body = Checkpoint.body(origin, STREAM, 10, bytes.fromhex(root), time)
        change_one(
            db,
            "UPDATE log_checkpoints SET key_id = ?, signature = ? WHERE stream = ? AND size = 10",
            (key_id_of(old_key.public_key()), base64.b64encode(old_key.sign(body)).decode(), STREAM),
        )
    error_type, seq = only_failure(logged.verify())
    assert (error_type, seq) == ("BadSignature", 10)
    report = logged.verify()
    assert "retired" in (report.streams[0].error or "")


def test_a_home_without_the_private_key_verifies_but_signs_nothing(logged: LoggedHome) -> None:
    pem = logged.project / ".intently" / "keys" / "private" / "log-ed25519.pem"
    held = pem.read_bytes()
    pem.unlink()
    with logged.open() as ix:
        assert ix.log.checkpoint() == []  # a verifier-only copy signs nothing
        report = ix.log.verify()
        assert report.ok
        ix.access.grant(Actor.parse("judy"), Permission.READ)
    # Written without a key, after history a key signed: verify cannot tell it from a row
    # added behind the log's back, and says so, naming it.
    report = logged.verify()
    (rep,) = report.streams
    assert (rep.error_type, rep.bad_seq, rep.unsigned_tail, rep.unattributed) == ("UnattributedOperation", 9, 1, 1)
    pem.write_bytes(held)  # the key is back: it still signs only what it can vouch for
    with logged.open() as ix:
        with pytest.raises(UnattributedOperation):
            ix.log.checkpoint()
        ix.log.checkpoint(adopt="user:alice")  # the owner vouches for it, on the record
        assert [o.op for o in ix.log.read(STREAM, after=9)] == ["LOG_ADOPTED"]
    assert logged.verify().ok


def test_public_keyring_with_a_wrong_key_id_is_refused(logged: LoggedHome) -> None:
    path = logged.project / ".intently" / "keys" / "public.json"
    ring = json.loads(path.read_text())
    (name,) = (k for k in ring if k.startswith("key:"))
    ring[name]["key_id"] = "0" * 16
    path.write_text(json.dumps(ring))
    with pytest.raises(InvalidInput, match=name):
        logged.open()


def test_public_keyring_with_an_unknown_algorithm_is_refused(logged: LoggedHome) -> None:
    path = logged.project / ".intently" / "keys" / "public.json"
    ring = json.loads(path.read_text())
    (name,) = (k for k in ring if k.startswith("key:"))
    ring[name]["algorithm"] = "hmac-sha256"
    path.write_text(json.dumps(ring))
    with pytest.raises(InvalidInput, match="unsupported algorithm"):
        logged.open()


def test_a_key_dropped_from_the_public_keyring_makes_its_checkpoints_unknown(logged: LoggedHome) -> None:
    path = logged.project / ".intently" / "keys" / "public.json"
    with logged.open() as ix:
        ix.log.rotate_key(ix.home.keys_dir, namespace=ix.namespace, actor=str(ix.actor))
    ring = json.loads(path.read_text())
    ring = {k: v for k, v in ring.items() if not (k.startswith("key:") and v["retired"] is not None)}
    path.write_text(json.dumps(ring))
    assert only_failure(logged.verify()) == ("UnknownKey", 1)


def test_keyring_verify_errors_are_specific() -> None:
    key = Ed25519PrivateKey.generate()
    ring = KeyRing([])
    kid = ring.generate("2026-01-01T00:00:00.000000Z")
    _, sig = ring.sign(b"body", "2026-01-01T00:00:00.000000Z")
    ring.verify(kid, b"body", sig)
    with pytest.raises(BadSignature) as bad:
        ring.verify(kid, b"bodY", sig, stream="s", seq=3)
    assert (bad.value.stream, bad.value.seq) == ("s", 3)
    with pytest.raises(UnknownKey):
        ring.verify(key_id_of(key.public_key()), b"body", key.sign(b"body"))


def test_init_keeps_the_private_key_private(ix: Intently) -> None:
    private_dir = ix.home.keys_dir / "private"
    assert private_dir.stat().st_mode & 0o777 == 0o700
    assert (private_dir / "log-ed25519.pem").stat().st_mode & 0o777 == 0o600


def test_a_key_line_kept_twice_by_a_union_merge_reads_as_one_entry_covering_both(logged: LoggedHome) -> None:
    path = logged.project / ".intently" / "keys" / "public.json"
    lines = path.read_text().splitlines()
    (index,) = (i for i, line in enumerate(lines) if line.startswith('"key:'))
    first = json.loads("{" + lines[index].rstrip(",") + "}")
    (name,) = first
    earlier = {
        **first[name],
        "first_signed": "2026-01-01T00:00:00.000000Z",
        "last_signed": "2026-01-02T00:00:00.000000Z",
    }
    later = {**first[name], "first_signed": "2026-01-01T00:00:00.000000Z", "last_signed": "2026-02-01T00:00:00.000000Z"}
    lines[index : index + 1] = [f"{json.dumps(name)}: {json.dumps(v)}," for v in (later, earlier)]
    path.write_text("\n".join(lines) + "\n")
    (entry,) = KeyRing.load_public(path).entries.values()
    assert (entry.first_signed, entry.last_signed) == ("2026-01-01T00:00:00.000000Z", "2026-02-01T00:00:00.000000Z")


@pytest.mark.parametrize("damage", ["garbage", "directory"])
def test_a_damaged_signing_key_does_not_lock_the_home(
    project: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    """Reading and verifying need only public keys; a write goes on unsigned and says which file
    is damaged and what to do, instead of every command dying on a PEM parse error."""
    with Intently.init(project, actor="user:alice", name="proj") as ix:
        ix.goals.add("Before the damage", type="GOAL")
    key = project / ".intently" / "keys" / "private" / "log-ed25519.pem"
    key.unlink()
    if damage == "garbage":
        key.write_text("garbage\n", encoding="utf-8")
    else:
        key.mkdir()
    with Intently.open(project, actor="user:alice") as ix:
        assert [i.value for i in ix.goals.list_intents()] == ["Before the damage"]
        assert ix.log.verify().ok
        ix.goals.add("After the damage", type="GOAL")
    warning = capsys.readouterr().err
    assert "not signed" in warning and str(key) in warning and "intently init" in warning


def _sign_with(key: Ed25519PrivateKey, cp_fields: tuple[str, str, int, bytes, str]) -> str:
    return base64.b64encode(key.sign(Checkpoint.body(*cp_fields))).decode()


def test_a_leaked_retired_key_cannot_sign_a_backdated_checkpoint_over_newer_operations(logged: LoggedHome) -> None:
    """The attack a rotation exists to stop: the old key leaked, so the owner rotated. The
    attacker, with the old key and the database file, adds an operation behind the log's back
    and signs it with the old key, dating the checkpoint before the retirement. Without a bound
    on what the retired key had signed, the forged operation verified as signed history."""
    old_key = private_key(logged.project)
    with logged.open() as ix:
        logged.clock.advance("1h")
        ix.log.rotate_key(ix.home.keys_dir, namespace=ix.namespace, actor=str(ix.actor))
        size = ix.log.size(STREAM)
        origin = ix.log.origin
    backdated = "2026-03-02T09:00:30.000000Z"  # inside the old key's life, before its retirement
    with logged.raw() as db:
        db.execute(
            "INSERT INTO log_ops (stream, seq, id, time, actor, op, target, payload, policy_version, leaf) "
            "VALUES (?, ?, 'forged-op', ?, 'user:alice', 'ACCESS_GRANTED', 'user:mallory', "
            '\'{"actor":"user:mallory","permission":"admin"}\', \'intently@access\', \'\')',
            (STREAM, size + 1, backdated),
        )
        rehash(db)
        (frontier,) = db.execute("SELECT frontier FROM log_streams WHERE stream = ?", (STREAM,)).fetchone()
        root = Frontier.from_hex(size + 1, json.loads(frontier)).root()
        db.execute(
            "INSERT INTO log_checkpoints (stream, size, root, time, origin, key_id, signature) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                STREAM,
                size + 1,
                root.hex(),
                backdated,
                origin,
                key_id_of(old_key.public_key()),
                _sign_with(old_key, (origin, STREAM, size + 1, root, backdated)),
            ),
        )
    report = logged.verify()
    error_type, seq = only_failure(report)
    assert (error_type, seq) == ("BadSignature", size + 1)
    assert "retired" in (report.streams[0].error or "")


def test_a_retired_key_cannot_resign_a_newer_checkpoint_backdated(logged: LoggedHome) -> None:
    """The new key's checkpoint replaced by the old key's signature over the same tree head,
    dated before the retirement: the time alone looked valid."""
    old_key = private_key(logged.project)
    with logged.open() as ix:
        logged.clock.advance("1h")
        ix.log.rotate_key(ix.home.keys_dir, namespace=ix.namespace, actor=str(ix.actor))
        logged.clock.advance("1h")
        ix.access.grant(Actor.parse("judy"), Permission.READ)  # size 10, signed by the new key
    backdated = "2026-03-02T09:00:30.000000Z"
    with logged.raw() as db:
        origin, root = db.execute(
            "SELECT origin, root FROM log_checkpoints WHERE stream = ? AND size = 10", (STREAM,)
        ).fetchone()
        change_one(
            db,
            "UPDATE log_checkpoints SET key_id = ?, signature = ?, time = ? WHERE stream = ? AND size = 10",
            (
                key_id_of(old_key.public_key()),
                _sign_with(old_key, (origin, STREAM, 10, bytes.fromhex(root), backdated)),
                backdated,
                STREAM,
            ),
        )
    assert only_failure(logged.verify()) == ("BadSignature", 10)


def test_a_retired_keys_bound_that_does_not_read_is_refused_not_skipped(logged: LoggedHome) -> None:
    """A damaged ``signed_sizes`` must not quietly turn the bound off."""
    path = logged.project / ".intently" / "keys" / "public.json"
    ring = json.loads(path.read_text())
    (name,) = (k for k in ring if k.startswith("key:"))
    ring[name]["signed_sizes"] = {STREAM: "many"}
    path.write_text(json.dumps(ring))
    with pytest.raises(InvalidInput, match="signed_sizes must map each stream"):
        logged.open()


def test_a_retired_keys_line_kept_twice_by_a_union_merge_keeps_the_larger_bound(tmp_path: Path) -> None:
    ring = KeyRing([])
    kid = ring.generate("2026-03-02T09:00:00Z")
    entry = ring.entries[kid].to_json()
    older = {**entry, "retired": "2026-03-02T10:00:00Z", "signed_sizes": {"proj": 4, "ops": 2}}
    newer = {**entry, "retired": "2026-03-02T10:00:00Z", "signed_sizes": {"proj": 8}}
    path = tmp_path / "public.json"
    path.write_text(
        "{\n" + f'"key:{kid}": {json.dumps(older)},\n"key:{kid}": {json.dumps(newer)},\n' + '"format": 2\n}\n'
    )
    assert KeyRing.load_public(path).entries[kid].signed_sizes == {"proj": 8, "ops": 2}


def test_the_signing_key_read_without_the_key_format_module_is_the_same_key(project: Path) -> None:
    """The hook reads the signing key on every tool call, so the PKCS #8 Ed25519 key intently
    writes is read from its fixed layout rather than through ``serialization`` (whose import
    cost the hook more than signing). It must be the very key, and any other file must still
    be refused as before: another algorithm, or an Ed25519 key damaged inside its PEM."""
    from cryptography.hazmat.primitives.asymmetric import ec

    from intently.log._keys import load_private_pem

    with Intently.init(project, actor="user:alice", name="proj") as ix:
        ix.goals.add("Signed", type="GOAL")
    pem_path = project / ".intently" / "keys" / "private" / "log-ed25519.pem"
    pem = pem_path.read_bytes()
    mine = load_private_pem(pem)
    assert isinstance(mine, Ed25519PrivateKey)
    assert mine.private_bytes_raw() == private_key(project).private_bytes_raw()
    assert load_private_pem(pem.replace(b"\n", b"\r\n")).private_bytes_raw() == mine.private_bytes_raw()  # type: ignore[attr-defined]
    other = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    assert isinstance(load_private_pem(other), ec.EllipticCurvePrivateKey)  # read by serialization, as before
    lines = pem.splitlines()
    short = b"\n".join([lines[0], base64.b64encode(base64.b64decode(b"".join(lines[1:-1]))[:-1]), lines[-1]])
    with pytest.raises(ValueError):
        load_private_pem(short)
    for name, text in (("EC", other), ("short", short)):
        pem_path.write_bytes(text)
        ring = KeyRing.load(project / ".intently" / "keys")
        assert not ring.can_sign and ring.private_problem, name


def _rotated(logged: LoggedHome) -> tuple[Ed25519PrivateKey, str, KeyRing]:
    """The template's key retired after signing 'proj' up to size 8 (and the new key signing the
    rotation at 9): (the retired private key, as a thief holds it; its id; the public keyring)."""
    old_key = private_key(logged.project)
    with logged.open() as ix:
        logged.clock.advance("1h")
        retired, _new = ix.log.rotate_key(ix.home.keys_dir, namespace=ix.namespace, actor=str(ix.actor))
    assert retired is not None
    return old_key, retired, KeyRing.load_public(logged.project / ".intently" / "keys" / "public.json")


def test_rotation_records_the_root_of_the_last_tree_the_retired_key_signed(logged: LoggedHome) -> None:
    _old_key, retired, ring = _rotated(logged)
    with logged.open() as ix:
        cp8 = ix.log.checkpoint_at(STREAM, 8)
        (rotation,) = ix.log.read(STREAM, op="KEY_ROTATED")
    assert cp8 is not None and cp8.key_id == retired
    entry = ring.entries[retired]
    assert entry.signed_sizes == {STREAM: 8} and entry.signed_roots == {STREAM: cp8.root.hex()}
    # The log itself says so too, in the rotation the new key signed.
    assert rotation.payload["signed"] == {STREAM: {"size": 8, "root": cp8.root.hex()}}
    assert logged.verify().ok


def test_a_leaked_retired_key_cannot_sign_another_tree_of_a_size_it_had_signed(logged: LoggedHome) -> None:
    """The size bound alone let a thief of the retired key sign any tree up to the size the key
    had reached, dated before its retirement: a checkpoint (or a proof anchored on one) of a
    history it never signed was reported ok with the public keyring alone."""
    old_key, retired, ring = _rotated(logged)
    with logged.open() as ix:
        cp4, cp8 = ix.log.checkpoint_at(STREAM, 4), ix.log.checkpoint_at(STREAM, 8)
        proof = ix.log.inclusion_proof(STREAM, 3, 8)
        consistency = ix.log.consistency_proof(STREAM, 4, 8)
    assert cp4 is not None and cp8 is not None
    forged_op = {**proof["operation"], "target": "user:mallory"}
    leaves = [bytes([n]) * 32 for n in range(8)]
    leaves[2] = leaf_hash(canonical_json(forged_op))
    for size in (8, 4):  # the very size it last signed, and one below it
        root = root_hash(leaves[:size])
        forged = Checkpoint(cp8.origin, STREAM, size, root, cp4.time, retired, b"")
        forged = Checkpoint(**{**forged.__dict__, "signature": old_key.sign(forged.signed_body())})
        ring.verify(retired, forged.signed_body(), forged.signature)  # a valid signature...
        made_up = {
            **proof,
            "operation": forged_op,
            "tree_size": size,
            "leaf_hash": leaves[2].hex(),
            "root": root.hex(),
            "proof": [h.hex() for h in inclusion_proof(leaves[:size], 2)],
            "checkpoint": forged.to_json(),
        }
        verify_inclusion_proof(made_up)  # the arithmetic holds
        with pytest.raises(BadSignature, match="retired") as caught:  # ...of a tree it never signed
            verify_anchored_proof(made_up, ring)
        assert (caught.value.stream, caught.value.seq) == (STREAM, size)
        with pytest.raises(BadSignature, match="not this tree" if size == 8 else "nothing shows this tree"):
            ring.check_retirement(retired, STREAM, size, forged.time, forged.root)
    # What the key really signed still checks: its last tree with the keyring alone, an older one
    # with a consistency proof up to it (or against the log: `log verify` above).
    ring.check_retirement(retired, STREAM, 8, cp8.time, cp8.root)
    assert verify_anchored_proof({**proof, "checkpoint": cp8.to_json()}, ring)["ok"]
    both = {**consistency, "old_checkpoint": cp4.to_json(), "new_checkpoint": cp8.to_json()}
    assert [c["size"] for c in verify_anchored_proof(both, ring)["checkpoints"]] == [4, 8]
    with pytest.raises(BadSignature, match="consistency proof to size 8"):
        ring.check_retirement(retired, STREAM, 4, cp4.time, cp4.root)


def _resign_ops_with(db: Any, key: Ed25519PrivateKey, upto: int) -> None:
    for seq, leaf in db.execute("SELECT seq, leaf FROM log_ops WHERE stream = ? AND seq <= ?", (STREAM, upto)):
        signature = base64.b64encode(key.sign(b"intently operation v1\n" + bytes.fromhex(leaf))).decode()
        db.execute(
            "UPDATE log_ops SET key_id = ?, signature = ? WHERE stream = ? AND seq = ?",
            (key_id_of(key.public_key()), signature, STREAM, seq),
        )


@pytest.mark.parametrize("keep_checkpoint", [True, False])
def test_log_verify_refuses_history_rewritten_and_resigned_with_the_leaked_retired_key(
    logged: LoggedHome, keep_checkpoint: bool
) -> None:
    """A thief holding the retired key and the database (and the working copy of the witness
    file) rewrites the history the key had signed, cuts everything after it and signs the result
    with the old key, dated before its retirement: `log verify` reported the log ok."""
    old_key, retired, _ring = _rotated(logged)
    with logged.raw() as db:
        (origin, backdated) = db.execute(
            "SELECT origin, time FROM log_checkpoints WHERE stream = ? AND size = 8", (STREAM,)
        ).fetchone()
        db.execute("DELETE FROM log_ops WHERE stream = ? AND seq > 8", (STREAM,))
        db.execute("DELETE FROM log_checkpoints WHERE stream = ?", (STREAM,))
        change_one(db, "UPDATE log_ops SET target = 'user:mallory' WHERE stream = ? AND seq = 3", (STREAM,))
        rehash(db)
        _resign_ops_with(db, old_key, 8)
        if keep_checkpoint:
            (frontier,) = db.execute("SELECT frontier FROM log_streams WHERE stream = ?", (STREAM,)).fetchone()
            root = Frontier.from_hex(8, json.loads(frontier)).root()
            db.execute(
                "INSERT INTO log_checkpoints (stream, size, root, time, origin, key_id, signature, frontier) "
                "VALUES (?, 8, ?, ?, ?, ?, ?, ?)",
                (
                    STREAM,
                    root.hex(),
                    backdated,
                    origin,
                    retired,
                    _sign_with(old_key, (origin, STREAM, 8, root, backdated)),
                    frontier,
                ),
            )
    logged.witness.unlink()  # the working copy rolled back with it (only the pushed copy would tell)
    report = logged.verify()
    if keep_checkpoint:
        assert only_failure(report) == ("RootMismatch", 8)
        assert f"key {retired} last signed" in (report.streams[0].error or "")
    else:  # no checkpoint at all: the operations' own signatures by the retired key vouch for nothing
        assert only_failure(report) == ("UnattributedOperation", 1)
