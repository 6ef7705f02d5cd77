"""An expired goal nobody will pursue is archived, not cancelled (RFC-0013 section 4).

The RFC's lifecycle table draws no move out of EXPIRED (reopening is this project's
documented exception, risks have the section 8 exits). Before, an expired goal could neither
be cancelled nor put away: it stayed on `intently goal list` for good.
"""

from __future__ import annotations

import pytest

from intently import Actor, Intently, InvalidTransition, ManualClock, Permission, PermissionDenied
from intently.goals import IntentState, LifecycleState


def _expired(ix: Intently, clock: ManualClock, text: str = "Book the venue", **kw: str) -> str:
    intent = ix.goals.add(text, due="2026-03-04", **kw)
    clock.advance("3d")
    assert ix.goals.get(intent.id).state is IntentState.EXPIRED
    return intent.id


def test_cancelling_an_expired_goal_is_refused_naming_the_ways_out(ix: Intently, clock: ManualClock) -> None:
    goal = _expired(ix, clock)
    with pytest.raises(InvalidTransition, match=r"EXPIRED.*CANCELLED.*reopen.*intently goal archive"):
        ix.goals.cancel(goal)
    assert ix.goals.get(goal).state is IntentState.EXPIRED


def test_archiving_puts_an_expired_goal_out_of_the_open_list_and_logs_it(ix: Intently, clock: ManualClock) -> None:
    goal = _expired(ix, clock)
    kept = ix.goals.add("Write the docs")
    archived = ix.goals.archive(goal, reason="the event moved online")
    assert (archived.state, archived.lifecycle_state) == (IntentState.EXPIRED, LifecycleState.ARCHIVED)
    (op,) = ix.log.read("proj", op="INTENT_ARCHIVED")
    assert (op.target, op.actor) == (goal, "user:alice")
    assert op.payload == {
        "state": "EXPIRED",
        "lifecycle_from": "ACTIVE",
        "lifecycle_state": "ARCHIVED",
        "reason": "the event moved online",
        "version": archived.version,
    }
    assert [i.id for i in ix.goals.list_intents(include_archived=False)] == [kept.id]
    assert goal in [i.id for i in ix.goals.list_intents(state="EXPIRED")]  # still there when asked
    with pytest.raises(InvalidTransition, match="already archived"):
        ix.goals.archive(goal)
    # reopening brings it back, live again
    reopened = ix.goals.reopen(goal, due="2026-04-30")
    assert (reopened.state, reopened.lifecycle_state) == (IntentState.ACTIVE, LifecycleState.ACTIVE)


def test_only_expired_non_risk_intents_of_ones_own_are_archived(ix: Intently, clock: ManualClock) -> None:
    live = ix.goals.add("Write the docs")
    with pytest.raises(InvalidTransition, match="only an EXPIRED intent is archived"):
        ix.goals.archive(live.id)
    risk = ix.goals.add("Certificate expires", type="RISK", priority="HIGH", due="2026-03-04")
    theirs = ix.goals.add("Call the caterer", owner="bob", due="2026-03-04")
    clock.advance("3d")
    with pytest.raises(InvalidTransition, match="section 8"):
        ix.goals.archive(risk.id)
    ix.access.grant(Actor.parse("user:carol"), Permission.WRITE)
    with pytest.raises(PermissionDenied, match=r"owner \(user:bob\)"):
        ix.as_actor("user:carol").goals.archive(theirs.id)
    assert ix.goals.get(theirs.id).lifecycle_state is LifecycleState.ACTIVE
    ix.access.grant(Actor.parse("user:bob"), Permission.WRITE)
    assert ix.as_actor("user:bob").goals.archive(theirs.id).lifecycle_state is LifecycleState.ARCHIVED
