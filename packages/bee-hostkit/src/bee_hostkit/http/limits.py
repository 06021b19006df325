"""What the HTTP edge enforces, as data (cheap to import: the CLI reads the defaults for its --help).

The mechanism is :mod:`bee_hostkit.http.edge`; the defaults are documented in docs/operations.md.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The request line and every header together, in bytes; more is answered 431.
DEFAULT_MAX_HEADER_BYTES = 32 * 1024
#: One header line (or the request line), in bytes; longer is answered 431 (414 for the request line).
DEFAULT_MAX_HEADER_LINE_BYTES = 8 * 1024
#: Seconds a client has to send a request's headers and body, from its first byte; slower is answered 408.
DEFAULT_REQUEST_TIMEOUT_SECONDS = 30.0
#: Seconds a client has to send a request's headers: from the moment the connection is accepted for its first
#: request (a connection that sends nothing is closed then), from its first byte for a later one; slower is 408.
DEFAULT_HEADER_TIMEOUT_SECONDS = 10.0
#: Connections one process holds open at once (lowered to what its file-descriptor limit allows); beyond it an idle
#: connection is closed to make room, or the new one is refused.
DEFAULT_MAX_CONNECTIONS = 2048
#: Connections one client address holds open at once, in one process (at most the total); beyond it that address's
#: own idle connection is closed to make room, or the new one is refused.
DEFAULT_MAX_CONNECTIONS_PER_PEER = 1024
#: The Retry-After a shed request is given, in seconds.
DEFAULT_RETRY_AFTER_SECONDS = 1
#: The queued work a new request may wait behind, in seconds of the host's measured time per request
#: (bee_hostkit.http.admission); more is shed with 503.
DEFAULT_MAX_QUEUE_SECONDS = 0.15
#: Requests admitted whatever the cost estimate says, so a cold estimate or one slow call never sheds everything,
#: and a team's burst (32 agents claiming at once, each call tens of ms on PostgreSQL) is served as a count would
#: serve it: the SDK's clients do not retry a 503, so shedding what a count admits turns a short wait into an error.
DEFAULT_MIN_IN_FLIGHT = 32
#: Open streams (``subscriptions/listen``) one process admits, counted apart from calls (they last as long as their
#: client listens); more are shed with 503.
DEFAULT_MAX_STREAMS = 1024
#: Seconds a stream's writes may wait on a client that does not read (its buffer full) before it is closed.
DEFAULT_STREAM_STALL_SECONDS = 10.0
#: The ``Mcp-Method`` header value (MCP 2026-07-28, which the SDK checks against the body) of a request whose answer
#: is a stream.
STREAM_METHODS = frozenset({b"subscriptions/listen"})
#: The ``MCP-Protocol-Version`` values under which the SDK holds ``Mcp-Method`` to the body's method (2026-07-28):
#: in the handshake era nothing checks the header, so a request there is never taken for a stream by it.
STREAM_PROTOCOL_VERSIONS = frozenset({b"2026-07-28"})


@dataclass(frozen=True)
class EdgeLimits:
    """The edge's limits. ``max_in_flight=None`` sets no hard cap on requests to ``admitted_paths``, and
    ``max_queue_seconds=None`` admits by count alone; the rule is :mod:`bee_hostkit.http.admission`.

    Raises:
        ValueError: a limit is out of range (a line limit larger than the block limit, a zero admission limit, a
            queue target that is not positive, a connection limit below 1).
    """

    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    max_header_line_bytes: int = DEFAULT_MAX_HEADER_LINE_BYTES
    max_in_flight: int | None = 100
    max_queue_seconds: float | None = DEFAULT_MAX_QUEUE_SECONDS
    min_in_flight: int = DEFAULT_MIN_IN_FLIGHT
    admitted_paths: frozenset[str] = frozenset({"/mcp"})
    retry_after_seconds: int = DEFAULT_RETRY_AFTER_SECONDS
    request_timeout_seconds: float = DEFAULT_REQUEST_TIMEOUT_SECONDS
    header_timeout_seconds: float = DEFAULT_HEADER_TIMEOUT_SECONDS
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_connections_per_peer: int = DEFAULT_MAX_CONNECTIONS_PER_PEER
    max_streams: int | None = DEFAULT_MAX_STREAMS
    stream_stall_seconds: float = DEFAULT_STREAM_STALL_SECONDS
    #: Paths outside ``admitted_paths`` whose answer is a stream (server-sent events), counted as streams.
    stream_paths: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not 0 < self.max_header_line_bytes <= self.max_header_bytes:
            raise ValueError("the header line limit (--max-header-line-bytes) must be at most the header limit")
        if self.max_in_flight is not None and self.max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        if self.max_queue_seconds is not None and not self.max_queue_seconds > 0:
            raise ValueError("max_queue_seconds must be positive (None admits by count alone)")
        if self.min_in_flight < 1:
            raise ValueError("min_in_flight must be at least 1")
        if self.request_timeout_seconds <= 0 or self.header_timeout_seconds <= 0 or self.retry_after_seconds < 0:
            raise ValueError("the request and header timeouts must be positive and Retry-After not negative")
        if self.max_connections < 1 or self.max_connections_per_peer < 1:
            raise ValueError("the connection limits must be at least 1")
        if self.max_streams is not None and self.max_streams < 1:
            raise ValueError("max_streams must be at least 1 (None: no cap)")
        if self.stream_stall_seconds <= 0:
            raise ValueError("stream_stall_seconds must be positive")
