"""What every board page uses: the :class:`Board`, its URLs and templates, the session cookie, the signed-out
page and the one :class:`BoardError`.

Reads and writes go through the store exactly as the MCP tools do (:func:`bee_tracker.calls.call` for
the tools, :meth:`~bee_tracker.store.SqlStore.read` for the board's own read functions), in worker threads, at
most :data:`CONCURRENT_STORE_CALLS` at once; a call that waits longer than the tracker's deadline for a slot is answered
with a "busy" page. Graph pictures are drawn apart from those slots, with a queue of their own (:mod:`.drawing`).

This module imports no other page module: pages, sign-in and writes import it, and :mod:`.app` imports them all.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import anyio
import anyio.to_thread
import jinja2
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from bee_contracts import BeeError, ErrorCode
from bee_tracker import calls
from bee_tracker.auth import Verifier
from bee_tracker.board.drawing import Drawer
from bee_tracker.board.sessions import Session, Sessions
from bee_tracker.store import SqlStore
from bee_tracker.store.grants import Grants

if TYPE_CHECKING:
    from bee_tracker.listening.bus import LocalBus
    from bee_tracker.oauth.party import RelyingParty

T = TypeVar("T")

#: Store calls the board runs at once per process (a person's board needs few; the MCP tools keep the rest).
CONCURRENT_STORE_CALLS = 8
#: Where the board is served.
PREFIX = "/board"
#: How often an open board page asks whether anything changed, in seconds.
POLL_SECONDS = 5
#: The longest token text read from the sign-in form or a link (a JWT from an identity provider is a few KiB).
MAX_TOKEN_CHARS = 16 * 1024
#: How long the sign-in form's double-submit cookie lives, in seconds.
SIGNIN_FORM_SECONDS = 3600
#: How long the board remembers where signing in began (a consent page waiting), in seconds.
RESUME_SECONDS = 600

HERE = Path(__file__).parent

#: HTTP status of a page for each error code of a store call (any other code is a 500).
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
#: The heading of a problem page, by status.
_TITLES = {
    400: "Not understood",
    401: "Signed out",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed",
    409: "Not done",
    413: "Not done",
    415: "Not done",
    422: "Not drawn",
    503: "Busy",
    504: "Busy",
}


class BoardError(Exception):
    """A request the board refuses: ``status`` and a ``message`` that says what to change.

    Raised anywhere under a route; the route table's one error handler answers it in the route's form (a page, or
    plain text for the parts a page fetches). ``headers`` go with the answer (``Retry-After`` for a busy drawer).
    """

    def __init__(
        self, status: int, message: str, *, title: str | None = None, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.title = title or _TITLES.get(status, "Something went wrong")
        self.headers = dict(headers or {})

    @classmethod
    def of(cls, error: BeeError) -> BoardError:
        """A store call's error as the board answers it (its message says what to change)."""
        return cls(STATUS_OF.get(error.code, 500), error.message)


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
        loader=jinja2.FileSystemLoader(HERE / "templates"),
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


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def session_cookie(request: Request) -> str:
    """The session cookie's name: ``__Host-`` prefixed over HTTPS (the browser then insists on Secure, Path=/ and
    no Domain, so no other host can set it)."""
    return "__Host-bee-board" if _secure(request) else "bee-board"


def signin_cookie(request: Request) -> str:
    """The sign-in form's double-submit cookie's name."""
    return "__Host-bee-board-signin" if _secure(request) else "bee-board-signin"


def resume_cookie(request: Request) -> str:
    """The name of the cookie that remembers the board path a sign-in began at (a one-time link returns there)."""
    return "__Host-bee-board-resume" if _secure(request) else "bee-board-resume"


def set_cookie(response: Response, request: Request, name: str, value: str, max_age: int) -> None:
    """Set one of the board's cookies: HttpOnly, SameSite=Strict, Secure over HTTPS."""
    response.set_cookie(
        name, value, max_age=max_age, path="/", secure=_secure(request), httponly=True, samesite="strict"
    )


def forget_cookie(response: Response, request: Request, name: str) -> None:
    response.delete_cookie(name, path="/", secure=_secure(request), httponly=True, samesite="strict")


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
    #: The built-in authorization server's state, when it runs (the consent page needs it).
    grants: Grants | None = None
    #: The team's identity provider, when the board signs people in there.
    idp: RelyingParty | None = None
    #: What announces the store's changes (the listening bus), for the live updates; None: pages only poll.
    changes: LocalBus | None = None

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
        result = await self.run(calls.call, self.store, tool, actor, args)
        data: dict[str, Any] = result["data"]
        return data

    async def session_of(self, request: Request) -> Session | None:
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

    def problem(self, request: Request, session: Session | None, error: BoardError) -> Response:
        """A page saying what went wrong and what to do, with the error's status."""
        response = self.page(request, "problem.html", session, error.status, title=error.title, message=error.message)
        response.headers.update(error.headers)
        return response

    def signin_form(
        self, request: Request, *, status_code: int = 200, message: str | None = None, next_url: str = PREFIX
    ) -> Response:
        """The sign-in page, with a fresh double-submit token in its form and cookie."""
        token = secrets.token_urlsafe(32)
        next_url = local_next(next_url, PREFIX + "/")
        response = self.page(
            request,
            "signin.html",
            None,
            status_code,
            form_token=token,
            message=message,
            next_url=next_url,
            idp=self.idp.name if self.idp is not None else None,
        )
        set_cookie(response, request, signin_cookie(request), token, SIGNIN_FORM_SECONDS)
        if next_url not in (PREFIX, PREFIX + "/"):
            # A one-time link opened in this browser returns here (a consent page that is waiting, say).
            set_cookie(response, request, resume_cookie(request), next_url, RESUME_SECONDS)
        if request.cookies.get(session_cookie(request)):
            forget_cookie(response, request, session_cookie(request))  # a cookie that led here is dead: drop it
        return response

    def signed_out_page(self, request: Request, *, write: bool = False) -> Response:
        """What a page request without a live session gets: the sign-in page, 401, saying why."""
        had_cookie = bool(request.cookies.get(session_cookie(request)))
        if write:
            message = "Your session has ended, so nothing was changed. Sign in again, then repeat what you did."
        elif had_cookie:
            message = "Your session has ended or is not valid here (signed out, expired, or not from this tracker)."
        else:
            message = "Sign in to see the board."
        next_url = request.url.path + (f"?{request.url.query}" if request.url.query and not write else "")
        return self.signin_form(request, status_code=401, message=message, next_url=next_url)
