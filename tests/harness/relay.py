"""A TCP relay in front of a real server, for faults between client and server: slow requests, lost requests.

It forwards bytes both ways, in a thread of its own. ``delay`` holds each chunk from the client that long;
``swallow`` makes it stop forwarding the client's bytes from the first chunk that contains it, so that request
(and any after it on that connection) reaches the server never and is never answered — a request lost on the way.
Every connection is counted and every byte a client sends is kept (``connections``, ``received``), so a test can
say what reached the server, or that nothing did.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from types import TracebackType


class Relay:
    def __init__(self, upstream_port: int, *, delay: float = 0.0, swallow: bytes | None = None) -> None:
        self.upstream_port = upstream_port
        self.delay = delay
        self.swallow = swallow
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._connections: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._closing = asyncio.Event()
        #: Connections accepted, and every byte clients sent on them, in arrival order.
        self.connections = 0
        self.received = bytearray()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> Relay:
        self._thread.start()
        assert self._ready.wait(10), "the relay did not start"
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._relay, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._server = server
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    async def _close(self) -> None:
        """Stop accepting, end every connection by closing its sockets (rather than cancelling its task, whose
        cancellation Python 3.11's stream server reports as an error), and wait for them."""
        self._server.close()
        self._closing.set()
        for writer in list(self._writers):
            writer.close()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    async def _relay(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.connections += 1
        self._connections.add(task)
        self._writers.add(client_writer)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            client_writer.close()
            self._connections.discard(task)
            return
        self._writers.add(upstream_writer)
        if self._closing.is_set():
            upstream_writer.close()
            client_writer.close()

        async def to_server() -> None:
            while chunk := await client_reader.read(65536):
                self.received += chunk
                if self.swallow is not None and self.swallow in chunk:
                    await self._closing.wait()  # lost: never forwarded, never answered
                    return
                await asyncio.sleep(self.delay)
                upstream_writer.write(chunk)
                await upstream_writer.drain()
            upstream_writer.close()

        async def to_client() -> None:
            while chunk := await upstream_reader.read(65536):
                client_writer.write(chunk)
                await client_writer.drain()
            client_writer.close()

        try:
            await asyncio.gather(to_server(), to_client(), return_exceptions=True)
        finally:
            for writer in (client_writer, upstream_writer):
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
                self._writers.discard(writer)
            self._connections.discard(task)
