"""Why an issue is not ready, named from the maintained state: ``get``'s ``blocked_by``, the board's Blocked cards,
and what ``complete`` refuses to close over."""

from __future__ import annotations

from bee_tracker.model import PARENT_CHILD
from bee_tracker.store.db import Tx
from bee_tracker.store.readiness import BLOCKS, WAITS_FOR, gate_holds, gate_of, load_rule, spawner_children

_TYPES = ", ".join(f"'{t}'" for t in (*BLOCKS, WAITS_FOR))


def direct_blockers(tx: Tx, issue_id: str) -> list[str]:
    """What blocks the issue under Beads' rule, in its dependency order: each active target of its ``blocks`` and
    ``conditional-blocks`` dependencies, and each ``waits-for`` spawner whose children it still waits for. Empty
    for an issue that is not active (closed, pinned, a wisp), which Beads never counts as blocked."""
    rows = tx.rows(
        "SELECT d.depends_on_id, d.type, d.metadata, t.is_active FROM dependencies d "
        "JOIN readiness x ON x.issue_id = d.issue_id LEFT JOIN readiness t ON t.issue_id = d.depends_on_id "
        f"WHERE d.issue_id = ? AND x.is_active = 1 AND d.type IN ({_TYPES}) ORDER BY d.position",
        [issue_id],
    )
    children = spawner_children(tx, {target for target, kind, _, _ in rows if kind == WAITS_FOR})
    found: dict[str, None] = {}
    for target, kind, metadata, active in rows:
        if kind == WAITS_FOR:
            if gate_holds(gate_of(metadata), children.get(target)):
                found[target] = None
        elif active:
            found[target] = None
    return list(found)


def holding_parents(tx: Tx, issue_id: str) -> list[str]:
    """The parents that hold the issue back: blocked ones (and, with the store's transitive rule, held ones)."""
    held = " OR p.is_held = 1" if load_rule(tx).transitive else ""
    return [
        r[0]
        for r in tx.rows(
            "SELECT d.depends_on_id FROM dependencies d JOIN readiness p ON p.issue_id = d.depends_on_id "
            f"WHERE d.issue_id = ? AND d.type = '{PARENT_CHILD}' AND (p.is_blocked = 1{held}) ORDER BY d.position",
            [issue_id],
        )
    ]


def blocked_by(tx: Tx, issue_id: str) -> tuple[str | None, list[str]]:
    """``("blocked", blockers)`` for a blocked issue, ``("held", parents)`` for one a blocked parent holds back, else
    ``(None, [])``; read from the maintained flags, so an issue that is neither costs one row."""
    found = tx.row("SELECT is_blocked, is_held FROM readiness WHERE issue_id = ?", [issue_id])
    if found is None:
        return None, []
    if found[0]:
        return "blocked", direct_blockers(tx, issue_id)
    if found[1]:
        return "held", holding_parents(tx, issue_id)
    return None, []
