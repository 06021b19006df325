"""How a front end gets its warm host: ask the warm supervisor, connect, and check both ends before any MCP byte.

1. The warm supervisor of this installation is asked, over its control socket in the private directory, to
   ensure the host of the front end's identity (with the front end's environment); when no supervisor answers,
   one is started, detached (``python -m bee_supervisor.warm --detach``). It answers once the host is running and
   has passed its version and contract check, with the installed version triple.
2. The host's socket — named by the identity's digest, never by anything the supervisor or the checkout says — is
   connected, and the peer's uid (SO_PEERCRED) must be this user's; so must the supervisor's.
3. The hello names the wire, the identity and the environment; the welcome must name the same identity and the
   version triple the supervisor reported as installed. A host of another version (an old one still finishing
   while the supervisor rolls to the new) is never used: the front end asks again until the deadline.

A host refusing the front end's wire means the installed Bee no longer speaks this front end's protocol:
:class:`TooOld`, which the relay reports once and clearly.
"""

from __future__ import annotations

import os
import select
import socket
import sys
import threading
import time

from bee_contracts import launch
from bee_contracts.warm import (
    WarmUnavailable,
    control_socket,
    ensure_message,
    hello_message,
    host_socket,
    peer_uid,
    read_line,
    send_line,
    supervisor_environment,
    unresponsive_message,
    warm_dir,
)

# Annotations only (mypy reads this name as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal

    Role = Literal["session", "probe"]

#: On a reconnect, how long the host's own socket is given to answer before the supervisor is asked.
HOST_WAIT_SECONDS = 3.0
#: How long a report of an unresponsive host may take (the supervisor checks the host before it answers).
REPORT_SECONDS = 10.0


class TooOld(WarmUnavailable):
    """The installed Bee refuses this front end's wire: the editor must restart its MCP server."""


class Attached:
    """A connected, checked warm host: its socket (blocking), its welcome, and the installed triple."""

    __slots__ = ("installed", "sock", "welcome")

    def __init__(self, sock: socket.socket, welcome: dict[str, object], installed: object) -> None:
        self.sock = sock
        self.welcome = welcome
        self.installed = installed


def _connect(path: str, deadline: float) -> socket.socket:
    """A connection to the Unix socket ``path`` whose peer is this user.

    Raises:
        OSError: the socket cannot be connected (no file, nobody listening).
        WarmUnavailable: the peer is another user's process.
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        sock.connect(path)
        uid = peer_uid(sock)
    except BaseException:
        sock.close()
        raise
    if uid != os.getuid():
        sock.close()
        raise WarmUnavailable(f"the process behind {path} is uid {uid}, not this user (uid {os.getuid()}): refused")
    return sock


def _refusal(answer: dict[str, object], what: str) -> WarmUnavailable:
    error = f"{what} refused: {answer.get('error')}"
    return TooOld(error) if answer.get("code") == "wire" else WarmUnavailable(error)


def _start_supervisor(environ: dict[str, str]) -> None:
    """Start this installation's warm supervisor, detached from this process and its terminal.

    Raises:
        WarmUnavailable: it could not be started (bee-supervisor is not installed, say).
    """
    # No folder on its import path but the installation's (-P), and only the environment it reads: it will serve
    # every other checkout and editor of this user.
    argv = launch.python("-m", "bee_supervisor.warm", "--detach")
    null = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
    ]
    try:
        pid = os.posix_spawn(sys.executable, argv, supervisor_environment(environ), file_actions=actions, setsid=True)
        # It forks the supervisor and exits at once, so the supervisor is never this process's child.
        _, status = os.waitpid(pid, 0)
    except OSError as exc:
        raise WarmUnavailable(f"cannot start the warm supervisor: {exc.strerror or exc}") from None
    if os.waitstatus_to_exitcode(status) != 0:
        raise WarmUnavailable("cannot start the warm supervisor (is bee-supervisor installed?)")


def ensure(folder: str, identity: dict[str, str], environ: dict[str, str], deadline: float) -> dict[str, object]:
    """Ask the warm supervisor for the host of ``identity``, starting the supervisor when none answers; its answer.

    Raises:
        WarmUnavailable: the supervisor refused (:class:`TooOld` for the wire), or nothing answered by ``deadline``.
    """
    path = control_socket(folder)
    started = False
    pause = 0.02
    while True:
        try:
            sock = _connect(path, deadline)
        except (FileNotFoundError, ConnectionRefusedError):
            if not started:
                _start_supervisor(environ)
                started = True
            if time.monotonic() + pause > deadline:
                raise WarmUnavailable(
                    f"the warm supervisor did not answer in time (its log: {folder}/logs/supervisor.log)"
                ) from None
            time.sleep(pause)
            pause = min(0.2, pause * 1.5)
            continue
        except OSError as exc:
            raise WarmUnavailable(f"cannot reach the warm supervisor at {path}: {exc.strerror or exc}") from None
        try:
            send_line(sock, ensure_message(identity, environ))
            answer = read_line(sock, deadline)
        except OSError as exc:
            raise WarmUnavailable(f"the warm supervisor failed: {exc.strerror or exc}") from None
        finally:
            sock.close()
        if answer.get("bee") != "ready":
            raise _refusal(answer, "the warm supervisor")
        return answer


def handshake(
    path: str, identity: dict[str, str], environ: dict[str, str], deadline: float, role: Role = "session"
) -> tuple[socket.socket, dict[str, object]]:
    """A connection to the host at ``path`` past its hello: the socket and the welcome.

    Raises:
        WarmUnavailable: no host answered by ``deadline``, it refused (:class:`TooOld` for the wire), it is another
            user's, or it serves another identity.
    """
    try:
        sock = _connect(path, deadline)
    except OSError as exc:
        raise WarmUnavailable(f"no warm host at {path} ({exc.strerror or exc})") from None
    try:
        send_line(sock, hello_message(identity, environ, role))
        welcome = read_line(sock, deadline)
    except OSError as exc:
        sock.close()
        raise WarmUnavailable(f"the warm host failed ({exc.strerror or exc})") from None
    except WarmUnavailable:
        sock.close()
        raise
    if welcome.get("bee") != "welcome":
        sock.close()
        raise _refusal(welcome, "the warm host")
    if welcome.get("identity") != identity:
        sock.close()
        raise WarmUnavailable(f"the host at {path} serves another checkout, instance or environment: refused")
    return sock, welcome


def attach(
    identity: dict[str, str], digest: str, environ: dict[str, str], deadline: float, known: object = None
) -> Attached:
    """The checked warm host of ``identity``; ``known`` is the installed triple a reconnect last saw.

    Raises:
        WarmUnavailable: none by ``deadline`` (:class:`TooOld` when the installed Bee refuses this front end).
    """
    folder = warm_dir(environ)
    path = host_socket(folder, digest)
    if known is not None:
        # A restart keeps the socket (the supervisor holds it), so the replacement is asked directly first.
        try:
            sock, welcome = handshake(path, identity, environ, min(deadline, time.monotonic() + HOST_WAIT_SECONDS))
        except TooOld:
            raise
        except WarmUnavailable:
            pass
        else:
            if welcome.get("versionInfo") == known:
                return Attached(sock, welcome, known)
            sock.close()  # another version: the supervisor says which one is installed
    while True:
        answer = ensure(folder, identity, environ, deadline)
        if answer.get("socket") != path:
            raise WarmUnavailable("the warm supervisor named another socket than this identity's: refused")
        installed = answer.get("versionInfo")
        sock, welcome = handshake(path, identity, environ, deadline)
        if welcome.get("versionInfo") == installed:
            return Attached(sock, welcome, installed)
        sock.close()
        if time.monotonic() + 0.2 > deadline:
            raise WarmUnavailable(
                f"the warm host reports {welcome.get('versionInfo')}, the installed Bee is {installed}"
            )
        time.sleep(0.1)  # the supervisor is still replacing a host of the version before


def report_unresponsive(identity: dict[str, str], environ: dict[str, str], pid: object) -> None:
    """Tell the warm supervisor that the host of ``identity`` (process ``pid``) stopped answering; it checks the
    host itself and replaces it if so. Best effort: whatever fails, the front end goes on without it."""
    deadline = time.monotonic() + REPORT_SECONDS
    try:
        sock = _connect(control_socket(warm_dir(environ)), deadline)
    except (OSError, WarmUnavailable):
        return
    try:
        send_line(sock, unresponsive_message(identity, pid))
        read_line(sock, deadline)
    except (OSError, WarmUnavailable):
        pass
    finally:
        sock.close()


def in_background(work: Callable[[], Attached]) -> Callable[[], Attached | WarmUnavailable | None]:
    """Run ``work`` in a daemon thread; the returned function gives its outcome once done, else None."""
    outcome: list[Attached | WarmUnavailable] = []

    def run() -> None:
        try:
            outcome.append(work())
        except WarmUnavailable as exc:
            outcome.append(exc)
        except Exception as exc:  # any other failure only means no warm host: the message says what it was
            outcome.append(WarmUnavailable(f"{exc.__class__.__name__}: {exc}"))

    threading.Thread(target=run, name="bee-attach", daemon=True).start()
    return lambda: outcome[0] if outcome else None


def attach_first(identity: dict[str, str], digest: str, environ: dict[str, str], wait: float) -> Attached:
    """:func:`attach` within ``wait`` seconds, without reading stdin meanwhile (a cold host may still need every
    byte), but leaving at once if the editor closes it.

    Raises:
        WarmUnavailable: no warm host within ``wait`` seconds.
    """
    deadline = time.monotonic() + wait
    outcome = in_background(lambda: attach(identity, digest, environ, deadline))
    watch = select.poll()
    watch.register(0, select.POLLIN)
    while True:
        done = outcome()
        if isinstance(done, Attached):
            return done
        if done is not None:
            raise done
        events = 0
        for _, event in watch.poll(20):
            events |= event
        if events & (select.POLLHUP | select.POLLERR) and not events & select.POLLIN:
            os._exit(0)  # the editor closed stdin with nothing sent: there is nothing to serve
        if events:
            time.sleep(0.02)  # input is waiting (it is served once the host is there): poll would not wait
        if time.monotonic() > deadline + 1:
            raise WarmUnavailable(f"no warm host within {wait:g} s")
