"""uvicorn's internals the HTTP edge is built on, imported in this one module: what a new uvicorn release must be
checked against.

The edge (:mod:`.edge`) subclasses uvicorn's httptools protocol and reads its request cycle, its status lines and its
flow-control mark; the workers (:mod:`.workers`) run uvicorn's process manager. None of that is uvicorn's public API
(``uvicorn.Config``, ``uvicorn.Server``, ``uvicorn.run``), so it enters here, ruff's banned-import rule (TID251, in
the root pyproject.toml) refuses it anywhere else, and bee-hostkit's http extra pins uvicorn to the release line
this was written against (the end-to-end edge tests catch a drift).
"""

from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol, RequestResponseCycle
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string
from uvicorn.server import ServerState
from uvicorn.supervisors import Multiprocess

__all__ = [
    "HIGH_WATER_LIMIT",
    "STATUS_LINE",
    "HttpToolsProtocol",
    "Multiprocess",
    "RequestResponseCycle",
    "ServerState",
    "get_client_addr",
    "get_path_with_query_string",
]
