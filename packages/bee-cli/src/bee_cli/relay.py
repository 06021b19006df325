"""The relay between an editor's stdio and its warm host's socket: a short I/O loop around the relay's logic.

Everything the relay decides — what to send again when a host is replaced, what to answer itself, when a host has
stopped answering — is :class:`~bee_cli.relay_machine.RelayMachine`'s. This loop only moves bytes between fd 0/1
and the host's socket, attaches a host when the machine wants one (in a thread, :mod:`bee_cli.attach`), closes and
reports a host the machine gave up on, and tells the machine the time. When stdin closes (or the editor's process is
gone) it exits within :data:`DRAIN_SECONDS` whatever the host is doing.
"""

from __future__ import annotations

import os
import select
import socket
import stat
import sys
import threading
import time

from bee_cli.attach import Attached, TooOld, attach, in_background, report_unresponsive
from bee_cli.relay_machine import HostRule, RelayMachine
from bee_contracts.warm import WarmUnavailable, identity_digest

# Annotations only (mypy reads this name as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: After stdin closes, how long the host's last answers get to arrive: the relay is gone within a second.
DRAIN_SECONDS = 0.8
#: Stop reading a side while this much waits to be written to the other.
_BACKLOG = 4 * 1024 * 1024
_READ = 256 * 1024


class Relay:
    """Relays fd 0/1 to an attached warm host until stdin closes; :meth:`run` returns the exit status."""

    def __init__(self, attached: Attached, identity: dict[str, str], environ: dict[str, str], wait: float) -> None:
        self.identity = identity
        self.digest = identity_digest(identity)
        self.environ = environ
        self.wait = wait
        self.machine = RelayMachine()
        self.sock: socket.socket | None = None
        self.installed: object = None
        self.host_pid: object = None
        self.attaching: Callable[[], Attached | WarmUnavailable | None] | None = None
        self.parent = os.getppid()
        self._adopt(attached, time.monotonic())

    def _adopt(self, attached: Attached, now: float) -> None:
        attached.sock.setblocking(False)
        self.sock = attached.sock
        self.installed = attached.installed
        self.host_pid = attached.welcome.get("pid")
        self.machine.attached(HostRule(attached.welcome), now)

    def _close_host(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _lost(self, now: float) -> None:
        self._close_host()
        self.machine.host_lost(now)

    def _give_up(self, now: float) -> None:
        """The host stopped answering: leave it, and have the warm supervisor check it (and replace it)."""
        pid, identity, environ = self.host_pid, self.identity, self.environ
        threading.Thread(target=report_unresponsive, args=(identity, environ, pid), daemon=True).start()
        self._lost(now)

    def _attach(self) -> None:
        deadline = time.monotonic() + self.wait
        known = self.installed
        self.attaching = in_background(lambda: attach(self.identity, self.digest, self.environ, deadline, known))

    def _attach_done(self, outcome: Attached | WarmUnavailable, now: float) -> None:
        self.attaching = None
        if isinstance(outcome, Attached):
            self._adopt(outcome, now)
            return
        self.machine.attach_failed(str(outcome), too_old=isinstance(outcome, TooOld), now=now)
        if self.machine.too_old is not None:
            sys.stderr.write(f"bee: {self.machine.too_old}\n")
            sys.stderr.flush()

    # -- moving bytes --------------------------------------------------------------------------------------------

    def _to_host(self, now: float) -> None:
        """Write what the machine has for the host, as far as the socket takes it."""
        while self.sock is not None:
            data = self.machine.host_bytes()
            if data is None:
                return
            try:
                written = self.sock.send(data)
            except BlockingIOError:
                return
            except OSError:
                self._lost(now)
                return
            self.machine.sent(written)
            if written < len(data):
                return

    def _from_host(self, now: float) -> None:
        assert self.sock is not None
        try:
            data = self.sock.recv(_READ)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.machine.host_data(data, now)
        else:
            self._lost(now)

    def _to_client(self) -> bool:
        """Write what waits for the editor, as far as stdout takes it; False when stdout is gone."""
        pending = self.machine.client_bytes()
        if not pending:
            return True
        try:
            written = os.write(1, pending)
        except BlockingIOError:
            return True
        except OSError:
            return False
        del pending[:written]
        return True

    # -- the loop ------------------------------------------------------------------------------------------------

    def _step(self, now: float) -> None:
        """Everything that does not wait: attachments, the machine's wishes and the time."""
        machine = self.machine
        if self.attaching is not None:
            outcome = self.attaching()
            if outcome is not None:
                self._attach_done(outcome, now)
        machine.tick(now)
        if machine.give_up_host:
            self._give_up(now)
        if machine.wants_host and self.attaching is None and self.sock is None:
            self._attach()
        self._to_host(now)
        if self.sock is not None and machine.shut_host():
            try:
                self.sock.shutdown(socket.SHUT_WR)  # the host's session ends as a cold host's would
            except OSError:
                self._lost(now)

    def _timeout(self, now: float) -> int:
        """How long poll may wait (milliseconds)."""
        wake = self.machine.next_wake()
        timeout = 1.0 if wake is None else max(0.001, min(1.0, wake - now))
        if self.attaching is not None:
            timeout = min(timeout, 0.02)
        if self.machine.eof_at is not None:
            timeout = min(timeout, max(0.001, self.machine.eof_at + DRAIN_SECONDS - now))
        return int(timeout * 1000) + 1

    def _poll(self, stdin_open: bool) -> select.poll:
        """What the loop waits for: stdin while the host's queue has room, the host's socket both ways, stdout while
        something waits for it."""
        machine = self.machine
        poll = select.poll()
        if stdin_open and machine.queued < _BACKLOG:
            poll.register(0, select.POLLIN)
        if self.sock is not None:
            events = select.POLLIN if len(machine.client_bytes()) < _BACKLOG else 0
            if machine.host_bytes() is not None:
                events |= select.POLLOUT
            poll.register(self.sock, events)
        if machine.client_bytes():
            poll.register(1, select.POLLOUT)
        return poll

    def _stdin(self, event: int, now: float) -> bool:
        """Read what the editor wrote; False once stdin has closed."""
        data = os.read(0, _READ) if event & (select.POLLIN | select.POLLHUP | select.POLLERR) else b""
        if data:
            self.machine.client_data(data, now)
            return True
        self.machine.client_eof(now)
        return False

    def _host(self, event: int, now: float) -> None:
        if event & (select.POLLIN | select.POLLHUP | select.POLLERR):
            self._from_host(now)
        if self.sock is not None and event & select.POLLOUT:
            self._to_host(now)

    def run(self) -> int:
        """Relay until stdin closes (or stdout does); the exit status (0)."""
        for fd in (0, 1):
            mode = os.fstat(fd).st_mode
            if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
                os.set_blocking(fd, fd == 0)  # stdout never blocks the loop; stdin is read only when ready
        stdin_open = True
        while True:
            now = time.monotonic()
            self._step(now)
            if self.machine.finished(now, DRAIN_SECONDS):
                self._to_client()  # what the host answered last, if stdout takes it now
                return 0
            for fd, event in self._poll(stdin_open).poll(self._timeout(now)):
                now = time.monotonic()
                if fd == 0:
                    stdin_open = self._stdin(event, now)
                elif fd == 1:
                    if not self._to_client():
                        return 0
                elif self.sock is not None and fd == self.sock.fileno():
                    self._host(event, now)
            if not self._to_client():
                return 0
            if stdin_open and os.getppid() != self.parent:
                stdin_open = False  # the editor is gone even if something else holds its end of the pipe
                self.machine.client_eof(time.monotonic())
