"""The tracker host as the registry knows it (see :mod:`bee_contracts.hosts`); imports nothing but bee-contracts."""

from bee_contracts.hosts import HostEntry

TRACKER = HostEntry(
    name="tracker",
    transport="http",
    args=("tracker", "serve"),
    check="health",
    title="Bee tracker: the team's Beads-compatible task store",
)
