"""Serving a Bee HTTP host with uvicorn in one process, behind the edge: the settings every host runs with, and the run.

Several processes on one socket: :mod:`bee_hostkit.http.workers`, with the same settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bee_hostkit.http.descriptors import raise_descriptor_limit
from bee_hostkit.http.edge import edge_protocol
from bee_hostkit.http.limits import EdgeLimits


def uvicorn_settings(
    *, host: str, port: int, log_level: str, access_log: bool, graceful_shutdown_seconds: int
) -> dict[str, Any]:
    """The uvicorn settings every Bee HTTP host runs with, one process or several."""
    return {
        "host": host,
        "port": port,
        # Not uvloop: it runs libuv without the GIL and takes the GIL back for every callback (each accept, each
        # read), and hosts run handlers in worker threads that hold it. Under overload, 1,000 connections then
        # waited up to 4 s in the kernel's accept queue, before the edge could count or shed them (p99 2.2-3.1 s
        # against 1.0-1.3 s with asyncio, which handles a whole batch of events per GIL hold; uvloop was 10-20 %
        # faster only below the limit). asyncio's selector loop, with failed accepts logged once an interval.
        "loop": "bee_hostkit.http.descriptors:edge_loop",
        "ws": "none",  # nothing here speaks WebSocket: an Upgrade header is ignored, never handed to a library
        "log_level": log_level,
        "access_log": access_log,
        "lifespan": "on",
        "timeout_graceful_shutdown": graceful_shutdown_seconds,
    }


def serve_http(
    app: Any,
    *,
    host: str,
    port: int,
    limits: EdgeLimits,
    log_level: str = "info",
    access_log: bool = False,
    graceful_shutdown_seconds: int = 10,
    fds: Sequence[int] = (),
) -> None:
    """Serve ``app`` with uvicorn on asyncio's event loop through :class:`EdgeProtocol` until SIGTERM or SIGINT.

    With ``fds`` it serves on those inherited listening sockets (bound by a supervisor, shared by replicas) instead
    of binding ``host:port``; ``host`` and ``port`` then only name the address in logs. Several processes:
    :func:`bee_hostkit.http.workers.serve_http_workers`.
    """
    import contextlib
    import socket
    import sys

    import uvicorn

    settings = uvicorn_settings(
        host=host,
        port=port,
        log_level=log_level,
        access_log=access_log,
        graceful_shutdown_seconds=graceful_shutdown_seconds,
    )
    raise_descriptor_limit(limits.max_connections)
    server = uvicorn.Server(uvicorn.Config(app, http=edge_protocol(limits), **settings))
    # socket.socket(fileno=) reads the family from the descriptor (uvicorn's own fd option assumes a Unix socket).
    sockets = [socket.socket(fileno=fd) for fd in fds] or None
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=sockets)
    if not server.started:
        sys.exit(3)  # uvicorn's STARTUP_FAILURE, as uvicorn.run exits
