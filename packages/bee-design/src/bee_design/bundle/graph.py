"""Cycles in a dependency graph, spelled out, and a dependency-first order (iterative: no recursion limit)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: Nodes a spelled cycle shows at most: the first and last half of them, and how many are left out between.
SPELLED_NODES = 12


def _walk(edges: Mapping[str, Iterable[str]], limit: int | None = None) -> tuple[list[str], list[list[str]]]:
    """Depth-first over every node: the post-order, and one cycle ``[a, …, a]`` per back edge found (the first
    ``limit`` of them: a hostile graph has a back edge per node, and each cycle can be as long as the graph)."""
    successors = {node: sorted(set(targets)) for node, targets in edges.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    at: dict[str, int] = {}  # where each node on the current path sits in it
    order: list[str] = []
    cycles: list[list[str]] = []
    for start in sorted(successors):
        if start in state:
            continue
        path = [start]
        at[start] = 0
        stack = [iter(successors.get(start, ()))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                node = path.pop()
                state[node] = 2
                order.append(node)
            elif state.get(nxt) == 1:
                if limit is None or len(cycles) < limit:
                    cycles.append([*path[at[nxt] :], nxt])
            elif nxt not in state:
                state[nxt] = 1
                at[nxt] = len(path)
                path.append(nxt)
                stack.append(iter(successors.get(nxt, ())))
    return order, cycles


def find_cycles(edges: Mapping[str, Iterable[str]], limit: int | None = None) -> list[list[str]]:
    """One cycle per back edge of a depth-first walk, each as ``[a, b, …, a]``, in a deterministic order; at most
    ``limit`` of them.

    That names every node that sits on a cycle, without enumerating every elementary cycle (which can explode).
    """
    return _walk(edges, limit)[1]


def dependency_order(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Every node, each after all the nodes it depends on (for an acyclic graph)."""
    return _walk(edges)[0]


def shortened(cycle: list[str]) -> list[str]:
    """``cycle`` as it is shown: at most :data:`SPELLED_NODES` nodes, with ``"… N more …"`` for those left out."""
    if len(cycle) <= SPELLED_NODES:
        return cycle
    half = SPELLED_NODES // 2
    return [*cycle[:half], f"… {len(cycle) - 2 * half} more …", *cycle[-half:]]


def spell(cycle: list[str]) -> str:
    return " → ".join(shortened(cycle))
