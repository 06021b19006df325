"""Bee's design host and its CLI operations: design bundles, mapping to source, browser capture, visual reports.

The package reads top-down: the catalog (data in bee-contracts) → :mod:`bee_design.handlers` (one function per
tool) → the domain (:mod:`~bee_design.bundle`, :mod:`~bee_design.mapping`, :mod:`~bee_design.slicing`,
:mod:`~bee_design.verify`, :mod:`~bee_design.capture`, :mod:`~bee_design.visual`) → :mod:`bee_design.host` (the
host) → :mod:`bee_design.cli` (the CLI, which picks the transport). Names load on first use, so importing the
package (as the `bee` command does for its CLI) costs nothing.
"""

from bee_contracts.lazy import lazy_exports
from bee_design._version import __version__

# Annotations only (mypy reads this name as True): the `bee` front end imports this package to read its
# registry entry, and need not load typing for it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from bee_design.context import DesignContext
    from bee_design.host import build_host
    from bee_design.layout import DesignFiles
    from bee_design.registry import DESIGN

__all__ = ["DESIGN", "DesignContext", "DesignFiles", "__version__", "build_host"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DESIGN": "bee_design.registry",
        "DesignContext": "bee_design.context",
        "DesignFiles": "bee_design.layout",
        "build_host": "bee_design.host",
    },
)
