"""Loading a large home does not re-parse rule files that did not change, across processes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from intently import Intently
from intently.requirements import _files
from intently.requirements._parsecache import CACHE_FILE

from .conftest import run_main


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
    monkeypatch.setattr(_files, "YAML", _CountingYAML)
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
