"""Homes: created by init with the tracked/ignored split, found like git finds .git."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from intently import Intently, InvalidInput, NotFound
from intently.core.config import find_home


def test_init_lays_out_the_home(ix: Intently) -> None:
    home = ix.home.path
    assert (home / "intently.toml").is_file()
    assert (home / "requirements").is_dir()
    assert (home / "keys" / "public.json").is_file()
    assert (home / "keys" / "private" / "log-ed25519.pem").is_file()
    assert (home / "checkpoints.json").is_file()
    assert ix.log.read_witness()["proj"].size == 1
    config = ix.home.load_config()
    assert (config.home.name, config.home.owner, config.home.origin) == ("proj", "user:alice", "intently/proj")


def test_git_tracks_config_keys_and_witness_but_not_state(ix: Intently) -> None:
    root = ix.home.project_root
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", ".intently"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert ".intently/intently.toml" in listed
    assert ".intently/.gitignore" in listed
    assert ".intently/checkpoints.json" in listed
    assert ".intently/keys/public.json" in listed
    assert ".intently/requirements/.gitkeep" in listed
    assert not [p for p in listed if "/state/" in p or "/private/" in p or p.endswith((".db", ".pem"))]


def test_init_refuses_to_overwrite_a_home(ix: Intently) -> None:
    with pytest.raises(InvalidInput, match="already exists"):
        Intently.init(ix.home.project_root, actor="user:alice")


def test_home_is_found_upward_from_a_subfolder(ix: Intently) -> None:
    deep = ix.home.project_root / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_home(deep).path == ix.home.path


def test_explicit_home_and_environment_win(ix: Intently, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert find_home(elsewhere, ix.home.project_root).path == ix.home.path  # project folder
    assert find_home(elsewhere, ix.home.path).path == ix.home.path  # the .intently folder itself
    monkeypatch.setenv("INTENTLY_HOME", str(ix.home.path))
    assert find_home(elsewhere).path == ix.home.path


def test_no_home_is_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INTENTLY_HOME", raising=False)
    with pytest.raises(NotFound, match="intently init"):
        find_home(tmp_path)


def test_config_errors_name_the_file_and_field(ix: Intently) -> None:
    path = ix.home.config_path
    text = path.read_text()
    path.write_text(text.replace("budget = 4000", "budget = 10"))
    with pytest.raises(InvalidInput, match=r"intently.toml: context.budget"):
        ix.home.load_config()
    path.write_text(text.replace("[context]", "[context]\nbudgte = 1"))
    with pytest.raises(InvalidInput, match=r"context.budgte"):
        ix.home.load_config()
    path.write_text("[home\n")
    with pytest.raises(InvalidInput, match=r"intently\.toml"):
        ix.home.load_config()


def test_an_unknown_config_table_is_an_error_naming_it(ix: Intently) -> None:
    config = ix.home.config_path
    config.write_text(config.read_text() + "\n[trigers]\nmax_shown = 5\n")
    with pytest.raises(InvalidInput, match=r"unknown table \[trigers\]") as caught:
        ix.home.load_config()
    assert "intently.toml" in str(caught.value)


def test_the_written_config_has_every_documented_key_with_its_default(tmp_path: Path) -> None:
    """docs/configuration.md says `init` writes every key with its default; a key only in the
    docs is one a user cannot find in their file, one only in the file is undocumented."""
    with Intently.init(tmp_path, actor="user:alice", name="proj") as fresh:  # SQLite: the default store
        written = tomllib.loads(fresh.home.config_path.read_text(encoding="utf-8"))
    in_file = {(table, key): value for table, keys in written.items() for key, value in keys.items()}
    docs = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    documented: dict[tuple[str, str], str] = {}
    table = ""
    for row in re.finditer(r"^\| (?:`\[(\w+)\]` )?\| `(\w+)` \| (.+?) \|", docs, re.M):
        table = row.group(1) or table
        documented[(table, row.group(2))] = row.group(3)
    assert set(documented) == set(in_file)
    home_defaults = {("home", "name"), ("home", "owner"), ("home", "origin")}  # depend on the project
    for place, default in documented.items():
        if place not in home_defaults:
            literal = default.split("`")[1]
            assert json.loads(literal) == in_file[place], place
