"""ASGI apps built once the server has started: an HTTP host answers ``/health`` while its heavy parts load.

Importing the MCP SDK takes most of a second, and a web board its template engine; a restarted host need not keep
its health check waiting for them. A :class:`Deferred` app is built in a worker thread as soon as the app's lifespan
starts (not on first use, so the first real request waits no longer than it would have for a host that built
everything before listening), and a request that comes sooner waits for it. A build that fails is logged and
answered: the app's requests get 503 with the reason, and :attr:`Deferred.failure` lets a health check say so.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass, field

import anyio
import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger("bee.hostkit")

#: What a build gives: the app, and optionally what must stay entered while it serves (an SDK session manager's
#: ``run()``, say).
Built = tuple[ASGIApp, AbstractAsyncContextManager[object] | None]


@dataclass
class Deferred:
    """An ASGI app that ``build`` makes in a worker thread after start-up; requests wait until it is there.

    Start it with :func:`started` (an app's lifespan does); until then, and while the build runs, requests wait.
    """

    name: str
    build: Callable[[], Built]
    _app: ASGIApp | None = field(default=None, init=False, repr=False)
    _ready: anyio.Event | None = field(default=None, init=False, repr=False)
    failure: str | None = field(default=None, init=False)

    @property
    def ready(self) -> bool:
        """Whether the app is built (or its build has failed)."""
        return self._app is not None or self.failure is not None

    async def settled(self) -> None:
        """Wait until the app is built or its build has failed (at once when served without its lifespan)."""
        if self._ready is not None and not self.ready:
            await self._ready.wait()

    async def _run(self) -> None:
        assert self._ready is not None
        try:
            app, lifetime = await anyio.to_thread.run_sync(self.build, abandon_on_cancel=True)
        except Exception as exc:  # any failure of a build: logged, then answered on every request
            logger.exception("%s could not be started", self.name)
            self.failure = f"{self.name} could not be started ({exc.__class__.__name__}: {exc})"
            self._ready.set()
            return
        async with lifetime if lifetime is not None else nullcontext():
            self._app = app
            self._ready.set()
            await anyio.sleep_forever()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None and self.failure is None:
            if self._ready is None:  # served without its lifespan: nothing will ever build it
                raise RuntimeError(f"{self.name} is served outside the lifespan that builds it")
            await self._ready.wait()
        if self._app is None:
            if scope["type"] == "http":
                await _unavailable(send, self.failure or f"{self.name} is not available")
            return
        await self._app(scope, receive, send)


async def _unavailable(send: Send, reason: str) -> None:
    body = json.dumps({"error": "unavailable", "error_description": reason}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@asynccontextmanager
async def started(deferred: Sequence[Deferred]) -> AsyncIterator[None]:
    """Start building each of ``deferred`` in the background for as long as the context lasts (the app's life)."""
    async with anyio.create_task_group() as group:
        for each in deferred:
            each._ready = anyio.Event()
            group.start_soon(each._run, name=f"build {each.name}")
        try:
            yield
        finally:
            group.cancel_scope.cancel()
