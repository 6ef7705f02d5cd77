"""Key rotation while another process holds the home open (a server, the MCP server): that
process must not go on signing with the key the rotation retired."""

from __future__ import annotations

import json
from pathlib import Path

from intently import Actor, Intently, ManualClock, Permission
from tests._backends import use_database


def test_a_process_opened_before_a_rotation_signs_with_the_new_key(
    project: Path, clock: ManualClock, database_url: str | None
) -> None:
    """A long-running process loaded the keyring before `intently log rotate-key` ran in
    another process and kept signing with the retired key: every later checkpoint it made
    failed verification (BadSignature), for good, on a log nobody tampered with."""
    with Intently.init(project, actor="user:alice", name="proj", clock=clock, database_url=database_url) as home:
        if database_url:
            use_database(home.home.path, database_url)  # the handles below open the same database
    server = Intently.open(project, actor="user:alice", clock=clock)
    try:
        clock.advance("1h")
        with Intently.open(project, actor="user:alice", clock=clock) as cli:
            retired, new = cli.log.rotate_key(cli.home.keys_dir, namespace=cli.namespace, actor="user:alice")
        clock.advance("1h")
        server.access.grant(Actor.parse("bob"), Permission.READ)  # appends, then signs at close
    finally:
        server.close()
    with Intently.open(project, actor="user:alice", clock=clock) as ix:
        report = ix.log.verify()
        assert report.ok, report.to_json()
        latest = ix.log.latest_checkpoints()["proj"]
        assert (latest.size, latest.key_id) == (ix.log.size("proj"), new)
    ring = json.loads((project / ".intently" / "keys" / "public.json").read_text())
    assert ring[f"key:{retired}"]["signed_sizes"] == {"proj": 1}  # HOME_INIT, signed before retiring
