"""A dependant whose prerequisite was cancelled (or expired, or dismissed) is shown as blocked.

RFC-0013 section 6: "If intent A depends_on intent B, and intent B is CANCELLED: Intent A MUST
NOT be automatically cancelled. A DEPENDENCY_CANCELLED event MUST be generated for intent A.
The user or owning agent MUST decide whether to cancel, restructure, or replace the
dependency." The event was recorded but the context block never showed it: a MEDIUM
dependant the query did not touch waited unseen, blocked for ever, and one that did show
gave no sign of what it was waiting on.
"""

from __future__ import annotations

from intently import Intently, ManualClock


def _goals_section(ix: Intently, query: str) -> str:
    return ix.context(query, fire=False).section("active_goals").body


def test_the_context_block_shows_a_dependant_of_a_cancelled_prerequisite(ix: Intently) -> None:
    signoff = ix.goals.add("Get legal sign-off for the launch")
    launch = ix.goals.add("Publish the pricing page", depends_on=[signoff.id])
    ix.goals.add("Tidy the wiki")  # MEDIUM, untouched by the query: stays out
    assert "Publish the pricing page" not in _goals_section(ix, "what is next?")
    ix.goals.cancel(signoff.id, reason="legal review dropped")
    body = _goals_section(ix, "what is next?")
    (line,) = [ln for ln in body.splitlines() if "Publish the pricing page" in ln]
    assert 'blocked_by="cancelled: Get legal sign-off for the launch"' in line
    assert "Tidy the wiki" not in body
    dependant = ix.goals.get(launch.id)
    assert dependant.state.value == "ACTIVE"  # never cascades
    assert [e["kind"] for e in dependant.events] == ["DEPENDENCY_CANCELLED"]
    assert dependant.blocked_by == ({"id": signoff.id, "state": "CANCELLED", "text": signoff.value},)
    assert dependant.to_json()["blocked_by"] == [{"id": signoff.id, "state": "CANCELLED", "text": signoff.value}]
    bundle = ix.goals.bundle("what is next?")
    assert [(i.intent.id, i.reason) for i in bundle.items] == [(launch.id, "blocked_prerequisite")]
    assert bundle.omitted.reasons.get("not_relevant") == 1  # the wiki, not the blocked one


def test_once_decided_the_dependant_is_no_longer_shown_as_blocked(ix: Intently) -> None:
    signoff = ix.goals.add("Get legal sign-off")
    launch = ix.goals.add("Publish the pricing page", depends_on=[signoff.id])
    ix.goals.cancel(signoff.id)
    ix.goals.undepend(launch.id, signoff.id)  # the owner decides: no longer needed
    assert ix.goals.get(launch.id).blocked_by == ()
    assert "Publish the pricing page" not in _goals_section(ix, "what is next?")


def test_an_expired_or_dismissed_prerequisite_blocks_too(ix: Intently, clock: ManualClock) -> None:
    venue = ix.goals.add("Book the venue", due="2026-03-04")
    invites = ix.goals.add("Send the invitations", priority="HIGH", depends_on=[venue.id])
    candidate = ix.goals.propose("GOAL", "Hire a photographer", evidence_id="turn-1").intent
    assert candidate is not None
    photos = ix.goals.add("Publish the photos", depends_on=[candidate.id])
    ix.goals.dismiss(candidate.id)
    clock.advance("3d")
    lines = _goals_section(ix, "anything?").splitlines()
    (inv,) = [ln for ln in lines if "Send the invitations" in ln]
    assert 'blocked_by="expired: Book the venue"' in inv
    (pho,) = [ln for ln in lines if "Publish the photos" in ln]
    assert 'blocked_by="dismissed: Hire a photographer"' in pho
    # a finished dependant is history, not blocked
    ix.goals.complete(invites.id)
    assert ix.goals.get(invites.id).blocked_by == ()
    assert ix.goals.get(photos.id).blocked_by[0]["state"] == "DISMISSED"
