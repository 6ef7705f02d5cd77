"""A process killed at the worst moment of a checkpoint: nothing on disk may then claim more
than the database committed, or every later command and `log verify` cry tampering."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from intently import Actor, Intently, ManualClock, Permission
from tests._backends import use_database

# The process dies (SIGKILL-like, no clean-up) right after the witness file is written.
KILLED_AFTER_WITNESS = textwrap.dedent(
    """
    import os, sys
    import intently.log._oplog as oplog
    from intently import Actor, Intently, Permission

    write = oplog.atomic_write
    def write_then_die(*args, **kwargs):
        write(*args, **kwargs)
        os._exit(137)
    oplog.atomic_write = write_then_die
    ix = Intently.open(sys.argv[1], actor="user:alice")
    ix.access.grant(Actor.parse("bob"), Permission.READ)
    ix.close()  # signs, writes the witness: dies there
    """
)


def test_a_process_killed_after_writing_the_witness_leaves_no_false_tamper_alarm(
    project: Path, clock: ManualClock, database_url: str | None
) -> None:
    """The witness file was written inside the signing transaction, before its commit: killed
    there, the file held a checkpoint the database never committed. `log verify` then reported
    StaleCheckpoint, and once anything more was appended every command failed with RootMismatch
    ("the database has no checkpoint matching the witnessed one"), for good."""
    with Intently.init(project, actor="user:alice", name="proj", clock=clock, database_url=database_url) as home:
        if database_url:
            use_database(home.home.path, database_url)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_WITNESS, str(project / ".intently")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert killed.returncode == 137, killed.stderr
    with Intently.open(project, actor="user:alice", clock=clock) as ix:
        report = ix.log.verify()
        assert report.ok, report.to_json()
        ix.access.grant(Actor.parse("carol"), Permission.READ)  # the next command signs and witnesses
    with Intently.open(project, actor="user:alice", clock=clock) as ix:
        report = ix.log.verify()
        assert report.ok, report.to_json()
        assert ix.log.read_witness()["proj"].size == ix.log.size("proj") == 3
