"""Homes made by an older intently: what their scan-state.yaml recorded still counts."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from intently import Intently

from .conftest import git


def _old_fingerprint(ref: str, statement: str) -> str:
    """The key scan-state.yaml's ``proposed`` had before commits were keyed by author, date
    and message: the commit's ``commit:<12 hex>`` ref and the wording."""
    key = ref.split("#", 1)[0] + "\n" + " ".join(statement.lower().split())
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]


def test_a_full_rescan_of_an_old_home_does_not_bring_back_a_reworded_commit_rule(
    repo: Path, rix: Intently, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older scan-state.yaml keys commit candidates by the commit's hash. After the
    upgrade, ``req scan --full`` computed only the new key, found it nowhere, and proposed the
    commit's rule again beside the one a person had reworded (a duplicate active rule). The
    scan keeps the proposal under the new key too, so a later rebase does not bring it back."""
    (repo / "main.go").write_text("package main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Init")
    git(repo, "commit", "-q", "--allow-empty", "-m", "Policy\n\nAlways run the linter before pushing code to main.")
    rix.requirements.scan()
    (rule,) = rix.requirements.list()
    sha = git(repo, "rev-parse", "HEAD~1")
    state_path = rix.home.path / "scan-state.yaml"
    yaml = YAML()
    state = yaml.load(state_path.read_text(encoding="utf-8"))
    # The bytes an older version wrote: the same state, its one proposal under the old key.
    state["proposed"] = {_old_fingerprint(f"commit:{sha[:12]}", rule.statement): rule.id}
    with state_path.open("w", encoding="utf-8") as fh:
        yaml.dump(state, fh)
    rix.requirements.edit(rule.id, statement="Always run ruff before pushing code to the main branch.")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Reword the linter rule")

    report = rix.requirements.scan(full=True)

    assert report.created == []
    assert [r.statement for r in rix.requirements.list()] == ["Always run ruff before pushing code to the main branch."]

    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Scan state")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2031-01-01T00:00:00+00:00")
    git(repo, "rebase", "-q", "--force-rebase", "--root")
    assert sha not in git(repo, "log", "--format=%H")  # the rule's commit was rewritten
    assert rix.requirements.scan().created == []


def test_a_rebase_after_the_upgrade_does_not_bring_back_a_reworded_commit_rule(
    repo: Path, rix: Intently, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old key names the commit's old hash, which the rebased copy does not carry: the
    scan after a rebase read the copy as a new commit and proposed its rule again beside the
    reworded one. The originals the cursor still reaches carry the old key over."""
    (repo / "main.go").write_text("package main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Init")
    git(repo, "commit", "-q", "--allow-empty", "-m", "Policy\n\nAlways run the linter before pushing code to main.")
    rix.requirements.scan()
    (rule,) = rix.requirements.list()
    sha = git(repo, "rev-parse", "HEAD~1")
    state_path = rix.home.path / "scan-state.yaml"
    yaml = YAML()
    state = yaml.load(state_path.read_text(encoding="utf-8"))
    state["proposed"] = {_old_fingerprint(f"commit:{sha[:12]}", rule.statement): rule.id}
    with state_path.open("w", encoding="utf-8") as fh:
        yaml.dump(state, fh)
    rix.requirements.edit(rule.id, statement="Always run ruff before pushing code to the main branch.")
    rix.requirements.disable(rule.id)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Reword the linter rule")
    assert rix.requirements.scan().created == []  # the first scan after the upgrade: nothing new to read
    if git(repo, "status", "--porcelain"):
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "Scan state")

    monkeypatch.setenv("GIT_COMMITTER_DATE", "2031-01-01T00:00:00+00:00")
    git(repo, "rebase", "-q", "--force-rebase", "--root")
    assert sha not in git(repo, "log", "--format=%H")

    assert rix.requirements.scan().created == []
    assert rix.requirements.scan(full=True).created == []
    assert [(r.status, r.statement) for r in rix.requirements.list()] == [
        ("disabled", "Always run ruff before pushing code to the main branch.")
    ]
