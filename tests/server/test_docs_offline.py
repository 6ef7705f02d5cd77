"""``/docs`` works on a machine without internet: nothing it serves comes from another host.

FastAPI's Swagger UI and ReDoc pages loaded their scripts, styles and icon from CDNs, so
``/docs`` was a blank page offline (and every visit told a CDN about it). The reference is
now one self-contained page built from ``/openapi.json``.
"""

from __future__ import annotations

import re

from .conftest import Api

_FOREIGN = re.compile(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


def test_docs_is_one_self_contained_page_listing_every_route(api: Api) -> None:
    with api.client() as c:
        spec = c.get("/openapi.json").json()
        page = c.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert not _FOREIGN.search(page.text), _FOREIGN.search(page.text)
    assert "<script" not in page.text.lower()  # nothing to load, nothing to run
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    for path, item in spec["paths"].items():
        for verb in item:
            assert f'<span class="verb {verb}">{verb}</span> <code>{path}</code>' in page.text, (verb, path)
    for name in spec["components"]["schemas"]:
        assert f'id="schema-{name}"' in page.text
    assert '<a href="/openapi.json">' in page.text


def test_the_cdn_pages_are_gone(api: Api) -> None:
    with api.client() as c:
        redoc = c.get("/redoc", follow_redirects=False)
        assert redoc.status_code == 308 and redoc.headers["location"] == "/docs"
        assert c.get("/docs/oauth2-redirect").status_code == 404
        assert "/docs" not in [p for p in c.get("/openapi.json").json()["paths"]]


def test_every_answer_says_nosniff(api: Api) -> None:
    """JSON, problem+json (a 404, a 413), the docs and the console's static files: a browser
    must not guess another type for any of them."""
    with api.client(api.token("user:alice")) as c:
        answers = [
            c.get("/v1/whoami"),
            c.get("/v1/no-such-route"),
            c.post("/v1/namespaces/proj/goals", content=b"x" * 10_000, headers={"content-type": "application/json"}),
            c.get("/openapi.json"),
            c.get("/console-static/console.js"),
            c.get("/login"),
        ]
    assert [a.status_code for a in answers] == [200, 404, 413, 200, 200, 200]
    for answer in answers:
        assert answer.headers.get("x-content-type-options") == "nosniff", answer.request.url


def test_an_internal_error_says_nosniff_too(api: Api) -> None:
    """An unexpected failure (here a row damaged behind the server's back, which no error of
    ours names) is answered outside every middleware: its problem+json carried no nosniff
    until the handler set it itself."""
    goal = api.ix.goals.add("Ship the billing API v2")
    with api.ix.store.transaction() as tx:
        tx.execute("UPDATE goals_intents SET stakeholders = ? WHERE id = ?", ("not json", goal.id))
    with api.client(api.token("user:alice")) as c:
        failed = c.get("/v1/namespaces/proj/goals")
    assert failed.status_code == 500 and failed.json()["title"] == "InternalError"
    assert failed.headers.get("x-content-type-options") == "nosniff"
