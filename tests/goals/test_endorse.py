"""A person endorses a goal an agent added: it becomes their own word (RFC-0013 section 5).

An agent's goal is its reading of what the user wants (SYSTEM_INFERRED, 0.60). Before, the
person had no way to say "yes, that is mine": the goal stayed tagged as the agent's in every
context block, at the agent's confidence, for good. Endorsing is the review queue's
confirmation for an asserted intent, and, like it, a person's act only.
"""

from __future__ import annotations

import pytest

from intently import Actor, Intently, InvalidTransition, ManualClock, Permission, PermissionDenied
from intently.goals import EpistemicType, SourceType
from intently.mcp_server import acting_view
from tests._config import set_config


@pytest.fixture
def agent(ix: Intently) -> Intently:
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    return ix.as_actor("agent:claude")


def test_the_person_endorses_an_agents_goal_and_the_log_names_them(
    ix: Intently, agent: Intently, clock: ManualClock
) -> None:
    added = agent.goals.add("Refactor the billing module", priority="HIGH")
    assert (added.source_type, added.confidence) == (SourceType.SYSTEM_INFERRED, 0.60)
    clock.advance("1h")
    endorsed = ix.goals.endorse(added.id, expected_version=added.version)
    assert (endorsed.epistemic_type, endorsed.source_type, endorsed.confidence) == (
        EpistemicType.ASSERTED,
        SourceType.USER_STATED,
        0.80,
    )
    assert endorsed.version == added.version + 1 and endorsed.asserted_by == "agent:claude"  # who added it stays
    (op,) = ix.log.read("proj", op="EPISTEMIC_TRANSITION", target=added.id)
    assert (op.actor, op.time) == ("user:alice", "2026-03-02T10:00:00.000000Z")
    assert op.payload == {
        "from_type": "ASSERTED",
        "to_type": "ASSERTED",
        "reason": "endorsed by user:alice",
        "evidence_ids": [f"stated:{added.id}"],
        "triggered_by": "user:alice",
        "trigger_type": "user_correction",
        "confidence_from": 0.60,
        "confidence_to": 0.80,
        "source_type": "USER_STATED",
        "lifecycle_state": "ACTIVE",
        "version": endorsed.version,
        "source_from": "SYSTEM_INFERRED",
        "endorsed_by": "user:alice",
    }
    # shown with the intent (goal show, GET .../goals/ID): who endorsed it, and when
    (event,) = ix.goals.get(added.id).events
    assert (event["kind"], event["time"], event["payload"]["endorsed_by"]) == (
        "EPISTEMIC_TRANSITION",
        "2026-03-02T10:00:00.000000Z",
        "user:alice",
    )
    # the context block no longer calls it the agent's reading
    (line,) = [x for x in ix.goals.bundle("").render().splitlines() if "billing" in x]
    assert "source=" not in line


@pytest.mark.parametrize("who", ["agent:claude", "for alice", "for alice, agents may review"])
def test_no_agent_endorses_not_even_one_acting_for_the_person(ix: Intently, agent: Intently, who: str) -> None:
    added = agent.goals.add("Refactor the billing module")
    if who == "agent:claude":
        actor = agent
    else:
        if who.endswith("review"):  # the review opt-in lets agents confirm candidates, not speak for the user
            set_config(ix.home.config_path, "review", "agents_may_review", "true")
            ix = Intently.open(ix.home.path, actor=ix.actor, clock=ix.runtime.clock)
        actor = acting_view(ix)
    with pytest.raises(PermissionDenied, match=r"cannot endorse .*a person's decision.*intently goal endorse"):
        actor.goals.endorse(added.id)
    kept = ix.goals.get(added.id)
    assert (kept.source_type, kept.confidence, kept.version) == (SourceType.SYSTEM_INFERRED, 0.60, 1)
    assert ix.log.read("proj", op="EPISTEMIC_TRANSITION") == []


def test_what_cannot_be_endorsed_is_refused_naming_why(ix: Intently, agent: Intently) -> None:
    mine = ix.goals.add("Ship the API")
    with pytest.raises(InvalidTransition, match="already a person's own word"):
        ix.goals.endorse(mine.id)
    done = agent.goals.add("Rename the module")
    agent.goals.complete(done.id)
    with pytest.raises(InvalidTransition, match=r"COMPLETED.*keeps the record it closed with"):
        ix.goals.endorse(done.id)
    dropped = ix.goals.propose("GOAL", "Rewrite everything in Rust", evidence_id="turn-1").intent
    assert dropped is not None
    ix.goals.dismiss(dropped.id)
    with pytest.raises(InvalidTransition, match="dismissed"):
        ix.goals.endorse(dropped.id)
    assert [o.payload["to_type"] for o in ix.log.read("proj", op="EPISTEMIC_TRANSITION")] == ["DEPRECATED"]


def test_endorsing_a_candidate_is_confirming_it(ix: Intently) -> None:
    candidate = ix.goals.propose("COMMITMENT", "Send Dana the report", evidence_id="turn-1").intent
    assert candidate is not None
    endorsed = ix.goals.endorse(candidate.id)
    assert (endorsed.epistemic_type, endorsed.source_type, endorsed.confidence) == (
        EpistemicType.ASSERTED,
        SourceType.USER_STATED,
        0.80,
    )
    (op,) = ix.log.read("proj", op="EPISTEMIC_TRANSITION")
    assert (op.payload["from_type"], op.payload["reason"]) == ("INFERRED", "confirmed by the user")
    assert ix.goals.review_queue() == []


def test_an_expired_agents_goal_is_endorsed_and_stays_expired(
    ix: Intently, agent: Intently, clock: ManualClock
) -> None:
    added = agent.goals.add("Book the venue", due="2026-03-04")
    clock.advance("3d")
    endorsed = ix.goals.endorse(added.id)
    assert (endorsed.state.value, endorsed.source_type) == ("EXPIRED", SourceType.USER_STATED)
