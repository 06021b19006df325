"""Bee's supervisor: runs the long-lived hosts from a service file, restarts them, checks their contract.

:func:`load_config` reads and checks a service file into a :class:`SupervisorSpec` (:func:`default_config` builds
the built-in one from the host registry); a :class:`Supervisor` prepares and runs it. The states and the one
transition function are :mod:`bee_supervisor.states`. Names load on first use, so importing the package (as the
`bee` command does for its CLI) costs nothing.
"""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports
from bee_supervisor._version import __version__

if TYPE_CHECKING:
    from bee_supervisor.config import ServiceSpec, SupervisorSpec, load_config
    from bee_supervisor.defaults import default_config
    from bee_supervisor.states import Event, RestartPolicy, State, Status, transition
    from bee_supervisor.supervisor import Supervisor

__all__ = [
    "Event",
    "RestartPolicy",
    "ServiceSpec",
    "State",
    "Status",
    "Supervisor",
    "SupervisorSpec",
    "__version__",
    "default_config",
    "load_config",
    "transition",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Event": "bee_supervisor.states",
        "RestartPolicy": "bee_supervisor.states",
        "ServiceSpec": "bee_supervisor.config",
        "State": "bee_supervisor.states",
        "Status": "bee_supervisor.states",
        "Supervisor": "bee_supervisor.supervisor",
        "SupervisorSpec": "bee_supervisor.config",
        "default_config": "bee_supervisor.defaults",
        "load_config": "bee_supervisor.config",
        "transition": "bee_supervisor.states",
    },
)
