"""Cycles in a dependency graph, spelled out, and a dependency-first order (iterative: no recursion limit)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def _walk(edges: Mapping[str, Iterable[str]]) -> tuple[list[str], list[list[str]]]:
    """Depth-first over every node: the post-order, and one cycle ``[a, …, a]`` per back edge found."""
    successors = {node: sorted(set(targets)) for node, targets in edges.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    order: list[str] = []
    cycles: list[list[str]] = []
    for start in sorted(successors):
        if start in state:
            continue
        path = [start]
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
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(successors.get(nxt, ())))
    return order, cycles


def find_cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One cycle per back edge of a depth-first walk, each as ``[a, b, …, a]``, in a deterministic order.

    That names every node that sits on a cycle, without enumerating every elementary cycle (which can explode).
    """
    return _walk(edges)[1]


def dependency_order(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Every node, each after all the nodes it depends on (for an acyclic graph)."""
    return _walk(edges)[0]


def spell(cycle: list[str]) -> str:
    return " → ".join(cycle)
