"""A spare: a host process a supervisor starts ahead, its imports done and its host built, that serves only when
told to — so that replacing a host that died is not a cold start.

The supervisor starts a spare with the host's own command line plus ``--spare-fd N``, ``N`` one end of a socket
pair. The host builds everything it would build before serving, then :func:`wait_to_serve` writes ``ready`` on the
channel and blocks until the supervisor writes ``serve`` (the spare becomes the host, on the listening socket it
inherited like any replica) or closes the channel (the spare exits, status 0: an upgrade made it stale, or its service
was dropped). Both sides speak the lines defined here.
"""

from __future__ import annotations

import os

#: The option that makes a host process a spare: the descriptor of its channel to the supervisor.
SPARE_OPTION = "--spare-fd"
#: The placeholder a supervisor's command line carries for that descriptor.
SPARE_PLACEHOLDER = "{spare_fd}"
#: Spare → supervisor: built and waiting.
READY = b"ready\n"
#: Supervisor → spare: serve now.
SERVE = b"serve\n"


def wait_to_serve(fd: int) -> None:
    """Say ``ready`` on channel ``fd``, then return once the supervisor says ``serve``.

    Never returns otherwise: when the channel closes (or says anything else) the process exits at once with status
    0, without serving — a spare that is not needed leaves quietly.
    """
    try:
        os.write(fd, READY)
        said = b""
        while not said.endswith(b"\n") and len(said) <= len(SERVE):
            chunk = os.read(fd, len(SERVE))
            if not chunk:
                break
            said += chunk
    except OSError:
        said = b""
    if said != SERVE:
        os._exit(0)
    os.close(fd)
