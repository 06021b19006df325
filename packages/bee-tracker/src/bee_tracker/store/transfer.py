"""Beads JSONL in and out: a lenient, all-or-nothing import and an export that gives back every line it took.

Import keeps every key (unknown ones verbatim), gives a line without an id a fresh one, and keeps dependencies on
ids that do not exist. Lines that are not live issues — tombstones, ``_type`` records other than issues (memories),
header lines such as ``{"_schema":…}``, and later lines for an id an earlier line of the same file already took —
are kept verbatim at their position (:mod:`.kept`). Every issue remembers its line exactly as it came: an issue
nobody has touched since is exported byte for byte; a touched one is rebuilt with its keys in their original order
and escaped the way Beads (Go) escapes JSON. Export follows import order, then id.

Which line wins for an id (documented in docs/hosts/tracker.md): within one file the first live line is the issue
and later ones are kept verbatim as shadowed; a tombstone anywhere in the file deletes the id (the live lines are
kept as shadowed); across imports, a file's lines for an id replace what an earlier import kept for it, except that
an id the store holds as deleted is not brought back by a live line (the line is skipped and reported).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bee_contracts import invalid
from bee_tracker.model import BUILTIN_STATUSES, BUILTIN_TYPES, COLUMNS, TOMBSTONE, epoch, now
from bee_tracker.store import bounds, kept
from bee_tracker.store.db import Tx
from bee_tracker.store.ids import new_id
from bee_tracker.store.records import ISSUE_SELECT, IssueRow, beads_record, go_json
from bee_tracker.store.text import unstorable

_RELATIONS = ("labels", "dependencies", "comments")
#: Longest id the tools can address (their ``id`` arguments allow 200 characters).
_MAX_ID_CHARS = 200


@dataclass(frozen=True)
class Line:
    """One parsed line of a Beads JSONL file."""

    number: int
    text: str
    record: dict[str, Any]
    #: What it is when not a live issue (``tombstone``, ``memory``, ``header``, …), else None.
    kind: str | None


@dataclass
class ImportReport:
    """What an import did, line by line."""

    imported: int = 0
    replaced: int = 0
    tombstones: int = 0
    deleted: list[str] = field(default_factory=list)
    other: Counter[str] = field(default_factory=Counter)
    shadowed: list[tuple[int, str]] = field(default_factory=list)
    skipped_deleted: list[tuple[int, str]] = field(default_factory=list)
    generated_ids: list[tuple[int, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "replaced": self.replaced,
            "tombstones": self.tombstones,
            "deleted": self.deleted,
            "otherRecords": dict(self.other),
            "shadowed": [{"line": line, "id": issue_id} for line, issue_id in self.shadowed],
            "skippedDeleted": [{"line": line, "id": issue_id} for line, issue_id in self.skipped_deleted],
            "generatedIds": [{"line": line, "id": issue_id} for line, issue_id in self.generated_ids],
        }


def _refuse(number: int, problem: str) -> Exception:
    return invalid(f"line {number} {problem}; fix or remove it, then import again (nothing was imported)", line=number)


def parse_lines(lines: Iterable[str | bytes]) -> list[Line]:
    """Parse and check every line first, so a bad one stops the import before anything is written.

    Lines may be bytes (decoded as UTF-8 here, so a bad byte is reported with its line number) or text; a trailing
    ``\\r\\n`` or ``\\n`` is dropped, and blank lines are skipped.

    Raises:
        BeeError: ``invalid_argument`` naming the first bad line: not UTF-8, not a JSON object, an id over 200
            characters, text the store cannot hold (NUL, unpaired surrogates), or an issue over its size cap.
    """
    parsed = []
    for number, raw in enumerate(lines, start=1):
        try:
            decoded = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError as exc:
            raise _refuse(number, f"is not valid UTF-8 (byte {exc.start + 1} of the line)") from None
        text = decoded.rstrip("\r\n")
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _refuse(number, f"is not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise _refuse(number, "nests JSON too deeply") from None
        if not isinstance(value, dict):
            raise _refuse(number, "is not a JSON object")
        line = Line(number, text, value, kept.kind_of(value))
        _check(line)
        parsed.append(line)
    return parsed


def _check(line: Line) -> None:
    issue_id = line.record.get("id")
    if isinstance(issue_id, str) and (len(issue_id) > _MAX_ID_CHARS or unstorable(issue_id)):
        raise _refuse(line.number, f"has an id the tools could never address ({len(issue_id)} characters)")
    if line.kind is not None:
        return  # kept verbatim: only its line is stored
    problem = unstorable(line.record)
    if problem:
        raise _refuse(line.number, f"holds {problem}, which the store cannot keep")
    over = bounds.issue_overshoot(line.record)
    if over > 0:
        raise _refuse(line.number, f"is an issue {over} bytes over the cap that keeps every issue readable by get")
    comments = line.record.get("comments")
    for comment in comments if isinstance(comments, list) else ():
        over = bounds.comment_overshoot(comment) if isinstance(comment, dict) else 0
        if over > 0:
            raise _refuse(line.number, f"has a comment {over} bytes over the cap that keeps it readable by get")


def _text(value: Any) -> Any:
    return value if value is None or isinstance(value, str) else json.dumps(value)


def _listed(value: Any) -> list[Any]:
    """``value`` when it is a list, else nothing (such a relation is kept verbatim in extra instead)."""
    return value if isinstance(value, list) else []


def _id_of(record: dict[str, Any]) -> str | None:
    """The line's id, when it has a usable one (a non-empty string)."""
    value = record.get("id")
    return value if isinstance(value, str) and value else None


#: Columns that always hold a value, and the value an issue gets when its line has none (or null).
_REQUIRED = {"title": "", "status": "open", "issue_type": "task"}


_SKIP = "skip"


class _Importer:
    """One import, in one transaction: the decisions of the module docstring, line by line."""

    def __init__(self, tx: Tx, lines: list[Line], prefix: str) -> None:
        self.tx = tx
        self.lines = lines
        self.prefix = prefix
        self.report = ImportReport()
        found = tx.row(
            "SELECT MAX(p) FROM (SELECT MAX(position) AS p FROM issues "
            "UNION ALL SELECT MAX(position) AS p FROM kept_records) positions"
        )
        self.base = int(found[0]) + 1 if found and found[0] is not None else 0
        # Per id of the file: the line that counts (its first tombstone, else its first live line).
        self.winner: dict[str, int] = {}
        for index, line in enumerate(lines):
            issue_id = _id_of(line.record)
            if issue_id is None or line.kind not in (None, TOMBSTONE):
                continue
            current = self.winner.get(issue_id)
            if current is None or (line.kind == TOMBSTONE and lines[current].kind != TOMBSTONE):
                self.winner[issue_id] = index
        #: Every id the file names, which a generated id must not take.
        self.ids = {named for line in lines if (named := _id_of(line.record)) is not None}
        self.fates: dict[str, str] = {}
        self.other_seen: set[tuple[str, str]] = set()
        self.statuses: list[str] = []
        self.types: list[str] = []
        self.highest_comment = 0

    def run(self) -> ImportReport:
        for index, line in enumerate(self.lines):
            position = self.base + index
            named = _id_of(line.record)
            if line.kind not in (None, TOMBSTONE) or (line.kind == TOMBSTONE and named is None):
                self._keep_other(line, position)  # a tombstone without an id deletes nothing: kept as it is
            elif named is None:
                generated = new_id(self.tx, self.prefix, avoid=self.ids)
                self.report.generated_ids.append((line.number, generated))
                self._insert_issue(line, generated, position, raw_line=None)  # rebuilt on export: it has no id
            elif self._fate(named) == _SKIP:
                self.report.skipped_deleted.append((line.number, named))
            elif self.winner[named] != index:
                self._keep_id_line(line, named, position, kept.SHADOWED)
                self.report.shadowed.append((line.number, named))
            elif line.kind == TOMBSTONE:
                self._keep_id_line(line, named, position, TOMBSTONE)
                self.report.tombstones += 1
            else:
                self._insert_issue(line, named, position, raw_line=line.text)
        register_vocabulary(self.tx, "custom_statuses", self.statuses, BUILTIN_STATUSES)
        register_vocabulary(self.tx, "custom_types", self.types, BUILTIN_TYPES)
        if self.highest_comment:
            self.tx.reserve_comment_ids(self.highest_comment)  # new comment ids continue above imported ones
        return self.report

    def _fate(self, issue_id: str) -> str:
        """Decide once per id what the file does with it, and drop what earlier imports left for it.

        A tombstone in the file deletes the id (its live issue, if any, is removed). Otherwise an id the store
        holds as deleted stays deleted: the file's lines for it are skipped. Otherwise the file's lines replace
        the issue and any lines kept for its id.
        """
        if issue_id in self.fates:
            return self.fates[issue_id]
        deletes = self.lines[self.winner[issue_id]].kind == TOMBSTONE
        if not deletes and kept.tombstone(self.tx, issue_id) is not None:
            fate = _SKIP
        else:
            fate = TOMBSTONE if deletes else "live"
            self.tx.run("DELETE FROM kept_records WHERE issue_id = ?", [issue_id])
            if self.tx.run("DELETE FROM issues WHERE id = ?", [issue_id]):
                if deletes:
                    self.report.deleted.append(issue_id)
                else:
                    self.report.replaced += 1
        self.fates[issue_id] = fate
        return fate

    def _keep_id_line(self, line: Line, issue_id: str, position: int, kind: str) -> None:
        kept.insert(
            self.tx,
            position=position,
            kind=kind,
            issue_id=issue_id,
            identity=kept.identity_of(line.record, line.text),
            line=line.text,
        )

    def _keep_other(self, line: Line, position: int) -> None:
        """Keep a record that is not an issue; the first of its identity in this file replaces an earlier import's."""
        assert line.kind is not None
        identity = kept.identity_of(line.record, line.text)
        if (line.kind, identity) not in self.other_seen:
            self.other_seen.add((line.kind, identity))
            self.tx.run("DELETE FROM kept_records WHERE kind = ? AND identity = ?", [line.kind, identity])
        kept.insert(self.tx, position=position, kind=line.kind, issue_id=None, identity=identity, line=line.text)
        self.report.other[line.kind] += 1

    def _insert_issue(self, line: Line, issue_id: str, position: int, *, raw_line: str | None) -> None:
        record = line.record
        columns: dict[str, Any] = {c: _text(record.get(c)) for c in COLUMNS if c in record and c != "priority"}
        columns["id"] = issue_id
        priority = record.get("priority")
        if isinstance(priority, int) and not isinstance(priority, bool) and -(2**31) <= priority < 2**31:
            columns["priority"] = priority
        for column, default in _REQUIRED.items():
            if columns.get(column) is None:
                columns[column] = default
        # Keys the tracker cannot use as they are stay verbatim in extra: a priority that is not a (32-bit) integer,
        # relations that are not lists. They are written back as they came.
        extra = {
            k: v
            for k, v in record.items()
            if (k not in COLUMNS and k not in _RELATIONS) or (k in _RELATIONS and not isinstance(v, list))
        }
        if "priority" in record and "priority" not in columns:
            extra["priority"] = priority
        self.statuses.append(columns["status"])
        self.types.append(columns["issue_type"])
        stamp = columns.get("updated_at") or columns.get("created_at") or now()
        names = list(columns)
        self.tx.run(
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
                position,
                stamp,
            ],
        )
        labels = record.get("labels")
        for label_position, label in enumerate(dict.fromkeys(str(label) for label in _listed(labels))):
            self.tx.run(
                "INSERT INTO labels (issue_id, label, position) VALUES (?, ?, ?)", [issue_id, label, label_position]
            )
        _import_dependencies(self.tx, issue_id, _listed(record.get("dependencies")))
        self.highest_comment = max(self.highest_comment, _import_comments(self.tx, issue_id, record.get("comments")))
        self.report.imported += 1


def import_records(tx: Tx, lines: list[Line], prefix: str) -> ImportReport:
    """Import ``lines`` in this transaction (see the module docstring for which line wins)."""
    return _Importer(tx, lines, prefix).run()


def _import_dependencies(tx: Tx, issue_id: str, dependencies: list[Any]) -> None:
    known = {"issue_id", "depends_on_id", "type", "created_at", "created_by", "metadata"}
    for position, dep in enumerate(d for d in dependencies if isinstance(d, dict)):
        target = dep.get("depends_on_id")
        kind = _text(dep.get("type")) or "blocks"
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
                _text(dep.get("created_at")),
                _text(dep.get("created_by")),
                metadata,
                json.dumps(extra, ensure_ascii=False),
                position,
            ],
        )


def _import_comments(tx: Tx, issue_id: str, comments: Any) -> int:
    highest = 0
    known = {"id", "issue_id", "author", "text", "created_at"}
    for comment in comments if isinstance(comments, list) else ():
        if not isinstance(comment, dict):
            continue
        raw_id = comment.get("id")
        int_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) and 0 <= raw_id < 2**62 else None
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
                _text(comment.get("author")),
                str(comment.get("text") or ""),
                _text(comment.get("created_at")),
                json.dumps(extra, ensure_ascii=False),
            ],
        )
    return highest


def register_vocabulary(tx: Tx, key: str, values: Iterable[str], builtin: Iterable[str]) -> None:
    """Add custom statuses or types (from an import or configuration) to ``meta``."""
    found = tx.row("SELECT value FROM meta WHERE key = ?", [key])
    current: list[str] = json.loads(found[0]) if found else []
    skip = {*builtin, TOMBSTONE}  # tombstone is never a status of a live issue
    merged = [*current, *[v for v in dict.fromkeys(values) if v not in current and v not in skip]]
    if merged != current:
        tx.run(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [key, json.dumps(merged)],
        )


def export_lines(tx: Tx) -> Iterable[str]:
    """Every issue and kept line as one JSONL line (without the newline), in import order, then new issues by id."""
    kept_lines = kept.lines(tx)
    next_kept = 0
    for row in tx.rows(
        f"SELECT i.position, {ISSUE_SELECT} FROM issues i ORDER BY i.position IS NULL, i.position, i.id"
    ):
        position, issue = row[0], IssueRow(row[1:])
        while next_kept < len(kept_lines) and (position is None or kept_lines[next_kept][0] < position):
            yield kept_lines[next_kept][1]
            next_kept += 1
        if issue.untouched and issue.raw_line is not None:
            yield issue.raw_line
        else:
            yield go_json(beads_record(tx, issue))
    for _, line in kept_lines[next_kept:]:
        yield line
