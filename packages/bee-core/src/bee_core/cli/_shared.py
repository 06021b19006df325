"""The option every core command that prints takes: ``--json``. (The checkout and instance options are bee_hostkit's,
which the design commands take too: :mod:`bee_hostkit.options`.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

json_option: Decorator = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
