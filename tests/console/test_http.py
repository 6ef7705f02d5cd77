"""The console over real HTTP (no browser): sessions, CSRF, permissions, the log, failures."""

from __future__ import annotations

import html
import re

import httpx

from intently import ManualClock
from intently.console._web import attempt
from intently.server import TokenStore

from .conftest import Served


def _csrf(page: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page)
    assert found, "the page carries no CSRF token"
    return found.group(1)


def _flash(client: httpx.Client, response: httpx.Response) -> str:
    assert response.status_code == 303, response.text
    landed = client.get(response.headers["location"])
    found = re.search(r'<div class="flash (ok|error)"[^>]*>(.*?)</div>', landed.text, re.S)
    assert found, "no flash message after the form"
    return f"{found.group(1)}: {html.unescape(found.group(2))}"


def test_pages_need_a_session(console: Served) -> None:
    with console.client() as client:
        r = client.get("/ns/proj/goals?type=RISK")
        assert r.status_code == 303
        assert r.headers["location"] == "/login?next=%2Fns%2Fproj%2Fgoals%3Ftype%3DRISK"
        assert client.get("/").headers["location"].startswith("/login")
        assert client.get("/login").status_code == 200


def test_login_checks_the_token_and_keeps_it_in_a_strict_httponly_cookie(console: Served) -> None:
    with console.client() as client:
        bad = client.post("/login", data={"token": "itk_000000000000_" + "x" * 43})
        assert bad.status_code == 401 and "unknown or revoked" in bad.text
        assert "set-cookie" not in bad.headers
        good = client.post("/login", data={"token": console.tokens["user:alice"], "next": "//evil.example/x"})
        assert good.status_code == 303 and good.headers["location"] == "/"  # no open redirect
        cookie = good.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert client.get("/").headers["location"] == "/ns/proj/goals"


def test_a_namespace_the_actor_cannot_read_is_404_like_a_missing_one(console: Served) -> None:
    with console.login("user:carol") as carol, console.login("user:alice") as alice:
        hidden = carol.get("/ns/proj/log")
        missing = carol.get("/ns/nosuch/log")
        assert hidden.status_code == missing.status_code == 404
        assert hidden.text.replace("proj", "X") == missing.text.replace("nosuch", "X")
        assert alice.get("/ns/BAD$NAME/goals").status_code == 404
        assert alice.get("/ns/proj/log").status_code == 200


def test_every_page_is_self_contained_and_locked_down(console: Served) -> None:
    with console.login("user:alice") as client:
        for view in ("goals", "requirements", "triggers", "gate", "log"):
            r = client.get(f"/ns/proj/{view}")
            assert r.status_code == 200, view
            assert "script-src 'self'" in r.headers["content-security-policy"]
            assert r.headers["x-frame-options"] == "DENY"
            assert not re.search(r'(src|href)="(https?:)?//', r.text), f"{view} loads something from elsewhere"
            assert 'aria-keyshortcuts="g ' in r.text
        for asset in ("console.css", "console.js"):
            assert client.get(f"/console-static/{asset}").status_code == 200


def test_forms_without_the_session_token_change_nothing(fresh: Served) -> None:
    candidate = fresh.facts["candidate"]
    with fresh.login("user:alice") as alice, fresh.login("user:alice") as other:
        size = fresh.ix.log.size("proj")  # after the logins, which log their sessions
        other_csrf = _csrf(other.get("/ns/proj/goals").text)
        own_csrf = _csrf(alice.get("/ns/proj/goals").text)
        assert own_csrf != other_csrf  # one token per login session
        url = f"/ns/proj/goals/{candidate}/confirm"
        assert alice.post(url, data={}).status_code == 403
        assert alice.post(url, data={"csrf": other_csrf}).status_code == 403
        foreign = alice.post(url, data={"csrf": own_csrf}, headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403 and "Form refused" in foreign.text
    assert fresh.ix.goals.get(candidate).epistemic_type == "INFERRED"
    assert fresh.ix.log.size("proj") == size


def test_a_reader_sees_no_controls_and_cannot_act(fresh: Served) -> None:
    candidate = fresh.facts["candidate"]
    with fresh.login("user:bob") as bob:
        page = bob.get("/ns/proj/goals").text
        assert "Send Dana the pricing deck" in page and ">Confirm</button>" not in page
        assert "New standing intent" not in bob.get("/ns/proj/triggers").text
        assert "Approve delete_file once" not in bob.get("/ns/proj/gate").text
        said = _flash(bob, bob.post(f"/ns/proj/goals/{candidate}/confirm", data={"csrf": _csrf(page)}))
        assert said.startswith("error: PermissionDenied")
        said = _flash(bob, bob.post(f"/ns/proj/triggers/{fresh.facts['trigger']}/cancel", data={"csrf": _csrf(page)}))
        assert said.startswith("error:")  # the engine decides; another's reminder is not even visible
    assert fresh.ix.goals.get(candidate).epistemic_type == "INFERRED"
    assert fresh.ix.triggers.show(fresh.facts["trigger"]).state == "armed"


def test_revoking_the_token_ends_the_console_session(fresh: Served) -> None:
    store = TokenStore(fresh.ix)
    bob_token = next(t for t in store.list() if t.actor == "user:bob")
    with fresh.login("user:bob") as bob:
        assert bob.get("/ns/proj/goals").status_code == 200
        store.revoke(bob_token.id)
        assert bob.get("/ns/proj/goals").headers["location"].startswith("/login")


def test_logging_out_refuses_the_session_cookie_afterwards(fresh: Served) -> None:
    """Log out used to drop the cookie in this browser only: the same cookie sent again (a
    copy, a shared machine, a back button) still acted as bob. Now the cookie holds a session
    token of its own, and log out revokes it (in the log), leaving the pasted token valid."""
    from intently.console._auth import COOKIE

    with fresh.login("user:bob") as bob:
        cookie = bob.cookies[COOKIE]
        assert fresh.tokens["user:bob"] not in cookie  # the pasted token never sits in the cookie
        assert bob.get("/ns/proj/goals").status_code == 200
        assert bob.post("/logout").headers["location"] == "/login"
    with fresh.client() as copy:
        copy.cookies.set(COOKIE, cookie)
        assert copy.get("/ns/proj/goals").headers["location"].startswith("/login")
    with fresh.client() as forged:  # a plain API token is not a console session
        forged.cookies.set(COOKIE, fresh.tokens["user:bob"] + ".nonce")
        assert forged.get("/ns/proj/goals").headers["location"].startswith("/login")
    with fresh.login("user:bob") as again:
        assert again.get("/ns/proj/goals").status_code == 200
    ops = [o for o in fresh.ix.log.read("proj") if o.op.startswith("TOKEN_") and o.actor == "user:bob"]
    assert [o.op for o in ops] == ["TOKEN_CREATE", "TOKEN_REVOKE", "TOKEN_CREATE"]
    assert fresh.ix.log.verify(["proj"]).ok


def test_a_console_session_expires_on_the_server(fresh: Served) -> None:
    """The cookie's max-age is the browser's promise; the server now refuses the session after
    twelve hours by its own clock, whatever the browser kept."""
    clock = fresh.ix.runtime.clock
    assert isinstance(clock, ManualClock)
    with fresh.login("user:bob") as bob:
        assert bob.get("/ns/proj/goals").status_code == 200
        clock.advance("11h")
        assert bob.get("/ns/proj/goals").status_code == 200
        clock.advance("1h")
        assert bob.get("/ns/proj/goals").headers["location"].startswith("/login")
    with fresh.login("user:bob") as again:  # the pasted token itself does not expire
        assert again.get("/ns/proj/goals").status_code == 200


def test_approval_is_bound_to_the_exact_action(fresh: Served) -> None:
    decision = fresh.facts["pending"]
    with fresh.login("user:alice") as alice:
        page = alice.get("/ns/proj/gate").text
        csrf = _csrf(page)
        shown_hash = re.search(
            rf'name="decision_id" value="{decision}"><input type="hidden" name="action_hash" value="([0-9a-f]+)"', page
        )
        assert shown_hash
        wrong = _flash(
            alice,
            alice.post("/ns/proj/gate/approve", data={"csrf": csrf, "decision_id": decision, "action_hash": "0" * 64}),
        )
        assert wrong.startswith("error: InvalidInput") and "action changed" in wrong
        assert all(not r["approvals"] for r in (fresh.ix.gate.run(x["id"]) for x in fresh.ix.gate.runs()))
        ok = _flash(
            alice,
            alice.post(
                "/ns/proj/gate/approve",
                data={"csrf": csrf, "decision_id": decision, "action_hash": shown_hash.group(1)},
            ),
        )
        assert ok.startswith("ok: Approved once")
        again = _flash(
            alice,
            alice.post(
                "/ns/proj/gate/approve",
                data={"csrf": csrf, "decision_id": decision, "action_hash": shown_hash.group(1)},
            ),
        )
        assert again.startswith("error: InvalidTransition")
        assert "No tool call is waiting" in alice.get("/ns/proj/gate").text


def test_a_waiting_call_stays_listed_however_many_runs_come_after(fresh: Served) -> None:
    """The list of calls waiting for a person is every unsettled decision, not those of the
    latest runs: 31 newer runs used to push it off the page while it still waited."""
    from .conftest import TOOLS

    for n in range(31):
        fresh.ix.gate.session(TOOLS, user_request=f"What is in my inbox, take {n}?").check(
            "search_emails", {"query": "inbox"}
        )
    fresh.ix.checkpoint()
    with fresh.login("user:alice") as alice:
        page = alice.get("/ns/proj/gate").text
    assert f'name="decision_id" value="{fresh.facts["pending"]}"' in page
    assert [d["id"] for d in fresh.ix.gate.waiting()] == [fresh.facts["pending"]]


def test_two_workers_check_each_others_form_tokens(fresh: Served) -> None:
    """Every `serve --workers` process reads one form-token key from the home, so a token one
    process issued is accepted by another (a per-process key refused half the forms)."""
    from intently.console._auth import Sessions

    first, second = Sessions(fresh.ix), Sessions(fresh.ix)
    cookie = first.cookie_value("itk_x_y")
    assert first._csrf(cookie) == second._csrf(cookie)
    key = fresh.ix.home.state_dir / "console.key"
    assert key.stat().st_mode & 0o077 == 0  # private to the user


def test_saving_an_unchanged_requirement_writes_nothing(fresh: Served) -> None:
    req_id = fresh.facts["requirements"][1]
    before = fresh.ix.requirements.get(req_id)
    with fresh.login("user:alice") as alice:
        size = fresh.ix.log.size("proj")  # after the login, which logs its session
        page = alice.get(f"/ns/proj/requirements?edit={req_id}").text
        form = {
            "csrf": _csrf(page),
            "statement": before.statement,
            "rationale": before.rationale,
            "level": before.scope.level,
            "domains": ", ".join(before.scope.domains),
            "paths": ", ".join(before.scope.paths),
            "hints": "\n".join(before.meta.hints),
        }
        said = _flash(alice, alice.post(f"/ns/proj/requirements/{req_id}/edit", data=form))
        assert said.startswith("ok: No change")
        assert fresh.ix.log.size("proj") == size
        said = _flash(alice, alice.post(f"/ns/proj/requirements/{req_id}/disable", data={"csrf": form["csrf"]}))
        assert said.startswith("ok:") and fresh.ix.requirements.get(req_id).status == "disabled"
    assert fresh.ix.log.size("proj") == size + 1


def test_a_drawer_opened_before_another_save_does_not_undo_it(fresh: Served) -> None:
    """The drawer posts every field: two people with it open, the second save silently put
    back what the first had changed. It now carries the file's hash and a stale one is refused."""
    req_id = fresh.facts["requirements"][0]
    before = fresh.ix.requirements.get(req_id)

    def drawer(client: httpx.Client) -> dict[str, str]:
        page = client.get(f"/ns/proj/requirements?edit={req_id}").text
        base = re.search(r'name="base" value="([^"]+)"', page)
        assert base, "the drawer carries no base hash"
        return {"csrf": _csrf(page), "base": base.group(1), "statement": before.statement, "level": "project"}

    with fresh.login("user:alice") as alice, fresh.login("user:alice") as other:
        first, second = drawer(alice), drawer(other)
        said = _flash(alice, alice.post(f"/ns/proj/requirements/{req_id}/edit", data={**first, "rationale": "Audit."}))
        assert said.startswith("ok: Saved")
        size = fresh.ix.log.size("proj")
        stale = {**second, "statement": before.statement + " Ever."}
        said = _flash(other, other.post(f"/ns/proj/requirements/{req_id}/edit", data=stale))
        assert said.startswith("error: ConflictError") and "reopen it" in said
        assert fresh.ix.log.size("proj") == size
        saved = fresh.ix.requirements.get(req_id)
        assert saved.rationale == "Audit." and saved.statement == before.statement
        again = {**drawer(other), "statement": before.statement + " Ever.", "rationale": "Audit."}
        assert _flash(other, other.post(f"/ns/proj/requirements/{req_id}/edit", data=again)).startswith("ok: Saved")


def test_log_pages_prove_and_verify(fresh: Served) -> None:
    fresh.ix.goals.add_many([{"text": f"Backlog item {n}"} for n in range(60)])
    fresh.ix.checkpoint()
    with fresh.login("user:alice") as alice:
        size = fresh.ix.log.size("proj")  # the login's own session is the newest operation
        first = alice.get("/ns/proj/log").text
        assert f'<td class="num">{size}</td>' in first and '<td class="num">1</td>' not in first
        older = re.search(r'href="([^"]+)" rel="next"', first)
        assert older
        last = alice.get(html.unescape(older.group(1))).text
        assert '<td class="num">1</td>' in last and 'rel="prev"' in last
        proved = alice.get("/ns/proj/log?proof=7").text
        assert fresh.ix.log.inclusion_proof("proj", 7)["root"] in proved
        assert "Operation 7 is in the tree" in proved
        assert "Verified." in alice.get("/ns/proj/log?verify=1").text
        with fresh.ix.store.transaction() as tx:
            tx.execute("UPDATE log_ops SET payload = ? WHERE stream = ? AND seq = ?", ('{"forged":true}', "proj", 2))
        tampered = alice.get("/ns/proj/log?verify=1").text
        assert "Does not verify: LeafMismatch" in tampered and "first bad operation: 2" in tampered


def test_an_engine_missing_from_the_build_is_a_panel_not_an_error(console: Served) -> None:
    outcome = attempt(console.ix, "scheduler", "list")
    assert outcome.panel is not None and outcome.panel.kind == "unavailable"
    assert "not available in this build" in outcome.panel.title


def test_mounting_twice_is_harmless(console: Served) -> None:
    from intently.console import mount_console
    from intently.server import create_app

    app = create_app(console.ix)
    mount_console(app, console.ix)
    routes = len(app.routes)
    mount_console(app, console.ix)
    assert len(app.routes) == routes


def test_a_risk_past_its_deadline_shows_its_escalation(fresh: Served) -> None:
    from datetime import timedelta

    from intently import ManualClock

    risk = fresh.ix.goals.add("Vendor contract lapses", type="RISK", priority="HIGH", due="2026-03-03T09:00:00Z")
    clock = fresh.ix.runtime.clock
    assert isinstance(clock, ManualClock)
    clock.advance(timedelta(days=2))
    fresh.ix.goals.organise()
    with fresh.login("user:alice") as alice:
        page = html.unescape(alice.get("/ns/proj/goals").text)
    risks = page[page.index('aria-label="Risks with deadlines"') :]
    row = risks[risks.index("Vendor contract lapses") :]
    row = row[: row.index("</tr>")]
    assert ">expired<" in row and "escalated HIGH → CRITICAL" in row
    assert fresh.ix.goals.get(risk.id).priority == "CRITICAL"


def test_a_proposed_standing_intent_is_armed_from_the_console(fresh: Served) -> None:
    proposed = fresh.ix.triggers.propose("Book the venue", when=["offsite planning"])
    assert proposed.state == "pending"
    with fresh.login("user:alice") as alice:
        page = alice.get("/ns/proj/triggers").text
        assert 'aria-label="Arm: Book the venue"' in page
        said = _flash(alice, alice.post(f"/ns/proj/triggers/{proposed.id}/confirm", data={"csrf": _csrf(page)}))
        assert said.startswith("ok: Armed")
        snoozed = _flash(
            alice, alice.post(f"/ns/proj/triggers/{proposed.id}/snooze", data={"csrf": _csrf(page), "until": "3d"})
        )
        assert snoozed.startswith("ok: Snoozed for 3d")
    shown = fresh.ix.triggers.show(proposed.id)
    assert shown.state == "armed" and (shown.snoozed_until or "").startswith("2026-03-05T09:00:00")


def test_domains_are_added_and_edited(fresh: Served) -> None:
    with fresh.login("user:alice") as alice:
        csrf = _csrf(alice.get("/ns/proj/requirements").text)
        form = {"csrf": csrf, "name": "payments", "description": "Money movement", "paths": "src/payments/**"}
        assert _flash(alice, alice.post("/ns/proj/requirements/domains", data=form)).startswith(
            "ok: Domain payments added"
        )
        again = _flash(alice, alice.post("/ns/proj/requirements/domains", data=form))
        assert again.startswith("error: InvalidInput") and "already exists" in again
        edit = {"csrf": csrf, "description": "Money in and out", "paths": "src/payments/**, src/billing/**"}
        assert _flash(alice, alice.post("/ns/proj/requirements/domains/payments", data=edit)).startswith("ok:")
    (domain,) = [d for d in fresh.ix.requirements.domains() if d.name == "payments"]
    assert domain.description == "Money in and out" and domain.paths == ["src/payments/**", "src/billing/**"]


def test_review_edit_dismiss_and_a_stale_page(fresh: Served) -> None:
    candidate = fresh.facts["candidate"]
    with fresh.login("user:alice") as alice:
        page = alice.get("/ns/proj/goals").text
        version = int(re.search(rf'goals/{candidate}/confirm">.*?name="version" value="(\d+)"', page, re.S).group(1))  # type: ignore[union-attr]
        base = f"/ns/proj/goals/{candidate}"
        edited = _flash(
            alice,
            alice.post(
                f"{base}/edit",
                data={"csrf": _csrf(page), "version": version, "text": "Send Dana the 2026 pricing deck"},
            ),
        )
        assert edited.startswith("ok: Saved")
        stale = _flash(alice, alice.post(f"{base}/dismiss", data={"csrf": _csrf(page), "version": version}))
        assert stale.startswith("error: ConflictError")  # the page was out of date: nothing dismissed
        assert fresh.ix.goals.get(candidate).epistemic_type == "INFERRED"
        fresh_page = alice.get("/ns/proj/goals").text
        assert "Send Dana the 2026 pricing deck" in fresh_page
        current = fresh.ix.goals.get(candidate).version
        gone = _flash(alice, alice.post(f"{base}/dismiss", data={"csrf": _csrf(fresh_page), "version": current}))
        assert gone.startswith("ok: Dismissed")
        assert "Nothing waiting" in alice.get("/ns/proj/goals").text
    assert fresh.ix.goals.get(candidate).epistemic_type == "DEPRECATED"


def test_the_login_page_answers_whatever_is_pasted(fresh: Served) -> None:
    """The whole `token create --json` output pasted logs in; nothing, or a wall of text,
    gets the login page back with a message, never a JSON error."""
    import json as _json

    blob = _json.dumps({"actor": "user:alice", "token": fresh.tokens["user:alice"], "label": "x" * 300})
    with fresh.client() as c:
        assert c.post("/login", data={"token": blob, "next": "/"}).status_code == 303
    for pasted in ("", "y" * 500):
        with fresh.client() as c:
            r = c.post("/login", data={"token": pasted, "next": "/"})
        assert r.status_code == 401 and r.headers["content-type"].startswith("text/html"), r.text[:200]
        assert "token" in r.text


def test_an_engine_refusal_comes_back_as_the_filled_form_with_the_error_by_the_field(fresh: Served) -> None:
    """A due date in the past is refused by the goals engine, not by the form's own bounds: the
    form still comes back with what was typed and the message next to the due field."""
    with fresh.login("user:alice") as alice:
        csrf = _csrf(alice.get("/ns/proj/goals").text)
        sent = alice.post(
            "/ns/proj/goals",
            data={
                "csrf": csrf,
                "text": "Publish the pricing page",
                "type": "GOAL",
                "priority": "HIGH",
                "due": "2020-01-01",
            },
        )
        assert sent.status_code == 303
        page = alice.get(sent.headers["location"]).text
    assert 'id="goal-due"' in page and 'value="2020-01-01"' in page
    assert re.search(r'id="goal-due"[^>]*aria-invalid="true"', page)
    assert 'id="due-error"' in page and "Publish the pricing page" in page
