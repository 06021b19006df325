"""Rows an import has yet to insert, sent in batches: one bulk load per table, not one round trip per row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bee_tracker.store.db import Tx

#: Rows held before they are sent; enough to amortise the round trips, little enough to keep memory flat.
BATCH_ROWS = 2000


@dataclass(frozen=True)
class Target:
    """Where a kind of row goes: a table and its columns, and whether a row repeating a key is left out."""

    table: str
    columns: tuple[str, ...]
    skip_duplicates: bool = False


class Bulk:
    """Pending rows per target, sent in the order of ``targets`` (so issues precede their labels)."""

    def __init__(self, tx: Tx, targets: Sequence[Target], *, batch_rows: int = BATCH_ROWS) -> None:
        self.tx = tx
        self._pending: dict[Target, list[Sequence[Any]]] = {target: [] for target in targets}
        self._held = 0
        self._batch_rows = batch_rows

    def add(self, target: Target, row: Sequence[Any]) -> None:
        """Queue one row for ``target`` (one of the targets); send everything once the batch is full."""
        self._pending[target].append(row)
        self._held += 1
        if self._held >= self._batch_rows:
            self.flush()

    def flush(self) -> None:
        """Send every pending row now (before a statement that must see them)."""
        if not self._held:
            return
        for target, rows in self._pending.items():
            if rows:
                self.tx.load(target.table, target.columns, rows, skip_duplicates=target.skip_duplicates)
                rows.clear()
        self._held = 0
