"""One HTTP host served by several worker processes on one listening socket.

uvicorn's process manager (``uvicorn.supervisors.Multiprocess``) does the managing: the parent binds the socket
once and starts the workers with the spawn method; the kernel hands each new connection to one worker; a worker
that dies or stops answering the parent's health ping is replaced; SIGHUP replaces them one at a time, each
replacement serving before its predecessor stops; SIGTERM or SIGINT stops them all (each finishes its requests,
within the graceful-shutdown time) and waits for them. A worker whose app cannot be built or started stops the
parent too, with exit status 3, rather than being restarted in a loop.

What Bee adds:

- **Each worker builds its own app** by calling a picklable factory (a module-level function, or a
  :func:`functools.partial` of one), so each has its own database pool and event loop. Nothing is shared but the
  socket and the database.
- **The edge runs in every worker**, with the limits it is given, counted per worker: give each worker its share
  of a limit meant for the whole host.
- **Workers die with the parent.** Each asks Linux for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``), so a
  parent killed with SIGKILL leaves no worker holding the port.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bee_hostkit.http.descriptors import raise_descriptor_limit
from bee_hostkit.http.edge import EdgeProtocolFactory
from bee_hostkit.http.limits import EdgeLimits
from bee_hostkit.http.serve import uvicorn_settings

#: prctl(2) option: the signal this process gets when the thread that created it exits.
_PR_SET_PDEATHSIG = 1
#: uvicorn's exit status for a server that could not start (uvicorn.config.STARTUP_FAILURE).
STARTUP_FAILURE = 3

logger = logging.getLogger("bee.hostkit.workers")


def die_with_parent(parent: int) -> None:
    """Have the kernel send this process SIGTERM when its parent dies (Linux; elsewhere nothing).

    ``parent`` is the pid the parent had when it started this process: if it is already gone (this process was
    handed to another parent before asking), SIGTERM is sent at once.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


@dataclass(frozen=True)
class _WorkerApp:
    """The app factory uvicorn calls in each worker (pickled across the spawn)."""

    factory: Callable[[], Any]
    parent: int = field(default_factory=os.getpid)

    def __call__(self) -> Any:
        die_with_parent(self.parent)
        try:
            return self.factory()
        except Exception:
            # uvicorn's process manager restarts a worker that crashes, forever; one that exits with
            # STARTUP_FAILURE stops the parent instead, which is what an app that cannot be built deserves.
            logger.exception("the worker could not build its app")
            sys.exit(STARTUP_FAILURE)


def _as_tcp(sock: socket.socket) -> socket.socket:
    """``sock`` with its protocol named: uvicorn binds it as protocol 0, and asyncio turns Nagle's algorithm off
    (TCP_NODELAY) only on connections accepted from a socket whose protocol says TCP. Without it every response
    written in two parts waits for the client's delayed ACK: 40 ms a request, measured."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.proto == socket.IPPROTO_TCP:
        return sock
    return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())


def serve_http_workers(
    factory: Callable[[], Any],
    *,
    workers: int,
    host: str,
    port: int,
    limits: EdgeLimits,
    log_level: str = "info",
    access_log: bool = False,
    graceful_shutdown_seconds: int = 10,
) -> None:
    """Serve the app ``factory`` builds in each of ``workers`` processes, all accepting on one socket bound to
    ``host``:``port``, each behind the edge with ``limits``, until SIGTERM or SIGINT.

    ``factory`` must be picklable: it is called in each worker process, which imports its module afresh.

    Raises:
        ValueError: ``workers`` is less than 2 (one process: :func:`bee_hostkit.http.serve.serve_http`).
        SystemExit: with status 3 when the socket cannot be bound or a worker cannot start (both are logged).
    """
    import uvicorn

    from bee_hostkit.http._uvicorn import Multiprocess

    if workers < 2:
        raise ValueError("serve_http_workers needs at least two workers")
    settings = uvicorn_settings(
        host=host,
        port=port,
        log_level=log_level,
        access_log=access_log,
        graceful_shutdown_seconds=graceful_shutdown_seconds,
    )
    config = uvicorn.Config(
        _WorkerApp(factory),
        factory=True,
        workers=workers,
        # A protocol factory rather than a class: uvicorn's annotation names only classes and strings, but it calls
        # what it is given, once per connection.
        http=EdgeProtocolFactory(limits),  # type: ignore[arg-type]
        **settings,
    )
    raise_descriptor_limit(limits.max_connections)  # before the workers start: they inherit it
    sock = _as_tcp(config.bind_socket())
    manager = Multiprocess(config, sockets=[sock])
    try:
        manager.run()
    finally:
        sock.close()
    # The manager stops when a worker fails to start, and returns as if all were well: say it did not.
    if any(worker.exitcode == STARTUP_FAILURE for worker in manager.processes):
        sys.exit(STARTUP_FAILURE)
