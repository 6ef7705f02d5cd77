"""Write-time checks on the dependency graph (RFC-0013 section 6).

One edge table holds ``dependent -> prerequisite`` pairs: ``A.depends_on`` lists A's
prerequisites and ``B.blocks`` lists B's dependents, so the two fields agree whichever side
was written. Before an edge is stored the graph is checked, inside the writing transaction:

- no cycle: adding ``A depends_on B`` closes a cycle when A is already reachable from B
  through ``depends_on``; the error names the cycle (``A -> B -> ... -> A``);
- depth at most 10: the longest ``depends_on`` chain through the new edge, counted in edges;
- fan-in at most 20: no intent may have more than 20 dependents.

Reachability and depth come from one recursive query per direction, walking level sets
(each node at most once per level), which stops after ``MAX_DEPTH + 1`` levels because the
stored graph already respects the limit.
"""

from __future__ import annotations

from ..core.errors import InvalidInput
from ..store import Transaction

__all__ = ["MAX_DEPTH", "MAX_FAN_IN", "DependencyCycle", "DependencyLimit", "check_new_edge"]

MAX_DEPTH = 10
MAX_FAN_IN = 20


class DependencyCycle(InvalidInput):
    """The edge would close a cycle; ``cycle`` lists the intent ids, first repeated last."""

    def __init__(self, cycle: list[str], labels: list[str]) -> None:
        self.cycle = cycle
        super().__init__("dependency cycle: " + " -> ".join(labels), where=cycle[0])


class DependencyLimit(InvalidInput):
    """The edge would exceed the depth or fan-in limit; ``limit`` is ``"depth"`` or ``"fan_in"``."""

    def __init__(self, limit: str, message: str, where: str) -> None:
        self.limit = limit
        super().__init__(message, where=where)


_DOWN = (
    "WITH RECURSIVE walk(id, k) AS (SELECT ?, 0 UNION SELECT e.prerequisite, walk.k + 1 FROM goals_edges e "
    "JOIN walk ON e.dependent = walk.id WHERE walk.k < ?) "
    "SELECT MAX(k) AS depth, MAX(CASE WHEN id = ? THEN 1 ELSE 0 END) AS hit FROM walk"
)
_UP = (
    "WITH RECURSIVE walk(id, k) AS (SELECT ?, 0 UNION SELECT e.dependent, walk.k + 1 FROM goals_edges e "
    "JOIN walk ON e.prerequisite = walk.id WHERE walk.k < ?) SELECT MAX(k) AS depth FROM walk"
)


def check_new_edge(tx: Transaction, dependent: str, prerequisite: str) -> None:
    """Raise :class:`DependencyCycle` or :class:`DependencyLimit` unless the edge may be added."""
    if dependent == prerequisite:
        raise DependencyCycle([dependent, dependent], [_name(tx, dependent)] * 2)
    down = tx.one(_DOWN, (prerequisite, MAX_DEPTH + 1, dependent)) or {}
    if down.get("hit"):
        path = _path(tx, prerequisite, dependent)
        cycle = [dependent, *path]
        labels = _labels(tx, cycle)
        raise DependencyCycle(cycle, [labels.get(i, i) for i in cycle])
    fan_in = int(tx.scalar("SELECT COUNT(*) FROM goals_edges WHERE prerequisite = ?", (prerequisite,)) or 0)
    if fan_in >= MAX_FAN_IN:
        raise DependencyLimit(
            "fan_in",
            f"{_name(tx, prerequisite)} already has {fan_in} dependents (the maximum is {MAX_FAN_IN}); decompose it",
            prerequisite,
        )
    up = int(tx.scalar(_UP, (dependent, MAX_DEPTH + 1)) or 0)
    depth = up + 1 + int(down.get("depth") or 0)
    if depth > MAX_DEPTH:
        raise DependencyLimit(
            "depth",
            f"a chain of {depth} dependencies would run through {_name(tx, dependent)} -> "
            f"{_name(tx, prerequisite)} (the maximum depth is {MAX_DEPTH})",
            dependent,
        )


def _path(tx: Transaction, start: str, goal: str) -> list[str]:
    """A shortest ``depends_on`` path from ``start`` to ``goal`` (both included)."""
    parent: dict[str, str | None] = {start: None}
    frontier = [start]
    while frontier and goal not in parent:
        nxt: list[str] = []
        for node in frontier:
            for row in tx.query(
                "SELECT prerequisite FROM goals_edges WHERE dependent = ? ORDER BY prerequisite", (node,)
            ):
                child = str(row["prerequisite"])
                if child not in parent:
                    parent[child] = node
                    nxt.append(child)
        frontier = nxt
    path = [goal]
    step = parent.get(goal)
    while step is not None:
        path.append(step)
        step = parent[step]
    return list(reversed(path))


def _labels(tx: Transaction, ids: list[str]) -> dict[str, str]:
    """``'Ship the API' (0190...)``: the text (shortened) and the id, for error messages."""
    unique = sorted(set(ids))
    marks = ", ".join("?" for _ in unique)
    rows = tx.query(f"SELECT id, value FROM goals_intents WHERE id IN ({marks})", unique)
    out: dict[str, str] = {}
    for row in rows:
        text = str(row["value"])
        short = text if len(text) <= 40 else text[:37] + "..."
        out[str(row["id"])] = f"{short!r} ({row['id']})"
    return out


def _name(tx: Transaction, intent_id: str) -> str:
    return _labels(tx, [intent_id]).get(intent_id, intent_id)
