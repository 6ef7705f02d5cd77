"""Fixtures for the requirements engine: a home inside a real git repository."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from intently import Intently, ManualClock
from intently.cli._app import main
from tests._backends import use_database


def run_main(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run ``intently --home HOME --actor user:alice ARGS`` through its real entry point (``main``),
    in process, capturing both streams; plain output, ``COLUMNS`` 200 unless ``env`` says otherwise."""
    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    os.environ.update({"NO_COLOR": "1", "COLUMNS": "200", **(env or {})})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(["--home", str(home), "--actor", "user:alice", *args])
                code = 0
            except SystemExit as exc:
                code = int(exc.code or 0)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return code, out.getvalue(), err.getvalue()


def accept_all(ix: Intently) -> list[str]:
    """A person accepts every rule the scans proposed (they are not injected before)."""
    return [ix.requirements.accept(r.id).id for r in ix.requirements.list(status="proposed")]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {
        "GIT_AUTHOR_NAME": "Alice",
        "GIT_AUTHOR_EMAIL": "alice@example.org",
        "GIT_COMMITTER_NAME": "Alice",
        "GIT_COMMITTER_EMAIL": "alice@example.org",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("INTENTLY_EMBEDDER", raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


@pytest.fixture
def backend_rix(repo: Path, clock: ManualClock, database_url: str | None) -> Iterator[Intently]:
    """As ``rix``, on each backend under test (``INTENTLY_TEST_BACKENDS``); a module opts in by
    defining ``rix`` as this fixture."""
    with Intently.init(repo, actor="user:alice", name="proj", clock=clock, database_url=database_url) as handle:
        if database_url:
            use_database(handle.home.path, database_url)  # CLI runs open the same database
        yield handle


@pytest.fixture
def rix(repo: Path, clock: ManualClock) -> Iterator[Intently]:
    """A home owned by user:alice at the root of a git repository."""
    with Intently.init(repo, actor="user:alice", name="proj", clock=clock) as handle:
        yield handle


def write_rules(folder: Path, count: int) -> list[str]:
    """``count`` real rule files in ``folder``, as a pull of many rules would bring them (no
    command wrote them: the next load sees each as new). Returns their ids in order."""
    from datetime import UTC, datetime, timedelta

    from intently.requirements._files import render_new_requirement
    from intently.requirements._model import Frontmatter, Provenance, Scope

    folder.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    ids = []
    for n in range(count):
        rid = f"req-{n:012x}"
        when = start + timedelta(minutes=n)
        scope = Scope(level="domain", domains=["api"], paths=[f"src/mod{n % 40}/**"]) if n % 2 else Scope()
        meta = Frontmatter(
            id=rid, scope=scope, provenance=Provenance(kind="doc", ref="AGENTS.md"), created=when, updated=when
        )
        text = render_new_requirement(meta, f"Always check widget {n} before a release.", "It broke once.")
        (folder / f"{rid}.md").write_text(text, encoding="utf-8")
        ids.append(rid)
    return ids
