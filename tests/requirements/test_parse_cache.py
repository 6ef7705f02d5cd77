"""Loading a large home does not re-parse rule files that did not change, across processes."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import ruamel.yaml
from ruamel.yaml import YAML

from intently import Intently
from intently.requirements import _files, _load
from intently.requirements._parsecache import CACHE_FILE, SETTLED_NS

from .conftest import git, run_main, write_rules


@pytest.fixture
def rix(backend_rix: Intently) -> Intently:
    return backend_rix


class _CountingYAML(YAML):
    """Round-trip YAML that counts the front matters it parses (the cost being avoided)."""

    loads = 0

    def load(self, stream):  # type: ignore[no-untyped-def]
        _CountingYAML.loads += 1
        return super().load(stream)


def _fresh_process_load(home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict[str, str]]:
    """``req list --json`` as a new process would run it: nothing parsed in memory before."""
    _files._parse.cache_clear()
    monkeypatch.setattr(ruamel.yaml, "YAML", _CountingYAML)  # _files imports it where it parses
    _CountingYAML.loads = 0
    code, out, err = run_main(home, "req", "list", "--json")
    assert code == 0, err
    return _CountingYAML.loads, {r["id"]: r["statement"] for r in json.loads(out)}


def test_a_new_process_parses_only_the_files_that_changed(rix: Intently, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = [rix.requirements.add(f"Always check widget {n} before a release.").id for n in range(5)]
    home = rix.home.path
    parsed, rules = _fresh_process_load(home, monkeypatch)
    assert parsed == 0 and rules == {i: f"Always check widget {n} before a release." for n, i in enumerate(ids)}

    # An edit in an editor, of the same length and mtime, is new content: parsed, and seen.
    path = rix.home.requirements_dir / f"{ids[2]}.md"
    stat = path.stat()
    path.write_text(path.read_text().replace("widget 2", "gadget 2"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    parsed, rules = _fresh_process_load(home, monkeypatch)
    assert parsed == 1 and rules[ids[2]] == "Always check gadget 2 before a release."

    # A broken file is never served from the cache: its error, with its line, every time.
    path.write_text(path.read_text().replace("status: active", "status: [active"))
    for _ in range(2):
        _files._parse.cache_clear()
        code, _, err = run_main(home, "req", "validate")
        assert code == 2 and f"{ids[2]}.md:" in err

    # A damaged or foreign cache file is ignored and rebuilt, never an error.
    cache = rix.home.index_dir / CACHE_FILE
    cache.write_text("{not json")
    path.write_text(path.read_text().replace("status: [active", "status: active"))
    parsed, rules = _fresh_process_load(home, monkeypatch)
    assert parsed == 5 and len(rules) == 5
    assert _fresh_process_load(home, monkeypatch)[0] == 0


def test_the_cache_is_runtime_state_that_git_ignores(rix: Intently, repo: Path) -> None:
    rix.requirements.add("Always check the widget before a release.")
    assert (rix.home.index_dir / CACHE_FILE).is_file()
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(rix.home.index_dir / CACHE_FILE)], cwd=repo, check=False
    ).returncode
    assert ignored == 0


def _reads(home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], dict[str, str]]:
    """``req list --json`` as a new process runs it: which rule files it read, and the rules."""
    read: list[str] = []
    real = _load._read

    def counting(path: Path, name: str, errors: list[_files.FileError]) -> bytes | None:
        if name.startswith("requirements/"):
            read.append(path.stem)
        return real(path, name, errors)

    _files._parse.cache_clear()
    monkeypatch.setattr(_load, "_read", counting)
    code, out, err = run_main(home, "req", "list", "--json")
    assert code == 0, err
    return read, {r["id"]: r["statement"] for r in json.loads(out)}


def _settle() -> None:
    """Wait until what was just written is old enough for its stat to be trusted."""
    time.sleep(SETTLED_NS / 1e9 + 0.2)


def test_unchanged_files_are_not_read_again_and_changed_ones_always_are(
    rix: Intently, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command used to read and hash every rule file (0.7 s at 2,000 rules) to find the
    few that changed. A file whose stat (size, mtime, ctime, inode) is as the last load saw it
    is not read now; one edited in place (same size, old mtime put back) or switched by a
    ``git checkout`` is read and parsed again at once."""
    ids = [rix.requirements.add(f"Always check widget {n} before a release.").id for n in range(4)]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "rules")
    home = rix.home.path
    _settle()
    _reads(home, monkeypatch)  # notes the stats of the settled files
    read, rules = _reads(home, monkeypatch)
    assert read == [] and rules == {i: f"Always check widget {n} before a release." for n, i in enumerate(ids)}

    # Edited in an editor, in place: same size, the old mtime put back.
    path = rix.home.requirements_dir / f"{ids[1]}.md"
    before = path.stat()
    with path.open("r+") as fh:
        text = fh.read().replace("widget 1", "gadget 1")
        fh.seek(0)
        fh.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    read, rules = _reads(home, monkeypatch)
    assert read == [ids[1]] and rules[ids[1]] == "Always check gadget 1 before a release."

    # Switched by git: another branch with a same-size wording, checked out and back.
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gadget")
    git(repo, "checkout", "-q", "-b", "other")
    other = rix.home.requirements_dir / f"{ids[2]}.md"
    other.write_text(other.read_text().replace("widget 2", "doodad 2"))
    git(repo, "commit", "-qam", "doodad")
    git(repo, "checkout", "-q", "main")
    read, rules = _reads(home, monkeypatch)
    assert ids[2] in read and rules[ids[2]] == "Always check widget 2 before a release."
    _settle()
    _reads(home, monkeypatch)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "state", "--allow-empty")
    git(repo, "checkout", "-q", "other")
    read, rules = _reads(home, monkeypatch)
    assert ids[2] in read and rules[ids[2]] == "Always check doodad 2 before a release."

    # Once settled, nothing is read again, and what is served is the latest content.
    _settle()
    _reads(home, monkeypatch)
    read, rules = _reads(home, monkeypatch)
    assert read == [] and rules[ids[1]] == "Always check gadget 1 before a release."
    assert rules[ids[2]] == "Always check doodad 2 before a release."


def test_a_load_of_many_cached_rules_stats_them_in_one_listing(rix: Intently, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 2,000 rules a load spent about 50 ms on a glob, a sort of paths and an ``lstat``
    per file. The stats now come with the directory listing: a load of settled, cached rules
    asks the file system nothing more per file, and serves every rule as before."""
    ids = write_rules(rix.home.requirements_dir, 300)
    _settle()
    _load.load_home(rix.home, warn=False)  # parses each file once; keeps it, and its stat, in the cache
    asked: list[str] = []
    real = _load._stat

    def counting(path: Path, name: str, errors: list[_files.FileError]) -> os.stat_result | None:
        asked.append(name)
        return real(path, name, errors)

    monkeypatch.setattr(_load, "_stat", counting)
    loaded = _load.load_home(rix.home, warn=False)
    assert [r.id for r in loaded.requirements] == ids
    assert loaded.requirements[7].statement == "Always check widget 7 before a release."
    assert asked == []
