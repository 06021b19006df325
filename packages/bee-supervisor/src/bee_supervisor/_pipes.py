"""An MCP client transport over the pipe ends of a child the supervisor spawned itself.

The SDK's own stdio transport spawns its server; a supervised stdio host is spawned by :mod:`.process` (so it dies
with the supervisor and is stopped by its rules), and this speaks newline-delimited JSON-RPC over its pipes.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from bee_supervisor.process import read_lines

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

    #: What the SDK's client takes from a transport (its own name for this, TransportStreams, is private).
    Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]


async def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            await anyio.wait_writable(fd)
            continue
        view = view[written:]


@asynccontextmanager
async def pipe_transport(read_fd: int, write_fd: int) -> AsyncIterator[Streams]:
    """Read and write streams of :class:`~mcp.shared.message.SessionMessage` over two non-blocking pipe ends.

    The descriptors stay open when the transport closes; their owner (:class:`~bee_supervisor.process.Child`)
    closes them.
    """
    from mcp import types
    from mcp.shared.message import SessionMessage

    incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        async with incoming_send:
            async for line in read_lines(read_fd):
                if not line.strip():
                    continue
                try:
                    message: SessionMessage | Exception = SessionMessage(
                        types.jsonrpc_message_adapter.validate_json(line)
                    )
                except ValueError as exc:  # the session reports it; the host keeps its connection
                    message = exc
                try:
                    await incoming_send.send(message)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def write() -> None:
        async with outgoing_receive:
            async for message in outgoing_receive:
                text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await _write_all(write_fd, text.encode() + b"\n")
                except OSError:
                    return  # the child closed its stdin or ended; the exit is the supervisor's finding

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        tg.start_soon(write)
        try:
            yield incoming, outgoing
        finally:
            tg.cancel_scope.cancel()
