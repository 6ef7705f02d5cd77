"""In Debian's Chromium: pages work with no other host reachable, and a form sent twice acts once.

``/docs`` was FastAPI's Swagger UI, fetched from a CDN: on a machine without internet it was
a blank page. A browser without JavaScript sends a form again on a second click, and the
console made a second goal.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from intently.console._web import SENT_TWICE

from .conftest import Served, open_tab

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    yield from open_tab(browser, javascript=True)


@pytest.fixture
def tab_without_js(browser: Any) -> Iterator[Any]:
    yield from open_tab(browser, javascript=False)


def _login(page: Any, served: Served) -> None:
    page.goto(served.url + "/login")
    page.get_by_label("Token").fill(served.tokens["user:alice"])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/ns/proj/goals")


def test_docs_and_console_load_nothing_from_another_host(tab: Any, console: Served) -> None:
    page = tab
    elsewhere: list[str] = []

    def only_this_server(route: Any) -> None:
        if route.request.url.startswith(console.url + "/"):
            route.continue_()
        else:  # the machine is offline: nothing else answers
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    page.goto(console.url + "/docs")
    assert page.get_by_role("heading", name="intently", exact=False).first.is_visible()
    route = page.locator("#post-v1-namespaces-namespace-goals")
    assert "GoalCreate" in route.inner_text() and "422" in route.inner_text()
    page.get_by_role("link", name="GoalCreate").first.click()
    assert page.locator("#schema-GoalCreate").get_by_text("required").first.is_visible()
    _login(page, console)
    for view in ("requirements", "triggers", "gate", "log", "goals"):
        page.goto(f"{console.url}/ns/proj/{view}")
    assert elsewhere == []


def test_a_double_submit_without_javascript_adds_one_goal(tab_without_js: Any, fresh: Served) -> None:
    page = tab_without_js
    _login(page, fresh)
    sent: list[int] = []

    def send_twice(route: Any) -> None:
        """What a second click does before the first answer arrives: the same form again."""
        if route.request.method != "POST":
            route.continue_()
            return
        first = route.fetch(max_redirects=0)
        second = route.fetch(max_redirects=0)
        sent.extend([first.status, second.status])
        route.fulfill(response=second)

    page.route("**/ns/proj/goals", send_twice)
    page.get_by_label("What is intended").fill("Book the venue for the offsite")
    page.get_by_role("button", name="Add", exact=True).click()
    page.wait_for_load_state()
    assert sent == [303, 303]
    assert SENT_TWICE in page.locator(".flash").inner_text()
    made = [i for i in fresh.ix.goals.list_intents() if i.value == "Book the venue for the offsite"]
    assert len(made) == 1
