"""The store-wide audit log: every write's events, read by actor, issue, tool and time, and written out and read back
in ``bd backup``'s events form.

Every write the tools make records one event per issue it changed, in the same transaction
(:meth:`~.ops.Write.finish`): who (``actor``), with which tool, on which issue, what changed, when (the tracker's
time of the call) and which replica wrote it (``replica``: the process's ``--replica-id``, by default host/pid).
The table is append-only: nothing but an import replacing an issue's history from a file deletes from it. An
issue's history in ``get`` is this log read for one issue; ``bee tracker log`` reads it across the store.

**The bd backup form.** ``bd backup`` (February–March 2026) wrote its events table as ``events.jsonl``, one row per
line, columns in alphabetical order: ``actor``, ``comment``, ``created_at``, ``event_type`` (``created``,
``updated``, ``status_changed``, ``closed``, ``reopened``, ``commented``, ``label_added``, ``dependency_added``, …),
``id``, ``issue_id``, ``new_value`` and ``old_value`` (JSON text: the fields changed, before and after). An export
(:func:`bd_rows`) writes each event as such a row — ``event_type`` chosen from what changed, the fields' old and new
values in ``old_value`` and ``new_value`` — and adds three columns of its own, which bd's reader ignores (it reads
the columns it knows by name): ``bee_tool``, ``bee_replica`` and ``bee_changes`` (the event's changes exactly, as
JSON text). An import (:func:`event_of`) takes a row with them back exactly, and a row of bd's own as bd's history
(``tool`` ``bd <event_type>``, see :mod:`.backup`); an event the store already holds is not added twice, so
importing the same file again changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bee_tracker.store.batched import in_batches, marks
from bee_tracker.store.db import Row, Tx

#: The columns of a log entry, in :func:`entry`'s order.
_SELECT: Final = "seq, at, actor, tool, issue_id, changes, replica"
#: Most entries one read returns.
MAX_ENTRIES: Final = 10_000


@dataclass(frozen=True)
class Filters:
    """Which entries to read: every given filter must hold (``since``: at or after that time, RFC 3339)."""

    actor: str | None = None
    issue: str | None = None
    tool: str | None = None
    since: str | None = None


def _where(filters: Filters) -> tuple[str, list[Any]]:
    clauses, params = [], []
    for column, value in (("actor", filters.actor), ("issue_id", filters.issue), ("tool", filters.tool)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if filters.since is not None:
        clauses.append("at >= ?")
        params.append(filters.since)
    return (" AND ".join(clauses) or "1 = 1"), params


def entry(row: Row) -> dict[str, Any]:
    """One log entry from a row of :data:`_SELECT`."""
    seq, at, actor, tool, issue_id, changes, replica = row
    return {
        "seq": int(seq),
        "at": at,
        "actor": actor,
        "tool": tool,
        "issue": issue_id,
        "changes": json.loads(changes),
        "replica": replica,
    }


def read(tx: Tx, filters: Filters, *, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` entries matching ``filters``, oldest first."""
    where, params = _where(filters)
    rows = tx.rows(f"SELECT {_SELECT} FROM events WHERE {where} ORDER BY seq DESC LIMIT ?", [*params, limit])
    return [entry(row) for row in reversed(rows)]


# -- the bd backup form ------------------------------------------------------------------------------------------

#: Keys of an event's changes that are not a field's ``[old, new]``, and the bd event type each stands for.
_KINDS: Final = {
    "created": "created",
    "comment": "commented",
    "linked": "dependency_added",
    "unlinked": "dependency_removed",
}


def _event_type(changes: Mapping[str, Any]) -> str:
    """The bd event type closest to what ``changes`` did."""
    status = changes.get("status")
    if isinstance(status, list) and len(status) == 2:
        if status[1] == "closed":
            return "closed"
        return "reopened" if status[0] == "closed" else "status_changed"
    for key, kind in _KINDS.items():
        if key in changes:
            return kind
    labels = changes.get("labels")
    if isinstance(labels, dict) and labels.get("added") and not labels.get("removed"):
        return "label_added"
    return "updated"


def _values(changes: Mapping[str, Any]) -> tuple[str | None, str]:
    """``old_value`` and ``new_value`` of a bd row: the fields changed, before and after (what is no field's change
    goes in ``new_value`` as it is)."""
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    for key, value in changes.items():
        if isinstance(value, list) and len(value) == 2 and key not in _KINDS:
            old[key], new[key] = value
        else:
            new[key] = value
    encoded_old = json.dumps(old, ensure_ascii=False, sort_keys=True) if old else None
    return encoded_old, json.dumps(new, ensure_ascii=False, sort_keys=True)


def bd_row(row: Row) -> dict[str, Any]:
    """A log entry (a row of :data:`_SELECT`) as a row of bd backup's ``events.jsonl`` (see the module docstring),
    its columns in alphabetical order."""
    seq, at, actor, tool, issue_id, changes_text, replica = row
    changes = json.loads(changes_text)
    old_value, new_value = _values(changes)
    values = {
        "actor": actor,
        "bee_changes": changes_text,
        "bee_replica": replica,
        "bee_tool": tool,
        "comment": None,
        "created_at": at,
        "event_type": _event_type(changes),
        "id": int(seq),
        "issue_id": issue_id,
        "new_value": new_value,
        "old_value": old_value,
    }
    return dict(sorted(values.items()))


def bd_rows(tx: Tx) -> Iterator[dict[str, Any]]:
    """Every event in the order it was written, as rows of bd backup's ``events.jsonl``, read as they are taken."""
    for row in tx.stream(f"SELECT {_SELECT} FROM events ORDER BY seq"):
        yield bd_row(row)


def event_of(row: Mapping[str, Any]) -> tuple[str, str, str, str, str | None] | None:
    """``(at, actor, tool, changes, replica)`` of a row Bee exported (:func:`bd_row`), exactly as it was written;
    None for a row of bd's own, or one whose Bee columns are not as Bee writes them."""
    tool, changes, replica = row.get("bee_tool"), row.get("bee_changes"), row.get("bee_replica")
    if not isinstance(tool, str) or not tool or not isinstance(changes, str):
        return None
    try:
        parsed = json.loads(changes)
    except ValueError:
        return None
    at, actor = row.get("created_at"), row.get("actor")
    if not isinstance(parsed, dict) or not isinstance(at, str) or not isinstance(actor, str):
        return None
    return at, actor, tool, changes, replica if isinstance(replica, str) else None


#: What an imported event is, for finding it among the store's: issue, time, actor, tool and changes.
Identity = tuple[str, str, str, str, str]


def held(tx: Tx, issue_ids: Iterable[str]) -> set[Identity]:
    """The events the store holds for ``issue_ids``, by what they are (an import adds none of them twice)."""
    found: set[Identity] = set()
    for batch in in_batches(sorted(set(issue_ids))):
        for row in tx.rows(
            f"SELECT issue_id, at, actor, tool, changes FROM events WHERE issue_id IN ({marks(batch)})", batch
        ):
            found.add((row[0], row[1], row[2], row[3], row[4]))
    return found


def unheld(tx: Tx, events: Sequence[tuple[str, str, str, str, str, str | None]]) -> list[tuple[Any, ...]]:
    """Those of ``events`` (issue, at, actor, tool, changes, replica) the store does not hold yet, each once."""
    holding = held(tx, (event[0] for event in events))
    fresh = []
    for event in events:
        identity = event[:5]
        if identity not in holding:
            holding.add(identity)
            fresh.append(event)
    return fresh


#: The most events :func:`written_elsewhere` reads at once (the rest at its next call).
_ELSEWHERE_EVENTS: Final = 5000


def written_elsewhere(tx: Tx, after: int | None, replica: str) -> tuple[list[str], int]:
    """The issues named by the events after ``seq`` ``after`` that another process than ``replica`` wrote, with the
    issues depending on them (a write's readiness turns reach those); and the last ``seq`` read. With ``after``
    None: nothing, and the newest ``seq`` (where to start)."""
    if after is None:
        newest = tx.row("SELECT MAX(seq) FROM events")
        return [], int(newest[0]) if newest and newest[0] is not None else 0
    rows = tx.rows(
        "SELECT seq, issue_id, replica FROM events WHERE seq > ? ORDER BY seq LIMIT ?", [after, _ELSEWHERE_EVENTS]
    )
    last = int(rows[-1][0]) if rows else after
    named = list(dict.fromkeys(str(issue_id) for _, issue_id, writer in rows if writer != replica))
    dependents: list[str] = []
    for batch in in_batches(named):
        sql = f"SELECT issue_id FROM dependencies WHERE depends_on_id IN ({marks(batch)})"
        dependents += [str(issue_id) for (issue_id,) in tx.rows(sql, batch)]
    return list(dict.fromkeys([*named, *dependents])), last
