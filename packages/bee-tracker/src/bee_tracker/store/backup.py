"""bd backup's table dump, table by table: every row becomes what bd itself would make of it.

``bd backup`` (February–March 2026, the Dolt era) wrote each table of its database as JSONL, one row per line,
columns in alphabetical order: ``issues`` (every column: flags as 0/1, empty strings for unset text,
``timeout_ns``, ``metadata`` and ``waiters`` as JSON text), ``labels``, ``dependencies``, ``comments``, ``events``
(the history: who changed what, old and new values as JSON text) and ``config`` (key/value: the id prefix,
settings, and memories as ``kv.memory.<key>``), plus ``backup_state.json`` with the row count of each table.

An issue row becomes the issue bd's own scan would read from it and ``bd export`` would write: empty and zero
fields left out, flags as booleans, ``timeout_ns`` as ``timeout``, ``metadata`` as the JSON it holds, keys in bd's
order (:mod:`.bdjson`); ``content_hash`` and ``source_repo``, which bd never exports, are dropped. Labels,
dependencies and comments join their issue; events become its history (``tool`` ``bd <event_type>``, the changed
fields with old and new values, long text cut as in the tracker's own history); memories become memory lines,
written after the issues as ``bd export`` writes them; the rest of config is kept in ``meta`` (``beads_config``).
Rows of an issue that is not imported (a deleted id) are left out and counted. Counts that disagree with
``backup_state.json`` mean the dump is incomplete: the import is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from bee_contracts import invalid
from bee_hostkit.results import piece_bytes
from bee_tracker.model import ISSUE_MAX_BYTES, LABELS_MAX, TOMBSTONE
from bee_tracker.store import audit, bdjson, bounds, kept, linekinds
from bee_tracker.store.batched import in_batches, marks
from bee_tracker.store.records import beads_record, load_issue
from bee_tracker.store.rules import check_comment, check_id, check_issue, check_storable, refuse, suspicious
from bee_tracker.store.sources import TABLES, Backup, Events
from bee_tracker.store.transfer import EVENTS, EXACT_EVENTS, Run, id_of

#: Issue columns bd stores as 0/1 and exports as booleans (left out when false).
_FLAGS: Final = frozenset({"ephemeral", "pinned", "is_template", "no_history", "crystallizes"})
#: Issue columns bd never writes in an exported issue (``json:"-"`` in its struct).
_NOT_EXPORTED: Final = frozenset({"content_hash", "source_repo"})
#: Columns whose exported key differs.
_RENAMED: Final = {"timeout_ns": "timeout"}
#: Fields bd writes even when empty or zero (no ``omitempty``).
_ALWAYS: Final = frozenset({"id", "title", "priority", "created_at", "updated_at"})
#: Fields that are pointers in bd's struct: written whenever set, zero and empty text included.
_POINTERS: Final = frozenset({"estimated_minutes", "external_ref", "compacted_at_commit", "quality_score"})
_MEMORY_PREFIX: Final = "kv.memory."
#: Longest text a history event keeps of a value (as the tracker's own events: the issue has the whole text).
_EVENT_TEXT_CHARS: Final = 80
#: An issue's size bound sits in the low bits of its packed entry, the number of its row above (see _Tables.sizes).
_SIZE_BITS: Final = 32
_SIZE_MASK: Final = (1 << _SIZE_BITS) - 1
#: What a list of labels or dependencies adds to an issue beside its items: the key, brackets and a comma.
_LIST_KEY: Final = piece_bytes({"dependencies": []}) - piece_bytes({}) + 2
#: What a dependency may add beyond its row's own piece as the issue shows it (its metadata spelled differently).
_DEPENDENCY_SLACK: Final = 64
#: Events Bee exported that are checked against the store's at once.
_EXACT_BATCH: Final = 500


def issue_record(row: dict[str, Any]) -> dict[str, Any]:
    """The issue bd exports for one row of its issues table (see the module docstring)."""
    values: dict[str, Any] = {}
    for column, value in row.items():
        if column in _NOT_EXPORTED:
            continue
        key = _RENAMED.get(column, column)
        if column in _FLAGS:
            if value:
                values[key] = True
        elif column == "waiters":
            waiters = _json_text(value)
            if isinstance(waiters, list) and waiters:
                values[key] = waiters
        elif column == "metadata":
            if isinstance(value, str) and value.strip() not in ("", "{}"):
                parsed = _json_text(value)
                values[key] = value if parsed is None else parsed
        elif key in _ALWAYS or key in _POINTERS:
            if value is not None:
                values[key] = value
        elif value not in (None, "", 0):
            values[key] = value
    return bdjson.place(values, None)


def _json_text(value: Any) -> Any:
    """The JSON a text column holds, or None when it holds none."""
    if not isinstance(value, str):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _brief(value: Any) -> Any:
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False)
    if isinstance(value, str) and len(value) > _EVENT_TEXT_CHARS:
        return value[: _EVENT_TEXT_CHARS - 1] + "…"
    return value


def event_changes(row: dict[str, Any]) -> dict[str, Any]:
    """What one event row changed, in the shape of the tracker's own history: ``{field: [old, new]}``."""
    new, old = _json_text(row.get("new_value")), _json_text(row.get("old_value"))
    changes: dict[str, Any] = {}
    if isinstance(new, dict):
        before = old if isinstance(old, dict) else {}
        changes = {str(k): [_brief(before.get(k)), _brief(v)] for k, v in new.items()}
    else:
        for column, name in (("old_value", "old"), ("new_value", "new")):
            if row.get(column) not in (None, ""):
                changes[name] = _brief(row[column])
    if row.get("comment"):
        changes["comment"] = _brief(row["comment"])
    return changes


class _Tables:
    def __init__(self, run: Run, backup: Backup | Events) -> None:
        self.run = run
        self.backup = backup
        #: Ids this backup imported as live issues.
        self.live: set[str] = set()
        #: Next position of a label or dependency, per issue that has some.
        self.label_at: dict[str, int] = {}
        self.dependency_at: dict[str, int] = {}
        self.config: dict[str, Any] = {}
        #: Per live issue, its row's number above a bound of the bytes it takes in get with its labels and
        #: dependencies (never less than what it takes): an issue whose bound passes the cap is measured exactly.
        self.sizes: dict[str, int] = {}

    def rows(self, table: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
        """The rows of ``table`` with their line numbers and text; counts them into the report.

        Raises:
            BeeError: ``invalid_argument`` for a line that is not UTF-8 or not a JSON object.
        """
        where = f"{table}.jsonl "
        count = 0
        for number, raw in enumerate(self.backup.lines(table), start=1):
            try:
                text = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise refuse(where, number, f"is not valid UTF-8 (byte {exc.start + 1} of the line)") from None
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                raise refuse(where, number, f"is not valid JSON ({exc.msg} at column {exc.colno})") from None
            except RecursionError:
                raise refuse(where, number, "nests JSON too deeply") from None
            if not isinstance(row, dict):
                raise refuse(where, number, "is not a JSON object")
            if suspicious(text):  # whatever the table: a dump is held to a legacy file's rules
                check_storable(row, where, number)
            count += 1
            yield number, text, row
        self.run.report.tables[table] = count

    def issues(self) -> None:
        rows = list[tuple[int, str, dict[str, Any]]]()
        for row in self.rows("issues"):
            rows.append(row)
            if len(rows) >= 500:
                self._issues(rows)
                rows.clear()
        self._issues(rows)

    def _issues(self, rows: list[tuple[int, str, dict[str, Any]]]) -> None:
        run = self.run
        deleted = run.prior_tombstones(named for _, _, row in rows if (named := id_of(row)))
        firsts: dict[str, int] = {}
        for number, _, row in rows:
            named = id_of(row)
            if named and named not in deleted and named not in self.live:
                firsts.setdefault(named, number)
        had_issue = run.clear_prior(firsts)
        for batch in in_batches(sorted(had_issue)):
            # The history an earlier import of bd's events left goes too: this backup brings it again.
            run.tx.run(f"DELETE FROM events WHERE substr(tool, 1, 3) = 'bd ' AND issue_id IN ({marks(batch)})", batch)
        for number, text, row in rows:
            self._issue(number, text, row, deleted, had_issue)

    def _issue(self, number: int, text: str, row: dict[str, Any], deleted: set[str], had_issue: set[str]) -> None:
        run = self.run
        where = "issues.jsonl "
        check_id(row.get("id"), where, number)
        record = issue_record(row)
        named = id_of(record)
        try:
            kind = linekinds.classify(record)
        except linekinds.NotAnIssue as exc:
            raise refuse(where, number, f"is {exc.looks_like}") from None
        if named is None:
            raise refuse(where, number, "is an issue without an id; every row of bd's issues table has one")
        check_issue(record, text, where, number)
        position = run.position()
        run.named.add(named)
        if named in deleted:
            run.report.skipped_deleted.append((number, named))
            return
        if named in self.live:  # the same id twice: the last row counts, as in a Beads import
            run.bulk.flush()
            run.tx.run("DELETE FROM issues WHERE id = ?", [named])
            run.report.imported -= 1
            self.live.discard(named)
            self.label_at.pop(named, None)
            self.dependency_at.pop(named, None)
        elif named in had_issue:
            had_issue.discard(named)  # its first row replaced it; a second one is the same id twice
            if kind == TOMBSTONE:
                run.report.deleted.append(named)
            else:
                run.report.replaced += 1
        if kind == TOMBSTONE:  # bd's Dolt era deletes rows instead, but a dump may still hold an old tombstone
            run.keep(position, TOMBSTONE, named, kept.identity_of(record, ""), bdjson.dumps(record))
            run.report.tombstones += 1
            return
        run.insert_issue(record, named, position, raw_line=None)
        self.live.add(named)
        bound = bounds.issue_bytes(record) + 2 * _LIST_KEY
        self.sizes[named] = number << _SIZE_BITS | min(bound, _SIZE_MASK)

    def _grow(self, issue_id: str, more: int) -> None:
        """Add ``more`` bytes to the size bound of ``issue_id`` (saturating: a full bound is over the cap anyway)."""
        packed = self.sizes[issue_id]
        self.sizes[issue_id] = packed & ~_SIZE_MASK | min((packed & _SIZE_MASK) + more, _SIZE_MASK)

    def labels(self) -> None:
        for number, _, row in self.rows("labels"):
            issue_id, label = row.get("issue_id"), row.get("label")
            if issue_id not in self.live or not isinstance(label, str) or not label:
                self.run.report.skipped_rows["labels"] += 1
                continue
            assert isinstance(issue_id, str)
            at = self.label_at.get(issue_id, 0)
            if at >= LABELS_MAX:
                raise refuse(
                    "labels.jsonl ", number, f"gives {issue_id} more than the {LABELS_MAX} labels an issue may carry"
                )
            self.label_at[issue_id] = at + 1
            self._grow(issue_id, piece_bytes(label) + 2)
            self.run.add_label(issue_id, label, at)

    def dependencies(self) -> None:
        for _, _, row in self.rows("dependencies"):
            issue_id, target = row.get("issue_id"), row.get("depends_on_id")
            if issue_id not in self.live or not isinstance(target, str):
                self.run.report.skipped_rows["dependencies"] += 1
                continue
            assert isinstance(issue_id, str)
            at = self.dependency_at.get(issue_id, 0)
            self.dependency_at[issue_id] = at + self.run.add_dependencies(issue_id, [row], first=at)
            # the record in the issue's list, and its target among the ids that may block it
            self._grow(issue_id, piece_bytes(row) + _DEPENDENCY_SLACK + piece_bytes(target) + 4)

    def check_sizes(self) -> None:
        """Raises: BeeError: ``invalid_argument`` naming the issues row of an issue that its labels and
        dependencies take over the cap that keeps every issue readable by ``get``."""
        run = self.run
        over_bound = [
            (issue_id, packed) for issue_id, packed in self.sizes.items() if packed & _SIZE_MASK > ISSUE_MAX_BYTES
        ]
        if over_bound:
            run.bulk.flush()  # measured as the store holds it, as a tool's write is
        for issue_id, packed in over_bound:
            issue = load_issue(run.tx, issue_id)
            assert issue is not None, "a live issue of this import"
            over = bounds.issue_overshoot(beads_record(run.tx, issue, comments_last=0))
            if over > 0:
                raise refuse(
                    "issues.jsonl ",
                    packed >> _SIZE_BITS,
                    f"is issue {issue_id}, which with its {self.label_at.get(issue_id, 0)} labels (labels.jsonl) and "
                    f"{self.dependency_at.get(issue_id, 0)} dependencies (dependencies.jsonl) would be {over} bytes "
                    "over the cap that keeps every issue readable by get",
                )

    def comments(self) -> None:
        for number, text, row in self.rows("comments"):
            issue_id = row.get("issue_id")
            if issue_id not in self.live:
                self.run.report.skipped_rows["comments"] += 1
                continue
            assert isinstance(issue_id, str)
            check_comment(row, text, "comments.jsonl ", number)
            self.run.add_comment(issue_id, row)

    def events(self) -> None:
        """The events table: bd's own rows as its history, rows Bee exported as they were (:mod:`.audit`)."""
        exact: list[tuple[str, str, str, str, str, str | None]] = []
        for number, text, row in self.rows("events"):
            issue_id = row.get("issue_id")
            if issue_id not in self.live:
                self.run.report.skipped_rows["events"] += 1
                continue
            assert isinstance(issue_id, str)
            bee = audit.event_of(row)
            if bee is not None:
                if suspicious(text):  # the changes are JSON text: what they hold is decoded here
                    check_storable(json.loads(bee[3]), "events.jsonl ", number)
                exact.append((issue_id, *bee))
                if len(exact) >= _EXACT_BATCH:
                    self._exact(exact)
                    exact = []
                continue
            event_type = row.get("event_type")
            changes = event_changes(row)
            if suspicious(text):  # old and new values are JSON text: what they hold is decoded here
                check_storable(changes, "events.jsonl ", number)
            self.run.bulk.add(
                EVENTS,
                (
                    issue_id,
                    str(row.get("created_at") or ""),
                    str(row.get("actor") or ""),
                    f"bd {event_type if isinstance(event_type, str) else 'event'}",
                    json.dumps(changes, ensure_ascii=False),
                ),
            )

        self._exact(exact)

    def _exact(self, events: list[tuple[str, str, str, str, str, str | None]]) -> None:
        """Add the events Bee exported that the store does not hold already (importing a file again adds none)."""
        if not events:
            return
        self.run.bulk.flush()  # what is queued counts as held
        fresh = audit.unheld(self.run.tx, events)
        self.run.report.events_held += len(events) - len(fresh)
        for event in fresh:
            self.run.bulk.add(EXACT_EVENTS, event)

    def config_rows(self) -> None:
        run = self.run
        for _, _, row in self.rows("config"):
            key, value = row.get("key"), row.get("value")
            if not isinstance(key, str) or not key:
                run.report.skipped_rows["config"] += 1
            elif key.startswith(_MEMORY_PREFIX):
                # bd export writes memories after the issues, as {"_type":"memory","key":…,"value":…}.
                memory = {"_type": "memory", "key": key[len(_MEMORY_PREFIX) :], "value": value}
                line = bdjson.dumps(memory)
                run.keep_record(run.position(), linekinds.MEMORY, kept.identity_of(memory, line), line)
            else:
                if key == "issue_prefix" and isinstance(value, str) and value:
                    run.prefix_hint = value
                self.config[key] = value
        if self.config:
            run.bulk.flush()  # the writer thread is done with the connection
            found = run.tx.row("SELECT value FROM meta WHERE key = 'beads_config'")
            merged = {**(json.loads(found[0]) if found else {}), **self.config}
            run.tx.run(
                "INSERT INTO meta (key, value) VALUES ('beads_config', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [json.dumps(merged, ensure_ascii=False)],
            )

    def check_counts(self) -> None:
        """Raises: BeeError: ``invalid_argument`` when a table holds other than backup_state.json counted."""
        counted = self.backup.state.get("counts") if self.backup.state else None
        if not isinstance(counted, dict):
            return
        differ = [
            f"{table}.jsonl holds {self.run.report.tables.get(table, 0)} rows, not {counted[table]}"
            for table in TABLES
            if isinstance(counted.get(table), int) and counted[table] != self.run.report.tables.get(table, 0)
        ]
        if differ:
            raise invalid(
                f"the backup in {self.backup.name} is incomplete: {'; '.join(differ)} (as backup_state.json counts "
                "them); run bd backup again, or remove backup_state.json to import the tables as they are "
                "(nothing was imported)"
            )


def load_events(run: Run, events: Events) -> None:
    """Import the rows of ``events`` (bd backup's form) for the issues ``run`` imported, after them.

    Raises:
        BeeError: ``invalid_argument`` naming the first bad row.
    """
    tables = _Tables(run, events)
    run.bulk.flush()
    tables.live = {row[0] for row in run.tx.rows("SELECT id FROM issues WHERE position >= ?", [run.base])}
    tables.events()
    run.bulk.flush()


def load(run: Run, backup: Backup) -> None:
    """Import every table of ``backup`` in ``run``.

    Raises:
        BeeError: ``invalid_argument`` naming the first bad row, or the tables backup_state.json disagrees with.
    """
    tables = _Tables(run, backup)
    tables.issues()
    tables.labels()
    tables.dependencies()
    tables.check_sizes()
    tables.comments()
    tables.events()
    tables.config_rows()
    tables.check_counts()
    run.finish(lambda position, line, issue_id: None)
