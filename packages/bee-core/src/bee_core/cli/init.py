"""`bee init`: create the Bee instance of a checkout."""

from __future__ import annotations

from pathlib import Path

import click

from bee_hostkit.options import checkout_option, instance_option


@click.command()
@checkout_option()
@instance_option
def init(checkout: Path, instance_root: Path | None) -> None:
    """Create the Bee instance for a checkout (<checkout>/.bee by default)."""
    from bee_core.instance import Instance

    if not checkout.is_dir():
        raise click.BadParameter(f"{checkout} is not a directory", param_hint="--checkout")
    instance = Instance.select(checkout.resolve(), instance_root)
    created = instance.init()
    verb = "Created" if created else "Already initialised:"
    click.echo(f"{verb} Bee instance at {instance.root}")
