"""Homes: created by init with the tracked/ignored split, found like git finds .git."""

from __future__ import annotations

import dataclasses
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


def test_a_file_named_as_the_home_is_refused_naming_the_path(tmp_path: Path) -> None:
    """``Intently.open("/etc/passwd")`` raised NotADirectoryError; ``init`` did the same."""
    file = tmp_path / "notes.txt"
    file.write_text("not a home")
    for path in (file, file / "below"):
        with pytest.raises(InvalidInput) as info:
            Intently.open(path)
        assert info.value.where == str(path) and "not an intently home folder" in str(info.value)
    with pytest.raises(InvalidInput) as info:
        Intently.init(file)
    assert info.value.where == str(file / ".intently")


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if line.startswith(needle))


def test_config_values_of_the_wrong_type_are_refused_naming_the_line_and_what_is_allowed(ix: Intently) -> None:
    """The config is checked without pydantic (every hook process opens it), with pydantic's
    words as before: the wrong type or a value out of range names the line, the field and what
    would do; booleans and numbers written as text are read as pydantic read them."""
    path = ix.home.config_path
    text = path.read_text()
    cases = [
        (
            "budget = 4000",
            'budget = "lots"',
            "context.budget: Input should be a valid integer, unable to parse string as an integer",
        ),
        ("budget = 4000", "budget = 199", "context.budget: Input should be greater than or equal to 200"),
        (
            "budget = 4000",
            "budget = 250.5",
            "context.budget: Input should be a valid integer, got a number with a fractional part",
        ),
        ("budget = 4000", "budget = [1]", "context.budget: Input should be a valid integer"),
        (
            'model = "minilm"',
            'model = "gpt"',
            "embed.model: Input should be 'minilm', 'wordllama', 'hashing' or 'none'",
        ),
        ('inject = "on"', "inject = true", "requirements.inject: Input should be 'on' or 'off'"),
        (
            "group_commit = false",
            'group_commit = "maybe"',
            "log.group_commit: Input should be a valid boolean, unable to interpret input",
        ),
        ("group_commit = false", "group_commit = {}", "log.group_commit: Input should be a valid boolean"),
        ('api_key_env = "INTENTLY_LLM_KEY"', "api_key_env = 5", "llm.api_key_env: Input should be a valid string"),
    ]
    for old, new, problem in cases:
        assert old in text, old
        path.write_text(text.replace(old, new, 1))
        line = _line(path.read_text(), new)
        with pytest.raises(InvalidInput) as info:
            ix.home.load_config()
        assert str(info.value) == f"{path}:{line}: {problem}"
    path.write_text(
        text.replace("budget = 4000", 'budget = "4200"').replace("group_commit = false", 'group_commit = "yes"')
    )
    config = ix.home.load_config()
    assert config.context.budget == 4200 and config.log.group_commit is True


def test_config_errors_name_the_file_line_and_field(ix: Intently) -> None:
    path = ix.home.config_path
    text = path.read_text()
    path.write_text(text.replace("budget = 4000", "budget = 10"))
    line = _line(path.read_text(), "budget = 10")
    with pytest.raises(InvalidInput, match=rf"intently.toml:{line}: context.budget"):
        ix.home.load_config()
    path.write_text(text.replace("[context]", "[context]\nbudgte = 1"))
    line = _line(path.read_text(), "budgte")
    with pytest.raises(InvalidInput, match=rf"intently.toml:{line}: context.budgte"):
        ix.home.load_config()
    path.write_text("[home\n")
    with pytest.raises(InvalidInput, match=r"intently\.toml"):
        ix.home.load_config()


def test_a_home_name_that_is_no_namespace_is_refused_at_its_line(ix: Intently) -> None:
    path = ix.home.config_path
    text = path.read_text()
    name_line = next(line for line in text.splitlines() if line.startswith("name = "))
    path.write_text(text.replace(name_line, 'name = "Bad Name!"'))
    line = _line(path.read_text(), 'name = "Bad Name!"')
    with pytest.raises(InvalidInput, match=rf"intently.toml:{line}: home.name: .*must be 1-64"):
        ix.home.load_config()


@pytest.mark.parametrize(
    ("table", "typo"),
    [("hooks", "shell_alowlist = []"), ("extract", "extractr = 'llm'")],
)
def test_a_typo_in_an_engine_table_is_refused_by_every_command(ix: Intently, table: str, typo: str) -> None:
    """[hooks] and [extract] are read by the hook and by observe only; a misspelt key there is
    still refused as soon as the home opens, so `intently whoami` says so, not just the hook."""
    path = ix.home.config_path
    path.write_text(path.read_text().replace(f"[{table}]\n", f"[{table}]\n{typo}\n", 1))
    line = _line(path.read_text(), typo)
    key = typo.split(" ")[0]
    with pytest.raises(InvalidInput, match=rf"intently.toml:{line}: {table}.{key}: unknown key"):
        ix.home.load_config()


def test_the_engine_table_keys_are_the_engines_own() -> None:
    from intently.core.config import ENGINE_TABLE_KEYS
    from intently.extract import ExtractionSettings
    from intently.hooks._settings import HookSettings

    assert set(ENGINE_TABLE_KEYS["extract"]) == set(ExtractionSettings.model_fields)
    assert set(ENGINE_TABLE_KEYS["hooks"]) == {f.name for f in dataclasses.fields(HookSettings)}


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
