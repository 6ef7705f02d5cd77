"""The goals board shows where each goal came from and lets the person endorse an agent's.

The console had no Endorse (only ``intently goal endorse`` and the API did), and its board
did not show provenance: an agent's reading (SYSTEM_INFERRED, 0.60) looked the same as the
person's own word. Each card now says its epistemic type, source, confidence, who asserted it
and its evidence; a person endorses an agent's goal from the card; an agent's session is not
offered Endorse, nor Complete on the person's goal, and the library refuses it anyway.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from intently import Actor, Permission
from intently.goals import SourceType
from intently.server import TokenStore

from .conftest import Served

pytestmark = pytest.mark.timeout(120)


def _login(page: Any, served: Served, token: str) -> None:
    page.goto(served.url + "/")
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/ns/proj/goals")


def _card(page: Any, text: str) -> Any:
    return page.get_by_role("article", name=f"GOAL: {text}", exact=True)


def post_form(page: Any, url: str, csrf: str | None, version: int) -> None:
    """Post a form to ``url`` as a hand-made page would: what a session without the button can
    still send, so the library (not the page) must refuse it."""
    page.evaluate(
        """([url, csrf, version]) => {
        const form = document.createElement('form');
        form.method = 'post'; form.action = url;
        for (const [k, v] of [['csrf', csrf], ['version', String(version)]]) {
            const input = document.createElement('input');
            input.type = 'hidden'; input.name = k; input.value = v; form.appendChild(input);
        }
        document.body.appendChild(form); form.submit();
    }""",
        [url, csrf, version],
    )


def test_a_person_sees_provenance_and_endorses_an_agents_goal(tab: Any, fresh: Served) -> None:
    ix = fresh.ix
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    theirs = ix.as_actor("agent:claude").goals.add("Refactor the billing module", evidence_ids=["chat:9"])
    ix.checkpoint()
    page = tab
    _login(page, fresh, fresh.tokens["user:alice"])

    card = _card(page, "Refactor the billing module")
    provenance = card.locator(".provenance").inner_text()
    assert "ASSERTED from SYSTEM_INFERRED" in provenance and "0.60 confidence" in provenance
    assert "asserted by agent:claude" in provenance and "chat:9" in provenance
    own = _card(page, "Ship the billing v2 launch").locator(".provenance").inner_text()
    assert "ASSERTED from USER_STATED" in own and "asserted by user:alice" in own
    # only what an agent or a tool asserted is offered for endorsement
    assert page.get_by_role("button", name="Endorse: Ship the billing v2 launch").count() == 0

    page.get_by_role("button", name="Endorse: Refactor the billing module").click()
    assert "Endorsed" in page.get_by_role("status").inner_text()
    endorsed = ix.goals.get(theirs.id)
    assert (endorsed.source_type, endorsed.confidence, endorsed.asserted_by) == (
        SourceType.USER_STATED,
        0.80,
        "agent:claude",
    )
    (op,) = ix.log.read("proj", op="EPISTEMIC_TRANSITION", target=theirs.id)
    assert op.actor == "user:alice" and op.payload["endorsed_by"] == "user:alice"
    card = _card(page, "Refactor the billing module")
    assert "USER_STATED" in card.locator(".provenance").inner_text()
    assert "endorsed" in card.locator(".provenance").inner_text()
    assert page.get_by_role("button", name="Endorse: Refactor the billing module").count() == 0


def test_an_agents_session_is_offered_neither_endorse_nor_ending_the_persons_goal(tab: Any, fresh: Served) -> None:
    ix = fresh.ix
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    theirs = ix.as_actor("agent:claude").goals.add("Refactor the billing module")
    ix.checkpoint()
    token = TokenStore(ix).create("agent:claude").token
    page = tab
    _login(page, fresh, token)
    assert page.get_by_role("button", name=re.compile("^Endorse")).count() == 0
    assert page.get_by_role("button", name="Complete: Ship the billing v2 launch").count() == 0  # alice's
    assert page.get_by_role("button", name="Complete: Refactor the billing module").count() == 1  # its own

    # a form sent anyway (a page from before, a crafted request) is refused by the library
    csrf = page.locator('meta[name="csrf-token"]').get_attribute("content")
    launch = next(g for g in ix.goals.list_intents() if g.value == "Ship the billing v2 launch")
    for path, version in (
        (f"goals/{theirs.id}/endorse", theirs.version),
        (f"goals/{launch.id}/complete", launch.version),
    ):
        with page.expect_navigation():
            post_form(page, f"/ns/proj/{path}", csrf, version)
        refused = page.locator("div.flash.error").inner_text()
        # completing alice's goal is kept as a claim for her to decide (tests/goals/test_completion_claims.py)
        prefix = (
            "CompletionClaimed: claimed, awaits user:alice: " if path.endswith("/complete") else "PermissionDenied: "
        )
        assert refused.startswith(prefix + "agent:claude cannot"), refused
    assert ix.goals.get(theirs.id).source_type is SourceType.SYSTEM_INFERRED
    assert ix.goals.get(launch.id).state.value == "ACTIVE"
