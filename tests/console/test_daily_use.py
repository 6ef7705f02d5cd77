"""A first-time user's day in Debian's Chromium: double clicks, "/", narrow windows, field errors.

Each test here failed before its fix: a second click on **Add** created a second intent, "/"
did nothing on the goals and log pages, a phone-width window scrolled the whole console
sideways, and a bad due date put its error (and its id) on the page twice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from .conftest import Served

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1360, "height": 900}, java_script_enabled=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, errors  # no JavaScript error on any page a test visited


@contextmanager
def _writer_held(served: Served, seconds: float) -> Iterator[None]:
    """Hold the home's write lock from another thread for ``seconds`` (a slow server)."""
    holding = threading.Event()

    def hold() -> None:
        with served.ix.store.transaction():
            holding.set()
            time.sleep(seconds)

    thread = threading.Thread(target=hold)
    thread.start()
    holding.wait(10)
    try:
        yield
    finally:
        thread.join(20)


def _login(page: Any, served: Served) -> None:
    page.goto(served.url + "/")
    page.get_by_label("Token").fill(served.tokens["user:alice"])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/ns/proj/goals")


def test_a_second_click_does_not_add_the_intent_twice(tab: Any, fresh: Served) -> None:
    _login(tab, fresh)
    posts: list[str] = []
    tab.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    tab.get_by_label("What is intended").fill("Book the offsite venue")
    add = tab.get_by_role("button", name="Add")
    # A slow server (the write lock busy for a moment) and an impatient person who clicks
    # again while the first request is still on its way.
    # Mouse clicks, not ``locator.click``: Playwright would wait for the first navigation.
    add.scroll_into_view_if_needed()
    box = add.bounding_box()
    x, y = box["x"] + 5, box["y"] + 5
    with _writer_held(fresh, seconds=1.5):
        tab.mouse.click(x, y)
        tab.wait_for_timeout(250)
        tab.mouse.click(x, y)
        tab.wait_for_timeout(250)
        tab.keyboard.press("Enter")  # the button kept focus: Enter submits once more
    tab.wait_for_selector(".flash.ok")
    tab.wait_for_timeout(500)
    texts = [str(i.value) for i in fresh.ix.goals.list_intents()]
    assert texts.count("Book the offsite venue") == 1
    assert len(posts) == 1
    # The page that came back is usable again: the next change goes through.
    tab.get_by_label("What is intended").fill("Order the badges")
    tab.get_by_role("button", name="Add").click()
    tab.wait_for_selector(".flash.ok:has-text('Order the badges')")
    assert "Order the badges" in [str(i.value) for i in fresh.ix.goals.list_intents()]


def test_a_cancelled_confirmation_leaves_the_form_usable(tab: Any, fresh: Served) -> None:
    """Saying "no" to "Dismiss it?" must not mark the form as sent."""
    _login(tab, fresh)
    answers = iter([False, True])
    tab.on("dialog", lambda d: d.accept() if next(answers) else d.dismiss())
    row = tab.locator(f"tr[data-candidate='{fresh.facts['candidate']}']")
    row.get_by_role("button", name="Dismiss").click()
    tab.wait_for_timeout(300)
    assert fresh.ix.goals.review_queue()  # not dismissed
    row.get_by_role("button", name="Dismiss").click()
    tab.wait_for_selector(".flash.ok")
    assert not fresh.ix.goals.review_queue()


@pytest.mark.parametrize(("slug", "expected"), [("goals", "goal-text"), ("log", "proof"), ("triggers", "test")])
def test_slash_focuses_a_field_a_person_can_see(tab: Any, console: Served, slug: str, expected: str) -> None:
    """docs/console.md: "/" focuses the first search box. The goals page's first field is
    inside a closed "Edit text" disclosure and the log's is a number: "/" did nothing."""
    _login(tab, console)
    tab.goto(f"{console.url}/ns/proj/{slug}")
    tab.locator("body").press("/")
    assert tab.evaluate("() => document.activeElement.id") == expected


@pytest.mark.parametrize("slug", ["goals", "requirements", "triggers", "gate", "log"])
def test_a_phone_width_window_does_not_scroll_sideways(browser: Any, console: Served, slug: str) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 800})
    try:
        page = context.new_page()
        _login(page, console)
        page.goto(f"{console.url}/ns/proj/{slug}")
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"{slug} is {width[0]}px wide in a {width[1]}px window"
    finally:
        context.close()


def test_a_bad_due_date_is_reported_once_next_to_its_field(console: Served) -> None:
    with console.login("user:alice") as client:
        page = client.get("/ns/proj/goals")
        csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
        r = client.post(
            "/ns/proj/goals",
            data={"text": "Due test", "due": "tomorrow", "csrf": csrf},
            headers={"origin": console.url, "referer": console.url + "/ns/proj/goals"},
        )
        assert r.status_code == 303
        back = client.get("/ns/proj/goals").text
    assert back.count('id="due-error"') == 1
    assert 'aria-describedby="due-error"' in back


def test_a_requirement_saved_empty_names_the_statement_field(console: Served) -> None:
    """The drawer had no field errors: an empty statement came back as a banner only."""
    req = console.facts["requirements"][0]
    with console.login("user:alice") as client:
        drawer = f"/ns/proj/requirements?edit={req}"
        page = client.get(drawer)
        csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
        r = client.post(
            f"/ns/proj/requirements/{req}/edit",
            data={"statement": "", "csrf": csrf},
            headers={"origin": console.url, "referer": console.url + drawer},
        )
        assert r.status_code == 303 and r.headers["location"] == drawer
        back = client.get(drawer).text
    assert 'id="statement-error"' in back
    field = back.split('id="statement"')[1].split(">")[0]
    assert 'aria-invalid="true"' in field and 'maxlength="5000"' in field


def test_a_namespace_address_opens_its_goals(console: Served) -> None:
    """``/ns/proj`` (the URL shortened by hand) answered the API's JSON 404, not a page."""
    with console.login("user:alice") as client:
        for path in ("/ns/proj", "/ns/proj/"):
            r = client.get(path)
            assert r.status_code == 303 and r.headers["location"] == "/ns/proj/goals", (path, r.text)
    with console.login("user:bob") as client:  # a reader
        assert client.get("/ns/proj").headers["location"] == "/ns/proj/goals"
    with console.login("user:carol") as client:  # no permission at all: the HTML 404 page
        hidden = client.get("/ns/proj/")
        assert hidden.status_code == 404 and hidden.headers["content-type"].startswith("text/html")
    with console.client() as anonymous:
        r = anonymous.get("/ns/proj")
        assert r.status_code in (303, 307) and "/login" in r.headers["location"]


def test_a_wrong_token_is_tied_to_the_token_field(console: Served) -> None:
    """A screen reader moving to the Token field hears why the last try failed."""
    with console.client() as client:
        r = client.post("/login", data={"token": "itk_nope_nope", "next": "/"}, headers={"origin": console.url})
    assert r.status_code == 401
    field = r.text.split('id="token"')[1].split(">")[0]
    assert 'aria-invalid="true"' in field and 'aria-describedby="token-error"' in field
    assert 'id="token-error"' in r.text and "unknown or revoked" in r.text


def test_two_waiting_calls_of_one_tool_have_buttons_a_screen_reader_can_tell_apart(fresh: Served) -> None:
    """Every "Approve delete_file once" button had the same accessible name, whatever file."""
    from .conftest import TOOLS

    waiting = fresh.ix.gate.session(TOOLS, user_request="Delete the file named in 'old.txt'")
    waiting.observe(
        "read_file", "Old drafts to remove: file 43 is obsolete, please confirm.", args={"file_path": "old.txt"}
    )
    second = waiting.check("delete_file", {"file_id": "43"})
    assert str(second.level) == fresh.facts["pending_level"]
    with fresh.login("user:alice") as client:
        html = client.get("/ns/proj/gate").text
    for verb in ("Approve delete_file once", "Deny delete_file", "Reason to deny delete_file"):
        labels = [part.split('"')[0] for part in html.split(f'aria-label="{verb}')[1:]]
        assert len(labels) == 2 and labels[0] != labels[1], (verb, labels)
