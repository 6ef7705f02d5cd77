"""``intently log replay --to postgresql://...`` through the real command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from intently import Actor, Intently, Permission
from tests._backends import PgCluster


def test_replay_into_postgresql_never_prints_the_password(project: Path, pg_cluster: PgCluster) -> None:
    """`store copy` and every error print the URL with the password as ***; replay printed
    the URL as typed, so the password went to the terminal, to CI logs and into --json."""
    with Intently.init(project, actor="user:alice", name="proj") as ix:
        ix.access.grant(Actor.parse("bob"), Permission.READ)
    url = pg_cluster.create_database(template=None)
    user = f"{pg_cluster.user}@"
    with_password = url.replace(user, f"{pg_cluster.user}:hunter2-secret@", 1)  # the test server trusts loopback
    assert with_password != url
    command = ["--actor", "user:alice", "--home", str(project), "log", "replay", "--to", with_password, "--json"]
    done = subprocess.run(
        [sys.executable, "-c", "from intently.cli import main; main()", *command],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "hunter2-secret" not in done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result == {"replayed": 2, "to": url.replace(user, f"{pg_cluster.user}:***@", 1)}
    pg_cluster.drop_database(url)
