"""One replica of a service: its state machine driven by what its process does.

:meth:`Replica.change_state` is the one place a replica's state changes: it asks
:func:`~bee_supervisor.states.transition` for the next status and performs what entering it asks for — a new
process on STARTING, SIGTERM then SIGKILL on STOPPING, a timer for a due start. Everything else (the process
ending, the health and contract checks, a stop request) only reports events to it.

A process's life is one task group: the exit watcher, the output pump, the checks and the stop. When the process
ends, the rest of its group is cancelled, and only then is the exit reported.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import signal
import time
from typing import TYPE_CHECKING, Any

import anyio

from bee_supervisor.contract import VersionInfo, refusal
from bee_supervisor.health import (
    Probe,
    handshake_stamp,
    mcp_session,
    probe_http,
    probe_mcp,
    wait_http,
    warm_session,
)
from bee_supervisor.logs import OutputLog
from bee_supervisor.process import Child, read_lines, signal_group, terminate, wait_exit
from bee_supervisor.service import Context, Prepared, Started
from bee_supervisor.starting import start
from bee_supervisor.starting import written as command_written
from bee_supervisor.states import Event, State, Status, describe_exit, transition

if TYPE_CHECKING:
    from mcp import Client


class Replica:
    """One process slot of a service, from start to stop, restarting it as its policy says."""

    def __init__(self, service: Prepared, index: int, ctx: Context, log: OutputLog, *, restarts: int = 0) -> None:
        self.service = service
        self.index = index
        self.ctx = ctx
        self.log = log
        self.status = Status(since=ctx.clock())
        self.restarts = restarts
        self.child: Child | None = None
        self.started_wall: float | None = None
        self.health: Probe | None = None
        self.version: VersionInfo | None = None
        #: A warm host replica's own probe socket (see :func:`~bee_supervisor.sockets.bind_probe`).
        self.probe_path: str | None = None
        self._spawned = False
        self._changed = anyio.Event()
        self._stop_now = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None

    @property
    def name(self) -> str:
        return f"{self.service.spec.name}/{self.index}"

    # -- the state machine ---------------------------------------------------------------------------------

    def change_state(self, event: Event, *, exit_code: int = 0, reason: str = "") -> None:
        """Apply ``event`` now and perform what the new state asks for."""
        old = self.status
        new = transition(
            old,
            event,
            now=self.ctx.clock(),
            policy=self.service.spec.restart,
            exit_code=exit_code,
            reason=reason,
            draw=self.ctx.draw(),
        )
        if new == old:
            return
        self.status = new
        if new.state is not old.state:
            level = logging.WARNING if new.state in (State.BACKOFF, State.FATAL, State.EXITED) else logging.INFO
            because = f" ({new.reason})" if new.reason else ""
            self.ctx.logger.log(level, "%s: %s -> %s%s", self.name, old.state, new.state, because)
        changed, self._changed = self._changed, anyio.Event()
        changed.set()
        self.ctx.publish()
        assert self._tg is not None, "change_state before run()"
        if new.state is State.STARTING and old.state is not State.STARTING:
            self._stop_now = anyio.Event()
            self._tg.start_soon(self._life)
        elif new.state is State.STOPPING and old.state is not State.STOPPING:
            self._stop_now.set()
        if new.due is not None and new.due != old.due:
            self._tg.start_soon(self._tick_at, new.due)

    async def _tick_at(self, due: float) -> None:
        await anyio.sleep(max(0.0, due - self.ctx.clock()))
        self.change_state(Event.TICK)  # a no-op when the replica moved on meanwhile

    async def wait_for(self, states: frozenset[State] | set[State]) -> State:
        """Wait until the replica is in one of ``states``; the state it reached."""
        while True:
            changed = self._changed
            if self.status.state in states:
                return self.status.state
            await changed.wait()

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Host the replica's tasks until :meth:`close`."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            task_status.started()
            await anyio.sleep_forever()

    def close(self) -> None:
        """End the replica's tasks; call it once the replica is in a stopped state (no process is left)."""
        if self._tg is not None:
            self._tg.cancel_scope.cancel()

    # -- one process's life -----------------------------------------------------------------------------------

    def _start(self) -> Started | None:
        """This replica's process: a spare of its service taken over, else one started now; None when none could
        be started (the exit is reported)."""
        spares = self.service.spares
        taken = spares.take(self.ctx.installed) if spares is not None else None
        if taken is not None:
            self.log.note(f"took over spare pid {taken.child.pid}: {taken.written}")
            return taken
        try:
            started = start(self.service, self.index)
        except OSError as exc:  # the program could not be run (or, rarely, no socket could be made for it)
            written = command_written(self.service)
            self.log.note(f"could not start {written}: {exc.strerror or exc}")
            self.ctx.logger.error("%s: could not start %s: %s", self.name, written, exc.strerror or exc)
            self.change_state(Event.EXIT, exit_code=127)
            return None
        self.log.note(f"started pid {started.child.pid}: {started.written}")
        return started

    async def _life(self) -> None:
        started = self._start()
        if started is None:
            return
        child = started.child
        if self._spawned:
            self.restarts += 1
        self._spawned = True
        self.child, self.started_wall, self.health, self.version = child, time.time(), None, None
        self.probe_path = started.probe_path
        self.ctx.publish()
        pumped = anyio.Event()
        async with anyio.create_task_group() as life:
            life.start_soon(self._pump, child, pumped)
            life.start_soon(self._checks, child, started.check_url)
            life.start_soon(self._stop_on_request, child)
            code = await wait_exit(child)
            # Let the pump write what the child printed last; a grandchild holding the pipe must not stall us.
            with anyio.move_on_after(0.5):
                await pumped.wait()
            life.cancel_scope.cancel()
        child.close()
        self.child = None
        started.forget()
        self.log.note(f"pid {child.pid} ended: {describe_exit(code)}")
        self.change_state(Event.EXIT, exit_code=code)

    async def _pump(self, child: Child, done: anyio.Event) -> None:
        try:
            async for line in read_lines(child.output):
                self.log.line(line)
        finally:
            done.set()

    async def _stop_on_request(self, child: Child) -> None:
        await self._stop_now.wait()
        await terminate(child, self.service.spec.restart.stop_timeout)

    async def _checks(self, child: Child, url: str | None) -> None:
        """Readiness (health, then the contract), then health every interval until it fails too often."""
        spec = self.service.spec
        policy, health = spec.restart, spec.health
        async with contextlib.AsyncExitStack() as stack:
            client: Client | None = None
            probe: Probe | None = None
            if health.check == "mcp":
                # Entered outside any cancel scope of ours: the session's own task group lives until the stack
                # closes. Its read timeout bounds the handshake instead.
                probe, client = await self._handshake(child, stack)
            elif health.check == "warm":
                probe, client = await self._warm_handshake(stack)
            else:
                with anyio.move_on_after(policy.start_timeout):
                    probe = await self._ready_probe(url)
            if probe is None or not probe.ok:
                self._record(probe or Probe(False, f"not ready within start_timeout ({policy.start_timeout:g} s)"))
                self.ctx.logger.warning(
                    "%s: not ready (%s); stopping it", self.name, self.health and self.health.detail
                )
                await terminate(child, policy.stop_timeout)
                return
            self._record(probe)
            refused = self._refusal(probe.stamp) if spec.contract else None
            if refused:
                self.ctx.logger.error("%s: %s", self.name, refused)
                self.log.note(refused)
                self.change_state(Event.REFUSE, reason=refused)
                return
            self.version = probe.stamp
            self.change_state(Event.READY)
            failures = 0
            while True:
                await anyio.sleep(health.interval)
                if health.check == "http":
                    assert url is not None
                    probe = await probe_http(self.ctx.http, url, health.timeout)
                elif client is not None:
                    probe = await probe_mcp(client, health.timeout)
                else:
                    probe = Probe(True, "running")
                self._record(probe)
                failures = 0 if probe.ok else failures + 1
                if failures >= health.failures:
                    self.ctx.logger.warning(
                        "%s: %d health checks failed in a row (%s); restarting it", self.name, failures, probe.detail
                    )
                    await terminate(child, policy.stop_timeout)
                    return

    async def check_now(self, timeout: float) -> bool:
        """Probe this warm host replica now, on its own socket; one that does not answer within ``timeout`` seconds
        is killed (and restarted as its policy says). Whether it answered.

        A front end whose host stopped answering asks for this (a host stopped with SIGSTOP would otherwise wait for
        the periodic checks, a minute); the supervisor's own probe decides, so a host that is only slow is kept.
        """
        child, path, identity = self.child, self.probe_path, self.service.spec.health.identity
        if child is None or path is None or identity is None or self.status.state is not State.RUNNING:
            return True
        try:
            with anyio.fail_after(2 * timeout):
                async with warm_session(path, identity, timeout) as client:
                    probe = await probe_mcp(client, timeout)
        except Exception as exc:  # no answer in time, or a failed handshake: the finding
            probe = Probe(False, f"{exc.__class__.__name__}: {exc}".rstrip(": "))
        self._record(probe)
        if probe.ok:
            return True
        self.ctx.logger.warning(
            "%s: reported unresponsive by a front end and no answer to a probe (%s); killing it",
            self.name,
            probe.detail,
        )
        self.log.note(f"reported unresponsive and did not answer a probe ({probe.detail}): killed")
        signal_group(child, signal.SIGKILL)
        return False

    async def _ready_probe(self, url: str | None) -> Probe:
        spec = self.service.spec
        if spec.health.check == "http":
            assert url is not None
            return await wait_http(self.ctx.http, url)
        await anyio.sleep(spec.restart.start_seconds)
        return Probe(True, f"running for {spec.restart.start_seconds:g} s")

    async def _handshake(self, child: Child, stack: contextlib.AsyncExitStack) -> tuple[Probe, Client | None]:
        assert child.protocol_out is not None
        assert child.protocol_in is not None
        timeout = self.service.spec.restart.start_timeout
        try:
            client = await stack.enter_async_context(mcp_session(child.protocol_out, child.protocol_in, timeout))
        except Exception as exc:  # a handshake that fails (or times out) is the finding
            return Probe(False, f"MCP handshake failed: {exc.__class__.__name__}: {exc}"), None
        return Probe(True, f"MCP handshake ({client.protocol_version})", handshake_stamp(client)), client

    async def _warm_handshake(self, stack: contextlib.AsyncExitStack) -> tuple[Probe, Client | None]:
        health = self.service.spec.health
        assert self.probe_path is not None  # this replica's own socket: the shared one may reach another replica
        assert health.identity is not None
        timeout = self.service.spec.restart.start_timeout
        try:
            client = await stack.enter_async_context(warm_session(self.probe_path, health.identity, timeout))
        except Exception as exc:  # a handshake that fails (or times out) is the finding
            return Probe(False, f"warm handshake failed: {exc.__class__.__name__}: {exc}"), None
        probe = Probe(True, f"MCP handshake over the warm socket ({client.protocol_version})", handshake_stamp(client))
        return probe, client

    def _refusal(self, stamp: VersionInfo | None) -> str | None:
        expected = self.ctx.installed.info
        answer = self.ctx.versions.get(self.service.versions_key)
        if isinstance(answer, str):
            return f"refused: {answer}"
        command = shlex.join(self.service.spec.shown.get("version_command") or self.service.version_command or ())
        where = "GET /health" if self.service.spec.health.check == "http" else "the MCP handshake"
        return refusal(f"`{command}`", expected, answer) or refusal(where, expected, stamp)

    def _record(self, probe: Probe) -> None:
        self.health = probe
        self.ctx.publish()

    # -- what status shows -------------------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """This replica as one entry of ``status.json``."""
        now_wall, now = time.time(), self.ctx.clock()
        health = self.health
        return {
            "service": self.service.spec.name,
            "replica": self.index,
            "state": self.status.state.value,
            # Where clients reach the service (health is checked on a socket of the replica's own).
            "address": "{}:{}".format(*self.service.spec.listen) if self.service.spec.listen else self.service.serves,
            "pid": self.child.pid if self.child else None,
            "since": round(now_wall - (now - self.status.since), 3),
            "started": self.started_wall if self.child else None,
            "restarts": self.restarts,
            "retries": self.status.retries,
            "version": self.version,
            "health": {"ok": health.ok, "detail": health.detail, "at": health.at} if health else None,
            "reason": self.status.reason,
            "log": str(self.log.path),
        }
