"""Console addresses and forms a person gets wrong or sends twice, over a real server.

A mistyped namespace must be a clear 404 naming it, for the home's owner too (who may read
any name); a form sent twice (a double click without JavaScript, a resent POST) must act
once.
"""

from __future__ import annotations

import html
import re
from typing import Any

import httpx

from intently.access import Permission
from intently.console._web import SENT_TWICE
from intently.core.actors import Actor

from .conftest import Served, serve

VIEWS = ("goals", "requirements", "triggers", "gate", "log")


def _csrf(page: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page)
    assert found, "the page carries no CSRF token"
    return found.group(1)


def test_a_made_up_namespace_is_a_404_naming_it_even_for_the_owner(fresh: Served) -> None:
    with fresh.login("user:alice") as alice:  # the home's owner: may read every namespace
        for view in VIEWS:
            r = alice.get(f"/ns/nosuch/{view}")
            assert r.status_code == 404, view
            assert r.headers["content-type"].startswith("text/html")
            assert "namespace 'nosuch' not found" in html.unescape(r.text)
        assert alice.get("/ns/nosuch").status_code == 404
        # A form posted there creates nothing (and no namespace).
        csrf = _csrf(alice.get("/ns/proj/goals").text)
        posted = alice.post("/ns/nosuch/goals", data={"text": "lost goal", "csrf": csrf})
        assert posted.status_code == 404
        assert "nosuch" not in fresh.ix.access.readable_namespaces(Actor.parse("user:alice"))
        # Namespaces that exist still open: the home's, and one that only has a grant so far.
        fresh.ix.access.grant(Actor.parse("user:bob"), Permission.READ, namespace="team")
        assert alice.get("/ns/proj/goals").status_code == 200
        assert alice.get("/ns/team/goals").status_code == 200


def _add_goal_form(page: str) -> str:
    """The hidden ``csrf`` value of the "add an intent" form (one-time form id included)."""
    form = page.split('action="/ns/proj/goals" class="stack">', 1)[1]
    found = re.search(r'name="csrf" value="([^"]+)"', form)
    assert found
    return found.group(1)


def _landed_flash(client: Any, response: Any) -> str:
    assert response.status_code == 303, response.text
    landed = client.get(response.headers["location"])
    found = re.search(r'<div class="flash (ok|error)"[^>]*>(.*?)</div>', landed.text, re.S)
    assert found, "no flash message after the form"
    return f"{found.group(1)}: {html.unescape(found.group(2))}"


def _count(served: Served, text: str) -> int:
    return sum(1 for i in served.ix.goals.list_intents() if i.value == text)


def test_a_form_sent_twice_acts_once(fresh: Served) -> None:
    with fresh.login("user:alice") as alice:
        field = _add_goal_form(alice.get("/ns/proj/goals").text)
        first = alice.post("/ns/proj/goals", data={"text": "Renew the TLS certificate", "csrf": field})
        assert _landed_flash(alice, first).startswith("ok: Added")
        again = alice.post("/ns/proj/goals", data={"text": "Renew the TLS certificate", "csrf": field})
        assert _landed_flash(alice, again) == f"ok: {SENT_TWICE}"
        assert _count(fresh, "Renew the TLS certificate") == 1
        # Every rendered form has its own id: a new page adds a new goal with the same text.
        field2 = _add_goal_form(alice.get("/ns/proj/goals").text)
        assert field2 != field and field2.split("~")[0] == field.split("~")[0]
        alice.post("/ns/proj/goals", data={"text": "Renew the TLS certificate", "csrf": field2})
        assert _count(fresh, "Renew the TLS certificate") == 2


def test_a_refused_form_may_be_sent_again_and_a_forged_id_is_refused(fresh: Served) -> None:
    with fresh.login("user:alice") as alice:
        field = _add_goal_form(alice.get("/ns/proj/goals").text)
        bad = alice.post("/ns/proj/goals", data={"text": "Pay the invoice", "due": "someday", "csrf": field})
        assert _landed_flash(alice, bad).startswith("error: ")
        fixed = alice.post("/ns/proj/goals", data={"text": "Pay the invoice", "due": "2026-04-01", "csrf": field})
        assert _landed_flash(alice, fixed).startswith("ok: Added")  # the refused try changed nothing
        token, _, form_id = field.partition("~")
        issued, nonce, signature = form_id.split(".")
        forged = f"{token}~{issued}.{nonce}x.{signature}"
        refused = alice.post("/ns/proj/goals", data={"text": "Pay the invoice", "csrf": forged})
        assert refused.status_code == 403 and "reload the page" in refused.text
        assert _count(fresh, "Pay the invoice") == 1


def test_the_second_send_is_refused_by_another_worker_too(fresh: Served) -> None:
    """``serve --workers``: the two sends of a double click may reach different processes."""
    other_url, other = serve(fresh.ix)  # a second app on the same home, as a second worker has
    try:
        with fresh.login("user:alice") as alice:
            field = _add_goal_form(alice.get("/ns/proj/goals").text)
            alice.post("/ns/proj/goals", data={"text": "Rotate the keys", "csrf": field})
            with httpx.Client(base_url=other_url, cookies=alice.cookies, follow_redirects=False) as second:
                again = second.post("/ns/proj/goals", data={"text": "Rotate the keys", "csrf": field})
                assert _landed_flash(second, again) == f"ok: {SENT_TWICE}"
        assert _count(fresh, "Rotate the keys") == 1
    finally:
        other.stop()


def _board_ids(page: str) -> list[str]:
    board = page.split('id="board-h"', 1)[1].split("</section>", 1)[0]
    return re.findall(r'<code title="([^"]+)">', board)


def test_the_goals_board_pages_a_hundred_at_a_time_open_ones_first(fresh: Served) -> None:
    """Five thousand goals made one 2 MB page that took seconds; the board now pages like the
    API's lists (``offset``), the work in progress on the first page."""
    goals = fresh.ix.goals
    closed = [goals.add(f"Closed task {n}", type="FOLLOW_UP") for n in range(40)]
    for intent in closed:
        goals.complete(intent.id)
    for n in range(190):
        goals.add(f"Open task {n}", type="GOAL")
    fresh.ix.checkpoint()
    board = [i for i in goals.list_intents() if i.epistemic_type != "INFERRED"]
    open_ids = {str(i.id) for i in board if i.state in ("ACTIVE", "ON_HOLD")}
    with fresh.login("user:alice") as alice:
        seen: list[str] = []
        url: str | None = "/ns/proj/goals"
        pages = []
        while url:
            page = alice.get(html.unescape(url)).text
            pages.append(page)
            seen += _board_ids(page)
            found = re.search(r'<a href="([^"]+)" rel="next">', page)
            url = found.group(1) if found else None
        assert [len(_board_ids(p)) for p in pages] == [100, 100, len(board) - 200]
        assert sorted(seen) == sorted(str(i.id) for i in board)  # every item once
        assert set(seen[: len(open_ids)]) == open_ids  # open ones first
        assert f"Items 1–100 of {len(board)}" in pages[0]
        assert "<span>100 of 194</span>" in pages[0]  # the column names its whole count
        assert '<a href="/ns/proj/goals" rel="prev">' in pages[1]
        assert '<a href="/ns/proj/goals?offset=100" rel="prev">' in pages[2]
        # An offset past the end shows the last page; a filter stays in the links.
        assert _board_ids(alice.get("/ns/proj/goals?offset=100000").text) == _board_ids(pages[-1])
        risky = alice.get("/ns/proj/goals?type=GOAL").text
        assert "type=GOAL&amp;offset=100" in risky
        assert alice.get("/ns/proj/goals?offset=-1").status_code == 422
