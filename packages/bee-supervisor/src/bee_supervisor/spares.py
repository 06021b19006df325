"""Spares: a process of a service started ahead, its imports done and its host built, that takes over at once when a
replica has to start again — after a crash, a kill or an upgrade — so that a restart is not a cold start.

A :class:`SparePool` keeps at most one spare per service. It starts the spare the way a replica starts its process
(:func:`bee_supervisor.starting.start`), with one more argument: ``--spare-fd N``, one end of a socket pair. The
host builds everything it would build before serving, says ``ready`` on the channel and waits
(:mod:`bee_contracts.spare`). When a replica of the service starts, it takes the ready spare instead of spawning
(:meth:`SparePool.take`): the pool says ``serve``, and the replica goes on exactly as with a process of its own — the
same checks, the same contract. The pool then starts the next spare.

Only a spare of the installation the supervisor now serves is ever taken: each spare remembers the installation it
was started from, an upgrade discards the spare before the hosts are rolled (:meth:`SparePool.discard`), and the
replica's contract check would refuse an old one anyway. A spare that dies is started again, with a growing pause
when it keeps dying. A spare is never counted in the service's replicas; status lists it apart.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from dataclasses import dataclass

import anyio

from bee_contracts.spare import READY, SERVE
from bee_supervisor.process import read_lines, signal_group, wait_exit
from bee_supervisor.service import Started
from bee_supervisor.starting import start

# Annotations only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from bee_supervisor.installed import Installed
    from bee_supervisor.service import Context, Prepared

#: The pause after a spare failed to start (or died) n times in a row: doubled each time, up to the maximum.
PAUSE_SECONDS = 1.0
PAUSE_MAX_SECONDS = 60.0


def spares_fit(service: Prepared) -> bool:
    """Whether ``service`` can have spares: it asks for them, is checked over a socket of its own (``http`` with
    ``listen``, or a warm host) and does not tell its processes apart (no ``{replica}``)."""
    spec = service.spec
    own_socket = (spec.health.check == "http" and spec.listen is not None) or spec.health.check == "warm"
    return spec.spares and own_socket and not any("{replica}" in arg for arg in service.command)


@dataclass
class Spare:
    """A started spare: its process, its channel, and the installation it was started from."""

    started: Started
    channel: socket.socket
    installed: Installed
    since: float
    #: Set when a replica took it (the replica owns the process from then on).
    taken: bool = False


class SparePool:
    """At most one spare for ``service``, kept while :meth:`run` runs."""

    def __init__(self, service: Prepared, ctx: Context) -> None:
        self.service = service
        self.ctx = ctx
        self.ready: Spare | None = None
        self.starting = False
        self.failures = 0
        self._closed = False
        self._poked = anyio.Event()

    @property
    def name(self) -> str:
        return f"{self.service.spec.name}/spare"

    def take(self, installed: Installed) -> Started | None:
        """The ready spare, told to serve, for a replica to take over; None when there is none of ``installed``."""
        spare = self.ready
        if spare is None:
            return None
        self.ready = None
        self._poke()
        if not spare.installed.serves_as(installed):
            return None  # the pool's watch stops it
        try:
            spare.channel.sendall(SERVE)
        except OSError:
            return None  # it died meanwhile: the replica starts a process of its own
        spare.taken = True
        spare.channel.close()
        self.ctx.logger.info("%s: pid %d takes over", self.name, spare.started.child.pid)
        return spare.started

    def discard(self) -> None:
        """Stop the ready spare (an upgrade made it stale); the pool starts another of what is installed now."""
        if self.ready is not None:
            self.ready = None
            self._poke()

    def close(self) -> None:
        """Keep no spare any more (the service is dropped, or the supervisor stops)."""
        self._closed = True
        self.discard()
        self._poke()

    def _poke(self) -> None:
        self._poked.set()

    def describe(self) -> dict[str, object]:
        """This pool as one entry of ``status.json``."""
        spare = self.ready
        return {
            "service": self.service.spec.name,
            "state": "ready" if spare is not None else ("starting" if self.starting else "none"),
            "pid": spare.started.child.pid if spare is not None else None,
            "failures": self.failures,
        }

    # -- keeping one ---------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Keep one spare ready until :meth:`close`."""
        while not self._closed:
            spare = await self._start_one()
            if spare is None:
                self.failures += 1
                pause = min(PAUSE_MAX_SECONDS, PAUSE_SECONDS * 2 ** (self.failures - 1))
                with anyio.move_on_after(pause):
                    await self._wait_poke()
                continue
            if self._closed:
                await self._stop(spare)
                return
            self.ready = spare
            self.ctx.publish()
            died = await self._watch(spare)
            if died:
                self.failures += 1
                with anyio.move_on_after(min(PAUSE_MAX_SECONDS, PAUSE_SECONDS * 2 ** (self.failures - 1))):
                    await self._wait_poke()
            else:
                self.failures = 0
            self.ctx.publish()

    async def _wait_poke(self) -> None:
        await self._poked.wait()
        self._poked = anyio.Event()

    async def _start_one(self) -> Spare | None:
        """A new spare, once it says it is ready; None when it could not start or did not get ready in time."""
        installed = self.ctx.installed
        ours, theirs = socket.socketpair()
        self.starting = True
        self.ctx.publish()
        try:
            started = start(self.service, None, channel=theirs)
        except OSError as exc:
            self.ctx.logger.warning("%s: could not start one: %s", self.name, exc.strerror or exc)
            ours.close()
            return None
        finally:
            theirs.close()
            self.starting = False
        spare = Spare(started, ours, installed, time.monotonic())
        said = b""
        with anyio.move_on_after(self.service.spec.restart.start_timeout):
            said = await _read_line(ours)
        if said != READY or self._closed:
            if not self._closed:
                self.ctx.logger.warning("%s: pid %d did not get ready; stopping it", self.name, started.child.pid)
            await self._stop(spare)
            return None
        return spare

    async def _watch(self, spare: Spare) -> bool:
        """Wait until ``spare`` is taken (False), or is discarded or dies (True for died); stop it unless taken."""
        child = spare.started.child
        exited = False
        # A descriptor of the pool's own: the replica that takes the spare waits on the child's pidfd at once, before
        # this watch has seen it taken, and one descriptor may have only one waiter.
        watched = os.dup(child.pidfd) if child.pidfd is not None else None
        async with anyio.create_task_group() as tg:

            async def exit_watch() -> None:
                nonlocal exited
                if watched is not None:
                    await anyio.wait_readable(watched)
                else:
                    while child.popen.poll() is None:
                        await anyio.sleep(0.2)
                exited = True
                tg.cancel_scope.cancel()

            tg.start_soon(exit_watch)
            while self.ready is spare:
                await self._wait_poke()
            tg.cancel_scope.cancel()
        if watched is not None:
            os.close(watched)
        if spare.taken:
            return False
        if self.ready is spare:
            self.ready = None
        await self._stop(spare)
        if exited:
            self.ctx.logger.warning("%s: pid %d ended while waiting; starting another", self.name, child.pid)
        return exited

    async def _stop(self, spare: Spare) -> None:
        """End a spare that was not taken: close its channel (it leaves by itself), make sure, reap it."""
        child = spare.started.child
        with contextlib.suppress(OSError):
            spare.channel.close()
        signal_group(child, signal.SIGKILL)
        with anyio.CancelScope(shield=True):
            await wait_exit(child)
            with anyio.move_on_after(1):  # a grandchild may hold the pipe open
                async for line in read_lines(child.output):  # what it said before it went, into the log
                    self.ctx.logger.info("%s: pid %d: %s", self.name, child.pid, line.decode(errors="replace"))
        child.close()
        spare.started.forget()


async def _read_line(sock: socket.socket, limit: int = 64) -> bytes:
    """One short line from ``sock`` (the spare's channel): it, or what came before the channel closed."""
    sock.setblocking(False)
    data = b""
    while not data.endswith(b"\n") and len(data) < limit:
        try:
            chunk = sock.recv(limit)
        except BlockingIOError:
            await anyio.wait_readable(sock)
            continue
        except OSError:
            return data
        if not chunk:
            return data
        data += chunk
    return data
