"""An agent's completion of a person's goal is kept as a claim the person confirms or rejects.

Before, it was refused outright: the agent that did the work had no way to say so that
stayed with the goal, and the person saw nothing. Now the claim is logged (the agent its
actor, its note and evidence in the payload), shown with the goal, and the goal stays ACTIVE
until the person decides. The agent's call still does not succeed (``CompletionClaimed`` is a
``PermissionDenied``), so a caller that relied on the refusal still learns it did not complete.
"""

from __future__ import annotations

import pytest

from intently import Actor, Intently, Permission, PermissionDenied
from intently.core.errors import InvalidTransition
from intently.goals import CompletionClaimed, IntentState


def _agent(ix: Intently, who: str = "agent:claude") -> Intently:
    if who == "agent:mcp for user:alice":
        return ix.as_actor(Actor.delegate("mcp", ix.actor))
    ix.access.grant(Actor.parse(who), Permission.WRITE)
    return ix.as_actor(who)


@pytest.mark.parametrize("who", ["agent:claude", "agent:mcp for user:alice", "tool:ci"])
def test_an_agents_completion_is_kept_as_a_claim_the_goal_stays_active(ix: Intently, who: str) -> None:
    goal = ix.goals.add("Ship the API", priority="HIGH")
    agent = _agent(ix, who)
    with pytest.raises(PermissionDenied) as refused:  # what a caller relying on the refusal catches
        agent.goals.complete(goal.id, reason="merged in #42", evidence_ids=["pr:42"])
    exc = refused.value
    assert isinstance(exc, CompletionClaimed) and exc.awaits == "user:alice"
    assert str(exc).startswith(f"claimed, awaits user:alice: {who} cannot complete intent {goal.id}")
    assert exc.intent.state is IntentState.ACTIVE
    kept = ix.goals.get(goal.id)
    assert kept.state is IntentState.ACTIVE and kept.version == 2
    claim = kept.completion_claim
    assert claim is not None
    assert (claim["claimed_by"], claim["note"], claim["evidence_ids"], claim["awaits"]) == (
        who,
        "merged in #42",
        ["pr:42"],
        "user:alice",
    )
    assert kept.to_json()["completion_claim"] == claim
    (op,) = ix.log.read("proj", op="COMPLETION_CLAIMED", target=goal.id)
    assert op.actor == who and op.payload["note"] == "merged in #42"
    # lists carry it too (the console board and `goal list --json` read lists)
    (listed,) = [g for g in ix.goals.list_intents() if g.id == goal.id]
    assert listed.completion_claim == claim


def test_the_person_confirms_and_the_completion_credits_the_claim(ix: Intently) -> None:
    goal = ix.goals.add("Ship the API")
    agent = _agent(ix)
    claimed = agent.goals.claim_completion(goal.id, note="deployed", evidence_ids=["deploy:7"])
    assert claimed.state is IntentState.ACTIVE and claimed.completion_claim is not None
    with pytest.raises(PermissionDenied, match="only a person decides"):
        agent.goals.confirm_completion(goal.id)
    assert ix.goals.get(goal.id).state is IntentState.ACTIVE
    done = ix.goals.confirm_completion(goal.id, expected_version=claimed.version)
    assert done.state is IntentState.COMPLETED and done.completion_claim is None
    (op,) = ix.log.read("proj", op="INTENT_TRANSITION", target=goal.id)
    assert op.actor == "user:alice"
    assert op.payload["claim"] == {
        "id": claimed.completion_claim["id"],
        "claimed_by": "agent:claude",
        "note": "deployed",
    }


def test_the_person_rejects_and_the_goal_stays(ix: Intently) -> None:
    goal = ix.goals.add("Ship the API")
    agent = _agent(ix)
    with pytest.raises(CompletionClaimed):
        agent.goals.complete(goal.id)
    with pytest.raises(PermissionDenied):
        agent.goals.reject_completion(goal.id)
    kept = ix.goals.reject_completion(goal.id, reason="the docs are not written")
    assert kept.state is IntentState.ACTIVE and kept.completion_claim is None
    (op,) = ix.log.read("proj", op="COMPLETION_CLAIM_REJECTED", target=goal.id)
    assert op.actor == "user:alice" and op.payload["reason"] == "the docs are not written"
    with pytest.raises(InvalidTransition, match="no completion claim is open"):
        ix.goals.confirm_completion(goal.id)
    # nothing changed the goal's end: the person still completes it when they choose
    assert ix.goals.complete(goal.id).state is IntentState.COMPLETED


def test_a_person_completing_a_claimed_goal_credits_the_claim(ix: Intently) -> None:
    goal = ix.goals.add("Ship the API")
    with pytest.raises(CompletionClaimed):
        _agent(ix).goals.complete(goal.id, reason="done")
    ix.goals.complete(goal.id)
    (op,) = ix.log.read("proj", op="INTENT_TRANSITION", target=goal.id)
    assert op.payload["claim"]["claimed_by"] == "agent:claude"


def test_claims_are_for_a_persons_goal_the_agent_could_not_close(ix: Intently) -> None:
    agent = _agent(ix)
    own = agent.goals.add("Refactor billing")
    with pytest.raises(InvalidTransition, match="may complete it itself"):
        agent.goals.claim_completion(own.id)
    assert agent.goals.complete(own.id).state is IntentState.COMPLETED  # its own: as before
    mine = ix.goals.add("Ship the API")
    ix.goals.hold(mine.id)
    with pytest.raises(InvalidTransition):  # a goal on hold cannot be completed, so not claimed
        agent.goals.claim_completion(mine.id)


def test_an_agent_cannot_reword_a_persons_goal_but_may_hold_it_and_the_log_says_who(ix: Intently) -> None:
    goal = ix.goals.add("Ship the API by Friday")
    agent = _agent(ix)
    with pytest.raises(PermissionDenied) as refused:
        agent.goals.edit(goal.id, text="Draft an API plan")
    assert f"agent:claude cannot change the text of intent {goal.id} (owner: none): it is user:alice's goal" in str(
        refused.value
    )
    assert ix.goals.get(goal.id).value == "Ship the API by Friday"
    assert agent.goals.edit(goal.id, priority="HIGH").priority.value == "HIGH"  # reversible: allowed
    agent.goals.hold(goal.id, reason="waiting on review")
    agent.goals.resume(goal.id)
    shown = [(e["kind"], e["payload"].get("to_state"), e["payload"].get("by")) for e in ix.goals.get(goal.id).events]
    assert shown == [("INTENT_TRANSITION", "ON_HOLD", "agent:claude"), ("INTENT_TRANSITION", "ACTIVE", "agent:claude")]
    own = agent.goals.add("Refactor billing")
    assert agent.goals.edit(own.id, text="Refactor billing and tests").value == "Refactor billing and tests"
    assert ix.goals.edit(goal.id, text="Ship the API by Monday").value == "Ship the API by Monday"


def test_the_context_block_says_a_goal_is_claimed_and_still_active(ix: Intently) -> None:
    """Agents reading the block see the goal is still to be pursued and that a claim awaits the
    person, so none redoes the work or takes it as completed."""
    goal = ix.goals.add("Ship the API", priority="HIGH")
    _agent(ix).goals.claim_completion(goal.id, note="merged")
    (line,) = [ln for ln in ix.goals.bundle("ship the API").render().splitlines() if "Ship the API" in ln]
    assert 'state="ACTIVE"' in line and 'completion_claimed="by agent:claude, awaits user:alice"' in line
    ix.goals.reject_completion(goal.id)
    (line,) = [ln for ln in ix.goals.bundle("ship the API").render().splitlines() if "Ship the API" in ln]
    assert "completion_claimed" not in line
