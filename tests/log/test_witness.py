"""The shared witness file: one entry per database, enforced for this database, reported for
the others, merge-friendly in git, and read from the format-1 files homes wrote before."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from intently import Actor, Permission
from intently.core.errors import InvalidInput
from intently.log import LEGACY_DATABASE, Checkpoint, KeyRing, Witness

from .conftest import STREAM, LoggedHome, flip_bit, only_failure


def _cp(stream: str, size: int) -> Checkpoint:
    return Checkpoint("intently/proj", stream, size, bytes([size]) * 32, "2026-03-02T09:00:00.000000Z", "k" * 16, b"s")


def _file(entries: dict[str, dict[str, int]]) -> str:
    return Witness({db: {s: _cp(s, n) for s, n in streams.items()} for db, streams in entries.items()}).render()


def test_render_is_plain_json_that_parses_back() -> None:
    text = _file({"b": {"proj": 3, "other": 1}, "a": {"proj": 9}})
    data = json.loads(text)
    assert data["format"] == 2 and set(data) == {"db:a", "db:b", "format"}
    again = Witness.parse(text, "w")
    assert {db: {s: cp.size for s, cp in e.items()} for db, e in again.databases.items()} == {
        "a": {"proj": 9},
        "b": {"other": 1, "proj": 3},
    }


@pytest.mark.parametrize("newcomer", ["0-sorts-first", "z-sorts-last"])
def test_two_databases_updating_the_file_at_once_merge_cleanly_line_by_line(tmp_path: Path, newcomer: str) -> None:
    """What `git merge` does with the file when one clone adds its entry while another
    extends its own: `git merge-file` is the same three-way line merge."""
    base, ours, theirs = tmp_path / "base", tmp_path / "ours", tmp_path / "theirs"
    base.write_text(_file({"m": {"proj": 3}}))
    ours.write_text(_file({"m": {"proj": 5}}))
    theirs.write_text(_file({"m": {"proj": 3}, newcomer: {"proj": 2}}))
    merged = subprocess.run(["git", "merge-file", "-p", ours, base, theirs], capture_output=True, text=True)
    assert merged.returncode == 0, merged.stdout
    result = Witness.parse(merged.stdout, "merged")
    assert {db: e["proj"].size for db, e in result.databases.items()} == {"m": 5, newcomer: 2}


def test_an_entry_must_name_its_own_database(tmp_path: Path) -> None:
    data = json.loads(_file({"a": {"proj": 1}}))
    data["db:a"]["database"] = "b"
    with pytest.raises(Exception, match="names database"):
        Witness.parse(json.dumps(data), "w")


def _own_key(data: dict[str, object]) -> str:
    (key,) = (k for k in data if k.startswith("db:"))
    return key


def test_format_1_witness_is_adopted_by_the_database_whose_key_signed_it(logged: LoggedHome) -> None:
    data = json.loads(logged.witness.read_text())
    own = data[_own_key(data)]["streams"]
    logged.witness.write_text(json.dumps({"streams": own}))  # as homes wrote it before databases had ids
    report = logged.verify()
    assert report.ok and report.streams[0].witnessed_size == 8 and report.other_databases == []
    shutil.copyfile(logged.backup_at_4, logged.db)  # still enforced: a rollback is caught
    assert only_failure(logged.verify()) == ("RolledBack", 5)


def test_format_1_witness_is_rewritten_with_the_database_id_on_the_next_checkpoint(logged: LoggedHome) -> None:
    data = json.loads(logged.witness.read_text())
    key = _own_key(data)
    logged.witness.write_text(json.dumps({"streams": data[key]["streams"]}))
    with logged.open() as ix:
        ix.access.grant(Actor.parse("ivan"), Permission.READ)
    after = Witness.parse(logged.witness.read_text(), "w")
    assert set(after.databases) == {key[3:]} and LEGACY_DATABASE not in after.databases
    assert after.databases[key[3:]][STREAM].size == 9


def _add_other_database(logged: LoggedHome, *, signature_bit: int | None) -> None:
    """Copy this database's entry under a second id, as a clone signed by the same keyring would."""
    data = json.loads(logged.witness.read_text())
    entry = json.loads(json.dumps(data[_own_key(data)]))
    entry["database"] = "0000-other-clone"
    if signature_bit is not None:
        cp = entry["streams"][STREAM]
        cp["signature"] = flip_bit(cp["signature"], index=signature_bit)
    data["db:0000-other-clone"] = entry
    logged.witness.write_text(json.dumps(data))


def test_another_databases_entry_is_reported_not_enforced(logged: LoggedHome) -> None:
    _add_other_database(logged, signature_bit=None)
    # the copied entry is signed by this machine's own key: evidence that this machine's
    # database was replaced, so it fails; move the key away to see a real clone's entry
    report = logged.verify()
    (other,) = report.other_databases
    assert (other.database, other.size, other.signature, other.error_type) == (
        "0000-other-clone",
        8,
        "ok",
        "RolledBack",
    )
    assert not report.ok and all(s.ok for s in report.streams)
    private = logged.project / ".intently" / "keys" / "private"
    shutil.rmtree(private)
    report = logged.verify()
    assert report.ok and report.other_databases[0].signature == "ok"


def test_a_forged_signature_on_another_databases_entry_fails(logged: LoggedHome) -> None:
    _add_other_database(logged, signature_bit=5)
    shutil.rmtree(logged.project / ".intently" / "keys" / "private")
    report = logged.verify()
    (other,) = report.other_databases
    assert (other.signature, other.error_type, report.ok) == ("bad", "BadSignature", False)


def test_an_entry_signed_by_a_key_not_in_the_keyring_is_reported_as_unknown(logged: LoggedHome) -> None:
    _add_other_database(logged, signature_bit=None)
    data = json.loads(logged.witness.read_text())
    data["db:0000-other-clone"]["streams"][STREAM]["key_id"] = "f" * 16
    logged.witness.write_text(json.dumps(data))
    report = logged.verify()
    assert report.ok and report.other_databases[0].signature == "unknown key"


def test_a_second_machines_key_is_added_and_rotation_retires_only_its_own(tmp_path: Path) -> None:
    first = KeyRing([])
    kid_a = first.generate("2026-01-01T00:00:00.000000Z")
    first.save(tmp_path)
    clone = KeyRing.load_public(tmp_path / "public.json")  # a clone: public keys only
    assert not clone.can_sign
    kid_b = clone.generate("2026-01-02T00:00:00.000000Z")
    kid_c = clone.generate("2026-01-03T00:00:00.000000Z")
    retired = {k: e.retired for k, e in clone.entries.items()}
    assert retired == {kid_a: None, kid_b: "2026-01-03T00:00:00.000000Z", kid_c: None}


def test_a_private_key_missing_from_the_tracked_ring_is_put_back_retired_on_rejoin(tmp_path: Path) -> None:
    """A merge that drops this machine's public key must not orphan its checkpoints."""
    ring = KeyRing([])
    old = ring.generate("2026-01-01T00:00:00.000000Z")
    ring.save(tmp_path)
    (tmp_path / "public.json").write_text('{"keys": []}\n')
    loaded = KeyRing.load(tmp_path)
    assert not loaded.can_sign  # holds a key the ring does not list: cannot sign verifiably
    new = loaded.generate("2026-01-02T00:00:00.000000Z")
    assert loaded.can_sign and loaded.current_key_id == new
    assert loaded.entries[old].retired == "2026-01-02T00:00:00.000000Z"


def _union(tmp_path: Path, base: str, ours: str, theirs: str) -> str:
    """What `git merge` does with the file under the home's `.gitattributes` (merge=union)."""
    paths = []
    for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    merged = subprocess.run(["git", "merge-file", "--union", "-p", *paths], capture_output=True, text=True)
    assert merged.returncode == 0
    return merged.stdout


def test_two_databases_joining_at_once_union_merge_into_valid_json(tmp_path: Path) -> None:
    text = _union(tmp_path, _file({"m": {"proj": 3}}), _file({"m": {"proj": 3}, "n1": {"proj": 1}}),
                  _file({"m": {"proj": 3}, "n2": {"proj": 2}}))  # fmt: skip
    json.loads(text)  # both inserted at the same place, both kept, still JSON
    assert {db: e["proj"].size for db, e in Witness.parse(text, "w").databases.items()} == {"m": 3, "n1": 1, "n2": 2}


def test_one_database_checkpointed_on_two_branches_keeps_the_later_checkpoint(tmp_path: Path) -> None:
    text = _union(tmp_path, _file({"m": {"proj": 3}}), _file({"m": {"proj": 7}}), _file({"m": {"proj": 5}}))
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)  # the union keeps both versions of the one streams line
    assert {db: e["proj"].size for db, e in Witness.parse(text, "w").databases.items()} == {"m": 7}


def test_damage_that_is_not_a_union_merge_is_still_an_error() -> None:
    text = _file({"m": {"proj": 3}}).replace('"database": "m"},', '"database": "other"},')
    with pytest.raises(InvalidInput, match=r"unreadable"):
        Witness.parse(text[:-3], "w")


def test_a_rollback_of_the_database_and_the_working_witness_is_caught_against_the_pushed_witness(
    logged: LoggedHome, tmp_path: Path
) -> None:
    """Whoever can restore the database from an old copy can also put the working copy of
    checkpoints.json back (or delete it): the home's own verify then passes. The copy already
    committed and pushed is what an outsider holds; verify had no way to be pointed at it."""
    git = ["git", "-C", str(logged.project), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", ".intently/checkpoints.json"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "witness at 8"], check=True)
    pushed = tmp_path / "pushed-witness.json"
    shown = subprocess.run([*git, "show", "HEAD:.intently/checkpoints.json"], check=True, capture_output=True)
    pushed.write_bytes(shown.stdout)

    for suffix in ("", "-wal", "-shm"):  # the attacker's rollback: the old database, no witness
        Path(f"{logged.db}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(logged.backup_at_4, logged.db)
    logged.witness.unlink()
    assert logged.verify().ok  # the home alone cannot tell

    with logged.open() as ix:
        report = ix.log.verify(witness_file=pushed)
        assert only_failure(report) == ("RolledBack", 5)
        with pytest.raises(InvalidInput, match="no such witness file"):
            ix.log.verify(witness_file=tmp_path / "missing.json")
