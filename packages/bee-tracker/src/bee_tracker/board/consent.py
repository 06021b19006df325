"""The consent page of the built-in authorization server: a signed-in person sees which client asks for what, and
allows it or not.

``/authorize`` (the SDK's handler, :mod:`bee_tracker.oauth.provider`) keeps the request in the store and sends the
browser here with its id. Signed out, the person signs in first (the sign-in page remembers this page, so a
one-time link from `bee tracker open` returns here). The page names the client (its name as it gave it, its id,
and where the browser goes next) and each scope with what it allows; a scope the person's own session lacks is
not granted (a read-only link grants read only).

Answering is a form POST with the session's CSRF token from this origin (:mod:`.csrf`), so another site can neither
answer for someone nor frame the page (the board's headers forbid framing). The request is taken from the store as
it is answered, so it is answered once, on any replica. Either answer redirects to the client's registered
redirect URI: with a one-time code, its ``state`` and the issuer (``iss``, RFC 9207), or with ``access_denied``.
The page's own Content-Security-Policy lets its form lead to that URI's origin, and nowhere else.
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bee_tracker.board import csrf
from bee_tracker.board.base import Board, BoardError
from bee_tracker.board.forms import read_form
from bee_tracker.board.headers import CONTENT_SECURITY_POLICY
from bee_tracker.board.sessions import Session
from bee_tracker.oauth import scopes
from bee_tracker.store.grants import CONSENT, new_grant

#: How long a code lives, in seconds: it is exchanged at once by the client the browser returns to.
CODE_SECONDS = 120

_GONE = (
    "This sign-in request has expired (it waits 10 minutes) or was already answered. Start signing in again from "
    "your editor or MCP client."
)


def _grants(board: Board) -> Any:
    if board.grants is None:
        raise BoardError(404, "This tracker does not sign MCP clients in itself (it runs without --sign-in builtin).")
    return board.grants


def _destination(redirect_uri: str) -> str:
    """What the CSP's form-action allows: the redirect URI's origin, or its scheme for a private-use scheme."""
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"


def _policy(redirect_uri: str) -> str:
    return CONTENT_SECURITY_POLICY.replace("form-action 'self'", f"form-action 'self' {_destination(redirect_uri)}")


async def consent_page(board: Board, request: Request, session: Session) -> Response:
    """GET of the consent page for the request ``?request=ID``."""
    request_id = request.query_params.get("request", "")
    held = await board.run(_grants(board).held, CONSENT, request_id) if 0 < len(request_id) <= 128 else None
    if held is None:
        raise BoardError(400, _GONE, title="No sign-in to answer")
    wanted = [scope for scope in held["scopes"] if scope in scopes.FOR_CLIENTS]
    response = board.page(
        request,
        "consent.html",
        session,
        request_id=request_id,
        client_name=held.get("client_name"),
        client_id=held["client_id"],
        destination=_destination(held["redirect_uri"]),
        wanted=[(scope, scopes.MEANING[scope], session.allows(scope)) for scope in wanted],
        nav="consent",
    )
    response.headers["content-security-policy"] = _policy(held["redirect_uri"])
    return response


async def consent_answer(board: Board, request: Request, session: Session) -> Response:
    """POST of the consent form: allow (a code for the client) or deny, then back to the client."""
    form = await read_form(request)
    if not csrf.same_origin(request) or not csrf.same_token(session.csrf, form.get("csrf")):
        raise BoardError(403, "This answer did not come from a consent page of your session; nothing was allowed.")
    request_id = form.get("request", "")
    held = await board.run(_grants(board).take, CONSENT, request_id) if 0 < len(request_id) <= 128 else None
    if held is None:
        raise BoardError(400, _GONE, title="No sign-in to answer")
    granted = tuple(s for s in held["scopes"] if s in scopes.FOR_CLIENTS and session.allows(s))
    if form.get("decision") != "allow" or scopes.READ not in granted:
        reason = "the person declined" if form.get("decision") != "allow" else "the person may not grant these scopes"
        return _back(held, error="access_denied", error_description=reason)
    grant = new_grant(
        actor=session.actor,
        client_id=held["client_id"],
        client_name=held.get("client_name"),
        scopes=granted,
        resource=held["resource"],
        now=board.sessions.now(),
    )
    code = secrets.token_urlsafe(32)
    payload = {key: held[key] for key in ("redirect_uri", "explicit", "code_challenge", "issuer")}
    await board.run(lambda: _grants(board).add_code(code, grant, payload, lifetime=CODE_SECONDS))
    return _back(held, code=code)


def _back(held: dict[str, Any], **params: str) -> Response:
    from mcp.server.auth.provider import construct_redirect_uri

    location = construct_redirect_uri(held["redirect_uri"], **params, state=held.get("state"), iss=held["issuer"])
    response = RedirectResponse(location, status_code=303)
    response.headers["content-security-policy"] = _policy(held["redirect_uri"])
    return response
