"""Watching a warm supervisor from a test, and stand-ins for one and for a warm host where the promise is the front
end's own checks.

Waits poll the published status until a condition holds or a deadline passes; they never assert on time. The
stand-ins run in the test's process (threads, the standard library) and speak the handshake of
:mod:`bee_contracts.warm` with answers the test chooses: a supervisor that names any socket and version, a host
that welcomes, refuses or answers as told.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bee_contracts.warm import control_socket, host_socket, identity_digest, read_line, warm_dir
from tests.harness.supervisor import wait_until

BEE = Path(sys.executable).parent / "bee"


def folder_of(runtime: Path) -> Path:
    """The installation folder of the warm supervisor whose runtime directory is ``runtime``."""
    return Path(warm_dir({"XDG_RUNTIME_DIR": str(runtime)}))


def status(runtime: Path) -> dict[str, Any]:
    try:
        value = json.loads((folder_of(runtime) / "status.json").read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def host(runtime: Path, serves: str) -> dict[str, Any]:
    """The status entry of the warm host that serves ``serves`` (``"core /abs/checkout"``), or {}."""
    for replica in status(runtime).get("replicas", []):
        if replica.get("address") == serves:
            return dict(replica)
    return {}


def running_host(
    runtime: Path, serves: str, *, other_than: int | None = None, timeout: float = 120.0
) -> dict[str, Any]:
    """Wait until the host serving ``serves`` runs (with a pid other than ``other_than``); its status entry."""

    def ready() -> dict[str, Any] | None:
        entry = host(runtime, serves)
        if entry.get("state") == "running" and entry.get("pid") and entry["pid"] != other_than:
            return entry
        return None

    return wait_until(ready, timeout, f"a running warm host for {serves}")  # type: ignore[no-any-return]


def warm_processes(runtime: Path) -> dict[int, tuple[int, str]]:
    """Every live process whose environment names ``runtime`` as its XDG_RUNTIME_DIR: pid -> (parent, command)."""
    marker = f"XDG_RUNTIME_DIR={runtime}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if fields[0] not in ("Z", "X"):
            found[int(entry.name)] = (int(fields[1]), command)
    return found


class Responder:
    """A socket bound at ``path`` that accepts connections in a thread and hands each to ``serve``.

    ``listen_as`` runs the listen() in a child process of that uid, which then accepts and serves (for the peer
    credential the front end checks); otherwise it all runs here.
    """

    def __init__(self, path: str, serve: Callable[[socket.socket], None]) -> None:
        self.path = path
        self.serve = serve
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(path):
            os.unlink(path)
        self.sock.bind(path)
        self.sock.listen(16)
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError):  # the test closed the connection: its stand-in has done its part
            self.serve(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.connections:
            conn.close()
        if os.path.exists(self.path):
            os.unlink(self.path)


def fake_supervisor(folder: Path, answer: Callable[[dict[str, Any]], dict[str, Any]]) -> Responder:
    """A warm supervisor stand-in on ``folder``'s control socket: each ensure request gets ``answer(request)``."""

    def serve(conn: socket.socket) -> None:
        request = read_line(conn, time.monotonic() + 10)
        conn.sendall(json.dumps(answer(request)).encode() + b"\n")
        conn.close()

    return Responder(control_socket(str(folder)), serve)


def socket_of(folder: Path, identity: dict[str, str]) -> str:
    return host_socket(str(folder), identity_digest(identity))


def answer_lines(conn: socket.socket, answer: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
    """Answer each JSON-RPC line read from ``conn`` with ``answer(message)`` (None: no answer) until it closes."""
    buffer = b""
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            reply = answer(json.loads(line))
            if reply is not None:
                conn.sendall(json.dumps(reply).encode() + b"\n")


def listen_as(uid: int, path: str) -> subprocess.Popen[bytes]:
    """A process of ``uid`` that calls listen() on a socket bound at ``path`` here, then accepts and welcomes.

    The kernel records the credentials of the listen() caller as the peer a connecting client sees, so a front end
    connecting to ``path`` meets a process of another user, in a directory only this user can reach.
    """
    if os.path.exists(path):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    code = (
        "import socket, sys\n"
        f"s = socket.socket(fileno={sock.fileno()}); s.listen(4)\n"
        "print('listening', flush=True)\n"
        "while True:\n"
        "    c, _ = s.accept(); c.recv(1 << 20)\n"
        '    c.sendall(b\'{"bee": "welcome"}\\n\')\n'
    )
    process = subprocess.Popen(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "/usr/bin/python3", "-c", code],
        pass_fds=(sock.fileno(),),
        stdout=subprocess.PIPE,
    )
    sock.close()
    assert process.stdout is not None
    assert process.stdout.readline() == b"listening\n"
    return process


def relayed(process: subprocess.Popen[bytes]) -> None:
    """Wait until the front end ``process`` has passed on everything the test wrote to its stdin: its pipe is empty
    and it sleeps in poll (after reading, a front end writes what it read to its host before it polls again).

    Without this, a test that kills a host right after sending could kill it before the front end, starved of CPU on
    a loaded machine, wrote the request: the request never reached the host, and goes to the next one instead.
    """
    import fcntl
    import struct
    import termios

    assert process.stdin is not None
    stdin = process.stdin.fileno()

    def settled() -> bool:
        waiting = struct.unpack("i", fcntl.ioctl(stdin, termios.FIONREAD, b"\0\0\0\0"))[0]
        try:
            state = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            where = Path(f"/proc/{process.pid}/wchan").read_text()
        except OSError:
            return False
        return waiting == 0 and state == "S" and "poll" in where

    wait_until(lambda: settled() and settled(), 60, "the front end to pass on what it was sent")
