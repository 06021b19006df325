"""The file descriptors an HTTP host holds: its connection cap under the process's limit, and accept failures logged
once an interval.

Every connection is a file descriptor, and a process may hold only ``RLIMIT_NOFILE`` of them (``ulimit -n``, often
1024). At that limit ``accept()`` fails with ``EMFILE``; asyncio then logs the failure with a traceback once for
each of the listening socket's backlog (uvicorn's is 2048) every time the socket is ready, pauses accepting for a
second, and tries again. A flood of idle connections used to do exactly that: 101 MB of tracebacks in 40 s, and no
new connection, a health check's included, accepted until one of the flood's closed. So:

- :func:`raise_descriptor_limit` raises the soft limit to what the connection cap needs, as far as the hard limit
  allows (as Go's runtime and most servers do: the soft limit of 1024 dates from ``select()``, which nothing here
  uses);
- :func:`connection_cap` lowers the cap to what the limit leaves after a reserve for everything else the process
  opens (the database, log files, the store), with a warning, so the edge refuses or makes room before ``accept()``
  ever fails;
- :func:`edge_loop`, the event loop uvicorn runs, accepts no more connections in one turn than the edge's registry
  has room for (at least ``ACCEPT_BATCH_AT_CAP``): asyncio accepts a whole backlog's worth (2048) before any of them
  reaches the registry, so a burst would overrun any reserve; at the cap the registry closes or refuses what is over
  it a turn later, so the process holds at most the cap plus two such batches (the newcomers, and the connections
  they displaced, closed a turn later);
- it logs an ``accept()`` failure at most once every ``ACCEPT_LOG_INTERVAL`` seconds, with the count, and without a
  traceback.

The batch relies on asyncio's private ``_accept_connection(..., backlog, ...)`` (the same from 3.11 to 3.13); the
end-to-end flood test (tests/e2e/test_tracker_slow_clients.py) catches a drift. A fixed batch of 16 instead doubled
the p99 of 1,000 clients' opening burst (0.63-0.84 s against 0.34-0.39 s, four alternating rounds): connections
waited in the kernel's queue while the first ones' requests were read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

logger = logging.getLogger("bee.hostkit.edge")

#: At most one warning about failed accepts per this many seconds (the count covers the interval).
ACCEPT_LOG_INTERVAL = 10.0
#: Descriptors kept for everything but connections (the accept batch twice over, the database pool, log files,
#: the store): at least this many, or an eighth of the limit if more.
MIN_RESERVE = 128
#: Connections accepted per turn of the event loop when the edge's registry is at its cap (newcomers that make room).
ACCEPT_BATCH_AT_CAP = 16

_ACCEPT_FAILED = "socket.accept() out of system resource"


def _reserve(limit: int) -> int:
    return max(MIN_RESERVE, limit // 8)


def descriptor_limit() -> int | None:
    """The process's soft limit on open file descriptors (None where there is none to read)."""
    try:
        import resource
    except ImportError:  # not a Unix
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_descriptor_limit(connections: int) -> None:
    """Raise the soft descriptor limit so that ``connections`` fit beside the reserve, up to the hard limit.

    Worker processes inherit the raised limit. Where the hard limit is lower, :func:`connection_cap` lowers the cap.
    """
    try:
        import resource
    except ImportError:  # not a Unix
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(connections + MIN_RESERVE, -(-connections * 8 // 7))
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if new > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))


def connection_cap(wanted: int, limit: int | None = None) -> int:
    """``wanted`` connections, or fewer when the descriptor ``limit`` (default: this process's) cannot hold them
    beside the reserve, with a warning saying so; at least one."""
    if limit is None:
        limit = descriptor_limit()
    if limit is None:
        return wanted
    room = max(1, limit - _reserve(limit))
    if room >= wanted:
        return wanted
    logger.warning(
        "the process may open %d file descriptors (ulimit -n): with %d kept for everything else, it holds at most %d "
        "connections, not the %d asked for; raise the limit to hold more",
        limit,
        _reserve(limit),
        room,
        wanted,
    )
    return room


class AcceptFailures:
    """An event-loop exception handler that logs failed accepts once an interval, without a traceback, and hands
    everything else to the loop's default handler."""

    def __init__(self) -> None:
        self.failures = 0
        self._last_report: float | None = None

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == _ACCEPT_FAILED:
            self._note(loop.time(), context.get("exception"))
        elif _retrying_accept(context):
            # The retry asyncio schedules after a failed accept, run after the listening socket was closed (a stop).
            logger.debug("a retry of accept() found the listening socket closed")
        else:
            loop.default_exception_handler(context)

    def _note(self, now: float, exc: object) -> None:
        self.failures += 1
        if self._last_report is not None and now - self._last_report < ACCEPT_LOG_INTERVAL:
            return
        logger.warning(
            "could not accept connections: %s (%d times since the last report); accepting again in a second. Raise "
            "the file-descriptor limit (ulimit -n) or lower the connection limit",
            exc,
            self.failures,
        )
        self.failures = 0
        self._last_report = now


def _retrying_accept(context: dict[str, Any]) -> bool:
    callback = getattr(context.get("handle"), "_callback", None)
    exc = context.get("exception")
    return getattr(callback, "__name__", None) == "_start_serving" and isinstance(exc, ValueError | OSError)


class EdgeLoop(asyncio.SelectorEventLoop):
    """asyncio's selector event loop, accepting in one turn no more connections than ``accept_room()`` says fit (at
    least ``ACCEPT_BATCH_AT_CAP``); the edge's protocol sets ``accept_room`` to its registry's when it first runs on
    the loop (None: asyncio's own batch, the listening socket's backlog)."""

    accept_room: Callable[[], int] | None = None

    def _accept_connection(  # asyncio's private accept loop: the batch is its ``backlog`` argument
        self,
        protocol_factory: Any,
        sock: Any,
        sslcontext: Any = None,
        server: Any = None,
        backlog: int = 100,
        *rest: Any,
    ) -> None:
        room = self.accept_room
        batch = backlog if room is None else min(backlog, max(ACCEPT_BATCH_AT_CAP, room()))
        # The stubs leave asyncio's private methods out: mypy cannot see this one.
        super()._accept_connection(protocol_factory, sock, sslcontext, server, batch, *rest)  # type: ignore[misc]


def edge_loop() -> asyncio.AbstractEventLoop:
    """An :class:`EdgeLoop` with :class:`AcceptFailures` as its exception handler: the loop every Bee HTTP host runs
    (uvicorn's ``loop`` setting names this function)."""
    loop = EdgeLoop()
    loop.set_exception_handler(AcceptFailures())
    return loop
