"""Dependencies (RFC-0013 section 6): write-time cycle refusal naming the cycle, depth 10,
fan-in 20, both sides consistent, cancellation never cascades."""

from __future__ import annotations

import itertools

import pytest

from intently import Intently, InvalidInput, ManualClock, NotFound
from intently.goals import MAX_DEPTH, MAX_FAN_IN, DependencyCycle, DependencyLimit, Goals, IntentState


def test_a_cycle_is_refused_and_named(goals: Goals) -> None:
    """Conformance (RFC-0013 section 11): "Dependency cycle detection MUST prevent cycles at write time"."""
    a = goals.add("Ship the API")
    b = goals.add("Write the docs")
    c = goals.add("Record the demo")
    goals.depend(a.id, b.id)
    goals.depend(b.id, c.id)
    with pytest.raises(DependencyCycle) as caught:
        goals.depend(c.id, a.id)
    assert caught.value.cycle == [c.id, a.id, b.id, c.id]
    message = str(caught.value)
    assert "'Record the demo'" in message
    assert message.index("'Record the demo'") < message.index("'Ship the API'") < message.index("'Write the docs'")
    assert goals.get(c.id).depends_on == ()


def test_self_dependency_is_a_cycle(goals: Goals) -> None:
    a = goals.add("Loop")
    with pytest.raises(DependencyCycle, match=r"'Loop'.*-> 'Loop'"):
        goals.depend(a.id, a.id)


def test_blocks_and_depends_on_agree_whichever_side_is_written(goals: Goals) -> None:
    a = goals.add("Release")
    b = goals.add("Security review")
    c = goals.add("Load test")
    goals.depend(a.id, b.id)
    goals.block(c.id, a.id)  # c blocks a == a depends on c
    assert set(goals.get(a.id).depends_on) == {b.id, c.id}
    assert goals.get(b.id).blocks == (a.id,)
    assert goals.get(c.id).blocks == (a.id,)
    goals.undepend(a.id, b.id)
    assert goals.get(a.id).depends_on == (c.id,)
    assert goals.get(b.id).blocks == ()
    with pytest.raises(NotFound):
        goals.undepend(a.id, b.id)


def test_depth_beyond_ten_is_refused(goals: Goals) -> None:
    chain = [goals.add(f"Step {n}").id for n in range(MAX_DEPTH + 2)]
    for upper, lower in itertools.pairwise(chain[:-1]):
        goals.depend(upper, lower)  # 10 edges: the deepest legal chain
    with pytest.raises(DependencyLimit, match="maximum depth is 10") as caught:
        goals.depend(chain[-2], chain[-1])
    assert caught.value.limit == "depth"
    # Joining at the top is just as deep.
    top = goals.add("Above it all").id
    with pytest.raises(DependencyLimit, match="depth"):
        goals.depend(top, chain[0])


def test_fan_in_beyond_twenty_is_refused(goals: Goals) -> None:
    hub = goals.add("Shared database migration").id
    dependents = [goals.add(f"Feature {n}").id for n in range(MAX_FAN_IN + 1)]
    goals.depend_many([(d, hub) for d in dependents[:MAX_FAN_IN]])
    with pytest.raises(DependencyLimit, match="already has 20 dependents") as caught:
        goals.depend(dependents[-1], hub)
    assert caught.value.limit == "fan_in"
    assert len(goals.get(hub).blocks) == MAX_FAN_IN


def test_a_refused_batch_leaves_nothing_behind(goals: Goals) -> None:
    a, b = goals.add("A").id, goals.add("B").id
    with pytest.raises(DependencyCycle):
        goals.depend_many([(a, b), (b, a)])
    assert goals.get(a).depends_on == () and goals.get(b).depends_on == ()


def test_duplicate_edges_and_other_namespaces_are_refused(ix: Intently) -> None:
    a, b = ix.goals.add("A").id, ix.goals.add("B").id
    ix.goals.depend(a, b)
    with pytest.raises(InvalidInput, match="already depends"):
        ix.goals.depend(a, b)
    other = ix.in_namespace("elsewhere").goals.add("Far away")
    with pytest.raises(NotFound):
        ix.goals.depend(a, other.id)


def test_cancel_does_not_cascade_and_tells_each_dependent(goals: Goals) -> None:
    """Conformance (RFC-0013 section 11): "Cascading cancellation MUST NOT occur automatically"."""
    upstream = goals.add("Vendor SDK upgrade")
    first = goals.add("Feature using the SDK", owner="bob")
    second = goals.add("Second feature")
    done = goals.add("Finished already")
    for d in (first, second, done):
        goals.depend(d.id, upstream.id)
    goals.complete(done.id)
    goals.cancel(upstream.id, reason="vendor dropped it")
    for d in (first, second):
        after = goals.get(d.id)
        assert after.state is IntentState.ACTIVE
        assert upstream.id in after.depends_on
        (event,) = after.events
        assert event["kind"] == "DEPENDENCY_CANCELLED"
        assert event["payload"]["cancelled"] == upstream.id
        assert event["payload"]["reason"] == "vendor dropped it"
    assert goals.get(first.id).events[0]["payload"]["decision_needed_by"] == "user:bob"
    assert goals.get(done.id).events == ()


def test_finished_intents_take_no_new_edges_and_replace_nothing(goals: Goals) -> None:
    """Final means final: no edge changes a completed or cancelled intent, and a finished
    intent cannot be the replacement of another (two could supersede each other)."""
    from intently.core.errors import InvalidTransition

    done, live, gone = goals.add("A"), goals.add("B"), goals.add("C")
    done_version = goals.complete(done.id).version
    gone_version = goals.cancel(gone.id).version
    for dependent, prerequisite in ((done.id, live.id), (live.id, gone.id)):
        with pytest.raises(InvalidTransition, match="finished"):
            goals.depend(dependent, prerequisite)
    assert goals.get(done.id).version == done_version and goals.get(gone.id).version == gone_version
    g, h = goals.add("g"), goals.add("h")
    goals.supersede(g.id, by=h.id)
    with pytest.raises(InvalidTransition, match="no longer live"):
        goals.supersede(h.id, by=g.id)
    with pytest.raises(InvalidTransition, match="no longer live"):
        goals.supersede(live.id, by=done.id)


def test_one_stakeholder_as_a_string_and_a_date_as_a_due_date(goals: Goals) -> None:
    import datetime as dt

    intent = goals.add("Plan the offsite", stakeholders="carol", due=dt.date(2099, 1, 1))
    assert intent.stakeholders == ("user:carol",)
    assert intent.target_completion.startswith("2099-01-01")


def test_an_expired_dependent_is_told_too(goals: Goals, clock: ManualClock) -> None:
    """RFC-0013 section 6: the DEPENDENCY_CANCELLED event "MUST be generated". An EXPIRED
    dependent can be reopened, so it is told like a live one; finished dependents are not."""
    upstream = goals.add("Vendor SDK upgrade")
    expired = goals.add("Feature using the SDK", owner="alice", due="2026-03-05")
    superseded = goals.add("Old plan")
    for d in (expired, superseded):
        goals.depend(d.id, upstream.id)
    goals.supersede(superseded.id, text="New plan")
    clock.advance("4d")
    assert goals.get(expired.id).state is IntentState.EXPIRED
    goals.cancel(upstream.id, reason="vendor dropped it")
    (event,) = goals.get(expired.id).events
    assert event["kind"] == "DEPENDENCY_CANCELLED"
    assert event["payload"]["cancelled"] == upstream.id
    assert event["payload"]["dependent_state"] == "EXPIRED"
    assert goals.get(superseded.id).events == ()
    reopened = goals.reopen(expired.id, due="2026-04-30")
    assert reopened.state is IntentState.ACTIVE and upstream.id in reopened.depends_on
    assert [e["kind"] for e in reopened.events] == ["DEPENDENCY_CANCELLED"]


def test_a_replacement_takes_the_superseded_intents_place_in_the_graph(goals: Goals) -> None:
    """Superseding "Ship the API" by "Ship the API v2": the release now waits for v2 (not for
    an intent nothing will ever finish) and v2 still waits for the docs. Each moved edge is a
    logged DEPENDENCY_REMOVED + DEPENDENCY_ADDED; edges to finished intents stay as history."""
    docs = goals.add("Write the API docs")
    old_done = goals.add("Agree the API shape")
    api = goals.add("Ship the API", priority="HIGH")
    release = goals.add("Release 2.0", priority="HIGH")
    shipped = goals.add("Announce the beta")
    goals.depend(api.id, docs.id)
    goals.depend(api.id, old_done.id)
    goals.depend(release.id, api.id)
    goals.depend(shipped.id, api.id)
    goals.complete(old_done.id)
    goals.complete(shipped.id)

    v2 = goals.supersede(api.id, text="Ship the API v2", reason="scope changed")

    assert goals.get(release.id).depends_on == (v2.id,)
    assert v2.depends_on == (docs.id,)
    assert v2.blocks == (release.id,)
    assert goals.get(docs.id).blocks == (v2.id,)
    old = goals.get(api.id)
    assert old.state is IntentState.SUPERSEDED and old.superseded_by == v2.id
    assert old.depends_on == (old_done.id,) and old.blocks == (shipped.id,)  # finished ones: history
    assert goals.get(shipped.id).depends_on == (api.id,)

    # An existing replacement takes the place too; an edge it already has is not doubled.
    v3 = goals.add("Ship the API v3")
    goals.depend(v3.id, docs.id)
    goals.supersede(v2.id, by=v3.id)
    assert goals.get(release.id).depends_on == (v3.id,)
    assert goals.get(v3.id).depends_on == (docs.id,)
    assert goals.get(docs.id).blocks == (v3.id,)


def test_a_supersede_whose_carried_edge_closes_a_cycle_is_refused_whole(goals: Goals) -> None:
    """The release depends on the API; the replacement already depends on the release, so
    the release depending on the replacement would close a cycle: refused, naming it, and
    nothing changes (the old intent stays ACTIVE with its edges)."""
    api = goals.add("Ship the API")
    release = goals.add("Release 2.0")
    follow = goals.add("Post-release API")
    goals.depend(release.id, api.id)
    goals.depend(follow.id, release.id)
    before = goals.get(api.id)
    with pytest.raises(DependencyCycle) as caught:
        goals.supersede(api.id, by=follow.id)
    assert caught.value.cycle[0] == release.id
    after = goals.get(api.id)
    assert after.state is IntentState.ACTIVE and after.version == before.version
    assert goals.get(release.id).depends_on == (api.id,)
