"""Worker processes for the cross-process tests: ``python -m tests.scale._workers KIND HOME ...``.

Each opens the home in its own interpreter (its own connection pool), prints ``ready``, waits
for ``go`` on stdin so that every worker starts its race at the same moment, then prints one
JSON line with what it saw.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from intently import ConflictError, Intently


def _wait_for_go() -> None:
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        raise SystemExit("expected 'go' on stdin")


def match(ix: Intently, text: str, rounds: int) -> dict[str, Any]:
    """Match the same turn ``rounds`` times; report which intents this process fired."""
    fired: list[str] = []
    for _ in range(rounds):
        result = ix.triggers.match(text)
        fired += [hit.id for hit in result.shown] if result.fired else []
    return {"fired": fired}


def edit(ix: Intently, goal_id: str, expected: str, label: str, rounds: int) -> dict[str, Any]:
    """Edit one goal ``rounds`` times, pinned to ``expected`` version or (``-``) unpinned."""
    won, conflicts = [], 0
    for i in range(rounds):
        try:
            after = ix.goals.edit(
                goal_id, context_note=f"{label}-{i}", expected_version=None if expected == "-" else int(expected)
            )
            won.append(after.version)
        except ConflictError:
            conflicts += 1
    return {"won": won, "conflicts": conflicts}


def main(argv: list[str]) -> int:
    kind, home, *args = argv
    with Intently.open(home, actor="user:alice") as ix:
        _wait_for_go()
        if kind == "match":
            result = match(ix, args[0], int(args[1]))
        elif kind == "edit":
            result = edit(ix, args[0], args[1], args[2], int(args[3]))
        else:
            raise SystemExit(f"unknown worker kind {kind!r}")
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
