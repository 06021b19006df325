"""Options every core command shares, defined once (each command says what its checkout is for)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def checkout_option(purpose: str = "The checkout (repository working tree) this command works on.") -> Decorator:
    return click.option(
        "--checkout",
        type=click.Path(file_okay=False, path_type=Path),
        default=".",
        show_default=True,
        help=purpose,
    )


instance_option: Decorator = click.option(
    "--instance-root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Use this Bee instance instead of <checkout>/.bee (also $BEE_INSTANCE_ROOT).",
)

json_option: Decorator = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")

#: The listening socket a warm host serves on, handed over by the warm supervisor (never typed by people: hidden).
warm_fd_option: Decorator = click.option("--warm-fd", type=click.IntRange(0), default=None, hidden=True)
#: The warm host's own socket for the supervisor's health probes (each replica has one; hidden too).
warm_check_fd_option: Decorator = click.option("--warm-check-fd", type=click.IntRange(0), default=None, hidden=True)
