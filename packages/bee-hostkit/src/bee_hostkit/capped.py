"""A remote answer's body held to a byte cap as it arrives: how Bee's clients of remote MCP servers bound a read."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx2

from bee_contracts.limits import REMOTE_ANSWER_MAX_BYTES


class CappedBody(httpx2.AsyncByteStream):
    """A response body that ends once more than ``limit`` bytes have arrived, raising what ``over()`` returns.

    It counts bytes as they come off the connection, before anything buffers or parses them, so what is held of
    one answer never passes the cap. At the byte that passes it, the connection is closed (not drained).
    """

    def __init__(
        self, body: httpx2.AsyncByteStream, over: Callable[[], BaseException], limit: int = REMOTE_ANSWER_MAX_BYTES
    ) -> None:
        self._body = body
        self._over = over
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        received = 0
        async for chunk in self._body:
            received += len(chunk)
            if received > self._limit:
                await self._body.aclose()
                raise self._over()
            yield chunk

    async def aclose(self) -> None:
        await self._body.aclose()
