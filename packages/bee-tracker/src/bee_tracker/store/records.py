"""Turning rows into Beads-shaped issue dicts and back, and writing JSONL the way Beads does."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from bee_tracker.model import CANONICAL_ORDER, COLUMNS
from bee_tracker.store.db import Row, Tx

if TYPE_CHECKING:
    # ready and search list issues in one short form; the generated shape of a ready item is that form.
    from bee_contracts.shapes.tracker import ReadyDataIssue as IssueSummary

#: Column list used by every issue SELECT, in :data:`COLUMNS` order, then the bookkeeping columns.
ISSUE_SELECT = ", ".join(f"i.{c}" for c in COLUMNS) + (
    ", i.extra, i.key_order, i.raw_line, i.raw_revision, i.state_revision, i.activity_revision, i.last_activity_at"
)
_BOOKKEEPING = len(COLUMNS)


def go_json(value: Any) -> str:
    """Compact JSON escaped like Go's encoding/json (``<``, ``>``, ``&``, U+2028/9), which is what Beads writes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


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


def dependencies_of(tx: Tx, issue_id: str) -> list[dict[str, Any]]:
    """The issue's own dependency records, as Beads writes them in its line."""
    records = []
    for depends_on, kind, created_at, created_by, metadata, extra in tx.rows(
        "SELECT depends_on_id, type, created_at, created_by, metadata, extra FROM dependencies "
        "WHERE issue_id = ? ORDER BY position",
        [issue_id],
    ):
        record: dict[str, Any] = {"issue_id": issue_id, "depends_on_id": depends_on, "type": kind}
        if created_at is not None:
            record["created_at"] = created_at
        if created_by is not None:
            record["created_by"] = created_by
        if metadata is not None:
            record["metadata"] = json.loads(metadata)
        record.update(json.loads(extra) if extra else {})
        records.append(record)
    return records


def comments_of(tx: Tx, issue_id: str, *, last: int | None = None) -> list[dict[str, Any]]:
    sql = "SELECT comment_id, int_id, author, text, created_at, extra FROM comments WHERE issue_id = ? ORDER BY seq"
    params: list[Any] = [issue_id]
    if last is not None:
        sql = (
            "SELECT * FROM (SELECT comment_id, int_id, author, text, created_at, extra, seq FROM comments "
            "WHERE issue_id = ? ORDER BY seq DESC LIMIT ?) recent ORDER BY seq"
        )
        params.append(last)
    records = []
    for row in tx.rows(sql, params):
        comment_id, int_id, author, text, created_at, extra = row[:6]
        record: dict[str, Any] = {"id": int_id if int_id is not None and str(int_id) == comment_id else comment_id}
        record["issue_id"] = issue_id
        if author is not None:
            record["author"] = author
        record["text"] = text
        if created_at is not None:
            record["created_at"] = created_at
        record.update(json.loads(extra) if extra else {})
        records.append(record)
    return records


def beads_record(tx: Tx, issue: IssueRow, *, comments_last: int | None = None) -> dict[str, Any]:
    """The issue as a Beads JSONL object: columns that are set, kept extra keys, labels, dependencies, comments."""
    values: dict[str, Any] = {k: v for k, v in issue.fields.items() if v is not None}
    values.update(issue.extra)
    values.update(_counted(tx, issue))
    labels = labels_of(tx, issue.id)
    if labels:
        values["labels"] = labels
    dependencies = dependencies_of(tx, issue.id)
    if dependencies:
        values["dependencies"] = dependencies
    comments = comments_of(tx, issue.id, last=comments_last)
    if comments:
        values["comments"] = comments
    return ordered(values, issue.key_order)


def ordered(values: dict[str, Any], key_order: Sequence[str] | None) -> dict[str, Any]:
    """``values`` with keys in the imported order; a key of Beads' canonical order the import did not have goes
    right after the nearest key before it in that order (``started_at`` after ``updated_at``), else first; the
    rest follow."""
    keys = list(dict.fromkeys(key for key in key_order or () if key in values))
    placed = set(keys)
    for index, key in enumerate(CANONICAL_ORDER):
        if key not in values or key in placed:
            continue
        before = next((keys.index(k) + 1 for k in reversed(CANONICAL_ORDER[:index]) if k in placed), 0)
        keys.insert(before, key)
        placed.add(key)
    keys += [key for key in values if key not in placed]
    return {key: values[key] for key in keys}


#: Counts Beads writes at the end of a line (``IssueWithCounts``), kept true by the tracker when the line has them:
#: ``blocks`` dependencies of the issue and on it (from issues that are not wisps), and its comments.
_COUNTS = {
    "dependency_count": "SELECT COUNT(*) FROM dependencies WHERE issue_id = ? AND type = 'blocks'",
    "dependent_count": "SELECT COUNT(*) FROM dependencies d JOIN readiness s ON s.issue_id = d.issue_id "
    "WHERE d.depends_on_id = ? AND d.type = 'blocks' AND s.is_wisp = 0",
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
