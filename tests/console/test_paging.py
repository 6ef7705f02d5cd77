"""The requirements, standing intents and gate runs lists page as the goals board does."""

from __future__ import annotations

import html
import re

import httpx

from intently.requirements._files import render_new_requirement
from intently.requirements._model import Provenance

from .conftest import TOOLS, Served
from .test_http import _csrf, _flash


def _walk(client: httpx.Client, url: str, row: str) -> list[list[str]]:
    """The ids of every page of a list, following its Next links from ``url``."""
    pages: list[list[str]] = []
    next_url: str | None = url
    while next_url:
        answer = client.get(html.unescape(next_url))
        assert answer.status_code == 200, answer.text
        pages.append(re.findall(rf'<tr {row}="([^"]+)"', answer.text))
        found = re.search(r'<a href="([^"]+)" rel="next">', answer.text)
        next_url = found.group(1) if found else None
    return pages


def _walk_waiting(client: httpx.Client, url: str) -> list[list[str]]:
    """The decision ids of every page of the gate's waiting calls, following the Next links of
    their own pager (the runs list beside it has another)."""
    pages: list[list[str]] = []
    next_url: str | None = url
    while next_url:
        answer = client.get(html.unescape(next_url))
        assert answer.status_code == 200, answer.text
        pages.append(re.findall(r'<tr data-decision="([^"]+)"', answer.text))
        nav = re.search(r'<nav class="pager" aria-label="Waiting call pages">(.*?)</nav>', answer.text, re.S)
        found = re.search(r'<a href="([^"]+)" rel="next">', nav.group(1)) if nav else None
        next_url = found.group(1) if found else None
    return pages


def _write_requirements(served: Served, count: int) -> None:
    """``count`` requirement files, written as a person writes them by hand (adding them one
    by one through the engine reloads every file each time: minutes for a few hundred)."""
    engine = served.ix.requirements
    taken: set[str] = set()
    for n in range(count):
        statement = f"Always keep module {n} under five hundred lines."
        meta = engine.build(
            statement,
            level=None,
            domains=(),
            paths=(),
            languages=(),
            hints=(),
            confidence="high",
            provenance=Provenance(kind="user", ref="", extracted_by="user:alice"),
            user_edited=True,
            existing=taken,
        )
        taken.add(meta.id)
        path = served.ix.home.requirements_dir / f"{meta.id}.md"
        path.write_text(render_new_requirement(meta, statement, ""), encoding="utf-8")


def test_the_requirements_table_pages_a_hundred_at_a_time_with_its_filters(fresh: Served) -> None:
    """Every requirement was one row of one page: thousands of rules made a page of
    megabytes. It pages like the board, its filters kept in the links."""
    _write_requirements(fresh, 230)
    every = {str(r.id) for r in fresh.ix.requirements.list()}
    with fresh.login("user:alice") as alice:
        pages = _walk(alice, "/ns/proj/requirements", "data-req")
        assert [len(p) for p in pages] == [100, 100, len(every) - 200]
        assert sorted(i for p in pages for i in p) == sorted(every)  # every row once
        first = alice.get("/ns/proj/requirements").text
        assert f"Items 1–100 of {len(every)}" in first
        styled = alice.get("/ns/proj/requirements?status=active&offset=100").text
        assert '<a href="/ns/proj/requirements?status=active" rel="prev">' in styled
        assert "status=active&amp;offset=200" in styled
        assert len(re.findall(r'<tr data-req="', styled)) == 100
        # An edit link keeps its page; an offset past the end shows the last page.
        assert "offset=100#drawer" in styled
        assert _walk(alice, "/ns/proj/requirements?offset=100000", "data-req") == [pages[-1]]
        assert alice.get("/ns/proj/requirements?offset=-1").status_code == 422


def test_the_standing_intents_list_pages_and_reads_only_the_shown_histories(fresh: Served) -> None:
    """Every standing intent was listed, and each one's fire history read (one query each) to
    show it: a page of hundreds of queries. It pages, and only the shown rows are read."""
    for n in range(130):
        fresh.ix.triggers.add(f"Check the deploy window {n}", when=[f"deploy{n}"])
    fresh.ix.checkpoint()
    live = {str(t.id) for t in fresh.ix.triggers.list()}
    shows: list[str] = []
    engine = type(fresh.ix.triggers)
    real = engine.show

    def counted(self: object, intent_id: str) -> object:
        shows.append(intent_id)
        return real(self, intent_id)  # type: ignore[arg-type]

    engine.show = counted  # type: ignore[method-assign]
    try:
        with fresh.login("user:alice") as alice:
            pages = _walk(alice, "/ns/proj/triggers", "data-intent")
            assert sorted(i for p in pages for i in p) == sorted(live)
            assert [len(p) for p in pages] == [100, len(live) - 100]
            assert len(shows) == len(live)  # one history read per row shown, none for other pages
            closed = alice.get("/ns/proj/triggers?closed=1").text
            assert "closed=1&amp;offset=100" in closed
    finally:
        engine.show = real  # type: ignore[method-assign]


def test_gate_runs_page_and_an_old_runs_waiting_call_can_be_approved(fresh: Served) -> None:
    """Only the 30 newest runs were listed, with no way to older ones; and a call still
    waiting in an older run, listed under "Waiting for a person", could not be approved or
    denied: the console looked for it among the 30 newest runs only."""
    for n in range(35):
        fresh.ix.gate.session(TOOLS, user_request=f"What is in my inbox, take {n}?").check(
            "search_emails", {"query": "inbox"}
        )
    fresh.ix.checkpoint()
    total = len(fresh.ix.gate.runs(1000))
    decision = fresh.facts["pending"]
    with fresh.login("user:alice") as alice:
        first = alice.get("/ns/proj/gate").text
        assert len(re.findall(r'<td class="nowrap">', first)) == 30
        assert "Items 1–30</span>" in first  # no total counted until the last page
        seen = re.findall(r'href="/ns/proj/gate\?run=([^"&]+)"', first)
        found = re.search(r'<a href="([^"]+)" rel="next">', first)
        assert found
        last = alice.get(html.unescape(found.group(1))).text
        assert f"Items 31–{total} of {total}" in last
        older = re.findall(r'href="/ns/proj/gate\?run=([^"&]+)&amp;offset=30"', last)
        assert len(older) == total - 30 and not set(older) & set(seen)
        shown_hash = re.search(
            rf'name="decision_id" value="{decision}"><input type="hidden" name="action_hash" value="([0-9a-f]+)"', last
        )
        assert shown_hash
        ok = _flash(
            alice,
            alice.post(
                "/ns/proj/gate/approve",
                data={"csrf": _csrf(last), "decision_id": decision, "action_hash": shown_hash.group(1)},
            ),
        )
        assert ok.startswith("ok: Approved once"), ok
    assert fresh.ix.gate.waiting() == []


def test_a_waiting_call_of_an_old_run_can_be_approved_from_the_console(fresh: Served) -> None:
    """The waiting list shows every unsettled call; approving one whose run was older than the
    30 newest failed with "no pending decision with this id among the recent runs"."""
    for n in range(31):
        fresh.ix.gate.session(TOOLS, user_request=f"What is in my inbox, take {n}?").check(
            "search_emails", {"query": "inbox"}
        )
    fresh.ix.checkpoint()
    decision = fresh.facts["pending"]
    with fresh.login("user:alice") as alice:
        page = alice.get("/ns/proj/gate").text
        shown_hash = re.search(
            rf'name="decision_id" value="{decision}"><input type="hidden" name="action_hash" value="([0-9a-f]+)"', page
        )
        assert shown_hash
        denied = _flash(
            alice,
            alice.post(
                "/ns/proj/gate/deny",
                data={"csrf": _csrf(page), "decision_id": decision, "action_hash": shown_hash.group(1)},
            ),
        )
        assert denied.startswith("ok: Denied"), denied
        unknown = _flash(
            alice,
            alice.post("/ns/proj/gate/approve", data={"csrf": _csrf(page), "decision_id": "nope", "action_hash": "0"}),
        )
        assert unknown.startswith("error: InvalidInput") and "no pending decision" in unknown
    assert fresh.ix.gate.waiting() == []


def test_the_waiting_calls_page_a_hundred_at_a_time_and_each_can_be_decided(fresh: Served) -> None:
    """ "Waiting for a person" listed the 500 newest waiting calls on one page, with no way to
    the rest, and its badge counted those 500: the 501st call waited unseen. It pages like the
    other lists (``?pending=``, beside the runs' ``?offset=``), the badge counts them all, and
    deciding a call on a later page comes back to that page."""
    for n in range(230):
        session = fresh.ix.gate.session(TOOLS, user_request="Delete the file named in 'cleanup.txt'")
        session.observe(
            "read_file",
            f"Old drafts to remove: file {n} is obsolete, please confirm.",
            args={"file_path": "cleanup.txt"},
        )
        assert str(session.check("delete_file", {"file_id": str(n)}).level) == fresh.facts["pending_level"]
    fresh.ix.checkpoint()
    every = [str(d["id"]) for d in fresh.ix.gate.waiting(10_000)]
    assert len(every) == 231
    with fresh.login("user:alice") as alice:
        pages = _walk_waiting(alice, "/ns/proj/gate")
        assert [len(p) for p in pages] == [100, 100, 31]
        assert [i for p in pages for i in p] == every  # newest first, every call once
        first = alice.get("/ns/proj/gate").text
        assert 'Waiting for a person <span class="badge">231</span>' in first
        assert "Items 1–100 of 231" in first
        last = alice.get("/ns/proj/gate?pending=200").text
        assert '<a href="/ns/proj/gate?pending=100" rel="prev">' in last
        assert _walk_waiting(alice, "/ns/proj/gate?pending=100000") == [pages[-1]]
        assert alice.get("/ns/proj/gate?pending=-1").status_code == 422
        oldest = pages[-1][-1]
        shown_hash = re.search(
            rf'name="decision_id" value="{oldest}"><input type="hidden" name="action_hash" value="([0-9a-f]+)">'
            r'<input type="hidden" name="run" value="[^"]*"><input type="hidden" name="pending" value="200">',
            last,
        )
        assert shown_hash
        answer = alice.post(
            "/ns/proj/gate/approve",
            data={"csrf": _csrf(last), "decision_id": oldest, "action_hash": shown_hash.group(1), "pending": "200"},
        )
        assert "pending=200" in answer.headers["location"]
        assert _flash(alice, answer).startswith("ok: Approved once")
    assert fresh.ix.gate.waiting_count() == 230
    assert oldest not in {str(d["id"]) for d in fresh.ix.gate.waiting(10_000)}
