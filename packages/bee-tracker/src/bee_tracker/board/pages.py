"""The board's pages (all GET, all for a signed-in person): board, issue, graph, epics, search, new issue.

Every page reads through the tracker's own functions: the columns from :mod:`.columns` (the ``ready`` tool's own
conditions), an issue through the ``get`` tool, search through the ``search`` tool, each for the signed-in actor.
Query parameters are bounded like the tools' arguments; a bad one is a 400 page saying which. Each handler is
for a signed-in person (the route table's guard looks the session up) and raises what it refuses as a
:class:`~.base.BoardError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from bee_tracker.board import changes, columns, epics, graph
from bee_tracker.board.base import POLL_SECONDS, PREFIX, Board, BoardError
from bee_tracker.board.drawing import Busy, Undrawable
from bee_tracker.board.sessions import Session
from bee_tracker.store.ops import Read

#: Results per search page.
SEARCH_PAGE = 50
#: Links the issue page lists in words, at most (a dense neighbourhood may have thousands).
GRAPH_WORDS = 300
#: Longest value of any one query parameter (the search text's own limit is the tool's, 1,000 characters).
_MAX_PARAM_CHARS = {"q": 1000, "label": 100, "type": 64, "assignee": 320, "status": 64, "since": 64}
#: The strictest policy for the graph's SVG, which needs nothing at all: no script, no style sheet, no fetch.
_SVG_POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox"


def _bad_query(message: str) -> BoardError:
    return BoardError(400, f"{message}; change the address or use the form.")


def _param(request: Request, name: str) -> str | None:
    value = request.query_params.get(name)
    if value is None or not value.strip():
        return None
    if len(value) > _MAX_PARAM_CHARS.get(name, 100):
        raise _bad_query(f"the {name} parameter is longer than {_MAX_PARAM_CHARS.get(name, 100)} characters")
    return value.strip()


def _number(request: Request, name: str, low: int, high: int) -> int | None:
    value = _param(request, name)
    if value is None:
        return None
    if not value.isdigit() or not low <= int(value) <= high:
        raise _bad_query(f"the {name} parameter must be a whole number from {low} to {high}")
    return int(value)


def filters_of(request: Request) -> columns.Filters:
    """The board's filters from the query string.

    Raises:
        BoardError: 400 for a value too long or not a priority.
    """
    return columns.Filters(
        label=_param(request, "label"),
        issue_type=_param(request, "type"),
        assignee=_param(request, "assignee"),
        priority=_number(request, "priority", 0, 4),
    )


def _filter_query(filters: columns.Filters) -> dict[str, str]:
    query = {"label": filters.label, "type": filters.issue_type, "assignee": filters.assignee}
    shown = {k: v for k, v in query.items() if v is not None}
    if filters.priority is not None:
        shown["priority"] = str(filters.priority)
    return shown


@dataclass(frozen=True)
class Snapshot:
    board: columns.Board
    fingerprint: str
    options: columns.Options | None


def _snapshot(op: Read, args: dict[str, Any]) -> Snapshot:
    """The board, the store's fingerprint and (for the full page) the filter options, from one transaction."""
    return Snapshot(
        board=columns.board(op, args["filters"]),
        fingerprint=changes.fingerprint(op, {}),
        options=columns.options(op) if args["options"] else None,
    )


async def board_page(board: Board, request: Request, session: Session) -> Response:
    filters = filters_of(request)
    here = str(request.url.path) + (f"?{request.url.query}" if request.url.query else "")
    return await _columns(board, request, session, filters, template="board.html", here=here)


async def columns_fragment(board: Board, request: Request, session: Session) -> Response:
    """The columns alone, for the page's poll: 204 (nothing to swap) while the store's fingerprint is unchanged."""
    filters = filters_of(request)
    since = _param(request, "since")
    if since is not None and since == await board.run(board.store.read, changes.fingerprint, {}):
        return Response(status_code=204)
    here = f"{PREFIX}/" + (f"?{request.url.query}" if request.url.query else "")
    return await _columns(board, request, session, filters, template="_columns.html", here=here)


async def _columns(
    board: Board, request: Request, session: Session, filters: columns.Filters, *, template: str, here: str
) -> Response:
    """The columns in ``template``: the whole board page (with the filters' choices) or the columns alone."""
    with_options = template == "board.html"
    snapshot = await board.run(board.store.read, _snapshot, {"filters": filters, "options": with_options})
    return board.page(
        request, template, session, snap=snapshot, query=_filter_query(filters), forms=_forms(session), here=here
    )


def _forms(session: Session) -> dict[str, str]:
    """What every write form carries: the session's CSRF token (each form also gets a fresh idempotency key from
    the template's ``idempotency_key()``, so the same form submitted twice acts once)."""
    return {"csrf": session.csrf}


async def issue_view(
    board: Board,
    request: Request,
    session: Session,
    issue_id: str,
    *,
    status_code: int = 200,
    notice: str | None = None,
    notice_kind: str = "error",
) -> Response:
    """The issue page, optionally with a notice (why a write was not done).

    Raises:
        BeeError: ``not_found`` for an unknown id.
    """
    got = await board.call("get", session.actor, {"id": issue_id, "comments_limit": 200})
    hood = await board.run(board.store.read, graph.neighbourhood, {"id": issue_id})
    issue = got["issue"]
    claim = got.get("claim")
    holder = None if claim is None or claim["expired"] else claim["holder"]
    return board.page(
        request,
        "issue.html",
        session,
        status_code,
        got=got,
        issue=issue,
        holder=holder,
        claim=claim,
        mine=holder == session.actor,
        hood=hood,
        not_drawn=board.drawer.refusal(hood),
        graph_words=GRAPH_WORDS,
        notice=notice,
        notice_kind=notice_kind,
        forms=_forms(session),
        priorities=range(5),
        poll_seconds=POLL_SECONDS * 2,
    )


async def issue_page(board: Board, request: Request, session: Session) -> Response:
    return await issue_view(board, request, session, request.path_params["issue_id"])


async def issue_changes(board: Board, request: Request, session: Session) -> Response:
    """For the issue page's poll: 204 while the issue's activity revision is the page's, else a notice."""
    issue_id = request.path_params["issue_id"]
    since = _number(request, "since", 0, 2**62)
    now = await board.run(board.store.read, changes.issue_revision, {"id": issue_id})
    if now is not None and now == since:
        return Response(status_code=204)
    return board.templates.TemplateResponse(request, "_issue_changed.html", {"issue_id": issue_id, "gone": now is None})


def drawer_full(board: Board) -> Response | None:
    """503 with ``Retry-After`` at once when the drawing queue is full, before the graph's session is looked up
    (refusing must cost next to nothing, or refusals become the load)."""
    if not board.drawer.full:
        return None
    error = _drawing_busy()
    return Response(error.message, status_code=error.status, media_type="text/plain", headers=error.headers)


async def graph_svg(board: Board, request: Request, session: Session) -> Response:
    """The dependency graph of an issue's neighbourhood as SVG, drawn by Graphviz (see :mod:`.drawing`).

    Raises:
        BoardError: 503 with ``Retry-After`` when the drawing queue is full, 422 for a picture that is not drawn
            (the issue page lists its links in words).
    """
    # The store read ends, and frees its slot, before any drawing starts.
    hood = await board.run(board.store.read, graph.neighbourhood, {"id": request.path_params["issue_id"]})
    try:
        svg = await board.drawer.svg(hood)
    except Busy:
        raise _drawing_busy() from None
    except Undrawable as exc:
        raise BoardError(422, f"This graph is not drawn: {exc}. The issue page lists its links in words.") from None
    return Response(
        svg,
        media_type="image/svg+xml",
        headers={"content-security-policy": _SVG_POLICY, "content-disposition": "inline; filename=graph.svg"},
    )


def _drawing_busy() -> BoardError:
    seconds = Busy.retry_after_seconds
    return BoardError(
        503,
        f"The board is drawing other graphs; try again in {seconds} s (the issue page lists this one's links in "
        "words).",
        # The connection closes with the answer: a client that waits out Retry-After on a kept-alive connection
        # would otherwise send just as the server's keep-alive timeout (also 5 s) closes it, and see a reset.
        headers={"retry-after": str(seconds), "connection": "close"},
    )


async def epics_page(board: Board, request: Request, session: Session) -> Response:
    listed = await board.run(board.store.read, epics.epics, {})
    return board.page(request, "epics.html", session, listed=listed)


async def search_page(board: Board, request: Request, session: Session) -> Response:
    """The ``search`` tool's answer for the query string (text, status, type, assignee, label), a page at a time."""
    text = _param(request, "q")
    status = _param(request, "status")
    args: dict[str, Any] = {"limit": SEARCH_PAGE, "offset": _number(request, "offset", 0, 10**6) or 0}
    for name, value in (
        ("query", text),
        ("issue_type", _param(request, "type")),
        ("assignee", _param(request, "assignee")),
    ):
        if value is not None:
            args[name] = value
    if status is not None:
        args["status"] = [status]
    if (label := _param(request, "label")) is not None:
        args["labels"] = [label]
    searched = any(k in args for k in ("query", "status", "issue_type", "assignee", "labels"))
    found: dict[str, Any] | None = None
    if searched:
        found = await board.call("search", session.actor, args)
    statuses = await board.run(lambda: board.store.vocabulary()["statuses"])
    return board.page(
        request,
        "search.html",
        session,
        found=found,
        args=args,
        statuses=statuses,
        query={k: v for k, v in request.query_params.items() if k != "offset"},
        page_size=SEARCH_PAGE,
    )


async def new_page(board: Board, request: Request, session: Session) -> Response:
    return await new_view(board, request, session)


async def new_view(
    board: Board,
    request: Request,
    session: Session,
    *,
    values: dict[str, str] | None = None,
    notice: str | None = None,
    status_code: int = 200,
) -> Response:
    vocabulary = await board.run(board.store.vocabulary)
    return board.page(
        request,
        "new.html",
        session,
        status_code,
        types=vocabulary["types"],
        values=values or {"priority": "2", "issue_type": "task", "parent": request.query_params.get("parent", "")},
        notice=notice,
        forms=_forms(session),
        priorities=range(5),
    )
