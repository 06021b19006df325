"""The legacy ``issues.jsonl``, read line by line: which line counts for an id, and what is kept verbatim.

Every line that is not a live issue is kept exactly as it came, at its position (:mod:`.kept`): tombstones,
memories, headers, and lines for an id another line of the file has the last word on. Every issue remembers its line
too, so an export writes an untouched issue back byte for byte. Which line counts (docs/hosts/tracker.md):

- within one file, the **last** live line for an id is the issue, as in Beads (its import is an upsert); earlier
  ones are kept as **shadowed**;
- a **tombstone** deletes the id wherever it stands in the file: the file's live lines for it are kept as
  shadowed, and so are later tombstones for it;
- across imports, a file's lines for an id replace what an earlier import left for it, except that an id the store
  holds as deleted stays deleted: the file's live lines for it are skipped (reported), unless the file deletes it
  again.

The file is read in batches of lines, so memory holds a batch and one small entry per id, whatever the file's size.
A line without an id waits, kept as pending, until the end: its new id must differ from every id the file names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from bee_tracker.model import TOMBSTONE
from bee_tracker.store import bdjson, kept, linekinds
from bee_tracker.store.rules import check_id, check_issue, refuse
from bee_tracker.store.sources import Legacy
from bee_tracker.store.transfer import PENDING, Run, id_of

#: Lines parsed before the store is asked, in one query, which of their ids it holds as deleted.
_BATCH_LINES: Final = 500
_LIVE, _DELETED, _SKIPPED = 1, 2, 3
#: The bit of a packed entry that says the id's first line replaced an issue an earlier import left.
_REPLACED: Final = 4


@dataclass(slots=True)
class _Line:
    number: int
    text: str
    record: dict[str, Any]
    #: What it is when not a live issue (``tombstone``, ``memory``, ``header``), else None.
    kind: str | None
    position: int


def _entry(state: int, number: int, replaced: int = 0) -> int:
    """One id's entry: ``state`` in the low two bits, ``replaced`` (0 or :data:`_REPLACED`), the line number above."""
    return number << 3 | replaced | state


def _identity(issue_id: str) -> str:
    return kept.identity_of({"id": issue_id}, "")


class _Importer:
    def __init__(self, run: Run, where: str) -> None:
        self.run = run
        self.where = where
        #: Per id of this file, packed in one int (see :func:`_entry`): its state, the number of the line that
        #: currently counts, whether it replaced an issue. One int, not a list of three: this is the import's only
        #: memory that grows with the file, and a list per id would take four objects where this takes one.
        self.seen: dict[str, int] = {}
        #: Ids the store holds as deleted, with the numbers of the file's live lines for them (kept provisionally).
        self.skipped: dict[str, list[int]] = {}
        #: Line numbers of the lines without an id, by position.
        self.pending: dict[int, int] = {}
        #: The ids of the batch at hand whose issue an earlier import left, now removed (:meth:`Run.clear_prior`).
        self.had_issue: set[str] = set()

    def parse(self, number: int, raw: bytes | str) -> _Line | None:
        """Raises: BeeError: ``invalid_argument`` for a line that is not UTF-8, JSON, an object or a Beads record."""
        try:
            decoded = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError as exc:
            raise refuse(self.where, number, f"is not valid UTF-8 (byte {exc.start + 1} of the line)") from None
        text = decoded.rstrip("\r\n")
        if not text.strip():
            return None
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise refuse(self.where, number, f"is not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise refuse(self.where, number, "nests JSON too deeply") from None
        if not isinstance(record, dict):
            raise refuse(self.where, number, "is not a JSON object")
        check_id(record.get("id"), self.where, number)
        try:
            kind = linekinds.classify(record)
        except linekinds.NotAnIssue as exc:
            raise refuse(self.where, number, f"is {exc.looks_like}") from None
        if kind is None:
            check_issue(record, text, self.where, number)
        return _Line(number, text, record, kind, self.run.position())

    def process(self, batch: list[_Line]) -> None:
        deleted: set[str] = set()
        if self.run.prior:  # only ids an earlier import left can be held as deleted, or be replaced
            firsts: dict[str, _Line] = {}
            for line in batch:
                named = id_of(line.record)
                if line.kind in (None, TOMBSTONE) and named and named not in self.seen:
                    firsts.setdefault(named, line)
            deleted = self.run.prior_tombstones(firsts)
            # What the file's first line for an id replaces: anything, unless it is a live line for a deleted id.
            self.had_issue = self.run.clear_prior(
                {named: line.number for named, line in firsts.items() if line.kind == TOMBSTONE or named not in deleted}
            )
        for line in batch:
            self.line(line, deleted)

    def line(self, line: _Line, deleted: set[str]) -> None:
        run = self.run
        named = id_of(line.record)
        if line.kind not in (None, TOMBSTONE) or (line.kind == TOMBSTONE and named is None):
            self.keep_other(line)  # a tombstone without an id deletes nothing: kept as it is
            return
        if named is None:
            run.keep(line.position, PENDING, None, kept.identity_of(line.record, line.text), line.text)
            self.pending[line.position] = line.number
            return
        run.named.add(named)
        entry = self.seen.get(named)
        if entry is None:
            self.first(line, named, named in deleted)
            return
        state, replaced = entry & 3, entry & _REPLACED
        if state == _LIVE:
            self.shadow_issue(named, entry >> 3)
            if line.kind == TOMBSTONE:
                self.keep_tombstone(line, named)
                if replaced:  # the issue this file replaced is deleted after all
                    run.report.replaced -= 1
                    run.report.deleted.append(named)
                self.seen[named] = _entry(_DELETED, line.number, replaced)
            else:
                run.insert_issue(line.record, named, line.position, raw_line=line.text)
                self.seen[named] = _entry(_LIVE, line.number, replaced)
        elif state == _DELETED:
            run.keep(line.position, kept.SHADOWED, named, _identity(named), line.text)
            run.report.shadowed.append((line.number, named))
        elif line.kind == TOMBSTONE:  # _SKIPPED: the file deletes the id again, and its live lines stay shadowed
            self.clear_prior_lines(named)
            run.report.shadowed.extend((number, named) for number in self.skipped.pop(named))
            self.keep_tombstone(line, named)
            self.seen[named] = _entry(_DELETED, line.number, replaced)
        else:
            run.keep(line.position, kept.SHADOWED, named, _identity(named), line.text)
            self.skipped[named].append(line.number)

    def first(self, line: _Line, named: str, deleted: bool) -> None:
        """This file's first line for ``named``."""
        run = self.run
        if line.kind == TOMBSTONE:
            if named in self.had_issue:
                run.report.deleted.append(named)
            self.keep_tombstone(line, named)
            self.seen[named] = _entry(_DELETED, line.number)
        elif deleted:
            # A deletion is never undone by a live line; kept for now, in case a later line deletes it again.
            run.keep(line.position, kept.SHADOWED, named, _identity(named), line.text)
            self.skipped[named] = [line.number]
            self.seen[named] = _entry(_SKIPPED, line.number)
        else:
            replaced = named in self.had_issue
            run.report.replaced += replaced
            run.insert_issue(line.record, named, line.position, raw_line=line.text)
            self.seen[named] = _entry(_LIVE, line.number, _REPLACED if replaced else 0)
            if run.style is None:
                run.style = bdjson.style_of(line.text)

    def keep_tombstone(self, line: _Line, named: str) -> None:
        self.run.keep(line.position, TOMBSTONE, named, kept.identity_of(line.record, line.text), line.text)
        self.run.report.tombstones += 1

    def shadow_issue(self, named: str, number: int) -> None:
        """Turn the issue an earlier line of this file made into a shadowed line: a later line has the last word."""
        run = self.run
        run.bulk.flush()
        run.tx.run(
            "INSERT INTO kept_records (position, kind, issue_id, identity, line) "
            "SELECT position, ?, id, ?, raw_line FROM issues WHERE id = ?",
            [kept.SHADOWED, _identity(named), named],
        )
        run.tx.run("DELETE FROM issues WHERE id = ?", [named])
        run.report.imported -= 1
        run.report.shadowed.append((number, named))

    def clear_prior_lines(self, named: str) -> None:
        """Drop the lines earlier imports kept for ``named`` (not this file's)."""
        self.run.tx.run("DELETE FROM kept_records WHERE issue_id = ? AND position < ?", [named, self.run.base])

    def keep_other(self, line: _Line) -> None:
        assert line.kind is not None
        self.run.keep_record(line.position, line.kind, kept.identity_of(line.record, line.text), line.text)

    def end(self) -> None:
        run = self.run
        if self.skipped:
            run.bulk.flush()
        for named, numbers in self.skipped.items():
            run.tx.run(
                "DELETE FROM kept_records WHERE issue_id = ? AND kind = ? AND position >= ?",
                [named, kept.SHADOWED, run.base],
            )
            run.report.skipped_deleted.extend((number, named) for number in numbers)
        run.finish(self.import_pending)

    def import_pending(self, position: int, line: str, issue_id: str) -> None:
        self.run.insert_issue(json.loads(line), issue_id, position, raw_line=None)
        self.run.report.generated_ids.append((self.pending[position], issue_id))


def load(run: Run, source: Legacy) -> None:
    """Import every line of ``source`` in ``run``.

    Raises:
        BeeError: ``invalid_argument`` naming the first bad line.
    """
    importer = _Importer(run, source.where)
    batch: list[_Line] = []
    for number, raw in enumerate(source.lines(), start=1):
        parsed = importer.parse(number, raw)
        if parsed is not None:
            batch.append(parsed)
            if len(batch) >= _BATCH_LINES:
                importer.process(batch)
                batch = []
    importer.process(batch)
    importer.end()
