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
