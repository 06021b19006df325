"""The HTTP edge: limits enforced in uvicorn's httptools protocol, before a request reaches the ASGI app.

ASGI runs only after the whole header block was parsed and a task was scheduled on the event loop, which is too
late for what the edge promises, so :class:`EdgeProtocol` (a small subclass of uvicorn's ``HttpToolsProtocol``)
keeps those promises where the bytes arrive:

- **Header caps.** httptools accumulates a header value inside its parser until the value ends, so a 64 MiB
  ``Authorization`` line would be buffered whole before any callback sees it. The protocol counts the bytes it
  feeds the parser instead: a line (the request line included) longer than ``max_header_line_bytes`` or a header
  block larger than ``max_header_bytes`` is answered at once, 414 for the request line and 431 otherwise, before the
  parser is fed the byte that passed the limit. No token is ever parsed from such a request. (A header block that
  starts inside a chunk, after a pipelined request, is checked as the parser reports it instead.)
- **Connection caps.** Each accepted connection is registered (:mod:`bee_hostkit.http.connections`): beyond
  ``max_connections_per_peer`` from one address, or ``max_connections`` in all (lowered to what the process's
  file-descriptor limit allows, :mod:`bee_hostkit.http.descriptors`), a connection that is not in use is closed to
  make room, or the newcomer is closed at once when every connection in the way is in use.
- **Admission.** A request to an admitted path (``/mcp``) is admitted once its body has arrived (or once 64 KiB of
  it has, uvicorn's flow-control mark, past which it must be read by the app), before a task is created for it:
  a client that sends slowly holds no slot (one that waits for ``100 Continue`` is told by the edge). Over
  ``max_in_flight``, when the work already admitted would keep it waiting longer than ``max_queue_seconds``, or when
  its client holds its share of what is in flight (the rule is :mod:`bee_hostkit.http.admission`; whose request it
  is, :mod:`bee_hostkit.http.clients`), the answer is written straight from the protocol callback: 503 with
  ``Retry-After`` and a small JSON body. The slot is released when the request's ASGI task ends, whatever the
  client did meanwhile. A request whose answer is a stream (``Mcp-Method: subscriptions/listen`` under
  ``MCP-Protocol-Version: 2026-07-28``, the era whose SDK holds that header to the body's method), and a request to
  one of ``stream_paths`` (the board's event stream), is admitted against its own cap, ``max_streams``
  (:class:`~.admission.Streams`), never among calls: a thousand listeners hold no call's slot and do not count in the
  cost estimate. A stream whose client stops reading is closed once its writes have waited ``stream_stall_seconds``
  (the transport's buffer is full): a slow listener costs a bounded buffer for a bounded time, then nothing. A
  stream's buffers are kept small (:data:`_STREAM_SEND_BUFFER` in the kernel, :data:`_STREAM_WRITE_BUFFER` in the
  process) rather than growing to the megabytes the kernel would give a bulk transfer: its frames are small change
  notifications.
- **Timeouts.** A request's headers must arrive within ``header_timeout_seconds``: from the moment the connection is
  accepted for its first request (a connection that has sent nothing by then is closed), from its first byte for a
  later one (uvicorn closes a connection idle between requests after 5 s). The whole request, body included, must
  arrive within ``request_timeout_seconds`` of its first byte. Slower is answered 408.
- **Access log.** With ``access_log`` on, a request line never carries its query string or anything shaped like a
  token (:mod:`bee_hostkit.http.access_log`), for every path, answered or refused.

A refused connection is closed gracefully: the answer is written, the write side is shut, and what the client
still sends is read and dropped for a few seconds, so that its TCP stack delivers the answer instead of a reset.

- **A graceful stop.** On SIGTERM uvicorn closes at once every connection with no request in progress, which
  includes one accepted a moment ago whose request is still on its way, or half read. Replicas sharing one
  listening socket are stopped one at a time exactly like that (a rolling restart), and those clients read a
  dropped connection. Such a connection is kept instead: its request is answered with ``connection: close``
  (within the request timeout, once it has begun), and one that sends nothing is closed after
  ``_FIRST_REQUEST_GRACE_SECONDS``. An idle keep-alive connection, after a response, is closed at once, as
  HTTP lets a server do (RFC 9112, section 9.5).

How a host is served with it: :mod:`bee_hostkit.http.serve` (one process), :mod:`bee_hostkit.http.workers` (several).

The protocol relies on uvicorn internals (``on_headers_complete`` handing the cycle to ``_start_asgi_task``, the
``RequestResponseCycle`` fields), imported through :mod:`._uvicorn`; the end-to-end edge tests run against the
uvicorn this package requires and catch a drift.
"""

from __future__ import annotations

import asyncio
import functools
import json
import socket
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from uvicorn import Config

from bee_hostkit.http._uvicorn import (
    HIGH_WATER_LIMIT,
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
    ServerState,
    get_client_addr,
    get_path_with_query_string,
)
from bee_hostkit.http.access_log import hide_queries
from bee_hostkit.http.admission import Admission, Streams
from bee_hostkit.http.clients import Client, client_of
from bee_hostkit.http.connections import Connections, Waiting
from bee_hostkit.http.descriptors import EdgeLoop, connection_cap
from bee_hostkit.http.limits import (
    DEFAULT_RETRY_AFTER_SECONDS,
    STREAM_METHODS,
    STREAM_PROTOCOL_VERSIONS,
    EdgeLimits,
)

#: How long a refused connection keeps draining what the client still sends before it is closed.
_LINGER_SECONDS = 5.0
#: How long a stopping server waits for the first byte of a request on a connection it has just accepted.
_FIRST_REQUEST_GRACE_SECONDS = 1.0
#: A stream's kernel send buffer (SO_SNDBUF; the kernel doubles it), and the bytes its transport holds beyond that
#: before its writes wait: what a listener that stops reading can hold, at most.
_STREAM_SEND_BUFFER = 16 * 1024
_STREAM_WRITE_BUFFER = 16 * 1024


def _json(error: str, description: str) -> bytes:
    return json.dumps({"error": error, "error_description": description}).encode()


_TOO_LARGE = "request_header_fields_too_large"


@dataclass(frozen=True)
class _Passed:
    """Where a header limit was passed (an offset into the chunk), and the answer for it."""

    offset: int
    status: int
    body: bytes


class EdgeProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with header caps, connection caps, edge admission and timeouts.

    Use :func:`edge_protocol` to bind limits; uvicorn instantiates the class once per connection.
    """

    limits: ClassVar[EdgeLimits] = EdgeLimits()
    admission: ClassVar[Admission] = Admission(None, DEFAULT_RETRY_AFTER_SECONDS)
    streams: ClassVar[Streams] = Streams(None, DEFAULT_RETRY_AFTER_SECONDS)
    # Not "connections": uvicorn's protocol keeps the server's set of connections under that name.
    open_connections: ClassVar[Connections] = Connections(EdgeLimits().max_connections, EdgeLimits().max_connections)

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        # Before this connection logs a line (uvicorn's logging setup may run after the protocol class is bound).
        hide_queries(self.access_logger)
        # Accepted: it takes room in the registry until connection_made opens it there, a turn of the loop later.
        self.open_connections.expect()
        if isinstance(self.loop, EdgeLoop) and self.loop.accept_room is None:
            self.loop.accept_room = self.open_connections.room  # accept no more at once than the registry holds
        # Header accounting for the request whose header block is being read.
        self._reading_headers = True
        self._phase = 0  # bumped whenever a new header block starts
        self._header_bytes = 0
        self._line_bytes = 0
        self._first_line_done = False
        self._parsed_bytes = 0  # header bytes the parser has reported for this block (a lower bound on the wire)
        # A header block the parser reported over a limit: every callback is ignored until the feed returns.
        self._stopped: tuple[int, bytes] | None = None
        # A refusal decided while an earlier (pipelined) response is still being written.
        self._pending: tuple[int, bytes] | None = None
        self._refused = False
        self._request_timer: asyncio.TimerHandle | None = None
        # Set by a graceful stop that found this connection waiting for a request: answer it, then close.
        self._stopping = False
        self._first_request_timer: asyncio.TimerHandle | None = None
        self._header_timer: asyncio.TimerHandle | None = None
        # A request to an admitted path whose body is still arriving: admitted (or shed) once it has.
        self._awaiting: tuple[RequestResponseCycle, Any] | None = None
        self._peer = ""
        self._shed_last = False  # whether the last answer on this connection was the edge's 503
        self._streaming = False  # whether its request in progress is an admitted stream (closed on a graceful stop)
        self._stall_timer: asyncio.TimerHandle | None = None  # a stream's writes waiting on a client that reads not

    # -- header caps --------------------------------------------------------------------------------------------

    def _begin_headers(self) -> None:
        self._reading_headers = True
        self._phase += 1
        self._header_bytes = self._line_bytes = 0
        self._first_line_done = False

    def _too_long(self, request_line: bool) -> tuple[int, bytes]:
        cap = self.limits.max_header_line_bytes
        if request_line:
            return 414, _json("uri_too_long", f"the request line is longer than {cap} bytes")
        return 431, _json(_TOO_LARGE, f"a header line is longer than {cap} bytes")

    def _too_large(self) -> tuple[int, bytes]:
        return 431, _json(_TOO_LARGE, f"the request headers are larger than {self.limits.max_header_bytes} bytes")

    def _scan(self, data: bytes) -> tuple[_Passed | None, int, bool]:
        """Where ``data`` first passes a header limit, if it does, and the header state after it otherwise.

        Only bytes up to the block limit are scanned, so the work per request is bounded by the cap.
        """
        line_cap = self.limits.max_header_line_bytes
        end = min(len(data), self.limits.max_header_bytes - self._header_bytes)
        line, first_done, pos = self._line_bytes, self._first_line_done, 0
        while pos < end:
            room = line_cap - line  # bytes this line may still take before its newline
            newline = data.find(b"\n", pos, min(end, pos + room + 1))
            if newline >= 0:
                line, first_done, pos = 0, True, newline + 1
                continue
            if pos + room < end:
                return _Passed(pos + room, *self._too_long(request_line=not first_done)), 0, first_done
            line += end - pos
            break
        if end < len(data):
            return _Passed(end, *self._too_large()), 0, first_done
        return None, line, first_done

    def data_received(self, data: bytes) -> None:
        if self._refused or self._pending is not None:
            return  # the answer is decided: what the client still sends is dropped unread
        if not self._reading_headers:
            self._feed(data)
            return
        passed, line, first_done = self._scan(data)
        if passed is None:
            # Count before feeding: the feed may finish this header block and start the next one.
            self._header_bytes += len(data)
            self._line_bytes, self._first_line_done = line, first_done
            self._feed(data)
            return
        phase = self._phase
        if passed.offset:
            self._feed(data[: passed.offset])  # up to the limit: the header block may end within it
        if self.transport.is_closing() or self._refused or self._pending is not None:
            return
        if self._reading_headers and self._phase == phase:
            self._refuse(passed.status, passed.body)
            return
        self.data_received(data[passed.offset :])

    def _feed(self, data: bytes) -> None:
        super().data_received(data)
        if self._stopped is not None:
            status, body = self._stopped
            self._stopped = None
            self._refuse(status, body)

    # -- parser callbacks ---------------------------------------------------------------------------------------
    #
    # The byte scan above cannot tell where a header block starts when it starts inside a chunk (a pipelined
    # request after a complete one): on_url and on_header check such a block as the parser reports it. What the
    # parser buffered of it is bounded by one read, and once a limit is passed no callback reaches uvicorn's code,
    # so no header of it reaches the app.

    def on_message_begin(self) -> None:
        if self._stopped is not None:
            return
        cycle = self.cycle
        super().on_message_begin()
        self._cancel_first_request_timer()
        self._parsed_bytes = 0
        if cycle is None or cycle.response_complete:  # not in use (else a pipelined request is being parsed)
            self.open_connections.waits(self, Waiting.PARTIAL)
        if self._header_timer is None:  # a later request on the connection: its headers are timed from here
            self._header_timer = self.loop.call_later(self.limits.header_timeout_seconds, self._headers_timed_out)
        self._cancel_request_timer()
        self._request_timer = self.loop.call_later(self.limits.request_timeout_seconds, self._request_timed_out)

    def on_url(self, url: bytes) -> None:
        if self._stopped is not None:
            return
        super().on_url(url)
        if len(self.url) + len(b"GET  HTTP/1.1") > self.limits.max_header_line_bytes:  # the shortest line around it
            self._stopped = self._too_long(request_line=True)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._stopped is not None:
            return
        line = len(name) + 1 + len(value)  # "name:value", the shortest spelling of this line
        self._parsed_bytes += line + 1
        if line > self.limits.max_header_line_bytes:
            self._stopped = self._too_long(request_line=False)
        elif len(self.url) + len(b"GET  HTTP/1.1\n\n") + self._parsed_bytes > self.limits.max_header_bytes:
            self._stopped = self._too_large()
        else:
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self._stopped is not None:
            return
        self._reading_headers = False
        self._cancel_header_timer()
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if self._stopped is not None:
            return
        super().on_body(body)
        # Past uvicorn's flow-control mark reading pauses until the app reads: admit the request now.
        if self._awaited() and len(self.cycle.body) > HIGH_WATER_LIMIT:
            self._admit_awaited()

    def on_message_complete(self) -> None:
        if self._stopped is not None:
            return
        self._cancel_request_timer()
        super().on_message_complete()
        self._begin_headers()
        if self._awaited():
            self._admit_awaited()

    # -- refusing and lingering ---------------------------------------------------------------------------------

    def _refuse(self, status: int, body: bytes) -> None:
        """Answer ``status`` for the request being received (unless it was answered already) and close gracefully."""
        cycle = self.cycle
        writing = cycle is not None and not cycle.response_complete
        if self._reading_headers:
            if writing:
                # An earlier pipelined response is still being written: answer after it, in order.
                self._pending = (status, body)
                return
            self._write(status, body, close=True)
        elif writing:
            assert cycle is not None
            # The request's app is still running: from now on it must not write (and it reads a disconnect).
            cycle.disconnected = True
            cycle.message_event.set()
            if not cycle.response_started:
                self._write(status, body, close=True, scope=cycle.scope)
        self._linger()

    def _linger(self) -> None:
        self._refused = True
        self._awaiting = None
        self._cancel_request_timer()
        self._cancel_header_timer()
        if self.transport.is_closing():
            return
        self.open_connections.waits(self, Waiting.REFUSED)  # draining: the first to make room for a newcomer
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(_LINGER_SECONDS, self.transport.close)

    def _write(
        self,
        status: int,
        body: bytes,
        *,
        close: bool,
        headers: Sequence[tuple[bytes, bytes]] = (),
        scope: Any = None,
    ) -> None:
        content = [STATUS_LINE[status]]
        for name, value in [*self.server_state.default_headers, *headers]:
            content += [name, b": ", value, b"\r\n"]
        content += [b"content-type: application/json\r\ncontent-length: ", str(len(body)).encode(), b"\r\n"]
        if close:
            content.append(b"connection: close\r\n")
        content += [b"\r\n", body]
        self.transport.write(b"".join(content))
        if self.access_log and scope is not None:
            self.access_logger.info(
                '%s - "%s %s HTTP/%s" %d',
                get_client_addr(scope),
                scope["method"],
                get_path_with_query_string(scope),
                scope["http_version"],
                status,
            )

    # -- admission ----------------------------------------------------------------------------------------------

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        # Both the first request of a connection and a dequeued pipelined one pass here, once their headers are in.
        if self._stopping:
            cycle.keep_alive = False  # answered with "connection: close", and the connection closed after it
        if app is not self.app or cycle.scope["path"] not in self.limits.admitted_paths:
            if app is self.app and cycle.scope["path"] in self.limits.stream_paths:
                self._enter_stream(cycle, app)
            else:
                self._serve(cycle, app)
        elif cycle.more_body and len(cycle.body) <= HIGH_WATER_LIMIT:
            # Admitted once the body has arrived: a client that sends it slowly holds no slot meanwhile.
            self._awaiting = (cycle, app)
            if cycle.waiting_for_100_continue and not self.transport.is_closing():
                # The client waits for this before it sends the body (uvicorn sends it when the app first reads).
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                cycle.waiting_for_100_continue = False
        else:
            self._admit(cycle, app)

    def _awaited(self) -> bool:
        """Whether the request the parser is reading is the one waiting for its body before admission."""
        return self._awaiting is not None and self._awaiting[0] is self.cycle

    def _admit_awaited(self) -> None:
        assert self._awaiting is not None
        cycle, app = self._awaiting
        self._awaiting = None
        self._admit(cycle, app)

    def _admit(self, cycle: RequestResponseCycle, app: Any) -> None:
        if _streamed(cycle.scope["headers"]):
            self._enter_stream(cycle, app)
            return
        client = client_of(cycle.scope["headers"], self._peer)
        if (refusal := self.admission.try_enter(time.monotonic(), client)) is None:
            self._serve(cycle, functools.partial(self._run_admitted, app, client))
        else:
            self._shed(cycle, refusal)

    def _serve(self, cycle: RequestResponseCycle, app: Any) -> None:
        self.open_connections.busy(self)  # in use until its response is complete: never closed to make room
        super()._start_asgi_task(cycle, app)

    async def _run_admitted(self, app: Any, client: Client, scope: Any, receive: Any, send: Any) -> None:
        try:
            await app(scope, receive, send)
        finally:
            self.admission.leave(time.monotonic(), client)

    def _enter_stream(self, cycle: RequestResponseCycle, app: Any) -> None:
        """Serve a stream (a listen, or a path in ``stream_paths``) within the stream cap, or shed it."""
        if self.streams.try_enter():
            self._streaming = True
            self._small_buffers()
            self._serve(cycle, functools.partial(self._run_stream, app))
        else:
            self._shed(cycle, self.streams.body)

    def _small_buffers(self) -> None:
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _STREAM_SEND_BUFFER)
        self.transport.set_write_buffer_limits(high=_STREAM_WRITE_BUFFER)

    async def _run_stream(self, app: Any, scope: Any, receive: Any, send: Any) -> None:
        try:
            await app(scope, receive, send)
        finally:
            self._streaming = False
            self._cancel_stall_timer()
            self.streams.leave()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._streaming and self._stall_timer is None:
            self._stall_timer = self.loop.call_later(self.limits.stream_stall_seconds, self._stream_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._cancel_stall_timer()

    def _stream_stalled(self) -> None:
        # The client has not read what the stream wrote for the whole stall time: drop it (it listens again). Aborted,
        # not closed: a close would wait to flush the very bytes the client does not read.
        self._stall_timer = None
        self.transport.abort()

    def _cancel_stall_timer(self) -> None:
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None

    def _shed(self, cycle: RequestResponseCycle, body: bytes) -> None:
        """Answer 503 now, from the protocol callback, without a task (and without reading more of the body)."""
        # Marked answered first, so the parser drops what is left of the body and the next request starts cleanly.
        cycle.response_started = cycle.response_complete = True
        self._shed_last = True
        close = not cycle.keep_alive
        self._write(503, body, close=close, headers=self.admission.retry_after, scope=cycle.scope)
        if close:
            self.transport.close()
        cycle.on_response()

    # -- request timeout ----------------------------------------------------------------------------------------

    def _request_timed_out(self) -> None:
        self._request_timer = None
        if self.transport.is_closing() or self._refused or self._pending is not None:
            return
        if self.pipeline:
            # Queued behind a response still being written: the client is not the slow one. Look again later.
            self._request_timer = self.loop.call_later(self.limits.request_timeout_seconds, self._request_timed_out)
            return
        seconds = self.limits.request_timeout_seconds
        self._refuse(408, _json("request_timeout", f"the request did not arrive in full within {seconds:g} s"))

    def _cancel_request_timer(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _headers_timed_out(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self._refused or self._pending is not None:
            return
        if self.pipeline or self.flow.read_paused:
            # Not reading (a response is still being written): the client is not the slow one. Look again later.
            self._header_timer = self.loop.call_later(self.limits.header_timeout_seconds, self._headers_timed_out)
            return
        if self.cycle is None and self._header_bytes == 0:
            self.transport.close()  # nothing was sent: there is no request to answer
            return
        seconds = self.limits.header_timeout_seconds
        self._refuse(408, _json("request_timeout", f"the request headers did not arrive within {seconds:g} s"))

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    # -- connection ---------------------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        super().connection_made(transport)
        self._peer = self.client[0] if self.client else ""
        if not self.open_connections.open(self, self._peer, time.monotonic()):
            # Over a cap with every connection in the way in use: refused, before a byte is read.
            self._refused = True
            transport.close()
            return
        # The first request's headers are timed from now: a connection that never sends a byte is closed too.
        self._header_timer = self.loop.call_later(self.limits.header_timeout_seconds, self._headers_timed_out)

    def close_idle(self) -> None:
        """Close this connection, which is not in use, to make room for a new one (called by the registry)."""
        self._cancel_header_timer()
        self._cancel_request_timer()
        self._refused = True
        self.transport.close()

    def on_response_complete(self) -> None:
        # A refusal waits until every response before it (pipelined requests queued earlier included) is written.
        if self._pending is not None and not self.pipeline:
            status, body = self._pending
            self._pending = None
            self.server_state.total_requests += 1
            self._write(status, body, close=True)
            self._linger()
            return
        # Waiting for the next request (a pipelined one marks it in use again).
        self.open_connections.waits(self, Waiting.SHED if self._shed_last else Waiting.SERVED)
        self._shed_last = False
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self.open_connections.closed(self)
        self._cancel_stall_timer()
        self._awaiting = None
        self._cancel_request_timer()
        self._cancel_header_timer()
        self._cancel_first_request_timer()
        super().connection_lost(exc)

    # -- a graceful stop ----------------------------------------------------------------------------------------

    def shutdown(self) -> None:
        if self._streaming:
            # A stream lasts as long as its client listens: waiting for it would hold the stop for the whole grace
            # time. Its client reads the stream end, as after any drop, and listens again (to another replica). Aborted:
            # a close would wait for a client that stopped reading to read.
            self.transport.abort()
            return
        cycle = self.cycle
        waiting = cycle is None or (cycle.response_complete and self._header_bytes > 0)
        if not waiting or self._refused or self._pending is not None or self.transport.is_closing():
            super().shutdown()
            return
        self._stopping = True
        if cycle is None and self._header_bytes == 0:
            # Nothing has arrived yet; a request that has begun is bounded by the request timeout instead.
            self._first_request_timer = self.loop.call_later(_FIRST_REQUEST_GRACE_SECONDS, self.transport.close)

    def _cancel_first_request_timer(self) -> None:
        if self._first_request_timer is not None:
            self._first_request_timer.cancel()
            self._first_request_timer = None


def _streamed(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether a request with these (lower-cased) headers asks for a stream: its ``Mcp-Method`` says so, in the era
    whose SDK refuses a request whose header and body disagree (a handshake-era request naming a stream method in
    its header is taken for what it is, a call, counted and paced as one)."""
    method = version = False
    for name, value in headers:
        if name == b"mcp-method":
            method = value in STREAM_METHODS
        elif name == b"mcp-protocol-version":
            version = value in STREAM_PROTOCOL_VERSIONS
    return method and version


def edge_protocol(limits: EdgeLimits) -> type[EdgeProtocol]:
    """An :class:`EdgeProtocol` class bound to ``limits``, one shared admission count and one connection registry
    (its total cap lowered to what this process's file-descriptor limit allows), for uvicorn's ``http=``."""
    admission = Admission(
        limits.max_in_flight,
        limits.retry_after_seconds,
        max_queue_seconds=limits.max_queue_seconds,
        floor=limits.min_in_flight,
    )
    connections = Connections(connection_cap(limits.max_connections), limits.max_connections_per_peer)
    streams = Streams(limits.max_streams, limits.retry_after_seconds)
    bound = {"limits": limits, "admission": admission, "streams": streams, "open_connections": connections}
    return type("BoundEdgeProtocol", (EdgeProtocol,), bound)


@functools.cache
def _protocol_of_this_process(limits: EdgeLimits) -> type[EdgeProtocol]:
    return edge_protocol(limits)


@dataclass(frozen=True)
class EdgeProtocolFactory:
    """What :func:`edge_protocol` gives, in a form that can be pickled: uvicorn sends its configuration to each
    worker process by pickling it, and a class made at run time cannot be. Called by uvicorn once per connection,
    like a protocol class; each process binds its own class on first use, so each counts its own admission."""

    limits: EdgeLimits

    def __call__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> EdgeProtocol:
        return _protocol_of_this_process(self.limits)(config, server_state, app_state, _loop)
