"""`bee init`, `bee mcp serve`, `bee artifact …`, `bee compression …`, `bee skill …`, `bee collab …` and `bee plan …`:
the CLI operations of the core package, one module per command group (registered through ``bee.commands``).

Heavy imports happen inside the commands, so loading these modules costs no more than click.
"""

from __future__ import annotations

import click

__all__ = ["register"]


def register(cli: click.Group) -> None:
    from bee_core.cli.artifact import artifact
    from bee_core.cli.collab import collab
    from bee_core.cli.compression import compression
    from bee_core.cli.init import init
    from bee_core.cli.mcp import mcp
    from bee_core.cli.plan import plan
    from bee_core.cli.skill import skill

    cli.add_command(init)
    cli.add_command(mcp)
    cli.add_command(artifact)
    cli.add_command(compression)
    cli.add_command(collab)
    cli.add_command(plan)
    cli.add_command(skill)
