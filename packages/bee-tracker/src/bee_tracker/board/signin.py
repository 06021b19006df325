"""Signing people in and out: a pasted token or a one-time link becomes a session cookie.

The token is verified by the tracker's own :class:`~bee_tracker.auth.Verifier` (issuer, audience, keys, algorithms
and the longest lifetime, exactly as for ``/mcp``) and then forgotten: the browser gets a random session id in an
HttpOnly, SameSite=Strict cookie (Secure, and named ``__Host-…``, when the board is served over HTTPS), which lasts
:data:`~.sessions.SESSION_MAX_SECONDS` at most and never longer than the pasted token. After signing in, the
browser is redirected, so no token stays in the address bar.
"""

from __future__ import annotations

import logging
import secrets

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bee_contracts import BeeError
from bee_tracker.auth import AuthError
from bee_tracker.board import csrf
from bee_tracker.board.app import PREFIX, Board, local_next
from bee_tracker.board.forms import FormError, read_form
from bee_tracker.board.links import link_claims, session_end

logger = logging.getLogger("bee.tracker.board")

#: The longest token text read from the sign-in form or a link (a JWT from an identity provider is a few KiB).
MAX_TOKEN_CHARS = 16 * 1024
#: How long the sign-in form's double-submit cookie lives, in seconds.
SIGNIN_FORM_SECONDS = 3600


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def session_cookie(request: Request) -> str:
    """The session cookie's name: ``__Host-`` prefixed over HTTPS (the browser then insists on Secure, Path=/ and
    no Domain, so no other host can set it)."""
    return "__Host-bee-board" if _secure(request) else "bee-board"


def _signin_cookie(request: Request) -> str:
    return "__Host-bee-board-signin" if _secure(request) else "bee-board-signin"


def _set(response: Response, request: Request, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name, value, max_age=max_age, path="/", secure=_secure(request), httponly=True, samesite="strict"
    )


def _forget(response: Response, request: Request, name: str) -> None:
    response.delete_cookie(name, path="/", secure=_secure(request), httponly=True, samesite="strict")


def signin_form(
    board: Board, request: Request, *, status_code: int = 200, message: str | None = None, next_url: str = PREFIX
) -> Response:
    """The sign-in page, with a fresh double-submit token in its form and cookie."""
    token = secrets.token_urlsafe(32)
    response = board.page(
        request,
        "signin.html",
        None,
        status_code,
        form_token=token,
        message=message,
        next_url=local_next(next_url, PREFIX + "/"),
    )
    _set(response, request, _signin_cookie(request), token, SIGNIN_FORM_SECONDS)
    if request.cookies.get(session_cookie(request)):
        _forget(response, request, session_cookie(request))  # a cookie that led here is dead: drop it
    return response


def signed_out_page(board: Board, request: Request, *, write: bool = False) -> Response:
    """What a request without a live session gets: the sign-in page, 401, saying why."""
    had_cookie = bool(request.cookies.get(session_cookie(request)))
    if write:
        message = "Your session has ended, so nothing was changed. Sign in again, then repeat what you did."
    elif had_cookie:
        message = "Your session has ended or is not valid here (signed out, expired, or not from this tracker)."
    else:
        message = "Sign in to see the board."
    next_url = request.url.path + (f"?{request.url.query}" if request.url.query and not write else "")
    return signin_form(board, request, status_code=401, message=message, next_url=next_url)


async def signin_page(board: Board, request: Request) -> Response:
    if await board.session_of(request) is not None:
        return RedirectResponse(local_next(request.query_params.get("next"), PREFIX + "/"), status_code=303)
    message = "You are signed out." if request.query_params.get("signed_out") else None
    return signin_form(board, request, message=message, next_url=request.query_params.get("next") or PREFIX)


async def _verified(board: Board, token: str, *, link: bool = False) -> str:
    """The actor of a token the tracker accepts: an ordinary one (the form), or a sign-in link's (``link``).

    Raises:
        AuthError: the verifier refuses it (the message is safe to show).
    """
    try:
        return await board.run(board.verifier.link_actor if link else board.verifier.actor, token)
    except AuthError:
        raise
    except Exception as exc:
        # As at /mcp: a library failing on a hostile token is a refused token; its text may quote the token.
        logger.warning("refused a board token the verifier failed on (%s)", type(exc).__name__)
        raise AuthError("the token could not be verified") from None


async def signin(board: Board, request: Request) -> Response:
    """POST of the sign-in form: check its double-submit token and the origin, verify the token, open a session."""
    try:
        form = await read_form(request)
    except FormError as exc:
        return signin_form(board, request, status_code=exc.status, message=exc.message)
    next_url = form.get("next") or PREFIX
    if not csrf.same_origin(request) or not csrf.same_token(
        request.cookies.get(_signin_cookie(request)), form.get("form_token")
    ):
        return signin_form(
            board,
            request,
            status_code=403,
            message="The sign-in form had expired or did not come from this board; sign in again.",
            next_url=next_url,
        )
    token = (form.get("token") or "").strip()
    if token.lower().startswith("bearer "):
        token = token[7:].strip()
    if not token or len(token) > MAX_TOKEN_CHARS:
        return signin_form(
            board, request, status_code=400, message="Paste a token from `bee tracker token`.", next_url=next_url
        )
    try:
        actor = await _verified(board, token)
    except AuthError as exc:
        return signin_form(
            board, request, status_code=401, message=f"That token was refused: {exc}.", next_url=next_url
        )
    return await _open(board, request, actor, ends_by=session_end(token), next_url=next_url)


async def link(board: Board, request: Request) -> Response:
    """GET of a one-time link from `bee tracker open`: verify it, spend it, open a session, redirect."""
    token = request.query_params.get("token", "")
    if not token or len(token) > MAX_TOKEN_CHARS:
        return signin_form(board, request, status_code=400, message="That sign-in link is incomplete.")
    try:
        actor = await _verified(board, token, link=True)
        claims = link_claims(token)
    except AuthError as exc:
        return signin_form(
            board,
            request,
            status_code=401,
            message=f"That sign-in link was refused: {exc}. Run `bee tracker open` for a new one.",
        )
    # Kept as spent for as long as the verifier would still take the token (its leeway included).
    spent_until = claims.expires + board.verifier.leeway_seconds + 1
    try:
        fresh = await board.run(lambda: board.sessions.spend_link(claims.link_id, expires_epoch=spent_until))
    except BeeError as exc:
        return board.failed(request, None, exc)
    if not fresh:
        return signin_form(
            board,
            request,
            status_code=401,
            message="That sign-in link was already used; each works once. Run `bee tracker open` for a new one.",
        )
    return await _open(board, request, actor, ends_by=None, next_url=PREFIX + "/")


async def _open(board: Board, request: Request, actor: str, *, ends_by: float | None, next_url: str) -> Response:
    try:
        opened = await board.run(lambda: board.sessions.open(actor, ends_by=ends_by))
    except BeeError as exc:
        return board.failed(request, None, exc)
    response = RedirectResponse(local_next(next_url, PREFIX + "/"), status_code=303)
    lifetime = max(1, int(opened.session.expires_epoch - board.sessions.now()))
    _set(response, request, session_cookie(request), opened.cookie, lifetime)
    _forget(response, request, _signin_cookie(request))
    return response


async def signout(board: Board, request: Request) -> Response:
    """POST of the sign-out button: end the session in the store (every copy of the cookie dies with it)."""
    session = await board.session_of(request)
    try:
        form = await read_form(request)
    except FormError as exc:
        return board.problem(request, session, exc.status, "Not signed out", exc.message)
    if session is None:
        response: Response = RedirectResponse(f"{PREFIX}/signin?signed_out=1", status_code=303)
        _forget(response, request, session_cookie(request))
        return response
    if not csrf.same_origin(request) or not csrf.same_token(session.csrf, form.get("csrf")):
        return board.problem(
            request, session, 403, "Not signed out", "The form did not come from this board page; use its button."
        )
    await board.run(board.sessions.close, request.cookies.get(session_cookie(request)))
    response = RedirectResponse(f"{PREFIX}/signin?signed_out=1", status_code=303)
    _forget(response, request, session_cookie(request))
    return response
