"""A stdio transport for the SDK's server loop that enforces the frame limit in both directions.

The SDK's own stdio transport accepts lines of any size and silently drops a line that is not JSON, leaving the
client waiting. This one reads raw bytes through :class:`~bee_contracts.framing.FrameSplitter` and answers at once:

- a frame over the limit gets -32600 (with its id when it can be recovered) and is never buffered whole;
- a frame that is not JSON gets -32700; JSON that is not a JSON-RPC message gets -32600, and so does a request
  whose id is null, a float, a boolean, an object or an array (see :func:`decode_frame`), with id null;
- an outbound response over the limit is replaced by a -32603 error for the same id.

In every case the host keeps serving. While it serves, fd 0 reads /dev/null and fd 1 points at stderr, so stray
prints from libraries cannot corrupt the wire.

When stdin closes, the host ends within about a second whatever its handlers are doing: the SDK cancels in-flight
requests (answering each with "Connection closed"), responses already produced get :data:`DRAIN_SECONDS` to reach
the wire, and :func:`run_until_eof` then ends the process without joining worker threads that are still busy
(Python would otherwise wait for each at exit, however long it runs). :func:`serve_stdio` serves a
:class:`~bee_hostkit.host.Host` that way.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, BinaryIO, TypeVarTuple

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from bee_contracts.framing import (
    Frame,
    FrameSplitter,
    Oversized,
    invalid_id_error,
    oversized_answer,
    peek_id,
    recover_id,
)
from bee_contracts.limits import MAX_FRAME_BYTES
from bee_contracts.wire import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, compact, error_frame
from bee_hostkit import threads
from bee_hostkit._sdk import create_context_streams
from bee_hostkit.results import compact_bytes
from bee_hostkit.validation import read_float, read_int, read_json

if TYPE_CHECKING:
    from bee_hostkit.host import Host

logger = logging.getLogger("bee.hostkit.stdio")

_READ_CHUNK = 64 * 1024
#: Writes up to this size go into a pipe whole (POSIX PIPE_BUF's minimum on Linux is a page).
_PIPE_ATOMIC = 4096

#: After stdin closes, how long responses already produced get to reach the wire before the transport stops.
DRAIN_SECONDS = 0.5
#: How long idle worker threads get to wind down once the event loop is gone; a busy one is left behind.
_WORKER_GRACE_SECONDS = 0.1

ArgsT = TypeVarTuple("ArgsT")


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


def decode_frame(data: bytes) -> types.JSONRPCMessage | bytes:
    """The JSON-RPC message in one inbound frame, or the error frame that answers it.

    Raises nothing: every frame gets a message or an answer. pydantic's parser (the fast path) stops at about 200
    levels of nesting and at integers of about 4,300 digits, both valid JSON: such a frame is read again by the
    standard library (:func:`~bee_hostkit.validation.read_json`), so its request is served (and a number no
    reader can hold is refused by argument validation, as ``invalid_argument`` naming it).
    """
    value: object = None
    try:
        message = types.jsonrpc_message_adapter.validate_json(data, by_name=False)
    except ValidationError as exc:
        if not any(err.get("type") == "json_invalid" for err in exc.errors()):
            return error_frame(
                peek_id(data), INVALID_REQUEST, "invalid request: the frame is JSON but not a JSON-RPC 2.0 message"
            )
        try:
            value = read_json(data)
        except RecursionError:
            return error_frame(recover_id(data), INVALID_REQUEST, "invalid request: the frame nests too deeply to read")
        except ValueError:  # not JSON, not UTF-8, NaN or Infinity
            return error_frame(None, PARSE_ERROR, "parse error: the frame is not valid JSON")
        try:
            message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
        except ValidationError:
            return error_frame(
                _id_in(value), INVALID_REQUEST, "invalid request: the frame is JSON but not a JSON-RPC 2.0 message"
            )
    if isinstance(message, types.JSONRPCNotification) and b'"id"' in data:
        # A request with an id it may not carry parses as a notification, which nobody answers.
        if value is None:
            # pydantic read it, so only NaN or Infinity (which pydantic allows) can stop the standard library.
            value = json.loads(data, parse_int=read_int, parse_float=read_float)
        refusal = invalid_id_error(value)
        if refusal is not None:
            return refusal
    return message


def encode_message(message: types.JSONRPCMessage) -> bytes:
    """One outbound message as the bytes of its frame (without the newline).

    A response is written by the serializer tool results are measured with (:func:`bee_hostkit.results.compact_bytes`),
    so the size a result was counted at is its size on the wire, and a large result costs one fast pass. Other
    messages (errors, notifications, requests to the client) are small and go through the SDK's models.
    """
    if isinstance(message, types.JSONRPCResponse):
        return compact_bytes({"jsonrpc": message.jsonrpc, "id": message.id, "result": message.result})
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
    except PydanticSerializationError:
        # A lone surrogate (a client may send "\\ud800" as an id, which JSON allows and UTF-8 cannot carry): the
        # same message, that string escaped.
        return compact(message.model_dump(mode="python", by_alias=True, exclude_unset=True))


def _id_in(value: object) -> int | str | None:
    found = value.get("id") if isinstance(value, dict) else None
    return found if isinstance(found, int | str) and not isinstance(found, bool) else None


def _pipe_fd(stream: BinaryIO) -> int | None:
    """The descriptor of ``stream`` when it is a pipe the event loop can wait on; else None (a file, a terminal,
    an in-memory stream), which is written from a worker thread."""
    try:
        fd = stream.fileno()
        return fd if stat.S_ISFIFO(os.fstat(fd).st_mode) else None
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return None


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
    if claimed is not None:
        wire_in, wire_out = claimed.wire_in, claimed.wire_out
    else:
        if stdin is None or stdout is None:
            raise TypeError("pass both stdin and stdout, or neither")
        wire_in, wire_out = stdin, stdout

    out_pipe = _pipe_fd(wire_out)

    async def receive() -> bytes:
        # A blocked reader thread: woken by the client's write directly, it answers sooner than an event-loop wait
        # on the pipe (measured: 1.3x the bare SDK's round trip that way, 1.0x this).
        return await threads.run_sync(_read_some, wire_in)

    async def send(data: bytes) -> None:
        def write() -> None:
            wire_out.write(data)
            wire_out.flush()

        if out_pipe is not None and len(data) <= _PIPE_ATOMIC:
            # A pipe that polls writable has a free buffer, which takes a write this small whole, at once: no
            # worker thread is needed (and the wait is cancellable if the client stops reading).
            await anyio.wait_writable(out_pipe)
            os.write(out_pipe, data)
            return
        # Abandonable: at shutdown a client that stopped reading must not hold the process on a full pipe.
        await threads.run_sync(write)

    try:
        async with capped_streams(receive, send, limit=limit) as streams:
            yield streams
    finally:
        if claimed is not None:
            claimed.restore()


@asynccontextmanager
async def capped_streams(
    receive: Callable[[], Awaitable[bytes]],
    send: Callable[[bytes], Awaitable[None]],
    *,
    limit: int = MAX_FRAME_BYTES,
) -> AsyncIterator[tuple[object, object]]:
    """Yield ``(read_stream, write_stream)`` for ``Server.run`` over any byte transport, with the frame limit.

    ``receive`` returns the next bytes (empty at end of stream); ``send`` writes bytes whole. Stdio
    (:func:`capped_stdio_server`) and a warm host's socket sessions (:mod:`bee_hostkit.stdio.warm`) are both served
    through here, so every frame rule of this module holds on both.
    """
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    out_lock = anyio.Lock()
    writer_done = anyio.Event()

    async def emit(data: bytes) -> None:
        async with out_lock:
            await send(data)

    async def accept(item: Frame | Oversized) -> None:
        if isinstance(item, Oversized):
            logger.warning("refused an inbound frame of at least %d bytes (limit %d)", item.size, limit)
            await emit(oversized_answer(item, limit))
            return
        decoded = decode_frame(item.data)
        if isinstance(decoded, bytes):
            await emit(decoded)
        else:
            await read_writer.send(SessionMessage(decoded))

    async def reader() -> None:
        splitter = FrameSplitter(limit)
        try:
            async with read_writer:
                while True:
                    chunk = await receive()
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
                    data = encode_message(message)
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
            # Let the last responses reach the wire, briefly, before the reader (blocked on input) is abandoned.
            with anyio.move_on_after(DRAIN_SECONDS):
                await writer_done.wait()
            tg.cancel_scope.cancel()
    finally:
        read_stream.close()  # normally closed by the server loop already; closing twice is harmless


def busy_workers(grace_seconds: float = _WORKER_GRACE_SECONDS) -> list[str]:
    """The names of the non-daemon threads still running after waiting up to ``grace_seconds`` in all for them
    (worker threads of abandoned calls, once a host's loop has returned)."""
    deadline = time.monotonic() + grace_seconds
    busy = []
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            busy.append(thread.name)
    return busy


def run_until_eof(serve: Callable[[*ArgsT], Awaitable[None]], *args: *ArgsT) -> None:
    """Run ``serve(*args)`` (a stdio serving loop) on a new event loop, then end promptly, busy workers or not.

    A handler thread cannot be interrupted: one reading a huge file, parsing, or blocked in a system call runs on
    after its request was cancelled, and Python joins every such thread before the process may exit. So when the
    loop has returned and worker threads are still busy after a short grace, the process exits here and now, with
    status 0, after flushing the logs: the client has gone, and nothing a handler still does can reach it.
    """
    anyio.run(serve, *args)
    busy = busy_workers()
    if busy:
        logger.warning("stdin closed; leaving %d busy worker thread(s) behind and exiting", len(busy))
        logging.shutdown()
        sys.stderr.flush()
        os._exit(0)


async def _serve_stdio(host: Host) -> None:
    server = host.build_server()
    async with capped_stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())  # type: ignore[arg-type]  # context streams, typed as the SDK's


def serve_stdio(host: Host) -> None:
    """Serve ``host`` over capped stdio until the client closes stdin: the blocking entry point of host commands;
    the process ends within about a second of stdin closing."""
    run_until_eof(_serve_stdio, host)
