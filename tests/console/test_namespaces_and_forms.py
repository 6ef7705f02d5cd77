"""Console addresses and forms a person gets wrong or sends twice, over a real server.

A mistyped namespace must be a clear 404 naming it, for the home's owner too (who may read
any name); a form sent twice (a double click without JavaScript, a resent POST) must act
once.
"""

from __future__ import annotations

import html
import re

from intently.access import Permission
from intently.core.actors import Actor

from .conftest import Served

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
