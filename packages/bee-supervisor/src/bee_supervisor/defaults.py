"""The embedded default service file: every installed HTTP host, from the ``bee.hosts`` registry.

This is what `bee up` (and `bee supervise` without ``--config``) runs. ``services/tracker.toml`` in the repository
spells out the same services as a file (a test keeps the two equal), as the starting point for one's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from bee_contracts.hosts import HostEntry, installed_hosts
from bee_supervisor.config import HealthSpec, ServiceSpec, SupervisorSpec, default_state
from bee_supervisor.states import RestartPolicy

#: How the defaults name themselves in messages and in status.
SOURCE = "the built-in defaults"


def _fill(args: tuple[str, ...], fd: str) -> tuple[str, ...]:
    return tuple(arg.replace("{fd}", fd) for arg in args)


def host_service(entry: HostEntry, *, port: int | None = None, directory: Path | None = None) -> ServiceSpec:
    """One replica of HTTP host ``entry`` on 127.0.0.1 (its own port unless ``port``), behind a socket the
    supervisor holds, checked by ``GET /health`` and its contract.

    Raises:
        ValueError: ``entry`` is not an HTTP host that takes inherited sockets.
    """
    if entry.transport != "http" or entry.port is None or not entry.fd_args:
        raise ValueError(f"host {entry.name} is not an HTTP host the supervisor can hand a socket")
    command = ("bee", *entry.args, *_fill(entry.fd_args, "{listen_fd}"), *_fill(entry.fd_args, "{check_fd}"))
    version_command = ("bee", *entry.version_args)
    return ServiceSpec(
        name=entry.name,
        command=command,
        directory=directory,
        listen=("127.0.0.1", port or entry.port),
        host=entry.name,
        contract=True,
        version_command=version_command,
        health=HealthSpec(check="http"),
        restart=RestartPolicy(),
        shown={"command": command, "version_command": version_command},
    )


def default_config(
    cwd: Path,
    *,
    ports: Mapping[str, int] | None = None,
    directory: Path | None = None,
    hosts: list[HostEntry] | None = None,
) -> SupervisorSpec:
    """Every installed HTTP host as a service, with its state in ``<instance>/supervisor`` found from ``cwd``.

    ``ports`` moves a host to another port; ``directory`` is where the hosts run (default: the supervisor's
    working directory).
    """
    services = tuple(
        host_service(entry, port=(ports or {}).get(entry.name), directory=directory)
        for entry in (installed_hosts() if hosts is None else hosts)
        if entry.transport == "http" and entry.port is not None and entry.fd_args
    )
    state = default_state(cwd)
    return SupervisorSpec(services=services, state=state, logs=state / "logs", source=SOURCE)
