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
- **The same answer.** A ``tools/call`` is answered by :meth:`Host.answer`, the function the SDK's route answers with
  (compiled validation, one rendering, the error envelope, deadlines, the caller read from the request scope by the
  host's one reader, ``resultType`` set). The result is shaped as the SDK's per-version sieve shapes it — which
  top-level keys each version keeps is measured from that sieve when the fast path is built — and a modern result gets
  the ``serverInfo`` stamp. The ``tools/list`` result is produced once per protocol version by the SDK's own
  single-request runner (so the contract stamp and every middleware apply) and reused. Success is serialised once with
  orjson; errors (an unknown tool) through the SDK's models, as the SDK writes them, with the SDK's status per era.

Everything else falls through to the SDK, untouched: any other method, batches, notifications, a request that
fails a check (the SDK then refuses it in its own words), an id that is neither a string nor a safe integer,
``Mcp-Param-*`` headers, a handshake-era ``_meta`` with anything but a progress token, a tool whose schema declares
``x-mcp-header``. When in doubt, the SDK answers. Tests compare the two paths' answers for every tracker tool.

Admission is the edge's (:mod:`.edge`): a request is counted there, once, before it reaches either path.

Thread hops stay: :meth:`Host.call` runs a plain handler in a worker thread, and the tracker's handlers do blocking
store I/O, so skipping the hop would stall the event loop every connection shares.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import anyio
import pydantic_core
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import NoBackChannelError
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

from bee_contracts import wire
from bee_hostkit._sdk import (
    ERROR_CODE_HTTP_STATUS,
    Connection,
    InboundLadderRejection,
    TransportContext,
    TransportSecurityMiddleware,
    check_accept_headers,
    classify_inbound_request,
    find_duplicated_routing_header,
    handler_exception_to_error_data,
    modern_error_data,
    serve_one,
    x_mcp_header_map,
)
from bee_hostkit.http.body import BODY_SCOPE_KEY
from bee_hostkit.results import compact_bytes

if TYPE_CHECKING:
    from mcp.server import Server

    from bee_hostkit._sdk import CallOptions
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


@dataclass(frozen=True)
class HostServer:
    """What an HTTP host's build gives when its ``tools/call`` and ``tools/list`` may take the fast path.

    ``server`` must be ``host.build_server()`` (with any extra methods and middleware added): the fast path answers
    as that server would, through the same :meth:`Host.answer` (which reads the caller with ``host.caller_of``).
    """

    server: Server[Any]
    host: Host


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


def _era(raw_headers: list[tuple[bytes, bytes]]) -> tuple[bool, str] | None:
    """Whether the request is of the modern era, and its protocol version, routed as the session manager routes: on
    the first MCP-Protocol-Version header (absent or a handshake version: the handshake era). None: neither era's."""
    header = next((v.decode("latin-1") for k, v in raw_headers if k == _PROTOCOL_HEADER), None)
    if header is None or header in HANDSHAKE_PROTOCOL_VERSIONS:
        return False, header or DEFAULT_NEGOTIATED_VERSION
    if header in MODERN_PROTOCOL_VERSIONS:
        return True, header
    return None


def _decoded(request: Request, carried: tuple[bytes, Any], modern: bool) -> Any:
    """The body as the era's transport parses it: the standard library's parse CheckedBody made (modern), or
    ``pydantic_core``'s after the handshake-era content-type rule. None when that transport would refuse it."""
    if modern:
        return carried[1]
    if not _legacy_content_type(request.headers.get("content-type", "")):
        return None
    try:
        return pydantic_core.from_json(carried[0])
    except ValueError:
        return None


def _envelope(decoded: Any, methods: Mapping[str, Any]) -> tuple[RequestId, str, dict[str, Any] | None] | None:
    """The id, method and params of one JSON-RPC request to one of ``methods`` whose params hold only what the fast
    path knows; None otherwise (a batch, a notification, an unusable id, other keys)."""
    if not isinstance(decoded, dict) or not decoded.keys() <= _ENVELOPE_KEYS or decoded.get("jsonrpc") != "2.0":
        return None
    request_id, method, params = decoded.get("id"), decoded.get("method"), decoded.get("params")
    if not _usable_id(request_id) or method not in methods:
        return None
    known = cast(tuple[RequestId, str], (request_id, method))  # a string or safe integer id; a method of methods
    if params is None:
        # Only tools/list may go without params, and only by leaving the key out.
        return (*known, None) if method == "tools/list" and "params" not in decoded else None
    if not isinstance(params, dict) or not params.keys() <= _PARAM_KEYS[known[1]]:
        return None
    return (*known, params)


def _modern_peer(
    decoded: dict[str, Any], request: Request, raw_headers: list[tuple[bytes, bytes]]
) -> tuple[Any, Any] | None:
    """A modern request's client info and capabilities, read from its envelope by the SDK's own ladder; None when
    the SDK decides (``Mcp-Param-*`` headers, a routing header given twice, a rung that refuses)."""
    if any(name.startswith(_PARAM_HEADER_PREFIX) for name, _ in raw_headers):
        return None
    if find_duplicated_routing_header(request.headers.items()) is not None:
        return None
    verdict = classify_inbound_request(decoded, headers=dict(request.headers))
    if isinstance(verdict, InboundLadderRejection):
        return None
    return verdict.client_info, verdict.client_capabilities


def _legacy_peer(params: Mapping[str, Any] | None) -> tuple[None, None] | None:
    """A handshake-era request has no peer in its envelope; None when its ``_meta`` holds more than a progress token
    (then the SDK decides what it means)."""
    meta = params.get("_meta", {}) if params is not None else {}
    return (None, None) if isinstance(meta, dict) and meta.keys() <= _LEGACY_META_KEYS else None


def _dropped_keys(version: str) -> frozenset[str] | None:
    """Which top-level keys of a tool result the SDK's sieve drops at ``version``, or None when it changes more than
    which keys there are (then that version goes to the SDK)."""
    probes = [
        wire.complete(
            {
                "content": [{"type": "text", "text": '{"k":[null,1]}'}],
                "structuredContent": {"k": [None, 1]},
                "isError": False,
            }
        ),
        wire.complete({"content": [{"type": "text", "text": '{"error":"e"}'}], "isError": True}),
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
        """The request, when the fast path may answer it; None sends it to the SDK.

        The checks run in the order the SDK's transport and kernel run theirs: the era, the transport's own checks,
        the body as that era parses it, the envelope, the peer (a modern request's ``_meta``), then the params.
        """
        era = _era(scope["headers"])
        if era is None or era[1] not in self._dropped:
            return None
        modern, version = era
        request = Request(scope)
        if not await self._transport_accepts(request):
            return None
        decoded = _decoded(request, carried, modern)
        envelope = _envelope(decoded, self._entries)
        if envelope is None:
            return None
        request_id, method, params = envelope
        peer = _modern_peer(decoded, request, scope["headers"]) if modern else _legacy_peer(params)
        typed = self._typed(method, version, params) if peer is not None else None
        if peer is None or typed is None:
            return None
        return _Planned(modern, version, request_id, method, params, typed, *peer)

    async def _transport_accepts(self, request: Request) -> bool:
        """The SDK transport's own checks: DNS rebinding and the content type, then Accept."""
        if await self.security.validate_request(request, is_post=True) is not None:
            return False
        return bool(check_accept_headers(request)[0])

    def _typed(self, method: str, version: str, params: Mapping[str, Any] | None) -> Any:
        """The params as the handler's model holds them, after the kernel's two checks (the version's request
        surface, then the model); None sends the request to the SDK (so does a tool with ``x-mcp-header``)."""
        try:
            _methods.validate_client_request(method, version, params)
            typed: Any = self._entries[method].params_type.model_validate(
                {} if params is None else params, by_name=False
            )
        except (KeyError, ValueError):  # pydantic's ValidationError is a ValueError
            return None
        if method == "tools/call" and typed.name in self._header_tools:
            return None
        return typed

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
            answer = await self.host.answer(typed.name, typed.arguments, scope)
        except Exception as exc:
            await _send(send, *self._error(planned, exc))
            return True
        await _send(send, 200, head + compact_bytes(self._sieved(planned, answer)) + b"}")
        return True

    def _sieved(self, planned: _Planned, answer: dict[str, Any]) -> dict[str, Any]:
        """``answer`` as the SDK's sieve leaves it at ``planned``'s version, stamped with ``serverInfo`` when modern."""
        dropped = self._dropped[planned.version]
        result = {key: value for key, value in answer.items() if key not in dropped}
        if planned.modern:
            meta = result.get("_meta")
            if meta is None:
                result["_meta"] = {SERVER_INFO_META_KEY: self._stamp}
            elif isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None:
                result["_meta"] = {**meta, SERVER_INFO_META_KEY: self._stamp}
        return result

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
