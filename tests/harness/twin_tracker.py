"""Two tracker apps on one SQLite store, served over real HTTP in the test's own process: one answering on the
stateless fast path, one sending everything through the SDK. Tests send both the same request and compare.

In-process so that a test can read how many requests the fast path answered (``app.state.fast_path.answered``):
the answers themselves are identical by design, so that count is what shows the fast path was taken at all.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette

from bee_hostkit.http.edge import edge_protocol
from bee_hostkit.http.serve import uvicorn_settings
from bee_tracker.auth import hmac_verifier, mint
from bee_tracker.config import TrackerConfig
from bee_tracker.host import build_app, edge_limits
from bee_tracker.store import open_store
from tests.harness.postgres import free_port

SECRET = b"s" * 32


@dataclass
class Served:
    """One app listening on 127.0.0.1."""

    app: Starlette
    url: str

    @property
    def fast_answered(self) -> int:
        """Requests the fast path answered (0 for the SDK-only app)."""
        fast = self.app.state.fast_path
        return 0 if fast is None else int(fast.answered)


@asynccontextmanager
async def serving(app: Starlette, config: TrackerConfig) -> AsyncIterator[Served]:
    """``app`` behind the hostkit edge with the tracker's limits, on a free port, for the duration of the context."""
    port = free_port()
    settings = uvicorn_settings(
        host="127.0.0.1", port=port, log_level="warning", access_log=False, graceful_shutdown_seconds=1
    )
    server = uvicorn.Server(uvicorn.Config(app, http=edge_protocol(edge_limits(config)), **settings))
    task = asyncio.ensure_future(server.serve())
    try:
        with anyio.fail_after(60):
            while not server.started:
                if task.done():
                    task.result()  # the server could not start: say why
                    raise RuntimeError("the server stopped before it started")
                await anyio.sleep(0.02)
        # /mcp waits for the deferred build; a first request is only slow, not wrong, but settle it here.
        for part in app.state.deferred:
            await part.settled()
        yield Served(app, f"http://127.0.0.1:{port}/mcp")
    finally:
        server.should_exit = True
        await task


def _app(database: Path, home: Path, *, fast: bool) -> Starlette:
    config = TrackerConfig(home=home, store_url=str(database))
    store = open_store(str(database), migrate=False)
    previous = os.environ.get("BEE_HTTP_FAST_PATH")
    os.environ["BEE_HTTP_FAST_PATH"] = "1" if fast else "0"
    try:
        return build_app(store, hmac_verifier(SECRET), config)
    finally:
        if previous is None:
            del os.environ["BEE_HTTP_FAST_PATH"]
        else:
            os.environ["BEE_HTTP_FAST_PATH"] = previous


@asynccontextmanager
async def twin_trackers(folder: Path) -> AsyncIterator[tuple[Served, Served]]:
    """The fast-path tracker and the SDK-only tracker, both on ``folder``/tracker.db."""
    folder.mkdir(parents=True, exist_ok=True)
    database = folder / "tracker.db"
    open_store(str(database)).close()  # migrated once, before either starts
    config = TrackerConfig(home=folder, store_url=str(database))
    async with (
        serving(_app(database, folder, fast=True), config) as fast,
        serving(_app(database, folder, fast=False), config) as sdk,
    ):
        yield fast, sdk


def token(actor: str) -> str:
    """A real HS256 token both twins accept."""
    return mint(SECRET, actor)


def headers_that_matter(headers: Any) -> dict[str, str | None]:
    """The response headers the two paths must agree on."""
    return {name: headers.get(name) for name in ("content-type", "mcp-protocol-version", "mcp-session-id", "allow")}
