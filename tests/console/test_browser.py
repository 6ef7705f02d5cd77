"""End to end in Debian's Chromium: log in, walk every view by keyboard, act, save screenshots.

Each view is photographed. With ``INTENTLY_SCREENSHOTS=1`` the pictures go to docs/img/
(one per view, for the README); otherwise to the test's temp dir, so an ordinary run does
not rewrite tracked images whose ids change every time.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .conftest import VIEWPORT, Served

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"

pytestmark = pytest.mark.timeout(120)


def _login(page: Any, served: Served, actor: str = "user:alice") -> None:
    page.goto(served.url + "/")
    assert "/login" in page.url
    page.get_by_label("Token").fill(served.tokens[actor])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/ns/proj/goals")


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    return DOCS_IMG if os.environ.get("INTENTLY_SCREENSHOTS") else tmp_path


def _shot(page: Any, folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"console-{name}.png"
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 10_000  # a real picture, not a blank page


def _go(page: Any, key: str, slug: str) -> None:
    page.locator("body").press("g")
    page.locator("body").press(key)
    page.wait_for_url(f"**/ns/proj/{slug}*")


def test_every_view_by_keyboard(tab: Any, console: Served, shots: Path) -> None:
    page = tab
    _login(page, console)
    # Goals: the board, the review queue with the extracted candidate, the graph, the risks.
    assert page.get_by_role("heading", name="Review queue").is_visible()
    assert page.locator("[data-candidate]").filter(has_text="Send Dana the pricing deck").count() == 1
    blocked = page.locator(f"svg.graph g.node.blocked[data-id='{console.facts['blocked_goal']}']")
    assert blocked.count() == 1
    risks = page.get_by_role("table", name="Risks with deadlines")
    assert "Card processor may throttle us" in risks.inner_text() and "2026-03-10" in risks.inner_text()
    _shot(page, shots, "goals")

    _go(page, "r", "requirements")
    page.get_by_label("Task").fill("retry the payments webhook when the provider times out")
    page.get_by_label("Files touched").fill("src/payments/webhook.py")
    page.get_by_role("button", name="Preview").click()
    result = page.locator("#preview-result")
    assert "Webhook handlers must be idempotent" in result.locator("pre.agent-block").inner_text()
    assert "kept" in result.locator(".why").inner_text()
    _shot(page, shots, "requirements")

    _go(page, "t", "triggers")
    page.get_by_label("A turn of conversation").fill("Drafting the release notes for Friday")
    page.get_by_role("button", name="Test", exact=True).click()
    assert "Check the rollback plan with Priya" in page.locator("#test-result pre.agent-block").inner_text()
    assert page.get_by_role("table", name="Standing intents").get_by_text("3 / 3").is_visible()  # testing spent no fire
    _shot(page, shots, "triggers")

    _go(page, "x", "gate")
    pending = page.get_by_role("table", name="Pending confirmations")
    assert "delete_file" in pending.inner_text()
    page.get_by_role("link", name="Reply to Bob about the offsite").click()
    why = page.locator("#why-blocked")
    assert why.get_attribute("open") is not None
    assert "send_email was blocked" in why.inner_text()
    _shot(page, shots, "gate")

    _go(page, "l", "log")
    page.get_by_role("link", name="Inclusion proof of operation 2", exact=True).click()
    assert "Operation 2 is in the tree" in page.locator("#proof-result").inner_text()
    page.get_by_role("button", name="Verify the log").click()
    assert page.locator("#verify-result").inner_text().startswith("Verified.")
    assert "Operation 2 is in the tree" in page.locator("#proof-result").inner_text()
    _shot(page, shots, "log")


@contextmanager
def _writer_held(served: Served) -> Iterator[None]:
    """Hold the home's write lock from another thread while the block runs."""
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with served.ix.store.transaction():
            holding.set()
            release.wait(20)

    thread = threading.Thread(target=hold)
    thread.start()
    holding.wait(10)
    try:
        yield
    finally:
        release.set()
        thread.join(10)


def test_steering_from_the_browser(tab: Any, fresh: Served) -> None:
    """Confirm a candidate, approve a waiting call, create a standing intent, scan, edit a requirement."""
    page = tab
    page.on("dialog", lambda dialog: dialog.accept())
    _login(page, fresh)
    page.get_by_role("button", name="Confirm: Send Dana the pricing deck").click()

    assert "Confirmed" in page.get_by_role("status").inner_text()
    assert fresh.ix.goals.get(fresh.facts["candidate"]).epistemic_type == "ASSERTED"

    page.goto(fresh.url + "/ns/proj/gate")
    page.get_by_role("button", name="Approve delete_file once").click()
    assert "Approved once" in page.get_by_role("status").inner_text()
    assert fresh.ix.gate.run(fresh.ix.gate.runs()[0]["id"])["approvals"][0]["decision_id"] == fresh.facts["pending"]

    page.goto(fresh.url + "/ns/proj/triggers")
    page.get_by_label("Remind me to").fill("Ask Sam for the SOC 2 letter")
    page.get_by_label("When these come up").fill("security questionnaire")
    page.get_by_role("button", name="Create").click()
    assert "created" in page.get_by_role("status").inner_text()
    assert "Ask Sam for the SOC 2 letter" in [t.reminder for t in fresh.ix.triggers.list()]

    (fresh.ix.home.project_root / "AGENTS.md").write_text(
        "# Guide\n\n- Never log full card numbers; mask all but the last four digits.\n", encoding="utf-8"
    )
    page.goto(fresh.url + "/ns/proj/requirements")
    with _writer_held(fresh):  # the scan cannot write yet, so the page meets it running
        page.get_by_role("button", name="Scan now").click()
        page.wait_for_url("**/requirements/scan/*")
        assert page.locator("#scan-job").get_attribute("data-state") == "running"
        page.get_by_role("status").filter(has_text="Running: ").wait_for()
    page.locator("#scan-job[data-state='done']").wait_for()  # filled in by polling, no reload
    assert page.locator("#scan-progress").evaluate("bar => bar.value === bar.max")
    assert "created 1" in page.locator("#scan-summary").inner_text()
    page.get_by_role("link", name="Back to the requirements").click()
    assert page.locator("tr", has_text="Never log full card numbers").get_by_text("new", exact=True).is_visible()

    first = fresh.facts["requirements"][0]
    page.goto(fresh.url + f"/ns/proj/requirements?edit={first}")
    page.get_by_role("button", name="Save").click()
    assert "No change" in page.get_by_role("status").inner_text()
    page.get_by_label("Statement").fill("All money amounts are integers in minor units, never floats.")
    page.get_by_role("button", name="Save").click()
    assert "changed statement" in page.get_by_role("status").inner_text()
    assert fresh.ix.requirements.get(first).meta.user_edited is True


def test_reading_works_without_javascript(browser: Any, console: Served) -> None:
    context = browser.new_context(viewport=VIEWPORT, java_script_enabled=False)
    try:
        page = context.new_page()
        page.set_default_timeout(15_000)
        _login(page, console, "user:bob")
        assert page.locator("[data-candidate]").count() == 1
        assert page.get_by_role("button", name="Confirm: Send Dana the pricing deck").count() == 0  # bob only reads
        page.get_by_role("link", name="Log").click()
        page.get_by_role("button", name="Verify the log").click()
        assert page.locator("#verify-result").inner_text().startswith("Verified.")
        page.get_by_role("link", name="Requirements").click()
        page.get_by_label("Task").fill("store the invoice total")
        page.get_by_role("button", name="Preview").click()
        assert "integers in cents" in page.locator("#preview-result").inner_text()
    finally:
        context.close()
