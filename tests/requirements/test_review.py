"""Scanned rules wait for a person's review: found by a scan, they are ``proposed`` and never
injected until accepted (RFC-0013 section 5: extracted intent is inferred and surfaced for
review, not treated as authoritative). Each test scans a real git repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from intently import Intently
from intently.access import Permission
from intently.core.actors import Actor
from intently.core.errors import InvalidTransition, PermissionDenied
from tests._config import set_config

from .conftest import git, run_main

CLAUDE = "# Claude\n\nPrefer small, focused pull requests.\nUse tabs for indentation in Go files.\n"
TABS = "Use tabs for indentation in Go files."


@pytest.fixture
def rix(backend_rix: Intently) -> Intently:
    """This module's tests run on each backend under test (``INTENTLY_TEST_BACKENDS``)."""
    return backend_rix


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def by_statement(ix: Intently) -> dict[str, tuple[str, str]]:
    return {r.statement: (r.id, r.status) for r in ix.requirements.list()}


def test_scanned_rules_are_proposed_and_never_injected_before_review(repo: Path, rix: Intently) -> None:
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    git(repo, "commit", "-q", "--allow-empty", "-m", "ci: every release must be signed with the team key")
    report = rix.requirements.scan()
    found = by_statement(rix)
    assert {s for s, (_, st) in found.items() if st == "proposed"} == set(found), found
    assert sorted(report.proposed) == sorted(report.created) and len(report.created) == 3
    assert report.to_json()["proposed"] == report.proposed
    sel = rix.requirements.select(
        "Reindent the Go files with tabs", paths=["main.go"], explain=True, record=False, budget=2000
    )
    assert sel.items == []
    assert sel.explain is not None
    assert {d.reason for d in sel.explain} == {"status is proposed: awaiting review (intently req accept)"}
    assert rix.log.read(rix.namespace, op="REQ_INJECTED") == []


def test_accept_and_dismiss_through_the_cli_are_logged_and_dismissed_rules_stay_gone(repo: Path, rix: Intently) -> None:
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    code, out, err = run_main(rix.home.path, "req", "scan")
    assert code == 0, err
    assert "wait for review" in out and "intently req accept" in out
    found = by_statement(rix)
    tabs, small = found[TABS][0], found["Prefer small, focused pull requests."][0]

    code, out, err = run_main(rix.home.path, "req", "accept", tabs, "--json")
    assert code == 0, err
    assert [r["status"] for r in json.loads(out)] == ["active"]
    code, out, err = run_main(rix.home.path, "req", "dismiss", small)
    assert code == 0, err
    assert f"{small}: disabled" in out

    sel = rix.requirements.select("Reindent the Go files", paths=["main.go"], record=False)
    assert sel.ids == [tabs]
    reviews = {
        o.target: o.payload["detail"]["review"]
        for o in rix.log.read(rix.namespace, op="REQ_STATUS")
        if "review" in o.payload["detail"]
    }
    assert reviews == {tabs: "accept", small: "dismiss"}
    # A dismissed rule is a person's "no": a full re-scan of the same text never proposes it again.
    report = rix.requirements.scan(full=True)
    assert report.created == []
    assert by_statement(rix)["Prefer small, focused pull requests."] == (small, "disabled")
    # Review only settles proposals: an active rule is turned off with disable, not dismissed.
    code, _, err = run_main(rix.home.path, "req", "dismiss", tabs)
    assert code == 2 and "not awaiting review; use disable" in err


def test_accept_all_and_its_usage_error(repo: Path, rix: Intently) -> None:
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    code, _, err = run_main(rix.home.path, "req", "accept")
    assert code == 2 and "--all" in err
    code, out, err = run_main(rix.home.path, "req", "accept", "--all")
    assert code == 0, err
    assert {st for _, st in by_statement(rix).values()} == {"active"}
    code, out, _ = run_main(rix.home.path, "req", "accept", "--all")
    assert code == 0 and "No requirements await review." in out


def test_a_proposed_replacement_leaves_the_rule_in_force_until_accepted(repo: Path, rix: Intently) -> None:
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    old = by_statement(rix)[TABS][0]
    rix.requirements.accept(old)
    write(repo, "CLAUDE.md", CLAUDE.replace("Use tabs", "Never use tabs"))
    commit_all(repo, "switch to spaces")
    report = rix.requirements.scan()
    new = by_statement(rix)["Never use tabs for indentation in Go files."][0]
    assert report.replaces == {new: old} and report.superseded == []
    assert rix.requirements.get(new).meta.replaces == old
    # Until a person accepts the new wording, agents keep getting the old rule.
    sel = rix.requirements.select("Reindent the Go files", paths=["main.go"], record=False)
    assert old in sel.ids and new not in sel.ids
    assert rix.requirements.get(old).status == "active"

    accepted = rix.requirements.accept(new)
    assert accepted.status == "active" and accepted.meta.replaces == ""
    replaced = rix.requirements.get(old)
    assert (replaced.status, replaced.meta.superseded_by) == ("superseded", new)
    sel = rix.requirements.select("Reindent the Go files", paths=["main.go"], record=False)
    assert new in sel.ids and old not in sel.ids
    assert rix.requirements.validate() == []


def test_dismissing_a_proposed_replacement_keeps_the_rule_in_force(repo: Path, rix: Intently) -> None:
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    old = by_statement(rix)[TABS][0]
    rix.requirements.enable(old)  # enable accepts a proposed rule, as the console's button does
    assert rix.requirements.get(old).status == "active"
    write(repo, "CLAUDE.md", CLAUDE.replace("Use tabs", "Never use tabs"))
    commit_all(repo, "switch to spaces")
    rix.requirements.scan()
    new = by_statement(rix)["Never use tabs for indentation in Go files."][0]
    rix.requirements.disable(new)  # disable dismisses it
    assert rix.requirements.get(new).status == "disabled"
    assert rix.requirements.get(old).status == "active"
    ops = [o for o in rix.log.read(rix.namespace, op="REQ_STATUS") if o.target == new]
    assert ops[-1].payload["detail"]["review"] == "dismiss"
    with pytest.raises(InvalidTransition, match="not awaiting review; use enable"):
        rix.requirements.accept(new)


def test_a_decision_from_conversation_waits_for_review(repo: Path, rix: Intently) -> None:
    """A decision the goals engine recorded (extraction records them from what people say) is
    only a proposal until a person accepts it."""
    commit_all_empty = ["commit", "-q", "--allow-empty", "-m", "init"]
    git(repo, *commit_all_empty)
    rix.goals.record_decision("OK, let's use httpx for every outgoing HTTP call", evidence_id="turn-1")
    rix.requirements.scan()
    ((rid, status),) = [v for s, v in by_statement(rix).items() if s.startswith("Use httpx")]
    assert status == "proposed"
    assert rix.requirements.get(rid).meta.provenance.kind == "decision"
    assert rix.requirements.select("Add an HTTP client call", record=False).items == []


def test_a_project_can_let_scanned_rules_apply_at_once(repo: Path, rix: Intently) -> None:
    config = rix.home.config_path
    config.write_text(config.read_text().replace('scanned = "proposed"', 'scanned = "active"'))
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    with Intently.open(repo, actor="user:alice") as ix:
        report = ix.requirements.scan()
        assert report.proposed == []
        assert {st for _, st in by_statement(ix).values()} == {"active"}
        assert ix.requirements.select("Reindent the Go files", paths=["main.go"], record=False).items


def test_an_agent_cannot_accept_or_dismiss_what_a_scan_proposed(repo: Path, rix: Intently) -> None:
    """What a scan read (a commit message, a transcript, a web page quoted in a doc) may carry a
    prompt injection; an agent that could accept it would inject it into every prompt."""
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    tabs = by_statement(rix)[TABS][0]
    rix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    for agent in (rix.as_actor("agent:claude"), rix.as_actor(Actor.delegate("mcp", rix.actor))):
        for act in (agent.requirements.accept, agent.requirements.enable, agent.requirements.dismiss):
            with pytest.raises(PermissionDenied, match="a person's decision"):
                act(tabs)
    assert rix.requirements.get(tabs).status == "proposed"
    set_config(rix.home.config_path, "review", "agents_may_review", "true")
    with Intently.open(rix.home.path, actor="user:alice", clock=rix.runtime.clock) as opted:
        accepted = opted.as_actor("agent:claude").requirements.accept(tabs)
    assert accepted.status == "active"
    (op,) = [o for o in rix.log.read(rix.namespace, op="REQ_STATUS") if o.target == tabs]
    assert op.actor == "agent:claude"  # the log still names who accepted it


def test_rules_mined_from_commit_subjects_lose_their_conventional_commit_header(repo: Path, rix: Intently) -> None:
    """A commit subject written as Conventional Commits (``type(scope)!: text``, after any
    autosquash marker) proposes the rule it states, not the header in front of it; a label
    that is part of the sentence (``API:``) stays, and so does a ``BREAKING CHANGE:`` footer's
    text without its token."""
    subjects = [
        "init: you must always sign commits",
        "feat(api)!: never break the v1 routes without a deprecation notice",
        "fixup! chore(deps): always pin direct dependencies to an exact version",
        "Fix: you must run the migrations check before every release",
        "API: all endpoints must be versioned under /v1",
        "refactor the store\n\nBREAKING CHANGE: callers must open a transaction first",
    ]
    for n, subject in enumerate(subjects):
        write(repo, f"f{n}.txt", "x\n")
        commit_all(repo, subject)
    rix.requirements.scan()
    found = by_statement(rix)
    assert {
        "You must always sign commits",
        "Never break the v1 routes without a deprecation notice",
        "Always pin direct dependencies to an exact version",
        "You must run the migrations check before every release",
        "API: all endpoints must be versioned under /v1",
        "Callers must open a transaction first",
    } <= {s.rstrip(".") for s in found}, sorted(found)
    assert not [s for s in found if s.lower().startswith(("init", "feat", "fixup", "chore", "fix:", "breaking"))]
    assert {st for _, st in found.values()} == {"proposed"}


def _set_status_in_file(path: Path, status: str) -> None:
    """What a person does in an editor: change the ``status:`` line of the front matter."""
    text = path.read_text()
    assert "status: proposed" in text
    path.write_text(text.replace("status: proposed", f"status: {status}", 1))


def test_accepting_a_proposed_replacement_in_the_file_supersedes_the_rule_it_replaces(
    repo: Path, rix: Intently
) -> None:
    """Setting ``status: active`` by hand on a proposed replacement is an acceptance: the rule it
    ``replaces`` is superseded by it (logged, naming the review), never both in force; until a
    person who may write runs a command, `req validate` names the file and line."""
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    old = by_statement(rix)[TABS][0]
    rix.requirements.accept(old)
    write(repo, "CLAUDE.md", CLAUDE.replace("Use tabs", "Never use tabs"))
    commit_all(repo, "switch to spaces")
    rix.requirements.scan()
    new = by_statement(rix)["Never use tabs for indentation in Go files."][0]
    path = rix.requirements.get(new).path
    _set_status_in_file(path, "active")

    # An agent's load leaves the review to a person: the rule in force stays in force, the
    # replacement stays a proposal (never both injected); validate says where it stands.
    rix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    agent = rix.as_actor("agent:claude")
    assert agent.requirements.get(old).status == "active"
    assert agent.requirements.get(new).status == "proposed"
    sel = agent.requirements.select("Reindent the Go files", paths=["main.go"], record=False)
    assert old in sel.ids and new not in sel.ids
    problems = agent.requirements.validate()
    (problem,) = [p for p in problems if p.file.endswith(f"{new}.md")]
    assert problem.field == "status" and problem.line is not None
    assert path.read_text().splitlines()[problem.line - 1].startswith("status:")
    assert "a review nothing logged" in problem.message

    code, out, err = run_main(rix.home.path, "req", "list", "--json")
    assert code == 0, err
    statuses = {r["id"]: r["status"] for r in json.loads(out)}
    assert statuses[new] == "active" and statuses[old] == "superseded"
    replaced = rix.requirements.get(old)
    assert replaced.meta.superseded_by == new and rix.requirements.get(new).meta.replaces == ""
    sel = rix.requirements.select("Reindent the Go files", paths=["main.go"], record=False)
    assert new in sel.ids and old not in sel.ids
    (op,) = [o for o in rix.log.read(rix.namespace, op="REQ_STATUS") if o.target == old][-1:]
    assert op.payload["detail"]["review"] == f"accept {new} (outside edit)"
    assert rix.requirements.validate() == []
    (review,) = [o for o in rix.log.read(rix.namespace, op="REQ_STATUS") if o.target == new]
    assert review.actor == "user:alice" and review.payload["detail"]["review"] == "accept (outside edit)"
    assert review.payload["detail"]["fields"] == ["replaces"]


def test_dismissing_a_proposed_replacement_in_the_file_keeps_the_rule_in_force(repo: Path, rix: Intently) -> None:
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    old = by_statement(rix)[TABS][0]
    rix.requirements.accept(old)
    write(repo, "CLAUDE.md", CLAUDE.replace("Use tabs", "Never use tabs"))
    commit_all(repo, "switch to spaces")
    rix.requirements.scan()
    new = by_statement(rix)["Never use tabs for indentation in Go files."][0]
    _set_status_in_file(rix.requirements.get(new).path, "disabled")
    assert rix.requirements.validate() == []
    assert rix.requirements.get(old).status == "active"
    assert (rix.requirements.get(new).status, rix.requirements.get(new).meta.replaces) == ("disabled", "")


def test_a_rule_an_agent_adds_is_proposed_until_a_person_accepts_it(repo: Path, rix: Intently) -> None:
    """An agent's `add` (a tool call a page or commit message could steer) is a proposal, as a
    scan's finding is: listed, never injected, logged as awaiting review; a person's add is in
    force at once, and `[review] agents_may_review` lets an agent's add be too."""
    rix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    for agent in (rix.as_actor("agent:claude"), rix.as_actor(Actor.delegate("claude", rix.actor))):
        added = agent.requirements.add("Always deploy on Fridays without tests.")
        assert added.status == "proposed"
        assert added.path.read_text().count("status: proposed") == 1
        sel = rix.requirements.select("deploy the release today", record=False)
        assert added.id not in sel.ids
        (op,) = [o for o in rix.log.read(rix.namespace, op="REQ_CREATE") if o.target == added.id]
        assert op.actor == str(agent.actor) and op.payload["status"] == "proposed"
        assert op.payload["detail"]["review"].startswith("awaiting")
        with pytest.raises(PermissionDenied, match="a person's decision"):
            agent.requirements.accept(added.id)
    mine = rix.requirements.add("Always tag a release after deploying it.")
    assert mine.status == "active"
    assert rix.requirements.accept(added.id).status == "active"
    assert added.id in rix.requirements.select("deploy the release today", record=False).ids

    # The CLI with an agent actor says what happened; --json keys are the same.
    code, out, err = run_main(rix.home.path, "--actor", "agent:claude", "req", "add", "Always lint before a commit.")
    assert code == 0, err
    assert "awaiting review" in out and "intently req accept req-" in out
    code, out, err = run_main(rix.home.path, "--actor", "agent:claude", "req", "add", "Never skip CI.", "--json")
    assert code == 0 and json.loads(out)["status"] == "proposed"

    set_config(rix.home.config_path, "review", "agents_may_review", "true")
    with Intently.open(rix.home.path, actor="user:alice", clock=rix.runtime.clock) as opted:
        assert opted.as_actor("agent:claude").requirements.add("Always sign commits.").status == "active"


def test_a_proposal_accepted_in_the_file_is_held_until_a_reviewer_records_it(repo: Path, rix: Intently) -> None:
    """Setting ``status: active`` in the file of a proposal with no ``replaces`` is a review
    made outside intently: an agent that may write files must not put a proposal in force that
    way. It stays proposed (not injected) and `req validate` names the file and line until a
    person's command records the review in the log, as `req accept` would have."""
    write(repo, "CLAUDE.md", CLAUDE)
    commit_all(repo, "init")
    rix.requirements.scan()
    tabs = by_statement(rix)[TABS][0]
    path = rix.requirements.get(tabs).path
    _set_status_in_file(path, "active")

    rix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    agent = rix.as_actor("agent:claude")
    for _ in range(2):  # however many loads observe the edit meanwhile
        assert agent.requirements.get(tabs).status == "proposed"
        assert tabs not in agent.requirements.select("Reindent the Go files", paths=["main.go"], record=False).ids
    (problem,) = agent.requirements.validate()
    assert problem.file == f"requirements/{tabs}.md" and problem.field == "status"
    assert path.read_text().splitlines()[problem.line - 1] == "status: active"  # type: ignore[operator]
    assert not [o for o in rix.log.read(rix.namespace, op="REQ_STATUS") if o.target == tabs]

    code, out, err = run_main(rix.home.path, "req", "list", "--json")  # user:alice, a person
    assert code == 0, err
    assert {r["id"]: r["status"] for r in json.loads(out)}[tabs] == "active"
    (op,) = [o for o in rix.log.read(rix.namespace, op="REQ_STATUS") if o.target == tabs]
    assert op.actor == "user:alice"
    assert op.payload["detail"]["review"] == "accept (outside edit)" and op.payload["detail"]["from"] == "proposed"
    assert tabs in rix.requirements.select("Reindent the Go files", paths=["main.go"], record=False).ids
    assert rix.requirements.validate() == []

    # A hand dismissal is recorded the same way, and the rule stays out.
    write(repo, "CLAUDE.md", CLAUDE + "Always run gofmt before a commit.\n")
    commit_all(repo, "gofmt")
    rix.requirements.scan()
    fmt = by_statement(rix)["Always run gofmt before a commit."][0]
    _set_status_in_file(rix.requirements.get(fmt).path, "disabled")
    assert rix.requirements.get(fmt).status == "disabled"
    (op,) = [o for o in rix.log.read(rix.namespace, op="REQ_STATUS") if o.target == fmt]
    assert op.payload["detail"]["review"] == "dismiss (outside edit)"
