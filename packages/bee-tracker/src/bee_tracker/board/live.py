"""The board's live updates: server-sent events at ``/board/events`` when the store changes, from the listening bus.

An open board page (and an issue page) keeps its 5-second poll as a fallback, and also listens here: the page's
script (``static/live.js``) opens an ``EventSource`` and, on each ``change`` event, asks for its columns (or its
issue's changes) at once, the same request the poll makes. The stream says only "something changed"; what changed
is read by the page's own request, under the session's rights, so nothing in the stream needs filtering per reader.
Changes come from the same bus that wakes MCP listeners (:mod:`bee_tracker.listening.bus`): on PostgreSQL a write
on any replica reaches every replica's open boards. Bursts are coalesced (:data:`COALESCE_SECONDS`), and a comment
line every :data:`PING_SECONDS` keeps proxies from closing an idle stream.

The HTTP edge treats ``/board/events`` as a stream, as it does a listen (:mod:`bee_hostkit.http.edge`): counted apart
from calls, closed when its client stops reading, and ended at once by a graceful stop (the browser reconnects,
possibly to another replica).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import anyio
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from bee_tracker.board.base import Board
from bee_tracker.board.sessions import Session

#: Where the board's event stream is served (under the board's prefix).
EVENTS_PATH: Final = "/events"
#: Changes within this long of each other make one event.
COALESCE_SECONDS: Final = 0.25
#: A comment line this often while nothing changes.
PING_SECONDS: Final = 15.0


async def _events(board: Board) -> AsyncIterator[bytes]:
    changed = anyio.Event()

    def heard(touched: list[str]) -> None:
        nonlocal changed
        changed.set()

    assert board.changes is not None
    stop = board.changes.watch(heard)
    try:
        yield b": listening\n\n"
        while True:
            with anyio.move_on_after(PING_SECONDS):
                await changed.wait()
            if not changed.is_set():
                yield b": ping\n\n"
                continue
            await anyio.sleep(COALESCE_SECONDS)
            changed = anyio.Event()
            yield b"event: change\ndata: {}\n\n"
    finally:
        stop()


async def events(board: Board, request: Request, session: Session) -> Response:
    """``GET /board/events``: a ``change`` event whenever the store changed (404 where nothing announces changes)."""
    if board.changes is None:
        return Response("This board has no live updates; it polls.", status_code=404, media_type="text/plain")
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(_events(board), media_type="text/event-stream", headers=headers)
