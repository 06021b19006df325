"""Turning rows into Beads-shaped issue dicts: one issue, or many at once for an export."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from bee_tracker.model import COLUMNS
from bee_tracker.store import bdjson
from bee_tracker.store.db import Row, Tx

if TYPE_CHECKING:
    # ready and search list issues in one short form; the generated shape of a ready item is that form.
    from bee_contracts.shapes.tracker import ReadyDataIssue as IssueSummary

#: Column list used by every issue SELECT, in :data:`COLUMNS` order, then the bookkeeping columns.
ISSUE_SELECT = ", ".join(f"i.{c}" for c in COLUMNS) + (
    ", i.extra, i.key_order, i.raw_line, i.raw_revision, i.state_revision, i.activity_revision, i.last_activity_at"
)
_BOOKKEEPING = len(COLUMNS)


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


def load_issue(tx: Tx, issue_id: str, *, for_update: bool = False) -> IssueRow | None:
    if for_update:
        tx.lock_issue(issue_id)
    found = tx.row(f"SELECT {ISSUE_SELECT} FROM issues i WHERE i.id = ?", [issue_id])
    return IssueRow(found) if found else None


def labels_of(tx: Tx, issue_id: str) -> list[str]:
    return [r[0] for r in tx.rows("SELECT label FROM labels WHERE issue_id = ? ORDER BY position, label", [issue_id])]


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


def dependencies_of(tx: Tx, issue_id: str) -> list[dict[str, Any]]:
    """The issue's own dependency records, as Beads writes them in its line."""
    rows = tx.rows(f"SELECT {_DEPENDENCY_COLUMNS} FROM dependencies WHERE issue_id = ? ORDER BY position", [issue_id])
    return [_dependency(issue_id, row) for row in rows]


def comments_of(tx: Tx, issue_id: str, *, last: int | None = None) -> list[dict[str, Any]]:
    sql = f"SELECT {_COMMENT_COLUMNS} FROM comments WHERE issue_id = ? ORDER BY seq"
    params: list[Any] = [issue_id]
    if last is not None:
        sql = (
            f"SELECT * FROM (SELECT {_COMMENT_COLUMNS}, seq FROM comments "
            "WHERE issue_id = ? ORDER BY seq DESC LIMIT ?) recent ORDER BY seq"
        )
        params.append(last)
    return [_comment(issue_id, row) for row in tx.rows(sql, params)]


def _assemble(
    issue: IssueRow, labels: list[str], dependencies: list[dict[str, Any]], comments: list[dict[str, Any]]
) -> dict[str, Any]:
    values: dict[str, Any] = {k: v for k, v in issue.fields.items() if v is not None}
    values.update(issue.extra)
    if labels:
        values["labels"] = labels
    if dependencies:
        values["dependencies"] = dependencies
    if comments:
        values["comments"] = comments
    return bdjson.place(values, issue.key_order)


def beads_record(tx: Tx, issue: IssueRow, *, comments_last: int | None = None) -> dict[str, Any]:
    """The issue as a Beads JSONL object: columns that are set, kept extra keys, labels, dependencies, comments;
    keys in the order of its imported line, new ones where bd puts them (:func:`.bdjson.place`)."""
    return _assemble(
        issue,
        labels_of(tx, issue.id),
        dependencies_of(tx, issue.id),
        comments_of(tx, issue.id, last=comments_last),
    )


def beads_records(tx: Tx, issue_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """:func:`beads_record` of many issues, with one query per table for all of them (an export's pace)."""
    if not issue_ids:
        return {}
    marks = ", ".join("?" for _ in issue_ids)
    issues = [
        IssueRow(row) for row in tx.rows(f"SELECT {ISSUE_SELECT} FROM issues i WHERE i.id IN ({marks})", issue_ids)
    ]
    labels: dict[str, list[str]] = {}
    for issue_id, label in tx.rows(
        f"SELECT issue_id, label FROM labels WHERE issue_id IN ({marks}) ORDER BY issue_id, position, label", issue_ids
    ):
        labels.setdefault(issue_id, []).append(label)
    dependencies: dict[str, list[dict[str, Any]]] = {}
    for row in tx.rows(
        f"SELECT issue_id, {_DEPENDENCY_COLUMNS} FROM dependencies WHERE issue_id IN ({marks}) "
        "ORDER BY issue_id, position",
        issue_ids,
    ):
        dependencies.setdefault(row[0], []).append(_dependency(row[0], row[1:]))
    comments: dict[str, list[dict[str, Any]]] = {}
    for row in tx.rows(
        f"SELECT issue_id, {_COMMENT_COLUMNS} FROM comments WHERE issue_id IN ({marks}) ORDER BY issue_id, seq",
        issue_ids,
    ):
        comments.setdefault(row[0], []).append(_comment(row[0], row[1:]))
    return {
        issue.id: _assemble(issue, labels.get(issue.id, []), dependencies.get(issue.id, []), comments.get(issue.id, []))
        for issue in issues
    }


def ordered(values: dict[str, Any], key_order: Sequence[str] | None) -> dict[str, Any]:
    """``values`` with keys in the imported order, new ones where bd puts them (:func:`.bdjson.place`)."""
    return bdjson.place(values, key_order)


def summary(issue: IssueRow, labels: list[str]) -> IssueSummary:
    """The short form used by lists (ready, search)."""
    f = issue.fields
    return {
        "id": f["id"],
        "title": f["title"],
        "status": f["status"],
        "priority": f["priority"],
        "issue_type": f["issue_type"],
        "assignee": f["assignee"],
        "labels": labels,
        "updated_at": f["updated_at"],
        "state_revision": issue.state_revision,
    }
