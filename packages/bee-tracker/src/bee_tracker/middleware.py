"""Bearer-token authentication as plain ASGI (no buffering of the streamed response)."""

from __future__ import annotations

import json
import logging

from starlette.types import ASGIApp, Receive, Scope, Send

from bee_tracker.auth import AuthError, Verifier

logger = logging.getLogger("bee.tracker.auth")

#: Where the verified actor travels with the request, for the host to read.
ACTOR_SCOPE_KEY = "bee.actor"


class BearerAuth:
    """Every request must carry ``Authorization: Bearer <JWT>`` that the verifier accepts; else 401."""

    def __init__(self, app: ASGIApp, verifier: Verifier, realm: str = "bee-tracker") -> None:
        self.app = app
        self.verifier = verifier
        self.realm = realm

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            await self._refuse(send, "missing bearer token", error=None)
            return
        try:
            actor = self.verifier.actor(token.strip())
        except AuthError as exc:
            # The reason is safe to log and return; the token itself never is.
            logger.info("refused a token: %s", exc)
            await self._refuse(send, str(exc), error="invalid_token")
            return
        scope[ACTOR_SCOPE_KEY] = actor
        await self.app(scope, receive, send)

    async def _refuse(self, send: Send, description: str, *, error: str | None) -> None:
        challenge = f'Bearer realm="{self.realm}"'
        if error:
            challenge += f', error="{error}", error_description="{description}"'
        body = json.dumps({"error": error or "unauthorized", "error_description": description}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"www-authenticate", challenge.encode("latin-1")),
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
