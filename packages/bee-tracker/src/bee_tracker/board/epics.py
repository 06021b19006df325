"""Epics and how far each has got: its children (``parent-child`` dependents) by state, read in one transaction.

A child counts once, by its own status; deleted children (tombstones) are not issues and do not count, as they do
not hold an epic open either. ``blocked`` counts unfinished children the ready rule blocks or holds back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bee_tracker.model import PARENT_CHILD
from bee_tracker.store import reads
from bee_tracker.store.ops import Read

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ReadyDataIssue as IssueSummary

#: Epics listed at most (open ones first); the total says how many there are.
EPICS_SHOWN = 200


@dataclass(frozen=True)
class Progress:
    """One epic and its children by state."""

    epic: IssueSummary
    children: int
    closed: int
    in_progress: int
    blocked: int

    @property
    def percent(self) -> int:
        """Closed children as a whole percentage (an epic without children is at 0)."""
        return (100 * self.closed) // self.children if self.children else 0


@dataclass(frozen=True)
class Epics:
    epics: list[Progress]
    total: int


def epics(op: Read, args: dict[str, Any]) -> Epics:
    """Every epic (``issue_type`` epic), open ones first by priority and age, with its children's progress."""
    del args  # the listing takes no arguments; the signature is the store's read function's
    tx = op.tx
    found, total, _ = reads.page(tx, "i.issue_type = 'epic' AND i.status <> 'closed'", [], limit=EPICS_SHOWN)
    if len(found) < EPICS_SHOWN:
        closed, closed_total, _ = reads.page(
            tx, "i.issue_type = 'epic' AND i.status = 'closed'", [], limit=EPICS_SHOWN - len(found)
        )
        found += closed
        total = (total or 0) + (closed_total or 0)
    ids = [e["id"] for e in found]
    counts: dict[str, dict[str, int]] = {i: {} for i in ids}
    blocked: dict[str, int] = dict.fromkeys(ids, 0)
    if ids:
        marks = ", ".join("?" for _ in ids)
        for parent, status, count in tx.rows(
            "SELECT d.depends_on_id, c.status, COUNT(*) FROM dependencies d JOIN issues c ON c.id = d.issue_id "
            f"WHERE d.type = ? AND d.depends_on_id IN ({marks}) GROUP BY d.depends_on_id, c.status",
            [PARENT_CHILD, *ids],
        ):
            counts[parent][status] = int(count)
        for parent, count in tx.rows(
            "SELECT d.depends_on_id, COUNT(*) FROM dependencies d JOIN readiness c ON c.issue_id = d.issue_id "
            f"WHERE d.type = ? AND d.depends_on_id IN ({marks}) AND c.status <> 'closed' "
            "AND (c.is_blocked = 1 OR c.is_held = 1) GROUP BY d.depends_on_id",
            [PARENT_CHILD, *ids],
        ):
            blocked[parent] = int(count)
    return Epics(
        epics=[
            Progress(
                epic=e,
                children=sum(counts[e["id"]].values()),
                closed=counts[e["id"]].get("closed", 0),
                in_progress=counts[e["id"]].get("in_progress", 0),
                blocked=blocked[e["id"]],
            )
            for e in found
        ],
        total=total or 0,
    )
