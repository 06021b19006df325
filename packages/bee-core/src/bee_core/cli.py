"""CLI operations of the core package: `bee init`, `bee mcp serve`, `bee artifact …`, `bee compression …`,
`bee collab …` and `bee plan …`.

Registered through the ``bee.commands`` entry point; heavy imports happen inside the commands so that loading
this module costs no more than click.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bee_core.options import checkout_option, instance_option, spare_fd_option, warm_check_fd_option, warm_fd_option

if TYPE_CHECKING:
    from bee_core.instance import Instance

_checkout_option = checkout_option("The checkout (repository working tree) this command works on.")
_instance_option = instance_option


def register(cli: click.Group) -> None:
    from bee_core.artifacts.cli import artifact
    from bee_core.collab.cli import collab
    from bee_core.collab.plan_cli import plan
    from bee_core.compression.cli import compression
    from bee_core.skills.cli import skill

    cli.add_command(init)
    cli.add_command(mcp)
    cli.add_command(artifact)
    cli.add_command(compression)
    cli.add_command(collab)
    cli.add_command(plan)
    cli.add_command(skill)


@click.command()
@_checkout_option
@_instance_option
def init(checkout: Path, instance_root: Path | None) -> None:
    """Create the Bee instance for a checkout (<checkout>/.bee by default)."""
    from bee_core.instance import Instance

    if not checkout.is_dir():
        raise click.BadParameter(f"{checkout} is not a directory", param_hint="--checkout")
    instance = Instance.select(checkout.resolve(), instance_root)
    created = instance.init()
    verb = "Created" if created else "Already initialised:"
    click.echo(f"{verb} Bee instance at {instance.root}")


@click.group()
def mcp() -> None:
    """The core MCP host (stdio)."""


@mcp.command()
@_checkout_option
@_instance_option
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default=lambda: os.environ.get("BEE_LOG_LEVEL", "warning"),
    show_default="warning, or $BEE_LOG_LEVEL",
    help="Log level; logs go to stderr, never to the protocol stream.",
)
@click.option(
    "--discovery",
    is_flag=True,
    help="List three tools that search, describe and invoke the core tools, instead of the whole catalog.",
)
@warm_fd_option
@warm_check_fd_option
@spare_fd_option
def serve(  # noqa: PLR0917 -- click hands every option over as a parameter
    checkout: Path,
    instance_root: Path | None,
    log_level: str,
    discovery: bool,
    warm_fd: int | None,
    warm_check_fd: int | None,
    spare_fd: int | None,
) -> None:
    """Serve the core tools over stdio for an editor or agent (speaks both MCP protocol eras)."""
    logging.basicConfig(
        stream=sys.stderr, level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from bee_core.context import CoreContext
    from bee_core.host import build_discovery_host, build_host

    try:
        ctx = CoreContext.open(checkout, instance_root)
    except NotADirectoryError as exc:
        raise click.BadParameter(str(exc), param_hint="--checkout") from None
    host = build_discovery_host(ctx) if discovery else build_host(ctx)
    if warm_fd is None:
        from bee_hostkit import serve_stdio

        for note in _shipped_notes(ctx.instance):
            logging.getLogger("bee_core.trust").warning("%s", note)
        serve_stdio(host)
        return
    from bee_hostkit.stdio.warm import serve_warm_fd

    view = "core-discovery" if discovery else "core"
    serve_warm_fd(
        host,
        warm_fd,
        view=view,
        checkout=str(ctx.checkout),
        instance=str(ctx.instance.root),
        log_level=log_level,
        check_fd=warm_check_fd,
        spare_fd=spare_fd,
        notes=lambda: _shipped_notes(ctx.instance),
    )


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
