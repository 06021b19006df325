"""The tracker's handlers: one module per tool, named after it, holding one function of the same name.

``claim`` is :func:`bee_tracker.handlers.claim.claim`, ``add_note`` is
:func:`bee_tracker.handlers.add_note.add_note`. Each function takes the unit of work — a
:class:`~bee_tracker.store.ops.Read` for the read-only tools (``readOnlyHint`` in the catalog), a
:class:`~bee_tracker.store.ops.Write` for the others — and the tool's arguments typed by the shapes generated from
its catalog entry (:mod:`bee_contracts.shapes.tracker`), and returns the tool's ``data``. Everything around it is
written once: the transaction, revision bumps, the history, the size caps and idempotency in
:class:`~bee_tracker.store.SqlStore`, and finding the handler and the ``{data: …}`` envelope in
:mod:`bee_tracker.calls`. A tool is its catalog entry plus its function; nothing else names it.
"""

from __future__ import annotations

__all__: list[str] = []
