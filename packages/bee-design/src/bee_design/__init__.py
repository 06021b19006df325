"""Bee's design host and its CLI operations: design bundles, mapping to source, browser capture, visual reports.

The package reads top-down: the catalog (data in bee-contracts) → :mod:`bee_design.handlers` (one function per
tool) → the domain (:mod:`~bee_design.bundle`, :mod:`~bee_design.mapping`, :mod:`~bee_design.slicing`,
:mod:`~bee_design.verify`, :mod:`~bee_design.capture`, :mod:`~bee_design.visual`) → :mod:`bee_design.tools` (the
host) → :mod:`bee_design.commands` (the CLI, which picks the transport).
"""

from bee_design._version import __version__
from bee_design.context import DesignContext
from bee_design.hosts import DESIGN

__all__ = ["DESIGN", "DesignContext", "__version__"]
