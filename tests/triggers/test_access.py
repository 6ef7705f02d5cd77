"""Who may create, confirm, see and cancel; proposals wait in pending until confirmed."""

from __future__ import annotations

import json

import pytest

from intently import Intently, InvalidTransition, NotFound, PermissionDenied
from intently.triggers import IntentState

from .conftest import ops


def test_a_writer_only_proposes_and_a_manager_confirms(team: Intently) -> None:
    bob, carol = team.as_actor("user:bob").triggers, team.as_actor("user:carol").triggers
    proposal = bob.add("Check the rollback owner", when=["launch checklist"])
    assert proposal.state is IntentState.PENDING
    assert bob.test("launch checklist").hits == ()  # pending never fires
    assert [i.id for i in carol.list()] == [proposal.id]  # managers see proposals to review
    with pytest.raises(PermissionDenied):
        bob.confirm(proposal.id)
    armed = carol.confirm(proposal.id)
    assert armed.state is IntentState.ARMED and armed.confirmed_by == "user:carol"
    assert [h.id for h in bob.test("launch checklist").shown] == [proposal.id]
    with pytest.raises(InvalidTransition):
        carol.confirm(proposal.id)
    assert ops(team) == ["TRIGGER_CREATE", "TRIGGER_CONFIRM"]


def test_extraction_always_proposes(team: Intently) -> None:
    intent = team.triggers.propose("Ask about the budget", when=["budget review"])
    assert intent.state is IntentState.PENDING and intent.source == "extraction"


def test_a_reader_may_match_but_not_create(team: Intently) -> None:
    dave = team.as_actor("user:dave").triggers
    with pytest.raises(PermissionDenied):
        dave.add("x", when=["launch"])
    team.triggers.add("owner's", when=["launch"])
    assert [h.reminder for h in dave.match("launch").shown] == ["owner's"]


def test_list_and_cancel_are_scoped_to_what_the_caller_may_see(team: Intently) -> None:
    alice, bob, carol = team.triggers, team.as_actor("user:bob").triggers, team.as_actor("user:carol").triggers
    mine = carol.add("carol's", when=["launch"])
    for_bob = alice.add("for bob", when=["deploy"], scope=["sender:user:bob"])
    private = alice.add("alice's", when=["budget"])
    assert {i.id for i in carol.list()} == {mine.id}
    assert {i.id for i in bob.list()} == {for_bob.id}
    assert {i.id for i in alice.list()} == {mine.id, for_bob.id, private.id}  # the owner sees all
    with pytest.raises(NotFound):
        carol.show(private.id)
    with pytest.raises(NotFound):
        carol.cancel(private.id)
    with pytest.raises(PermissionDenied):
        bob.cancel(for_bob.id)  # visible, but bob cannot manage reminders
    assert alice.show(private.id).state is IntentState.ARMED


def test_a_proposer_may_withdraw_its_own_proposal(team: Intently) -> None:
    bob = team.as_actor("user:bob").triggers
    proposal = bob.add("x", when=["launch"])
    assert bob.cancel(proposal.id).state is IntentState.CANCELLED


def test_outsiders_get_not_found(team: Intently) -> None:
    eve = team.as_actor("user:eve").triggers
    intent = team.triggers.add("x", when=["launch"])
    for call in (lambda: eve.list(), lambda: eve.show(intent.id), lambda: eve.match("launch")):
        with pytest.raises(NotFound):
            call()


def test_a_turn_does_not_disclose_intents_the_caller_may_neither_see_nor_fire(team: Intently) -> None:
    """`trigger test` / `match` report what may fire on the caller's turn, and nothing else of
    what the caller may not see: another person's sender-scoped reminder used to come back
    as an "out of scope" hit with its text, id and scope, although `show` says it does not exist."""
    alice, bob, dave = team.triggers, team.as_actor("user:bob").triggers, team.as_actor("user:dave").triggers
    private = alice.add("Bob's salary review is due", when=["launch checklist"], scope="sender:user:bob")
    ops_only = alice.add("Page the ops lead", when=["launch checklist"], scope="channel:ops")
    quiet = alice.add("Snoozed reminder", when=["launch checklist"])
    alice.snooze(quiet.id, "2d")
    everyone = alice.add("Confirm the rollback owner", when=["launch checklist"])
    with pytest.raises(NotFound):
        dave.show(private.id)
    for result in (dave.test("the launch checklist"), dave.match("the launch checklist")):
        assert [h.id for h in result.hits] == [everyone.id]  # fires for anyone: shown
        assert "salary" not in json.dumps(result.to_json())
    # Those who may see an intent still learn why it did not fire on this turn.
    assert {h.id: h.reason for h in bob.test("the launch checklist").hits if not h.shown} == {
        private.id: "out of scope (sender:user:bob)"
    }
    reasons = {h.id: h.reason for h in alice.test("the launch checklist").hits}
    assert reasons[private.id].startswith("out of scope") and reasons[ops_only.id].startswith("out of scope")
    assert reasons[quiet.id].startswith("snoozed until")
    # An intent in scope of the caller's turn still fires for a caller who cannot list it.
    assert [h.id for h in dave.match("launch checklist again", channel="ops").shown] == [ops_only.id]


def test_a_person_sees_the_reminders_their_agent_made_for_them(team: Intently) -> None:
    """The MCP server acts as `agent:mcp for user:carol`; a reminder it makes is recorded as the
    agent's, and Carol (no admin) must still find, match and cancel it as her own, while another
    member does not see it."""
    from intently.core.actors import Actor

    carol = team.as_actor("user:carol")
    agent = team.as_actor(Actor.delegate("mcp", Actor.parse("user:carol")))
    made = agent.triggers.add("Ask Dana about the rollback plan", when=["launch"])
    assert made.creator == "agent:mcp for user:carol"
    assert [i.id for i in carol.triggers.list()] == [made.id]
    assert [h.id for h in carol.triggers.test("launch day").shown] == [made.id]
    assert team.as_actor("user:bob").triggers.list() == []
    with pytest.raises(NotFound):
        team.as_actor("user:bob").triggers.cancel(made.id)
    assert carol.triggers.cancel(made.id).state is IntentState.CANCELLED


def test_a_reader_cannot_report_a_turn_as_another_sender(team: Intently) -> None:
    """``sender`` decides which sender-scoped reminders fire. Any reader used to pass
    ``sender="user:bob"`` and spend Bob's reminder (and read its text); naming a sender other
    than oneself now needs manage-reminders, the permission a harness relaying a group chat holds."""
    alice = team.triggers
    for_bob = alice.add("Bob: confirm the rollback owner", when=["launch checklist"], scope="sender:user:bob")
    dave = team.as_actor("user:dave").triggers
    for call in (dave.match, dave.test):
        with pytest.raises(PermissionDenied, match=r"sender 'user:bob'.*manage-reminders"):
            call("the launch checklist", sender="user:bob")
    assert alice.show(for_bob.id).fire_count == 0 and ops(team) == ["TRIGGER_CREATE"]
    # Reporting one's own turn needs nothing more than read.
    assert not dave.match("the launch checklist", sender="user:dave").shown
    # Bob's own turn fires it, and so does his agent's (it acts for him).
    from intently.core.actors import Actor

    agent = team.as_actor(Actor.delegate("mcp", Actor.parse("user:bob"))).triggers
    assert [h.id for h in agent.test("the launch checklist", sender="user:bob").shown] == [for_bob.id]
    with pytest.raises(PermissionDenied, match="sender 'user:eve'"):
        agent.test("the launch checklist", sender="user:eve")
    # A reminder manager (a harness that knows who spoke in a group chat) relays others' turns.
    carol = team.as_actor("user:carol").triggers
    assert [h.id for h in carol.test("the launch checklist", sender="user:bob").shown] == [for_bob.id]
    bob = team.as_actor("user:bob").triggers
    assert [h.id for h in bob.match("launch checklist", sender="user:bob").shown] == [for_bob.id]
    assert alice.show(for_bob.id).fire_count == 1
