"""Worker processes for the concurrency tests: ``python -m tests.pg._workers KIND ...``.

Each runs in its own interpreter, so the tests exercise real cross-process locking.
"""

from __future__ import annotations

import sys
import time

from intently import Intently
from intently.store import open_store


def counter(url: str, rounds: int) -> None:
    """Read-then-write the shared counter ``rounds`` times, each in one write transaction."""
    store = open_store(url)
    try:
        for _ in range(rounds):
            with store.transaction(write=True) as tx:
                value = int(tx.scalar("SELECT value FROM pgtest_counter WHERE id = 1"))
                time.sleep(0.002)  # widen the read-to-write window a lost update would need
                tx.execute("UPDATE pgtest_counter SET value = ? WHERE id = 1", (value + 1,))
    finally:
        store.close()


def append(home: str, url: str, worker: str, rounds: int) -> None:
    """Append ``rounds`` operations to the home's stream, one transaction each."""
    with Intently.open(home, actor="user:alice", database_url=url or None) as ix:
        for i in range(rounds):
            with ix.store.transaction() as tx:
                ix.log.append(
                    tx,
                    namespace=ix.namespace,
                    actor=str(ix.actor),
                    op="PGTEST_APPEND",
                    target=f"{worker}-{i}",
                    payload={"worker": worker, "i": i},
                    policy_version="pgtest@1",
                )


def main(argv: list[str]) -> int:
    kind, *args = argv
    if kind == "counter":
        counter(args[0], int(args[1]))
    elif kind == "append":
        append(args[0], args[1], args[2], int(args[3]))
    else:
        raise SystemExit(f"unknown worker kind {kind!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
