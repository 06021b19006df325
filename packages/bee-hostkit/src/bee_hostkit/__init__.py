"""Bee's shared MCP host runtime on the official SDK.

The root holds the transport-free host: the call object, validation, results, budgets, deadlines, path confinement,
handler binding and :class:`Host` itself. :mod:`bee_hostkit.stdio` serves a host over capped stdio (or warm, to many
front ends); :mod:`bee_hostkit.http` over Streamable HTTP behind an edge, with the ``http`` extra.

The light helpers (the call object, budgets, deadlines, path confinement) import without the SDK, so CLI commands
that only confine a path start fast; the host itself (and with it the SDK) loads on first use. The one coded
exception, :class:`bee_contracts.BeeError`, lives in bee-contracts next to the codes.
"""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports
from bee_hostkit._version import __version__
from bee_hostkit.budget import Budget, with_size
from bee_hostkit.call import Call, local_call
from bee_hostkit.deadline import Deadline, never
from bee_hostkit.handlers import bound_handlers
from bee_hostkit.paths import ConfinedRoot

if TYPE_CHECKING:
    from bee_hostkit.discovery import discovery_host
    from bee_hostkit.host import Handler, Host
    from bee_hostkit.stdio.transport import serve_stdio

__all__ = [
    "Budget",
    "Call",
    "ConfinedRoot",
    "Deadline",
    "Handler",
    "Host",
    "__version__",
    "bound_handlers",
    "discovery_host",
    "local_call",
    "never",
    "serve_stdio",
    "with_size",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Handler": "bee_hostkit.host",
        "Host": "bee_hostkit.host",
        "discovery_host": "bee_hostkit.discovery",
        "serve_stdio": "bee_hostkit.stdio.transport",
    },
)
