"""Options and error handling the design and visual commands share."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from bee_design.context import DesignContext
from bee_hostkit import options

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

#: ``--checkout DIR``, the current folder by default; ``--root``, as the design commands always spelled it, is the
#: same option.
checkout_option: Decorator = options.checkout_option("The checkout the design files belong to.", also=("--root",))
#: ``--instance-root DIR``: the instance whose ``design`` folder holds the design state (also $BEE_INSTANCE_ROOT).
instance_option = options.instance_option

json_option: Decorator = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")


def open_checkout(checkout: Path, instance_root: Path | None) -> DesignContext:
    """The context for a command's ``--checkout`` (a relative one is resolved against the working directory) and
    ``--instance-root``."""
    return DesignContext.open(checkout.expanduser().resolve(), instance_root)


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))
