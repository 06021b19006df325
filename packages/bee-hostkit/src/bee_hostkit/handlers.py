"""A host's handlers, named as ``module:function`` and bound to the host's context, imported on first call.

A handler module may pull in heavy libraries (tree-sitter grammars, numpy, a browser driver); importing it only
when its tool is first called keeps a host's start-up and its first ``tools/list`` free of what nobody has used.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bee_hostkit.call import Call

if TYPE_CHECKING:
    from bee_hostkit.host import Handler


def _bound(context: object, target: str) -> Handler:
    module_name, _, function_name = target.partition(":")

    def bound(call: Call[Any]) -> dict[str, Any]:
        handler = getattr(importlib.import_module(module_name), function_name)
        result: dict[str, Any] = handler(context, call)
        return result

    bound.__name__ = function_name
    return bound


def bound_handlers(context: object, targets: Mapping[str, str]) -> dict[str, Handler]:
    """Each tool's handler ``targets[tool]`` (``"package.module:function"``, called as ``function(context, call)``)
    with ``context`` bound, its module imported when the tool is first called."""
    return {name: _bound(context, target) for name, target in targets.items()}
