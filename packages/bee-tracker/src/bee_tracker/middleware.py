"""Bearer-token authentication as plain ASGI (no buffering of the streamed response).

Every refusal is a 401 (no usable token) or a 403 (a token without a scope the request needs) whose
``WWW-Authenticate`` challenge is quoted per RFC 6750: its quoted values hold only %x20-21 / %x23-5B / %x5D-7E, so
no token text can end the header, start a new one or add a parameter. In a sign-in mode the challenge also names
the protected resource metadata and the scopes to ask for (:mod:`bee_tracker.oauth.resource`), before the error,
so a client that looks for the first ``scope=`` finds that one.

A token that carries every scope ``/mcp`` knows costs nothing more; one with fewer makes the request body be read
(within the frame limit) to see whether it calls a tool that writes (:func:`bee_tracker.oauth.scopes.needed`), and
the body is then handed on unchanged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import anyio.to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bee_contracts.limits import MAX_FRAME_BYTES
from bee_tracker.auth import AuthError, Verifier, shown
from bee_tracker.oauth import origin, scopes
from bee_tracker.oauth.resource import TOKEN, SignIn
from bee_tracker.oauth.tokens import Principal, UnknownKey

logger = logging.getLogger("bee.tracker.auth")

#: Where the verified actor travels with the request, for the host to read.
ACTOR_SCOPE_KEY = "bee.actor"
#: Where the verified principal (actor, scopes, client) travels with the request.
PRINCIPAL_SCOPE_KEY = "bee.principal"

_EVERY_MCP_SCOPE = frozenset(scopes.FOR_MCP)


def challenge(realm: str, error: str | None, description: str, params: Sequence[tuple[str, str]] = ()) -> bytes:
    """A ``Bearer`` challenge whose quoted values can hold nothing but RFC 6750's allowed characters."""
    parts = [f'realm="{shown(realm, 64)}"', *(f'{name}="{shown(value, 512)}"' for name, value in params)]
    if error:
        parts += [f'error="{shown(error, 64)}"', f'error_description="{shown(description, 256)}"']
    return ("Bearer " + ", ".join(parts)).encode("ascii")


class BearerAuth:
    """Every request must carry ``Authorization: Bearer <token>`` that the sign-in accepts (else 401), with the
    scopes the request needs (else 403)."""

    def __init__(self, app: ASGIApp, signin: SignIn | Verifier, realm: str = "bee-tracker") -> None:
        self.app = app
        self.signin = signin if isinstance(signin, SignIn) else SignIn(TOKEN, pasted=signin)
        self.realm = realm

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        here = origin.of_request(scope, self.signin.public_origin) if self.signin.advertises else ""
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            await self._refuse(send, here, 401, "missing bearer token", error=None)
            return
        principal = await self._principal(send, here, token.strip())
        if principal is None:
            return
        if not principal.allows(_EVERY_MCP_SCOPE):
            body, more = await _read_body(receive)
            needed = scopes.needed(body)
            if not principal.allows(needed):
                missing = scopes.shown(needed - (principal.scopes or frozenset()))
                await self._refuse(
                    send, here, 403, f"this request needs the {missing} scope", error="insufficient_scope"
                )
                return
            receive = _replay(body, more, receive)
        scope[ACTOR_SCOPE_KEY] = principal.actor
        scope[PRINCIPAL_SCOPE_KEY] = principal
        await self.app(scope, receive, send)

    async def _verify(self, token: str, here: str) -> Principal:
        if self.signin.fetches_keys:
            # A JWKS URL may be fetched (with a timeout): never on the event loop every request shares.
            return await anyio.to_thread.run_sync(self.signin.principal, token, here)
        return self.signin.principal(token, here)

    async def _principal(self, send: Send, here: str, token: str) -> Principal | None:
        """The token's principal, or None once a 401 has been sent."""
        try:
            try:
                return await self._verify(token, here)
            except UnknownKey:
                # Another replica may have made a key since this one read them: read again (rarely), then retry.
                keys = self.signin.access.keys if self.signin.access is not None else None
                if keys is None or not keys.reload_due():
                    raise
                await anyio.to_thread.run_sync(keys.reload)
                return await self._verify(token, here)
        except AuthError as exc:
            # The reason is sanitized and bounded by the verifier; the token itself is never logged.
            logger.info("refused a token: %s", exc)
            await self._refuse(send, here, 401, str(exc), error="invalid_token")
        except Exception as exc:
            # A library failing on a hostile token is still a refused token, never a 500 or a dropped connection.
            # Its message may quote the token, so only the exception's type is logged.
            logger.warning("refused a token the verifier failed on (%s)", type(exc).__name__)
            await self._refuse(send, here, 401, "the token could not be verified", error="invalid_token")
        return None

    async def _refuse(self, send: Send, here: str, status: int, description: str, *, error: str | None) -> None:
        body = json.dumps({"error": error or "unauthorized", "error_description": description}).encode()
        params = self.signin.challenge(here) if here else []
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"www-authenticate", challenge(self.realm, error, description, params)),
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The request body read so far, up to just past the frame limit (the rest is left for the app to refuse), and
    whether more is coming."""
    body = bytearray()
    more = True
    while more and len(body) <= MAX_FRAME_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return bytes(body), more


def _replay(body: bytes, more: bool, receive: Receive) -> Receive:
    """A receive that hands on ``body`` first, then whatever the client still sends."""
    first: Message = {"type": "http.request", "body": body, "more_body": more}
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return first
        return await receive()

    return replay
