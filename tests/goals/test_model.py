"""Types, states and the transitions RFC-0013 section 4 draws; core fields and confidence."""

from __future__ import annotations

import itertools

import pytest

from intently import (
    Actor,
    Intently,
    InvalidInput,
    InvalidTransition,
    ManualClock,
    NotFound,
    Permission,
    PermissionDenied,
)
from intently.goals import EpistemicType, Goals, IntentState, IntentType, LifecycleState, Priority, SourceType

ALLOWED = {
    ("ACTIVE", "COMPLETED"),
    ("ACTIVE", "CANCELLED"),
    ("ACTIVE", "ON_HOLD"),
    ("ACTIVE", "EXPIRED"),
    ("ACTIVE", "SUPERSEDED"),
    ("ON_HOLD", "ACTIVE"),
    ("ON_HOLD", "CANCELLED"),
    ("ON_HOLD", "SUPERSEDED"),
    ("EXPIRED", "ACTIVE"),
}


def _put_in(goals: Goals, clock: ManualClock, state: str) -> str:
    """A fresh intent driven into ``state`` through the public API."""
    intent = goals.add(f"Reach {state}", due="2026-03-10")
    if state == "COMPLETED":
        goals.complete(intent.id)
    elif state == "CANCELLED":
        goals.cancel(intent.id)
    elif state == "ON_HOLD":
        goals.hold(intent.id)
    elif state == "SUPERSEDED":
        goals.supersede(intent.id, text="Reach it differently")
    elif state == "EXPIRED":
        clock.advance("10d")
        goals.organise()
    assert goals.get(intent.id).state.value == state
    return intent.id


def _move(goals: Goals, intent_id: str, to: str) -> None:
    if to == "COMPLETED":
        goals.complete(intent_id)
    elif to == "CANCELLED":
        goals.cancel(intent_id)
    elif to == "ON_HOLD":
        goals.hold(intent_id)
    elif to == "SUPERSEDED":
        goals.supersede(intent_id, text="Replacement")
    elif to == "ACTIVE":
        current = goals.get(intent_id).state
        if current is IntentState.EXPIRED:
            goals.reopen(intent_id, due="2027-01-01")
        else:
            goals.resume(intent_id)
    else:
        raise AssertionError(to)


@pytest.mark.parametrize(
    ("start", "to"),
    [
        (a, b)
        for a, b in itertools.product([s.value for s in IntentState], repeat=2)
        if a != b and b != "EXPIRED"  # EXPIRED is reached only by the organiser (tested separately)
    ],
)
def test_only_the_drawn_transitions_are_allowed(goals: Goals, clock: ManualClock, start: str, to: str) -> None:
    """Conformance (RFC-0013 section 11): "All six intent lifecycle states MUST be supported and enforced"."""
    intent_id = _put_in(goals, clock, start)
    if (start, to) in ALLOWED:
        _move(goals, intent_id, to)
        assert goals.get(intent_id).state.value == to
    else:
        with pytest.raises(InvalidTransition) as caught:
            _move(goals, intent_id, to)
        assert start in str(caught.value) and to in str(caught.value)
        assert intent_id in str(caught.value)  # a refusal in a batch or a script names its intent
        assert goals.get(intent_id).state.value == start


def test_all_six_types_are_supported_and_kept(goals: Goals) -> None:
    """Conformance (RFC-0013 section 11): "All six intent types MUST be supported"."""
    for itype in IntentType:
        intent = goals.add(f"A {itype.value.lower()}", type=itype.value.lower())
        assert goals.get(intent.id).intent_type is itype
    assert len(goals.list_intents()) == 6
    with pytest.raises(InvalidInput, match="type"):
        goals.add("Feel happy", type="EMOTION")


def test_core_fields_are_recorded(goals: Goals, clock: ManualClock) -> None:
    intent = goals.add(
        "Ship the API",
        priority="high",
        owner="bob",
        stakeholders=["carol", "agent:claude"],
        due="2026-03-31",
        completion_criteria="All endpoints pass the contract tests",
        context_note="Promised to the pilot customer",
        structured_value={"milestone": "M2"},
        evidence_ids=["event-1"],
    )
    assert intent.version == 1
    assert intent.epistemic_type is EpistemicType.ASSERTED
    assert intent.source_type is SourceType.USER_STATED
    assert intent.confidence == 0.80
    assert intent.evidence_ids == ("event-1",)
    assert intent.asserted_by == "user:alice"
    assert intent.valid_from == intent.created_at == "2026-03-02T09:00:00.000000Z"
    assert intent.lifecycle_state is LifecycleState.ACTIVE
    assert intent.priority is Priority.HIGH
    assert intent.owner == "user:bob"
    assert intent.stakeholders == ("agent:claude", "user:carol")
    assert intent.target_completion == "2026-03-31T23:59:59.000000Z"  # a day is due by its end
    assert intent.structured_value == {"milestone": "M2"}
    assert intent.namespace == "proj"
    assert 0.0 <= intent.salience <= 1.0


def test_a_stated_intent_without_evidence_cites_its_own_statement(goals: Goals) -> None:
    intent = goals.add("Write the changelog")
    assert intent.evidence_ids == (f"stated:{intent.id}",)


def test_completion_and_cancellation_archive(goals: Goals) -> None:
    done = goals.complete(goals.add("Done soon").id)
    gone = goals.cancel(goals.add("Not needed").id)
    assert done.lifecycle_state is LifecycleState.ARCHIVED
    assert gone.lifecycle_state is LifecycleState.ARCHIVED


def test_only_the_owner_may_reopen_an_expired_intent(ix: Intently, clock: ManualClock) -> None:
    ix.access.grant(Actor.parse("bob"), Permission.WRITE)
    intent = ix.goals.add("Renew the certificate", owner="carol", due="2026-03-05")
    clock.advance("5d")
    assert ix.goals.get(intent.id).state is IntentState.EXPIRED
    with pytest.raises(PermissionDenied, match="owner"):
        ix.as_actor("bob").goals.reopen(intent.id, due="2026-04-01")
    with pytest.raises(InvalidInput, match="future"):
        ix.goals.reopen(intent.id, due="2026-03-01")
    reopened = ix.goals.reopen(intent.id, due="2026-04-01")  # alice owns the home
    assert reopened.state is IntentState.ACTIVE
    assert reopened.target_completion == "2026-04-01T23:59:59.000000Z"


def test_a_past_target_is_refused_at_creation(goals: Goals) -> None:
    with pytest.raises(InvalidInput, match="due"):
        goals.add("Too late", due="2026-01-01")


def test_an_expired_risk_leaves_only_by_reopen_completion_or_cancellation(goals: Goals, clock: ManualClock) -> None:
    """RFC-0013 section 8 adds EXPIRED -> COMPLETED / CANCELLED for risks (so an escalated risk
    can be resolved); the other undrawn moves stay refused for them too."""
    risk = goals.add("Certificate expires", type="RISK", due="2026-03-05")
    clock.advance("4d")
    for refused in (
        lambda: goals.hold(risk.id),
        lambda: goals.supersede(risk.id, text="Other"),
        lambda: goals.resume(risk.id),
    ):
        with pytest.raises(InvalidTransition, match="EXPIRED"):
            refused()
    assert goals.get(risk.id).state is IntentState.EXPIRED
    assert goals.complete(risk.id).state is IntentState.COMPLETED


@pytest.mark.parametrize("text", [None, 123, ["Ship the API"]])
def test_text_that_is_not_a_string_is_refused_not_stored_as_its_repr(goals: Goals, text: object) -> None:
    """``goals.add(None)`` stored the goal 'None': text is never coerced."""
    with pytest.raises(InvalidInput) as info:
        goals.add(text)  # type: ignore[arg-type]
    assert info.value.where == "text"
    assert goals.list_intents() == []


@pytest.mark.parametrize("budget", ["10", 2.5, None])
def test_a_bundle_budget_that_is_not_a_whole_number_is_refused(goals: Goals, budget: object) -> None:
    with pytest.raises(InvalidInput) as info:
        goals.bundle("ship", budget=budget)  # type: ignore[arg-type]
    assert info.value.where == "budget"


def test_every_refusal_names_the_intent_and_its_state(goals: Goals) -> None:
    """A script closing ten goals, or an agent editing several, is told which one was refused
    and why ("intent <id> cannot move from COMPLETED to edited"), not just the two states."""
    done = goals.add("Ship it")
    live = goals.add("Tell the team")
    goals.complete(done.id)
    refusals = [
        lambda: goals.complete(done.id),
        lambda: goals.edit(done.id, text="Ship it again"),
        lambda: goals.resume(live.id),
        lambda: goals.reopen(live.id, due="2027-01-01"),
        lambda: goals.depend(live.id, done.id),
        lambda: goals.promote(live.id),
        lambda: goals.dismiss(live.id),
        lambda: goals.edit(live.id, text="Tell everyone", awaiting_review=True),
    ]
    for refuse in refusals:
        with pytest.raises(InvalidTransition) as caught:
            refuse()
        message = str(caught.value)
        assert done.id in message or live.id in message, message
    with pytest.raises(InvalidTransition, match=f"{done.id} cannot move from COMPLETED"):
        goals.cancel(done.id)


def test_an_id_reference_is_matched_literally(goals: Goals) -> None:
    """``intently goal done ______`` completed the only intent of the namespace: ``_`` is a LIKE
    wildcard. A reference is a prefix or suffix of the id, character for character."""
    only = goals.add("The only goal")
    assert goals.resolve(only.id[-8:]) == only.id and goals.resolve(only.id[:13]) == only.id
    for ref in ("______", "%%%%%%", "______" + only.id[-4:], "%%%%%%" + only.id[-3:]):
        with pytest.raises(NotFound):
            goals.resolve(ref)
