"""The board's four columns, read in one transaction from the tracker's maintained readiness (nothing recomputed).

- **Ready** is exactly what the ``ready`` tool answers: its conditions are
  :func:`bee_tracker.handlers.ready.conditions`, in the tool's order (priority, then newest, then id).
- **Blocked** is every active issue (not closed, pinned or a wisp) not in progress that Beads' rule blocks or holds
  (an active blocker, a waits-for spawner with active children, a blocked parent), or whose own status is
  ``blocked`` or ``deferred``, with the reason on each card.
- **In progress** is status ``in_progress``, with its holder and until when its claim's lease holds (a blocked one
  says so); an issue whose claim's lease has expired is on Ready instead (ready offers it), saying so.
- **Closed** is the most recently closed.

The columns do not overlap. Issues on none of them (deferred until a later date, orchestration types such as
gates, wisps, pinned or custom statuses) are counted, so the numbers always add up; search finds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from bee_tracker.handlers import ready
from bee_tracker.model import HOLDING_STATUSES, epoch
from bee_tracker.store import claimlease, reads
from bee_tracker.store.blockers import blocked_by_each
from bee_tracker.store.ops import Read
from bee_tracker.store.readiness import ready_now
from bee_tracker.store.records import SUMMARY_SELECT, listed

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ReadyArgs
    from bee_contracts.shapes.tracker import ReadyDataIssue as IssueSummary

#: Cards shown per column; the column's total says how many there are.
CARDS_PER_COLUMN = 50
#: Closed issues shown (the most recently closed).
CLOSED_SHOWN = 20

_HOLDING = ", ".join(f"'{s}'" for s in HOLDING_STATUSES)
#: Held back by the ready rule (blocked, or under a blocked parent).
_HELD_BACK = "(r.is_blocked = 1 OR r.is_held = 1)"


@dataclass(frozen=True)
class Filters:
    """What the board is narrowed to; every given filter must hold."""

    label: str | None = None
    issue_type: str | None = None
    assignee: str | None = None
    priority: int | None = None

    def conditions(self, params: list[Any], *, with_ready_filters: bool = True) -> list[str]:
        """WHERE clauses over aliases ``i`` and ``r`` (:data:`~bee_tracker.store.reads.LISTED`), appending their
        parameters; without ``with_ready_filters`` only those the
        ready tool does not take itself (type and assignee)."""
        where = []
        if with_ready_filters and self.priority is not None:
            where.append("r.priority = ?")
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
        args: ReadyArgs = {"limit": limit, "offset": 0, "whole": False}
        if self.priority is not None:
            args["priority"] = self.priority
        if self.label is not None:
            args["labels"] = [self.label]
        return args


@dataclass(frozen=True)
class Card:
    """One issue on the board, with why it is blocked (Blocked) or whether it is blocked (In progress), and until
    when its claim's lease holds (or when it expired)."""

    issue: IssueSummary
    blocked_by: tuple[str, ...] = ()
    reason: str | None = None
    lease_expires_at: str | None = None
    lease_expired: bool = False


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
    ready_cards, ready_total, _ = reads.page(tx, _where(ready_where), ready_params, limit=CARDS_PER_COLUMN)

    blocked_params: list[Any] = []
    blocked_where = [
        "r.is_active = 1",
        "r.status <> 'in_progress'",
        f"({_HELD_BACK} OR r.status IN ({_HOLDING}))",
        *filters.conditions(blocked_params),
    ]
    blocked_cards, blocked_total, _ = reads.page(tx, _where(blocked_where), blocked_params, limit=CARDS_PER_COLUMN)

    at = epoch(op.now)
    progress_params: list[Any] = [at, at]
    # An issue whose claim's lease expired is ready (ready offers it): its card is on Ready.
    progress_where = ["r.status = 'in_progress'", f"NOT ({ready_now('r', tx.clock)})"]
    progress_where += filters.conditions(progress_params)
    progress_cards, progress_total, _ = reads.page(tx, _where(progress_where), progress_params, limit=CARDS_PER_COLUMN)
    blocked_in_progress = _blocked_among(op, [c["id"] for c in progress_cards])
    leases = claimlease.load_for(tx, [c["id"] for c in (*progress_cards, *ready_cards) if c["status"] == "in_progress"])
    clock = claimlease.now_of(tx) if leases else 0.0

    closed_params: list[Any] = []
    closed_filters = filters.conditions(closed_params)
    closed = tx.rows(
        f"SELECT {SUMMARY_SELECT} FROM {reads.LISTED} WHERE {_where(['i.status = ?', *closed_filters])} "
        "ORDER BY i.closed_at DESC NULLS LAST, i.id LIMIT ?",
        ["closed", *closed_params, CLOSED_SHOWN],
    )
    labels = reads.labels_for(tx, [r[0] for r in closed])
    closed_total = reads.counted(tx, _where(["r.status = ?", *closed_filters]), ["closed", *closed_params])

    all_params: list[Any] = []
    everything = reads.counted(tx, _where(filters.conditions(all_params)), all_params)
    totals = (ready_total or 0) + (blocked_total or 0) + (progress_total or 0) + closed_total
    return Board(
        columns=[
            Column("blocked", "Blocked", _blocked_cards(op, blocked_cards), blocked_total or 0),
            Column("ready", "Ready", [_leased(Card(c), leases, clock) for c in ready_cards], ready_total or 0),
            Column(
                "in_progress",
                "In progress",
                [
                    _leased(Card(c, reason="blocked" if c["id"] in blocked_in_progress else None), leases, clock)
                    for c in progress_cards
                ],
                progress_total or 0,
            ),
            Column("closed", "Closed (recent)", [Card(listed(r, labels[r[0]])) for r in closed], closed_total),
        ],
        elsewhere=max(0, everything - totals),
        filters=filters,
    )


def _leased(card: Card, leases: dict[str, claimlease.Lease], clock: float) -> Card:
    """``card`` with until when its claim's lease holds (and whether it expired), when it has one."""
    lease = leases.get(card.issue["id"])
    if lease is None or lease.expires_at is None:
        return card
    return replace(card, lease_expires_at=lease.expires_at, lease_expired=lease.expired(clock))


def _blocked_among(op: Read, ids: list[str]) -> set[str]:
    if not ids:
        return set()
    marks = ", ".join("?" for _ in ids)
    sql = f"SELECT r.issue_id FROM readiness r WHERE {_HELD_BACK} AND r.issue_id IN ({marks})"
    return {row[0] for row in op.tx.rows(sql, ids)}


def _blocked_cards(op: Read, issues: list[IssueSummary]) -> list[Card]:
    """Blocked cards with their reasons: their blockers, the blocked parent that holds them, or their own status."""
    reasons = blocked_by_each(op.tx, [issue["id"] for issue in issues])
    cards = []
    for issue in issues:
        why, ids = reasons[issue["id"]]
        if why == "blocked":
            cards.append(Card(issue, blocked_by=tuple(ids)))
        elif why == "held":
            cards.append(Card(issue, blocked_by=tuple(ids), reason="its parent is blocked"))
        else:
            cards.append(Card(issue, reason=f"status {issue['status']}"))
    return cards


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
