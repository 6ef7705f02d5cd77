"""Atomic replacement keeps the old file whole on failure and keeps its permissions."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from intently.core.files import atomic_write


def test_text_and_bytes_replace_the_file_and_leave_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.json"
    atomic_write(target, "é\n")
    atomic_write(target, b"\x00\x01", durable=False)
    assert target.read_bytes() == b"\x00\x01"
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]


def test_an_existing_files_permissions_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("old")
    target.chmod(0o600)
    atomic_write(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and target.read_text() == "new"


def test_a_failed_write_keeps_the_old_content_and_removes_the_temporary(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("old")
    with pytest.raises(TypeError):
        atomic_write(target, object())  # type: ignore[arg-type]
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f"]


def test_mode_sets_the_permissions_of_a_new_and_of_an_existing_file(tmp_path: Path) -> None:
    """A private file (the record of verified weights, trusted only while no one else can write
    it; the per-user vector cache) is 0o600 after every write, whatever it was before."""
    fresh = tmp_path / "fresh"
    atomic_write(fresh, "x", mode=0o600)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
    shared = tmp_path / "shared"
    shared.write_text("old")
    shared.chmod(0o666)
    atomic_write(shared, "new", durable=False, mode=0o600)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o600 and shared.read_text() == "new"


def test_the_status_returned_is_the_file_as_written(tmp_path: Path) -> None:
    """A caller that remembers what it wrote (the vector index: size, mtime, inode) gets it from
    the open file, so it never remembers another process's write made after the rename."""
    target = tmp_path / "f.bin"
    written = atomic_write(target, [b"ab", b"cd"], durable=False)
    now = target.stat()
    assert (written.st_size, written.st_ino, written.st_mtime_ns) == (4, now.st_ino, now.st_mtime_ns)
