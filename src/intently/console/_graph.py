"""Lay out the goals dependency graph for inline SVG: layers by depth, no external tools.

The engine refuses edges that would close a cycle, so the graph is a DAG and the longest
path from a root gives each node a column. Edges point from a prerequisite to what it
blocks; a node is *blocked* while any prerequisite is still open.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Edge", "Layout", "Node", "layout"]

NODE_W = 190
NODE_H = 44
GAP_X = 70
GAP_Y = 18
PAD = 16
_OPEN = {"ACTIVE", "ON_HOLD"}


@dataclass(frozen=True)
class Node:
    id: str
    label: str
    title: str
    state: str
    blocked: bool
    x: int
    y: int


@dataclass(frozen=True)
class Edge:
    path: str
    source: str
    target: str


@dataclass(frozen=True)
class Layout:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    width: int
    height: int


def layout(items: Sequence[Mapping[str, object]], *, max_label: int = 26) -> Layout:
    """``items``: dicts with ``id``, ``text``, ``state`` and ``depends_on`` (ids).

    Only intents that take part in at least one edge are drawn; edges to intents not in
    ``items`` (another namespace, dismissed) are left out.
    """
    by_id = {str(i["id"]): i for i in items}
    deps = {k: [str(d) for d in _ids(v.get("depends_on")) if str(d) in by_id] for k, v in by_id.items()}
    linked = {k for k, ds in deps.items() if ds} | {d for ds in deps.values() for d in ds}
    depth: dict[str, int] = {}

    def depth_of(node: str, seen: frozenset[str] = frozenset()) -> int:
        if node in depth:
            return depth[node]
        if node in seen:  # defensive: a cycle cannot be stored, but never recurse forever
            return 0
        value = 1 + max((depth_of(d, seen | {node}) for d in deps[node]), default=-1)
        depth[node] = value
        return value

    columns: dict[int, list[str]] = {}
    for node in sorted(linked, key=lambda n: (str(by_id[n].get("text", "")), n)):
        columns.setdefault(depth_of(node), []).append(node)
    placed: dict[str, Node] = {}
    for col, members in sorted(columns.items()):
        for row, node in enumerate(members):
            item = by_id[node]
            text = " ".join(str(item.get("text", "")).split())
            state = str(item.get("state", ""))
            blocked = any(str(by_id[d].get("state")) in _OPEN for d in deps[node])
            placed[node] = Node(
                id=node,
                label=text if len(text) <= max_label else text[: max_label - 1] + "…",
                title=text,
                state=state,
                blocked=blocked and state in _OPEN,
                x=PAD + col * (NODE_W + GAP_X),
                y=PAD + row * (NODE_H + GAP_Y),
            )
    edges = []
    for node, ds in sorted(deps.items()):
        for d in ds:
            a, b = placed[d], placed[node]
            x1, y1 = a.x + NODE_W, a.y + NODE_H // 2
            x2, y2 = b.x - 4, b.y + NODE_H // 2
            mid = (x1 + x2) // 2
            edges.append(Edge(f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}", d, node))
    width = max((n.x + NODE_W for n in placed.values()), default=0) + PAD
    height = max((n.y + NODE_H for n in placed.values()), default=0) + PAD
    return Layout(tuple(placed.values()), tuple(edges), width, height)


def _ids(value: object) -> list[object]:
    return list(value) if isinstance(value, (list, tuple)) else []
