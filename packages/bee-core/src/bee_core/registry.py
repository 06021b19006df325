"""The core host as the registry knows it (see :mod:`bee_contracts.hosts`); imports nothing but bee-contracts."""

from bee_contracts.hosts import HostEntry
from bee_contracts.serving import SERVE_OPTIONS

#: The core host's compact view (`bee mcp serve --discovery`), named after its catalog.
DISCOVERY = "discovery"

CORE = HostEntry(
    name="core",
    transport="stdio",
    args=("mcp", "serve", "--checkout", "{checkout}"),
    check="mcp",
    title="Bee core: skills, source packets, artifacts, JSON representation, prose compression",
    options=SERVE_OPTIONS,
    views=((DISCOVERY, ("--discovery",)),),
)
