"""The gate run page shows the run's postcondition results over real HTTP, without JavaScript."""

from __future__ import annotations

import copy
import html
import re
from typing import Any

from intently.gate import default_bundle
from intently.gate._sandbox import SandboxWorkspace, run_plan

from .conftest import Served


def test_the_run_page_lists_each_postcondition_with_its_result_and_detail(fresh: Served) -> None:
    ws = SandboxWorkspace(contacts={"client": "ops@northwind.example"}, downloads={"old.dmg": {"size": 9}})
    tools = copy.deepcopy(dict(default_bundle().sandbox["tools"]))
    tools["draft_email"]["postconditions"] = [{"check": "unchanged", "collection": "drafts"}]
    session = fresh.ix.gate.gate(ws.tools(), overrides=tools).session(
        user_request="Email the client the launch date and delete old installers",
        trusted={"contacts": ws.contacts},
    )
    plan: list[tuple[str, dict[str, Any]]] = [
        ("list_downloads", {}),  # shows old.dmg, so deleting it waits for approval (staged, checked)
        ("draft_email", {"to": "ops@northwind.example", "subject": "Launch", "body": "Ships next week."}),
        ("delete_file", {"path": "old.dmg"}),
    ]
    run_plan(session, ws, plan)
    with fresh.login("user:bob") as bob:  # reading needs no more than read access
        page = bob.get("/ns/proj/gate", params={"run": session.id})
    assert page.status_code == 200
    table = re.search(
        r'<table class="data" id="postconditions" aria-labelledby="post-h">(.*?)</table>', page.text, re.S
    )
    assert table, "no labelled postconditions table on the run page"
    assert '<h3 id="post-h">Postconditions</h3>' in page.text
    headers = re.findall(r'<th scope="col">([^<]+)</th>', table.group(1))
    assert headers == ["Check", "Result", "Detail"]
    rows = re.findall(r'<tr data-check="([^"]+)">(.*?)</tr>', table.group(1), re.S)
    assert [(check, "failed" if ">failed<" in body else "passed") for check, body in rows] == [
        ("list_downloads:read_only:*", "passed"),
        ("draft_email:unchanged:drafts", "failed"),
        ("delete_file:max_removed:files", "passed"),
    ]
    assert "added ['draft1']" in html.unescape(rows[1][1])
    assert "1 of 3 failed" in table.group(1)
    assert "Postcondition draft_email:unchanged:drafts failed" in html.unescape(page.text)  # in "why"


def test_a_run_without_checks_says_so(console: Served) -> None:
    with console.login("user:alice") as alice:
        page = alice.get("/ns/proj/gate").text
    assert "No postconditions were checked for this run." in page
    assert 'id="postconditions"' not in page
