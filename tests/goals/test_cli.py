"""``intently goal ...`` end to end through the real CLI entry point, on a real home."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from intently import Intently, ManualClock

Run = Callable[..., Any]


@pytest.fixture
def run(ix: Intently, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """Call the real entry point (``intently.cli.main``: error handling and exit codes included)."""
    from intently.cli._app import main

    ix.checkpoint()
    monkeypatch.setenv("INTENTLY_HOME", str(ix.home.path))
    monkeypatch.setenv("INTENTLY_ACTOR", "user:alice")

    def invoke(*args: str, code: int = 0) -> Any:
        capsys.readouterr()
        try:
            main(list(args))
            exit_code = 0
        except SystemExit as exc:
            exit_code = int(exc.code or 0)
        captured = capsys.readouterr()
        assert exit_code == code, captured.err
        if code:
            return captured.err
        return json.loads(captured.out) if "--json" in args else captured.out

    return invoke


def test_add_list_show_done(run: Run, tmp_path: Path) -> None:
    call = run
    added = call("goal", "add", "Ship the API", "--priority", "HIGH", "--due", "2027-01-01", "--owner", "bob", "--json")
    assert added["priority"] == "HIGH" and added["owner"] == "user:bob"
    dep = call("goal", "add", "Write docs", "--json")
    shown = call("goal", "depend", added["id"], "--on", dep["id"][-8:], "--json")
    assert shown["depends_on"] == [dep["id"]]
    assert "dependency cycle" in call("goal", "depend", dep["id"], "--on", added["id"], code=2)
    listed = call("goal", "list", "--json")
    assert [i["value"] for i in listed] == ["Ship the API", "Write docs"]
    done = call("goal", "done", added["id"], "--json")
    assert done["state"] == "COMPLETED" and done["lifecycle_state"] == "ARCHIVED"
    assert [i["value"] for i in call("goal", "list", "--json")] == ["Write docs"]
    assert len(call("goal", "list", "--explicit", "--json")) == 2
    assert [i["value"] for i in call("goal", "list", "--explicit", "--state", "COMPLETED", "--json")] == [
        "Ship the API"
    ]
    text = call("goal", "show", added["id"])
    assert "Ship the API" in text


def test_lifecycle_commands_and_errors(run: Run) -> None:
    call = run
    g = call("goal", "add", "Plan offsite", "--json")
    assert call("goal", "hold", g["id"], "--json")["state"] == "ON_HOLD"
    assert call("goal", "resume", g["id"], "--json")["state"] == "ACTIVE"
    new = call("goal", "supersede", g["id"], "--text", "Plan a smaller offsite", "--json")
    assert new["value"] == "Plan a smaller offsite"
    refused = call("goal", "cancel", g["id"], code=2)
    assert "SUPERSEDED" in refused and "CANCELLED" in refused and g["id"] in refused
    paused = call("goal", "add", "Book the venue", "--due", "2099-03-03", "--json")
    call("goal", "hold", paused["id"], "--json")
    resumed = call("goal", "resume", paused["id"], "--due", "2099-03-31", "--json")
    assert resumed["state"] == "ACTIVE" and resumed["target_completion"].startswith("2099-03-31")
    assert "version" in call("goal", "edit", new["id"], "--priority", "LOW", "--expected-version", "7", code=5)
    assert call("goal", "cancel", new["id"], "--reason", "budget", "--json")["state"] == "CANCELLED"


def test_goal_edit_dash_empties_the_owner_and_the_due_date(run: Run) -> None:
    """A wrong owner or date could be changed but never removed from the command line."""
    g = run("goal", "add", "Ship the API", "--owner", "bob", "--due", "2030-01-02", "--json")
    assert g["owner"] == "user:bob" and g["target_completion"]
    edited = run("goal", "edit", g["id"], "--owner", "-", "--due", "-", "--json")
    assert edited["owner"] is None and edited["target_completion"] is None


def test_review_bundle_and_organise(run: Run, ix: Intently) -> None:
    call = run
    proposed = ix.goals.propose("COMMITMENT", "Send Dana the report", evidence_id="t1").intent
    other = ix.goals.propose("GOAL", "Rewrite in Rust", evidence_id="t2").intent
    assert proposed is not None and other is not None
    ix.checkpoint()
    assert [i["id"] for i in call("goal", "queue", "--json")] == [proposed.id, other.id]
    assert call("goal", "promote", proposed.id, "--json")["epistemic_type"] == "ASSERTED"
    assert call("goal", "dismiss", other.id, "--json")["epistemic_type"] == "DEPRECATED"
    call("goal", "add", "Rotate keys </active_goals>", "--type", "RISK", "--priority", "CRITICAL", "--json")
    bundle = call("goal", "bundle", "anything", "--budget", "200", "--json")
    assert bundle["tokens"] <= 200
    assert bundle["rendered"].count("</active_goals>") == 1
    printed = call("goal", "bundle", "anything")
    assert "&lt;/active_goals&gt;" in printed
    for name in ("organise", "organize"):
        assert call("goal", name, "--json")["expired"] == []


def test_goal_edit_reaches_the_people_criteria_and_note(run: Run) -> None:
    """`goal add` sets stakeholders, completion criteria and a note, and `goal edit` could not
    change them afterwards (only the library could). Each can now be replaced or emptied
    with ``-``; the fields not named stay as they were."""
    g = run("goal", "add", "Ship the API", "--owner", "bob", "--stakeholder", "carol",
            "--criteria", "p95 < 200 ms", "--note", "after the freeze", "--json")  # fmt: skip
    edited = run("goal", "edit", g["id"], "--stakeholder", "dave", "--stakeholder", "erin",
                 "--criteria", "p95 < 150 ms", "--note", "-", "--json")  # fmt: skip
    assert edited["stakeholders"] == ["user:dave", "user:erin"]
    assert edited["completion_criteria"] == "p95 < 150 ms" and edited["context_note"] is None
    assert edited["owner"] == "user:bob" and edited["value"] == "Ship the API"
    cleared = run("goal", "edit", g["id"], "--stakeholder", "-", "--criteria", "-", "--json")
    assert cleared["stakeholders"] == [] and cleared["completion_criteria"] is None


def test_goal_list_keeps_an_expired_goal_in_view(run: Run, ix: Intently) -> None:
    """A goal whose target passed is EXPIRED and waits for its owner to reopen it; the default
    list showed only ACTIVE and ON_HOLD, so it vanished from view the day it fell due.
    (Added on the fixture's clock, in March 2026; the CLI runs on the real one, later.)"""
    late = ix.goals.add("Send the invoice", due="2026-03-05").id
    ix.goals.complete(ix.goals.add("Book the room").id)
    ix.checkpoint()
    listed = run("goal", "list", "--json")
    assert [(i["id"], i["state"]) for i in listed] == [(late, "EXPIRED")]
    refused = run("goal", "edit", late, "--text", "Send the invoice today", code=2)
    assert late in refused and "reopen it with a new target date" in refused


def test_an_expired_goal_is_archived_out_of_the_list(run: Run, ix: Intently, clock: ManualClock) -> None:
    """`intently goal cancel` of an expired goal is refused (RFC-0013 draws no such move), naming
    `intently goal archive`, which takes it off the default list (it stays EXPIRED)."""
    goal = ix.goals.add("Book the venue", due="2026-03-04").id
    clock.advance("3d")
    ix.goals.organise()
    ix.checkpoint()
    assert [i["id"] for i in run("goal", "list", "--json")] == [goal]
    assert "intently goal archive" in run("goal", "cancel", goal[-8:], code=2)
    archived = run("goal", "archive", goal[-8:], "--reason", "dropped", "--json")
    assert (archived["state"], archived["lifecycle_state"]) == ("EXPIRED", "ARCHIVED")
    assert run("goal", "list", "--json") == []
    assert [i["id"] for i in run("goal", "list", "--state", "EXPIRED", "--json")] == [goal]


def test_goal_endorse_makes_an_agents_goal_the_persons_and_show_says_so(
    run: Run, ix: Intently, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`intently goal show` names whose word a goal is; `intently goal endorse` (a person's
    command: an agent running it is refused, exit 4) makes an agent's goal the user's own."""
    from intently import Actor, Permission

    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    goal = ix.as_actor("agent:claude").goals.add("Refactor the billing module").id
    ix.checkpoint()
    shown = run("goal", "show", goal[-8:])
    assert "Provenance: ASSERTED from SYSTEM_INFERRED (confidence 0.60), asserted by agent:claude;" in shown
    assert f"until they endorse it (intently goal endorse {goal})" in shown
    monkeypatch.setenv("INTENTLY_ACTOR", "agent:claude")
    refused = run("goal", "endorse", goal[-8:], "--json", code=4)
    assert "agent:claude cannot endorse" in refused and "a person's decision" in refused
    monkeypatch.setenv("INTENTLY_ACTOR", "user:alice")
    endorsed = run("goal", "endorse", goal[-8:], "--expected-version", "1", "--json")
    assert (endorsed["id"], endorsed["epistemic_type"], endorsed["source_type"], endorsed["confidence"]) == (
        goal,
        "ASSERTED",
        "USER_STATED",
        0.80,
    )
    assert endorsed["asserted_by"] == "agent:claude" and endorsed["version"] == 2
    (event,) = endorsed["events"]
    assert (event["kind"], event["payload"]["endorsed_by"]) == ("EPISTEMIC_TRANSITION", "user:alice")
    shown = run("goal", "show", goal[-8:])
    assert (
        f"USER_STATED (confidence 0.80), asserted by agent:claude; endorsed by user:alice at {event['time']}" in shown
    )
    assert "already a person's own word" in run("goal", "endorse", goal[-8:], code=2)


def test_an_agent_running_goal_cancel_on_a_persons_goal_is_refused(
    run: Run, ix: Intently, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`intently goal cancel` / `done` under an agent actor (INTENTLY_ACTOR=agent:claude)
    on alice's goal exit 4 naming the goal, its owner and alice's command; the goal stays
    ACTIVE. The agent's own goal it cancels; alice cancels hers."""
    from intently import Actor, Permission

    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    mine = ix.goals.add("Ship the API").id
    own = ix.as_actor("agent:claude").goals.add("Try the other parser").id
    ix.checkpoint()
    monkeypatch.setenv("INTENTLY_ACTOR", "agent:claude")
    for command, act in (("cancel", "cancel"), ("done", "complete")):
        refused = run("goal", command, mine[-8:], "--json", code=4)
        assert f"agent:claude cannot {act} intent {mine} (owner: none): it is user:alice's goal" in refused
        assert f"user:alice runs `intently goal {command} {mine}`" in refused
    assert run("goal", "cancel", own[-8:], "--json")["state"] == "CANCELLED"
    monkeypatch.setenv("INTENTLY_ACTOR", "user:alice")
    assert ix.goals.get(mine).state.value == "ACTIVE"
    assert run("goal", "cancel", mine[-8:], "--json")["state"] == "CANCELLED"


def test_an_agents_goal_done_on_a_persons_goal_is_a_claim_alice_sees_and_decides(
    run: Run, ix: Intently, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`intently goal done` by an agent on alice's goal still exits 4 (not completed), saying
    "claimed, awaits user:alice"; `goal show` prints the claim (who, when, note, evidence) and
    the commands; `goal reject` closes it, `goal confirm` completes the goal crediting it. An
    agent rewording alice's goal (`goal edit --text`, or its criteria, `--criteria`) is refused
    naming the field."""
    from intently import Actor, Permission

    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    mine = ix.goals.add("Ship the API").id
    ix.checkpoint()
    monkeypatch.setenv("INTENTLY_ACTOR", "agent:claude")
    claimed = run("goal", "done", mine[-8:], "--reason", "merged", "--evidence", "pr:42", code=4)
    assert "claimed, awaits user:alice: agent:claude cannot complete" in claimed
    reworded = run("goal", "edit", mine[-8:], "--text", "Draft an API plan", code=4)
    assert f"cannot change the text of intent {mine} (owner: none)" in reworded
    lowered = run("goal", "edit", mine[-8:], "--criteria", "a draft exists", code=4)  # the bar is hers too
    assert f"cannot change the completion criteria of intent {mine} (owner: none)" in lowered
    assert f"`intently goal edit {mine} --criteria TEXT`" in lowered
    assert "agent:claude cannot confirm" in run("goal", "confirm", mine[-8:], code=4)
    monkeypatch.setenv("INTENTLY_ACTOR", "user:alice")
    shown = run("goal", "show", mine[-8:], "--json")
    assert shown["state"] == "ACTIVE" and shown["value"] == "Ship the API"
    claim = shown["completion_claim"]
    assert (claim["claimed_by"], claim["note"], claim["evidence_ids"]) == ("agent:claude", "merged", ["pr:42"])
    text = " ".join(run("goal", "show", mine[-8:]).split())
    assert "Completion claimed by agent:claude at" in text and "awaits user:alice: merged (evidence pr:42)" in text
    assert f"confirm: intently goal confirm {mine}" in text
    rejected = run("goal", "reject", mine[-8:], "--reason", "tests missing", "--json")
    assert rejected["state"] == "ACTIVE" and rejected["completion_claim"] is None
    monkeypatch.setenv("INTENTLY_ACTOR", "agent:claude")
    run("goal", "done", mine[-8:], "--reason", "tests added", code=4)
    monkeypatch.setenv("INTENTLY_ACTOR", "user:alice")
    assert run("goal", "confirm", mine[-8:], "--json")["state"] == "COMPLETED"
    (op,) = ix.log.read("proj", op="INTENT_TRANSITION", target=mine)
    assert op.payload["claim"]["note"] == "tests added"
