"""Streamable HTTP transport glue: the SDK's stateless session manager in a Starlette app.

The app answers ``POST /mcp`` in both protocol eras, refuses a bare ``GET /mcp`` with 405 (the SDK would open an
SSE stream that never sends a byte), caps request bodies (413), enforces DNS-rebinding protection, and runs the
session manager in the app's lifespan. Extra ASGI wrappers (authentication) go around the MCP endpoint only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from bee_contracts.limits import MAX_FRAME_BYTES

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


def local_security(host: str, port: int | None = None, extra_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection that accepts the bound address, localhost names and ``extra_hosts``."""
    names = {host, "127.0.0.1", "localhost", "[::1]", *extra_hosts}
    allowed_hosts = [f"{name}:*" for name in names] + list(names)
    origins = [f"{scheme}://{name}:*" for name in names for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts, allowed_origins=origins
    )


def mcp_http_app(
    server: Server[Any],
    *,
    path: str = "/mcp",
    security: TransportSecuritySettings,
    wrappers: Sequence[Wrapper] = (),
    routes: Sequence[BaseRoute] = (),
    max_body_bytes: int = MAX_FRAME_BYTES,
    json_response: bool = True,
    on_startup: Callable[[], None] | None = None,
    on_shutdown: Callable[[], None] | None = None,
) -> Starlette:
    """A Starlette app serving ``server`` statelessly at ``path``, plus ``routes``.

    ``on_startup`` runs before the app accepts requests (uvicorn waits for the lifespan), so a failing store
    check keeps the server from listening at all.
    """
    manager = StreamableHTTPSessionManager(
        app=server,
        stateless=True,
        json_response=json_response,
        security_settings=security,
        max_request_body_size=max_body_bytes,
    )
    endpoint: ASGIApp = StreamableHTTPASGIApp(manager)
    for wrap in reversed(list(wrappers)):
        endpoint = wrap(endpoint)
    endpoint = PostOnly(endpoint)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if on_startup is not None:
            on_startup()
        try:
            async with manager.run():
                yield
        finally:
            if on_shutdown is not None:
                on_shutdown()

    return Starlette(routes=[Route(path, endpoint=endpoint, methods=None), *routes], lifespan=lifespan)
