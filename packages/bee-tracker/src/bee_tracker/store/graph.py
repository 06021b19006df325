"""Dependency cycles: a cycle through the dependencies that decide readiness would hide all its issues forever.

``blocks``, ``conditional-blocks`` and ``waits-for`` hold an issue back until its target is done, and
``parent-child`` passes a parent's blockage down to its children; in a cycle through any mix of them, every issue
waits on itself and silently leaves ``ready``. Such a link is refused, naming the cycle.
"""

from __future__ import annotations

from collections import deque

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
