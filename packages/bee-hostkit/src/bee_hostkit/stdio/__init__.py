"""The stdio layer: a host served over capped stdio, or warm, to many front ends over a Unix socket.

:mod:`.transport` is the capped stdio transport (frames capped both ways, the process ending within a second of stdin
closing); :mod:`.warm` serves one :class:`~bee_hostkit.host.Host` to many front ends, each connection through the
same capped streams. Nothing here needs the HTTP extra.
"""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_hostkit.stdio.transport import capped_stdio_server, capped_streams, run_until_eof, serve_stdio
    from bee_hostkit.stdio.warm import WarmHost, serve_warm, serve_warm_fd

__all__ = [
    "WarmHost",
    "capped_stdio_server",
    "capped_streams",
    "run_until_eof",
    "serve_stdio",
    "serve_warm",
    "serve_warm_fd",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "WarmHost": "bee_hostkit.stdio.warm",
        "capped_stdio_server": "bee_hostkit.stdio.transport",
        "capped_streams": "bee_hostkit.stdio.transport",
        "run_until_eof": "bee_hostkit.stdio.transport",
        "serve_stdio": "bee_hostkit.stdio.transport",
        "serve_warm": "bee_hostkit.stdio.warm",
        "serve_warm_fd": "bee_hostkit.stdio.warm",
    },
)
