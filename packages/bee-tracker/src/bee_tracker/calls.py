"""Running a tracker tool for an actor: its handler found from its name, in one transaction of the store.

This is where a tool's name meets the store, so that the store knows nothing of its callers. The MCP host
(:mod:`.host`), the board and the CLI all run tools through :func:`run` (arguments the host already validated) or
:func:`call` (validating them first, as the host does). A read-only tool (``readOnlyHint``) runs in a read
transaction; any other in a write transaction with its idempotency key, history and size caps
(:meth:`~bee_tracker.store.SqlStore.write`). Every answer is ``{"data": …}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from bee_contracts import invalid, load_catalog
from bee_hostkit.handlers import load_handler
from bee_tracker.store.text import unstorable

if TYPE_CHECKING:
    from bee_hostkit.validation import SchemaValidator
    from bee_tracker.store import SqlStore

#: Where the tracker's handlers live (``claim`` is ``bee_tracker.handlers.claim.claim``).
HANDLERS = "bee_tracker.handlers"


@cache
def _read_only() -> dict[str, bool]:
    return {spec.name: spec.annotations["readOnlyHint"] for spec in load_catalog("tracker")}


@cache
def _validators() -> dict[str, SchemaValidator]:
    from bee_hostkit.validation import SchemaValidator

    return {spec.name: SchemaValidator(spec.name, spec.input_schema) for spec in load_catalog("tracker")}


def check_text(args: Mapping[str, Any]) -> None:
    """Raises: BeeError: ``invalid_argument`` for text the schema admits but the store cannot hold."""
    for name, value in args.items():
        problem = unstorable(value)
        if problem:
            raise invalid(f"argument {name} holds {problem}, which the tracker cannot store; remove it", argument=name)


def run(store: SqlStore, tool: str, actor: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Run the catalog tool ``tool`` for ``actor`` with arguments already validated against its inputSchema
    (defaults filled in); return its result ``{"data": …}``.

    Raises:
        BeeError: the tool's failure; ``invalid_argument`` for text the store cannot hold; ``busy`` when the
            database is locked (retryable, nothing written).
    """
    check_text(args)
    handler = load_handler(HANDLERS, tool)
    if _read_only()[tool]:
        return {"data": store.read(handler, args)}
    return {"data": store.write(tool, actor, args, handler)}


def call(store: SqlStore, tool: str, actor: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`run` after validating ``args`` against the tool's inputSchema, as the host does: for in-process
    callers (the board, the CLI, tests).

    Raises:
        BeeError: ``invalid_argument`` for an unknown tool or arguments the schema refuses, and whatever
            :func:`run` raises.
    """
    validator = _validators().get(tool)
    if validator is None:
        raise invalid(f"unknown tool {tool!r}; the tracker serves: {', '.join(sorted(_validators()))}")
    return run(store, tool, actor, validator.validate(args))


def release_forced(store: SqlStore, issue_id: str, *, actor: str, reason: str) -> dict[str, Any]:
    """The operator's override: release whoever holds ``issue_id``, recording ``actor`` and ``reason``.

    Raises:
        BeeError: ``conflict`` when the issue is not claimed; ``not_found``; ``invalid_argument`` for text the
            store cannot hold.
    """
    from bee_tracker.handlers.release import ForcedReleaseArgs
    from bee_tracker.handlers.release import release_forced as forced

    args: ForcedReleaseArgs = {"id": issue_id, "reason": reason}
    check_text({"actor": actor, **args})
    return dict(store.write("release --force", actor, args, forced))
