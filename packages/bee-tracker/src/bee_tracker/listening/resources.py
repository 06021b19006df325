"""The tracker's resources read: an issue, the ready queue under a filter, an actor's claims (``resources/read``).

Each answer is the JSON text of what the matching tool answers (``{"data": …}``): ``get`` for an issue, ``ready`` for
the queue, for an actor's claims the live ones of ``bee tracker claims``, and for the log what ``bee tracker log``
reads, as many of the newest entries as fit in a tool result's size. The URIs are :mod:`.uris`; listening
to them is :mod:`.listen`. A read runs in a worker thread, in one read transaction, like a read tool's call.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bee_contracts import BeeError, ErrorCode
from bee_tracker import calls
from bee_tracker.listening import uris

if TYPE_CHECKING:
    import mcp_types as types

    from bee_tracker.store import SqlStore

MIME_TYPE = "application/json"


def _claims(store: SqlStore, actor: str) -> dict[str, Any]:
    held = [claim for claim in store.claims() if claim["holder"] == actor and not claim["expired"]]
    return {"data": {"actor": actor, "claims": held}}


def _log(store: SqlStore, query: uris.Log) -> dict[str, Any]:
    """The newest entries that fit in a result, oldest first; ``more``: older matching entries were left out."""
    from bee_contracts.limits import MAX_RESULT_BYTES
    from bee_tracker.store.audit import Filters

    filters = Filters(actor=query.actor, issue=query.issue, tool=query.tool, since=query.since)
    entries = store.log(filters, limit=query.limit + 1)
    more = len(entries) > query.limit
    kept: list[dict[str, Any]] = []
    room = MAX_RESULT_BYTES - 1024  # the envelope and the text around the entries
    for entry in reversed(entries[-query.limit :]):  # newest first, until the next would not fit
        room -= len(json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode("utf-8")) + 1
        if room < 0:
            more = True
            break
        kept.append(entry)
    return {"data": {"entries": kept[::-1], "more": more}}


def read(store: SqlStore, actor: str, uri: str) -> str:
    """The JSON text of the resource at ``uri``, read for ``actor``.

    Raises:
        BeeError: ``invalid_argument`` for a URI the tracker does not serve; ``not_found`` for a missing issue.
    """
    resource = uris.parse(uri)
    if isinstance(resource, uris.Issue):
        answer = calls.call(store, "get", actor, {"id": resource.issue_id})
    elif isinstance(resource, uris.Ready):
        answer = calls.call(store, "ready", actor, resource.arguments())
    elif isinstance(resource, uris.Claims):
        answer = _claims(store, resource.actor)
    else:
        answer = _log(store, resource)
    return json.dumps(answer, separators=(",", ":"), ensure_ascii=False)


def mcp_error(error: BeeError) -> Exception:
    """A failed read as the JSON-RPC error ``resources/read`` answers, the error envelope in its data."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    code = types.INVALID_PARAMS if error.code in {ErrorCode.INVALID_ARGUMENT, ErrorCode.NOT_FOUND} else -32603
    return MCPError(code, error.message, dict(error.body()))


def templates() -> types.ListResourceTemplatesResult:
    """``resources/templates/list``'s answer: one template per kind of resource."""
    import mcp_types as types

    listed = [
        types.ResourceTemplate(uri_template=template, name=name, description=description, mime_type=MIME_TYPE)
        for template, name, description in uris.TEMPLATES
    ]
    return types.ListResourceTemplatesResult(resource_templates=listed)
