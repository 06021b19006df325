"""Bearer-token authentication as plain ASGI (no buffering of the streamed response).

Every refusal is a 401 whose ``WWW-Authenticate`` challenge is quoted per RFC 6750: its error_description holds
only %x20-21 / %x23-5B / %x5D-7E, so no token text can end the header, start a new one or add a parameter.
"""

from __future__ import annotations

import json
import logging

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from bee_tracker.auth import AuthError, Verifier, shown

logger = logging.getLogger("bee.tracker.auth")

#: Where the verified actor travels with the request, for the host to read.
ACTOR_SCOPE_KEY = "bee.actor"


def challenge(realm: str, error: str | None, description: str) -> bytes:
    """A ``Bearer`` challenge whose quoted values can hold nothing but RFC 6750's allowed characters."""
    params = [f'realm="{shown(realm, 64)}"']
    if error:
        params += [f'error="{shown(error, 64)}"', f'error_description="{shown(description, 256)}"']
    return ("Bearer " + ", ".join(params)).encode("ascii")


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
            if self.verifier.fetches_keys:
                # A JWKS URL may be fetched (with a timeout): never on the event loop every request shares.
                actor = await anyio.to_thread.run_sync(self.verifier.actor, token.strip())
            else:
                actor = self.verifier.actor(token.strip())
        except AuthError as exc:
            # The reason is sanitized and bounded by the verifier; the token itself is never logged.
            logger.info("refused a token: %s", exc)
            await self._refuse(send, str(exc), error="invalid_token")
            return
        except Exception as exc:
            # A library failing on a hostile token is still a refused token, never a 500 or a dropped connection.
            # Its message may quote the token, so only the exception's type is logged.
            logger.warning("refused a token the verifier failed on (%s)", type(exc).__name__)
            await self._refuse(send, "the token could not be verified", error="invalid_token")
            return
        scope[ACTOR_SCOPE_KEY] = actor
        await self.app(scope, receive, send)

    async def _refuse(self, send: Send, description: str, *, error: str | None) -> None:
        body = json.dumps({"error": error or "unauthorized", "error_description": description}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"www-authenticate", challenge(self.realm, error, description)),
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
