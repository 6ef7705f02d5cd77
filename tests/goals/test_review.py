"""The review queue: proposals are INFERRED at 0.55; attach, suppress, promote, dismiss; decisions."""

from __future__ import annotations

import pytest

from intently import Intently, InvalidInput, InvalidTransition, ManualClock
from intently.goals import CLEAR, EpistemicType, Goals, SourceType
from tests._config import set_config


def test_a_proposal_waits_for_review_as_inferred(goals: Goals) -> None:
    """Conformance (RFC-0013 section 11): "Extracted intents MUST use INFERRED epistemic type"."""
    result = goals.propose("COMMITMENT", "I will send the report to Dana", evidence_id="turn-7", span="12:44")
    assert result.status == "created"
    intent = result.intent
    assert intent is not None
    assert intent.epistemic_type is EpistemicType.INFERRED
    assert intent.source_type is SourceType.SYSTEM_INFERRED
    assert intent.confidence == 0.55
    assert intent.origin == "conversation"
    assert intent.evidence_ids == ("turn-7",)
    assert [i.id for i in goals.review_queue()] == [intent.id]


def test_a_restatement_attaches_evidence_instead_of_duplicating(goals: Goals) -> None:
    stated = goals.add("Ship the API by Friday", type="GOAL")
    result = goals.propose("GOAL", "I'll ship the API by Friday!", evidence_id="turn-9")
    assert result.status == "attached"
    assert result.intent is not None and result.intent.id == stated.id
    assert goals.get(stated.id).evidence_ids == (f"stated:{stated.id}", "turn-9")
    assert goals.get(stated.id).version == 2
    # Different type, or a genuinely different goal: a new candidate.
    assert goals.propose("RISK", "Ship the API by Friday", evidence_id="turn-9").status == "created"
    assert goals.propose("GOAL", "Ship the billing API by Friday", evidence_id="turn-9").status == "created"


def test_a_restatement_of_a_goal_on_hold_attaches_to_it(goals: Goals) -> None:
    """On hold is still live: the goal mentioned again is evidence for it, not a second candidate."""
    held = goals.add("Migrate the billing service to Postgres", type="GOAL")
    goals.hold(held.id, reason="waiting on budget")
    result = goals.propose("GOAL", "We want to migrate the billing service to Postgres", evidence_id="turn-5")
    assert result.status == "attached" and result.intent is not None and result.intent.id == held.id
    assert goals.review_queue() == []


def test_a_dismissed_candidate_is_not_proposed_again_from_the_same_evidence(goals: Goals) -> None:
    first = goals.propose("GOAL", "Migrate to Postgres", evidence_id="turn-3")
    assert first.intent is not None
    goals.dismiss(first.intent.id)
    assert goals.review_queue() == []
    again = goals.propose("GOAL", "migrate to  postgres.", evidence_id="turn-3")
    assert again.status == "suppressed" and again.intent is None
    assert goals.propose("GOAL", "Migrate to Postgres", evidence_id="turn-40").status == "created"
    dismissed = goals.get(first.intent.id)
    assert dismissed.epistemic_type is EpistemicType.DEPRECATED


def test_promotion_is_an_epistemic_transition(ix: Intently) -> None:
    proposed = ix.goals.propose("FOLLOW_UP", "Follow up with legal", evidence_id="turn-1").intent
    assert proposed is not None
    promoted = ix.goals.promote(proposed.id)
    assert promoted.epistemic_type is EpistemicType.ASSERTED
    assert promoted.confidence == 0.80
    assert promoted.source_type is SourceType.USER_STATED
    assert ix.goals.review_queue() == []
    (op,) = ix.log.read("proj", op="EPISTEMIC_TRANSITION", target=proposed.id)
    assert op.payload["from_type"] == "INFERRED" and op.payload["to_type"] == "ASSERTED"
    assert op.payload["trigger_type"] == "user_correction"
    assert op.payload["evidence_ids"] == ["turn-1"]
    with pytest.raises(InvalidTransition, match="ASSERTED"):
        ix.goals.promote(proposed.id)


def _agents_may_review(ix: Intently) -> Intently:
    """The same home reopened after its owner set ``[review] agents_may_review = true``."""
    set_config(ix.home.config_path, "review", "agents_may_review", "true")
    return Intently.open(ix.home.path, actor="user:alice", clock=ix.runtime.clock)


def test_an_agent_confirming_keeps_the_system_source(ix: Intently) -> None:
    """Where the home lets agents review (RFC-0013's ASSERTED row for an agent), an agent's
    confirmation keeps the inferred source and confidence: it is not a person's word."""
    from intently import Actor, Permission

    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    proposed = ix.goals.propose("GOAL", "Cut the release", evidence_id="t").intent
    assert proposed is not None
    with _agents_may_review(ix) as opted:
        promoted = opted.as_actor("agent:claude").goals.promote(proposed.id)
    assert promoted.source_type is SourceType.SYSTEM_INFERRED
    assert promoted.confidence == 0.60


@pytest.mark.parametrize("act", ["promote", "dismiss", "edit", "complete", "cancel", "hold"])
def test_an_agent_cannot_decide_a_candidate(ix: Intently, act: str) -> None:
    """Language proposes, people decide: an agent with write access (an agent's token, or the MCP
    server acting for a person) used to confirm candidates, its own proposals included, so a
    prompt injection it read could become an asserted goal. Each act that settles or rewords a
    candidate is refused, naming `intently review`, and the candidate still waits for a person."""
    from intently import Actor, Permission, PermissionDenied

    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    proposed = ix.goals.propose("GOAL", "Cut the release", evidence_id="t").intent
    assert proposed is not None
    for agent in (ix.as_actor("agent:claude"), ix.as_actor(Actor.delegate("mcp", ix.actor))):
        calls = {
            "promote": lambda g: g.promote(proposed.id),
            "dismiss": lambda g: g.dismiss(proposed.id),
            "edit": lambda g: g.edit(proposed.id, text="Cut the release today"),
            "complete": lambda g: g.complete(proposed.id),
            "cancel": lambda g: g.cancel(proposed.id),
            "hold": lambda g: g.hold(proposed.id),
        }
        with pytest.raises(PermissionDenied, match=r"a person's decision.*intently review"):
            calls[act](agent.goals)
    (waiting,) = ix.goals.review_queue()
    assert (waiting.id, waiting.version, waiting.value) == (proposed.id, proposed.version, "Cut the release")
    assert ix.goals.promote(proposed.id).source_type is SourceType.USER_STATED  # the person still can


def test_asserted_intents_cannot_be_dismissed(goals: Goals) -> None:
    with pytest.raises(InvalidTransition, match="cancel"):
        goals.dismiss(goals.add("Real goal").id)


def test_edit_changes_fields_and_bumps_the_version(goals: Goals) -> None:
    proposed = goals.propose("GOAL", "Fix login bug", evidence_id="t1").intent
    assert proposed is not None
    edited = goals.edit(proposed.id, text="Fix the SSO login bug", type="COMMITMENT", priority="HIGH", owner="dana")
    assert (edited.value, edited.intent_type.value, edited.priority.value, edited.owner) == (
        "Fix the SSO login bug",
        "COMMITMENT",
        "HIGH",
        "user:dana",
    )
    assert edited.version == proposed.version + 1


def test_decisions_are_records_not_intents(goals: Goals, clock: ManualClock) -> None:
    first = goals.record_decision("We use PostgreSQL for analytics", evidence_id="turn-2", span="0:31")
    clock.advance("1d")
    second = goals.record_decision("Releases ship on Tuesdays", evidence_id="turn-8")
    assert [d.text for d in goals.decisions()] == [first.text, second.text]
    assert [d.id for d in goals.decisions(since="2026-03-03")] == [second.id]
    assert first.evidence_id == "turn-2" and first.span == "0:31" and first.recorded_by == "user:alice"
    assert goals.list_intents() == []


def test_a_decision_stated_again_is_one_record(ix: Intently, goals: Goals, clock: ManualClock) -> None:
    """A prompt sent twice, or a choice repeated in a later session, would otherwise be mined by
    the requirements scan as two rules."""
    first = goals.record_decision("Use httpx instead of requests", evidence_id="turn-2")
    clock.advance("1d")
    again = goals.record_decision("Use httpx  instead of requests", evidence_id="turn-9")
    assert again.id == first.id and again.evidence_id == "turn-2"
    assert [d.id for d in goals.decisions()] == [first.id]
    assert len(ix.log.read(ix.namespace, op="DECISION_RECORDED")) == 1


def test_edit_none_leaves_fields_and_clear_empties_them(goals: Goals) -> None:
    intent = goals.add("Ship it", owner="bob", due="2026-04-01", context_note="for the pilot")
    same = goals.edit(intent.id, text=None, owner=None, due=None, context_note=None, priority="HIGH")
    assert (same.owner, same.target_completion, same.context_note) == (
        "user:bob",
        "2026-04-01T23:59:59.000000Z",
        "for the pilot",
    )
    cleared = goals.edit(intent.id, owner=CLEAR, due=CLEAR, context_note=CLEAR)
    assert (cleared.owner, cleared.target_completion, cleared.context_note) == (None, None, None)
    with pytest.raises(InvalidInput, match="nothing to change"):
        goals.edit(intent.id)
