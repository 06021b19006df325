"""Collaboration: this checkout's binding to a tracker space (a lease the tracker holds) and the plans of that space.

:mod:`.binding` is the binding recorded in the instance; :mod:`.tracker` talks to the tracker over MCP (bee-core
never imports the tracker); :mod:`.lease` asks the tracker whether the binding is live; :mod:`.plans` reads a plan
and its steps. The CLI is :mod:`bee_core.cli.collab` (`bee collab …`) and :mod:`bee_core.cli.plan` (`bee plan …`).
Names load on first use.
"""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_core.collab.binding import Binding
    from bee_core.collab.plans import Plan, Step
    from bee_core.collab.tracker import Tracker

__all__ = ["Binding", "Plan", "Step", "Tracker"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Binding": "bee_core.collab.binding",
        "Plan": "bee_core.collab.plans",
        "Step": "bee_core.collab.plans",
        "Tracker": "bee_core.collab.tracker",
    },
)
