"""A warm host: one :class:`~bee_hostkit.host.Host` served to many front ends, each connection its own MCP session.

The warm supervisor binds a Unix socket in the user's private directory and hands the listening descriptor to
`bee mcp serve --warm-fd N` (or `bee design mcp --warm-fd N`), which fixes its checkout and instance at start as a
cold host does and serves here. Each accepted connection:

1. is checked before any MCP byte: the peer's uid (SO_PEERCRED) must be this process's, and its one-line hello
   (:mod:`bee_contracts.warm`) must speak a wire this host supports and name exactly this host's identity (view,
   checkout, instance, log level, environment digest); anything else is answered with a refusal and closed;
2. is answered with a welcome line: the identity, the version triple, the pid, and which tools are reads (the
   catalog's ``readOnlyHint``), so the front end knows what it may replay after a restart;
3. then carries MCP JSON-RPC lines exactly as stdio would, through the same capped framing
   (:func:`~bee_hostkit.stdio.transport.capped_streams`) and the SDK server's ``run``, one per connection, with the
   session's environment (:mod:`bee_hostkit.environ`) for what handlers read at call time.

Sessions share the process's worker threads (anyio's default limiter, 40): a slow tool in one session holds only its
own worker, and no session's input waits on a thread. The host exits with status 0 when it has had no session for
its idle time (``$BEE_WARM_IDLE_SECONDS``, default 15 minutes), or on SIGTERM, closing every session; front ends
then reconnect to its replacement. The supervisor's health probes are sessions too, but never keep a host alive.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.abc
from anyio.abc import SocketAttribute

from bee_contracts.warm import ENV_IDLE, IDLE_SECONDS, Refusal, check_hello, peer_uid, welcome_message
from bee_hostkit.environ import use_environ
from bee_hostkit.host import Host
from bee_hostkit.stdio.transport import busy_workers, capped_streams

logger = logging.getLogger("bee.hostkit.warm")

#: How long a connection may take to send its hello.
HELLO_SECONDS = 10.0
#: The longest hello line read (the front end's environment travels in it).
MAX_HELLO_BYTES = 1024 * 1024
_READ = 64 * 1024


class WarmHost:
    """Serves ``host`` on the listening socket ``listener`` until idle or stopped.

    ``notes`` gives what each session's editor is told when it starts (a cold host logs it on its stderr at start):
    taken afresh for each session, since the user may have adopted a setting meanwhile.
    """

    def __init__(
        self,
        host: Host,
        listener: socket.socket,
        identity: Mapping[str, str],
        idle_seconds: float,
        *,
        notes: Callable[[], list[str]] | None = None,
        probes: socket.socket | None = None,
    ) -> None:
        self.host = host
        self.notes = notes
        self.probes = probes
        self.server = host.build_server()
        self.options = self.server.create_initialization_options()
        self.listener = listener
        self.identity = dict(identity)
        self.idle_seconds = idle_seconds
        self.sessions = 0
        self.idle_since = time.monotonic()
        # What the front end needs to tell a read from a write: the read-only tools, and for a view, the tool that
        # dispatches by name and the read-only tools it can reach.
        dispatcher: dict[str, object] | None = None
        if host.viewed is not None and host.dispatcher is not None:
            dispatcher = {"tool": host.dispatcher, "argument": "name", "reads": host.viewed.read_only()}
        self._welcome = welcome_message(
            self.identity, dict(host.version), host.server_info(), host.read_only(), dispatcher
        )

    async def run(self) -> None:
        """Accept and serve connections until SIGTERM/SIGINT or the idle time passes with no session."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._signals, tg.cancel_scope)
            tg.start_soon(self._idle, tg.cancel_scope)
            if self.probes is not None:
                tg.start_soon(self._accept, self.probes, tg)
            await self._accept(self.listener, tg)

    async def _accept(self, sock: socket.socket, tg: anyio.abc.TaskGroup) -> None:
        """Serve every connection ``sock`` accepts (the shared socket, or this replica's own probe socket)."""
        listener = await anyio.abc.SocketListener.from_socket(sock)
        async with listener:
            while True:
                stream = await listener.accept()
                tg.start_soon(self._connection, stream)

    async def _signals(self, scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
            async for signum in received:
                logger.info("%s: closing every session and exiting", signal.Signals(signum).name)
                scope.cancel()
                return

    async def _idle(self, scope: anyio.CancelScope) -> None:
        step = max(0.05, min(1.0, self.idle_seconds / 4))
        while True:
            await anyio.sleep(step)
            if self.sessions == 0 and time.monotonic() - self.idle_since >= self.idle_seconds:
                logger.info("no session for %g s: exiting", self.idle_seconds)
                scope.cancel()
                return

    async def _hello(self, stream: anyio.abc.SocketStream) -> tuple[dict[str, Any], bytes]:
        """The hello line and the bytes that followed it (the session's first MCP bytes)."""
        import json

        data = b""
        with anyio.fail_after(HELLO_SECONDS):
            while b"\n" not in data:
                try:
                    data += await stream.receive(_READ)
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    raise Refusal("hello", "the connection closed before its hello") from None
                if len(data) > MAX_HELLO_BYTES and b"\n" not in data[:MAX_HELLO_BYTES]:
                    raise Refusal("hello", f"a hello over {MAX_HELLO_BYTES} bytes")
        line, _, rest = data.partition(b"\n")
        try:
            hello = json.loads(line)
        except ValueError:
            raise Refusal("hello", "the hello is not JSON") from None
        if not isinstance(hello, dict):
            raise Refusal("hello", "the hello is not a JSON object")
        return hello, rest

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        """Serve one connection; whatever happens to it, the host and its other sessions go on."""
        try:
            await self._serve_connection(stream)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError):
            pass  # the front end went away mid-handshake (it gave up waiting, or its editor closed)
        except Exception:
            logger.exception("a session failed")

    async def _serve_connection(self, stream: anyio.abc.SocketStream) -> None:
        import json

        async with stream:
            try:
                uid = peer_uid(stream.extra(SocketAttribute.raw_socket))  # noqa: S610 -- anyio's typed attribute, not Django's extra()
                if uid != os.getuid():
                    # Refused before the hello is read: another user's process learns nothing but this.
                    raise Refusal("uid", f"uid {uid} may not use a host of uid {os.getuid()}")
                hello, rest = await self._hello(stream)
                role, environ = check_hello(hello, self.identity)
            except (Refusal, TimeoutError) as exc:
                refused = exc if isinstance(exc, Refusal) else Refusal("hello", "no hello in time")
                logger.warning("refused a connection (%s): %s", refused.code, refused.message)
                answer = refused.answer()
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError), anyio.move_on_after(1):
                    await stream.send(json.dumps(answer).encode() + b"\n")
                return
            await stream.send(await self._welcome_line(role))
            counted = role == "session"
            if counted:
                self.sessions += 1
            try:
                with use_environ(environ or os.environ):
                    await self._session(stream, rest)
            finally:
                if counted:
                    self.sessions -= 1
                    self.idle_since = time.monotonic()

    async def _welcome_line(self, role: str) -> bytes:
        import json

        welcome = self._welcome
        if role == "session" and self.notes is not None:
            welcome = {**welcome, "notes": await anyio.to_thread.run_sync(self.notes)}
        return json.dumps(welcome, separators=(",", ":")).encode() + b"\n"

    async def _session(self, stream: anyio.abc.SocketStream, first: bytes) -> None:
        pending = [first] if first else []

        async def receive() -> bytes:
            if pending:
                return pending.pop()
            try:
                return await stream.receive(_READ)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return b""

        async def send(data: bytes) -> None:
            # The front end may be gone: what it would have read is dropped, and the reader sees its stream end.
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.send(data)

        async with capped_streams(receive, send) as (read_stream, write_stream):
            await self.server.run(read_stream, write_stream, self.options)  # type: ignore[arg-type]  # context streams, typed as the SDK's


def inherited_listener(fd: int) -> socket.socket:
    """The listening Unix socket inherited as descriptor ``fd``.

    Raises:
        ValueError: ``fd`` is not a listening Unix stream socket (the message says what it is instead).
    """
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise ValueError(f"descriptor {fd} is not a socket ({exc.strerror or exc})") from None
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        sock.detach()
        raise ValueError(f"descriptor {fd} is not a Unix stream socket")
    if not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
        sock.detach()
        raise ValueError(f"descriptor {fd} is not listening")
    return sock


def serve_warm(
    host: Host,
    listener: socket.socket,
    identity: Mapping[str, str],
    idle_seconds: float,
    *,
    notes: Callable[[], list[str]] | None = None,
    probes: socket.socket | None = None,
) -> None:
    """Blocking entry point of a warm host: serve until idle or stopped, then end promptly (status 0).

    As with stdio, worker threads still busy with abandoned calls do not hold the process: after a short grace it
    exits here, the logs flushed.
    """
    anyio.run(WarmHost(host, listener, identity, idle_seconds, notes=notes, probes=probes).run)
    busy = busy_workers()
    if busy:
        logger.warning("leaving %d busy worker thread(s) behind and exiting", len(busy))
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0)


def idle_seconds(environ: Mapping[str, str]) -> float:
    """The idle time from ``$BEE_WARM_IDLE_SECONDS`` (a positive number of seconds), else the default."""
    text = environ.get(ENV_IDLE, "")
    try:
        value = float(text) if text else IDLE_SECONDS
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        logger.warning("%s=%r is not a positive number of seconds; using %g", ENV_IDLE, text, IDLE_SECONDS)
        return IDLE_SECONDS
    return value


def serve_warm_fd(
    host: Host,
    fd: int,
    *,
    view: str,
    checkout: str,
    instance: str,
    log_level: str,
    check_fd: int | None = None,
    spare_fd: int | None = None,
    notes: Callable[[], list[str]] | None = None,
) -> None:
    """Serve ``host`` as the warm host of identity (``view``, ``checkout``, ``instance``, ``log_level``, this
    process's environment) on the listening socket inherited as ``fd`` (and the supervisor's probes on
    ``check_fd``, this replica's own socket); never returns. ``notes``: see :class:`WarmHost`. With ``spare_fd``
    the process is the supervisor's spare: built, it waits to be told to serve (:mod:`bee_contracts.spare`).

    Raises:
        BeeError: ``invalid_argument`` when ``fd`` or ``check_fd`` is not a listening Unix stream socket.
    """
    from bee_contracts import invalid
    from bee_contracts.warm import WarmUnavailable, identity_of

    listeners = []
    for option, given in (("--warm-fd", fd), ("--warm-check-fd", check_fd)):
        try:
            listeners.append(None if given is None else inherited_listener(given))
        except ValueError as exc:
            raise invalid(f"{option} {given}: {exc}; it is passed by the warm supervisor, never by hand") from None
    listener, probes = listeners
    assert listener is not None
    try:
        identity = identity_of(view, checkout, instance, log_level, os.environ)
    except WarmUnavailable as exc:
        raise invalid(str(exc)) from None
    if spare_fd is not None:
        from bee_contracts.spare import wait_to_serve

        wait_to_serve(spare_fd)
    logger.info("warm host pid %d serving %s %s", os.getpid(), view, checkout)
    serve_warm(host, listener, identity, idle_seconds(os.environ), notes=notes, probes=probes)
