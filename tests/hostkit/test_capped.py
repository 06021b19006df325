"""A remote answer's body under its byte cap (bee_hostkit.capped): every byte up to the cap passes, the byte past it
closes the body and raises the caller's failure."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest

from bee_hostkit.capped import CappedBody

pytestmark = pytest.mark.anyio


class _Body(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


class _Over(Exception):
    pass


async def test_a_body_up_to_the_cap_passes_whole() -> None:
    body = _Body([b"abc", b"defg"])
    assert b"".join([chunk async for chunk in CappedBody(body, _Over, limit=7)]) == b"abcdefg"
    assert not body.closed


async def test_the_byte_past_the_cap_closes_the_body_and_raises_the_callers_failure() -> None:
    body = _Body([b"abc", b"defg", b"never read"])
    received: list[bytes] = []

    async def read() -> None:
        async for chunk in CappedBody(body, _Over, limit=6):
            received.append(chunk)

    with pytest.raises(_Over):
        await read()
    assert received == [b"abc"] and body.closed
