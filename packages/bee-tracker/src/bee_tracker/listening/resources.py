"""The tracker's resources read: an issue, the ready queue under a filter, an actor's claims (``resources/read``).

Each answer is the JSON text of what the matching tool answers (``{"data": …}``): ``get`` for an issue, ``ready`` for
the queue, and for an actor's claims the live ones of ``bee tracker claims``. The URIs are :mod:`.uris`; listening
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
    else:
        answer = _claims(store, resource.actor)
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
