"""The board's live updates over real HTTP: a signed-in board's event stream says `change` when the store changes
(on SQLite, and on PostgreSQL for a write made on the other replica), the pages ask for it, and a stream without a
session is refused."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest

from tests.e2e.test_board_link_logs import link_token
from tests.harness.tracker import TrackerFactory, TrackerProcess, tracker_client

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def _signed_in(http: httpx.AsyncClient, server: TrackerProcess) -> None:
    answer = await http.get(f"http://127.0.0.1:{server.port}/board/link", params={"token": link_token(server)})
    assert answer.status_code == 303, answer.text


async def test_a_boards_event_stream_says_when_the_store_changed(
    tracker_factory: TrackerFactory, store_url: str, tmp_path: Path
) -> None:
    count = 2 if store_url.startswith("postgresql") else 1
    servers = [tracker_factory(store_url, home=tmp_path / "home") for _ in range(count)]
    board, writer = servers[0], servers[-1]
    async with httpx.AsyncClient(timeout=30) as http:
        refused = await http.get(f"http://127.0.0.1:{board.port}/board/events")
        assert refused.status_code == 401
        await _signed_in(http, board)
        page = await http.get(f"http://127.0.0.1:{board.port}/board/")
        assert 'data-events="/board/events"' in page.text and "bee:change from:body" in page.text
        async with (
            http.stream("GET", f"http://127.0.0.1:{board.port}/board/events") as stream,
            tracker_client(writer.url, writer.token("ann@x.io"), era="auto") as client,
        ):
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.aiter_lines()
            assert await anext(lines) == ": listening"
            result = await client.call_tool("create", {"title": "seen live"})
            assert not result.is_error
            with anyio.fail_after(20):
                async for line in lines:
                    if line == "event: change":
                        break
