"""The organiser and risks (RFC-0013 section 8, RFC-0007 decay)."""

from __future__ import annotations

import math

import pytest

from intently import Actor, Intently, InvalidInput, InvalidTransition, ManualClock, Permission, PermissionDenied
from intently.goals import Goals, IntentState, LifecycleState, Priority


def test_a_passed_target_expires_the_intent_on_the_next_read(goals: Goals, clock: ManualClock) -> None:
    intent = goals.add("Send the invoice", due="2026-03-04")
    clock.advance("3d")
    after = goals.get(intent.id)  # piggybacked organiser, no explicit call
    assert after.state is IntentState.EXPIRED
    assert after.priority is Priority.MEDIUM  # only risks escalate


def test_explicit_organise_reports_and_is_idempotent(ix: Intently, clock: ManualClock) -> None:
    a = ix.goals.add("One", due="2026-03-03")
    b = ix.goals.add("Two", type="RISK", priority="LOW", due="2026-03-03")
    ix.goals.add("Later", due="2026-05-01")
    clock.advance("2d")
    report = ix.goals.organise()
    assert sorted(report.expired) == sorted([a.id, b.id])
    assert report.risk_alerts == [b.id]
    assert report.remaining == 0
    assert ix.goals.organize().expired == []
    transitions = ix.log.read("proj", op="INTENT_TRANSITION")
    assert {o.actor for o in transitions} == {"system:organiser"}
    assert {o.payload["to_state"] for o in transitions} == {"EXPIRED"}


@pytest.mark.parametrize(
    ("before", "after"), [("LOW", "MEDIUM"), ("MEDIUM", "HIGH"), ("HIGH", "CRITICAL"), ("CRITICAL", "CRITICAL")]
)
def test_an_expired_risk_is_escalated_one_level(ix: Intently, clock: ManualClock, before: str, after: str) -> None:
    """Conformance (RFC-0013 section 11): "Priority escalation on expired RISK intents MUST be performed by the organiser"."""
    risk = ix.goals.add("Certificate expires", type="RISK", priority=before, due="2026-03-05")
    goal = ix.goals.add("Not a risk", priority=before, due="2026-03-05")
    clock.advance("4d")
    ix.goals.organise()
    escalated = ix.goals.get(risk.id)
    assert escalated.state is IntentState.EXPIRED
    assert escalated.priority.value == after
    assert ix.goals.get(goal.id).priority.value == before
    (alert,) = ix.log.read("proj", op="EXPIRED_RISK_ALERT")
    assert alert.target == risk.id
    assert alert.payload["priority_from"] == before and alert.payload["priority_to"] == after
    assert alert.actor == "system:organiser"
    assert [e["kind"] for e in escalated.events] == ["EXPIRED_RISK_ALERT"]


def test_an_escalated_expired_risk_is_in_every_bundle(goals: Goals, clock: ManualClock) -> None:
    goals.add("Domain registration lapses", type="RISK", priority="HIGH", due="2026-03-05")
    clock.advance("4d")
    assert [i.intent.value for i in goals.bundle("unrelated").items] == ["Domain registration lapses"]


def test_salience_decays_by_profile_at_read_time(goals: Goals, clock: ManualClock) -> None:
    asserted = goals.add("Asserted goal", salience=0.6)
    proposed = goals.propose("GOAL", "Inferred goal", evidence_id="t").intent
    assert proposed is not None
    pinned = goals.add("Pinned goal", salience=1.0)
    clock.advance("35d")
    assert goals.get(asserted.id).current_salience == pytest.approx(0.6 * math.exp(-0.02 * 35))
    assert goals.get(proposed.id).current_salience == pytest.approx(0.5 * math.exp(-0.07 * 35))
    assert goals.get(pinned.id).current_salience == 1.0
    assert goals.get(asserted.id).salience == 0.6  # nothing was rewritten


def test_risks_never_decay(goals: Goals, clock: ManualClock) -> None:
    """Conformance (RFC-0013 section 11): "RISK intents MUST NOT decay in salience"."""
    risk = goals.add("Backups are untested", type="RISK", salience=0.7)
    goal = goals.add("Improve the backups", salience=0.7)
    clock.advance("365d")
    assert goals.get(risk.id).current_salience == 0.7
    assert goals.get(goal.id).current_salience < 0.01


def test_completion_summary_takes_half_the_decayed_salience(goals: Goals, clock: ManualClock) -> None:
    goal = goals.add("Ship the API", salience=0.8)
    clock.advance("10d")
    goals.complete(goal.id)
    (summary,) = goals.summaries()
    assert summary.salience == pytest.approx(0.5 * 0.8 * math.exp(-0.02 * 10), abs=1e-6)
    assert summary.text == "Goal 'Ship the API' was completed on 2026-03-12."


def test_high_risk_surfaces_at_least_once_per_session(ix: Intently) -> None:
    goals = ix.goals
    risk = goals.add("Vendor contract may lapse", type="RISK", priority="HIGH")
    for n in range(8):
        goals.add(f"Critical goal {n} with a rather long description to fill the budget", priority="CRITICAL")
    tight = 60
    first = goals.bundle("", session="s-1", budget=tight)
    assert first.items[0].intent.id == risk.id and first.items[0].reason == "session_risk"
    second = goals.bundle("", session="s-1", budget=tight)
    assert risk.id not in [i.intent.id for i in second.items]  # already surfaced in s-1; budget went elsewhere
    # Remembered in the store: a new handle on the same home agrees, and a new session surfaces it again.
    with Intently.open(ix.home.path, actor="user:alice", clock=ix.runtime.clock) as again:
        assert risk.id not in [i.intent.id for i in again.goals.bundle("", session="s-1", budget=tight).items]
        assert again.goals.bundle("", session="s-2", budget=tight).items[0].intent.id == risk.id
    ops = ix.log.read("proj", op="RISK_SURFACED")
    assert sorted(o.payload["session"] for o in ops) == ["s-1", "s-2"]


def _expired_critical_risk(ix: Intently, clock: ManualClock) -> tuple[str, Goals]:
    """A HIGH risk created by a writing agent, escalated to CRITICAL when its deadline passed."""
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    agent = ix.as_actor("agent:claude").goals
    risk = agent.add("Domain registration lapses", type="RISK", priority="HIGH", due="2026-03-05")
    clock.advance("4d")
    escalated = agent.get(risk.id)
    assert (escalated.state, escalated.priority) == (IntentState.EXPIRED, Priority.CRITICAL)
    assert [i.intent.id for i in agent.bundle("lunch menu").items] == [risk.id]
    return risk.id, agent


@pytest.mark.parametrize("close", ["complete", "cancel"])
def test_an_expired_escalated_risk_can_be_closed_out(ix: Intently, clock: ManualClock, close: str) -> None:
    """RFC-0013 section 8: a CRITICAL risk is in every bundle "until it is COMPLETED, CANCELLED, or
    explicitly downgraded by the user" -- so an expired (escalated) risk must still be closable,
    by any writer as for other transitions, and the move is logged as an INTENT_TRANSITION."""
    risk_id, agent = _expired_critical_risk(ix, clock)
    closed = agent.complete(risk_id) if close == "complete" else agent.cancel(risk_id, reason="renewed")
    assert closed.state.value == {"complete": "COMPLETED", "cancel": "CANCELLED"}[close]
    assert closed.lifecycle_state is LifecycleState.ARCHIVED
    assert agent.bundle("lunch menu").items == []
    last = ix.log.read("proj", op="INTENT_TRANSITION", target=risk_id)[-1]
    assert (last.payload["from_state"], last.payload["to_state"]) == ("EXPIRED", closed.state.value)
    assert last.actor == "agent:claude"


def test_an_expired_escalated_risk_can_be_downgraded_and_only_downgraded(ix: Intently, clock: ManualClock) -> None:
    """The third way out of section 8: the user lowers the priority (an INTENT_UPDATE). As HIGH
    it is no longer in every bundle (only surfaced once per session); other edits stay refused."""
    risk_id, agent = _expired_critical_risk(ix, clock)
    for refused in ({"priority": "CRITICAL"}, {"text": "Renamed"}, {"priority": "HIGH", "text": "Renamed"}):
        with pytest.raises(InvalidTransition, match="downgraded"):
            agent.edit(risk_id, **refused)
    lowered = agent.edit(risk_id, priority="HIGH")
    assert (lowered.state, lowered.priority) == (IntentState.EXPIRED, Priority.HIGH)
    assert [i.intent.id for i in agent.bundle("lunch menu", session="s-1").items] == [risk_id]
    assert agent.bundle("lunch menu", session="s-1").items == []  # as HIGH: once per session, not always
    (update,) = ix.log.read("proj", op="INTENT_UPDATE", target=risk_id)
    assert update.payload["changes"] == {"priority": "HIGH"} and update.actor == "agent:claude"
    # an expired goal is still not edited: the exception is for risks
    goal = ix.goals.add("Pay the invoice", priority="HIGH", due="2026-03-10")
    clock.advance("5d")
    assert ix.goals.get(goal.id).state is IntentState.EXPIRED
    with pytest.raises(InvalidTransition, match="EXPIRED"):
        ix.goals.edit(goal.id, priority="LOW")


def test_a_reader_cannot_close_out_or_downgrade_an_expired_risk(ix: Intently, clock: ManualClock) -> None:
    risk_id, _ = _expired_critical_risk(ix, clock)
    ix.access.grant(Actor.parse("agent:reader"), Permission.READ)
    reader = ix.as_actor("agent:reader").goals
    for call in (
        lambda: reader.complete(risk_id),
        lambda: reader.cancel(risk_id),
        lambda: reader.edit(risk_id, priority="LOW"),
    ):
        with pytest.raises(PermissionDenied):
            call()
    after = ix.goals.get(risk_id)
    assert (after.state, after.priority) == (IntentState.EXPIRED, Priority.CRITICAL)


def test_an_intent_whose_target_passed_on_hold_resumes_only_with_a_new_target(goals: Goals, clock: ManualClock) -> None:
    """Paused on Monday, due Thursday, resumed next week: resumed as it was, it came back
    ACTIVE and overdue and the organiser expired it on the next read (then only its owner
    could reopen it). The resume is refused naming the intent and the date; with a new
    target it is ACTIVE and stays so."""
    paused = goals.add("Finish the report", due="2026-03-05", owner="bob")
    goals.hold(paused.id)
    clock.advance("5d")
    with pytest.raises(InvalidInput, match=rf"{paused.id}.*2026-03-05.*passed while it was on hold") as caught:
        goals.resume(paused.id)
    assert caught.value.where == "due"
    assert goals.get(paused.id).state is IntentState.ON_HOLD
    with pytest.raises(InvalidInput, match="already passed"):
        goals.resume(paused.id, due="2026-03-06")
    resumed = goals.resume(paused.id, due="2026-03-20", reason="back from leave")
    assert resumed.state is IntentState.ACTIVE
    assert resumed.target_completion == "2026-03-20T23:59:59.000000Z"
    clock.advance("1h")
    assert goals.get(paused.id).state is IntentState.ACTIVE
    # A target still ahead is kept as it was.
    other = goals.add("Book the venue", due="2026-04-30")
    goals.hold(other.id)
    assert goals.resume(other.id).target_completion == "2026-04-30T23:59:59.000000Z"


def test_a_candidate_awaiting_review_waits_for_its_reviewer_past_its_date(ix: Intently, clock: ManualClock) -> None:
    """Extraction proposed "I'll send Dana the report by Friday"; the reviewer looks a week
    later. The organiser expired the candidate, which took it out of the review queue
    unseen (and escalated an extracted risk nobody had confirmed). Now it stays in the
    queue with its date; confirmed as it is, it expires like any asserted intent; with a
    new date it stays active; dismissed, it is never touched."""
    goals = ix.goals
    report = goals.propose("COMMITMENT", "I'll send Dana the report by Friday", evidence_id="turn-1",
                           due="2026-03-06T17:00:00Z").intent  # fmt: skip
    outage = goals.propose("RISK", "The vendor may cut us off by Friday", evidence_id="turn-2",
                           due="2026-03-06T17:00:00Z").intent  # fmt: skip
    later = goals.propose("COMMITMENT", "I'll book the venue by Friday", evidence_id="turn-3",
                          due="2026-03-06T17:00:00Z").intent  # fmt: skip
    assert report is not None and outage is not None and later is not None
    clock.advance("7d")
    assert goals.organise().expired == []
    assert {i.id for i in goals.review_queue()} == {report.id, outage.id, later.id}
    assert goals.get(outage.id).priority is Priority.MEDIUM  # no escalation of an unconfirmed risk
    goals.promote(report.id)
    clock.advance("2s")
    assert goals.get(report.id).state is IntentState.EXPIRED  # confirmed: its date has passed
    goals.edit(later.id, due="2026-03-20", awaiting_review=True)
    goals.promote(later.id)
    goals.dismiss(outage.id)
    clock.advance("2s")
    assert goals.get(later.id).state is IntentState.ACTIVE
    assert goals.get(outage.id).state is IntentState.ACTIVE  # dismissed: left as it was
    assert [op.target for op in ix.log.read("proj", op="EXPIRED_RISK_ALERT")] == []


def _expire_as_the_old_organiser_did(ix: Intently, intent_id: str) -> None:
    """What the organiser before cfc9a5f appended for an overdue candidate: the same
    INTENT_TRANSITION to EXPIRED, by ``system:organiser``, applied as replay applies it. (The
    organiser now skips candidates, so an old database is the only place such a row exists.)"""
    from intently.goals._ops import ORGANISER, emit
    from intently.goals._store import load_intent

    rt = ix.runtime
    with rt.store.transaction() as tx:
        intent = load_intent(tx, rt.namespace, intent_id, rt.clock.now())
        assert intent is not None
        emit(
            rt,
            tx,
            "INTENT_TRANSITION",
            intent.id,
            {
                "from_state": "ACTIVE",
                "to_state": "EXPIRED",
                "lifecycle_state": "ACTIVE",
                "reason": f"target_completion {intent.target_completion} passed",
                "version": intent.version + 1,
            },
            actor=ORGANISER,
        )


def test_candidates_an_earlier_organiser_expired_return_to_review(ix: Intently, clock: ManualClock) -> None:
    """Old databases hold EXPIRED candidates that no review could reach (the queue lists
    ACTIVE and ON_HOLD candidates; nothing reviews an expired one). The organiser returns them,
    logged, on the first read; a confirmed intent that expired stays expired."""
    from datetime import date

    waiting = ix.goals.propose("COMMITMENT", "Send Dana the report", evidence_id="turn-1", due=date(2026, 3, 4))
    assert waiting.intent is not None
    confirmed = ix.goals.add("Renew the lease", due="2026-03-04")
    clock.advance("3d")
    _expire_as_the_old_organiser_did(ix, waiting.intent.id)
    ix.checkpoint()
    reopened = Intently.open(ix.home.path, actor="user:alice", clock=clock)  # the upgraded version opens it
    try:
        assert [i.id for i in reopened.goals.review_queue()] == [waiting.intent.id]
        back = reopened.goals.get(waiting.intent.id)
        assert back.state is IntentState.ACTIVE and back.epistemic_type.value == "INFERRED"
        assert (back.target_completion or "").startswith("2026-03-04T23:59:59")  # the date it had
        assert reopened.goals.get(confirmed.id).state is IntentState.EXPIRED
        repair = [o for o in reopened.log.read("proj", op="INTENT_TRANSITION") if o.payload["to_state"] == "ACTIVE"]
        assert [(o.target, o.actor, o.payload["from_state"]) for o in repair] == [
            (waiting.intent.id, "system:organiser", "EXPIRED")
        ]
        assert "returns to the review queue" in repair[0].payload["reason"]
        assert reopened.goals.organise().returned_to_review == []  # done once
        # the person reviews it as any other candidate
        promoted = reopened.goals.promote(waiting.intent.id)
        assert promoted.epistemic_type.value == "ASSERTED"
    finally:
        reopened.close()


def test_explicit_organise_reports_the_candidates_it_returned(ix: Intently, clock: ManualClock) -> None:
    from datetime import date

    candidate = ix.goals.propose("RISK", "The certificate expires", evidence_id="turn-2", due=date(2026, 3, 4)).intent
    assert candidate is not None
    clock.advance("3d")
    _expire_as_the_old_organiser_did(ix, candidate.id)
    report = ix.goals.organise()
    assert report.returned_to_review == [candidate.id] and report.expired == []
    assert report.to_json()["returned_to_review"] == [candidate.id]
    assert ix.goals.get(candidate.id).state is IntentState.ACTIVE
