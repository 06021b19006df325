"""The core host as the registry knows it (see :mod:`bee_contracts.hosts`); imports nothing but bee-contracts."""

from bee_contracts.hosts import HostEntry

CORE = HostEntry(
    name="core",
    transport="stdio",
    args=("mcp", "serve", "--checkout", "{checkout}"),
    check="mcp",
    title="Bee core: skills, source packets, artifacts, JSON representation, prose compression",
    views=(("discovery", ("--discovery",)),),
)
