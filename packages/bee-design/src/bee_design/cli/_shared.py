"""Options and error handling the design and visual commands share."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from bee_design.context import DesignContext

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

root_option: Decorator = click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The checkout the design files belong to.",
)

json_option: Decorator = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")


def open_root(root: Path) -> DesignContext:
    """The context for a CLI ``--root`` (relative roots are resolved against the working directory)."""
    return DesignContext.open(root.expanduser().resolve())


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))
