"""A stdio transport for the SDK's server loop that enforces the frame limit in both directions.

The SDK's own stdio transport accepts lines of any size and silently drops a line that is not JSON, leaving the
client waiting. This one reads raw bytes through :class:`~bee_hostkit.framing.FrameSplitter` and answers at once:

- a frame over the limit gets -32600 (with its id when it can be recovered) and is never buffered whole;
- a frame that is not JSON gets -32700; JSON that is not a JSON-RPC message gets -32600;
- an outbound response over the limit is replaced by a -32603 error for the same id.

In every case the host keeps serving. While it serves, fd 0 reads /dev/null and fd 1 points at stderr, so stray
prints from libraries cannot corrupt the wire.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import BinaryIO

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from bee_contracts.limits import MAX_FRAME_BYTES
from bee_hostkit.framing import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    Frame,
    FrameSplitter,
    Oversized,
    error_frame,
    peek_id,
    recover_id,
)

logger = logging.getLogger("bee.hostkit.stdio")

_READ_CHUNK = 64 * 1024


class _ClaimedStdio:
    """Private duplicates of fd 0/1 for the wire; the standard descriptors are diverted while serving."""

    def __init__(self) -> None:
        self._saved_in = os.dup(0)
        self._saved_out = os.dup(1)
        self.wire_in: BinaryIO = os.fdopen(os.dup(0), "rb", buffering=_READ_CHUNK)
        self.wire_out: BinaryIO = os.fdopen(os.dup(1), "wb", buffering=0)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        sys.stdout.flush()
        os.dup2(2, 1)

    def restore(self) -> None:
        os.dup2(self._saved_in, 0)
        os.dup2(self._saved_out, 1)
        os.close(self._saved_in)
        os.close(self._saved_out)


def _read_some(stream: BinaryIO) -> bytes:
    read1 = getattr(stream, "read1", None)
    return read1(_READ_CHUNK) if read1 is not None else stream.read(_READ_CHUNK)


@asynccontextmanager
async def capped_stdio_server(
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    *,
    limit: int = MAX_FRAME_BYTES,
) -> AsyncIterator[tuple[object, object]]:
    """Yield ``(read_stream, write_stream)`` for ``Server.run`` over capped stdio.

    Pass binary ``stdin``/``stdout`` to serve other streams (tests); by default the process's own are claimed.
    """
    claimed = _ClaimedStdio() if stdin is None and stdout is None else None
    wire_in: BinaryIO = claimed.wire_in if claimed else stdin  # type: ignore[assignment]  # both given together
    wire_out: BinaryIO = claimed.wire_out if claimed else stdout  # type: ignore[assignment]
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    out_lock = anyio.Lock()
    writer_done = anyio.Event()

    async def emit(data: bytes) -> None:
        def write() -> None:
            wire_out.write(data)
            wire_out.flush()

        async with out_lock:
            await anyio.to_thread.run_sync(write)

    async def accept(item: Frame | Oversized) -> None:
        if isinstance(item, Oversized):
            request_id = recover_id(item.head)
            logger.warning("refused an inbound frame of at least %d bytes (limit %d)", item.size, limit)
            await emit(
                error_frame(
                    request_id,
                    INVALID_REQUEST,
                    f"frame of at least {item.size} bytes exceeds the {limit}-byte frame limit; send a smaller request",
                    {"limitBytes": limit, "frameBytes": item.size},
                )
            )
            return
        try:
            message = types.jsonrpc_message_adapter.validate_json(item.data, by_name=False)
        except ValidationError as exc:
            if any(err.get("type") == "json_invalid" for err in exc.errors()):
                await emit(error_frame(None, PARSE_ERROR, "parse error: the frame is not valid JSON"))
            else:
                await emit(
                    error_frame(
                        peek_id(item.data),
                        INVALID_REQUEST,
                        "invalid request: the frame is JSON but not a JSON-RPC 2.0 message",
                    )
                )
            return
        await read_writer.send(SessionMessage(message))

    async def reader() -> None:
        splitter = FrameSplitter(limit)
        try:
            async with read_writer:
                while True:
                    chunk = await anyio.to_thread.run_sync(_read_some, wire_in, abandon_on_cancel=True)
                    if not chunk:
                        break
                    for item in splitter.feed(chunk):
                        await accept(item)
                for item in splitter.finish():
                    await accept(item)
        except anyio.ClosedResourceError:  # the server loop ended first
            await anyio.lowlevel.checkpoint()

    async def writer() -> None:
        try:
            async with write_reader:
                async for session_message in write_reader:
                    message = session_message.message
                    data = message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
                    if len(data) > limit:
                        request_id = getattr(message, "id", None)
                        logger.error("replaced an outbound frame of %d bytes (limit %d)", len(data), limit)
                        if request_id is None:
                            continue  # an oversized notification has nobody to answer; it is dropped, logged
                        data = error_frame(
                            request_id,
                            INTERNAL_ERROR,
                            f"the response of {len(data)} bytes exceeds the {limit}-byte frame limit",
                            {"limitBytes": limit, "frameBytes": len(data)},
                        ).rstrip(b"\n")
                    await emit(data + b"\n")
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()
        finally:
            writer_done.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            yield read_stream, write_stream
            # Let the last responses reach the wire before the reader (blocked on stdin) is abandoned.
            with anyio.move_on_after(5):
                await writer_done.wait()
            tg.cancel_scope.cancel()
    finally:
        read_stream.close()  # normally closed by the server loop already; closing twice is harmless
        if claimed is not None:
            claimed.restore()
