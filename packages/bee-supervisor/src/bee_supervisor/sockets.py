"""Listening sockets the supervisor binds and hands to replicas.

A service with ``listen`` gets one socket, bound and listening before any replica starts and held by the
supervisor until it stops: every replica serves on the same descriptor (``{listen_fd}``), the kernel spreads
connections over them, and a replica that restarts never closes the address — a client that connects meanwhile
waits in the backlog instead of being refused. Each replica also gets a private socket on an ephemeral local port
(``{check_fd}``), so that the supervisor can ask that one replica for its health. A warm host's replica gets a
private Unix socket beside its host's for the same reason.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import socket

from bee_contracts import BeeError, ErrorCode

#: Connections the kernel queues for a shared address while no replica accepts (during a restart, say).
BACKLOG = 2048


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def bind_listener(host: str, port: int, *, service: str, where: str) -> socket.socket:
    """A listening TCP socket on ``host:port`` for ``service`` (``where`` names its ``listen`` key in messages).

    Raises:
        BeeError: ``conflict`` when the address is in use; ``invalid_argument`` when it cannot be bound otherwise.
    """
    sock = socket.socket(_family(host), socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise BeeError(
                ErrorCode.CONFLICT,
                f"service {service}: {host}:{port} is already in use ({where}); stop what listens there (another "
                "supervisor or `bee tracker serve`?) or choose another port",
                details={"service": service, "address": f"{host}:{port}"},
            ) from None
        raise BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"service {service}: cannot listen on {host}:{port} ({where}): {exc.strerror or exc}",
            details={"service": service, "address": f"{host}:{port}"},
        ) from None
    return sock


def bind_check(host: str) -> socket.socket:
    """A listening socket on an ephemeral port of the loopback address of ``host``'s family."""
    loopback = "::1" if _family(host) == socket.AF_INET6 else "127.0.0.1"
    sock = socket.socket(_family(host), socket.SOCK_STREAM)
    try:
        sock.bind((loopback, 0))
        sock.listen(64)
    except BaseException:
        sock.close()
        raise
    return sock


def bind_probe(beside: str) -> tuple[socket.socket, str]:
    """A listening Unix socket of one warm host replica's own, next to the host's shared socket ``beside``: its path.

    Every replica of a warm host accepts on the shared socket, so a probe sent there may reach another one (the old
    host, during a rolling restart, which then closes it). This one reaches only the replica it is handed to.
    """
    path = f"{beside.removesuffix('.sock')}.{secrets.token_hex(4)}.probe"
    return bind_unix(path, 16), path


def bind_unix(path: str, backlog: int) -> socket.socket:
    """A listening Unix socket at ``path``, only the user's (0600, in a private folder), never inherited by accident;
    on failure nothing is left at ``path``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        os.chmod(path, 0o600)
        sock.listen(backlog)
    except BaseException:
        sock.close()
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    sock.set_inheritable(False)
    return sock


def url_of(sock: socket.socket, path: str) -> str:
    """``http://HOST:PORT/path`` for a bound socket."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"
