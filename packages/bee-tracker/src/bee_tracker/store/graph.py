"""Dependency cycles: a cycle through the dependencies that decide readiness would hide all its issues forever.

``blocks``, ``conditional-blocks`` and ``waits-for`` hold an issue back until its target is done, and
``parent-child`` passes a parent's blockage down to its children; in a cycle through any mix of them, every issue
waits on itself and silently leaves ``ready``. Such a link is refused, naming the cycle.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Container

from bee_contracts import invalid
from bee_tracker.model import READINESS_TYPES
from bee_tracker.store.db import Tx

#: One dependency: (issue, type, target).
Edge = tuple[str, str, str]

_TYPES = ", ".join(f"'{t}'" for t in READINESS_TYPES)


def cycle_closed_by(tx: Tx, issue_id: str, kind: str, target: str) -> list[Edge] | None:
    """The shortest cycle that adding ``issue_id -[kind]-> target`` would close, as its edges, or None.

    Only readiness dependencies count; the caller serialises graph changes (``Tx.lock_graph``) so two links cannot
    together form a cycle neither sees.
    """
    if kind not in READINESS_TYPES:
        return None
    previous: dict[str, Edge] = {}
    frontier = deque([target])
    seen = {target}
    while frontier:
        current = frontier.popleft()
        for nxt, nxt_kind in tx.rows(
            f"SELECT depends_on_id, type FROM dependencies WHERE issue_id = ? AND type IN ({_TYPES}) ORDER BY position",
            [current],
        ):
            if nxt in seen:
                continue
            seen.add(nxt)
            previous[nxt] = (current, nxt_kind, nxt)
            if nxt == issue_id:
                path: list[Edge] = []
                node = issue_id
                while node != target:
                    path.append(previous[node])
                    node = previous[node][0]
                return [(issue_id, kind, target), *reversed(path)]
            frontier.append(nxt)
    return None


def refuse_cycle(tx: Tx, issue_id: str, kind: str, target: str) -> None:
    """Raise when the new dependency would close a readiness cycle.

    Raises:
        BeeError: ``invalid_argument``; the message spells the cycle out and details carry it (``cycle``: the ids
            in order, first repeated at the end; ``edges``: each dependency with its type).
    """
    edges = cycle_closed_by(tx, issue_id, kind, target)
    if edges is None:
        return
    spelled = " ".join(f"{source} -[{edge_kind}]->" for source, edge_kind, _ in edges) + f" {issue_id}"
    raise invalid(
        f"{issue_id} {kind} {target} would close a dependency cycle: {spelled}. Every issue in it would wait on "
        "itself and never be ready; remove one of those links first (or use a non-blocking type such as related)",
        cycle=[edges[0][0], *(e[2] for e in edges)],
        edges=[{"id": source, "type": edge_kind, "target": dest} for source, edge_kind, dest in edges],
    )


def import_cycles(tx: Tx, since: int, imported: Container[str]) -> list[list[Edge]]:
    """The cycles through readiness dependencies that hold an issue an import wrote (those at position ``since`` or
    later, ``imported`` naming them among others): one for each group of issues that all reach one another, as the
    shortest cycle through its first imported issue (in id order); cycles among earlier issues alone are left out.

    The dependencies read are the import's and those its issues reach, in one statement.
    """
    below: dict[str, list[tuple[str, str]]] = {}
    for source, kind, target in tx.rows(
        "WITH RECURSIVE reach(id) AS (SELECT id FROM issues WHERE position >= ? UNION "
        f"SELECT d.depends_on_id FROM dependencies d JOIN reach r ON r.id = d.issue_id WHERE d.type IN ({_TYPES})) "
        "SELECT d.issue_id, d.type, d.depends_on_id FROM dependencies d JOIN reach r ON r.id = d.issue_id "
        f"WHERE d.type IN ({_TYPES}) ORDER BY d.issue_id, d.position",
        [since],
    ):
        below.setdefault(source, []).append((kind, target))
    cycles = []
    for group in _groups(below):
        starts = sorted(node for node in group if node in imported)
        if starts and (len(group) > 1 or any(target == starts[0] for _, target in below.get(starts[0], ()))):
            cycles.append(_shortest_cycle(starts[0], group, below))
    return sorted(cycles)


def _groups(below: dict[str, list[tuple[str, str]]]) -> list[set[str]]:
    """The strongly connected groups of the graph (Tarjan's algorithm, iterative: chains may be long)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in below:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, at = work.pop()
            if at == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            edges = below.get(node, [])
            for step in range(at, len(edges)):
                target = edges[step][1]
                if target not in index:
                    work += [(node, step + 1), (target, 0)]
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    groups.append(group)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return groups


def _shortest_cycle(start: str, group: set[str], below: dict[str, list[tuple[str, str]]]) -> list[Edge]:
    """The shortest cycle from ``start`` back to itself within ``group`` (breadth first)."""
    previous: dict[str, Edge] = {}
    frontier = deque([start])
    while frontier:
        current = frontier.popleft()
        for kind, target in below.get(current, ()):
            if target not in group or target in previous:
                continue
            previous[target] = (current, kind, target)
            if target == start:
                path = [previous[start]]
                while path[-1][0] != start:
                    path.append(previous[path[-1][0]])
                return list(reversed(path))
            frontier.append(target)
    raise AssertionError("a strongly connected group holds a cycle through each of its members")
