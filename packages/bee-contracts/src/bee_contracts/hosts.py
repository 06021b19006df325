"""The host registry: each host package declares its hosts through the ``bee.hosts`` entry point.

``bee doctor``, the supervisor and editor setup read this registry instead of a hard-coded list, so a package that
is not installed contributes nothing. An entry point names a :class:`HostEntry` object::

    [project.entry-points."bee.hosts"]
    core = "bee_core.hosts:CORE"

The module it names must import nothing heavier than bee-contracts: reading the registry loads every entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Literal

#: Entry-point group through which packages declare their hosts.
ENTRY_POINT_GROUP = "bee.hosts"


@dataclass(frozen=True)
class HostEntry:
    """How to start one host and how to check it.

    ``args`` are the arguments of the `bee` command that start the host; ``{checkout}`` in them is replaced by the
    absolute checkout (or root) the host serves. ``check`` is ``"mcp"`` for a host checked by an MCP handshake
    over its transport, ``"health"`` for one checked by ``GET /health`` (whose JSON carries the version triple).
    ``version_args`` are the `bee` arguments that print that triple as JSON, which the supervisor compares with the
    installed contracts before it marks the host ready.

    An HTTP host also says where it listens by default (``port``) and how it is handed a listening socket the
    supervisor bound (``fd_args``, repeated once per socket with ``{fd}`` replaced by the descriptor), so that
    replicas can share one address and a restart never closes it.

    ``views`` are other views the same host serves, each ``(catalog, extra arguments)``: the core host's
    discovery view is ``("discovery", ("--discovery",))``. A view is not another host (editor setup configures
    the host once); ``bee doctor`` checks each view against its own catalog.
    """

    name: str
    transport: Literal["stdio", "http"]
    args: tuple[str, ...]
    check: Literal["mcp", "health"]
    title: str = ""
    version_args: tuple[str, ...] = ("--version", "--json")
    port: int | None = None
    fd_args: tuple[str, ...] = ()
    views: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def argv(self, checkout: Path) -> list[str]:
        """The `bee` arguments that start this host for ``checkout``."""
        return [arg.replace("{checkout}", str(checkout)) for arg in self.args]


def installed_hosts() -> list[HostEntry]:
    """Every host declared by an installed package, in name order.

    Raises:
        TypeError: an entry point names something that is not a :class:`HostEntry`.
    """
    hosts = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
        entry = point.load()
        if not isinstance(entry, HostEntry):
            raise TypeError(f"entry point {point.name} = {point.value} is not a HostEntry")
        hosts.append(entry)
    return hosts
