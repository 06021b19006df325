"""What every board response carries, and which requests the board answers at all, as plain ASGI.

Headers: a strict Content-Security-Policy (everything from this origin only; no inline script or style, no
``eval``, no plugins, no framing, forms post only here), ``X-Frame-Options: DENY``, ``Referrer-Policy:
same-origin`` (no address of a board page ever reaches another site; ``no-referrer`` would also make browsers
send ``Origin: null`` with the board's own forms, which the CSRF check reads), ``X-Content-Type-Options:
nosniff``, a same-origin opener and resource policy, a Permissions-Policy that turns off what the board never
uses, and ``Cache-Control: no-store`` (pages show who is signed in and hold
CSRF tokens; the vendored library and stylesheet may be cached). A response that sets one of these itself (the
graph's SVG, with an even stricter policy) keeps its own.

Requests: the ``Host`` header must name the tracker (its bound address, ``localhost``, ``127.0.0.1``, ``[::1]`` or
an ``--allowed-host``), as the MCP endpoint requires too, so a DNS-rebinding page cannot reach the board; anything
else is answered 421 before the board runs.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()"),
)
_NO_STORE = (b"cache-control", b"no-store")
_CACHEABLE_PREFIX = "/static/"


def host_name(header: str) -> str:
    """The name part of a Host header: ``example.com:8765`` → ``example.com``, ``[::1]:80`` → ``[::1]``."""
    if header.startswith("["):
        return header[: header.find("]") + 1] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class BoardHeaders:
    """Refuse unknown hosts (421) and add the security headers to every response of the wrapped app."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(name.lower() for name in allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        if host_name(host).lower() not in self.allowed:
            body = b"This tracker does not answer for that host name (see --allowed-host)."
            await send(
                {
                    "type": "http.response.start",
                    "status": 421,
                    "headers": [
                        *HEADERS,
                        _NO_STORE,
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        cacheable = (
            str(scope.get("path", "")).removeprefix(str(scope.get("root_path", ""))).startswith(_CACHEABLE_PREFIX)
        )

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                added = [(n, v) for n, v in (*HEADERS, *(() if cacheable else (_NO_STORE,))) if n not in present]
                message = {**message, "headers": [*message.get("headers", []), *added]}
            await send(message)

        await self.app(scope, receive, with_headers)
