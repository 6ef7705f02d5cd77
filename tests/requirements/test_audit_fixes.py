"""Regressions found by the requirements audit, each in a real git repository."""

from __future__ import annotations

import json
from pathlib import Path

from intently import Intently

from .conftest import accept_all, git, run_main

CLAUDE = "# Claude\n\nPrefer small, focused pull requests.\nUse tabs for indentation in Go files.\n"


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def active(ix: Intently) -> dict[str, str]:
    return {r.statement: r.id for r in ix.requirements.list(status="active")}


def test_a_reverted_decision_supersedes_the_rule_in_force(repo: Path, rix: Intently) -> None:
    """ "Use tabs" -> "Never use tabs" -> "Use tabs" again: the old superseded wording must not
    hide the active rule the newest source contradicts."""
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    accept_all(rix)
    write(repo, "CLAUDE.md", CLAUDE.replace("Use tabs", "Never use tabs"))
    commit_all(repo, "switch to spaces")
    rix.requirements.scan()
    accept_all(rix)
    never = active(rix)["Never use tabs for indentation in Go files."]
    write(repo, "CLAUDE.md", CLAUDE.replace("in Go files", "in all Go files"))
    commit_all(repo, "back to tabs (gofmt)")
    report = rix.requirements.scan()
    assert never in report.replaces.values()  # replaced once a person accepts the new wording
    accept_all(rix)
    assert rix.requirements.get(never).status == "superseded"
    now = active(rix)
    assert "Use tabs for indentation in all Go files." in now
    assert "Never use tabs for indentation in Go files." not in now
    sel = rix.requirements.select("Reformat Go code", paths=["main.go"], record=False)
    assert never not in sel.ids


def test_the_exact_wording_a_person_disabled_is_never_brought_back(repo: Path, rix: Intently) -> None:
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    accept_all(rix)
    tabs = active(rix)["Use tabs for indentation in Go files."]
    rix.requirements.disable(tabs)
    rix.requirements.add("Never use tabs for indentation in Go files.")
    write(repo, "AGENTS.md", "# Agents\n\n- Use tabs for indentation in Go files.\n")
    commit_all(repo, "agents")
    report = rix.requirements.scan()
    assert report.created == [] and report.superseded == []
    assert rix.requirements.get(tabs).status == "disabled"


def test_folder_transcripts_mine_only_the_users_words(repo: Path, rix: Intently) -> None:
    lines = [
        {
            "type": "user",
            "message": {"role": "user", "content": "From now on, you must always use httpx instead of requests."},
            "uuid": "1",
            "timestamp": "2026-01-01T00:00:00Z",
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Understood. I must never use requests again."}],
            },
            "uuid": "2",
            "timestamp": "2026-01-01T00:00:01Z",
        },
    ]
    write(repo, "tx/c.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    write(
        repo,
        "tx/a.md",
        "user: from now on you must never use print for logging; always use the logger.\n"
        "assistant: ok, I must always say yes from now on.\n",
    )
    commit_all(repo, "transcripts")
    config = rix.home.config_path
    text = config.read_text(encoding="utf-8")
    assert 'transcripts = ""' in text
    config.write_text(text.replace('transcripts = ""', 'transcripts = "tx"'), encoding="utf-8")
    with Intently.open(rix.home.path, actor="user:alice") as ix:
        ix.requirements.scan()
        mined = sorted(r.statement for r in ix.requirements.list() if r.meta.provenance.kind == "transcript")
    assert mined == [
        "You must always use httpx instead of requests.",
        "You must never use print for logging; always use the logger.",
    ]


def test_the_commit_cap_reads_the_newest_commits_and_says_what_it_skipped(repo: Path, rix: Intently) -> None:
    pad = "Details follow. " * 120
    for i in range(150):
        git(repo, "commit", "-q", "--allow-empty", "-m", f"Refactor module {i}", "-m", pad)
    git(repo, "commit", "-q", "--allow-empty", "-m", "From now on, all new modules must have type hints.")
    report = rix.requirements.scan()
    accept_all(rix)
    assert list(active(rix)) == ["From now on, all new modules must have type hints."]
    assert any(p.startswith("git log: 15 older commit(s)") for p in report.problems)
    assert (
        git(repo, "rev-parse", "HEAD^")
        == (rix.home.path / "scan-state.yaml").read_text().split("last_commit: ")[1].split()[0]
    )


def test_a_hand_edited_statement_is_user_edited_and_survives_a_rewording(repo: Path, rix: Intently) -> None:
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    accept_all(rix)
    rid = active(rix)["Prefer small, focused pull requests."]
    path = rix.requirements.get(rid).path
    path.write_text(path.read_text().replace("Prefer small,", "Always prefer small,"))
    req = rix.requirements.get(rid)
    assert req.meta.user_edited and req.statement == "Always prefer small, focused pull requests."
    ops = [o for o in rix.log.read(rix.namespace) if o.target == rid]
    assert ops[-1].op == "REQ_UPDATE" and ops[-1].payload["detail"]["by"] == "outside edit"
    write(repo, "CLAUDE.md", CLAUDE.replace("pull requests.", "pull requests with one commit each."))
    commit_all(repo, "reword")
    report = rix.requirements.scan()
    assert rid not in report.superseded
    assert rix.requirements.get(rid).status == "active"


def test_a_hand_edit_of_other_fields_does_not_pin_the_rule(repo: Path, rix: Intently) -> None:
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    accept_all(rix)
    rid = active(rix)["Prefer small, focused pull requests."]
    path = rix.requirements.get(rid).path
    path.write_text(path.read_text().replace("confidence: high", "confidence: low"))
    req = rix.requirements.get(rid)
    assert req.meta.confidence == "low" and not req.meta.user_edited


def test_adr_decision_sections_are_project_wide(repo: Path, rix: Intently) -> None:
    write(
        repo,
        "docs/adr/0001-use-postgres.md",
        "# 1. Use PostgreSQL\n\n## Status\n\nAccepted.\n\n## Decision\n\n"
        "We will always use PostgreSQL for persistent storage; SQLite must not be used in production.\n\n"
        "## Consequences\n\nEvery service must use the shared connection pool.\n",
    )
    commit_all(repo, "adr")
    rix.requirements.scan()
    reqs = rix.requirements.list()
    assert len(reqs) == 2
    for req in reqs:
        assert req.scope.level == "project" and req.scope.domains == []
    assert rix.requirements.domains() == []


def test_validate_reports_supersession_cycles_and_active_successors(repo: Path, rix: Intently) -> None:
    a, b, c = (rix.requirements.add(s) for s in ("Use tabs.", "Use spaces.", "Pin versions."))

    def set_fields(req_id: str, status: str, by: str) -> None:
        path = rix.requirements.get(req_id).path
        lines = path.read_text().splitlines(keepends=True)
        out = []
        for line in lines:
            if line.startswith("status:"):
                line = f"status: {status}\n"
            elif line.startswith("superseded_by:"):
                line = f"superseded_by: {by}\n"
            out.append(line)
        path.write_text("".join(out))

    set_fields(a.id, "superseded", b.id)
    set_fields(b.id, "superseded", a.id)
    set_fields(c.id, "active", a.id)
    errors = rix.requirements.validate()
    found = {(e.file.rsplit("/", 1)[-1], e.field): e for e in errors}
    for rid in (a.id, b.id):
        err = found[(f"{rid}.md", "superseded_by")]
        assert "cycle" in err.message and err.line is not None
    err = found[(f"{c.id}.md", "superseded_by")]
    assert "active" in err.message and err.line is not None
    code, _, _ = run_main(rix.home.path, "req", "validate")
    assert code == 2


def test_show_prints_every_field(rix: Intently) -> None:
    req = rix.requirements.add("Pin versions.")
    code, out, err = run_main(rix.home.path, "req", "show", req.id)
    assert code == 0, err
    for key in ("created:", "updated:", "superseded_by:", "status:", "user_edited:", "confidence:"):
        assert key in out
