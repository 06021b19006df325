"""Bee's shared MCP host runtime on the official SDK.

The light helpers (the call object, budgets, deadlines, path confinement) import without the SDK, so CLI commands
that only confine a path start fast; the host itself (and with it the SDK) loads on first use. The one coded
exception, :class:`bee_contracts.BeeError`, lives in bee-contracts next to the codes.
"""

from typing import TYPE_CHECKING, Any

from bee_hostkit._version import __version__
from bee_hostkit.budget import Budget, with_size
from bee_hostkit.call import Call, local_call
from bee_hostkit.deadline import Deadline, never
from bee_hostkit.handlers import bound_handlers
from bee_hostkit.paths import ConfinedRoot

if TYPE_CHECKING:
    from bee_hostkit.discovery import discovery_host
    from bee_hostkit.host import Handler, Host, serve_stdio

_FROM_HOST = frozenset({"Handler", "Host", "serve_stdio"})

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


def __getattr__(name: str) -> Any:
    if name in _FROM_HOST:
        from bee_hostkit import host

        return getattr(host, name)
    if name == "discovery_host":
        from bee_hostkit.discovery import discovery_host

        return discovery_host
    raise AttributeError(f"module 'bee_hostkit' has no attribute {name!r}")
