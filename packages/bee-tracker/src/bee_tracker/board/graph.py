"""An issue's dependency neighbourhood as data: which issues, which links, which cycles, and the critical path.

This module decides *what* the graph shows; :mod:`.dot` hands it to Graphviz, which decides where it goes.

- For an epic (or any issue with children) the neighbourhood is its whole tree of ``parent-child`` descendants
  plus what they are blocked by, link after link; for any other issue, everything within two links of it, both ways.
  Either is bounded (:data:`TREE_NODES`, :data:`AROUND_NODES`), and what was left out is counted.
- **Cycles**: the tracker refuses a link that would close a cycle through the dependencies that decide readiness,
  but imported data may hold one. Every such cycle among the shown issues is found (strongly connected components)
  and marked.
- **Critical path**: the longest chain of unfinished issues the focus waits for, one after another: a parent waits
  for its unfinished children, an issue for its unfinished blockers and open gates. Finishing it is the least that
  must happen, in order, before the focus can be completed. Cycle links are left out (nothing in a cycle can finish).
- **In words**: every link also says what it means (:meth:`Neighbourhood.words`), for the issue page's list, which
  stands in for the picture when it is not drawn, and for the picture's own titles.
- **Fingerprint**: a digest of everything the picture shows (:attr:`Neighbourhood.fingerprint`), so a picture is
  drawn once, and one that could not be drawn is not tried again, while the neighbourhood stays the same.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from bee_tracker.model import BLOCKING_TYPES, DONE_STATUSES, PARENT_CHILD, READINESS_TYPES, TOMBSTONE
from bee_tracker.store.db import Tx
from bee_tracker.store.ops import Read

#: Most issues shown around an epic's tree, and around any other issue.
TREE_NODES = 150
AROUND_NODES = 60
#: How far (in links, either way) the neighbourhood of an issue without children reaches.
AROUND_DEPTH = 2
#: Ids per IN (…) list, well under every driver's parameter limit.
_BATCH = 400


@dataclass(frozen=True)
class Node:
    id: str
    title: str
    status: str
    priority: int | None
    assignee: str | None
    issue_type: str = "task"
    exists: bool = True
    blocked: bool = False

    @property
    def unfinished(self) -> bool:
        return self.exists and self.status not in DONE_STATUSES


@dataclass(frozen=True)
class Link:
    """``source`` depends on ``target`` with ``kind`` (for ``parent-child``: source is the child)."""

    source: str
    kind: str
    target: str


@dataclass
class Neighbourhood:
    focus: str
    nodes: dict[str, Node]
    links: list[Link]
    #: Each cycle's issues (a strongly connected component through readiness links), sorted.
    cycles: list[list[str]] = field(default_factory=list)
    #: The focus first, then each issue it waits for in turn; empty when the focus waits for nothing.
    critical_path: list[str] = field(default_factory=list)
    #: Issues linked to the shown ones that did not fit.
    left_out: int = 0

    def in_cycle(self, link: Link) -> bool:
        return link.kind in READINESS_TYPES and any(
            link.source in cycle and link.target in cycle for cycle in self.cycles
        )

    def critical(self, link: Link) -> bool:
        """Whether the link is a step of the critical path (its waiter waits, through it, for the next issue)."""
        pair = self.waits_for(link)
        return pair is not None and pair in set(zip(self.critical_path, self.critical_path[1:], strict=False))

    def blocking(self, link: Link) -> bool:
        """Whether the link holds its source back now: a blocking type whose target exists and is unfinished."""
        target = self.nodes.get(link.target)
        return link.kind in BLOCKING_TYPES and target is not None and target.unfinished

    def words(self, link: Link) -> str:
        """What ``link`` says, as the words between its two issues: ``is a child of``, or ``depends on (blocks,
        still blocking)``, with the cycle or critical path it is part of."""
        if link.kind == PARENT_CHILD:
            notes = []
            said = "is a child of"
        else:
            notes = [link.kind]
            said = "depends on"
            if link.kind in BLOCKING_TYPES:
                notes.append("still blocking" if self.blocking(link) else "done")
        if self.in_cycle(link):
            notes.append("in a cycle")
        elif self.critical(link):
            notes.append("on the critical path")
        return f"{said} ({', '.join(notes)})" if notes else said

    @cached_property
    def fingerprint(self) -> str:
        """A digest of what the neighbourhood's picture shows: its focus, issues, links and what was left out (the
        cycles and the critical path follow from those)."""
        nodes = [self.nodes[issue_id] for issue_id in sorted(self.nodes)]
        shown = [
            self.focus,
            [[n.id, n.title, n.status, n.priority, n.assignee, n.issue_type, n.exists, n.blocked] for n in nodes],
            sorted((link.source, link.kind, link.target) for link in self.links),
            self.left_out,
        ]
        # surrogatepass: an imported title may hold anything a JSON string can, and must still have a digest.
        text = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def waits_for(self, link: Link) -> tuple[str, str] | None:
        """(waiter, awaited) when this link makes one unfinished issue wait for another, else None."""
        source, target = self.nodes.get(link.source), self.nodes.get(link.target)
        if source is None or target is None or not (source.unfinished and target.unfinished):
            return None
        if link.kind == PARENT_CHILD:
            return (link.target, link.source)  # the parent waits for its child
        if link.kind in BLOCKING_TYPES or target.issue_type == "gate":  # a gate holds until closed, by any link
            return (link.source, link.target)
        return None


def neighbourhood(op: Read, args: dict[str, Any]) -> Neighbourhood:
    """The neighbourhood of the live issue ``args["id"]`` (see the module docstring).

    Raises:
        BeeError: ``not_found`` (a deleted issue says so).
    """
    focus = op.issue(args["id"]).id
    tx = op.tx
    has_children = tx.row(
        "SELECT 1 FROM dependencies d JOIN issues c ON c.id = d.issue_id WHERE d.depends_on_id = ? AND d.type = ?",
        [focus, PARENT_CHILD],
    )
    if has_children:
        ids, left_out = _tree(tx, focus)
    else:
        ids, left_out = _around(tx, focus)
    links = [link for link in _links_from(tx, ids) if link.target in ids]
    nodes = _nodes(tx, ids)
    hood = Neighbourhood(focus, nodes, links, left_out=left_out)
    hood.cycles = cycles(nodes, links)
    hood.critical_path = critical_path(hood)
    _ = hood.fingerprint  # worked out here, in the store's worker thread, not on the event loop
    return hood


def _in(sql: str, ids: list[str]) -> tuple[str, list[str]]:
    return sql.format(", ".join("?" for _ in ids)), ids


def _batches(ids: Iterable[str]) -> Iterable[list[str]]:
    batch: list[str] = []
    for item in ids:
        batch.append(item)
        if len(batch) == _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


#: The links whose source (``_FROM``) or target (``_TO``, from issues the store holds) is among a batch of ids.
_FROM = "SELECT issue_id, depends_on_id, type FROM dependencies WHERE issue_id IN ({}) ORDER BY issue_id, position"
_TO = (
    "SELECT d.issue_id, d.depends_on_id, d.type FROM dependencies d JOIN issues s ON s.id = d.issue_id "
    "WHERE d.depends_on_id IN ({}) ORDER BY d.issue_id"
)


def _links(tx: Tx, query: str, ids: Iterable[str]) -> list[Link]:
    return [
        Link(source, kind, target)
        for batch in _batches(sorted(ids))
        for source, target, kind in tx.rows(*_in(query, batch))
    ]


def _links_from(tx: Tx, ids: Iterable[str]) -> list[Link]:
    return _links(tx, _FROM, ids)


def _links_to(tx: Tx, ids: Iterable[str]) -> list[Link]:
    return _links(tx, _TO, ids)


def _tree(tx: Tx, focus: str) -> tuple[set[str], int]:
    """The focus, its descendants through parent-child links, and what they are blocked by, transitively; at most
    :data:`TREE_NODES`."""
    chosen = {focus}
    frontier = [focus]
    left_out = 0
    while frontier:
        children = sorted({link.source for link in _links_to(tx, frontier) if link.kind == PARENT_CHILD} - chosen)
        room = TREE_NODES - len(chosen)
        left_out += max(0, len(children) - room)
        children = children[: max(0, room)]
        chosen.update(children)
        frontier = children
    # Then what they wait for, link after link: the chains a critical path runs along.
    frontier = sorted(chosen)
    while frontier:
        blockers = sorted({link.target for link in _links_from(tx, frontier) if link.kind in BLOCKING_TYPES} - chosen)
        room = TREE_NODES - len(chosen)
        left_out += max(0, len(blockers) - room)
        frontier = blockers[: max(0, room)]
        chosen.update(frontier)
    return chosen, left_out


def _around(tx: Tx, focus: str) -> tuple[set[str], int]:
    """Everything within :data:`AROUND_DEPTH` links of the focus, either way, at most :data:`AROUND_NODES`."""
    chosen = {focus}
    frontier = {focus}
    left_out = 0
    for _ in range(AROUND_DEPTH):
        near = {link.target for link in _links_from(tx, frontier)} | {link.source for link in _links_to(tx, frontier)}
        fresh = sorted(near - chosen)
        room = AROUND_NODES - len(chosen)
        left_out += max(0, len(fresh) - room)
        fresh = fresh[: max(0, room)]
        chosen.update(fresh)
        frontier = set(fresh)
    return chosen, left_out


def _nodes(tx: Tx, ids: set[str]) -> dict[str, Node]:
    """The shown issues; an id that is not a live issue is a missing (or deleted) node."""
    nodes: dict[str, Node] = {}
    blocked: set[str] = set()
    deleted: set[str] = set()
    for batch in _batches(sorted(ids)):
        for issue_id, title, status, priority, assignee, issue_type in tx.rows(
            *_in("SELECT id, title, status, priority, assignee, issue_type FROM issues WHERE id IN ({})", batch)
        ):
            nodes[issue_id] = Node(issue_id, title, status, priority, assignee, issue_type)
        in_set = _in("SELECT issue_id FROM readiness WHERE (is_blocked = 1 OR is_held = 1) AND issue_id IN ({})", batch)
        blocked.update(r[0] for r in tx.rows(*in_set))
        sql, params = _in("SELECT issue_id FROM kept_records WHERE issue_id IN ({}) AND kind = ?", batch)
        deleted.update(r[0] for r in tx.rows(sql, [*params, TOMBSTONE]))
    for issue_id in ids - set(nodes):
        status = TOMBSTONE if issue_id in deleted else "missing"
        nodes[issue_id] = Node(issue_id, "", status, None, None, exists=False)
    return {i: replace(n, blocked=i in blocked) for i, n in nodes.items()}


def cycles(nodes: dict[str, Node], links: list[Link]) -> list[list[str]]:
    """The cycles through readiness links among ``nodes``: each strongly connected component of more than one issue
    (or an issue depending on itself)."""
    successors: dict[str, list[str]] = {n: [] for n in nodes}
    self_loops = set()
    for link in links:
        if link.kind in READINESS_TYPES and link.source in nodes and link.target in nodes:
            successors[link.source].append(link.target)
            if link.source == link.target:
                self_loops.add(link.source)
    return [c for c in components(successors) if len(c) > 1 or c[0] in self_loops]


def components(successors: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Every strongly connected component of the graph ``successors`` (each node's successors), members sorted,
    components sorted: Tarjan's algorithm, iteratively (a deep graph must not exhaust the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(successors):
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            nexts = successors.get(node, ())
            if position < len(nexts):
                work.append((node, position + 1))
                following = nexts[position]
                if following not in index:
                    work.append((following, 0))
                elif following in on_stack:
                    low[node] = min(low[node], index[following])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(found)


def critical_path(hood: Neighbourhood) -> list[str]:
    """The longest chain of unfinished issues the focus waits for, the focus first (see the module docstring).

    Ties go to the more urgent issue, then the smaller id, so the same data always gives the same path.
    """
    waits: dict[str, list[str]] = {}
    for link in hood.links:
        pair = hood.waits_for(link)
        if pair is not None and not hood.in_cycle(link):
            waits.setdefault(pair[0], []).append(pair[1])
    focus = hood.nodes[hood.focus]
    if not focus.unfinished or not waits.get(hood.focus):
        return []
    longest: dict[str, list[str]] = {}

    def rank(issue_id: str) -> tuple[int, int, str]:
        node = hood.nodes[issue_id]
        return (-len(longest[issue_id]), node.priority if node.priority is not None else 99, issue_id)

    # Depth-first, iteratively, in post-order: a chain is known once every issue it may continue with is.
    visiting: set[str] = set()
    work: list[tuple[str, bool]] = [(hood.focus, False)]
    while work:
        issue_id, expanded = work.pop()
        if issue_id in longest:
            continue
        nexts = [n for n in waits.get(issue_id, []) if n not in visiting]
        if not expanded:
            visiting.add(issue_id)
            work.append((issue_id, True))
            work.extend((n, False) for n in nexts if n not in longest)
            continue
        visiting.discard(issue_id)
        known = [n for n in nexts if n in longest]
        best = min(known, key=rank) if known else None
        longest[issue_id] = [issue_id, *(longest[best] if best else [])]
    return longest[hood.focus]
