"""The HTTP API against a real server: auth, isolation, pagination, limits, problems, OpenAPI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from intently import Actor, Intently, Permission
from intently.server import TokenStore

from .conftest import MAX_BODY, Api

PROBLEM = "application/problem+json"
INTENTLY = str(Path(sys.executable).parent / "intently")


def test_health_needs_no_token(api: Api) -> None:
    with api.client() as c:
        r = c.get("/v1/health")
    assert r.status_code == 200 and r.json()["status"] == "ok"


def test_missing_and_bad_tokens_are_401_problems(api: Api) -> None:
    with api.client() as c:
        r = c.get("/v1/whoami")
    assert r.status_code == 401
    assert r.headers["content-type"] == PROBLEM
    assert r.headers["www-authenticate"].startswith("Bearer")
    with api.client("itk_nope_nope") as c:
        assert c.get("/v1/whoami").status_code == 401


def test_whoami_maps_token_to_actor(api: Api) -> None:
    with api.client(api.token("user:alice")) as c:
        data = c.get("/v1/whoami").json()
    assert data["actor"] == "user:alice"
    assert "admin" in data["namespaces"]["proj"]


def test_unreadable_namespace_looks_exactly_missing(api: Api) -> None:
    with api.client(api.token("user:bob")) as c:
        hidden = c.get("/v1/namespaces/proj/log/ops")
        missing = c.get("/v1/namespaces/nosuch/log/ops")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.headers["content-type"] == missing.headers["content-type"] == PROBLEM
    assert hidden.text.replace("proj", "X") == missing.text.replace("nosuch", "X")


def test_grants_enforce_permissions(api: Api) -> None:
    alice, bob = api.token("user:alice"), api.token("user:bob")
    with api.client(alice) as c:
        r = c.post("/v1/namespaces/proj/grants", json={"actor": "user:bob", "permission": "read"})
        assert r.status_code == 201, r.text
    with api.client(bob) as c:
        assert c.get("/v1/namespaces/proj/log/ops").status_code == 200
        denied = c.post("/v1/namespaces/proj/grants", json={"actor": "user:bob", "permission": "admin"})
        assert denied.status_code == 403 and denied.headers["content-type"] == PROBLEM
        assert [g["actor"] for g in c.get("/v1/namespaces/proj/grants").json()["items"]] == ["user:bob"]
    with api.client(alice) as c:
        assert c.delete("/v1/namespaces/proj/grants/user:bob/read").json()["revoked"] is True
    with api.client(bob) as c:
        assert c.get("/v1/namespaces/proj/log/ops").status_code == 404


def test_log_ops_paginate_without_gaps(api: Api) -> None:
    with api.client(api.token("user:alice")) as c:
        for name in ("bob", "carol", "dave", "erin"):
            c.post("/v1/namespaces/proj/grants", json={"actor": name, "permission": "read"})
        seqs: list[int] = []
        after = 0
        while True:
            page = c.get("/v1/namespaces/proj/log/ops", params={"after": after, "limit": 2}).json()
            assert len(page["items"]) <= 2
            seqs += [o["seq"] for o in page["items"]]
            if page["next_after"] is None:
                break
            after = page["next_after"]
    assert seqs == list(range(1, api.ix.log.size("proj") + 1))
    assert len(seqs) >= 6  # HOME_INIT, TOKEN_CREATE and four grants


def test_log_verify_proof_and_checkpoint(api: Api) -> None:
    with api.client(api.token("user:alice")) as c:
        assert c.get("/v1/namespaces/proj/log/verify").json()["ok"] is True
        proof = c.get("/v1/namespaces/proj/log/proof/1").json()
        assert proof["verified"] is True and proof["operation"]["op"] == "HOME_INIT"
        cps = c.get("/v1/namespaces/proj/log/checkpoints").json()
        assert cps["checkpoint"]["stream"] == "proj" and cps["size"] >= 2
        assert c.get("/v1/namespaces/proj/log/proof/999").status_code == 404
        for bad in ("proof/5?size=99999999999999999999", "proof/99999999999999999999", "proof/0", "proof/1?size=0"):
            r = c.get(f"/v1/namespaces/proj/log/{bad}")  # out of range: a 422 naming it, never a 500
            assert r.status_code == 422 and r.headers["content-type"] == PROBLEM, (bad, r.text)


def test_token_creation_is_logged_without_the_token(api: Api) -> None:
    token = api.token("agent:ci")
    ops = api.ix.log.read("proj", op="TOKEN_CREATE")
    assert len(ops) == 1
    assert ops[0].payload["actor"] == "agent:ci"
    assert token not in ops[0].payload_json


def test_context_route_returns_the_block(api: Api, ix: Intently) -> None:
    ix.goals.add("Customer data must never leak through logs", type="RISK", priority="CRITICAL")
    with api.client(api.token("user:alice")) as c:
        r = c.post("/v1/namespaces/proj/context", json={"query": "release the app", "budget": 800, "fire": False})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["tokens"] <= 800
    assert "Customer data must never leak" in data["text"]
    assert {s["name"]: s["status"] for s in data["sections"]}["active_goals"] == "ok"


def test_a_reader_previews_standing_intents_but_cannot_use_them_up(api: Api, ix: Intently) -> None:
    """Firing charges a reminder's budget and starts its cooldown: a read-only token that asked
    for the context must not spend the owner's one-shot reminder."""
    trigger = ix.triggers.add("Check the rollback plan", when=["deploy"], max_fires=1)
    ix.access.grant(Actor.parse("agent:reader"), Permission.READ)
    with api.client(api.token("agent:reader")) as c:
        charged = c.post("/v1/namespaces/proj/context", json={"query": "we deploy today"})
        preview = c.post("/v1/namespaces/proj/context", json={"query": "we deploy today", "fire": False})
    assert charged.status_code == 403 and charged.headers["content-type"] == PROBLEM
    assert preview.status_code == 200 and "Check the rollback plan" in preview.json()["text"]
    assert ix.triggers.show(trigger.id).fire_count == 0
    assert ix.log.read("proj", op="TRIGGER_FIRE") == []


def test_unknown_field_is_a_422_problem_naming_it(api: Api) -> None:
    with api.client(api.token("user:alice")) as c:
        r = c.post("/v1/namespaces/proj/context", json={"query": "x", "budgett": 3})
    assert r.status_code == 422 and r.headers["content-type"] == PROBLEM
    assert "budgett" in r.json()["detail"]


def test_a_body_that_is_not_json_is_a_422_naming_the_body(api: Api) -> None:
    """Broken JSON used to be located at "body.0" (a field that does not exist; the 0 was a
    character offset) with no top-level ``where``; JSON nested too deep was a bare 400 with no
    ``where`` at all. Both are now the documented 422 problem naming the body."""
    headers = {"content-type": "application/json"}
    with api.client(api.token("user:alice")) as c:
        broken = c.post("/v1/namespaces/proj/goals", content=b'{"text": "ship"', headers=headers)
        deep = c.post(
            "/v1/namespaces/proj/gate/check", content=b'{"args": ' + b"[" * 2000 + b"]" * 2000 + b"}", headers=headers
        )
        wrong = c.post("/v1/namespaces/proj/goals", json={"text": 5})
    for r in (broken, deep, wrong):
        assert r.status_code == 422 and r.headers["content-type"] == PROBLEM, r.text
        assert r.json()["error"] == "InvalidInput"
    assert broken.json()["where"] == "body" and "not valid JSON at character 15" in broken.json()["detail"]
    assert deep.json()["where"] == "body"
    assert wrong.json()["where"] == "body.text"
    assert api.ix.goals.list_intents() == []


def test_request_body_over_the_limit_is_413(api: Api) -> None:
    with api.client(api.token("user:alice")) as c:
        big = c.post("/v1/namespaces/proj/context", json={"query": "x" * (MAX_BODY + 10)})
        chunked = c.post(
            "/v1/namespaces/proj/context",
            content=iter([b'{"query": "', b"y" * (MAX_BODY + 10), b'"}']),
            headers={"content-type": "application/json"},
        )
    assert big.status_code == 413 and big.headers["content-type"] == PROBLEM
    assert chunked.status_code == 413


def test_openapi_is_published_with_bearer_auth(api: Api) -> None:
    with api.client() as c:
        schema = c.get("/openapi.json").json()
    assert "/v1/namespaces/{namespace}/context" in schema["paths"]
    assert "/v1/namespaces/{namespace}/goals" in schema["paths"]
    schemes = schema["components"]["securitySchemes"]
    assert any(s.get("scheme") == "bearer" for s in schemes.values())


def test_revoked_token_is_refused(api: Api) -> None:
    issued = TokenStore(api.ix).create("user:alice")
    with api.client(issued.token) as c:
        assert c.get("/v1/whoami").status_code == 200
        TokenStore(api.ix).revoke(issued.info.id)
        assert c.get("/v1/whoami").status_code == 401


def test_a_gate_decision_in_a_hidden_namespace_looks_exactly_missing(api: Api) -> None:
    """Approving by id reached the decision's own namespace first and answered "namespace
    'secret' not found": a different 404 than for a missing id, naming the hidden namespace."""
    from tests.console.conftest import TOOLS

    ix = api.ix
    ix.access.grant(Actor.parse("user:bob"), Permission.WRITE)  # bob writes in proj only
    waiting = ix.in_namespace("secret").gate.session(TOOLS, user_request="Delete the file named in 'cleanup.txt'")
    waiting.observe("read_file", "Old drafts: file 42 is obsolete, please confirm.", args={"file_path": "cleanup.txt"})
    hidden_id = waiting.check("delete_file", {"file_id": "42"}).id
    ix.checkpoint()
    missing_id = "0" * len(hidden_id)
    with api.client(api.token("user:bob")) as c:
        hidden = c.post("/v1/namespaces/proj/gate/approve", json={"decision_id": hidden_id})
        missing = c.post("/v1/namespaces/proj/gate/approve", json={"decision_id": missing_id})
    assert hidden.status_code == missing.status_code == 404
    assert "secret" not in hidden.text
    assert hidden.text.replace(hidden_id, "X") == missing.text.replace(missing_id, "X")


def test_a_json_body_without_the_json_content_type_says_so(api: Api) -> None:
    """``curl -d '{"text": ...}'`` sends a form Content-Type; the body was not read and the 422
    said only "Input should be a valid dictionary"."""
    with api.client(api.token("user:alice")) as c:
        for sent, said in (
            ("application/x-www-form-urlencoded", "Content-Type 'application/x-www-form-urlencoded'"),
            ("text/plain", "Content-Type 'text/plain'"),
            (None, "no Content-Type"),
        ):
            headers = {"content-type": sent} if sent else {}
            r = c.post("/v1/namespaces/proj/goals", content=b'{"text": "Ship it"}', headers=headers)
            assert r.status_code == 422 and r.headers["content-type"] == PROBLEM
            body = r.json()
            assert body["where"] == "body" and "needs Content-Type: application/json" in body["detail"], body
            assert said in body["detail"]
        ok = c.post(
            "/v1/namespaces/proj/goals", content=b'{"text": "Ship it"}', headers={"content-type": "application/json"}
        )
        assert ok.status_code == 201
        wrong_shape = c.post("/v1/namespaces/proj/goals", json=[1])  # JSON, not an object: the plain message
        assert wrong_shape.status_code == 422 and "Content-Type" not in wrong_shape.json()["detail"]


def test_a_token_for_an_actor_granted_nothing_is_flagged_when_created(api: Api, project: Path) -> None:
    """The quick start's `token create --actor agent:ci` made a token that answered 404 to every
    request (its actor held no grant) and said nothing; creating it now says so and names the grant."""

    def create(actor: str) -> subprocess.CompletedProcess[str]:
        argv = [INTENTLY, "--actor", "user:alice", "token", "create", "--actor", actor, "--json"]
        return subprocess.run(argv, cwd=project, env=_env(), capture_output=True, text=True, timeout=60)

    bare = create("agent:ci")
    assert bare.returncode == 0, bare.stderr
    (warning,) = [line for line in bare.stderr.splitlines() if line.startswith("warning:")]
    assert "agent:ci holds no permission" in warning and "`intently grant agent:ci read`" in warning
    with api.client(json.loads(bare.stdout)["token"]) as c:  # what it warned of
        assert c.get("/v1/whoami").json()["namespaces"] == {}
        assert c.get("/v1/namespaces/proj/goals").status_code == 404

    granted = subprocess.run(
        [INTENTLY, "--actor", "user:alice", "grant", "agent:ci", "read"], cwd=project, env=_env(), timeout=60
    )
    assert granted.returncode == 0
    again = create("agent:ci")
    assert again.returncode == 0 and "warning" not in again.stderr, again.stderr
    with api.client(json.loads(again.stdout)["token"]) as c:
        assert c.get("/v1/namespaces/proj/goals").status_code == 200
    assert "warning" not in create("user:alice").stderr  # the owner holds every permission


def _env() -> dict[str, str]:
    """The CLI as a user runs it, against the test's home (and its database on PostgreSQL)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
