"""Who states an intent decides its source: a person's add is USER_STATED, an agent's is not.

RFC-0001's source types and the RFC-0003 initial-confidence table (``CONFIDENCE_TABLE``):
ASSERTED from USER_STATED is 0.80, from SYSTEM_INFERRED 0.60. An agent adding a goal (alone or
acting for a person through the MCP server) was recorded as USER_STATED at 0.80 and shown in
the context block like the user's own word.
"""

from __future__ import annotations

import pytest

from intently import Actor, Intently, InvalidInput, Permission, PermissionDenied
from intently.goals import EpistemicType, SourceType


@pytest.fixture
def agent(ix: Intently) -> Intently:
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    return ix.as_actor("agent:claude")


def test_a_persons_add_is_user_stated_and_an_agents_is_system_inferred(ix: Intently, agent: Intently) -> None:
    mine = ix.goals.add("Ship the API", priority="HIGH")
    assert (mine.source_type, mine.confidence) == (SourceType.USER_STATED, 0.80)
    theirs = agent.goals.add("Refactor the billing module", priority="HIGH")
    assert theirs.epistemic_type is EpistemicType.ASSERTED
    assert (theirs.source_type, theirs.confidence) == (SourceType.SYSTEM_INFERRED, 0.60)
    assert theirs.asserted_by == "agent:claude"
    (create,) = [o for o in ix.log.read("proj", op="INTENT_CREATE") if o.target == theirs.id]
    assert create.payload["intent"]["source_type"] == "SYSTEM_INFERRED"
    assert create.payload["intent"]["confidence"] == 0.60


def test_an_agent_acting_for_a_person_is_not_that_person(ix: Intently) -> None:
    """``agent:mcp for user:alice`` holds alice's permissions, not her word."""
    delegated = ix.as_actor(Actor.delegate("mcp", ix.actor))
    intent = delegated.goals.add("Answer the auditors", type="COMMITMENT")
    assert (intent.source_type, intent.confidence) == (SourceType.SYSTEM_INFERRED, 0.60)
    ids = delegated.goals.add_many([{"text": "Renew the certificate"}])
    assert delegated.goals.get(ids[0]).source_type is SourceType.SYSTEM_INFERRED
    replacement = delegated.goals.supersede(intent.id, text="Answer the auditors by mail")
    assert replacement.source_type is SourceType.SYSTEM_INFERRED


def test_an_agent_cannot_claim_the_users_word(agent: Intently) -> None:
    for claimed in ("USER_STATED", "user_demonstrated"):
        with pytest.raises(InvalidInput, match=r"source_type: agent:claude cannot record an intent as USER_"):
            agent.goals.add("Delete the staging database", source_type=claimed)
        with pytest.raises(InvalidInput, match="source_type"):
            agent.goals.add_many([{"text": "Delete the staging database", "source_type": claimed}])
    assert agent.goals.list_intents() == []
    # a source that is the agent's to give is kept
    assert agent.goals.add("Read the RFC", source_type="EXTERNAL_DOCUMENT").source_type is SourceType.EXTERNAL_DOCUMENT


def test_a_tool_states_tool_output(ix: Intently) -> None:
    ix.access.grant(Actor.parse("tool:ci"), Permission.WRITE)
    intent = ix.as_actor("tool:ci").goals.add("Fix the flaky test", type="FOLLOW_UP")
    assert (intent.source_type, intent.confidence) == (SourceType.TOOL_OUTPUT, 0.70)


def test_the_block_says_which_goals_are_not_the_users_word(ix: Intently, agent: Intently) -> None:
    ix.goals.add("Ship the API", priority="HIGH")
    agent.goals.add("Refactor the billing module", priority="HIGH")
    lines = ix.goals.bundle("").render().splitlines()
    (mine,) = [line for line in lines if "Ship the API" in line]
    (theirs,) = [line for line in lines if "Refactor the billing module" in line]
    assert "source=" not in mine
    assert 'source="SYSTEM_INFERRED"' in theirs
    block = ix.context("what next?").text
    assert 'source="SYSTEM_INFERRED">Refactor the billing module</goal>' in block


def test_review_rules_stay_a_persons(ix: Intently, agent: Intently) -> None:
    """An agent's own goal is not a candidate: it can work it like any goal it added; a
    candidate stays a person's to confirm, and the person's confirmation is USER_STATED."""
    own = agent.goals.add("Refactor the billing module")
    assert agent.goals.complete(own.id).state.value == "COMPLETED"
    proposed = ix.goals.propose("GOAL", "Cut the release", evidence_id="turn-1").intent
    assert proposed is not None
    with pytest.raises(PermissionDenied, match="intently review"):
        agent.goals.promote(proposed.id)
    assert ix.goals.promote(proposed.id).source_type is SourceType.USER_STATED
