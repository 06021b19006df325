"""The host registry: each host package declares its hosts through the ``bee.hosts`` entry point.

``bee doctor``, the supervisor, editor setup and the `bee` front end read this registry instead of a hard-coded
list, so a package that is not installed contributes nothing. An entry point names a :class:`HostEntry` object::

    [project.entry-points."bee.hosts"]
    core = "bee_core.registry:CORE"

The module it names must import nothing heavier than bee-contracts: reading the registry loads every entry. The
front end reads it before it relays an editor's first byte, so this module is cheap too: no typing, dataclasses or
:mod:`importlib.metadata` (tens of milliseconds) at run time; :func:`entry_points` reads the installed
distributions' ``entry_points.txt`` itself.
"""

from __future__ import annotations

import os
import sys

# Annotations only (mypy reads this name as True): the front end need not load what they name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Literal

#: Entry-point group through which packages declare their hosts.
ENTRY_POINT_GROUP = "bee.hosts"

_FIELDS = (
    "name",
    "transport",
    "args",
    "check",
    "title",
    "version_args",
    "port",
    "fd_args",
    "views",
    "options",
    "flags",
    "absolute_checkout",
)


class HostEntry:
    """How to start one host and how to check it (immutable; equal when every field is).

    ``args`` are the arguments of the `bee` command that start the host; ``{checkout}`` in them is replaced by the
    absolute checkout the host serves. ``check`` is ``"mcp"`` for a host checked by an MCP handshake over its
    transport, ``"health"`` for one checked by ``GET /health`` (whose JSON carries the version triple).
    ``version_args`` are the `bee` arguments that print that triple as JSON, which the supervisor compares with the
    installed contracts before it marks the host ready.

    An HTTP host also says where it listens by default (``port``) and how it is handed a listening socket the
    supervisor bound (``fd_args``, repeated once per socket with ``{fd}`` replaced by the descriptor), so that
    replicas can share one address and a restart never closes it.

    A stdio host says what its serve command line (``args`` up to the first option) accepts, which is what the `bee`
    front end serves through a warm host: ``options``, its valued options, each ``(spelling, setting)`` with the
    settings of :data:`bee_contracts.serving.SERVE_OPTIONS` (a host may add spellings, as the design host keeps
    ``--root`` for ``--checkout``); ``flags``, flags that select nothing (the design host's ``--stdio``); and whether
    its checkout must be given, as an absolute path (``absolute_checkout``). The host itself is its first view, named
    after it; ``views`` are its other views, each ``(name, flags that select it)``: the core host's discovery view is
    ``("discovery", ("--discovery",))``. A view's name is its catalog's (:data:`bee_contracts.catalog.HOSTS`) and the
    one every part of Bee calls it by; a view is not another host (editor setup configures the host once), and
    ``bee doctor`` checks each view against its own catalog.
    """

    __slots__ = _FIELDS

    name: str
    transport: Literal["stdio", "http"]
    args: tuple[str, ...]
    check: Literal["mcp", "health"]
    title: str
    version_args: tuple[str, ...]
    port: int | None
    fd_args: tuple[str, ...]
    views: tuple[tuple[str, tuple[str, ...]], ...]
    options: tuple[tuple[str, str], ...]
    flags: tuple[str, ...]
    absolute_checkout: bool

    def __init__(
        self,
        name: str,
        transport: Literal["stdio", "http"],
        args: tuple[str, ...],
        check: Literal["mcp", "health"],
        *,
        title: str = "",
        version_args: tuple[str, ...] = ("--version", "--json"),
        port: int | None = None,
        fd_args: tuple[str, ...] = (),
        views: tuple[tuple[str, tuple[str, ...]], ...] = (),
        options: tuple[tuple[str, str], ...] = (),
        flags: tuple[str, ...] = (),
        absolute_checkout: bool = False,
    ) -> None:
        given = (name, transport, args, check, title, version_args, port, fd_args, views, options, flags)
        for field, value in zip(_FIELDS, (*given, absolute_checkout), strict=True):
            object.__setattr__(self, field, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a HostEntry is immutable: cannot set {name}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, field) for field in _FIELDS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HostEntry) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"HostEntry({', '.join(f'{field}={getattr(self, field)!r}' for field in _FIELDS)})"

    def argv(self, checkout: Path | str) -> list[str]:
        """The `bee` arguments that start this host for ``checkout``."""
        return [arg.replace("{checkout}", str(checkout)) for arg in self.args]

    @property
    def command(self) -> tuple[str, ...]:
        """The `bee` words that name this host's serve command: ``args`` up to the first option."""
        words = []
        for arg in self.args:
            if arg.startswith("-"):
                break
            words.append(arg)
        return tuple(words)

    def every_view(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """This host's views, its own (named after it, selected by no flag) first, then :attr:`views`."""
        return ((self.name, ()), *self.views)


class _EntryPoint:
    """One ``name = module:attribute`` line of a distribution's ``entry_points.txt``."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: str) -> None:
        self.name = name
        self.value = value

    def load(self) -> object:
        module, _, attribute = self.value.partition("[")[0].strip().partition(":")
        __import__(module.strip())  # the builtin: the importlib package is more for the front end to load
        found: object = sys.modules[module.strip()]
        for part in attribute.strip().split(".") if attribute.strip() else ():
            found = getattr(found, part)
        return found


def _metadata_folders() -> Iterator[tuple[str, str]]:
    """Each installed distribution's metadata folder and its normalised name, in import-path order (the first of a
    name wins, as the import system and :mod:`importlib.metadata` pick it). Relative entries of the import path
    (the current folder) are never read: nothing a checkout holds declares a host."""
    seen = set()
    for folder in sys.path:
        if not os.path.isabs(folder) or not os.path.isdir(folder):
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            project = name.rpartition(".")[0].partition("-")[0].lower().replace("-", "_").replace(".", "_")
            if project not in seen:
                seen.add(project)
                yield os.path.join(folder, name), project


def _group(text: str, group: str) -> Iterator[tuple[str, str]]:
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group and "=" in line:
            name, _, value = line.partition("=")
            yield name.strip(), value.strip()


def entry_points(group: str) -> list[_EntryPoint]:
    """The entry points of ``group`` that the installed distributions declare, as :mod:`importlib.metadata` finds
    them (about 2 ms where it takes 40: docs/hosts/supervisor.md)."""
    found = []
    for folder, _ in _metadata_folders():
        try:
            with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as file:
                text = file.read()
        except OSError:
            continue
        found += [_EntryPoint(name, value) for name, value in _group(text, group)]
    return found


def each_host() -> Iterator[HostEntry]:
    """Every host declared by an installed package, in name order, each loaded only when it is reached (the front
    end stops at the host its command line names).

    Raises:
        TypeError: an entry point names something that is not a :class:`HostEntry`.
    """
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
        entry = point.load()
        if not isinstance(entry, HostEntry):
            raise TypeError(f"entry point {point.name} = {point.value} is not a HostEntry")
        yield entry


def installed_hosts() -> list[HostEntry]:
    """Every host declared by an installed package, in name order.

    Raises:
        TypeError: an entry point names something that is not a :class:`HostEntry`.
    """
    return list(each_host())
