"""`bee bd …` answered by this installation's warm answerer (:mod:`bee_cli.answerer`): the client half.

Agents' instruction files call `bee bd` (or the `bd` shim) for every step, and a fresh Python spends several times
its own start importing the command. The answerer has imported it already and keeps a forked child ready; this
client hands that child the command as this process would run it — its arguments, its whole environment, its
umask, its working folder (an open descriptor, so a renamed or replaced path cannot redirect it) and its standard
streams themselves (passed over the socket, so terminals, pipes and files behave as they would here) — and waits for
its exit status, which it exits with. Ctrl-C, SIGTERM and SIGHUP are passed on to the child; if this client dies, the
child is stopped.

It imports nothing but ``os``, ``sys``, ``_socket`` and :mod:`bee_contracts.rundir` (no json, no socket module): its
whole cost is the wait of the shell that called it. The wire, both ways, is a few bytes:

- request: ``BEEA``, the wire version (one byte), the body's length (4 bytes, big-endian), then the body — NUL
  separated fields: the umask (octal), the number of arguments, the arguments, then ``KEY=VALUE`` for every variable
  of the environment — sent with the descriptors 0, 1, 2 and the working folder's (SCM_RIGHTS);
- answer: the child's pid (4 bytes) when it is ready; the client's ``g`` (go), after which the command is the
  child's to run; then its exit status (4 bytes).

It declines (returns, having run nothing) whenever the answerer cannot answer exactly as this process would: with
``BEE_WARM=0``, interpreter options or warnings set, a request over :data:`MAX_REQUEST_BYTES`, no private runtime
folder, or no answerer yet — which it then starts, detached, for the next command. A command is never run twice: once
the child has said it started, its status (or its failure to give one) is the answer.
"""

from __future__ import annotations

import os
import sys

from bee_contracts.rundir import ENV_WARM, WarmUnavailable, peer_uid, private_problem, runtime_dir, sha256_hex

# Annotations only (mypy reads this name as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket

#: The wire this client speaks: the answerer refuses any other (by closing before it starts anything).
WIRE = 1
#: What opens every request.
MAGIC = b"BEEA"
#: The longest request body (arguments and environment); a larger one is served cold.
MAX_REQUEST_BYTES = 1024 * 1024
#: The descriptors a request passes: standard input, output and error, and the working folder.
PASSED_FDS = 4
#: How long a request waits for a spare to start it before the command runs in this process instead (seconds).
START_SECONDS = 10.0
#: How long a started answerer is given before another client may start one again (seconds).
STARTING_SECONDS = 30.0

#: The variables Python itself reads when it starts: an answerer runs with these as its client has them, so its
#: children are the interpreter the client would have been (its import path, its streams' encoding, its hash seed).
_STARTUP_PREFIXES = ("PYTHON", "LC_")
_STARTUP_NAMES = frozenset({"LANG", "LANGUAGE", "TZ"})
#: What an answerer reads for itself: its runtime folder, how long it waits idle (bee_cli.answerer), and the
#: installed-version seam (bee_contracts.installation) by which it notices an upgrade.
_ANSWERER_READS = frozenset({"XDG_RUNTIME_DIR", "BEE_ANSWER_IDLE_SECONDS", "BEE_INSTALLED_VERSION_FILE"})


def startup_environment(environ: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    """What of ``environ`` the interpreter reads at start (:data:`_STARTUP_PREFIXES`, :data:`_STARTUP_NAMES`)."""
    return {key: value for key, value in environ.items() if key.startswith(_STARTUP_PREFIXES) or key in _STARTUP_NAMES}


def answerer_environment(environ: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    """The environment an answerer starts with: the interpreter's part of ``environ`` and the answerer's own
    settings, nothing else (each request brings its client's whole environment to the child that runs it)."""
    own = {key: value for key, value in environ.items() if key in _ANSWERER_READS}
    return {**startup_environment(environ), **own}


def socket_path(environ: os._Environ[str] | dict[str, str]) -> str:
    """The socket of the answerer for a client with ``environ``: in this installation's private folder, named by
    the digest of what its interpreter reads at start.

    Raises:
        WarmUnavailable: no private folder (:func:`~bee_contracts.rundir.runtime_dir`), or the path is too long.
    """
    from bee_contracts.rundir import installation_key

    uid = os.getuid()
    folder = os.path.join(runtime_dir(environ, uid), f"warm-{installation_key()}")
    problem = private_problem(folder, uid, create=True)
    if problem is not None:
        raise WarmUnavailable(problem)
    startup = "\0".join(f"{key}={value}" for key, value in sorted(startup_environment(environ).items()))
    digest = sha256_hex(f"{WIRE}\0{startup}".encode("utf-8", "surrogateescape"))[:16]
    path = os.path.join(folder, f"answer-{digest}.sock")
    if len(os.fsencode(path)) > 107:
        raise WarmUnavailable(f"the socket path {path} is too long for a Unix socket; set XDG_RUNTIME_DIR shorter")
    return path


def plain_interpreter() -> bool:
    """Whether this interpreter runs as an answerer's children do: no options but ``-P``, no ``-W`` or ``-X``."""
    flags = sys.flags
    return not (
        flags.optimize
        or flags.dev_mode
        or flags.isolated
        or flags.ignore_environment
        or flags.no_site
        or flags.no_user_site
        or flags.verbose
        or flags.bytes_warning
        or flags.inspect
        or flags.interactive
        or sys.warnoptions
        or sys._xoptions
    )


def request_body(args: list[str], umask: int) -> bytes | None:
    """The body of a request for ``args`` from this process (see the module docstring), or None when it is over
    :data:`MAX_REQUEST_BYTES`."""
    fields = [b"%o" % umask, b"%d" % len(args), *map(os.fsencode, args)]
    fields += [key + b"=" + value for key, value in os.environb.items()]
    body = b"\0".join(fields)
    return body if len(body) <= MAX_REQUEST_BYTES else None


def answer_warm(args: list[str]) -> None:
    """Run `bee ARGS` in the warm answerer and exit with its status; return, having run nothing, when it declines
    (see the module docstring)."""
    environ = os.environ
    if environ.get(ENV_WARM) == "0" or not plain_interpreter():
        return
    try:
        path = socket_path(environ)
    except (WarmUnavailable, OSError):
        return
    umask = os.umask(0o077)
    os.umask(umask)
    body = request_body(args, umask)
    if body is None:
        return
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        start_answerer(path, environ)
        return
    pid = _send(sock, body)
    if pid is None:
        sock.close()
        return
    os._exit(_wait(sock, pid))


def _send(sock: _socket.socket, body: bytes) -> int | None:
    """Send the request on connected ``sock``; the child's pid once it has started, or None when the answerer
    will not run it (nothing ran)."""
    import _socket

    if peer_uid(sock) != os.getuid():
        return None  # not this user's answerer (its folder is private, so this is never expected): serve cold
    try:
        cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None  # the working folder is gone or unreadable: the cold command reports it as it would
    try:
        fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2, cwd))
        head = MAGIC + bytes([WIRE]) + len(body).to_bytes(4, "big")
        data = head + body
        sent = sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        sock.sendall(data[sent:])
    except OSError:
        return None  # a standard stream is closed, or the answerer went away: nothing ran
    finally:
        os.close(cwd)
    sock.settimeout(START_SECONDS)
    started = _read(sock, 4)
    if started is None:
        return None  # refused, or no spare in time (every slot busy): it will not run what was sent
    try:
        sock.settimeout(None)
        sock.sendall(b"g")  # from here on the command is the answerer's to run
    except OSError:
        return None
    return int.from_bytes(started, "big")


def _read(sock: _socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        try:
            chunk = sock.recv(size - len(data))
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def _wait(sock: _socket.socket, pid: int) -> int:
    """Pass signals on to the child ``pid`` until it sends its exit status; the status this process exits with."""
    import _signal  # type: ignore[import-not-found]  # signal would load enum; typeshed has no _signal

    forwarded: list[int] = []

    def forward(number: int, _frame: object) -> None:
        forwarded.append(number)
        try:  # noqa: SIM105 -- contextlib is a module this client does not load
            os.kill(pid, number)
        except OSError:
            pass

    for number in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
        _signal.signal(number, forward)
    status = _read(sock, 4)
    if status is not None:
        return int.from_bytes(status, "big") & 0xFF
    if forwarded:  # it died of the signal passed on: so does this process, as a cold command would have
        _signal.signal(forwarded[-1], _signal.SIG_DFL)
        os.kill(os.getpid(), forwarded[-1])
    sys.stderr.write(f"bee: the warm answerer's process {pid} ended without an exit status\n")
    sys.stderr.flush()
    return 1


def start_answerer(path: str, environ: os._Environ[str] | dict[str, str]) -> None:
    """Start the answerer of ``path`` detached from this process and its terminal, unless one was started in the
    last :data:`STARTING_SECONDS` (a crowd of first commands starts one, and a broken one is not retried at once)."""
    import time

    marker = path[: -len(".sock")] + ".starting"
    try:
        if time.time() - os.stat(marker).st_mtime < STARTING_SECONDS:
            return
        os.unlink(marker)
    except FileNotFoundError:
        pass
    except OSError:
        return
    try:
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    except OSError:
        return  # another client is starting it now
    from bee_contracts import launch

    null = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
    ]
    argv = launch.python("-m", "bee_cli.answerer", "--socket", path)
    try:
        # -P and its own environment: it will serve every checkout of this user. In a session of its own, and not
        # waited for: this process ends in a moment, and the answerer with it never.
        os.posix_spawn(sys.executable, argv, answerer_environment(environ), file_actions=actions, setsid=True)
    except OSError:
        return
