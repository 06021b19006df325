"""Why issues are not ready, named from the kept readiness: ``get``'s ``blocked_by``, the board's Blocked cards,
and what ``complete`` refuses to close over. Each function answers for many issues in a few statements, so a page
of cards costs the same round trips as one."""

from __future__ import annotations

from collections.abc import Sequence

from bee_tracker.model import PARENT_CHILD
from bee_tracker.store.batched import in_batches, marks
from bee_tracker.store.db import Tx
from bee_tracker.store.readiness import BLOCKS, WAITS_FOR, gate_holds, gate_of, load_rule, spawner_children

_TYPES = ", ".join(f"'{t}'" for t in (*BLOCKS, WAITS_FOR))

#: Why an issue is not ready: ``"blocked"`` with its blockers, ``"held"`` with the parents that hold it back.
Reason = tuple[str | None, list[str]]


def direct_blockers_of(tx: Tx, ids: Sequence[str]) -> dict[str, list[str]]:
    """What blocks each of ``ids`` under Beads' rule, in its dependency order: each active target of its ``blocks``
    and ``conditional-blocks`` dependencies, and each ``waits-for`` spawner whose children it still waits for. None
    for an issue that is not active (closed, pinned, a wisp), which Beads never counts as blocked."""
    rows = []
    for batch in in_batches(ids):
        rows += tx.rows(
            "SELECT d.issue_id, d.depends_on_id, d.type, d.metadata, t.is_active FROM dependencies d "
            "JOIN readiness x ON x.issue_id = d.issue_id LEFT JOIN readiness t ON t.issue_id = d.depends_on_id "
            f"WHERE d.issue_id IN ({marks(batch)}) AND x.is_active = 1 AND d.type IN ({_TYPES}) "
            "ORDER BY d.issue_id, d.position",
            batch,
        )
    children = spawner_children(tx, {target for _, target, kind, _, _ in rows if kind == WAITS_FOR})
    found: dict[str, dict[str, None]] = {issue_id: {} for issue_id in ids}
    for issue_id, target, kind, metadata, active in rows:
        waits = kind == WAITS_FOR and gate_holds(gate_of(metadata), children.get(target))
        if waits or (kind != WAITS_FOR and active):
            found[issue_id][target] = None
    return {issue_id: list(targets) for issue_id, targets in found.items()}


def direct_blockers(tx: Tx, issue_id: str) -> list[str]:
    """What blocks one issue (see :func:`direct_blockers_of`)."""
    return direct_blockers_of(tx, [issue_id])[issue_id]


def _holding_parents_of(tx: Tx, ids: Sequence[str]) -> dict[str, list[str]]:
    """The parents that hold each issue back: blocked ones (and, with the store's transitive rule, held ones)."""
    held = " OR p.is_held = 1" if load_rule(tx).transitive else ""
    found: dict[str, list[str]] = {issue_id: [] for issue_id in ids}
    for batch in in_batches(ids):
        for issue_id, parent in tx.rows(
            "SELECT d.issue_id, d.depends_on_id FROM dependencies d JOIN readiness p ON p.issue_id = d.depends_on_id "
            f"WHERE d.issue_id IN ({marks(batch)}) AND d.type = '{PARENT_CHILD}' AND (p.is_blocked = 1{held}) "
            "ORDER BY d.issue_id, d.position",
            batch,
        ):
            found[issue_id].append(parent)
    return found


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


def blocked_by(tx: Tx, issue_id: str) -> Reason:
    """Why one issue is not ready (see :func:`blocked_by_each`)."""
    return blocked_by_each(tx, [issue_id])[issue_id]
