"""Signing people in and out: a pasted token or a one-time link becomes a session cookie.

The token is verified by the tracker's own :class:`~bee_tracker.auth.Verifier` (issuer, audience, keys, algorithms
and the longest lifetime, exactly as for ``/mcp``) and then forgotten: the browser gets a random session id in an
HttpOnly, SameSite=Strict cookie (Secure, and named ``__Host-…``, when the board is served over HTTPS), which lasts
:data:`~.sessions.SESSION_MAX_SECONDS` at most and never longer than the pasted token. After signing in, the
browser is redirected, so no token stays in the address bar.
"""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bee_tracker.auth import AuthError
from bee_tracker.board import csrf
from bee_tracker.board.base import (
    MAX_TOKEN_CHARS,
    PREFIX,
    Board,
    BoardError,
    forget_cookie,
    local_next,
    resume_cookie,
    session_cookie,
    set_cookie,
    signin_cookie,
)
from bee_tracker.board.forms import read_form
from bee_tracker.board.links import claims_of, link_claims, session_end
from bee_tracker.board.sessions import Session
from bee_tracker.oauth import scopes as known_scopes

logger = logging.getLogger("bee.tracker.board")


async def signin_page(board: Board, request: Request, session: Session | None) -> Response:
    if session is not None:
        return RedirectResponse(local_next(request.query_params.get("next"), PREFIX + "/"), status_code=303)
    message = "You are signed out." if request.query_params.get("signed_out") else None
    return board.signin_form(request, message=message, next_url=request.query_params.get("next") or PREFIX)


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


async def signin(board: Board, request: Request, session: Session | None) -> Response:
    """POST of the sign-in form: check its double-submit token and the origin, verify the token, open a session."""
    form = await read_form(request)
    next_url = form.get("next") or PREFIX
    if not csrf.same_origin(request) or not csrf.same_token(
        request.cookies.get(signin_cookie(request)), form.get("form_token")
    ):
        return board.signin_form(
            request,
            status_code=403,
            message="The sign-in form had expired or did not come from this board; sign in again.",
            next_url=next_url,
        )
    token = (form.get("token") or "").strip()
    if token.lower().startswith("bearer "):
        token = token[7:].strip()
    if not token or len(token) > MAX_TOKEN_CHARS:
        return board.signin_form(
            request, status_code=400, message="Paste a token from `bee tracker token`.", next_url=next_url
        )
    try:
        actor = await _verified(board, token)
    except AuthError as exc:
        return board.signin_form(request, status_code=401, message=f"That token was refused: {exc}.", next_url=next_url)
    return await open_session(
        board, request, actor, ends_by=session_end(token), next_url=next_url, scopes=scopes_of(claims_of(token))
    )


def scopes_of(claims: dict[str, object]) -> frozenset[str] | None:
    """The scopes a session opened with a token gets: those its ``scope`` claim names (of the tracker's), or every
    scope when it has none (a token from `bee tracker token`, a link from `bee tracker open`)."""
    scope = claims.get("scope")
    if not isinstance(scope, str):
        return None
    return known_scopes.parse(scope) & frozenset(known_scopes.ALL)


async def link(board: Board, request: Request, session: Session | None) -> Response:
    """GET of a one-time link from `bee tracker open`: verify it, spend it, open a session, redirect."""
    token = request.query_params.get("token", "")
    if not token or len(token) > MAX_TOKEN_CHARS:
        return board.signin_form(request, status_code=400, message="That sign-in link is incomplete.")
    try:
        actor = await _verified(board, token, link=True)
        claims = link_claims(token)
    except AuthError as exc:
        return board.signin_form(
            request,
            status_code=401,
            message=f"That sign-in link was refused: {exc}. Run `bee tracker open` for a new one.",
        )
    # Kept as spent for as long as the verifier would still take the token (its leeway included).
    spent_until = claims.expires + board.verifier.leeway_seconds + 1
    fresh = await board.run(lambda: board.sessions.spend_link(claims.link_id, expires_epoch=spent_until))
    if not fresh:
        return board.signin_form(
            request,
            status_code=401,
            message="That sign-in link was already used; each works once. Run `bee tracker open` for a new one.",
        )
    # Back to where signing in began (a consent page waiting for this person), else the board.
    resume = request.cookies.get(resume_cookie(request))
    return await open_session(
        board, request, actor, ends_by=None, next_url=resume or PREFIX + "/", scopes=scopes_of(claims_of(token))
    )


async def open_session(
    board: Board,
    request: Request,
    actor: str,
    *,
    ends_by: float | None,
    next_url: str,
    scopes: frozenset[str] | None = None,
) -> Response:
    """Open a session for ``actor`` and redirect to ``next_url`` (a board path) with its cookie set."""
    opened = await board.run(lambda: board.sessions.open(actor, ends_by=ends_by, scopes=scopes))
    response = RedirectResponse(local_next(next_url, PREFIX + "/"), status_code=303)
    lifetime = max(1, int(opened.session.expires_epoch - board.sessions.now()))
    set_cookie(response, request, session_cookie(request), opened.cookie, lifetime)
    forget_cookie(response, request, signin_cookie(request))
    forget_cookie(response, request, resume_cookie(request))
    return response


async def signout(board: Board, request: Request, session: Session | None) -> Response:
    """POST of the sign-out button: end the session in the store (every copy of the cookie dies with it)."""
    form = await read_form(request)
    if session is None:
        response: Response = RedirectResponse(f"{PREFIX}/signin?signed_out=1", status_code=303)
        forget_cookie(response, request, session_cookie(request))
        return response
    if not csrf.same_origin(request) or not csrf.same_token(session.csrf, form.get("csrf")):
        return board.problem(
            request,
            session,
            BoardError(403, "The form did not come from this board page; use its button.", title="Not signed out"),
        )
    await board.run(board.sessions.close, request.cookies.get(session_cookie(request)))
    response = RedirectResponse(f"{PREFIX}/signin?signed_out=1", status_code=303)
    forget_cookie(response, request, session_cookie(request))
    return response
