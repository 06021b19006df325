"""Turning rows into Beads-shaped issue dicts: one issue, or many at once for an export."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from bee_tracker.model import COLUMNS
from bee_tracker.store import bdjson, claimlease
from bee_tracker.store.db import Row, Statement, Tx

if TYPE_CHECKING:
    # ready and search list issues in one short form; the generated shape of a ready item is that form.
    from bee_contracts.shapes.tracker import ReadyDataIssue as IssueSummary

#: Column list used by every issue SELECT, in :data:`COLUMNS` order, then the bookkeeping columns.
ISSUE_SELECT = ", ".join(f"i.{c}" for c in COLUMNS) + (
    ", i.extra, i.key_order, i.raw_line, i.raw_revision, i.state_revision, i.activity_revision, i.last_activity_at"
)
_BOOKKEEPING = len(COLUMNS)
#: How many columns of a row are :data:`ISSUE_SELECT`'s.
ISSUE_WIDTH = _BOOKKEEPING + 7


class Revisions(TypedDict):
    """How far an issue has changed: its state (what compare-and-swap compares) and any activity (notes too)."""

    state_revision: int
    activity_revision: int
    last_activity_at: str


class IssueRow:
    """One row of ``issues`` with its relations loaded on demand."""

    def __init__(self, row: Row) -> None:
        self.fields: dict[str, Any] = dict(zip(COLUMNS, row[:_BOOKKEEPING], strict=True))
        extra, key_order, raw_line, raw_revision, state, activity, last = row[_BOOKKEEPING:]
        self.extra: dict[str, Any] = json.loads(extra) if extra else {}
        self.key_order: list[str] | None = json.loads(key_order) if key_order else None
        self.raw_line: str | None = raw_line
        self.raw_revision: int | None = raw_revision
        self.state_revision: int = state
        self.activity_revision: int = activity
        self.last_activity_at: str = last
        #: The claim's lease, when it was read with the issue (:func:`leased_statement`); None when it has none.
        self.lease: claimlease.Lease | None = None
        #: Whether that lease had run out by the database's clock when it was read: the claim is then over.
        self.lease_expired = False

    @property
    def id(self) -> str:
        return str(self.fields["id"])

    @property
    def untouched(self) -> bool:
        """True while the issue is exactly as imported, so its original line can be written back verbatim."""
        return self.raw_line is not None and self.raw_revision == self.activity_revision

    def revisions(self) -> Revisions:
        return {
            "state_revision": self.state_revision,
            "activity_revision": self.activity_revision,
            "last_activity_at": self.last_activity_at,
        }


def issue_statement(issue_id: str) -> Statement:
    """The row of issue ``issue_id`` (none for an id that names no live issue), for :class:`IssueRow`."""
    return f"SELECT {ISSUE_SELECT} FROM issues i WHERE i.id = ?", [issue_id]


def leased_statement(issue_id: str, clock: str, *, ready: tuple[str, float] | None = None) -> Statement:
    """The row of issue ``issue_id`` with its lease's :data:`~.claimlease.COLUMNS` and the database's clock last, for
    :func:`leased`; with ``ready`` (:func:`.readiness.ready_now` of alias ``r``, and the tracker's time), whether
    ``ready`` offers it then, just before the clock (:func:`ready_of`)."""
    column, params = "", list[Any]([issue_id])
    if ready is not None:
        when, at = ready
        column = f", (SELECT CASE WHEN {when} THEN 1 ELSE 0 END FROM readiness r WHERE r.issue_id = i.id)"
        params = [at, at, issue_id]
    return (
        f"SELECT {ISSUE_SELECT}, {claimlease.COLUMNS}{column}, {clock} FROM issues i "
        "LEFT JOIN claim_leases l ON l.issue_id = i.id WHERE i.id = ?",
        params,
    )


def leased(row: Row) -> tuple[IssueRow, float]:
    """The issue of a row of :func:`leased_statement` with its lease, and the database's clock it was read at (a
    column between them, whether ``ready`` offered it, is :func:`ready_of`'s)."""
    issue = IssueRow(row[:ISSUE_WIDTH])
    now = float(row[-1])
    issue.lease = claimlease.from_row(row[ISSUE_WIDTH : ISSUE_WIDTH + claimlease.WIDTH])
    issue.lease_expired = issue.lease is not None and issue.lease.expired(now)
    return issue, now


def ready_of(row: Row) -> bool:
    """Whether ``ready`` offered the issue, from a row of :func:`leased_statement` given ``ready_at``."""
    return bool(row[ISSUE_WIDTH + claimlease.WIDTH])


def load_issue(tx: Tx, issue_id: str, *, for_update: bool = False) -> IssueRow | None:
    if for_update:
        tx.lock_issue(issue_id)
    found = tx.row(*issue_statement(issue_id))
    return IssueRow(found) if found else None


def labels_statement(issue_id: str) -> Statement:
    """The issue's labels in their order, one a row."""
    return "SELECT label FROM labels WHERE issue_id = ? ORDER BY position, label", [issue_id]


def labels_of(tx: Tx, issue_id: str) -> list[str]:
    return [r[0] for r in tx.rows(*labels_statement(issue_id))]


def _dependency(issue_id: str, row: Row) -> dict[str, Any]:
    depends_on, kind, created_at, created_by, metadata, extra = row
    record: dict[str, Any] = {"issue_id": issue_id, "depends_on_id": depends_on, "type": kind}
    if created_at is not None:
        record["created_at"] = created_at
    if created_by is not None:
        record["created_by"] = created_by
    if metadata is not None:
        record["metadata"] = json.loads(metadata)
    record.update(json.loads(extra) if extra else {})
    return record


def _comment(issue_id: str, row: Row) -> dict[str, Any]:
    comment_id, int_id, author, text, created_at, extra = row[:6]
    record: dict[str, Any] = {"id": int_id if int_id is not None and str(int_id) == comment_id else comment_id}
    record["issue_id"] = issue_id
    if author is not None:
        record["author"] = author
    record["text"] = text
    if created_at is not None:
        record["created_at"] = created_at
    record.update(json.loads(extra) if extra else {})
    return record


_DEPENDENCY_COLUMNS = "depends_on_id, type, created_at, created_by, metadata, extra"
_COMMENT_COLUMNS = "comment_id, int_id, author, text, created_at, extra"


def dependencies_statement(issue_id: str) -> Statement:
    """The issue's own dependency rows, for :func:`dependency_records`."""
    return f"SELECT {_DEPENDENCY_COLUMNS} FROM dependencies WHERE issue_id = ? ORDER BY position", [issue_id]


def dependency_records(issue_id: str, rows: Sequence[Row]) -> list[dict[str, Any]]:
    """The issue's own dependency records from the rows of :func:`dependencies_statement`, as Beads writes them."""
    return [_dependency(issue_id, row) for row in rows]


def dependencies_of(tx: Tx, issue_id: str) -> list[dict[str, Any]]:
    """The issue's own dependency records, as Beads writes them in its line."""
    return dependency_records(issue_id, tx.rows(*dependencies_statement(issue_id)))


def comments_statement(issue_id: str, *, last: int | None = None) -> Statement:
    """The issue's comment rows, oldest first (only the newest ``last`` with ``last``), for :func:`comment_records`."""
    if last is None:
        return f"SELECT {_COMMENT_COLUMNS} FROM comments WHERE issue_id = ? ORDER BY seq", [issue_id]
    return (
        f"SELECT * FROM (SELECT {_COMMENT_COLUMNS}, seq FROM comments "
        "WHERE issue_id = ? ORDER BY seq DESC LIMIT ?) recent ORDER BY seq",
        [issue_id, last],
    )


def comment_records(issue_id: str, rows: Sequence[Row]) -> list[dict[str, Any]]:
    """The issue's comments from the rows of :func:`comments_statement`, as Beads writes them."""
    return [_comment(issue_id, row) for row in rows]


def comments_of(tx: Tx, issue_id: str, *, last: int | None = None) -> list[dict[str, Any]]:
    return comment_records(issue_id, tx.rows(*comments_statement(issue_id, last=last)))


def assemble(
    issue: IssueRow,
    labels: list[str],
    dependencies: list[dict[str, Any]],
    comments: list[dict[str, Any]],
    counts: dict[str, int],
) -> dict[str, Any]:
    """The Beads record of ``issue`` from its relations already read (see :func:`beads_record`)."""
    values: dict[str, Any] = {k: v for k, v in issue.fields.items() if v is not None}
    values.update(issue.extra)
    if issue.lease is not None:
        values.update(issue.lease.line_keys())
    values.update(counts)
    if labels:
        values["labels"] = labels
    if dependencies:
        values["dependencies"] = dependencies
    if comments:
        values["comments"] = comments
    return bdjson.place(values, issue.key_order)


def beads_record(tx: Tx, issue: IssueRow, *, comments_last: int | None = None) -> dict[str, Any]:
    """The issue as a Beads JSONL object: columns that are set, kept extra keys, its lease, labels, dependencies,
    comments; keys in the order of its imported line, new ones where bd puts them (:func:`.bdjson.place`)."""
    if issue.lease is None:
        issue.lease = claimlease.load_for(tx, [issue.id]).get(issue.id)
    return assemble(
        issue,
        labels_of(tx, issue.id),
        dependencies_of(tx, issue.id),
        comments_of(tx, issue.id, last=comments_last),
        _counted(tx, issue),
    )


def beads_records(tx: Tx, issue_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """:func:`beads_record` of many issues, with one query per table for all of them (an export's pace)."""
    return {issue_id: whole.record for issue_id, whole in _wholes(tx, issue_ids, comments=True).items()}


class Whole(NamedTuple):
    """An issue as a list with ``whole`` shows it: its record as ``get`` answers it without comments, how many
    comments it has, and how many live issues have a ``blocks`` dependency on it."""

    record: dict[str, Any]
    comment_count: int
    dependent_count: int


def wholes(tx: Tx, issue_ids: Sequence[str]) -> dict[str, Whole]:
    """:class:`Whole` of each of ``issue_ids`` that exists, with one query per table for all of them."""
    return _wholes(tx, issue_ids, comments=False)


def _grouped(rows: Sequence[Row]) -> dict[str, list[Row]]:
    """Rows whose first column is an issue's id, by that id, each issue's in their order."""
    found: dict[str, list[Row]] = {}
    for row in rows:
        found.setdefault(row[0], []).append(row[1:])
    return found


def _records_by_id(
    tx: Tx, sql: str, issue_ids: Sequence[str], record: Callable[[str, Row], dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Each issue's records (``record(issue_id, row)``) from ``sql``'s rows, whose first column is the issue's id."""
    return {
        issue_id: [record(issue_id, row) for row in rows]
        for issue_id, rows in _grouped(tx.rows(sql, list(issue_ids))).items()
    }


def _counts_by_id(tx: Tx, sql: str, issue_ids: Sequence[str]) -> dict[str, int]:
    return {str(issue_id): int(count) for issue_id, count in tx.rows(sql, list(issue_ids))}


def _wholes(tx: Tx, issue_ids: Sequence[str], *, comments: bool) -> dict[str, Whole]:
    """Each issue's record with all its comments (``comments``, an export's) or none (a list's), and its counts."""
    if not issue_ids:
        return {}
    marks = ", ".join("?" for _ in issue_ids)
    issues = [
        IssueRow(row) for row in tx.rows(f"SELECT {ISSUE_SELECT} FROM issues i WHERE i.id IN ({marks})", issue_ids)
    ]
    labels = _grouped(
        tx.rows(
            f"SELECT issue_id, label FROM labels WHERE issue_id IN ({marks}) ORDER BY issue_id, position, label",
            issue_ids,
        )
    )
    dependencies = _records_by_id(
        tx,
        f"SELECT issue_id, {_DEPENDENCY_COLUMNS} FROM dependencies WHERE issue_id IN ({marks}) "
        "ORDER BY issue_id, position",
        issue_ids,
        _dependency,
    )
    if comments:
        notes = _records_by_id(
            tx,
            f"SELECT issue_id, {_COMMENT_COLUMNS} FROM comments WHERE issue_id IN ({marks}) ORDER BY issue_id, seq",
            issue_ids,
            _comment,
        )
        comment_counts = {issue_id: len(found) for issue_id, found in notes.items()}
        blockers: dict[str, int] = {}
    else:
        notes = {}
        comment_counts = _counts_by_id(
            tx, f"SELECT issue_id, COUNT(*) FROM comments WHERE issue_id IN ({marks}) GROUP BY issue_id", issue_ids
        )
        blockers = _counts_by_id(
            tx,
            "SELECT d.depends_on_id, COUNT(*) FROM dependencies d JOIN issues s ON s.id = d.issue_id "
            f"WHERE d.depends_on_id IN ({marks}) AND d.type = 'blocks' GROUP BY d.depends_on_id",
            issue_ids,
        )
    leases = claimlease.load_for(tx, issue_ids)
    for issue in issues:
        issue.lease = leases.get(issue.id)
    counting = [issue.id for issue in issues if _COUNTS.keys() & issue.extra.keys()]
    dependents = _dependents(tx, counting)
    found: dict[str, Whole] = {}
    for issue in issues:
        own = dependencies.get(issue.id, [])
        comment_count = comment_counts.get(issue.id, 0)
        counts = counts_from(issue, own, comment_count=comment_count, dependent_count=dependents.get(issue.id, 0))
        record = assemble(
            issue, [str(label) for (label,) in labels.get(issue.id, [])], own, notes.get(issue.id, []), counts
        )
        found[issue.id] = Whole(record, comment_count, blockers.get(issue.id, 0))
    return found


def ordered(values: dict[str, Any], key_order: Sequence[str] | None) -> dict[str, Any]:
    """``values`` with keys in the imported order, new ones where bd puts them (:func:`.bdjson.place`)."""
    return bdjson.place(values, key_order)


#: Beads' ``dependent_count`` of an issue (one ``?``, its id): the ``blocks`` dependencies on it from issues that are
#: not wisps.
DEPENDENT_COUNT = (
    "SELECT COUNT(*) FROM dependencies d JOIN readiness s ON s.issue_id = d.issue_id "
    "WHERE d.depends_on_id = ? AND d.type = 'blocks' AND s.is_wisp = 0"
)

#: Counts Beads writes at the end of a line (``IssueWithCounts``), kept true by the tracker when the line has them:
#: ``blocks`` dependencies of the issue and on it (from issues that are not wisps), and its comments.
_COUNTS = {
    "dependency_count": "SELECT COUNT(*) FROM dependencies WHERE issue_id = ? AND type = 'blocks'",
    "dependent_count": DEPENDENT_COUNT,
    "comment_count": "SELECT COUNT(*) FROM comments WHERE issue_id = ?",
}


def _counted(tx: Tx, issue: IssueRow) -> dict[str, int]:
    """The counts the issue's line carries, as the data stands now."""
    counts = {}
    for key, sql in _COUNTS.items():
        if key in issue.extra:
            found = tx.row(sql, [issue.id])
            counts[key] = int(found[0]) if found else 0
    return counts


def _dependents(tx: Tx, issue_ids: Sequence[str]) -> dict[str, int]:
    """``dependent_count`` of each of ``issue_ids`` in one query (see :data:`_COUNTS`)."""
    if not issue_ids:
        return {}
    marks = ", ".join("?" for _ in issue_ids)
    rows = tx.rows(
        "SELECT d.depends_on_id, COUNT(*) FROM dependencies d JOIN readiness s ON s.issue_id = d.issue_id "
        f"WHERE d.depends_on_id IN ({marks}) AND d.type = 'blocks' AND s.is_wisp = 0 GROUP BY d.depends_on_id",
        issue_ids,
    )
    return {str(issue_id): int(count) for issue_id, count in rows}


def counts_from(
    issue: IssueRow, dependencies: list[dict[str, Any]], *, comment_count: int, dependent_count: int
) -> dict[str, int]:
    """:func:`_counted` from what a caller already read: the issue's whole dependency list, how many comments it
    has and its :data:`DEPENDENT_COUNT`."""
    known = {
        "dependency_count": sum(1 for d in dependencies if d["type"] == "blocks"),
        "dependent_count": dependent_count,
        "comment_count": comment_count,
    }
    return {key: value for key, value in known.items() if key in issue.extra}


#: The columns a list reads per issue (:func:`listed`): only what its short form shows, so a page never reads or
#: parses an issue's text, kept keys or imported line.
SUMMARY_SELECT = "i.id, i.title, i.status, i.priority, i.issue_type, i.assignee, i.updated_at, i.state_revision"


def listed(row: Row, labels: list[str]) -> IssueSummary:
    """The short form used by lists (ready, search, the board), from a row of :data:`SUMMARY_SELECT`."""
    issue_id, title, status, priority, issue_type, assignee, updated_at, state_revision = row
    return {
        "id": issue_id,
        "title": title,
        "status": status,
        "priority": priority,
        "issue_type": issue_type,
        "assignee": assignee,
        "labels": labels,
        "updated_at": updated_at,
        "state_revision": state_revision,
    }
