"""A service as the supervisor runs it: ready to run (:class:`Prepared`), a process of it started (:class:`Started`),
what its replicas share (:class:`Context`), and what they ask of the spares kept for it (:class:`Spares`).

Data apart from the modules that do the running (:mod:`.starting`, :mod:`.replica`, :mod:`.spares`), so that none
of them needs another for its types.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import httpx

from bee_supervisor.config import ServiceSpec
from bee_supervisor.contract import VersionInfo
from bee_supervisor.installed import Installed
from bee_supervisor.process import Child


@dataclass
class Started:
    """A spawned process of a service, and where it is checked."""

    child: Child
    #: The command as written (``${NAME}`` unexpanded): what logs show.
    written: str
    #: ``GET /health`` on the process's own check socket (an HTTP service with ``listen``), else the spec's URL.
    check_url: str | None
    #: A warm host's own probe socket (unlinked by :meth:`forget`).
    probe_path: str | None

    def forget(self) -> None:
        """The process has ended: its probe socket's file goes."""
        if self.probe_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.probe_path)


class Spares(Protocol):
    """What the spares kept for a service (:class:`bee_supervisor.spares.SparePool`) are asked by its replicas and
    the supervisor."""

    def take(self, installed: Installed) -> Started | None:
        """The ready spare of ``installed``, told to serve, for a replica to take over; None when there is none."""

    def close(self) -> None:
        """Keep no spare any more."""


@dataclass
class Context:
    """What every replica of one supervisor shares."""

    logger: logging.Logger
    http: httpx.AsyncClient
    installed: Installed
    #: Each service's ``--version --json`` answer for the current installation (a message when there is none).
    versions: dict[str, VersionInfo | str] = field(default_factory=dict)
    #: Called whenever something published in the status changed.
    publish: Callable[[], None] = lambda: None
    clock: Callable[[], float] = time.monotonic
    draw: Callable[[], float] = random.random


@dataclass
class Prepared:
    """A service ready to run: its spec, with programs resolved, environment merged and address bound."""

    spec: ServiceSpec
    command: tuple[str, ...]
    version_command: tuple[str, ...] | None
    env: Mapping[str, str]
    cwd: Path | None
    listener: socket.socket | None = None
    #: Services with the same key share one ``--version --json`` answer (default: the service's name).
    version_key: str = ""
    #: What status shows as the service's address when it has no ``listen`` (a warm host: its view and checkout).
    serves: str | None = None
    #: The spares kept for it (None: none are; see :mod:`bee_supervisor.spares`).
    spares: Spares | None = None

    @property
    def versions_key(self) -> str:
        return self.version_key or self.spec.name
