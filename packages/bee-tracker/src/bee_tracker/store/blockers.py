"""Why issues are not ready, named from the kept readiness: ``get``'s ``blocked_by``, the board's Blocked cards,
and what ``complete`` refuses to close over. Each function answers for many issues in a few statements, so a page
of cards costs the same round trips as one."""

from __future__ import annotations

from collections.abc import Sequence

from bee_tracker.model import PARENT_CHILD
from bee_tracker.store.batched import in_batches, marks
from bee_tracker.store.db import Row, Tx
from bee_tracker.store.readiness import (
    BLOCKS,
    RULE_STATEMENT,
    WAITS_FOR,
    Rule,
    children_from,
    gate_holds,
    gate_of,
    load_rule,
    rule_from,
    spawner_children,
    waited_spawners_statement,
)

_TYPES = ", ".join(f"'{t}'" for t in (*BLOCKS, WAITS_FOR))

#: Why an issue is not ready: ``"blocked"`` with its blockers, ``"held"`` with the parents that hold it back.
Reason = tuple[str | None, list[str]]


def _blocking_links(marked: str) -> str:
    """The blocking dependencies of the active issues among ``marked`` (``?`` marks), in dependency order."""
    return (
        "SELECT d.issue_id, d.depends_on_id, d.type, d.metadata, t.is_active FROM dependencies d "
        "JOIN readiness x ON x.issue_id = d.issue_id LEFT JOIN readiness t ON t.issue_id = d.depends_on_id "
        f"WHERE d.issue_id IN ({marked}) AND x.is_active = 1 AND d.type IN ({_TYPES}) "
        "ORDER BY d.issue_id, d.position"
    )


def _blockers_from(
    ids: Sequence[str], links: Sequence[Row], children: dict[str, tuple[int, int]]
) -> dict[str, list[str]]:
    """:func:`direct_blockers_of` from the rows of :func:`_blocking_links` and the spawners' children."""
    found: dict[str, dict[str, None]] = {issue_id: {} for issue_id in ids}
    for issue_id, target, kind, metadata, active in links:
        waits = kind == WAITS_FOR and gate_holds(gate_of(metadata), children.get(target))
        if waits or (kind != WAITS_FOR and active):
            found[issue_id][target] = None
    return {issue_id: list(targets) for issue_id, targets in found.items()}


def direct_blockers_of(tx: Tx, ids: Sequence[str]) -> dict[str, list[str]]:
    """What blocks each of ``ids`` under Beads' rule, in its dependency order: each active target of its ``blocks``
    and ``conditional-blocks`` dependencies, and each ``waits-for`` spawner whose children it still waits for. None
    for an issue that is not active (closed, pinned, a wisp), which Beads never counts as blocked."""
    links = []
    for batch in in_batches(ids):
        links += tx.rows(_blocking_links(marks(batch)), batch)
    children = spawner_children(tx, {target for _, target, kind, _, _ in links if kind == WAITS_FOR})
    return _blockers_from(ids, links, children)


def direct_blockers(tx: Tx, issue_id: str) -> list[str]:
    """What blocks one issue (see :func:`direct_blockers_of`)."""
    return direct_blockers_of(tx, [issue_id])[issue_id]


def _parent_links(marked: str) -> str:
    """The parents of the issues among ``marked`` (``?`` marks) that are blocked or held, in dependency order."""
    return (
        "SELECT d.issue_id, d.depends_on_id, p.is_blocked FROM dependencies d "
        "JOIN readiness p ON p.issue_id = d.depends_on_id "
        f"WHERE d.issue_id IN ({marked}) AND d.type = '{PARENT_CHILD}' AND (p.is_blocked = 1 OR p.is_held = 1) "
        "ORDER BY d.issue_id, d.position"
    )


def _holding_from(ids: Sequence[str], links: Sequence[Row], rule: Rule) -> dict[str, list[str]]:
    """:func:`_holding_parents_of` from the rows of :func:`_parent_links`: a held parent holds only by the
    transitive rule."""
    found: dict[str, list[str]] = {issue_id: [] for issue_id in ids}
    for issue_id, parent, blocked in links:
        if blocked or rule.transitive:
            found[issue_id].append(parent)
    return found


def _holding_parents_of(tx: Tx, ids: Sequence[str]) -> dict[str, list[str]]:
    """The parents that hold each issue back: blocked ones (and, with the store's transitive rule, held ones)."""
    links = []
    for batch in in_batches(ids):
        links += tx.rows(_parent_links(marks(batch)), batch)
    return _holding_from(ids, links, load_rule(tx))


def blocked_by_each(tx: Tx, ids: Sequence[str]) -> dict[str, Reason]:
    """For each of ``ids``: ``("blocked", blockers)`` for a blocked issue, ``("held", parents)`` for one a blocked
    parent holds back, else ``(None, [])``; read from the kept flags."""
    flags: dict[str, tuple[int, int]] = {}
    for batch in in_batches(ids):
        for issue_id, blocked, held in tx.rows(
            f"SELECT issue_id, is_blocked, is_held FROM readiness WHERE issue_id IN ({marks(batch)})", batch
        ):
            flags[issue_id] = (blocked, held)
    blocked = [i for i in ids if flags.get(i, (0, 0))[0]]
    held = [i for i in ids if not flags.get(i, (0, 0))[0] and flags.get(i, (0, 0))[1]]
    blockers = direct_blockers_of(tx, blocked) if blocked else {}
    parents = _holding_parents_of(tx, held) if held else {}
    reasons: dict[str, Reason] = {issue_id: (None, []) for issue_id in ids}
    reasons.update({i: ("blocked", blockers[i]) for i in blocked})
    reasons.update({i: ("held", parents[i]) for i in held})
    return reasons


def blocked_by_flags(tx: Tx, issue_id: str, *, blocked: bool, held: bool) -> Reason:
    """:func:`blocked_by_each` of one issue whose kept ``is_blocked`` and ``is_held`` the caller already read: the
    rest in one :meth:`~.db.Tx.batch` (one round trip), or none for an issue that is neither."""
    if blocked:
        links, children = tx.batch([(_blocking_links("?"), [issue_id]), waited_spawners_statement(issue_id)])
        return "blocked", _blockers_from([issue_id], links, children_from(children))[issue_id]
    if held:
        rule, links = tx.batch([RULE_STATEMENT, (_parent_links("?"), [issue_id])])
        return "held", _holding_from([issue_id], links, rule_from(rule))[issue_id]
    return None, []
