"""`bee mcp serve`: the core host itself, over stdio for an editor or agent."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from bee_core.registry import CORE, DISCOVERY
from bee_hostkit.options import ServeOptions, serve_options

if TYPE_CHECKING:
    from bee_core.instance import Instance


@click.group()
def mcp() -> None:
    """The core MCP host (stdio)."""


@mcp.command()
@serve_options(CORE, "The checkout (repository working tree) this command works on.")
@click.option(
    "--discovery",
    is_flag=True,
    help="List three tools that search, describe and invoke the core tools, instead of the whole catalog.",
)
def serve(options: ServeOptions, discovery: bool) -> None:
    """Serve the core tools over stdio for an editor or agent (speaks both MCP protocol eras)."""
    checkout = options.start()
    from bee_core.context import CoreContext
    from bee_core.host import build_discovery_host, build_host

    ctx = CoreContext.serving(checkout)
    host = build_discovery_host(ctx) if discovery else build_host(ctx)
    options.run(host, checkout, DISCOVERY if discovery else CORE.name, notes=lambda: _shipped_notes(ctx.instance))


def _shipped_notes(instance: Instance) -> list[str]:
    """What an editor is told when its session starts: each setting the checkout ships that Bee ignores (the tools'
    errors say it again). A cold host logs them at start; a warm host sends them to each front end, which prints
    them on its editor's stderr."""
    from bee_contracts import BeeError
    from bee_core import trust

    try:
        found = trust.shipped(instance)
    except BeeError as exc:  # the user's settings folder is refused: every call that needs it says so too
        return [exc.message]
    return [ships.note() for ships in found]
