"""Streamable HTTP transport glue: the SDK's stateless session manager in a Starlette app.

The app answers ``POST /mcp`` in both protocol eras, refuses a bare ``GET /mcp`` with 405 (the SDK would open an
SSE stream that never sends a byte), caps request bodies (413), answers a request whose id is unusable itself (the
SDK would take it for a notification and never answer), enforces DNS-rebinding protection, and runs the session
manager in the app's lifespan. When the build gives a :class:`~bee_hostkit.http.fast.HostServer`, single
``tools/call`` and ``tools/list`` requests take the fast path (:mod:`.fast`), with the same answers. Extra
ASGI wrappers (authentication) go around the MCP endpoint only, so nothing is read from an unauthenticated
request's body. Limits that must hold before ASGI runs are in :mod:`.edge`.

The SDK is imported, and the MCP server built, in the background once the app has started (:mod:`.deferred`):
the other routes (``/health``) answer meanwhile, and an MCP request that comes sooner waits for it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from bee_contracts.limits import MAX_FRAME_BYTES
from bee_hostkit.http.body import CheckedBody
from bee_hostkit.http.deferred import Built, Deferred, started

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.transport_security import TransportSecuritySettings

    from bee_hostkit.http.fast import HostServer


#: Wraps an ASGI app (for example with authentication).
Wrapper = Callable[[ASGIApp], ASGIApp]


class PostOnly:
    """Answers anything but POST with 405 before it reaches the SDK."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] != "POST":
            body = b'{"error":"method_not_allowed","error_description":"MCP requests are POSTed to this path"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 405,
                    "headers": [
                        (b"allow", b"POST"),
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def local_security(hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection that accepts localhost names and ``hosts`` (each with any port)."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = {"127.0.0.1", "localhost", "[::1]", *hosts}
    allowed_hosts = [f"{name}:*" for name in names] + list(names)
    origins = [f"{scheme}://{name}:*" for name in names for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts, allowed_origins=origins
    )


def mcp_http_app(
    build: Callable[[], Server[Any] | HostServer],
    *,
    path: str = "/mcp",
    hosts: Sequence[str] = (),
    wrappers: Sequence[Wrapper] = (),
    routes: Sequence[BaseRoute] = (),
    deferred: Sequence[Deferred] = (),
    max_body_bytes: int = MAX_FRAME_BYTES,
    json_response: bool = True,
    fast_path: bool | None = None,
    on_startup: Callable[[], None] | None = None,
    on_shutdown: Callable[[], None] | None = None,
) -> Starlette:
    """A Starlette app serving the SDK server ``build`` makes statelessly at ``path``, plus ``routes``.

    ``build`` runs in a worker thread once the app has started, with the other ``deferred`` apps; requests to
    ``path`` wait for it. DNS-rebinding protection accepts localhost names and ``hosts``. ``on_startup`` runs before
    the app accepts requests (uvicorn waits for the lifespan), so a failing store check keeps the server from
    listening at all.

    When ``build`` gives a :class:`~bee_hostkit.http.fast.HostServer` (and ``json_response`` is on), single
    ``tools/call`` and ``tools/list`` requests are answered by its host on the fast path; ``fast_path=False`` (or
    ``BEE_HTTP_FAST_PATH=0`` in the environment, for tests that compare the two) sends everything to the SDK. The
    fast path, once built, is ``app.state.fast_path`` (None otherwise).
    """
    if fast_path is None:
        fast_path = os.environ.get("BEE_HTTP_FAST_PATH", "1") != "0"

    def endpoint() -> Built:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

        from bee_hostkit.http.fast import FastPath, HostServer

        made = build()
        server = made.server if isinstance(made, HostServer) else made
        security = local_security(hosts)
        manager = StreamableHTTPSessionManager(
            app=server,
            stateless=True,
            json_response=json_response,
            security_settings=security,
            max_request_body_size=max_body_bytes,
        )
        sdk: ASGIApp = StreamableHTTPASGIApp(manager)
        if isinstance(made, HostServer) and fast_path and json_response:
            sdk = app.state.fast_path = FastPath(sdk, made, security)
        return sdk, manager.run()

    mcp = Deferred(f"the MCP endpoint {path}", endpoint)
    inner: ASGIApp = CheckedBody(mcp, max_body_bytes)
    for wrap in reversed(list(wrappers)):
        inner = wrap(inner)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if on_startup is not None:
            on_startup()
        try:
            async with started([mcp, *deferred]):
                yield
        finally:
            if on_shutdown is not None:
                on_shutdown()

    app = Starlette(routes=[Route(path, endpoint=PostOnly(inner), methods=None), *routes], lifespan=lifespan)
    app.state.deferred = (mcp, *deferred)
    app.state.fast_path = None
    return app
