"""Scanning a real git repository: sources, importers, reconcile, hard rules, atomicity, commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from intently import Intently
from intently.requirements import Requirement

from .conftest import git

AGENTS = """# Agent instructions

- Never use conventional commit prefixes such as `feat:` in commit subjects.
- Run `just lint` before every commit.

## Testing

- Use testify assertions rather than hand-rolled if checks.
"""
GUI_AGENTS = "# GUI\n\n- Do not read model state synchronously after a refresh.\n"
CURSOR = """---
description: i18n
globs: pkg/i18n/**/*.go, pkg/i18n/*.json
alwaysApply: false
---
- Only edit english.go; never hand-edit other translations.
"""
COPILOT = """---
applyTo: "docs/**/*.md"
---
- Write one sentence per line in documentation.
"""


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, "AGENTS.md", AGENTS)
    write(repo, "pkg/gui/AGENTS.md", GUI_AGENTS)
    write(repo, ".cursor/rules/i18n.mdc", CURSOR)
    write(repo, ".github/instructions/docs.instructions.md", COPILOT)
    write(repo, "CLAUDE.md", "# Claude\n\n- Always answer review comments yourself.\n")
    write(repo, "main.go", "package main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Initial import")
    return repo


def by_statement(ix: Intently) -> dict[str, Requirement]:
    return {r.statement: r for r in ix.requirements.list()}


def test_scan_imports_guidance_with_the_scope_each_format_implies(project: Path, rix: Intently) -> None:
    report = rix.requirements.scan()
    reqs = by_statement(rix)
    assert len(report.created) == len(reqs) == 7
    gui = reqs["Do not read model state synchronously after a refresh."]
    assert gui.scope.paths == ["pkg/gui/**"] and gui.meta.provenance.ref.startswith("pkg/gui/AGENTS.md")
    i18n = reqs["Only edit english.go; never hand-edit other translations."]
    assert i18n.scope.paths == ["pkg/i18n/**/*.go", "pkg/i18n/*.json"]
    assert reqs["Write one sentence per line in documentation."].scope.paths == ["docs/**/*.md"]
    top = reqs["Never use conventional commit prefixes such as `feat:` in commit subjects."]
    assert top.scope.level == "project" and top.meta.provenance.kind == "doc" and not top.meta.user_edited
    testing = reqs["Use testify assertions rather than hand-rolled if checks."]
    assert testing.scope.domains == ["testing"]
    assert "testing" in [d.name for d in rix.requirements.domains()]
    assert {r.status for r in reqs.values()} == {"proposed"}  # injected once a person accepts them
    rix.requirements.accept(gui.id)
    sel = rix.requirements.select("Fix a refresh race", paths=["pkg/gui/files.go"], record=False)
    assert gui.id in sel.ids


def test_scan_commits_only_intently_files_with_counts(project: Path, rix: Intently) -> None:
    write(project, "main.go", "package main // work in progress\n")
    report = rix.requirements.scan()
    assert report.commit is not None
    subject = git(project, "log", "-1", "--format=%s")
    assert (
        subject == f"intently scan: created {len(report.created)}, merged 0, superseded 0, dropped 0; domains added 1"
    )
    changed = git(project, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert changed and all(name.startswith(".intently/") for name in changed)
    assert ".intently/scan-state.yaml" in changed and ".intently/domains.yaml" in changed
    assert git(project, "status", "--porcelain", "--", "main.go") == "M main.go"  # left dirty, uncommitted


def test_quiet_rescan_changes_nothing(project: Path, rix: Intently) -> None:
    rix.requirements.scan()
    head = git(project, "rev-parse", "HEAD")
    snapshot = {p: p.read_bytes() for p in rix.home.path.rglob("*.md")}
    ops = rix.log.size(rix.namespace)
    again = rix.requirements.scan()
    assert not again.changed and again.commit is None
    assert git(project, "rev-parse", "HEAD") == head
    assert {p: p.read_bytes() for p in rix.home.path.rglob("*.md")} == snapshot
    assert rix.log.size(rix.namespace) == ops
    full = rix.requirements.scan(full=True)  # re-reads everything: all duplicates, nothing written
    assert full.created == [] and full.merged == [] and git(project, "rev-parse", "HEAD") == head


def test_hard_rules_disabled_stays_disabled_user_edits_stay(project: Path, rix: Intently) -> None:
    rix.requirements.scan()
    reqs = by_statement(rix)
    lint = reqs["Run `just lint` before every commit."]
    prefixes = reqs["Never use conventional commit prefixes such as `feat:` in commit subjects."]
    rix.requirements.disable(lint.id)
    edited, _ = rix.requirements.edit(prefixes.id, statement="Never use conventional commit prefixes.")
    assert edited.meta.user_edited
    before = edited.path.read_text()
    report = rix.requirements.scan(full=True)
    assert rix.requirements.get(lint.id).status == "disabled"
    assert rix.requirements.get(prefixes.id).path.read_text().split("---")[2] == before.split("---")[2]
    assert lint.id not in report.merged + report.superseded
    assert len(list(rix.home.requirements_dir.glob("req-*.md"))) == 7  # nothing deleted


def test_a_newer_contradiction_supersedes_and_nothing_is_deleted(project: Path, rix: Intently) -> None:
    rix.requirements.scan()
    old = by_statement(rix)["Use testify assertions rather than hand-rolled if checks."]
    write(project, "AGENTS.md", AGENTS.replace("Use testify assertions", "Do not use testify assertions"))
    git(project, "commit", "-qam", "Change testing guidance")
    report = rix.requirements.scan()
    assert old.id in report.superseded
    now = rix.requirements.get(old.id)
    assert now.status == "superseded"
    assert rix.requirements.get(now.meta.superseded_by).statement.startswith("Do not use testify")
    assert now.statement == old.statement  # status only; the text is never rewritten


def test_a_crash_while_applying_leaves_the_old_state(project: Path, rix: Intently) -> None:
    (rix.home.path / "scan-state.yaml").mkdir()  # the last write of the scan will fail
    ops = rix.log.size(rix.namespace)
    with pytest.raises(OSError):
        rix.requirements.scan()
    assert list(rix.home.requirements_dir.glob("req-*.md")) == []
    assert not (rix.home.path / "domains.yaml").exists()
    assert rix.log.size(rix.namespace) == ops
    assert git(project, "log", "--format=%s") == "Initial import"


def test_user_edited_domains_are_never_removed_or_rewritten(project: Path, rix: Intently) -> None:
    rix.requirements.add_domain("testing", description="Ours.", paths=["test/**"])
    rix.requirements.add_domain("release", description="Never mentioned by any source.")
    rix.requirements.scan(full=True)
    doms = {d.name: d for d in rix.requirements.domains()}
    assert doms["testing"].description == "Ours." and doms["testing"].paths == ["test/**"]
    assert "release" in doms


def test_readmes_yield_only_explicit_rules(project: Path, rix: Intently) -> None:
    write(project, "README.md", "# Tool\n\nRun `make install` to install it.\n\nYou must never commit secrets.\n")
    git(project, "add", "README.md")
    git(project, "commit", "-qm", "Add readme")
    rix.requirements.scan()
    texts = [r.statement for r in rix.requirements.list()]
    assert "You must never commit secrets." in texts
    assert not any("make install" in t for t in texts)


def test_commits_and_transcripts_are_mined_unless_opted_out(project: Path, rix: Intently) -> None:
    write(project, "notes.txt", "x\n")
    git(project, "add", "notes.txt")
    git(project, "commit", "-qm", "Add notes\n\nFrom now on, never merge main into feature branches.")
    folder = project / "transcripts"
    write(project, "transcripts/a.md", "User: we must always run the migrations check before release.\n")
    write(project, "transcripts/b.md", "<!-- intently: off -->\nUser: we must always deploy on Fridays.\n")
    config = rix.home.config_path
    config.write_text(config.read_text().replace('transcripts = ""', f'transcripts = "{folder}"'))
    with Intently.open(rix.home.path, actor="user:alice") as ix:
        report = ix.requirements.scan()
        texts = [r.statement for r in ix.requirements.list()]
    assert any("never merge main into feature branches" in t for t in texts)
    assert any("migrations check" in t for t in texts)
    assert not any("Fridays" in t for t in texts)
    assert not any(t.startswith("Add notes") for t in texts)
    assert report.sources["commits"] == 2 and report.sources["transcripts"] == 1


def test_a_decision_made_in_conversation_becomes_a_rule_in_the_imperative(rix: Intently) -> None:
    """The hook observes "OK, let's use httpx instead of requests for the API client"; the scan
    turns the recorded decision into a rule that reads as one, and a second identical decision
    (the prompt sent again) does not make a second rule."""
    turn = {
        "speaker": "alice",
        "text": "OK, let's use httpx instead of requests for the API client",
        "time": "2026-03-02T10:00:00Z",
        "channel": "claude-code",
    }
    rix.extraction.observe(turn)
    rix.extraction.observe({**turn, "time": "2026-03-02T11:00:00Z"})
    rix.requirements.scan()
    (rule,) = [r for r in rix.requirements.list() if r.meta.provenance.kind == "decision"]
    assert rule.statement == "Use httpx instead of requests for the API client"


def test_rules_under_generic_section_headings_apply_project_wide() -> None:
    """ "## Rules" or "## Code style" says what kind of text follows, not which part of the
    project it is about: a rule there applies everywhere. A heading naming an area (API,
    Testing) still founds a domain."""
    from intently.requirements._extract import extract_text

    text = (
        "# Agent guide\n\n"
        "## Rules\n\n- Never commit secrets or credentials to the repository.\n\n"
        "## Code style\n\n- Always use type hints in Python code.\n\n"
        "## General guidelines\n\n- Keep functions small and never swallow exceptions.\n\n"
        "## API (src/api/)\n\n- Every endpoint must validate its input.\n"
    )
    found = {c.statement: c.top for c in extract_text("AGENTS.md", text)}
    assert found["Never commit secrets or credentials to the repository."]
    assert found["Always use type hints in Python code."]
    assert found["Keep functions small and never swallow exceptions."]
    assert found["Every endpoint must validate its input."] is False


def test_a_three_word_rule_is_a_rule_and_a_two_word_line_is_not() -> None:
    """ "Never commit secrets." is among the commonest rules an agent guide has; it was dropped
    for being under four words. Two words stay too little to be a rule ("Use tabs" aside,
    a heading-like fragment is likelier)."""
    from intently.requirements._extract import extract_text

    text = "## Rules\n\n- Never commit secrets.\n- Always squash merges.\n- Must review.\n"
    found = [c.statement for c in extract_text("AGENTS.md", text)]
    assert found == ["Never commit secrets.", "Always squash merges."]


def test_scan_reports_progress_per_source(project: Path, rix: Intently) -> None:
    """`intently req scan` draws its bar from these calls: one before each source, then the end."""
    calls: list[tuple[int, int, str]] = []
    report = rix.requirements.scan(progress=lambda done, total, ref: calls.append((done, total, ref)))
    total = sum(report.sources.values())
    assert total >= 6 and calls[-1] == (total, total, "")
    assert [c[0] for c in calls] == list(range(total + 1))
    assert {c[1] for c in calls} == {total}
    assert any(ref.startswith("AGENTS.md") for _, _, ref in calls)
