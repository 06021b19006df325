"""Where a Bee instance lives: the ``.bee`` directory name, the variable that selects another, and how to find one.

Shared by every package that keeps state in an instance (the core host's checkout instance, the tracker's home),
so that all of them agree on which instance a command in a given directory means.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

#: The instance directory inside a checkout.
INSTANCE_DIRNAME: Final = ".bee"

#: Environment variable naming the instance to use instead of one found from the working directory.
ENV_INSTANCE_ROOT: Final = "BEE_INSTANCE_ROOT"


def nearest_instance(start: Path) -> Path | None:
    """The closest ``.bee`` directory in ``start`` or one of its parents, or None when there is none.

    This is how a command run in a subdirectory of a checkout finds the checkout's instance.
    """
    here = start.resolve()
    for directory in (here, *here.parents):
        candidate = directory / INSTANCE_DIRNAME
        if candidate.is_dir():
            return candidate
    return None


def selected_instance(start: Path) -> Path | None:
    """$BEE_INSTANCE_ROOT when set, else :func:`nearest_instance` from ``start``."""
    chosen = os.environ.get(ENV_INSTANCE_ROOT)
    if chosen:
        return Path(chosen).expanduser()
    return nearest_instance(start)
