"""Bee's tracker host: a Beads-compatible task store a team of agents shares over Streamable HTTP with JWTs.

:func:`build_app` makes the ASGI app (``/mcp`` and ``/health``) from a store (:func:`open_store`), a token verifier
and a :class:`TrackerConfig`; the tools are :mod:`bee_tracker.handlers`, one module each. Names load on first use, so
importing the package (as the `bee` command does for its CLI) costs nothing.
"""

from bee_contracts.lazy import lazy_exports
from bee_tracker._version import __version__

# Annotations only (mypy reads this name as True): the `bee` front end imports this package to read its
# registry entry, and need not load typing for it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from bee_tracker.config import TrackerConfig
    from bee_tracker.host import build_app
    from bee_tracker.registry import TRACKER
    from bee_tracker.store import open_store

__all__ = ["TRACKER", "TrackerConfig", "__version__", "build_app", "open_store"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "TRACKER": "bee_tracker.registry",
        "TrackerConfig": "bee_tracker.config",
        "build_app": "bee_tracker.host",
        "open_store": "bee_tracker.store",
    },
)
