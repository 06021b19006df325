"""The supervisor: prepare everything that can fail, then run the replicas until SIGTERM or SIGINT.

:meth:`Supervisor.prepare` does everything that can be refused before a single process starts — the state
folder's lock (one supervisor per folder), the logs folder, every program and working directory, every listening
address — and undoes what it did when one of them fails, so a refused start leaves nothing behind.
:meth:`Supervisor.run` then starts every replica, publishes the status, watches the installation, and on SIGTERM or
SIGINT stops the services in reverse order (SIGTERM, then SIGKILL after each one's stop timeout). SIGHUP restarts
every service one replica at a time, as an upgrade does.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx

from bee_contracts import BeeError, ErrorCode
from bee_contracts.installation import fingerprint
from bee_supervisor.config import ServiceSpec, SupervisorSpec
from bee_supervisor.contract import VersionInfo, version_answer
from bee_supervisor.installed import Installed, current_installed, read_installed
from bee_supervisor.lock import StateLock
from bee_supervisor.logs import OutputLog, check_writable, close_logger, log_name, supervisor_logger
from bee_supervisor.process import signal_group
from bee_supervisor.replica import Replica
from bee_supervisor.service import Context, Prepared
from bee_supervisor.sockets import bind_listener
from bee_supervisor.spares import SparePool, spares_fit
from bee_supervisor.states import RUNNING_STATES, STOPPED_STATES, Event, State
from bee_supervisor.status import write_status

#: How often the installation is looked at for an upgrade.
POLL_SECONDS = 1.0
#: States in which a starting replica has settled, one way or the other.
_SETTLED = frozenset({State.RUNNING, State.FATAL, State.EXITED, State.STOPPED})


@dataclass
class Slot:
    """One replica position of a service: its log file and the replica currently filling it."""

    service: Prepared
    index: int
    log: OutputLog
    replica: Replica | None = None


def resolve_program(name: str, env: Mapping[str, str], cwd: Path | None) -> str | None:
    """The absolute path of program ``name``, or None when there is none to run.

    A bare name is looked up in the folder of the Python running the supervisor first (the `bee` of the same
    installation, even when its folder is not on PATH), then on the PATH the service will have. A name with a
    slash is taken from the service's working directory.
    """
    if "/" in name:
        path = Path(name) if os.path.isabs(name) else (cwd or Path.cwd()) / name
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    search = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", os.defpath)])
    return shutil.which(name, path=search)


def describe_version(info: Mapping[str, str]) -> str:
    return f"{info.get('version')} (contract {info.get('contractVersion')}, {info.get('contractDigest')})"


class Supervisor:
    """Runs the services of one service file (or those named) in the foreground."""

    def __init__(
        self,
        spec: SupervisorSpec,
        *,
        services: Sequence[str] = (),
        echo: bool = True,
        on_settled: Callable[[Supervisor], None] | None = None,
        poll_seconds: float = POLL_SECONDS,
        environ: Mapping[str, str] | None = None,
        tasks: Sequence[Callable[[Supervisor], Coroutine[Any, Any, None]]] = (),
        spares: bool = True,
    ) -> None:
        """``tasks`` run beside the services while the supervisor runs (the warm supervisor's control socket);
        ``spares`` False keeps no spare for any service.

        Raises BeeError ``not_found`` for a name in ``services`` that the file does not define."""
        self.spec = spec
        self.selected: list[ServiceSpec] = [spec.service(name) for name in services] or list(spec.services)
        self.echo = echo
        self.on_settled = on_settled
        self.poll_seconds = poll_seconds
        self.environ = dict(os.environ if environ is None else environ)
        self.tasks = tuple(tasks)
        #: Whether services may keep spares at all (each service says whether it wants one).
        self.spares_allowed = spares
        self.slots: list[Slot] = []
        self.exit_code = 0
        self._lock = StateLock(spec.state)
        self._prepared = False
        self._listeners: list[socket.socket] = []
        self._live: set[Replica] = set()
        # anyio's primitives belong to an event loop: made in run().
        self._stop_requested: anyio.Event
        self._dirty: anyio.Event
        self._roll_lock: anyio.Lock
        self._started_wall = time.time()
        self._ctx: Context | None = None
        self._tg: anyio.abc.TaskGroup | None = None

    # -- before anything starts -----------------------------------------------------------------------------

    def prepare(self) -> None:
        """Check and acquire everything a start needs; on any failure release it all and raise.

        Raises:
            BeeError: ``conflict`` (another supervisor holds the state folder: its pid is named; an address is in
                use), ``not_found`` (a program or working directory is missing), ``invalid_argument`` (the logs or
                state folder cannot be written).
        """
        self._lock.acquire()
        try:
            check_writable(self.spec.logs)
            for service in self.selected:
                prepared = self._prepare_service(service)
                for index in range(service.replicas):
                    path = self.spec.logs / log_name(service.name, index)
                    try:
                        log = OutputLog(path, self.spec.log_max_bytes, self.spec.log_backups)
                    except OSError as exc:
                        raise BeeError(
                            ErrorCode.INVALID_ARGUMENT, f"cannot write the log {path}: {exc.strerror or exc}"
                        ) from None
                    self.slots.append(Slot(prepared, index, log))
        except BaseException:
            self._release()
            raise
        self._prepared = True

    def _where(self, service: ServiceSpec, key: str) -> str:
        found = service.key_lines.get(key, service.line)
        line = f":{found}" if found else ""
        return f"{self.spec.source}{line}, services.{service.name}.{key}"

    def _prepare_service(self, service: ServiceSpec) -> Prepared:
        env = {**self.environ, **service.environment}
        cwd = service.directory
        if cwd is not None and not cwd.is_dir():
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"service {service.name}: the working directory {cwd} does not exist "
                f"({self._where(service, 'directory')})",
            )

        def program(argv: tuple[str, ...], key: str) -> tuple[str, ...]:
            found = resolve_program(argv[0], env, cwd)
            if found is None:
                raise BeeError(
                    ErrorCode.NOT_FOUND,
                    f"service {service.name}: cannot run {argv[0]!r}: no such executable "
                    f"({self._where(service, key)}; looked in {Path(sys.executable).parent} and on PATH)",
                    details={"service": service.name, "program": argv[0]},
                )
            return (found, *argv[1:])

        command = program(service.command, "command")
        version = program(service.version_command, "version_command") if service.version_command else None
        listener = None
        if service.listen is not None:
            host, port = service.listen
            listener = bind_listener(host, port, service=service.name, where=self._where(service, "listen"))
            self._listeners.append(listener)
        return Prepared(service, command, version, env, cwd, listener)

    def _release(self) -> None:
        for slot in self.slots:
            slot.log.close()
        for listener in self._listeners:
            listener.close()
        self._listeners.clear()
        self._lock.release()

    # -- running ----------------------------------------------------------------------------------------------

    def request_stop(self, exit_code: int = 0) -> None:
        """Stop every service and return from :meth:`run` with ``exit_code``."""
        self.exit_code = self.exit_code or exit_code
        with contextlib.suppress(AttributeError):  # before run() there is nothing to stop
            self._stop_requested.set()

    def replicas(self) -> list[Replica]:
        """The replica filling each slot, in service-file order."""
        return [slot.replica for slot in self.slots if slot.replica is not None]

    async def run(self) -> int:
        """Run until SIGTERM, SIGINT or :meth:`request_stop`; the exit code.

        Raises:
            BeeError: what :meth:`prepare` raises, when it was not called first.
        """
        if not self._prepared:
            self.prepare()
        self._stop_requested, self._dirty, self._roll_lock = anyio.Event(), anyio.Event(), anyio.Lock()
        logger = supervisor_logger(self.spec.logs, self.spec.log_max_bytes, self.spec.log_backups, echo=self.echo)
        try:
            installed = await anyio.to_thread.run_sync(current_installed)
            # trust_env=False: a proxy from the environment must never stand between the supervisor and a replica.
            async with httpx.AsyncClient(trust_env=False) as http, anyio.create_task_group() as tg:
                ctx = self._ctx = Context(logger, http, installed, publish=self._mark)
                self._tg = tg
                logger.info(
                    "supervisor pid %d: %s; state %s; installed bee %s",
                    os.getpid(),
                    self.spec.source,
                    self.spec.state,
                    describe_version(installed.info),
                )
                tg.start_soon(self._signals)
                tg.start_soon(self._publisher)
                ctx.versions = await self._version_answers()
                for slot in self.slots:
                    slot.replica = await self._add_replica(slot.service, slot.index, slot.log)
                if not self._stop_requested.is_set():  # a SIGTERM during start-up starts nothing
                    for replica in self.replicas():
                        replica.change_state(Event.START)
                    for slot in self.slots:
                        self._keep_spares(slot)
                tg.start_soon(self._settle)
                tg.start_soon(self._watch_installation)
                for task in self.tasks:
                    tg.start_soon(task, self)
                await self._stop_requested.wait()
                logger.info("stopping every service")
                await self._stop_all()
                logger.info("every service stopped")
                tg.cancel_scope.cancel()
        finally:
            for replica in self._live:  # only after a failure: normally every process has ended by now
                if replica.child is not None:
                    signal_group(replica.child, signal.SIGKILL)
            with contextlib.suppress(OSError):
                self._write_status("stopped")
            close_logger(logger)
            self._release()
        return self.exit_code

    @property
    def context(self) -> Context:
        """What every replica shares (the logger, the installed version); only while :meth:`run` runs."""
        assert self._ctx is not None, "the supervisor is not running"
        return self._ctx

    async def add_service(self, service: Prepared) -> Slot:
        """Start ``service`` (one replica) while the supervisor runs, as if its file had named it.

        Raises:
            OSError: its log file cannot be opened.
        """
        log = OutputLog(self.spec.logs / log_name(service.spec.name, 0), self.spec.log_max_bytes, self.spec.log_backups)
        slot = Slot(service, 0, log)
        self.slots.append(slot)
        slot.replica = await self._add_replica(service, 0, log)
        slot.replica.change_state(Event.START)
        self._keep_spares(slot)
        self._dirty.set()
        return slot

    async def drop(self, slot: Slot) -> None:
        """Stop ``slot``'s replica if it runs and forget the service: its log closes, its listener closes."""
        if slot in self.slots:
            self.slots.remove(slot)
        if slot.service.spares is not None:
            slot.service.spares.close()
        for replica in [r for r in self._live if r.service is slot.service]:
            await self._retire(replica)
        slot.log.close()
        if slot.service.listener is not None:
            if slot.service.listener in self._listeners:
                self._listeners.remove(slot.service.listener)
            slot.service.listener.close()
        self._dirty.set()

    def _keep_spares(self, slot: Slot) -> None:
        """Keep a spare for ``slot``'s service when it can have one (once per service: its first slot)."""
        service, replica = slot.service, slot.replica
        if slot.index != 0 or not self.spares_allowed or not spares_fit(service) or replica is None:
            return
        assert self._ctx is not None
        assert self._tg is not None
        pool = service.spares = SparePool(service, self._ctx)

        async def keep() -> None:
            # The service's own start goes first: a spare starting beside it would slow what someone waits for.
            await replica.wait_for(_SETTLED)
            await pool.run()

        self._tg.start_soon(keep)

    def _spare_pools(self) -> list[SparePool]:
        pools = (slot.service.spares for slot in self.slots if slot.index == 0)
        return [pool for pool in pools if isinstance(pool, SparePool)]

    async def _add_replica(self, service: Prepared, index: int, log: OutputLog, restarts: int = 0) -> Replica:
        assert self._ctx is not None
        assert self._tg is not None
        replica = Replica(service, index, self._ctx, log, restarts=restarts)
        await self._tg.start(replica.run)
        self._live.add(replica)
        return replica

    async def _retire(self, replica: Replica) -> None:
        """Stop ``replica`` (SIGTERM, then SIGKILL after its stop timeout) and end its tasks."""
        replica.change_state(Event.STOP)
        await replica.wait_for(STOPPED_STATES)
        replica.close()
        self._live.discard(replica)

    async def _stop_all(self) -> None:
        for pool in self._spare_pools():
            pool.close()
        for service in reversed([slot.service for slot in self.slots if slot.index == 0]):
            async with anyio.create_task_group() as tg:
                for replica in [r for r in self._live if r.service is service]:
                    tg.start_soon(self._retire, replica)
        while self._live:  # a replacement a restart added meanwhile
            async with anyio.create_task_group() as tg:
                for replica in list(self._live):
                    tg.start_soon(self._retire, replica)

    async def _version_answers(self) -> dict[str, VersionInfo | str]:
        answers: dict[str, VersionInfo | str] = {}

        async def one(service: Prepared) -> None:
            assert service.version_command is not None
            shown = service.spec.shown.get("version_command") or service.version_command
            answers[service.versions_key] = await version_answer(
                service.version_command, env=service.env, cwd=service.cwd, shown=shlex.join(shown)
            )

        asked: set[str] = set()
        async with anyio.create_task_group() as tg:
            for slot in self.slots:
                service = slot.service
                # Services sharing a key share one answer.
                wanted = slot.index == 0 and service.spec.contract and service.version_command
                if wanted and service.versions_key not in asked:
                    asked.add(service.versions_key)
                    tg.start_soon(one, service)
        return answers

    async def _settle(self) -> None:
        for replica in self.replicas():
            await replica.wait_for(_SETTLED)
        if self.on_settled is not None and not self._stop_requested.is_set():
            self.on_settled(self)

    async def _signals(self) -> None:
        assert self._ctx is not None
        assert self._tg is not None
        logger = self._ctx.logger
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as received:
            async for signum in received:
                name = signal.Signals(signum).name
                if signum == signal.SIGHUP:
                    logger.info("SIGHUP: restarting every service, one replica at a time")
                    self._tg.start_soon(self._roll, False)
                elif self._stop_requested.is_set():
                    logger.warning("%s again: killing every process now", name)
                    for replica in list(self._live):
                        if replica.child is not None:
                            signal_group(replica.child, signal.SIGKILL)
                else:
                    logger.info("%s: stopping", name)
                    self._stop_requested.set()

    def _mark(self) -> None:
        self._dirty.set()

    async def _publisher(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty = anyio.Event()
            self._write_status("stopping" if self._stop_requested.is_set() else "running")
            await anyio.sleep(0.1)  # at most ten writes a second, however busy the replicas are

    def _write_status(self, state: str) -> None:
        installed: Installed | None = self._ctx.installed if self._ctx else None
        document: dict[str, Any] = {
            "supervisor": {
                "pid": os.getpid(),
                "state": state,
                "config": self.spec.source,
                "started": self._started_wall,
                "logs": str(self.spec.logs),
                "installed": installed.info if installed else None,
            },
            "replicas": [replica.describe() for replica in self.replicas()],
            "spares": [pool.describe() for pool in self._spare_pools()],
        }
        write_status(self.spec.state, document)

    # -- upgrades and rolling restarts ---------------------------------------------------------------------------

    async def _watch_installation(self) -> None:
        assert self._ctx is not None
        ctx = self._ctx
        while True:
            await anyio.sleep(self.poll_seconds)
            if await anyio.to_thread.run_sync(fingerprint) == ctx.installed.fingerprint:
                continue
            try:
                installed = await anyio.to_thread.run_sync(read_installed)
            except BeeError as exc:
                ctx.logger.info("the installation is changing (%s); looking again in a moment", exc.message)
                continue
            before, ctx.installed = ctx.installed, installed
            if installed.serves_as(before):
                # Files were written (a cache, a reinstall of the same thing), but no host would serve anything else.
                ctx.logger.info("the installation's files changed, not what a host serves: nothing to restart")
                continue
            ctx.logger.warning(
                "the installed Bee changed from %s to %s (%s): restarting the hosts one at a time",
                describe_version(before.info),
                describe_version(installed.info),
                installed.change_from(before),
            )
            ctx.versions = await self._version_answers()
            for pool in self._spare_pools():
                pool.discard()  # a spare of what was installed never serves: the next is of what is installed now
            self._dirty.set()
            await self._roll(True)

    async def _roll(self, contract_only: bool) -> None:
        """Restart every service's replicas one at a time (only the contract-checked hosts after an upgrade)."""
        assert self._ctx is not None
        async with self._roll_lock:
            for slot in list(self.slots):  # services may come and go meanwhile (the warm hosts)
                if slot not in self.slots or (contract_only and not slot.service.spec.contract):
                    continue
                if self._stop_requested.is_set():
                    return
                if not await self._roll_slot(slot):
                    if self._stop_requested.is_set():
                        return
                    self._ctx.logger.error(
                        "restart of %s/%d failed; the rest are left as they are", slot.service.spec.name, slot.index
                    )
                    return

    async def _roll_slot(self, slot: Slot) -> bool:
        old = slot.replica
        assert old is not None
        if self._stop_requested.is_set():
            return False
        if old.status.state not in RUNNING_STATES and old.status.state is not State.FATAL:
            return True  # stopped, or exited under a policy that keeps it so: nothing to restart
        if slot.service.listener is None:
            # Nothing else can hold the address while the old process does: stop it, then start it again.
            old.change_state(Event.STOP)
            await old.wait_for(STOPPED_STATES)
            if self._stop_requested.is_set():
                return False
            old.change_state(Event.START)
            return await old.wait_for(_SETTLED) is State.RUNNING
        # A shared address: start the replacement beside the old process, and stop the old one only once the
        # replacement serves, so the address is always served.
        new = await self._add_replica(slot.service, slot.index, slot.log, restarts=old.restarts + 1)
        new.change_state(Event.START)
        if await new.wait_for(_SETTLED) is not State.RUNNING:
            assert self._ctx is not None
            self._ctx.logger.error(
                "%s: the replacement did not become ready (%s); the running process keeps serving",
                new.name,
                new.status.reason,
            )
            await self._retire(new)
            return False
        slot.replica = new
        self._dirty.set()
        await self._retire(old)
        return True
