"""The warm answerer of `bee bd …`: the commands :data:`bee_cli.main.DIRECT` names, run by a process that has
imported them already, in a child forked for each command.

Started by the first client that finds none (:mod:`bee_cli.answering`, ``python -P -m bee_cli.answerer --socket
PATH``), detached, from ``/``, with only the variables the interpreter reads at start and its own settings. One runs
per installation, per user and per interpreter start environment (the socket's name); a lock beside the socket makes
a crowd of first commands start one.

It imports every direct command's group and runs its warm-up (``warm_up()`` in the group's module, if any: commands
on a scratch store of its own), then keeps one **spare**: a forked child, blocked in ``accept``. The spare that takes
a connection tells the parent (which forks the next at once) and serves that one request only:

1. it checks the peer is this user (SO_PEERCRED), reads the request within :data:`REQUEST_SECONDS` (at most
   :data:`~bee_cli.answering.MAX_REQUEST_BYTES`, with exactly the four descriptors) and refuses anything else by
   closing, having run nothing — the client then runs the command itself;
2. it becomes the client's process: the client's standard streams on 0, 1 and 2, its working folder (``fchdir``),
   umask, environment (exactly the client's, nothing of the answerer's or of an earlier request) and ``sys.argv``;
3. it sends its pid and runs the command only once the client says go, so a client that gave up waiting never sees
   its command run twice; a thread stops the command (SIGTERM) if the client goes away;
4. it sends the exit status (after the interpreter's exit handlers) and ends.

The parent exits when nothing has been asked for ``$BEE_ANSWER_IDLE_SECONDS`` (900 s by default), and at once when
the installation changes under it (:func:`bee_contracts.installation.fingerprint`, taken every second), so an
upgraded Bee answers from the new code within a second; commands running then finish on the code they started with.
What a child does not share with a process the client would have started: its parent, session and process group,
resource limits and supplementary groups — the answerer's.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import glob
import importlib
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence

from bee_cli.answering import MAGIC, MAX_REQUEST_BYTES, PASSED_FDS, WIRE, socket_path
from bee_contracts.installation import fingerprint
from bee_contracts.rundir import peer_uid, seconds_setting

#: How long a connected client has to send its request.
REQUEST_SECONDS = 5.0
#: How often the parent looks at the installation and the clock (seconds).
POLL_SECONDS = 1.0
#: The default idle time before the answerer exits, and the variable that sets it (seconds).
IDLE_SECONDS = 900.0
ENV_IDLE = "BEE_ANSWER_IDLE_SECONDS"
#: Commands run at once, at most (spares included); more wait in the listening queue until one ends.
MAX_RUNNING = 32
#: How long a second spare is put off while a command runs (seconds).
DEFER_SECONDS = 0.05
#: The log's size past which it starts afresh.
LOG_BYTES = 1024 * 1024
#: What the parent sends a spare to make it leave: honoured until the spare commits to a command (SIGTERM, which a
#: client passes on to its command, is the command's).
LEAVE = signal.SIGUSR1
#: Spares kept ready: a command arriving while the next spare still warms up takes the other.
SPARES = 2
#: The header: MAGIC, the wire (one byte) and the body's length (4 bytes).
_HEADER = len(MAGIC) + 5


class Refused(Exception):
    """A request the spare will not run (it closes the connection, having run nothing)."""


# -- the parent ------------------------------------------------------------------------------------------------------


class Answerer:
    """The parent: the listening socket, the spares, and the children running commands."""

    def __init__(self, path: str, listener: socket.socket, scratch: str, lock: int) -> None:
        self.path = path
        self.listener = listener
        self.scratch = scratch
        self.lock = lock
        # Its read end reaches end-of-file when this process is gone, however it ends: a spare then leaves.
        self.alive_r, self.alive_w = os.pipe2(os.O_CLOEXEC)
        self.place = os.stat(path).st_ino
        self.installed = fingerprint()
        self.idle = seconds_setting(os.environ, ENV_IDLE, IDLE_SECONDS)
        self.spares: set[int] = set()
        self.running: set[int] = set()
        self.took_r, self.took_w = os.pipe2(os.O_CLOEXEC)

    def serve(self) -> None:
        last = checked = time.monotonic()
        while True:
            self._reap()
            now = time.monotonic()
            while self._wants_spare(now - last):
                spare = self._fork_spare()
                if spare is None:
                    break  # no process to be had now (memory, a limit): the next round tries again
                self.spares.add(spare)
            deferred = len(self.spares) < SPARES
            if now - last > self.idle and not self.running:
                return
            if now - checked >= POLL_SECONDS:
                checked = now
                if fingerprint() != self.installed or not self._still_ours():
                    return
            # A spare put off (see _wants_spare) is looked for again soon; else the pipe or the poll wakes this.
            readable, _, _ = select.select([self.took_r], [], [], DEFER_SECONDS if deferred else POLL_SECONDS)
            if readable and self._took():
                last = time.monotonic()

    def _took(self) -> bool:
        """Move the spares that report a command taken to the running ones; whether any did."""
        os.set_blocking(self.took_r, False)
        try:
            taken = os.read(self.took_r, 4 * MAX_RUNNING)
        except BlockingIOError:
            return False
        for start in range(0, len(taken) - len(taken) % 4, 4):
            pid = int.from_bytes(taken[start : start + 4], "big")
            if pid in self.spares:
                self.spares.discard(pid)
                self.running.add(pid)
        return bool(taken)

    def _wants_spare(self, since_taken: float) -> bool:
        """Whether to fork a spare now: always when none is ready; the second only once no command runs (or after
        :data:`DEFER_SECONDS`), so that its warm-up does not take a core from the command being answered."""
        if len(self.spares) >= SPARES or len(self.running) + len(self.spares) >= MAX_RUNNING:
            return False
        return not self.spares or not self.running or since_taken >= DEFER_SECONDS

    def close(self) -> None:
        """Stop listening (the socket's name too, while it is still this answerer's) and end the spares."""
        if self._still_ours():
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        self.listener.close()
        self._took()
        for pid in self.spares:  # not one that has taken a command: it reported so, and runs on
            with contextlib.suppress(OSError):
                os.kill(pid, LEAVE)

    def _still_ours(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self.place
        except OSError:
            return False

    def _reap(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.running.discard(pid)
            self.spares.discard(pid)  # a spare that died waiting (killed): another takes its place

    def _fork_spare(self) -> int | None:
        try:
            pid = os.fork()
        except OSError:
            return None
        if pid == 0:
            try:
                for fd in (self.took_r, self.alive_w, self.lock):  # the lock is the parent's alone
                    os.close(fd)
                _spare(self.listener, self.took_w, self.alive_r, self.scratch)
            finally:
                os._exit(70)  # never reached: a spare ends in _spare
        return pid


def _listen(path: str) -> socket.socket:
    """The listening socket at ``path`` (a stale one left by a killed answerer is replaced: the lock is held)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(128)
    listener.setblocking(False)  # spares wait in select (for a client, or their parent's end), then accept
    return listener


def warm_up(folder: str, *, again: bool = False) -> None:
    """Import every direct command's group and run its module's ``warm_up(folder, again=…)``, if it has one: what
    each child then finds done (``again``: in a spare, once forked; see :mod:`bee_tracker.bd.cli`)."""
    from bee_cli.main import DIRECT

    for module, attribute in DIRECT.values():
        try:
            loaded = importlib.import_module(module)
        except ImportError:
            continue
        getattr(loaded, attribute)
        warm = getattr(loaded, "warm_up", None)
        if callable(warm):
            warm(folder, again=again)
    if not again:
        import difflib  # noqa: F401  -- click's suggestions for a mistyped option


def run(path: str) -> int:
    """Serve as the answerer of ``path`` until idle or outdated; 0 also when another one holds the lock."""
    os.chdir("/")
    if os.path.realpath(os.path.dirname(path)) != os.path.dirname(socket_path(os.environ)):
        print(f"bee answerer: {path} is not this installation's answerer socket", file=sys.stderr)
        return 2
    lock = os.open(path[: -len(".sock")] + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another answerer runs (or is starting) for this socket
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())  # which process it is, for an operator (and the tests)
    # The scratch folder's name carries the socket's, so a spare finds the log beside it (_log); one left by an
    # answerer that was killed is this one's to remove (it holds the lock).
    stem = os.path.basename(path)[: -len(".sock")]
    for stale in glob.glob(os.path.join(glob.escape(os.path.dirname(path)), f"{stem}-scratch-*")):
        shutil.rmtree(stale, ignore_errors=True)
    scratch = tempfile.mkdtemp(prefix=f"{stem}-scratch-", dir=os.path.dirname(path))
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, _stop)
    try:
        warm_up(scratch)
        gc.collect()
        gc.freeze()  # the children share these pages: no collection of theirs writes to them
        # Listening only now: meanwhile a command finds no answerer and runs in its own process, as it would.
        answerer = Answerer(path, _listen(path), scratch, lock)
        with contextlib.suppress(OSError):
            os.unlink(path[: -len(".sock")] + ".starting")
        try:
            answerer.serve()
        finally:
            answerer.close()
    except _Stopped:
        pass
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


class _Stopped(Exception):
    """A signal asked the answerer to stop (it closes as when idle)."""


def _stop(_number: int, _frame: object) -> None:
    raise _Stopped


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] != "--socket" or not args[1].endswith(".sock"):
        print("usage: python -P -m bee_cli.answerer --socket PATH", file=sys.stderr)
        sys.exit(2)
    sys.exit(run(args[1]))


# -- a spare, then the command's process ----------------------------------------------------------------------------


#: Set once this spare has committed to its command: from then on the parent's LEAVE is ignored.
_COMMITTED = threading.Event()


def _leave(_number: int, _frame: object) -> None:
    if not _COMMITTED.is_set():
        os._exit(0)  # nothing of a command has run: a client it took runs the command itself


def _spare(listener: socket.socket, took: int, alive: int, scratch: str) -> None:
    """Warm up again, wait for one connection, tell the parent, and serve it (see the module docstring). Never
    returns."""
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(LEAVE, _leave)
    # Its own copy of the pages a command touches (each first write to a page shared with the parent copies it):
    # made now, not while a command waits.
    warm_up(scratch, again=True)
    while True:
        readable, _, _ = select.select([listener.fileno(), alive], [], [])
        if alive in readable:
            os._exit(0)  # the parent is gone: nobody would replace this spare or stop it
        try:
            connection, _ = listener.accept()
            break
        except (BlockingIOError, InterruptedError):
            continue  # another spare took it
        except OSError:
            os._exit(1)
    os.write(took, os.getpid().to_bytes(4, "big"))
    for fd in (took, alive):
        os.close(fd)
    listener.close()
    try:
        fds, args, environ, umask = _receive(connection)
    except (Refused, OSError):
        connection.close()
        os._exit(0)
    _become(fds, environ, umask)
    sys.argv = ["bee", *args]
    _COMMITTED.set()
    try:
        connection.sendall(os.getpid().to_bytes(4, "big"))
        go = connection.recv(1)
    except OSError:
        go = b""
    if go != b"g":
        os._exit(0)  # the client gave up before the command started: it runs it itself
    threading.Thread(target=_stop_when_gone, args=(connection,), daemon=True).start()
    started = time.monotonic()
    code = _run(args)
    _log(scratch, f"pid {os.getpid()} ran `bee {args[0]}`: exit {code} in {time.monotonic() - started:.3f} s")
    with contextlib.suppress(OSError):
        connection.sendall(code.to_bytes(4, "big"))
    os._exit(0)


def _receive(connection: socket.socket) -> tuple[list[int], list[str], dict[bytes, bytes], int]:
    """The request on ``connection``: its descriptors, arguments, environment and umask.

    Raises:
        Refused: not this user, not the wire, too large, too slow, or malformed (its descriptors are then closed).
    """
    if peer_uid(connection) != os.getuid():
        raise Refused("another user")
    connection.settimeout(REQUEST_SECONDS)
    fds: list[int] = []
    try:
        data, ancillary, _, _ = connection.recvmsg(_HEADER, socket.CMSG_SPACE(PASSED_FDS * 4))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                usable = len(payload) - len(payload) % 4
                fds += [int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, usable, 4)]
        while 0 < len(data) < _HEADER:
            more = connection.recv(_HEADER - len(data))
            if not more:
                break
            data += more
        if len(fds) != PASSED_FDS or len(data) != _HEADER or not data.startswith(MAGIC) or data[4] != WIRE:
            raise Refused("not a request of this wire")
        size = int.from_bytes(data[5:9], "big")
        if size > MAX_REQUEST_BYTES:
            raise Refused("too large")
        body = bytearray()
        while len(body) < size:
            chunk = connection.recv(min(size - len(body), 1 << 16))
            if not chunk:
                raise Refused("cut short")
            body += chunk
        args, environ, umask = _parse(bytes(body))
        connection.settimeout(None)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return fds, args, environ, umask


def _parse(body: bytes) -> tuple[list[str], dict[bytes, bytes], int]:
    """Raises: Refused: a body that is not umask, count, arguments and ``KEY=VALUE`` variables."""
    fields = body.split(b"\0")
    try:
        umask = int(fields[0], 8)
        count = int(fields[1])
    except (IndexError, ValueError):
        raise Refused("malformed") from None
    if not 0 <= umask <= 0o777 or not 0 < count <= len(fields) - 2:
        raise Refused("malformed")
    args = [os.fsdecode(arg) for arg in fields[2 : 2 + count]]
    environ: dict[bytes, bytes] = {}
    for item in fields[2 + count :]:
        key, equals, value = item.partition(b"=")
        if not equals or not key:
            raise Refused("malformed")
        environ[key] = value
    from bee_cli.main import DIRECT

    if args[0] not in DIRECT:
        raise Refused("not a direct command")
    return args, environ, umask


def _become(fds: list[int], environ: dict[bytes, bytes], umask: int) -> None:
    """Take the client's streams, working folder, umask and environment (and nothing else of theirs)."""
    stdin, stdout, stderr, cwd = fds
    os.fchdir(cwd)
    os.close(cwd)
    for source, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(source, target)
        os.close(source)
    os.umask(umask)
    os.environb.clear()
    os.environb.update(environ)
    # Python made stdout line-buffered at start when it was a terminal; this process started on /dev/null.
    sys.stdout.reconfigure(line_buffering=os.isatty(1))  # type: ignore[union-attr]


def _log(scratch: str, line: str) -> None:
    """Add ``line`` to the answerer's log (``answer-….log`` beside its socket; started afresh past
    :data:`LOG_BYTES`): which process answered what, never the arguments (they may hold anything)."""
    path = os.path.join(os.path.dirname(scratch), os.path.basename(scratch).split("-scratch-")[0] + ".log")
    with contextlib.suppress(OSError):
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
        fd = os.open(path, flags | (os.O_TRUNC if _size(path) > LOG_BYTES else 0), 0o600)
        try:
            os.write(fd, f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n".encode())
        finally:
            os.close(fd)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _stop_when_gone(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        connection.recv(1)  # the client sends nothing more: this returns when it is gone
    os.kill(os.getpid(), signal.SIGTERM)


def _run(args: list[str]) -> int:
    """Run `bee ARGS` as the console script would; its exit status."""
    from bee_cli.main import _direct

    try:
        _direct(args)
        code = 0
    except SystemExit as exc:
        code = _exit_status(exc.code)
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        import atexit

        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    return code


def _exit_status(code: object) -> int:
    """What Python exits with for ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    main()
