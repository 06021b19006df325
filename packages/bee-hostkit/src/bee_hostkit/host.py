"""Build an MCP server from a catalog and plain handler functions.

A :class:`Host` is the transport-free core of every Bee host: it lists the catalog exactly, validates each call's
arguments against the tool's inputSchema, hands the handler one :class:`~bee_hostkit.call.Call` (typed arguments,
deadline, caller) off the event loop, guards the result at the 256 KiB limit and maps every failure to the
contracts' error envelope. :meth:`Host.build_server` wraps it in
the SDK's low-level ``Server`` (both protocol eras). No transport is named here: :mod:`bee_hostkit.stdio` serves a
host over capped stdio (or warm, over a Unix socket), :mod:`bee_hostkit.http` over Streamable HTTP.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError

from bee_contracts import BeeError, ErrorCode, ToolSpec, version_info, wire
from bee_contracts.limits import DEFAULT_DEADLINE_SECONDS
from bee_contracts.wire import CONTRACT_META_KEY
from bee_hostkit import results, threads
from bee_hostkit.call import Call
from bee_hostkit.deadline import Deadline
from bee_hostkit.validation import SchemaValidator

logger = logging.getLogger("bee.hostkit")

#: A tool handler: one validated call in, structured content out. Raise BeeError to fail. A plain function runs
#: in a worker thread; a coroutine function (a handler that only awaits other async work) runs on the event loop.
Handler = Callable[[Call[Any]], Mapping[str, Any]] | Callable[[Call[Any]], Awaitable[Mapping[str, Any]]]
_SyncHandler = Callable[[Call[Any]], Mapping[str, Any]]
_AsyncHandler = Callable[[Call[Any]], Awaitable[Mapping[str, Any]]]
#: Reads the verified caller of a request (for example the JWT's actor) from its ASGI scope: an HTTP request's, as
#: its authentication middleware left it. A stdio request has no scope, and no caller.
CallerOf = Callable[[Mapping[str, Any]], str | None]

#: Extra time a handler thread gets past its deadline before the host answers without it.
GRACE_SECONDS = 1.0

_STAMPED_METHODS = frozenset({"initialize", "server/discover", "tools/list"})


@dataclass
class Host:
    """One host's tools: the catalog (the contract) and the handlers that implement it."""

    name: str
    catalog: Sequence[ToolSpec]
    handlers: Mapping[str, Handler]
    title: str | None = None
    instructions: str | None = None
    deadlines: Mapping[str, float] = field(default_factory=dict)
    #: How :meth:`answer` reads the caller from a request's ASGI scope (None: calls have no caller).
    caller_of: CallerOf | None = None
    #: For a view (the discovery view): the host it shows, and the tool that calls one of that host's tools by the
    #: name in its ``name`` argument. A warm host's front end reads them to tell a read in flight from a write.
    viewed: Host | None = None
    dispatcher: str | None = None

    def __post_init__(self) -> None:
        listed = [spec.name for spec in self.catalog]
        missing = sorted(set(listed) - set(self.handlers))
        extra = sorted(set(self.handlers) - set(listed))
        if missing or extra:
            # A catalog holds only tools that work, and a handler without a catalog entry is unreachable.
            raise ValueError(f"{self.name}: catalog and handlers disagree (no handler: {missing}; not listed: {extra})")
        self._specs = {spec.name: spec for spec in self.catalog}
        self._validators = {spec.name: SchemaValidator(spec.name, spec.input_schema) for spec in self.catalog}
        self._tools = [types.Tool.model_validate(spec.to_wire(), by_name=False) for spec in self.catalog]

    @property
    def version(self) -> dict[str, str]:
        return version_info()

    def server_info(self) -> dict[str, str]:
        """The ``serverInfo`` every session is given: name, title, version and the contract in the description."""
        version = self.version
        info = {
            "name": self.name,
            "version": version["version"],
            "description": f"contract {version['contractVersion']} {version['contractDigest']}",
        }
        if self.title:
            info["title"] = self.title
        return info

    def read_only(self) -> list[str]:
        """The names of the tools whose catalog entry says ``readOnlyHint: true``, in catalog order."""
        return [spec.name for spec in self.catalog if spec.annotations["readOnlyHint"]]

    def list_tools(self) -> list[types.Tool]:
        """The catalog as SDK tool models, in catalog order."""
        return list(self._tools)

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        spec = self._specs.get(name)
        return spec.input_schema if spec else None

    async def answer(
        self, name: str, arguments: Mapping[str, Any] | None, scope: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The answer to one ``tools/call``: :meth:`call` for the caller read from ``scope``, marked complete.

        The one way a ``tools/call`` is answered: the SDK's route (:meth:`build_server`) and the HTTP fast path
        (:mod:`bee_hostkit.http.fast`) both call this, with the request's ASGI scope (None over stdio).

        Raises:
            MCPError: -32602 for a tool that is not in the catalog.
        """
        caller = self.caller_of(scope) if self.caller_of is not None and scope is not None else None
        return wire.complete(await self.call(name, arguments, caller=caller))

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, *, caller: str | None = None
    ) -> dict[str, Any]:
        """Run one tool call and return the wire form of its result (never raises for tool failures).

        Raises:
            MCPError: -32602 for a tool that is not in the catalog (a protocol error, not a tool failure).
        """
        if name not in self._specs:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown tool {name!r}; this host serves: {', '.join(self._specs)}",
            )
        try:
            return results.render(await self.execute(name, arguments, caller=caller))
        except BeeError as failure:
            return results.render_error(failure)

    async def execute(
        self, name: str, arguments: Mapping[str, Any] | None, *, caller: str | None = None
    ) -> Mapping[str, Any]:
        """Validate and run one call of a listed tool; the one path every call takes.

        :meth:`call` renders what this returns or raises (the 256 KiB guard is part of rendering, counted on the
        bytes that are sent); the discovery view's invoke returns it as its own answer, rendered and guarded the
        same way, so a tool gives the same answer whichever way it is reached.

        Raises:
            BeeError: the tool's failure (``invalid_argument`` for arguments its schema refuses, ``deadline_exceeded``,
                or ``internal`` for an unexpected fault, whose details stay in the log).
            KeyError: ``name`` is not in the catalog (callers check first).
        """
        spec = self._specs[name]
        try:
            args = self._validators[name].validate(arguments)
            return await self._run(spec, args, caller)
        except BeeError:
            raise
        except Exception:
            # Handler internals never reach the wire: the log has the trace, the caller a safe message.
            logger.exception("tool %s failed unexpectedly", name)
            raise BeeError(
                ErrorCode.INTERNAL,
                f"{name} failed unexpectedly; the host log has the details",
                outcome_unknown=not spec.annotations["readOnlyHint"],
            ) from None

    async def _run(self, spec: ToolSpec, args: dict[str, Any], caller: str | None) -> Mapping[str, Any]:
        seconds = self.deadlines.get(spec.name, DEFAULT_DEADLINE_SECONDS)
        call = Call(spec.name, args, Deadline(seconds), caller)
        handler = self.handlers[spec.name]
        outcome: Mapping[str, Any] | None = None
        with anyio.move_on_after(seconds + GRACE_SECONDS):
            if inspect.iscoroutinefunction(handler):
                outcome = await cast(_AsyncHandler, handler)(call)
            else:
                outcome = await threads.run_sync(cast(_SyncHandler, handler), call)
        if outcome is None:
            # The handler is still running in its thread: for a write, whether it lands is unknown.
            raise BeeError(
                ErrorCode.DEADLINE_EXCEEDED,
                f"{spec.name} did not finish within its {seconds:g}-second deadline; nothing partial was delivered",
                outcome_unknown=not spec.annotations["readOnlyHint"],
            )
        return outcome

    def build_server(self) -> Server[Any]:
        """An SDK low-level server for this host, serving both protocol eras."""
        version = self.version

        async def on_list_tools(
            ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return types.ListToolsResult(tools=self.list_tools())

        async def on_call_tool(
            ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
        ) -> dict[str, Any]:
            # The wire dict itself, not a CallToolResult: the SDK takes a request handler's dict as the result, so
            # the structured content is not validated into pydantic models and dumped back out on every call. Over
            # HTTP the request is Starlette's, whose scope the authentication middleware wrote the caller into.
            return await self.answer(params.name, params.arguments, getattr(ctx.request, "scope", None))

        info = self.server_info()
        server: Server[Any] = Server(
            info["name"],
            version=info["version"],
            title=self.title,
            description=info["description"],
            instructions=self.instructions,
            on_list_tools=on_list_tools,
            get_tool_input_schema=self.input_schema,
        )
        server.add_request_handler("tools/call", types.CallToolRequestParams, on_call_tool)
        server.middleware.append(ContractStamp(version))
        return server


class ContractStamp:
    """Middleware adding the version triple to ``_meta`` of initialize, discover and tools/list results."""

    def __init__(self, version: dict[str, str]) -> None:
        self.version = version

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method in _STAMPED_METHODS and isinstance(result, dict):
            meta = result.get("_meta")
            result["_meta"] = {**(meta if isinstance(meta, dict) else {}), CONTRACT_META_KEY: dict(self.version)}
        return result
