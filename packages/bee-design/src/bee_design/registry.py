"""The design host as the registry knows it (see :mod:`bee_contracts.hosts`); imports nothing but bee-contracts."""

from bee_contracts.hosts import HostEntry

DESIGN = HostEntry(
    name="design",
    transport="stdio",
    args=("design", "mcp", "--stdio", "--root", "{checkout}"),
    check="mcp",
    title="Bee design: imported design bundles, mapping to source, visual reports",
)
