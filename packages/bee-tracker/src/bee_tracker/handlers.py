"""The tracker host's handlers: each catalog tool bound to the store, for one authenticated call.

A handler takes the hostkit :class:`~bee_hostkit.Call` (validated arguments, deadline, caller) and returns the
tool's result ``{"data": …}``. The actor is the call's verified caller — never an argument: tools accept ``actor``
only for compatibility and ignore it. The tools themselves are in :mod:`bee_tracker.tools`.
"""

from __future__ import annotations

from typing import Any

from bee_contracts import BeeError, ErrorCode, load_catalog
from bee_hostkit import Call, Handler
from bee_tracker.store import SqlStore


def actor_of(call: Call[Any]) -> str:
    """The verified actor of ``call``.

    Raises:
        BeeError: ``unauthorized`` when the call carries none (the HTTP edge refuses such requests first).
    """
    if not call.caller:
        raise BeeError(ErrorCode.UNAUTHORIZED, "this request carries no verified actor; send a valid bearer token")
    return call.caller


def _bound(store: SqlStore, tool: str) -> Handler:
    def handler(call: Call[Any]) -> dict[str, Any]:
        return store.run(tool, actor_of(call), call.args)

    handler.__name__ = handler.__qualname__ = tool
    return handler


def handlers(store: SqlStore) -> dict[str, Handler]:
    """One handler per tool of the tracker catalog, in catalog order."""
    return {spec.name: _bound(store, spec.name) for spec in load_catalog("tracker")}
