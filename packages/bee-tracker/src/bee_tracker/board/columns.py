"""The board's four columns, read in one transaction with the tracker's own semantics.

- **Ready** is exactly what the ``ready`` tool answers: its conditions are :func:`bee_tracker.tools.ready.conditions`,
  in the tool's order (priority, then age).
- **Blocked** is every unfinished issue, not in progress, in the tracker's blocked set
  (:data:`~bee_tracker.store.reads.BLOCKED_CTE`: an unfinished blocker, status ``blocked`` or ``deferred``, or a
  blocked parent), with the reason on each card.
- **In progress** is status ``in_progress``, with its holder (a blocked one says so).
- **Closed** is the most recently closed.

The columns do not overlap. Issues on none of them (deferred until a later date, orchestration types such as
gates, pinned or custom statuses) are counted, so the numbers always add up; search finds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bee_tracker.model import DONE_STATUSES, HOLDING_STATUSES, PARENT_CHILD
from bee_tracker.store import reads
from bee_tracker.store.ops import Read
from bee_tracker.store.records import ISSUE_SELECT, IssueRow, summary
from bee_tracker.tools import ready

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ReadyArgs
    from bee_contracts.shapes.tracker import ReadyDataIssue as IssueSummary

#: Cards shown per column; the column's total says how many there are.
CARDS_PER_COLUMN = 50
#: Closed issues shown (the most recently closed).
CLOSED_SHOWN = 20

_DONE = ", ".join(f"'{s}'" for s in DONE_STATUSES)


@dataclass(frozen=True)
class Filters:
    """What the board is narrowed to; every given filter must hold."""

    label: str | None = None
    issue_type: str | None = None
    assignee: str | None = None
    priority: int | None = None

    def conditions(self, params: list[Any], *, with_ready_filters: bool = True) -> list[str]:
        """WHERE clauses over alias ``i`` (appending their parameters); without ``with_ready_filters`` only those the
        ready tool does not take itself (type and assignee)."""
        where = []
        if with_ready_filters and self.priority is not None:
            where.append("i.priority = ?")
            params.append(self.priority)
        if with_ready_filters and self.label is not None:
            where.append(reads.label_filter([self.label], params))
        if self.issue_type is not None:
            where.append("i.issue_type = ?")
            params.append(self.issue_type)
        if self.assignee is not None:
            where.append("i.assignee = ?")
            params.append(self.assignee)
        return where

    def ready_args(self, limit: int) -> ReadyArgs:
        args: ReadyArgs = {"limit": limit}
        if self.priority is not None:
            args["priority"] = self.priority
        if self.label is not None:
            args["labels"] = [self.label]
        return args


@dataclass(frozen=True)
class Card:
    """One issue on the board, with why it is blocked (Blocked) or whether it is blocked (In progress)."""

    issue: IssueSummary
    blocked_by: tuple[str, ...] = ()
    reason: str | None = None


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    cards: list[Card]
    total: int


@dataclass(frozen=True)
class Board:
    columns: list[Column]
    #: Live issues matching the filters that are on no column.
    elsewhere: int
    filters: Filters = field(default_factory=Filters)


def _where(clauses: list[str]) -> str:
    return " AND ".join(clauses) if clauses else "1 = 1"


def board(op: Read, filters: Filters) -> Board:
    """The four columns under ``filters``, from one read transaction."""
    tx = op.tx
    ready_where, ready_params = ready.conditions(op, filters.ready_args(CARDS_PER_COLUMN))
    ready_where += filters.conditions(ready_params, with_ready_filters=False)
    ready_cards, ready_total, _ = reads.page(
        tx, _where(ready_where), ready_params, limit=CARDS_PER_COLUMN, prefix=reads.BLOCKED_CTE
    )

    blocked_params: list[Any] = []
    blocked_where = [
        f"i.status NOT IN ({_DONE})",
        "i.status <> 'in_progress'",
        "i.id IN (SELECT id FROM blocked)",
        *filters.conditions(blocked_params),
    ]
    blocked_cards, blocked_total, _ = reads.page(
        tx, _where(blocked_where), blocked_params, limit=CARDS_PER_COLUMN, prefix=reads.BLOCKED_CTE
    )

    progress_params: list[Any] = []
    progress_where = ["i.status = 'in_progress'", *filters.conditions(progress_params)]
    progress_cards, progress_total, _ = reads.page(tx, _where(progress_where), progress_params, limit=CARDS_PER_COLUMN)
    blocked_in_progress = _blocked_among(op, [c["id"] for c in progress_cards])

    closed_params: list[Any] = []
    closed_where = _where(["i.status = 'closed'", *filters.conditions(closed_params)])
    rows = tx.rows(
        f"SELECT {ISSUE_SELECT} FROM issues i WHERE {closed_where} "
        "ORDER BY i.closed_at IS NULL, i.closed_at DESC, i.id LIMIT ?",
        [*closed_params, CLOSED_SHOWN],
    )
    closed = [IssueRow(r) for r in rows]
    labels = reads.labels_for(tx, [i.id for i in closed])
    closed_total = _count(op, closed_where, closed_params)

    all_params: list[Any] = []
    everything = _count(op, _where(filters.conditions(all_params)), all_params)
    totals = (ready_total or 0) + (blocked_total or 0) + (progress_total or 0) + closed_total
    return Board(
        columns=[
            Column("blocked", "Blocked", [_blocked_card(op, c) for c in blocked_cards], blocked_total or 0),
            Column("ready", "Ready", [Card(c) for c in ready_cards], ready_total or 0),
            Column(
                "in_progress",
                "In progress",
                [Card(c, reason="blocked" if c["id"] in blocked_in_progress else None) for c in progress_cards],
                progress_total or 0,
            ),
            Column("closed", "Closed (recent)", [Card(summary(i, labels[i.id])) for i in closed], closed_total),
        ],
        elsewhere=max(0, everything - totals),
        filters=filters,
    )


def _count(op: Read, where: str, params: list[Any]) -> int:
    found = op.tx.row(f"SELECT COUNT(*) FROM issues i WHERE {where}", params)
    return int(found[0]) if found else 0


def _blocked_among(op: Read, ids: list[str]) -> set[str]:
    if not ids:
        return set()
    marks = ", ".join("?" for _ in ids)
    return {r[0] for r in op.tx.rows(f"{reads.BLOCKED_CTE} SELECT id FROM blocked WHERE id IN ({marks})", ids)}


def _blocked_card(op: Read, issue: IssueSummary) -> Card:
    """A Blocked card with its reason: the unfinished blockers, its own holding status, or a blocked parent."""
    blockers = reads.open_blockers(op.tx, issue["id"])
    if blockers:
        return Card(issue, blocked_by=tuple(blockers))
    if issue["status"] in HOLDING_STATUSES:
        return Card(issue, reason=f"status {issue['status']}")
    parents = [
        r[0]
        for r in op.tx.rows(
            "SELECT depends_on_id FROM dependencies WHERE issue_id = ? AND type = ? ORDER BY position",
            [issue["id"], PARENT_CHILD],
        )
    ]
    return Card(issue, blocked_by=tuple(parents), reason="its parent is blocked")


@dataclass(frozen=True)
class Options:
    """What the filter form offers: the known types, and the most used labels and assignees (as suggestions)."""

    types: list[str]
    labels: list[str]
    assignees: list[str]


#: Suggestions offered per filter (any value may still be typed).
_SUGGESTED = 200


def options(op: Read) -> Options:
    return Options(
        types=reads.types(op.tx),
        labels=[
            r[0]
            for r in op.tx.rows(
                "SELECT label FROM labels GROUP BY label ORDER BY COUNT(*) DESC, label LIMIT ?", [_SUGGESTED]
            )
        ],
        assignees=[
            r[0]
            for r in op.tx.rows(
                "SELECT assignee FROM issues WHERE assignee IS NOT NULL AND assignee <> '' "
                "GROUP BY assignee ORDER BY COUNT(*) DESC, assignee LIMIT ?",
                [_SUGGESTED],
            )
        ],
    )
