"""Beads data in: one import, in one transaction, whatever form it comes in (see :mod:`.sources`).

:class:`Run` is what every form's importer shares: positions (an export writes issues and kept lines back in the
order they came), the report, batched inserts (:mod:`.bulk`), the removal of what earlier imports left for the ids
it brings, and the end of the import — ids for issues that came without one, the id prefix, the custom statuses and
types, the comment ids. Every line is held to :mod:`.rules`. The legacy file is read by :mod:`.legacy`, the backup's
tables by :mod:`.backup`, and :mod:`.importing` chooses between them; nothing is held in memory beyond a batch of
rows and a small entry per id.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from bee_tracker.model import BUILTIN_STATUSES, BUILTIN_TYPES, COLUMNS, PARENT_CHILD, TOMBSTONE, epoch, now
from bee_tracker.store import bdjson, claimlease, ids, worked
from bee_tracker.store.batched import in_batches, marks
from bee_tracker.store.bulk import Bulk, Target
from bee_tracker.store.db import Tx

_RELATIONS = ("labels", "dependencies", "comments")
#: Columns that always hold a value, and the value an issue gets when its line has none (or null). A missing
#: priority is 0, as in Beads (Go reads an absent number as zero).
_REQUIRED: Final = {"title": "", "status": "open", "issue_type": "task"}
_NO_PRIORITY: Final = 0
#: ``kind`` of a kept line standing in for an issue that came without an id until the import gives it one.
PENDING: Final = "pending"

_ISSUES = Target(
    "issues",
    (
        *COLUMNS,
        "created_epoch",
        "defer_epoch",
        "extra",
        "key_order",
        "raw_line",
        "raw_revision",
        "position",
        "last_activity_at",
    ),
)
# Labels and dependencies a file repeats (the same label twice, a backup's row twice) are taken once.
_LABELS = Target("labels", ("issue_id", "label", "position"), skip_duplicates=True)
_DEPENDENCIES = Target(
    "dependencies",
    ("issue_id", "depends_on_id", "type", "created_at", "created_by", "metadata", "extra", "position"),
    skip_duplicates=True,
)
_COMMENTS = Target("comments", ("issue_id", "comment_id", "int_id", "author", "text", "created_at", "extra"))
EVENTS: Final = Target("events", ("issue_id", "at", "actor", "tool", "changes"))
#: Events Bee exported, taken back as they were written (:mod:`.audit`).
EXACT_EVENTS: Final = Target("events", ("issue_id", "at", "actor", "tool", "changes", "replica"))
_LEASES = Target("claim_leases", claimlease.IMPORTED)
_KEPT = Target("kept_records", ("position", "kind", "issue_id", "identity", "line"))
_DEPENDENCY_KEYS = frozenset({"issue_id", "depends_on_id", "type", "created_at", "created_by", "metadata"})
_COMMENT_KEYS = frozenset({"id", "issue_id", "author", "text", "created_at"})


@dataclass(frozen=True)
class Options:
    """What an import may do beyond its rules (``bee tracker import``'s flags)."""

    #: Replace (or delete) issues the team worked on since their import, listing what was discarded (else refused).
    discard_changes: bool = False
    #: Take dependency cycles through the readiness types as they come, listing them (else refused).
    allow_cycles: bool = False


def _columns(record: dict[str, Any], issue_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The issue columns of ``record`` (required ones defaulted) and what stays verbatim in ``extra``."""
    get = record.get
    # text_of, inline: this runs for every column of every issue
    values: dict[str, Any] = {c: v if (v := get(c)) is None or type(v) is str else _ENCODE(v) for c in COLUMNS}
    values["id"] = issue_id
    priority = get("priority")
    wide = type(priority) is int and -(2**31) <= priority < 2**31
    values["priority"] = priority if wide else _NO_PRIORITY
    for column, default in _REQUIRED.items():
        if values[column] is None:
            values[column] = default
    # Keys the tracker cannot use as they are stay verbatim in extra: a priority that is not a (32-bit) integer,
    # relations that are not lists. They are written back as they came.
    extra = {
        k: v
        for k, v in record.items()
        if (k not in values and k not in _RELATIONS) or (k in _RELATIONS and type(v) is not list)
    }
    if "priority" in record and not wide:
        extra["priority"] = priority
    return values, extra


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
    #: The form read and from where (:meth:`.sources.Choice.describe`).
    source: dict[str, Any] = field(default_factory=dict)
    #: Rows read per table of a backup.
    tables: dict[str, int] = field(default_factory=dict)
    #: Rows of a backup left out, per table, because the issue they belong to was not imported.
    skipped_rows: Counter[str] = field(default_factory=Counter)
    #: What the team had done to the issues this import replaced or deleted (:mod:`.worked`), with discard_changes.
    discarded: list[dict[str, Any]] = field(default_factory=list)
    #: Dependency cycles this import closed, with allow_cycles (:func:`.graph.import_cycles`).
    cycles: list[dict[str, Any]] = field(default_factory=list)
    #: Events Bee exported that the store already held, so not added again.
    events_held: int = 0

    def as_dict(self) -> dict[str, Any]:
        report: dict[str, Any] = {"source": self.source} if self.source else {}
        report.update(
            {
                "imported": self.imported,
                "replaced": self.replaced,
                "tombstones": self.tombstones,
                "deleted": self.deleted,
                "otherRecords": dict(self.other),
                "shadowed": [{"line": line, "id": issue_id} for line, issue_id in sorted(self.shadowed)],
                "skippedDeleted": [{"line": line, "id": issue_id} for line, issue_id in sorted(self.skipped_deleted)],
                "generatedIds": [{"line": line, "id": issue_id} for line, issue_id in self.generated_ids],
            }
        )
        if self.tables:
            report["tables"] = self.tables
            report["skippedRows"] = dict(self.skipped_rows)
        if self.discarded:
            report["discarded"] = self.discarded
        if self.cycles:
            report["cycles"] = self.cycles
        if self.events_held:
            report["eventsAlreadyHeld"] = self.events_held
        return report


#: JSON text of a value kept as text, with one encoder for the whole import (json.dumps makes one per call).
_ENCODE: Final = json.JSONEncoder(ensure_ascii=False).encode


def text_of(value: Any) -> Any:
    """A value for a text column: text or null as it is, anything else as its JSON."""
    return value if value is None or type(value) is str else _ENCODE(value)


def id_of(record: dict[str, Any]) -> str | None:
    """The record's id, when it has a usable one (a non-empty string)."""
    value = record.get("id")
    return value if isinstance(value, str) and value else None


def _stem(issue_id: str) -> str | None:
    """The prefix of ``prefix-hash`` or ``prefix-hash.N``."""
    head = issue_id.split(".", 1)[0]
    return head.rsplit("-", 1)[0] if "-" in head else None


class Run:
    """One import in one transaction: positions, the report, batched inserts and the end of the import."""

    def __init__(self, tx: Tx, *, configured_prefix: str | None, options: Options | None = None) -> None:
        self.tx = tx
        self.configured_prefix = configured_prefix
        self.options = options or Options()
        tx.expect_growth()
        found = tx.row(
            "SELECT MAX(p) FROM (SELECT MAX(position) AS p FROM issues "
            "UNION ALL SELECT MAX(position) AS p FROM kept_records) positions"
        )
        #: The first position of this import; earlier imports' issues and lines are all below it.
        self.base = int(found[0]) + 1 if found and found[0] is not None else 0
        self._next = self.base
        #: Whether the store held anything before (if not, no id of this import can meet an earlier one).
        self.prior = tx.row("SELECT 1 FROM issues UNION ALL SELECT 1 FROM kept_records LIMIT 1") is not None
        self.report = ImportReport()
        # Rows are written while the next are read, except on a store that holds data already: then the import
        # also reads and deletes as it goes, which the writer thread would have to wait for at every line.
        self.bulk = Bulk(
            tx,
            [_ISSUES, _LEASES, _LABELS, _DEPENDENCIES, _COMMENTS, _KEPT, EVENTS, EXACT_EVENTS],
            background=not self.prior,
        )
        self.statuses: set[str] = set()
        self.types: set[str] = set()
        self.highest_comment = 0
        self.stems: Counter[str] = Counter()
        #: The prefix a backup's config names (``issue_prefix``).
        self.prefix_hint: str | None = None
        #: How the first imported issue line is spelled, for lines written fresh later.
        self.style: bdjson.LineStyle | None = None
        #: Every id this import names, which an id it generates must not take.
        self.named: set[str] = set()
        self._key_orders: dict[tuple[str, ...], str] = {}
        self._records: set[tuple[str, str]] = set()
        #: Issues earlier imports (or the tools) left that this import replaced or deleted, and their parents:
        #: what the kept readiness of the rest of the store may depend on (:func:`.readiness.after_import`).
        self.removed: set[str] = set()
        self.removed_parents: set[str] = set()
        #: The team's work on issues this import replaced or deleted (:mod:`.worked`), and how each issue read.
        self.worked: list[dict[str, Any]] = []
        self.worked_before: dict[str, str] = {}
        tx.pause_search_index()  # indexed at once in finish()

    def position(self) -> int:
        """The next position (one per line read, in order)."""
        position = self._next
        self._next += 1
        return position

    # -- writing ------------------------------------------------------------------------------------------------

    def keep(self, position: int, kind: str, issue_id: str | None, identity: str, line: str) -> None:
        """Keep ``line`` verbatim at ``position`` (see :mod:`.kept`)."""
        self.bulk.add(_KEPT, (position, kind, issue_id, identity, line))

    def keep_record(self, position: int, kind: str, identity: str, line: str) -> None:
        """Keep a record that is no issue (a memory, a header); the first of its kind and identity in this import
        replaces what an earlier import kept for it, so importing the same data twice changes nothing."""
        if (kind, identity) not in self._records:
            self._records.add((kind, identity))
            if self.prior:
                self.tx.run(
                    "DELETE FROM kept_records WHERE kind = ? AND identity = ? AND position < ?",
                    [kind, identity, self.base],
                )
        self.keep(position, kind, None, identity, line)
        self.report.other[kind] += 1

    def insert_issue(
        self,
        record: dict[str, Any],
        issue_id: str,
        position: int,
        *,
        raw_line: str | None,
        key_order: list[str] | None = None,
    ) -> None:
        """Queue the issue ``record`` (a Beads issue object) with its labels, dependencies and comments."""
        values, extra = _columns(record, issue_id)
        lease = None
        if "lease_expires_at" in extra:
            lease = claimlease.from_line(extra, values["status"], values["assignee"])
        if lease is not None:  # the lease row holds it from now on; the line's keys are written back from there
            for key in claimlease.LINE_KEYS:
                extra.pop(key, None)
        self.statuses.add(values["status"])
        self.types.add(values["issue_type"])
        self.bulk.add(
            _ISSUES,
            (
                *values.values(),
                epoch(values["created_at"]),
                epoch(values["defer_until"]),
                _ENCODE(extra) if extra else "{}",
                self._key_order(key_order if key_order is not None else list(record)),
                raw_line,
                1,
                position,
                values["updated_at"] or values["created_at"] or now(),
            ),
        )
        if lease is not None:
            self.bulk.add(_LEASES, claimlease.import_row(issue_id, lease))
        self._insert_relations(record, issue_id)
        stem = _stem(issue_id)
        if stem:
            self.stems[stem] += 1
        self.report.imported += 1

    def _insert_relations(self, record: dict[str, Any], issue_id: str) -> None:
        """Queue the labels, dependencies and comments ``record`` lists (what is not a list stays in extra)."""
        labels = record.get("labels")
        if isinstance(labels, list):
            for at, label in enumerate(dict.fromkeys(str(label) for label in labels)):
                self.add_label(issue_id, label, at)
        dependencies = record.get("dependencies")
        if isinstance(dependencies, list):
            self.add_dependencies(issue_id, dependencies)
        comments = record.get("comments")
        if isinstance(comments, list):
            for comment in comments:
                if isinstance(comment, dict):
                    self.add_comment(issue_id, comment)

    def _key_order(self, keys: list[str]) -> str:
        """``keys`` as JSON text; most lines of a file share a few key orders, each encoded once."""
        shape = tuple(keys)
        text = self._key_orders.get(shape)
        if text is None:
            text = json.dumps(keys)
            if len(self._key_orders) < 4096:
                self._key_orders[shape] = text
        return text

    def add_label(self, issue_id: str, label: str, at: int) -> None:
        """Queue one label of ``issue_id`` at position ``at``."""
        self.bulk.add(_LABELS, (issue_id, label, at))

    def add_dependencies(self, issue_id: str, dependencies: Iterable[Any], *, first: int = 0) -> int:
        """Queue the dependency records of ``issue_id`` (duplicates of one target and type once); return how many."""
        seen: set[tuple[str, str]] = set()
        for dep in dependencies:
            if not isinstance(dep, dict):
                continue
            target, kind = dep.get("depends_on_id"), text_of(dep.get("type")) or "blocks"
            if not isinstance(target, str) or (target, kind) in seen:
                continue
            seen.add((target, kind))
            extra = {k: v for k, v in dep.items() if k not in _DEPENDENCY_KEYS}
            metadata = _ENCODE(dep["metadata"]) if "metadata" in dep else None
            self.bulk.add(
                _DEPENDENCIES,
                (
                    issue_id,
                    target,
                    kind,
                    text_of(dep.get("created_at")),
                    text_of(dep.get("created_by")),
                    metadata,
                    _ENCODE(extra) if extra else "{}",
                    first + len(seen) - 1,
                ),
            )
        return len(seen)

    def add_comment(self, issue_id: str, comment: dict[str, Any]) -> None:
        """Queue one comment of ``issue_id``; an integer id counts towards the ids new comments start above."""
        raw_id = comment.get("id")
        int_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) and 0 <= raw_id < 2**62 else None
        if int_id is not None:
            self.highest_comment = max(self.highest_comment, int_id)
        if raw_id is None:
            self.bulk.flush()  # the next id counts the comments queued so far
            comment_id = str(self.tx.next_comment_id())
        else:
            comment_id = str(raw_id)
        extra = {k: v for k, v in comment.items() if k not in _COMMENT_KEYS}
        self.bulk.add(
            _COMMENTS,
            (
                issue_id,
                comment_id,
                int_id,
                text_of(comment.get("author")),
                str(comment.get("text") or ""),
                text_of(comment.get("created_at")),
                _ENCODE(extra) if extra else "{}",
            ),
        )

    # -- what an earlier import left ------------------------------------------------------------------------------

    def prior_tombstones(self, named: Iterable[str]) -> set[str]:
        """Which of ``named`` the store held as deleted before this import."""
        if not self.prior:
            return set()
        found: set[str] = set()
        batch = list(named)
        for start in range(0, len(batch), 500):
            part = batch[start : start + 500]
            found.update(
                row[0]
                for row in self.tx.rows(
                    f"SELECT issue_id FROM kept_records WHERE kind = ? AND position < ? "
                    f"AND issue_id IN ({', '.join('?' for _ in part)})",
                    [TOMBSTONE, self.base, *part],
                )
            )
        return found

    def clear_prior(self, firsts: Mapping[str, int]) -> set[str]:
        """Drop what earlier imports left for the ids of ``firsts`` (their issues, their kept lines) before this
        import writes its first line for each (``firsts`` maps each id to that line's number); return the ids that
        had an issue.

        A few statements for many ids: one per line would also be planned for the table as it was (see
        :meth:`.db.Tx.expect_growth`). The issues are locked before they are read, so no write of the tools slips
        in between; the team's work on one (:mod:`.worked`) is described before it goes (its comments go with it).
        """
        if not self.prior or not firsts:
            return set()
        found: list[worked.Prior] = []
        for batch in in_batches(sorted(firsts)):
            self.tx.lock_issues(batch)
            issues, parents = self.tx.batch(
                [
                    (f"SELECT {worked.STATE} FROM issues WHERE id IN ({marks(batch)})", batch),
                    (
                        f"SELECT depends_on_id FROM dependencies WHERE type = '{PARENT_CHILD}' "
                        f"AND issue_id IN ({marks(batch)})",
                        batch,
                    ),
                ]
            )
            found += [worked.Prior(*row) for row in issues]
            self.removed_parents.update(row[0] for row in parents)
            self.tx.run(
                f"DELETE FROM kept_records WHERE position < ? AND issue_id IN ({marks(batch)})", [self.base, *batch]
            )
        busy = [prior for prior in found if prior.writes > 0]
        if busy:
            self.worked += worked.describe(self.tx, busy, firsts)
            self.worked_before.update(worked.fingerprints(self.tx, [prior.id for prior in busy]))
        had = {prior.id for prior in found}
        for batch in in_batches(sorted(had)):
            self.tx.run(f"DELETE FROM issues WHERE id IN ({marks(batch)})", batch)
        self.removed |= had
        return had

    # -- the end ----------------------------------------------------------------------------------------------

    def discarded(self) -> list[dict[str, Any]]:
        """The team's work this import discards: on the issues it replaced or deleted, unless one now reads exactly
        as it did (its own export imported back loses nothing)."""
        if not self.worked:
            return []
        self.bulk.flush()
        after = worked.fingerprints(self.tx, self.worked_before)
        return [entry for entry in self.worked if after.get(entry["id"]) != self.worked_before[entry["id"]]]

    def prefix(self) -> str:
        """The prefix for new ids: configured, else recorded, else the backup's, else the import's commonest."""
        if self.configured_prefix:
            return self.configured_prefix
        found = self.tx.row("SELECT value FROM meta WHERE key = 'prefix'")
        if found:
            return str(found[0])
        chosen = self.prefix_hint or (self.stems.most_common(1)[0][0] if self.stems else None)
        if chosen:
            self.tx.run("INSERT INTO meta (key, value) VALUES ('prefix', ?)", [chosen])
            return chosen
        return "bd"

    def finish(self, issue_for_pending: Callable[[int, str, str], None]) -> ImportReport:
        """Give the issues that came without an id one, record the prefix, vocabulary and comment ids.

        ``issue_for_pending(position, line, issue_id)`` imports one such line, kept as pending, under its new id.
        """
        self.bulk.flush()
        prefix = self.prefix()
        pending = self.tx.rows(
            "SELECT position, line FROM kept_records WHERE kind = ? AND position >= ? ORDER BY position",
            [PENDING, self.base],
        )
        if pending:
            self.tx.run("DELETE FROM kept_records WHERE kind = ? AND position >= ?", [PENDING, self.base])
            for position, line in pending:
                self.bulk.flush()  # new_id asks the store: the writer thread must be done with it
                issue_id = ids.new_id(self.tx, prefix, avoid=self.named)
                self.named.add(issue_id)
                issue_for_pending(int(position), line, issue_id)
            self.bulk.flush()
        self.tx.resume_search_index(self.base)
        register_vocabulary(self.tx, "custom_statuses", self.statuses, BUILTIN_STATUSES)
        register_vocabulary(self.tx, "custom_types", self.types, BUILTIN_TYPES)
        if self.highest_comment:
            self.tx.reserve_comment_ids(self.highest_comment)  # new comment ids continue above imported ones
        if self.style is not None and self.tx.row("SELECT 1 FROM meta WHERE key = 'line_style'") is None:
            self.tx.run("INSERT INTO meta (key, value) VALUES ('line_style', ?)", [self.style.as_text()])
        return self.report


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
