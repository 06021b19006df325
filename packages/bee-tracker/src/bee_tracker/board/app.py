"""The board's route table, mounted at ``/board`` beside ``/mcp``: which handler answers which path, the one
signed-in guard and the one error handler.

Every route is of a :class:`Kind`. A signed-in kind looks the session up before its handler runs and answers a
request without one in its own form (the sign-in page, or a 401 fragment for a page's poll); its handler takes the
:class:`~.sessions.Session`. Any :class:`~.base.BoardError` or :class:`~bee_contracts.BeeError` a handler raises is
answered here, in the route's form: a page saying what to change, or plain text for what a page fetches.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from bee_contracts import BeeError
from bee_tracker.auth import Verifier
from bee_tracker.board import consent, live, pages, signin, writes
from bee_tracker.board import idp as idp_signin
from bee_tracker.board.base import CONCURRENT_STORE_CALLS, HERE, PREFIX, Board, BoardError, templates
from bee_tracker.board.drawing import Drawer
from bee_tracker.board.headers import BoardHeaders
from bee_tracker.board.sessions import Session, Sessions
from bee_tracker.listening.bus import LocalBus
from bee_tracker.oauth.party import RelyingParty
from bee_tracker.store import SqlStore
from bee_tracker.store.grants import Grants

#: A handler of a page that needs a signed-in person.
SignedIn = Callable[[Board, Request, Session], Awaitable[Response]]
#: A handler of sign-in and sign-out, given the session when there is one.
Open = Callable[[Board, Request, Session | None], Awaitable[Response]]
#: A check made before anything else, even the session's lookup: its answer, or ``None`` to go on.
Before = Callable[[Board], Response | None]


def _page_failed(board: Board, request: Request, session: Session | None, error: BoardError) -> Response:
    return board.problem(request, session, error)


def _write_failed(board: Board, request: Request, session: Session | None, error: BoardError) -> Response:
    said = BoardError(error.status, f"{error.message} Nothing was changed.", title=error.title, headers=error.headers)
    return board.problem(request, session, said)


def _text_failed(board: Board, request: Request, session: Session | None, error: BoardError) -> Response:
    return Response(error.message, status_code=error.status, media_type="text/plain", headers=error.headers)


def _signin_failed(board: Board, request: Request, session: Session | None, error: BoardError) -> Response:
    return board.signin_form(request, status_code=error.status, message=error.message)


def _fragment_signed_out(board: Board, request: Request) -> Response:
    return board.templates.TemplateResponse(request, "_signed_out.html", {}, status_code=401)


def _picture_signed_out(board: Board, request: Request) -> Response:
    return Response("Sign in to see the graph.", status_code=401, media_type="text/plain")


@dataclass(frozen=True)
class Kind:
    """How a kind of route answers a request without a live session, and a refused one."""

    signed_out: Callable[[Board, Request], Response]
    failed: Callable[[Board, Request, Session | None, BoardError], Response]


#: A page a person opens.
PAGE = Kind(lambda board, request: board.signed_out_page(request), _page_failed)
#: A form's POST: refused, it says nothing was changed.
WRITE = Kind(lambda board, request: board.signed_out_page(request, write=True), _write_failed)
#: What an open page fetches for itself (its poll): a fragment, or text.
PART = Kind(_fragment_signed_out, _text_failed)
#: The graph's picture.
PICTURE = Kind(_picture_signed_out, _text_failed)
#: Signing in: a refusal is the sign-in form again, saying why.
SIGNIN = Kind(lambda board, request: board.signin_form(request), _signin_failed)


def _endpoint(
    board: Board, kind: Kind, signed_in: SignedIn | None, open_: Open | None, before: Before | None
) -> Callable[[Request], Awaitable[Response]]:
    """The one guard and the one error handler around a route's handler (``signed_in`` or ``open_``)."""

    async def endpoint(request: Request) -> Response:
        if before is not None and (early := before(board)) is not None:
            return early
        session: Session | None = None
        try:
            session = await board.session_of(request)
            if open_ is not None:
                return await open_(board, request, session)
            assert signed_in is not None
            if session is None:
                return kind.signed_out(board, request)
            return await signed_in(board, request, session)
        except BoardError as error:
            return kind.failed(board, request, session, error)
        except BeeError as error:
            return kind.failed(board, request, session, BoardError.of(error))

    endpoint.__name__ = signed_in.__name__ if signed_in is not None else getattr(open_, "__name__", "endpoint")
    return endpoint


def board_routes(
    store: SqlStore,
    verifier: Verifier,
    *,
    allowed_hosts: tuple[str, ...],
    deadline_seconds: float = 30.0,
    grants: Grants | None = None,
    idp: RelyingParty | None = None,
    changes: LocalBus | None = None,
) -> list[BaseRoute]:
    """The routes the tracker app adds for the board: ``/board/…``, and ``/`` leading there; with ``grants`` the
    built-in authorization server's consent page, with ``idp`` signing in at the team's identity provider."""
    board = Board(
        store=store,
        verifier=verifier,
        sessions=Sessions(store.db),
        templates=templates(),
        limiter=anyio.CapacityLimiter(CONCURRENT_STORE_CALLS),
        deadline_seconds=deadline_seconds,
        drawer=Drawer(),
        grants=grants,
        idp=idp,
        changes=changes,
    )

    def route(path: str, kind: Kind, handler: SignedIn, method: str = "GET", *, before: Before | None = None) -> Route:
        return Route(path, _endpoint(board, kind, handler, None, before), methods=[method])

    def open_route(path: str, kind: Kind, handler: Open, method: str = "GET") -> Route:
        return Route(path, _endpoint(board, kind, None, handler, None), methods=[method])

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = "There is no such page on the board." if status == 404 else "That request is not allowed here."
        return board.problem(request, None, BoardError(status, message))

    inner = Starlette(
        routes=[
            route("/", PAGE, pages.board_page),
            route("/columns", PART, pages.columns_fragment),
            route("/issues/{issue_id:path}", PAGE, pages.issue_page),
            route("/changes/{issue_id:path}", PART, pages.issue_changes),
            route(live.EVENTS_PATH, PART, live.events),
            # Refusing a picture when the drawer is full must cost next to nothing: before the session's lookup.
            route("/graph/{issue_id:path}", PICTURE, pages.graph_svg, before=pages.drawer_full),
            route("/epics", PAGE, pages.epics_page),
            route("/search", PAGE, pages.search_page),
            route("/new", PAGE, pages.new_page),
            route("/write/{action}", WRITE, writes.write, "POST"),
            open_route("/signin", SIGNIN, signin.signin_page),
            open_route("/signin", SIGNIN, signin.signin, "POST"),
            open_route("/link", SIGNIN, signin.link),
            open_route("/signout", PAGE, signin.signout, "POST"),
            *(
                [
                    route("/consent", PAGE, consent.consent_page),
                    route("/consent", WRITE, consent.consent_answer, "POST"),
                ]
                if grants is not None
                else []
            ),
            *(
                [
                    open_route("/signin/idp", SIGNIN, idp_signin.start),
                    open_route("/signin/idp/back", SIGNIN, idp_signin.back),
                ]
                if idp is not None
                else []
            ),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        exception_handlers={404: not_found, 405: not_found},
    )
    names = {"127.0.0.1", "localhost", "[::1]", *allowed_hosts}

    async def home(request: Request) -> Response:
        return RedirectResponse(PREFIX + "/", status_code=303)

    async def favicon(request: Request) -> Response:
        # Browsers ask for /favicon.ico whatever a page names; answered, it is not a 404 in every log.
        return RedirectResponse(PREFIX + "/static/favicon.svg", status_code=308)

    return [
        Mount(PREFIX, app=BoardHeaders(inner, names)),
        Route("/", home, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
    ]
