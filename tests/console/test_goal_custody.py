"""The goals board: a person cancels a goal (after a confirmation), decides an agent's
completion claim, and sees who endorsed a goal and when; an agent's session gets none of these.

Before, the board had no Cancel (only the CLI and the API did), showed nothing of an agent's
claim that a person's goal was done (the library refused it outright), and said "endorsed"
without by whom or when, which `intently goal show` says.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from intently import Actor, Permission
from intently.goals import CompletionClaimed, IntentState
from intently.server import TokenStore

from .conftest import Served, open_tab
from .test_goal_provenance import _login, post_form

pytestmark = pytest.mark.timeout(120)


def _card(page: Any, kind: str, text: str) -> Any:
    return page.get_by_role("article", name=f"{kind}: {text}", exact=True)


def test_a_person_cancels_a_goal_after_confirming(tab: Any, fresh: Served) -> None:
    ix = fresh.ix
    question = next(g for g in ix.goals.list_intents() if g.value == "Which region hosts the ledger?")
    _login(tab, fresh, fresh.tokens["user:alice"])
    answers = iter([False, True])
    asked: list[str] = []

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.accept() if next(answers) else dialog.dismiss()

    tab.on("dialog", answer)
    button = tab.get_by_role("button", name="Cancel: Which region hosts the ledger?")
    button.click()  # "no": nothing is sent
    tab.wait_for_timeout(300)
    assert ix.goals.get(question.id).state is IntentState.ACTIVE
    assert asked and "Which region hosts the ledger?" in asked[0]
    button.click()
    tab.wait_for_selector(".flash.ok:has-text('Cancelled')")
    assert ix.goals.get(question.id).state is IntentState.CANCELLED
    (op,) = ix.log.read("proj", op="INTENT_TRANSITION", target=question.id)
    assert op.actor == "user:alice" and op.payload["to_state"] == "CANCELLED"
    assert tab.get_by_role("button", name="Cancel: Which region hosts the ledger?").count() == 0


def test_a_person_confirms_or_rejects_an_agents_completion_claim(tab: Any, fresh: Served) -> None:
    ix = fresh.ix
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    agent = ix.as_actor("agent:claude").goals
    launch = next(g for g in ix.goals.list_intents() if g.value == "Ship the billing v2 launch")
    question = next(g for g in ix.goals.list_intents() if g.value == "Which region hosts the ledger?")
    with pytest.raises(CompletionClaimed):
        agent.complete(launch.id, reason="deployed to production", evidence_ids=["deploy:88"])
    agent.claim_completion(question.id, note="eu-west, per the infra doc")
    ix.checkpoint()
    _login(tab, fresh, fresh.tokens["user:alice"])

    claim = _card(tab, "GOAL", "Ship the billing v2 launch").locator(".claim").inner_text()
    assert "Completion claimed by agent:claude" in claim and "awaits user:alice" in claim
    assert "deployed to production" in claim and "deploy:88" in claim
    tab.get_by_role("button", name="Confirm done: Ship the billing v2 launch").click()
    tab.wait_for_selector(".flash.ok:has-text('Confirmed')")
    done = ix.goals.get(launch.id)
    assert done.state is IntentState.COMPLETED
    (op,) = ix.log.read("proj", op="INTENT_TRANSITION", target=launch.id)
    assert op.actor == "user:alice" and op.payload["claim"]["claimed_by"] == "agent:claude"

    tab.get_by_role("button", name="Reject claim: Which region hosts the ledger?").click()
    tab.wait_for_selector(".flash.ok:has-text('Rejected')")
    kept = ix.goals.get(question.id)
    assert kept.state is IntentState.ACTIVE and kept.completion_claim is None
    assert _card(tab, "OPEN QUESTION", "Which region hosts the ledger?").locator(".claim").count() == 0


def test_an_agents_session_is_offered_no_cancel_and_no_claim_decision(tab: Any, fresh: Served) -> None:
    ix = fresh.ix
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    agent = ix.as_actor("agent:claude").goals
    launch = next(g for g in ix.goals.list_intents() if g.value == "Ship the billing v2 launch")
    agent.claim_completion(launch.id, note="deployed")
    agent.add("Refactor the billing module")
    ix.checkpoint()
    _login(tab, fresh, TokenStore(ix).create("agent:claude").token)
    assert tab.get_by_role("button", name=re.compile("^Cancel: ")).count() == 0  # not even its own
    assert tab.get_by_role("button", name=re.compile("^(Confirm done|Reject claim): ")).count() == 0
    # the claim is shown to it too: it can see its word was kept
    assert "Completion claimed by agent:claude" in _card(tab, "GOAL", "Ship the billing v2 launch").inner_text()
    csrf = tab.locator('meta[name="csrf-token"]').get_attribute("content")
    version = ix.goals.get(launch.id).version
    for path in (f"goals/{launch.id}/cancel", f"goals/{launch.id}/claim/confirm"):
        with tab.expect_navigation():
            post_form(tab, f"/ns/proj/{path}", csrf, version)
        refused = tab.locator("div.flash.error").inner_text()
        assert refused.startswith("PermissionDenied: agent:claude cannot"), refused
    assert ix.goals.get(launch.id).state is IntentState.ACTIVE


def test_an_endorsed_card_names_who_endorsed_it_and_when(tab: Any, fresh: Served) -> None:
    ix = fresh.ix
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    theirs = ix.as_actor("agent:claude").goals.add("Refactor the billing module")
    ix.goals.endorse(theirs.id)
    ix.checkpoint()
    (event,) = [e for e in ix.goals.get(theirs.id).events if e["kind"] == "EPISTEMIC_TRANSITION"]
    _login(tab, fresh, fresh.tokens["user:alice"])
    provenance = _card(tab, "GOAL", "Refactor the billing module").locator(".provenance").inner_text()
    when = event["time"]
    assert f"endorsed by user:alice {when[:10]} {when[11:16]} UTC" in provenance, provenance


def test_a_card_names_who_held_a_goal_and_who_resumed_it(tab: Any, fresh: Served) -> None:
    """An agent with write access may hold a person's goal (reversible), and `goal show` and
    the API say who did, but the board's card said nothing: the goal just moved to ON HOLD.
    The card now names who held it, when and why, and, once resumed, who resumed it."""
    ix = fresh.ix
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    launch = next(g for g in ix.goals.list_intents() if g.value == "Ship the billing v2 launch")
    held = ix.as_actor("agent:claude").goals.hold(launch.id, reason="waiting on the security review")
    assert held.hold is not None and held.hold["by"] == "agent:claude"  # what the API and --json carry
    ix.checkpoint()
    (event,) = [e for e in ix.goals.get(launch.id).events if e["payload"].get("to_state") == "ON_HOLD"]
    when = event["time"]
    _login(tab, fresh, fresh.tokens["user:alice"])
    card = (
        tab.locator("#col-ON_HOLD").locator("xpath=..").get_by_role("article", name="GOAL: Ship the billing v2 launch")
    )
    shown = card.locator(".hold").inner_text()
    assert shown == f"held by agent:claude {when[:10]} {when[11:16]} UTC: waiting on the security review", shown

    ix.goals.resume(launch.id)
    ix.checkpoint()
    tab.reload()
    resumed = _card(tab, "GOAL", "Ship the billing v2 launch").locator(".hold").inner_text()
    assert resumed.startswith("resumed by user:alice "), resumed
    other = _card(tab, "OPEN QUESTION", "Which region hosts the ledger?")
    assert other.locator(".hold").count() == 0  # never held: nothing to say


def test_an_agents_session_claims_a_persons_goal_done_with_a_note_and_the_person_decides(
    tab: Any, browser: Any, fresh: Served
) -> None:
    """An agent's session had no way on the board to say a person's goal was done: Complete was
    (rightly) not offered, and nothing took its place. It is offered **Claim done** with a note
    on the person's goal (Complete still on its own), the claim shows on the card with the
    note, the goal stays ACTIVE, and the person's session confirms it from the card."""
    ix = fresh.ix
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    launch = next(g for g in ix.goals.list_intents() if g.value == "Ship the billing v2 launch")
    ix.as_actor("agent:claude").goals.add("Refactor the billing module")
    ix.checkpoint()
    _login(tab, fresh, TokenStore(ix).create("agent:claude").token)
    assert tab.get_by_role("button", name="Complete: Ship the billing v2 launch").count() == 0  # alice's
    assert tab.get_by_role("button", name="Claim done: Refactor the billing module").count() == 0  # its own
    assert tab.get_by_role("button", name="Complete: Refactor the billing module").count() == 1
    card = _card(tab, "GOAL", "Ship the billing v2 launch")
    card.get_by_label("What was done").fill("deployed to production, smoke tests green")
    card.get_by_role("button", name="Claim done: Ship the billing v2 launch").click()
    tab.wait_for_selector(".flash.ok:has-text('Claimed')")
    kept = ix.goals.get(launch.id)
    assert kept.state is IntentState.ACTIVE and kept.completion_claim is not None
    assert (kept.completion_claim["claimed_by"], kept.completion_claim["note"]) == (
        "agent:claude",
        "deployed to production, smoke tests green",
    )
    (op,) = ix.log.read("proj", op="COMPLETION_CLAIMED", target=launch.id)
    assert op.actor == "agent:claude"
    shown = _card(tab, "GOAL", "Ship the billing v2 launch").locator(".claim").inner_text()
    assert "Completion claimed by agent:claude" in shown and "smoke tests green" in shown

    for alice in open_tab(browser):
        _login(alice, fresh, fresh.tokens["user:alice"])
        assert "smoke tests green" in _card(alice, "GOAL", "Ship the billing v2 launch").locator(".claim").inner_text()
        alice.get_by_role("button", name="Confirm done: Ship the billing v2 launch").click()
        alice.wait_for_selector(".flash.ok:has-text('Confirmed')")
    assert ix.goals.get(launch.id).state is IntentState.COMPLETED
