"""Beads JSONL in and out: a lenient import and an export that round-trips losslessly.

Import keeps every key (unknown ones verbatim), skips tombstones, gives a line without an id a fresh one, keeps
dependencies on ids that do not exist, and remembers each line exactly as it came: an issue nobody has touched
since is exported byte for byte. A touched issue is rebuilt with its keys in their original order and escaped the
way Beads (Go) escapes JSON. Export follows import order, then id.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bee_tracker.model import BUILTIN_STATUSES, BUILTIN_TYPES, COLUMNS, TOMBSTONE, epoch, now
from bee_tracker.store import writes
from bee_tracker.store.db import Tx
from bee_tracker.store.errors import Invalid
from bee_tracker.store.records import ISSUE_SELECT, IssueRow, beads_record, go_json

_RELATIONS = ("labels", "dependencies", "comments")
_TEXT_COLUMNS = frozenset(COLUMNS) - {"priority"}


@dataclass
class ImportReport:
    """What an import did, line by line."""

    imported: int = 0
    replaced: int = 0
    tombstones: int = 0
    skipped_types: Counter[str] = field(default_factory=Counter)
    generated_ids: list[tuple[int, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "replaced": self.replaced,
            "tombstonesSkipped": self.tombstones,
            "otherRecordsSkipped": dict(self.skipped_types),
            "generatedIds": [{"line": line, "id": issue_id} for line, issue_id in self.generated_ids],
        }


def parse_lines(lines: Iterable[str]) -> list[tuple[int, str, dict[str, Any]]]:
    """Parse every line first, so a malformed one stops the import before anything is written.

    Raises:
        Invalid: naming the first malformed line.
    """
    parsed = []
    for number, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise Invalid(
                f"line {number} is not valid JSON ({exc.msg} at column {exc.colno}); fix or remove it, then import "
                "again (nothing was imported)",
                details={"line": number},
            ) from None
        if not isinstance(value, dict):
            raise Invalid(f"line {number} is not a JSON object; nothing was imported", details={"line": number})
        parsed.append((number, text, value))
    return parsed


def _text(value: Any) -> Any:
    return value if value is None or isinstance(value, str) else json.dumps(value)


def import_records(tx: Tx, parsed: list[tuple[int, str, dict[str, Any]]], prefix: str) -> ImportReport:
    """Upsert every issue of ``parsed`` in this transaction."""
    report = ImportReport()
    base_row = tx.row("SELECT COALESCE(MAX(position), -1) + 1 FROM issues")
    base = int(base_row[0]) if base_row else 0
    statuses: list[str] = []
    types: list[str] = []
    highest_comment = 0
    for offset, (number, text, record) in enumerate(parsed):
        kind = record.get("_type", "issue")
        if kind != "issue":
            report.skipped_types[str(kind)] += 1
            continue
        if record.get("status") == TOMBSTONE:
            report.tombstones += 1
            continue
        issue_id = record.get("id")
        raw_line: str | None = text
        if not isinstance(issue_id, str) or not issue_id:
            issue_id = writes.new_id(tx, prefix)
            report.generated_ids.append((number, issue_id))
            raw_line = None  # the line as given has no id: write it out rebuilt
        if tx.row("SELECT 1 FROM issues WHERE id = ?", [issue_id]):
            tx.run("DELETE FROM issues WHERE id = ?", [issue_id])
            report.replaced += 1
        columns: dict[str, Any] = {c: _text(record.get(c)) for c in COLUMNS if c in record and c != "priority"}
        columns["id"] = issue_id
        priority = record.get("priority")
        if isinstance(priority, int) and not isinstance(priority, bool):
            columns["priority"] = priority
        columns.setdefault("status", "open")
        columns.setdefault("issue_type", "task")
        columns.setdefault("title", "")
        extra = {k: v for k, v in record.items() if k not in COLUMNS and k not in _RELATIONS}
        if "priority" in record and "priority" not in columns:
            extra["priority"] = priority  # not an integer: kept verbatim, never coerced
        statuses.append(columns["status"])
        types.append(columns["issue_type"])
        stamp = columns.get("updated_at") or columns.get("created_at") or now()
        names = list(columns)
        tx.run(
            f"INSERT INTO issues ({', '.join(names)}, created_epoch, defer_epoch, extra, key_order, raw_line, "
            f"raw_revision, position, last_activity_at) "
            f"VALUES ({', '.join('?' for _ in names)}, ?, ?, ?, ?, ?, 1, ?, ?)",
            [
                *columns.values(),
                epoch(columns.get("created_at")),
                epoch(columns.get("defer_until")),
                json.dumps(extra, ensure_ascii=False),
                json.dumps(list(record)),
                raw_line,
                base + offset,
                stamp,
            ],
        )
        labels = record.get("labels") or []
        writes.set_labels(tx, issue_id, [str(label) for label in labels])
        _import_dependencies(tx, issue_id, record.get("dependencies") or [])
        highest_comment = max(highest_comment, _import_comments(tx, issue_id, record.get("comments") or []))
        report.imported += 1
    writes.register_vocabulary(tx, "custom_statuses", statuses, BUILTIN_STATUSES)
    writes.register_vocabulary(tx, "custom_types", types, BUILTIN_TYPES)
    if highest_comment:
        tx.reserve_comment_ids(highest_comment)  # new comment ids continue above every imported integer id
    return report


def _import_dependencies(tx: Tx, issue_id: str, dependencies: list[Any]) -> None:
    known = {"issue_id", "depends_on_id", "type", "created_at", "created_by", "metadata"}
    for position, dep in enumerate(d for d in dependencies if isinstance(d, dict)):
        target = dep.get("depends_on_id")
        kind = dep.get("type") or "blocks"
        if not isinstance(target, str) or tx.row(
            "SELECT 1 FROM dependencies WHERE issue_id = ? AND depends_on_id = ? AND type = ?", [issue_id, target, kind]
        ):
            continue
        extra = {k: v for k, v in dep.items() if k not in known}
        metadata = json.dumps(dep["metadata"], ensure_ascii=False) if "metadata" in dep else None
        tx.run(
            "INSERT INTO dependencies "
            "(issue_id, depends_on_id, type, created_at, created_by, metadata, extra, position) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                issue_id,
                target,
                kind,
                dep.get("created_at"),
                dep.get("created_by"),
                metadata,
                json.dumps(extra),
                position,
            ],
        )


def _import_comments(tx: Tx, issue_id: str, comments: list[Any]) -> int:
    highest = 0
    known = {"id", "issue_id", "author", "text", "created_at"}
    for comment in comments:
        if not isinstance(comment, dict):
            continue
        raw_id = comment.get("id")
        int_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
        if int_id is not None:
            highest = max(highest, int_id)
        comment_id = str(raw_id) if raw_id is not None else str(tx.next_comment_id())
        extra = {k: v for k, v in comment.items() if k not in known}
        tx.run(
            "INSERT INTO comments (issue_id, comment_id, int_id, author, text, created_at, extra) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                issue_id,
                comment_id,
                int_id,
                comment.get("author"),
                str(comment.get("text") or ""),
                comment.get("created_at"),
                json.dumps(extra, ensure_ascii=False),
            ],
        )
    return highest


def export_lines(tx: Tx) -> Iterator[str]:
    """Every issue as one JSONL line (without the newline), in import order, then by id."""
    for row in tx.rows(f"SELECT {ISSUE_SELECT} FROM issues i ORDER BY i.position IS NULL, i.position, i.id"):
        issue = IssueRow(row)
        if issue.untouched and issue.raw_line is not None:
            yield issue.raw_line
        else:
            yield go_json(beads_record(tx, issue))
