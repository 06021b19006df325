"""`bee design …` and `bee visual …`: the CLI operations of the design package (registered through
``bee.commands``). Heavy imports (Playwright, numpy, Pillow, the SDK) happen inside the commands that need them."""

from __future__ import annotations

import click

__all__ = ["register"]


def register(cli: click.Group) -> None:
    from bee_design.cli.design import design
    from bee_design.cli.visual import visual

    cli.add_command(design)
    cli.add_command(visual)
