"""The board as a Starlette app mounted at ``/board`` beside ``/mcp``: its routes, templates and shared helpers.

Reads and writes go through the store exactly as the MCP tools do (:meth:`~bee_tracker.store.SqlStore.call` for
the tools, :meth:`~bee_tracker.store.SqlStore.read` for the board's own read functions), in worker threads, at most
:data:`CONCURRENT_STORE_CALLS` at once; a call that waits longer than the tracker's deadline for a slot is answered
with a "busy" page. Graph pictures are drawn apart from those slots, with a queue of their own (:mod:`.drawing`).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import anyio
import anyio.to_thread
import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from bee_contracts import BeeError, ErrorCode
from bee_tracker.auth import Verifier
from bee_tracker.board.drawing import Drawer
from bee_tracker.board.headers import BoardHeaders
from bee_tracker.board.sessions import Session, Sessions
from bee_tracker.store import SqlStore

T = TypeVar("T")

#: Store calls the board runs at once per process (a person's board needs few; the MCP tools keep the rest).
CONCURRENT_STORE_CALLS = 8
#: Where the board is served.
PREFIX = "/board"
#: How often an open board page asks whether anything changed, in seconds.
POLL_SECONDS = 5

_HERE = Path(__file__).parent

#: HTTP status of a page for each error code of a store call.
STATUS_OF: dict[ErrorCode, int] = {
    ErrorCode.INVALID_ARGUMENT: 400,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.CONFLICT: 409,
    ErrorCode.BLOCKED: 409,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.BUSY: 503,
    ErrorCode.UNAVAILABLE: 503,
    ErrorCode.DEADLINE_EXCEEDED: 504,
}


def issue_url(issue_id: str) -> str:
    """The board page of an issue (any id, percent-encoded into one path segment)."""
    return f"{PREFIX}/issues/{quote(issue_id, safe='')}"


def graph_url(issue_id: str) -> str:
    return f"{PREFIX}/graph/{quote(issue_id, safe='')}"


def changes_url(issue_id: str) -> str:
    return f"{PREFIX}/changes/{quote(issue_id, safe='')}"


def dom_id(issue_id: str) -> str:
    """A short element id for an issue, whatever characters its id holds (stable, so htmx keeps focus on it)."""
    return "i" + hashlib.sha256(issue_id.encode("utf-8")).hexdigest()[:12]


def local_next(value: str | None, default: str = PREFIX) -> str:
    """``value`` when it is a path on this board (never another site, ``//host`` or a scheme), else ``default``."""
    if value and value.startswith(PREFIX) and not value.startswith("//") and "\\" not in value and len(value) < 2048:
        return value
    return default


def templates() -> Jinja2Templates:
    """The board's templates: autoescaped everywhere, and an undefined name is an error, never an empty string."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        issue_url=issue_url,
        graph_url=graph_url,
        changes_url=changes_url,
        prefix=PREFIX,
        poll_seconds=POLL_SECONDS,
        idempotency_key=lambda: secrets.token_urlsafe(18),
    )
    env.filters["dom_id"] = dom_id
    return Jinja2Templates(env=env)


@dataclass
class Board:
    """What every board handler uses: the store, the verifier, the sessions and the graph drawer, and how pages are
    answered."""

    store: SqlStore
    verifier: Verifier
    sessions: Sessions
    templates: Jinja2Templates
    limiter: anyio.CapacityLimiter
    deadline_seconds: float
    drawer: Drawer

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """Run a store call in a worker thread.

        Raises:
            BeeError: ``busy`` when no slot frees up within the deadline; whatever ``function`` raises.
        """
        with anyio.move_on_after(self.deadline_seconds) as waited:
            await self.limiter.acquire()
        if waited.cancelled_caught:
            raise BeeError(ErrorCode.BUSY, "the board is busy; try again in a moment")
        try:
            return await anyio.to_thread.run_sync(lambda: function(*args))
        finally:
            self.limiter.release()

    async def call(self, tool: str, actor: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """A tracker tool for ``actor``, validated and run exactly as over MCP; its ``data``."""
        result = await self.run(self.store.call, tool, actor, args)
        data: dict[str, Any] = result["data"]
        return data

    async def session_of(self, request: Request) -> Session | None:
        from bee_tracker.board.signin import session_cookie

        return await self.run(self.sessions.find, request.cookies.get(session_cookie(request)))

    def page(
        self,
        request: Request,
        name: str,
        session: Session | None,
        status_code: int = 200,
        **context: Any,
    ) -> Response:
        """A page from template ``name`` for the signed-in ``session`` (or none)."""
        return self.templates.TemplateResponse(request, name, {"session": session, **context}, status_code=status_code)

    def problem(
        self, request: Request, session: Session | None, status_code: int, title: str, message: str, **context: Any
    ) -> Response:
        """A page saying what went wrong and what to do, with ``status_code``."""
        return self.page(request, "problem.html", session, status_code, title=title, message=message, **context)

    def failed(self, request: Request, session: Session | None, error: BeeError) -> Response:
        """The page for a store call's error (its message says what to change)."""
        status = STATUS_OF.get(error.code, 500)
        titles = {401: "Signed out", 403: "Not allowed", 404: "Not found", 409: "Not done", 503: "Busy"}
        return self.problem(request, session, status, titles.get(status, "Something went wrong"), error.message)


Handler = Callable[[Board, Request], Awaitable[Response]]


def _bound(board: Board, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return await handler(board, request)

    endpoint.__name__ = handler.__name__
    return endpoint


def board_routes(
    store: SqlStore,
    verifier: Verifier,
    *,
    allowed_hosts: tuple[str, ...],
    deadline_seconds: float = 30.0,
) -> list[BaseRoute]:
    """The routes the tracker app adds for the board: ``/board/…``, and ``/`` leading there."""
    from bee_tracker.board import pages, signin, writes

    board = Board(
        store=store,
        verifier=verifier,
        sessions=Sessions(store.db),
        templates=templates(),
        limiter=anyio.CapacityLimiter(CONCURRENT_STORE_CALLS),
        deadline_seconds=deadline_seconds,
        drawer=Drawer(),
    )

    def route(path: str, handler: Handler, methods: list[str]) -> Route:
        return Route(path, _bound(board, handler), methods=methods)

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = "There is no such page on the board." if status == 404 else "That request is not allowed here."
        return board.problem(request, None, status, "Not found" if status == 404 else "Not allowed", message)

    inner = Starlette(
        routes=[
            route("/", pages.board_page, ["GET"]),
            route("/columns", pages.columns_fragment, ["GET"]),
            route("/issues/{issue_id:path}", pages.issue_page, ["GET"]),
            route("/changes/{issue_id:path}", pages.issue_changes, ["GET"]),
            route("/graph/{issue_id:path}", pages.graph_svg, ["GET"]),
            route("/epics", pages.epics_page, ["GET"]),
            route("/search", pages.search_page, ["GET"]),
            route("/new", pages.new_page, ["GET"]),
            route("/write/{action}", writes.write, ["POST"]),
            route("/signin", signin.signin_page, ["GET"]),
            route("/signin", signin.signin, ["POST"]),
            route("/link", signin.link, ["GET"]),
            route("/signout", signin.signout, ["POST"]),
            Mount("/static", StaticFiles(directory=_HERE / "static"), name="static"),
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
