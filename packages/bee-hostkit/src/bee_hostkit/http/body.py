"""A POST body read once, capped, and checked for an id a request may carry, before the MCP app sees it.

Its own module so that both the app glue (:mod:`.app`) and the fast path (:mod:`.fast`) can use it
without the SDK: the fast path reads what was parsed here (``BODY_SCOPE_KEY``) instead of parsing again.
"""

from __future__ import annotations

import json
from collections import deque

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bee_contracts.framing import invalid_id_error
from bee_contracts.wire import INVALID_REQUEST, error_frame

#: Where CheckedBody leaves the body it read for the app behind it: ``(bytes, parsed)``, parsed None if not JSON.
BODY_SCOPE_KEY = "bee.body"


async def _send_json(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class CheckedBody:
    """Reads a POST body up to ``max_body_bytes`` (413 beyond it) and answers unusable request ids with -32600.

    The body is parsed once here and, when it passes, replayed to the app unchanged; the bytes and what they parsed
    to travel in the scope under ``BODY_SCOPE_KEY`` for the fast path. A body that is not JSON goes through as it
    is: the SDK answers it with its own parse error.
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._too_large(send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before its request was complete: there is nothing to answer
            body += message.get("body", b"")
            if len(body) > self.max_body_bytes:
                await self._too_large(send)
                return
            if not message.get("more_body", False):
                break
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError):
            parsed = None
        error = invalid_id_error(parsed)
        if error is not None:
            await _send_json(send, 400, error)
            return
        data = bytes(body)
        scope[BODY_SCOPE_KEY] = (data, parsed)
        replay: deque[Message] = deque([{"type": "http.request", "body": data, "more_body": False}])

        async def replayed() -> Message:
            return replay.popleft() if replay else await receive()

        await self.app(scope, replayed, send)

    async def _too_large(self, send: Send) -> None:
        message = f"the request body exceeds the limit of {self.max_body_bytes} bytes"
        await _send_json(send, 413, error_frame(None, INVALID_REQUEST, message))
