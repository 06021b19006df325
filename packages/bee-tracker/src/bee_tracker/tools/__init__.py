"""The tracker's tools: one module per tool, named after it, holding one function of the same name.

``claim`` is :func:`bee_tracker.tools.claim.claim`, ``add_note`` is :func:`bee_tracker.tools.add_note.add_note`.
Each function takes the unit of work — a :class:`~bee_tracker.store.ops.Read` for the read-only tools, a
:class:`~bee_tracker.store.ops.Write` for the others — and the tool's arguments typed by the shapes generated from
its catalog entry (:mod:`bee_contracts.shapes.tracker`), and returns the tool's ``data``. Everything around it is
written once, in :class:`~bee_tracker.store.SqlStore`: the transaction, revision bumps, the history, the size caps,
idempotency, and the ``{data: …}`` envelope. A tool is its catalog entry plus its function; nothing else names it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bee_tracker.store.ops import Read, Write
from bee_tracker.tools import (
    add_note,
    claim,
    complete,
    create,
    get,
    handoff,
    lease_get,
    lease_join,
    lease_leave,
    lease_renew,
    link,
    ready,
    release,
    search,
    update,
)

ReadTool = Callable[[Read, Any], Mapping[str, Any]]
WriteTool = Callable[[Write, Any], Mapping[str, Any]]

#: The read-only tools (``readOnlyHint`` in the catalog), by name.
READS: dict[str, ReadTool] = {
    "get": get.get,
    "lease_get": lease_get.lease_get,
    "ready": ready.ready,
    "search": search.search,
}

#: The tools that write, by name.
WRITES: dict[str, WriteTool] = {
    "add_note": add_note.add_note,
    "claim": claim.claim,
    "complete": complete.complete,
    "create": create.create,
    "handoff": handoff.handoff,
    "lease_join": lease_join.lease_join,
    "lease_leave": lease_leave.lease_leave,
    "lease_renew": lease_renew.lease_renew,
    "link": link.link,
    "release": release.release,
    "update": update.update,
}

__all__ = ["READS", "WRITES", "ReadTool", "WriteTool"]
