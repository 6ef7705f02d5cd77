"""Steering over real HTTP: deny a waiting call, scan in the background, add and complete
goals, forms that fail validation, and the "new since last scan" badges."""

from __future__ import annotations

import html
import re
import time

import httpx
import pytest

from intently.core.errors import InvalidTransition

from .conftest import Served

AGENTS_MD = """# Agent guide

## Payments

- Never log full card numbers; mask all but the last four digits.
- Always retry webhook deliveries with exponential backoff.
"""


def _csrf(page: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page)
    assert found, "the page carries no CSRF token"
    return found.group(1)


def _landed(client: httpx.Client, response: httpx.Response) -> tuple[str, str]:
    """Follow a form's redirect: (the flash text with its kind, the page it landed on)."""
    assert response.status_code == 303, response.text
    landed = client.get(response.headers["location"])
    found = re.search(r'<div class="flash (ok|error)"[^>]*>(.*?)</div>', landed.text, re.S)
    assert found, "no flash message after the form"
    return f"{found.group(1)}: {html.unescape(found.group(2))}", landed.text


def test_deny_settles_a_waiting_call_for_good(fresh: Served) -> None:
    pending = fresh.facts["pending"]
    with fresh.login("user:alice") as alice:
        gate = alice.get("/ns/proj/gate").text
        found = re.search(
            rf'name="decision_id" value="{pending}"><input type="hidden" name="action_hash" value="(\w+)"', gate
        )
        assert found, "the pending call carries its action hash"
        form = {"decision_id": pending, "action_hash": found.group(1), "reason": "not today", "csrf": _csrf(gate)}
        said, page = _landed(alice, alice.post("/ns/proj/gate/deny", data=form))
        assert said == f"ok: Denied (decision {pending})."
        assert f'data-decision="{pending}"' not in page  # no longer waiting
        again, _ = _landed(alice, alice.post("/ns/proj/gate/approve", data=form))
        assert again.startswith("error: InvalidTransition")
    with pytest.raises(InvalidTransition, match="denied to approved"):
        fresh.ix.gate.approve(pending)
    denial = fresh.ix.log.read("proj", op="GATE_DENIED")[-1]
    assert denial.target == pending and denial.payload["reason"] == "not today" and denial.actor == "user:alice"
    run = fresh.ix.gate.runs()[0]["id"]
    with fresh.login("user:bob") as bob:
        shown = bob.get(f"/ns/proj/gate?run={run}").text
        assert "denied by user:alice" in shown
        assert 'action="/ns/proj/gate/deny"' not in shown  # bob only reads


def test_scan_runs_in_the_background_and_marks_what_it_created(fresh: Served) -> None:
    (fresh.ix.home.project_root / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8")
    with fresh.login("user:alice") as alice:
        csrf = _csrf(alice.get("/ns/proj/requirements").text)
        started = alice.post("/ns/proj/requirements/scan", data={"csrf": csrf})
        assert started.status_code == 303
        job_page = started.headers["location"]
        assert re.fullmatch(r"/ns/proj/requirements/scan/[\w-]+", job_page)
        deadline = time.monotonic() + 60
        status = alice.get(job_page + "/status").json()
        while status["state"] == "running" and time.monotonic() < deadline:
            time.sleep(0.1)
            status = alice.get(job_page + "/status").json()
        assert status["state"] == "done", status
        assert status["counts"]["created"] >= 2 and "created" in status["summary"]
        shown = alice.get(job_page).text  # what a reload shows without JavaScript
        assert "Done in" in shown and 'http-equiv="refresh"' not in shown
        assert f"<dt>created</dt><dd>{status['counts']['created']}</dd>" in shown
        with fresh.login("user:carol") as carol:
            assert carol.get(job_page + "/status").status_code == 404  # carol cannot read proj

        created = fresh.ix.log.read("proj", op="REQ_SCAN", newest_first=True, limit=1)[0].payload["created"]
        assert len(created) == status["counts"]["created"]
        by_hand = fresh.ix.requirements.add("Every public function has a docstring.", level="project")
        listing = alice.get("/ns/proj/requirements").text
        marked = set(re.findall(r"<code>([^<]+)</code>[^<]*<span class=\"badge good\">new</span>", listing))
        assert marked == set(created)
        assert by_hand.id not in marked and f"{len(created)} new" in listing


def test_a_second_scan_while_one_runs_joins_it(fresh: Served) -> None:
    with fresh.login("user:alice") as alice:
        csrf = _csrf(alice.get("/ns/proj/requirements").text)
        first = alice.post("/ns/proj/requirements/scan", data={"csrf": csrf}).headers["location"]
        second = alice.post("/ns/proj/requirements/scan", data={"csrf": csrf}).headers["location"]
        if first != second:  # the first finished between the two posts: then a new one starts
            assert alice.get(first + "/status").json()["state"] != "running"
        for location in {first, second}:
            deadline = time.monotonic() + 60
            while alice.get(location + "/status").json()["state"] == "running" and time.monotonic() < deadline:
                time.sleep(0.1)
        with fresh.login("user:bob") as bob:
            refused = bob.post("/ns/proj/requirements/scan", data={"csrf": _csrf(bob.get("/ns/proj/goals").text)})
            said, _ = _landed(bob, refused)
            assert said.startswith("error: PermissionDenied")


def test_goals_are_added_and_completed_from_the_console(fresh: Served) -> None:
    with fresh.login("user:alice") as alice:
        csrf = _csrf(alice.get("/ns/proj/goals").text)
        form = {"text": "Publish the migration runbook", "type": "COMMITMENT", "priority": "HIGH", "due": "2026-04-01"}
        said, _ = _landed(alice, alice.post("/ns/proj/goals", data={**form, "csrf": csrf}))
        assert said == "ok: Added: Publish the migration runbook"
        added = next(i for i in fresh.ix.goals.list_intents() if i.value == "Publish the migration runbook")
        assert str(added.intent_type) == "COMMITMENT" and str(added.priority) == "HIGH"
        assert str(added.epistemic_type) == "ASSERTED"

        bad, _ = _landed(alice, alice.post("/ns/proj/goals", data={**form, "type": "WISH", "csrf": csrf}))
        assert bad.startswith("error: ") and "WISH" in bad

        stale = {"version": str(added.version - 1), "csrf": csrf}
        refused, _ = _landed(alice, alice.post(f"/ns/proj/goals/{added.id}/complete", data=stale))
        assert refused.startswith("error: ")
        assert str(fresh.ix.goals.get(added.id).state) == "ACTIVE"
        current = {"version": str(added.version), "csrf": csrf}
        done, board = _landed(alice, alice.post(f"/ns/proj/goals/{added.id}/complete", data=current))
        assert done.startswith("ok: Completed")
        assert str(fresh.ix.goals.get(added.id).state) == "COMPLETED"
        assert 'aria-label="Complete: Publish the migration runbook"' not in board


def test_a_form_that_fails_validation_comes_back_with_the_error_by_the_field(fresh: Served) -> None:
    with fresh.login("user:alice") as alice:
        size = fresh.ix.log.size("proj")  # after the login, which logs its session
        csrf = _csrf(alice.get("/ns/proj/triggers").text)
        form = {"reminder": "", "when": "quarterly audit", "cooldown": "24h", "csrf": csrf}
        sent = alice.post("/ns/proj/triggers", data=form, headers={"referer": fresh.url + "/ns/proj/triggers"})
        assert sent.status_code == 303 and sent.headers["location"] == "/ns/proj/triggers"  # not a JSON 422
        said, page = _landed(alice, sent)
        assert said.startswith("error: Check the form: reminder: required")
        field = re.search(r'<input id="reminder"[^>]*>', page)
        assert (
            field and 'aria-invalid="true"' in field.group(0) and 'aria-describedby="reminder-error"' in field.group(0)
        )
        assert re.search(
            r'aria-describedby="reminder-error" autofocus><p class="field-error" id="reminder-error">required', page
        )
        assert ">quarterly audit</textarea>" in page and 'value="24h"' in page  # what was typed comes back
        assert csrf not in re.sub(r'name="csrf" value="[^"]+"|content="[^"]+"', "", page)

        number, page = _landed(
            alice, alice.post("/ns/proj/triggers", data={**form, "reminder": "x", "max_fires": "lots"})
        )
        assert "max_fires" in number and 'id="max_fires-error"' in page

        address = alice.get("/ns/proj/log?proof=first")
        assert address.status_code == 422 and address.headers["content-type"].startswith("text/html")
        assert "proof: " in html.unescape(address.text)

        forged = alice.post("/ns/proj/triggers", data={**form, "csrf": "forged"})
        assert forged.status_code == 403 and forged.headers["content-type"].startswith("text/html")
        api = alice.post(
            "/v1/namespaces/proj/triggers",
            json={"when": ["x"]},
            headers={"authorization": f"Bearer {fresh.tokens['user:alice']}"},
        )
        assert api.status_code == 422 and api.json()["title"] == "InvalidInput"  # the API keeps its own answer
    assert fresh.ix.log.size("proj") == size  # nothing was written
