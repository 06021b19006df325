"""Beads JSONL out: the legacy single file, streamed, with every line it took back in its place.

Issues and kept lines (:mod:`.kept`) come out in import order (they share one space of positions), then issues
created in the tracker, by id. An issue nobody has touched since import is its original line, byte for byte; any
other is rebuilt (:func:`~.records.beads_records`, a batch at a time) with the keys of its line in their order,
new keys where bd puts them, and the spelling of its line (:mod:`.bdjson`); an issue that never had a line takes
the spelling of the file the store was first imported from, else bd's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from bee_tracker.store import bdjson
from bee_tracker.store.db import Row, Tx
from bee_tracker.store.records import beads_records

#: Issues rebuilt together (one query per relation table for the batch).
_BATCH: Final = 500


def _rebuilt(tx: Tx, batch: list[Row], style: bdjson.LineStyle) -> Iterator[str]:
    """The lines of ``batch`` (rows of position, id, raw line, untouched), rebuilding the touched ones together."""
    records = beads_records(tx, [issue_id for _, issue_id, raw, untouched in batch if not (untouched and raw)])
    for _, issue_id, raw, untouched in batch:
        if untouched and raw is not None:
            yield raw
        else:
            yield bdjson.dumps(records[issue_id], bdjson.style_of(raw) if raw is not None else style)


def export_lines(tx: Tx) -> Iterator[str]:
    """Every issue and kept line as one JSONL line (without its newline), in order, read as it is written."""
    found = tx.row("SELECT value FROM meta WHERE key = 'line_style'")
    style = bdjson.LineStyle.from_text(found[0] if found else None)
    kept = tx.stream("SELECT position, line FROM kept_records ORDER BY position, seq")
    waiting: tuple[Any, ...] | None = next(kept, None)
    batch: list[Row] = []
    for row in tx.stream(
        "SELECT position, id, raw_line, raw_revision = activity_revision FROM issues "
        "ORDER BY position IS NULL, position, id"
    ):
        position = row[0]
        while waiting is not None and (position is None or waiting[0] < position):
            yield from _rebuilt(tx, batch, style)
            batch = []
            yield waiting[1]
            waiting = next(kept, None)
        batch.append(row)
        if len(batch) >= _BATCH:
            yield from _rebuilt(tx, batch, style)
            batch = []
    yield from _rebuilt(tx, batch, style)
    while waiting is not None:
        yield waiting[1]
        waiting = next(kept, None)
