"""The design host as the registry knows it (see :mod:`bee_contracts.hosts`); imports nothing but bee-contracts."""

from bee_contracts.hosts import HostEntry
from bee_contracts.serving import SERVE_OPTIONS

DESIGN = HostEntry(
    name="design",
    transport="stdio",
    args=("design", "mcp", "--stdio", "--checkout", "{checkout}"),
    check="mcp",
    title="Bee design: imported design bundles, mapping to source, visual reports",
    # --root: what editor configurations written before --checkout say; --stdio: what they all spell out.
    options=(*SERVE_OPTIONS, ("--root", "checkout")),
    flags=("--stdio",),
    # An editor starts the host in a folder nobody chose: the checkout is always named, absolutely.
    absolute_checkout=True,
)
