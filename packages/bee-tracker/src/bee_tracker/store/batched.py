"""Writing many issues' kept readiness rows at once, in statements both SQLite and PostgreSQL read alike.

A rebuild after an import writes a row for every issue (a bulk load, :meth:`.db.Tx.load`) and may update many; one
statement per issue costs a round trip each on PostgreSQL (seconds at 100,000 issues). :func:`set_columns` sends a
batch of rows as one ``UPDATE … FROM (VALUES …)`` instead, which both dialects run (SQLite since 3.33). Ids go in
``IN (…)`` lists of at most :data:`BATCH`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from bee_tracker.store.db import Tx

#: Ids per ``IN (…)`` list or rows per ``VALUES`` statement, well under every driver's parameter limit.
BATCH = 400

#: The SQL type of each column of ``readiness``, so a batch whose values are all NULL still has one on PostgreSQL.
TYPES = {
    "issue_id": "TEXT",
    "status": "TEXT",
    "priority": "INTEGER",
    "created_epoch": "DOUBLE PRECISION",
    "defer_epoch": "DOUBLE PRECISION",
    "parent_defer_epoch": "DOUBLE PRECISION",
    "is_wisp": "INTEGER",
    "is_pinned": "INTEGER",
    "is_eligible": "INTEGER",
    "is_active": "INTEGER",
    "is_blocked": "INTEGER",
    "is_held": "INTEGER",
    "is_ready": "INTEGER",
    "lease_epoch": "DOUBLE PRECISION",
    "key_id": "TEXT",
    "key_title": "TEXT",
    "key_ref": "TEXT",
}


def in_batches(ids: Iterable[str], size: int = BATCH) -> Iterator[list[str]]:
    """``ids`` in lists of at most ``size``, in order."""
    batch: list[str] = []
    for issue_id in ids:
        batch.append(issue_id)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def marks(batch: Sequence[Any]) -> str:
    """``?, ?, …`` for one ``IN (…)`` list."""
    return ", ".join("?" for _ in batch)


def _values(columns: Sequence[str], count: int) -> str:
    first = "(" + ", ".join(f"CAST(? AS {TYPES[c]})" for c in columns) + ")"
    other = "(" + ", ".join("?" for _ in columns) + ")"
    return ", ".join([first, *([other] * (count - 1))])


def set_columns(tx: Tx, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """For each row ``(issue id, value, …)`` set ``columns`` (in order) of that issue's readiness row."""
    sets = ", ".join(f"{column} = v.column{n}" for n, column in enumerate(columns, start=2))
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        tx.run(
            f"UPDATE readiness SET {sets} FROM (VALUES {_values(['issue_id', *columns], len(chunk))}) AS v "
            "WHERE readiness.issue_id = v.column1",
            [value for row in chunk for value in row],
        )


def set_flag(tx: Tx, column: str, ids: Iterable[str], value: int) -> None:
    """Set the integer ``column`` of the readiness rows of ``ids`` to ``value``."""
    for batch in in_batches(ids):
        tx.run(f"UPDATE readiness SET {column} = ? WHERE issue_id IN ({marks(batch)})", [value, *batch])
