"""Where a host's handlers live, found from the tool's name, bound to the host's context and imported on first call.

Every host package keeps one module per tool in its ``handlers`` package, named after the tool without Bee's
``bee_`` prefix, holding one function named exactly as the tool: ``bee_context_packet`` is
``bee_core.handlers.context_packet.bee_context_packet``, the tracker's ``claim`` is
``bee_tracker.handlers.claim.claim``. The catalog is the only list of tools; nothing else names them, and a
newcomer finds a tool's code from its name in one step. ``tests/contracts/test_handlers.py`` imports every handler
each catalog names and checks its module, its name and its typed signature against the tool's generated shapes.

A handler module may pull in heavy libraries (tree-sitter grammars, numpy, a browser driver); importing it only
when its tool is first called keeps a host's start-up and its first ``tools/list`` free of what nobody has used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from bee_hostkit.call import Call

if TYPE_CHECKING:
    from bee_contracts import ToolSpec
    from bee_hostkit.host import Handler

#: The prefix Bee's own tool names carry, left out of their handler modules' names.
TOOL_PREFIX = "bee_"


def handler_module(package: str, tool: str) -> str:
    """The module holding ``tool``'s handler in the handlers package ``package``."""
    return f"{package}.{tool.removeprefix(TOOL_PREFIX)}"


def load_handler(package: str, tool: str) -> Callable[..., Any]:
    """``tool``'s handler function, importing its module.

    Raises:
        ImportError: the module is missing; AttributeError: it has no function named after the tool.
    """
    handler: Callable[..., Any] = getattr(importlib.import_module(handler_module(package, tool)), tool)
    return handler


def _bound(context: object, package: str, tool: str) -> Handler:
    def bound(call: Call[Any]) -> dict[str, Any]:
        result: dict[str, Any] = load_handler(package, tool)(context, call)
        return result

    bound.__name__ = bound.__qualname__ = tool
    return bound


def bound_handlers(context: object, package: str, catalog: Iterable[ToolSpec]) -> dict[str, Handler]:
    """Each tool of ``catalog`` bound to its handler in ``package`` (called as ``handler(context, call)``), in
    catalog order; a handler's module is imported when its tool is first called."""
    return {spec.name: _bound(context, package, spec.name) for spec in catalog}
