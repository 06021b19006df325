"""Rows an import has yet to insert, sent in batches: one ``executemany`` per statement, not one round trip per row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bee_tracker.store.db import Tx

#: Rows held before they are sent; enough to amortise the round trips, little enough to keep memory flat.
BATCH_ROWS = 2000


class Bulk:
    """Pending rows per statement, flushed in the order of ``statements`` (so issues precede their labels)."""

    def __init__(self, tx: Tx, statements: Sequence[str], *, batch_rows: int = BATCH_ROWS) -> None:
        self.tx = tx
        self._pending: dict[str, list[Sequence[Any]]] = {sql: [] for sql in statements}
        self._held = 0
        self._batch_rows = batch_rows

    def add(self, sql: str, row: Sequence[Any]) -> None:
        """Queue one row for ``sql`` (one of the statements); send everything once the batch is full."""
        self._pending[sql].append(row)
        self._held += 1
        if self._held >= self._batch_rows:
            self.flush()

    def flush(self) -> None:
        """Send every pending row now (before a statement that must see them)."""
        if not self._held:
            return
        for sql, rows in self._pending.items():
            if rows:
                self.tx.many(sql, rows)
                rows.clear()
        self._held = 0
