"""Bee's shared MCP host runtime on the official SDK."""

from bee_hostkit._version import __version__
from bee_hostkit.budget import Budget, with_size
from bee_hostkit.deadline import Deadline, never
from bee_hostkit.errors import ToolError, invalid
from bee_hostkit.host import CONTRACT_META_KEY, Handler, Host, current_caller, serve_stdio
from bee_hostkit.paths import confine

__all__ = [
    "CONTRACT_META_KEY",
    "Budget",
    "Deadline",
    "Handler",
    "Host",
    "ToolError",
    "__version__",
    "confine",
    "current_caller",
    "invalid",
    "never",
    "serve_stdio",
    "with_size",
]
