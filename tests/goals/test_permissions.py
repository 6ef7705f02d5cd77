"""Reads need read access, writes need write access; without read the namespace does not exist."""

from __future__ import annotations

import pytest

from intently import Actor, Intently, ManualClock, NotFound, Permission, PermissionDenied


def test_reader_reads_but_cannot_write(ix: Intently) -> None:
    intent = ix.goals.add("Ship the API", priority="HIGH")
    ix.access.grant(Actor.parse("agent:reader"), Permission.READ)
    reader = ix.as_actor("agent:reader").goals
    assert reader.get(intent.id).value == "Ship the API"
    assert [i.intent.id for i in reader.bundle("").items] == [intent.id]
    with pytest.raises(PermissionDenied):
        reader.add("Sneaky goal")
    with pytest.raises(PermissionDenied):
        reader.complete(intent.id)
    with pytest.raises(PermissionDenied):
        reader.propose("GOAL", "Sneaky", evidence_id="t")
    with pytest.raises(PermissionDenied):
        reader.organise()
    assert ix.goals.get(intent.id).state.value == "ACTIVE"


def test_a_readers_read_still_runs_the_organiser(ix: Intently, clock: ManualClock) -> None:
    intent = ix.goals.add("Pay the invoice", due="2026-03-03")
    ix.access.grant(Actor.parse("agent:reader"), Permission.READ)
    clock.advance("2d")
    assert ix.as_actor("agent:reader").goals.get(intent.id).state.value == "EXPIRED"
    (op,) = ix.log.read("proj", op="INTENT_TRANSITION", target=intent.id)
    assert op.actor == "system:organiser"


def test_without_read_everything_is_not_found(ix: Intently) -> None:
    intent = ix.goals.add("Secret plan")
    stranger = ix.as_actor("user:mallory").goals
    for call in (lambda: stranger.get(intent.id), lambda: stranger.bundle(""), lambda: stranger.list_intents()):
        with pytest.raises(NotFound, match="namespace 'proj' not found"):
            call()
    with pytest.raises(NotFound):
        stranger.add("Mine now")


def test_intents_of_another_namespace_are_invisible(ix: Intently) -> None:
    other = ix.in_namespace("other").goals.add("Elsewhere", priority="CRITICAL", type="RISK")
    with pytest.raises(NotFound):
        ix.goals.get(other.id)
    assert ix.goals.bundle("").items == []
