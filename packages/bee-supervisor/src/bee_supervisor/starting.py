"""Starting one process of a service: its command filled, its own check socket bound, the process spawned.

A replica starts its process here, and so does a spare pool (:mod:`bee_supervisor.spares`), whose process starts the
same way with a channel more: what a replica takes over from a spare is exactly what it would have started itself.
"""

from __future__ import annotations

import contextlib
import os
import socket

from bee_contracts.spare import SPARE_OPTION, SPARE_PLACEHOLDER
from bee_supervisor.process import spawn
from bee_supervisor.service import Started
from bee_supervisor.sockets import bind_check, bind_probe, url_of

# Annotations only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from bee_supervisor.service import Prepared


def fill(command: tuple[str, ...], values: dict[str, str]) -> list[str]:
    """``command`` with each placeholder in ``values`` replaced."""

    def one(arg: str) -> str:
        for placeholder, value in values.items():
            arg = arg.replace(placeholder, value)
        return arg

    return [one(arg) for arg in command]


def start(service: Prepared, index: int | None, *, channel: socket.socket | None = None) -> Started:
    """Spawn one process of ``service``: replica ``index``, or (``index`` None, with ``channel``) a spare.

    Raises:
        OSError: the program could not be run, or a socket could not be made for it.
    """
    import shlex

    spec = service.spec
    check: socket.socket | None = None
    probe_path: str | None = None
    listener = service.listener
    try:
        if spec.listen:
            check = bind_check(spec.listen[0])
        elif spec.health.check == "warm" and spec.health.socket:
            check, probe_path = bind_probe(spec.health.socket)
        values = {
            "{listen_fd}": str(listener.fileno()) if listener else "",
            "{check_fd}": str(check.fileno()) if check else "",
            "{replica}": str(index),
            SPARE_PLACEHOLDER: str(channel.fileno()) if channel else "",
        }
        extra = (SPARE_OPTION, SPARE_PLACEHOLDER) if channel is not None else ()
        command = (*service.command, *extra)
        written = spec.shown.get("command")
        shown = (command[0], *written[1:], *extra) if written else command
        fds = [s.fileno() for s in (listener, check, channel) if s is not None]
        child = spawn(
            fill(command, values),
            env=service.env,
            cwd=service.cwd,
            pass_fds=fds,
            stdio_protocol=spec.health.check == "mcp",
        )
        check_url = url_of(check, spec.health.path) if check else spec.health.url
        return Started(child, shlex.join(fill(shown, values)), check_url, probe_path)
    except BaseException:
        if probe_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(probe_path)
        raise
    finally:
        if check is not None:
            check.close()  # the child holds its own copy; the supervisor only needs the port or path


def written(service: Prepared) -> str:
    """The command as written, before any socket was made: what a failure to start names."""
    import shlex

    written = service.spec.shown.get("command")
    command = (service.command[0], *written[1:]) if written else service.command
    return shlex.join(command)
