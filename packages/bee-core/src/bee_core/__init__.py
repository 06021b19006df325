"""Bee's core host: bounded, budgeted reads of a checkout and of the artifacts retained in its instance.

The host is built by :func:`build_host` from a :class:`CoreContext` (the checkout and its :class:`Instance`); its
handlers live in :mod:`bee_core.handlers`, one module per tool. Names load on first use, so importing the package
(as the `bee` command does for its CLI) costs nothing.
"""

from bee_contracts.lazy import lazy_exports
from bee_core._version import __version__

# Annotations only (mypy reads this name as True): the `bee` front end imports this package to read its
# registry entry, and need not load typing for it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from bee_core.context import CoreContext
    from bee_core.host import build_host
    from bee_core.instance import Instance
    from bee_core.registry import CORE

__all__ = ["CORE", "CoreContext", "Instance", "__version__", "build_host"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "CORE": "bee_core.registry",
        "CoreContext": "bee_core.context",
        "Instance": "bee_core.instance",
        "build_host": "bee_core.host",
    },
)
