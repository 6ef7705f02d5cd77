"""Several real processes writing to one home at once lose nothing: every grant lands,
each stream's sequence numbers are gap-free, the log verifies and the witness file
holds the newest checkpoint."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from intently import Actor, Intently, ManualClock, Permission

WORKERS = 4
GRANTS_EACH = 200

WORKER = textwrap.dedent(
    """
    import sys
    from intently import Actor, Intently, Permission

    home, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with Intently.open(home, actor="user:alice") as ix:
        for i in range(count):
            # Alternate the shared stream and this worker's own one.
            target = ix if i % 4 else ix.in_namespace(f"w{worker}")
            target.access.grant(Actor.parse(f"agent:w{worker}-{i}"), Permission.READ)
            if i % 50 == 49:
                ix.checkpoint()
    """
)


def test_concurrent_writers_from_several_processes_lose_nothing(project: Path, clock: ManualClock) -> None:
    Intently.init(project, actor="user:alice", name="proj", clock=clock).close()
    home = project / ".intently"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(home), str(w), str(GRANTS_EACH)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WORKERS)
    ]
    for proc in procs:
        _, stderr = proc.communicate(timeout=240)
        assert proc.returncode == 0, stderr
    with Intently.open(home, actor="user:alice") as ix:
        with ix.store.transaction(write=False) as tx:
            granted = {r["actor"] for r in tx.query("SELECT actor FROM access_grants")}
            seqs = {
                r["stream"]: (r["n"], r["lo"], r["hi"])
                for r in tx.query(
                    "SELECT stream, COUNT(*) AS n, MIN(seq) AS lo, MAX(seq) AS hi FROM log_ops GROUP BY stream"
                )
            }
        assert granted == {f"agent:w{w}-{i}" for w in range(WORKERS) for i in range(GRANTS_EACH)}
        shared = 1 + WORKERS * (GRANTS_EACH - GRANTS_EACH // 4)
        assert seqs["proj"] == (shared, 1, shared)
        for w in range(WORKERS):
            assert seqs[f"w{w}"] == (GRANTS_EACH // 4, 1, GRANTS_EACH // 4)
        report = ix.log.verify()
        assert report.ok, report.to_json()
        assert all(s.unsigned_tail == 0 for s in report.streams)
        latest = ix.log.latest_checkpoints()
        assert ix.log.read_witness() == latest
        assert latest["proj"].size == shared
        assert ix.access.can(Actor.parse("agent:w3-199"), "proj", Permission.READ)
