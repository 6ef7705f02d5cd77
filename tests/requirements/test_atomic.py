"""A scan killed at any point of its apply leaves the home entirely old or entirely new.

Each test runs the scan in a real subprocess that ``os._exit``s at one step of the
journaled apply (``INTENTLY_REQ_APPLY_CRASH``), then loads the home as the next user would
and checks the files, the log (``intently log verify``, no outside change, one scan op)
and git against the same scan run to completion on a copy of the repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from intently import Intently
from intently.requirements._apply import CRASH_ENV, STAGING

from .conftest import git, run_main

AGENTS = """# Agent instructions

- Never use conventional commit prefixes such as `feat:` in commit subjects.
- Run `just lint` before every commit.

## Testing

- Use testify assertions rather than hand-rolled if checks.
"""

SCAN = "import sys\nfrom intently import Intently\nwith Intently.open(sys.argv[1], actor='user:alice') as ix:\n"
SCAN += "    ix.requirements.scan()\n"


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def tracked(home: Path) -> dict[str, bytes]:
    """The files a scan writes, byte for byte."""
    files = [*sorted(home.glob("requirements/req-*.md")), home / "domains.yaml", home / "scan-state.yaml"]
    return {p.relative_to(home).as_posix(): p.read_bytes() for p in files if p.is_file()}


def signature(home: Path) -> dict[str, Any]:
    """What a scan decided, without the parts that differ between two runs (ids, times)."""
    yaml = YAML(typ="safe")
    reqs = []
    for path in sorted(home.glob("requirements/req-*.md")):
        meta = yaml.load(path.read_text().split("---")[1])
        body = path.read_text().split("---", 2)[2].strip()
        reqs.append((body, meta["status"], len(meta.get("evidence") or []), bool(meta.get("superseded_by"))))
    domains = yaml.load((home / "domains.yaml").read_text()) if (home / "domains.yaml").is_file() else {}
    state = yaml.load((home / "scan-state.yaml").read_text())
    return {
        "requirements": sorted(reqs),
        "domains": sorted(d["name"] for d in (domains or {}).get("domains", [])),
        "proposed": sorted(state.get("proposed") or {}),
    }


def scan_ops(ix: Intently, op: str) -> int:
    return len(ix.log.read(ix.namespace, op=op))


@pytest.fixture
def scanned(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository scanned once, then changed so the next scan creates, merges, supersedes,
    adds a domain and moves its cursors (every kind of file a scan writes)."""
    monkeypatch.setenv("INTENTLY_EMBEDDER", "hashing")  # fast and deterministic in every process
    write(repo, "AGENTS.md", AGENTS)
    write(repo, "main.go", "package main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Initial import")
    with Intently.init(repo, actor="user:alice", name="proj") as ix:
        ix.requirements.scan()
    changed = AGENTS.replace("Use testify assertions", "Do not use testify assertions")
    changed += "\n## Release\n\n- Tag every release from the main branch only.\n"
    write(repo, "AGENTS.md", changed)
    write(repo, "CLAUDE.md", "# Claude\n\n- Run `just lint` before every commit.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Change guidance")
    return repo


def run_scan(repo: Path, crash: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
    if crash is not None:
        env[CRASH_ENV] = crash
    proc = subprocess.run(
        [sys.executable, "-c", SCAN, str(repo / ".intently")], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode in (0, 86), proc.stderr
    return proc.returncode


def log_verify(repo: Path) -> int:
    return run_main(repo / ".intently", "log", "verify")[0]


@pytest.mark.parametrize(
    ("crash", "outcome"),
    [
        ("staged", "old"),  # staging complete, no journal yet: discarded
        ("journal", "new"),  # journal written, nothing renamed: rolled forward
        ("rename:3", "new"),  # between two renames
        ("logged", "new"),  # log committed, staging not cleaned up: not logged twice
    ],
)
def test_a_killed_scan_leaves_the_home_entirely_old_or_entirely_new(
    scanned: Path, tmp_path: Path, crash: str, outcome: str
) -> None:
    home = scanned / ".intently"
    before = tracked(home)
    reference = tmp_path / "reference"
    shutil.copytree(scanned, reference)
    with Intently.open(reference / ".intently", actor="user:alice") as other:
        other.requirements.scan()  # the same scan, uninterrupted
    expected_new = signature(reference / ".intently")
    assert expected_new != signature(home)  # the scan does change things

    assert run_scan(scanned, crash) == 86
    with Intently.open(home, actor="user:alice") as ix:
        ix.requirements.load()  # the next user: finishes or discards the interrupted apply
        if outcome == "old":
            assert tracked(home) == before
            assert scan_ops(ix, "REQ_SCAN") == 1
        else:
            assert signature(home) == expected_new
            assert scan_ops(ix, "REQ_SCAN") == 2  # logged exactly once, even when the log had it
        assert scan_ops(ix, "REQ_OUTSIDE_CHANGE") == 0  # the log saw every file it now holds
        size = ix.log.size(ix.namespace)
        ix.requirements.load()
        assert ix.log.size(ix.namespace) == size
    assert not any((home / "state" / STAGING).iterdir())
    assert log_verify(scanned) == 0
    subjects = git(scanned, "log", "--format=%s").splitlines()
    assert sum(s.startswith("intently scan:") for s in subjects) == (2 if outcome == "new" else 1)


def test_a_crash_mid_rename_is_finished_by_the_next_scan(scanned: Path) -> None:
    home = scanned / ".intently"
    assert run_scan(scanned, "rename:2") == 86
    assert (home / "state" / STAGING).is_dir() and any((home / "state" / STAGING).iterdir())
    assert run_scan(scanned, None) == 0  # starts by rolling the batch forward; then nothing is new
    with Intently.open(home, actor="user:alice") as ix:
        assert scan_ops(ix, "REQ_SCAN") == 2
        assert scan_ops(ix, "REQ_OUTSIDE_CHANGE") == 0
        statements = [r.statement for r in ix.requirements.list()]
    assert "Tag every release from the main branch only." in statements
    assert log_verify(scanned) == 0
