"""The stateless fast path: a plain ``tools/call`` or ``tools/list`` answered by the long-lived Host directly.

On the SDK's path every stateless POST builds a transport, a JSON-RPC dispatcher and a server run of its own, goes
through the tracing middleware and the dispatcher's validation, and is serialised through pydantic: about a third
of the CPU a cheap tool call costs. The requests that dominate are single ``tools/call`` and ``tools/list``
requests that pass every check, and for those :class:`FastPath` answers itself:

- **The same checks, mostly the SDK's own functions.** The era comes from the ``MCP-Protocol-Version`` header as
  the session manager routes it (absent or a handshake version: the 2025-11-25 era; a modern version: 2026-07-28;
  anything else goes to the SDK). DNS-rebinding (Host/Origin) and content-type checks run through the SDK's
  ``TransportSecurityMiddleware``; Accept through its ``check_accept_headers``; a modern request's envelope
  (``_meta`` keys, header agreement) through its ``classify_inbound_request`` and duplicate-header check; the params
  through the same per-version surface validation and params model the SDK's kernel uses. The body is parsed as
  each era's transport parses it (the standard library for the modern era, as CheckedBody already did;
  ``pydantic_core`` for the handshake era).
- **The same answer.** The tool runs through :meth:`Host.call` (compiled validation, one rendering, the error
  envelope, admission and deadlines) with the caller read from the request scope. The result is shaped as the
  SDK's per-version sieve shapes it — which top-level keys each version keeps is measured from that sieve when the
  fast path is built — and a modern result gets the ``serverInfo`` stamp. The ``tools/list`` result is produced
  once per protocol version by the SDK's own single-request runner (so the contract stamp and every middleware apply)
  and reused. Success is serialised once with orjson; errors (an unknown tool) through the SDK's models, as the SDK
  writes them, with the SDK's status per era.

Everything else falls through to the SDK, untouched: any other method, batches, notifications, a request that
fails a check (the SDK then refuses it in its own words), an id that is neither a string nor a safe integer,
``Mcp-Param-*`` headers, a handshake-era ``_meta`` with anything but a progress token, a tool whose schema declares
``x-mcp-header``. When in doubt, the SDK answers. Tests compare the two paths' answers for every tracker tool.

Thread hops stay: :meth:`Host.call` runs a plain handler in a worker thread, and the tracker's handlers do blocking
store I/O, so skipping the hop would stall the event loop every connection shares.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import pydantic_core
from mcp.server.connection import Connection
from mcp.server.runner import modern_error_data, serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
    x_mcp_header_map,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    SERVER_INFO_META_KEY,
    ErrorData,
    JSONRPCError,
    RequestId,
)
from mcp_types import methods as _methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from bee_hostkit.http.body import BODY_SCOPE_KEY
from bee_hostkit.results import compact_bytes

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server
    from mcp.shared.dispatcher import CallOptions

    from bee_hostkit.host import Host

logger = logging.getLogger("bee.hostkit.fast")

_FAST_METHODS = ("tools/call", "tools/list")
_ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
#: The params each method may carry on the fast path (anything more: the SDK decides what it means).
_PARAM_KEYS = {"tools/call": frozenset({"name", "arguments", "_meta"}), "tools/list": frozenset({"cursor", "_meta"})}
#: What a handshake-era request's ``_meta`` may carry on the fast path (anything else: the SDK decides).
_LEGACY_META_KEYS = frozenset({"progressToken"})
#: Integer ids beyond this go to the SDK (they round-trip through every JSON library only below it).
_SAFE_ID = 2**53
_PROTOCOL_HEADER = b"mcp-protocol-version"
_PARAM_HEADER_PREFIX = b"mcp-param-"
_JSON_HEADERS = [(b"content-type", b"application/json")]


def _no_caller(scope: Scope) -> str | None:
    return None


@dataclass(frozen=True)
class HostServer:
    """What an HTTP host's build gives when its ``tools/call`` and ``tools/list`` may take the fast path.

    ``server`` must be ``host.build_server()`` (with any extra methods and middleware added): the fast path answers
    as that server would. ``caller_of`` reads the caller from the request scope, as ``host.caller_of`` reads it
    from the SDK's request context.
    """

    server: Server[Any]
    host: Host
    caller_of: Callable[[Scope], str | None] = _no_caller


@dataclass(frozen=True, slots=True)
class _Planned:
    """A request the fast path answers: its era, protocol version, id, method and validated params."""

    modern: bool
    version: str
    id: RequestId
    method: str
    params: Mapping[str, Any] | None
    typed: Any
    client_info: Any = None
    client_capabilities: Any = None


@dataclass
class _ListingContext:
    """The dispatch context the SDK's single-request runner gets when the fast path builds a ``tools/list``
    result: no back-channel, as on the SDK's stateless HTTP entries."""

    request_id: RequestId
    transport: TransportContext = field(
        default_factory=lambda: TransportContext(kind="streamable-http", can_send_request=False)
    )
    message_metadata: None = None
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        del params, opts  # the protocol's parameters; there is no back-channel to use them on
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None) -> None:
        del method, params, opts  # a listing notifies nobody

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None


def _legacy_content_type(value: str) -> bool:
    """The handshake-era transport's own content-type rule (on top of the security check both eras make)."""
    return any(part.strip() == "application/json" for part in value.split(";", maxsplit=1)[0].split(","))


def _usable_id(value: Any) -> bool:
    if type(value) is int:
        return -_SAFE_ID < value < _SAFE_ID
    return type(value) is str


def _dropped_keys(version: str) -> frozenset[str] | None:
    """Which top-level keys of a tool result the SDK's sieve drops at ``version``, or None when it changes more than
    which keys there are (then that version goes to the SDK)."""
    probes = [
        {
            "content": [{"type": "text", "text": '{"k":[null,1]}'}],
            "structuredContent": {"k": [None, 1]},
            "isError": False,
            "resultType": "complete",
        },
        {"content": [{"type": "text", "text": '{"error":"e"}'}], "isError": True, "resultType": "complete"},
    ]
    kept: set[str] = set()
    dropped: set[str] = set()
    for probe in probes:
        try:
            sieved = _methods.serialize_server_result("tools/call", version, dict(probe))
        except (KeyError, ValueError):
            return None
        if not sieved.keys() <= probe.keys() or any(sieved[key] != probe[key] for key in sieved):
            return None
        kept |= sieved.keys()
        dropped |= probe.keys() - sieved.keys()
    return None if kept & dropped else frozenset(dropped)


class FastPath:
    """ASGI app in front of the SDK's stateless app: answers what it can as the SDK would, passes the rest on."""

    def __init__(self, sdk: ASGIApp, served: HostServer, security: TransportSecuritySettings | None) -> None:
        self.sdk = sdk
        self.host = served.host
        self.server = served.server
        self.caller_of = served.caller_of
        self.security = TransportSecurityMiddleware(security)
        #: Requests this path answered (the rest went to the SDK).
        self.answered = 0
        self._entries = {
            method: entry
            for method in _FAST_METHODS
            # A cache hint would add ttlMs/cacheScope to the answer: such a method stays on the SDK's path.
            if (entry := self.server.get_request_handler(method)) is not None and method not in self.server.cache_hints
        }
        # A tool whose schema declares x-mcp-header has its Mcp-Param headers checked by the SDK: its calls go there.
        self._header_tools = frozenset(spec.name for spec in self.host.catalog if x_mcp_header_map(spec.input_schema))
        versions = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
        self._dropped = {version: keys for version in versions if (keys := _dropped_keys(version)) is not None}
        self._stamp = self.server.server_info_stamp
        self._listings: dict[str, bytes] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        carried = scope.get(BODY_SCOPE_KEY)
        planned = await self._plan(scope, carried) if carried is not None else None
        if planned is None or not await self._answer(planned, scope, send):
            await self.sdk(scope, receive, send)
            return
        self.answered += 1

    # -- deciding --------------------------------------------------------------------------------------------------

    async def _plan(self, scope: Scope, carried: tuple[bytes, Any]) -> _Planned | None:
        """The request, when the fast path may answer it; None sends it to the SDK."""
        raw_headers: list[tuple[bytes, bytes]] = scope["headers"]
        # Routed as the session manager routes: on the first MCP-Protocol-Version header.
        header = next((v.decode("latin-1") for k, v in raw_headers if k == _PROTOCOL_HEADER), None)
        if header is None or header in HANDSHAKE_PROTOCOL_VERSIONS:
            modern, version = False, header or DEFAULT_NEGOTIATED_VERSION
        elif header in MODERN_PROTOCOL_VERSIONS:
            modern, version = True, header
        else:
            return None
        if version not in self._dropped:
            return None
        request = Request(scope)
        if await self.security.validate_request(request, is_post=True) is not None:
            return None
        if not check_accept_headers(request)[0]:
            return None
        if modern:
            decoded = carried[1]
        else:
            if not _legacy_content_type(request.headers.get("content-type", "")):
                return None
            try:
                decoded = pydantic_core.from_json(carried[0])
            except ValueError:
                return None
        if not isinstance(decoded, dict) or not decoded.keys() <= _ENVELOPE_KEYS or decoded.get("jsonrpc") != "2.0":
            return None
        request_id, method, params = decoded.get("id"), decoded.get("method"), decoded.get("params")
        if not _usable_id(request_id) or method not in self._entries:
            return None
        if params is None:
            if method != "tools/list" or "params" in decoded:
                return None
        elif not isinstance(params, dict) or not params.keys() <= _PARAM_KEYS[method]:
            return None
        client_info = client_capabilities = None
        if modern:
            if any(name.startswith(_PARAM_HEADER_PREFIX) for name, _ in raw_headers):
                return None
            if find_duplicated_routing_header(request.headers.items()) is not None:
                return None
            verdict = classify_inbound_request(decoded, headers=dict(request.headers))
            if isinstance(verdict, InboundLadderRejection):
                return None
            client_info, client_capabilities = verdict.client_info, verdict.client_capabilities
        elif params is not None and "_meta" in params:
            meta = params["_meta"]
            if not isinstance(meta, dict) or not meta.keys() <= _LEGACY_META_KEYS:
                return None
        try:
            # The kernel's two checks: the version's request surface, then the handler's params model.
            _methods.validate_client_request(method, version, params)
            typed: Any = self._entries[method].params_type.model_validate(
                {} if params is None else params, by_name=False
            )
        except (KeyError, ValueError):  # pydantic's ValidationError is a ValueError
            return None
        if method == "tools/call" and typed.name in self._header_tools:
            return None
        assert isinstance(request_id, int | str)
        return _Planned(modern, version, request_id, method, params, typed, client_info, client_capabilities)

    # -- answering -------------------------------------------------------------------------------------------------

    async def _answer(self, planned: _Planned, scope: Scope, send: Send) -> bool:
        """Answer ``planned``; False (nothing sent, nothing run) sends it to the SDK after all."""
        head = b'{"jsonrpc":"2.0","id":' + compact_bytes(planned.id) + b',"result":'
        if planned.method == "tools/list":
            listing = await self._listing(planned)
            if listing is None:
                return False
            await _send(send, 200, head + listing + b"}")
            return True
        typed = planned.typed
        try:
            wire = await self.host.call(typed.name, typed.arguments, caller=self.caller_of(scope))
        except Exception as exc:
            await _send(send, *self._error(planned, exc))
            return True
        wire["resultType"] = "complete"  # as the host's SDK handler adds it; the sieve keeps it where it belongs
        dropped = self._dropped[planned.version]
        result = {key: value for key, value in wire.items() if key not in dropped}
        if planned.modern:
            meta = result.get("_meta")
            if meta is None:
                result["_meta"] = {SERVER_INFO_META_KEY: self._stamp}
            elif isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None:
                result["_meta"] = {**meta, SERVER_INFO_META_KEY: self._stamp}
        await _send(send, 200, head + compact_bytes(result) + b"}")
        return True

    async def _listing(self, planned: _Planned) -> bytes | None:
        """The serialised ``tools/list`` result at ``planned.version``, made once by the SDK's own runner."""
        cached = self._listings.get(planned.version)
        if cached is not None:
            return cached
        connection = Connection.from_envelope(planned.version, planned.client_info, planned.client_capabilities)
        try:
            result = await serve_one(
                self.server,
                _ListingContext(planned.id),
                "tools/list",
                planned.params,
                connection=connection,
                lifespan_state={},
            )
        except Exception:
            logger.exception("the fast path could not build the tools/list result; the SDK answers instead")
            return None
        cached = self._listings[planned.version] = compact_bytes(result)
        return cached

    def _error(self, planned: _Planned, exc: Exception) -> tuple[int, bytes]:
        """A JSON-RPC error answer exactly as the SDK writes it in ``planned``'s era."""
        if planned.modern:
            # The modern entry: the shared ladder, a status per code, the standard library's JSON.
            message = JSONRPCError(jsonrpc="2.0", id=planned.id, error=modern_error_data(exc))
            status = ERROR_CODE_HTTP_STATUS.get(message.error.code, 200)
            body = message.model_dump(mode="json", by_alias=True, exclude_none=True)
            return status, json.dumps(body, separators=(",", ":")).encode()
        # The handshake-era dispatcher: the same ladder, and code 0 with the message for anything else.
        error = handler_exception_to_error_data(exc)
        if error is None:
            logger.exception("handler for 'tools/call' raised")
            error = ErrorData(code=0, message=str(exc))
        return 200, _model_json(JSONRPCError(jsonrpc="2.0", id=planned.id, error=error))


def _model_json(model: BaseModel) -> bytes:
    return model.model_dump_json(by_alias=True, exclude_unset=True).encode()


async def _send(send: Send, status: int, body: bytes) -> None:
    headers = [*_JSON_HEADERS, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
