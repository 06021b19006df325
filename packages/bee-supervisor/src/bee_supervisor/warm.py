"""The warm supervisor: one per user and installation, keeping the editors' stdio hosts warm as dynamic services.

A `bee mcp serve` or `bee design mcp` front end (``bee_cli.frontend``) asks it, over the control socket in the
user's private directory (:mod:`bee_contracts.warm`), to *ensure* the host of an identity. The supervisor:

- checks the asker's uid (SO_PEERCRED) and the request: a wire it speaks, a view an installed stdio host serves (the
  host registry's views, :func:`view_hosts`), an absolute checkout that is a directory, an absolute instance, and an
  environment whose digest is the identity's;
- names the host's socket by the identity's digest (never a path it was given), binds it in the private directory
  and holds it for the service's life, so a restarted host never closes it: a front end that reconnects meanwhile
  waits in its backlog;
- starts the host (its registry entry's command, such as ``python -m bee_cli mcp serve --checkout …
  --instance-root … --warm-fd N``: the same installation's `bee`, with the front end's environment) as a service of
  the ordinary :class:`~bee_supervisor.supervisor.Supervisor`: checked by an MCP handshake over the warm socket and
  its version and contract, restarted with backoff when it fails, restarted one at a time when the installed Bee
  changes, listed by `bee supervise status --warm`;
- answers once the host runs, with the socket and the installed version triple.

A host with no session exits after its idle time (status 0, so it is not restarted) and its service is dropped; the
supervisor itself exits once it has held no host for ``$BEE_WARM_SUPERVISOR_IDLE_SECONDS`` (60 s by default). Its
state folder is the installation's folder in the private directory: ``supervisor.lock`` (one warm supervisor per
installation), ``status.json``, ``logs/``, ``control.sock`` and ``hosts/``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
from anyio.abc import SocketAttribute

from bee_contracts import launch
from bee_contracts.hosts import HostEntry, installed_hosts
from bee_contracts.rundir import seconds_setting
from bee_contracts.serving import WARM_CHECK_FD, WARM_FD
from bee_contracts.warm import (
    ENV_SPARES,
    ENV_SUPERVISOR_IDLE,
    MAX_LINE_BYTES,
    SUPERVISOR_IDLE,
    Refusal,
    WarmUnavailable,
    check_ensure,
    check_unresponsive,
    control_socket,
    host_socket,
    identity_digest,
    peer_uid,
    read_environment,
    ready_message,
    warm_dir,
)
from bee_supervisor.config import HealthSpec, ServiceSpec, SupervisorSpec
from bee_supervisor.contract import version_answer
from bee_supervisor.service import Prepared
from bee_supervisor.sockets import bind_unix
from bee_supervisor.states import STOPPED_STATES, Event, RestartPolicy, State
from bee_supervisor.supervisor import Slot, Supervisor

if TYPE_CHECKING:
    from bee_contracts.warm import Ready

#: How the warm supervisor names its services' source in status.
SOURCE = "the warm hosts"
#: A view's stdio host, and the arguments that select the view (:func:`view_hosts`).
ViewHost = tuple[HostEntry, tuple[str, ...]]
#: A warm host is restarted quickly and often: it is cheap, and an editor is waiting.
WARM_RESTART = RestartPolicy(
    restart="on-failure", start_seconds=1.0, start_retries=3, start_timeout=60.0, backoff=0.5, backoff_max=5.0
)
#: How long a host that failed for good stays listed (and refused) before a new request may try it again.
FATAL_KEEP_SECONDS = 60.0
#: How long a host reported unresponsive gets to answer the supervisor's own probe before it is killed.
UNRESPONSIVE_PROBE_SECONDS = 3.0
#: How long a request may take to arrive.
_REQUEST_SECONDS = 10.0


def view_hosts() -> dict[str, tuple[HostEntry, tuple[str, ...]]]:
    """Each view the installed stdio hosts serve, by its name in the host registry: the host that serves it, and the
    arguments that select it."""
    return {
        view: (entry, selecting)
        for entry in installed_hosts()
        if entry.transport == "stdio"
        for view, selecting in entry.every_view()
    }


def host_command(entry: HostEntry, selecting: tuple[str, ...], identity: dict[str, str]) -> tuple[str, ...]:
    """The command that starts ``entry``'s warm host of ``identity`` (its view selected by ``selecting``): this
    installation's `bee`, never a program a request names."""
    argv = [*entry.argv(identity["checkout"]), *selecting, "--instance-root", identity["instance"]]
    fds = (WARM_FD, "{listen_fd}", WARM_CHECK_FD, "{check_fd}")
    return (*launch.bee(*argv, "--log-level", identity["logLevel"], *fds),)


class WarmServices:
    """The warm supervisor's own work beside its services: the control socket, and dropping hosts that rest."""

    def __init__(self, folder: Path, control: anyio.abc.SocketListener, idle: float) -> None:
        self.folder = folder
        self.control = control
        self.idle = idle
        self.by_digest: dict[str, Slot] = {}
        self._create = anyio.Lock()
        self._versions_for: object = None
        #: Requests being answered: a host is on its way, so the supervisor is not idle.
        self.asking = 0

    async def serve(self, supervisor: Supervisor) -> None:
        """Answer ensure requests until the supervisor stops."""
        async with self.control, anyio.create_task_group() as tg:
            while True:
                stream = await self.control.accept()
                tg.start_soon(self._request, supervisor, stream)

    async def _request(self, supervisor: Supervisor, stream: anyio.abc.SocketStream) -> None:
        logger = supervisor.context.logger
        answer: Mapping[str, Any]
        async with stream:
            try:
                uid = peer_uid(stream.extra(SocketAttribute.raw_socket))  # noqa: S610 -- anyio's typed attribute
                if uid != os.getuid():
                    raise Refusal("uid", f"uid {uid} may not use the warm hosts of uid {os.getuid()}")
                with anyio.fail_after(_REQUEST_SECONDS):
                    request = await _read_request(stream)
                if isinstance(request, dict) and request.get("bee") == "unresponsive":
                    answer = await self.unresponsive(supervisor, request)
                else:
                    hosts = view_hosts()
                    identity, environ = check_ensure(request, hosts)
                    answer = await self.ensure(supervisor, identity, environ, hosts[identity["view"]])
            except Refusal as refused:
                logger.warning("warm: refused a request (%s): %s", refused.code, refused.message)
                answer = refused.answer()
            except TimeoutError:
                answer = Refusal("request", "no request in time").answer()
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.send(json.dumps(answer).encode() + b"\n")

    async def unresponsive(self, supervisor: Supervisor, request: dict[str, Any]) -> dict[str, Any]:
        """A front end's report that its host stopped answering: that host (the same process, no other) is probed
        now and killed if it does not answer (:meth:`~bee_supervisor.replica.Replica.check_now`).

        Raises:
            Refusal: the report cannot be read.
        """
        identity, pid = check_unresponsive(request)
        slot = self.by_digest.get(identity_digest(identity))
        replica = slot.replica if slot is not None else None
        if replica is None or replica.child is None or replica.child.pid != pid:
            return {"bee": "checked", "answered": None}  # that process is gone already (or never was one of ours)
        supervisor.context.logger.info("warm: %s reported unresponsive: probing it", replica.name)
        return {"bee": "checked", "answered": await replica.check_now(UNRESPONSIVE_PROBE_SECONDS)}

    async def ensure(
        self, supervisor: Supervisor, identity: dict[str, str], environ: dict[str, str], host: ViewHost
    ) -> Ready:
        """The host of ``identity`` (``host``: the stdio host serving its view, and the arguments that select it),
        started when there is none, once it runs: the ready answer.

        Raises:
            Refusal: the host failed for good (its reason), or its socket's path is too long.
        """
        self.asking += 1
        try:
            return await self._ensure(supervisor, identity, environ, host)
        finally:
            self.asking -= 1

    async def _ensure(
        self, supervisor: Supervisor, identity: dict[str, str], environ: dict[str, str], host: ViewHost
    ) -> Ready:
        digest = identity_digest(identity)
        async with self._create:
            slot = self.by_digest.get(digest)
            if slot is None:
                slot = await self._start(supervisor, identity, environ, digest, host)
            replica = slot.replica
            assert replica is not None
            if replica.status.state in STOPPED_STATES - {State.FATAL}:
                replica.change_state(Event.START)  # it went idle, or stopped: start it again
        state = await replica.wait_for(frozenset({State.RUNNING, State.FATAL}))
        if state is State.FATAL:
            raise Refusal("fatal", f"the warm host failed: {replica.status.reason} (log: {slot.log.path})")
        socket_path = slot.service.spec.health.socket
        assert socket_path is not None
        pid = replica.child.pid if replica.child else None
        return ready_message(socket_path, supervisor.context.installed.info, pid)

    async def _start(
        self, supervisor: Supervisor, identity: dict[str, str], environ: dict[str, str], digest: str, host: ViewHost
    ) -> Slot:
        entry, selecting = host
        try:
            path = host_socket(str(self.folder), digest)
        except WarmUnavailable as exc:
            raise Refusal("request", str(exc)) from None
        listener = _bind(path)
        ctx = supervisor.context
        version_command = (*launch.bee("--version", "--json"),)
        if self._versions_for != ctx.installed:
            # One answer for every warm host of this installation, asked again after an upgrade.
            ctx.versions["warm"] = await version_answer(
                version_command, env=supervisor.environ, cwd=Path(launch.NEUTRAL_CWD)
            )
            self._versions_for = ctx.installed
        name = f"{identity['view']}-{digest[:8]}"
        command = host_command(entry, selecting, identity)
        spec = ServiceSpec(
            name=name,
            command=command,
            host=entry.name,
            contract=True,
            version_command=version_command,
            health=HealthSpec(check="warm", interval=5.0, timeout=10.0, socket=path, identity=identity),
            restart=WARM_RESTART,
            shown={"command": command, "version_command": version_command},
        )
        serves = f"{identity['view']} {identity['checkout']}"
        service = Prepared(
            spec,
            command,
            version_command,
            # Exactly what the identity covers (bee_contracts.warm.read_environment): a host another editor shares
            # is lent nothing else of this one's environment. A fixed folder, never the checkout, to start in.
            env=read_environment(environ),
            cwd=Path(launch.NEUTRAL_CWD),
            listener=listener,
            version_key="warm",
            serves=serves,
        )
        ctx.logger.info("warm: starting %s for %s", name, serves)
        slot = await supervisor.add_service(service)
        self.by_digest[digest] = slot
        return slot

    async def janitor(self, supervisor: Supervisor) -> None:
        """Drop the services of hosts that went idle (or failed a while ago); stop once none is held for long."""
        empty_since = time.monotonic()
        while True:
            await anyio.sleep(0.25)
            now = time.monotonic()
            async with self._create:
                for digest, slot in list(self.by_digest.items()):
                    replica = slot.replica
                    if replica is None:
                        continue
                    state, since = replica.status.state, replica.status.since
                    resting = state in (State.EXITED, State.STOPPED) and replica.status.due is None
                    failed = state is State.FATAL and now - since >= FATAL_KEEP_SECONDS
                    if resting or failed:
                        del self.by_digest[digest]
                        await supervisor.drop(slot)
                        with contextlib.suppress(OSError):
                            os.unlink(str(slot.service.spec.health.socket))
                        supervisor.context.logger.info("warm: %s is gone (%s)", slot.service.spec.name, state)
            if self.by_digest or self.asking:
                empty_since = now
            elif now - empty_since >= self.idle:
                supervisor.context.logger.info("warm: no host for %g s: exiting", self.idle)
                supervisor.request_stop(0)
                return


async def _read_request(stream: anyio.abc.SocketStream) -> Any:
    data = b""
    while b"\n" not in data:
        try:
            data += await stream.receive(65536)
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            raise Refusal("request", "the connection closed before its request") from None
        if len(data) > MAX_LINE_BYTES:
            raise Refusal("request", f"a request over {MAX_LINE_BYTES} bytes")
    try:
        return json.loads(data.partition(b"\n")[0])
    except ValueError:
        raise Refusal("request", "the request is not JSON") from None


def _bind(path: str) -> socket.socket:
    """A listening Unix socket at ``path`` (a file left there by a host gone is replaced), only the user's."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    return bind_unix(path, 128)


def supervisor_idle(environ: Mapping[str, str]) -> float:
    """``$BEE_WARM_SUPERVISOR_IDLE_SECONDS`` when it is a positive number, else the default."""
    return seconds_setting(environ, ENV_SUPERVISOR_IDLE, SUPERVISOR_IDLE)


def warm_spec(folder: Path) -> SupervisorSpec:
    """The warm supervisor's spec: no services of its own, its state in the installation's folder."""
    return SupervisorSpec(services=(), state=folder, logs=folder / "logs", source=SOURCE)


def run(*, detach: bool) -> int:
    """Run this installation's warm supervisor (in the background with ``detach``); its exit status.

    Another warm supervisor already running on the folder is not an error: it serves, and this one leaves (0).
    """
    from bee_contracts import BeeError

    if detach:
        if os.fork() > 0:
            os._exit(0)  # the front end that started it waits only for this; the supervisor is nobody's child
        os.setsid()
    # It serves every checkout of this user: none of them is its working directory (bee_contracts.launch).
    os.chdir(launch.NEUTRAL_CWD)
    try:
        folder = Path(warm_dir(os.environ))
    except WarmUnavailable as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    supervisor: Supervisor | None = None
    services: WarmServices | None = None

    async def control(sup: Supervisor) -> None:
        assert services is not None
        await services.serve(sup)

    async def janitor(sup: Supervisor) -> None:
        assert services is not None
        await services.janitor(sup)

    spares = os.environ.get(ENV_SPARES, "1") != "0"
    supervisor = Supervisor(warm_spec(folder), echo=not detach, tasks=[control, janitor], spares=spares)
    try:
        supervisor.prepare()
    except BeeError as exc:
        if exc.code.value == "conflict":
            return 0  # another one holds the folder (two front ends raced to start one): it serves
        sys.stderr.write(f"Error: {exc.message}\n")
        return 1
    # The lock is held: whatever is in hosts/ belongs to no live supervisor.
    for stale in (folder / "hosts").glob("*.sock"):
        with contextlib.suppress(OSError):
            stale.unlink()
    path = control_socket(str(folder))

    async def main() -> int:
        nonlocal services
        listener = await anyio.abc.SocketListener.from_socket(_bind(path))
        services = WarmServices(folder, listener, supervisor_idle(os.environ))
        try:
            return await supervisor.run()
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)

    return anyio.run(main)


def main() -> None:
    """``python -m bee_supervisor.warm [--detach]``: how a front end starts the warm supervisor (no click)."""
    code = run(detach="--detach" in sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
