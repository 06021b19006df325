"""The tracker host as the registry knows it (see :mod:`bee_contracts.hosts`); imports nothing but bee-contracts."""

from bee_contracts.hosts import HostEntry

TRACKER = HostEntry(
    name="tracker",
    transport="http",
    # Editors sign in to a tracker `bee up` runs through OAuth, as to any remote MCP server (docs/hosts/tracker.md).
    args=("tracker", "serve", "--sign-in", "builtin"),
    check="health",
    title="Bee tracker: the team's Beads-compatible task store",
    port=8765,  # bee_tracker.config.DEFAULT_PORT, not imported: reading the registry must stay cheap
    fd_args=("--fd", "{fd}"),
)
