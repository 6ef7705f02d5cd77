"""Tokens: created through the CLI, stored hashed, admin-only, rebuilt by replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from intently import Actor, Intently, Permission, PermissionDenied
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
