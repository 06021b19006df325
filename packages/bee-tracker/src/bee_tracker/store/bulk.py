"""Rows an import has yet to insert, sent in batches: one bulk load per table, not one round trip per row.

With ``background``, a full batch is written by a thread of its own while the next one is parsed: the database
drivers release the GIL while the database works, so on two cores reading and writing overlap. The connection is
never used by both threads at once: :meth:`Bulk.flush` waits until everything queued is written, and whoever runs
a statement of its own during the import calls it first.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bee_tracker.store.db import Tx

#: Rows held before they are sent; enough to amortise the round trips, little enough to keep memory flat.
BATCH_ROWS = 2000
#: Batches waiting for the writer at most (more would only hold memory: the reader then waits).
_QUEUED = 2

_Batch = list[tuple["Target", list[Sequence[Any]]]]


@dataclass(frozen=True)
class Target:
    """Where a kind of row goes: a table and its columns, and whether a row repeating a key is left out."""

    table: str
    columns: tuple[str, ...]
    skip_duplicates: bool = False


class Bulk:
    """Pending rows per target, sent in the order of ``targets`` (so issues precede their labels)."""

    def __init__(
        self, tx: Tx, targets: Sequence[Target], *, batch_rows: int = BATCH_ROWS, background: bool = False
    ) -> None:
        self.tx = tx
        self._targets = tuple(targets)
        self._pending: dict[Target, list[Sequence[Any]]] = {target: [] for target in targets}
        self._held = 0
        self._batch_rows = batch_rows
        self._queue: queue.Queue[_Batch | None] | None = None
        self._failure: BaseException | None = None
        self._abandoned = False
        self._thread: threading.Thread | None = None
        if background:
            self._queue = queue.Queue(maxsize=_QUEUED)
            self._thread = threading.Thread(target=self._write_queued, name="bee-import-writer", daemon=True)
            self._thread.start()

    def add(self, target: Target, row: Sequence[Any]) -> None:
        """Queue one row for ``target`` (one of the targets); send the batch once it is full.

        Raises:
            Exception: what writing an earlier batch raised (the driver's error), so the import stops.
        """
        self._pending[target].append(row)
        self._held += 1
        if self._held >= self._batch_rows:
            self._send()

    def flush(self) -> None:
        """Write every pending row now and wait until it is written (before a statement that must see them).

        Raises:
            Exception: what writing a batch raised.
        """
        self._send()
        if self._queue is not None:
            self._queue.join()
        self._raise()

    def close(self, *, abandon: bool = False) -> None:
        """Stop the writer thread once it has written what it holds, or dropped it with ``abandon`` (the import
        failed and is rolled back): either way it has let go of the connection when this returns."""
        if abandon:
            self._abandoned = True
        if self._queue is not None and self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._queue = None

    def _send(self) -> None:
        self._raise()
        if not self._held:
            return
        batch: _Batch = [(target, rows) for target, rows in self._pending.items() if rows]
        self._pending = {target: [] for target in self._targets}
        self._held = 0
        if self._queue is None:
            self._write(batch)
        else:
            self._queue.put(batch)

    def _write(self, batch: _Batch) -> None:
        for target, rows in batch:
            self.tx.load(target.table, target.columns, rows, skip_duplicates=target.skip_duplicates)

    def _write_queued(self) -> None:
        assert self._queue is not None
        work = self._queue
        while True:
            batch = work.get()
            try:
                if batch is None:
                    return
                if self._failure is None and not self._abandoned:  # else the import is rolled back anyway
                    self._write(batch)
            except BaseException as exc:  # handed to the reading thread, which raises it
                self._failure = exc
            finally:
                work.task_done()

    def _raise(self) -> None:
        if self._failure is not None:
            raise self._failure
