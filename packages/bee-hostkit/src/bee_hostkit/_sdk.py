"""The SDK's internals Bee uses, imported in this one module: what a new ``mcp`` release must be checked against.

The public SDK is enough to build and serve a host. Two things need more: the capped stdio transport hands the SDK's
server loop the context-carrying streams the SDK's own transports use, and the HTTP fast path (:mod:`.http.fast`)
answers as the SDK would by calling the SDK's own checks and kernel (the inbound ladder, the single-request runner,
the error mapping of each era). Those live in private or kernel modules, so they enter here, and ruff's banned-import
rule (TID251, in the root pyproject.toml) refuses them anywhere else. bee-hostkit pins the SDK to one release line.
"""

from mcp.server.connection import Connection
from mcp.server.runner import modern_error_data, serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared._context_streams import ContextSendStream, create_context_streams
from mcp.shared.dispatcher import CallOptions
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
    x_mcp_header_map,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.transport_context import TransportContext

__all__ = [
    "ERROR_CODE_HTTP_STATUS",
    "CallOptions",
    "Connection",
    "ContextSendStream",
    "InboundLadderRejection",
    "TransportContext",
    "TransportSecurityMiddleware",
    "check_accept_headers",
    "classify_inbound_request",
    "create_context_streams",
    "find_duplicated_routing_header",
    "handler_exception_to_error_data",
    "modern_error_data",
    "serve_one",
    "x_mcp_header_map",
]
