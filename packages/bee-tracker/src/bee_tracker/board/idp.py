"""Signing people in to the board at the team's OpenID Provider, whose client the tracker is (``--oidc-client-id``;
the client itself is :class:`bee_tracker.oauth.party.RelyingParty`).

The authorization code flow with PKCE (S256), a ``state`` and a ``nonce``: ``/board/signin/idp`` keeps the three
in the store (under the state's digest, so any replica can finish the sign-in) and sends the browser to the
provider; ``/board/signin/idp/back`` takes them (once), checks that the state is the one this browser was given (a
cookie that lives ten minutes: another site cannot make someone finish a sign-in it started, RFC 6749 §10.12), the
``iss`` of the answer when the provider sends one (RFC 9207), exchanges the code (with the client secret from
``--oidc-client-secret-file`` when there is one), and verifies the ID token (signature by the provider's JWKS,
``iss``, ``aud`` is this client, times, ``nonce``). Its actor claim (``--actor-claim``) names who signs in, under the
rules every actor follows. The session then opened carries every scope: the provider decides who may sign in.

The cookie is ``SameSite=Lax`` (the provider's redirect back is a cross-site navigation, which a Strict cookie
would not go with); it holds only the state, which is also in the address, and proves which browser began.
"""

from __future__ import annotations

import logging
import secrets

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bee_tracker.auth import AuthError
from bee_tracker.board import csrf
from bee_tracker.board.base import PREFIX, Board, BoardError, local_next
from bee_tracker.board.sessions import Session
from bee_tracker.board.signin import open_session
from bee_tracker.oauth import origin
from bee_tracker.oauth.party import RelyingParty
from bee_tracker.store.grants import IDP_SIGNIN

logger = logging.getLogger("bee.tracker.board")

#: How long a sign-in at the provider may take, in seconds.
SIGNIN_SECONDS = 600


def _cookie(request: Request) -> str:
    return "__Host-bee-board-idp" if request.url.scheme == "https" else "bee-board-idp"


def _party(board: Board) -> RelyingParty:
    if board.idp is None:
        raise BoardError(404, "This board does not sign people in at an identity provider (no --oidc-client-id).")
    return board.idp


def _back_url(party: RelyingParty, request: Request) -> str:
    here = origin.of_request(request.scope, party.public_origin)
    return f"{here}{PREFIX}/signin/idp/back"


async def start(board: Board, request: Request, session: Session | None) -> Response:
    """GET ``/board/signin/idp``: begin a sign-in at the provider, then come back to ``next``."""
    party = _party(board)
    nonce, verifier = secrets.token_urlsafe(24), secrets.token_urlsafe(48)
    back = _back_url(party, request)
    waiting = {"nonce": nonce, "verifier": verifier, "back": back, "next": local_next(request.query_params.get("next"))}
    state = await board.run(lambda: party.grants.hold(IDP_SIGNIN, waiting, lifetime=SIGNIN_SECONDS))
    try:
        location = await board.run(party.authorization_url, state, nonce, verifier, back)
    except AuthError as exc:
        raise BoardError(503, f"The identity provider cannot be used now: {exc}.", title="Not signed in") from None
    response = RedirectResponse(location, status_code=303)
    response.set_cookie(
        _cookie(request),
        state,
        max_age=SIGNIN_SECONDS,
        path="/",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="lax",
    )
    return response


async def back(board: Board, request: Request, session: Session | None) -> Response:
    """GET ``/board/signin/idp/back``: the provider's answer; verify it and open a session."""
    party = _party(board)
    state = request.query_params.get("state", "")
    if not csrf.same_token(request.cookies.get(_cookie(request)), state):
        raise BoardError(400, "This sign-in did not begin in this browser (or took over ten minutes); sign in again.")
    waiting = await board.run(lambda: party.grants.take(IDP_SIGNIN, state))
    if waiting is None:
        raise BoardError(400, "This sign-in was already finished or has expired; sign in again.")
    if "error" in request.query_params:
        raise BoardError(401, "The identity provider did not sign you in; sign in again.", title="Not signed in")
    issuer = request.query_params.get("iss")
    if issuer is not None and issuer != party.provider.issuer:
        raise BoardError(401, "The answer came from another identity provider than this board's; sign in again.")
    try:
        actor = await board.run(
            party.actor, request.query_params.get("code", ""), waiting["verifier"], waiting["back"], waiting["nonce"]
        )
    except AuthError as exc:
        logger.info("refused a sign-in at the identity provider: %s", exc)
        raise BoardError(401, f"The identity provider's sign-in was refused: {exc}.", title="Not signed in") from None
    response = await open_session(board, request, actor, ends_by=None, next_url=waiting["next"])
    response.delete_cookie(
        _cookie(request), path="/", secure=request.url.scheme == "https", httponly=True, samesite="lax"
    )
    return response
