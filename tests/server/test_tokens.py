"""Tokens: created through the CLI, stored hashed, admin-only, rebuilt by replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from intently import Actor, Intently, InvalidInput, ManualClock, Permission, PermissionDenied
from intently.log import OperationLog, replay
from intently.server import TokenStore, hash_token
from intently.store import open_store

pytestmark = pytest.mark.sqlite_only  # edits or copies the SQLite file directly

INTENTLY = str(Path(sys.executable).parent / "intently")


def test_cli_creates_a_token_and_stores_only_its_hash(ix: Intently, project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    done = subprocess.run(
        [INTENTLY, "--actor", "user:alice", "token", "create", "--actor", "agent:ci", "--label", "CI", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["actor"] == "agent:ci" and data["token"].startswith("itk_")
    raw = b"".join(p.read_bytes() for p in ix.home.state_dir.glob("intently.db*"))
    assert data["token"].encode() not in raw
    assert hash_token(data["token"]).encode() in raw
    assert str(TokenStore(ix).resolve(data["token"])) == "agent:ci"


def test_only_admins_create_tokens(ix: Intently) -> None:
    ix.access.grant(Actor.parse("user:bob"), Permission.WRITE)
    with pytest.raises(PermissionDenied):
        TokenStore(ix.as_actor("user:bob")).create("user:bob")


def test_tokens_live_in_the_log_and_survive_replay(ix: Intently, tmp_path: Path) -> None:
    store = TokenStore(ix)
    kept = store.create("agent:one", label="kept")
    gone = store.create("agent:two")
    store.revoke(gone.info.id)
    assert store.resolve(kept.token) == Actor.parse("agent:one")
    assert store.resolve(gone.token) is None
    assert [(t.id, t.revoked_at is None) for t in store.list()] == [(kept.info.id, True), (gone.info.id, False)]
    ix.checkpoint()
    target_store = open_store(f"sqlite:///{tmp_path / 'replayed.db'}")
    try:
        target_store.upgrade()
        target = OperationLog(target_store, clock=ix.runtime.clock, keyring=ix.log.keyring, origin=ix.log.origin)
        assert replay(ix.log, target) == ix.log.size("proj")
        ops = [o.op for o in target.read("proj")]
    finally:
        target_store.close()
    assert ops.count("TOKEN_CREATE") == 2 and ops.count("TOKEN_REVOKE") == 1


def test_a_token_with_a_known_id_but_wrong_secret_is_refused(ix: Intently) -> None:
    issued = TokenStore(ix).create("agent:one")
    forged = issued.token[:-4] + ("AAAA" if not issued.token.endswith("AAAA") else "BBBB")
    assert TokenStore(ix).resolve(forged) is None
    assert TokenStore(ix).resolve("itk_short") is None


def test_a_namespace_admin_cannot_mint_a_token_for_the_owner_or_anyone_else(ix: Intently, project: Path) -> None:
    """An admin of one namespace used to create a token for any actor, the owner included, and
    that token then acted as the owner everywhere (granting itself admin in every namespace).
    A token for someone else now needs the owner; tokens for oneself stay an admin's right."""
    ix.access.grant(Actor.parse("user:mallory"), Permission.ADMIN, "team-m")
    ix.access.grant(Actor.parse("agent:ci"), Permission.WRITE, "proj")
    mallory = TokenStore(ix.as_actor("user:mallory").in_namespace("team-m"))
    for victim in ("user:alice", "agent:ci"):
        with pytest.raises(PermissionDenied, match="only the home's owner"):
            mallory.create(victim)
    own = mallory.create("user:mallory")
    assert mallory.resolve(own.token) == Actor.parse("user:mallory")
    assert TokenStore(ix).resolve(TokenStore(ix).create("agent:ci").token) == Actor.parse("agent:ci")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    done = subprocess.run(
        [INTENTLY, "--actor", "user:mallory", "--namespace", "team-m", "token", "create", "--actor", "user:alice"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "only the home's owner" in done.stderr and "itk_" not in done.stdout


def test_a_token_minted_for_another_actor_by_a_non_owner_is_refused(ix: Intently) -> None:
    """Such tokens, created before the rule (their TOKEN_CREATE is in the log), stop resolving:
    over HTTP they get 401 instead of the owner's powers."""
    from tests.server.conftest import serve

    ix.access.grant(Actor.parse("user:mallory"), Permission.ADMIN, "team-m")
    token = "itk_0123456789ab_" + "A" * 43
    rt = ix.runtime
    with rt.store.transaction() as tx:  # what the old `token create` wrote for mallory
        rt.log.append(
            tx,
            namespace="team-m",
            actor="user:mallory",
            op="TOKEN_CREATE",
            target="0123456789ab",
            payload={"id": "0123456789ab", "actor": "user:alice", "label": "", "token_hash": hash_token(token)},
            policy_version="server-tokens@1",
        )
    assert TokenStore(ix).resolve(token) is None
    with serve(ix) as api, api.client(token) as client:
        answer = client.post("/v1/namespaces/proj/grants", json={"actor": "user:mallory", "permission": "admin"})
        assert answer.status_code == 401
    assert not ix.access.can(Actor.parse("user:mallory"), "proj", Permission.READ)


def test_a_token_created_with_an_expiry_is_refused_after_it(ix: Intently, project: Path) -> None:
    """Tokens lived until someone remembered to revoke them; ``--expires`` bounds one."""
    from tests.server.conftest import serve

    clock = ix.runtime.clock
    assert isinstance(clock, ManualClock)
    issued = TokenStore(ix).create("user:alice", label="contractor", expires="8h")
    assert issued.info.expires_at == "2026-03-02T17:00:00.000000Z"
    with serve(ix) as api, api.client(issued.token) as client:
        assert client.get("/v1/whoami").status_code == 200
        clock.advance("8h")
        assert client.get("/v1/whoami").status_code == 401
    with pytest.raises(InvalidInput, match="not a duration"):
        TokenStore(ix).create("user:alice", expires="soon")
    for wrong in ("0s", "99999999999d"):
        with pytest.raises(InvalidInput, match="at most 3660d"):
            TokenStore(ix).create("user:alice", expires=wrong)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    done = subprocess.run(
        [INTENTLY, "--actor", "user:alice", "token", "create", "--actor", "agent:ci", "--expires", "30d", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["expires_at"].endswith("Z")


def test_token_list_names_an_old_token_for_another_actor_as_refused(ix: Intently, project: Path) -> None:
    """A home made by an older intently holds a token a namespace admin created for someone
    else. It no longer resolves, but ``token list`` showed it as live (no revoked date), so the
    person whose client got 401 was told nothing; the list marks it refused and says why."""
    ix.access.grant(Actor.parse("user:bob"), Permission.ADMIN, "proj")
    rt = ix.runtime
    token = "itk_0123456789ab_" + "A" * 43
    with rt.store.transaction() as tx:  # the old `token create --actor user:carol` run by bob
        rt.log.append(
            tx,
            namespace="proj",
            actor="user:bob",
            op="TOKEN_CREATE",
            target="0123456789ab",
            payload={"id": "0123456789ab", "actor": "user:carol", "label": "ci", "token_hash": hash_token(token)},
            policy_version="server-tokens@1",
        )
    mine = TokenStore(ix).create("user:bob", label="own")
    ix.checkpoint()
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    argv = [INTENTLY, "--actor", "user:alice", "token", "list"]
    listed = subprocess.run([*argv, "--json"], cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert TokenStore(ix).resolve(token) is None
    assert "only the home's owner" in rows["0123456789ab"]["refused"]
    assert rows[mine.info.id]["refused"] is None
    shown = subprocess.run(argv, cwd=project, env={**env, "COLUMNS": "200"}, capture_output=True, text=True, timeout=60)
    assert "refused" in shown.stdout
    assert "token 0123456789ab: created by user:bob for user:carol" in shown.stderr
